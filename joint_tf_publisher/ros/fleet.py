"""The fleet: many robots in one process, one context (one DDS participant), one executor.

The console script ``joint_tf_fleet`` runs a node ``joint_tf_fleet`` whose string-array
parameter ``robots`` lists namespaces; for each it runs a complete ``JointTfPublisher``
(``/<ns>/joint_tf_publisher``: the node users know, with its parameters, topics, services,
/diagnostics) in the same context, served by the same executor. Each robot's parameters
come from the process's ``--params-file`` arguments as they would for a process of its own
(rcl applies ``/<ns>/joint_tf_publisher:`` and ``/**`` keys by the node's fully qualified
name); a robot started after a parameters file changed reads that file again (handed to its
node as its own ``--params-file``, which overrides the process's).

What to start, stop and retry, and the fleet's status, are ``node_core.fleet``'s; this module
wires them. Robots are made and destroyed between two turns of the spin loop (``runtime``'s
``SpinLoop`` or ``OnceLoop``), never inside a callback: a change of ``robots`` or a check
that finds work (every ``CHECK_PERIOD_S``) wakes the loop, which reconciles and spins on.
A robot whose node does not start (``StartupError``: its description or parameters) is named
in one log line with the reason and in the fleet's /diagnostics status
(``joint_tf_fleet: robots``); the others serve on. SIGINT and SIGTERM stop every robot and
exit 0, as the node does (``StopSignals``).
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable, Sequence
from typing import Any

import rclpy
from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue
from rcl_interfaces.msg import FloatingPointRange, ParameterDescriptor, SetParametersResult
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.executors import Executor
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..node_core.fleet import (
    CHECK_PERIOD_S,
    DEFAULT_RETRY_PERIOD_S,
    FLEET_TASK,
    MAX_RETRY_PERIOD_S,
    RETRY_PERIOD,
    ROBOTS,
    FileStamp,
    FleetState,
    file_stamps,
    params_files,
    parse_retry_period,
    refused_log,
    wanted_robots,
)
from ..node_core.parameters import ParameterRejected
from ..node_core.stop_signals import StopSignals
from ..stamps import ns_to_stamp
from . import runtime
from .node import JointTfPublisher, StartupError
from .qos import diagnostics_qos

FLEET_NODE_NAME = "joint_tf_fleet"
DIAGNOSTICS_TOPIC = "/diagnostics"


class Fleet(Node):
    """The node ``joint_tf_fleet`` and the robots' nodes it runs (``robots``, by namespace).

    ``argv``: the process's command line (its ``--params-file`` paths are read again for
    robots started after those files changed).
    """

    def __init__(self, argv: Sequence[str], **kwargs: Any) -> None:
        super().__init__(FLEET_NODE_NAME, **kwargs)
        # Dynamic typing, so that an empty array of any type clears the list (ros2cli sends
        # "[]" as a BOOL_ARRAY); ``wanted_robots`` checks the items are strings.
        self.declare_parameter(
            ROBOTS,
            None,
            ParameterDescriptor(
                description="namespaces of the robots: one joint_tf_publisher node in each",
                dynamic_typing=True,
            ),
        )
        self.declare_parameter(
            RETRY_PERIOD,
            DEFAULT_RETRY_PERIOD_S,
            ParameterDescriptor(
                description="seconds between two retries of a refused robot (0: only when "
                "the parameters files change)",
                # An integer too (ros2cli sends ``retry_period 5`` as one): parse_retry_period.
                dynamic_typing=True,
                floating_point_range=[
                    FloatingPointRange(from_value=0.0, to_value=MAX_RETRY_PERIOD_S)
                ],
            ),
        )
        robots = self.get_parameter(ROBOTS).value  # None: not given
        retry_period = parse_retry_period(self.get_parameter(RETRY_PERIOD).value)
        #: What the fleet serves, and what it decides (``node_core.fleet``).
        self.state = FleetState(wanted_robots(robots), retry_period)
        #: The robots' nodes by namespace.
        self.robots: dict[str, JointTfPublisher] = {}
        self._params_files = params_files(argv)
        self._params_stamps = file_stamps(self._params_files)
        #: True while the loop has robots to start or stop (``reconcile``).
        self.pending = True
        #: Wakes the spin loop (set by ``serve``); thread-safe.
        self.wake: Callable[[], None] = _nothing
        self.add_on_set_parameters_callback(self._on_set_parameters)
        self._diagnostics = self.create_publisher(
            DiagnosticArray, DIAGNOSTICS_TOPIC, diagnostics_qos()
        )
        self.create_timer(
            CHECK_PERIOD_S, self._check, clock=Clock(clock_type=ClockType.STEADY_TIME)
        )

    def _on_set_parameters(self, parameters: list[Parameter[Any]]) -> SetParametersResult:
        """A new ``robots`` list (validated whole) or ``retry_period``: the loop reconciles."""
        values = {parameter.name: parameter.value for parameter in parameters}
        try:
            if ROBOTS in values and values[ROBOTS] is None:
                raise ParameterRejected(f"{ROBOTS} cannot be unset: give [] for no robot")
            robots = wanted_robots(values[ROBOTS]) if ROBOTS in values else None
            retry_period = (
                parse_retry_period(values[RETRY_PERIOD]) if RETRY_PERIOD in values else None
            )
        except ParameterRejected as err:
            self.get_logger().warning(f"parameter change rejected: {err}")
            return SetParametersResult(successful=False, reason=str(err))
        if robots is not None:
            self.state.want(robots)
        if retry_period is not None:
            self.state.retry_period_s = retry_period
        self.pending = True
        self.wake()
        return SetParametersResult(successful=True)

    def _inputs(self) -> tuple[FileStamp, ...]:
        """What a robot's start reads besides the description: the parameters files."""
        return file_stamps(self._params_files)

    def _check(self) -> None:
        """Every ``CHECK_PERIOD_S``: wake the loop if a robot is due (to start, stop or
        retry); publish the fleet's status."""
        if self.state.plan(time.monotonic(), self._inputs()):
            self.pending = True
            self.wake()
        self.publish_report()

    def publish_report(self) -> None:
        """The fleet's status on /diagnostics: ``joint_tf_fleet: robots``."""
        report = self.state.report()
        message = DiagnosticArray()
        now_ns: int = self.get_clock().now().nanoseconds
        message.header.stamp.sec, message.header.stamp.nanosec = ns_to_stamp(now_ns)
        message.status = [
            DiagnosticStatus(
                level=bytes([int(report.level)]),
                name=f"{self.get_name()}: {FLEET_TASK}",
                message=report.message,
                hardware_id=self.get_fully_qualified_name(),
                values=[KeyValue(key=key, value=value) for key, value in report.values],
            )
        ]
        self._diagnostics.publish(message)

    def reconcile(self, executor: Executor, stopped: Callable[[], bool] = lambda: False) -> None:
        """Stop the robots no longer wanted, start those due (``FleetState.plan``), until
        ``stopped()``; the executor gains and loses their nodes. Outside any callback."""
        self.pending = False
        inputs = self._inputs()
        plan = self.state.plan(time.monotonic(), inputs)
        for namespace in plan.stop:
            node = self.robots.pop(namespace)
            executor.remove_node(node)
            node.destroy_node()
            self.state.stopped(namespace)
            self.get_logger().info(f"robot {namespace} stopped")
        cli_args = None
        if inputs != self._params_stamps:  # edited since the process read them: read again
            cli_args = ["--ros-args"]
            for path in self._params_files:
                cli_args += ["--params-file", str(path)]
        for namespace in plan.start:
            if stopped():
                return
            self._start(namespace, executor, cli_args, inputs, stopped)
        if plan:
            self.publish_report()

    def _start(
        self,
        namespace: str,
        executor: Executor,
        cli_args: list[str] | None,
        inputs: tuple[FileStamp, ...],
        stopped: Callable[[], bool],
    ) -> None:
        """Make ``namespace``'s node and serve it, or record (and say once) why it did not
        start; ``stopped``: the process's stop flag (a robot's wait for xacro gives up on it)."""
        try:
            node = JointTfPublisher(
                namespace=namespace, context=self.context, cli_args=cli_args, stopped=stopped
            )
        except StartupError as err:
            self._refused(namespace, str(err), inputs)
            return
        except Exception as err:  # rcl or rclpy refusing its arguments: name it, serve on
            self._refused(namespace, f"{type(err).__name__}: {err}", inputs)
            return
        self.robots[namespace] = node
        executor.add_node(node)
        self.state.started(namespace)
        self.get_logger().info(f"robot {namespace} serving")

    def _refused(self, namespace: str, reason: str, inputs: tuple[FileStamp, ...]) -> None:
        if self.state.refuse(namespace, reason, time.monotonic(), inputs):
            self.get_logger().error(refused_log(namespace, reason, self.state.retry_period_s))

    def destroy_robots(self) -> None:
        """Destroy every robot's node (their publishers leave the graph)."""
        for namespace in list(self.robots):
            self.robots.pop(namespace).destroy_node()
            self.state.stopped(namespace)


def executors() -> tuple[str, ...]:
    """The executors the fleet can spin with, the default first (``runtime``'s but
    ``waitset``, which serves one node)."""
    return tuple(kind for kind in runtime.available_executors() if kind != runtime.WAITSET)


def _nothing() -> None:
    """The wake function before the loop runs."""


def serve(fleet: Fleet, stop: StopSignals, executor: str | None = None) -> None:
    """Serve the fleet and its robots with ``executor`` (``runtime.EVENTS`` or
    ``runtime.RCLPY``; None: as ``runtime.EXECUTOR_VARIABLE`` says; ``waitset`` serves one
    node only, so the fleet uses the default then) until ``stop`` or a ROS shutdown.

    Between two turns of the loop the fleet reconciles its robots. An exception a callback
    raises ends that turn only: it is logged and the fleet serves on.
    """
    logger = fleet.get_logger()
    if executor is None:
        executor, warning = runtime.choose_executor(os.environ.get(runtime.EXECUTOR_VARIABLE))
        if warning is not None:
            logger.warning(warning)
    if executor not in executors():
        executor = executors()[0]
        logger.warning(f"the wait-set loop serves one node only: the fleet spins with {executor}")
    logger.info(f"spinning with {runtime.SPINNING_WITH[executor]}")
    spinner = runtime.new_executor(executor, fleet.context)
    loop: runtime.SpinLoop | runtime.OnceLoop = (
        runtime.SpinLoop(spinner, fleet.context)
        if executor == runtime.EVENTS
        else runtime.OnceLoop(spinner, fleet)
    )
    stopped = stop.requested.is_set
    try:
        spinner.add_node(fleet)
        fleet.wake = loop.wake
        stop.wake_with(loop.wake)
        try:
            while not stopped() and fleet.context.ok():
                if fleet.pending:
                    fleet.reconcile(spinner, stopped)
                try:
                    loop.run(lambda: stopped() or fleet.pending)
                except Exception as err:
                    if not fleet.context.ok():
                        return
                    logger.error(f"a callback raised {type(err).__name__}: {err}; serving on")
        finally:
            stop.wake_with(None)
            fleet.wake = _nothing
    finally:
        loop.close()
        spinner.shutdown(timeout_sec=runtime.EXECUTOR_SHUTDOWN_S)


def main(args: list[str] | None = None, stop: StopSignals | None = None) -> int:
    """Console script ``joint_tf_fleet``: serve the robots until SIGINT or SIGTERM.

    Returns 0 on a clean shutdown (also when stopped while starting); 1 with one line
    ``joint_tf_fleet: <reason>`` on stderr for arguments ROS refuses or an invalid
    ``robots`` list.
    """
    stop = stop or StopSignals()
    argv = list(sys.argv if args is None else args)
    try:
        refused = runtime.init_ros(argv)
        if refused is not None:
            return _startup_failure(refused)
        if stop.requested.is_set():
            return 0
        try:
            fleet = Fleet(argv)
        except (ParameterRejected, rclpy.exceptions.ParameterException) as err:
            return _startup_failure(str(err))
        try:
            serve(fleet, stop)
        finally:
            stop.close()  # from here on nothing wakes the loop
            fleet.destroy_robots()
            fleet.destroy_node()
        return 0
    finally:
        stop.close()
        rclpy.get_default_context().try_shutdown()  # not rclpy.try_shutdown: see runtime.main
        stop.ignore_from_now_on()


def _startup_failure(reason: str) -> int:
    print(f"{FLEET_NODE_NAME}: {' '.join(reason.split())}", file=sys.stderr)
    return 1
