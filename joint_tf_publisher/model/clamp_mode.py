"""The clamp mode: which written limits joint values are clamped to.

One closed set, used typed everywhere inside the package. Strings come in at the edges only
(the node's ``clamp`` parameter, ``Robot.link_fk(clamp=...)``, the CLI's ``--clamp``) and are
converted there, once, by ``ClampMode.of``.
"""

from __future__ import annotations

from enum import Enum
from typing import TypeAlias


class ClampMode(Enum):
    """The limits joint values are clamped to; the values are the node's parameter values."""

    #: ``<limit>`` lower and upper (rad or m).
    HARD = "hard"
    #: ``<limit>`` intersected with ``<safety_controller>``'s soft limits.
    SOFT = "soft"
    #: No clamping.
    NONE = "none"

    @classmethod
    def of(cls, clamp: ClampLike) -> ClampMode:
        """``clamp`` as a mode: a ``ClampMode``, "hard", "soft", or None (or "none") for no
        clamping. ValueError for anything else."""
        if isinstance(clamp, ClampMode):
            return clamp
        if clamp is None:
            return cls.NONE
        try:
            return cls(clamp)
        except ValueError:
            raise ValueError(
                f"clamp must be one of (None, 'hard', 'soft'), got {clamp!r}"
            ) from None


#: A clamp mode as the public API takes it (``ClampMode.of`` converts it): a ``ClampMode``,
#: "hard", "soft", or None for no clamping.
ClampLike: TypeAlias = ClampMode | str | None
