"""The package's one exception type for bad robot descriptions."""

from __future__ import annotations


class ModelError(ValueError):
    """An invalid robot description.

    The message always names where the problem is: ``source:line: element: what``,
    e.g. ``pr2.urdf:120: joint 'r_gripper_joint': <limit> requires 'effort'``.
    ``source`` is the file path, or ``<string>`` for text given directly.
    """

    def __init__(self, message: str, *, source: str = "<string>", line: int | None = None,
                 element: str | None = None) -> None:
        self.source = source
        self.line = line
        self.element = element
        self.reason = message
        where = f"{source}:{line}" if line is not None else source
        text = f"{where}: {element}: {message}" if element else f"{where}: {message}"
        super().__init__(text)
