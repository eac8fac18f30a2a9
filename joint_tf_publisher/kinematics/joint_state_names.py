"""How the names of one JointState map onto the variable vector: a plan, cached per tuple.

A name is, in this order:

- a variable name (``Layout.variable_lookup``): a one-value joint's own name, or MoveIt's
  ``<joint>/<variable>`` name of a value of a multi-value joint: it writes that slot;
- the bare name of a multi-value joint whose table entry has a ``BareName`` rule (Gazebo's
  ros_gz bridge publishes every joint under its bare name with its first axis's position): a
  two-axis joint's first value; a ball joint's rotation about x (its first rotation-vector
  component, see ``model.joint_types``). Listed in ``first_value_only``;
- the name of a nested model's joint inside its model (``elbow`` for ``arm::elbow``), as
  Gazebo's JointStatePublisher sends them (``Layout.nested_by_bare_name``): read as the
  scoped name, when exactly one nested joint has it; several: listed in ``ambiguous`` with
  the candidates, and ignored;
- the name of a loop joint that takes a value (``model.loops``: revolute, continuous,
  prismatic): its value is held and its loop closed with it (``loop_joints``; the message
  moves the tree joints on the loop's cycle, which are solved anew). Such a plan has no fast
  path;
- the name of a loop joint that takes no value (ball, fixed: a ball joint has no single
  position, a fixed one none): a joint of the description, ignored (not listed in
  ``unknown``); its loop is closed as without it;
- anything else (other names, fixed tree joints, bare names of planar and floating joints):
  listed in ``unknown``.

A value given for a mimic follower is used (robot_state_publisher's rule: the measurement
wins); the followers not given are computed from their leaders (``followers``).

A plan of one-value names (no bare name to convert, no quaternion written) also has a
``FastApply``: the common message (every value usable and inside its clamp range, nothing
stored outside its range) resolved in a few whole-vector numpy calls, with no Python loop
over joints. Anything else falls back to the general rules in ``state``.

A ``sensor_msgs/MultiDOFJointState`` takes the same way: its ``MultiDofPlan`` (cached per
tuple of joint names) names the JointState variables its transforms give (each planar,
floating or ball joint's ``variable_names``, in message order) and turns the transforms into
their values (the joint type's ``from_transform``); from there on it is a JointState.
"""

from __future__ import annotations

import functools
import math
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

import numpy as np

from ..arrays import Array, BoolArray, IndexArray, distinct
from ..bounded_cache import bounded_cache
from ..model.clamp_mode import ClampMode
from ..model.elements import Joint
from ..model.joint_types import JointType
from ..model.tree import tree_path
from .layout import CLAMPING, MAX_JOINT_VALUE, Follower, FollowerLevel, Layout, follower_levels


@dataclass(frozen=True)
class ConvertedName:
    """A bare name whose one value sets several values (``BareName.values``)."""

    message_index: int
    joint: int
    slots: IndexArray
    convert: Callable[[Array], Array]


@dataclass(frozen=True)
class FollowerSteps:
    """Mimic followers to compute, in dependency order, as plain tuples: a few followers cost
    less in a Python loop than in numpy calls."""

    #: Per follower: (slot, leader slot, multiplier, offset, joint, leader joint).
    steps: tuple[tuple[int, int, float, float, int, int], ...]
    slots: list[int]
    joints: list[int]
    #: The same as index arrays (numpy converts a list index on every use).
    slot_index: IndexArray
    joint_index: IndexArray


def follower_steps(followers: Iterable[Follower]) -> FollowerSteps:
    """The steps computing ``followers`` (given in dependency order)."""
    chosen = list(followers)
    return FollowerSteps(
        steps=tuple(
            (f.slot, f.leader_slot, f.multiplier, f.offset, f.joint, f.leader) for f in chosen
        ),
        slots=[f.slot for f in chosen],
        joints=[f.joint for f in chosen],
        slot_index=np.array([f.slot for f in chosen], dtype=np.intp),
        joint_index=np.array([f.joint for f in chosen], dtype=np.intp),
    )


#: Room left for rounding when a follower's bound is turned into its leader's: the fast path
#: checks no value after it is computed, so a leader's bound keeps every follower computed
#: from it within +-MAX_JOINT_VALUE.
_ROUNDING_ROOM = 1.0 - 1e-12


@dataclass(frozen=True)
class FastApply:
    """The common message of one plan in whole-vector numpy calls (see the module docstring).

    ``apply`` writes the values at ``message_index`` into ``slots`` of a copy of the stored
    vector; if the copy lies inside ``bounds[clamp]`` it needs no clamp and holds no unusable
    value, and the followers are computed level by level (``levels``); else the general path
    runs on the untouched vector. ``moves_mask`` (M,): the joints this message moves.
    """

    message_index: IndexArray
    slots: IndexArray
    #: Per clamp mode (``NONE`` included): (lower, upper) per slot: each given value's range
    #: within +-MAX_JOINT_VALUE, any stored value's too (a clamp mode that changed leaves
    #: values outside), and +-inf for the followers not given.
    bounds: dict[ClampMode, tuple[Array, Array]]
    levels: tuple[FollowerLevel, ...]
    moves_mask: BoolArray


_NO_INDEX: IndexArray = np.empty(0, dtype=np.intp)


@dataclass(frozen=True)
class NamePlan:
    """How the names of one JointState message map onto the variable vector."""

    message_index: IndexArray  # position in the message of each value written as given
    slots: IndexArray  # variable slot each of them writes
    joints: IndexArray  # moving joint of each
    joint_mask: BoolArray  # (M,) joints given by this message
    converted: tuple[ConvertedName, ...]
    quaternion_joints: IndexArray  # floating/ball joints whose quaternion is written, ...
    quaternion_slots: IndexArray  # ... (Q, 4) the slots of their quaternions ...
    quaternion_blocks: IndexArray  # ... and (Q, 7) all their slots (the last one repeated)
    #: Mimic followers not given: computed from their leaders.
    followers: FollowerSteps
    #: Per clamp mode, (lower, upper) per slot: every given value's range; +-inf for the
    #: followers computed from their leaders (never clamped).
    ranges: dict[ClampMode, tuple[Array, Array]]
    #: Slots of the mimic followers given in this message.
    given_follower_slots: list[int]
    #: Moving joints this message moves: those given and the followers of those (sorted).
    moves: IndexArray
    unknown: list[str]
    first_value_only: list[str]
    #: Bare names several nested joints have -> those joints' names (the names are ignored).
    ambiguous: dict[str, tuple[str, ...]]
    #: The fast path of this plan; None when it converts bare names or writes quaternions.
    fast: FastApply | None = None
    #: Position in the message of each loop joint's value, and that loop joint (its index in
    #: ``RobotModel.loop_joints``).
    loop_message_index: IndexArray = field(default_factory=lambda: _NO_INDEX)
    loop_joints: IndexArray = field(default_factory=lambda: _NO_INDEX)


@dataclass(frozen=True)
class MultiDofPlan:
    """How the transforms of every MultiDOFJointState with ``joint_names`` become JointState
    values: ``variable_names`` (each named joint that takes a transform: its
    ``variable_names``, in message order) and ``values``; ``unknown``: the names of no such
    joint (fixed or one-value joints, other names: ignored)."""

    joint_names: tuple[str, ...]
    variable_names: tuple[str, ...]
    unknown: tuple[str, ...]
    #: Per joint taking a transform: its message index, the joint and its type.
    transforms: tuple[tuple[int, Joint, JointType], ...]

    def values(self, translations: Array, quaternions: Array) -> Array:
        """The values (float64, one per ``variable_names``: metres, radians, quaternion
        components) of transforms (K, 3) in metres and (K, 4) x y z w, one per joint name.
        A transform with a component beyond +-MAX_JOINT_VALUE (or NaN) gives NaN values, which
        the JointState rules reject (the joint keeps its last good value)."""
        values: list[float] = []
        for index, joint, kind in self.transforms:
            translation, quaternion = translations[index], quaternions[index]
            if not (
                np.abs(translation).max() <= MAX_JOINT_VALUE  # False for NaN
                and np.abs(quaternion).max() <= MAX_JOINT_VALUE  # (products could overflow)
            ):
                values.extend([math.nan] * kind.size)
                continue
            assert kind.from_transform is not None  # chosen for it (multi_dof_plan)
            values.extend(kind.from_transform(joint, translation, quaternion).tolist())
        return np.array(values, dtype=np.float64)


def multi_dof_plan(layout: Layout, joint_names: tuple[str, ...]) -> MultiDofPlan:
    """The ``MultiDofPlan`` of MultiDOFJointStates with ``joint_names`` on ``layout``."""
    variable_names: list[str] = []
    unknown: list[str] = []
    transforms: list[tuple[int, Joint, JointType]] = []
    for position, name in enumerate(joint_names):
        index = layout.moving_index.get(name)
        kind = layout.joint_types[index] if index is not None else None
        if index is None or kind is None or kind.from_transform is None:
            unknown.append(name)
            continue
        joint = layout.moving_joints[index]
        variable_names.extend(joint.variable_names)
        transforms.append((position, joint, kind))
    return MultiDofPlan(joint_names, tuple(variable_names), tuple(unknown), tuple(transforms))


def _ranges(layout: Layout, given_followers: set[int]) -> dict[ClampMode, tuple[Array, Array]]:
    """Clamp ranges for a message giving ``given_followers``: each follower not given is
    never clamped (+-inf); every other slot has its own range."""
    computed = [f.slot for f in layout.followers if f.joint not in given_followers]
    ranges: dict[ClampMode, tuple[Array, Array]] = {}
    for mode in CLAMPING:
        lower, upper = (bound.copy() for bound in layout.ranges[mode])
        lower[computed], upper[computed] = -np.inf, np.inf
        ranges[mode] = (lower, upper)
    return ranges


def _moves(layout: Layout, given: BoolArray, cycles: Iterable[int] = ()) -> IndexArray:
    """The joints given and, transitively, the followers of those; and the moving joints
    ``cycles`` (those on the cycles of the loop joints given)."""
    moved = given.copy()
    moved[list(cycles)] = True
    for follower in layout.followers:  # leaders come first
        if moved[follower.leader]:
            moved[follower.joint] = True
    return np.flatnonzero(moved).astype(np.intp)


def _fast_apply(plan: NamePlan, layout: Layout) -> FastApply | None:
    """The fast path of ``plan`` (built without one), or None where it cannot have one:
    bare names to convert, quaternions written, or a slot named twice (every value given
    must be checked, not only the one written last)."""
    if plan.converted or plan.quaternion_joints.size or plan.loop_joints.size:
        return None
    if distinct(plan.slots).size != plan.slots.size:
        return None
    moves_mask = np.zeros(len(layout.moving_joints), dtype=bool)
    moves_mask[plan.moves] = True
    not_given = [f for f in layout.followers if not plan.joint_mask[f.joint]]
    # Followers computed by this plan (their leaders move), leaders first.
    computed = [f for f in not_given if moves_mask[f.joint]]
    leader_bound = _leader_bounds(computed)
    if leader_bound is None:
        return None
    levels = follower_levels(computed)
    free = [f.slot for f in not_given]  # never clamped: kept, or computed from a leader
    bounds: dict[ClampMode, tuple[Array, Array]] = {}
    for mode in ClampMode:
        if mode is ClampMode.NONE:
            lower = np.full(layout.num_values, -MAX_JOINT_VALUE)
            upper = np.full(layout.num_values, MAX_JOINT_VALUE)
        else:
            lower = np.maximum(plan.ranges[mode][0], -MAX_JOINT_VALUE)
            upper = np.minimum(plan.ranges[mode][1], MAX_JOINT_VALUE)
        lower[free], upper[free] = -np.inf, np.inf
        for slot, bound in leader_bound.items():
            if slot not in free:  # a computed leader is bounded through its own leader
                lower[slot], upper[slot] = max(lower[slot], -bound), min(upper[slot], bound)
        bounds[mode] = (lower, upper)
    return FastApply(plan.message_index, plan.slots, bounds, levels, moves_mask)


def _leader_bounds(computed: list[Follower]) -> dict[int, float] | None:
    """Per leader slot, the largest magnitude its value may have so that every follower in
    ``computed`` (leaders first) stays within +-MAX_JOINT_VALUE; None where a follower's
    offset alone goes beyond it (such a plan has no fast path)."""
    bound: dict[int, float] = {}  # slot -> largest magnitude (Python floats)
    for follower in reversed(computed):  # followers of followers first
        room = bound.get(follower.slot, MAX_JOINT_VALUE) - abs(follower.offset)
        if room < 0.0:
            return None
        if follower.multiplier != 0.0:
            leader = room / abs(follower.multiplier) * _ROUNDING_ROOM
            bound[follower.leader_slot] = min(bound.get(follower.leader_slot, leader), leader)
    return bound


class NamePlans:
    """The plans of one layout, made on first use and cached per tuple of names."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        #: The plan of a message with these names (``bounded_cache``).
        self.plan = bounded_cache(self._make_plan)
        #: The plan of a MultiDOFJointState with these joint names (``bounded_cache``).
        self.multi_dof = bounded_cache(functools.partial(multi_dof_plan, layout))
        block = layout.slot[:, None] + np.arange(7)
        #: (M, 7): each moving joint's slots, the last repeated up to 7 columns.
        self.slot_block = np.minimum(block, (layout.slot + layout.size - 1)[:, None])
        self._quaternion_start = dict(
            zip(layout.quaternion_joints, layout.quaternion_slots, strict=True)
        )
        #: Plans of messages that give no follower share these ranges.
        self._independent_ranges = _ranges(layout, set())
        robot = layout.robot
        tree = list(robot.joints.values())
        #: Loop joints that take a value, by name: their index and the moving joints on
        #: their loop's cycle (those a value given for them moves).
        self._loop_joints = {
            loop.name: (
                k,
                [
                    layout.moving_index[name]
                    for name in tree_path(tree, loop.link1, loop.link2)
                    if name in layout.moving_index
                ],
            )
            for k, loop in enumerate(robot.loop_joints)
            if loop.type.takes_value
        }
        #: Names of the loop joints that take no value (ball, fixed): ignored, not unknown.
        self._valueless_loop_joints = frozenset(
            loop.name for loop in robot.loop_joints if not loop.type.takes_value
        )

    def once(self, names: tuple[str, ...]) -> NamePlan:
        """The plan of ``names`` made afresh and not cached: for a one-off shape (a check of
        one ``zeros.<joint>`` value) that would otherwise hold a cache entry (about 10 kB for
        a humanoid's) for as long as the node runs."""
        return self._make_plan(names)

    def _make_plan(self, names: tuple[str, ...]) -> NamePlan:
        layout = self.layout
        message_index: list[int] = []
        slots: list[int] = []
        joints: list[int] = []
        converted: list[ConvertedName] = []
        quaternion_joints: list[int] = []
        unknown: list[str] = []
        first_value_only: list[str] = []
        ambiguous: dict[str, tuple[str, ...]] = {}
        loop_positions: list[int] = []
        loop_joints: list[int] = []
        cycles: list[int] = []
        for position, name in enumerate(names):
            found = layout.variable_lookup.get(name)
            if found is None:
                index = layout.moving_index.get(name)
                if index is None and name in layout.nested_by_bare_name:
                    candidates = layout.nested_by_bare_name[name]
                    if len(candidates) > 1:
                        ambiguous[name] = tuple(
                            sorted(layout.moving_joints[i].name for i in candidates)
                        )
                        continue
                    (index,) = candidates
                    found = layout.variable_lookup.get(layout.moving_joints[index].name)
            if found is None:
                bare = layout.joint_types[index].bare_name if index is not None else None
                if index is None and name in self._loop_joints:
                    loop, cycle = self._loop_joints[name]
                    loop_positions.append(position)
                    loop_joints.append(loop)
                    cycles += cycle
                    continue
                if index is None and name in self._valueless_loop_joints:
                    continue
                if index is None or bare is None:
                    unknown.append(name)
                    continue
                first_value_only.append(name)
                start = int(layout.slot[index])
                if bare.values is not None:
                    targets = np.array([start + k for k in bare.variables], dtype=np.intp)
                    converted.append(ConvertedName(position, index, targets, bare.values))
                    start_q = self._quaternion_start.get(index)
                    if start_q is not None and index not in quaternion_joints:
                        quaternion_joints.append(index)
                    continue
                found = (index, start + bare.variables[0])
            joint, slot = found
            message_index.append(position)
            slots.append(slot)
            joints.append(joint)
            start_q = self._quaternion_start.get(joint)
            if start_q is not None and start_q <= slot < start_q + 4:
                if joint not in quaternion_joints:
                    quaternion_joints.append(joint)
        joint_mask = np.zeros(len(layout.moving_joints), dtype=bool)
        joint_mask[joints] = True
        joint_mask[[c.joint for c in converted]] = True
        given_followers = {f.joint for f in layout.followers if joint_mask[f.joint]}
        starts = [self._quaternion_start[i] for i in quaternion_joints]
        plan = NamePlan(
            message_index=np.array(message_index, dtype=np.intp),
            slots=np.array(slots, dtype=np.intp),
            joints=np.array(joints, dtype=np.intp),
            joint_mask=joint_mask,
            converted=tuple(converted),
            quaternion_joints=np.array(quaternion_joints, dtype=np.intp),
            quaternion_slots=np.add.outer(np.array(starts, dtype=np.intp), np.arange(4)).reshape(
                -1, 4
            ),
            quaternion_blocks=self.slot_block[quaternion_joints],
            followers=follower_steps(f for f in layout.followers if f.joint not in given_followers),
            ranges=_ranges(layout, given_followers)
            if given_followers
            else self._independent_ranges,
            given_follower_slots=[f.slot for f in layout.followers if f.joint in given_followers],
            moves=_moves(layout, joint_mask, cycles),
            unknown=unknown,
            first_value_only=first_value_only,
            ambiguous=ambiguous,
            loop_message_index=np.array(loop_positions, dtype=np.intp),
            loop_joints=np.array(loop_joints, dtype=np.intp),
        )
        plan.moves.flags.writeable = False  # shared by every message of the shape: read-only
        return replace(plan, fast=_fast_apply(plan, layout))
