"""The robot model: plain dataclasses (``elements``), tree rules (``tree``) and validation.

A leaf of the package: it imports numpy and the package's ``errors`` and ``transforms`` only.
"""

from .clamp_mode import ClampLike, ClampMode
from .elements import (
    Calibration,
    Dynamics,
    Joint,
    Limit,
    Link,
    Mimic,
    RobotModel,
    SafetyController,
)
from .loops import LoopJoint, LoopJointType

__all__ = [
    "Calibration",
    "ClampLike",
    "ClampMode",
    "Dynamics",
    "Joint",
    "Limit",
    "Link",
    "LoopJoint",
    "LoopJointType",
    "Mimic",
    "RobotModel",
    "SafetyController",
]
