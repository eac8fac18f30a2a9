"""Closed kinematic loops: the joints a tree leaves out, read as constraints between two links.

A robot description is published as a tree (``model.tree``); a joint that would give a link
a second parent closes a loop instead. Such a joint is a ``LoopJoint``: a joint frame fixed
in ``link1`` (the "parent" side) and the same joint frame fixed in ``link2`` (the "child"
side). The loop is closed when the two frames, each carried by its link's forward kinematics,
coincide up to the joint's own motion:

- ``BALL``: the two origins coincide.
- ``REVOLUTE``, ``CONTINUOUS``: the origins coincide and the axes lie on one line.
- ``PRISMATIC``: the orientations coincide and the origins differ only along the axis.
- ``FIXED``: the whole frames coincide.

The three spellings read into it (docs/loops.md, "Reading loops"): SDFormat's joint whose
child already has a parent, URDF's ``<loop_joint>`` (Drake's extension) and URDF's
``<gazebo><joint>`` extension. Units: metres and radians.

A revolute, continuous or prismatic loop joint has a value, as a tree joint of its type does:
the angle about (or travel along) its axis from its frame in ``link1`` to its frame in
``link2`` (``LoopJoint.motion``). A joint state may give it (an encoder on a four-bar's closing
pin): the loop then closes with the joint at that value, its frames coinciding up to
``motion(value)`` (docs/loops.md, "Passive and given").
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum

import numpy as np

from ..arrays import Array
from ..transforms import axis_angle_to_matrix


class LoopJointType(Enum):
    """The motion a loop-closing joint allows between its two frames.

    URDF ``<loop_joint type="spherical">`` reads as ``BALL``.
    """

    REVOLUTE = "revolute"
    CONTINUOUS = "continuous"
    PRISMATIC = "prismatic"
    BALL = "ball"
    FIXED = "fixed"

    @property
    def has_axis(self) -> bool:
        """True where the joint moves about or along ``LoopJoint.axis``."""
        return self in (LoopJointType.REVOLUTE, LoopJointType.CONTINUOUS, LoopJointType.PRISMATIC)

    @property
    def dofs(self) -> int:
        """Degrees of freedom the joint allows between its two links (Gruebler's f_i)."""
        return _LOOP_JOINT_DOFS[self]

    @property
    def takes_value(self) -> bool:
        """True where a joint state may give the joint's value: one about or along its axis."""
        return self.has_axis


_LOOP_JOINT_DOFS = {
    LoopJointType.REVOLUTE: 1,
    LoopJointType.CONTINUOUS: 1,
    LoopJointType.PRISMATIC: 1,
    LoopJointType.BALL: 3,
    LoopJointType.FIXED: 0,
}


@dataclass(frozen=True, eq=False)
class LoopJoint:
    """A joint that closes a kinematic loop: one joint frame fixed in each of two links.

    ``link1_to_joint`` is the pose (4, 4) of the joint frame in ``link1``'s frame and
    ``link2_to_joint`` the pose of the joint frame in ``link2``'s frame (m, rad). ``axis`` is
    a unit 3-vector in the joint frame (zeros for ``BALL`` and ``FIXED``). ``lower`` and
    ``upper`` are the joint's limits (rad or m) where the file gives them, else None.
    ``where`` is "file:line: <element>", for error messages.
    """

    name: str
    type: LoopJointType
    link1: str
    link1_to_joint: Array
    link2: str
    link2_to_joint: Array
    axis: Array
    lower: float | None
    upper: float | None
    where: str

    def motion(self, value: float) -> Array:
        """The pose (4, 4) of the joint frame in ``link2`` relative to the one in ``link1``
        at ``value`` (rad about ``axis``; prismatic: m along it): where the loop closes with
        the joint at that value, ``link1``'s frame times this is ``link2``'s. Only for a type
        that ``takes_value``."""
        motion = np.eye(4)
        if self.type is LoopJointType.PRISMATIC:
            motion[:3, 3] = np.multiply(self.axis, value)
        else:
            motion[:3, :3] = axis_angle_to_matrix(self.axis, value)
        return motion

    def same_as(self, other: LoopJoint, tolerance: float = 1e-9) -> bool:
        """True if ``other`` is the same joint read, perhaps from another spelling: the same
        name, type, links and limits, and frames and axis within ``tolerance`` (m, rad; an
        absolute bound, not one relative to the values)."""
        return (
            self.name == other.name
            and self.type is other.type
            and (self.link1, self.link2) == (other.link1, other.link2)
            and (self.lower, self.upper) == (other.lower, other.upper)
            and np.allclose(self.link1_to_joint, other.link1_to_joint, rtol=0.0, atol=tolerance)
            and np.allclose(self.link2_to_joint, other.link2_to_joint, rtol=0.0, atol=tolerance)
            and np.allclose(self.axis, other.axis, rtol=0.0, atol=tolerance)
        )
