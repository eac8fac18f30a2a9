"""A path as a user or a parameter gives it: ``~`` and ``~user`` expanded, or a ModelError.

``pathlib.Path.expanduser`` raises RuntimeError for a ``~user`` with no such user (Python up
to 3.12) and ``os.path.expanduser`` leaves it as it is; either way a request naming
``~nosuchuser/g.urdf`` must be refused with a reason, not end the node.
"""

from __future__ import annotations

import os
from pathlib import Path

from ..errors import ModelError


def expand_user(path: str, source: str) -> Path:
    """``path`` with a leading ``~`` or ``~user`` expanded; ModelError naming ``source`` (the
    parameter or option that gave it) when there is no such user or no home folder."""
    expanded = os.path.expanduser(path)
    if expanded.startswith("~"):
        user = expanded[1:].split(os.sep, 1)[0]
        whose = f"user {user!r}" if user else "the node's user"
        raise ModelError(f"cannot expand {path!r}: no home folder for {whose}", source=source)
    return Path(expanded)
