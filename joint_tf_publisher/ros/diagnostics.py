"""/diagnostics: the health report as an operator sees diagnostic_updater's.

One ``diagnostic_msgs/DiagnosticArray`` per report on ``/diagnostics`` (absolute, reliable,
keep last 1, as diagnostic_updater's publisher) with one status named
``<node name>: joint states``, ``hardware_id`` the robot's name, the report's level, message
and values. What the report says is ``health.JointStateHealth``'s; this module only writes
it as a message.
"""

from __future__ import annotations

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

from .health import HealthReport

TOPIC = "/diagnostics"
#: The task part of the status name, after the node's name (diagnostic_updater's "node: task").
TASK = "joint states"


def status_name(node_name: str) -> str:
    """The status name for node ``node_name`` (its name, not its namespace, as
    diagnostic_updater writes it)."""
    return f"{node_name}: {TASK}"


def diagnostic_array(report: HealthReport, node_name: str, stamp_ns: int) -> DiagnosticArray:
    """``report`` as a DiagnosticArray stamped ``stamp_ns`` (node clock)."""
    message = DiagnosticArray()
    message.header.stamp.sec, message.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
    message.status = [
        DiagnosticStatus(
            level=bytes([int(report.level)]),
            name=status_name(node_name),
            message=report.message,
            hardware_id=report.robot,
            values=[KeyValue(key=key, value=value) for key, value in report.values],
        )
    ]
    return message


class DiagnosticsPublisher:
    """The node's /diagnostics publisher."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._publisher = node.create_publisher(DiagnosticArray, TOPIC, 1)

    def publish(self, report: HealthReport, stamp_ns: int) -> None:
        """Publish ``report`` stamped ``stamp_ns`` (node clock, ns)."""
        self._publisher.publish(diagnostic_array(report, self._node.get_name(), stamp_ns))
