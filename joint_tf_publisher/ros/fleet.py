"""The fleet: many robots in one process, one context (one DDS participant), one executor.

The console script ``joint_tf_fleet`` runs a node ``joint_tf_fleet`` whose string-array
parameter ``robots`` lists namespaces; for each it runs a complete ``JointTfPublisher``
(``<fleet namespace>/<ns>/joint_tf_publisher``: the node users know, with its parameters,
topics, services, /diagnostics) in the same context, served by the same executor. Each
robot's node is made with the process's ROS arguments as its own (``use_global_arguments=
False``, ``node_core.fleet.robot_arguments``: not the rules that rename a node or move its
namespace, which place the fleet's node), its parameters files copies of the files as they
are when it starts (``params_copies``: through the package's safe reader, so a FIFO cannot
block rcl): rcl applies their ``/<ns>/joint_tf_publisher:`` and ``/**`` keys by the node's
fully qualified name, as for a process of its own; a key deleted from a file is gone for a
robot started after.

What to start, stop and retry, and the fleet's status, are ``node_core.fleet``'s; this module
wires them. A robot's node is made out of the spin loop, in the fleet's one start thread (its
description expanded and loaded there: a slow xacro holds no other robot up), then served by
the loop, which adds it to the executor between two turns; nodes are destroyed between two
turns, never inside a callback: a change of ``robots``, a start that ended, or a check that
finds work (every ``CHECK_PERIOD_S``) wakes the loop, which reconciles and spins on. The loop,
the executor's choice and the stop signals are ``runtime``'s (``spin``, ``serve_until_stopped``):
the fleet is its ``Container``, as rclcpp_components' container reuses its executor. A robot
whose node does not start (``StartupError``: its description or parameters) is named in one
log line with the reason and in the fleet's /diagnostics status (``joint_tf_fleet:
robots``); the others serve on. SIGINT and SIGTERM stop every robot and exit 0, as the node
does (``StopSignals``).
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from functools import partial
from typing import Any

import rclpy
from diagnostic_msgs.msg import DiagnosticArray
from rcl_interfaces.msg import ParameterDescriptor, SetParametersResult
from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.executors import Executor
from rclpy.node import Node
from rclpy.parameter import Parameter

from ..errors import ModelError
from ..node_core.fleet import (
    CHECK_PERIOD_S,
    DEFAULT_RETRY_PERIOD_S,
    FLEET_TASK,
    MAX_RETRY_PERIOD_S,
    RETRY_PERIOD,
    ROBOTS,
    FileStamps,
    FleetState,
    file_stamps,
    merging_rule,
    named_as_given,
    params_copies,
    params_files,
    parse_retry_period,
    refused_log,
    robot_arguments,
    robot_node_namespace,
    wanted_robots,
)
from ..node_core.parameters import ParameterRejected
from ..node_core.stop_signals import END_DEADLINE, StopSignals
from . import runtime
from .diagnostics import TOPIC as DIAGNOSTICS_TOPIC
from .diagnostics import diagnostic_array
from .node import JointTfPublisher
from .parameter_declarations import StartupError
from .qos import diagnostics_qos

FLEET_NODE_NAME = "joint_tf_fleet"


class Fleet(Node):
    """The node ``joint_tf_fleet`` and the robots' nodes it runs (``robots``, by namespace): a
    ``runtime.Container``.

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
        # Dynamic typing, so that an integer stands for a double (``retry_period: 5``), as
        # for the node's doubles; ``parse_retry_period`` checks the type and the range.
        self.declare_parameter(
            RETRY_PERIOD,
            DEFAULT_RETRY_PERIOD_S,
            ParameterDescriptor(
                description="seconds between two retries of a refused robot (0: only when "
                f"the parameters files change), [0, {MAX_RETRY_PERIOD_S:g}]",
                dynamic_typing=True,
            ),
        )
        robots = self.get_parameter(ROBOTS).value  # None: not given
        retry_period = parse_retry_period(self.get_parameter(RETRY_PERIOD).value)
        #: What the fleet serves, and what it decides (``node_core.fleet``).
        self.state = FleetState(wanted_robots(robots), retry_period)
        #: The robots' nodes by namespace.
        self.robots: dict[str, JointTfPublisher] = {}
        self._params_files = params_files(argv)
        #: The ROS arguments of every robot's node (its parameters files copied at its start).
        self._robot_arguments = robot_arguments(argv)
        #: Makes the robots' nodes, one at a time, out of the spin loop.
        self._starter = ThreadPoolExecutor(max_workers=1, thread_name_prefix="joint_tf_fleet")
        #: The process's stop flag (``reconcile``'s).
        self._stop_requested: Callable[[], bool] = lambda: False
        #: The starts under way: their node (or why none), and the inputs they read.
        self._starts: dict[str, tuple[Future[JointTfPublisher | str], FileStamps]] = {}
        #: True while the loop has robots to start or stop (``reconcile``).
        self.pending = True
        #: Wakes the spin loop (set by ``runtime.spin``: ``wake_with``); thread-safe.
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
            if RETRY_PERIOD in values:
                retry_period = parse_retry_period(values[RETRY_PERIOD])
        except ParameterRejected as err:
            self.get_logger().warning(f"parameter change rejected: {err}")
            return SetParametersResult(successful=False, reason=str(err))
        if robots is not None:
            self.state.want(robots)
        if RETRY_PERIOD in values:
            self.state.retry_period_s = retry_period
        self.pending = True
        self.wake()
        return SetParametersResult(successful=True)

    def _inputs(self) -> FileStamps:
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
        now_ns: int = self.get_clock().now().nanoseconds
        name = f"{self.get_name()}: {FLEET_TASK}"
        hardware_id = self.get_fully_qualified_name()
        self._diagnostics.publish(diagnostic_array(self.state.report(), name, hardware_id, now_ns))

    def wake_with(self, wake: Callable[[], None] | None) -> None:
        """``runtime.spin``'s wake function while its loop runs (None: it ended)."""
        self.wake = wake or _nothing

    def callback_raised(self, err: Exception) -> None:
        """A callback raised ``err`` (a robot's: each guards its own, so rare): said, and
        the fleet serves on."""
        self.get_logger().error(f"a callback raised {type(err).__name__}: {err}; serving on")

    def reconcile(self, executor: Executor, stopped: Callable[[], bool] = lambda: False) -> None:
        """Serve the robots whose node was made (``_serve_started``), stop those no longer
        wanted, and start those due (``FleetState.plan``) in the start thread, until
        ``stopped()``; the executor gains and loses their nodes. Outside any callback."""
        self.pending = False
        self._stop_requested = stopped
        changed = self._serve_started(executor, stopped)
        inputs = self._inputs()
        plan = self.state.plan(time.monotonic(), inputs)
        for namespace in plan.stop:
            node = self.robots.pop(namespace)
            executor.remove_node(node)
            node.destroy_node()
            self.state.stopped(namespace)
            self.get_logger().info(f"robot {namespace} stopped")
        for namespace in plan.start:
            if stopped():
                return
            self.state.start(namespace)
            future = self._starter.submit(self._make, namespace, partial(self._gone, namespace))
            self._starts[namespace] = (future, inputs)
            future.add_done_callback(self._start_ended)
        if plan or changed:
            self.publish_report()

    def _gone(self, namespace: str) -> bool:
        """Whether a start of ``namespace`` is no longer wanted: the process stops, or the
        robot left ``robots`` (read from the start thread: one attribute read)."""
        return self._stop_requested() or namespace not in self.state.wanted

    def _make(self, namespace: str, gone: Callable[[], bool]) -> JointTfPublisher | str:
        """In the start thread: ``namespace``'s node, or why it did not start (one line);
        ``gone``: whether it is no longer wanted (a wait for its xacro gives up then)."""
        if gone():
            return "no longer wanted"
        try:
            with params_copies(self._robot_arguments) as cli_args:
                try:
                    return JointTfPublisher(
                        namespace=robot_node_namespace(self.get_namespace(), namespace),
                        context=self.context,
                        cli_args=cli_args,
                        use_global_arguments=False,
                        stopped=gone,
                    )
                except (StartupError, ModelError) as err:
                    return str(err)
                except Exception as err:  # rcl refusing a copy's YAML: the file as given
                    reason = f"{type(err).__name__}: {err}"
                    return named_as_given(reason, cli_args, self._robot_arguments)
        except ModelError as err:  # a parameters file the safe reader refused
            return str(err)
        except Exception as err:  # rclpy refusing its arguments: name it, serve on
            return f"{type(err).__name__}: {err}"

    def _start_ended(self, _future: Future[JointTfPublisher | str]) -> None:
        """A start ended (in the start thread): the loop serves or refuses the robot."""
        self.pending = True
        self.wake()

    def _serve_started(self, executor: Executor, stopped: Callable[[], bool]) -> bool:
        """Serve each robot whose node was made since (destroyed instead if no longer wanted,
        if it left ``robots`` while starting, or if the process stops), or record (and say
        once) why it did not start; whether any start ended. A robot removed and listed
        again while it started starts afresh (``FleetState.start_ended``): its start may have
        given up when it left, which is no refusal."""
        ended = [name for name, (future, _) in self._starts.items() if future.done()]
        for namespace in ended:
            future, inputs = self._starts.pop(namespace)
            stands = self.state.start_ended(namespace)  # False: it left robots meanwhile
            result = future.result()
            if isinstance(result, str):
                if stands and namespace in self.state.wanted:
                    self._refused(namespace, result, inputs)
            elif not stands or namespace not in self.state.wanted or stopped():
                result.destroy_node()
            else:
                self.robots[namespace] = result
                executor.add_node(result)
                self.state.started(namespace)
                self.get_logger().info(f"robot {namespace} serving")
        return bool(ended)

    def _refused(self, namespace: str, reason: str, inputs: FileStamps) -> None:
        if self.state.refuse(namespace, reason, time.monotonic(), inputs):
            self.get_logger().error(refused_log(namespace, reason, self.state.retry_period_s))

    def destroy_contained(self) -> None:
        """Destroy every robot's node (their publishers leave the graph), those of starts
        under way once they end (a wait for xacro gives up when the process stops)."""
        self._starter.shutdown(wait=True, cancel_futures=True)
        for future, _ in self._starts.values():
            if future.done() and not future.cancelled():
                result = future.result()
                if not isinstance(result, str):
                    result.destroy_node()
        self._starts.clear()
        for namespace in list(self.robots):
            self.robots.pop(namespace).destroy_node()
            self.state.stopped(namespace)
            END_DEADLINE.progress()  # the end deadline bounds each robot's, not their sum


def _nothing() -> None:
    """The wake function while no loop runs."""


def serve(fleet: Fleet, stop: StopSignals, executor: str | None = None) -> None:
    """Serve the fleet and its robots with ``executor`` until ``stop`` or a ROS shutdown:
    ``runtime.spin`` with the fleet as its ``Container`` (``runtime.container_executors``; the
    wait-set loop serves one node only, so the fleet uses the default then and says so).

    Between two turns of the loop the fleet reconciles its robots. An exception a callback
    raises ends that turn only: it is logged and the fleet serves on.
    """
    runtime.spin(fleet, stop, executor, container=fleet)


def main(args: list[str] | None = None, stop: StopSignals | None = None) -> int:
    """Console script ``joint_tf_fleet``: serve the robots until SIGINT or SIGTERM
    (``runtime.serve_until_stopped``).

    Returns 0 on a clean shutdown (also when stopped while starting); 1 with one line
    ``joint_tf_fleet: <reason>`` on stderr for arguments ROS refuses, a remapping rule that
    would send a name of every robot to one (``merging_rule``), a parameters file the
    safe reader refuses (not a regular file, too large) or an invalid ``robots`` list.
    """
    argv = list(sys.argv if args is None else args)
    return runtime.serve_until_stopped(
        FLEET_NODE_NAME, partial(_init_ros, argv), partial(_start, argv), stop
    )


def _init_ros(argv: list[str]) -> str | None:
    """``runtime.init_ros`` with ``argv``'s parameters files read through the safe reader (a
    FIFO refused, not waited on: rcl reads copies); why not (naming the files as given), or
    a remapping rule every robot's node would merge on (``merging_rule``)."""
    merging = merging_rule(argv)  # every robot's node is made with these rules
    if merging is not None:
        return merging
    try:
        with params_copies(argv) as init_argv:
            refused = runtime.init_ros(init_argv)
            return None if refused is None else named_as_given(refused, init_argv, argv)
    except ModelError as err:
        return str(err)


def _start(argv: list[str], _stopped: Callable[[], bool]) -> Fleet | str:
    """The fleet's node, or why not (its ``robots`` or ``retry_period``)."""
    try:
        return Fleet(argv)
    except (ParameterRejected, rclpy.exceptions.ParameterException) as err:
        return str(err)
