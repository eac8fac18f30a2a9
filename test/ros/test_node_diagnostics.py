"""/diagnostics from the node: the real console script over real DDS, read as
rqt_robot_monitor reads it (a DiagnosticArray subscription, the status by its name).

Each condition the health model reports (test/health/test_health.py drives them without DDS) is
checked here as an operator sees it: the status ``joint_tf_publisher: joint states`` with the
robot's name as hardware_id, its level and message, and the values by key; and its return to
OK. The probe streams joint states while it waits (a stream that pauses would turn STALE).
Every wait is on a condition with a generous timeout. The module runs once per executor the
node can spin with: the report is a steady-clock timer, which each loop must serve.
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Iterator, Sequence
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("diagnostic_msgs.msg", reason="needs diagnostic_msgs (run in .venv)")

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from node_harness import (  # noqa: E402
    NodeUnderTest,
    Probe,
    probe_per_executor,  # noqa: F401 (the module's probe: each executor in turn)
    started,
    wait_until,
)
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from joint_tf_publisher.health.model import Key  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
STATUS_NAME = "joint_tf_publisher: joint states"
ROBOT = "arm_mimic_gripper"
LEADERS = [f"joint_{i}" for i in range(1, 8)] + ["finger_joint"]
FAST = {"diagnostic_period": 0.2, "joint_state_timeout": 0.6}
#: Keys the arm is given that the node does not declare (issue 47): in its params file's
#: ``/**`` section (the name a user guesses for attachments.names, a misspelt one) and as a
#: ``-p`` override (a parameter of another node). And a key that would forge a log line and
#: colour a terminal (rcl takes any key of a params file; written here as a YAML quoted key).
FORGING_KEY = "forged\n[ERROR] [other]: \x1b[31mred"
UNKNOWN_IN_FILE = {
    "attachments": ["tool"],
    "publish_frequncy": 5.0,
    json.dumps(FORGING_KEY): 1,
}
UNKNOWN_ARGUMENTS = ("-p", "robots:=[a]")


class Monitor:
    """/diagnostics as rqt_robot_monitor reads it: the node's status, newest last."""

    def __init__(self, probe: Probe) -> None:
        self.statuses: list[DiagnosticStatus] = []
        qos = QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE)
        self._subscription = probe.node.create_subscription(
            DiagnosticArray, "/diagnostics", self._on_array, qos
        )
        self._probe = probe

    def _on_array(self, array: DiagnosticArray) -> None:
        self.statuses += [status for status in array.status if status.name == STATUS_NAME]

    def wait(
        self,
        level: bytes,
        words: str,
        stream: Callable[[], None] | None = None,
        where: Callable[[DiagnosticStatus], bool] = lambda status: True,
    ) -> DiagnosticStatus:
        """The first status from now on at ``level`` whose message holds ``words`` (and for
        which ``where`` holds); calls ``stream`` (a joint-state publication) between looks."""
        start = len(self.statuses)

        def found() -> DiagnosticStatus | None:
            if stream is not None:
                stream()
            for status in self.statuses[start:]:
                if status.level == level and words in status.message and where(status):
                    return status
            return None

        seen = lambda: [(s.level, s.message) for s in self.statuses[-3:]]  # noqa: E731
        status: DiagnosticStatus = wait_until(
            found, what=lambda: f"{level!r} status with {words!r}; last: {seen()}"
        )
        return status

    def close(self) -> None:
        self._probe.node.destroy_subscription(self._subscription)


def values(status: DiagnosticStatus) -> dict[str, str]:
    return {pair.key: pair.value for pair in status.values}


def streaming(node: NodeUnderTest, names: Sequence[str], positions: Sequence[float]) -> Any:
    """A callable publishing one JointState of ``names`` stamped now (the node clock's
    domain: system time)."""
    return lambda: node.publish(names, positions, time.time())


@pytest.fixture(scope="module")
def arm(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    params = {"robot_description": ARM_URDF.read_text(), **FAST, **UNKNOWN_IN_FILE}
    node = started(
        probe, tmp_path_factory, "/diag_arm", params, handshake=None, arguments=UNKNOWN_ARGUMENTS
    )
    yield node
    node.stop()


@pytest.fixture(scope="module")
def monitor(probe: Probe) -> Iterator[Monitor]:
    reader = Monitor(probe)
    yield reader
    reader.close()


class TestArm:
    """One node on the arm; the tests run in order, each a step of one session."""

    def test_nothing_received_is_an_error_naming_the_publishers(
        self, arm: NodeUnderTest, monitor: Monitor
    ) -> None:
        # The graph learns node names a little after the publisher itself: wait for the name.
        status = monitor.wait(
            DiagnosticStatus.ERROR,
            "no joint state received",
            where=lambda status: values(status)[Key.PUBLISHERS] == "1, /node_e2e_probe",
        )
        assert "1 publisher(s) on joint_states sent nothing" in status.message
        assert status.hardware_id == ROBOT

    def test_a_never_received_joint_is_named_with_its_frames(
        self, arm: NodeUnderTest, monitor: Monitor
    ) -> None:
        names = [name for name in LEADERS if name != "joint_7"]
        stream = streaming(arm, names, [0.0] * len(names))
        status = monitor.wait(DiagnosticStatus.WARN, "1 joint(s) never received: joint_7", stream)
        assert values(status)[Key.NEVER_RECEIVED] == "joint_7"
        missing = values(status)[Key.MISSING_FRAMES].split(", ")
        assert {"link_7", "ee_link", "hand", "left_knuckle"} <= set(missing)  # all below joint_7
        assert "link_6" not in missing
        assert float(values(status)[Key.RATE_IN]) > 0.0
        # The same fact in the log: one throttled WARN saying what usually publishes them.
        line = wait_until(
            lambda: next(
                (text for text in arm.stderr().splitlines() if "never received: joint_7" in text),
                None,
            ),
            what="the never-received warning in the log",
        )
        assert line.startswith("[WARN]") and "joint_state_broadcaster" in line

    def test_clamping_is_a_warning_naming_the_joint(
        self, arm: NodeUnderTest, monitor: Monitor
    ) -> None:
        positions = [0.0] * len(LEADERS)
        positions[1] = 3.0  # joint_2's upper limit is 2.41
        status = monitor.wait(DiagnosticStatus.WARN, "clamped", streaming(arm, LEADERS, positions))
        assert "beyond the limit" in values(status)[Key.CLAMPED]
        assert values(status)[Key.CLAMPED].startswith("joint_2 (")

    def test_all_well_returns_to_ok(self, arm: NodeUnderTest, monitor: Monitor) -> None:
        stream = streaming(arm, LEADERS, [0.1] * len(LEADERS))
        status = monitor.wait(DiagnosticStatus.OK, "joint states OK", stream)
        assert values(status)[Key.NEVER_RECEIVED] == ""
        assert values(status)[Key.ROBOT] == ROBOT

    def test_a_joint_from_two_publishers_names_both_nodes(
        self, arm: NodeUnderTest, probe: Probe, monitor: Monitor
    ) -> None:
        other = rclpy.create_node("arm_controller", context=probe.context)
        try:
            publisher = other.create_publisher(JointState, f"{arm.namespace}/joint_states", 10)
            stream = streaming(arm, LEADERS, [0.0] * len(LEADERS))

            def both() -> None:
                stream()
                message = JointState(name=["joint_1"], position=[0.2])
                message.header.stamp = other.get_clock().now().to_msg()
                publisher.publish(message)

            status = monitor.wait(
                DiagnosticStatus.WARN, "joint_1 (/arm_controller, /node_e2e_probe)", both
            )
            assert status.message.startswith("joints given by two publishers: ")
        finally:
            other.destroy_node()

    def test_keys_the_node_does_not_declare_are_warned_once_and_counted(
        self, arm: NodeUnderTest, monitor: Monitor
    ) -> None:
        """rclpy drops them silently: the node warns once per key (naming what was meant,
        and that a /** section is every node's), counts them, and runs as it would."""
        status = wait_until(lambda: monitor.statuses[-1] if monitor.statuses else None)
        counted = values(status)[Key.UNKNOWN_PARAMETERS]
        forged = "forged\\n[ERROR] [other]: \\x1b[31mred"  # escaped: one line, no colour
        assert counted == f"4, attachments, {forged}, publish_frequncy, robots", counted
        warned = [line for line in arm.stderr().splitlines() if "none of its parameters" in line]
        assert len(warned) == 4, arm.stderr()
        assert all(line.startswith("[WARN]") and "/**" in line for line in warned)
        assert "'attachments'" in warned[0] and "did you mean attachments.names?" in warned[0]
        assert forged in warned[1] and "\x1b" not in arm.stderr()
        assert "did you mean publish_frequency?" in warned[2]
        assert "'robots'" in warned[3] and "did you mean" not in warned[3]

    def test_a_stream_that_stops_is_stale(self, arm: NodeUnderTest, monitor: Monitor) -> None:
        status = monitor.wait(DiagnosticStatus.STALE, "the joint-state stream stopped")
        assert float(values(status)[Key.LAST_AGE]) >= FAST["joint_state_timeout"]


def test_no_publisher_and_a_sim_clock_without_clock_are_said_in_words(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> None:
    params = {"robot_description": ARM_URDF.read_text(), **FAST}
    node = started(probe, tmp_path_factory, "/diag_clock", params, handshake=None)
    monitor = Monitor(probe)
    try:
        probe.node.destroy_publisher(node.joint_states)
        probe.node.destroy_publisher(node.multi_dof)
        status = monitor.wait(DiagnosticStatus.ERROR, "nothing publishes joint_states")
        assert values(status)[Key.PUBLISHERS] == "0"
        assert node.set_parameters(use_sim_time=True)[0].successful
        status = monitor.wait(DiagnosticStatus.ERROR, "no /clock has been received")
        assert "clock" in status.message and "use_sim_time" in status.message
    finally:
        monitor.close()
        node.stop()
