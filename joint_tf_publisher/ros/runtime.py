"""Running the node: ``main`` (the console script), stop signals, and the spin loop.

Stop signals. ``main`` replaces Python's handlers of SIGINT and SIGTERM (rclpy installs none)
with ones that only set a flag, and ``signal.set_wakeup_fd`` has each signal wake a thread
that wakes the spin loop (a guard condition of the wait-set loop or of the plain executor; a
Future of the events loop, as that executor takes no guard conditions). No signal ever
raises into Python code: any number of them, at any moment (starting, streaming, shutting
down), end the node the same way, with exit code 0 and no traceback; nothing triggers a
guard condition while it is destroyed (that thread is joined first); and once everything is
closed, late signals are ignored.

Executors. ``spin`` serves the node with the first of these that this rclpy has, unless
``JOINT_TF_PUBLISHER_EXECUTOR`` in the environment names another one:

* ``events``: rclpy's events executor, ``rclpy.experimental.EventsExecutor`` (Kilted and
  later; experimental upstream), spun by ``events_loop.EventsLoop``. In C++, called back by
  the middleware instead of waiting on a wait set for each callback: about 11 % less CPU per
  JointState than ``waitset`` at 100 Hz and at 1 kHz (docs/node.md has the numbers).
* ``waitset``: ``WaitLoop`` (below), over rclpy's wait-set binding (``_rclpy.WaitSet``, not
  public API): Humble and Jazzy have no events executor.
* ``rclpy``: rclpy's ``SingleThreadedExecutor`` alone (public API only; the most CPU per
  message), where the wait-set binding is missing too.

An unknown value, or one this rclpy lacks, is logged as a warning and the first available is
used; an unset or empty variable means the first available. The node logs which one spins.
All three serve the same node the same way (parameter services, timers, QoS events, clock
jumps), end at a stop signal or a ROS shutdown (also one from another thread that comes
under a callback), and let a callback's exception propagate.

The wait-set loop. ``rclpy.spin``'s executor builds a wait set of every entity of the node
(parameter services, QoS event handlers, subscriptions, timers) for each callback: at 1 kHz
about half a core before any joint math. ``WaitLoop`` keeps two wait sets instead. While
joint states stream, it waits on the joint-state subscriptions (and its wake guard
condition) only, takes every message waiting and hands it to the node; every
``SERVICE_PERIOD_S``, and whenever a timer is due, it looks at everything else without
blocking and gives the executor a turn if anything is ready. When no joint state came for
that long, it blocks on every entity of the node: an idle node does not wake up at all, and
answers a parameter request at once.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import Any

import rclpy
from rclpy.exceptions import InvalidHandle
from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions

from ..errors import ModelError
from .events_loop import EventsLoop
from .node import NODE_NAME, JointTfPublisher, StartupError
from .stop_signals import StopSignals

#: Longest a joint-state stream delays the node's other entities (services, events), seconds.
SERVICE_PERIOD_S = 0.05
#: Most messages taken from one subscription per wake-up (its queue depth).
MAX_TAKEN = 100
#: Environment variable naming the executor to spin with: one of ``EXECUTORS``.
EXECUTOR_VARIABLE = "JOINT_TF_PUBLISHER_EXECUTOR"
EVENTS, WAITSET, RCLPY = "events", "waitset", "rclpy"
#: The executors, best first (see the module docstring).
EXECUTORS = (EVENTS, WAITSET, RCLPY)
#: What the node logs at startup: "spinning with ...".
SPINNING_WITH = {
    EVENTS: "rclpy's events executor (rclpy.experimental.EventsExecutor)",
    WAITSET: "the wait-set loop (rclpy's wait-set binding)",
    RCLPY: "rclpy's executor",
}
#: Longest the executor's shutdown waits for a spin to end, seconds (it has ended already).
EXECUTOR_SHUTDOWN_S = 1.0

HotInput = tuple[Any, Callable[[Any], None]]  # (rclpy Subscription, callback)
RCLError = _rclpy.RCLError


def main(args: list[str] | None = None, stop: StopSignals | None = None) -> int:
    """Console script ``joint_tf_publisher``: run the node until SIGINT or SIGTERM.

    ``stop``: the stop signals, if installed already (the console script installs them before
    importing anything heavy). Returns 0 on a clean shutdown, also when stopped while
    starting; 1 with one line ``joint_tf_publisher: <reason>`` on stderr when the node cannot
    start.
    """
    stop = stop or StopSignals()
    try:
        try:
            rclpy.init(args=args, signal_handler_options=SignalHandlerOptions.NO)
        except Exception as err:  # rcl reports bad --ros-args as RCLError, with a long text
            first_line = str(err).strip().splitlines()[0] if str(err).strip() else repr(err)
            return _startup_failure(f"cannot initialise ROS: {first_line}")
        if stop.requested.is_set():
            return 0
        try:
            node = JointTfPublisher()
        except StartupError as err:
            return _startup_failure(str(err))
        except (ModelError, ValueError, TypeError, rclpy.exceptions.ParameterException) as err:
            return _startup_failure(f"{type(err).__name__}: {err}")
        try:
            spin(node, stop)
        finally:
            stop.close()  # from here on nothing triggers the node's guard conditions
            node.destroy_node()
        return 0
    finally:
        stop.close()
        rclpy.try_shutdown()
        stop.ignore_from_now_on()


def available_executors() -> tuple[str, ...]:
    """The ``EXECUTORS`` this rclpy can spin with, best first (``rclpy`` always)."""
    found = [EVENTS] if _events_executor_type() is not None else []
    if hasattr(_rclpy, "WaitSet"):
        found.append(WAITSET)
    return (*found, RCLPY)


def choose_executor(requested: str | None) -> tuple[str, str | None]:
    """The executor to spin with for ``requested`` (the value of ``EXECUTOR_VARIABLE``, None
    or empty for the best available), and a warning when that is not the one requested."""
    available = available_executors()
    best = available[0]
    value = (requested or "").strip().lower()
    if not value:
        return best, None
    if value not in EXECUTORS:
        return best, (
            f"{EXECUTOR_VARIABLE}={requested!r} is not one of {', '.join(EXECUTORS)}: "
            f"spinning with the default, {best}"
        )
    if value not in available:
        return best, (
            f"{EXECUTOR_VARIABLE}={value}: this rclpy has no {SPINNING_WITH[value]}: "
            f"spinning with {best}"
        )
    return value, None


def spin(node: JointTfPublisher, stop: StopSignals, executor: str | None = None) -> None:
    """Serve ``node`` until ``stop`` is requested or ROS shuts down, with ``executor`` (one of
    ``available_executors()``; None: as ``EXECUTOR_VARIABLE`` says, see the module docstring).

    The executor is made here, and shut down (the node removed from it) before this returns,
    also when a callback raises (the exception propagates). A ROS shutdown from another thread
    may destroy an entity or the context under a callback or a wait (InvalidHandle,
    RCLError): that ends the loop quietly, as the shutdown does between callbacks.
    """
    logger = node.get_logger()
    if executor is None:
        executor, warning = choose_executor(os.environ.get(EXECUTOR_VARIABLE))
        if warning is not None:
            logger.warning(warning)
    if executor not in available_executors():
        raise ValueError(f"executor {executor!r} is not one of {available_executors()}")
    logger.info(f"spinning with {SPINNING_WITH[executor]}")
    try:
        if executor == EVENTS:
            _spin_events(node, stop)
            return
        plain = SingleThreadedExecutor(context=node.context)
        try:
            plain.add_node(node)
            if executor == WAITSET:
                _spin_wait_sets(node, plain, stop)
            else:
                _spin_plain(node, plain, stop)
        finally:
            plain.shutdown(timeout_sec=EXECUTOR_SHUTDOWN_S)
    except (InvalidHandle, RCLError):
        if node.context.ok():
            raise
        # ROS shut down (from another thread) under a callback or a wait, destroying an entity
        # or the context in use: the shutdown ends the loop, as it does between callbacks.


def _events_executor_type() -> Callable[..., Executor] | None:
    """``rclpy.experimental.EventsExecutor``, or None where rclpy has none."""
    try:
        experimental = importlib.import_module("rclpy.experimental")
    except ImportError:
        return None
    found: Callable[..., Executor] | None = getattr(experimental, "EventsExecutor", None)
    return found


def _spin_events(node: JointTfPublisher, stop: StopSignals) -> None:
    events_executor = _events_executor_type()
    assert events_executor is not None  # spin checked it
    executor = events_executor(context=node.context)
    loop = EventsLoop(executor, node.context)
    try:
        executor.add_node(node)
        stop.wake_with(loop.wake)
        try:
            loop.run(stop.requested.is_set)
        finally:
            stop.wake_with(None)
    finally:
        loop.close()  # nothing completes the loop's Future from here on
        executor.shutdown(timeout_sec=EXECUTOR_SHUTDOWN_S)


def _spin_wait_sets(node: JointTfPublisher, executor: Executor, stop: StopSignals) -> None:
    # A guard condition of our own (not the node's: a shutdown destroys those first).
    wake = GuardCondition(None, None, context=node.context)
    loop = WaitLoop(node, executor, node.joint_state_inputs, wake)  # before stop.wake below
    stop.wake_with(wake.trigger)
    node.context.on_shutdown(stop.wake)
    try:
        loop.run(stop.requested.is_set)
    finally:
        stop.wake_with(None)  # nothing triggers it from here on
        wake.destroy()


def _spin_plain(node: JointTfPublisher, executor: Executor, stop: StopSignals) -> None:
    node_wake = node.create_guard_condition(_return_from_spin_once)
    stop.wake_with(node_wake.trigger)
    try:
        with_executor(executor, node, stop.requested.is_set)
    finally:
        stop.wake_with(None)
        node.destroy_guard_condition(node_wake)


def with_executor(executor: Executor, node: Node, stopped: Callable[[], bool]) -> None:
    """Spin with rclpy's executor alone (public API) until ``stopped()`` or a shutdown."""
    try:
        while not stopped() and node.context.ok():
            executor.spin_once(timeout_sec=None)
    except ExternalShutdownException:
        pass


class WaitLoop:
    """The node's spin loop over two reused wait sets; see the module docstring.

    ``hot``: the joint-state subscriptions and their callbacks, served directly; ``wake``: a
    guard condition (not one of the node's) that ends a wait (stop signal, shutdown).
    """

    def __init__(
        self,
        node: Node,
        executor: Executor,
        hot: Sequence[HotInput],
        wake: Any,
    ) -> None:
        self._node = node
        self._executor = executor
        self._hot = list(hot)
        self._wake = wake
        context = node.context.handle
        if context is None:
            raise RuntimeError("the node's context is not initialised")
        self._context = context
        self._hot_set = _rclpy.WaitSet(len(self._hot), 1, 0, 0, 0, 0, context)
        self._held = ExitStack()
        self._full_set: Any = None
        #: Set by ROS's shutdown (registered first, so it is set before the wake-up).
        self._down = False
        node.context.on_shutdown(self._mark_down)
        self._adds: list[Callable[[Any], Any]] = []
        self._events = 0
        self._timers: list[Any] = []

    def run(self, stopped: Callable[[], bool]) -> None:
        """Serve the node until ``stopped()`` or a ROS shutdown."""
        self._down = self._down or not self._node.context.ok()
        try:
            self._collect()
            streaming = False
            next_check = 0.0
            while not stopped() and not self._down:
                if not streaming:
                    streaming = self._wait_all(block=True) > 0
                    next_check = time.monotonic() + SERVICE_PERIOD_S
                    continue
                timeout_s = min(next_check - time.monotonic(), self._next_timer_s())
                if self._wait_hot(timeout_s) == 0:
                    streaming = False  # nothing for a while: block on everything next
                elif time.monotonic() >= next_check or self._next_timer_s() <= 0.0:
                    self._wait_all(block=False)
                    next_check = time.monotonic() + SERVICE_PERIOD_S
        except ExternalShutdownException:  # the executor's turn met a shutdown
            pass
        finally:
            self._held.close()

    def _mark_down(self) -> None:
        self._down = True

    # -- the two waits ----------------------------------------------------------------------

    def _wait_hot(self, timeout_s: float) -> int:
        """Wait up to ``timeout_s`` for joint states (or the wake guard condition); handle
        them; return how many."""
        wait_set = self._hot_set
        wait_set.clear_entities()
        for subscription, _ in self._hot:
            wait_set.add_subscription(subscription.handle)
        wait_set.add_guard_condition(self._wake.handle)
        wait_set.wait(max(0, int(timeout_s * 1e9)))
        return self._take_hot(wait_set)

    def _wait_all(self, block: bool) -> int:
        """Wait on every entity (until one is ready, or not at all); handle joint states, and
        give the executor a turn when anything else is ready. Returns joint states handled."""
        wait_set = self._full_set
        wait_set.clear_entities()
        for add in self._adds:
            add(wait_set)
        wait_set.wait(-1 if block else 0)
        handled = self._take_hot(wait_set)
        woken = self._wake.handle.pointer in wait_set.get_ready_entities("guard_condition")
        if self._others_ready(wait_set, woken) or (block and not handled and not woken):
            self._executor.spin_once(timeout_sec=0.0)
            self._collect()
        return handled

    def _take_hot(self, wait_set: Any) -> int:
        """Handle every message waiting on the hot subscriptions (up to ``MAX_TAKEN`` each)."""
        handled = 0
        for index, (subscription, callback) in enumerate(self._hot):
            if not wait_set.is_ready("subscription", index):
                continue
            handle, msg_type, raw = subscription.handle, subscription.msg_type, subscription.raw
            for _ in range(MAX_TAKEN):
                taken = handle.take_message(msg_type, raw)
                if taken is None:
                    break
                callback(taken[0])
                handled += 1
        return handled

    def _others_ready(self, wait_set: Any, woken: bool) -> bool:
        """True if an entity other than the hot subscriptions and the wake guard condition
        is ready in the full wait set."""
        hot = range(len(self._hot))
        return (
            len(wait_set.get_ready_entities("subscription"))
            > sum(wait_set.is_ready("subscription", i) for i in hot)
            or len(wait_set.get_ready_entities("guard_condition")) > woken
            or bool(wait_set.get_ready_entities("service"))
            or bool(wait_set.get_ready_entities("timer"))
            or bool(wait_set.get_ready_entities("client"))
            or any(wait_set.is_ready("event", i) for i in range(self._events))
        )

    # -- entities -----------------------------------------------------------------------------

    def _collect(self) -> None:
        """(Re)build the full wait set from the node's entities, hot subscriptions first, and
        hold every handle in use (a concurrent destruction waits until the loop lets go)."""
        node = self._node
        hot = [subscription for subscription, _ in self._hot]
        subscriptions = hot + [s for s in node.subscriptions if s not in hot]
        services, clients = list(node.services), list(node.clients)
        timers, guards, waitables = list(node.timers), list(node.guards), list(node.waitables)
        held = ExitStack()
        for entity in [*subscriptions, *services, *clients, *timers, *guards]:
            held.enter_context(entity.handle)
        for waitable in waitables:
            held.enter_context(waitable)
        self._held.close()
        self._held = held
        events = sum(w.get_num_entities().num_events for w in waitables)
        self._full_set = _rclpy.WaitSet(
            len(subscriptions),
            len(guards) + 1,
            len(timers),
            len(clients),
            len(services),
            events,
            self._context,
        )
        adds: list[Callable[[Any], Any]] = []
        adds += [_adder("add_subscription", s.handle) for s in subscriptions]
        adds += [_adder("add_service", s.handle) for s in services]
        adds += [_adder("add_client", c.handle) for c in clients]
        adds += [_adder("add_timer", t.handle) for t in timers]
        adds += [_adder("add_guard_condition", g.handle) for g in [self._wake, *guards]]
        adds += [waitable.add_to_wait_set for waitable in waitables]
        self._adds = adds
        self._events = events
        self._timers = timers

    def _next_timer_s(self) -> float:
        """Seconds until the node's next timer is due (inf without one; <= 0 when due)."""
        if not self._timers:
            return float("inf")
        due = [ns for timer in self._timers if (ns := timer.time_until_next_call()) is not None]
        return min(due) * 1e-9 if due else float("inf")


def _return_from_spin_once() -> None:
    """The callback of the fallback's wake guard condition: running it ends ``spin_once``."""


def _adder(method: str, handle: Any) -> Callable[[Any], Any]:
    def add(wait_set: Any) -> Any:
        return getattr(wait_set, method)(handle)

    return add


def _startup_failure(reason: str) -> int:
    print(f"{NODE_NAME}: {' '.join(reason.split())}", file=sys.stderr)
    return 1
