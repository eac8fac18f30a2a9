"""Stop signals as a flag and a wake-up call (``node_core.stop_signals``), in this process.

How the node ends on them is in test_runtime.py (in process) and test_node_shutdown.py (the
console script).
"""

from __future__ import annotations

import os
import signal
import threading
import time
from collections.abc import Iterator

import pytest

from joint_tf_publisher.node_core.stop_signals import StopSignals


@pytest.fixture
def stop() -> Iterator[StopSignals]:
    signals = StopSignals()
    yield signals
    signals.restore()


def test_another_signal_wakes_the_loop_without_stopping_it(stop: StopSignals) -> None:
    """A handler of another signal (a profiler's SIGUSR1) runs on the main thread: the loop
    is woken to let it run, and does not stop."""
    woken = threading.Event()
    handled: list[int] = []
    stop.wake_with(woken.set)
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: handled.append(number))
    try:
        os.kill(os.getpid(), signal.SIGUSR1)
        assert woken.wait(timeout=5.0)
        time.sleep(0.05)
        assert handled == [signal.SIGUSR1]
        assert not stop.requested.is_set()
    finally:
        signal.signal(signal.SIGUSR1, previous)


def test_stop_signals_set_a_flag_and_wake_never_raise(stop: StopSignals) -> None:
    woken = threading.Event()
    stop.wake_with(woken.set)
    for number in (signal.SIGINT, signal.SIGTERM, signal.SIGINT):
        os.kill(os.getpid(), number)
    assert woken.wait(timeout=5.0)
    time.sleep(0.05)  # Python-level handlers run between bytecodes: none raises
    assert stop.requested.is_set()
    stop.close()
    woken.clear()
    os.kill(os.getpid(), signal.SIGINT)  # after close: still no exception, nothing woken
    time.sleep(0.05)
    assert not woken.is_set()
