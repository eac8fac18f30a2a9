"""Timing with time.perf_counter: per callable, the median of several calibrated loops, the
callables' loops taken in turn (round r runs every loop once before round r + 1), so that on a
shared machine whose load drifts every library sees the same conditions and their ratios hold
even when absolute times move. Garbage collection is off while the loops run, as in timeit."""

from __future__ import annotations

import gc
import statistics
import time
from collections.abc import Callable, Mapping


def _loop_seconds(call: Callable[[], object], number: int) -> float:
    start = time.perf_counter()
    for _ in range(number):
        call()
    return time.perf_counter() - start


def seconds_per_call_interleaved(
    calls: Mapping[str, Callable[[], object]], quick: bool
) -> dict[str, float]:
    """Median seconds per call of each callable: 7 loops of 0.2 s each (quick: 3 of 0.03 s),
    the loop counts calibrated first by doubling from one call."""
    run_s, repeats = (0.03, 3) if quick else (0.2, 7)
    numbers = {}
    for name, call in calls.items():
        number = 1
        while (elapsed := _loop_seconds(call, number)) < run_s * 0.5 and number < 1 << 24:
            number = max(number * 2, int(number * run_s / max(elapsed, 1e-9) * 0.6))
        numbers[name] = number
    samples: dict[str, list[float]] = {name: [] for name in calls}
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        for _ in range(repeats):
            for name, call in calls.items():
                samples[name].append(_loop_seconds(call, numbers[name]) / numbers[name])
    finally:
        if was_enabled:
            gc.enable()
    return {name: statistics.median(values) for name, values in samples.items()}
