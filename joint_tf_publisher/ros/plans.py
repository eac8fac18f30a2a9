"""Publish plans: what one tuple of joint-state names publishes, worked out once.

A ``PublishPlan`` belongs to one robot model under one set of settings and one tuple of names
(a JointState's ``name``, or a MultiDOFJointState's ``joint_names``). It owns the moving-joint
indices the rate limiter keys on (the joints named, plus their mimic followers, as the
kinematics reads the names), the indices published (those not excluded) and the byte layout
of their TFMessage, and the hot path from a JointState's values to those poses.
``PlanCache`` keeps
one per name tuple, found by identity first: ``cdr.JointStateReader`` hands out the same tuple
object for every message with the same name block.

No rclpy here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..kinematics import HotPath, Kinematics
from ..model.joint_types import JOINT_TYPES
from .cdr import TFMessageLayout

IndexArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]
#: Plans (and layouts of other index sets) kept per model; beyond, the cache starts afresh.
MAX_PLANS = 64


@dataclass(frozen=True)
class PublishPlan:
    """What messages with one tuple of names publish (see the module docstring).

    ``limited``: moving-joint indices, sorted. ``published``: the subset this node publishes,
    sorted, and ``layout`` its TFMessage (None when nothing is published). ``unknown``: names
    that are no moving joint's variable; ``first_value_only``: bare names of multi-value joints
    (as Gazebo's bridge publishes them), which set their first value only; ``ambiguous``: bare
    names several nested models' joints have, with those joints (ignored).
    """

    names: tuple[str, ...]
    limited: IndexArray
    published: IndexArray
    layout: TFMessageLayout | None
    unknown: tuple[str, ...]
    first_value_only: tuple[str, ...]
    ambiguous: tuple[tuple[str, tuple[str, ...]], ...]
    #: A JointState's values to the poses of ``published`` in one call, for the common
    #: message (``kinematics.HotPath``); None for MultiDOFJointStates, plans that publish
    #: nothing and names without a fast path.
    hot: HotPath | None = None


class NameReading(NamedTuple):
    """How one tuple of names reads (``PublishPlan`` has the same fields)."""

    limited: IndexArray
    unknown: tuple[str, ...]
    first_value_only: tuple[str, ...]
    ambiguous: tuple[tuple[str, tuple[str, ...]], ...]


class JointIndex:
    """Where names point among one model's moving joints, read as the kinematics reads them."""

    def __init__(self, kin: Kinematics) -> None:
        self.kin = kin
        #: Names a MultiDOFJointState sets (joints whose type takes a transform) -> index.
        self.multi_dof_joint = {
            joint.name: i
            for i, joint in enumerate(kin.moving_joints)
            if JOINT_TYPES[joint.joint_type].from_transform is not None
        }

    def joint_state(self, names: tuple[str, ...]) -> NameReading:
        """The joints a JointState with ``names`` moves (sorted; mimic followers included),
        its unknown names, its bare names of multi-value joints and its ambiguous names."""
        plan = self.kin.joint_state_plan(names)
        return NameReading(
            plan.moves,
            tuple(plan.unknown),
            tuple(plan.first_value_only),
            tuple(plan.ambiguous.items()),
        )

    def multi_dof(self, names: tuple[str, ...]) -> NameReading:
        """As ``joint_state`` for a MultiDOFJointState's joint names."""
        found = sorted({self.multi_dof_joint[n] for n in names if n in self.multi_dof_joint})
        unknown = tuple(name for name in names if name not in self.multi_dof_joint)
        return NameReading(np.array(found, dtype=np.intp), unknown, (), ())


class PlanCache:
    """One ``PublishPlan`` per name tuple for one model and settings, and TFMessage layouts
    for other index sets (published as they come: clamp changes, default positions)."""

    def __init__(
        self,
        joints: JointIndex,
        frames: Sequence[tuple[str, str]],
        publish_mask: BoolArray,
        clamp: str | None,
    ) -> None:
        self._joints = joints
        self._clamp = clamp
        self._frames = list(frames)
        self._publish_mask = publish_mask
        self._plans: dict[tuple[bool, tuple[str, ...]], PublishPlan] = {}
        self._layouts: dict[bytes, TFMessageLayout] = {}
        self._last: PublishPlan | None = None

    def joint_state(self, names: tuple[str, ...]) -> PublishPlan:
        """The plan for a JointState with ``names`` (variable names)."""
        last = self._last
        if last is not None and last.names is names:
            return last
        plan = self._plan(False, names)
        self._last = plan
        return plan

    def multi_dof(self, names: tuple[str, ...]) -> PublishPlan:
        """The plan for a MultiDOFJointState with ``names`` (joint names)."""
        return self._plan(True, names)

    def layout(self, indices: IndexArray) -> TFMessageLayout:
        """The TFMessage layout of moving joints ``indices`` (cached)."""
        key = indices.tobytes()
        layout = self._layouts.get(key)
        if layout is None:
            if len(self._layouts) >= MAX_PLANS:
                self._layouts.clear()
            layout = self._layouts[key] = TFMessageLayout(
                [self._frames[i] for i in indices.tolist()]
            )
        return layout

    def _plan(self, multi_dof: bool, names: tuple[str, ...]) -> PublishPlan:
        key = (multi_dof, names)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= MAX_PLANS:
                self._plans.clear()
            plan = self._plans[key] = self._make_plan(multi_dof, names)
        return plan

    def _make_plan(self, multi_dof: bool, names: tuple[str, ...]) -> PublishPlan:
        read = self._joints.multi_dof if multi_dof else self._joints.joint_state
        limited, unknown, first_value_only, ambiguous = read(names)
        published = limited[self._publish_mask[limited]]
        hot = None
        if not multi_dof and published.size:
            hot = self._joints.kin.hot_path(names, published, self._clamp)
        return PublishPlan(
            names,
            limited,
            published,
            self.layout(published) if published.size else None,
            unknown,
            first_value_only,
            ambiguous,
            hot,
        )
