"""Robot descriptions to models: hardened XML (``xmlio``), URDF (``urdf``), SDFormat (``sdf``),
and the entry points that detect the format and expand xacro (``loader``).

The entry points are imported on first use, so that the xacro runner (``xacro_runner``, run in
a process of its own) loads neither lxml nor numpy.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from .loader import expand_xacro, load_file, load_string

__all__ = ["expand_xacro", "load_file", "load_string"]


def __getattr__(name: str) -> Any:
    """The functions of ``__all__``, imported from ``loader`` on first access."""
    if name in __all__:
        return getattr(importlib.import_module(".loader", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
