"""Joint state resolution: JointState values into the stored variable vector.

``StateResolver.apply`` takes one message (names and values): it rejects unusable values
(non-finite, beyond +-``MAX_JOINT_VALUE``, zero quaternions: those joints keep their last good
value), normalises quaternions, writes the rest, clamps, and computes the mimic followers not
given in the message from their leaders. The rules, in order:

1. Every value given is clamped into its joint's range for the ``ClampMode`` (``HARD``:
   ``<limit>``; ``SOFT``: intersected with ``<safety_controller>``; ``NONE``: no clamping).
   This includes a value given for a mimic follower: the measurement wins, as in
   robot_state_publisher.
2. A follower not given follows its leader: whenever the leader moves, the follower becomes
   multiplier * leader + offset from the leader's final (clamped) value, and is not clamped
   to its own limits (as joint_state_publisher, MoveIt, pinocchio
   and robot_state_publisher do: a PR2 gripper follower with multiplier -1 and limits
   [0, 0.548] must reach -0.548).

Names map onto slots through ``joint_state_names`` (bare names of multi-value joints too).

A value given for a loop joint that takes one (``model.loops``: revolute, continuous,
prismatic) is stored apart, in ``JointPositions.loop_values``, by the same rules: an unusable
one is rejected (the last good value kept), and one beyond the loop joint's ``<limit>`` is
clamped into it (any clamp mode but ``NONE``; a loop joint has no safety controller). Its loop
is then closed with the joint at that value (``node_core.loops``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np

from ..arrays import Array, BoolArray, IndexArray, distinct
from ..model.clamp_mode import ClampMode
from .joint_state_names import FastApply, FollowerSteps, NamePlan, NamePlans
from .layout import MAX_JOINT_VALUE, Layout

#: Below this norm, a quaternion is scaled by its largest component before normalising (the
#: squares of tiny components would lose digits, or vanish).
_SMALL_NORM = 1e-100


@dataclass
class JointPositions:
    """The joint state of one consumer (the node keeps one), updated by ``apply``.

    ``values`` is the full variable vector (``Layout``: radians, metres, unit quaternions),
    always finite: the last good value of every variable. ``received[i]`` is True once a value
    for ``moving_joints[i]`` has arrived, directly or through its mimic leader.
    """

    values: Array
    received: BoolArray
    #: Per loop joint (``RobotModel.loop_joints`` order): its last good value given (rad or
    #: m), and whether one was given (the loop is then closed with the joint at that value).
    loop_values: Array = field(default_factory=lambda: np.zeros(0))
    loop_received: BoolArray = field(default_factory=lambda: np.zeros(0, dtype=bool))


@dataclass
class Update:
    """What one ``apply`` call did.

    ``moved``: indices into ``moving_joints`` whose transform may have changed (the joints
    given, the followers computed from a joint that moved, any joint whose stored value a clamp
    changed), sorted. ``clamped``: joints whose value was clamped. ``rejected``: joints given a
    non-finite value, one beyond +-MAX_JOINT_VALUE, or a zero quaternion (they keep their last
    good value, followers too), and followers whose computed value would lie beyond
    +-MAX_JOINT_VALUE. ``unknown``:
    names that are no moving joint's value and no loop joint's name (fixed tree joints
    included; ``joint_state_names``). ``first_value_only``:
    bare names of multi-value joints, which set only their first value (Gazebo's bridge; see
    ``joint_state_names``).
    """

    moved: IndexArray
    clamped: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    first_value_only: list[str] = field(default_factory=list)


class StateResolver:
    """JointState input for one layout: ``new_positions``, ``apply``, ``apply_multi_dof``."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self.plans = NamePlans(layout)
        self._names = [joint.name for joint in layout.moving_joints]

    def new_positions(self) -> JointPositions:
        """A fresh state: every joint at zero (identity quaternions), nothing received."""
        layout = self.layout
        loops = len(layout.robot.loop_joints)
        return JointPositions(
            layout.zero_values.copy(),
            np.zeros(len(layout.moving_joints), dtype=bool),
            np.zeros(loops),
            np.zeros(loops, dtype=bool),
        )

    def variable_values(self, positions: JointPositions) -> dict[str, float]:
        """Every moving joint's values by JointState name (followers included): rad, m, or
        quaternion components."""
        values = positions.values.tolist()
        return {name: values[slot] for name, (_, slot) in self.layout.variable_lookup.items()}

    def apply(
        self,
        positions: JointPositions,
        names: Sequence[str],
        values: Sequence[float] | Array,
        clamp: ClampMode = ClampMode.HARD,
        keep_plan: bool = True,
    ) -> Update:
        """Set values by JointState name; clamp; compute the followers not given.

        ``values`` in radians or metres (quaternion components unitless), one per name.
        Raises ValueError for lengths that differ. See ``Update``. ``keep_plan``: False for
        a one-off shape, whose plan is not cached (``NamePlans.once``).
        """
        given_values = np.asarray(values, dtype=np.float64)
        if given_values.shape != (len(names),):
            raise ValueError(f"{len(names)} names but values of shape {given_values.shape}")
        plan = self.plans.plan(tuple(names)) if keep_plan else self.plans.once(tuple(names))
        fast = plan.fast
        if fast is not None and apply_fast(fast, fast.bounds[clamp], positions, given_values):
            return Update(
                moved=plan.moves,
                unknown=list(plan.unknown),
                first_value_only=list(plan.first_value_only),
            )
        return self.apply_general(plan, positions, given_values, clamp)

    def apply_general(
        self, plan: NamePlan, positions: JointPositions, given_values: Array, clamp: ClampMode
    ) -> Update:
        """``apply`` by the general rules (module docstring), without trying the fast path:
        for a message the fast path declined. ``given_values``: the message's values, float64,
        one per name of ``plan``."""
        state = positions.values
        accepted = given_values[plan.message_index]
        slots, joints = plan.slots, plan.joints
        if plan.converted:
            accepted, slots, joints = _expand_converted(plan, given_values, accepted)
        moved = plan.joint_mask.copy()
        rejected: list[int] = []
        # One cheap check for the common case; max(|v|) neither overflows nor warns, and a
        # comparison with NaN is False.
        if not float(np.maximum.reduce(np.absolute(accepted), initial=0.0)) <= MAX_JOINT_VALUE:
            usable = np.absolute(accepted) <= MAX_JOINT_VALUE  # False for NaN and inf
            bad = distinct(joints[~usable])
            keep = (joints[:, None] != bad).all(axis=1)  # np.isin, without numpy.ma
            accepted, slots = accepted[keep], slots[keep]
            moved[bad] = False
            rejected.extend(bad.tolist())
        if plan.quaternion_joints.size:
            rejected += self._write_with_quaternions(
                state, plan, slots, accepted, moved, bool(rejected)
            )
        else:
            state[slots] = accepted
        received = positions.received
        received |= moved
        clamped: list[int] = []
        if clamp is not ClampMode.NONE:
            lower, upper = plan.ranges[clamp]
            if rejected and plan.given_follower_slots:
                lower, upper = _unclamp_rejected(self.layout, plan, rejected, lower, upper)
            clipped = np.minimum(np.maximum(state, lower), upper)  # np.clip, without its wrappers
            changed = clipped != state
            if changed.any():
                joints = distinct(self.layout.slot_joint[changed.nonzero()[0]])
                state[:] = clipped
                moved[joints] = True
                clamped = joints.tolist()
        followers = plan.followers
        if followers.joints:
            # A follower whose value would lie beyond +-MAX_JOINT_VALUE keeps its last good
            # value (never published non-finite) and is reported as rejected; its leader keeps
            # the value given.
            rejected += _update_followers(state, followers, moved, received)
        names_of = self._names
        update = Update(
            moved=moved.nonzero()[0],
            clamped=[names_of[i] for i in sorted(clamped)] if clamped else [],
            rejected=[names_of[i] for i in sorted(set(rejected))] if rejected else [],
            unknown=list(plan.unknown),
            first_value_only=list(plan.first_value_only),
        )
        if plan.loop_joints.size:
            self._write_loop_values(plan, positions, given_values, clamp, update)
        return update

    def _write_loop_values(
        self,
        plan: NamePlan,
        positions: JointPositions,
        given_values: Array,
        clamp: ClampMode,
        update: Update,
    ) -> None:
        """The values ``plan`` gives loop joints, stored (module docstring); the names of
        those clamped or rejected added to ``update``'s."""
        loops = self.layout.robot.loop_joints
        pairs = list(zip(plan.loop_message_index.tolist(), plan.loop_joints.tolist(), strict=True))
        # As a tree joint's: a loop joint named twice with one unusable value is rejected
        # whole (its last good value kept); else its last value in the message is taken.
        unusable = {
            k for position, k in pairs if not abs(given_values[position]) <= MAX_JOINT_VALUE
        }
        for k in sorted(unusable):
            update.rejected.append(loops[k].name)
        for position, k in pairs:
            loop, value = loops[k], float(given_values[position])
            if k in unusable:  # beyond +-MAX_JOINT_VALUE, NaN or inf
                continue
            if clamp is not ClampMode.NONE:
                lower = -np.inf if loop.lower is None else loop.lower
                upper = np.inf if loop.upper is None else loop.upper
                if not lower <= value <= upper:
                    value = min(max(value, lower), upper)
                    if loop.name not in update.clamped:  # named once, as a tree joint
                        update.clamped.append(loop.name)
            positions.loop_values[k] = value
            positions.loop_received[k] = True

    def _write_with_quaternions(
        self,
        state: Array,
        plan: NamePlan,
        slots: IndexArray,
        accepted: Array,
        moved: BoolArray,
        some_rejected: bool,
    ) -> list[int]:
        """Write ``accepted`` at ``slots`` and normalise the quaternions written, all at once.

        A joint whose quaternion is zero gets all its previous values back and is no longer
        ``moved``; those joints are returned (rejected). Components are at most
        ``MAX_JOINT_VALUE``, so squares do not overflow.
        """
        blocks, quaternion_slots, joints = (
            plan.quaternion_blocks,
            plan.quaternion_slots,
            plan.quaternion_joints,
        )
        if some_rejected:  # rejected joints are not written: leave them alone
            active = moved[joints]
            blocks, quaternion_slots, joints = (
                blocks[active],
                quaternion_slots[active],
                joints[active],
            )
        previous = state[blocks]  # the joints' values before this message
        state[slots] = accepted
        quaternions = state[quaternion_slots]
        norms = np.sqrt(np.add.reduce(quaternions * quaternions, axis=1))
        bad: list[int] = []
        if not (norms > _SMALL_NORM).all():  # tiny squares lose digits: scale first
            largest = np.maximum.reduce(np.absolute(quaternions), axis=1)
            zero = largest == 0.0
            if zero.any():
                bad = joints[zero].tolist()
                state[self.plans.slot_block[bad]] = previous[zero]
                moved[bad] = False
                keep = ~zero
                quaternions, largest = quaternions[keep], largest[keep]
                quaternion_slots = quaternion_slots[keep]
            quaternions /= largest[:, None]
            norms = np.sqrt(np.add.reduce(quaternions * quaternions, axis=1))
        quaternions /= norms[:, None]
        state[quaternion_slots] = quaternions
        return bad

    def apply_multi_dof(
        self,
        positions: JointPositions,
        joint_names: Sequence[str],
        translations: Any,
        quaternions: Any,
        clamp: ClampMode = ClampMode.HARD,
    ) -> Update:
        """Set multi-DOF joints from ``sensor_msgs/MultiDOFJointState`` transforms.

        ``translations`` (K, 3) in metres and ``quaternions`` (K, 4) x y z w give each joint's
        motion; the joint type's ``from_transform`` turns them into its values (planar: the
        translation along the plane basis and the angle about the normal; floating: the whole
        pose; ball: the rotation). Other names are listed in ``unknown``.
        """
        t = np.asarray(translations, dtype=np.float64).reshape(-1, 3)
        q = np.asarray(quaternions, dtype=np.float64).reshape(-1, 4)
        if not len(joint_names) == len(t) == len(q):
            raise ValueError(
                f"{len(joint_names)} joint names but {len(t)} translations and {len(q)} quaternions"
            )
        plan = self.plans.multi_dof(tuple(joint_names))
        update = self.apply(positions, plan.variable_names, plan.values(t, q), clamp)
        update.unknown = list(plan.unknown)
        return update


def apply_fast(
    fast: FastApply, bounds: tuple[Array, Array], positions: JointPositions, given_values: Array
) -> bool:
    """The common message in whole-vector calls (``FastApply``): True if applied; False,
    with ``positions`` untouched, if a value is unusable or a clamp has work to do (then
    ``StateResolver.apply`` takes it). ``given_values``: the message's values, float64."""
    candidate = positions.values.copy()
    candidate[fast.slots] = given_values[fast.message_index]
    lower, upper = bounds
    # fmax/fmin turn NaN into a bound, so NaN differs too; the bytes compare in one call.
    if np.fmin(np.fmax(candidate, lower), upper).tobytes() != candidate.tobytes():
        return False
    for level in fast.levels:
        candidate[level.slots] = candidate[level.leader_slots] * level.multipliers + level.offsets
    positions.values[:] = candidate
    positions.received |= fast.moves_mask
    return True


def _unclamp_rejected(
    layout: Layout, plan: NamePlan, rejected: list[int], lower: Array, upper: Array
) -> tuple[Array, Array]:
    """``lower`` and ``upper`` with +-inf for the given followers whose value was rejected:
    they keep their stored value, which may lie beyond their own limits if it was computed."""
    slots = [layout.slot[joint] for joint in rejected if layout.is_mimic[joint]]
    lower, upper = lower.copy(), upper.copy()
    lower[slots], upper[slots] = -np.inf, np.inf
    return lower, upper


def _expand_converted(
    plan: NamePlan, given_values: Array, accepted: Array
) -> tuple[Array, IndexArray, IndexArray]:
    """The values, slots and joints to write, with each bare name that sets several values
    expanded (NaN for an unusable bare value, so that its joint is rejected)."""
    values, slots, joints = [accepted], [plan.slots], [plan.joints]
    for name in plan.converted:
        value = given_values[name.message_index]
        if abs(value) <= MAX_JOINT_VALUE:
            values.append(name.convert(np.array([value]))[0])
        else:
            values.append(np.full(name.slots.size, np.nan))
        slots.append(name.slots)
        joints.append(np.full(name.slots.size, name.joint, dtype=np.intp))
    return np.concatenate(values), np.concatenate(slots), np.concatenate(joints)


def _update_followers(
    state: Array, followers: FollowerSteps, moved: BoolArray, received: BoolArray
) -> list[int]:
    """Compute the ``followers`` whose leader moved from the leader's stored value, in place.

    Such a follower moved too, and has been received once its leader has; the others keep
    their value (one given in an earlier message stays until the leader moves). Returns the
    followers whose value would lie beyond +-MAX_JOINT_VALUE (they keep their last value).
    """
    values = state.tolist()
    moved_list = moved.tolist()
    received_list = received.tolist()
    overflow: list[int] = []
    for slot, leader_slot, multiplier, offset, joint, leader in followers.steps:
        if not moved_list[leader]:
            continue
        value = multiplier * values[leader_slot] + offset
        if not abs(value) <= MAX_JOINT_VALUE:  # False for inf and NaN too
            overflow.append(joint)
            continue
        moved_list[joint] = True
        values[slot] = value
        if received_list[leader]:
            received_list[joint] = True
    # Only followers' entries changed: write those back (short lists convert faster).
    state[followers.slot_index] = [values[k] for k in followers.slots]
    moved[followers.joint_index] = [moved_list[j] for j in followers.joints]
    received[followers.joint_index] = [received_list[j] for j in followers.joints]
    return overflow
