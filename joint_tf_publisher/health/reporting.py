"""What the node says about joint states it cannot use as given: throttled, counted, short.

No rclpy here: ``Reporter`` writes to any ``Logger`` (the node's rclpy logger has these
methods), so tests read its lines directly. Every kind of report has its own throttle; names
(unknown joints, bare names of multi-value joints) are each reported once, at most ten per
line.
"""

from __future__ import annotations

import math
import time
from collections import Counter
from collections.abc import Callable, Sequence
from typing import Any, Protocol

from . import wording

#: Seconds between two reports of one kind.
THROTTLE_S = 10.0
#: Names remembered as reported, per kind (a flood of new names cannot grow memory).
MAX_REMEMBERED_NAMES = 1000


class Logger(Protocol):
    """The logging calls the node makes (rclpy's ``RcutilsLogger`` has them)."""

    def info(self, message: str) -> Any: ...
    def warning(self, message: str) -> Any: ...
    def error(self, message: str) -> Any: ...


class Throttle:
    """At most one report per ``period_s`` per key, decided before any text is built.

    rclpy's ``throttle_duration_sec`` inspects the caller's frame on every call (about a
    millisecond), too slow for a check made on every joint-state message.
    """

    def __init__(self, period_s: float, clock_s: Callable[[], float] = time.monotonic) -> None:
        self.period_s = period_s
        self._clock_s = clock_s
        self._next_s: dict[str, float] = {}

    def due(self, key: str) -> bool:
        """True (and start a new period) if no report for ``key`` was made this period."""
        now_s = self._clock_s()
        if now_s < self._next_s.get(key, -math.inf):
            return False
        self._next_s[key] = now_s + self.period_s
        return True


class Reporter:
    """Throttled reports of clamped, rejected and ignored joint values, and other warnings."""

    def __init__(self, logger: Logger, throttle: Throttle | None = None) -> None:
        self.logger = logger
        self.throttle = throttle or Throttle(THROTTLE_S)
        self.clamp_counts: Counter[str] = Counter()
        self.rejected_counts: Counter[str] = Counter()
        self._reported_names: dict[str, set[str]] = {}
        self._pending_names: dict[str, list[str]] = {}
        self._once: set[str] = set()

    def warn_throttled(self, key: str, text: str) -> None:
        """Log ``text`` as a warning unless a ``key`` report was made this period."""
        if self.throttle.due(key):
            self.logger.warning(f"{text} (reported at most every {self.throttle.period_s:g} s)")

    def info_once(self, key: str, text: str) -> None:
        """Log ``text`` once for the life of this reporter."""
        if key not in self._once:
            self._once.add(key)
            self.logger.info(f"{text} (reported once)")

    def warning_once(self, key: str, text: str) -> None:
        """Log ``text`` as a warning once for the life of this reporter."""
        if key not in self._once:
            self._once.add(key)
            self.logger.warning(text)

    def values(self, clamped: Sequence[str], rejected: Sequence[str], clamp: str) -> None:
        """Report the joints whose value one message had clamped (to ``clamp`` limits) or
        rejected, with counts since start."""
        if clamped:
            self.clamp_counts.update(clamped)
            if self.throttle.due("clamped"):
                self.logger.warning(
                    f"{wording.clamped(clamp)}, counts since start: {_counts(self.clamp_counts)}"
                )
        if rejected:
            self.rejected_counts.update(rejected)
            if self.throttle.due("rejected"):
                self.logger.warning(
                    f"{wording.REJECTED}; counts since start: {_counts(self.rejected_counts)}"
                )

    def names_once(self, kind: str, names: Sequence[str], text: str) -> None:
        """Log each name once, at most one line per period per kind, ten names a line."""
        if not names:
            return
        reported = self._reported_names.setdefault(kind, set())
        pending = self._pending_names.setdefault(kind, [])
        if not pending and reported.issuperset(names):  # the usual case: nothing new
            return
        for name in names:
            if name not in reported and len(reported) < MAX_REMEMBERED_NAMES:
                reported.add(name)
                pending.append(name)
        if pending and self.throttle.due(kind):
            self.logger.info(f"{text}: {wording.name_list(pending)}")
            pending.clear()


def _counts(counter: Counter[str]) -> str:
    """The most frequent names with their counts (the rest counted as "and N more")."""
    return wording.name_list([f"{name} ({count}x)" for name, count in counter.most_common()])
