"""pipeline: the node's policy, driven directly, without rclpy or DDS.

Joint states go in as (stamp, names, positions); what comes out is checked against the model's
own ``Joint.child_pose`` (model code, independent of the compiled kinematics) and scipy's
rotations. Logs go to a recording logger, time to a settable clock.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest
from repo_paths import TEST_DIR
from scipy.spatial.transform import Rotation

from joint_tf_publisher import Robot
from joint_tf_publisher.health.model import GraphFacts, Key
from joint_tf_publisher.health.reporting import Reporter, Throttle
from joint_tf_publisher.kinematics import MessagePlan
from joint_tf_publisher.node_core.cdr import Publication
from joint_tf_publisher.node_core.parameters import Settings
from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
PLANAR_URDF = TEST_DIR / "urdf" / "mobile_base_planar.urdf"
ALL_TYPES_URDF = TEST_DIR / "urdf" / "all_joint_types.urdf"
TOLERANCE = 1e-9
MS = 1_000_000  # one millisecond in ns
T0 = 1_700_000_000 * 1_000_000_000  # a plausible stamp, ns
FOLLOWERS = {"right_knuckle", "left_inner_finger", "right_inner_finger"}


class RecordingLogger:
    """The logger calls the node makes, recorded as (level, text)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, message: str) -> None:
        self.lines.append(("info", message))

    def warning(self, message: str) -> None:
        self.lines.append(("warning", message))

    def error(self, message: str) -> None:
        self.lines.append(("error", message))

    def containing(self, text: str) -> list[tuple[str, str]]:
        return [line for line in self.lines if text in line[1]]


class Clock:
    """A settable node clock, ns, and a settable monotonic clock for throttling, s."""

    def __init__(self) -> None:
        self.now_ns = 42 * 1_000_000_000
        self.monotonic_s = 0.0


class Rig:
    """A pipeline with a model, its logger and clocks."""

    def __init__(self, path: Any = ARM_URDF, **settings: Any) -> None:
        self.robot = Robot.load(path)
        self.logger = RecordingLogger()
        self.clock = Clock()
        reporter = Reporter(self.logger, Throttle(10.0, lambda: self.clock.monotonic_s))
        self.pipeline = JointStatePipeline(
            Settings(**settings), reporter, lambda: self.clock.now_ns
        )
        self.pipeline.install(LoadedModel(self.robot, path.read_text()))

    def send(
        self, names: Sequence[str], values: Sequence[float], stamp_ns: int = T0
    ) -> Publication | None:
        return self.pipeline.joint_state(stamp_ns, tuple(names), np.array(values, dtype=float))


def poses(publication: Publication) -> dict[str, tuple[str, np.ndarray]]:
    """child frame -> (parent frame, pose (4, 4)), from a publication's arrays."""
    result = {}
    for (parent, child), t, q in zip(
        publication.layout.frames,
        publication.translations,
        publication.quaternions,
        strict=True,
    ):
        pose = np.eye(4)
        pose[:3, :3] = Rotation.from_quat(q).as_matrix()
        pose[:3, 3] = t
        result[child] = (parent, pose)
    return result


def assert_pose(publication: Publication, robot: Robot, joint_name: str, value: Any) -> None:
    joint = robot.joints[joint_name]
    parent, pose = poses(publication)[joint.child]
    assert parent == joint.parent
    np.testing.assert_allclose(pose, joint.child_pose(value), atol=TOLERANCE)


@pytest.fixture
def arm() -> Rig:
    return Rig()


# -- one message, one publication ---------------------------------------------------------------


def test_a_message_publishes_its_joints_and_their_mimic_followers(arm: Rig) -> None:
    publication = arm.send(["joint_1", "finger_joint"], [0.3, 0.6])
    assert publication is not None and publication.stamp_ns == T0
    assert {child for _, child in publication.layout.frames} == {
        "link_1",
        "left_knuckle",
    } | FOLLOWERS
    assert_pose(publication, arm.robot, "joint_1", 0.3)
    assert_pose(publication, arm.robot, "finger_joint", 0.6)
    # right_inner_finger follows right_knuckle (x 1), which follows finger_joint (x -1).
    assert_pose(publication, arm.robot, "right_knuckle_joint", -0.6)
    assert_pose(publication, arm.robot, "right_inner_finger_joint", -0.6)
    assert arm.logger.lines == []


def test_a_value_for_a_mimic_joint_wins_clamped_like_any(arm: Rig) -> None:
    """The measurement wins, as in robot_state_publisher; right_knuckle_joint's own limits
    are [-0.8, 0] (its leader finger_joint's x -1 would say -0.5)."""
    publication = arm.send(["right_knuckle_joint", "finger_joint"], [-0.1, 0.5])
    assert publication is not None
    assert_pose(publication, arm.robot, "right_knuckle_joint", -0.1)
    assert_pose(publication, arm.robot, "right_inner_finger_joint", -0.1)  # follows it (x 1)
    clamped = arm.send(["right_knuckle_joint", "finger_joint"], [0.1, 0.4], T0 + 100 * MS)
    assert clamped is not None
    assert_pose(clamped, arm.robot, "right_knuckle_joint", 0.0)
    assert arm.logger.containing("clamped to their hard limits")
    only_follower = arm.send(["right_knuckle_joint"], [-0.2], T0 + 200 * MS)
    assert only_follower is not None
    assert {child for _, child in only_follower.layout.frames} == {
        "right_knuckle",
        "right_inner_finger",
    }
    assert_pose(only_follower, arm.robot, "right_inner_finger_joint", -0.2)


def test_unknown_names_are_ignored_and_each_reported_once(arm: Rig) -> None:
    publication = arm.send(["no_such_joint", "joint_2", "end_effector"], [1.0, 0.2, 0.0])
    assert publication is not None
    assert [child for _, child in publication.layout.frames] == ["link_2"]
    arm.send(["no_such_joint", "joint_2"], [1.0, 0.3], T0 + 100 * MS)
    assert arm.logger.containing("not moving joints") == [
        (
            "info",
            "ignoring names that are not moving joints of the robot: no_such_joint, end_effector",
        )
    ]


def test_names_and_positions_of_different_lengths_are_dropped(arm: Rig) -> None:
    assert arm.pipeline.joint_state(T0, ("joint_1", "joint_2"), np.array([1.0])) is None
    assert arm.pipeline.joint_state(T0, ("joint_1",), np.array([1.0, 2.0])) is None
    (line,) = arm.logger.lines  # throttled: one line
    assert line[0] == "warning" and "JointState dropped: 2 names but 1 positions" in line[1]


def test_without_a_model_nothing_is_published() -> None:
    logger = RecordingLogger()
    pipeline = JointStatePipeline(Settings(), Reporter(logger), lambda: 0)
    assert pipeline.joint_state(T0, ("a",), np.array([1.0])) is None
    assert pipeline.static_publication(T0) is None
    assert pipeline.default_positions() is None
    assert logger.containing("joint states ignored: no robot description loaded yet")


# -- values: clamping and rejection ---------------------------------------------------------------


def test_hard_limits_clamp_by_default_and_clamps_are_counted(arm: Rig) -> None:
    upper = arm.robot.joints["joint_1"].limit.upper
    publication = arm.send(["joint_1"], [5.0])
    assert publication is not None
    assert_pose(publication, arm.robot, "joint_1", upper)
    arm.send(["joint_1"], [6.0], T0 + 100 * MS)
    arm.clock.monotonic_s = 11.0
    arm.send(["joint_1"], [7.0], T0 + 200 * MS)
    assert [text for _, text in arm.logger.containing("clamped")] == [
        "joint values clamped to their hard limits, counts since start: joint_1 (1x)",
        "joint values clamped to their hard limits, counts since start: joint_1 (3x)",
    ]


@pytest.mark.parametrize(("clamp", "expected"), [("soft", 2.9), ("none", 2.95)])
def test_soft_limits_and_no_clamping(clamp: str, expected: float) -> None:
    rig = Rig(clamp=clamp)
    publication = rig.send(["joint_1"], [2.95])
    assert publication is not None
    assert_pose(publication, rig.robot, "joint_1", expected)


def test_rejected_values_are_not_published_and_the_joint_keeps_its_last_good_value(
    arm: Rig,
) -> None:
    arm.send(["joint_5", "joint_6"], [0.5, 0.1])
    for k, bad in enumerate([math.nan, math.inf, -1e101]):
        publication = arm.send(["joint_5", "joint_6"], [bad, 0.4], T0 + (k + 1) * 100 * MS)
        assert publication is not None
        assert [child for _, child in publication.layout.frames] == ["link_6"]
        assert_pose(publication, arm.robot, "joint_6", 0.4)
    publication = arm.send(["joint_6"], [0.2], T0 + 900 * MS)
    assert publication is not None  # joint_5 was never published at a bad value
    (line,) = arm.logger.containing("joint values rejected (NaN, infinite, beyond +-1e100")
    assert line[0] == "warning" and "joint_5 (1x)" in line[1]


def test_a_clamp_mode_change_applies_to_the_next_message(arm: Rig) -> None:
    arm.pipeline.configure(Settings(clamp="soft"))
    publication = arm.send(["joint_2"], [2.4])
    assert publication is not None
    joint = arm.robot.joints["joint_2"]
    assert_pose(publication, arm.robot, "joint_2", joint.safety_controller.soft_upper_limit)


# -- rate limiting, stamps, clocks ---------------------------------------------------------


def published_stamps(rig: Rig, names: Sequence[str], stamps_ns: Sequence[int]) -> list[int]:
    """Send one message per stamp; the stamps that were published."""
    published = []
    for k, stamp in enumerate(stamps_ns):
        if rig.send(names, [0.01 * k] * len(names), stamp) is not None:
            published.append(stamp)
    return published


def test_rate_limited_in_message_time(arm: Rig) -> None:
    stamps = [T0 + 10 * MS * k for k in range(20)]  # 100 Hz; publish_frequency 20 Hz
    assert published_stamps(arm, ["joint_2"], stamps) == [T0 + 50 * MS * k for k in range(4)]


def test_the_limiter_is_keyed_on_the_joints_of_each_message(arm: Rig) -> None:
    """As robot_state_publisher: due when the message's least recently published joint is."""
    assert arm.send(["joint_1"], [0.1], T0) is not None
    assert arm.send(["joint_2"], [0.1], T0 + 10 * MS) is not None  # never published before
    assert arm.send(["joint_1"], [0.2], T0 + 20 * MS) is None
    assert arm.send(["joint_1", "joint_2"], [0.3, 0.3], T0 + 55 * MS) is not None
    assert arm.send(["joint_2"], [0.4], T0 + 60 * MS) is None  # joint_2 was just published


def test_a_dropped_message_costs_no_kinematics(arm: Rig, monkeypatch: pytest.MonkeyPatch) -> None:
    model = arm.pipeline.model
    assert model is not None
    calls: list[str] = []
    for owner, name in ((model.kin, "apply"), (model.kin, "joint_poses"), (MessagePlan, "resolve")):
        method = getattr(owner, name)

        def counted(*args: Any, _name: str = name, _method: Any = method, **kwargs: Any) -> Any:
            calls.append(_name)
            return _method(*args, **kwargs)

        monkeypatch.setattr(owner, name, counted)
    stamps = [T0 + MS * k for k in range(100)]  # 1 kHz for 100 ms: 2 due at 20 Hz
    assert len(published_stamps(arm, ["joint_1", "joint_2"], stamps)) == 2
    assert calls == ["resolve"] * 2  # values to poses in one kinematics call


def test_a_message_with_work_for_the_clamp_takes_the_general_path(arm: Rig) -> None:
    in_range = arm.send(["joint_1", "joint_2"], [0.1, 0.2], T0)
    beyond = arm.send(["joint_1", "joint_2"], [0.1, 100.0], T0 + 100 * MS)
    assert in_range is not None and beyond is not None
    assert arm.logger.containing("clamped")  # reported: the general path ran
    limits = arm.robot.joints["joint_2"].hard_limits()
    assert limits is not None
    assert_pose(beyond, arm.robot, "joint_2", limits[1])


def test_ignore_timestamp_publishes_every_message() -> None:
    rig = Rig(ignore_timestamp=True)
    stamps = [T0 + MS * k for k in range(30)]
    assert published_stamps(rig, ["joint_2"], stamps) == stamps
    assert published_stamps(rig, ["joint_2"], stamps[:3]) == stamps[:3]  # even repeated


def test_stamps_jumping_back_reset_the_limiter_with_one_warning(arm: Rig) -> None:
    assert arm.send(["joint_3"], [0.1], T0) is not None
    assert arm.send(["joint_3"], [0.2], T0 - 50_000 * MS) is not None  # a bag loop
    assert arm.send(["joint_3"], [0.3], T0 - 49_000 * MS) is not None
    assert arm.send(["joint_3"], [0.4], T0 - 100_000 * MS) is not None
    (line,) = arm.logger.containing("rate limiter reset")
    assert line == (
        "warning",
        "joint state stamps jumped backwards: rate limiter reset (simulation reset or bag "
        "loop?) (reported at most every 10 s)",
    )


def test_a_stamp_behind_only_some_of_the_joints_resets_the_limiter_with_one_warning(
    arm: Rig,
) -> None:
    """Behind one joint's last publication, though not behind the other's: still a jump."""
    assert arm.send(["joint_2"], [0.1], T0) is not None
    assert arm.send(["joint_1"], [0.1], T0 + 100 * MS) is not None
    # Past joint_2's publication by more than an interval, behind joint_1's.
    assert arm.send(["joint_1", "joint_2"], [0.2, 0.2], T0 + 60 * MS) is not None
    assert len(arm.logger.containing("rate limiter reset")) == 1
    # The limiter started afresh from that message: joint_3 never published, is due.
    assert arm.send(["joint_1", "joint_2"], [0.3, 0.3], T0 + 70 * MS) is None
    assert arm.send(["joint_3"], [0.3], T0 + 70 * MS) is not None
    # Behind again, within the throttle period: reset, but no second warning.
    assert arm.send(["joint_1", "joint_3"], [0.4, 0.4], T0 + 65 * MS) is not None
    assert len(arm.logger.containing("rate limiter reset")) == 1


def test_a_node_clock_jump_resets_the_limiter(arm: Rig) -> None:
    assert arm.send(["joint_3"], [0.1], T0) is not None
    assert arm.send(["joint_3"], [0.2], T0 + 10 * MS) is None
    arm.pipeline.reset_limiter("the node clock jumped backwards")
    assert arm.send(["joint_3"], [0.3], T0 + 20 * MS) is not None
    assert arm.logger.containing("the node clock jumped backwards: rate limiter reset")


def test_a_zero_stamp_is_replaced_by_the_node_clock(arm: Rig) -> None:
    publication = arm.send(["joint_4"], [0.25], 0)
    assert publication is not None and publication.stamp_ns == arm.clock.now_ns
    arm.clock.now_ns += 100 * MS
    publication = arm.send(["joint_4"], [0.3], 0)
    assert publication is not None and publication.stamp_ns == arm.clock.now_ns
    assert len(arm.logger.containing("zero stamp")) == 1


# -- prefix, exclusions, statics, default positions ---------------------------------------------


def fixed_children(robot: Robot, excluded: Sequence[str] = ()) -> set[str]:
    return {
        j.child for j in robot.joints.values() if j.joint_type == "fixed" and j.name not in excluded
    }


def test_the_static_set_has_every_fixed_joint_at_its_pose(arm: Rig) -> None:
    publication = arm.pipeline.static_publication(T0)
    assert publication is not None and publication.stamp_ns == T0
    statics = poses(publication)
    assert set(statics) == fixed_children(arm.robot)
    for joint in arm.robot.joints.values():
        if joint.joint_type == "fixed":
            parent, pose = statics[joint.child]
            assert parent == joint.parent
            np.testing.assert_allclose(pose, joint.child_pose(), atol=TOLERANCE)


def test_prefix_and_exclusions_apply_to_moving_and_static_frames() -> None:
    rig = Rig(frame_prefix="r1/", exclude_joints=("camera_mount", "joint_7", "nothere"))
    publication = rig.send(["joint_6", "joint_7"], [0.1, 0.2])
    assert publication is not None
    assert publication.layout.frames == (("r1/link_5", "r1/link_6"),)
    statics = rig.pipeline.static_publication(T0)
    assert statics is not None
    assert {child for _, child in statics.layout.frames} == {
        "r1/" + child for child in fixed_children(rig.robot, ["camera_mount"])
    }
    assert all(parent.startswith("r1/") for parent, _ in statics.layout.frames)
    assert rig.logger.containing("exclude_joints names joints not in the robot: nothere")


def test_default_positions_cover_the_joints_never_received() -> None:
    rig = Rig(exclude_joints=("joint_7",))
    publication = rig.pipeline.default_positions()
    assert publication is not None and publication.stamp_ns == rig.clock.now_ns
    moving = {j.child for j in rig.robot.joints.values() if j.joint_type != "fixed"}
    assert {child for _, child in publication.layout.frames} == moving - {"link_7"}
    fk = rig.robot.link_fk({}, clamp="hard")
    for child, (parent, pose) in poses(publication).items():
        np.testing.assert_allclose(pose, np.linalg.inv(fk[parent]) @ fk[child], atol=TOLERANCE)
    rig.send(["joint_1", "finger_joint"], [0.2, 0.1])
    later = rig.pipeline.default_positions()
    assert later is not None
    assert {child for _, child in later.layout.frames} == moving - {
        "link_7",
        "link_1",
        "left_knuckle",
    } - FOLLOWERS


# -- multi-DOF joints ---------------------------------------------------------------------


def test_planar_joints_by_moveit_variable_names_and_as_multi_dof() -> None:
    rig = Rig(PLANAR_URDF)
    names = ["base_planar_joint/x", "base_planar_joint/y", "base_planar_joint/theta"]
    publication = rig.send(names, [1.5, -0.5, 0.8])
    assert publication is not None
    assert_pose(publication, rig.robot, "base_planar_joint", np.array([1.5, -0.5, 0.8]))
    quaternion = Rotation.from_euler("z", -1.2).as_quat()
    multi = rig.pipeline.multi_dof_joint_state(
        T0 + 100 * MS,
        ("base_planar_joint", "unknown_joint"),
        np.array([[-2.0, 0.75, 0.0], [0.0, 0.0, 0.0]]),
        np.array([quaternion, [0.0, 0.0, 0.0, 1.0]]),
    )
    assert multi is not None
    assert_pose(multi, rig.robot, "base_planar_joint", np.array([-2.0, 0.75, -1.2]))
    mismatched = rig.pipeline.multi_dof_joint_state(
        T0 + 200 * MS, ("base_planar_joint",), np.zeros((2, 3)), np.zeros((2, 4))
    )
    assert mismatched is None
    assert rig.logger.containing("MultiDOFJointState dropped")
    assert rig.logger.containing("unknown_joint")


def test_a_multi_dof_joint_state_takes_the_joint_state_path() -> None:
    """Its transforms become the values of its joints' variable names: the same poses, the
    same rate limiter, the same health report (its unknown names listed)."""
    rig = Rig(ALL_TYPES_URDF)
    quaternion = Rotation.from_euler("xyz", [0.1, -0.2, 0.3]).as_quat()
    pose = np.array([1.0, -2.0, 0.5, *quaternion])
    multi = rig.pipeline.multi_dof_joint_state(
        T0,
        ("float_joint", "hinge_joint"),
        np.array([pose[:3], [0.0] * 3]),
        np.array([quaternion, [0.0, 0.0, 0.0, 1.0]]),
    )
    assert multi is not None and set(poses(multi)) == {rig.robot.joints["float_joint"].child}
    assert_pose(multi, rig.robot, "float_joint", pose)
    names = rig.robot.joints["float_joint"].variable_names
    as_joint_state = rig.send(names, list(pose), T0 + 10 * MS)
    assert as_joint_state is None  # within 1 / 20 Hz of the multi-DOF message: one limiter
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    assert dict(report.values)[Key.UNKNOWN] == "hinge_joint"
    assert rig.logger.containing("not moving joints of the robot: hinge_joint")


@pytest.fixture
def all_types() -> Iterator[Rig]:
    yield Rig(ALL_TYPES_URDF, ignore_timestamp=True)


def test_every_joint_type_publishes_its_child_pose(all_types: Rig) -> None:
    rng = np.random.default_rng(3)
    names: list[str] = []
    values: dict[str, Any] = {}
    for joint in all_types.robot.joints.values():
        if joint.joint_type == "fixed" or joint.mimic is not None:
            continue
        count = len(joint.variable_names)
        value = rng.uniform(-0.5, 0.5, count)
        if joint.joint_type in ("floating", "ball"):
            value[-4:] = Rotation.random(random_state=3).as_quat()
        names += joint.variable_names
        values[joint.name] = value if count > 1 else float(value[0])
    flat = [v for value in values.values() for v in np.atleast_1d(value)]
    publication = all_types.send(names, flat)
    assert publication is not None
    for name, value in values.items():
        assert_pose(publication, all_types.robot, name, value)


GAZEBO_SDF = """<sdf version="1.9">
<model name="gazebo">
<link name="base"/><link name="u_link"/><link name="ball_link"/>
<joint name="u" type="universal">
<parent>base</parent><child>u_link</child>
<axis><xyz>1 0 0</xyz></axis><axis2><xyz>0 1 0</xyz></axis2>
</joint>
<joint name="ball" type="ball"><parent>base</parent><child>ball_link</child></joint>
</model>
</sdf>"""


def test_bare_names_of_multi_value_joints_set_their_first_value(tmp_path: Any) -> None:
    """Gazebo's ros_gz bridge names every joint by its bare name with its first axis's
    position: a universal joint's first angle; a ball joint's rotation about x."""
    path = tmp_path / "gazebo.sdf"
    path.write_text(GAZEBO_SDF)
    rig = Rig(path)
    publication = rig.send(["u", "ball"], [0.3, 0.8])
    assert publication is not None
    assert_pose(publication, rig.robot, "u", [0.3, 0.0])
    assert_pose(publication, rig.robot, "ball", Rotation.from_rotvec([0.8, 0, 0]).as_quat())
    assert rig.logger.containing("set their first value only: u, ball")


def test_bare_names_of_nested_joints_as_gazebo_sends_them() -> None:
    """Gazebo's JointStatePublisher names a nested model's joint by its name inside that
    model: one match sets it, an ambiguous one is ignored with one warning."""
    rig = Rig(TEST_DIR / "sdf" / "walker_nested.sdf")
    publication = rig.send(["ankle", "knee", "hip"], [0.2, -0.5, 0.3])
    assert publication is not None
    assert_pose(publication, rig.robot, "ankle", 0.2)  # the joint of that name, not left::
    assert_pose(publication, rig.robot, "pelvis::hip", [0.3, 0.0])
    assert {child for _, child in publication.layout.frames} == {"toe", "pelvis::cup"}
    assert rig.send(["knee"], [-0.7], T0 + 100 * MS) is None  # nothing else named
    warnings = rig.logger.containing("ignoring joint state name 'knee'")
    assert warnings == [
        (
            "warning",
            "ignoring joint state name 'knee': the bare name of several nested models' joints "
            "(left::knee, right::knee); give the scoped name",
        )
    ]


# -- a description change: every changed origin, and the frames that left ----------------------


def changed_arm(text: str) -> str:
    """The arm with its camera moved 0.1 m along x and its optical frame removed."""
    moved = text.replace(
        '<origin xyz="0.06 0 -0.02" rpy="0 -1.5708 0"/>',
        ('<origin xyz="0.16 0 -0.02" rpy="0 -1.5708 0"/>'),
    )
    start = moved.index('<joint name="camera_optical_joint"')
    end = moved.index("</joint>", start) + len("</joint>")
    moved = moved[:start] + moved[end:]
    return moved.replace('<link name="camera_optical_frame"/>', "")


def install_text(rig: Rig, text: str) -> None:
    robot = Robot.from_xml_string(text, source="robot_description")
    rig.robot = robot
    rig.pipeline.install(LoadedModel(robot, text))


def test_a_description_change_sends_every_moved_origin_and_names_the_frames_that_left() -> None:
    rig = Rig(frame_prefix="r1/")
    install_text(rig, changed_arm(ARM_URDF.read_text()))
    statics = rig.pipeline.static_publication(T0)
    assert statics is not None
    parent, pose = poses(statics)["r1/camera_link"]
    assert parent == "r1/ee_link"
    np.testing.assert_allclose(pose[:3, 3], [0.16, 0.0, -0.02], atol=TOLERANCE)
    assert "r1/camera_optical_frame" not in poses(statics)
    warnings = rig.logger.containing("left the robot")
    assert warnings == [
        (
            "warning",
            "1 frame(s) left the robot with this change: r1/camera_optical_frame; no node "
            "publishes them now, and tf2 listeners (RViz, MoveIt, Nav2) that heard them keep "
            "them, static ones at their last pose, until they restart",
        )
    ]
    report = dict(rig.pipeline.health.report(GraphFacts({}, T0)).values)
    assert report[Key.REMOVED_FRAMES] == "r1/camera_optical_frame"


def test_removed_frames_add_up_until_a_frame_comes_back() -> None:
    rig = Rig()
    text = ARM_URDF.read_text()
    install_text(rig, changed_arm(text))
    changed_links = sorted(rig.robot.links)
    rig.pipeline.configure(rig.pipeline.settings.changed({"frame_prefix": "a/"}))
    # The optical frame left with the description, every other unprefixed frame with the prefix.
    assert rig.pipeline.health.removed_frames == sorted(Robot.load(ARM_URDF).links)
    assert len(rig.logger.containing("left the robot")) == 2  # one warning per change
    rig.pipeline.configure(rig.pipeline.settings.changed({"frame_prefix": ""}))
    install_text(rig, text)  # the old arm, unprefixed, again: only the a/ frames are gone
    assert rig.pipeline.health.removed_frames == [f"a/{link}" for link in changed_links]


def test_the_same_description_again_removes_nothing() -> None:
    rig = Rig()
    install_text(rig, ARM_URDF.read_text())
    assert rig.pipeline.health.removed_frames == []
    assert not rig.logger.containing("left the robot")
