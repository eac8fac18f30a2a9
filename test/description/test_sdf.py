"""SDFormat parsing: every joint type, frame semantics per version, closed chains, errors.

Expected poses are computed here independently of the parser: link poses at zero are read
from the files with a few lines of lxml and scipy, and poses at other configurations come
from the product of exponentials, T(q) = exp(S1 q1) ... exp(Sn qn) T(0), with each joint's
screw axis (direction and a point, in the model frame) written out by hand in the test.
Line numbers in error messages are found by searching the test's own XML text.
"""

from __future__ import annotations

import math
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from lxml import etree
from repo_paths import TEST_DIR
from scipy.spatial.transform import Rotation

from joint_tf_publisher import ModelError, Robot
from joint_tf_publisher.model import Joint, LoopJointType

SDF_DIR = TEST_DIR / "sdf"
ARM_VERSIONS = ["1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11"]
HALF_PI = math.pi / 2
X, Y, Z = np.eye(3)


# -- independent geometry ---------------------------------------------------------------------


def pose(xyz: Any = (0.0, 0.0, 0.0), rpy: Any = (0.0, 0.0, 0.0)) -> np.ndarray:
    """(4, 4) pose from xyz and SDFormat's extrinsic roll, pitch, yaw (scipy 'xyz')."""
    matrix = np.eye(4)
    matrix[:3, :3] = Rotation.from_euler("xyz", rpy).as_matrix()
    matrix[:3, 3] = xyz
    return matrix


def screw(axis: Any, point: Any, angle: float = 0.0, travel: float = 0.0) -> np.ndarray:
    """Rotation by ``angle`` about the line through ``point`` along unit ``axis``, then
    ``travel`` metres along it: exp(S q) in the model frame."""
    axis = np.asarray(axis, dtype=float)
    point = np.asarray(point, dtype=float)
    rotation = Rotation.from_rotvec(axis * angle).as_matrix()
    matrix = np.eye(4)
    matrix[:3, :3] = rotation
    matrix[:3, 3] = point - rotation @ point + travel * axis
    return matrix


def rotation_about(point: Any, rotation: np.ndarray) -> np.ndarray:
    """A rotation (3, 3) of the model about a fixed ``point``."""
    matrix = np.eye(4)
    matrix[:3, :3] = rotation
    matrix[:3, 3] = np.asarray(point) - rotation @ np.asarray(point)
    return matrix


def file_link_poses(path: Path) -> dict[str, np.ndarray]:
    """Each link's <pose> (6 numbers, model frame) read straight from a file."""
    root = etree.parse(str(path)).getroot()
    poses = {}
    for link in root.iter("link"):
        element = link.find("pose")
        values = [float(v) for v in element.text.split()] if element is not None else [0.0] * 6
        poses[link.get("name")] = pose(values[:3], values[3:])
    return poses


def in_root(robot: Robot, model_poses: Mapping[str, np.ndarray]) -> dict[str, np.ndarray]:
    """Model-frame poses re-expressed in the root link's frame (what link_fk returns)."""
    inverse_root = np.linalg.inv(model_poses[robot.root])
    return {name: inverse_root @ matrix for name, matrix in model_poses.items()}


def compose_fk(robot: Robot, cfg: Mapping[str, Any] | None = None) -> dict[str, np.ndarray]:
    """Every link in the root frame by composing ``Joint.child_pose`` down the tree.

    A second implementation beside ``Robot.link_fk``: mimic value = multiplier * leader +
    offset, followed through chains; absent joints at zero (identity for ball joints).
    """
    cfg = dict(cfg or {})

    def value(joint: Joint) -> Any:
        if joint.mimic is not None:
            leader = robot.joints[joint.mimic.joint]
            return joint.mimic.multiplier * float(value(leader)) + joint.mimic.offset
        if joint.name in cfg:
            return cfg[joint.name]
        zero = {"ball": [0.0, 0.0, 0.0, 1.0], "revolute2": [0.0, 0.0], "universal": [0.0, 0.0]}
        return zero.get(joint.joint_type, 0.0)

    poses = {robot.root: np.eye(4)}
    pending = list(robot.joints.values())
    while pending:
        ready = [j for j in pending if j.parent in poses]
        assert ready, "joints not connected to the root"
        for joint in ready:
            poses[joint.child] = poses[joint.parent] @ joint.child_pose(value(joint))
            pending.remove(joint)
    return poses


def assert_poses(actual: Mapping[str, np.ndarray], expected: Mapping[str, np.ndarray]) -> None:
    assert set(actual) == set(expected)
    for name, matrix in expected.items():
        np.testing.assert_allclose(actual[name], matrix, atol=1e-9, err_msg=name)


def line_with(text: str, needle: str) -> int:
    """1-based line of the first occurrence of ``needle`` in ``text``."""
    return text[: text.index(needle)].count("\n") + 1


def sdf(body: str, version: str = "1.7", model: str = "m") -> str:
    """SDF text with one model around ``body``, one element per line."""
    return "\n".join(
        [f'<sdf version="{version}">', f'<model name="{model}">', body, "</model>", "</sdf>"]
    )


def two_links(joint_body: str, kind: str = "revolute", version: str = "1.7") -> str:
    return sdf(
        "\n".join(
            [
                '<link name="a"/>',
                '<link name="b"/>',
                f'<joint name="j" type="{kind}">',
                "<parent>a</parent>",
                "<child>b</child>",
                joint_body,
                "</joint>",
            ]
        ),
        version,
    )


# -- zero configuration equals the file ---------------------------------------------------------

PLAIN_FILES = ["all_joint_types.sdf", "gearbox_demo.sdf", "four_bar.sdf"] + [
    f"arm_{v.replace('.', '_')}.sdf" for v in ARM_VERSIONS
]


@pytest.mark.parametrize("name", PLAIN_FILES)
def test_zero_configuration_puts_every_link_at_its_file_pose(name: str) -> None:
    robot = Robot.load(SDF_DIR / name)
    expected = in_root(robot, file_link_poses(SDF_DIR / name))
    assert_poses(compose_fk(robot), expected)
    assert_poses(robot.link_fk(), expected)


RELATIVE_FRAMES = SDF_DIR / "relative_frames.sdf"


def relative_frames_zero() -> dict[str, np.ndarray]:
    """The placements written in relative_frames.sdf, composed by hand (model frame)."""
    base = pose((1, 2, 0))
    mount = base @ pose((0.1, 0, 0.2), (0, 0, HALF_PI))
    tool_offset = mount @ pose((0, 0, 0.05))
    arm = mount @ pose((0, 0.3, 0))
    elbow = arm @ pose((0.4, 0, 0))
    hand = elbow @ pose((0.2, 0, 0))
    tool = tool_offset @ pose()
    tool[:3, :3] = tool_offset[:3, :3] @ Rotation.from_quat([0, 0, 0.5**0.5, 0.5**0.5]).as_matrix()
    sensor = arm @ pose((0, 0, 0.1), (math.radians(90), 0, 0))
    # <frame>s: model_marker's pose is in the model frame (attached to __model__ by default),
    # elbow_marker's in the elbow joint frame (attached to the joint: it rides on hand).
    model_marker = pose((0, 0, 1), (0, 0, 0.25))
    elbow_marker = elbow @ pose((0, 0.05, 0), (0.3, 0, 0))
    return {
        "base": base,
        "arm": arm,
        "hand": hand,
        "tool": tool,
        "sensor": sensor,
        "mount": mount,
        "tool_offset": tool_offset,
        "model_marker": model_marker,
        "elbow_marker": elbow_marker,
        "elbow": elbow,
    }


#: The links of relative_frames.sdf, then its <frame>s, which are published as links too.
RELATIVE_FRAMES_LINKS = ["base", "arm", "hand", "tool", "sensor"]
RELATIVE_FRAMES_FRAMES = ["mount", "tool_offset", "model_marker", "elbow_marker"]


def test_poses_relative_to_frames_links_and_joints() -> None:
    robot = Robot.load(RELATIVE_FRAMES)
    assert robot.root == "base"
    frames = relative_frames_zero()
    names = RELATIVE_FRAMES_LINKS + RELATIVE_FRAMES_FRAMES
    expected = in_root(robot, {k: frames[k] for k in names})
    assert_poses(compose_fk(robot), expected)
    assert_poses(robot.link_fk(), expected)


def test_frames_are_published_as_fixed_links_of_the_link_they_are_attached_to() -> None:
    """mount is attached to base, tool_offset to mount (so to base), model_marker to the model
    (the canonical link base), elbow_marker to the joint elbow (its child link hand); each
    hangs from that link at its pose there, and follows it."""
    robot = Robot.load(RELATIVE_FRAMES)
    assert list(robot.links) == RELATIVE_FRAMES_LINKS + RELATIVE_FRAMES_FRAMES
    assert list(robot.joints)[-4:] == RELATIVE_FRAMES_FRAMES
    parents = {
        "mount": "base",
        "tool_offset": "base",
        "model_marker": "base",
        "elbow_marker": "hand",
    }
    frames = relative_frames_zero()
    text = RELATIVE_FRAMES.read_text()
    for name, parent in parents.items():
        joint = robot.joints[name]
        assert (joint.joint_type, joint.parent, joint.child) == ("fixed", parent, name)
        assert joint.line == robot.links[name].line == line_with(text, f'<frame name="{name}"')
        X_parent_frame = np.linalg.inv(frames[parent]) @ frames[name]
        np.testing.assert_allclose(joint.origin, X_parent_frame, atol=1e-12, err_msg=name)
    assert robot.warnings == []


FRAMES_ELSEWHERE = """<link name="a"/>
<link name="b"><pose>1 0 0 0 0 0</pose></link>
<link name="free"/>
<joint name="j" type="revolute">
<parent>a</parent><child>b</child><axis><xyz>0 0 1</xyz></axis>
</joint>
<frame name="on_b_from_a" attached_to="b"><pose relative_to="a">0.2 0.3 0 0 0 0.5</pose></frame>
<frame name="on_free" attached_to="free"><pose>0 0 1 0 0 0</pose></frame>
<frame name="on_on_free" attached_to="on_free"/>"""


def test_frame_pose_relative_to_another_frame_and_frames_of_left_out_links() -> None:
    """A frame posed relative to a, attached to b, hangs from b at X_b_f = X_M_b^-1 X_M_a X_a_f
    and turns with b; frames on a link left out of the tree (free) are left out, warned."""
    text = sdf(FRAMES_ELSEWHERE)
    robot = Robot.from_xml_string(text)
    assert list(robot.links) == ["a", "b", "on_b_from_a"]
    assert list(robot.joints) == ["j", "on_b_from_a"]
    X_a_f = pose((0.2, 0.3, 0), (0, 0, 0.5))
    np.testing.assert_allclose(
        robot.joints["on_b_from_a"].origin, np.linalg.inv(pose((1, 0, 0))) @ X_a_f, atol=1e-12
    )
    q = -0.7
    expected = {"a": pose(), "b": screw(Z, (1, 0, 0), q) @ pose((1, 0, 0))}
    expected["on_b_from_a"] = screw(Z, (1, 0, 0), q) @ X_a_f
    assert_poses(robot.link_fk({"j": q}), expected)
    for name in ("on_free", "on_on_free"):
        line = line_with(text, f'<frame name="{name}"')
        assert (
            f"<string>:{line}: frame {name!r}: attached to link 'free', which is not in the TF "
            "tree; not published"
        ) in robot.warnings


def test_frames_before_1_7_are_not_published() -> None:
    robot = Robot.from_xml_string(
        sdf('<link name="a"/>\n<frame name="f"><pose>0 0 1 0 0 0</pose></frame>', "1.6")
    )
    assert list(robot.links) == ["a"] and robot.joints == {}
    assert any("<frame> elements need SDFormat 1.7 or later; ignored" in w for w in robot.warnings)


@settings(max_examples=20, deadline=None)
@given(st.floats(-1.5, 1.5), st.floats(-3.0, 3.0))
def test_relative_frames_axes_follow_expressed_in(shoulder: float, elbow: float) -> None:
    robot = Robot.load(RELATIVE_FRAMES)
    frames = relative_frames_zero()
    # shoulder: about the model's z through the mount; elbow: about the mount's x (the
    # model's y) through the elbow joint frame.
    s1 = screw(Z, frames["mount"][:3, 3], shoulder)
    s2 = screw(frames["mount"][:3, :3] @ X, frames["elbow"][:3, 3], elbow)
    model_poses = {
        "base": frames["base"],
        "arm": s1 @ frames["arm"],
        "sensor": s1 @ frames["sensor"],
        "hand": s1 @ s2 @ frames["hand"],
        "tool": s1 @ s2 @ frames["tool"],
        "mount": frames["mount"],
        "tool_offset": frames["tool_offset"],
        "model_marker": frames["model_marker"],
        "elbow_marker": s1 @ s2 @ frames["elbow_marker"],
    }
    cfg = {"shoulder": shoulder, "elbow": elbow}
    assert_poses(compose_fk(robot, cfg), in_root(robot, model_poses))
    assert_poses(robot.link_fk(cfg), in_root(robot, model_poses))


# -- every joint type against explicit formulas ---------------------------------------------------


def all_types_expected(cfg: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """all_joint_types.sdf at ``cfg``, each link by its joint's screw motion (model frame)."""
    zero = file_link_poses(SDF_DIR / "all_joint_types.sdf")
    q = {
        name: cfg.get(name, 0.0)
        for name in (
            "revolute_joint",
            "continuous_joint",
            "prismatic_joint",
            "screw_joint",
            "gear_in_joint",
        )
    }
    u1, u2 = cfg.get("universal_joint", (0.0, 0.0))
    r1, r2 = cfg.get("revolute2_joint", (0.0, 0.0))
    quat = cfg.get("ball_joint", (0.0, 0.0, 0.0, 1.0))
    return {
        "base": zero["base"],
        "fixed_link": zero["fixed_link"],
        "revolute_link": screw(Z, (0.2, 0, 0.1), q["revolute_joint"]) @ zero["revolute_link"],
        "continuous_link": screw(X, (0, 0.2, 0.1), q["continuous_joint"]) @ zero["continuous_link"],
        "prismatic_link": screw(X, (0, -0.2, 0.1), 0.0, q["prismatic_joint"])
        @ zero["prismatic_link"],
        # 0.01 m per revolution, right-handed
        "screw_link": screw(
            Z, (-0.2, 0, 0.1), q["screw_joint"], 0.01 * q["screw_joint"] / (2 * math.pi)
        )
        @ zero["screw_link"],
        "gear_in": screw(Y, (0.4, 0, 0.3), q["gear_in_joint"]) @ zero["gear_in"],
        # theta_2 = -gearbox_ratio * theta_1, ratio 2, both axes +y
        "gear_out": screw(Y, (0.4, 0.2, 0.3), -2.0 * q["gear_in_joint"]) @ zero["gear_out"],
        "universal_link": screw(X, (0, 0, 0.5), u1)
        @ screw(Y, (0, 0, 0.5), u2)
        @ zero["universal_link"],
        "revolute2_link": screw(Z, (0, 0.4, 0.5), r1)
        @ screw(X, (0, 0.4, 0.5), r2)
        @ zero["revolute2_link"],
        # the ball's centre is its joint frame, 0.05 above the link
        "ball_link": rotation_about((0, -0.4, 0.55), Rotation.from_quat(quat).as_matrix())
        @ zero["ball_link"],
    }


angles = st.floats(-3.0, 3.0)


@settings(max_examples=25, deadline=None)
@given(
    rev=st.floats(-1.0, 1.0),
    cont=angles,
    pris=st.floats(0.0, 0.5),
    scr=st.floats(-20, 20),
    gear=angles,
    uni=st.tuples(angles, angles),
    rev2=st.tuples(angles, angles),
    rotvec=st.tuples(angles, angles, angles),
)
def test_every_sdf_joint_type_moves_as_the_spec_says(
    rev: float,
    cont: float,
    pris: float,
    scr: float,
    gear: float,
    uni: tuple[float, float],
    rev2: tuple[float, float],
    rotvec: tuple[float, float, float],
) -> None:
    robot = Robot.load(SDF_DIR / "all_joint_types.sdf")
    cfg = {
        "revolute_joint": rev,
        "continuous_joint": cont,
        "prismatic_joint": pris,
        "screw_joint": scr,
        "gear_in_joint": gear,
        "universal_joint": np.array(uni),
        "revolute2_joint": np.array(rev2),
        "ball_joint": Rotation.from_rotvec(rotvec).as_quat(),
    }
    expected = in_root(robot, all_types_expected(cfg))
    assert_poses(compose_fk(robot, cfg), expected)
    assert_poses(robot.link_fk(cfg), expected)


def test_all_joint_types_parsed_properties() -> None:
    robot = Robot.load(SDF_DIR / "all_joint_types.sdf")
    types = {name: joint.joint_type for name, joint in robot.joints.items()}
    assert types == {
        "fixed_joint": "fixed",
        "revolute_joint": "revolute",
        "continuous_joint": "continuous",
        "prismatic_joint": "prismatic",
        "screw_joint": "screw",
        "gear_in_joint": "continuous",
        "gear_out_joint": "continuous",
        "universal_joint": "universal",
        "revolute2_joint": "revolute2",
        "ball_joint": "ball",
    }
    # the gearbox joint is a coupling, not a published joint
    assert "gearbox_joint" not in robot.joints
    mimic = robot.joints["gear_out_joint"].mimic
    assert mimic is not None and (mimic.joint, mimic.multiplier, mimic.offset) == (
        "gear_in_joint",
        -2.0,
        0.0,
    )
    revolute = robot.joints["revolute_joint"]
    assert revolute.limit is not None and revolute.dynamics is not None
    assert (revolute.limit.lower, revolute.limit.upper) == (-1.0, 1.0)
    assert (revolute.limit.effort, revolute.limit.velocity) == (10.0, 2.0)
    assert revolute.hard_limits() == (-1.0, 1.0)
    dyn = revolute.dynamics
    assert (dyn.damping, dyn.friction, dyn.spring_reference, dyn.spring_stiffness) == (
        0.5,
        0.1,
        0.2,
        3.0,
    )
    prismatic = robot.joints["prismatic_joint"]
    assert prismatic.hard_limits() == (0.0, 0.5)
    # 1.10+: absent effort and velocity are unlimited
    assert prismatic.limit is not None and math.isinf(prismatic.limit.effort)
    assert robot.joints["continuous_joint"].hard_limits() is None
    assert robot.joints["screw_joint"].screw_pitch == pytest.approx(0.01 / (2 * math.pi))
    assert robot.joints["universal_joint"].variable_names == [
        "universal_joint/axis1",
        "universal_joint/axis2",
    ]
    assert robot.joints["ball_joint"].variable_names == [f"ball_joint/rot_{c}" for c in "xyzw"]
    universal = robot.joints["universal_joint"]
    assert universal.limit2 is not None
    assert (universal.limit2.lower, universal.limit2.upper) == (-1.2, 0.6)
    # each axis clamps into its own <limit>; SDFormat has no soft limits, so soft = hard
    assert universal.variable_limits("hard") == [(-1.0, 1.0), (-1.2, 0.6)]
    assert universal.variable_limits("soft") == [(-1.0, 1.0), (-1.2, 0.6)]
    assert robot.joints["revolute2_joint"].variable_limits() == [None, None]
    assert robot.warnings == []


def test_a_default_namespace_on_sdf_is_read_like_the_plain_file() -> None:
    plain = (SDF_DIR / "all_joint_types.sdf").read_text()
    text = plain.replace("<sdf ", '<sdf xmlns="http://sdformat.org/schemas/root.xsd" ', 1)
    robot, expected = Robot.from_xml_string(text), Robot.from_xml_string(plain)
    assert list(robot.links) == list(expected.links)
    assert {n: (j.joint_type, j.line) for n, j in robot.joints.items()} == {
        n: (j.joint_type, j.line) for n, j in expected.joints.items()
    }
    cfg = {"revolute_joint": 0.4, "universal_joint": np.array([0.2, -0.3])}
    assert_poses(robot.link_fk(cfg), expected.link_fk(cfg))


# -- versions: axis frames, limits, screw pitch, mimic --------------------------------------------


def arm_expected(hinge: float, nut: float, finger: float | None = None) -> dict[str, np.ndarray]:
    zero = {
        "base": pose(),
        "arm": pose((0, 0, 1), (0, HALF_PI, 0)),
        "nut": pose((0.5, 0, 1), (0, HALF_PI, 0)),
    }
    s_hinge = screw(X, (0, 0, 1), hinge)
    poses = {
        "base": zero["base"],
        "arm": s_hinge @ zero["arm"],
        # thread_pitch 100 rad/m, left-handed: -1/100 m per radian
        "nut": s_hinge @ screw(X, (0.5, 0, 1), nut, -nut / 100) @ zero["nut"],
    }
    if finger is not None:
        poses["finger"] = (
            s_hinge @ screw(X, (0, 0.1, 1), finger) @ pose((0, 0.1, 1), (0, HALF_PI, 0))
        )
    return poses


@pytest.mark.parametrize("version", ARM_VERSIONS)
@pytest.mark.parametrize("hinge,nut", [(0.7, 0.0), (-1.3, 2.5), (0.4, -7.0)])
def test_axis_frame_and_screw_pitch_in_every_version(
    version: str, hinge: float, nut: float
) -> None:
    robot = Robot.load(SDF_DIR / f"arm_{version.replace('.', '_')}.sdf")
    cfg = {"hinge": hinge, "nut_joint": nut}
    finger = None
    if version == "1.11":
        finger = 2.0 * (hinge - 0.05) + 0.1  # multiplier * (leader - reference) + offset
    expected = arm_expected(hinge, nut, finger)
    assert_poses(compose_fk(robot, cfg), expected)
    assert_poses(robot.link_fk(cfg), expected)
    limit = robot.joints["hinge"].limit
    assert limit is not None and (limit.lower, limit.upper) == (-2.0, 2.0)
    # a negative effort or velocity ("not enforced") and the 1.10+ defaults are unlimited
    assert math.isinf(limit.effort) and math.isinf(limit.velocity)
    assert robot.warnings == []


@pytest.mark.parametrize(
    "version,continuous", [("1.6", True), ("1.9", True), ("1.10", True), ("1.11", True)]
)
def test_revolute_without_limits_is_continuous(version: str, continuous: bool) -> None:
    robot = Robot.from_xml_string(two_links("<axis><xyz>0 0 1</xyz></axis>", version=version))
    assert robot.joints["j"].joint_type == "continuous"
    assert robot.joints["j"].hard_limits() is None


def test_second_axis_limits_follow_the_first_axis_rules() -> None:
    """``<axis2><limit>``: absent, at +-1e16 (pre-1.10 default) or lower above upper means
    that axis is not clamped (a warning for the last), a written range clamps it."""

    def second_axis(limit: str, version: str = "1.9") -> Robot:
        body = f"<axis><xyz>1 0 0</xyz></axis>\n<axis2><xyz>0 1 0</xyz>{limit}</axis2>"
        return Robot.from_xml_string(two_links(body, "universal", version))

    written = second_axis("<limit><lower>-0.4</lower><upper>0.2</upper></limit>")
    assert written.joints["j"].variable_limits() == [None, (-0.4, 0.2)]
    assert second_axis("").joints["j"].variable_limits() == [None, None]
    huge = "<limit><lower>-1e16</lower><upper>1e16</upper></limit>"
    assert second_axis(huge, "1.6").joints["j"].variable_limits() == [None, None]
    one_sided = second_axis("<limit><upper>0.2</upper></limit>")
    assert one_sided.joints["j"].variable_limits() == [None, (-math.inf, 0.2)]
    inverted = second_axis("\n<limit><lower>1</lower><upper>-1</upper></limit>")
    assert inverted.joints["j"].variable_limits() == [None, None]
    text = two_links(
        "<axis><xyz>1 0 0</xyz></axis>\n<axis2><xyz>0 1 0</xyz>\n"
        "<limit><lower>1</lower><upper>-1</upper></limit></axis2>",
        "universal",
    )
    assert Robot.from_xml_string(text).warnings == [
        f"<string>:{line_with(text, '<limit>')}: joint 'j': <axis2><limit> lower 1.0 is above "
        "upper -1.0; its second axis is not clamped"
    ]


def test_limits_at_pre_1_10_default_magnitude_are_unlimited() -> None:
    text = two_links(
        "<axis><xyz>0 0 1</xyz><limit><lower>-1e16</lower><upper>1e16</upper></limit></axis>",
        version="1.6",
    )
    assert Robot.from_xml_string(text).joints["j"].joint_type == "continuous"
    one_sided = two_links(
        "<axis><xyz>0 0 1</xyz><limit><lower>-0.5</lower></limit></axis>", version="1.6"
    )
    joint = Robot.from_xml_string(one_sided).joints["j"]
    assert joint.joint_type == "revolute" and joint.hard_limits() == (-0.5, math.inf)


def test_thread_pitch_and_screw_thread_pitch() -> None:
    def pitch(body: str, version: str) -> float:
        text = two_links(f"<axis><xyz>0 0 1</xyz></axis>{body}", "screw", version)
        return Robot.from_xml_string(text).joints["j"].screw_pitch

    # thread_pitch: radians per metre, positive left-handed
    assert pitch("<thread_pitch>4</thread_pitch>", "1.6") == pytest.approx(-0.25)
    # screw_thread_pitch: metres per revolution, positive right-handed; it wins over the old one
    assert pitch(
        "<screw_thread_pitch>0.5</screw_thread_pitch><thread_pitch>3</thread_pitch>", "1.10"
    ) == pytest.approx(0.5 / (2 * math.pi))
    # neither: libsdformat's default of 1 m per revolution
    assert pitch("", "1.8") == pytest.approx(1 / (2 * math.pi))


def test_pose_quat_and_degrees_only_from_1_9() -> None:
    body = (
        '<link name="a"/>\n<link name="b"><pose degrees="true">0 0 0 0 0 90</pose></link>\n'
        '<joint name="j" type="fixed"><parent>a</parent><child>b</child></joint>'
    )
    rotated = Robot.from_xml_string(sdf(body, "1.9")).link_fk()["b"]
    np.testing.assert_allclose(rotated, pose(rpy=(0, 0, HALF_PI)), atol=1e-12)
    # before 1.9 'degrees' does not exist: 90 is radians
    plain = Robot.from_xml_string(sdf(body, "1.8")).link_fk()["b"]
    np.testing.assert_allclose(plain, pose(rpy=(0, 0, 90.0)), atol=1e-12)


# -- gearbox --------------------------------------------------------------------------------------


@pytest.mark.parametrize("q", [0.0, 0.3, -1.1])
def test_gearbox_pair_follows_the_ratio_with_axis_signs(q: float) -> None:
    robot = Robot.load(SDF_DIR / "gearbox_demo.sdf")
    follower = robot.joints["gearbox_output_joint"]
    # The output joint's own axis is reversed (0 0 -1): its value must be +5 q so that the
    # output turns by theta_2 = -5 theta_1 about the gearbox's axis2 (the model's x).
    assert follower.mimic is not None and follower.mimic.multiplier == pytest.approx(5.0)
    assert "gearbox_demo" not in robot.joints
    zero = file_link_poses(SDF_DIR / "gearbox_demo.sdf")
    expected = {
        "gearbox_base": zero["gearbox_base"],
        "gearbox_input": screw(X, (-0.38, 0.0, 0.55), q) @ zero["gearbox_input"],
        "gearbox_output": screw(X, (-0.3, 0.0, 0.55), -5.0 * q) @ zero["gearbox_output"],
    }
    assert_poses(compose_fk(robot, {"gearbox_input_joint": q}), in_root(robot, expected))
    assert_poses(robot.link_fk({"gearbox_input_joint": q}), in_root(robot, expected))


GEARBOX_ALONE = sdf("""<link name="base"/>
<link name="wheel_in"><pose>0 0 0 0 0 0</pose></link>
<link name="wheel_out"><pose>0.3 0 0 0 0 0</pose></link>
<joint name="in_joint" type="revolute">
<parent>base</parent><child>wheel_in</child><axis><xyz>0 0 -1</xyz></axis>
</joint>
<joint name="gear" type="gearbox">
<parent>wheel_in</parent><child>wheel_out</child>
<gearbox_reference_body>base</gearbox_reference_body>
<gearbox_ratio>3</gearbox_ratio>
<axis><xyz>0 0 1</xyz></axis>
<axis2><xyz>0 0 1</xyz></axis2>
</joint>""")


def test_gearbox_without_output_joint_hangs_from_the_reference_body() -> None:
    robot = Robot.from_xml_string(GEARBOX_ALONE)
    gear = robot.joints["gear"]
    assert (gear.joint_type, gear.parent, gear.child) == ("gearbox", "base", "wheel_out")
    q = 0.4
    # theta_1 about +z is -q (the input joint's axis is -z); theta_2 = -3 theta_1 = 3 q
    expected = {
        "base": pose(),
        "wheel_in": screw(Z, (0, 0, 0), -q),
        "wheel_out": screw(Z, (0.3, 0, 0), 3 * q) @ pose((0.3, 0, 0)),
    }
    assert_poses(compose_fk(robot, {"in_joint": q}), expected)
    assert_poses(robot.link_fk({"in_joint": q}), expected)


def test_gearbox_needs_a_revolute_joint_from_the_reference_body() -> None:
    text = GEARBOX_ALONE.replace('type="revolute"', 'type="prismatic"')
    with pytest.raises(
        ModelError,
        match=rf":{line_with(text, '<gearbox_reference_body>')}: "
        r"joint 'gear': gearbox needs a revolute joint from reference body "
        r"'base' to parent link 'wheel_in'",
    ):
        Robot.from_xml_string(text)


# -- 1.11 mimic -----------------------------------------------------------------------------------


def test_mimic_needs_1_11_and_supports_only_the_first_axis() -> None:
    mimic = '<axis><xyz>0 0 1</xyz><mimic joint="j"><multiplier>2</multiplier></mimic></axis>'
    body = (
        '<link name="a"/>\n<link name="b"/>\n<link name="c"/>\n'
        '<joint name="j" type="revolute"><parent>a</parent><child>b</child></joint>\n'
        f'<joint name="k" type="revolute"><parent>b</parent><child>c</child>{mimic}</joint>'
    )
    robot = Robot.from_xml_string(sdf(body, "1.10"))
    assert robot.joints["k"].mimic is None
    assert any("<mimic> needs SDFormat 1.11" in w for w in robot.warnings)
    assert Robot.from_xml_string(sdf(body, "1.11")).joints["k"].mimic is not None
    bad = sdf(body.replace('<mimic joint="j">', '<mimic joint="j" axis="axis2">'), "1.11")
    line = line_with(bad, "<mimic")
    with pytest.raises(ModelError, match=rf":{line}: joint 'k': <mimic axis='axis2'>: only"):
        Robot.from_xml_string(bad)


def test_a_mimic_of_a_missing_or_fixed_joint_loads_with_a_warning_as_in_urdf() -> None:
    """The same rules as the URDF reader (one validation path): the joint moves on its own."""
    for leader, reason in (
        ("nowhere", "<mimic> names joint 'nowhere', which does not exist"),
        ("f", "<mimic>: joint 'f' is fixed; only single-value joints can mimic"),
    ):
        mimic = f'<axis><xyz>0 0 1</xyz><mimic joint="{leader}"/></axis>'
        body = (
            '<link name="a"/>\n<link name="b"/>\n<link name="c"/>\n'
            '<joint name="f" type="fixed"><parent>a</parent><child>b</child></joint>\n'
            f'<joint name="k" type="revolute"><parent>b</parent><child>c</child>{mimic}</joint>'
        )
        text = sdf(body, "1.11")
        robot = Robot.from_xml_string(text)
        assert robot.joints["k"].mimic is None
        line = line_with(text, "<mimic")
        assert any(f":{line}: joint 'k': {reason}" in w for w in robot.warnings), robot.warnings
        assert robot.link_fk({"k": 0.5})["c"].shape == (4, 4)  # moves on its own


def test_a_follower_whose_range_leaves_its_own_limits_warns() -> None:
    limit = "<limit><lower>0</lower><upper>0.5</upper></limit>"
    mimic = '<mimic joint="j"><multiplier>-1</multiplier></mimic>'
    body = (
        '<link name="a"/>\n<link name="b"/>\n<link name="c"/>\n'
        '<joint name="j" type="revolute"><parent>a</parent><child>b</child>'
        f"<axis><xyz>0 0 1</xyz>{limit}</axis></joint>\n"
        '<joint name="k" type="revolute"><parent>b</parent><child>c</child>'
        f"<axis><xyz>0 0 1</xyz>{limit}{mimic}</axis></joint>"
    )
    robot = Robot.from_xml_string(sdf(body, "1.11"))
    assert any("joint 'k': <mimic> moves the joint over [-0.5, 0]" in w for w in robot.warnings), (
        robot.warnings
    )


# -- closed chains --------------------------------------------------------------------------------


def test_closed_chains_are_cut_by_the_documented_rule(caplog: pytest.LogCaptureFixture) -> None:
    """The tree rule keeps one parent joint per link; the joints it leaves out are read as
    loop joints (robot.loop_joints, in file order), each naming its file and line, without a
    warning (they are no longer dropped)."""
    with caplog.at_level("WARNING"):
        robot = Robot.load(SDF_DIR / "four_bar.sdf")
    assert robot.root == "ground"
    assert set(robot.joints) == {"ground_crank", "rocker_coupler", "ground_rocker", "rod_ground"}
    text = (SDF_DIR / "four_bar.sdf").read_text()
    assert [loop.name for loop in robot.loop_joints] == ["crank_coupler", "rod_coupler"]
    for loop in robot.loop_joints:
        line = line_with(text, f'<joint name="{loop.name}"')
        assert loop.where.endswith(f"four_bar.sdf:{line}: joint '{loop.name}'")
    assert robot.warnings == [] and caplog.text == ""


def test_closed_chain_tree_moves_with_its_kept_joints() -> None:
    robot = Robot.load(SDF_DIR / "four_bar.sdf")
    zero = file_link_poses(SDF_DIR / "four_bar.sdf")
    rocker, coupler = 0.2, -0.2
    s_rocker = screw(Y, (0.5, 0, 0), rocker)
    expected = {
        "ground": zero["ground"],
        "crank": zero["crank"],
        "rod": zero["rod"],
        "rocker": s_rocker @ zero["rocker"],
        "coupler": s_rocker @ screw(Y, (0.5, 0, 0.3), coupler) @ zero["coupler"],
    }
    cfg = {"ground_rocker": rocker, "rocker_coupler": coupler}
    assert_poses(compose_fk(robot, cfg), expected)


def test_a_mimic_of_a_left_out_joint_is_dropped_with_a_warning() -> None:
    mimic = '<axis><xyz>0 0 1</xyz><mimic joint="loop"/></axis>'
    body = "\n".join(
        [
            '<link name="g"/>',
            '<link name="a"/>',
            '<link name="b"/>',
            '<link name="c"/>',
            '<joint name="ja" type="revolute"><parent>g</parent><child>a</child></joint>',
            '<joint name="jb" type="revolute"><parent>g</parent><child>b</child></joint>',
            '<joint name="loop" type="revolute"><parent>a</parent><child>b</child></joint>',
            f'<joint name="jc" type="revolute"><parent>b</parent><child>c</child>{mimic}</joint>',
        ]
    )
    robot = Robot.from_xml_string(sdf(body, "1.11"))
    assert "loop" not in robot.joints and robot.joints["jc"].mimic is None
    assert [loop.name for loop in robot.loop_joints] == ["loop"]
    assert any(
        "joint 'jc': mimics joint 'loop', a joint that closes a kinematic loop" in w
        for w in robot.warnings
    )


def test_sdf_continuous_type() -> None:
    joint = Robot.from_xml_string(two_links("<axis><xyz>0 1 0</xyz></axis>", "continuous"))
    assert joint.joints["j"].joint_type == "continuous"
    np.testing.assert_allclose(joint.joints["j"].axis, Y)


def test_links_not_connected_to_the_root_are_left_out_with_a_warning() -> None:
    body = (
        '<link name="a"/>\n<link name="b"/>\n<link name="free"/>\n'
        '<joint name="j" type="fixed"><parent>a</parent><child>b</child></joint>'
    )
    robot = Robot.from_xml_string(sdf(body))
    assert robot.root == "a" and set(robot.links) == {"a", "b"}
    assert any("link 'free'" in w and "not connected" in w for w in robot.warnings)


def test_canonical_link_is_the_root_where_the_tree_allows() -> None:
    body = (
        '<link name="a"/>\n<link name="b"/>\n<link name="c"/>\n'
        '<joint name="j" type="fixed"><parent>b</parent><child>a</child></joint>\n'
        '<joint name="k" type="fixed"><parent>b</parent><child>c</child></joint>'
    )
    # 'a' (the default canonical link) has a parent joint: the root is 'b'
    assert Robot.from_xml_string(sdf(body)).root == "b"
    text = sdf(body).replace('<model name="m">', '<model name="m" canonical_link="c">')
    assert Robot.from_xml_string(text).root == "b"
    tied = sdf('<link name="a"/>\n<link name="b"/>').replace(
        'name="m"', 'name="m" canonical_link="b"'
    )
    robot = Robot.from_xml_string(tied)
    assert robot.root == "b" and any("link 'a'" in w for w in robot.warnings)


JOINT_TO_FRAMES = """<link name="a"/>
<link name="b"><pose>1 0 0 0 0 0</pose></link>
<frame name="a_tip" attached_to="a"><pose>0.5 0 0 0 0 0</pose></frame>
<frame name="b_mount" attached_to="b"><pose relative_to="b">0 0 0.2 0 0 0</pose></frame>
<joint name="j" type="revolute">
<parent>a_tip</parent><child>b_mount</child><axis><xyz>0 0 1</xyz></axis>
</joint>"""


@pytest.mark.parametrize("version", ["1.7", "1.8"])
def test_joint_between_frames_connects_their_links(version: str) -> None:
    """SDFormat 1.8 allows it; libsdformat, which converts a 1.7 file to its own version,
    reads it in 1.7 too, and so does this reader."""
    robot = Robot.from_xml_string(sdf(JOINT_TO_FRAMES, version))
    joint = robot.joints["j"]
    assert (joint.parent, joint.child) == ("a", "b")
    # the joint frame is the child frame b_mount: the axis passes through (1, 0, 0.2)
    q = 0.8
    b = screw(Z, (1, 0, 0.2), q) @ pose((1, 0, 0))
    # the frames are published too: a_tip on a, b_mount on b
    expected = {"a": pose(), "b": b, "a_tip": pose((0.5, 0, 0)), "b_mount": b @ pose((0, 0, 0.2))}
    assert_poses(compose_fk(robot, {"j": q}), expected)
    assert_poses(robot.link_fk({"j": q}), expected)


def test_frames_attached_in_a_cycle_are_refused() -> None:
    body = (
        '<link name="a"/>\n<frame name="f1" attached_to="f2"><pose relative_to="__model__"/>'
        '</frame>\n<frame name="f2" attached_to="f1"><pose relative_to="__model__"/></frame>'
    )
    text = sdf(body, "1.8")
    line = line_with(text, "f1")
    with pytest.raises(
        ModelError,
        match=rf":{line}: frame "
        r"'f1': frames are attached to each other in a cycle: f1 -> f2 -> f1",
    ):
        Robot.from_xml_string(text)


# -- model selection, world ---------------------------------------------------------------------

TWO_MODELS = """<sdf version="1.8">
<world name="w">
<model name="first"><link name="x"/></model>
<model name="second"><link name="y"/><link name="z"/>
<joint name="j" type="revolute"><parent>y</parent><child>z</child></joint></model>
</world>
</sdf>"""


def test_world_robot_or_model_by_name() -> None:
    """In a world, the one model with joints (test_sdf_gazebo.py has the full rule);
    ``model_name`` picks any model."""
    robot = Robot.from_xml_string(TWO_MODELS)
    assert (robot.name, robot.root, list(robot.joints)) == ("second", "y", ["j"])
    assert Robot.from_xml_string(TWO_MODELS, model_name="first").name == "first"
    two_at_top = '<sdf version="1.8"><model name="a"><link name="x"/></model>' + (
        '<model name="b"><link name="y"/></model></sdf>'
    )
    assert Robot.from_xml_string(two_at_top).name == "a"  # the first, as libsdformat's Root
    with pytest.raises(
        ModelError,
        match=r":1: <sdf>: no <model> named 'third' "
        r"\(models: 'first', 'second'\)",
    ):
        Robot.from_xml_string(TWO_MODELS, model_name="third")


def test_joint_to_world_adds_a_world_root_at_the_model_pose() -> None:
    body = (
        '<pose>1 0 0 0 0 1.5707963267948966</pose>\n<link name="a"><pose>0 1 0 0 0 0</pose>'
        '</link>\n<joint name="w" type="fixed"><parent>world</parent><child>a</child>'
        "</joint>"
    )
    robot = Robot.from_xml_string(sdf(body))
    assert robot.root == "world" and list(robot.links) == ["world", "a"]
    expected = pose((1, 0, 0), (0, 0, HALF_PI)) @ pose((0, 1, 0))
    np.testing.assert_allclose(robot.link_fk()["a"], expected, atol=1e-12)


# -- errors, with their lines ---------------------------------------------------------------------

ERROR_CASES = [
    # (text, needle for the line, message regex)
    (
        '<sdf version="1.3"><model name="m"><link name="a"/></model></sdf>',
        "<sdf",
        r"<sdf>: SDFormat version '1.3'; supported: 1.4, 1.5, 1.6, 1.7, 1.8, 1.9, 1.10, 1.11",
    ),
    (
        sdf('<link name="a"/>\n<model name="inner">\n<frame name="f"/>\n</model>'),
        '<model name="inner">',
        r"model 'inner': model has no links",
    ),
    (
        '<sdf version="1.7">\n<world name="empty">\n</world>\n</sdf>',
        "<world",
        r"world 'empty': world has no <model>",
    ),
    (sdf(""), '<model name="m">', r"model 'm': model has no links"),
    (
        two_links("", kind="planar"),
        '<joint name="j"',
        r"joint 'j': unknown joint type 'planar'; SDFormat types: fixed, revolute",
    ),
    (
        sdf(
            '<link name="a"/>\n<link name="b"/>\n<joint name="j" type="fixed">\n'
            "<parent>a</parent>\n<child>nope</child>\n</joint>"
        ),
        "<child>nope",
        r"joint 'j': child 'nope' is not a link or frame of the model",
    ),
    (
        sdf(
            '<link name="a"/>\n<link name="b"/>\n<joint name="j" type="fixed">\n'
            "<child>b</child>\n</joint>"
        ),
        '<joint name="j"',
        r"joint 'j': missing <parent>",
    ),
    (
        sdf(
            '<link name="a"/>\n<link name="b">\n<pose relative_to="ghost">0 0 0 0 0 0</pose>\n'
            "</link>"
        ),
        "<pose",
        r"link 'b': unknown frame 'ghost'",
    ),
    (
        sdf(
            '<link name="a">\n<pose relative_to="b">0 0 0 0 0 0</pose>\n</link>\n<link name="b">'
            '\n<pose relative_to="a">0 0 0 0 0 0</pose>\n</link>'
        ),
        '<link name="a"',
        r"link 'a': poses are relative to each other in a cycle: a -> b -> a",
    ),
    (
        sdf(
            '<link name="a"/>\n<link name="b">\n<pose frame="a">0 0 0 0 0 0</pose>\n</link>', "1.6"
        ),
        "<pose",
        r"link 'b': <pose frame=...> \(SDFormat 1.5/1.6\) is not supported",
    ),
    (
        sdf('<link name="a">\n<pose>0 0 nan 0 0 0</pose>\n</link>'),
        "<pose",
        r"link 'a': <pose> must be finite, got nan",
    ),
    (
        sdf('<link name="a">\n<pose>0 0 0 0 0</pose>\n</link>'),
        "<pose",
        r"link 'a': <pose> needs 6 numbers, got 5",
    ),
    (
        sdf(
            '<link name="a">\n<pose rotation_format="quat_xyzw">0 0 0 0 0 0</pose>\n</link>', "1.9"
        ),
        "<pose",
        r"link 'a': <pose> needs 7 numbers, got 6",
    ),
    (two_links("<axis>\n<xyz>0 0 0</xyz>\n</axis>"), "<xyz>", r"joint 'j': <axis><xyz> is zero"),
    (
        two_links("<axis><xyz>0 0 1</xyz></axis>\n<thread_pitch>0</thread_pitch>", "screw"),
        "<thread_pitch>",
        r"joint 'j': <thread_pitch> 0.0 \(radians per metre\) gives no finite pitch",
    ),
    (
        sdf('<link name="a"/>\n<link name="a"></link>'),
        '<link name="a"></link>',
        r"link 'a': duplicate link name \(first defined at line 3\)",
    ),
    (
        sdf('<link name="a"/>\n<link name="b"/>\n<frame name="a"/>'),
        "<frame",
        r"frame 'a': name 'a' is already used by link at line 3",
    ),
    (
        sdf('<link name="a"/>\n<frame name="f" attached_to="ghost"/>'),
        "<frame",
        r"frame 'f': unknown frame 'ghost'",
    ),
    (
        sdf('<link name="a"/>').replace('name="m"', 'name="m" canonical_link="zz"'),
        "<model",
        r"model 'm': canonical_link 'zz' is not a link of the model",
    ),
    (
        sdf(
            '<link name="a"/>\n<link name="b"/>\n<joint name="j" type="fixed">\n'
            "<parent>a</parent>\n<child>world</child>\n</joint>"
        ),
        "<child>world",
        r"joint 'j': child 'world' is not a link or frame of the model",
    ),
]


@pytest.mark.parametrize("text,needle,message", ERROR_CASES)
def test_errors_name_source_line_and_element(text: str, needle: str, message: str) -> None:
    line = line_with(text, needle)
    with pytest.raises(ModelError, match=rf"^<string>:{line}: {message}"):
        Robot.from_xml_string(text)


def test_file_errors_name_the_file(tmp_path: Path) -> None:
    path = tmp_path / "bad.sdf"
    text = two_links("<axis>\n<xyz>0 0 0</xyz>\n</axis>")
    path.write_text(text)
    line = line_with(text, "<xyz>")
    with pytest.raises(ModelError, match=re.escape(f"{path}:{line}: joint 'j'")):
        Robot.load(path)


def test_warnings_for_odd_but_readable_input() -> None:
    text = two_links("<axis>\n<xyz>0 0 2</xyz>\n</axis>")
    robot = Robot.from_xml_string(text)
    np.testing.assert_allclose(robot.joints["j"].axis, [0, 0, 1])
    assert any(
        f":{line_with(text, '<xyz>')}: joint 'j': <axis><xyz> [0.0, 0.0, 2.0] is not "
        "a unit vector" in w
        for w in robot.warnings
    )
    old = sdf(
        '<link name="a"/>\n<link name="b">\n<pose relative_to="a">0 0 1 0 0 0</pose>\n</link>',
        "1.6",
    )
    robot = Robot.from_xml_string(old)
    assert any("'relative_to' needs SDFormat 1.7" in w for w in robot.warnings)


# -- what libsdformat reads without error ---------------------------------------------------------


def warning_at(robot: Robot, line: int, text: str) -> str:
    """The one warning of ``robot`` at ``line`` that contains ``text``."""
    found = [w for w in robot.warnings if f"<string>:{line}: " in w and text in w]
    assert len(found) == 1, robot.warnings
    return found[0]


@pytest.mark.parametrize(
    "kind,axes,needle,message,second_axis",
    [
        (
            "universal",
            "<axis><xyz>1 0 0</xyz></axis>",
            '<joint name="j"',
            "joint 'j': universal joint without <axis2>: degenerate, its second axis is (0, 0, 1)",
            Z,
        ),
        (
            "revolute2",
            "<axis><xyz>0 0 1</xyz></axis>",
            '<joint name="j"',
            "its second axis is (0, 0, 1) parallel to <axis>",
            Z,
        ),
        (
            "revolute2",
            "<axis><xyz>1 0 0</xyz></axis>\n<axis2><xyz>-2 0 0</xyz></axis2>",
            "<axis2>",
            "joint 'j': <axis2> is parallel to <axis>: degenerate, both values turn about one line",
            -X,
        ),
    ],
)
def test_degenerate_two_axis_joints_load_with_a_warning(
    kind: str, axes: str, needle: str, message: str, second_axis: np.ndarray
) -> None:
    """libsdformat reads a revolute2 or universal joint without <axis2>, or with <axis2>
    parallel to <axis>: so does this reader, warning at the line, the motion as written."""
    text = two_links(axes, kind)
    robot = Robot.from_xml_string(text)
    warning_at(robot, line_with(text, needle), message)
    first_axis = robot.joints["j"].axis
    q1, q2 = 0.3, -0.7
    first = Rotation.from_rotvec(q1 * first_axis).as_matrix()
    second = Rotation.from_rotvec(q2 * np.asarray(second_axis, dtype=float)).as_matrix()
    expected = {"a": pose(), "b": rotation_about((0, 0, 0), first @ second)}
    assert_poses(robot.link_fk({"j": [q1, q2]}), expected)
    assert_poses(compose_fk(robot, {"j": [q1, q2]}), expected)


@pytest.mark.parametrize(
    "reference", ["", "<gearbox_reference_body>__default__</gearbox_reference_body>\n"]
)
def test_gearbox_without_reference_body_loads_without_the_coupling(reference: str) -> None:
    """libsdformat needs no <gearbox_reference_body> (its default is __default__): the joint
    loads uncoupled, with a warning at its line, turning wheel_out about its own <axis> by its
    own value."""
    text = GEARBOX_ALONE.replace(
        "<gearbox_reference_body>base</gearbox_reference_body>\n", reference
    )
    robot = Robot.from_xml_string(text)
    warning_at(
        robot,
        line_with(text, '<joint name="gear"'),
        "joint 'gear': gearbox without <gearbox_reference_body>: the coupling is left out",
    )
    gear = robot.joints["gear"]
    assert (gear.parent, gear.child, gear.mimic) == ("wheel_in", "wheel_out", None)
    q_in, q_gear = 0.4, -1.1
    wheel_in = screw(Z, (0, 0, 0), -q_in)
    expected = {
        "base": pose(),
        "wheel_in": wheel_in,
        "wheel_out": wheel_in @ screw(Z, (0.3, 0, 0), q_gear) @ pose((0.3, 0, 0)),
    }
    cfg = {"in_joint": q_in, "gear": q_gear}
    assert_poses(robot.link_fk(cfg), expected)
    assert_poses(compose_fk(robot, cfg), expected)


FRAME_GRAPH_JOINTS = sdf(
    """<link name="base"/>
<link name="arm"><pose>0 0 0.5 0 0 0</pose></link>
<link name="hand"><pose>0 0 1 0 0 0</pose></link>
<link name="tool"><pose>0.1 0 1 0 0 0</pose></link>
<joint name="shoulder" type="revolute">
<parent>__model__</parent><child>arm</child><axis><xyz>1 0 0</xyz></axis>
</joint>
<joint name="elbow" type="revolute">
<parent>shoulder</parent><child>hand</child><axis><xyz>0 1 0</xyz></axis>
</joint>
<frame name="mount" attached_to="elbow"><pose relative_to="hand">0.1 0 0 0 0 0</pose></frame>
<joint name="tool_joint" type="fixed"><parent>mount</parent><child>tool</child></joint>""",
    "1.8",
)


@pytest.mark.parametrize("version", ["1.7", "1.8"])
def test_parent_and_child_may_name_any_frame(version: str) -> None:
    """libsdformat resolves <parent>/<child> through the frame graph: a joint to its child
    link (shoulder -> arm), a frame to the link it is attached to (mount -> elbow -> hand),
    __model__ to the canonical link; the joint's own pose stays relative to its <child>.
    SDFormat allows it from 1.8, libsdformat (which converts older files) in every version."""
    robot = Robot.from_xml_string(FRAME_GRAPH_JOINTS.replace("1.8", version))
    links = {name: (j.parent, j.child) for name, j in robot.joints.items() if name != "mount"}
    assert links == {
        "shoulder": ("base", "arm"),
        "elbow": ("arm", "hand"),
        "tool_joint": ("hand", "tool"),
    }
    assert robot.joints["mount"].parent == "hand"
    assert robot.warnings == []
    q = 0.6
    arm = screw(X, (0, 0, 0.5), q) @ pose((0, 0, 0.5))
    hand = arm @ screw(Y, (0, 0, 0.5), q) @ pose((0, 0, 0.5))
    expected = {
        "base": pose(),
        "arm": arm,
        "hand": hand,
        "mount": hand @ pose((0.1, 0, 0)),
        "tool": hand @ pose((0.1, 0, 0)),
    }
    cfg = {"shoulder": q, "elbow": q}
    assert_poses(robot.link_fk(cfg), expected)
    assert_poses(compose_fk(robot, cfg), expected)


def test_parent_and_child_name_joints_and_the_model_frame_before_1_7() -> None:
    """Before 1.7 there are no <frame>s, but joints and __model__ are frames libsdformat
    resolves all the same."""
    kept = [line for line in FRAME_GRAPH_JOINTS.splitlines() if "mount" not in line]
    robot = Robot.from_xml_string("\n".join(kept).replace("1.8", "1.6"))
    assert {name: (j.parent, j.child) for name, j in robot.joints.items()} == {
        "shoulder": ("base", "arm"),
        "elbow": ("arm", "hand"),
    }


@pytest.mark.parametrize(
    "old,new,needle,message",
    [
        (
            "<child>arm</child>",
            "<child>ghost</child>",
            "<child>ghost",
            r"joint 'shoulder': child 'ghost' is not a link or frame of the model",
        ),
        (
            "<parent>shoulder</parent>",
            "<parent>elbow</parent>",
            "<parent>elbow",
            r"joint 'elbow': a joint cannot name itself as its parent",
        ),
    ],
)
def test_frame_graph_joint_errors(old: str, new: str, needle: str, message: str) -> None:
    text = FRAME_GRAPH_JOINTS.replace(old, new)
    with pytest.raises(ModelError, match=rf"^<string>:{line_with(text, needle)}: {message}"):
        Robot.from_xml_string(text)


def test_pre_1_7_joint_named_like_a_link_is_renamed_as_libsdformat_does() -> None:
    """Before 1.7 a joint may share its link's name; libsdformat renames it NAME_joint (then
    NAME_joint0, ...), so Gazebo's joint states carry the new name. Its pose stays its own."""
    text = sdf(
        """<link name="base"/>
<link name="wheel"><pose>1 0 0 0 0 0</pose></link>
<link name="wheel_joint"><pose>2 0 0 0 0 0</pose></link>
<joint name="wheel" type="revolute">
<parent>base</parent><child>wheel</child><pose>0 0 0.1 0 0 0</pose>
<axis><xyz>0 0 1</xyz></axis>
</joint>
<joint name="wheel_joint" type="fixed"><parent>base</parent><child>wheel_joint</child></joint>""",
        "1.6",
    )
    robot = Robot.from_xml_string(text)
    assert list(robot.joints) == ["wheel_joint0", "wheel_joint_joint"]
    warning_at(
        robot,
        line_with(text, '<joint name="wheel"'),
        "joint 'wheel': name 'wheel' is already used by a link of model 'm'; renamed "
        "'wheel_joint0', as libsdformat does before SDFormat 1.7",
    )
    warning_at(robot, line_with(text, '<joint name="wheel_joint"'), "'wheel_joint_joint'")
    np.testing.assert_allclose(robot.joints["wheel_joint0"].origin, pose((1, 0, 0.1)))
    q = 0.8
    expected = {
        "base": pose(),
        "wheel": screw(Z, (1, 0, 0.1), q) @ pose((1, 0, 0)),
        "wheel_joint": pose((2, 0, 0)),
    }
    assert_poses(robot.link_fk({"wheel_joint0": q}), expected)


def test_a_loop_through_the_root_is_a_loop_joint_to_the_root() -> None:
    """Every link some joint's child: the canonical link is the root and the joint to it
    closes the loop, read as a loop joint whose link2 is the root."""
    text = two_links("<axis><xyz>0 0 1</xyz></axis>").replace(
        "</joint>",
        '</joint>\n<joint name="back" type="fixed"><parent>b</parent><child>a</child></joint>',
    )
    robot = Robot.from_xml_string(text)
    assert robot.root == "a" and list(robot.joints) == ["j"]
    (back,) = robot.loop_joints
    assert (back.name, back.type, back.link1, back.link2) == ("back", LoopJointType.FIXED, "b", "a")
    back_line = line_with(text, '<joint name="back"')
    assert back.where == f"<string>:{back_line}: joint 'back'"


def test_pre_1_7_link_written_after_a_joint_of_its_name_is_renamed() -> None:
    """libsdformat's Model::Load renames the later element of the two: a link NAME_link."""
    text = sdf(
        """<link name="base"/>
<link name="tip"/>
<joint name="x" type="fixed"><parent>base</parent><child>tip</child></joint>
<link name="x"><pose>0 0 1 0 0 0</pose></link>""",
        "1.6",
    )
    robot = Robot.from_xml_string(text)
    assert list(robot.links) == ["base", "tip"] and list(robot.joints) == ["x"]
    warning_at(
        robot,
        line_with(text, '<link name="x"'),
        "link 'x': name 'x' is already used by a joint of model 'm'; renamed 'x_link'",
    )
    assert any("link 'x_link'" in w and "not connected" in w for w in robot.warnings)
    # the joint's frame is its own (at its child tip), not the link x it once shared a name with
    np.testing.assert_allclose(robot.joints["x"].origin, pose(), atol=1e-15)
