"""The compiled layout of a robot: tree order, fixed joints folded, frames, variable slots.

Built once from a validated ``RobotModel`` (``model.validate.check_model`` runs first, so a
model built by hand fails with the parsers' wording). It holds structure and constants only;
state resolution, joint transforms and FK compile their own bases from it.

Frames: frame 0 is the root link, frame i + 1 the child link of ``moving_joints[i]``. Fixed
joints are folded: every link hangs from a frame (its anchor) at a constant pose
``T_frame_link``; every moving joint's parent link sits at ``T_frame_parent`` in the frame its
parent link hangs from. Moving joints are sorted by depth (moving joints above them), parents
before children, each depth contiguous.

Variables: one vector (V,) of every moving joint's values, joint i's at ``slot[i]`` to
``slot[i] + size[i]``, in the order and units of its type's table entry
(``model.joint_types``): radians, metres, quaternion components (x, y, z, w).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from ..model.elements import Joint, RobotModel
from ..model.joint_types import JOINT_TYPES, JointType
from ..model.motion_forms import MotionForm
from ..model.validate import check_model

Array = NDArray[np.float64]
IndexArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]

#: Largest distance (m) a link may lie from the root by its origins alone (their translations
#: summed along its path): a model beyond it is refused, as its poses could overflow to inf.
MAX_REACH = 1e300
#: The limits a joint value can be clamped to (``None`` in their place: no clamping).
CLAMP_LIMITS = ("hard", "soft")
#: Largest magnitude of a joint value taken from input (rad, m, or quaternion component).
#: Beyond it a value is rejected like NaN: no real joint gets there, and products with it
#: could overflow a transform to inf.
MAX_JOINT_VALUE = 1e100


@dataclass(frozen=True)
class Follower:
    """A mimic follower (moving joint ``joint``): multiplier * value(leader) + offset."""

    joint: int
    slot: int
    leader: int
    leader_slot: int
    multiplier: float
    offset: float
    level: int  # 1 + the leader's level (an independent leader has level 0)


@dataclass(frozen=True)
class FormGroup:
    """The moving joints of one motion form: the rows of one product on the hot paths."""

    form: MotionForm
    joints: IndexArray  # (J,) moving joint indices, ascending
    slots: IndexArray  # (J, size) variable slots of each joint


def check_clamp(clamp: str | None) -> None:
    """ValueError unless ``clamp`` is None, "hard" or "soft"."""
    if clamp is not None and clamp not in CLAMP_LIMITS:
        raise ValueError(f"clamp must be one of (None, 'hard', 'soft'), got {clamp!r}")


def _translation_norm(pose: Array) -> float:
    """Length (m) of the translation of a pose (4, 4); inf if it overflows."""
    return math.hypot(*pose[:3, 3].tolist())


def _tree_order(robot: RobotModel) -> list[Joint]:
    """The joints depth first from the root, children in file order (parents first)."""
    children: dict[str, list[Joint]] = {name: [] for name in robot.links}
    for joint in robot.joints.values():
        children[joint.parent].append(joint)
    order: list[Joint] = []
    stack = list(reversed(children[robot.root]))
    while stack:
        joint = stack.pop()
        order.append(joint)
        stack.extend(reversed(children[joint.child]))
    return order


def _check_reach(robot: RobotModel, order: list[Joint]) -> None:
    """Refuse a model whose links can lie beyond ``MAX_REACH`` from the root (overflow).

    A link's bound is the sum of the origin and child-offset translations above it: motions
    rotate them or, for prismatic and screw joints, add their travel, bounded separately.
    """
    reach = {robot.root: 0.0}
    for joint in order:
        reach[joint.child] = reach[joint.parent] + _translation_norm(joint.origin)
        reach[joint.child] += _translation_norm(joint.child_offset)
        if not reach[joint.child] <= MAX_REACH:
            raise ModelError(
                f"link {joint.child!r} can lie up to {reach[joint.child]:.3g} m from the root "
                f"link, beyond {MAX_REACH:.0e} m: its poses could overflow",
                source=robot.source,
                line=joint.line,
                element=f"joint {joint.name!r}",
            )


class Layout:
    """A robot's structure compiled into index arrays and constant poses (module docstring).

    Read-only after construction. Public: ``robot``, ``moving_joints``, ``fixed_joints``,
    ``link_names``, ``variable_names`` and the arrays documented below.
    """

    def __init__(self, robot: RobotModel) -> None:
        check_model(robot)
        self.robot = robot
        order = _tree_order(robot)
        _check_reach(robot, order)
        self._fold_fixed_joints(order)
        self._lay_out_variables()
        self._order_followers()
        self._collect_limits()
        self._group_by_form()

    def _fold_fixed_joints(self, order: list[Joint]) -> None:
        """Moving joints by depth; each link's anchor frame and constant pose in it."""
        # Per link: (moving joint whose child frame it hangs from, or None; pose in that frame;
        # number of moving joints above it).
        anchor: dict[str, tuple[Joint | None, Array, int]] = {self.robot.root: (None, np.eye(4), 0)}
        parent_anchor: dict[str, tuple[Joint | None, Array, int]] = {}
        moving_in_order: list[Joint] = []
        self.fixed_joints: list[Joint] = []
        for joint in order:
            above, T_anchor_parent, depth = anchor[joint.parent]
            if joint.joint_type == "fixed":
                self.fixed_joints.append(joint)
                anchor[joint.child] = (above, T_anchor_parent @ joint.child_pose(), depth)
            else:
                moving_in_order.append(joint)
                parent_anchor[joint.name] = (above, T_anchor_parent, depth)
                anchor[joint.child] = (joint, np.eye(4), depth + 1)
        # A stable sort by depth keeps parents before children and makes each depth contiguous.
        self.moving_joints: list[Joint] = sorted(
            moving_in_order, key=lambda j: parent_anchor[j.name][2]
        )
        self.moving_index = {joint.name: i for i, joint in enumerate(self.moving_joints)}
        self.joint_types: list[JointType] = [JOINT_TYPES[j.joint_type] for j in self.moving_joints]

        def frame_of(joint: Joint | None) -> int:
            return 0 if joint is None else self.moving_index[joint.name] + 1

        count = len(self.moving_joints)
        #: (M,) frame of each moving joint's parent link.
        self.parent_frame = np.array(
            [frame_of(parent_anchor[j.name][0]) for j in self.moving_joints], dtype=np.intp
        )
        #: (M, 4, 4) pose of each moving joint's parent link in that frame.
        self.T_frame_parent = np.array(
            [parent_anchor[j.name][1] for j in self.moving_joints]
        ).reshape(count, 4, 4)
        self.link_names: list[str] = list(self.robot.links)
        #: (L,) anchor frame of each link (file order) and (L, 4, 4) its pose in that frame.
        self.link_frame = np.array(
            [frame_of(anchor[name][0]) for name in self.link_names], dtype=np.intp
        )
        self.T_frame_link = np.array([anchor[name][1] for name in self.link_names]).reshape(
            len(self.link_names), 4, 4
        )
        link_index = {name: k for k, name in enumerate(self.link_names)}
        #: (M + 1,) the link of each frame (frame 0: the root).
        self.frame_link = np.array(
            [link_index[self.robot.root]] + [link_index[j.child] for j in self.moving_joints],
            dtype=np.intp,
        )
        frame_links = set(self.frame_link.tolist())
        #: Links that hang from a frame through fixed joints only (all links but the frames).
        self.fixed_links = [k for k in range(len(self.link_names)) if k not in frame_links]
        #: (M + 1,) depth of each frame (the root: 0).
        self.frame_depth = np.zeros(count + 1, dtype=np.intp)
        for i in range(count):
            self.frame_depth[i + 1] = self.frame_depth[self.parent_frame[i]] + 1

    def _lay_out_variables(self) -> None:
        """The variable vector: slots, names, identity values."""
        sizes = [kind.size for kind in self.joint_types]
        #: (M,) first slot and number of values of each moving joint.
        self.slot = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)[:-1]
        self.size = np.array(sizes, dtype=np.intp)
        self.num_values = int(sum(sizes))
        #: (V,) moving joint of each slot.
        self.slot_joint = np.repeat(np.arange(len(sizes), dtype=np.intp), sizes)
        #: JointState name -> (moving joint, slot), for every value of every moving joint.
        self.variable_lookup: dict[str, tuple[int, int]] = {}
        for i, joint in enumerate(self.moving_joints):
            for k, name in enumerate(joint.variable_names):
                self.variable_lookup[name] = (i, int(self.slot[i]) + k)
        #: Bare name -> the moving joints of nested models it can stand for: Gazebo's
        #: JointStatePublisher names ``arm::elbow`` ``elbow`` (its name inside its model).
        #: Names that are a joint's own are left out: the joint of that name is meant.
        self.nested_by_bare_name: dict[str, tuple[int, ...]] = {}
        for i, joint in enumerate(self.moving_joints):
            bare = joint.name.rpartition("::")[2]
            if bare != joint.name and bare not in self.moving_index:
                self.nested_by_bare_name[bare] = (*self.nested_by_bare_name.get(bare, ()), i)
        #: (M,) joints that follow a moving leader (a mimic of a fixed joint has no effect).
        self.is_mimic = np.array(
            [
                j.mimic is not None and j.mimic.joint in self.moving_index
                for j in self.moving_joints
            ],
            dtype=bool,
        )
        #: Names of the values a user sets (mimic followers left out), in slot order.
        self.variable_names: list[str] = [
            name
            for i, joint in enumerate(self.moving_joints)
            if not self.is_mimic[i]
            for name in joint.variable_names
        ]
        #: (V,) every value at its type's identity (zero; identity quaternions).
        self.identity_values = np.array(
            [value for kind in self.joint_types for value in kind.identity], dtype=np.float64
        ).reshape(self.num_values)
        #: Moving joints with a quaternion, and the slot where it starts.
        self.quaternion_joints = [
            i for i, kind in enumerate(self.joint_types) if kind.quaternion_at is not None
        ]
        self.quaternion_slots = [
            int(self.slot[i]) + int(self.joint_types[i].quaternion_at or 0)
            for i in self.quaternion_joints
        ]

    def _order_followers(self) -> None:
        """Mimic followers, each after its leader (by level: leaders resolved first)."""
        level_of: dict[int, int] = {}

        def level(index: int) -> int:
            mimic = self.moving_joints[index].mimic
            if mimic is None or not self.is_mimic[index]:
                return 0
            if index not in level_of:
                level_of[index] = level(self.moving_index[mimic.joint]) + 1
            return level_of[index]

        for index in np.flatnonzero(self.is_mimic).tolist():
            level(index)
        self.followers: list[Follower] = []
        for index in sorted(level_of, key=lambda i: (level_of[i], i)):
            mimic = self.moving_joints[index].mimic
            assert mimic is not None
            leader = self.moving_index[mimic.joint]
            self.followers.append(
                Follower(
                    joint=index,
                    slot=int(self.slot[index]),
                    leader=leader,
                    leader_slot=int(self.slot[leader]),
                    multiplier=float(mimic.multiplier),
                    offset=float(mimic.offset),
                    level=level_of[index],
                )
            )
        #: (V,) the identity values with mimic followers resolved: the zero configuration.
        self.zero_values = self.identity_values.copy()
        for follower in self.followers:
            self.zero_values[follower.slot] = (
                follower.multiplier * self.zero_values[follower.leader_slot] + follower.offset
            )

    def _collect_limits(self) -> None:
        """Per clamp mode, each slot's range (+-inf where a value is not clamped)."""
        #: "hard"/"soft" -> (lower (V,), upper (V,)), from ``Joint.variable_limits``.
        self.ranges: dict[str, tuple[Array, Array]] = {}
        for mode in CLAMP_LIMITS:
            lower = np.full(self.num_values, -np.inf)
            upper = np.full(self.num_values, np.inf)
            for i, joint in enumerate(self.moving_joints):
                for k, limits in enumerate(joint.variable_limits(mode)):
                    if limits is not None:
                        lower[self.slot[i] + k], upper[self.slot[i] + k] = limits
            self.ranges[mode] = (lower, upper)

    def _group_by_form(self) -> None:
        """Moving joints grouped by motion form, forms in table order."""
        self.groups: list[FormGroup] = []
        #: (M,) the group of each moving joint, and its row in that group.
        self.group_of = np.zeros(len(self.moving_joints), dtype=np.intp)
        self.row_in_group = np.zeros(len(self.moving_joints), dtype=np.intp)
        forms = list(dict.fromkeys(kind.form.name for kind in JOINT_TYPES.values()))
        for form_name in forms:
            members = [i for i, k in enumerate(self.joint_types) if k.form.name == form_name]
            if not members:
                continue
            form = self.joint_types[members[0]].form
            joints = np.array(members, dtype=np.intp)
            slots = (self.slot[joints][:, None] + np.arange(form.size)).astype(np.intp)
            self.group_of[joints] = len(self.groups)
            self.row_in_group[joints] = np.arange(len(members))
            self.groups.append(FormGroup(form, joints, slots))

    def front_pose(self, index: int) -> Array:
        """(4, 4) pose of moving joint ``index``'s joint frame (at zero) in its parent's
        anchor frame: ``T_frame_parent @ origin``."""
        T_frame_joint: Array = self.T_frame_parent[index] @ self.moving_joints[index].origin
        return T_frame_joint
