"""health: the joint-state health model, fed through the real pipeline, without DDS.

Joint states go into ``JointStatePipeline`` as the node gives them; the report is read as
/diagnostics shows it (level, message, values by key). The steady clock is a settable one, so
"a second later" is a number, not a wait.
"""

from __future__ import annotations

import re
import tracemalloc
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from repo_paths import REPO_ROOT, TEST_DIR

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.doctor.analysis import diagnose
from joint_tf_publisher.cli.doctor.observation import HeardTransform, Observation
from joint_tf_publisher.health.model import (
    KEYS,
    MAX_SLOTS,
    MAX_UNKNOWN_NAMES,
    GraphFacts,
    HealthReport,
    JointStateHealth,
    Key,
    Level,
    LoopFacts,
    RemoteFacts,
    UnionConflictFact,
    UnionFacts,
    never_received_joints,
)
from joint_tf_publisher.health.reporting import Reporter
from joint_tf_publisher.node_core.joint_sources import (
    FIRST_LISTED_SOURCE,
    JOINT_STATES_SOURCE,
    MULTI_DOF_SOURCE,
)
from joint_tf_publisher.node_core.parameters import ParameterRejected, Settings
from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
PLANAR_URDF = TEST_DIR / "urdf" / "mobile_base_planar.urdf"
S = 1_000_000_000  # one second in ns
T0 = 1_700_000_000 * S  # a plausible wall-clock stamp, ns
ARM = ["joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6", "joint_7"]
LEADERS = [*ARM, "finger_joint"]
#: finger_joint's mimic followers, in the model's order.
FOLLOWERS = ["right_knuckle_joint", "left_inner_finger_joint", "right_inner_finger_joint"]
ONE_PUBLISHER = {JOINT_STATES_SOURCE: ("/driver",)}


class Silent:
    """A logger that keeps the lines it is given (level, text)."""

    def __init__(self) -> None:
        self.lines: list[tuple[str, str]] = []

    def info(self, message: str) -> None:
        self.lines.append(("info", message))

    def warning(self, message: str) -> None:
        self.lines.append(("warning", message))

    def error(self, message: str) -> None:
        self.lines.append(("error", message))


class Rig:
    """A pipeline on the arm with a settable steady clock and node clock."""

    def __init__(self, path: Path = ARM_URDF, **settings: Any) -> None:
        self.steady_ns = 10 * S
        self.node_clock_ns = T0
        self.health = JointStateHealth(1.0, lambda: self.steady_ns)
        self.logger = Silent()
        self.pipeline = JointStatePipeline(
            Settings(**settings), Reporter(self.logger), lambda: self.node_clock_ns, self.health
        )
        self.robot = Robot.load(path)
        self.pipeline.install(LoadedModel(self.robot, path.read_text()))
        self.stamp_ns = T0

    def send(self, names: Sequence[str], values: Sequence[float] | None = None) -> None:
        """One JointState (zeros by default), stamped 10 ms after the last."""
        self.stamp_ns += 10_000_000
        positions = np.zeros(len(names)) if values is None else np.array(values, dtype=float)
        if self.pipeline.joint_state(self.stamp_ns, tuple(names), positions) is not None:
            self.health.published += 1

    def wait(self, seconds: float) -> None:
        self.steady_ns += int(seconds * S)
        self.node_clock_ns += int(seconds * S)

    def report(
        self, publishers: Mapping[int, Sequence[str]] = ONE_PUBLISHER, sim: bool = False
    ) -> HealthReport:
        return self.health.report(GraphFacts(publishers, self.node_clock_ns, sim))


def values(report: HealthReport) -> dict[str, str]:
    return dict(report.values)


def levels(report: HealthReport) -> list[Level]:
    return [condition.level for condition in report.conditions]


@pytest.fixture
def arm() -> Rig:
    return Rig()


def test_all_joints_received_is_ok_with_every_key(arm: Rig) -> None:
    arm.send(LEADERS)
    arm.wait(0.5)
    report = arm.report()
    assert (report.level, report.message) == (Level.OK, "joint states OK")
    assert report.robot == "arm_mimic_gripper"
    assert [key for key, _ in report.values] == list(KEYS)
    assert values(report)[Key.NEVER_RECEIVED] == ""
    assert values(report)[Key.PUBLISHERS] == "1, /driver"


def test_before_the_timeout_nothing_is_missing_yet(arm: Rig) -> None:
    arm.wait(0.5)
    assert arm.report().level == Level.OK


def test_no_joint_state_at_all_is_an_error_that_says_nothing_publishes(arm: Rig) -> None:
    arm.wait(1.5)
    report = arm.report(publishers={JOINT_STATES_SOURCE: ()})
    assert report.level == Level.ERROR
    assert report.message == "no joint state received in 1.5 s: nothing publishes joint_states"
    assert report.missing_log is not None and "joint_state_broadcaster" in report.missing_log
    with_publisher = arm.report(publishers={JOINT_STATES_SOURCE: ("/a", "/b")})
    assert "2 publisher(s) on joint_states sent nothing" in with_publisher.message


def test_never_received_joints_are_named_with_the_frames_below_them(arm: Rig) -> None:
    arm.send([name for name in LEADERS if name != "joint_6"])
    arm.wait(1.0)
    arm.send([name for name in LEADERS if name != "joint_6"])
    report = arm.report()
    assert report.level == Level.WARN
    assert report.message.startswith("1 joint(s) never received: joint_6; frames missing")
    # joint_6 carries link_6 and everything below it, through fixed and moving joints.
    missing = set(values(report)[Key.MISSING_FRAMES].split(", "))
    robot = Robot.load(ARM_URDF)
    below = {"link_6"}
    while True:
        more = {j.child for j in robot.joints.values() if j.parent in below} - below
        if not more:
            break
        below |= more
    assert missing == below
    assert values(report)[Key.NEVER_RECEIVED] == "joint_6"
    # What the doctor reads back from the status on /diagnostics: the joints it names.
    assert never_received_joints(report.message, report.values) == ("joint_6",)
    assert never_received_joints("joint states OK", report.values) == ()


def test_frames_missing_carry_the_frame_prefix() -> None:
    rig = Rig(frame_prefix="r1/")
    rig.send([name for name in LEADERS if name != "finger_joint"])
    rig.wait(1.0)
    missing = values(rig.report())[Key.MISSING_FRAMES].split(", ")
    assert "r1/left_knuckle" in missing and all(frame.startswith("r1/") for frame in missing)


def test_excluded_joints_and_followers_of_a_received_leader_count_as_received() -> None:
    rig = Rig(exclude_joints=("joint_7",))
    rig.send([name for name in LEADERS if name != "joint_7"])  # followers: from finger_joint
    rig.wait(1.0)
    rig.send([name for name in LEADERS if name != "joint_7"])
    assert rig.report().level == Level.OK


def test_a_robot_whose_joints_are_all_excluded_waits_for_nothing() -> None:
    rig = Rig(exclude_joints=tuple(joint.name for joint in Robot.load(ARM_URDF).joints.values()))
    rig.wait(5.0)
    assert rig.report().level == Level.OK


def test_a_stream_that_stopped_is_stale_with_its_age(arm: Rig) -> None:
    arm.send(LEADERS)
    arm.wait(2.5)
    report = arm.report()
    assert report.level == Level.STALE
    assert report.message == "no joint state for 2.5 s: the joint-state stream stopped"
    assert values(report)[Key.LAST_AGE] == "2.50"


def test_joints_that_stopped_while_others_go_on_are_named_with_their_age(arm: Rig) -> None:
    arm.send(LEADERS)
    arm.wait(1.5)
    arm.send(ARM)  # the gripper's driver died
    report = arm.report()
    assert report.level == Level.WARN
    assert report.message == (
        "4 joint(s) stopped updating while others go on: finger_joint (1.5 s), "
        "right_knuckle_joint (1.5 s), left_inner_finger_joint (1.5 s), "
        "right_inner_finger_joint (1.5 s)"
    )


def test_clamping_in_the_period_is_counted_with_its_largest_excursion() -> None:
    arm = Rig(ignore_timestamp=True)  # every message published (a dropped one is not looked at)
    arm.send(LEADERS)
    arm.send(["joint_2"], [2.51])  # upper limit 2.41
    arm.send(["joint_2"], [2.91])
    arm.send(["joint_2"], [-2.61])
    report = arm.report()
    assert report.level == Level.WARN
    assert values(report)[Key.CLAMPED] == "joint_2 (3x, up to 0.5 beyond the limit)"
    assert report.message == (
        "joint values clamped to their hard limits: " + values(report)[Key.CLAMPED]
    )
    arm.send(["joint_2"], [0.0])
    assert arm.report().level == Level.OK  # the next period: back to OK


def test_rejected_values_are_an_error_and_mismatched_lengths_a_warning() -> None:
    arm = Rig(ignore_timestamp=True)
    arm.send(LEADERS)
    arm.send(["joint_1", "joint_3"], [float("nan"), 1e200])
    arm.pipeline.joint_state(arm.stamp_ns + S, ("joint_1", "joint_2"), np.zeros(1))
    report = arm.report()
    assert report.level == Level.ERROR
    assert values(report)[Key.REJECTED] == "joint_1 (1x), joint_3 (1x)"
    assert values(report)[Key.LENGTHS] == "1"
    assert Level.WARN in levels(report)
    arm.send(LEADERS)
    assert arm.report().level == Level.OK


def test_unknown_names_are_listed_and_not_a_problem(arm: Rig) -> None:
    arm.send([*LEADERS, "wheel", "caster"])
    report = arm.report()
    assert report.level == Level.OK
    assert values(report)[Key.UNKNOWN] == "caster, wheel"


def test_at_most_a_thousand_unknown_names_are_remembered(arm: Rig) -> None:
    """robustness.md: 1000 unknown names remembered, however they come: one JointState of
    10,000 names the robot lacks (its names were all kept, 69 kB in every report), or
    messages each with a new one (the one after the thousandth is not listed)."""
    assert MAX_UNKNOWN_NAMES == 1000
    arm.send([*LEADERS, *(f"stranger_{k:05d}" for k in range(10_000))])
    listed = values(arm.report())[Key.UNKNOWN].split(", ")
    assert listed == [f"stranger_{k:05d}" for k in range(MAX_UNKNOWN_NAMES)]
    rig = Rig()
    rig.send([*LEADERS, *(f"early_{k:03d}" for k in range(MAX_UNKNOWN_NAMES - 1))])
    rig.send([*LEADERS, "late_a"])
    rig.send([*LEADERS, "late_b"])
    listed = values(rig.report())[Key.UNKNOWN].split(", ")
    assert len(listed) == MAX_UNKNOWN_NAMES and "late_a" in listed and "late_b" not in listed


def test_rates_count_messages_in_and_publications_out(arm: Rig) -> None:
    for _ in range(5):
        arm.send(LEADERS)  # 10 ms apart: the limiter (20 Hz) publishes the first only
    arm.wait(0.5)
    report = arm.report()
    assert (values(report)[Key.RATE_IN], values(report)[Key.RATE_OUT]) == ("10.0", "2.0")


def test_use_sim_time_without_clock_is_an_error_naming_the_clock(arm: Rig) -> None:
    arm.send(LEADERS)
    arm.node_clock_ns = 0
    report = arm.report(sim=True)
    assert report.level == Level.ERROR
    assert "/clock" in report.message and "clock" in report.message
    arm.node_clock_ns = 5 * S  # /clock arrived; the stamps are wall time, an hour and more off
    report = arm.report(sim=True)
    assert report.level == Level.WARN
    assert "node clock (5.000 s)" in report.message
    assert f"stamps ({values(report)[Key.STAMP]} s)" in report.message


def test_stamps_within_the_margin_are_one_clock(arm: Rig) -> None:
    arm.send(LEADERS)
    arm.node_clock_ns = arm.stamp_ns + 3000 * S
    assert arm.report().level == Level.OK


def test_a_joint_given_by_two_publishers_names_the_joint_and_the_nodes(arm: Rig) -> None:
    publishers = {JOINT_STATES_SOURCE: ("/joint_state_publisher", "/arm_controller")}
    arm.send(LEADERS)  # joint_state_publisher's zeros
    arm.send(["joint_1", "joint_2"], [0.5, 0.5])  # the controller
    report = arm.report(publishers)
    assert report.level == Level.WARN
    assert report.message == (
        "joints given by two publishers: joint_1 (/arm_controller, /joint_state_publisher), "
        "joint_2 (/arm_controller, /joint_state_publisher)"
    )
    arm.send(LEADERS)  # the controller stopped: one publisher in this period
    assert arm.report(publishers).level == Level.OK


def test_one_publisher_sending_two_shapes_is_not_two_publishers(arm: Rig) -> None:
    arm.send(LEADERS)
    arm.send(["joint_1", "joint_2"])
    assert arm.report().level == Level.OK


def test_a_joint_given_on_two_sources_names_both(arm: Rig) -> None:
    """A second source (another joint-state topic) feeds its own slot: what source_list
    calls, and a MultiDOFJointState does the same."""
    arm.send(LEADERS)
    joints = np.array([0], dtype=np.intp)
    other = FIRST_LISTED_SOURCE  # a source_list topic
    arm.health.slot(other, ("joint_1",), joints).received(T0, arm.steady_ns)
    report = arm.report({JOINT_STATES_SOURCE: ("/driver",), other: ("/driver",)})
    assert report.message == "joints given by two publishers: joint_1 (/driver)"
    # Without publisher names (not discovered yet), the topics are named.
    rig_topics = {JOINT_STATES_SOURCE: "joint_states", other: "/arm/joint_states"}
    arm.send(LEADERS)
    arm.health.slot(other, ("joint_1",), joints).received(T0, arm.steady_ns)
    unnamed = arm.health.report(GraphFacts({}, arm.node_clock_ns, False, rig_topics))
    assert "joint_1 (joint_states, /arm/joint_states)" in unnamed.message


def test_a_joint_given_as_joint_state_and_as_multi_dof_joint_state_names_both_topics() -> None:
    """The planar base by its variables on joint_states and as a transform on
    multi_dof_joint_states: two topics, so two publishers, even from one node."""
    steady_ns = [10 * S]
    health = JointStateHealth(1.0, lambda: steady_ns[0])
    pipeline = JointStatePipeline(Settings(), Reporter(Silent()), lambda: T0, health)
    pipeline.install(LoadedModel(Robot.load(PLANAR_URDF), PLANAR_URDF.read_text()))
    planar = ("base_planar_joint/x", "base_planar_joint/y", "base_planar_joint/theta")
    pipeline.joint_state(T0, planar, np.zeros(3))
    pipeline.multi_dof_joint_state(
        T0 + S, ("base_planar_joint",), np.zeros((1, 3)), np.array([[0.0, 0.0, 0.0, 1.0]])
    )
    topics = {JOINT_STATES_SOURCE: "joint_states", MULTI_DOF_SOURCE: "multi_dof_joint_states"}
    publishers = {JOINT_STATES_SOURCE: ("/base",), MULTI_DOF_SOURCE: ("/base",)}
    report = health.report(GraphFacts(publishers, T0, False, topics))
    assert values(report)[Key.TWO_PUBLISHERS] == "base_planar_joint (/base)"
    unnamed = health.report(GraphFacts({}, T0, False, topics))
    assert values(unnamed)[Key.TWO_PUBLISHERS] == ""  # nothing arrived this period


def test_every_message_of_a_shape_counts_with_its_stamp_and_arrival(arm: Rig) -> None:
    """50 messages of one shape: all counted in the rate, the newest stamp and arrival shown."""
    for _ in range(50):
        arm.send(LEADERS)
    arm.wait(0.5)
    report = arm.report()
    assert values(report)[Key.RATE_IN] == "100.0"
    assert values(report)[Key.LAST_AGE] == "0.50"
    assert values(report)[Key.STAMP] == f"{arm.stamp_ns / S:.3f}"


def test_a_flood_of_message_shapes_is_folded_keeping_rates_and_ages(arm: Rig) -> None:
    arm.send(LEADERS)
    arm.report()
    for k in range(2 * MAX_SLOTS):
        arm.send([*LEADERS, f"stranger_{k}"])
    arm.wait(1.0)
    arm.send(LEADERS)
    report = arm.report()
    assert values(report)[Key.RATE_IN] == f"{2 * MAX_SLOTS + 1:.1f}"
    assert report.level == Level.OK


def test_a_flood_of_message_shapes_holds_bounded_memory() -> None:
    """5,120 new shapes after the first 512 keep no more than the slots the model folds
    them into (unbounded, they would hold about 1.7 MB)."""
    health = JointStateHealth(1.0, lambda: 10 * S)
    joints = np.array([0], dtype=np.intp)

    def flood(first: int, count: int) -> None:
        for k in range(first, first + count):
            health.slot(JOINT_STATES_SOURCE, (f"stranger_{k}",), joints).received(T0, 10 * S)

    flood(0, 2 * MAX_SLOTS)
    tracemalloc.start()
    try:
        before, _ = tracemalloc.get_traced_memory()
        flood(2 * MAX_SLOTS, 20 * MAX_SLOTS)
        grown, _ = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert grown - before < MAX_SLOTS * 1000


def test_a_new_description_starts_the_health_afresh(arm: Rig) -> None:
    arm.send(LEADERS)
    arm.wait(0.5)
    arm.pipeline.install(LoadedModel(Robot.load(ARM_URDF), ARM_URDF.read_text()))
    arm.wait(1.0)
    assert arm.report().level == Level.ERROR  # nothing received since the reload


# -- each documented key, and the behaviours a one-line slip would break -------------------------


def documented_keys() -> list[str]:
    """The keys of docs/node.md's table of the report's values, in order."""
    text = (REPO_ROOT / "docs" / "node.md").read_text()
    table = text.split("The values, by key:", 1)[1].split("\n\n", 2)[1]
    return [line.split("`")[1] for line in table.splitlines()[2:]]


def test_the_documented_keys_are_the_report_s_keys_in_order(arm: Rig) -> None:
    assert documented_keys() == list(KEYS)
    assert [key for key, _ in arm.report().values] == list(KEYS)


def test_every_key_holds_its_documented_value() -> None:
    """One period with something to say under every key: joint_6 never sent, the gripper
    silent after its first message, a clamp, a rejection, a message of mismatched lengths, an
    unknown name, two nodes giving joint_1 to joint_3, a time offset that takes one stamp out
    of range, a frame a description change took away, a refused description, two
    undecodable messages, a callback that raised twice, two unknown parameter keys and a static
    union with a conflict and refused transforms."""
    rig = Rig(ignore_timestamp=True, time_offset=-0.5)
    text = ARM_URDF.read_text()
    with_tool = text.replace(
        "</robot>",
        '<link name="old_tool"/><joint name="old_tool_mount" type="fixed">'
        '<parent link="ee_link"/><child link="old_tool"/></joint></robot>',
    )
    rig.pipeline.install(LoadedModel(Robot.from_xml_string(with_tool), with_tool))
    rig.pipeline.install(LoadedModel(rig.robot, text))  # old_tool left
    rig.send([*[name for name in LEADERS if name != "joint_6"], "wheel"])
    rig.wait(1.5)
    rig.send(["joint_1", "joint_2"], [0.5, 9.0])  # joint_2: upper limit 2.41
    rig.send(["joint_3"], [float("nan")])
    rig.pipeline.joint_state(rig.stamp_ns, ("joint_1", "joint_2"), np.zeros(1))
    rig.pipeline.joint_state(S // 10, ("joint_1", "joint_2"), np.zeros(2))  # 0.1 s - 0.5 s
    publishers = {JOINT_STATES_SOURCE: ("/joint_state_publisher", "/arm_controller")}
    refused = "description_file not reloaded, the running model stays: /arm.urdf:3: ..."
    rig.health.refused_description = refused
    left_out = ("gone (no link of that name in the robot)",)
    rig.health.remote = RemoteFacts(("ee_link", "gone"), 5.0, "remote/tf", 3, left_out)
    rig.pipeline.undecodable("sensor_msgs/JointState")
    rig.pipeline.undecodable("sensor_msgs/JointState")
    rig.health.callback_failed("joint_states: KeyError")
    rig.health.callback_failed("joint_states: KeyError")
    rig.health.unknown_parameters = (2, ("attachments", "publish_frequncy"))
    since_ns = rig.steady_ns - 2 * S
    rig.health.loops = LoopFacts(
        ("rod", "closing"), np.array([1e-16, 0.25]), np.array([0.0, 0.5]), {"closing": since_ns}
    )
    conflict = UnionConflictFact("camera", "/calibration", "/sensors", since_ns)
    rig.health.union = UnionFacts(
        3, 100, ("/calibration", "/robot2/joint_tf_publisher"), {"closes a cycle": 2}, (conflict,)
    )
    report = rig.report(publishers)
    robot = Robot.load(ARM_URDF)
    below_6 = {"link_6"}
    while more := {j.child for j in robot.joints.values() if j.parent in below_6} - below_6:
        below_6 |= more
    nodes = "/arm_controller, /joint_state_publisher"
    stopped = ["joint_4", "joint_5", "joint_7", "finger_joint", *FOLLOWERS]
    assert (
        values(report)
        == {
            Key.ROBOT: "arm_mimic_gripper",
            Key.MOVING_JOINTS: "11",
            Key.PUBLISHERS: f"2, {nodes}",
            # 4 messages used in 1.5 s (the one of mismatched lengths is not counted)
            Key.RATE_IN: "2.7",
            Key.RATE_OUT: "1.3",  # 2 published (the rejected value publishes nothing)
            Key.LAST_AGE: "0.00",
            Key.NEVER_RECEIVED: "joint_6",
            Key.MISSING_FRAMES: ", ".join(sorted(below_6)),
            Key.STOPPED: ", ".join(f"{name} (1.5 s)" for name in stopped),
            Key.CLAMPED: "joint_2 (1x, up to 6.59 beyond the limit)",
            Key.REJECTED: "joint_3 (1x)",
            Key.LENGTHS: "1",
            Key.UNKNOWN: "wheel",
            Key.CLOCK: f"{rig.node_clock_ns / S:.3f}",
            Key.STAMP: f"{rig.stamp_ns / S:.3f}",
            Key.TWO_PUBLISHERS: ", ".join(f"{joint} ({nodes})" for joint in ARM[:3]),
            Key.REMOVED_FRAMES: "old_tool",
            Key.TIME_OFFSETS: "joint_states: -0.5, multi_dof_joint_states: -0.5",
            Key.OUT_OF_RANGE: "1",
            Key.REFUSED_DESCRIPTION: refused,
            Key.REMOTE_FRAMES: "ee_link, gone",
            Key.REMOTE_RATE: "5",
            Key.REMOTE_SENT: "3",
            Key.REMOTE_LEFT_OUT: left_out[0],
            Key.UNDECODABLE: "sensor_msgs/JointState (2x)",
            Key.CALLBACK_FAILURES: "joint_states: KeyError (2x)",
            Key.UNKNOWN_PARAMETERS: "2, attachments, publish_frequncy",
            Key.LOOPS: "rod: 1e-16, 0, closing: 0.25, 0.5",
            Key.LOOPS_NOT_CLOSED: "closing",
            Key.UNION_FRAMES: "3 of 100",
            Key.UNION_PUBLISHERS: "2, /calibration, /robot2/joint_tf_publisher",
            Key.UNION_REFUSED: "closes a cycle (2x)",
            Key.UNION_CONFLICTS: "camera (kept /calibration, refused /sensors)",
        }
    )
    assert report.level == Level.ERROR
    assert report.message == (
        "joint values rejected (NaN, infinite, beyond +-1e100 or a zero quaternion), the "
        "joints keep their last good value: joint_3 (1x)"
    )
    assert sorted(levels(report)) == [Level.WARN] * 13 + [Level.ERROR]
    assert any(
        condition.message.startswith("loop joint 'closing' not closed for 2.0 s: its frames stay")
        for condition in report.conditions
    )


def test_values_hold_every_name_where_the_message_stops_after_ten() -> None:
    """The humanoid's left arm and hand stop while the rest goes on: the stopped value names
    every one of their joints, the message ten of them and "and N more"."""
    rig = Rig(TEST_DIR / "urdf" / "humanoid.urdf", exclude_joints=("floating_base",))
    moving = rig.robot.kinematics.moving_joints
    joints = [joint.name for joint in moving if joint.name != "floating_base"]
    left = [name for name in joints if name.startswith("l_")]
    assert len(left) > 10
    rig.send(joints)
    rig.wait(1.5)
    rig.send([name for name in joints if name not in left])
    report = rig.report()
    named = re.findall(r"(\S+) \(1\.5 s\)", values(report)[Key.STOPPED])
    assert named == left
    assert re.findall(r"(\S+) \(1\.5 s\)", report.message) == left[:10]
    assert report.message.endswith(f" and {len(left) - 10} more")


def test_a_value_clamped_at_the_lower_limit_reports_its_excursion() -> None:
    rig = Rig(ignore_timestamp=True)
    rig.send(LEADERS)
    rig.send(["joint_2"], [-2.61])  # lower limit -2.41
    assert values(rig.report())[Key.CLAMPED] == "joint_2 (1x, up to 0.2 beyond the limit)"


def test_under_soft_clamping_the_report_says_soft_limits_and_their_excursion() -> None:
    rig = Rig(ignore_timestamp=True, clamp="soft")
    rig.send(LEADERS)
    rig.send(["joint_1"], [2.95])  # hard 2.9671, soft 2.9
    report = rig.report()
    assert report.message == (
        "joint values clamped to their soft limits: joint_1 (1x, up to 0.05 beyond the limit)"
    )


def test_a_joint_s_last_arrival_is_the_newest_of_all_its_message_shapes(arm: Rig) -> None:
    """joint_1 comes in two shapes; the one-joint shape stops, the full one goes on: joint_1
    is not stopped."""
    arm.send(LEADERS)
    arm.send(["joint_1"])
    arm.wait(1.5)
    arm.send(LEADERS)
    report = arm.report()
    assert (report.level, values(report)[Key.STOPPED]) == (Level.OK, "")


def test_a_joint_never_received_is_not_also_stopped(arm: Rig) -> None:
    arm.send([name for name in LEADERS if name != "joint_6"])
    arm.wait(1.5)
    arm.send([name for name in LEADERS if name != "joint_6"])
    report = arm.report()
    assert values(report)[Key.NEVER_RECEIVED] == "joint_6"
    assert values(report)[Key.STOPPED] == ""
    assert levels(report) == [Level.WARN]


@pytest.mark.parametrize("side", [1, -1])
def test_stamps_an_hour_ahead_of_or_behind_the_node_clock_are_flagged(arm: Rig, side: int) -> None:
    """Beyond joint_state_timeout (1 s) + 1 h either way: another clock domain."""
    arm.send(LEADERS)
    arm.node_clock_ns = arm.stamp_ns - side * 3602 * S
    report = arm.report()
    assert report.level == Level.WARN
    assert report.message == (
        f"joint state stamps ({arm.stamp_ns / S:.3f} s) are {side * 3602:+d} s from the node "
        f"clock ({arm.node_clock_ns / S:.3f} s): a sim clock and a wall clock mixed "
        "(use_sim_time)?"
    )
    arm.node_clock_ns = arm.stamp_ns - side * 3600 * S  # within the margin
    assert arm.report().level == Level.OK


def test_the_log_lines_word_a_fact_as_the_report_does_and_the_doctor_too() -> None:
    """Clamped and rejected values, and joints never received: the log line says the fact in
    the report's words; the doctor's advice names the same usual publishers."""
    rig = Rig(ignore_timestamp=True, clamp="soft")
    rig.send([name for name in LEADERS if name != "joint_6"])
    rig.wait(1.0)
    rig.send(["joint_1", "joint_3"], [2.95, float("inf")])
    report = rig.report()
    said = {condition.message.split(": ")[0] for condition in report.conditions}
    logged = {text.split(", counts")[0].split("; counts")[0] for _, text in rig.logger.lines}
    assert said & logged >= {
        "joint values clamped to their soft limits",
        "joint values rejected (NaN, infinite, beyond +-1e100 or a zero quaternion), the "
        "joints keep their last good value",
    }
    assert report.missing_log is not None
    never = next(c.message for c in report.conditions if "never received" in c.message)
    assert report.missing_log.startswith(never + ". Joint states usually come from ")
    usual = report.missing_log.split("usually come from ")[1]
    doctor = Observation(3.0, T0, [], robot=rig.robot, joint_state_publishers=["/driver"])
    missing = set(values(report)[Key.MISSING_FRAMES].split(", "))
    doctor.transforms = [
        HeardTransform(joint.parent, joint.child, joint.joint_type == "fixed", T0, "/n")
        for joint in rig.robot.joints.values()
        if joint.child not in missing
    ]
    (finding,) = diagnose(doctor)
    assert usual in finding.fix


def test_a_refused_description_is_a_warning_until_cleared(arm: Rig) -> None:
    reason = (
        "description_file not reloaded, the running model stays: /r.urdf:11: joint 'mount': "
        "child link 'nowhere' does not exist"
    )
    arm.send(LEADERS)
    arm.health.refused_description = reason
    report = arm.report()
    assert (report.level, report.message) == (Level.WARN, reason)
    assert values(report)[Key.REFUSED_DESCRIPTION] == reason
    # Said beside a worse condition too: the value holds it.
    arm.wait(2.0)
    stale = arm.report()
    assert stale.level == Level.STALE
    assert values(stale)[Key.REFUSED_DESCRIPTION] == reason
    assert reason in [condition.message for condition in stale.conditions]
    arm.health.refused_description = None
    arm.send(LEADERS)
    cleared = arm.report()
    assert (cleared.level, values(cleared)[Key.REFUSED_DESCRIPTION]) == (Level.OK, "")


@pytest.mark.parametrize(
    ("name", "value", "reason"),
    [
        ("diagnostic_period", -1.0, "diagnostic_period must be >= 0 and <= 3600 s, got -1"),
        ("joint_state_timeout", 0.0, "joint_state_timeout must be > 0 and <= 3600 s, got 0"),
        ("joint_state_timeout", "1", "joint_state_timeout must be a number of seconds"),
    ],
)
def test_the_health_parameters_are_checked(name: str, value: Any, reason: str) -> None:
    with pytest.raises(ParameterRejected, match=reason):
        Settings.from_values({name: value})
    assert getattr(Settings.from_values({name: 2}), name) == 2.0  # an integer is accepted
