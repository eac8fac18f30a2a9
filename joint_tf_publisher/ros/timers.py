"""One timer of a node's part that is restarted at a new period or stopped: the diagnostics
report, the remote output, the static republication, the description file watch, the static
union's turn and the default positions.

It may import rclpy only. On the steady clock by default: a simulation clock that is paused
or never starts must not stop a report, a republication or a file watch.

rclpy's own ``Timer`` has ``reset`` (the countdown again, at its period), ``cancel`` and a
``timer_period_ns`` setter, but a cancelled timer stays the node's: every wait set still
holds it. Here a period of 0 (off) leaves the node no timer, so a restart destroys the timer
and makes it again; its countdown starts afresh, as ``reset`` would start it.
"""

from __future__ import annotations

from collections.abc import Callable

from rclpy.clock import Clock
from rclpy.clock_type import ClockType
from rclpy.node import Node
from rclpy.timer import Timer


class RestartableTimer:
    """``callback`` (already guarded: ``edges.Edges.timer``) on a timer of ``node``, on the
    steady clock, else (``steady`` false) on the node's clock (ROS time: a paused simulation
    pauses it); none until ``restart``."""

    def __init__(self, node: Node, callback: Callable[[], None], *, steady: bool = True) -> None:
        self._node = node
        self._callback = callback
        self._clock = Clock(clock_type=ClockType.STEADY_TIME) if steady else None
        self._timer: Timer | None = None

    @property
    def running(self) -> bool:
        """Whether the node has the timer (``restart`` made it, nothing stopped it since)."""
        return self._timer is not None

    def restart(self, period_s: float) -> None:
        """Call back every ``period_s`` s from now (seconds of its clock); never for 0 or
        less (stopped)."""
        self.stop()
        if period_s > 0.0:
            self._timer = self._node.create_timer(period_s, self._callback, clock=self._clock)

    def stop(self) -> None:
        """No more calls: the node's timer destroyed (nothing for a timer stopped already)."""
        if self._timer is not None:
            self._node.destroy_timer(self._timer)
            self._timer = None
