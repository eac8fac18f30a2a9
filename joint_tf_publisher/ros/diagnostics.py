"""/diagnostics: the health report as an operator sees diagnostic_updater's, on a timer.

One ``diagnostic_msgs/DiagnosticArray`` per report on ``/diagnostics`` (absolute, reliable,
keep last 1, as diagnostic_updater's publisher) with one status named
``<node name>: joint states``, ``hardware_id`` the robot's name, the report's level, message
and values. What the report says is ``health.JointStateHealth``'s; this module only writes
it as a message (``diagnostic_array``: the fleet's status too).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Protocol

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rclpy.node import Node

from ..health.model import GraphFacts, JointStateHealth, Level
from ..health.reporting import Reporter
from ..node_core.joint_sources import JOINT_STATES_SOURCE, MULTI_DOF_SOURCE
from ..stamps import ns_to_stamp
from .qos import diagnostics_qos
from .timers import RestartableTimer

TOPIC = "/diagnostics"
#: The task part of the status name, after the node's name (diagnostic_updater's "node: task").
TASK = "joint states"


def status_name(node_name: str) -> str:
    """The status name for node ``node_name`` (its name, not its namespace, as
    diagnostic_updater writes it)."""
    return f"{node_name}: {TASK}"


class Status(Protocol):
    """What one status of a DiagnosticArray says: the health report's, the fleet's."""

    @property
    def level(self) -> Level: ...

    @property
    def message(self) -> str: ...

    @property
    def values(self) -> tuple[tuple[str, str], ...]: ...


def diagnostic_array(status: Status, name: str, hardware_id: str, stamp_ns: int) -> DiagnosticArray:
    """``status`` as a DiagnosticArray of one status named ``name`` (diagnostic_updater's
    ``<node name>: <task>``) for ``hardware_id``, stamped ``stamp_ns`` (node clock)."""
    message = DiagnosticArray()
    message.header.stamp.sec, message.header.stamp.nanosec = ns_to_stamp(stamp_ns)
    message.status = [
        DiagnosticStatus(
            level=bytes([int(status.level)]),
            name=name,
            message=status.message,
            hardware_id=hardware_id,
            values=[KeyValue(key=key, value=value) for key, value in status.values],
        )
    ]
    return message


class DiagnosticsPublisher:
    """The node's /diagnostics publisher and the timer of its health report.

    ``reporter`` logs the report's warning (throttled); ``guard`` (a name, a callback) gives
    the timer's callback as the node guards its callbacks (``edges.Edges.timer``).
    """

    def __init__(
        self,
        node: Node,
        health: JointStateHealth,
        reporter: Reporter,
        guard: Callable[[str, Callable[[], None]], Callable[..., Any]] | None = None,
    ) -> None:
        self._node = node
        self._health = health
        self._reporter = reporter
        #: The joint-state topics the node reads by source number (``joint_sources``), whose
        #: publishers the report names; the node adds its ``source_list`` topics.
        self.topics = {
            JOINT_STATES_SOURCE: "joint_states",
            MULTI_DOF_SOURCE: "multi_dof_joint_states",
        }
        self._publisher = node.create_publisher(DiagnosticArray, TOPIC, diagnostics_qos())
        report = self.report if guard is None else guard("diagnostics", self.report)
        self._timer = RestartableTimer(node, report)

    def restart(self, period_s: float) -> None:
        """Report every ``period_s`` s of the steady clock (a sim clock that never starts must
        not stop the report that says so); never for 0."""
        self._timer.restart(period_s)

    def report(self) -> None:
        """Publish the health report and log its warning about joints never received."""
        node = self._node
        topics = dict(self.topics)
        publishers = {number: self._publisher_nodes(topic) for number, topic in topics.items()}
        use_sim_time = bool(node.get_parameter("use_sim_time").value)
        now_ns: int = node.get_clock().now().nanoseconds
        report = self._health.report(GraphFacts(publishers, now_ns, use_sim_time, topics))
        name = status_name(node.get_name())
        self._publisher.publish(diagnostic_array(report, name, report.robot, now_ns))
        if report.missing_log is not None:
            self._reporter.warn_throttled("never received", report.missing_log)

    def forget(self, topic: str) -> None:
        """The node no longer reads ``topic``."""
        for number in [number for number, name in self.topics.items() if name == topic]:
            del self.topics[number]

    def _publisher_nodes(self, topic: str) -> tuple[str, ...]:
        """Fully qualified names of the nodes publishing ``topic`` (relative to the node)."""
        infos = self._node.get_publishers_info_by_topic(self._node.resolve_topic_name(topic))
        return tuple(
            sorted(f"{info.node_namespace.rstrip('/')}/{info.node_name}" for info in infos)
        )
