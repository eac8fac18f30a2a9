"""Header stamps: a ``builtin_interfaces/Time`` (``sec``, ``nanosec``) <-> integer nanoseconds.

The one conversion of the package, its tests and its bench. Not ``rclpy.time.Time``: that
refuses a negative ``sec`` (``Time.from_msg`` raises ValueError), which a message's int32
``sec`` may hold and the node passes on as it came, and it costs an object per message on
the hot path. Plain integers, no rclpy: ``cdr`` uses it on the raw bytes too.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, overload

if TYPE_CHECKING:
    import numpy as np
    from numpy.typing import NDArray

#: Nanoseconds per second.
NS_PER_S = 1_000_000_000
#: The earliest and the latest stamp a ``builtin_interfaces/Time`` holds (int32 ``sec``), ns.
MIN_STAMP_NS = -(2**31) * NS_PER_S
MAX_STAMP_NS = (2**31 - 1) * NS_PER_S + NS_PER_S - 1


def stamp_to_ns(sec: int, nanosec: int) -> int:
    """Nanoseconds of a stamp: ``sec`` (int32, seconds) and ``nanosec`` (0 to 999_999_999)."""
    return sec * NS_PER_S + nanosec


@overload
def ns_to_stamp(stamp_ns: int) -> tuple[int, int]: ...
@overload
def ns_to_stamp(stamp_ns: NDArray[np.int64]) -> tuple[NDArray[np.int64], NDArray[np.int64]]: ...


def ns_to_stamp(stamp_ns: Any) -> tuple[Any, Any]:
    """``(sec, nanosec)`` of ``stamp_ns`` nanoseconds, ``nanosec`` in [0, 1e9) (so ``sec`` is
    floored, also for times before the epoch): ``stamp_to_ns``'s inverse. An int64 array
    (stamps of several transforms) gives two arrays."""
    sec, nanosec = divmod(stamp_ns, NS_PER_S)
    return sec, nanosec
