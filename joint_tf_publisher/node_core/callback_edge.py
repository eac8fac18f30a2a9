"""What the node does with an exception a callback raised: the policy of the adapter's edge.

Every parameter, service, timer and subscription callback of the node runs inside
``ros.edges``' guards, which hand what the callback raised to ``CallbackEdge.failed``: the
failure is counted in the health report (``JointStateHealth.callback_failed``, so
/diagnostics shows it), logged as an error with its cause and where it was raised the first
time that cause shows up, then at most once per ``reporting.THROTTLE_S`` with its count, and
the node serves on. A parameter change or a service request that failed this way is refused
with ``reason`` (the callback and the exception's text). No rclpy here.

A cause is the callback's name and the exception's type (``joint_states: KeyError``): one
bug that recurs on every message is one cause, logged once and counted.
"""

from __future__ import annotations

import traceback

from ..health.model import JointStateHealth
from ..health.reporting import Reporter

#: Longest exception text quoted in a log line or a refusal, characters.
MAX_TEXT = 300


def cause_of(callback: str, error: BaseException) -> str:
    """The cause ``error`` raised in ``callback`` is counted under: ``callback: Type``."""
    return f"{callback}: {type(error).__name__}"


def reason_of(callback: str, error: BaseException) -> str:
    """One line: the callback, the exception's type and its text (shortened)."""
    text = " ".join(str(error).split())
    if len(text) > MAX_TEXT:
        text = text[: MAX_TEXT - 3] + "..."
    return f"{cause_of(callback, error)}: {text}" if text else cause_of(callback, error)


def raised_at(error: BaseException) -> str:
    """Where ``error`` was raised: ``file:line in function`` of its innermost frame."""
    frames = traceback.extract_tb(error.__traceback__)
    if not frames:
        return "unknown place"
    last = frames[-1]
    return f"{last.filename}:{last.lineno} in {last.name}"


class CallbackEdge:
    """Counts and reports callback failures (see the module docstring) into ``health``,
    logging through ``reporter``."""

    def __init__(self, health: JointStateHealth, reporter: Reporter) -> None:
        self.health = health
        self.reporter = reporter

    def failed(self, callback: str, error: BaseException) -> str:
        """``callback`` raised ``error`` and the node serves on: count it, log it (the
        first time its cause shows up in full, then throttled); the reason to refuse a
        request with."""
        reason = reason_of(callback, error)
        cause = self.health.callback_failed(cause_of(callback, error))
        count = self.health.callback_failures[cause]
        if count == 1:
            self.reporter.throttle.due(cause)  # the first line opens the cause's period
            self.reporter.logger.error(
                f"callback failed, the node serves on: {reason} (raised at {raised_at(error)})"
            )
        elif self.reporter.throttle.due(cause):
            self.reporter.logger.error(
                f"callback failed again, the node serves on: {reason} ({count}x since start)"
            )
        return reason
