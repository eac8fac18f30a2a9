"""Opt-in spin loop over rclpy's wait-set binding (``_rclpy.WaitSet``, not public API).

``JOINT_TF_PUBLISHER_EXECUTOR=waitset`` picks it; the only module of the package on private
rclpy API, imported only then. Worth it where rclpy has no events executor (Humble): rclpy's
``SingleThreadedExecutor`` builds a wait set of every entity of the node (parameter services,
QoS event handlers, subscriptions, timers) for each callback, about 2.2 times the node's CPU
at 1 kHz (docs/node.md has the numbers).

``WaitLoop`` keeps two wait sets instead. While messages stream, it waits on the node's
subscriptions (and its wake guard condition) only, takes every message waiting and calls the
subscription's callback; every ``SERVICE_PERIOD_S``, and whenever a timer is due, it looks at
everything else without blocking and gives rclpy's executor a turn if anything is ready. When
no message came for that long, it blocks on every entity of the node: an idle node does not
wake up at all, and answers a parameter request at once.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from contextlib import ExitStack
from typing import Any

from rclpy.executors import Executor, ExternalShutdownException, SingleThreadedExecutor
from rclpy.guard_condition import GuardCondition
from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy
from rclpy.node import Node

from ..node_core.stop_signals import StopSignals

#: Longest a message stream delays the node's other entities (services, events), seconds.
SERVICE_PERIOD_S = 0.05
#: Most messages taken from one subscription per wake-up (its queue depth).
MAX_TAKEN = 100
#: Longest the executor's shutdown waits for a spin to end, seconds (it has ended already).
EXECUTOR_SHUTDOWN_S = 1.0


def spin(node: Node, stop: StopSignals) -> None:
    """Serve ``node`` with ``WaitLoop`` until ``stop`` is requested or ROS shuts down."""
    executor = SingleThreadedExecutor(context=node.context)
    # A guard condition of our own (not the node's: a shutdown destroys those first).
    wake = GuardCondition(None, None, context=node.context)
    try:
        executor.add_node(node)
        loop = WaitLoop(
            node, executor, list(node.subscriptions), wake
        )  # before stop.wake_with below
        stop.wake_with(wake.trigger)
        node.context.on_shutdown(stop.wake)
        try:
            loop.run(stop.requested.is_set)
        finally:
            stop.wake_with(None)  # nothing triggers it from here on
    finally:
        wake.destroy()
        executor.shutdown(timeout_sec=EXECUTOR_SHUTDOWN_S)


class WaitLoop:
    """The node's spin loop over two reused wait sets; see the module docstring.

    ``hot``: subscriptions whose callbacks it calls itself; ``wake``: a
    guard condition (not one of the node's) that ends a wait (stop signal, shutdown).
    """

    def __init__(
        self,
        node: Node,
        executor: Executor,
        hot: Sequence[Any],
        wake: Any,
    ) -> None:
        self._node = node
        self._executor = executor
        self._hot: list[Any] = list(hot)  # rclpy Subscriptions
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
        """Wait up to ``timeout_s`` for messages (or the wake guard condition); handle
        them; return how many."""
        wait_set = self._hot_set
        wait_set.clear_entities()
        for subscription in self._hot:
            wait_set.add_subscription(subscription.handle)
        wait_set.add_guard_condition(self._wake.handle)
        wait_set.wait(max(0, int(timeout_s * 1e9)))
        return self._take_hot(wait_set)

    def _wait_all(self, block: bool) -> int:
        """Wait on every entity (until one is ready, or not at all); handle messages, and give
        the executor a turn when anything else is ready. Returns messages handled."""
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
        for index, subscription in enumerate(self._hot):
            if not wait_set.is_ready("subscription", index):
                continue
            handle, msg_type, raw = subscription.handle, subscription.msg_type, subscription.raw
            for _ in range(MAX_TAKEN):
                taken = handle.take_message(msg_type, raw)
                if taken is None:
                    break
                subscription.callback(taken[0])
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
        # Subscriptions come and go (source_list): the hot ones are the node's current ones.
        current = list(node.subscriptions)
        kept = [s for s in self._hot if s in current]
        self._hot = kept + [s for s in current if s not in kept]
        self._hot_set = _rclpy.WaitSet(len(self._hot), 1, 0, 0, 0, 0, self._context)
        subscriptions = list(self._hot)
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


def _adder(method: str, handle: Any) -> Callable[[Any], Any]:
    def add(wait_set: Any) -> Any:
        return getattr(wait_set, method)(handle)

    return add
