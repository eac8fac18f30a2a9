"""URDF ``<loop_joint>``: a joint that closes a kinematic loop (Drake's URDF extension, also
read by Isaac Sim's URDF importer), as a ``model.loops.LoopJoint``.

    <loop_joint name="..." type="revolute|continuous|prismatic|ball|spherical|fixed">
      <link1 link="..." xyz="..." rpy="..."/>   the joint frame in link1's frame
      <link2 link="..." xyz="..." rpy="..."/>   the joint frame in link2's frame
      <axis xyz="..."/>                         in the joint frame; (1, 0, 0) where absent
      <limit lower="..." upper="..."/>          optional (rad or m)
    </loop_joint>

As Drake's parser: ``<axis>`` defaults to (1, 0, 0) and ``xyz``/``rpy`` to zero. Beyond it:
``type`` is required and read (Drake's parser took every loop joint as revolute), ``spherical``
is ``ball`` (Isaac Sim's spelling), and a ``<limit>`` is read where written. urdfdom ignores the
element, so the tree loads as it always has. Units: metres and radians.
"""

from __future__ import annotations

import numpy as np
from lxml import etree

from ...model.loops import LoopJoint, LoopJointType
from ..xmlio import line_of
from .context import (
    Context,
    children_by_tag,
    one_of,
    optional_float,
    required_name,
    required_text,
)
from .joints import link_reference, parse_axis, parse_origin

#: ``<loop_joint type>`` values, as loop joint types.
URDF_LOOP_TYPES = {
    "revolute": LoopJointType.REVOLUTE,
    "continuous": LoopJointType.CONTINUOUS,
    "prismatic": LoopJointType.PRISMATIC,
    "ball": LoopJointType.BALL,
    "spherical": LoopJointType.BALL,
    "fixed": LoopJointType.FIXED,
}


def loop_joint_label(name: str) -> str:
    """How error messages name a ``<loop_joint>``: ``loop_joint 'name'``."""
    return f"loop_joint {name!r}"


def parse_loop_joint(element: etree._Element, ctx: Context) -> LoopJoint:
    """A ``<loop_joint>`` element as a LoopJoint; ModelError naming it where it is invalid
    (no or an unknown type, no ``<link1>``/``<link2>`` or its ``link``, a zero axis, a bad
    number). Whether its links exist is ``model.validate.check_loop_joints``'s business."""
    name = required_name(element, ctx, None)
    owner = loop_joint_label(name)
    written_type = required_text(element, "type", ctx, owner).strip()
    loop_type = URDF_LOOP_TYPES[
        one_of(written_type, URDF_LOOP_TYPES, "loop joint type", element, ctx, owner)
    ]
    parts = children_by_tag(element, ctx, owner)
    link1 = link_reference(element, parts.get("link1"), "link1", ctx, owner)
    link2 = link_reference(element, parts.get("link2"), "link2", ctx, owner)
    axis = (
        parse_axis(parts.get("axis"), loop_type.value, ctx, owner)
        if loop_type.has_axis
        else np.zeros(3)
    )
    lower, upper = _limits(parts.get("limit"), loop_type, ctx, owner)
    return LoopJoint(
        name=name,
        type=loop_type,
        link1=link1,
        link1_to_joint=parse_origin(parts.get("link1"), ctx, owner),
        link2=link2,
        link2_to_joint=parse_origin(parts.get("link2"), ctx, owner),
        axis=axis,
        lower=lower,
        upper=upper,
        where=f"{ctx.diag.source}:{line_of(element)}: {owner}",
    )


def _limits(
    element: etree._Element | None, loop_type: LoopJointType, ctx: Context, owner: str
) -> tuple[float | None, float | None]:
    """``<limit lower upper>`` (rad or m) of a revolute or prismatic loop joint, each None where
    not written; a continuous, ball or fixed joint has none (a limit there is ignored, with a
    warning, as urdfdom ignores a continuous joint's range)."""
    if element is None:
        return None, None
    if loop_type not in (LoopJointType.REVOLUTE, LoopJointType.PRISMATIC):
        ctx.diag.warn(
            f"<limit> of a {loop_type.value} loop joint is ignored", line_of(element), owner
        )
        return None, None
    lower = optional_float(element, "lower", ctx, owner, None)
    upper = optional_float(element, "upper", ctx, owner, None)
    if lower is not None and upper is not None and lower > upper:
        raise ctx.error(f"<limit> lower {lower:g} is above upper {upper:g}", element, owner)
    return lower, upper
