"""SDFormat joints that close kinematic loops, read as ``model.loops.LoopJoint``.

An SDFormat model is a graph: a joint whose child already hangs from another joint of the TF
tree (``model.tree.spanning_tree``) closes a loop. It is read by ``joints.build_joint`` like any
joint (pose in the child's frame, axis per version: SDF 1.6 ``use_parent_model_frame``, 1.7+
``expressed_in``), then turned into a LoopJoint: link1 is the SDF parent, the joint frame in it
as the model draws it (every link at its ``<pose>``, all joints at zero); link2 is the SDF child,
the joint frame in it as written (the joint's ``<pose>`` in the child frame).
"""

from __future__ import annotations

import math

import numpy as np
from lxml import etree

from ...model.elements import Joint, Limit
from ...model.loops import LoopJoint, LoopJointType
from ...transforms import inverse_pose
from .context import Context, line

#: SDFormat joint types that can close a loop, as loop joint types.
SDF_LOOP_TYPES = {
    "revolute": LoopJointType.REVOLUTE,
    "continuous": LoopJointType.CONTINUOUS,
    "prismatic": LoopJointType.PRISMATIC,
    "ball": LoopJointType.BALL,
    "fixed": LoopJointType.FIXED,
}


def loop_joint_from(ctx: Context, joint: Joint, element: etree._Element) -> LoopJoint:
    """The loop-closing ``joint`` (read from ``element``) as a LoopJoint; ModelError naming the
    joint for a type that cannot close a loop (screw, gearbox, revolute2, universal)."""
    what = f"joint {joint.name!r}"
    loop_type = SDF_LOOP_TYPES.get(joint.joint_type)
    if loop_type is None:
        raise ctx.error(
            f"a {joint.joint_type} joint closes a kinematic loop (link {joint.child!r} already "
            f"has a parent joint); loop joints can be {', '.join(SDF_LOOP_TYPES)}",
            element,
            what,
        )
    lower, upper = limit_bounds(joint.limit) if loop_type.has_axis else (None, None)
    return LoopJoint(
        name=joint.name,
        type=loop_type,
        link1=joint.parent,
        link1_to_joint=joint.origin,
        link2=joint.child,
        link2_to_joint=inverse_pose(joint.child_offset),
        axis=joint.axis if loop_type.has_axis else np.zeros(3),
        lower=lower,
        upper=upper,
        where=f"{ctx.origin(element).source}:{line(element)}: {what}",
    )


def limit_bounds(limit: Limit | None) -> tuple[float | None, float | None]:
    """A limit's written, finite lower and upper bounds (rad or m); None for each absent one."""
    if limit is None or not limit.has_position_range:
        return None, None
    lower = limit.lower if math.isfinite(limit.lower) else None
    upper = limit.upper if math.isfinite(limit.upper) else None
    return lower, upper
