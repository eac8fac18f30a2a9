"""Stop signals as a flag and a wake-up call (``node_core.stop_signals``), in this process.

How the node ends on them is in test_runtime.py (in process) and test_node_shutdown.py (the
console script).
"""

from __future__ import annotations

import io
import os
import signal
import sys
import threading
import time
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

import pytest

from joint_tf_publisher.node_core import stop_signals
from joint_tf_publisher.node_core.stop_signals import STOP_SIGNALS, StopSignals


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


def test_a_stop_that_comes_as_the_stops_are_ignored_is_dropped_without_a_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """At the very end the node ignores both stop signals. A SIGINT whose C handler ran just
    as SIGINT was being ignored is reported by CPython at its next check as an unraisable
    "OSError: Signal 2 ignored due to race condition", a traceback on stderr (seen in a
    clean-clone CI run of test_node_shutdown.py's flood of Ctrl-C, in two of its runs). Ignoring
    it was meant: the report is dropped; any other unraisable report still goes to the hook
    before, and ignoring the signals again adds no second filter."""
    seen: list[str] = []
    monkeypatch.setattr(sys, "unraisablehook", lambda args: seen.append(str(args.exc_value)))
    before = {number: signal.getsignal(number) for number in STOP_SIGNALS}
    try:
        stop_signals.ignore_stop_signals()
        stop_signals.ignore_stop_signals()
        after = [signal.getsignal(number) for number in STOP_SIGNALS]
    finally:
        for number, handler in before.items():
            signal.signal(number, handler)
    assert after == [signal.SIG_IGN, signal.SIG_IGN]
    hook = sys.unraisablehook
    assert isinstance(hook, stop_signals.StopRaceFilter) and not isinstance(
        hook.previous, stop_signals.StopRaceFilter
    )

    def report(error: BaseException, where: object = None) -> None:
        hook(unraisable(type(error), error, where))

    for number in (2, 15):  # as CPython words it (Modules/signalmodule.c)
        report(OSError(f"Signal {number} ignored due to race condition"))
    assert seen == []
    report(OSError("Signal 10 ignored due to race condition"))  # not a stop signal
    report(OSError("Signal 2 ignored due to race condition"), where=stop_signals)
    report(ValueError("Signal 2 ignored due to race condition"))
    report(OSError("[Errno 5] Input/output error"))
    assert seen == [
        "Signal 10 ignored due to race condition",
        "Signal 2 ignored due to race condition",
        "Signal 2 ignored due to race condition",
        "[Errno 5] Input/output error",
    ]


def unraisable(kind: type[BaseException], error: BaseException, where: object) -> Any:
    """What CPython hands ``sys.unraisablehook`` (``sys.UnraisableHookArgs``'s fields)."""
    return SimpleNamespace(
        exc_type=kind, exc_value=error, exc_traceback=None, err_msg=None, object=where
    )


# -- the end deadline ------------------------------------------------------------------------

#: When ``ros2 launch`` sends SIGKILL after its SIGINT by default, seconds: ``ExecuteProcess``'s
#: ``sigterm_timeout`` (5 s) to SIGTERM, then its ``sigkill_timeout`` (5 s).
LAUNCH_SIGKILL_S = 10.0


@pytest.fixture
def later_dumps(monkeypatch: pytest.MonkeyPatch) -> list[tuple[float, bool]]:
    """faulthandler's watchdog, recorded instead of armed (armed, it would end pytest)."""
    calls: list[tuple[float, bool]] = []
    monkeypatch.setattr(
        stop_signals.faulthandler,
        "dump_traceback_later",
        lambda timeout, exit=False, file=None: calls.append((timeout, exit)),
    )
    return calls


def test_the_end_deadline_arms_nothing_outside_a_console_script(
    later_dumps: list[tuple[float, bool]],
) -> None:
    """In-process use (tests, a notebook): the process goes on after a session ends."""
    deadline = stop_signals.EndDeadline()
    deadline.start()
    assert later_dumps == [] and not deadline.started


def test_the_end_deadline_runs_from_the_first_start(
    later_dumps: list[tuple[float, bool]],
) -> None:
    """Armed once, with faulthandler's exit: later starts (the teardown's, then the console
    script's after its command returned) keep the first one's time."""
    deadline = stop_signals.EndDeadline()
    deadline.seconds = 3.5
    deadline.start()
    deadline.start()
    assert later_dumps == [(3.5, True)]
    # Before ros2 launch's SIGKILL (10 s after its SIGINT), with time for the stop to reach
    # the teardown: it was 12 s, and launch killed a hung process without a word
    # (test/launch/test_launch_end_deadline.py).
    assert stop_signals.END_DEADLINE_S <= LAUNCH_SIGKILL_S - 2.0


@pytest.mark.parametrize("stderr", [None, io.StringIO()], ids=["closed", "no-descriptor"])
def test_the_end_deadline_arms_without_a_stderr_file(
    monkeypatch: pytest.MonkeyPatch, stderr: io.StringIO | None
) -> None:
    """A process started with stderr closed (``sys.stderr`` None) or a stderr without a
    descriptor: armed all the same, its stacks to the null device (faulthandler refused
    ``sys.stderr`` None with a RuntimeError, out of the node's teardown and out of a command
    that had done its work, exit 1)."""
    files: list[object] = []
    monkeypatch.setattr(
        stop_signals.faulthandler,
        "dump_traceback_later",
        lambda timeout, exit=False, file=None: files.append(file),
    )
    monkeypatch.setattr(stop_signals.sys, "stderr", stderr)
    deadline = stop_signals.EndDeadline()
    deadline.seconds = 3.5
    deadline.start()
    deadline.progress()
    # One null device for every arming (a fleet's each robot's end arms it again).
    assert len(files) == 2 and files[0] is files[1]
    assert getattr(files[0], "name", None) == os.devnull
    files[0].close()  # type: ignore[attr-defined]


def test_progress_runs_the_end_deadline_again_once_started(
    later_dumps: list[tuple[float, bool]],
) -> None:
    """Each step of a long end (a fleet's robots) gets the whole deadline; before the start,
    or outside a console script, progress arms nothing."""
    outside = stop_signals.EndDeadline()
    outside.start()
    outside.progress()
    deadline = stop_signals.EndDeadline()
    deadline.seconds = 2.0
    deadline.progress()
    assert later_dumps == []
    deadline.start()
    deadline.progress()
    deadline.progress()
    assert later_dumps == [(2.0, True)] * 3
