"""A tree's links where the description draws them: every joint at zero."""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from ..arrays import Array
from .elements import Joint


def drawing_poses(joints: Mapping[str, Joint], root: str) -> dict[str, Array]:
    """T_root_link (4, 4) of every link of the tree ``joints`` at zero joint values: the
    description's own drawing, where a loop joint's frame is placed in both of its links
    (SDFormat's links at their ``<pose>``, URDF's origins composed). Units: metres."""
    children: dict[str, list[Joint]] = {}
    for joint in joints.values():
        children.setdefault(joint.parent, []).append(joint)
    poses = {root: np.eye(4)}
    stack = [root]
    while stack:
        parent = stack.pop()
        for joint in children.get(parent, ()):
            poses[joint.child] = poses[parent] @ joint.child_pose()
            stack.append(joint.child)
    return poses
