"""robot_state_publisher's rate limiter: per moving joint, in message time. No rclpy here.

A JointState is due when the least recently published joint it names was published at least
one interval (1 / ``publish_frequency``) before the message's stamp; publishing it records its
stamp for each of those joints. A stamp earlier than one of those times means the clock went
back (a simulation reset, a bag played again): the caller then resets the limiter.

Messages of one shape ask about the same joints again and again, so ``RateLimiter`` remembers
the earliest and latest time of the joints it was last asked about, under their key (the
bytes of their index array, ``MessagePlan.moves_key``: compiled once per shape, compared by
value), until a time changes: a message the limiter drops costs two integer comparisons and
no numpy call.
"""

from __future__ import annotations

import numpy as np
import numpy.typing as npt

from ..arrays import IndexArray

#: "Never published": far in the past, yet safe to add an interval to (ns).
NEVER_NS = -(2**62)


class RateLimiter:
    """Per joint (an index among the model's moving joints), the message time of its last
    publication, ns since the epoch of the messages' clock."""

    def __init__(self, joint_count: int) -> None:
        self._last_ns = np.full(joint_count, NEVER_NS, dtype=np.int64)
        # The key of the joints last asked about or recorded, and the earliest and latest time
        # among them; None once a time changed by other means.
        self._known: bytes | None = None
        self._earliest_ns = self._latest_ns = NEVER_NS

    def extremes(self, joints: IndexArray, key: bytes) -> tuple[int, int]:
        """The earliest and latest publication time (ns) among ``joints`` (not empty);
        ``key`` is ``joints.tobytes()`` (``MessagePlan.moves_key``)."""
        if key != self._known:
            last_ns = self._last_ns[joints]
            self._earliest_ns = int(np.minimum.reduce(last_ns))
            self._latest_ns = int(np.maximum.reduce(last_ns))
            self._known = key
        return self._earliest_ns, self._latest_ns

    def times(self, joints: IndexArray) -> npt.NDArray[np.int64]:
        """The publication time (ns) of each of ``joints``."""
        return self._last_ns[joints]

    def record(self, joints: IndexArray, key: bytes, stamp_ns: int) -> None:
        """``joints`` (``key``: ``joints.tobytes()``) were published at message time
        ``stamp_ns``."""
        self._last_ns[joints] = stamp_ns
        self._known = key
        self._earliest_ns = self._latest_ns = stamp_ns

    def reset(self) -> None:
        """Forget every publication time: the next message of every joint is due."""
        self._last_ns.fill(NEVER_NS)
        self._known = None
