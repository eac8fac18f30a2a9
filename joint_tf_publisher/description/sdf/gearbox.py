"""SDFormat gearbox joints, turned into mimic couplings (README: "gearbox coupling")."""

from __future__ import annotations

import numpy as np
from lxml import etree
from numpy.typing import NDArray

from ...model.elements import Joint, Mimic
from ...transforms import inverse_pose
from .context import SCOPE_SEPARATOR, Context, line
from .joints import PARALLEL_COS
from .poses import PoseGraph

Array = NDArray[np.float64]

#: libsdformat's default ``<gearbox_reference_body>``: none given.
_UNSET = "__default__"


def resolve_gearboxes(
    ctx: Context,
    graph: PoseGraph,
    joints: list[Joint],
    joint_poses: dict[str, Array],
    elements: list[etree._Element],
) -> list[Joint]:
    """Turn each gearbox joint into a mimic coupling (README: "gearbox coupling").

    theta_1 = angle of the parent link P relative to the reference body R about ``<axis>``;
    theta_2 = angle of the child link C relative to R about ``<axis2>``; theta_2 =
    -ratio * theta_1. The leader is the revolute joint R -> P. If a revolute joint R -> C
    exists, it becomes a mimic of the leader and the gearbox joint itself is not published;
    otherwise the gearbox joint is re-hung from R (parent R, rotating C about ``<axis2>``)
    as a mimic of the leader. Signs follow from comparing the axes in the model frame.
    Without a reference body (libsdformat reads such a joint), the coupling is left out with a
    warning and the gearbox joint stays as written, a revolute joint of its own value.
    """
    by_element = {element.get("name", "").strip(): element for element in elements}
    result = list(joints)
    for gearbox in joints:
        if gearbox.joint_type != "gearbox":
            continue
        element = by_element[gearbox.name]
        what = f"joint {gearbox.name!r}"
        ref_element = element.find("gearbox_reference_body")
        reference = (ref_element.text or "").strip() if ref_element is not None else ""
        if reference.rpartition(SCOPE_SEPARATOR)[2] in ("", _UNSET):
            ctx.warn(
                "gearbox without <gearbox_reference_body>: the coupling is left out; the "
                "joint turns about <axis> by its own value",
                element,
                what,
            )
            continue
        ratio = ctx.number(element, "gearbox_ratio", 1.0, what)
        if gearbox.mimic is not None:
            raise ctx.error("a gearbox joint cannot also have a <mimic>", element, what)
        leader = _revolute_between(joints, reference, gearbox.parent, gearbox)
        if leader is None:
            raise ctx.error(
                f"gearbox needs a revolute joint from reference body "
                f"{reference!r} to parent link {gearbox.parent!r}",
                ref_element,
                what,
            )
        X_M_G = joint_poses[gearbox.name]
        assert gearbox.axis2 is not None
        sign1 = _axis_sign(
            ctx,
            X_M_G[:3, :3] @ gearbox.axis,
            joint_poses[leader.name][:3, :3] @ leader.axis,
            element,
            f"<axis> and joint {leader.name!r}'s axis",
            what,
        )
        follower = _revolute_between(joints, reference, gearbox.child, gearbox)
        if follower is not None:
            if follower.mimic is not None:
                raise ctx.error(
                    f"joint {follower.name!r} already has a <mimic>; it cannot "
                    "also follow this gearbox",
                    element,
                    what,
                )
            sign2 = _axis_sign(
                ctx,
                X_M_G[:3, :3] @ gearbox.axis2,
                joint_poses[follower.name][:3, :3] @ follower.axis,
                element,
                f"<axis2> and joint {follower.name!r}'s axis",
                what,
            )
            follower.mimic = Mimic(
                joint=leader.name, multiplier=-ratio * sign1 * sign2, line=line(element)
            )
            result.remove(gearbox)
            continue
        X_M_R = graph.in_model(reference, ref_element, what)
        gearbox.parent = reference
        gearbox.origin = inverse_pose(X_M_R) @ X_M_G
        gearbox.axis = gearbox.axis2
        gearbox.limit = gearbox.limit2
        gearbox.mimic = Mimic(joint=leader.name, multiplier=-ratio * sign1, line=line(element))
    return result


def _revolute_between(joints: list[Joint], parent: str, child: str, exclude: Joint) -> Joint | None:
    for joint in joints:
        if (
            joint is not exclude
            and joint.parent == parent
            and joint.child == child
            and joint.joint_type in ("revolute", "continuous")
        ):
            return joint
    return None


def _axis_sign(
    ctx: Context, axis_a: Array, axis_b: Array, element: etree._Element, pair: str, what: str
) -> float:
    cosine = float(axis_a @ axis_b)
    if abs(cosine) >= PARALLEL_COS:
        return 1.0 if cosine > 0 else -1.0
    ctx.warn(f"{pair} are not parallel; the coupling uses the joint's own angle", element, what)
    return 1.0
