"""The compiled layout of a robot: tree order, fixed joints folded, frames, variable slots.

Built once from a validated ``RobotModel`` by ``compile_layout`` (``model.validate.check_model``
runs first, so a model built by hand fails with the parsers' wording), from pure functions
each computing one part (the folded tree, the variables, the mimic followers, the clamp
ranges, the form groups), into a frozen ``Layout`` whose arrays are read-only. It holds
structure and constants only;
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
from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from ..errors import ModelError
from ..model.clamp_mode import ClampMode
from ..model.elements import Joint, RobotModel
from ..model.joint_types import JOINT_TYPES, JointType
from ..model.motion_forms import MotionForm
from ..model.validate import check_model

#: Largest distance (m) a link may lie from the root by its origins alone (their translations
#: summed along its path): a model beyond it is refused, as its poses could overflow to inf.
MAX_REACH = 1e300
#: The clamp modes that clamp (``ClampMode.NONE`` does not): ``Layout.ranges`` has each.
CLAMPING = (ClampMode.HARD, ClampMode.SOFT)
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
class FollowerLevel:
    """Followers of one mimic level, computed at once: value = multiplier * leader + offset,
    per follower ``joints[k]`` (a moving joint) at variable slot ``slots[k]``."""

    slots: IndexArray
    leader_slots: IndexArray
    multipliers: Array
    offsets: Array
    joints: IndexArray


def follower_levels(followers: Iterable[Follower]) -> tuple[FollowerLevel, ...]:
    """``followers`` grouped by level, lowest first: each level's leaders are resolved before
    it (computed by an earlier level, or independent)."""
    by_level: dict[int, list[Follower]] = {}
    for follower in followers:
        by_level.setdefault(follower.level, []).append(follower)
    return tuple(
        FollowerLevel(
            slots=np.array([f.slot for f in chosen], dtype=np.intp),
            leader_slots=np.array([f.leader_slot for f in chosen], dtype=np.intp),
            multipliers=np.array([f.multiplier for f in chosen]),
            offsets=np.array([f.offset for f in chosen]),
            joints=np.array([f.joint for f in chosen], dtype=np.intp),
        )
        for _, chosen in sorted(by_level.items())
    )


@dataclass(frozen=True)
class FormGroup:
    """The moving joints of one motion form: the rows of one product on the hot paths."""

    form: MotionForm
    joints: IndexArray  # (J,) moving joint indices, ascending
    slots: IndexArray  # (J, size) variable slots of each joint


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


@dataclass(frozen=True)
class TreeLayout:
    """The tree with its fixed joints folded (``_fold_fixed_joints``): part of ``Layout``."""

    #: Fixed joints in tree order.
    fixed_joints: list[Joint]
    #: Non-fixed joints by depth, parents before children, and their index by name.
    moving_joints: list[Joint]
    moving_index: dict[str, int]
    #: The joint-type table entry of each moving joint.
    joint_types: list[JointType]
    #: (M,) frame of each moving joint's parent link, and (M, 4, 4) its pose in that frame.
    parent_frame: IndexArray
    T_frame_parent: Array
    #: Links in file order; (L,) the anchor frame of each and (L, 4, 4) its pose in it.
    link_names: list[str]
    link_frame: IndexArray
    T_frame_link: Array
    #: (M + 1,) the link of each frame (frame 0: the root).
    frame_link: IndexArray
    #: Links that hang from a frame through fixed joints only (all links but the frames).
    fixed_links: list[int]
    #: (M + 1,) depth of each frame (the root: 0).
    frame_depth: IndexArray


@dataclass(frozen=True)
class VariableLayout:
    """The variable vector's layout (``_lay_out_variables``): part of ``Layout``."""

    #: (M,) first slot and number of values of each moving joint; V values in all.
    slot: IndexArray
    size: IndexArray
    num_values: int
    #: (V,) moving joint of each slot.
    slot_joint: IndexArray
    #: JointState name -> (moving joint, slot), for every value of every moving joint.
    variable_lookup: dict[str, tuple[int, int]]
    #: Bare name -> the moving joints of nested models it can stand for: Gazebo's
    #: JointStatePublisher names ``arm::elbow`` ``elbow`` (its name inside its model).
    #: Names that are a joint's own are left out: the joint of that name is meant.
    nested_by_bare_name: dict[str, tuple[int, ...]]
    #: (M,) joints that follow a moving leader (a mimic of a fixed joint has no effect).
    is_mimic: BoolArray
    #: Names of the values a user sets (mimic followers left out), in slot order.
    variable_names: list[str]
    #: (V,) every value at its type's identity (zero; identity quaternions).
    identity_values: Array
    #: Moving joints with a quaternion, and the slot where it starts.
    quaternion_joints: list[int]
    quaternion_slots: list[int]


@dataclass(frozen=True)
class FormGroups:
    """The moving joints by motion form (``_group_by_form``): part of ``Layout``."""

    #: One group per motion form present, forms in table order.
    groups: list[FormGroup]
    #: (M,) the group of each moving joint and its row in that group.
    group_of: IndexArray
    row_in_group: IndexArray


@dataclass(frozen=True)
class Layout(FormGroups, VariableLayout, TreeLayout):
    """A robot's structure compiled into index arrays and constant poses (module docstring):
    frozen, its arrays read-only. Built by ``compile_layout``; its parts' fields are its own
    (``layout.moving_joints``, ``layout.slot``, ``layout.groups``)."""

    robot: RobotModel
    #: Mimic followers, each after its leader (by level).
    followers: list[Follower]
    #: (V,) the identity values with mimic followers resolved: the zero configuration.
    zero_values: Array
    #: ``CLAMPING`` mode -> (lower (V,), upper (V,)), from ``Joint.variable_limits``.
    ranges: dict[ClampMode, tuple[Array, Array]]

    def front_pose(self, index: int) -> Array:
        """(4, 4) pose of moving joint ``index``'s joint frame (at zero) in its parent's
        anchor frame: ``T_frame_parent @ origin``."""
        T_frame_joint: Array = self.T_frame_parent[index] @ self.moving_joints[index].origin
        return T_frame_joint


def compile_layout(robot: RobotModel) -> Layout:
    """The ``Layout`` of ``robot``, after ``model.validate.check_model`` (ModelError for an
    invalid model, or one whose links can lie beyond ``MAX_REACH`` from the root)."""
    check_model(robot)
    order = _tree_order(robot)
    _check_reach(robot, order)
    tree = _fold_fixed_joints(robot, order)
    variables = _lay_out_variables(tree)
    followers = _order_followers(tree, variables)
    zero_values = variables.identity_values.copy()
    for follower in followers:
        zero_values[follower.slot] = (
            follower.multiplier * zero_values[follower.leader_slot] + follower.offset
        )
    layout = Layout(
        robot=robot,
        followers=followers,
        zero_values=zero_values,
        ranges=_collect_limits(tree, variables),
        **vars(tree),
        **vars(variables),
        **vars(_group_by_form(tree, variables)),
    )
    _freeze_arrays(layout)
    return layout


def _freeze_arrays(layout: Layout) -> None:
    """Make every array ``layout`` holds read-only (the ranges' and groups' too)."""
    arrays = [value for value in vars(layout).values() if isinstance(value, np.ndarray)]
    arrays += [bound for bounds in layout.ranges.values() for bound in bounds]
    arrays += [array for group in layout.groups for array in (group.joints, group.slots)]
    for array in arrays:
        array.flags.writeable = False


def _fold_fixed_joints(robot: RobotModel, order: list[Joint]) -> TreeLayout:
    """Moving joints by depth; each link's anchor frame and constant pose in it."""
    # Per link: (moving joint whose child frame it hangs from, or None; pose in that frame;
    # number of moving joints above it).
    anchor: dict[str, tuple[Joint | None, Array, int]] = {robot.root: (None, np.eye(4), 0)}
    parent_anchor: dict[str, tuple[Joint | None, Array, int]] = {}
    moving_in_order: list[Joint] = []
    fixed_joints: list[Joint] = []
    for joint in order:
        above, T_anchor_parent, depth = anchor[joint.parent]
        if joint.joint_type == "fixed":
            fixed_joints.append(joint)
            anchor[joint.child] = (above, T_anchor_parent @ joint.child_pose(), depth)
        else:
            moving_in_order.append(joint)
            parent_anchor[joint.name] = (above, T_anchor_parent, depth)
            anchor[joint.child] = (joint, np.eye(4), depth + 1)
    # A stable sort by depth keeps parents before children and makes each depth contiguous.
    moving_joints = sorted(moving_in_order, key=lambda j: parent_anchor[j.name][2])
    moving_index = {joint.name: i for i, joint in enumerate(moving_joints)}

    def frame_of(joint: Joint | None) -> int:
        return 0 if joint is None else moving_index[joint.name] + 1

    count = len(moving_joints)
    parent_frame = np.array(
        [frame_of(parent_anchor[j.name][0]) for j in moving_joints], dtype=np.intp
    )
    link_names = list(robot.links)
    link_index = {name: k for k, name in enumerate(link_names)}
    frame_link = np.array(
        [link_index[robot.root]] + [link_index[j.child] for j in moving_joints], dtype=np.intp
    )
    frame_links = set(frame_link.tolist())
    frame_depth = np.zeros(count + 1, dtype=np.intp)
    for i in range(count):
        frame_depth[i + 1] = frame_depth[parent_frame[i]] + 1
    return TreeLayout(
        fixed_joints=fixed_joints,
        moving_joints=moving_joints,
        moving_index=moving_index,
        joint_types=[JOINT_TYPES[j.joint_type] for j in moving_joints],
        parent_frame=parent_frame,
        T_frame_parent=np.array([parent_anchor[j.name][1] for j in moving_joints]).reshape(
            count, 4, 4
        ),
        link_names=link_names,
        link_frame=np.array([frame_of(anchor[name][0]) for name in link_names], dtype=np.intp),
        T_frame_link=np.array([anchor[name][1] for name in link_names]).reshape(
            len(link_names), 4, 4
        ),
        frame_link=frame_link,
        fixed_links=[k for k in range(len(link_names)) if k not in frame_links],
        frame_depth=frame_depth,
    )


def _nested_by_bare_name(tree: TreeLayout) -> dict[str, tuple[int, ...]]:
    """Each nested model's moving joint (``a::b::name``) under its bare name (``name``),
    unless a joint is named so itself."""
    nested: dict[str, tuple[int, ...]] = {}
    for i, joint in enumerate(tree.moving_joints):
        bare = joint.name.rpartition("::")[2]
        if bare != joint.name and bare not in tree.moving_index:
            nested[bare] = (*nested.get(bare, ()), i)
    return nested


def _lay_out_variables(tree: TreeLayout) -> VariableLayout:
    """The variable vector: slots, names, identity values."""
    moving_joints, joint_types = tree.moving_joints, tree.joint_types
    sizes = [kind.size for kind in joint_types]
    slot = np.concatenate([[0], np.cumsum(sizes)]).astype(np.intp)[:-1]
    num_values = int(sum(sizes))
    variable_lookup: dict[str, tuple[int, int]] = {}
    for i, joint in enumerate(moving_joints):
        for k, name in enumerate(joint.variable_names):
            variable_lookup[name] = (i, int(slot[i]) + k)
    is_mimic = np.array(
        [j.mimic is not None and j.mimic.joint in tree.moving_index for j in moving_joints],
        dtype=bool,
    )
    quaternion_joints = [i for i, kind in enumerate(joint_types) if kind.quaternion_at is not None]
    return VariableLayout(
        slot=slot,
        size=np.array(sizes, dtype=np.intp),
        num_values=num_values,
        slot_joint=np.repeat(np.arange(len(sizes), dtype=np.intp), sizes),
        variable_lookup=variable_lookup,
        nested_by_bare_name=_nested_by_bare_name(tree),
        is_mimic=is_mimic,
        variable_names=[
            name
            for i, joint in enumerate(moving_joints)
            if not is_mimic[i]
            for name in joint.variable_names
        ],
        identity_values=np.array(
            [value for kind in joint_types for value in kind.identity], dtype=np.float64
        ).reshape(num_values),
        quaternion_joints=quaternion_joints,
        quaternion_slots=[
            int(slot[i]) + int(joint_types[i].quaternion_at or 0) for i in quaternion_joints
        ],
    )


def _order_followers(tree: TreeLayout, variables: VariableLayout) -> list[Follower]:
    """Mimic followers, each after its leader (by level: leaders resolved first)."""
    moving_joints, is_mimic = tree.moving_joints, variables.is_mimic
    level_of: dict[int, int] = {}

    def level(index: int) -> int:
        mimic = moving_joints[index].mimic
        if mimic is None or not is_mimic[index]:
            return 0
        if index not in level_of:
            level_of[index] = level(tree.moving_index[mimic.joint]) + 1
        return level_of[index]

    for index in np.flatnonzero(is_mimic).tolist():
        level(index)
    followers: list[Follower] = []
    for index in sorted(level_of, key=lambda i: (level_of[i], i)):
        mimic = moving_joints[index].mimic
        assert mimic is not None
        leader = tree.moving_index[mimic.joint]
        followers.append(
            Follower(
                joint=index,
                slot=int(variables.slot[index]),
                leader=leader,
                leader_slot=int(variables.slot[leader]),
                multiplier=float(mimic.multiplier),
                offset=float(mimic.offset),
                level=level_of[index],
            )
        )
    return followers


def _collect_limits(
    tree: TreeLayout, variables: VariableLayout
) -> dict[ClampMode, tuple[Array, Array]]:
    """Per clamp mode, each slot's range (+-inf where a value is not clamped)."""
    ranges: dict[ClampMode, tuple[Array, Array]] = {}
    for mode in CLAMPING:
        lower = np.full(variables.num_values, -np.inf)
        upper = np.full(variables.num_values, np.inf)
        for i, joint in enumerate(tree.moving_joints):
            for k, limits in enumerate(joint.variable_limits(mode)):
                if limits is not None:
                    lower[variables.slot[i] + k], upper[variables.slot[i] + k] = limits
        ranges[mode] = (lower, upper)
    return ranges


def _group_by_form(tree: TreeLayout, variables: VariableLayout) -> FormGroups:
    """Moving joints grouped by motion form, forms in table order."""
    joint_types = tree.joint_types
    groups: list[FormGroup] = []
    group_of = np.zeros(len(joint_types), dtype=np.intp)
    row_in_group = np.zeros(len(joint_types), dtype=np.intp)
    for form_name in dict.fromkeys(kind.form.name for kind in JOINT_TYPES.values()):
        members = [i for i, k in enumerate(joint_types) if k.form.name == form_name]
        if not members:
            continue
        form = joint_types[members[0]].form
        joints = np.array(members, dtype=np.intp)
        slots = (variables.slot[joints][:, None] + np.arange(form.size)).astype(np.intp)
        group_of[joints] = len(groups)
        row_in_group[joints] = np.arange(len(members))
        groups.append(FormGroup(form, joints, slots))
    return FormGroups(groups, group_of, row_in_group)
