"""The bag commands' stops (Ctrl-C, SIGTERM): ``terminate_as_exit`` turns SIGTERM into an
exception as Ctrl-C is, so a command cleans up alike for both, and ``STOPS`` holds a stop
over a step that must not be cut (``BagOutput.finish``'s renames), raising it after."""

from __future__ import annotations

import contextlib
import signal
import threading
from collections.abc import Iterator
from types import FrameType


class HeldStops:
    """A stop (Ctrl-C, SIGTERM) the handler of ``terminate_as_exit`` gives ``deliver``:
    raised at once, or, between ``hold`` and ``release``, kept and raised by ``release``.
    Python raises a stop at the next bytecode, so one that comes as a rename returns falls
    before what the rename did is noted; held, it falls after the step. (A signal mask
    cannot hold it: a stop goes to any thread that does not block it, and the repair's
    process has two; the handler then runs in the main thread at once.) A stop without that
    handler (Python's Ctrl-C, a caller's own) is raised as it comes."""

    def __init__(self) -> None:
        self.held = False
        #: The stop that came while held, for ``release`` to raise.
        self.due: BaseException | None = None

    def hold(self) -> None:
        """A stop from here on kept, until ``release``."""
        self.held = True

    def release(self) -> None:
        """Nothing held any more; a stop that came meanwhile is raised here."""
        self.held = False  # first: a stop from here on is raised as it comes
        due, self.due = self.due, None
        if due is not None:
            raise due

    def deliver(self, stop: BaseException) -> None:
        """``stop`` raised, or kept for ``release`` while held (the first one)."""
        if not self.held:
            raise stop
        if self.due is None:
            self.due = stop


#: The one ``HeldStops`` of the process (stops are the process's).
STOPS = HeldStops()


@contextlib.contextmanager
def terminate_as_exit() -> Iterator[None]:
    """SIGTERM (``kill``, a launch file's or a container's stop) ends the block as Ctrl-C
    does, by an exception, so what the repair cleans up on Ctrl-C it cleans up here too (the
    partial folder, an old bag moved aside put back): ``SystemExit`` with the shell's status
    of a terminated process, 143. The first stop (SIGTERM, or Ctrl-C where Python's own
    handler has it) starts the clean-up; a later one, until the block ends, waits for it
    (ignored): raised inside the clean-up it left the old bag in the partial folder. Over
    ``finish``'s renames the first stop is held (``STOPS``), raised after the step. The
    handlers before are restored after; off the main thread (a caller's thread, where Python
    takes no handler) the block runs as it is."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    stops = [signal.SIGTERM]
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not one ignored
        stops.append(signal.SIGINT)

    def waits(number: int, frame: FrameType | None) -> None:
        """A later stop: nothing (Python's own SIG_IGN here printed "Signal 15 ignored due
        to race condition", a traceback, for a stop that came with the first in one step)."""

    def stopped(number: int, frame: FrameType | None) -> None:
        for stop in stops:  # the clean-up runs to its end
            signal.signal(stop, waits)
        # held by ``finish`` while the output's name changes hands: raised after that step
        STOPS.deliver(KeyboardInterrupt() if number == signal.SIGINT else SystemExit(128 + number))

    before = {stop: signal.signal(stop, stopped) for stop in stops}
    try:
        yield
    finally:
        for stop, handler in before.items():
            signal.signal(stop, handler)
