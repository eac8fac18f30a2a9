"""SIGINT and SIGTERM as a flag and a wake-up call, never as an exception (stdlib only).

The node's console script installs ``StopSignals`` before it imports rclpy or numpy, so from
its first moments on a stop signal only sets ``requested`` (through a thread of its own):
nothing is interrupted half way (an import, rclpy.init, a parameter declaration, the
destruction of a guard condition), and the node ends the same way whenever the signals come,
with exit code 0 and no traceback.

Once a console script's process begins to end (``END_DEADLINE``), it ends within
``END_DEADLINE_S``, also where the middleware's teardown hangs.
"""

from __future__ import annotations

import faulthandler
import os
import signal
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import TextIO

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)

#: The longest a console script's process takes to end once it began to, seconds: a node's
#: teardown takes well under one. Below ``ros2 launch``'s escalation to SIGKILL, which would
#: end a hung process without a word: 10 s after its SIGINT (``ExecuteProcess``'s
#: ``sigterm_timeout`` 5 s, then ``sigkill_timeout`` 5 s), 2 s left for the stop to reach the
#: teardown and for the stacks. (It was 12 s, above it: launch killed first, measured.)
END_DEADLINE_S = 8.0


class EndDeadline:
    """The bound on a console script's process's end: a teardown that hangs (a middleware
    participant that never finishes its deletion: rare, in DDS threads, where neither SIGINT
    nor SIGTERM can help, as ignored or as a flag) is ended ``seconds`` after ``start``,
    with every thread's Python stack on stderr (after faulthandler's ``Timeout (0:00:08)!``)
    and exit status 1.

    faulthandler's watchdog is a thread of C: it needs neither the GIL, which a call into the
    middleware may hold while it hangs, nor a live interpreter (it runs through finalization).
    """

    def __init__(self) -> None:
        #: Seconds from the first ``start`` to the forced end; None (the default, for
        #: in-process use such as tests): ``start`` does nothing.
        self.seconds: float | None = None
        self.started = False
        self._stacks: TextIO | None = None

    def start(self) -> None:
        """The process begins to end: the deadline runs from the first call (later ones keep
        it), if ``seconds`` is set."""
        if self.seconds is None or self.started:
            return
        self.started = True
        self._arm(self.seconds)

    def progress(self) -> None:
        """A step of a long end is done (the fleet: one robot's node destroyed): once
        started, the deadline runs again from now, so that it bounds each step, not the sum
        of many (a fleet of hundreds of robots takes about 9 ms each)."""
        if self.seconds is not None and self.started:
            self._arm(self.seconds)

    def _arm(self, seconds: float) -> None:
        """faulthandler's watchdog, its stacks on stderr, or nowhere where there is none: a
        process started with stderr closed (``2>&-``, a daemon's) has ``sys.stderr`` None,
        which faulthandler refuses (RuntimeError: a command that had done its work exited 1,
        and the node's teardown was skipped)."""
        if self._stacks is None:
            self._stacks = _stacks_file()
        faulthandler.dump_traceback_later(seconds, exit=True, file=self._stacks)


def _stacks_file() -> TextIO:
    """Where the deadline's stacks go: stderr, if it is a file; else the null device (opened
    once, kept open to the exit: faulthandler writes to its descriptor)."""
    try:
        sys.stderr.fileno()
    except (AttributeError, OSError, ValueError):  # None, no descriptor, closed
        return open(os.devnull, "w")
    return sys.stderr


#: This process's end deadline; the console scripts (``entry``) set its ``seconds``.
END_DEADLINE = EndDeadline()


#: How CPython reports a stop signal that came as its handler was being set to SIG_IGN: the
#: signal's C handler had run, and the next check finds no Python handler for it
#: (Modules/signalmodule.c: an OSError written as unraisable, a "Traceback" on stderr; never
#: raised to the caller).
STOP_RACE_REPORTS = frozenset(
    f"Signal {int(number)} ignored due to race condition" for number in STOP_SIGNALS
)


class StopRaceFilter:
    """A ``sys.unraisablehook`` that drops CPython's report of a stop signal that came as the
    stop signals were being ignored (``STOP_RACE_REPORTS``) and hands anything else to the
    hook it replaced: ignoring that stop is what was meant."""

    def __init__(self, previous: Callable[[sys.UnraisableHookArgs], object]) -> None:
        self.previous = previous

    def __call__(self, args: sys.UnraisableHookArgs) -> None:
        if (
            args.exc_type is OSError
            and args.object is None
            and str(args.exc_value) in STOP_RACE_REPORTS
        ):
            return
        self.previous(args)


def ignore_stop_signals() -> None:
    """SIGINT and SIGTERM ignored from now on: at the very end of a process, a late signal
    must neither raise nor kill it (Python resets its own handlers to the default, fatal
    action while it finalizes; an ignored signal stays ignored). A stop that came as its
    handler was being ignored is dropped, as meant: CPython would print "Signal 2 ignored due
    to race condition" with a traceback (a flood of Ctrl-C while the node ends: two flood runs
    in one clean-clone CI run), so ``StopRaceFilter`` is installed first."""
    if not isinstance(sys.unraisablehook, StopRaceFilter):
        sys.unraisablehook = StopRaceFilter(sys.unraisablehook)
    for number in STOP_SIGNALS:
        signal.signal(number, signal.SIG_IGN)


class StopSignals:
    """SIGINT and SIGTERM as a flag, and a wake-up of the spin loop: never an exception.

    Python's handlers for both do nothing; ``signal.set_wakeup_fd`` makes every signal with
    a Python handler (received by whichever thread) write its number to a pipe, read by a
    thread of ours that sets ``requested`` (for these two) and calls ``wake`` (set
    by ``wake_with``; for any signal, so that the main thread gets back to Python and runs
    the handler), under a lock that ``close`` takes too: after ``close`` it never runs
    again. Install it on the main thread.
    """

    def __init__(self) -> None:
        self.requested = threading.Event()
        self._lock = threading.Lock()
        self._wake: Callable[[], None] | None = None
        self._closing = False
        self._read_fd, self._write_fd = os.pipe()
        os.set_blocking(self._write_fd, False)
        self._previous = {number: signal.signal(number, self._on_signal) for number in STOP_SIGNALS}
        self._previous_fd = signal.set_wakeup_fd(self._write_fd, warn_on_full_buffer=False)
        self._thread = threading.Thread(target=self._read, name="jtp-stop-signals", daemon=True)
        self._thread.start()

    def _on_signal(self, number: int, frame: FrameType | None) -> None:
        """Nothing: the wake-up fd carries the number and the thread sets ``requested``. A
        handler runs between two bytecodes of the main thread, also inside itself when
        signals come fast: one that took a lock (``Event.set``) deadlocked or overflowed the
        stack there (a flood of SIGINT ended the node with a RecursionError)."""

    def _read(self) -> None:
        while True:
            data = os.read(self._read_fd, 64)  # signal numbers, one byte each
            with self._lock:
                if self._closing or not data:
                    return
                if any(number in STOP_SIGNALS for number in data):
                    self.requested.set()
                # Any other signal with a Python handler: wake the loop too, so that the main
                # thread returns to Python and runs that handler.
                self._call_wake()

    def _call_wake(self) -> None:
        if self._wake is not None:
            try:
                self._wake()
            except Exception:  # the loop is gone already; nothing left to wake
                self._wake = None

    def wake_with(self, wake: Callable[[], None] | None) -> None:
        """Call ``wake`` on every later stop signal (and now, if one came already)."""
        with self._lock:
            self._wake = wake
            if self.requested.is_set() and not self._closing:
                self._call_wake()

    def wake(self) -> None:
        """Call the wake function now (e.g. on an external ROS shutdown), unless closed."""
        with self._lock:
            if not self._closing:
                self._call_wake()

    def close(self) -> None:
        """Stop waking anything and join the thread; the handlers stay (they do nothing; a
        signal sets no flag from now on). Idempotent; call it on the thread that created this."""
        with self._lock:
            if self._closing:
                return
            self._closing = True
            self._wake = None
        signal.set_wakeup_fd(self._previous_fd)
        os.write(self._write_fd, b"\0")  # ends the thread's read
        self._thread.join()
        os.close(self._read_fd)
        os.close(self._write_fd)

    def restore(self) -> None:
        """``close``, then put back the handlers found at creation (for in-process use)."""
        self.close()
        for number, handler in self._previous.items():
            signal.signal(number, handler)

    def ignore_from_now_on(self) -> None:
        """``close``, then ignore both signals (``ignore_stop_signals``)."""
        self.close()
        ignore_stop_signals()
