"""SDFormat as Gazebo users write it: nested models, ``<include>``s, worlds with scenery.

The reference is libsdformat (gazebosim/sdformat, ``src/parser.cc``, ``Model.cc``,
``FrameSemantics.cc``), the parser behind Gazebo: nested elements are named in their model's
scope (``Model::LinkByName("arm::wrist::flange")``), a nested model's ``__model__`` frame is
``arm::wrist`` (also ``arm::wrist::__model__``), attached to its canonical link; includes are
found through the resource path and ``model.config``, with ``<name>``, ``<pose>`` and
``<placement_frame>`` overriding the model's, and ``merge="true"`` puts the model's elements in
the including model's scope behind the proxy frame ``_merged__NAME__model__``.

Expected poses are composed here by hand with numpy (``pose`` and ``screw`` of
``test_sdf.py``: the product of exponentials, T(q) = exp(S1 q1) ... exp(Sn qn) T(0), with
each joint's axis and a point on it written out in the model frame); included robots are also
compared with the same robot written out inline in one file.
"""

from __future__ import annotations

import math
import os
import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_sdf import (
    HALF_PI,
    SDF_DIR,
    X,
    Y,
    Z,
    assert_poses,
    compose_fk,
    in_root,
    line_with,
    pose,
    screw,
    sdf,
)

from joint_tf_publisher import ModelError, Robot
from joint_tf_publisher.description.sdf.include import MAX_INCLUDE_DEPTH

GAZEBO_DIR = SDF_DIR / "gazebo"
MODELS_DIR = GAZEBO_DIR / "models"
NESTED = SDF_DIR / "nested_robot.sdf"
ROVER = GAZEBO_DIR / "rover.sdf"
ROVER_INLINE = GAZEBO_DIR / "rover_inline.sdf"
WORLD = GAZEBO_DIR / "world.sdf"
RESOURCE_VARIABLES = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH")


def fake_ament_prefix(root: Path) -> Path:
    """An install prefix holding package jtp_sensors, as colcon lays one out."""
    index = root / "share" / "ament_index" / "resource_index" / "packages"
    index.mkdir(parents=True)
    (index / "jtp_sensors").write_text("")
    models = root / "share" / "jtp_sensors" / "models"
    models.mkdir(parents=True)
    shutil.copy(GAZEBO_DIR / "package_files" / "camera.sdf", models / "camera.sdf")
    return root


@pytest.fixture
def gazebo_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[Path]:
    """GZ_SIM_RESOURCE_PATH on test/sdf/gazebo/models, AMENT_PREFIX_PATH on a fake prefix."""
    for variable in RESOURCE_VARIABLES:
        monkeypatch.delenv(variable, raising=False)
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(MODELS_DIR))
    prefix = fake_ament_prefix(tmp_path / "install")
    monkeypatch.setenv("AMENT_PREFIX_PATH", os.pathsep.join([str(tmp_path / "empty"), str(prefix)]))
    yield tmp_path


# -- nested models ------------------------------------------------------------------------------


def nested_zero() -> dict[str, np.ndarray]:
    """nested_robot.sdf at zero, composed by hand in the rover's model frame."""
    chassis = pose((0, 0, 0.3))
    arm = chassis @ pose((0.2, 0, 0.1), (0, 0, HALF_PI))  # relative_to chassis
    upper = arm @ pose((0, 0, 0.1))
    wrist = upper @ pose((0, 0, 0.4), (0.3, 0, 0))  # relative_to upper
    tcp = wrist @ pose((0, 0, 0.12))  # a <frame> of wrist: relative to wrist's frame
    plate_in_head = pose((0, 0, 0.1)) @ pose((0, 0, -0.04), (0, 0, 0.3))
    head = chassis @ pose((0, 0, 0.25)) @ np.linalg.inv(plate_in_head)  # placement_frame
    body = head @ pose((0, 0, 0.1))
    return {
        "chassis": chassis,
        "arm::base": arm,
        "arm::upper": upper,
        "arm::wrist::mount": wrist @ pose((0, 0, -0.05)),
        "arm::wrist::flange": wrist,
        "sensor_head::body": body,
        "arm::wrist::tcp": tcp,
        "camera": tcp @ pose((0, 0, 0.05)),
        "sensor_head::plate": head @ plate_in_head,
        "arm": arm,
        "arm::wrist": wrist,
    }


NESTED_LINKS = [
    "chassis",
    "arm::base",
    "arm::upper",
    "arm::wrist::mount",
    "arm::wrist::flange",
    "sensor_head::body",
]
NESTED_FRAMES = ["arm::wrist::tcp", "camera", "sensor_head::plate"]


def test_nested_models_are_named_as_libsdformat_scopes_them() -> None:
    """Links, joints and frames of nested models get scoped names; joints across nesting
    levels (arm::elbow to wrist::mount, pan to sensor_head::body) and a joint to a model frame
    (arm_mount's child arm: its canonical link arm::base) connect them. Model frames (arm,
    arm::wrist, sensor_head) are frames of the pose graph, not published links."""
    robot = Robot.load(NESTED)
    assert list(robot.links) == NESTED_LINKS + NESTED_FRAMES
    joints = {name: (j.parent, j.child, j.joint_type) for name, j in robot.joints.items()}
    assert joints == {
        "arm::shoulder": ("arm::base", "arm::upper", "revolute"),
        "arm::wrist::roll": ("arm::wrist::mount", "arm::wrist::flange", "continuous"),
        "arm::elbow": ("arm::upper", "arm::wrist::mount", "continuous"),
        "arm_mount": ("chassis", "arm::base", "fixed"),
        "pan": ("chassis", "sensor_head::body", "continuous"),
        # frames hang from the link they are attached to: tcp (attached to wrist's
        # __model__) and camera (attached to arm::wrist) from wrist's canonical link flange
        "arm::wrist::tcp": ("arm::wrist::flange", "arm::wrist::tcp", "fixed"),
        "camera": ("arm::wrist::flange", "camera", "fixed"),
        "sensor_head::plate": ("sensor_head::body", "sensor_head::plate", "fixed"),
    }
    assert robot.root == "chassis" and robot.warnings == []
    text = NESTED.read_text()
    assert robot.joints["arm::elbow"].line == line_with(text, '<joint name="elbow"')


def test_nested_model_poses_relative_to_and_placement_frame_at_zero() -> None:
    robot = Robot.load(NESTED)
    zero = nested_zero()
    expected = in_root(robot, {name: zero[name] for name in NESTED_LINKS + NESTED_FRAMES})
    assert_poses(robot.link_fk(), expected)
    assert_poses(compose_fk(robot), expected)


@settings(max_examples=25, deadline=None)
@given(st.floats(-1.0, 1.0), st.floats(-3.0, 3.0), st.floats(-3.0, 3.0), st.floats(-3.0, 3.0))
def test_nested_robot_moves_about_axes_in_the_nested_frames(
    shoulder: float, elbow: float, roll: float, pan: float
) -> None:
    """shoulder turns about arm's x (expressed_in its __model__) through upper; elbow about
    the wrist model frame's y (the joint is posed relative_to wrist::__model__) through the
    wrist origin; roll about flange's z; pan about body's z."""
    robot = Robot.load(NESTED)
    zero = nested_zero()
    s_shoulder = screw(zero["arm"][:3, :3] @ X, zero["arm::upper"][:3, 3], shoulder)
    s_elbow = screw(zero["arm::wrist"][:3, :3] @ Y, zero["arm::wrist"][:3, 3], elbow)
    flange = zero["arm::wrist::flange"]
    s_roll = screw(flange[:3, :3] @ Z, flange[:3, 3], roll)
    body = zero["sensor_head::body"]
    s_pan = screw(body[:3, :3] @ Z, body[:3, 3], pan)
    moved = {
        "chassis": zero["chassis"],
        "arm::base": zero["arm::base"],
        "arm::upper": s_shoulder @ zero["arm::upper"],
        "arm::wrist::mount": s_shoulder @ s_elbow @ zero["arm::wrist::mount"],
        "sensor_head::body": s_pan @ body,
        "sensor_head::plate": s_pan @ zero["sensor_head::plate"],
    }
    for name in ("arm::wrist::flange", "arm::wrist::tcp", "camera"):
        moved[name] = s_shoulder @ s_elbow @ s_roll @ zero[name]
    cfg = {"arm::shoulder": shoulder, "arm::elbow": elbow, "arm::wrist::roll": roll, "pan": pan}
    assert_poses(robot.link_fk(cfg), in_root(robot, moved))


NESTED_ERRORS = [
    (
        '<link name="a"/>\n<model name="inner">\n<link name="b"/>\n</model>\n'
        '<joint name="j" type="fixed">\n<parent>a</parent>\n<child>b</child>\n</joint>',
        "<child>b",
        r"joint 'j': child 'b' is not a link or frame of the model",
    ),
    (
        '<link name="a"/>\n<model name="inner">\n<link name="b"/>\n'
        '<link name="c"><pose relative_to="a">0 0 0 0 0 0</pose></link>\n</model>',
        '<link name="c"',
        r"link 'inner::c': unknown frame 'inner::a'",  # names inside refer inside only
    ),
    (
        '<link name="a"/>\n<model name="inner" canonical_link="zz">\n<link name="b"/>\n</model>',
        '<model name="inner"',
        r"model 'inner': canonical_link 'zz' is not a link of the model",
    ),
    (
        '<link name="inner"/>\n<model name="inner">\n<link name="b"/>\n</model>',
        '<model name="inner"',
        r"model 'inner': name 'inner' is already used by link at line 3",
    ),
    (
        '<link name="a"/>\n<model name="inner" placement_frame="nope">\n'
        '<pose>0 0 1 0 0 0</pose>\n<link name="b"/>\n</model>',
        '<model name="inner"',
        r"model 'inner': unknown frame 'inner::nope'",
    ),
]


@pytest.mark.parametrize("body,needle,message", NESTED_ERRORS)
def test_nested_model_errors_name_line_and_scoped_element(
    body: str, needle: str, message: str
) -> None:
    text = sdf(body, "1.9")
    with pytest.raises(ModelError, match=rf"^<string>:{line_with(text, needle)}: {message}"):
        Robot.from_xml_string(text)


def test_a_model_made_only_of_nested_models_takes_the_first_ones_canonical_link() -> None:
    """libsdformat's Model::CanonicalLinkAndRelativeName: no link of its own, so the canonical
    link of the first nested model, depth first; the model frame is attached to it."""
    body = (
        '<model name="outer"><model name="inner"><link name="l1"/></model>'
        '<model name="side"><link name="l2"/></model></model>\n'
        '<model name="other"><link name="l3"/></model>\n'
        '<frame name="marker"><pose>1 0 0 0 0 0</pose></frame>'
    )
    robot = Robot.from_xml_string(sdf(body, "1.9"))
    assert robot.root == "outer::inner::l1"
    assert robot.joints["marker"].parent == "outer::inner::l1"
    np.testing.assert_allclose(robot.joints["marker"].origin, pose((1, 0, 0)), atol=1e-12)


# -- includes -------------------------------------------------------------------------------------


def test_included_robot_matches_the_same_robot_written_inline(gazebo_env: Path) -> None:
    """rover.sdf (model://, a nested include, merge, a relative path, package://,
    placement_frame) and rover_inline.sdf: the same names, tree and poses."""
    included, inline = Robot.load(ROVER), Robot.load(ROVER_INLINE)
    assert list(included.links) == list(inline.links)
    assert {n: (j.parent, j.child, j.joint_type) for n, j in included.joints.items()} == {
        n: (j.parent, j.child, j.joint_type) for n, j in inline.joints.items()
    }
    assert included.warnings == inline.warnings == []
    rng = np.random.default_rng(7)
    for _ in range(20):
        cfg = {
            "arm::shoulder": rng.uniform(-1, 1),
            "arm::elbow": rng.uniform(-3, 3),
            "arm::gripper::slide": rng.uniform(0, 0.04),
            "flap_hinge": rng.uniform(-3, 3),
            "camera::tilt": rng.uniform(-3, 3),
        }
        assert_poses(included.link_fk(cfg), inline.link_fk(cfg))


def rover_moved(cfg: dict[str, float]) -> dict[str, np.ndarray]:
    """rover.sdf at ``cfg`` (absent joints at 0), composed by hand in its model frame, each
    file's meaning applied: the include's pose in degrees, the 1.6 gripper's slide axis in
    its own model frame, the merged bumper's poses from its proxy frame, the camera placed by
    its lens (tilt turns the lens about its own y)."""
    chassis = pose((0, 0, 0.3))
    arm = chassis @ pose((0.2, 0, 0.1), (0, 0, HALF_PI))
    upper = arm @ pose((0, 0, 0.1))
    gripper = upper @ pose((0, 0, 0.4), (0.3, 0, 0))
    proxy = chassis @ pose((0.4, 0, -0.1))
    flap = proxy @ pose((0.1, 0, 0.05))
    lens = chassis @ pose((0, 0, 0.25))
    s_shoulder = screw(arm[:3, :3] @ X, upper[:3, 3], cfg.get("arm::shoulder", 0.0))
    s_elbow = screw(gripper[:3, :3] @ Y, gripper[:3, 3], cfg.get("arm::elbow", 0.0))
    s_slide = screw(gripper[:3, :3] @ Y, (0, 0, 0), 0.0, cfg.get("arm::gripper::slide", 0.0))
    s_flap = screw(Y, flap[:3, 3], cfg.get("flap_hinge", 0.0))
    s_tilt = screw(Y, lens[:3, 3], cfg.get("camera::tilt", 0.0))
    return {
        "chassis": chassis,
        "arm::base": arm,
        "arm::upper": s_shoulder @ upper,
        "arm::gripper::palm": s_shoulder @ s_elbow @ gripper @ pose((0, 0, -0.05)),
        "arm::gripper::finger": s_shoulder
        @ s_elbow
        @ s_slide
        @ gripper
        @ pose((0, 0.02, 0.03), (0, 0, HALF_PI)),
        "bar": proxy @ pose((0, 0, 0.05)),
        "flap": s_flap @ flap,
        "bumper_tip": proxy @ pose((0.15, 0, 0)),
        "camera::body": lens @ pose((-0.03, 0, 0)),
        "camera::lens": s_tilt @ lens,
    }


ROVER_CFG = {
    "arm::shoulder": 0.4,
    "arm::elbow": -1.2,
    "arm::gripper::slide": 0.03,
    "flap_hinge": 0.7,
    "camera::tilt": -0.5,
}


def test_included_robot_poses_composed_by_hand(gazebo_env: Path) -> None:
    robot = Robot.load(ROVER)
    assert_poses(robot.link_fk(), in_root(robot, rover_moved({})))
    assert_poses(robot.link_fk(ROVER_CFG), in_root(robot, rover_moved(ROVER_CFG)))
    assert robot.joints["bumper_tip"].parent == "bar"  # the proxy frame is attached to bar


def test_model_config_names_the_newest_supported_sdf(gazebo_env: Path) -> None:
    """gz_arm/model.config lists 1.6, 1.9 and 1.12: 1.9 (model.sdf) is read, as
    libsdformat's getBestSupportedModelVersion picks; gz_gripper's names gripper.sdf."""
    robot = Robot.load(ROVER)
    assert "arm::base" in robot.links and "arm::old_base" not in robot.links
    assert "arm::gripper::palm" in robot.links


@pytest.mark.parametrize("variable", RESOURCE_VARIABLES)
def test_each_resource_path_variable_finds_model_uris(
    variable: str, monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    for other in RESOURCE_VARIABLES:
        monkeypatch.delenv(other, raising=False)
    monkeypatch.setenv(variable, os.pathsep.join([str(tmp_path / "nothing"), str(MODELS_DIR)]))
    robot = Robot.from_xml_string(sdf("<include><uri>model://gz_gripper</uri></include>", "1.9"))
    assert list(robot.links) == ["gz_gripper::palm", "gz_gripper::finger"]


def test_resource_roots_are_searched_in_order(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """GZ_SIM_RESOURCE_PATH before IGN_GAZEBO_RESOURCE_PATH before SDF_PATH, each in order."""
    for index, variable in enumerate(RESOURCE_VARIABLES):
        folder = tmp_path / variable / "thing"
        folder.mkdir(parents=True)
        link = f"from_{variable.lower()}"
        (folder / "model.sdf").write_text(
            f'<sdf version="1.9"><model name="thing"><link name="{link}"/></model></sdf>'
        )
        if index > 0:
            monkeypatch.setenv(variable, str(tmp_path / variable))
        else:
            monkeypatch.delenv(variable, raising=False)
    text = sdf("<include><uri>model://thing</uri></include>", "1.9")
    assert list(Robot.from_xml_string(text).links) == ["thing::from_ign_gazebo_resource_path"]
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(tmp_path / "GZ_SIM_RESOURCE_PATH"))
    assert list(Robot.from_xml_string(text).links) == ["thing::from_gz_sim_resource_path"]


def test_package_uri_resolves_through_the_ament_index(gazebo_env: Path) -> None:
    text = sdf("<include><uri>package://jtp_sensors/models/camera.sdf</uri></include>", "1.9")
    assert list(Robot.from_xml_string(text).links) == ["camera::body", "camera::lens"]


def test_file_uris_absolute_and_relative_paths(
    gazebo_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """file:// and absolute paths as they are; relative ones from the including file's
    folder, or for text from the working directory."""
    bumper = MODELS_DIR / "bumper" / "model.sdf"
    links = ["bumper::bar", "bumper::flap", "bumper::bumper_tip"]
    for uri in (f"file://{bumper}", str(bumper), str(bumper.parent)):
        text = sdf(f"<include><uri>{uri}</uri></include>", "1.9")
        assert list(Robot.from_xml_string(text).links) == links
    text = sdf('<link name="a"/>\n<include><uri>models/bumper</uri></include>', "1.9")
    monkeypatch.chdir(GAZEBO_DIR)
    assert "bumper::bar" in Robot.from_xml_string(text).links
    outside = gazebo_env / "robot.sdf"
    outside.write_text(text)
    with pytest.raises(ModelError, match=re.escape(f"{outside}:4: <include>: cannot include")):
        Robot.load(outside)  # relative to the file's folder, not the working directory


def test_a_missing_include_names_the_include_line_and_the_paths_searched(
    gazebo_env: Path,
) -> None:
    text = sdf('<link name="a"/>\n<include>\n<uri>model://no_such_model</uri>\n</include>', "1.9")
    searched = re.escape(str(MODELS_DIR / "no_such_model"))
    with pytest.raises(
        ModelError,
        match=rf"^<string>:{line_with(text, '<uri>')}: <include>: cannot include "
        rf"'model://no_such_model': not found \(searched {searched}\)$",
    ):
        Robot.from_xml_string(text)
    text = sdf('<link name="a"/>\n<include><uri>package://nope/x.sdf</uri></include>', "1.9")
    with pytest.raises(ModelError, match=r"cannot include 'package://nope/x.sdf': not found"):
        Robot.from_xml_string(text)


def test_errors_inside_an_included_file_name_that_file_and_line(tmp_path: Path) -> None:
    bad = tmp_path / "bad.sdf"
    bad_text = sdf(
        '<link name="a"/>\n<link name="b"/>\n<joint name="j" type="revolute">\n'
        "<parent>a</parent><child>b</child>\n<axis>\n<xyz>0 0 0</xyz>\n</axis>\n</joint>",
        "1.9",
    )
    bad.write_text(bad_text)
    top = tmp_path / "top.sdf"
    top.write_text(sdf('<link name="x"/>\n<include><uri>bad.sdf</uri></include>', "1.9"))
    with pytest.raises(
        ModelError, match=rf"^{re.escape(str(bad))}:{line_with(bad_text, '<xyz>')}: joint 'm::j'"
    ):
        Robot.load(top)
    broken = tmp_path / "broken.sdf"
    broken.write_text('<sdf version="1.9">\n<model name="m">\n<link name="a">\n</model></sdf>')
    top.write_text(sdf('<link name="x"/>\n<include><uri>broken.sdf</uri></include>', "1.9"))
    with pytest.raises(ModelError, match=rf"^{re.escape(str(broken))}:4: malformed XML"):
        Robot.load(top)


def test_model_checks_on_included_joints_name_the_included_file(tmp_path: Path) -> None:
    """The checks shared with URDF (here a mimic cycle) report by joint: the file is the
    one the joint was written in."""
    part = tmp_path / "part.sdf"
    mimic = '<mimic joint="{}"><multiplier>1</multiplier></mimic>'
    joints = "\n".join(
        f'<joint name="{name}" type="revolute"><parent>a</parent><child>{child}</child>'
        f"<axis><xyz>0 0 1</xyz>{mimic.format(leader)}</axis></joint>"
        for name, child, leader in (("j1", "b", "j2"), ("j2", "c", "j1"))
    )
    part.write_text(sdf(f'<link name="a"/><link name="b"/><link name="c"/>\n{joints}', "1.11"))
    top = tmp_path / "top.sdf"
    top.write_text(sdf('<link name="x"/>\n<include><uri>part.sdf</uri></include>', "1.11"))
    with pytest.raises(ModelError, match=rf"^{re.escape(str(part))}:4: joint 'm::j1': mimic"):
        Robot.load(top)


def test_include_cycles_and_depth_are_refused(tmp_path: Path) -> None:
    for name, other in (("a", "b"), ("b", "a")):
        (tmp_path / f"{name}.sdf").write_text(
            sdf(f'<link name="l"/>\n<include><uri>{other}.sdf</uri></include>', "1.9")
        )
    a, b = tmp_path / "a.sdf", tmp_path / "b.sdf"
    with pytest.raises(ModelError, match=re.escape(f"{b}:4: <include>: include cycle: {a} -> ")):
        Robot.load(a)
    for level in range(MAX_INCLUDE_DEPTH + 2):
        (tmp_path / f"deep{level}.sdf").write_text(
            sdf(f'<link name="l"/>\n<include><uri>deep{level + 1}.sdf</uri></include>', "1.9")
        )
    with pytest.raises(ModelError, match=f"includes nested more than {MAX_INCLUDE_DEPTH} files"):
        Robot.load(tmp_path / "deep0.sdf")


def test_included_files_go_through_the_hardened_parser(tmp_path: Path) -> None:
    """An external entity in an included file is not resolved: no file content leaks in."""
    secret = tmp_path / "secret.txt"
    secret.write_text("TOPSECRET")
    evil = tmp_path / "evil.sdf"
    evil.write_text(
        f'<!DOCTYPE sdf [<!ENTITY leak SYSTEM "file://{secret}">]>\n'
        '<sdf version="1.9"><model name="e"><link name="x&leak;"/></model></sdf>'
    )
    top = tmp_path / "top.sdf"
    top.write_text(sdf('<link name="a"/>\n<include><uri>evil.sdf</uri></include>', "1.9"))
    try:
        robot = Robot.load(top)
    except ModelError as error:
        assert "TOPSECRET" not in str(error)
    else:
        assert not any("TOPSECRET" in name for name in robot.links)


def test_include_overrides_and_their_errors(gazebo_env: Path) -> None:
    text = sdf(
        '<link name="a"/>\n<include>\n<uri>model://gz_gripper</uri>\n'
        "<placement_frame>finger</placement_frame>\n</include>",
        "1.9",
    )
    with pytest.raises(
        ModelError,
        match=rf":{line_with(text, '<placement_frame>')}: <include>: <placement_frame> needs "
        "a <pose>",
    ):
        Robot.from_xml_string(text)
    text = sdf('<link name="a"/>\n<include>\n<uri>https://fuel.x/m</uri>\n</include>', "1.9")
    with pytest.raises(ModelError, match=r"a web address \(Gazebo Fuel\) is never fetched"):
        Robot.from_xml_string(text)


def test_merge_needs_1_9_and_is_an_ordinary_include_before(gazebo_env: Path) -> None:
    text = sdf('<link name="a"/>\n<include merge="true"><uri>model://bumper</uri></include>', "1.8")
    robot = Robot.from_xml_string(text)
    assert "bumper::bar" in robot.links
    assert any("'merge' needs SDFormat 1.9 or later; ignored" in w for w in robot.warnings)


# -- worlds -------------------------------------------------------------------------------------


def test_a_world_with_scenery_gives_its_one_robot(gazebo_env: Path) -> None:
    """world.sdf: a light, an included ground plane (static), a Fuel model (not fetched:
    warned, left out), a static table, a free crate without joints and the included rover."""
    robot = Robot.load(WORLD)
    assert robot.name == "rover"
    assert list(robot.links) == list(Robot.load(ROVER).links)
    line = line_with(WORLD.read_text(), "<uri>https://")
    assert any(
        f"world.sdf:{line - 1}: <include>: left out as scenery: cannot include 'https://" in w
        for w in robot.warnings
    )
    assert Robot.load(WORLD, model_name="crate").name == "crate"
    assert Robot.load(WORLD, model_name="ground_plane").name == "ground_plane"


def test_world_models_are_judged_with_their_includes(gazebo_env: Path) -> None:
    """An inline world model whose joints all come from an include is the robot; a model that
    cannot be read is scenery unless model_name asks for it, which then gives the error."""
    text = (
        '<sdf version="1.9">\n<world name="w">\n'
        '<model name="robot"><include><uri>model://gz_gripper</uri></include></model>\n'
        '<model name="cart"><include><uri>model://missing</uri></include></model>\n'
        "<include><uri>model://nowhere</uri><name>ghost</name></include>\n"
        '<model name="box"><link name="b"/></model>\n</world>\n</sdf>'
    )
    robot = Robot.from_xml_string(text)
    assert list(robot.links) == ["gz_gripper::palm", "gz_gripper::finger"]
    assert robot.name == "robot"
    for line, name in ((4, "cart"), (5, "ghost")):
        assert any(f"<string>:{line}: " in w and "left out as scenery" in w for w in robot.warnings)
        with pytest.raises(ModelError, match=rf"^<string>:{line}: <include>: cannot include"):
            Robot.from_xml_string(text, model_name=name)


WORLD_ERRORS = [
    (
        '<model name="r1"><link name="a"/><link name="b"/>'
        '<joint name="j" type="fixed"><parent>a</parent><child>b</child></joint></model>\n'
        '<model name="r2"><link name="a"/><link name="b"/>'
        '<joint name="j" type="fixed"><parent>a</parent><child>b</child></joint></model>',
        r"2 non-static models with joints could be the robot: 'r1' \(line 3\), 'r2' "
        r"\(line 4\); choose one with model_name",
    ),
    (
        '<model name="a"><link name="x"/></model>\n<model name="b"><link name="y"/></model>',
        r"2 non-static models could be the robot: 'a' \(line 3\), 'b' \(line 4\)",
    ),
    (
        '<model name="t"><static>true</static><link name="x"/></model>\n'
        "<include><uri>model://nowhere</uri></include>",
        r"no model that could be the robot: every model is static \(static: 't' \(line 3\)\); "
        r"not read: 'model://nowhere' \(line 4\)",
    ),
]


@pytest.mark.parametrize("body,message", WORLD_ERRORS)
def test_world_without_one_clear_robot_lists_the_candidates(
    body: str, message: str, gazebo_env: Path
) -> None:
    text = f'<sdf version="1.9">\n<world name="w">\n{body}\n</world>\n</sdf>'
    with pytest.raises(ModelError, match=rf"^<string>:2: world 'w': {message}"):
        Robot.from_xml_string(text)


def test_a_robot_fixed_to_the_world_sits_at_its_include_pose(
    gazebo_env: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An included model's <pose> (the include's) places it in the world: the link world
    is the root, and the model's links sit at that pose in it."""
    text = (
        '<sdf version="1.9"><world name="w"><include><uri>model://fixed_arm</uri>'
        "<pose>1 2 0 0 0 0.5</pose></include></world></sdf>"
    )
    folder = gazebo_env / "models" / "fixed_arm"
    folder.mkdir(parents=True)
    (folder / "model.sdf").write_text(
        sdf(
            '<link name="base"><pose>0 0 0.1 0 0 0</pose></link><link name="tip"/>'
            '<joint name="anchor" type="fixed"><parent>world</parent><child>base</child></joint>'
            '<joint name="j" type="revolute"><parent>base</parent><child>tip</child></joint>',
            "1.9",
        )
    )
    monkeypatch.setenv("GZ_SIM_RESOURCE_PATH", str(gazebo_env / "models"))
    robot = Robot.from_xml_string(text)
    assert robot.root == "world"
    expected = pose((1, 2, 0), (0, 0, 0.5)) @ pose((0, 0, 0.1))
    np.testing.assert_allclose(robot.link_fk()["base"], expected, atol=1e-12)
    assert math.isclose(robot.link_fk()["tip"][2, 3], 0.0, abs_tol=1e-12)


# -- what libsdformat reads, and what it refuses that can still be published ---------------------


def warnings_at(robot: Robot, line: int, text: str) -> list[str]:
    return [w for w in robot.warnings if f"<string>:{line}: " in w and text in w]


STATIC_SIGN = (
    '<link name="a"/>\n<model name="sign">\n<static>true</static>\n<pose>1 0 0 0 0 0</pose>\n'
    '<frame name="tip"><pose>0 0 1 0 0 0</pose></frame>\n</model>'
)


def test_a_static_nested_model_without_links_loads() -> None:
    """libsdformat requires a link only of a model that is not static: a static nested model
    without one is fixed to the world, so what is attached to it is not published here (a
    warning for each frame), and a joint to it is an error."""
    text = sdf(STATIC_SIGN, "1.9")
    robot = Robot.from_xml_string(text)
    assert list(robot.links) == ["a"] and robot.joints == {}
    assert warnings_at(
        robot,
        line_with(text, '<frame name="tip"'),
        "frame 'sign::tip': fixed to a static model without links; not published",
    )
    assert len(robot.warnings) == 1
    moving = text.replace("<static>true</static>", "<static>false</static>")
    with pytest.raises(ModelError, match=r"model 'sign': model has no links"):
        Robot.from_xml_string(moving)
    jointed = sdf(
        STATIC_SIGN + '\n<joint name="j" type="fixed">\n<parent>sign</parent>\n'
        "<child>a</child>\n</joint>",
        "1.9",
    )
    with pytest.raises(
        ModelError,
        match=rf"^<string>:{line_with(jointed, '<parent>sign')}: joint 'j': 'sign' is fixed "
        "to a static model without links; a joint needs a link",
    ):
        Robot.from_xml_string(jointed)


ROBOT_MODEL = (
    '<model name="{name}"><link name="a"/><link name="b"><pose>0 0 1 0 0 0</pose></link>'
    '<joint name="j" type="revolute"><parent>a</parent><child>b</child></joint></model>'
)
BOX = '<model name="box"><static>true</static><link name="x"/></model>'


def test_two_models_of_the_robots_name_are_an_error() -> None:
    """model_name (or the rule that finds the robot) cannot tell two models of one name apart:
    an error naming both (libsdformat refuses duplicate model names too)."""
    robot = ROBOT_MODEL.format(name="robot")

    def message(first: int, second: int) -> str:
        return (
            rf"^<string>:{second}: model 'robot': 2 models are named 'robot': 'robot' "
            rf"\(line {first}\), 'robot' \(line {second}\); model names must be unique"
        )

    in_world = f'<sdf version="1.9">\n<world name="w">\n{robot}\n{robot}\n</world>\n</sdf>'
    with pytest.raises(ModelError, match=message(3, 4)):
        Robot.from_xml_string(in_world, model_name="robot")
    in_sdf = f'<sdf version="1.9">\n{robot}\n{robot}\n</sdf>'
    with pytest.raises(ModelError, match=message(2, 3)):
        Robot.from_xml_string(in_sdf)


def world(*models: str, version: str = "1.9") -> str:
    """A world of ``models``, one a line from line 3."""
    return "\n".join(
        [f'<sdf version="{version}">', '<world name="w">', *models, "</world>", "</sdf>"]
    )


PUBLISHABLE_FLAWS = [
    # (text, needle for the line, warning), each refused by libsdformat
    (
        world(ROBOT_MODEL.format(name="robot"), BOX, BOX.replace('"x"', '"y"')),
        '<link name="y"',
        "model 'box': another model is named 'box' (line 4); libsdformat refuses duplicate "
        "model names",
    ),
    (
        world(ROBOT_MODEL.format(name="robot"), BOX.replace("<link", "<pose>1 2</pose><link")),
        "<pose>1 2",
        "model 'box': <pose> needs 6 numbers, got 2; libsdformat refuses it, but the model is "
        "not the robot",
    ),
    (
        '<sdf version="1.9">\n'
        + ROBOT_MODEL.format(name="robot")
        + "\n"
        + ROBOT_MODEL.format(name="spare")
        + "\n</sdf>",
        '<model name="spare"',
        "<sdf>: 2 <model>s in <sdf>, where libsdformat allows one (and reads the first, 'robot')",
    ),
    (
        ROBOT_MODEL.format(name="robot")
        .replace("<link", '\n<pose relative_to="b">0 0 1 0 0 0</pose>\n<link', 1)
        .join(['<sdf version="1.9">\n', "\n</sdf>"]),
        "<pose relative_to",
        "model 'robot': relative_to 'b' is not allowed on a model in <sdf> (libsdformat refuses "
        "it); ignored",
    ),
    (
        world(
            ROBOT_MODEL.format(name="robot").replace(
                "<link", '<pose relative_to="box">0 0 1 0 0 0</pose><link', 1
            ),
            BOX,
        ),
        "<pose relative_to",
        "model 'robot': relative_to 'box' names a frame of the world, which is not read: the "
        "pose is taken in the world frame",
    ),
    (
        ROBOT_MODEL.format(name="robot")
        .replace("<link", "\n<pose>0 0 nan 0 0 0</pose>\n<link", 1)
        .join(['<sdf version="1.9">\n', "\n</sdf>"]),
        "<pose>0 0 nan",
        "model 'robot': <pose> must be finite, got nan; unused (no joint to world), so ignored",
    ),
    (
        ROBOT_MODEL.format(name="robot")
        .replace('name="robot"', 'name="robot" placement_frame="nope"')
        .join(['<sdf version="1.9">\n', "\n</sdf>"]),
        '<model name="robot"',
        "model 'robot': placement_frame 'nope': unknown frame 'nope'; ignored (libsdformat "
        "refuses it)",
    ),
]


@pytest.mark.parametrize(
    "text,needle,message",
    PUBLISHABLE_FLAWS,
    ids=[
        "scenery_duplicate_names",
        "scenery_malformed_pose",
        "two_models_in_sdf",
        "sdf_model_pose_relative_to",
        "world_model_pose_relative_to",
        "unused_malformed_model_pose",
        "unknown_placement_frame",
    ],
)
def test_what_libsdformat_refuses_but_can_be_published_loads_with_a_warning(
    text: str, needle: str, message: str
) -> None:
    """Never silently: each flaw libsdformat refuses gives one warning naming its line; the
    robot loads with the poses its own elements give."""
    robot = Robot.from_xml_string(text)
    assert warnings_at(robot, line_with(text, needle), message), robot.warnings
    assert list(robot.links) == ["a", "b"]
    assert_poses(
        robot.link_fk({"j": 0.5}), {"a": pose(), "b": screw(Z, (0, 0, 1), 0.5) @ pose((0, 0, 1))}
    )


def test_an_unknown_placement_frame_of_a_robot_fixed_to_the_world_is_ignored() -> None:
    """With a joint to world the model's <pose> places the model frame itself (with a warning)
    where its placement_frame names nothing (libsdformat refuses the file)."""
    text = (
        '<sdf version="1.9">\n<model name="m" placement_frame="nope">\n'
        "<pose>1 0 0 0 0 0</pose>\n"
        '<link name="a"/>\n<joint name="anchor" type="fixed"><parent>world</parent>'
        "<child>a</child></joint>\n</model>\n</sdf>"
    )
    robot = Robot.from_xml_string(text)
    assert warnings_at(robot, 2, "placement_frame 'nope': unknown frame 'nope'; ignored")
    assert_poses(robot.link_fk(), {"world": pose(), "a": pose((1, 0, 0))})
