"""``zeros.<joint>`` parameters against a model: the values of joints never received.

joint_state_publisher's ``zeros`` give a joint the value it has until one arrives (a caster,
a sensor mount, any passive joint without a driver). Here they are the start of the node's
joint vector: what ``publish_default_positions`` publishes for a joint never received, and
the leader value its mimic followers start from. Each is checked against the model first:
a moving joint that is no mimic follower, one value per JointState variable of its type
(``<joint>``, or ``<joint>/x`` ... in that order), finite, inside the hard ``<limit>``
(quaternions must not be zero; they are normalised). No rclpy here.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence

from ..kinematics import JointPositions, Kinematics
from ..model import ClampMode
from ..model.joint_types import JOINT_TYPES
from .parameters import ZEROS_PREFIX, ParameterRejected

#: The limits zeros are checked against: a value outside them is refused, not clamped.
CHECKED_LIMITS = ClampMode.HARD


def start_positions(
    kin: Kinematics, zeros: Iterable[tuple[str, tuple[float, ...]]], clamp: ClampMode
) -> JointPositions:
    """A fresh joint vector with ``zeros`` (joint name, values) written, mimic followers
    computed from them, clamped into the ``clamp`` limits, nothing marked received.

    ParameterRejected naming ``zeros.<joint>`` for a value the model does not accept.

    The values are checked all at once (one joint-state plan, not one per joint: a
    humanoid's node declares some 60 zeros, each a change that comes here); only where that
    finds a bad value is each checked alone (``check_zero``), to name the first.
    """
    given = list(zeros)
    names: list[str] = []
    values: list[float] = []
    for joint_name, joint_values in given:
        names += _checked_length(kin, joint_name, joint_values)
        values += joint_values
    checked = kin.apply(kin.new_positions(), names, values, CHECKED_LIMITS, keep_plan=False)
    if checked.rejected or checked.clamped:
        for joint_name, joint_values in given:
            check_zero(kin, joint_name, joint_values)
    positions = kin.new_positions()
    kin.apply(positions, names, values, clamp=clamp, keep_plan=False)
    positions.received[:] = False
    return positions


def _checked_length(kin: Kinematics, joint_name: str, joint_values: Sequence[float]) -> list[str]:
    """The JointState names of ``joint_name``'s values; ParameterRejected naming
    ``zeros.<joint>`` unless ``joint_values`` has one value per name."""
    variables = _variable_names(kin, joint_name)
    if len(joint_values) != len(variables):
        raise ParameterRejected(
            f"{ZEROS_PREFIX + joint_name} must give {len(variables)} value(s) "
            f"({', '.join(variables)}), got {len(joint_values)}"
        )
    return variables


def check_zero(kin: Kinematics, joint_name: str, joint_values: Sequence[float]) -> list[str]:
    """The JointState names of ``joint_name``'s values, once ``joint_values`` are checked
    (see the module docstring); ParameterRejected naming ``zeros.<joint>`` otherwise."""
    variables = _checked_length(kin, joint_name, joint_values)
    parameter = ZEROS_PREFIX + joint_name
    # One joint's names: a shape no message has, whose plan must not hold a cache entry
    # per joint for as long as the node runs (about 0.4 MB for a humanoid).
    update = kin.apply(
        kin.new_positions(), variables, joint_values, clamp=CHECKED_LIMITS, keep_plan=False
    )
    if update.rejected:
        raise ParameterRejected(
            f"{parameter} must be finite (and within +-1e100; a quaternion not zero), "
            f"got {list(joint_values)}"
        )
    if joint_name in update.clamped:
        limits = kin.robot.joints[joint_name].variable_limits(CHECKED_LIMITS)
        raise ParameterRejected(
            f"{parameter} = {list(joint_values)} is outside the joint's limits "
            f"{[list(limit) if limit else None for limit in limits]}"
        )
    return variables


def declared_zeros(kin: Kinematics) -> dict[str, float | list[float]]:
    """Per joint that takes a zero (moving, no mimic follower): its value where none is given,
    as its ``zeros.<joint>`` parameter holds it (a float, or a list for a multi-value joint):
    zero (identity quaternions) clamped into its hard limits."""
    layout = kin.layout
    start = start_positions(kin, (), CHECKED_LIMITS).values.tolist()
    followers = {follower.joint for follower in layout.followers}
    zeros: dict[str, float | list[float]] = {}
    for i, joint in enumerate(layout.moving_joints):
        if i not in followers:
            slot, size = int(layout.slot[i]), int(layout.size[i])
            zeros[joint.name] = start[slot] if size == 1 else start[slot : slot + size]
    return zeros


def _variable_names(kin: Kinematics, joint_name: str) -> list[str]:
    """The JointState names of ``joint_name``'s values; ParameterRejected if it takes no
    zero (not a moving joint, or a mimic follower)."""
    parameter = ZEROS_PREFIX + joint_name
    joint = kin.robot.joints.get(joint_name)
    if joint is None:
        raise ParameterRejected(f"{parameter}: the robot has no joint {joint_name!r}")
    kind = JOINT_TYPES[joint.joint_type]
    if kind.size == 0:
        raise ParameterRejected(f"{parameter}: joint {joint_name!r} is fixed")
    layout = kin.layout
    index = layout.moving_index[joint_name]
    for follower in layout.followers:
        if follower.joint == index:
            leader = layout.moving_joints[follower.leader].name
            raise ParameterRejected(
                f"{parameter}: joint {joint_name!r} follows {leader!r} (mimic): give "
                f"{ZEROS_PREFIX}{leader} instead"
            )
    return kind.variable_names(joint_name)
