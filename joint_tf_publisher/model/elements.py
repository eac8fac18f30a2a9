"""The robot model: plain dataclasses shared by the URDF and SDF parsers.

Frames: a joint's ``origin`` is the pose of the joint frame in the parent link frame at zero
configuration; ``child_offset`` is the pose of the child link frame in the joint frame (identity
for URDF, where the joint frame is the child link frame; SDF joints may sit elsewhere on the
child). The motion of the joint acts in the joint frame, so

    T_parent_child(q) = origin @ motion(q) @ child_offset

Units: metres and radians. Axes are unit vectors in the joint frame.

This module imports numpy only; parsing lives in ``description``, compiled forward
kinematics in ``kinematics``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
from numpy.typing import ArrayLike

from ..arrays import Array
from .clamp_mode import ClampMode
from .joint_types import JOINT_TYPES
from .loops import LoopJoint


@dataclass
class Limit:
    """``<limit>``: position range (rad or m), effort (N or Nm), velocity (rad/s or m/s).

    ``has_position_range`` is False where the file wrote neither ``lower`` nor ``upper``
    (URDF 1.0/1.1): such a joint is not clamped (docs/joint-semantics.md, "Limits in practice").
    """

    effort: float = 0.0
    velocity: float = 0.0
    lower: float = 0.0
    upper: float = 0.0
    acceleration: float | None = None
    deceleration: float | None = None
    jerk: float | None = None
    has_position_range: bool = True


@dataclass
class Dynamics:
    """``<dynamics>``: damping (N*s/m or N*m*s/rad) and static friction (N or N*m).

    ``spring_reference`` (rad or m) and ``spring_stiffness`` come from SDF only.
    """

    damping: float = 0.0
    friction: float = 0.0
    spring_reference: float = 0.0
    spring_stiffness: float = 0.0


@dataclass
class Calibration:
    """``<calibration>``: rising and falling reference positions, each optional."""

    rising: float | None = None
    falling: float | None = None


@dataclass
class Mimic:
    """``<mimic>``: value = multiplier * value(joint) + offset.

    ``line`` is where the ``<mimic>`` element is written, for error messages.
    """

    joint: str
    multiplier: float = 1.0
    offset: float = 0.0
    line: int | None = field(default=None, compare=False)


@dataclass
class SafetyController:
    """``<safety_controller>``: soft position limits (rad or m) and gains.

    ``has_soft_range`` is False where the file wrote neither soft limit: soft clamping then
    uses the hard range instead of the [0, 0] the defaults would give (README, "Joint
    semantics and choices").
    """

    k_velocity: float
    k_position: float = 0.0
    soft_lower_limit: float = 0.0
    soft_upper_limit: float = 0.0
    has_soft_range: bool = True


@dataclass
class Link:
    """A rigid body; only its name matters for transforms."""

    name: str
    line: int | None = None


def _as_pose(value: ArrayLike | None) -> Array:
    if value is None:
        return np.eye(4)
    pose = np.array(value, dtype=np.float64)
    if pose.shape != (4, 4):
        raise ValueError(f"a pose must be a (4, 4) matrix, got shape {pose.shape}")
    return pose


@dataclass(eq=False)
class Joint:
    """A connection between two links, with urdfpy's fields and methods.

    ``joint_type`` is one of ``Joint.TYPES``: URDF's six plus SDFormat's screw, gearbox,
    revolute2, universal and ball. Configuration values (``cfg``) by type:

    - fixed: unused.
    - revolute, continuous, gearbox: float, radians about ``axis``.
    - prismatic: float, metres along ``axis``.
    - screw: float, radians about ``axis``, with ``screw_pitch`` metres of travel along it
      per radian.
    - planar: (2,) x, y in metres in the plane normal to ``axis``, or (3,) x, y, theta with theta
      in radians about ``axis``. The in-plane basis is ``transforms.plane_basis(axis)``.
    - floating: (6,) x y z roll pitch yaw, (7,) x y z qx qy qz qw, or a (4, 4) pose.
    - revolute2, universal: (2,) radians, rotation about ``axis`` then about ``axis2``.
    - ball: (4,) quaternion qx qy qz qw, (3,) roll pitch yaw, or a (3, 3) rotation.

    Each type's semantics (values, limits, motion) is its entry in
    ``model.joint_types.JOINT_TYPES``; the methods below read it.
    """

    TYPES: ClassVar[list[str]] = list(JOINT_TYPES)

    name: str
    joint_type: str
    parent: str
    child: str
    axis: Array = field(default_factory=lambda: np.array([1.0, 0.0, 0.0]))
    origin: Array = field(default_factory=lambda: np.eye(4))
    limit: Limit | None = None
    dynamics: Dynamics | None = None
    safety_controller: SafetyController | None = None
    calibration: Calibration | None = None
    mimic: Mimic | None = None
    # Beyond urdfpy: SDFormat's second axis and its limit, screw pitch, joint->child pose.
    axis2: Array | None = None
    limit2: Limit | None = None
    screw_pitch: float = 0.0
    child_offset: Array = field(default_factory=lambda: np.eye(4))
    line: int | None = None

    def __post_init__(self) -> None:
        if self.joint_type not in self.TYPES:
            raise ValueError(f"joint {self.name!r}: unknown type {self.joint_type!r}")
        self.axis = np.array(self.axis, dtype=np.float64).reshape(3)
        if self.axis2 is not None:
            self.axis2 = np.array(self.axis2, dtype=np.float64).reshape(3)
        self.origin = _as_pose(self.origin)
        self.child_offset = _as_pose(self.child_offset)

    # -- configuration shapes (from the joint-type table, ``model.joint_types``) ------------

    @property
    def num_dofs(self) -> int:
        """Degrees of freedom of the joint's motion (mimic and gearbox joints still count 1)."""
        return JOINT_TYPES[self.joint_type].dofs

    @property
    def variable_names(self) -> list[str]:
        """JointState names of this joint's values: MoveIt's names for multi-DOF joints."""
        return JOINT_TYPES[self.joint_type].variable_names(self.name)

    # -- urdfpy API --------------------------------------------------------------------------

    def motion(self, cfg: Any) -> Array:
        """Pose (4, 4) of the moved joint frame in the joint frame at zero, for ``cfg``.

        Raises ValueError for a cfg of a shape this joint type does not take.
        """
        kind = JOINT_TYPES[self.joint_type]
        if kind.size == 0:
            return np.eye(4)
        values = kind.values_from_cfg(self.name, np.asarray(cfg, dtype=np.float64)[None])
        motion: Array = kind.motion(self, values)[0]
        return motion

    def child_pose(self, cfg: Any = None) -> Array:
        """Pose (4, 4) of the child link in the parent link frame at configuration ``cfg``.

        ``cfg=None`` gives the pose at zero configuration (the joint's origin, for URDF).
        """
        if cfg is None:
            return self.origin @ self.child_offset
        return self.origin @ self.motion(cfg) @ self.child_offset

    get_child_pose = child_pose

    def hard_limits(self) -> tuple[float, float] | None:
        """The [lower, upper] clamp range (rad or m) of the joint's first (or only) value from
        ``<limit>``, or None if that value is not clamped.

        Only revolute, prismatic, screw and gearbox joints, and the first axis of revolute2 and
        universal joints, with a written, ordered range clamp.
        """
        if JOINT_TYPES[self.joint_type].limits[:1] != ("limit",):
            return None
        return _position_range(self.limit)

    def soft_limits(self) -> tuple[float, float] | None:
        """The hard range intersected with ``<safety_controller>``'s soft range, if any.

        Where the intersection is empty, the hard range is used (a warning is given at load).
        """
        hard = self.hard_limits()
        if hard is None or self.safety_controller is None:
            return hard
        if not self.safety_controller.has_soft_range:
            return hard
        sc = self.safety_controller
        lower, upper = max(hard[0], sc.soft_lower_limit), min(hard[1], sc.soft_upper_limit)
        return (lower, upper) if lower <= upper else hard

    def variable_limits(
        self, clamp: ClampMode | str = ClampMode.HARD
    ) -> list[tuple[float, float] | None]:
        """The clamp range (rad or m) of each value, in ``variable_names`` order; None where a
        value is not clamped.

        ``clamp`` is ``ClampMode.HARD`` or ``SOFT`` (or "hard" or "soft"). A value clamped by
        ``<limit>`` has ``hard_limits()`` or ``soft_limits()``; the second value of a revolute2
        or universal joint has the range of ``limit2`` (``<axis2><limit>``) in both modes, as
        SDFormat gives no soft limits. Every other value (continuous, planar, floating, ball)
        is not clamped. Raises ValueError for another mode.
        """
        if clamp not in (ClampMode.HARD, ClampMode.SOFT, "hard", "soft"):
            raise ValueError(f"clamp must be 'hard' or 'soft', got {clamp!r}")
        mode = ClampMode.of(clamp)
        ranges: list[tuple[float, float] | None] = []
        for source in JOINT_TYPES[self.joint_type].limits:
            if source == "limit":
                ranges.append(self.hard_limits() if mode is ClampMode.HARD else self.soft_limits())
            elif source == "limit2":
                ranges.append(_position_range(self.limit2))
            else:
                ranges.append(None)
        return ranges

    def is_valid(self, cfg: Any) -> bool:
        """True if ``cfg`` has this joint type's shape, is finite, and each value lies in its
        hard limits (``variable_limits``: both axes of a revolute2 or universal joint)."""
        kind = JOINT_TYPES[self.joint_type]
        if kind.size == 0:
            return True
        try:
            array = np.asarray(cfg, dtype=np.float64)
            if not np.all(np.isfinite(array)):
                return False
            values = kind.values_from_cfg(self.name, array[None])[0].tolist()
        except (TypeError, ValueError):
            return False
        return all(
            limits is None or limits[0] <= value <= limits[1]
            for value, limits in zip(values, self.variable_limits(ClampMode.HARD), strict=True)
        )


def _position_range(limit: Limit | None) -> tuple[float, float] | None:
    """``limit``'s [lower, upper] if it has a written, ordered range (else None: unclamped)."""
    if limit is None or not limit.has_position_range or limit.lower > limit.upper:
        return None
    return (limit.lower, limit.upper)


@dataclass(eq=False)
class RobotModel:
    """A robot description as parsed: links and joints in file order, a single root link.

    Plain data: the parsers build it, ``kinematics`` compiles it. Users get the facade
    ``joint_tf_publisher.Robot`` (this class plus loading and forward kinematics).
    ``warnings`` holds the non-fatal oddities found while loading (also logged).
    ``loop_joints`` holds the joints that close kinematic loops (``model.loops``), in file
    order; empty for a tree. ``joints`` is the tree alone.
    """

    name: str
    links: dict[str, Link]
    joints: dict[str, Joint]
    root: str
    source: str = "<string>"
    warnings: list[str] = field(default_factory=list)
    loop_joints: tuple[LoopJoint, ...] = ()
