"""Loop-closing joints: the joints that close a kinematic loop over the tree (issue #45).

A loop joint joins two links that the tree already connects. Its frame sits at
``link1_to_joint`` in link1 and at ``link2_to_joint`` in link2; the loop is closed when the two
frames, each carried by its link's pose, coincide up to the joint's own motion (ball: the
origins; revolute and continuous: the origins and the axis line; prismatic: the orientation,
an offset along the axis only; fixed: the whole frame). Units: metres and radians.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np


class LoopJointType(Enum):
    """The motion a loop joint allows (URDF ``spherical`` is ``BALL``)."""

    REVOLUTE = "revolute"
    CONTINUOUS = "continuous"
    PRISMATIC = "prismatic"
    BALL = "ball"
    FIXED = "fixed"


@dataclass(frozen=True)
class LoopJoint:
    """One loop-closing joint, as read from a description."""

    name: str
    type: LoopJointType
    link1: str  # the "parent" side
    link1_to_joint: np.ndarray  # 4x4, the joint frame in link1's frame (m, rad)
    link2: str  # the "child" side
    link2_to_joint: np.ndarray  # 4x4, the joint frame in link2's frame
    axis: np.ndarray  # unit 3-vector in the joint frame (zeros for BALL/FIXED)
    lower: float | None  # limits where given (rad or m), else None
    upper: float | None
    where: str  # "file:line: <element>" for error messages
