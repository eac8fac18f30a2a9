"""Publish plans: what one tuple of joint-state names publishes, worked out once.

A ``PublishPlan`` belongs to one robot model under one set of settings and one tuple of names
(a JointState's ``name``, or a MultiDOFJointState's ``joint_names``). It owns the moving-joint
indices the rate limiter keys on (the joints named, plus their mimic followers), the indices
published (those not excluded) and the byte layout of their TFMessage. ``PlanCache`` keeps
one per name tuple, found by identity first: ``cdr.JointStateReader`` hands out the same tuple
object for every message with the same name block.

No rclpy here.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..model.elements import Joint
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
    that are no moving joint's variable; ``ignored_mimic``: names of mimic joints.
    """

    names: tuple[str, ...]
    limited: IndexArray
    published: IndexArray
    layout: TFMessageLayout | None
    unknown: tuple[str, ...]
    ignored_mimic: tuple[str, ...]


class JointIndex:
    """Where names point among one model's moving joints, and who follows whom (mimic)."""

    def __init__(self, moving_joints: Sequence[Joint]) -> None:
        index_of = {joint.name: i for i, joint in enumerate(moving_joints)}
        #: Variable name (joint name for 1-DOF joints, MoveIt's ``joint/x`` otherwise) -> index.
        self.variable_joint = {
            name: i for i, joint in enumerate(moving_joints) for name in joint.variable_names
        }
        #: Multi-DOF joint name (planar, floating, ball) -> index.
        self.multi_dof_joint = {
            joint.name: i
            for i, joint in enumerate(moving_joints)
            if joint.joint_type in ("planar", "floating", "ball")
        }
        self.is_mimic = [joint.mimic is not None for joint in moving_joints]
        #: Per moving joint: the joints that follow it through mimic chains of any depth.
        self.followers: list[list[int]] = [[] for _ in moving_joints]
        for i, joint in enumerate(moving_joints):
            seen = {i}
            leader = joint.mimic.joint if joint.mimic is not None else None
            while leader is not None and leader in index_of and index_of[leader] not in seen:
                k = index_of[leader]
                seen.add(k)
                self.followers[k].append(i)
                mimic = moving_joints[k].mimic
                leader = mimic.joint if mimic is not None else None


class PlanCache:
    """One ``PublishPlan`` per name tuple for one model and settings, and TFMessage layouts
    for other index sets (published as they come: clamp changes, default positions)."""

    def __init__(
        self,
        joints: JointIndex,
        frames: Sequence[tuple[str, str]],
        publish_mask: BoolArray,
    ) -> None:
        self._joints = joints
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
        joints = self._joints
        lookup = joints.multi_dof_joint if multi_dof else joints.variable_joint
        limited: set[int] = set()
        unknown: list[str] = []
        ignored_mimic: list[str] = []
        for name in names:
            index = lookup.get(name)
            if index is None:
                unknown.append(name)
            elif joints.is_mimic[index]:
                ignored_mimic.append(name)
            else:
                limited.add(index)
                limited.update(joints.followers[index])
        limited_array = np.array(sorted(limited), dtype=np.intp)
        published = limited_array[self._publish_mask[limited_array]]
        return PublishPlan(
            names,
            limited_array,
            published,
            self.layout(published) if published.size else None,
            tuple(unknown),
            tuple(ignored_mimic),
        )
