"""Running the node: ``main`` (the console script) and ``spin``, on public rclpy API only.

Executors. ``spin`` serves the node with rclpy's events executor,
``rclpy.experimental.EventsExecutor``, where this rclpy has it (Jazzy, Kilted, Rolling), else
with rclpy's ``SingleThreadedExecutor`` (Humble). ``JOINT_TF_PUBLISHER_EXECUTOR`` in the
environment picks another: ``rclpy`` opts out of the events executor (experimental upstream);
``waitset`` opts in to ``waitset_loop``, the one module on private rclpy API (less CPU than
rclpy's executor where there is no events executor). An unknown value, or ``events`` where
rclpy lacks it, is logged as one warning and the default is used. The node logs which
executor spins.

Stopping. ``main`` gets ``StopSignals`` (SIGINT and SIGTERM only set a flag; a thread of theirs
calls the wake function given to ``wake_with``), so no signal ever raises into Python code:
any number of them, at any moment, end the node with exit code 0 and no traceback. ``spin``
runs the events executor until a Future of its own, ``SpinLoop``'s turn, completes: a stop
signal, any other signal with a Python handler, and a ROS shutdown complete it
(``SpinLoop.wake``); the spin returns, and the loop ends or spins on a new turn. rclpy's
executor runs one callback at a time in ``OnceLoop``, whose ``wake`` triggers a guard
condition of the node's (a Future would grow there: see ``OnceLoop``).

Containers. A node that serves other nodes in its executor (the fleet, ``ros.fleet``) is a
``Container``: ``main`` and ``spin`` serve it as they serve the node, and between two turns of
the loop (outside any callback) it adds nodes to the executor and removes them, as
rclcpp_components' component container loads components into the executor that spins it.
"""

from __future__ import annotations

import importlib
import os
import sys
import threading
from collections.abc import Callable
from typing import Protocol, runtime_checkable

import rclpy
from rclpy.context import Context
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.guard_condition import GuardCondition
from rclpy.impl.rcutils_logger import RcutilsLogger
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future

from ..errors import ModelError
from ..node_core.names import NODE_NAME
from ..node_core.stop_signals import END_DEADLINE, StopSignals
from .node import JointTfPublisher
from .parameter_declarations import StartupError

#: Environment variable naming the executor to spin with: one of ``EXECUTORS``.
EXECUTOR_VARIABLE = "JOINT_TF_PUBLISHER_EXECUTOR"
EVENTS, RCLPY, WAITSET = "events", "rclpy", "waitset"
#: The executors; the first one this rclpy has is the default (``waitset``: opt-in only).
EXECUTORS = (EVENTS, RCLPY, WAITSET)
#: What the node logs at startup: "spinning with ...".
SPINNING_WITH = {
    EVENTS: "rclpy's events executor (rclpy.experimental.EventsExecutor)",
    RCLPY: "rclpy's executor (rclpy.executors.SingleThreadedExecutor)",
    WAITSET: "the wait-set loop (rclpy's private wait-set binding)",
}
#: Longest one spin of the events executor lasts, seconds; the loop then spins again. Without
#: a timeout it (rclpy 9.1.2) keeps about half a core busy while idle, and may miss a Future
#: completed on another thread (measured).
TURN_S = 3600.0
#: Longest the executor's shutdown waits for a spin to end, seconds (it has ended already).
EXECUTOR_SHUTDOWN_S = 1.0


def init_ros(args: list[str] | None) -> str | None:
    """``rclpy.init`` with the command line ``args`` (None: the process's), rclpy's own
    signal handlers left out (the stop signals are the process's); the one-line reason
    when ROS refuses the arguments, else None."""
    try:
        rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
    except Exception as err:  # rcl reports bad --ros-args as RCLError, with a long text
        first_line = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
        return f"cannot initialise ROS: {first_line}"
    return None


#: What making a console script's node gave: the node, why it did not start (one line), or
#: None when a stop signal gave its start up.
Started = Node | str | None


def main(args: list[str] | None = None, stop: StopSignals | None = None) -> int:
    """Console script ``joint_tf_publisher``: run the node until SIGINT or SIGTERM.

    ``stop``: the stop signals, if installed already (the console script installs them before
    importing anything heavy). Returns 0 on a clean shutdown, also when stopped while
    starting; 1 with one line ``joint_tf_publisher: <reason>`` on stderr when the node cannot
    start.
    """
    return serve_until_stopped(NODE_NAME, lambda: init_ros(args), _start_node, stop)


def _start_node(stopped: Callable[[], bool]) -> Started:
    """The node, why it did not start, or None when ``stopped()`` while it started (a xacro
    expansion given up)."""
    try:
        return JointTfPublisher(stopped=stopped)
    except StartupError as err:
        return None if stopped() else str(err)
    except (ModelError, ValueError, TypeError, rclpy.exceptions.ParameterException) as err:
        return f"{type(err).__name__}: {err}"


def serve_until_stopped(
    name: str,
    init: Callable[[], str | None],
    start: Callable[[Callable[[], bool]], Started],
    stop: StopSignals | None = None,
) -> int:
    """Run a console script's node until SIGINT, SIGTERM or a ROS shutdown: ``init`` ROS
    (None, or the one-line reason it refused), ``start`` the node (given whether a stop was
    requested), ``spin`` it (a ``Container``: with the nodes it serves), then destroy it (a
    container's nodes first) and shut ROS down.

    ``name``: the console script's, which begins its one-line refusal on stderr. ``stop``: the
    stop signals, if installed already. Returns 0 on a clean shutdown, also when stopped while
    starting; 1 when ROS or the node did not start.
    """
    stop = stop or StopSignals()
    try:
        refused = init()
        if refused is not None:
            return _startup_failure(name, refused)
        if stop.requested.is_set():
            return 0
        node = start(stop.requested.is_set)
        if node is None:
            return 0
        if isinstance(node, str):
            return _startup_failure(name, node)
        container = node if isinstance(node, Container) else None
        try:
            spin(node, stop, container=container)
        finally:
            END_DEADLINE.start()  # the teardown begins
            stop.close()  # from here on nothing wakes the loop
            if container is not None:
                container.destroy_contained()
            node.destroy_node()
        return 0
    finally:
        END_DEADLINE.start()
        stop.close()
        # The default context's own shutdown, not rclpy.try_shutdown(): rclpy 9's (Kilted)
        # also uninstalls rclpy's signal handlers (none here), and its C code reads each one by
        # setting SIGINT and SIGTERM to SIG_DFL for a moment, in which a second Ctrl-C killed
        # the node (exit -2; seen with strace).
        rclpy.get_default_context().try_shutdown()
        stop.ignore_from_now_on()


@runtime_checkable
class Container(Protocol):
    """A node that serves other nodes in the executor that spins it, adding and removing them
    between two turns of the spin loop, never inside a callback (the fleet: its robots'
    nodes). The loop calls ``reconcile`` before its first turn and whenever ``pending``."""

    @property
    def pending(self) -> bool:
        """Whether there are nodes to add or remove (read by the loop after each wake-up)."""
        ...

    def wake_with(self, wake: Callable[[], None] | None) -> None:
        """While the loop runs, ``wake`` (thread-safe) ends its current turn: called once
        ``pending`` became true. None once the loop ended."""
        ...

    def reconcile(self, executor: Executor, stopped: Callable[[], bool]) -> None:
        """Between two turns: add nodes to ``executor`` and remove (and destroy) nodes from
        it, until ``stopped()``."""
        ...

    def callback_raised(self, err: Exception) -> None:
        """A callback (one of the served nodes') raised ``err``: say it; the loop serves on."""
        ...

    def destroy_contained(self) -> None:
        """Destroy every node it serves (the loop has ended; before the container's own)."""
        ...


def available_executors() -> tuple[str, ...]:
    """The ``EXECUTORS`` this rclpy can spin with, the default first."""
    return EXECUTORS if _events_executor_type() is not None else (RCLPY, WAITSET)


def container_executors() -> tuple[str, ...]:
    """The executors a ``Container`` can spin with, the default first: ``available_executors``
    but ``waitset``, which serves one node."""
    return tuple(kind for kind in available_executors() if kind != WAITSET)


def choose_executor(requested: str | None) -> tuple[str, str | None]:
    """The executor to spin with for ``requested`` (the value of ``EXECUTOR_VARIABLE``, None
    or empty for the default), and a warning when that is not the one requested."""
    best = available_executors()[0]
    value = (requested or "").strip().lower()
    if not value:
        return best, None
    if value not in EXECUTORS:
        return best, (
            f"{EXECUTOR_VARIABLE}={requested!r} is not one of {', '.join(EXECUTORS)}: "
            f"spinning with the default, {best}"
        )
    if value not in available_executors():
        return best, (
            f"{EXECUTOR_VARIABLE}={value}: this rclpy has no {SPINNING_WITH[value]}: "
            f"spinning with {best}"
        )
    return value, None


def spin(
    node: Node,
    stop: StopSignals,
    executor: str | None = None,
    container: Container | None = None,
) -> None:
    """Serve ``node`` until ``stop`` is requested or ROS shuts down, with ``executor`` (one of
    ``available_executors()``; None: as ``EXECUTOR_VARIABLE`` says); ``container``: ``node``
    as a ``Container``, served with the nodes it adds (``container_executors()``: asked for
    the wait-set loop, which serves one node, it spins with the default and says so).

    The executor is made here and shut down (the node removed from it) before this returns,
    also when a callback raises (rare: every callback of the node is guarded, ``edges``; what one
    raises while the context shuts down propagates; a container's ``callback_raised`` says it
    and the loop serves on). A ROS shutdown from another thread may destroy an entity or the
    context under a callback or a wait (rclpy then raises a RuntimeError: InvalidHandle,
    RCLError): that ends the spin quietly, as a shutdown between callbacks does.
    """
    logger = node.get_logger()
    executor = _executor_to_spin(logger, executor, container is not None)
    logger.info(f"spinning with {SPINNING_WITH[executor]}")
    try:
        if executor == WAITSET:
            from . import waitset_loop  # private rclpy API: imported only when opted in

            waitset_loop.spin(node, stop)
        else:
            _spin_public(node, stop, executor, container)
    except RuntimeError:
        if node.context.ok():
            raise  # a callback's own error


def _executor_to_spin(logger: RcutilsLogger, requested: str | None, container: bool) -> str:
    """The executor ``spin`` spins with for ``requested`` (None: ``EXECUTOR_VARIABLE``'s, a
    warning logged for one it cannot use); ``container``: for a ``Container``."""
    if requested is None:
        requested, warning = choose_executor(os.environ.get(EXECUTOR_VARIABLE))
        if warning is not None:
            logger.warning(warning)
    if requested not in available_executors():
        raise ValueError(f"executor {requested!r} is not one of {available_executors()}")
    if container and requested not in container_executors():
        requested = container_executors()[0]
        logger.warning(f"the wait-set loop serves one node only: the fleet spins with {requested}")
    return requested


def _spin_public(node: Node, stop: StopSignals, executor: str, container: Container | None) -> None:
    """Spin with ``executor``: ``EVENTS`` in a ``SpinLoop``, ``RCLPY`` in a ``OnceLoop``;
    ``container``'s ``reconcile`` between two turns."""
    spinner = new_executor(executor, node.context)
    loop: SpinLoop | OnceLoop = (
        SpinLoop(spinner, node.context) if executor == EVENTS else OnceLoop(spinner, node)
    )
    stopped = stop.requested.is_set
    try:
        spinner.add_node(node)
        stop.wake_with(loop.wake)
        if container is not None:
            container.wake_with(loop.wake)
        try:
            if container is None:
                loop.run(stopped)
            else:
                _serve_container(loop, spinner, container, node.context, stopped)
        finally:
            stop.wake_with(None)
            if container is not None:
                container.wake_with(None)
    finally:
        loop.close()  # nothing wakes the executor from here on
        spinner.shutdown(timeout_sec=EXECUTOR_SHUTDOWN_S)


def _serve_container(
    loop: SpinLoop | OnceLoop,
    executor: Executor,
    container: Container,
    context: Context,
    stopped: Callable[[], bool],
) -> None:
    """Run ``loop`` turn after turn until ``stopped()`` or a ROS shutdown of ``context``,
    ``container`` reconciling between two (first, and each time it is ``pending``). An
    exception a callback raises ends that turn only: ``container`` says it."""
    while not stopped() and context.ok():
        if container.pending:
            container.reconcile(executor, stopped)
        try:
            loop.run(lambda: stopped() or container.pending)
        except Exception as err:
            if not context.ok():
                return
            container.callback_raised(err)


def new_executor(executor: str, context: Context) -> Executor:
    """A new executor of kind ``executor`` (``EVENTS`` or ``RCLPY``, one this rclpy has) for
    ``context``."""
    make_executor = _events_executor_type() if executor == EVENTS else SingleThreadedExecutor
    if make_executor is None:
        raise ValueError(f"executor {executor!r} is not one of {available_executors()}")
    return make_executor(context=context)


class SpinLoop:
    """Spin ``executor`` until ``stopped()`` or a ROS shutdown of ``context``; ``wake`` (any
    thread) ends the current spin so that the loop looks again."""

    def __init__(self, executor: Executor, context: Context) -> None:
        self._executor = executor
        self._context = context
        self._lock = threading.Lock()
        self._turn: Future[None] = Future()
        self._closed = False
        context.on_shutdown(self.wake)

    def run(self, stopped: Callable[[], bool]) -> None:
        """Serve the executor's nodes until ``stopped()`` or a ROS shutdown."""
        try:
            while True:
                with self._lock:  # a new turn first, then the checks: no wake-up is lost
                    if self._turn.done():
                        self._turn = Future()
                    turn = self._turn
                if stopped() or not self._context.ok():
                    return
                self._executor.spin_until_future_complete(turn, timeout_sec=TURN_S)
        except ExternalShutdownException:  # the spin ended at a ROS shutdown
            pass

    def wake(self) -> None:
        """End the current spin (or the next one at once). Thread-safe; nothing once closed."""
        with self._lock:
            if not self._closed and not self._turn.done():
                self._turn.set_result(None)  # its done callback wakes the executor

    def close(self) -> None:
        """From now on ``wake`` does nothing: call it before the executor is shut down."""
        with self._lock:
            self._closed = True


class OnceLoop:
    """Run rclpy's ``SingleThreadedExecutor`` one callback at a time (``spin_once``, no
    timeout) until ``stopped()`` or a ROS shutdown; ``wake`` (any thread) triggers a guard
    condition of the node's, whose empty callback ends the current ``spin_once`` so that the
    loop looks again.

    Not ``SpinLoop``'s Future: rclpy up to 7.1 (Humble, Jazzy) adds a done callback to the
    Future for every callback it runs while spinning until it completes (fixed in Kilted's
    rclpy, ros2/rclpy#1374), so an hour's turn at 1 kHz would hold 3.6 million of them. Nor a
    timeout: with one, rclpy makes an rcl timer for every wait (about 15 % more CPU per
    JointState at 1 kHz, measured).
    """

    def __init__(self, executor: Executor, node: Node) -> None:
        self._executor = executor
        self._node = node
        self._lock = threading.Lock()
        self._guard: GuardCondition | None = node.create_guard_condition(_return_to_the_loop)

    def run(self, stopped: Callable[[], bool]) -> None:
        """Serve the executor's nodes until ``stopped()`` or a ROS shutdown."""
        try:
            while not stopped() and self._node.context.ok():
                self._executor.spin_once()  # a ROS shutdown wakes it (rclpy's own guard)
        except ExternalShutdownException:  # the spin ended at a ROS shutdown
            pass

    def wake(self) -> None:
        """End the current ``spin_once`` (or the next one at once). Thread-safe; nothing once
        closed."""
        with self._lock:
            if self._guard is not None:
                self._guard.trigger()

    def close(self) -> None:
        """Destroy the guard condition; from now on ``wake`` does nothing."""
        with self._lock:
            if self._guard is not None:
                self._node.destroy_guard_condition(self._guard)
                self._guard = None


def _return_to_the_loop() -> None:
    """The wake guard condition's callback: nothing to do but let ``spin_once`` return."""


def _events_executor_type() -> Callable[..., Executor] | None:
    """``rclpy.experimental.EventsExecutor``, or None where rclpy has none (Humble)."""
    try:
        experimental = importlib.import_module("rclpy.experimental")
    except ImportError:
        return None
    found: Callable[..., Executor] | None = getattr(experimental, "EventsExecutor", None)
    return found


def _startup_failure(name: str, reason: str) -> int:
    """Say on stderr, in one line begun by ``name``, why the console script did not start."""
    print(f"{name}: {' '.join(reason.split())}", file=sys.stderr)
    return 1
