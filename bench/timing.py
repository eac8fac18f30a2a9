"""Timing with time.perf_counter: the median of several runs of a calibrated loop."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass


@dataclass(frozen=True)
class Budget:
    """How hard to measure: seconds per timed run and number of runs (the median is kept)."""

    run_seconds: float
    repeats: int

    @classmethod
    def for_mode(cls, quick: bool) -> Budget:
        """0.2 s x 7 runs normally; 0.03 s x 3 runs in quick mode."""
        return cls(0.03, 3) if quick else cls(0.2, 7)


def _loop_seconds(call: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        call()
    return time.perf_counter() - start


def _calibrated_number(call: Callable[[], object], budget: Budget) -> int:
    number = 1
    while True:
        elapsed = _loop_seconds(call, number)
        if elapsed >= budget.run_seconds * 0.5 or number >= 1 << 24:
            return number
        number = max(number * 2, int(number * budget.run_seconds / max(elapsed, 1e-9) * 0.6))


def seconds_per_call_interleaved(
    calls: dict[str, Callable[[], object]], budget: Budget
) -> dict[str, float]:
    """Median seconds per call of each callable, their timed runs taken in turn.

    Round ``r`` runs every callable's loop once before round ``r + 1`` starts, so on a shared
    machine whose load drifts every library sees the same conditions and the ratios between
    them stay meaningful even when absolute times move.
    """
    numbers = {name: _calibrated_number(call, budget) for name, call in calls.items()}
    samples: dict[str, list[float]] = {name: [] for name in calls}
    gc_was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(budget.repeats):
            for name, call in calls.items():
                samples[name].append(_loop_seconds(call, numbers[name]) / numbers[name])
    finally:
        if gc_was_enabled:
            gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}
