"""callback_edge: what the node does with an exception a callback raised (no rclpy).

Counted in the health report (a WARN in the period it happened, the counts since start in
the values), logged with its cause and place the first time, then at most once per throttle
period with its count; one line, whatever the exception's text.
"""

from __future__ import annotations

from test_pipeline import Clock, RecordingLogger

from joint_tf_publisher.health import wording
from joint_tf_publisher.health.model import (
    MAX_SLOTS,
    GraphFacts,
    JointStateHealth,
    Key,
    Level,
)
from joint_tf_publisher.health.reporting import Reporter, Throttle
from joint_tf_publisher.node_core.callback_edge import MAX_TEXT, CallbackEdge


class Edge:
    """A CallbackEdge with its health model, recorded logger and settable clock."""

    def __init__(self) -> None:
        self.clock = Clock()
        self.logger = RecordingLogger()
        self.health = JointStateHealth()
        reporter = Reporter(self.logger, Throttle(10.0, lambda: self.clock.monotonic_s))
        self.edge = CallbackEdge(self.health, reporter)

    def fail(self, callback: str, error: Exception) -> str:
        """``error`` raised (so that it has a traceback) and handed to the edge."""
        try:
            raise error
        except Exception as raised:
            return self.edge.failed(callback, raised)

    def report_values(self) -> dict[str, str]:
        return dict(self.health.report(GraphFacts({}, 0)).values)


def test_a_failure_is_counted_and_logged_once_with_its_cause_and_place() -> None:
    rig = Edge()
    reason = rig.fail("joint_states", KeyError("joint_9"))
    assert reason == "joint_states: KeyError: 'joint_9'"
    assert rig.health.callback_failures == {"joint_states: KeyError": 1}
    ((level, line),) = rig.logger.lines
    assert level == "error"
    assert line.startswith(
        "callback failed, the node serves on: joint_states: KeyError: 'joint_9' (raised at "
    )
    assert "test_callback_edge.py:" in line and "in fail)" in line


def test_the_same_cause_again_is_counted_and_logged_at_most_once_per_period() -> None:
    rig = Edge()
    for _ in range(50):
        rig.fail("joint_states", KeyError("joint_9"))
    assert rig.health.callback_failures == {"joint_states: KeyError": 50}
    assert len(rig.logger.lines) == 1
    rig.clock.monotonic_s += 10.0
    rig.fail("joint_states", KeyError("joint_10"))
    assert len(rig.logger.lines) == 2
    assert rig.logger.lines[-1][1] == (
        "callback failed again, the node serves on: joint_states: KeyError: 'joint_10' "
        "(51x since start)"
    )


def test_another_cause_is_logged_at_once() -> None:
    rig = Edge()
    rig.fail("joint_states", KeyError("a"))
    rig.fail("joint_states", IndexError("b"))
    rig.fail("parameter change", KeyError("c"))
    assert len(rig.logger.lines) == 3
    assert rig.health.callback_failures == {
        "joint_states: KeyError": 1,
        "joint_states: IndexError": 1,
        "parameter change: KeyError": 1,
    }


def test_the_reason_is_one_short_line() -> None:
    rig = Edge()
    reason = rig.fail("set_attachments", ValueError("line one\nline two\t" + "x" * 1000))
    assert "\n" not in reason and len(reason) <= len("set_attachments: ValueError: ") + MAX_TEXT
    assert reason.startswith("set_attachments: ValueError: line one line two x")
    assert reason.endswith("...")
    assert rig.fail("diagnostics", RuntimeError()) == "diagnostics: RuntimeError"


def test_the_health_report_warns_in_the_period_and_counts_since_start() -> None:
    rig = Edge()
    assert rig.report_values()[Key.CALLBACK_FAILURES] == ""
    rig.fail("joint_states", KeyError("a"))
    rig.fail("joint_states", KeyError("a"))
    report = rig.health.report(GraphFacts({}, 0))
    sentence = wording.callback_failures(2, ["joint_states: KeyError"])
    assert sentence == (
        "2 callback failure(s), the node serves on (a bug: please report it with the log line "
        "of its first failure): joint_states: KeyError"
    )
    assert any(c.level == Level.WARN and c.message == sentence for c in report.conditions)
    assert dict(report.values)[Key.CALLBACK_FAILURES] == "joint_states: KeyError (2x)"
    # Next period, nothing new: no WARN, the counts stay.
    report = rig.health.report(GraphFacts({}, 0))
    assert not any("callback failure" in c.message for c in report.conditions)
    assert dict(report.values)[Key.CALLBACK_FAILURES] == "joint_states: KeyError (2x)"


def test_a_flood_of_causes_is_bounded_in_memory_and_in_log_lines() -> None:
    rig = Edge()
    for number in range(MAX_SLOTS + 500):
        rig.fail(f"topic_{number}", KeyError(number))
    assert len(rig.health.callback_failures) == MAX_SLOTS + 1
    assert rig.health.callback_failures[wording.OTHER_CAUSES] == 500
    assert len(rig.logger.lines) == MAX_SLOTS + 1  # the first of the folded ones only


def test_undecodable_messages_are_counted_and_said_in_a_throttled_warning() -> None:
    from test_pipeline import Rig

    rig = Rig()
    for _ in range(3):
        rig.pipeline.undecodable("sensor_msgs/JointState")
    rig.pipeline.undecodable("sensor_msgs/MultiDOFJointState")
    lines = rig.logger.containing("do not decode")
    assert lines == [
        (
            "warning",
            "sensor_msgs/JointState dropped: its bytes do not decode as the topic's type (a "
            "broken or hostile publisher) (reported at most every 10 s)",
        )
    ]
    report = rig.pipeline.health.report(GraphFacts({}, 0))
    values = dict(report.values)
    assert values[Key.UNDECODABLE] == (
        "sensor_msgs/JointState (3x), sensor_msgs/MultiDOFJointState (1x)"
    )
    assert any(
        c.level == Level.WARN
        and c.message
        == "4 message(s) dropped: its bytes do not decode as the topic's type (a broken or "
        "hostile publisher): sensor_msgs/JointState (3x), sensor_msgs/MultiDOFJointState (1x)"
        for c in report.conditions
    )
    assert dict(rig.pipeline.health.report(GraphFacts({}, 0)).values)[Key.UNDECODABLE] == ""
