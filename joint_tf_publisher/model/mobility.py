"""The cycle each loop joint closes and its mobility by the Gruebler-Kutzbach criterion.

A loop joint between link1 and link2 closes one cycle: the tree joints from link1 up to the
links' common ancestor and down to link2 (``tree.tree_path``), then the loop joint. A single
loop of j joints has j bodies, so the criterion counted over it is

    spatial:  M = 6 (n - 1) - sum(6 - f_i) = sum(f_i) - 6
    planar:   M = 3 (n - 1) - sum(3 - f_i) = sum(f_i) - 3

with f_i each joint's degrees of freedom. The loop is planar where every joint is revolute,
continuous, prismatic or fixed, there is a revolute axis, every revolute axis is parallel to it
and every prismatic axis perpendicular to it (axes compared at the description's drawing).
M is how many of the loop's values must be given for it to be determined; the others are
passive (solved). M < 0: the loop is over-determined by its own joints (it closes only where
its geometry is exact), M = 0: it is rigid.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

from ..arrays import Array
from .drawing import drawing_poses
from .elements import Joint, RobotModel
from .loops import LoopJoint, LoopJointType
from .tree import tree_path

#: Sine (and cosine) below which two axes count as parallel (perpendicular).
AXIS_TOLERANCE = 1e-6

#: Tree joint types a planar loop may hold (each moves in or about the plane's normal).
_PLANAR_TYPES = ("revolute", "continuous", "prismatic", "fixed")


@dataclass(frozen=True)
class LoopCycle:
    """One loop: its closing joint, the tree joints of its cycle (link1 -> common ancestor ->
    link2), whether it is planar, and its mobility M (module docstring)."""

    loop_joint: LoopJoint
    tree_joints: tuple[str, ...]
    planar: bool
    mobility: int

    @property
    def over_determined(self) -> bool:
        """True where the loop's own joints leave it fewer than zero degrees of freedom."""
        return self.mobility < 0


def loop_cycles(robot: RobotModel) -> list[LoopCycle]:
    """The cycle of each of ``robot.loop_joints``, in their order."""
    if not robot.loop_joints:
        return []
    poses = drawing_poses(robot.joints, robot.root)
    joints = list(robot.joints.values())
    cycles = []
    for loop in robot.loop_joints:
        path = tuple(tree_path(joints, loop.link1, loop.link2))
        members = [robot.joints[name] for name in path]
        planar = _is_planar(members, loop, poses)
        freedoms = sum(joint.num_dofs for joint in members) + loop.type.dofs
        cycles.append(LoopCycle(loop, path, planar, freedoms - (3 if planar else 6)))
    return cycles


def _is_planar(members: list[Joint], loop: LoopJoint, poses: Mapping[str, Array]) -> bool:
    """True where the loop moves in one plane (module docstring)."""
    if any(joint.joint_type not in _PLANAR_TYPES for joint in members):
        return False
    if loop.type in (LoopJointType.BALL,):
        return False
    revolute: list[Array] = []
    prismatic: list[Array] = []
    for joint in members:
        if joint.joint_type != "fixed":
            axis = poses[joint.parent][:3, :3] @ joint.origin[:3, :3] @ joint.axis
            (prismatic if joint.joint_type == "prismatic" else revolute).append(axis)
    if loop.type.has_axis:
        axis = poses[loop.link1][:3, :3] @ loop.link1_to_joint[:3, :3] @ loop.axis
        (prismatic if loop.type is LoopJointType.PRISMATIC else revolute).append(axis)
    if not revolute:
        return False
    normal = revolute[0] / np.linalg.norm(revolute[0])
    return all(
        float(np.linalg.norm(np.cross(normal, axis))) < AXIS_TOLERANCE for axis in revolute
    ) and all(abs(float(normal @ axis)) < AXIS_TOLERANCE for axis in prismatic)
