"""Closed kinematic loops read in the three spellings (docs/loops.md, "Reading loops"):
SDFormat's joint whose child already has a parent, URDF ``<loop_joint>`` (Drake's extension)
and URDF ``<gazebo><joint>``; every refusal names the file, line and element.

The four-bar of test/data/loops is written once per spelling; the expected joint frames are
written here from the drawing (pivots, tips, a -90 degree turn about x), not from the parser.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from repo_paths import TEST_DIR

from joint_tf_publisher import ModelError, Robot
from joint_tf_publisher.model import LoopJoint, LoopJointType
from joint_tf_publisher.model.drawing import drawing_poses
from joint_tf_publisher.model.validate import MAX_LOOP_JOINTS, MAX_LOOP_WORK

LOOPS_DIR = TEST_DIR / "data" / "loops"
FOUR_BARS = ["four_bar.sdf", "four_bar_loop_joint.urdf", "four_bar_gazebo.urdf"]

#: The loop joint frame's turn: -90 degrees about x, so its z axis is the links' y.
TURN = np.array([[1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.0, -1.0, 0.0]])


def frame(xyz: tuple[float, float, float]) -> np.ndarray:
    pose = np.eye(4)
    pose[:3, :3] = TURN
    pose[:3, 3] = xyz
    return pose


def line_with(text: str, fragment: str) -> int:
    """The 1-based line of the first line of ``text`` containing ``fragment``."""
    return next(n for n, line in enumerate(text.splitlines(), 1) if fragment in line)


def load_text(tmp_path: Path, name: str, text: str) -> Robot:
    path = tmp_path / name
    path.write_text(text)
    return Robot.load(path)


def refusal(tmp_path: Path, name: str, text: str) -> tuple[str, str]:
    """The message of the ModelError loading ``text`` as file ``name``, and that file's path."""
    path = tmp_path / name
    path.write_text(text)
    with pytest.raises(ModelError) as caught:
        Robot.load(path)
    return str(caught.value), str(path)


# -- the four-bar in each spelling ------------------------------------------------------------


@pytest.mark.parametrize("name", FOUR_BARS)
def test_a_four_bar_reads_as_the_drawn_loop_joint(name: str) -> None:
    robot = Robot.load(LOOPS_DIR / name)
    assert robot.warnings == []
    assert list(robot.joints) == ["ground_crank", "crank_coupler", "ground_rocker"]
    (loop,) = robot.loop_joints
    text = (LOOPS_DIR / name).read_text()
    element = "loop_joint" if name.endswith("loop_joint.urdf") else "joint"
    line = line_with(text, 'name="coupler_rocker"')
    assert loop.where == f"{LOOPS_DIR / name}:{line}: {element} 'coupler_rocker'"
    expected = LoopJoint(
        name="coupler_rocker",
        type=LoopJointType.CONTINUOUS,
        link1="coupler",
        link1_to_joint=frame((0.5, 0.0, 0.2)),
        link2="rocker",
        link2_to_joint=frame((0.0, 0.0, 0.4)),
        axis=np.array([0.0, 0.0, 1.0]),
        lower=None,
        upper=None,
        where="",
    )
    assert loop.same_as(expected, tolerance=1e-12), loop


@pytest.mark.parametrize("name", [*FOUR_BARS, "slider_crank.urdf"])
def test_the_drawing_closes_the_loop(name: str) -> None:
    """At zero joint values both copies of the joint frame are one frame in the ground's."""
    robot = Robot.load(LOOPS_DIR / name)
    (loop,) = robot.loop_joints
    poses = drawing_poses(robot.joints, robot.root)
    np.testing.assert_allclose(
        poses[loop.link1] @ loop.link1_to_joint, poses[loop.link2] @ loop.link2_to_joint, atol=1e-12
    )


def test_the_tree_of_a_urdf_loads_as_without_its_loop_joint() -> None:
    """urdfdom ignores <loop_joint> and <gazebo>: the tree and its poses are the same."""
    text = (LOOPS_DIR / "four_bar_loop_joint.urdf").read_text()
    bare = text[: text.index("<loop_joint name")] + text[text.index("</loop_joint>") + 13 :]
    with_loop, without = (
        Robot.load(LOOPS_DIR / "four_bar_loop_joint.urdf"),
        Robot.from_xml_string(bare),
    )
    assert without.loop_joints == ()
    cfg = {"ground_crank": 0.3, "crank_coupler": -0.2, "ground_rocker": 0.1}
    for link, pose in without.link_fk(cfg).items():
        np.testing.assert_array_equal(with_loop.link_fk(cfg)[link], pose)


@pytest.mark.parametrize(
    ("version", "axis"),
    [
        ("1.6", "<xyz>0 1 0</xyz><use_parent_model_frame>true</use_parent_model_frame>"),
        ("1.7", '<xyz expressed_in="__model__">0 1 0</xyz>'),
        ("1.7", '<xyz expressed_in="ground">0 1 0</xyz>'),
    ],
)
def test_sdf_loop_axes_in_other_frames_read_into_the_joint_frame(version: str, axis: str) -> None:
    """SDF 1.6 use_parent_model_frame and 1.7 expressed_in: the model's y is the joint's z."""
    text = (LOOPS_DIR / "four_bar.sdf").read_text().replace('version="1.7"', f'version="{version}"')
    text = text.replace(
        "<pose>0 0 0.4 -1.5707963267948966 0 0</pose>\n      <axis><xyz>0 0 1</xyz></axis>",
        f"<pose>0 0 0.4 -1.5707963267948966 0 0</pose>\n      <axis>{axis}</axis>",
    )
    (loop,) = Robot.from_xml_string(text).loop_joints
    np.testing.assert_allclose(loop.axis, [0.0, 0.0, 1.0], atol=1e-12)


def test_gazebo_joint_with_use_parent_model_frame_reads_as_sdf_1_6() -> None:
    text = (
        (LOOPS_DIR / "four_bar_gazebo.urdf")
        .read_text()
        .replace(
            "<axis><xyz>0 0 1</xyz></axis>",
            "<axis><xyz>0 1 0</xyz><use_parent_model_frame>1</use_parent_model_frame></axis>",
        )
    )
    (loop,) = Robot.from_xml_string(text).loop_joints
    np.testing.assert_allclose(loop.axis, [0.0, 0.0, 1.0], atol=1e-12)


def test_gazebo_joint_pose_relative_to_another_link() -> None:
    """SDF 1.8+ ``relative_to``: the joint frame written in the coupler's frame instead."""
    text = (
        (LOOPS_DIR / "four_bar_gazebo.urdf")
        .read_text()
        .replace("<pose>0 0 0.4", '<pose relative_to="coupler">0.5 0 0.2')
    )
    (loop,) = Robot.from_xml_string(text).loop_joints
    np.testing.assert_allclose(loop.link2_to_joint, frame((0.0, 0.0, 0.4)), atol=1e-12)
    np.testing.assert_allclose(loop.link1_to_joint, frame((0.5, 0.0, 0.2)), atol=1e-12)


# -- types and limits ---------------------------------------------------------------------------


def urdf_loop(loop_joint: str) -> str:
    """A URDF with a two-link tree a -> b under r and ``loop_joint`` written after it."""
    return "\n".join(
        [
            '<?xml version="1.0"?>',
            '<robot name="r">',
            '  <link name="r"/>',
            '  <link name="a"/>',
            '  <link name="b"/>',
            '  <joint name="ra" type="continuous"><parent link="r"/><child link="a"/></joint>',
            '  <joint name="ab" type="continuous"><parent link="a"/><child link="b"/>'
            '<origin xyz="1 0 0"/></joint>',
            loop_joint,
            "</robot>",
        ]
    )


def gazebo_loop(joint_body: str, kind: str = "revolute", parent: str = "r") -> str:
    return urdf_loop(
        f'  <gazebo>\n  <joint name="loop" type="{kind}">\n'
        f"    <parent>{parent}</parent><child>b</child>\n{joint_body}\n  </joint>\n  </gazebo>"
    )


def sdf_loop(joint_body: str, kind: str = "revolute") -> str:
    """An SDFormat model r -> a -> b (b drawn at (1, 0, 0)) and a joint b -> a closing a loop."""
    return "\n".join(
        [
            '<?xml version="1.0"?>',
            '<sdf version="1.9">',
            '<model name="m">',
            '  <link name="r"/>',
            '  <link name="a"/>',
            '  <link name="b"><pose>1 0 0 0 0 0</pose></link>',
            '  <joint name="ra" type="continuous"><parent>r</parent><child>a</child></joint>',
            '  <joint name="ab" type="continuous"><parent>a</parent><child>b</child></joint>',
            f'  <joint name="loop" type="{kind}">',
            "    <parent>b</parent><child>a</child>",
            joint_body,
            "  </joint>",
            "</model>",
            "</sdf>",
        ]
    )


@pytest.mark.parametrize(
    ("written", "expected"),
    [
        ("revolute", LoopJointType.REVOLUTE),
        ("continuous", LoopJointType.CONTINUOUS),
        ("prismatic", LoopJointType.PRISMATIC),
        ("ball", LoopJointType.BALL),
        ("spherical", LoopJointType.BALL),
        ("fixed", LoopJointType.FIXED),
    ],
)
def test_urdf_loop_joint_types(written: str, expected: LoopJointType) -> None:
    text = urdf_loop(
        f'  <loop_joint name="loop" type="{written}"><link1 link="r" xyz="1 0 0"/>'
        '<link2 link="b"/><axis xyz="0 0 2"/></loop_joint>'
    )
    (loop,) = Robot.from_xml_string(text).loop_joints
    assert loop.type is expected
    assert loop.axis.tolist() == ([0.0, 0.0, 1.0] if expected.has_axis else [0.0, 0.0, 0.0])


def test_urdf_loop_joint_defaults_are_drakes() -> None:
    """No <axis>: (1, 0, 0); no xyz/rpy: the link's own frame; no <limit>: None."""
    text = urdf_loop(
        '  <loop_joint name="loop" type="revolute"><link1 link="r"/><link2 link="b"/></loop_joint>'
    )
    (loop,) = Robot.from_xml_string(text).loop_joints
    assert loop.axis.tolist() == [1.0, 0.0, 0.0]
    assert (loop.link1_to_joint == np.eye(4)).all() and (loop.link2_to_joint == np.eye(4)).all()
    assert (loop.lower, loop.upper) == (None, None)


def test_limits_in_each_spelling() -> None:
    urdf = urdf_loop(
        '  <loop_joint name="loop" type="prismatic"><link1 link="r" xyz="1 0 0"/>'
        '<link2 link="b"/><limit lower="-0.1" upper="0.2"/></loop_joint>'
    )
    limit = "<axis><xyz>1 0 0</xyz><limit><lower>-0.1</lower><upper>0.2</upper></limit></axis>"
    pose = '<pose relative_to="r">1 0 0 0 0 0</pose>'
    for text in (urdf, gazebo_loop(pose + limit, "prismatic"), sdf_loop(pose + limit, "prismatic")):
        (loop,) = Robot.from_xml_string(text).loop_joints
        assert (loop.type, loop.lower, loop.upper) == (LoopJointType.PRISMATIC, -0.1, 0.2)
    one_sided = "<axis><xyz>0 0 1</xyz><limit><lower>-1</lower></limit></axis>"
    (loop,) = Robot.from_xml_string(sdf_loop(pose + one_sided)).loop_joints
    assert (loop.type, loop.lower, loop.upper) == (LoopJointType.REVOLUTE, -1.0, None)


def test_a_limit_on_a_continuous_urdf_loop_joint_is_ignored_with_a_warning() -> None:
    text = urdf_loop(
        '  <loop_joint name="loop" type="continuous"><link1 link="r" xyz="1 0 0"/>'
        '<link2 link="b"/><limit lower="-1" upper="1"/></loop_joint>'
    )
    robot = Robot.from_xml_string(text)
    assert (robot.loop_joints[0].lower, robot.loop_joints[0].upper) == (None, None)
    assert any("<limit> of a continuous loop joint is ignored" in w for w in robot.warnings)


def test_sdf_ball_loop_joint_has_no_axis() -> None:
    (loop,) = Robot.from_xml_string(sdf_loop("", "ball")).loop_joints
    assert loop.type is LoopJointType.BALL and loop.axis.tolist() == [0.0, 0.0, 0.0]
    # The joint frame at the child a's origin: (-1, 0, 0) in b.
    assert (loop.link1, loop.link2) == ("b", "a")
    np.testing.assert_allclose(loop.link1_to_joint[:3, 3], [-1.0, 0.0, 0.0])


def test_a_urdf_with_a_world_link_reads_its_gazebo_loop() -> None:
    """SDFormat reserves the name ``world``; a URDF's fixed-base link of that name is read."""
    text = gazebo_loop('<pose relative_to="world">1 0 0 0 0 0</pose>', "ball", "world")
    text = text.replace('<link name="r"/>', '<link name="world"/>').replace(
        'link="r"', 'link="world"'
    )
    (loop,) = Robot.from_xml_string(text).loop_joints
    assert (loop.link1, loop.link2) == ("world", "b")
    np.testing.assert_allclose(loop.link1_to_joint[:3, 3], [1.0, 0.0, 0.0])


# -- refusals -----------------------------------------------------------------------------------


def drake(body: str, kind: str = "revolute") -> str:
    return urdf_loop(f'  <loop_joint name="loop" type="{kind}">\n{body}\n  </loop_joint>')


REFUSALS = [
    # (file name, text, fragment of the line blamed, element, message)
    (
        "unknown_link.urdf",
        drake('<link1 link="r"/><link2 link="nowhere"/>'),
        "<loop_joint",
        "loop_joint 'loop'",
        "link2 'nowhere' is not a link of the TF tree",
    ),
    (
        "unknown_link_gazebo.urdf",
        gazebo_loop("", parent="nowhere"),
        "<parent>nowhere",
        "joint 'loop'",
        "parent 'nowhere' is not a link of the URDF",
    ),
    (
        "same_link.urdf",
        drake('<link1 link="b"/><link2 link="b" xyz="1 0 0"/>'),
        "<loop_joint",
        "loop_joint 'loop'",
        "both sides are link 'b': the joint closes no loop",
    ),
    (
        "same_link_gazebo.urdf",
        gazebo_loop("", parent="b"),
        '<joint name="loop"',
        "joint 'loop'",
        "both sides are link 'b': the joint closes no loop",
    ),
    (
        "zero_axis.urdf",
        drake('<link1 link="r"/><link2 link="b"/><axis xyz="0 0 0"/>'),
        "<axis",
        "loop_joint 'loop'",
        "<axis> xyz is zero",
    ),
    (
        "zero_axis_gazebo.urdf",
        gazebo_loop("<axis><xyz>0 0 0</xyz></axis>"),
        "<xyz>0 0 0",
        "joint 'loop'",
        "<axis><xyz> is zero",
    ),
    (
        "zero_axis.sdf",
        sdf_loop("<axis><xyz>0 0 0</xyz></axis>"),
        "<xyz>0 0 0",
        "joint 'loop'",
        "<axis><xyz> is zero",
    ),
    (
        "unknown_type.urdf",
        drake('<link1 link="r"/><link2 link="b"/>', kind="planar"),
        "<loop_joint",
        "loop_joint 'loop'",
        "unknown loop joint type 'planar'",
    ),
    (
        "no_type.urdf",
        urdf_loop('<loop_joint name="loop"><link1 link="r"/><link2 link="b"/></loop_joint>'),
        "<loop_joint",
        "loop_joint 'loop'",
        "<loop_joint> requires 'type'",
    ),
    (
        "no_link2.urdf",
        drake('<link1 link="r"/>'),
        "<loop_joint",
        "loop_joint 'loop'",
        "requires a <link2> element",
    ),
    (
        "universal.sdf",
        sdf_loop("", "universal"),
        '<joint name="loop"',
        "joint 'loop'",
        "a universal joint closes a kinematic loop",
    ),
    (
        "universal_gazebo.urdf",
        gazebo_loop("", "universal"),
        '<joint name="loop"',
        "joint 'loop'",
        "a universal joint closes a kinematic loop",
    ),
    (
        "duplicate.urdf",
        drake('<link1 link="r"/><link2 link="b"/>').replace('name="loop"', 'name="ab"'),
        "<loop_joint",
        "loop_joint 'ab'",
        "duplicate joint name",
    ),
]


@pytest.mark.parametrize(
    ("name", "text", "fragment", "element", "message"),
    REFUSALS,
    ids=[case[0] for case in REFUSALS],
)
def test_refusals_name_file_line_and_element(
    tmp_path: Path, name: str, text: str, fragment: str, element: str, message: str
) -> None:
    error, path = refusal(tmp_path, name, text)
    assert error.startswith(f"{path}:{line_with(text, fragment)}: {element}: "), error
    assert message in error


def test_limits_are_never_nan() -> None:
    text = urdf_loop(
        '  <loop_joint name="loop" type="revolute"><link1 link="r"/><link2 link="b"/>'
        '<limit lower="nan"/></loop_joint>'
    )
    with pytest.raises(ModelError, match="lower is NaN"):
        Robot.from_xml_string(text)


# -- hostile sizes (review of #45) ------------------------------------------------------------


def many_four_bars(count: int) -> str:
    """A URDF with ``count`` separate four-bars under one ground link."""
    lines = ['<?xml version="1.0"?>', '<robot name="many">', '  <link name="ground"/>']
    for i in range(count):
        lines += [
            f'  <link name="crank{i}"/><link name="coupler{i}"/><link name="rocker{i}"/>',
            f'  <joint name="gc{i}" type="continuous"><parent link="ground"/>'
            f'<child link="crank{i}"/><axis xyz="0 1 0"/></joint>',
            f'  <joint name="cc{i}" type="continuous"><parent link="crank{i}"/>'
            f'<child link="coupler{i}"/><origin xyz="0 0 0.2"/><axis xyz="0 1 0"/></joint>',
            f'  <joint name="gr{i}" type="continuous"><parent link="ground"/>'
            f'<child link="rocker{i}"/><origin xyz="0.5 0 0"/><axis xyz="0 1 0"/></joint>',
            f'  <loop_joint name="l{i}" type="continuous">'
            f'<link1 link="coupler{i}" xyz="0.5 0 0.2" rpy="-1.5707963267948966 0 0"/>'
            f'<link2 link="rocker{i}" xyz="0 0 0.4" rpy="-1.5707963267948966 0 0"/>'
            '<axis xyz="0 0 1"/></loop_joint>',
        ]
    return "\n".join([*lines, "</robot>"])


def test_thousands_of_loops_are_refused_at_the_first_beyond_the_solvers_budget(
    tmp_path: Path,
) -> None:
    """The solver's map is dense, 2 K C^2 entries: 100 four-bars took 100 MB and 9 s a
    ``link_fk``, 400 some 6 GB (more than ``MAX_LOOP_JOINTS`` are refused as they are read).
    Refused at the first loop joint beyond ``MAX_LOOP_WORK``."""
    text = many_four_bars(100)
    error, path = refusal(tmp_path, "many.urdf", text)
    first_beyond = next(
        k for k in range(1, 100) if 2 * (k + 1) * (3 * (k + 1)) ** 2 > MAX_LOOP_WORK
    )
    fragment = f'<loop_joint name="l{first_beyond}"'
    assert error.startswith(f"{path}:{line_with(text, fragment)}: loop_joint 'l{first_beyond}': ")
    assert "at most" in error
    # Below the budget, loaded and solved.
    robot = load_text(tmp_path, "fewer.urdf", many_four_bars(first_beyond))
    assert len(robot.loop_joints) == first_beyond
    assert set(robot.link_fk({"gc0": 0.3})) >= {"rocker0"}


def test_more_loop_joints_than_the_limit_are_refused(tmp_path: Path) -> None:
    """Loops that share their few joints cost little each, but every JointState solves them
    all: at most ``MAX_LOOP_JOINTS``."""
    loops = "\n".join(
        f'  <loop_joint name="x{i}" type="ball"><link1 link="r" xyz="1 0 0"/>'
        '<link2 link="b"/></loop_joint>'
        for i in range(MAX_LOOP_JOINTS + 1)
    )
    text = urdf_loop(loops)
    error, path = refusal(tmp_path, "shared.urdf", text)
    fragment = f'name="x{MAX_LOOP_JOINTS}"'
    assert error.startswith(
        f"{path}:{line_with(text, fragment)}: loop_joint 'x{MAX_LOOP_JOINTS}': "
    )
    assert f"more than {MAX_LOOP_JOINTS} loop joints" in error


@pytest.mark.parametrize("spelling", ["loop_joint", "gazebo"])
def test_loop_joints_beyond_the_limit_are_refused_before_they_are_read(
    monkeypatch: pytest.MonkeyPatch, spelling: str
) -> None:
    """20,000 ``<gazebo><joint>``s were each read through a pose graph (0.75 ms each: 7 s for
    1.5 MB, minutes for the 32 MiB a description may hold) before being counted."""
    from joint_tf_publisher.description.urdf import gazebo_loops
    from joint_tf_publisher.description.urdf import robot as urdf_robot

    read: list[str] = []
    real_build, real_parse = gazebo_loops.build_joint, urdf_robot.parse_loop_joint
    monkeypatch.setattr(gazebo_loops, "build_joint", lambda *a: read.append("g") or real_build(*a))
    monkeypatch.setattr(
        urdf_robot, "parse_loop_joint", lambda *a: read.append("l") or real_parse(*a)
    )
    count = 20 * MAX_LOOP_JOINTS
    if spelling == "gazebo":
        body = (
            "  <gazebo>\n"
            + "\n".join(
                f'  <joint name="g{i}" type="ball"><parent>r</parent><child>b</child></joint>'
                for i in range(count)
            )
            + "\n  </gazebo>"
        )
        label = f"joint 'g{MAX_LOOP_JOINTS}'"
    else:
        body = "\n".join(
            f'  <loop_joint name="g{i}" type="ball"><link1 link="r" xyz="1 0 0"/>'
            '<link2 link="b"/></loop_joint>'
            for i in range(count)
        )
        label = f"loop_joint 'g{MAX_LOOP_JOINTS}'"
    text = urdf_loop(body)
    with pytest.raises(ModelError) as caught:
        Robot.from_xml_string(text)
    line = line_with(text, f'name="g{MAX_LOOP_JOINTS}"')
    assert str(caught.value).startswith(f"<string>:{line}: {label}: more than "), caught.value
    assert len(read) <= MAX_LOOP_JOINTS
