"""URDF ``<robot>`` element to a Robot, with the joint semantics of docs/joint-semantics.md.

Reads every element and attribute of the URDF ``<joint>`` (origin, parent, child, axis,
calibration, dynamics, limit, mimic, safety_controller) and the names of ``<link>``s; visual,
collision, inertial, transmission and gazebo data are not needed for transforms and are
skipped. URDF versions 1.0, 1.1 and 1.2 are read as urdfdom 6.0 reads them.

Every error is a ModelError naming source, line and element; every oddity that does not stop
loading is a warning (logged, and kept on ``Robot.warnings``). Units: metres and radians.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import TypeVar

import numpy as np
from lxml import etree

from ..arrays import Array
from ..errors import Diagnostics, ModelError
from ..model.elements import (
    Calibration,
    Dynamics,
    Joint,
    Limit,
    Link,
    Mimic,
    RobotModel,
    SafetyController,
)
from ..model.validate import assemble_robot
from ..transforms import pose_matrix, quaternion_to_matrix, unit_and_norm, xyz_rpy_to_matrix
from .xmlio import line_of

#: The joint types URDF knows (the SDF-only types of Joint.TYPES are refused here).
URDF_JOINT_TYPES = ("revolute", "continuous", "prismatic", "fixed", "floating", "planar")

#: URDF versions read, as (major, minor).
SUPPORTED_VERSIONS = ((1, 0), (1, 1), (1, 2))

#: Joint types that need a ``<limit>`` and are clamped to its range.
LIMITED_TYPES = ("revolute", "prismatic")

#: Joint types whose axis must not be zero (it is unused by fixed and floating joints).
AXIS_TYPES = ("revolute", "continuous", "prismatic", "planar")

#: Tolerance on |axis| - 1 (and |q| - 1) below which a vector is renormalised silently.
UNIT_TOLERANCE = 1e-6

_Parsed = TypeVar("_Parsed")

_NUMBER = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)",
    re.IGNORECASE | re.ASCII,
)


@dataclass(frozen=True)
class _Context:
    """What every element parser needs: where to report, and the file's URDF version."""

    diag: Diagnostics
    version: tuple[int, int]

    def error(self, message: str, element: etree._Element, owner: str | None) -> ModelError:
        return self.diag.error(message, line_of(element), owner)


def robot_from_element(root: etree._Element, source: str = "<string>") -> RobotModel:
    """The Robot described by a parsed URDF ``<robot>`` element; ModelError if invalid."""
    diag = Diagnostics(source)
    if root.tag != "robot":
        raise diag.error(f"root element is <{root.tag}>, expected <robot>", line_of(root))
    version = _parse_version(root, diag)
    ctx = _Context(diag, version)
    name = _required_name(root, ctx, None, empty_ok=True)
    links: list[Link] = []
    joints: list[Joint] = []
    xacro_warned = False
    for element in root:
        tag: object = element.tag
        if not isinstance(tag, str):
            continue  # comments, processing instructions, entity references
        if tag == "link":
            links.append(Link(name=_required_name(element, ctx, None), line=line_of(element)))
        elif tag == "joint":
            joints.append(_parse_joint(element, ctx))
        elif "xacro" in (etree.QName(tag).namespace or "") and not xacro_warned:
            xacro_warned = True
            diag.warn(
                f"unexpanded xacro element <xacro:{etree.QName(tag).localname}> ignored; "
                "expand the file with xacro first (Robot.load does so for .xacro files)",
                line_of(element),
            )
    return assemble_robot(name, links, joints, diag, line_of(root))


def _parse_version(root: etree._Element, diag: Diagnostics) -> tuple[int, int]:
    text = root.get("version")
    if text is None:
        return (1, 0)
    supported = ", ".join(f"{major}.{minor}" for major, minor in SUPPORTED_VERSIONS)
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text, re.ASCII)
    if match is None:
        raise diag.error(
            f"version {text!r} is not of the form 'x.y' (supported: {supported})",
            line_of(root),
            "<robot>",
        )
    version = (int(match.group(1)), int(match.group(2)))
    if version not in SUPPORTED_VERSIONS:
        raise diag.error(
            f"unsupported URDF version {text!r} (supported: {supported})", line_of(root), "<robot>"
        )
    return version


# -- attributes ------------------------------------------------------------------------------


def _required_name(
    element: etree._Element, ctx: _Context, owner: str | None, empty_ok: bool = False
) -> str:
    """The ``name`` attribute, which must be written; an empty (or blank) name is an error,
    or where ``empty_ok`` (robots and joints: urdfdom loads them) a warning."""
    value = element.get("name")
    if value is None:
        raise ctx.error(f"<{element.tag}> requires 'name'", element, owner)
    if not value.strip():
        if not empty_ok:
            raise ctx.error(f"<{element.tag}> has an empty 'name'", element, owner)
        ctx.diag.warn(f"<{element.tag}> has an empty 'name'", line_of(element), owner)
    return value


def _required(element: etree._Element, attribute: str, ctx: _Context, owner: str) -> str:
    value = element.get(attribute)
    if value is None:
        raise ctx.error(f"<{element.tag}> requires '{attribute}'", element, owner)
    return value


def _number(
    text: str, attribute: str, element: etree._Element, ctx: _Context, owner: str, allow_inf: bool
) -> float:
    """``text`` (one number of ``attribute``) as a float; errors quote the whole attribute."""
    token = text.strip()
    if _NUMBER.fullmatch(token) is None:
        hint = " (unexpanded xacro?)" if "$" in token else ""
        shown = element.get(attribute, text)
        raise ctx.error(
            f"<{element.tag}> {attribute}={shown!r} is not a number{hint}", element, owner
        )
    value = float(token)
    if not math.isfinite(value):
        if math.isnan(value):
            raise ctx.error(f"<{element.tag}> {attribute} is NaN", element, owner)
        if not allow_inf:
            shown = element.get(attribute, text)
            raise ctx.error(f"<{element.tag}> {attribute}={shown!r} must be finite", element, owner)
    return value


def _float(
    element: etree._Element,
    attribute: str,
    ctx: _Context,
    owner: str,
    default: float | None,
    allow_inf: bool = False,
) -> float | None:
    """An optional number attribute; ``default`` where it is absent."""
    text = element.get(attribute)
    if text is None:
        return default
    return _number(text, attribute, element, ctx, owner, allow_inf)


def _float_or(
    element: etree._Element,
    attribute: str,
    ctx: _Context,
    owner: str,
    default: float,
    allow_inf: bool = False,
) -> float:
    value = _float(element, attribute, ctx, owner, default, allow_inf)
    assert value is not None
    return value


def _required_float(
    element: etree._Element, attribute: str, ctx: _Context, owner: str, allow_inf: bool = False
) -> float:
    text = _required(element, attribute, ctx, owner)
    return _number(text, attribute, element, ctx, owner, allow_inf)


def _vector(
    element: etree._Element,
    attribute: str,
    size: int,
    ctx: _Context,
    owner: str,
    default: tuple[float, ...],
) -> list[float]:
    """A whitespace-separated vector of ``size`` finite numbers; ``default`` where absent."""
    text = element.get(attribute)
    if text is None:
        return list(default)
    parts = text.split()
    if len(parts) != size:
        raise ctx.error(
            f"<{element.tag}> {attribute}={text!r} must have {size} numbers, got {len(parts)}",
            element,
            owner,
        )
    return [_number(p, attribute, element, ctx, owner, False) for p in parts]


def _children_by_tag(
    element: etree._Element, ctx: _Context, owner: str
) -> dict[str, etree._Element]:
    """The first child element of each tag; a repeated tag is ignored with a warning."""
    first: dict[str, etree._Element] = {}
    for child in element:
        tag: object = child.tag
        if not isinstance(tag, str):
            continue
        if tag in first:
            ctx.diag.warn(
                f"several <{tag}> elements; only the first (line {line_of(first[tag])}) is used",
                line_of(child),
                owner,
            )
        else:
            first[tag] = child
    return first


# -- the joint -------------------------------------------------------------------------------


def _parse_joint(element: etree._Element, ctx: _Context) -> Joint:
    name = _required_name(element, ctx, None, empty_ok=True)
    owner = f"joint {name!r}"
    joint_type = _required(element, "type", ctx, owner).strip()
    if joint_type not in URDF_JOINT_TYPES:
        raise ctx.error(
            f"unknown joint type {joint_type!r} (expected one of {', '.join(URDF_JOINT_TYPES)})",
            element,
            owner,
        )
    parts = _children_by_tag(element, ctx, owner)
    parent = _link_reference(element, parts.get("parent"), "parent", ctx, owner)
    child = _link_reference(element, parts.get("child"), "child", ctx, owner)
    origin = _parse_origin(parts.get("origin"), ctx, owner)
    axis = _parse_axis(parts.get("axis"), joint_type, ctx, owner)
    limit = _parse_limit(element, parts.get("limit"), joint_type, ctx, owner)
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
        safety_controller=_optional(safety_element, _parse_safety, ctx, owner),
        calibration=_optional(parts.get("calibration"), _parse_calibration, ctx, owner),
        mimic=_optional(parts.get("mimic"), _parse_mimic, ctx, owner),
        line=line_of(element),
    )
    if safety_element is not None:
        _check_soft_limits(joint, safety_element, ctx, owner)
    return joint


def _optional(
    element: etree._Element | None,
    parse: Callable[[etree._Element, _Context, str], _Parsed],
    ctx: _Context,
    owner: str,
) -> _Parsed | None:
    """``parse(element)`` for an optional element; None where it is absent."""
    return None if element is None else parse(element, ctx, owner)


def _link_reference(
    element: etree._Element, found: etree._Element | None, tag: str, ctx: _Context, owner: str
) -> str:
    """The ``link`` named by the joint's ``<parent>`` or ``<child>`` element ``found``."""
    if found is None:
        raise ctx.error(f"requires a <{tag}> element", element, owner)
    link = found.get("link")
    if link is None or not link.strip():
        what = "requires 'link'" if link is None else "has an empty 'link'"
        raise ctx.error(f"<{tag}> {what}", found, owner)
    return link


def _parse_origin(element: etree._Element | None, ctx: _Context, owner: str) -> Array:
    """Pose (4, 4) of the joint frame in the parent link frame; identity where absent."""
    if element is None:
        return np.eye(4)
    xyz = _vector(element, "xyz", 3, ctx, owner, (0.0, 0.0, 0.0))
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
            quat = _vector(element, "quat_xyzw", 4, ctx, owner, (0.0, 0.0, 0.0, 1.0))
            unit_quat, norm = unit_and_norm(quat)
            if unit_quat is None:
                raise ctx.error("<origin> quat_xyzw is zero, not a rotation", element, owner)
            if abs(norm - 1.0) > UNIT_TOLERANCE:
                ctx.diag.warn(
                    f"<origin> quat_xyzw has norm {norm:g}; normalised", line_of(element), owner
                )
            return pose_matrix(xyz, quaternion_to_matrix(unit_quat))
    rpy = _vector(element, "rpy", 3, ctx, owner, (0.0, 0.0, 0.0))
    return xyz_rpy_to_matrix(xyz, rpy)


def _parse_axis(
    element: etree._Element | None, joint_type: str, ctx: _Context, owner: str
) -> Array:
    """Unit axis in the joint frame; (1, 0, 0) where absent."""
    default = np.array([1.0, 0.0, 0.0])
    if element is None:
        return default
    if joint_type not in AXIS_TYPES:
        return default  # unused; urdfdom reads but never checks it
    _required(element, "xyz", ctx, owner)  # urdfdom: an <axis> without xyz is 0 0 0
    axis = _vector(element, "xyz", 3, ctx, owner, (1.0, 0.0, 0.0))
    unit_axis, norm = unit_and_norm(axis)
    if unit_axis is None:
        if joint_type in AXIS_TYPES:
            raise ctx.error(
                f"<axis> xyz is zero; a {joint_type} joint needs a direction", element, owner
            )
        return default
    if abs(norm - 1.0) > UNIT_TOLERANCE:
        ctx.diag.warn(
            f"<axis> xyz={element.get('xyz')!r} is not a unit vector (norm {norm:g}); normalised",
            line_of(element),
            owner,
        )
    return unit_axis


def _parse_limit(
    joint_element: etree._Element,
    element: etree._Element | None,
    joint_type: str,
    ctx: _Context,
    owner: str,
) -> Limit | None:
    """``<limit>`` (``element``, None where absent) under the rules of the file's version."""
    if element is None:
        if joint_type in LIMITED_TYPES:
            raise ctx.error(
                f"a {joint_type} joint requires a <limit> element", joint_element, owner
            )
        return None
    strict = ctx.version >= (1, 2)
    limited = joint_type in LIMITED_TYPES
    line = line_of(element)
    if strict:
        effort = _float_or(element, "effort", ctx, owner, math.inf, allow_inf=True)
        velocity = _float_or(element, "velocity", ctx, owner, math.inf, allow_inf=True)
        for attribute, value in (("effort", effort), ("velocity", velocity)):
            if value < 0.0:
                raise ctx.error(
                    f"<limit> {attribute} must not be negative, got {value:g}", element, owner
                )
        if limited:
            for attribute in ("lower", "upper"):
                _required(element, attribute, ctx, owner)
    else:
        effort = _required_float(element, "effort", ctx, owner, allow_inf=True)
        velocity = _required_float(element, "velocity", ctx, owner, allow_inf=True)
    lower = _float_or(element, "lower", ctx, owner, 0.0, allow_inf=True)
    upper = _float_or(element, "upper", ctx, owner, 0.0, allow_inf=True)
    has_range = element.get("lower") is not None or element.get("upper") is not None
    extras: dict[str, float | None] = {}
    for attribute in ("acceleration", "deceleration", "jerk"):
        if strict:
            extra = _float(element, attribute, ctx, owner, None, allow_inf=True)
            if extra is not None and extra < 0.0:
                raise ctx.error(
                    f"<limit> {attribute} must not be negative, got {extra:g}", element, owner
                )
            extras[attribute] = extra
        elif element.get(attribute) is not None:
            ctx.diag.warn(f"<limit> {attribute} needs URDF version 1.2; ignored", line, owner)
    if limited:
        if upper < lower:
            if strict:
                raise ctx.error(f"<limit> upper {upper:g} is below lower {lower:g}", element, owner)
            ctx.diag.warn(
                f"<limit> lower {lower:g} is above upper {upper:g}; the joint is not clamped",
                line,
                owner,
            )
        elif not has_range:
            ctx.diag.warn(
                "<limit> gives neither lower nor upper; the joint is not clamped", line, owner
            )
    return Limit(
        effort=effort,
        velocity=velocity,
        lower=lower,
        upper=upper,
        acceleration=extras.get("acceleration"),
        deceleration=extras.get("deceleration"),
        jerk=extras.get("jerk"),
        has_position_range=has_range,
    )


def _parse_dynamics(element: etree._Element, ctx: _Context, owner: str) -> Dynamics:
    return Dynamics(
        damping=_float_or(element, "damping", ctx, owner, 0.0),
        friction=_float_or(element, "friction", ctx, owner, 0.0),
    )


def _parse_calibration(element: etree._Element, ctx: _Context, owner: str) -> Calibration:
    return Calibration(
        rising=_float(element, "rising", ctx, owner, None),
        falling=_float(element, "falling", ctx, owner, None),
    )


def _parse_mimic(element: etree._Element, ctx: _Context, owner: str) -> Mimic:
    leader = _required(element, "joint", ctx, owner)  # empty: names no joint (a warning)
    return Mimic(
        joint=leader,
        multiplier=_float_or(element, "multiplier", ctx, owner, 1.0),
        offset=_float_or(element, "offset", ctx, owner, 0.0),
        line=line_of(element),
    )


def _parse_safety(element: etree._Element, ctx: _Context, owner: str) -> SafetyController:
    has_soft_range = (
        element.get("soft_lower_limit") is not None or element.get("soft_upper_limit") is not None
    )
    return SafetyController(
        k_velocity=_required_float(element, "k_velocity", ctx, owner, allow_inf=True),
        k_position=_float_or(element, "k_position", ctx, owner, 0.0, allow_inf=True),
        soft_lower_limit=_float_or(element, "soft_lower_limit", ctx, owner, 0.0, allow_inf=True),
        soft_upper_limit=_float_or(element, "soft_upper_limit", ctx, owner, 0.0, allow_inf=True),
        has_soft_range=has_soft_range,
    )


def _check_soft_limits(joint: Joint, element: etree._Element, ctx: _Context, owner: str) -> None:
    """Warn where a safety controller's soft range is empty or leaves the hard range."""
    sc = joint.safety_controller
    hard = joint.hard_limits()
    if sc is None or hard is None:
        return
    line = line_of(element)
    if not sc.has_soft_range:
        ctx.diag.warn(
            "<safety_controller> gives neither soft_lower_limit nor soft_upper_limit; "
            "soft clamping uses the hard limits",
            line,
            owner,
        )
    elif sc.soft_lower_limit > sc.soft_upper_limit:
        ctx.diag.warn(
            f"<safety_controller> soft_lower_limit {sc.soft_lower_limit:g} is above "
            f"soft_upper_limit {sc.soft_upper_limit:g}; soft clamping uses the hard "
            "limits",
            line,
            owner,
        )
    elif sc.soft_lower_limit < hard[0] or sc.soft_upper_limit > hard[1]:
        ctx.diag.warn(
            f"<safety_controller> soft limits [{sc.soft_lower_limit:g}, "
            f"{sc.soft_upper_limit:g}] lie outside the hard limits [{hard[0]:g}, "
            f"{hard[1]:g}]",
            line,
            owner,
        )
