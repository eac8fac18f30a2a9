"""joint_tf_publisher: robot descriptions and joint states to tf2 transforms.

The core (this package without ``ros``) needs only numpy and lxml. The model classes are
imported on first use, so the console scripts (``entry``) start without loading numpy first.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from .errors import ModelError

if TYPE_CHECKING:
    from .model import (
        Calibration,
        ClampMode,
        Dynamics,
        Joint,
        Limit,
        Link,
        Mimic,
        SafetyController,
    )
    from .robot import Robot

__all__ = [
    "Calibration",
    "ClampMode",
    "Dynamics",
    "Joint",
    "Limit",
    "Link",
    "Mimic",
    "ModelError",
    "Robot",
    "SafetyController",
]


def __getattr__(name: str) -> Any:
    """The classes of ``__all__``, imported on first access (``Robot`` from ``robot``)."""
    if name == "Robot":
        return importlib.import_module(".robot", __name__).Robot
    if name in __all__:
        return getattr(importlib.import_module(".model", __name__), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
