"""URDF parsing: every attribute and its default, every error (with its line), warnings.

Expected poses are computed here independently (scipy's Rotation, explicit formulas); line
numbers are found by searching the test's own XML text, not taken from the parser.
"""

from __future__ import annotations

import logging
import math
import re
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from repo_paths import TEST_DIR
from scipy.spatial.transform import Rotation

from joint_tf_publisher import ModelError, Robot
from joint_tf_publisher.description.loader import expand_xacro

URDF_DIR = TEST_DIR / "urdf"
DEMO_ARM = TEST_DIR.parent / "urdf" / "demo_arm.urdf"


# -- helpers ---------------------------------------------------------------------------------


def robot_text(body: str, links: tuple[str, ...] = ("a", "b"), version: str | None = None) -> str:
    """A URDF with the given links and ``body`` (joints etc.), one element per line."""
    version_attr = f' version="{version}"' if version is not None else ""
    lines = ['<?xml version="1.0"?>', f'<robot name="r"{version_attr}>']
    lines += [f'  <link name="{name}"/>' for name in links]
    lines += [body, "</robot>"]
    return "\n".join(lines)


def joint_text(
    inner: str = "",
    kind: str = "revolute",
    name: str = "j",
    parent: str = "a",
    child: str = "b",
    limit: bool = True,
) -> str:
    """A joint between ``parent`` and ``child``; a valid <limit> unless ``limit`` is False."""
    lines = [
        f'  <joint name="{name}" type="{kind}">',
        f'    <parent link="{parent}"/>',
        f'    <child link="{child}"/>',
    ]
    if limit:
        lines.append('    <limit effort="10" velocity="1" lower="-1" upper="1"/>')
    if inner:
        lines.append(inner)
    lines.append("  </joint>")
    return "\n".join(lines)


def line_with(text: str, needle: str, occurrence: int = 1) -> int:
    """1-based line number of the ``occurrence``-th line containing ``needle``."""
    found = [i for i, line in enumerate(text.splitlines(), start=1) if needle in line]
    return found[occurrence - 1]


def expect_error(text: str, line: int, element: str | None, message: str) -> ModelError:
    """Assert that loading ``text`` fails at ``line`` naming ``element`` with ``message``."""
    where = f"<string>:{line}: " + (f"{re.escape(element)}: " if element else "")
    with pytest.raises(ModelError, match="^" + where + message) as info:
        Robot.from_xml_string(text)
    assert info.value.line == line
    return info.value


def single_joint(
    inner: str = "", kind: str = "revolute", limit: bool = True, version: str | None = None
) -> Robot:
    return Robot.from_xml_string(robot_text(joint_text(inner, kind, limit=limit), version=version))


def rotation_rpy(roll: float, pitch: float, yaw: float) -> np.ndarray:
    """URDF rpy (fixed axes x, then y, then z) via scipy's extrinsic 'xyz' Euler angles."""
    return np.array(Rotation.from_euler("xyz", [roll, pitch, yaw]).as_matrix(), dtype=float)


# -- structure and defaults ------------------------------------------------------------------


def test_links_joints_root_in_file_order() -> None:
    text = robot_text(
        joint_text(name="j2", parent="b", child="c") + "\n" + joint_text(name="j1"),
        links=("c", "a", "b"),
    )
    robot = Robot.from_xml_string(text)
    assert robot.name == "r"
    assert list(robot.links) == ["c", "a", "b"]
    assert list(robot.joints) == ["j2", "j1"]
    assert robot.root == "a"
    assert robot.links["a"].line == line_with(text, 'link name="a"')
    assert robot.joints["j1"].line == line_with(text, 'joint name="j1"')
    assert robot.source == "<string>"
    assert robot.warnings == []


def test_single_link_robot_has_that_root_and_no_joints() -> None:
    robot = Robot.from_xml_string('<robot name="solo"><link name="only"/></robot>')
    assert robot.root == "only"
    assert robot.joints == {}


def test_joint_defaults_without_optional_elements() -> None:
    joint = single_joint(kind="fixed", limit=False).joints["j"]
    assert joint.joint_type == "fixed"
    assert (joint.parent, joint.child) == ("a", "b")
    np.testing.assert_array_equal(joint.origin, np.eye(4))
    np.testing.assert_array_equal(joint.axis, [1.0, 0.0, 0.0])
    assert joint.limit is None
    assert joint.dynamics is None
    assert joint.calibration is None
    assert joint.mimic is None
    assert joint.safety_controller is None


def test_origin_attributes_default_to_zero() -> None:
    joint = single_joint('    <origin xyz="1 2 3"/>').joints["j"]
    np.testing.assert_array_equal(joint.origin[:3, :3], np.eye(3))
    np.testing.assert_array_equal(joint.origin[:3, 3], [1.0, 2.0, 3.0])
    joint = single_joint('    <origin rpy="0 0 1.5"/>').joints["j"]
    np.testing.assert_array_equal(joint.origin[:3, 3], [0.0, 0.0, 0.0])
    np.testing.assert_allclose(joint.origin[:3, :3], rotation_rpy(0, 0, 1.5), atol=1e-12)


def test_origin_rpy_is_fixed_axis_roll_pitch_yaw() -> None:
    joint = single_joint('    <origin xyz="0.1 -0.2 0.3" rpy="0.3 -0.7 2.1"/>').joints["j"]
    expected = np.eye(4)
    expected[:3, :3] = rotation_rpy(0.3, -0.7, 2.1)
    expected[:3, 3] = [0.1, -0.2, 0.3]
    np.testing.assert_allclose(joint.origin, expected, atol=1e-12)
    # Explicit formula as a second, scipy-free check: R = Rz(yaw) Ry(pitch) Rx(roll).
    r, p, y = 0.3, -0.7, 2.1
    rx = np.array([[1, 0, 0], [0, math.cos(r), -math.sin(r)], [0, math.sin(r), math.cos(r)]])
    ry = np.array([[math.cos(p), 0, math.sin(p)], [0, 1, 0], [-math.sin(p), 0, math.cos(p)]])
    rz = np.array([[math.cos(y), -math.sin(y), 0], [math.sin(y), math.cos(y), 0], [0, 0, 1]])
    np.testing.assert_allclose(joint.origin[:3, :3], rz @ ry @ rx, atol=1e-12)


def test_axis_is_read_in_joint_frame() -> None:
    joint = single_joint('    <axis xyz="0 0 -1"/>').joints["j"]
    np.testing.assert_array_equal(joint.axis, [0.0, 0.0, -1.0])


def test_limit_lower_upper_default_to_zero_when_one_is_written() -> None:
    text = robot_text(joint_text('    <limit effort="3" velocity="4" upper="0.5"/>', limit=False))
    limit = Robot.from_xml_string(text).joints["j"].limit
    assert limit is not None
    assert (limit.effort, limit.velocity, limit.lower, limit.upper) == (3.0, 4.0, 0.0, 0.5)
    assert limit.has_position_range
    assert (limit.acceleration, limit.deceleration, limit.jerk) == (None, None, None)
    assert Robot.from_xml_string(text).joints["j"].hard_limits() == (0.0, 0.5)


def test_dynamics_calibration_mimic_safety_defaults() -> None:
    inner = "\n".join(
        [
            "    <dynamics/>",
            "    <calibration/>",
            '    <safety_controller k_velocity="7"/>',
        ]
    )
    text = robot_text(
        joint_text(inner) + "\n" + joint_text('    <mimic joint="j"/>', name="m", child="c"),
        links=("a", "b", "c"),
    )
    robot = Robot.from_xml_string(text)
    joint = robot.joints["j"]
    assert joint.dynamics is not None
    assert (joint.dynamics.damping, joint.dynamics.friction) == (0.0, 0.0)
    assert joint.calibration is not None
    assert (joint.calibration.rising, joint.calibration.falling) == (None, None)
    sc = joint.safety_controller
    assert sc is not None
    assert (sc.k_velocity, sc.k_position, sc.soft_lower_limit, sc.soft_upper_limit) == (
        7.0,
        0.0,
        0.0,
        0.0,
    )
    assert not sc.has_soft_range
    # Soft clamping falls back to the hard range rather than freezing the joint at [0, 0].
    assert joint.soft_limits() == (-1.0, 1.0)
    mimic = robot.joints["m"].mimic
    assert mimic is not None
    assert (mimic.joint, mimic.multiplier, mimic.offset) == ("j", 1.0, 0.0)
    assert mimic.line == line_with(text, "<mimic")


def test_every_element_and_attribute_of_all_joint_types_urdf() -> None:
    robot = Robot.load(URDF_DIR / "all_joint_types.urdf")
    assert [j.joint_type for j in robot.joints.values()] == [
        "floating",
        "planar",
        "prismatic",
        "revolute",
        "continuous",
        "revolute",
        "fixed",
    ]
    slide = robot.joints["slide_joint"]
    assert slide.calibration is not None
    assert (slide.calibration.rising, slide.calibration.falling) == (0.01, 0.02)
    assert slide.dynamics is not None
    assert (slide.dynamics.damping, slide.dynamics.friction) == (2.5, 0.7)
    assert slide.limit is not None
    assert (slide.limit.lower, slide.limit.upper, slide.limit.effort, slide.limit.velocity) == (
        -0.2,
        0.3,
        100.0,
        0.5,
    )
    sc = slide.safety_controller
    assert sc is not None
    assert (sc.k_velocity, sc.k_position, sc.soft_lower_limit, sc.soft_upper_limit) == (
        10.0,
        15.0,
        -0.15,
        0.25,
    )
    assert slide.soft_limits() == (-0.15, 0.25)
    hinge = robot.joints["hinge_joint"]
    np.testing.assert_allclose(hinge.axis, [0.6, 0.0, 0.8])
    assert hinge.calibration is not None
    assert (hinge.calibration.rising, hinge.calibration.falling) == (None, 0.4)
    follower = robot.joints["follower_joint"]
    assert follower.mimic is not None
    assert (follower.mimic.joint, follower.mimic.multiplier, follower.mimic.offset) == (
        "hinge_joint",
        2.0,
        0.5,
    )
    wheel = robot.joints["wheel_joint"]
    assert wheel.limit is None and wheel.hard_limits() is None
    np.testing.assert_array_equal(wheel.axis, [0.0, 0.0, -1.0])
    plane = robot.joints["plane_joint"]
    expected = np.eye(4)
    expected[:3, :3] = rotation_rpy(0.1, 0.2, 0.3)
    expected[:3, 3] = [0.1, 0.2, 0.3]
    np.testing.assert_allclose(plane.origin, expected, atol=1e-12)
    float_joint = robot.joints["float_joint"]
    np.testing.assert_allclose(float_joint.origin[:3, :3], rotation_rpy(0, 0, 3.1416), atol=1e-12)
    # The safety controller with k_velocity only is flagged (line of that element).
    text = (URDF_DIR / "all_joint_types.urdf").read_text()
    line = line_with(text, '<safety_controller k_velocity="10"/>')
    assert robot.warnings == [
        f"{URDF_DIR / 'all_joint_types.urdf'}:{line}: joint 'hinge_joint': <safety_controller> "
        "gives neither soft_lower_limit nor soft_upper_limit; soft clamping uses the hard limits"
    ]


def test_continuous_limit_range_is_ignored() -> None:
    text = robot_text(
        joint_text(
            '    <limit effort="1" velocity="2" lower="-1" upper="1"/>',
            kind="continuous",
            limit=False,
        )
    )
    joint = Robot.from_xml_string(text).joints["j"]
    assert joint.limit is not None and joint.limit.effort == 1.0
    assert joint.hard_limits() is None
    assert joint.is_valid(100.0)


def test_infinite_limits_are_allowed_and_mean_unlimited() -> None:
    text = robot_text(
        joint_text(
            '    <limit effort="inf" velocity="1" lower="-inf" upper="inf"/>',
            kind="prismatic",
            limit=False,
        )
    )
    limit = Robot.from_xml_string(text).joints["j"].limit
    assert limit is not None
    assert (limit.effort, limit.lower, limit.upper) == (math.inf, -math.inf, math.inf)


def test_numbers_accept_exponents_signs_and_padding() -> None:
    joint = single_joint('    <origin xyz=" +1e-3  -.5 2. " rpy="0 0 0"/>').joints["j"]
    np.testing.assert_array_equal(joint.origin[:3, 3], [1e-3, -0.5, 2.0])


# -- versions --------------------------------------------------------------------------------


def test_quat_xyzw_used_from_version_1_1() -> None:
    quat = [0.1, -0.3, 0.2, 0.9]
    unit = np.array(quat) / np.linalg.norm(quat)
    origin = f'    <origin xyz="1 0 0" quat_xyzw="{" ".join(f"{v:.17g}" for v in unit)}"/>'
    joint = single_joint(origin, version="1.1").joints["j"]
    np.testing.assert_allclose(
        joint.origin[:3, :3], Rotation.from_quat(unit).as_matrix(), atol=1e-12
    )
    np.testing.assert_array_equal(joint.origin[:3, 3], [1.0, 0.0, 0.0])


def test_quat_xyzw_ignored_with_warning_under_version_1_0(caplog: pytest.LogCaptureFixture) -> None:
    text = robot_text(joint_text('    <origin rpy="0 0 0.5" quat_xyzw="0 0 1 0"/>'))
    with caplog.at_level(logging.WARNING, logger="joint_tf_publisher"):
        robot = Robot.from_xml_string(text)
    np.testing.assert_allclose(
        robot.joints["j"].origin[:3, :3], rotation_rpy(0, 0, 0.5), atol=1e-12
    )
    line = line_with(text, "<origin")
    expected = (
        f"<string>:{line}: joint 'j': <origin> quat_xyzw needs URDF version 1.1 or "
        "later; ignored under 1.0"
    )
    assert robot.warnings == [expected]
    assert [r.getMessage() for r in caplog.records if r.name == "joint_tf_publisher"] == [expected]


def test_non_unit_quaternion_is_normalised_with_warning() -> None:
    robot = single_joint('    <origin quat_xyzw="0 0 2 0"/>', version="1.1")
    np.testing.assert_allclose(
        robot.joints["j"].origin[:3, :3], Rotation.from_quat([0, 0, 1, 0]).as_matrix(), atol=1e-12
    )
    assert "quat_xyzw has norm 2; normalised" in robot.warnings[0]


def test_version_1_2_limit_extras_and_infinite_defaults() -> None:
    limit_xml = '    <limit lower="-1" upper="1" acceleration="5" deceleration="6" jerk="7"/>'
    limit = single_joint(limit_xml, limit=False, version="1.2").joints["j"].limit
    assert limit is not None
    assert (limit.effort, limit.velocity) == (math.inf, math.inf)
    assert (limit.acceleration, limit.deceleration, limit.jerk) == (5.0, 6.0, 7.0)


def test_version_1_0_ignores_limit_extras_with_warning() -> None:
    limit_xml = '    <limit effort="1" velocity="1" lower="-1" upper="1" jerk="7"/>'
    robot = single_joint(limit_xml, limit=False)
    limit = robot.joints["j"].limit
    assert limit is not None and limit.jerk is None
    assert robot.warnings[0].endswith("<limit> jerk needs URDF version 1.2; ignored")


def test_version_defaults_to_1_0_and_accepts_supported_versions() -> None:
    for version in ("1.0", "1.1", "1.2"):
        assert Robot.from_xml_string(robot_text(joint_text(), version=version)).root == "a"


@pytest.mark.parametrize(
    ("version", "message"),
    [
        ("2.0", r"<robot>: unsupported URDF version '2.0' \(supported: 1.0, 1.1, 1.2\)"),
        ("1", r"<robot>: version '1' is not of the form 'x.y' \(supported: 1.0, 1.1, 1.2\)"),
        ("one", r"<robot>: version 'one' is not of the form 'x.y'"),
    ],
)
def test_bad_versions_are_refused(version: str, message: str) -> None:
    text = robot_text(joint_text(), version=version)
    with pytest.raises(ModelError, match=f"^<string>:2: {message}"):
        Robot.from_xml_string(text)


# -- warnings (non-fatal) --------------------------------------------------------------------


def warning_for(text: str, needle: str, message: str) -> Robot:
    """Load ``text``; assert exactly one warning, at the line holding ``needle``."""
    robot = Robot.from_xml_string(text)
    line = line_with(text, needle)
    assert len(robot.warnings) == 1, robot.warnings
    assert robot.warnings[0].startswith(f"<string>:{line}: ")
    assert message in robot.warnings[0]
    return robot


def test_non_unit_axis_is_normalised_with_warning() -> None:
    text = robot_text(joint_text('    <axis xyz="0 3 4"/>'))
    robot = warning_for(
        text, "<axis", "joint 'j': <axis> xyz='0 3 4' is not a unit vector (norm 5); normalised"
    )
    np.testing.assert_allclose(robot.joints["j"].axis, [0.0, 0.6, 0.8])


def test_nearly_unit_axis_is_normalised_silently() -> None:
    robot = single_joint('    <axis xyz="0 0 1.0000000001"/>')
    assert robot.warnings == []
    np.testing.assert_allclose(np.linalg.norm(robot.joints["j"].axis), 1.0, rtol=0, atol=1e-15)


def test_limit_without_lower_and_upper_is_not_clamped_with_warning() -> None:
    text = robot_text(joint_text('    <limit effort="1" velocity="1"/>', limit=False))
    robot = warning_for(
        text, "<limit", "joint 'j': <limit> gives neither lower nor upper; the joint is not clamped"
    )
    joint = robot.joints["j"]
    assert joint.limit is not None and not joint.limit.has_position_range
    assert joint.hard_limits() is None
    assert joint.is_valid(5.0)


def test_lower_above_upper_is_not_clamped_with_warning() -> None:
    text = robot_text(
        joint_text('    <limit effort="1" velocity="1" lower="1" upper="-1"/>', limit=False)
    )
    robot = warning_for(
        text, "<limit", "<limit> lower 1 is above upper -1; the joint is not clamped"
    )
    assert robot.joints["j"].hard_limits() is None


@pytest.mark.parametrize(
    ("soft", "message"),
    [
        (
            'soft_lower_limit="-2" soft_upper_limit="0.5"',
            "<safety_controller> soft limits [-2, 0.5] lie outside the hard limits [-1, 1]",
        ),
        (
            'soft_lower_limit="-0.5" soft_upper_limit="3"',
            "<safety_controller> soft limits [-0.5, 3] lie outside the hard limits [-1, 1]",
        ),
        (
            'soft_lower_limit="0.5" soft_upper_limit="-0.5"',
            "<safety_controller> soft_lower_limit 0.5 is above soft_upper_limit -0.5",
        ),
    ],
)
def test_odd_soft_limits_warn(soft: str, message: str) -> None:
    text = robot_text(joint_text(f'    <safety_controller k_velocity="1" {soft}/>'))
    warning_for(text, "<safety_controller", message)


def test_soft_limits_inside_hard_limits_do_not_warn() -> None:
    robot = single_joint(
        '    <safety_controller k_velocity="1" k_position="3" '
        'soft_lower_limit="-0.5" soft_upper_limit="0.75"/>'
    )
    assert robot.warnings == []
    assert robot.joints["j"].soft_limits() == (-0.5, 0.75)


def test_repeated_element_uses_first_with_warning() -> None:
    inner = '    <origin xyz="1 0 0"/>\n    <origin xyz="2 0 0"/>'
    text = robot_text(joint_text(inner))
    robot = warning_for(text, 'xyz="2 0 0"', "several <origin> elements; only the first (line")
    assert robot.joints["j"].origin[0, 3] == 1.0


def test_mimic_on_fixed_joint_is_ignored_with_a_warning() -> None:
    text = robot_text(
        joint_text()
        + "\n"
        + joint_text('    <mimic joint="j"/>', kind="fixed", name="f", child="c", limit=False),
        links=("a", "b", "c"),
    )
    robot = warning_for(
        text,
        "<mimic",
        "joint 'f': <mimic>: joint 'f' is fixed; only single-value joints can mimic or be "
        "mimicked; the mimic is ignored",
    )
    assert robot.joints["f"].mimic is None


def test_mimic_of_a_fixed_joint_is_ignored_and_the_joint_moves_on_its_own() -> None:
    text = robot_text(
        joint_text(kind="fixed", limit=False)
        + "\n"
        + joint_text('    <mimic joint="j" offset="0.5"/>', name="m", parent="b", child="c"),
        links=("a", "b", "c"),
    )
    robot = warning_for(
        text,
        "<mimic",
        "joint 'm': <mimic>: joint 'j' is fixed; only single-value joints can mimic or be "
        "mimicked; the mimic is ignored and the joint moves on its own",
    )
    pose = robot.link_fk({"m": 0.25})["c"]
    np.testing.assert_allclose(pose[:3, :3], Rotation.from_rotvec([0.25, 0, 0]).as_matrix())


def test_unexpanded_xacro_warns() -> None:
    text = robot_text(
        '  <xacro:property xmlns:xacro="http://www.ros.org/wiki/xacro" name="x" value="1"/>\n'
        + joint_text()
    )
    warning_for(text, "xacro:property", "unexpanded xacro element <xacro:property> ignored")


def test_warnings_of_realistic_robots() -> None:
    for path in (
        DEMO_ARM,
        URDF_DIR / "arm_mimic_gripper.urdf",
        URDF_DIR / "drake_style_arm.urdf",
        URDF_DIR / "mobile_base_planar.urdf",
        URDF_DIR / "humanoid.urdf",
    ):
        assert Robot.load(path).warnings == [], path


# -- errors ----------------------------------------------------------------------------------


def test_malformed_xml_names_its_line() -> None:
    text = '<robot name="r">\n  <link name="a"/>\n  <link name="b">\n</robot>\n'
    expect_error(text, 4, None, "malformed XML: ")


def test_wrong_root_element() -> None:
    expect_error(
        '<?xml version="1.0"?>\n<world name="w"/>',
        2,
        None,
        r"root element is <world>, expected <robot> \(URDF\) or <sdf>",
    )


def test_empty_description() -> None:
    with pytest.raises(ModelError, match=r"^<string>: description is empty"):
        Robot.from_xml_string("  \n")


def test_robot_without_name() -> None:
    expect_error('\n<robot>\n  <link name="a"/>\n</robot>', 2, None, "<robot> requires 'name'")


def test_robot_without_links() -> None:
    expect_error('\n<robot name="r">\n</robot>', 2, None, "robot has no links")


ERROR_CASES = [
    # (id, body, needle for the line, element, message regex)
    ("link without name", "  <link/>\n" + joint_text(), "<link/>", None, "<link> requires 'name'"),
    (
        "link empty name",
        '  <link name=""/>\n' + joint_text(),
        'name=""',
        None,
        "<link> has an empty 'name'",
    ),
    (
        "joint without name",
        '  <joint type="fixed">\n  </joint>',
        "<joint",
        None,
        "<joint> requires 'name'",
    ),
    (
        "joint without type",
        '  <joint name="j">\n  </joint>',
        "<joint",
        "joint 'j'",
        "<joint> requires 'type'",
    ),
    (
        "unknown type",
        joint_text(kind="hinge"),
        "<joint",
        "joint 'j'",
        r"unknown joint type 'hinge' \(expected one of revolute, continuous, prismatic, fixed, "
        r"floating, planar\)",
    ),
    ("sdf-only type", joint_text(kind="ball"), "<joint", "joint 'j'", "unknown joint type 'ball'"),
    (
        "no parent element",
        '  <joint name="j" type="fixed">\n    <child link="b"/>\n  </joint>',
        "<joint",
        "joint 'j'",
        "requires a <parent> element",
    ),
    (
        "no child element",
        '  <joint name="j" type="fixed">\n    <parent link="a"/>\n  </joint>',
        "<joint",
        "joint 'j'",
        "requires a <child> element",
    ),
    (
        "parent without link",
        '  <joint name="j" type="fixed">\n    <parent/>\n    <child link="b"/>\n  </joint>',
        "<parent/>",
        "joint 'j'",
        "<parent> requires 'link'",
    ),
    (
        "revolute without limit",
        joint_text(limit=False),
        "<joint",
        "joint 'j'",
        "a revolute joint requires a <limit> element",
    ),
    (
        "prismatic without limit",
        joint_text(kind="prismatic", limit=False),
        "<joint",
        "joint 'j'",
        "a prismatic joint requires a <limit> element",
    ),
    (
        "limit without effort",
        joint_text('    <limit velocity="1" lower="0" upper="1"/>', limit=False),
        "<limit",
        "joint 'j'",
        "<limit> requires 'effort'",
    ),
    (
        "limit without velocity",
        joint_text('    <limit effort="1" lower="0" upper="1"/>', limit=False),
        "<limit",
        "joint 'j'",
        "<limit> requires 'velocity'",
    ),
    (
        "non-numeric limit",
        joint_text('    <limit effort="lots" velocity="1"/>', limit=False),
        "<limit",
        "joint 'j'",
        "<limit> effort='lots' is not a number",
    ),
    (
        "non-ASCII digits",
        joint_text('    <dynamics damping="\u0661"/>'),
        "<dynamics",
        "joint 'j'",
        "<dynamics> damping='\u0661' is not a number",
    ),
    (
        "underscore number",
        joint_text('    <dynamics damping="1_000"/>'),
        "<dynamics",
        "joint 'j'",
        "<dynamics> damping='1_000' is not a number",
    ),
    (
        "unexpanded xacro value",
        joint_text('    <origin xyz="${x} 0 0"/>'),
        "<origin",
        "joint 'j'",
        r"<origin> xyz='\$\{x\} 0 0' is not a number \(unexpanded xacro\?\)",
    ),
    (
        "NaN in limit",
        joint_text('    <limit effort="1" velocity="1" lower="nan" upper="1"/>', limit=False),
        "<limit",
        "joint 'j'",
        "<limit> lower is NaN",
    ),
    (
        "NaN in origin",
        joint_text('    <origin xyz="0 NaN 0"/>'),
        "<origin",
        "joint 'j'",
        "<origin> xyz is NaN",
    ),
    (
        "inf in origin",
        joint_text('    <origin rpy="0 0 inf"/>'),
        "<origin",
        "joint 'j'",
        "<origin> rpy='0 0 inf' must be finite",
    ),
    (
        "inf in axis",
        joint_text('    <axis xyz="0 0 -inf"/>'),
        "<axis",
        "joint 'j'",
        "<axis> xyz='0 0 -inf' must be finite",
    ),
    (
        "short xyz",
        joint_text('    <origin xyz="1 2"/>'),
        "<origin",
        "joint 'j'",
        "<origin> xyz='1 2' must have 3 numbers, got 2",
    ),
    (
        "long rpy",
        joint_text('    <origin rpy="1 2 3 4"/>'),
        "<origin",
        "joint 'j'",
        "<origin> rpy='1 2 3 4' must have 3 numbers, got 4",
    ),
    (
        "short axis",
        joint_text('    <axis xyz="1"/>'),
        "<axis",
        "joint 'j'",
        "<axis> xyz='1' must have 3 numbers, got 1",
    ),
    ("axis without xyz", joint_text("    <axis/>"), "<axis", "joint 'j'", "<axis> requires 'xyz'"),
    (
        "zero axis revolute",
        joint_text('    <axis xyz="0 0 0"/>'),
        "<axis",
        "joint 'j'",
        "<axis> xyz is zero; a revolute joint needs a direction",
    ),
    (
        "zero axis prismatic",
        joint_text('    <axis xyz="0 0 0"/>', kind="prismatic"),
        "<axis",
        "joint 'j'",
        "<axis> xyz is zero; a prismatic joint needs a direction",
    ),
    (
        "zero axis continuous",
        joint_text('    <axis xyz="0 0 0"/>', kind="continuous", limit=False),
        "<axis",
        "joint 'j'",
        "<axis> xyz is zero; a continuous joint needs a direction",
    ),
    (
        "zero axis planar",
        joint_text('    <axis xyz="0 0 0"/>', kind="planar", limit=False),
        "<axis",
        "joint 'j'",
        "<axis> xyz is zero; a planar joint needs a direction",
    ),
    (
        "dynamics non-numeric",
        joint_text('    <dynamics friction="x"/>'),
        "<dynamics",
        "joint 'j'",
        "<dynamics> friction='x' is not a number",
    ),
    (
        "calibration non-numeric",
        joint_text('    <calibration rising="?"/>'),
        "<calibration",
        "joint 'j'",
        r"<calibration> rising='\?' is not a number",
    ),
    (
        "safety without k_velocity",
        joint_text('    <safety_controller k_position="1"/>'),
        "<safety_controller",
        "joint 'j'",
        "<safety_controller> requires 'k_velocity'",
    ),
    (
        "mimic without joint",
        joint_text("    <mimic/>"),
        "<mimic",
        "joint 'j'",
        "<mimic> requires 'joint'",
    ),
    (
        "mimic multiplier non-numeric",
        joint_text('    <mimic joint="k" multiplier="two"/>'),
        "<mimic",
        "joint 'j'",
        "<mimic> multiplier='two' is not a number",
    ),
    (
        "mimic of itself",
        joint_text('    <mimic joint="j"/>'),
        "<mimic",
        "joint 'j'",
        "<mimic> names the joint itself",
    ),
    (
        "missing parent link",
        joint_text(parent="ghost"),
        "<joint",
        "joint 'j'",
        "parent link 'ghost' does not exist",
    ),
    (
        "missing child link",
        joint_text(child="ghost"),
        "<joint",
        "joint 'j'",
        "child link 'ghost' does not exist",
    ),
    (
        "parent is child",
        joint_text(parent="b") + "\n" + joint_text(name="k"),
        'name="j"',
        "joint 'j'",
        "parent and child are the same link 'b'",
    ),
    (
        "both rpy and quat",
        '  <joint name="j" type="fixed">\n    <parent link="a"/>\n'
        '    <child link="b"/>\n    <origin rpy="0 0 0" quat_xyzw="0 0 0 1"/>\n  </joint>',
        "<origin",
        "joint 'j'",
        "<origin> has both rpy and quat_xyzw; give one",
    ),
]


@pytest.mark.parametrize(
    ("case", "body", "needle", "element", "message"), ERROR_CASES, ids=[c[0] for c in ERROR_CASES]
)
def test_invalid_joint_is_refused_with_line(
    case: str, body: str, needle: str, element: str | None, message: str
) -> None:
    version = "1.1" if case == "both rpy and quat" else None
    text = robot_text(body, version=version)
    line = line_with(text, needle)
    where = f"<string>:{line}: " + (f"{re.escape(element)}: " if element else "")
    with pytest.raises(ModelError, match="^" + where + message) as info:
        Robot.from_xml_string(text)
    assert info.value.line == line


def test_zero_axis_is_allowed_on_fixed_and_floating() -> None:
    for kind in ("fixed", "floating"):
        joint = single_joint('    <axis xyz="0 0 0"/>', kind=kind, limit=False).joints["j"]
        np.testing.assert_array_equal(joint.axis, [1.0, 0.0, 0.0])


def test_zero_quaternion_is_refused() -> None:
    text = robot_text(joint_text('    <origin quat_xyzw="0 0 0 0"/>'), version="1.1")
    expect_error(
        text, line_with(text, "<origin"), "joint 'j'", "<origin> quat_xyzw is zero, not a rotation"
    )


@pytest.mark.parametrize(
    ("limit", "message"),
    [
        ('effort="1" velocity="1" upper="1"', "<limit> requires 'lower'"),
        ('effort="1" velocity="1" lower="1"', "<limit> requires 'upper'"),
        ('effort="1" velocity="1" lower="1" upper="-1"', "<limit> upper -1 is below lower 1"),
        (
            'effort="-1" velocity="1" lower="0" upper="1"',
            "<limit> effort must not be negative, got -1",
        ),
        (
            'effort="1" velocity="-2" lower="0" upper="1"',
            "<limit> velocity must not be negative, got -2",
        ),
    ],
)
def test_version_1_2_limit_rules(limit: str, message: str) -> None:
    text = robot_text(joint_text(f"    <limit {limit}/>", limit=False), version="1.2")
    expect_error(text, line_with(text, "<limit"), "joint 'j'", message)


def test_duplicate_link_name() -> None:
    text = robot_text(joint_text(), links=("a", "b", "a"))
    error = expect_error(
        text,
        line_with(text, 'link name="a"', 2),
        "link 'a'",
        r"duplicate link name \(first defined at line 3\)",
    )
    assert error.element == "link 'a'"


def test_duplicate_joint_name() -> None:
    text = robot_text(
        joint_text() + "\n" + joint_text(parent="b", child="c"), links=("a", "b", "c")
    )
    first = line_with(text, 'joint name="j"')
    expect_error(
        text,
        line_with(text, 'joint name="j"', 2),
        "joint 'j'",
        rf"duplicate joint name \(first defined at line {first}\)",
    )


def test_link_with_two_parents() -> None:
    text = robot_text(
        joint_text(name="j1") + "\n" + joint_text(name="j2", parent="c"), links=("a", "b", "c")
    )
    first = line_with(text, 'joint name="j1"')
    expect_error(
        text,
        line_with(text, 'joint name="j2"'),
        "joint 'j2'",
        rf"link 'b' already has parent joint 'j1' \(line {first}\); a link can have "
        "only one parent",
    )


def test_several_root_links() -> None:
    text = robot_text(joint_text(), links=("a", "b", "c"))
    expect_error(
        text,
        line_with(text, 'link name="c"'),
        "link 'c'",
        r"several root links: 'a' \(line 3\), 'c' \(line 5\); every link but one "
        "needs a parent joint",
    )


def test_cycle_of_joints() -> None:
    # a -> b -> c -> b would give b two parents; a true cycle needs every link in it to have
    # exactly one parent: root r, and the loop b -> c -> d -> b hanging off nothing.
    body = "\n".join(
        [
            joint_text(name="bc", parent="b", child="c"),
            joint_text(name="cd", parent="c", child="d"),
            joint_text(name="db", parent="d", child="b"),
            joint_text(name="ra", parent="r", child="a"),
        ]
    )
    text = robot_text(body, links=("r", "a", "b", "c", "d"))
    expect_error(
        text,
        line_with(text, 'joint name="bc"'),
        "joint 'bc'",
        r"joints form a cycle through links .* \(joints 'bc', 'cd', 'db'\)",
    )


def test_every_link_in_a_cycle_gives_cycle_error() -> None:
    body = joint_text(name="ab") + "\n" + joint_text(name="ba", parent="b", child="a")
    text = robot_text(body)
    expect_error(
        text, line_with(text, 'joint name="ab"'), "joint 'ab'", "joints form a cycle through links"
    )


def test_mimic_cycle() -> None:
    body = "\n".join(
        [
            joint_text('    <mimic joint="j3"/>', name="j1", child="b"),
            joint_text('    <mimic joint="j1"/>', name="j2", parent="b", child="c"),
            joint_text('    <mimic joint="j2"/>', name="j3", parent="c", child="d"),
        ]
    )
    text = robot_text(body, links=("a", "b", "c", "d"))
    expect_error(
        text,
        line_with(text, '<mimic joint="j3"'),
        "joint 'j1'",
        "mimic cycle: j1 -> j3 -> j2 -> j1",
    )


@pytest.mark.parametrize("role", ["leader", "follower"])
def test_mimic_coupling_a_multi_value_joint_is_ignored_with_a_warning(role: str) -> None:
    planar = joint_text(
        '    <mimic joint="j"/>' if role == "follower" else "",
        kind="planar",
        name="p",
        limit=False,
    )
    follower = joint_text(
        '    <mimic joint="p"/>' if role == "leader" else "", name="j", parent="b", child="c"
    )
    text = robot_text(planar + "\n" + follower, links=("a", "b", "c"))
    robot = warning_for(
        text,
        "<mimic",
        "<mimic>: joint 'p' is planar; only single-value joints can mimic or be mimicked; "
        "the mimic is ignored and the joint moves on its own",
    )
    assert all(joint.mimic is None for joint in robot.joints.values())


def test_error_from_file_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.urdf"
    text = robot_text(joint_text(limit=False))
    path.write_text(text)
    line = line_with(text, "<joint")
    with pytest.raises(ModelError, match=rf"^{re.escape(str(path))}:{line}: joint 'j': a revolute"):
        Robot.load(path)


def test_missing_file() -> None:
    with pytest.raises(ModelError, match=r"nothing\.urdf: cannot read file"):
        Robot.load(TEST_DIR / "nothing.urdf")


def test_model_error_is_a_value_error_with_parts() -> None:
    text = robot_text(joint_text(limit=False))
    with pytest.raises(ValueError) as info:
        Robot.from_xml_string(text)
    error = info.value
    assert isinstance(error, ModelError)
    assert (error.source, error.line, error.element) == (
        "<string>",
        line_with(text, "<joint"),
        "joint 'j'",
    )
    assert error.reason == "a revolute joint requires a <limit> element"


# -- realistic robots ------------------------------------------------------------------------


def test_demo_arm() -> None:
    robot = Robot.load(DEMO_ARM)
    assert robot.root == "base_link"
    moving = [j.name for j in robot.joints.values() if j.joint_type == "revolute"]
    assert moving == [
        "shoulder_pan_joint",
        "shoulder_lift_joint",
        "elbow_joint",
        "wrist_1_joint",
        "wrist_2_joint",
        "wrist_3_joint",
    ]
    assert all(robot.joints[name].hard_limits() is not None for name in moving)
    assert robot.joints["tool_flange_joint"].joint_type == "fixed"
    right = robot.joints["right_finger_joint"]
    assert right.joint_type == "prismatic"
    assert right.mimic is not None and right.mimic.joint == "left_finger_joint"
    assert sum(j.safety_controller is not None for j in robot.joints.values()) >= 3


def test_arm_with_mimic_gripper_chain() -> None:
    robot = Robot.load(URDF_DIR / "arm_mimic_gripper.urdf")
    assert robot.root == "world"
    mimics = {j.name: j.mimic.joint for j in robot.joints.values() if j.mimic is not None}
    assert mimics == {
        "right_knuckle_joint": "finger_joint",
        "left_inner_finger_joint": "finger_joint",
        "right_inner_finger_joint": "right_knuckle_joint",
    }
    assert robot.joints["right_knuckle_joint"].mimic.multiplier == -1.0  # type: ignore[union-attr]
    assert robot.joints["joint_3"].hard_limits() is None  # continuous


def test_mobile_base_with_planar_joint() -> None:
    robot = Robot.load(URDF_DIR / "mobile_base_planar.urdf")
    assert robot.root == "odom"
    planar = robot.joints["base_planar_joint"]
    assert planar.joint_type == "planar"
    np.testing.assert_array_equal(planar.axis, [0.0, 0.0, 1.0])
    wheel = robot.joints["left_wheel_joint"]
    assert wheel.joint_type == "continuous" and wheel.limit is not None
    assert wheel.limit.effort == 20.0


def test_humanoid_loads_quickly() -> None:
    path = URDF_DIR / "humanoid.urdf"
    text = path.read_bytes()
    start = time.perf_counter()
    robot = Robot.from_xml_string(text, source=str(path))
    elapsed = time.perf_counter() - start
    assert len(robot.joints) >= 60
    assert len(robot.links) == len(robot.joints) + 1
    assert robot.root == "world"
    assert robot.joints["floating_base"].joint_type == "floating"
    assert sum(j.mimic is not None for j in robot.joints.values()) == 10
    assert elapsed < 1.0  # about 5 ms on the CI machine; generous for slow runners


def test_humanoid_file_is_up_to_date() -> None:
    import importlib.util

    spec = importlib.util.spec_from_file_location(
        "make_humanoid_urdf", TEST_DIR / "make_humanoid_urdf.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    assert module.humanoid_urdf() == (URDF_DIR / "humanoid.urdf").read_text()


# -- xacro and the loader ----------------------------------------------------------------------


def test_xacro_file_is_expanded() -> None:
    pytest.importorskip("xacro")
    robot = Robot.load(URDF_DIR / "small_arm.urdf.xacro")
    assert robot.name == "small_arm_xacro"
    assert list(robot.joints) == ["joint_1", "joint_2", "joint_3"]
    assert robot.joints["joint_2"].hard_limits() == pytest.approx((-math.pi / 2, math.pi / 2))
    np.testing.assert_allclose(robot.joints["joint_3"].origin[:3, 3], [0.0, 0.0, 0.25])
    assert robot.source == f"{URDF_DIR / 'small_arm.urdf.xacro'} (expanded)"


def test_xacro_errors_say_lines_count_in_the_expanded_text(tmp_path: Path) -> None:
    """The line is that of the joint in what xacro's command line prints for the file."""
    pytest.importorskip("xacro")
    path = tmp_path / "no_limit.urdf.xacro"
    path.write_text(robot_text(joint_text(limit=False)))
    with pytest.raises(ModelError, match=rf"^{re.escape(str(path))} \(expanded\):\d+: joint 'j'"):
        Robot.load(path)
    xacro_command = shutil.which("xacro") or str(Path(sys.executable).with_name("xacro"))
    printed = subprocess.run(
        [xacro_command, str(path)], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    line = next(i for i, text in enumerate(printed, 1) if '<joint name="j"' in text)
    with pytest.raises(ModelError, match=rf"^{re.escape(str(path))} \(expanded\):{line}: "):
        Robot.load(path)


def test_load_accepts_a_str_path() -> None:
    assert Robot.load(str(DEMO_ARM)).name == "demo_arm"


def test_broken_xacro_is_a_model_error(tmp_path: Path) -> None:
    pytest.importorskip("xacro")
    path = tmp_path / "bad.xacro"
    path.write_text(
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<link name="${undefined_property}"/></robot>'
    )
    with pytest.raises(ModelError, match=r"bad\.xacro: xacro failed"):
        Robot.load(path)


def test_bytes_and_str_give_the_same_robot() -> None:
    text = DEMO_ARM.read_text()
    a = Robot.from_xml_string(text)
    b = Robot.from_xml_string(text.encode())
    assert list(a.joints) == list(b.joints)
    for name in a.joints:
        np.testing.assert_array_equal(a.joints[name].origin, b.joints[name].origin)


# -- XML namespaces ---------------------------------------------------------------------------

ROS_NAMESPACE = "http://www.ros.org"


def with_default_namespace(text: str, namespace: str = ROS_NAMESPACE) -> str:
    """``text`` with ``xmlns=namespace`` on its ``<robot>`` (the same line: lines unchanged)."""
    namespaced = re.sub(r"<robot\b", f'<robot xmlns="{namespace}"', text, count=1)
    assert namespaced != text
    return namespaced


def assert_same_robot(actual: Robot, expected: Robot) -> None:
    """Same name, root, links and joints (every field the transforms use) and link poses."""
    assert (actual.name, actual.root) == (expected.name, expected.root)
    assert list(actual.links) == list(expected.links)
    assert list(actual.joints) == list(expected.joints)
    for name, joint in expected.joints.items():
        other = actual.joints[name]
        assert (other.joint_type, other.parent, other.child, other.line) == (
            joint.joint_type,
            joint.parent,
            joint.child,
            joint.line,
        )
        np.testing.assert_array_equal(other.origin, joint.origin)
        np.testing.assert_array_equal(other.axis, joint.axis)
        assert (other.limit, other.safety_controller, other.mimic, other.dynamics) == (
            joint.limit,
            joint.safety_controller,
            joint.mimic,
            joint.dynamics,
        )
    cfg = {name: 0.3 for name, j in expected.joints.items() if j.joint_type == "revolute"}
    expected_fk = expected.link_fk(cfg, clamp="hard")
    for link, pose in actual.link_fk(cfg, clamp="hard").items():
        np.testing.assert_array_equal(pose, expected_fk[link], err_msg=link)
    assert actual.warnings == expected.warnings


def test_default_namespace_on_robot_loads_like_the_plain_file(tmp_path: Path) -> None:
    plain = DEMO_ARM.read_text()
    namespaced = with_default_namespace(plain)
    expected = Robot.from_xml_string(plain)
    assert_same_robot(Robot.from_xml_string(namespaced), expected)
    path = tmp_path / "demo_arm.urdf"
    path.write_text(namespaced)
    assert_same_robot(Robot.load(path), Robot.load(DEMO_ARM))


def test_prefixed_urdf_namespace_loads_too() -> None:
    text = robot_text(joint_text()).replace("<", "<u:").replace("<u:/", "</u:")
    text = text.replace("<u:?xml", "<?xml").replace(
        '<u:robot name="r">', f'<u:robot xmlns:u="{ROS_NAMESPACE}" name="r">'
    )
    assert_same_robot(Robot.from_xml_string(text), Robot.from_xml_string(robot_text(joint_text())))


def test_namespaced_urdf_errors_name_their_line(tmp_path: Path) -> None:
    text = with_default_namespace(robot_text(joint_text(limit=False)))
    expect_error(
        text, line_with(text, "<joint"), "joint 'j'", "a revolute joint requires a <limit> element"
    )
    path = tmp_path / "bad.urdf"
    path.write_text(text)
    line = line_with(text, "<joint")
    with pytest.raises(ModelError, match=rf"^{re.escape(str(path))}:{line}: joint 'j': a revol"):
        Robot.load(path)


def test_elements_of_other_namespaces_stay_ignored_in_a_namespaced_urdf() -> None:
    """Only the root's namespace is URDF: a <joint> or <limit> of another namespace (an
    extension block, xacro leftovers) is not read, and an xacro element still warns."""
    other = "http://example.com/extension"
    body = "\n".join(
        [
            f'  <ext:joint xmlns:ext="{other}" name="ghost" type="fixed">',
            '    <parent link="a"/><child link="b"/>',
            "  </ext:joint>",
            f'  <gazebo><plugin xmlns="{other}"><joint name="also_ghost"/></plugin></gazebo>',
            f'  <ros2_control xmlns="{other}" name="hw"><joint name="j"/></ros2_control>',
            joint_text(f'    <ext:limit xmlns:ext="{other}" lower="-9" upper="9"/>'),
            '  <xacro:property xmlns:xacro="http://www.ros.org/wiki/xacro" name="x" value="1"/>',
        ]
    )
    text = with_default_namespace(robot_text(body))
    robot = Robot.from_xml_string(text)
    assert list(robot.joints) == ["j"]
    assert robot.joints["j"].hard_limits() == (-1.0, 1.0)
    line = line_with(text, "xacro:property")
    assert robot.warnings == [
        f"<string>:{line}: unexpanded xacro element <xacro:property> ignored; expand the file "
        "with xacro first (Robot.load does so for .xacro files)"
    ]


def test_xacro_file_with_a_default_namespace_is_expanded_and_read(tmp_path: Path) -> None:
    """xacro keeps the default namespace in its output: the expanded URDF is still read."""
    pytest.importorskip("xacro")
    path = tmp_path / "small_arm.urdf.xacro"
    path.write_text(with_default_namespace((URDF_DIR / "small_arm.urdf.xacro").read_text()))
    assert 'xmlns="http://www.ros.org"' in str(expand_xacro(path))
    assert_same_robot(Robot.load(path), Robot.load(URDF_DIR / "small_arm.urdf.xacro"))


def test_namespaced_root_of_another_kind_is_still_refused() -> None:
    expect_error(
        f'<?xml version="1.0"?>\n<world xmlns="{ROS_NAMESPACE}" name="w"/>',
        2,
        None,
        r"root element is <world>, expected <robot> \(URDF\) or <sdf>",
    )


# -- hostile XML (basic; deeper hardening tests live with xmlio) --------------------------------


def test_external_entity_is_not_read(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    text = (
        f'<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY x SYSTEM "file://{secret}">]>\n'
        '<robot name="r">\n  <link name="a">&x;</link>\n  <link name="&x;"/>\n</robot>'
    )
    with pytest.raises(ModelError) as info:
        Robot.from_xml_string(text)
    assert "TOPSECRET" not in str(info.value)


def test_external_entity_in_text_is_left_unresolved(tmp_path: Path) -> None:
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    text = (
        f'<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY x SYSTEM "file://{secret}">]>\n'
        '<robot name="r">\n  <link name="a">&x;</link>\n</robot>'
    )
    robot = Robot.from_xml_string(text)
    assert robot.root == "a"


def test_external_dtd_is_not_loaded(tmp_path: Path) -> None:
    dtd = tmp_path / "robot.dtd"
    dtd.write_text('<!ATTLIST robot name CDATA "from_dtd">')
    text = (
        f'<?xml version="1.0"?>\n<!DOCTYPE robot SYSTEM "file://{dtd}">\n<robot>\n'
        '  <link name="a"/>\n</robot>'
    )
    # Were the DTD loaded, its default would supply the robot's name.
    expect_error(text, 3, None, "<robot> requires 'name'")


def test_network_dtd_is_not_fetched() -> None:
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE robot SYSTEM "http://192.0.2.1/robot.dtd">\n'
        '<robot name="r">\n  <link name="a"/>\n</robot>'
    )
    start = time.perf_counter()
    assert Robot.from_xml_string(text).root == "a"
    assert time.perf_counter() - start < 1.0


def test_entity_expansion_bomb_is_refused() -> None:
    entities = ['<!ENTITY e0 "ha">'] + [
        f'<!ENTITY e{i} "{f"&e{i - 1};" * 10}">' for i in range(1, 10)
    ]
    text = (
        f'<?xml version="1.0"?>\n<!DOCTYPE robot [{"".join(entities)}]>\n'
        '<robot name="&e9;">\n  <link name="a"/>\n</robot>'
    )
    with pytest.raises(ModelError, match=r"^<string>:\d+: malformed XML: .*amplification"):
        Robot.from_xml_string(text)


@pytest.mark.parametrize(
    ("xyz", "direction"),
    [("1e300 1e300 0", [1.0, 1.0, 0.0]), ("1e-320 0 -1e-320", [1.0, 0.0, -1.0])],
)
def test_huge_and_subnormal_axes_keep_their_direction(xyz: str, direction: list[float]) -> None:
    robot = single_joint(f'    <axis xyz="{xyz}"/>')
    expected = np.array(direction) / np.linalg.norm(direction)
    np.testing.assert_allclose(robot.joints["j"].axis, expected, atol=1e-15)
    assert "is not a unit vector" in robot.warnings[0]


def test_huge_quaternion_keeps_its_rotation() -> None:
    robot = single_joint('    <origin quat_xyzw="0 0 1e308 1e308"/>', version="1.1")
    expected = Rotation.from_quat([0.0, 0.0, 1.0, 1.0]).as_matrix()
    np.testing.assert_allclose(robot.joints["j"].origin[:3, :3], expected, atol=1e-12)


def test_entity_references_and_pis_between_elements_are_skipped() -> None:
    text = (
        '<?xml version="1.0"?>\n<!DOCTYPE robot [<!ENTITY note "n">]>\n<robot name="r">\n'
        '  &note;<?pi data?>\n  <link name="a"/>\n  <link name="b"/>\n'
        '  <joint name="j" type="fixed">&note;<parent link="a"/><child link="b"/></joint>\n'
        "</robot>"
    )
    robot = Robot.from_xml_string(text)
    assert list(robot.joints) == ["j"]
    assert robot.warnings == []


def test_mimic_with_empty_joint_name_names_no_joint() -> None:
    text = robot_text(joint_text('    <mimic joint=""/>'))
    robot = warning_for(
        text, "<mimic", "joint 'j': <mimic> names joint '', which does not exist; the mimic is"
    )
    assert robot.joints["j"].mimic is None


@pytest.mark.parametrize("element", ["robot", "joint"])
def test_empty_robot_or_joint_name_loads_with_a_warning(element: str) -> None:
    # urdfdom loads both; only a link's name must not be empty (it names a TF frame).
    text = robot_text(joint_text(name=""))
    if element == "robot":
        text = robot_text(joint_text()).replace('<robot name="r">', '<robot name="">')
    robot = warning_for(text, f"<{element} name=", f"<{element}> has an empty 'name'")
    assert (robot.name, list(robot.joints)) == (("", ["j"]) if element == "robot" else ("r", [""]))


def test_urdf_reader_refuses_another_root_when_called_directly() -> None:
    from joint_tf_publisher.description.urdf import robot_from_element
    from joint_tf_publisher.description.xmlio import parse_xml

    root = parse_xml('<?xml version="1.0"?>\n<sdf version="1.9"/>')
    with pytest.raises(ModelError, match=r"^x\.sdf:2: root element is <sdf>, expected <robot>"):
        robot_from_element(root, "x.sdf")


def test_version_1_2_continuous_limit_needs_no_range() -> None:
    robot = single_joint("    <limit/>", kind="continuous", limit=False, version="1.2")
    limit = robot.joints["j"].limit
    assert limit is not None and (limit.effort, limit.velocity) == (math.inf, math.inf)
    assert robot.joints["j"].hard_limits() is None


def test_safety_controller_on_an_unclamped_joint_does_not_warn() -> None:
    inner = '    <safety_controller k_velocity="1" soft_lower_limit="-9" soft_upper_limit="9"/>'
    robot = single_joint(inner, kind="continuous", limit=False)
    assert robot.warnings == []
    assert robot.joints["j"].soft_limits() is None


# -- extension markup in undeclared namespace prefixes (Drake) ----------------------------------


def test_drake_style_file_loads_without_declaring_its_prefix() -> None:
    path = URDF_DIR / "drake_style_arm.urdf"
    assert "xmlns:drake=" not in path.read_text()
    robot = Robot.load(path)
    assert robot.root == "world"
    # <drake:joint name="base_planar"> is extension markup, not a second parent of "base".
    assert list(robot.joints) == ["world_to_base", "joint_1", "joint_2", "joint_3", "tool_joint"]
    assert robot.joints["joint_3"].joint_type == "prismatic"
    assert robot.joints["joint_3"].hard_limits() == (0.0, 0.3)
    # drake:acceleration is not URDF 1.2's acceleration (which would warn under version 1.0).
    assert robot.joints["joint_1"].limit.acceleration is None  # type: ignore[union-attr]
    assert robot.warnings == []


def test_undeclared_prefix_logs_one_info_line(caplog: pytest.LogCaptureFixture) -> None:
    text = robot_text(joint_text('    <drake:gear_ratio value="2"/>'))
    with caplog.at_level(logging.DEBUG, logger="joint_tf_publisher"):
        robot = Robot.from_xml_string(text, source="arm.urdf")
    assert robot.warnings == []
    assert [(r.levelno, r.getMessage()) for r in caplog.records] == [
        (
            logging.INFO,
            "arm.urdf: namespace prefix(es) drake used without a declaration: read as "
            "extension markup (ignored)",
        )
    ]


@pytest.mark.parametrize(
    ("top", "inner"),
    [
        ('  <drake:joint name="x" type="planar"><parent link="a"/></drake:joint>', ""),
        ("", '    <drake:rotor_inertia value="1"/>'),
        ("", '    <dynamics damping="1" drake:coulomb_window="0.1"/>'),
        ('  <drake:x gz:fidelity="2"><drake:p/><gz:q/></drake:x>', ""),
        ('  <drake:a><b><drake:c x:y="1"/></b></drake:a>', ""),
    ],
    ids=["top-level element", "joint child", "attribute", "two prefixes", "nested"],
)
def test_undeclared_prefix_markup_is_ignored(top: str, inner: str) -> None:
    plain = Robot.from_xml_string(robot_text(joint_text('    <origin xyz="1 2 3"/>')))
    text = robot_text(top + "\n" + joint_text('    <origin xyz="1 2 3"/>\n' + inner))
    robot = Robot.from_xml_string(text)
    assert list(robot.joints) == list(plain.joints) == ["j"]
    assert robot.joints["j"].line == line_with(text, '<joint name="j"')
    np.testing.assert_array_equal(robot.joints["j"].origin, plain.joints["j"].origin)
    assert robot.warnings == []


def test_undeclared_prefix_on_the_root_element_tag_and_attribute() -> None:
    text = robot_text(joint_text()).replace('<robot name="r">', '<robot drake:units="SI" name="r">')
    assert Robot.from_xml_string(text).name == "r"
    wrapped = text.replace("<robot ", "<drake:robot ").replace("</robot>", "</drake:robot>")
    with pytest.raises(ModelError, match=r"^<string>:2: root element is <drake:robot>, expected"):
        Robot.from_xml_string(wrapped)


def test_declared_foreign_namespace_is_ignored() -> None:
    text = robot_text(
        '  <foo:joint name="x" type="fixed"/>\n' + joint_text('    <foo:gear value="2"/>')
    ).replace('<robot name="r">', '<robot name="r" xmlns:foo="http://example.com/foo">')
    robot = Robot.from_xml_string(text)
    assert list(robot.joints) == ["j"]
    assert robot.warnings == []


def test_prefix_declared_on_one_element_and_used_outside_it() -> None:
    text = robot_text(
        '  <gz:plugin xmlns:gz="http://gazebosim.org/schema"/>\n'
        + joint_text('    <gz:damping value="1"/>')
    )
    assert list(Robot.from_xml_string(text).joints) == ["j"]


def test_error_after_undeclared_prefixes_names_its_own_line() -> None:
    # The first parse fails on the drake markup first; the error reported is the real one.
    body = (
        joint_text('    <drake:gear_ratio value="2"/>').replace(
            "<limit ", '<limit drake:acceleration="3" '
        )
        + '\n  <link name="c" drake:x="1">\n  <link name="d"/>'
    )
    text = robot_text(body)
    error = expect_error(text, line_with(text, "</robot>"), None, "malformed XML: ")
    assert "drake" not in str(error)


def test_model_error_after_undeclared_prefixes_names_its_own_line() -> None:
    body = (
        '  <drake:collision_filter_group name="g">\n    <drake:member link="a"/>\n'
        "  </drake:collision_filter_group>\n"
        + joint_text('    <axis xyz="0 0 0" drake:note="zero"/>')
    )
    text = robot_text(body)
    expect_error(
        text, line_with(text, "<axis"), "joint 'j'", "<axis> xyz is zero; a revolute joint"
    )


def test_many_prefixes_declared_locally_and_used_outside_their_element() -> None:
    # Each prefix is declared somewhere, so only libxml2's errors name them, about 100 per
    # parse: every one of the 250 is still found, and the error after them keeps its line.
    local = "\n".join(f'  <p{i}:a xmlns:p{i}="urn:x"/><p{i}:b/>' for i in range(250))
    text = robot_text(local + "\n" + joint_text())
    assert list(Robot.from_xml_string(text).joints) == ["j"]
    broken = text.replace('<child link="b"/>', '<child link="b">')
    expect_error(broken, line_with(broken, "</joint>"), None, "malformed XML: ")


@pytest.mark.parametrize("encoding", ["utf-8-sig", "utf-16", "utf-16-be", "utf-32", "iso-8859-1"])
def test_undeclared_prefix_in_other_encodings(encoding: str) -> None:
    declared = encoding.removesuffix("-sig").removesuffix("-be")
    text = robot_text(joint_text('    <drake:gear_ratio value="2"/>', name="gelenk_ä"))
    text = text.replace('<?xml version="1.0"?>', f'<?xml version="1.0" encoding="{declared}"?>')
    robot = Robot.from_xml_string(text.encode(encoding))
    assert list(robot.joints) == ["gelenk_ä"]


def test_undeclared_prefix_with_a_doctype_before_the_root() -> None:
    text = robot_text(joint_text('    <drake:gear_ratio value="&ratio;"/>')).replace(
        '<?xml version="1.0"?>',
        '<?xml version="1.0"?>\n<!-- a comment --><?pi x?>\n'
        '<!DOCTYPE robot [\n  <!ENTITY ratio "2"> <!-- a ] and > in a comment -->\n'
        '  <!ENTITY note "a > b ]">\n]>',
    )
    robot = Robot.from_xml_string(text)
    assert robot.joints["j"].line == line_with(text, '<joint name="j"')


# -- mimic: missing leader, follower ranges -----------------------------------------------------


def test_mimic_of_a_missing_joint_loads_with_a_warning() -> None:
    text = robot_text(joint_text('    <mimic joint="nope" multiplier="2"/>'))
    robot = warning_for(
        text,
        "<mimic",
        "joint 'j': <mimic> names joint 'nope', which does not exist; the mimic is ignored and "
        "the joint moves on its own",
    )
    assert robot.warnings[0].startswith(f"<string>:{line_with(text, '<mimic')}: joint 'j': ")
    assert robot.joints["j"].mimic is None
    # An ordinary joint: its own value moves it (a mimic's given value would be ignored).
    moved = robot.link_fk({"j": 0.5})["b"]
    np.testing.assert_allclose(moved[:3, :3], Rotation.from_rotvec([0.5, 0, 0]).as_matrix())


def test_mimic_of_a_missing_joint_names_the_file(tmp_path: Path) -> None:
    path = tmp_path / "gripper.urdf"
    text = robot_text(joint_text('    <mimic joint="ghost_joint"/>'))
    path.write_text(text)
    robot = Robot.load(path)
    assert robot.warnings == [
        f"{path}:{line_with(text, '<mimic')}: joint 'j': <mimic> names joint 'ghost_joint', "
        "which does not exist; the mimic is ignored and the joint moves on its own"
    ]


def test_follower_of_a_follower_whose_leader_is_missing_still_follows() -> None:
    body = (
        joint_text('    <mimic joint="ghost"/>', name="j1")
        + "\n"
        + joint_text('    <mimic joint="j1" multiplier="0.5"/>', name="j2", parent="b", child="c")
    )
    robot = Robot.from_xml_string(robot_text(body, links=("a", "b", "c")))
    assert robot.joints["j1"].mimic is None
    assert robot.joints["j2"].mimic is not None and robot.joints["j2"].mimic.joint == "j1"


def pr2_gripper(follower_limits: str, multiplier: str = "-1", offset: str = "0") -> str:
    """A PR2-style parallel gripper: the follower mirrors the leader's [0, 0.548]."""
    return robot_text(
        joint_text(name="l_finger_joint", child="b").replace(
            'lower="-1" upper="1"', 'lower="0" upper="0.548"'
        )
        + "\n"
        + joint_text(
            f'    <mimic joint="l_finger_joint" multiplier="{multiplier}" offset="{offset}"/>',
            name="r_finger_joint",
            child="c",
        ).replace('lower="-1" upper="1"', follower_limits),
        links=("a", "b", "c"),
    )


def test_follower_range_outside_its_own_limits_warns() -> None:
    text = pr2_gripper('lower="0" upper="0.548"')
    warning_for(
        text,
        "<mimic",
        "joint 'r_finger_joint': <mimic> moves the joint over [-0.548, 0] "
        "(-1 * 'l_finger_joint' + 0), outside its own limits [0, 0.548]; "
        "a mimic joint is not clamped to its own limits",
    )


@pytest.mark.parametrize(
    ("limits", "multiplier", "offset"),
    [
        ('lower="-0.548" upper="0"', "-1", "0"),
        ('lower="0" upper="0.548"', "1", "0"),
        ('lower="-1" upper="1"', "2", "-0.548"),
        ('lower="0.1" upper="0.1"', "0", "0.1"),
        ('lower="0" upper="0.274"', "0.5", "0"),
    ],
)
def test_follower_range_inside_its_own_limits_does_not_warn(
    limits: str, multiplier: str, offset: str
) -> None:
    assert Robot.from_xml_string(pr2_gripper(limits, multiplier, offset)).warnings == []


def test_follower_range_through_a_chain() -> None:
    # j2 = 2 * j1, j1 = -j0 over [0, 1]: j2 ranges over [-2, 0], outside [-1, 0].
    body = "\n".join(
        [
            joint_text(name="j0", child="b").replace('lower="-1"', 'lower="0"'),
            joint_text(
                '    <mimic joint="j0" multiplier="-1"/>', name="j1", parent="b", child="c"
            ).replace('lower="-1" upper="1"', 'lower="-1" upper="0"'),
            joint_text(
                '    <mimic joint="j1" multiplier="2"/>', name="j2", parent="c", child="d"
            ).replace('lower="-1" upper="1"', 'lower="-1" upper="0"'),
        ]
    )
    text = robot_text(body, links=("a", "b", "c", "d"))
    warning_for(
        text, '<mimic joint="j1"', "joint 'j2': <mimic> moves the joint over [-2, 0] (2 * 'j1' + 0)"
    )


def test_follower_of_an_unlimited_joint_does_not_warn() -> None:
    body = (
        joint_text(kind="continuous", name="wheel", limit=False)
        + "\n"
        + joint_text('    <mimic joint="wheel"/>', name="j", parent="b", child="c")
    )
    assert Robot.from_xml_string(robot_text(body, links=("a", "b", "c"))).warnings == []


@pytest.mark.parametrize("attribute", ["acceleration", "deceleration", "jerk"])
def test_version_1_2_refuses_negative_limit_extras(attribute: str) -> None:
    text = robot_text(joint_text().replace("<limit ", f'<limit {attribute}="-1" '), version="1.2")
    expect_error(
        text,
        line_with(text, "<limit"),
        "joint 'j'",
        f"<limit> {attribute} must not be negative, got -1",
    )


@pytest.mark.parametrize("kind", ["fixed", "floating"])
def test_axis_without_xyz_is_ignored_where_unused(kind: str) -> None:
    robot = single_joint("    <axis/>", kind=kind, limit=False)
    np.testing.assert_array_equal(robot.joints["j"].axis, [1.0, 0.0, 0.0])
