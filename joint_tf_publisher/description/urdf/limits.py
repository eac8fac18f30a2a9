"""URDF ``<limit>`` and ``<safety_controller>``: the rules of each URDF version (1.2 is strict
where 1.0 and 1.1 follow urdfdom's defaults) and the warnings where a range cannot clamp."""

from __future__ import annotations

import math

from lxml import etree

from ...model.elements import Joint, Limit, SafetyController
from ..xmlio import line_of
from .context import Context, float_or, optional_float, required_float, required_text

#: Joint types that need a ``<limit>`` and are clamped to its range.
LIMITED_TYPES = ("revolute", "prismatic")


def parse_limit(
    joint_element: etree._Element,
    element: etree._Element | None,
    joint_type: str,
    ctx: Context,
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
        effort = float_or(element, "effort", ctx, owner, math.inf, allow_inf=True)
        velocity = float_or(element, "velocity", ctx, owner, math.inf, allow_inf=True)
        for attribute, value in (("effort", effort), ("velocity", velocity)):
            if value < 0.0:
                raise ctx.error(
                    f"<limit> {attribute} must not be negative, got {value:g}", element, owner
                )
        if limited:
            for attribute in ("lower", "upper"):
                required_text(element, attribute, ctx, owner)
    else:
        effort = required_float(element, "effort", ctx, owner, allow_inf=True)
        velocity = required_float(element, "velocity", ctx, owner, allow_inf=True)
    lower = float_or(element, "lower", ctx, owner, 0.0, allow_inf=True)
    upper = float_or(element, "upper", ctx, owner, 0.0, allow_inf=True)
    has_range = element.get("lower") is not None or element.get("upper") is not None
    extras: dict[str, float | None] = {}
    for attribute in ("acceleration", "deceleration", "jerk"):
        if strict:
            extra = optional_float(element, attribute, ctx, owner, None, allow_inf=True)
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


def parse_safety(element: etree._Element, ctx: Context, owner: str) -> SafetyController:
    has_soft_range = (
        element.get("soft_lower_limit") is not None or element.get("soft_upper_limit") is not None
    )
    return SafetyController(
        k_velocity=required_float(element, "k_velocity", ctx, owner, allow_inf=True),
        k_position=float_or(element, "k_position", ctx, owner, 0.0, allow_inf=True),
        soft_lower_limit=float_or(element, "soft_lower_limit", ctx, owner, 0.0, allow_inf=True),
        soft_upper_limit=float_or(element, "soft_upper_limit", ctx, owner, 0.0, allow_inf=True),
        has_soft_range=has_soft_range,
    )


def check_soft_limits(joint: Joint, element: etree._Element, ctx: Context, owner: str) -> None:
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
