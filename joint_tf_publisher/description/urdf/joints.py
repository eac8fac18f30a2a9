"""A URDF ``<joint>``: type, parent and child links, origin, axis, dynamics, calibration, mimic;
its ``<limit>`` and ``<safety_controller>`` are read by ``limits``. Units: metres and radians."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import numpy as np
from lxml import etree

from ...arrays import Array
from ...model.elements import Calibration, Dynamics, Joint, Mimic
from ...transforms import pose_matrix, quaternion_to_matrix, unit_and_norm, xyz_rpy_to_matrix
from ..xmlio import line_of
from .context import (
    Context,
    children_by_tag,
    float_or,
    one_of,
    optional_float,
    required_name,
    required_text,
    vector,
)
from .limits import check_soft_limits, parse_limit, parse_safety

#: The joint types URDF knows (the SDF-only types of Joint.TYPES are refused here).
URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")

#: Joint types whose axis must not be zero (it is unused by fixed and floating joints).
AXIS_TYPES = ("revolute", "continuous", "prismatic", "planar")

#: Tolerance on |axis| - 1 (and |q| - 1) below which a vector is renormalised silently.
UNIT_TOLERANCE = 1e-6

_Parsed = TypeVar("_Parsed")


def parse_joint(element: etree._Element, ctx: Context) -> Joint:
    """A ``<joint>`` element as a Joint; ModelError naming the joint where it is invalid."""
    name = required_name(element, ctx, None, empty_ok=True)
    owner = f"joint {name!r}"
    written_type = required_text(element, "type", ctx, owner).strip()
    joint_type = one_of(written_type, URDF_JOINT_TYPES, "joint type", element, ctx, owner)
    parts = children_by_tag(element, ctx, owner)
    parent = link_reference(element, parts.get("parent"), "parent", ctx, owner)
    child = link_reference(element, parts.get("child"), "child", ctx, owner)
    origin = parse_origin(parts.get("origin"), ctx, owner)
    axis = parse_axis(parts.get("axis"), joint_type, ctx, owner)
    limit = parse_limit(element, parts.get("limit"), joint_type, ctx, owner)
    safety_element = parts.get("safety_controller")
    joint = Joint(
        name=name,
        joint_type=joint_type,
        parent=parent,
        child=child,
        axis=axis,
        origin=origin,
        limit=limit,
        dynamics=_optional(parts.get("dynamics"), _parse_dynamics, ctx, owner),
        safety_controller=_optional(safety_element, parse_safety, ctx, owner),
        calibration=_optional(parts.get("calibration"), _parse_calibration, ctx, owner),
        mimic=_optional(parts.get("mimic"), _parse_mimic, ctx, owner),
        line=line_of(element),
    )
    if safety_element is not None:
        check_soft_limits(joint, safety_element, ctx, owner)
    return joint


def _optional(
    element: etree._Element | None,
    parse: Callable[[etree._Element, Context, str], _Parsed],
    ctx: Context,
    owner: str,
) -> _Parsed | None:
    """``parse(element)`` for an optional element; None where it is absent."""
    return None if element is None else parse(element, ctx, owner)


def link_reference(
    element: etree._Element, found: etree._Element | None, tag: str, ctx: Context, owner: str
) -> str:
    """The ``link`` named by the joint's ``<parent>`` or ``<child>`` element ``found``."""
    if found is None:
        raise ctx.error(f"requires a <{tag}> element", element, owner)
    link = found.get("link")
    if link is None or not link.strip():
        what = "requires 'link'" if link is None else "has an empty 'link'"
        raise ctx.error(f"<{tag}> {what}", found, owner)
    return link


def parse_origin(element: etree._Element | None, ctx: Context, owner: str) -> Array:
    """Pose (4, 4) written by ``element``'s xyz and rpy (or quat_xyzw) attributes: for a joint's
    ``<origin>`` the joint frame in the parent link frame, for a ``<loop_joint>``'s ``<link1>``
    and ``<link2>`` the joint frame in that link's frame; identity where absent."""
    if element is None:
        return np.eye(4)
    xyz = vector(element, "xyz", 3, ctx, owner, (0.0, 0.0, 0.0))
    quat_text = element.get("quat_xyzw")
    if quat_text is not None:
        if ctx.version < (1, 1):
            ctx.diag.warn(
                "<origin> quat_xyzw needs URDF version 1.1 or later; ignored under "
                f"{ctx.version[0]}.{ctx.version[1]}",
                line_of(element),
                owner,
            )
        else:
            if element.get("rpy") is not None:
                raise ctx.error("<origin> has both rpy and quat_xyzw; give one", element, owner)
            quat = vector(element, "quat_xyzw", 4, ctx, owner, (0.0, 0.0, 0.0, 1.0))
            unit_quat, norm = unit_and_norm(quat)
            if unit_quat is None:
                raise ctx.error("<origin> quat_xyzw is zero, not a rotation", element, owner)
            if abs(norm - 1.0) > UNIT_TOLERANCE:
                ctx.diag.warn(
                    f"<origin> quat_xyzw has norm {norm:g}; normalised", line_of(element), owner
                )
            return pose_matrix(xyz, quaternion_to_matrix(unit_quat))
    rpy = vector(element, "rpy", 3, ctx, owner, (0.0, 0.0, 0.0))
    return xyz_rpy_to_matrix(xyz, rpy)


def parse_axis(element: etree._Element | None, joint_type: str, ctx: Context, owner: str) -> Array:
    """Unit axis in the joint frame; (1, 0, 0) where absent."""
    default = np.array([1.0, 0.0, 0.0])
    if element is None:
        return default
    if joint_type not in AXIS_TYPES:
        return default  # unused; urdfdom reads but never checks it
    required_text(element, "xyz", ctx, owner)  # urdfdom: an <axis> without xyz is 0 0 0
    axis = vector(element, "xyz", 3, ctx, owner, (1.0, 0.0, 0.0))
    unit_axis, norm = unit_and_norm(axis)
    if unit_axis is None:
        raise ctx.error(
            f"<axis> xyz is zero; a {joint_type} joint needs a direction", element, owner
        )
    if abs(norm - 1.0) > UNIT_TOLERANCE:
        ctx.diag.warn(
            f"<axis> xyz={element.get('xyz')!r} is not a unit vector (norm {norm:g}); normalised",
            line_of(element),
            owner,
        )
    return unit_axis


def _parse_dynamics(element: etree._Element, ctx: Context, owner: str) -> Dynamics:
    return Dynamics(
        damping=float_or(element, "damping", ctx, owner, 0.0),
        friction=float_or(element, "friction", ctx, owner, 0.0),
    )


def _parse_calibration(element: etree._Element, ctx: Context, owner: str) -> Calibration:
    return Calibration(
        rising=optional_float(element, "rising", ctx, owner, None),
        falling=optional_float(element, "falling", ctx, owner, None),
    )


def _parse_mimic(element: etree._Element, ctx: Context, owner: str) -> Mimic:
    leader = required_text(element, "joint", ctx, owner)  # empty: names no joint (a warning)
    return Mimic(
        joint=leader,
        multiplier=float_or(element, "multiplier", ctx, owner, 1.0),
        offset=float_or(element, "offset", ctx, owner, 0.0),
        line=line_of(element),
    )
