"""The node's spin loop on rclpy's events executor (``rclpy.experimental.EventsExecutor``).

rclpy's events executor (Kilted and later, experimental upstream) is written in C++: the
middleware calls it back when a message, a request or a QoS event arrives and it keeps the
timers in a queue of its own, so no wait set is built and waited on (rmw_wait) for each
callback as rclpy's executor and ``runtime.WaitLoop`` do. ``EventsLoop`` spins it until a
stop signal or a ROS shutdown.

Waking it. The executor's ``wake`` does not end a spin (it only has the executor look at the
node's entities again, and ``spin_once`` returns after a callback of the node only), and it
takes no guard conditions. So the loop spins until a Future of its own completes:
``wake`` (called by the stop-signal thread, for a stop signal or any other signal with a
Python handler, and at a ROS shutdown) completes it, the spin returns, and the loop either
stops or spins on a new Future. A ROS shutdown also ends the spin by itself: the context
wakes the executor, which then drops every entity and returns. Each spin has a timeout,
``TURN_S``: without one, this executor (rclpy 9.1.2, Kilted) keeps about half a core busy
while idle, and a Future completed from another thread may not stop it (measured).

Destroying entities while it spins: only timers here (the default-positions timer, replaced on
a parameter change), which this executor handles. Subscriptions and publishers are created
once and destroyed after the executor is shut down; destroying those that have QoS event
callbacks while it spins can crash it (ros2/rclpy#1644).
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

from rclpy.context import Context
from rclpy.executors import ExternalShutdownException
from rclpy.task import Future

#: Longest one spin lasts, seconds: the loop then spins again (see the module docstring).
TURN_S = 3600.0


class EventsLoop:
    """Spin ``executor`` (an events executor) until ``stopped()`` or a ROS shutdown of
    ``context``; ``wake`` (any thread) ends the current spin so that the loop looks again."""

    def __init__(self, executor: Any, context: Context) -> None:
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
                self._turn.set_result(None)  # the executor's done callback stops its spin

    def close(self) -> None:
        """From now on ``wake`` does nothing: call it before the executor is shut down."""
        with self._lock:
            self._closed = True
