"""The package's one exception type for bad robot descriptions, and load-time warnings."""

from __future__ import annotations

import logging

#: Logger of the whole package; load-time warnings about descriptions go here.
LOGGER = logging.getLogger("joint_tf_publisher")


def shown(text: str) -> str:
    """``text`` as valid UTF-8: a byte of a file name that is not UTF-8 (Python holds it as a
    lone surrogate, ``\\udcff``) written ``\\xff``. rclpy's logger and a parameter
    refusal's ``reason`` take only valid UTF-8 (a surrogate is a TypeError there)."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
    except UnicodeEncodeError:  # a surrogate that no file name byte makes
        return text.encode("utf-8", "backslashreplace").decode("utf-8")


def locate(
    message: str, *, source: str, line: int | None = None, element: str | None = None
) -> str:
    """``source:line: element: message``, leaving out the parts that are None."""
    where = f"{source}:{line}" if line is not None else source
    return f"{where}: {element}: {message}" if element else f"{where}: {message}"


class ModelError(ValueError):
    """An invalid robot description.

    The message always names where the problem is: ``source:line: element: what``,
    e.g. ``pr2.urdf:120: joint 'r_gripper_joint': <limit> requires 'effort'``.
    ``source`` is the file path, or ``<string>`` for text given directly. The message is
    valid UTF-8 (``shown``), whatever bytes a file name holds.
    """

    def __init__(
        self,
        message: str,
        *,
        source: str = "<string>",
        line: int | None = None,
        element: str | None = None,
    ) -> None:
        self.source = source
        self.line = line
        self.element = element
        self.reason = shown(message)
        super().__init__(shown(locate(message, source=source, line=line, element=element)))


class Diagnostics:
    """Errors and warnings about one description, all naming its ``source``.

    Parsers raise ``diag.error(...)`` and call ``diag.warn(...)``; warnings are logged on
    ``joint_tf_publisher`` and collected in ``warnings`` (later ``Robot.warnings``).
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.warnings: list[str] = []

    def error(
        self, message: str, line: int | None = None, element: str | None = None
    ) -> ModelError:
        """A ModelError at ``line`` of this source (to be raised by the caller)."""
        return ModelError(message, source=self.source, line=line, element=element)

    def warn(self, message: str, line: int | None = None, element: str | None = None) -> None:
        """Log a non-fatal oddity and keep it for ``Robot.warnings``."""
        text = locate(message, source=self.source, line=line, element=element)
        LOGGER.warning("%s", text)
        self.warnings.append(text)


class LoopNotClosedError(ValueError):
    """A kinematic loop that the passive joints cannot close at the given joint values.

    ``joint`` is the loop-closing joint whose frames stay apart the most, ``where`` where it is
    written (``file:line: <element>``), ``position_error_m`` and ``angle_error_rad`` how far
    apart its two frames stay at the closest the solver found. ``row``: in a batch
    (``link_fk_batch``), the index of the configuration (else None).
    """

    def __init__(
        self, joint: str, where: str, position_error_m: float, angle_error_rad: float
    ) -> None:
        self.joint = joint
        self.where = where
        self.position_error_m = position_error_m
        self.angle_error_rad = angle_error_rad
        self.row: int | None = None
        super().__init__(
            f"{where}: loop joint {joint!r} cannot close at these joint values: its frames "
            f"stay {position_error_m:.3g} m and {angle_error_rad:.3g} rad apart"
        )

    def __str__(self) -> str:
        text = super().__str__()
        return text if self.row is None else f"{text} (configuration {self.row} of the batch)"
