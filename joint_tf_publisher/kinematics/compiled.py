"""Compiled kinematics: a Robot turned once into numpy arrays, then fast updates and FK.

``Kinematics(robot)`` (``robot.kinematics``) orders the tree, folds every chain of fixed joints
into a constant pose, and lays out one variable vector for all moving joints:

- 1-DOF joints (revolute, continuous, prismatic, screw, gearbox): one value (rad or m);
- planar: x, y (m) in the plane, theta (rad) about its normal;
- floating: x, y, z (m), qx, qy, qz, qw;
- ball: qx, qy, qz, qw;
- revolute2, universal: two angles (rad), about ``axis`` then ``axis2``.

Every 1-DOF motion is a rotation by ``k_rot * q`` about the unit axis ``a`` and a translation
``k_trans * q`` along it (revolute: 1, 0; prismatic: 0, 1; screw: 1, pitch), so with
``c = cos(q)``, ``s = sin(q)``

    motion(q) = E_1 + c * E_c + s * E_s + q * E_q

with constant (4, 4) matrices (Rodrigues' formula; a prismatic joint has E_c = E_s = 0 and
E_1 = identity, a revolute joint E_q = 0). ``T_parent_child = origin @ motion(q) @
child_offset`` is then linear in (1, c, s, q), and the per-joint matrices are precomputed with
the constant fixed-joint chain in front. FK of one (or a few) configurations evaluates every
moving joint's child pose in its parent frame at once and composes them by pruned pointer
jumping: ceil(log2(depth)) batched products, then one product for all fixed links. Many
configurations go joint by joint on (N, 4, 4) stacks written straight into the output. A cfg
of numbers for 1-DOF joints becomes the variable vector (mimic followers included) in one
matrix product, the matrix cached per tuple of cfg names.

Frames: every pose is ``T_a_b`` (frame b in frame a); FK poses are in the root link frame.
Quaternions are (x, y, z, w).
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

import numpy as np
from numpy.typing import NDArray

from ..errors import ModelError
from ..model.elements import Joint, RobotModel
from ..transforms import (
    axis_angles_to_matrices,
    matrices_to_quaternions,
    matrix_to_quaternion,
    plane_basis,
    quaternion_multiply,
    quaternion_product_matrices,
    quaternions_to_matrices,
    rotation_quadratic_form,
    rpy_to_matrices,
)

Array = NDArray[np.float64]
IndexArray = NDArray[np.intp]
BoolArray = NDArray[np.bool_]

#: Joint types with one scalar value, moved by rotation and/or translation along one axis.
SCALAR_TYPES = frozenset({"revolute", "continuous", "prismatic", "screw", "gearbox"})
#: Accepted values of ``clamp``: none, the hard ``<limit>`` range, or hard intersected with soft.
CLAMP_MODES = (None, "hard", "soft")
#: Largest magnitude of a joint value taken from input (rad, m, or quaternion component).
#: Beyond it a value is rejected like NaN: no real joint gets there, and products with it
#: could overflow a transform to inf.
MAX_JOINT_VALUE = 1e100
#: Largest distance (m) a link may lie from the root by its origins alone (their translations
#: summed along its path): a model beyond it is refused, as its poses could overflow to inf.
MAX_REACH = 1e300

_VALUE_SIZES = {"planar": 3, "floating": 7, "ball": 4, "revolute2": 2, "universal": 2}
#: Where the (x, y, z, w) quaternion starts inside a joint's values.
_QUATERNION_START = {"floating": 3, "ball": 0}
_IDENTITY_VALUES = {"floating": [0, 0, 0, 0, 0, 0, 1.0], "ball": [0, 0, 0, 1.0]}
_PLAN_CACHE_SIZE = 64
#: Below this norm, a quaternion is scaled by its largest component before normalising (the
#: squares of tiny components would lose digits, or vanish).
_SMALL_NORM = 1e-100
#: Joint types whose transform ``joint_transforms`` composes from a motion translation and
#: quaternion (``_compile_composed_transforms``); revolute2 and universal use child_pose.
_COMPOSED_TYPES = ("planar", "floating", "ball")
_HALF_ONE = np.array([0.5, 1.0])
_IDENTITY = np.eye(4)
#: Marks a cfg key tuple not yet in the cache (None is a cached answer).
_NOT_CACHED: Any = object()
#: Up to this many configurations, batched FK composes all links at once by pointer jumping;
#: beyond, joint by joint on (N, 4, 4) stacks (less memory traffic).
_FEW_CONFIGURATIONS = 16
#: Batched FK computes this many configurations at a time (cache-sized working arrays).
_BATCH_CHUNK = 2048


@dataclass
class JointPositions:
    """The joint state of one consumer (the node keeps one), updated by ``Kinematics.apply``.

    ``values`` is the full variable vector (layout in the module docstring; metres, radians,
    unit quaternions), always finite: the last good value of every variable. ``received[i]`` is
    True once a value for ``moving_joints[i]`` has arrived, directly or through its mimic leader.
    """

    values: Array
    received: BoolArray


@dataclass
class Update:
    """What one ``apply`` call did.

    ``moved``: indices into ``moving_joints`` whose transform may have changed (the joints given
    plus their mimic followers, and any joint whose stored value a clamp changed), sorted.
    ``clamped``: joints whose value was clamped. ``rejected``: joints given a non-finite value,
    one beyond +-MAX_JOINT_VALUE, or a zero quaternion (they keep their last good value).
    ``unknown``: names that are not a moving joint's variable (fixed joints included).
    ``ignored_mimic``: names of mimic joints, whose value always comes from their leader.
    """

    moved: IndexArray
    clamped: list[str] = field(default_factory=list)
    rejected: list[str] = field(default_factory=list)
    unknown: list[str] = field(default_factory=list)
    ignored_mimic: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class _NamePlan:
    """How the names of one JointState message map onto the variable vector (cached)."""

    message_index: IndexArray  # position in the message of each accepted name
    slots: IndexArray  # variable slot each accepted name writes
    joints: IndexArray  # moving-joint index of each accepted name
    joint_mask: BoolArray  # per moving joint: given by this message
    quaternion_joints: IndexArray  # floating/ball joints whose quaternion is written, ...
    quaternion_slots: IndexArray  # ... (Q, 4) the variable slots of their quaternions ...
    quaternion_blocks: IndexArray  # ... and (Q, 7) all their variable slots (_slot_block)
    unknown: list[str]
    ignored_mimic: list[str]


@dataclass(frozen=True)
class _CfgPlan:
    """How a cfg with one tuple of names maps onto the variable vector (cached)."""

    matrix: Array  # (V, K): single values = zero_values + matrix @ given (followers included)
    bound: float  # given values must stay below this magnitude (no overflow, finite)
    columns: IndexArray  # cfg entries that set a variable (not mimic or fixed joints) ...
    slots: IndexArray  # ... and the variable slot each of them sets


@dataclass(frozen=True)
class _MimicLevel:
    """Mimic followers whose leaders are resolved before them: follower = m * leader + offset."""

    follower_slots: IndexArray
    leader_slots: IndexArray
    multiplier: Array
    offset: Array
    follower_joints: IndexArray
    leader_joints: IndexArray


def _model_error(
    robot: RobotModel, joint: Joint, message: str, line: int | None = None
) -> ModelError:
    return ModelError(
        message,
        source=robot.source,
        line=line if line is not None else joint.line,
        element=f"joint {joint.name!r}",
    )


def _translation_norm(pose: Array) -> float:
    """Length (m) of the translation of a pose (4, 4); inf if it overflows."""
    return math.hypot(*pose[:3, 3].tolist())


def _tree_order(robot: RobotModel) -> list[Joint]:
    """The joints depth first from the root, children in file order (parents before children).

    Raises ModelError for a joint naming a missing link, a link with two parent joints, and
    joints not connected to the root (a cycle).
    """
    children: dict[str, list[Joint]] = {name: [] for name in robot.links}
    parent_joint: dict[str, Joint] = {}
    for joint in robot.joints.values():
        for link in (joint.parent, joint.child):
            if link not in children:
                raise _model_error(robot, joint, f"link {link!r} does not exist")
        if joint.child in parent_joint:
            raise _model_error(
                robot,
                joint,
                f"link {joint.child!r} already has parent joint {parent_joint[joint.child].name!r}",
            )
        parent_joint[joint.child] = joint
        children[joint.parent].append(joint)
    if robot.root not in children:
        raise ModelError(f"root link {robot.root!r} does not exist", source=robot.source)
    order: list[Joint] = []
    stack = list(reversed(children[robot.root]))
    while stack:
        joint = stack.pop()
        order.append(joint)
        stack.extend(reversed(children[joint.child]))
    if len(order) != len(robot.joints):
        reached = {joint.name for joint in order}
        lost = next(j for j in robot.joints.values() if j.name not in reached)
        raise _model_error(
            robot, lost, f"not connected to the root link {robot.root!r} (the joints form a cycle)"
        )
    return order


def _skew(vector: Array) -> Array:
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def _motion_basis(axis: Array) -> Array:
    """(4, 4, 4): E_1, E_c, E_s, E_d with motion = E_1 + c E_c + s E_s + d E_d (Rodrigues)."""
    basis = np.zeros((4, 4, 4))
    outer = np.outer(axis, axis)
    basis[0, :3, :3] = outer
    basis[0, 3, 3] = 1.0
    basis[1, :3, :3] = np.eye(3) - outer
    basis[2, :3, :3] = _skew(axis)
    basis[3, :3, 3] = axis
    return basis


class Kinematics:
    """A Robot's tree compiled into numpy arrays; see the module docstring.

    Public members: ``moving_joints``, ``fixed_joints``, ``variable_names``, ``link_names``;
    ``new_positions``, ``apply``, ``apply_multi_dof``, ``joint_transforms``,
    ``fixed_transforms``, ``link_fk``, ``link_fk_batch``.
    """

    def __init__(self, robot: RobotModel) -> None:
        self.robot = robot
        order = _tree_order(robot)
        self._compile_frames(order)
        self._compile_variables()
        self._compile_mimic()
        self._compile_limits()
        self._compile_joint_transforms()
        self._compile_composed_transforms()
        self._compile_single_fk()
        self._zero_values = self._initial_values()
        self._zero_list: list[float] = self._zero_values.tolist()
        self._plans: dict[tuple[str, ...], _NamePlan] = {}
        self._cfg_plans: dict[tuple[Any, ...], _CfgPlan | None] = {}

    # -- compilation -----------------------------------------------------------------------

    def _compile_frames(self, order: list[Joint]) -> None:
        """Moving joints by depth; each link's anchor frame and constant pose in it.

        Frame 0 is the root link; frame i + 1 is the child link of ``moving_joints[i]``.
        """
        # Per link: (moving joint whose child frame it hangs from, or None; pose in that frame;
        # number of moving joints above it).
        anchor: dict[str, tuple[Joint | None, Array, int]] = {self.robot.root: (None, np.eye(4), 0)}
        parent_anchor: dict[str, tuple[Joint | None, Array, int]] = {}
        moving_in_order: list[Joint] = []
        self.fixed_joints: list[Joint] = []
        # Per link, a bound on its distance from the root (m) at any configuration: the sum of
        # the origin and child-offset translations above it (motions rotate them or, for
        # prismatic and screw joints, add their travel, given separately).
        reach: dict[str, float] = {self.robot.root: 0.0}
        for joint in order:
            above, T_anchor_parent, depth = anchor[joint.parent]
            reach[joint.child] = reach[joint.parent] + _translation_norm(joint.origin)
            reach[joint.child] += _translation_norm(joint.child_offset)
            if not reach[joint.child] <= MAX_REACH:
                raise _model_error(
                    self.robot,
                    joint,
                    f"link {joint.child!r} can lie up to {reach[joint.child]:.3g} m from the "
                    f"root link, beyond {MAX_REACH:.0e} m: its poses could overflow",
                )
            if joint.joint_type == "fixed":
                self.fixed_joints.append(joint)
                anchor[joint.child] = (above, T_anchor_parent @ joint.child_pose(), depth)
            else:
                moving_in_order.append(joint)
                parent_anchor[joint.name] = (above, T_anchor_parent, depth)
                anchor[joint.child] = (joint, np.eye(4), depth + 1)
        # A stable sort by depth keeps parents before children and makes each level contiguous.
        self.moving_joints: list[Joint] = sorted(
            moving_in_order, key=lambda j: parent_anchor[j.name][2]
        )
        self._moving_index = {joint.name: i for i, joint in enumerate(self.moving_joints)}

        def frame_of(joint: Joint | None) -> int:
            return 0 if joint is None else self._moving_index[joint.name] + 1

        count = len(self.moving_joints)
        self._parent_frame = np.array(
            [frame_of(parent_anchor[j.name][0]) for j in self.moving_joints], dtype=np.intp
        )
        self._T_frame_parent = np.array(
            [parent_anchor[j.name][1] for j in self.moving_joints]
        ).reshape(count, 4, 4)
        self.link_names: list[str] = list(self.robot.links)
        self._link_frame = np.array(
            [frame_of(anchor[name][0]) for name in self.link_names], dtype=np.intp
        )
        self._T_frame_link = np.array([anchor[name][1] for name in self.link_names]).reshape(
            len(self.link_names), 4, 4
        )
        link_index = {name: k for k, name in enumerate(self.link_names)}
        # Output index of each frame's link (frame 0: root), and the links hanging from
        # a frame through fixed joints only (all links but the frames themselves).
        self._frame_link = np.array(
            [link_index[self.robot.root]] + [link_index[j.child] for j in self.moving_joints],
            dtype=np.intp,
        )
        frame_links = set(self._frame_link.tolist())
        self._fixed_links = [k for k in range(len(self.link_names)) if k not in frame_links]

    def _compile_variables(self) -> None:
        """Lay out the variable vector; map every variable name to (moving joint, slot)."""
        sizes = [_VALUE_SIZES.get(j.joint_type, 1) for j in self.moving_joints]
        self._slot = (
            np.concatenate([[0], np.cumsum(sizes)[:-1]]).astype(np.intp)
            if sizes
            else np.zeros(0, dtype=np.intp)
        )
        self._size = np.array(sizes, dtype=np.intp)
        self._num_values = int(sum(sizes))
        self._slot_joint = np.repeat(np.arange(len(sizes), dtype=np.intp), sizes)
        self._is_scalar = np.array(
            [j.joint_type in SCALAR_TYPES for j in self.moving_joints], dtype=bool
        )
        self._all_scalar = bool(np.all(self._is_scalar))
        self._variable_lookup: dict[str, tuple[int, int]] = {}
        for i, joint in enumerate(self.moving_joints):
            for k, name in enumerate(joint.variable_names):
                self._variable_lookup[name] = (i, int(self._slot[i]) + k)
        self._is_mimic = np.array([j.mimic is not None for j in self.moving_joints], dtype=bool)
        self.variable_names: list[str] = [
            name
            for i, joint in enumerate(self.moving_joints)
            if not self._is_mimic[i]
            for name in joint.variable_names
        ]
        self._fixed_names = {joint.name for joint in self.fixed_joints}
        self._moving_names = [joint.name for joint in self.moving_joints]
        # cfg names whose value is one float: 1-DOF joints and MoveIt variable names (not mimic).
        self._float_slots: dict[str, int] = dict.fromkeys(self._fixed_names, -1)
        for i, joint in enumerate(self.moving_joints):
            if self._is_mimic[i]:
                self._float_slots[joint.name] = -1
                continue
            if self._is_scalar[i]:
                self._float_slots[joint.name] = int(self._slot[i])
            for k, name in enumerate(joint.variable_names):
                self._float_slots[name] = int(self._slot[i]) + k
        #: (M, 7): each moving joint's variable slots, the last repeated up to 7 columns.
        self._slot_block = np.minimum(
            self._slot[:, None] + np.arange(7), (self._slot + self._size - 1)[:, None]
        )
        self._quaternion_joint_indices = [
            i for i, joint in enumerate(self.moving_joints) if joint.joint_type in _QUATERNION_START
        ]

    def _compile_mimic(self) -> None:
        """Group mimic followers into levels so each level's leaders are already resolved."""
        robot = self.robot
        level_of: dict[str, int] = {}

        def level(joint: Joint, visiting: tuple[str, ...]) -> int:
            if joint.mimic is None:
                return 0
            if joint.name in level_of:
                return level_of[joint.name]
            mimic = joint.mimic
            line = getattr(mimic, "line", None)
            if joint.joint_type not in SCALAR_TYPES:
                raise _model_error(
                    robot,
                    joint,
                    f"<mimic> on a {joint.joint_type} joint: only 1-DOF joints can mimic",
                    line,
                )
            leader = robot.joints.get(mimic.joint)
            if leader is None:
                raise _model_error(
                    robot, joint, f"<mimic> names joint {mimic.joint!r}, which does not exist", line
                )
            if leader.joint_type not in SCALAR_TYPES:
                raise _model_error(
                    robot,
                    joint,
                    f"<mimic> leader {leader.name!r} is a "
                    f"{leader.joint_type} joint; it must be a 1-DOF joint",
                    line,
                )
            if leader.name in visiting or leader.name == joint.name:
                cycle = " -> ".join((*visiting, joint.name, leader.name))
                raise _model_error(robot, joint, f"<mimic> joints form a cycle: {cycle}", line)
            level_of[joint.name] = level(leader, (*visiting, joint.name)) + 1
            return level_of[joint.name]

        for joint in self.moving_joints:
            level(joint, ())
        self._mimic_levels: list[_MimicLevel] = []
        for depth in range(1, max(level_of.values(), default=0) + 1):
            followers = [
                i for i, j in enumerate(self.moving_joints) if level_of.get(j.name) == depth
            ]
            leaders = [
                self._moving_index[self.moving_joints[i].mimic.joint]  # type: ignore[union-attr]
                for i in followers
            ]
            mimics = [self.moving_joints[i].mimic for i in followers]
            self._mimic_levels.append(
                _MimicLevel(
                    follower_slots=self._slot[followers],
                    leader_slots=self._slot[leaders],
                    multiplier=np.array([m.multiplier for m in mimics if m is not None]),
                    offset=np.array([m.offset for m in mimics if m is not None]),
                    follower_joints=np.array(followers, dtype=np.intp),
                    leader_joints=np.array(leaders, dtype=np.intp),
                )
            )

    def _compile_limits(self) -> None:
        """Per-variable clamp ranges (+-inf where a variable is not clamped), from
        ``Joint.variable_limits``: a two-axis joint's second slot gets its ``<axis2>`` range."""
        self._ranges: dict[str, tuple[Array, Array]] = {}
        for mode in ("hard", "soft"):
            lower = np.full(self._num_values, -np.inf)
            upper = np.full(self._num_values, np.inf)
            for i, joint in enumerate(self.moving_joints):
                for k, limits in enumerate(joint.variable_limits(mode)):
                    if limits is not None:
                        lower[self._slot[i] + k], upper[self._slot[i] + k] = limits
            self._ranges[mode] = (lower, upper)
        # For apply: followers are clamped while resolving mimic, not by the vector clip.
        follower_slots = [int(self._slot[i]) for i in np.flatnonzero(self._is_mimic)]
        self._leader_ranges: dict[str, tuple[Array, Array]] = {}
        for mode, (lower, upper) in self._ranges.items():
            lower, upper = lower.copy(), upper.copy()
            lower[follower_slots], upper[follower_slots] = -np.inf, np.inf
            self._leader_ranges[mode] = (lower, upper)
        ordered = [(level, k) for level in self._mimic_levels for k in range(level.offset.size)]
        self._follower_slot_list = [int(level.follower_slots[k]) for level, k in ordered]
        self._follower_slots = np.array(self._follower_slot_list, dtype=np.intp)
        self._follower_joint_list = [int(level.follower_joints[k]) for level, k in ordered]
        self._follower_joints = np.array(self._follower_joint_list, dtype=np.intp)
        self._follower_specs: dict[
            str | None, list[tuple[int, int, float, float, int, int, float, float]]
        ] = {}
        for clamp_mode in CLAMP_MODES:
            specs = []
            for level, k in ordered:
                slot = int(level.follower_slots[k])
                bounds = self._ranges.get(clamp_mode or "")
                lower_f, upper_f = (
                    (-np.inf, np.inf) if bounds is None else (bounds[0][slot], bounds[1][slot])
                )
                specs.append(
                    (
                        slot,
                        int(level.leader_slots[k]),
                        float(level.multiplier[k]),
                        float(level.offset[k]),
                        int(level.follower_joints[k]),
                        int(level.leader_joints[k]),
                        float(lower_f),
                        float(upper_f),
                    )
                )
            self._follower_specs[clamp_mode] = specs

    def _motion_coefficients(self) -> tuple[Array, Array]:
        """Per moving joint, k_rot and k_trans: theta = k_rot * q, travel d = k_trans * q."""
        k_rot = np.zeros(len(self.moving_joints))
        k_trans = np.zeros(len(self.moving_joints))
        for i, joint in enumerate(self.moving_joints):
            if joint.joint_type in ("revolute", "continuous", "gearbox"):
                k_rot[i] = 1.0
            elif joint.joint_type == "prismatic":
                k_trans[i] = 1.0
            elif joint.joint_type == "screw":
                k_rot[i], k_trans[i] = 1.0, joint.screw_pitch
        return k_rot, k_trans

    def _compile_joint_transforms(self) -> None:
        """Constants for ``joint_transforms`` of 1-DOF joints in closed form.

        With R0, p0 the origin, qc, pc the child offset, a the axis, theta, d the motion:
        quaternion = A sin(theta/2) + B cos(theta/2), A = q0 (a, 0) qc, B = q0 qc;
        translation = T0 + U_c cos(theta) + U_s sin(theta) + U_d d, from Rodrigues' formula.
        Stored as (M, 6, 7): [cos(q/2), cos(q), sin(q/2), sin(q), 1, q] @ this = [translation,
        quaternion], with k_rot and k_trans folded in (theta = k_rot q, d = k_trans q): a joint
        that does not rotate has its cos rows in the constant row and zero sin rows.
        """
        self._k_rot, self._k_trans = self._motion_coefficients()
        count = len(self.moving_joints)
        self._transform_basis = np.zeros((count, 6, 7))
        for i, joint in enumerate(self.moving_joints):
            if not self._is_scalar[i]:
                continue
            rotation0, p0 = joint.origin[:3, :3], joint.origin[:3, 3]
            pc = joint.child_offset[:3, 3]
            a = joint.axis
            q0 = matrix_to_quaternion(rotation0)
            qc = matrix_to_quaternion(joint.child_offset[:3, :3])
            basis = self._transform_basis[i]
            basis[0, 3:] = quaternion_multiply(q0, qc)
            basis[2, 3:] = quaternion_multiply(quaternion_multiply(q0, [*a, 0.0]), qc)
            along = float(a @ pc)
            basis[1, :3] = rotation0 @ (pc - a * along)
            basis[3, :3] = rotation0 @ np.cross(a, pc)
            basis[4, :3] = p0 + rotation0 @ a * along
            basis[5, :3] = rotation0 @ a
            if self._k_rot[i] == 0.0:  # theta = 0: cos terms are constant, sin terms vanish
                basis[4] += basis[0] + basis[1]
                basis[:4] = 0.0
            basis[5] *= self._k_trans[i]
        self._fixed_translations = np.zeros((len(self.fixed_joints), 3))
        self._fixed_quaternions = np.zeros((len(self.fixed_joints), 4))
        if self.fixed_joints:
            poses = np.array([joint.child_pose() for joint in self.fixed_joints])
            self._fixed_translations = poses[:, :3, 3].copy()
            self._fixed_quaternions = matrices_to_quaternions(poses[:, :3, :3])

    def _compile_composed_transforms(self) -> None:
        """Constants for ``joint_transforms`` of planar, floating and ball joints.

        Each such joint's motion is a translation t_m (m) and a unit quaternion q_m in its
        (origin) frame: floating (x, y, z) and (qx, qy, qz, qw); ball 0 and (qx, qy, qz, qw);
        planar (x, y, 0) and (0, 0, sin(theta/2), cos(theta/2)) once the plane basis B
        (``transforms.plane_basis``) is folded into the constants (origin' = origin @ B,
        offset' = B^T @ child_offset: the motion is then about z, in the xy plane). With
        R0, t0, q0 of origin' and tc, qc of offset', the child pose in the parent frame is

            quaternion = q0 * q_m * qc = L(q0) R(qc) q_m
            translation = t0 + R0 t_m + R0 R(q_m) tc

        and R(q_m) tc is a quadratic form in q_m. So with the features
        f = [t_m (3), q_m q_m^T (16, row-major), q_m (4), 1] per joint, [translation,
        quaternion] = f @ ``_composed_basis[row]`` (24, 7). ``_composed_slots[row]`` (7,)
        are the variable slots gathered into (t_m, q_m); columns a joint type does not use
        repeat one of its slots (a ball joint's zero translation rows ignore them, a planar
        joint's quaternion is computed from theta).
        """
        count = len(self.moving_joints)
        #: Per moving joint: 0 for 1-DOF joints, 1 for composed ones, 2 for child_pose.
        self._transform_kind = np.where(self._is_scalar, 0, 2).astype(np.int8)
        self._composed_row = np.full(count, -1, dtype=np.intp)
        bases: list[Array] = []
        slot_rows: list[list[int]] = []
        planar: list[bool] = []
        for i, joint in enumerate(self.moving_joints):
            kind = joint.joint_type
            if kind not in _COMPOSED_TYPES:
                continue
            self._transform_kind[i] = 1
            self._composed_row[i] = len(bases)
            start = int(self._slot[i])
            origin, offset = joint.origin, joint.child_offset
            if kind == "floating":
                slot_rows.append(list(range(start, start + 7)))
            elif kind == "ball":
                slot_rows.append([start] * 3 + list(range(start, start + 4)))
            else:  # planar: theta goes to the w column, then becomes sin and cos of theta/2
                slot_rows.append([start, start + 1] + [start + 2] * 5)
                plane = np.eye(4)
                plane[:3, :3] = plane_basis(joint.axis)
                origin = origin @ plane
                offset = plane.T @ offset
            planar.append(kind == "planar")
            rotation0 = origin[:3, :3]
            left, _ = quaternion_product_matrices(matrix_to_quaternion(rotation0))
            _, right = quaternion_product_matrices(matrix_to_quaternion(offset[:3, :3]))
            basis = np.zeros((24, 7))
            basis[0:3, :3] = rotation0.T
            # Translation columns a type does not move along read other slots: zero their rows.
            basis[{"floating": 3, "ball": 0, "planar": 2}[kind] : 3] = 0.0
            quadratic = rotation_quadratic_form(offset[:3, 3])  # (4, 4, 3)
            basis[3:19, :3] = (quadratic @ rotation0.T).reshape(16, 3)
            basis[19:23, 3:] = (left @ right).T
            basis[23, :3] = origin[:3, 3]
            bases.append(basis)
        self._composed_basis = np.array(bases).reshape(len(bases), 24, 7)
        self._composed_slots = np.array(slot_rows, dtype=np.intp).reshape(len(bases), 7)
        #: Rows of the planar joints (empty without).
        self._composed_planar = np.flatnonzero(planar)
        self._composed_ones = np.ones((len(bases), 1))
        self._child_pose_joints = bool(np.any(self._transform_kind == 2))

    def _compile_single_fk(self) -> None:
        """Constants of FK: per-joint bases and the work-row layout of single FK.

        ``_fk_basis`` (M, 4, 16): T_frame_child = [1, cos(q), sin(q), q] @ this, per 1-DOF
        joint (frame = the joint's anchor frame; q its value in rad or m). The joint type's
        k_rot and k_trans are folded in: a prismatic joint's basis ignores cos and sin, a
        revolute joint's ignores q, a screw joint's q row is scaled by its pitch.

        Single FK works on ``2 (M + 1) + F`` rows of (4, 4): rows 0..M the root (identity)
        and the frames (child links of ``moving_joints``, sorted by depth), rows M+1..2M+1 a
        second copy of them for the pointer-jumping steps, then the F links that hang from a
        frame through fixed joints only. See ``_link_poses``.
        """
        count = len(self.moving_joints)
        # Row 0 is the root frame: [1, ...] @ it gives the identity, so the one product of
        # single FK also fills work row 0; rows 1.. are _fk_basis.
        self._frame_basis = np.zeros((count + 1, 4, 16))
        self._frame_basis[0, 0] = _IDENTITY.reshape(16)
        self._fk_basis = self._frame_basis[1:]
        for i, joint in enumerate(self.moving_joints):
            if self._is_scalar[i]:
                motion = _motion_basis(joint.axis)
                if self._k_rot[i] == 0.0:  # no rotation: motion = identity + d E_d
                    motion[0] += motion[1]
                    motion[1:3] = 0.0
                motion[3] *= self._k_trans[i]
                front = self._T_frame_parent[i] @ joint.origin
                basis = front @ motion @ joint.child_offset
                self._fk_basis[i] = basis.reshape(4, 16)
        # Factor rows [1, cos(q), sin(q), q].
        self._factor_template = np.zeros((count + 1, 4))
        self._factor_template[:, 0] = 1.0  # row 0, the root's, stays [1, 0, 0, 0]
        self._values_are_q = self._all_scalar and self._num_values == count
        # Pruned pointer jumping on the frame rows (sorted by depth, the number of moving
        # joints from the root): while step k runs, every frame row holds its pose in its
        # 2**k-th ancestor (the root if nearer), so rows of depth <= 2**k are final and only
        # the suffix of deeper rows is multiplied by its ancestor's pose. Each step writes its
        # products into the other of two copies of the frame rows (ping-pong), so numpy never
        # copies an operand that overlaps the output; ``location`` tracks where each frame's
        # latest pose is.
        rows = count + 1
        depth = np.zeros(rows, dtype=np.intp)
        for i in range(count):
            depth[i + 1] = depth[self._parent_frame[i]] + 1
        ancestor = np.concatenate([[0], self._parent_frame]).astype(np.intp)
        location = np.arange(rows, dtype=np.intp)
        #: Per step: work rows of the ancestors to gather, rows read, rows written.
        self._frame_jumps: list[tuple[IndexArray, slice, slice]] = []
        span = 1
        while True:
            start = int(np.searchsorted(depth, span, side="right"))  # first row deeper than span
            if start >= rows:
                break
            # Every row of the suffix was updated at each earlier step: all in one copy.
            source = int(location[start]) - start
            target = rows - source
            self._frame_jumps.append(
                (
                    location[ancestor[start:]].copy(),
                    slice(source + start, source + rows),
                    slice(target + start, target + rows),
                )
            )
            location[start:] += target - source
            ancestor = ancestor[ancestor]
            span *= 2
        # Fixed links: work row 2 * (M + 1) + k is fixed link k, its anchor's pose @ a constant.
        self._fixed_anchor_rows = location[self._link_frame[self._fixed_links]].astype(np.intp)
        self._T_anchor_fixed = self._T_frame_link[self._fixed_links].reshape(-1, 4, 4)
        # Work row of each link in file order (for one take() into the result).
        row_of_link = np.empty(len(self.link_names), dtype=np.intp)
        row_of_link[self._frame_link] = location
        row_of_link[self._fixed_links] = np.arange(len(self._fixed_links)) + 2 * rows
        self._row_of_link = row_of_link
        self._work_rows = 2 * rows + len(self._fixed_links)
        self._work_shape = (self._work_rows, 4, 4)
        self._frame_rows = slice(0, rows)
        self._fixed_rows = slice(2 * rows, self._work_rows)
        self._non_scalar = [int(i) for i in np.flatnonzero(~self._is_scalar)]

    def _initial_values(self) -> Array:
        """The variable vector at zero: zeros, identity quaternions, mimic followers resolved."""
        values = np.zeros(self._num_values)
        for i, joint in enumerate(self.moving_joints):
            identity = _IDENTITY_VALUES.get(joint.joint_type)
            if identity is not None:
                values[self._slot[i] : self._slot[i] + len(identity)] = identity
        self._resolve(values[None], None)
        return values

    # -- joint state -------------------------------------------------------------------------

    def new_positions(self) -> JointPositions:
        """A fresh state: every joint at zero (identity quaternions), nothing received."""
        return JointPositions(
            self._zero_values.copy(), np.zeros(len(self.moving_joints), dtype=bool)
        )

    def variable_values(self, positions: JointPositions) -> dict[str, float]:
        """Every moving joint's variables (``Joint.variable_names``, mimic followers included)
        with their stored values: rad, m, or quaternion components."""
        values = positions.values.tolist()
        return {name: values[slot] for name, (_, slot) in self._variable_lookup.items()}

    def _clamp_range(self, clamp: str | None) -> tuple[Array, Array] | None:
        if clamp is None:
            return None
        ranges = self._ranges.get(clamp)
        if ranges is None:
            raise ValueError(f"clamp must be one of {CLAMP_MODES}, got {clamp!r}")
        return ranges

    def _plan(self, names: Sequence[str]) -> _NamePlan:
        key = tuple(names)
        plan = self._plans.get(key)
        if plan is None:
            if len(self._plans) >= _PLAN_CACHE_SIZE:
                self._plans.clear()
            plan = self._plans[key] = self._make_plan(key)
        return plan

    def _make_plan(self, names: tuple[str, ...]) -> _NamePlan:
        message_index: list[int] = []
        slots: list[int] = []
        joints: list[int] = []
        quaternion_joints: list[int] = []
        unknown: list[str] = []
        ignored_mimic: list[str] = []
        for position, name in enumerate(names):
            found = self._variable_lookup.get(name)
            if found is None:
                unknown.append(name)
                continue
            joint_index, slot = found
            if self._is_mimic[joint_index]:
                ignored_mimic.append(name)
                continue
            message_index.append(position)
            slots.append(slot)
            joints.append(joint_index)
            start = _QUATERNION_START.get(self.moving_joints[joint_index].joint_type)
            if (
                start is not None
                and slot - self._slot[joint_index] >= start
                and joint_index not in quaternion_joints
            ):
                quaternion_joints.append(joint_index)
        joint_mask = np.zeros(len(self.moving_joints), dtype=bool)
        joint_mask[joints] = True
        quaternion_starts = [
            int(self._slot[i]) + _QUATERNION_START[self.moving_joints[i].joint_type]
            for i in quaternion_joints
        ]
        return _NamePlan(
            np.array(message_index, dtype=np.intp),
            np.array(slots, dtype=np.intp),
            np.array(joints, dtype=np.intp),
            joint_mask,
            np.array(quaternion_joints, dtype=np.intp),
            np.add.outer(np.array(quaternion_starts, dtype=np.intp), np.arange(4)).reshape(-1, 4),
            self._slot_block[quaternion_joints],
            unknown,
            ignored_mimic,
        )

    def apply(
        self,
        positions: JointPositions,
        names: Sequence[str],
        values: Sequence[float],
        clamp: str | None = "hard",
    ) -> Update:
        """Set values by joint name (1-DOF) or MoveIt variable name; resolve mimic; clamp.

        ``values`` in radians or metres (quaternion components unitless), one per name. Raises
        ValueError for a bad ``clamp`` or lengths that differ. See ``Update`` for the report.
        """
        if clamp is not None and clamp not in self._ranges:
            raise ValueError(f"clamp must be one of {CLAMP_MODES}, got {clamp!r}")
        given_values = np.asarray(values, dtype=np.float64)
        if given_values.shape != (len(names),):
            raise ValueError(f"{len(names)} names but values of shape {given_values.shape}")
        plan = self._plan(names)
        state = positions.values
        accepted = given_values[plan.message_index]
        slots = plan.slots
        moved = plan.joint_mask.copy()
        rejected: list[int] = []
        # One cheap check for the common case; max(|v|) neither overflows nor warns, and a
        # comparison with NaN is False.
        if not float(np.maximum.reduce(np.absolute(accepted), initial=0.0)) <= MAX_JOINT_VALUE:
            usable = np.absolute(accepted) <= MAX_JOINT_VALUE  # False for NaN and inf
            if not usable.all():
                bad = np.unique(plan.joints[~usable])
                keep = ~np.isin(plan.joints, bad)
                accepted, slots = accepted[keep], slots[keep]
                moved[bad] = False
                rejected.extend(bad.tolist())
        if plan.quaternion_joints.size:
            blocks, quaternion_slots, q_joints = (
                plan.quaternion_blocks,
                plan.quaternion_slots,
                plan.quaternion_joints,
            )
            if rejected:  # rejected joints are not written: leave their quaternions alone
                active = moved[q_joints]
                blocks, quaternion_slots, q_joints = (
                    blocks[active],
                    quaternion_slots[active],
                    q_joints[active],
                )
            previous = state[blocks]  # the joints' values before this message
            state[slots] = accepted
            rejected += self._normalise_quaternions(
                state, quaternion_slots, q_joints, previous, moved
            )
        else:
            state[slots] = accepted
        received = positions.received
        received |= moved
        clamped: list[int] = []
        if clamp is not None:
            lower, upper = self._leader_ranges[clamp]
            clipped = np.minimum(np.maximum(state, lower), upper)  # np.clip, without its wrappers
            changed = clipped != state
            if changed.any():
                joints = np.unique(self._slot_joint[changed.nonzero()[0]])
                state[:] = clipped
                moved[joints] = True
                clamped = joints.tolist()
        if self._follower_slots.size:
            # A follower whose value overflows keeps its last good value (never published
            # non-finite) and is reported as rejected; its leader keeps the value given.
            rejected += self._update_followers(state, clamp, moved, received, clamped)
        names_of = self._moving_names
        return Update(
            moved=moved.nonzero()[0],
            clamped=[names_of[i] for i in sorted(clamped)] if clamped else [],
            rejected=[names_of[i] for i in sorted(set(rejected))] if rejected else [],
            unknown=list(plan.unknown),
            ignored_mimic=list(plan.ignored_mimic),
        )

    def _normalise_quaternions(
        self,
        state: Array,
        quaternion_slots: IndexArray,
        joints: IndexArray,
        previous: Array,
        moved: BoolArray,
    ) -> list[int]:
        """Normalise the quaternions at ``quaternion_slots`` (Q, 4) of floating/ball ``joints``
        in ``state``, in place, all at once.

        A joint whose quaternion is zero gets its ``previous`` values (Q, 7: its variable
        slots, ``_slot_block``) back and is no longer ``moved``; those joints are returned
        (rejected). Components are at most ``MAX_JOINT_VALUE``, so squares do not overflow.
        """
        quaternions = state[quaternion_slots]
        norms = np.sqrt(np.add.reduce(quaternions * quaternions, axis=1))
        bad: list[int] = []
        if not (norms > _SMALL_NORM).all():  # tiny squares lose digits: scale first
            largest = np.maximum.reduce(np.absolute(quaternions), axis=1)
            zero = largest == 0.0
            if zero.any():
                bad = joints[zero].tolist()
                state[self._slot_block[bad]] = previous[zero]
                moved[bad] = False
                keep = ~zero
                quaternions, largest = quaternions[keep], largest[keep]
                quaternion_slots = quaternion_slots[keep]
            quaternions /= largest[:, None]
            norms = np.sqrt(np.add.reduce(quaternions * quaternions, axis=1))
        quaternions /= norms[:, None]
        state[quaternion_slots] = quaternions
        return bad

    def _update_followers(
        self,
        state: Array,
        clamp: str | None,
        moved: BoolArray,
        received: BoolArray,
        clamped: list[int],
    ) -> list[int]:
        """Recompute mimic followers in dependency order from their (clamped) leaders.

        Each follower is clamped by its own range; it moved if its leader moved or its value
        changed, and it has been received once its leader has. Followers clamped while their
        leader moved are appended to ``clamped``. Returns the followers whose value overflowed
        (they keep their last value). Works on Python lists: a few followers cost less than
        numpy calls.
        """
        values = state.tolist()
        moved_list = moved.tolist()
        received_list = received.tolist()
        overflow: list[int] = []
        for (
            f_slot,
            l_slot,
            multiplier,
            offset,
            f_joint,
            l_joint,
            lower,
            upper,
        ) in self._follower_specs[clamp]:
            value = multiplier * values[l_slot] + offset
            if not math.isfinite(value):
                overflow.append(f_joint)
                continue
            hit = False
            if value < lower:
                value, hit = lower, True
            elif value > upper:
                value, hit = upper, True
            if moved_list[l_joint]:
                moved_list[f_joint] = True
                if hit:
                    clamped.append(f_joint)
            elif value != values[f_slot]:
                moved_list[f_joint] = True
            values[f_slot] = value
            if received_list[l_joint]:
                received_list[f_joint] = True
        # Only followers' entries changed: write those back (short lists convert faster).
        state[self._follower_slots] = [values[k] for k in self._follower_slot_list]
        moved[self._follower_joints] = [moved_list[j] for j in self._follower_joint_list]
        received[self._follower_joints] = [received_list[j] for j in self._follower_joint_list]
        return overflow

    def _resolve(self, values: Array, clamp: str | None) -> None:
        """Clamp rows of ``values`` (N, V) and set mimic followers, in place (no reporting)."""
        ranges = self._clamp_range(clamp)
        if ranges is not None:
            np.clip(values, ranges[0], ranges[1], out=values)
        for level in self._mimic_levels:
            value = level.multiplier * values[:, level.leader_slots] + level.offset
            if ranges is not None:
                np.clip(
                    value,
                    ranges[0][level.follower_slots],
                    ranges[1][level.follower_slots],
                    out=value,
                )
            if not np.all(np.isfinite(value)):
                column = int(np.flatnonzero(~np.all(np.isfinite(value), axis=0))[0])
                name = self._moving_names[int(level.follower_joints[column])]
                raise ValueError(f"joint {name!r}: mimic value overflows")
            values[:, level.follower_slots] = value

    def apply_multi_dof(
        self,
        positions: JointPositions,
        joint_names: Sequence[str],
        translations: Any,
        quaternions: Any,
        clamp: str | None = "hard",
    ) -> Update:
        """Set multi-DOF joints from ``sensor_msgs/MultiDOFJointState`` transforms.

        ``translations`` (K, 3) in metres and ``quaternions`` (K, 4) x y z w give each joint's
        motion. Planar joints take the translation's components along the plane basis
        (``transforms.plane_basis``) and the rotation angle about the normal; floating joints
        the whole pose; ball joints the rotation. Other names are listed in ``unknown``.
        """
        t = np.asarray(translations, dtype=np.float64).reshape(-1, 3)
        q = np.asarray(quaternions, dtype=np.float64).reshape(-1, 4)
        if not len(joint_names) == len(t) == len(q):
            raise ValueError(
                f"{len(joint_names)} joint names but {len(t)} translations and {len(q)} quaternions"
            )
        names: list[str] = []
        values: list[float] = []
        unknown: list[str] = []
        for name, translation, quaternion in zip(joint_names, t, q, strict=True):
            index = self._moving_index.get(name)
            kind = self.moving_joints[index].joint_type if index is not None else None
            if kind == "floating":
                names.extend(self.moving_joints[index].variable_names)  # type: ignore[index]
                values.extend([*translation, *quaternion])
            elif kind == "ball":
                names.extend(self.moving_joints[index].variable_names)  # type: ignore[index]
                values.extend(quaternion)
            elif kind == "planar":
                names.extend(self.moving_joints[index].variable_names)  # type: ignore[index]
                usable = np.abs(translation).max() <= MAX_JOINT_VALUE  # False for NaN
                usable = usable and np.abs(quaternion).max() <= MAX_JOINT_VALUE
                if not usable:  # rejected by apply; the products could overflow or warn
                    values.extend([math.nan] * 3)
                    continue
                basis = plane_basis(self.moving_joints[index].axis)  # type: ignore[index]
                theta = 2.0 * np.arctan2(quaternion[:3] @ basis[:, 2], quaternion[3])
                values.extend(
                    [
                        float(translation @ basis[:, 0]),
                        float(translation @ basis[:, 1]),
                        float(theta),
                    ]
                )
            else:
                unknown.append(name)
        update = self.apply(positions, names, values, clamp)
        update.unknown = unknown
        return update

    # -- transforms for publishing -----------------------------------------------------------

    def joint_transforms(self, positions: JointPositions, indices: Any) -> tuple[Array, Array]:
        """Parent->child translation (M, 3) in metres and quaternion (M, 4) x y z w of
        ``moving_joints[i]`` for each i in ``indices``: ``Joint.child_pose`` at the stored value.
        """
        index = np.asarray(indices, dtype=np.intp).reshape(-1)
        values = positions.values
        if self._all_scalar:
            return self._scalar_transforms(values, index)
        # Every row through the 1-DOF closed form first (a multi-DOF joint's basis is zero,
        # so its row comes out zero), then the other joints' rows overwritten.
        result = self._scalar_rows(values, index)  # [translation, quaternion] per joint
        rows = self._composed_row[index]
        composed = np.flatnonzero(rows >= 0)
        if composed.size:
            result[composed] = self._composed_transforms(values)[rows[composed]]
        if self._child_pose_joints:  # revolute2, universal
            for k in np.flatnonzero(self._transform_kind[index] == 2):
                i = int(index[k])
                start = int(self._slot[i])
                pose = self.moving_joints[i].child_pose(values[start : start + self._size[i]])
                result[k, :3] = pose[:3, 3]
                result[k, 3:] = matrix_to_quaternion(pose[:3, :3])
        return result[:, :3], result[:, 3:]

    def _scalar_transforms(self, values: Array, index: IndexArray) -> tuple[Array, Array]:
        result = self._scalar_rows(values, index)
        return result[:, :3], result[:, 3:]

    def _scalar_rows(self, values: Array, index: IndexArray) -> Array:
        """(n, 7) [translation (m), quaternion x y z w] of 1-DOF joints ``index`` at ``values``."""
        q = values[self._slot[index]]
        angles = np.multiply.outer(q, _HALF_ONE)  # q/2, q
        factors = np.empty((index.size, 1, 6))  # [cos(q/2), cos q, sin(q/2), sin q, 1, q]
        np.cos(angles, factors[:, 0, :2])
        np.sin(angles, factors[:, 0, 2:4])
        factors[:, 0, 4] = 1.0
        factors[:, 0, 5] = q
        result: Array = np.matmul(factors, self._transform_basis[index])[:, 0]
        return result

    def _composed_transforms(self, values: Array) -> Array:
        """(K, 7) [translation (m), quaternion x y z w, w >= 0] of every planar, floating and
        ball joint (rows of ``_composed_basis``) at the variable vector ``values``.

        Stored quaternions are unit (``apply`` normalises them); they are normalised again
        here, as ``Joint.child_pose`` does, so that a vector written by hand gives its pose.
        """
        motion = values.take(self._composed_slots)  # (K, 7): t_m, q_m
        if self._composed_planar.size:  # theta sits in the w column; rotation about z
            planar = self._composed_planar
            half = motion[planar, 6] * 0.5
            motion[planar, 3:5] = 0.0
            motion[planar, 5] = np.sin(half)
            motion[planar, 6] = np.cos(half)
        quaternion = motion[:, 3:]
        quaternion /= np.sqrt(np.add.reduce(quaternion * quaternion, axis=1))[:, None]
        outer = quaternion[:, :, None] * quaternion[:, None, :]
        features = np.concatenate(
            (motion[:, :3], outer.reshape(-1, 16), quaternion, self._composed_ones), axis=1
        )[:, None, :]  # (K, 1, 24)
        result: Array = np.matmul(features, self._composed_basis)[:, 0]
        result[:, 3:] *= np.copysign(1.0, result[:, 6:])  # w >= 0, as matrix_to_quaternion
        return result

    def fixed_transforms(self) -> tuple[Array, Array]:
        """Translation (F, 3) in metres and quaternion (F, 4) x y z w of each fixed joint."""
        return self._fixed_translations.copy(), self._fixed_quaternions.copy()

    # -- configurations ----------------------------------------------------------------------

    def _single_values(self, cfg: Mapping[Any, Any]) -> Array:
        """(V,) variable vector of one cfg mapping, mimic followers resolved (not clamped).

        A cfg of numbers keyed by 1-DOF joint or MoveIt variable names takes a fast path: one
        matrix product with a matrix cached per key tuple (``_cfg_plan``). Anything else goes
        the general way, which also raises the errors: values that are not one number, and
        non-finite values or values so large that a mimic follower could overflow (both fail
        the bound check before the product, so numpy never warns about them).
        """
        keys = tuple(cfg)
        plan = self._cfg_plans.get(keys, _NOT_CACHED)
        if plan is _NOT_CACHED:
            plan = self._cfg_plan(keys)
        if plan is not None:
            try:
                given = np.fromiter(cfg.values(), np.float64, len(keys))
            except (TypeError, ValueError, OverflowError):  # a value that is not one number
                pass
            else:
                if np.maximum.reduce(np.abs(given)) < plan.bound:  # False for nan and inf
                    fast: Array = plan.matrix @ given
                    fast += self._zero_values
                    return fast
        return self._single_values_general(cfg)

    def _cfg_plan(self, keys: tuple[Any, ...]) -> _CfgPlan | None:
        """The plan of a cfg with these keys (cached, at most ``_PLAN_CACHE_SIZE`` tuples).

        Its (V, K) matrix S gives values = zero_values + S @ given: column k writes given
        value k into its variable slot and, scaled by the multiplier (products of them along
        a mimic chain), into every mimic follower's slot; the zero vector already holds the
        followers' offsets. Columns of mimic and fixed joints are zero (their value is
        ignored). None (the general path) for names that are not one float variable, a slot
        given twice, and robots with quaternion variables (which need normalising).
        """
        matrix = np.zeros((self._num_values, len(keys)))
        usable = not self._quaternion_joint_indices
        columns: list[int] = []
        slots: list[int] = []
        for column, key in enumerate(keys):
            slot = self._float_slots.get(key) if isinstance(key, str) and usable else None
            if slot is None or slot in slots:
                usable = False
                break
            if slot >= 0:
                matrix[slot, column] = 1.0
                columns.append(column)
                slots.append(slot)
        for f_slot, l_slot, multiplier, *_ in self._follower_specs[None]:
            matrix[f_slot] = multiplier * matrix[l_slot]
        largest = float(np.max(np.abs(matrix), initial=1.0))
        if len(self._cfg_plans) >= _PLAN_CACHE_SIZE:
            self._cfg_plans.clear()
        plan = None
        if usable and math.isfinite(largest):
            plan = _CfgPlan(
                matrix,
                1e300 / largest,
                np.array(columns, dtype=np.intp),
                np.array(slots, dtype=np.intp),
            )
        self._cfg_plans[keys] = plan
        return plan

    def _single_values_general(self, cfg: Mapping[Any, Any]) -> Array:
        """``_single_values`` for any cfg: floats on a Python list, other values in numpy."""
        values = list(self._zero_list)
        slot_of = self._float_slots
        deferred: list[tuple[Any, Any]] = []
        for key, value in cfg.items():
            slot = slot_of.get(key)
            if slot is None or not isinstance(value, (float, int)):
                deferred.append((key, value))
            elif slot >= 0:
                values[slot] = value
            # slot -1: a mimic or fixed joint, whose given value is ignored
        if deferred:
            rows = np.array(values)[None]
            self._fill_values(rows, deferred, 1, batched=False)
            self._check_values(rows)
            self._resolve(rows, None)
            single: Array = rows[0]
            return single
        for f_slot, l_slot, multiplier, offset, *_ in self._follower_specs[None]:
            values[f_slot] = multiplier * values[l_slot] + offset
        array = np.array(values)
        if self._quaternion_joint_indices or not math.isfinite(sum(values)):
            self._check_values(array[None])
        return array

    def _values_from_cfg(self, cfg: Mapping[Any, Any], count: int) -> Array:
        """(N, V) variable rows from a batched cfg mapping (not yet resolved)."""
        values = np.tile(self._zero_values, (count, 1))
        # Fast path: one column per 1-DOF joint or variable name, written in one assignment.
        slots: list[int] = []
        columns: list[Any] = []
        others: list[tuple[Any, Any]] = []
        for key, value in cfg.items():
            slot = self._float_slots.get(key)
            if slot is None or _shape_of(value) != (count,):
                others.append((key, value))
            elif slot >= 0:
                slots.append(slot)
                columns.append(value)
        if slots:
            values[:, slots] = np.array(columns, dtype=np.float64).T
        self._fill_values(values, others, count, batched=True)
        self._check_values(values)
        return values

    def _fill_values(
        self, values: Array, items: list[tuple[Any, Any]], rows: int, batched: bool
    ) -> None:
        """Write cfg items into variable rows (N, V). Mimic and fixed joints are skipped;
        unknown names and values of a wrong shape raise ValueError."""
        for key, value in items:
            name = key if isinstance(key, str) else getattr(key, "name", key)
            index = self._moving_index.get(name)
            if index is None:
                found = self._variable_lookup.get(name)
                if found is not None:
                    if not self._is_mimic[found[0]]:
                        column = np.asarray(value, dtype=np.float64)
                        if column.size != rows:
                            raise ValueError(
                                f"variable {name!r} takes one value per "
                                f"configuration, got shape {column.shape}"
                            )
                        values[:, found[1]] = column.reshape(rows)
                    continue
                if name in self._fixed_names:
                    continue
                raise ValueError(f"cfg names {name!r}, which is not a joint of this robot")
            if self._is_mimic[index]:
                continue
            slot = int(self._slot[index])
            if self._is_scalar[index]:
                column = np.asarray(value, dtype=np.float64)
                if column.size != rows:
                    raise ValueError(
                        f"joint {name!r}: a {self.moving_joints[index].joint_type} "
                        f"joint takes one value per configuration, got shape "
                        f"{column.shape}"
                    )
                values[:, slot] = column.reshape(rows)
                continue
            array = np.asarray(value, dtype=np.float64)
            if not batched:
                array = array[None]
            elif array.shape[:1] != (rows,):
                raise ValueError(
                    f"joint {name!r}: batch of {array.shape[:1]} values, expected {rows}"
                )
            joint = self.moving_joints[index]
            values[:, slot : slot + self._size[index]] = _values_of_joint(joint, array)

    def _check_values(self, values: Array) -> None:
        """Normalise quaternions of rows (N, V) in place; ValueError for non-finite values."""
        for index in self._quaternion_joint_indices:
            start = int(self._slot[index]) + _QUATERNION_START[self.moving_joints[index].joint_type]
            joint = self.moving_joints[index]
            values[:, start : start + 4] = _unit_quaternions(joint, values[:, start : start + 4])
        if not np.all(np.isfinite(values)):
            slot_index = int(np.flatnonzero(~np.all(np.isfinite(values), axis=0))[0])
            name = self.moving_joints[int(self._slot_joint[slot_index])].name
            raise ValueError(f"joint {name!r}: non-finite value in cfg")

    def _batch_size(self, cfgs: Mapping[Any, Any]) -> int:
        shapes = [_shape_of(value) for value in cfgs.values()]
        sizes = {shape[0] for shape in shapes if shape}
        if len(sizes) > 1:
            raise ValueError(f"cfgs have different batch sizes: {sorted(sizes)}")
        if not sizes:
            raise ValueError("cfgs must map joint names to arrays with a leading batch axis")
        return int(sizes.pop())

    # -- forward kinematics ------------------------------------------------------------------

    def link_fk(
        self, cfg: Mapping[Any, Any] | None = None, clamp: str | None = None
    ) -> dict[str, Array]:
        """Every link's pose (4, 4) in the root link frame, in file order.

        ``cfg`` maps joint names (or Joint objects, or MoveIt variable names) to values of the
        shapes ``Joint.motion`` takes; absent joints sit at zero, mimic joints follow their
        leader. ``clamp`` is None, "hard" or "soft". Raises ValueError for unknown names and
        non-finite values.
        """
        values = self._single_values(cfg) if cfg else self._zero_values
        if clamp is not None:
            rows = values[None].copy()
            self._resolve(rows, clamp)
            values = rows[0]
        poses = self._link_poses(values)
        # One row per link by construction; strict=True would cost ~2 us of a ~45 us call.
        return dict(zip(self.link_names, poses, strict=False))

    def _link_poses(self, values: Array) -> Array:
        """(L, 4, 4) link poses in the root frame for one variable vector (V,), file order.

        About 15 numpy calls whatever the model size: one product gives every frame's pose in
        its parent frame, ceil(log2(depth)) pruned pointer-jumping products compose them, one
        product places the fixed links, one take() orders the rows into a fresh result.
        (Written with few temporaries: at ~1 us per numpy call, Python overhead matters.)
        """
        q = values if self._values_are_q else values[self._slot]
        factors = self._factor_template.copy()  # rows 1..M: [1, cos q, sin q, q]
        np.cos(q, factors[1:, 1])
        np.sin(q, factors[1:, 2])
        factors[1:, 3] = q
        work = np.empty(self._work_shape)
        # Row 0: the root (identity); rows 1..M: frame poses in their parent frame.
        np.matmul(factors[:, None, :], self._frame_basis, work[self._frame_rows].reshape(-1, 1, 16))
        for i in self._non_scalar:
            start = int(self._slot[i])
            joint = self.moving_joints[i]
            work[i + 1] = self._T_frame_parent[i] @ joint.child_pose(
                values[start : start + self._size[i]]
            )
        matmul = np.matmul
        for ancestors, source, target in self._frame_jumps:
            matmul(work.take(ancestors, 0), work[source], work[target])
        if self._fixed_links:
            matmul(
                work.take(self._fixed_anchor_rows, 0), self._T_anchor_fixed, work[self._fixed_rows]
            )
        poses: Array = work.take(self._row_of_link, 0)
        return poses

    def _compose(self, work: Array) -> None:
        """Pointer jumping and fixed links on work rows (R, N, 4, 4), as in _link_poses.

        Rows 1..M hold every frame's pose in its parent frame, row 0 the identity.
        """
        for ancestors, source, target in self._frame_jumps:
            np.matmul(work.take(ancestors, 0), work[source], work[target])
        if self._fixed_links:
            np.matmul(
                work.take(self._fixed_anchor_rows, 0),
                self._T_anchor_fixed[:, None],
                work[self._fixed_rows],
            )

    def _link_poses_few(self, values: Array) -> Array:
        """(L, N, 4, 4) link poses for a few variable rows (N, V), as ``_link_poses``."""
        rows = values.shape[0]
        count = len(self.moving_joints)
        q = values[:, self._slot].T  # (M, N)
        factors = np.empty((count, rows, 1, 4))
        factors[:, :, 0, 0] = 1.0
        factors[:, :, 0, 1] = np.cos(q)
        factors[:, :, 0, 2] = np.sin(q)
        factors[:, :, 0, 3] = q
        work = np.empty((self._work_rows, rows, 4, 4))
        work[0] = _IDENTITY
        local = work[1 : count + 1]
        np.matmul(factors, self._fk_basis[:, None], out=local.reshape(count, rows, 1, 16))
        for i in self._non_scalar:
            start = int(self._slot[i])
            joint = self.moving_joints[i]
            motion = _motion_batch(joint, values[:, start : start + self._size[i]])
            front = self._T_frame_parent[i] @ joint.origin
            local[i] = front @ motion @ joint.child_offset
        self._compose(work)
        poses: Array = work.take(self._row_of_link, axis=0)
        return poses

    def link_fk_batch(self, cfgs: Mapping[Any, Any], clamp: str | None = None) -> dict[str, Array]:
        """Every link's poses (N, 4, 4) in the root frame for N configurations.

        ``cfgs`` maps joint names to arrays with a leading batch axis N (N values for 1-DOF
        joints, (N, ...) of ``Joint.motion``'s shapes for the others).
        """
        values = self._batch_values_fast(cfgs)
        if values is None:
            values = self._values_from_cfg(cfgs, self._batch_size(cfgs))
        self._resolve(values, clamp)
        if values.shape[0] == 1:
            poses = self._link_poses(values[0])[:, None]
        elif values.shape[0] <= _FEW_CONFIGURATIONS:
            poses = self._link_poses_few(values)
        else:
            poses = self._link_poses_batch(values)
        return dict(zip(self.link_names, poses, strict=True))

    def _batch_values_fast(self, cfgs: Mapping[Any, Any]) -> Array | None:
        """(N, V) variable rows (not resolved) of a batched cfg of 1-D number arrays, written
        by the cached plan of ``_cfg_plan``; None when the cfg needs the general path (other
        names or shapes, non-finite or huge values). The rows are a view of a (V, N) array,
        so that each variable is contiguous for batched FK."""
        keys = tuple(cfgs)
        plan = self._cfg_plans.get(keys, _NOT_CACHED)
        if plan is _NOT_CACHED:
            plan = self._cfg_plan(keys)
        if plan is None:
            return None
        try:
            given = np.array(list(cfgs.values()), dtype=np.float64)  # (K, N)
        except (TypeError, ValueError):  # ragged batches, values that are not numbers
            return None
        if given.ndim != 2 or given.shape[1] == 0:
            return None
        if not np.maximum.reduce(np.abs(given), axis=None) < plan.bound:  # also nan and inf
            return None
        columns = np.empty((self._num_values, given.shape[1]))
        columns[:] = self._zero_values[:, None]
        columns[plan.slots] = given[plan.columns]
        values: Array = columns.T
        return values

    def _link_poses_batch(self, values: Array) -> Array:
        """(L, N, 4, 4) link poses for variable rows (N, V), one allocation for all links.

        Configurations go in chunks of ``_BATCH_CHUNK``, so that a chunk's factors and (n, 4, 4)
        stacks stay in cache while every link of the chunk is computed.
        """
        rows = values.shape[0]
        # One variable per contiguous row (no copy when values is already a transposed view):
        # reading a column of (N, V) rows would touch a new cache line per configuration.
        columns = np.ascontiguousarray(values.T)
        poses = np.empty((len(self.link_names), rows, 4, 4))
        for begin in range(0, rows, _BATCH_CHUNK):
            end = min(begin + _BATCH_CHUNK, rows)
            self._link_poses_chunk(columns[:, begin:end], poses[:, begin:end])
        return poses

    def _link_poses_chunk(self, columns: Array, poses: Array) -> None:
        """Fill ``poses`` (L, n, 4, 4) from variables (V, n): joint by joint, then fixed links."""
        rows = columns.shape[1]
        factors = _batch_factors(columns[self._slot])  # (M, 4, n), for 1-DOF joints
        local = np.empty((rows, 16))
        for i, joint in enumerate(self.moving_joints):
            parent = int(self._parent_frame[i])
            child = int(self._frame_link[i + 1])
            start = int(self._slot[i])
            target = poses[child].reshape(rows, 16) if parent == 0 else local
            if self._is_scalar[i]:
                np.matmul(factors[i].T, self._fk_basis[i], out=target)
            else:
                motion = _motion_batch(joint, columns[start : start + self._size[i]].T)
                front = self._T_frame_parent[i] @ joint.origin
                target[:] = (front @ motion @ joint.child_offset).reshape(rows, 16)
            if parent != 0:
                np.matmul(
                    poses[self._frame_link[parent]], local.reshape(rows, 4, 4), out=poses[child]
                )
        poses[self._frame_link[0]] = _IDENTITY
        for k in self._fixed_links:
            frame = int(self._link_frame[k])
            if frame == 0:
                poses[k] = self._T_frame_link[k]
            else:
                source = poses[self._frame_link[frame]].reshape(rows * 4, 4)
                np.matmul(source, self._T_frame_link[k], out=poses[k].reshape(rows * 4, 4))


def _batch_factors(q: Array) -> Array:
    """(M, 4, N) factor rows [1, cos q, sin q, q] of joint values q (M, N) in rad or m.

    cos and sin come from t = tan(q / 2): cos q = (1 - t^2) / (1 + t^2), sin q = 2 t / (1 + t^2)
    (within 2.3e-16 of np.cos and np.sin, also at q = pi where t is about 1.6e16, and for
    |q| up to 1e12). numpy vectorises float64 tan but not sin and cos on every build: here
    (numpy 2.4, x86-64) one tan and five arithmetic passes cost a fifth of np.cos + np.sin.
    """
    factors = np.empty((q.shape[0], 4, q.shape[1]))
    factors[:, 0] = 1.0
    factors[:, 3] = q
    t = np.multiply(q, 0.5)
    np.tan(t, out=t)
    t_squared = t * t
    scale = np.add(t_squared, 1.0)
    np.reciprocal(scale, out=scale)
    np.subtract(1.0, t_squared, out=factors[:, 1])
    factors[:, 1] *= scale
    np.multiply(t, scale, out=factors[:, 2])
    factors[:, 2] *= 2.0
    return factors


def _shape_of(value: Any) -> tuple[int, ...]:
    """The array shape of a cfg value; cheap for numpy arrays (np.shape costs a conversion)."""
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else tuple(np.shape(value))


def _values_of_joint(joint: Joint, array: Array) -> Array:
    """A multi-DOF joint's variable rows (N, size) from cfg values (N, ...) of motion's shapes.

    Raises ValueError for a shape the joint type does not take or a zero quaternion.
    """
    kind = joint.joint_type
    shape = array.shape[1:]
    rows = array.shape[0]
    if kind == "planar" and shape in ((2,), (3,)):
        out = np.zeros((rows, 3))
        out[:, : shape[0]] = array
        return out
    if kind in ("revolute2", "universal") and shape == (2,):
        return array
    if kind == "floating":
        out = np.zeros((rows, 7))
        if shape == (7,):
            out[:] = array
            out[:, 3:] = _unit_quaternions(joint, array[:, 3:])
            return out
        if shape == (6,):
            out[:, :3] = array[:, :3]
            out[:, 3:] = matrices_to_quaternions(rpy_to_matrices(array[:, 3:]))
            return out
        if shape == (4, 4):
            out[:, :3] = array[:, :3, 3]
            out[:, 3:] = matrices_to_quaternions(array[:, :3, :3])
            return out
    if kind == "ball":
        if shape == (4,):
            return _unit_quaternions(joint, array)
        if shape == (3,):
            return matrices_to_quaternions(rpy_to_matrices(array))
        if shape == (3, 3):
            return matrices_to_quaternions(array)
    raise ValueError(f"joint {joint.name!r}: a {kind} joint does not take values of shape {shape}")


def _unit_quaternions(joint: Joint, quaternions: Array) -> Array:
    """Quaternion rows (N, 4) normalised; ValueError for a zero or non-finite one."""
    largest = np.max(np.abs(quaternions), axis=1, keepdims=True)
    if np.any(~((largest > 0.0) & (largest < np.inf))):
        raise ValueError(f"joint {joint.name!r}: quaternion of zero or non-finite norm")
    scaled = quaternions / largest
    unit: Array = scaled / np.linalg.norm(scaled, axis=1, keepdims=True)
    return unit


def _motion_batch(joint: Joint, values: Array) -> Array:
    """Motion poses (N, 4, 4) of a multi-DOF joint for variable rows (N, size)."""
    rows = values.shape[0]
    motion = np.zeros((rows, 4, 4))
    motion[:, 3, 3] = 1.0
    kind = joint.joint_type
    if kind == "planar":
        basis = plane_basis(joint.axis)
        motion[:, :3, 3] = values[:, :1] * basis[:, 0] + values[:, 1:2] * basis[:, 1]
        motion[:, :3, :3] = axis_angles_to_matrices(basis[:, 2], values[:, 2])
    elif kind == "floating":
        motion[:, :3, 3] = values[:, :3]
        motion[:, :3, :3] = quaternions_to_matrices(values[:, 3:7])
    elif kind == "ball":
        motion[:, :3, :3] = quaternions_to_matrices(values)
    else:  # revolute2, universal
        axis2 = joint.axis2 if joint.axis2 is not None else np.array([0.0, 1.0, 0.0])
        motion[:, :3, :3] = axis_angles_to_matrices(
            joint.axis, values[:, 0]
        ) @ axis_angles_to_matrices(axis2, values[:, 1])
    return motion
