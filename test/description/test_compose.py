"""Attachments composed into one URDF (``description.compose``), without ROS.

The composed text must load in this package's parser, with the attachment's frames where its
mount puts them (that urdfdom loads it too, names unique and one root, is checked with the
other urdfdom tests in test_urdfdom_differential.py, in pinocchio's environment).
"""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
from lxml import etree
from repo_paths import REPO_ROOT, TEST_DIR

from joint_tf_publisher import ModelError, Robot
from joint_tf_publisher.description.compose import Attachment, comment_text, compose
from joint_tf_publisher.transforms import xyz_rpy_to_matrix

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
GRIPPER = REPO_ROOT / "urdf" / "gripper.urdf"
SUCTION = REPO_ROOT / "urdf" / "suction_tool.urdf"
ORIGIN = (0.01, -0.02, 0.03, 0.1, -0.2, 0.3)


def gripper(**fields: object) -> Attachment:
    values: dict[str, object] = {
        "name": "gripper",
        "parent": "tool_flange",
        "file": str(GRIPPER),
        "origin": ORIGIN,
        "prefix": "tool_",
    }
    values.update(fields)
    return Attachment(**values)  # type: ignore[arg-type]


def composed_robot(*attachments: Attachment) -> Robot:
    return Robot.from_xml_string(compose(ARM.read_text(), attachments))


def test_the_gripper_hangs_from_the_flange_at_its_origin() -> None:
    robot = composed_robot(gripper())
    arm = Robot.load(ARM)
    alone = Robot.load(GRIPPER)
    arm_cfg = {"shoulder_lift_joint": 0.4, "elbow_joint": -0.7}
    poses = robot.link_fk({**arm_cfg, "tool_finger_joint": 0.03})
    flange = arm.link_fk(arm_cfg, link="tool_flange")
    mount = xyz_rpy_to_matrix(ORIGIN[:3], ORIGIN[3:])
    for link, pose in alone.link_fk({"finger_joint": 0.03}).items():
        np.testing.assert_allclose(poses["tool_" + link], flange @ mount @ pose, atol=1e-12)
    assert set(robot.links) == set(arm.links) | {"tool_" + link for link in alone.links}
    assert robot.root == "base_link"
    mount_joint = robot.joints["tool_gripper_mount"]
    assert (mount_joint.joint_type, mount_joint.parent, mount_joint.child) == (
        "fixed",
        "tool_flange",
        "tool_base_link",
    )
    follower = robot.joints["tool_right_finger_joint"]
    assert follower.mimic is not None and follower.mimic.joint == "tool_finger_joint"
    # Its moving joints are clamped like the robot's own: the finger's limit is 0.04 m.
    clamped = robot.link_fk({"tool_finger_joint": 0.5}, clamp="hard", link="tool_left_finger")
    limit = robot.link_fk({"tool_finger_joint": 0.04}, link="tool_left_finger")
    np.testing.assert_allclose(clamped, limit)


def test_the_composed_text_keeps_visuals_and_prefixes_materials() -> None:
    text = compose(ARM.read_text(), [gripper()])
    root = etree.fromstring(text.encode())
    finger = root.find("link[@name='tool_left_finger']")
    assert finger is not None and finger.find("visual/geometry/box") is not None
    assert finger.find("visual/material").get("name") == "tool_dark"
    assert [m.get("name") for m in root.findall("material")].count("tool_dark") == 1
    assert root.find("material[@name='dark']") is not None  # the arm's own, untouched


def test_an_attachment_hangs_from_an_earlier_one_not_from_a_later_one() -> None:
    cup = Attachment("cup", "tool_tcp", file=str(SUCTION), prefix="cup_")
    robot = composed_robot(gripper(), cup)
    assert robot.joints["cup_cup_mount"].parent == "tool_tcp"
    with pytest.raises(ModelError, match=r"^attachments\.cup\.parent: no link 'tool_tcp'"):
        composed_robot(cup, gripper())


def test_without_attachments_the_text_is_unchanged() -> None:
    text = ARM.read_text()
    assert compose(text, []) == text


@pytest.mark.parametrize(
    ("attachments", "message"),
    [
        (
            [gripper(prefix="")],
            r"^attachments\.gripper: link 'base_link' is already in the robot or an earlier "
            r"attachment \(give this attachment another prefix\)$",
        ),
        (
            [gripper(), gripper(name="second")],
            r"^attachments\.second: link 'tool_base_link' is already in the robot",
        ),
        ([gripper(), gripper()], r"^attachments: names 'gripper' twice$"),
        (
            [gripper(parent="tool_flang")],
            r"^attachments\.gripper\.parent: no link 'tool_flang' in the robot or an earlier "
            r"attachment; did you mean tool_flange",
        ),
        (
            [gripper(description="<robot name='x'><link name='a'/></robot>")],
            r"^attachments\.gripper: give exactly one of description and file \(both are set\)",
        ),
        ([gripper(file="")], r"neither is set"),
        ([gripper(parent="")], r"^attachments\.gripper\.parent: empty"),
        (
            [gripper(origin=(0.0, 0.0, float("nan"), 0.0, 0.0, 0.0))],
            r"^attachments\.gripper\.origin",
        ),
        (
            [gripper(file=str(REPO_ROOT / "urdf" / "no_such_tool.urdf"))],
            r"^attachments\.gripper\.file: cannot read .*no_such_tool\.urdf: No such file",
        ),
    ],
    ids=["clash", "clash-2", "twice", "parent", "both", "neither", "no-parent", "nan", "no-file"],
)
def test_a_bad_attachment_is_refused_with_its_reason(
    attachments: list[Attachment], message: str
) -> None:
    with pytest.raises(ModelError, match=message):
        compose(ARM.read_text(), attachments)


def test_an_error_in_an_attachment_names_its_own_source_and_line(tmp_path: Path) -> None:
    text = GRIPPER.read_text().replace('<child link="tcp"/>', '<child link="tpc"/>')
    broken = tmp_path / "broken_gripper.urdf"
    broken.write_text(text)
    line = text[: text.index('"tpc"')].count("\n") + 1
    with pytest.raises(
        ModelError, match=rf"^{re.escape(str(broken))}:{line - 2}: joint 'tcp_joint'"
    ):
        compose(ARM.read_text(), [gripper(file=str(broken))])
    with pytest.raises(ModelError, match=r"^attachments\.gripper\.description:\d+: joint 'tcp_"):
        compose(ARM.read_text(), [gripper(file="", description=text)])


def test_the_same_material_twice_is_kept_once_a_different_one_is_refused() -> None:
    same = "<robot name='s'><material name='dark'><color rgba='0.15 0.15 0.15 1'/></material>"
    same += "<link name='plate'/></robot>"
    text = compose(ARM.read_text(), [Attachment("plate", "base_link", description=same)])
    assert len(etree.fromstring(text.encode()).findall("material[@name='dark']")) == 1
    other = same.replace("0.15 0.15 0.15 1", "1 0 0 1")
    with pytest.raises(ModelError, match=r"material 'dark' is defined differently"):
        compose(ARM.read_text(), [Attachment("plate", "base_link", description=other)])


def test_relative_mesh_paths_of_a_file_become_file_uris(tmp_path: Path) -> None:
    tool = tmp_path / "tools" / "tool.urdf"
    tool.parent.mkdir()
    tool.write_text(
        "<robot name='t'><link name='body'><visual><geometry>"
        "<mesh filename='meshes/body.stl'/></geometry></visual>"
        "<collision><geometry><mesh filename='package://tools/meshes/body.stl'/></geometry>"
        "</collision></link></robot>"
    )
    text = compose(ARM.read_text(), [Attachment("t", "tool_flange", file=str(tool))])
    meshes = [m.get("filename") for m in etree.fromstring(text.encode()).iter("mesh")]
    assert meshes == [
        (tmp_path / "tools" / "meshes" / "body.stl").as_uri(),
        "package://tools/meshes/body.stl",
    ]


SDF_TOOL = """<sdf version="1.9"><model name="sdf_tool">
  <link name="body"/>
  <link name="jaw"><pose relative_to="hinge"/></link>
  <joint name="hinge" type="revolute">
    <pose relative_to="body">0.1 0 0.05 0 0.3 0</pose>
    <parent>body</parent><child>jaw</child>
    <axis><xyz>0 1 0</xyz><limit><lower>-0.5</lower><upper>0.5</upper></limit></axis>
  </joint>
</model></sdf>"""


def test_an_sdformat_attachment_is_written_as_urdf_links_and_joints() -> None:
    robot = composed_robot(Attachment("sdf", "tool_flange", description=SDF_TOOL, prefix="s_"))
    alone = Robot.from_xml_string(SDF_TOOL)
    flange = robot.link_fk(link="tool_flange")
    for angle in (0.2, 0.9):
        pose = robot.link_fk({"s_hinge": angle}, clamp="hard", link="s_jaw")
        expected = flange @ alone.link_fk({"hinge": angle}, clamp="hard", link="jaw")
        np.testing.assert_allclose(pose, expected, atol=1e-12)


def test_an_sdformat_joint_urdf_cannot_hold_is_refused() -> None:
    ball = SDF_TOOL.replace('type="revolute"', 'type="ball"')
    with pytest.raises(ModelError, match=r"joint 'hinge': type 'ball' has no URDF form"):
        compose(ARM.read_text(), [Attachment("sdf", "tool_flange", description=ball)])


def test_an_sdformat_base_is_written_as_urdf_once_something_is_attached() -> None:
    base = (TEST_DIR / "sdf" / "relative_frames.sdf").read_text()
    model = Robot.from_xml_string(base)
    leaf = next(
        name for name in model.links if name not in {j.parent for j in model.joints.values()}
    )
    composed = compose(base, [Attachment("cup", leaf, file=str(SUCTION), prefix="cup_")])
    robot = Robot.from_xml_string(composed)
    assert composed.lstrip().startswith("<?xml") and "<robot" in composed
    np.testing.assert_allclose(robot.link_fk(link=leaf), model.link_fk(link=leaf), atol=1e-12)
    assert robot.joints["cup_cup_mount"].parent == leaf


def test_sdformat_joints_off_their_child_frame_keep_their_motion() -> None:
    """SDFormat places links relative to other frames: a child link frame off its joint
    frame is folded into the URDF joint where the motion allows, else carried by a link
    at the joint frame."""
    base = (TEST_DIR / "sdf" / "relative_frames.sdf").read_text()
    model = Robot.from_xml_string(base)
    offset = [j.name for j in model.joints.values() if not np.allclose(j.child_offset, np.eye(4))]
    assert offset  # the file has such joints
    text = compose(base, [Attachment("cup", "tool", file=str(SUCTION), prefix="cup_")])
    robot = Robot.from_xml_string(text)
    for cfg in ({}, {"shoulder": 0.7, "elbow": -1.1}):
        expected = model.link_fk(cfg, clamp="hard")
        poses = robot.link_fk(cfg, clamp="hard")
        for link, pose in expected.items():
            np.testing.assert_allclose(poses[link], pose, atol=1e-12, err_msg=link)
    assert robot.joints["cup_cup_mount"].parent == "tool"


def test_a_xacro_attachment_is_expanded() -> None:
    arm = TEST_DIR / "urdf" / "small_arm.urdf.xacro"
    robot = composed_robot(Attachment("second_arm", "tool_flange", file=str(arm), prefix="b_"))
    alone = Robot.load(arm)
    flange = robot.link_fk(link="tool_flange")
    pose = robot.link_fk({"b_joint_2": 0.4}, link="b_link_3")
    np.testing.assert_allclose(pose, flange @ alone.link_fk({"joint_2": 0.4}, link="link_3"))


def test_a_material_the_attachment_only_refers_to_keeps_its_name() -> None:
    """A visual may name a material the robot defines: the prefix goes only on the names the
    attachment defines (urdfdom refuses a visual naming an undefined material)."""
    part = (
        "<robot name='p'><material name='red'><color rgba='1 0 0 1'/></material>"
        "<link name='plate'><visual><geometry><box size='1 1 1'/></geometry>"
        "<material name='grey'/></visual>"
        "<visual><geometry><box size='1 1 1'/></geometry><material name='red'/></visual>"
        "<visual><geometry><box size='1 1 1'/></geometry>"
        "<material name='glow'><color rgba='1 1 0 1'/></material></visual></link></robot>"
    )
    text = compose(ARM.read_text(), [Attachment("p", "base_link", description=part, prefix="p_")])
    plate = etree.fromstring(text.encode()).find("link[@name='p_plate']")
    assert plate is not None
    assert [m.get("name") for m in plate.iter("material")] == ["grey", "p_red", "p_glow"]


# -- file paths a request may give --------------------------------------------------------------


@pytest.mark.parametrize("file_name", ["gripper--v2.urdf", "gripper-.urdf", "g\x01ripper.urdf"])
def test_a_file_name_that_xml_forbids_in_a_comment_is_written_escaped(
    tmp_path: Path, file_name: str
) -> None:
    """The composed URDF names each attachment's source in a comment; ``--`` (and a control
    character) cannot stand in one (lxml raised ValueError)."""
    path = tmp_path / file_name
    path.write_text(GRIPPER.read_text())
    text = compose(ARM.read_text(), [gripper(file=str(path))])
    robot = Robot.from_xml_string(text)
    assert "tool_base_link" in robot.links
    (comment,) = [c for c in etree.fromstring(text.encode()).iter(etree.Comment) if c.text]
    shown = file_name.replace("--", "-%2D").replace("\x01", "\\x01")
    assert comment.text == f" attachment 'gripper' from {tmp_path}/{shown} "


def test_comment_text_keeps_the_text_readable() -> None:
    assert comment_text("a----b") == " a-%2D-%2Db "
    assert comment_text("tab\there") == " tab\there "
    assert comment_text("\udc80") == " \\xdc80 "
    etree.Comment(comment_text("x-- -\x00-"))  # lxml takes what it makes


def test_a_home_folder_of_no_user_is_refused_naming_the_parameter() -> None:
    with pytest.raises(
        ModelError,
        match=r"^attachments\.gripper\.file: cannot expand '~nosuchuser_jtp/g\.urdf': no "
        r"home folder for user 'nosuchuser_jtp'$",
    ):
        compose(ARM.read_text(), [gripper(file="~nosuchuser_jtp/g.urdf")])


# -- closed loops -----------------------------------------------------------------------------

LOOPS = TEST_DIR / "data" / "loops"


def same_loops(composed: Robot, alone: Robot, prefix: str = "") -> None:
    """``composed`` holds ``alone``'s loop joints, renamed with ``prefix``, frames to 1e-12."""
    assert [loop.name for loop in composed.loop_joints] == [
        prefix + loop.name for loop in alone.loop_joints
    ]
    for mine, theirs in zip(composed.loop_joints, alone.loop_joints, strict=True):
        assert (mine.type, mine.link1, mine.link2) == (
            theirs.type,
            prefix + theirs.link1,
            prefix + theirs.link2,
        )
        assert (mine.lower, mine.upper) == (theirs.lower, theirs.upper)
        for a, b in (
            (mine.link1_to_joint, theirs.link1_to_joint),
            (mine.link2_to_joint, theirs.link2_to_joint),
            (mine.axis, theirs.axis),
        ):
            np.testing.assert_allclose(a, b, atol=1e-12)


def test_an_sdformat_base_keeps_its_loops_as_loop_joints() -> None:
    """An SDFormat base written as URDF carries its loops as <loop_joint> elements."""
    base = (LOOPS / "four_bar.sdf").read_text()
    composed = compose(base, [Attachment("cup", "rocker", file=str(SUCTION), prefix="cup_")])
    assert composed.count("<loop_joint ") == 1
    same_loops(Robot.from_xml_string(composed), Robot.from_xml_string(base))


@pytest.mark.parametrize(
    "name", ["four_bar.sdf", "four_bar_loop_joint.urdf", "four_bar_gazebo.urdf"]
)
def test_an_attachment_keeps_its_loops_renamed(name: str) -> None:
    """Whichever spelling the attachment wrote its loop in, the composed robot holds it as a
    <loop_joint> renamed with the prefix (<gazebo> itself is left out)."""
    from_file = Attachment("linkage", "tool_flange", file=str(LOOPS / name), prefix="fb_")
    text = (LOOPS / name).read_text()
    from_text = Attachment("linkage", "tool_flange", description=text, prefix="fb_")
    for attachment in (from_file, from_text):
        composed = compose(ARM.read_text(), [attachment])
        assert "<gazebo" not in composed
        same_loops(Robot.from_xml_string(composed), Robot.load(LOOPS / name), "fb_")


def test_an_attachment_loop_joint_named_like_a_robot_joint_is_refused() -> None:
    attachment = Attachment("linkage", "tool_flange", file=str(LOOPS / "four_bar.sdf"))
    arm = ARM.read_text().replace('name="elbow_joint"', 'name="coupler_rocker"')
    arm = arm.replace('joint="elbow_joint"', 'joint="coupler_rocker"')
    with pytest.raises(ModelError, match="joint 'coupler_rocker' is already in the robot"):
        compose(arm, [attachment])


def test_a_loop_joint_element_reads_back_with_its_limits() -> None:
    text = (
        (LOOPS / "four_bar_loop_joint.urdf")
        .read_text()
        .replace(
            '<axis xyz="0 0 1"/>\n  </loop_joint>',
            '<axis xyz="0 0 1"/>\n    <limit lower="-0.5"/>\n  </loop_joint>',
        )
        .replace('type="continuous">\n    <link1', 'type="revolute">\n    <link1')
    )
    robot = Robot.from_xml_string(text)
    assert (robot.loop_joints[0].lower, robot.loop_joints[0].upper) == (-0.5, None)
    composed = compose(text, [Attachment("cup", "rocker", file=str(SUCTION), prefix="cup_")])
    same_loops(Robot.from_xml_string(composed), robot)
    attached = compose(ARM.read_text(), [Attachment("fb", "tool_flange", description=text)])
    same_loops(Robot.from_xml_string(attached), robot)
