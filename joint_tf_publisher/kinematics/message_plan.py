"""One JointState to the poses to publish: one plan per message shape, one call per message.

A message's shape is its tuple of names, the clamp mode and the set of joints published (the
moving joints not excluded). A ``MessagePlan`` is compiled once per shape
(``Kinematics.message_plans``) and holds everything a message of that shape needs: the joints
it moves (and their bytes, the key by value of the rate limiter's memo), those it publishes,
the names it does not know, reads as a first value only or cannot tell apart (a bare name of
several nested joints), the fast apply data (``joint_state_names.FastApply``) and the pose
plan of the published joints (``joint_transforms.PosePlan``). A
``sensor_msgs/MultiDOFJointState`` becomes a JointState of its joints' variable names first
(``joint_state_names.MultiDofPlan``), and then takes the same plan.

``MessagePlan.resolve`` is the one kinematics call per message. The common message (every
value usable and inside its clamp range) takes the fast path: whole-vector numpy calls, then
the published poses. Any other takes the general rules (``StateResolver.apply_general``) once:
the fast path is not tried again. Either way it returns what to publish (``Resolved``).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from ..model.clamp_mode import ClampMode
from .joint_state_names import NamePlan
from .joint_transforms import JointTransforms, PosePlan, poses_of
from .state import JointPositions, StateResolver, Update, apply_fast


class Resolved(NamedTuple):
    """What one message changed, to publish: the poses (n, 7) of moving joints ``joints``
    (rows of translation x y z in metres, quaternion x y z w), and the names of the joints
    whose value was clamped or rejected. ``joints_key`` is ``joints.tobytes()``."""

    joints: IndexArray
    joints_key: bytes
    poses: Array
    clamped: Sequence[str]
    rejected: Sequence[str]


def _published_after(
    update: Update,
    moves: IndexArray,
    published: IndexArray,
    publish_mask: BoolArray,
    received: BoolArray,
) -> IndexArray:
    """The joints to publish after ``update`` of a message that moves ``moves``, of which
    ``published`` are published: those, unless a value was rejected or a clamp moved other
    joints; then the joints that moved, are published (``publish_mask``) and were received."""
    moved = update.moved
    if update.rejected or len(moved) != len(moves):
        chosen: IndexArray = moved[publish_mask[moved] & received[moved]]
        return chosen
    return published


@dataclass(frozen=True)
class MessagePlan:
    """Every JointState with ``names`` under ``clamp``, publishing the joints of
    ``publish_mask`` (see the module docstring). Arrays are read-only."""

    names: tuple[str, ...]
    clamp: ClampMode
    #: Moving joints the message moves: those named and their mimic followers (sorted), and
    #: its bytes (the key by value of what callers remember about these joints).
    moves: IndexArray
    moves_key: bytes
    #: The subset of ``moves`` published, and its bytes (the key of its TFMessage layout).
    published: IndexArray
    published_key: bytes
    #: Names that are no moving joint's value; bare names of multi-value joints, which set
    #: their first value only (as Gazebo's bridge publishes them).
    unknown: tuple[str, ...]
    first_value_only: tuple[str, ...]
    #: Bare names several nested models' joints have, each with those joints (ignored).
    ambiguous: tuple[tuple[str, tuple[str, ...]], ...]
    publish_mask: BoolArray
    name_plan: NamePlan
    #: The fast path's per-slot (lower, upper) bounds under ``clamp`` (unused without one).
    fast_bounds: tuple[Array, Array]
    pose_plan: PosePlan
    resolver: StateResolver
    transforms: JointTransforms

    def resolve_fast(self, positions: JointPositions, values: Array) -> Array | None:
        """The common message (``FastApply``: nothing to clamp, reject or convert): ``values``
        applied to ``positions`` and the poses (n, 7) of the ``published`` joints; None, with
        ``positions`` untouched, for any other (``resolve`` takes it)."""
        fast = self.name_plan.fast
        if fast is None or not apply_fast(fast, self.fast_bounds, positions, values):
            return None
        return poses_of(self.pose_plan, positions.values)

    def resolve(self, positions: JointPositions, values: Array) -> Resolved:
        """Apply ``values`` (float64, one per name: radians or metres) to ``positions`` and
        return what to publish (``Resolved``)."""
        poses = self.resolve_fast(positions, values)
        if poses is not None:
            return Resolved(self.published, self.published_key, poses, (), ())
        applied = self._apply_general(positions, values)
        return applied._replace(poses=self.transforms.poses(positions.values, applied.joints))

    def apply(self, positions: JointPositions, values: Array) -> Resolved:
        """As ``resolve`` without computing the poses (``poses`` empty): for a robot with
        closed loops, whose poses follow once its passive joints are solved."""
        if self.apply_fast(positions, values):
            return Resolved(self.published, self.published_key, _NO_POSES, (), ())
        return self._apply_general(positions, values)

    def apply_fast(self, positions: JointPositions, values: Array) -> bool:
        """The common message (``FastApply``) applied to ``positions``, True; False, with
        ``positions`` untouched, for any other."""
        fast = self.name_plan.fast
        return fast is not None and apply_fast(fast, self.fast_bounds, positions, values)

    def _apply_general(self, positions: JointPositions, values: Array) -> Resolved:
        """``values`` applied by the general rules (clamping, rejection, conversion); the
        poses left empty."""
        update = self.resolver.apply_general(self.name_plan, positions, values, self.clamp)
        joints = _published_after(
            update, self.moves, self.published, self.publish_mask, positions.received
        )
        return Resolved(joints, joints.tobytes(), _NO_POSES, update.clamped, update.rejected)


_NO_POSES: Array = np.empty((0, 7))
_NO_BOUNDS: tuple[Array, Array] = (np.empty(0), np.empty(0))


def message_plan(
    resolver: StateResolver,
    transforms: JointTransforms,
    names: tuple[str, ...],
    clamp: ClampMode,
    publish_mask: BoolArray,
) -> MessagePlan:
    """The ``MessagePlan`` of messages with ``names`` under ``clamp``, publishing the moving
    joints where ``publish_mask`` (M,) is True."""
    name_plan = resolver.plans.plan(names)
    moves = name_plan.moves
    published = moves[publish_mask[moves]]
    published.flags.writeable = False
    return MessagePlan(
        names=names,
        clamp=clamp,
        moves=moves,
        moves_key=moves.tobytes(),
        published=published,
        published_key=published.tobytes(),
        unknown=tuple(name_plan.unknown),
        first_value_only=tuple(name_plan.first_value_only),
        ambiguous=tuple(name_plan.ambiguous.items()),
        publish_mask=publish_mask,
        name_plan=name_plan,
        fast_bounds=name_plan.fast.bounds[clamp] if name_plan.fast is not None else _NO_BOUNDS,
        pose_plan=transforms.plan(published),
        resolver=resolver,
        transforms=transforms,
    )
