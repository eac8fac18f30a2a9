"""Trees that survive the real network, over real DDS with the node's console script:
statics republished for subscribers that lost the latched message (``static_republish_period``),
a description change that names the frames that left, and delayed joint states
(``time_offset``, ``source_time_offsets``).

One node serves the module (DDS tests are costly); the tests run in file order and the last
one changes its description. The tf2 Buffer side of a description change (a running Buffer
and a new one both see a moved fixed joint) is test/launch/test_tf2_static_change.py.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from node_harness import (  # noqa: E402
    WAIT_S,
    NodeUnderTest,
    Probe,
    Recorder,
    fresh_stamp,
    parameter_value,
    pause,
    seconds_to_ns,
    stamp_msg,
    stamp_ns,
    started,
    wait_until,
)
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.srv import SetParametersAtomically  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.health.model import Key  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
NAMESPACE = "/statics"
PERIOD_S = 0.5
#: Republications a test waits for, and the delay a loaded machine may add to one, seconds.
MESSAGES = 5
SLACK_S = 1.0
GRIPPER_TOPIC = "gripper_states"
GRIPPER_OFFSET_S = -0.004
STATUS_NAME = "joint_tf_publisher: joint states"


def fixed_children(robot: Robot) -> set[str]:
    return {j.child for j in robot.joints.values() if j.joint_type == "fixed"}


@pytest.fixture(scope="module")
def node(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    under_test = started(
        probe,
        tmp_path_factory,
        NAMESPACE,
        {
            "robot_description": ARM_URDF.read_text(),
            "static_republish_period": PERIOD_S,
            "source_list": [GRIPPER_TOPIC],
            "source_time_offsets": [GRIPPER_OFFSET_S],
            "diagnostic_period": 0.3,
        },
        handshake=("joint_1", "link_1"),
    )
    yield under_test
    assert under_test.stop() == 0, under_test.stderr()


def volatile_qos() -> QoSProfile:
    """A reader that gets no history: a bridge's or recorder's that lost the latched set."""
    return QoSProfile(
        depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
    )


class Timed(Recorder):
    """A Recorder that also notes each message's arrival (monotonic seconds)."""

    def __init__(self) -> None:
        super().__init__()
        self.arrivals: list[float] = []

    def __call__(self, msg: Any) -> None:
        self.arrivals.append(time.monotonic())
        super().__call__(msg)


def node_publishers(probe: Probe, topic: str) -> list[str]:
    infos = probe.node.get_publishers_info_by_topic(topic)
    return [info.node_name for info in infos if info.node_namespace == NAMESPACE]


# -- statics that survive ---------------------------------------------------------------------


def test_a_volatile_subscriber_started_late_gets_the_complete_set_every_period(
    probe: Probe, node: NodeUnderTest
) -> None:
    expected = fixed_children(Robot.load(ARM_URDF))
    latched = node.static_set()  # the latched set, as a late transient-local reader gets it
    assert set(latched) == expected
    recorder = Timed()
    subscription = probe.node.create_subscription(TFMessage, "/tf_static", recorder, volatile_qos())
    try:
        wait_until(lambda: subscription.get_publisher_count() > 0, what="/tf_static match")
        matched_at = time.monotonic()
        wait_until(lambda: len(recorder) >= MESSAGES, what=f"{MESSAGES} /tf_static messages")
    finally:
        probe.node.destroy_subscription(subscription)
    messages, arrivals = recorder.messages(), recorder.arrivals
    for message in messages:
        # Every message is the complete set, the same message each time (its stamp too).
        assert {t.child_frame_id for t in message.transforms} == expected
        assert message == messages[0]
    assert {stamp_ns(t.header.stamp) for t in messages[0].transforms} == {
        stamp_ns(next(iter(latched.values())).header.stamp)
    }
    # The first within one period of the match, then one a period (a loaded machine delays
    # a timer now and then: SLACK_S, and the mean spacing).
    assert arrivals[0] - matched_at < PERIOD_S + SLACK_S, arrivals[0] - matched_at
    spacing = (arrivals[-1] - arrivals[0]) / (len(arrivals) - 1)
    assert 0.5 * PERIOD_S < spacing < 2 * PERIOD_S, arrivals
    assert node_publishers(probe, "/tf_static") == ["joint_tf_publisher"]


def count_static_messages(probe: Probe, seconds: float) -> int:
    """/tf_static messages a new volatile reader hears in ``seconds`` once it has matched."""
    recorder = Recorder()
    subscription = probe.node.create_subscription(TFMessage, "/tf_static", recorder, volatile_qos())
    try:
        wait_until(lambda: subscription.get_publisher_count() > 0, what="/tf_static match")
        pause(0.3)
        start = len(recorder)
        pause(seconds)
        return len(recorder) - start
    finally:
        probe.node.destroy_subscription(subscription)


def test_the_republish_period_changes_at_runtime(probe: Probe, node: NodeUnderTest) -> None:
    assert [r.successful for r in node.set_parameters(static_republish_period=0.0)] == [True]
    assert count_static_messages(probe, 2.0) == 0  # 0: published once, latched
    assert [r.successful for r in node.set_parameters(static_republish_period=0.2)] == [True]
    assert count_static_messages(probe, 2.0) >= 3  # 10 on an idle machine
    refused = node.set_parameters(static_republish_period=-1.0)[0]
    assert not refused.successful and "static_republish_period" in refused.reason
    for too_fast in (1e-9, 0.0999):  # a busy timer: refused, the period kept
        refused = node.set_parameters(static_republish_period=too_fast)[0]
        assert not refused.successful and ">= 0.1 s" in refused.reason, refused.reason
    assert [r.successful for r in node.set_parameters(static_republish_period=0.1)] == [True]
    assert count_static_messages(probe, 1.0) >= 3  # 10 on an idle machine
    assert [r.successful for r in node.set_parameters(static_republish_period=0.2)] == [True]


# -- delayed joint states -----------------------------------------------------------------------


def send_until_stamp(
    probe: Probe,
    node: NodeUnderTest,
    topic: str,
    joint: str,
    child: str,
    stamp_s: float,
    expected_ns: int,
) -> None:
    """Publish ``joint`` at ``stamp_s`` on ``topic`` until /tf carries ``child`` at exactly
    ``expected_ns``."""
    publisher = probe.node.create_publisher(JointState, f"{NAMESPACE}/{topic}", 10)
    msg = JointState(name=[joint], position=[0.1])
    msg.header.stamp = stamp_msg(stamp_s)
    start = len(probe.tf)

    def seen() -> bool:
        publisher.publish(msg)
        pause(0.2)
        return any(
            t.child_frame_id == child and stamp_ns(t.header.stamp) == expected_ns
            for message in probe.tf.messages(start)
            for t in message.transforms
        )

    try:
        wait_until(
            seen, what=lambda: f"/tf with {child} at {expected_ns} ns ({node.stderr()[-300:]})"
        )
    finally:
        probe.node.destroy_publisher(publisher)


def test_time_offset_shifts_the_stamps_on_tf_by_exactly_the_offset(
    probe: Probe, node: NodeUnderTest
) -> None:
    stamp_s = fresh_stamp()
    send_until_stamp(
        probe, node, "joint_states", "joint_2", "link_2", stamp_s, seconds_to_ns(stamp_s)
    )
    assert [r.successful for r in node.set_parameters(time_offset=-0.25)] == [True]
    stamp_s = fresh_stamp()
    expected_ns = seconds_to_ns(stamp_s) - 250_000_000
    send_until_stamp(probe, node, "joint_states", "joint_2", "link_2", stamp_s, expected_ns)
    # A source_list topic adds its own offset on top.
    stamp_s = fresh_stamp()
    expected_ns = seconds_to_ns(stamp_s) - 254_000_000
    send_until_stamp(probe, node, GRIPPER_TOPIC, "joint_3", "link_3", stamp_s, expected_ns)
    refused = node.set_parameters(time_offset=float("nan"))[0]
    assert not refused.successful and "time_offset" in refused.reason


def set_atomically(probe: Probe, **values: Any) -> Any:
    """One SetParametersAtomically request to the node; its result."""
    client = probe.node.create_client(
        SetParametersAtomically, f"{NAMESPACE}/joint_tf_publisher/set_parameters_atomically"
    )
    try:
        assert client.wait_for_service(timeout_sec=WAIT_S)
        request = SetParametersAtomically.Request(
            parameters=[
                ParameterMsg(name=name, value=parameter_value(value))
                for name, value in values.items()
            ]
        )
        future = client.call_async(request)
        wait_until(future.done, what="set_parameters_atomically response")
        return future.result().result
    finally:
        probe.node.destroy_client(client)


def test_source_list_and_its_offsets_change_together(probe: Probe, node: NodeUnderTest) -> None:
    alone = node.set_parameters(source_list=[GRIPPER_TOPIC, "tool_states"])[0]
    assert not alone.successful and "source_time_offsets has 1 value(s)" in alone.reason
    result = set_atomically(
        probe, source_list=[GRIPPER_TOPIC, "tool_states"], source_time_offsets=[0.0, 0.5]
    )
    assert result.successful, result.reason
    stamp_s = fresh_stamp()
    expected_ns = seconds_to_ns(stamp_s) + 250_000_000  # time_offset -0.25, its own +0.5
    send_until_stamp(probe, node, "tool_states", "joint_5", "link_5", stamp_s, expected_ns)
    stamp_s = fresh_stamp()
    expected_ns = seconds_to_ns(stamp_s) - 250_000_000  # the gripper's offset is 0 now
    send_until_stamp(probe, node, GRIPPER_TOPIC, "joint_3", "link_3", stamp_s, expected_ns)


# -- a description change -----------------------------------------------------------------------


def changed_arm(text: str) -> str:
    """The arm with its camera moved 0.1 m along x and its optical frame removed."""
    moved = text.replace(
        '<origin xyz="0.06 0 -0.02" rpy="0 -1.5708 0"/>',
        '<origin xyz="0.16 0 -0.02" rpy="0 -1.5708 0"/>',
    )
    start = moved.index('<joint name="camera_optical_joint"')
    end = moved.index("</joint>", start) + len("</joint>")
    return (moved[:start] + moved[end:]).replace('<link name="camera_optical_frame"/>', "")


def test_a_description_change_moves_a_fixed_joint_and_names_the_frame_that_left(
    probe: Probe, node: NodeUnderTest
) -> None:
    diagnostics = probe.subscribe(
        DiagnosticArray,
        "/diagnostics",
        QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE),
    )
    changed = changed_arm(ARM_URDF.read_text())
    assert [r.successful for r in node.set_parameters(robot_description=changed)] == [True]
    statics = node.static_set()
    assert set(statics) == fixed_children(Robot.from_xml_string(changed))
    moved = statics["camera_link"].transform.translation
    assert (moved.x, moved.y, moved.z) == pytest.approx((0.16, 0.0, -0.02), abs=1e-9)
    wait_until(
        lambda: "1 frame(s) left the robot with this change: camera_optical_frame" in node.stderr(),
        what="the warning naming the frame that left",
    )

    def removed_in_report() -> bool:
        return any(
            status.name == STATUS_NAME
            and dict((v.key, v.value) for v in status.values).get(Key.REMOVED_FRAMES)
            == "camera_optical_frame"
            for array in diagnostics.messages()
            for status in array.status
        )

    wait_until(removed_in_report, WAIT_S, what="removed frames in the health report")
