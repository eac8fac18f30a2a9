"""Chosen frames, each composed relative to its nearest chosen ancestor: a second view of the
variable vector the node keeps (the remote output, ``node_core.remote_output``).

``frame_chains`` compiles once per model and choice: for each chosen link C, its parent P (the
nearest chosen link above it, else the root link) and the joints between them. With the
layout's folded frames (``Layout``: every link hangs at a constant pose from the child frame of
the nearest moving joint above it, or from the root), the pose of C in P is

    T_P_C = inv(T_fP_P) @ (T_frame_parent[j1] @ P_j1(v)) @ ... @ (T_frame_parent[jn] @ P_jn(v))
            @ T_fC_C

over the moving joints j1..jn from P's anchor frame fP down to C's anchor frame fC, where
P_j(v) is the joint's own parent->child transform (``joint_transforms``: origin, motion, child
offset). Constants are folded into one matrix before each joint and one after the chain. A
chain without moving joints is a constant: a static frame.

``FrameChains.poses`` composes every dynamic chain at once from a variable vector: the
joints' transforms in one call, then one stacked (K, 4, 4) product per chain position (the
longest chain's length), padded with identities. Poses come out as the node's rows:
translation x y z (metres), quaternion x y z w.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from ..model.elements import Joint
from ..transforms import inverse_pose, matrices_to_quaternions, quaternions_to_matrices
from .joint_transforms import JointTransforms, PosePlan, poses_of
from .layout import Layout


@dataclass(frozen=True)
class Chain:
    """Chosen link ``child`` under ``parent`` (its nearest chosen ancestor, else the root),
    through ``joints`` (names, parent to child; fixed ones too)."""

    parent: str
    child: str
    joints: tuple[str, ...]


def nearest_chosen_ancestors(layout: Layout, chosen: Sequence[str]) -> list[Chain]:
    """The ``Chain`` of each of ``chosen`` (link names of ``layout``'s robot, in their order;
    the root left out: it has no parent). KeyError for a name that is no link."""
    robot = layout.robot
    parent_joint: dict[str, Joint] = {joint.child: joint for joint in robot.joints.values()}
    wanted = set(chosen)
    chains = []
    for link in chosen:
        if link not in robot.links:
            raise KeyError(link)
        if link == robot.root:
            continue
        joints: list[str] = []
        above = link
        while above != robot.root:
            joint = parent_joint[above]
            joints.append(joint.name)
            above = joint.parent
            if above in wanted:
                break
        chains.append(Chain(above, link, tuple(reversed(joints))))
    return chains


class FrameChains:
    """The chains of chosen links of one model, compiled for composing (module docstring).

    ``static``: the chains without moving joints, with ``static_poses`` (S, 7);
    ``dynamic``: the others, composed by ``poses``. ``dynamic_joints`` (K, L) holds the moving
    joint indices of each dynamic chain (padded with the moving-joint count ``M``), which
    ``ready`` reads.
    """

    def __init__(self, layout: Layout, transforms: JointTransforms, chains: Sequence[Chain]):
        link_index = {name: k for k, name in enumerate(layout.link_names)}
        static: list[tuple[Chain, Array]] = []
        dynamic: list[tuple[Chain, list[int], list[Array], Array]] = []
        for chain in chains:
            parent, child = link_index[chain.parent], link_index[chain.child]
            T_parent_frame = inverse_pose(layout.T_frame_link[parent])
            joints = _moving_between(layout, layout.link_frame[parent], layout.link_frame[child])
            if not joints:
                static.append((chain, T_parent_frame @ layout.T_frame_link[child]))
                continue
            before = [layout.T_frame_parent[j] for j in joints]
            before[0] = T_parent_frame @ before[0]
            dynamic.append((chain, joints, before, layout.T_frame_link[child]))
        self.static = [chain for chain, _ in static]
        self.static_poses = _rows(np.array([pose for _, pose in static]).reshape(-1, 4, 4))
        self.dynamic = [chain for chain, *_ in dynamic]
        count = len(layout.moving_joints)
        length = max((len(joints) for _, joints, _, _ in dynamic), default=0)
        self.dynamic_joints: IndexArray = np.full((len(dynamic), length), count, dtype=np.intp)
        self._before = np.tile(np.eye(4), (len(dynamic), length, 1, 1))
        for k, (_, joints, before, _) in enumerate(dynamic):
            self.dynamic_joints[k, : len(joints)] = joints
            self._before[k, : len(joints)] = before
        self._after = np.array([after for *_, after in dynamic]).reshape(-1, 4, 4)
        used = np.unique(self.dynamic_joints[self.dynamic_joints < count])
        #: The transforms of the joints the chains use, in one call; their rows by position
        #: (the padding reads the identity row after them).
        self._plan: PosePlan = transforms.plan(used)
        row_of = np.full(count + 1, used.size, dtype=np.intp)
        row_of[used] = np.arange(used.size)
        self._rows = row_of[self.dynamic_joints]

    def ready(self, published: BoolArray) -> BoolArray:
        """(K,) True for each dynamic chain whose moving joints all have ``published`` (M,)
        True (values the node has published on /tf)."""
        padded = np.append(published, True)
        ready: BoolArray = np.logical_and.reduce(padded[self.dynamic_joints], axis=1)
        return ready

    def poses(self, values: Array) -> Array:
        """(K, 7) poses of the dynamic chains at the variable vector ``values``: translation
        x y z (metres), quaternion x y z w, each child in its chain's parent."""
        count = len(self.dynamic)
        if not count:
            return np.empty((0, 7))
        joint_poses = poses_of(self._plan, values)
        matrices = np.tile(np.eye(4), (len(joint_poses) + 1, 1, 1))
        matrices[:-1, :3, :3] = quaternions_to_matrices(joint_poses[:, 3:])
        matrices[:-1, :3, 3] = joint_poses[:, :3]
        composed = self._before[:, 0] @ matrices[self._rows[:, 0]]
        for position in range(1, self._rows.shape[1]):
            composed = composed @ self._before[:, position] @ matrices[self._rows[:, position]]
        return _rows(composed @ self._after)


def _moving_between(layout: Layout, top: int, bottom: int) -> list[int]:
    """The moving joints from frame ``top`` down to its descendant frame ``bottom``, top
    first (frame f > 0 is the child frame of moving joint f - 1)."""
    joints = []
    frame = int(bottom)
    while frame != top:
        joints.append(frame - 1)
        frame = int(layout.parent_frame[frame - 1])
    return joints[::-1]


def _rows(poses: Array) -> Array:
    """Poses (n, 4, 4) as rows (n, 7): translation, quaternion x y z w."""
    rows = np.empty((len(poses), 7))
    rows[:, :3] = poses[:, :3, 3]
    if len(poses):
        rows[:, 3:] = matrices_to_quaternions(poses[:, :3, :3])
    return rows
