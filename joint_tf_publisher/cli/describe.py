"""Text and JSON views of a robot for the command line: the tree (``check``) and poses (``fk``).

Numbers are printed in metres and radians. Poses are of link frames in the root link frame.
``check`` also lists the closed kinematic loops (docs/loops.md, "In check"): each loop joint,
the tree joints of the cycle it closes, whether the loop is planar, its mobility by the
Gruebler-Kutzbach criterion (``model.mobility``) and so how many of its values are to be given
(the others are passive, solved), with a warning where its own joints over-determine it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..model.elements import Joint, RobotModel
from ..model.loops import LoopJoint
from ..model.mobility import LoopCycle, loop_cycles
from ..transforms import matrix_to_quaternion, matrix_to_rpy

#: Joint types whose values are angles (radians); other one-value types move in metres.
ANGULAR_TYPES = frozenset(
    {"revolute", "continuous", "gearbox", "screw", "revolute2", "universal", "ball"}
)


def format_number(value: float) -> str:
    """A short decimal: at most 4 decimals, no trailing zeros, ``inf`` for infinities."""
    if np.isinf(value):
        return "inf" if value > 0 else "-inf"
    text = f"{value:.4f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def format_vector(values: NDArray[np.float64]) -> str:
    """A vector as space-separated ``format_number`` values."""
    return " ".join(format_number(float(v)) for v in values)


def joint_unit(joint: Joint) -> str:
    """``rad`` or ``m``: the unit of the joint's (first) value."""
    return "rad" if joint.joint_type in ANGULAR_TYPES else "m"


def joint_details(joint: Joint) -> list[str]:
    """Short facts about a joint, one per item: axis, limits, soft limits, mimic.

    Shared by ``check``'s tree and the graph's edge labels, so both describe joints alike.
    """
    details: list[str] = []
    if joint.joint_type not in ("fixed", "floating", "ball"):
        details.append(f"axis {format_vector(joint.axis)}")
        if joint.axis2 is not None and joint.joint_type in ("revolute2", "universal"):
            details.append(f"axis2 {format_vector(joint.axis2)}")
    unit = joint_unit(joint)
    hard = joint.hard_limits()
    if hard is not None:
        details.append(f"limits [{format_number(hard[0])}, {format_number(hard[1])}] {unit}")
    elif joint.limit is not None and joint.joint_type in ("revolute", "prismatic"):
        details.append("no position range: not clamped")
    if joint.joint_type in ("revolute2", "universal"):
        hard2 = joint.variable_limits("hard")[1]
        if hard2 is not None:
            details.append(f"limits2 [{format_number(hard2[0])}, {format_number(hard2[1])}] rad")
    soft = joint.soft_limits()
    if (
        soft is not None
        and joint.safety_controller is not None
        and (joint.safety_controller.has_soft_range)
    ):
        details.append(f"soft [{format_number(soft[0])}, {format_number(soft[1])}] {unit}")
    if joint.mimic is not None:
        mimic = joint.mimic
        details.append(
            f"mimic {mimic.joint} x {format_number(mimic.multiplier)}"
            f" + {format_number(mimic.offset)}"
        )
    return details


def child_joints(robot: RobotModel) -> dict[str, list[Joint]]:
    """The joints leaving each link (by parent link name), in file order."""
    children: dict[str, list[Joint]] = {name: [] for name in robot.links}
    for joint in robot.joints.values():
        children.setdefault(joint.parent, []).append(joint)
    return children


def tree_lines(robot: RobotModel, ascii_only: bool = False) -> list[str]:
    """The link tree from the root, one line per link: ``child  <- joint (type; details)``."""
    branch, last, pipe, blank = (
        ("|-- ", "`-- ", "|   ", "    ") if ascii_only else ("├── ", "└── ", "│   ", "    ")
    )
    children = child_joints(robot)
    lines = [robot.root]
    seen = {robot.root}
    # Depth-first, iterative (deep trees must not hit the recursion limit).
    stack: list[tuple[Joint, str, bool]] = [
        (joint, "", index == len(children[robot.root]) - 1)
        for index, joint in reversed(list(enumerate(children[robot.root])))
    ]
    while stack:
        joint, prefix, is_last = stack.pop()
        if joint.child in seen:
            continue
        seen.add(joint.child)
        facts = "; ".join([joint.joint_type, *joint_details(joint)])
        lines.append(
            f"{prefix}{last if is_last else branch}{joint.child}  <- {joint.name} ({facts})"
        )
        below = children.get(joint.child, [])
        next_prefix = prefix + (blank if is_last else pipe)
        stack.extend(
            (child, next_prefix, index == len(below) - 1)
            for index, child in reversed(list(enumerate(below)))
        )
    return lines


def model_counts(robot: RobotModel) -> dict[str, Any]:
    """Counts for ``check``: links, joints, joints by type, mimic, soft-limited, DOF."""
    joints = list(robot.joints.values())
    by_type = Counter(joint.joint_type for joint in joints)
    return {
        "links": len(robot.links),
        "joints": len(joints),
        "joints_by_type": {kind: by_type[kind] for kind in Joint.TYPES if by_type[kind]},
        "mimic": sum(joint.mimic is not None for joint in joints),
        "safety_limits": sum(joint.safety_controller is not None for joint in joints),
        "dof": sum(joint.num_dofs for joint in joints),
        "independent_dof": sum(joint.num_dofs for joint in joints if joint.mimic is None),
    }


def check_warnings(robot: RobotModel) -> list[str]:
    """``check``'s warnings: the description's, then one per over-determined loop."""
    return [*robot.warnings, *loop_warnings(robot)]


def check_report(robot: RobotModel, ascii_only: bool = False) -> str:
    """What ``check`` prints for a valid robot: name, tree, counts, loops and warnings."""
    counts = model_counts(robot)
    kinds = ", ".join(f"{n} {kind}" for kind, n in counts["joints_by_type"].items())
    lines = [
        f"robot {robot.name!r} from {robot.source}: valid",
        f"root link: {robot.root}",
        "",
        *tree_lines(robot, ascii_only),
        "",
        f"{counts['links']} links, {counts['joints']} joints" + (f" ({kinds})" if kinds else ""),
        f"{counts['mimic']} mimic, {counts['safety_limits']} with safety limits, "
        f"{counts['dof']} degrees of freedom ({counts['independent_dof']} independent)",
        *loop_lines(robot),
    ]
    warnings = check_warnings(robot)
    if warnings:
        lines.append(f"{len(warnings)} warning(s):")
        lines.extend(f"  warning: {text}" for text in warnings)
    else:
        lines.append("no warnings")
    return "\n".join(lines) + "\n"


# -- closed loops ------------------------------------------------------------------------------


def loop_details(loop: LoopJoint) -> list[str]:
    """Short facts about a loop joint, as ``describe.joint_details`` gives a tree joint's:
    its type, axis and limits. Shared by ``check`` and the graph's edge labels."""
    details = [loop.type.value]
    if loop.type.has_axis:
        details.append(f"axis {format_vector(loop.axis)}")
    if loop.lower is not None or loop.upper is not None:
        lower = format_number(loop.lower) if loop.lower is not None else "-inf"
        upper = format_number(loop.upper) if loop.upper is not None else "inf"
        details.append(f"limits [{lower}, {upper}]")
    return details


def over_determined_warning(cycle: LoopCycle) -> str:
    """The warning ``check`` gives for an over-determined loop."""
    loop = cycle.loop_joint
    return (
        f"{loop.where}: the loop it closes is over-determined by its own joints (mobility "
        f"{cycle.mobility}): it closes only where the geometry is exact; the passive joints "
        "are then a least-squares fit"
    )


def loop_warnings(robot: RobotModel) -> list[str]:
    """A warning per over-determined loop of ``robot``."""
    return [over_determined_warning(c) for c in loop_cycles(robot) if c.over_determined]


def loop_lines(robot: RobotModel) -> list[str]:
    """``check``'s section on the loops: nothing for a tree."""
    cycles = loop_cycles(robot)
    if not cycles:
        return []
    lines = [f"{len(cycles)} closed loop(s), each closed by a loop joint:"]
    for cycle in cycles:
        loop = cycle.loop_joint
        values = sum(robot.joints[name].num_dofs for name in cycle.tree_joints)
        kind = "planar" if cycle.planar else "spatial"
        lines += [
            f"  {loop.name} ({'; '.join(loop_details(loop))}): {loop.link1} -> {loop.link2}",
            f"    tree joints on the loop: {', '.join(cycle.tree_joints)}",
            f"    mobility {cycle.mobility} ({kind}): {_given(cycle, values)}",
        ]
        if loop.type.takes_value:
            lines.append(
                "    its own value may be given too (a joint state naming it): held as one of "
                "the values given, not on /tf"
            )
    return lines


def _given(cycle: LoopCycle, values: int) -> str:
    """How many of the values of the loop's tree joints are to be given, how many passive."""
    if cycle.mobility < 0:
        return "over-determined by its own joints"
    if cycle.mobility == 0:
        return "rigid: every value on it is passive (solved)"
    given = min(cycle.mobility, values)
    return (
        f"{given} of its tree joints' {values} values to be given (joint states), "
        f"{values - given} passive (solved)"
    )


def pose_record(T_root_link: NDArray[np.float64]) -> dict[str, list[float]]:
    """A pose as JSON-ready lists: xyz (m), rpy (rad, fixed axes), quaternion (x, y, z, w)."""
    return {
        "xyz": [float(v) for v in T_root_link[:3, 3]],
        "rpy": [float(v) for v in matrix_to_rpy(T_root_link[:3, :3])],
        "quaternion_xyzw": [float(v) for v in matrix_to_quaternion(T_root_link[:3, :3])],
    }


def pose_table(poses: Mapping[str, NDArray[np.float64]], root: str) -> str:
    """A fixed-width table of link poses in the ``root`` frame (xyz m, rpy rad, quaternion)."""
    width = max([len("link"), *(len(name) for name in poses)])
    columns = ("x", "y", "z", "roll", "pitch", "yaw", "qx", "qy", "qz", "qw")
    lines = [
        f"poses in frame {root!r}: xyz in m, rpy in rad (fixed axes), quaternion x y z w",
        f"{'link':<{width}} " + " ".join(f"{c:>8}" for c in columns),
    ]
    for name, pose in poses.items():
        record = pose_record(pose)
        values = record["xyz"] + record["rpy"] + record["quaternion_xyzw"]
        # round(...) + 0.0 prints -0.00001 as 0.0000, not -0.0000
        lines.append(f"{name:<{width}} " + " ".join(f"{round(v, 4) + 0.0:>8.4f}" for v in values))
    return "\n".join(lines) + "\n"
