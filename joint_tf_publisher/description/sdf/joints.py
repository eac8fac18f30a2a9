"""SDFormat ``<joint>``: type, frame, axes (per version), limits, mimic and screw pitch.

``Joint.origin`` is the joint frame in the parent link frame, ``Joint.child_offset`` the child
link in the joint frame, so ``T_parent_child(q) = origin @ motion(q) @ child_offset``. Axes are
stored in the joint frame: up to 1.4 they are written in the model frame (of the joint's own,
possibly nested, model), in 1.5 and 1.6 in the joint frame unless ``<use_parent_model_frame>``,
from 1.7 in the frame named by ``<xyz expressed_in>`` (the joint frame by default).
"""

from __future__ import annotations

import math

import numpy as np
from lxml import etree
from numpy.typing import NDArray

from ...model.elements import Dynamics, Joint, Limit, Mimic
from ...model.joint_types import TWO_AXIS_TYPES
from ...transforms import unit_and_norm
from .context import WORLD, Context, line
from .poses import PoseGraph, pose_in

Array = NDArray[np.float64]

#: SDFormat joint types read (SDFormat has no planar or floating joint).
SDF_JOINT_TYPES = (
    "fixed",
    "revolute",
    "continuous",
    "prismatic",
    "screw",
    "gearbox",
    "revolute2",
    "universal",
    "ball",
)

#: Joint types that move along or about ``<axis>`` (and ``<axis2>`` for the two-axis ones).
_AXIS_TYPES = ("revolute", "continuous", "prismatic", "screw", "gearbox", "revolute2", "universal")

#: Limits at or beyond this magnitude mean "unlimited" (the pre-1.10 default is +-1e16).
UNLIMITED = 1e16

#: Cosine above which two axes count as parallel.
PARALLEL_COS = 1.0 - 1e-6


def build_joint(ctx: Context, graph: PoseGraph, element: etree._Element) -> tuple[Joint, Array]:
    """One ``<joint>`` as a model.Joint, and its frame X_M_J in the model frame."""
    name = element.get("name", "").strip()
    what = f"joint {name!r}"
    joint_type = element.get("type", "").strip()
    if joint_type not in SDF_JOINT_TYPES:
        raise ctx.error(
            f"unknown joint type {joint_type!r}; SDFormat types: {', '.join(SDF_JOINT_TYPES)}",
            element,
            what,
        )
    parent = ctx.required_text(element, "parent", what)
    child = ctx.required_text(element, "child", what)
    X_M_J = graph.in_model(name, element, what)
    # A joint naming another frame (a <frame>, a joint, a model) connects the links they are
    # attached to, as libsdformat's frame graph resolves them.
    if parent != WORLD:
        parent = _attached_link(ctx, graph, parent, element.find("parent"), what)
    child = _attached_link(ctx, graph, child, element.find("child"), what)
    X_M_parent = graph.in_model(parent, element.find("parent"), what)
    X_M_child = graph.in_model(child, element.find("child"), what)
    origin = pose_in(X_M_parent, X_M_J)
    child_offset = pose_in(X_M_J, X_M_child)
    if not (np.all(np.isfinite(origin)) and np.all(np.isfinite(child_offset))):
        raise ctx.error(
            "the joint frame relative to its links is not finite (poses too large)", element, what
        )
    joint = Joint(
        name=name,
        joint_type=joint_type,
        parent=parent,
        child=child,
        origin=origin,
        child_offset=child_offset,
        line=line(element),
    )
    if joint_type in _AXIS_TYPES:
        axis_element = element.find("axis")
        joint.axis, joint.limit, joint.dynamics = _read_axis(ctx, graph, element, "axis", X_M_J)
        if axis_element is not None:
            joint.mimic = _read_mimic(ctx, axis_element, what)
        if joint_type in TWO_AXIS_TYPES or joint_type == "gearbox":
            joint.axis2, joint.limit2, _ = _read_axis(ctx, graph, element, "axis2", X_M_J)
            axis2_element = element.find("axis2")
            if axis2_element is not None and axis2_element.find("mimic") is not None:
                raise ctx.error(
                    "<mimic> under <axis2> is not supported (a joint follows "
                    "one leader with one value)",
                    axis2_element.find("mimic"),
                    what,
                )
        if joint_type in TWO_AXIS_TYPES:
            if joint.mimic is not None:
                raise ctx.error(
                    f"<mimic> on a {joint_type} joint is not supported",
                    element.find("axis/mimic"),
                    what,
                )
            _check_two_axes(ctx, joint, element)
        if joint_type == "revolute" and _unlimited(joint.limit):
            joint.joint_type = "continuous"
        if joint_type == "screw":
            joint.screw_pitch = _screw_pitch(ctx, element, what)
    return joint, X_M_J


def _attached_link(
    ctx: Context, graph: PoseGraph, frame: str, element: etree._Element | None, what: str
) -> str:
    """The link that carries ``frame`` (``PoseGraph.attached_link``); ModelError if none does
    (a static nested model without links)."""
    link = graph.attached_link(frame, element, what)
    if not link:
        raise ctx.error(
            f"{frame!r} is fixed to a static model without links; a joint needs a link",
            element,
            what,
        )
    return link


def _read_axis(
    ctx: Context, graph: PoseGraph, joint_element: etree._Element, tag: str, X_M_J: Array
) -> tuple[Array, Limit, Dynamics | None]:
    """``<axis>`` or ``<axis2>``: the unit axis in the joint frame, its limit and dynamics."""
    what = f"joint {joint_element.get('name')!r}"
    element = joint_element.find(tag)
    axis = np.array([0.0, 0.0, 1.0])
    limit = _read_limit(ctx, None, what)
    if element is None:
        return axis, limit, None
    xyz = element.find("xyz")
    if xyz is not None:
        written = np.array(ctx.numbers(xyz, 3, what), dtype=np.float64)
        unit, norm = unit_and_norm(written)
        if unit is None or norm < 1e-12:
            raise ctx.error(f"<{tag}><xyz> is zero", xyz, what)
        if abs(norm - 1.0) > 1e-6:
            ctx.warn(f"<{tag}><xyz> {written.tolist()} is not a unit vector; normalised", xyz, what)
        axis = unit
        frame = _axis_frame(ctx, joint_element, element, xyz, what)
        if frame:
            R_M_E = graph.in_model(frame, xyz, what)[:3, :3]
            axis = X_M_J[:3, :3].T @ R_M_E @ axis
    limit = _read_limit(ctx, element.find("limit"), what, tag)
    dynamics = None
    dyn = element.find("dynamics")
    if dyn is not None:
        dynamics = Dynamics(
            damping=ctx.number(dyn, "damping", 0.0, what),
            friction=ctx.number(dyn, "friction", 0.0, what),
            spring_reference=ctx.number(dyn, "spring_reference", 0.0, what),
            spring_stiffness=ctx.number(dyn, "spring_stiffness", 0.0, what),
        )
    return axis, limit, dynamics


def _axis_frame(
    ctx: Context,
    joint_element: etree._Element,
    axis_element: etree._Element,
    xyz: etree._Element,
    what: str,
) -> str:
    """The frame an axis is written in ("": the joint frame): the joint's model frame up to
    1.4 and in 1.5/1.6 with ``<use_parent_model_frame>``, from 1.7 ``expressed_in``."""
    version = ctx.version(xyz)
    if version < (1, 5) or (
        version < (1, 7) and ctx.flag(axis_element, "use_parent_model_frame", what)
    ):
        return ctx.scope_frame(joint_element)
    if version < (1, 7):
        return ""
    return xyz.get("expressed_in", "").strip()


def _read_limit(
    ctx: Context, element: etree._Element | None, what: str, axis_tag: str = "axis"
) -> Limit:
    """``<limit>`` of ``<axis>`` or ``<axis2>``: +-1e16 or beyond is unlimited (inf); a negative
    effort or velocity (not enforced) becomes inf. Defaults are the spec's: unlimited. Absent
    bounds, or lower above upper, leave that axis unclamped (``Joint.variable_limits``)."""

    def value(tag: str, default: float) -> float:
        if element is None:
            return default
        return ctx.number(element, tag, default, what, finite=False)

    lower, upper = value("lower", -math.inf), value("upper", math.inf)
    effort, velocity = value("effort", math.inf), value("velocity", math.inf)
    lower = -math.inf if lower <= -UNLIMITED else lower
    upper = math.inf if upper >= UNLIMITED else upper
    effort = math.inf if effort < 0 else effort
    velocity = math.inf if velocity < 0 else velocity
    if element is not None and lower > upper:
        unclamped = "the joint is" if axis_tag == "axis" else "its second axis is"
        ctx.warn(
            f"<{axis_tag}><limit> lower {lower} is above upper {upper}; {unclamped} not clamped",
            element,
            what,
        )
    return Limit(
        effort=effort,
        velocity=velocity,
        lower=lower,
        upper=upper,
        has_position_range=math.isfinite(lower) or math.isfinite(upper),
    )


def _unlimited(limit: Limit | None) -> bool:
    return limit is None or (math.isinf(limit.lower) and math.isinf(limit.upper))


def _read_mimic(ctx: Context, axis_element: etree._Element, what: str) -> Mimic | None:
    """``<axis><mimic joint axis>`` (1.11).

    follower = multiplier * (leader - reference) + offset, stored as a Mimic with offset
    ``offset - multiplier * reference``.
    """
    element = axis_element.find("mimic")
    if element is None:
        return None
    if ctx.version(element) < (1, 11):
        ctx.warn("<mimic> needs SDFormat 1.11 or later; ignored", element, what)
        return None
    leader = element.get("joint", "").strip()
    if not leader:
        raise ctx.error("<mimic> needs a 'joint'", element, what)
    leader_axis = element.get("axis", "axis").strip()
    if leader_axis != "axis":
        raise ctx.error(
            f"<mimic axis={leader_axis!r}>: only a leader's first axis ('axis') is supported",
            element,
            what,
        )
    multiplier = ctx.number(element, "multiplier", 1.0, what)
    offset = ctx.number(element, "offset", 0.0, what)
    reference = ctx.number(element, "reference", 0.0, what)
    return Mimic(
        joint=leader,
        multiplier=multiplier,
        offset=offset - multiplier * reference,
        line=line(element),
    )


def _check_two_axes(ctx: Context, joint: Joint, element: etree._Element) -> None:
    """Warn of a degenerate two-axis joint, which libsdformat reads without error: no
    ``<axis2>`` (its second axis is then (0, 0, 1)) or ``<axis2>`` parallel to ``<axis>`` (both
    values turn about one line); and of a universal joint whose axes are not orthogonal."""
    assert joint.axis2 is not None
    what = f"joint {joint.name!r}"
    axis2_element = element.find("axis2")
    cosine = abs(float(joint.axis @ joint.axis2))
    parallel = "parallel to <axis>" if cosine > PARALLEL_COS else ""
    if axis2_element is None:
        ctx.warn(
            f"{joint.joint_type} joint without <axis2>: degenerate, its second axis is "
            f"(0, 0, 1){' ' + parallel if parallel else ''}",
            element,
            what,
        )
    elif parallel:
        ctx.warn(
            "<axis2> is parallel to <axis>: degenerate, both values turn about one line",
            axis2_element,
            what,
        )
    elif joint.joint_type == "universal" and cosine > 1e-6:
        ctx.warn("universal joint axes are not orthogonal (used as given)", element, what)


def _screw_pitch(ctx: Context, element: etree._Element, what: str) -> float:
    """Metres of travel per radian, positive right-handed, from the file's pitch.

    ``<screw_thread_pitch>`` (1.10+) is metres per revolution, right-handed: p / (2 pi).
    ``<thread_pitch>`` (all versions) is radians per metre, positive LEFT-handed; libsdformat
    converts it to -2 pi / thread_pitch metres per revolution, so -1 / thread_pitch here.
    With neither, libsdformat's default of 1 metre per revolution applies.
    """
    new = element.find("screw_thread_pitch")
    if new is not None:
        if ctx.version(new) < (1, 10):
            ctx.warn("<screw_thread_pitch> is SDFormat 1.10+; read anyway", new, what)
        return ctx.numbers(new, 1, what)[0] / (2.0 * math.pi)
    old = element.find("thread_pitch")
    if old is not None:
        thread_pitch = ctx.numbers(old, 1, what)[0]
        if thread_pitch == 0.0 or not math.isfinite(1.0 / thread_pitch):
            raise ctx.error(
                f"<thread_pitch> {thread_pitch!r} (radians per metre) gives no finite pitch",
                old,
                what,
            )
        return -1.0 / thread_pitch
    return 1.0 / (2.0 * math.pi)
