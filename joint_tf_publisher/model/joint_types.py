"""Joint types: one table entry per type, the one place that says what a joint type is.

An entry (``JointType``) holds a type's values and their JointState names, its values at zero,
which limit clamps each value, the cfg shapes it takes, its motion (a ``MotionForm`` and the
joint's constant terms), how a bare joint name or a MultiDOFJointState transform sets it.
Everything else is derived from the entry: here ``Joint.motion``, ``child_pose``,
``variable_names``, ``variable_limits`` and ``is_valid``; in ``kinematics`` the variable
layout, state resolution, the FK bases and the closed-form transforms. A new joint type is one
entry in ``JOINT_TYPES`` (with a new ``MotionForm`` only if no form fits its motion).

Units: radians, metres, quaternion components (x, y, z, w). Axes are unit vectors in the
joint frame.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Literal, Protocol

import numpy as np

from ..arrays import Array
from ..transforms import (
    matrices_to_quaternions,
    plane_basis,
    rpy_to_matrices,
)
from . import motion_forms as forms
from .motion_forms import MotionForm

#: Which written limit clamps a value: ``<limit>`` (hard, or soft with the safety controller)
#: or ``<axis2><limit>`` (SDFormat's second axis: no soft limits).
LimitSource = Literal["limit", "limit2"]
#: The second axis of a two-axis joint whose ``<axis2>`` is absent (SDFormat's default).
DEFAULT_AXIS2 = np.array([0.0, 1.0, 0.0])


class JointGeometry(Protocol):
    """What a table entry reads of a joint (``model.Joint`` has it)."""

    @property
    def name(self) -> str: ...

    @property
    def axis(self) -> Array: ...

    @property
    def axis2(self) -> Array | None: ...

    @property
    def screw_pitch(self) -> float: ...


@dataclass(frozen=True)
class BareName:
    """How the joint's bare name in a JointState sets a joint with several values.

    Gazebo's ros_gz bridge publishes each joint under its bare name with its first axis's
    position. ``variables`` are the values one bare value sets; ``values`` turns bare values
    (R,) into rows (R, len(variables)); None: the bare value is the one value itself.
    """

    variables: tuple[int, ...]
    values: Callable[[Array], Array] | None = None


@dataclass(frozen=True)
class JointType:
    """One joint type: see the module docstring; ``JOINT_TYPES`` holds them all."""

    name: str
    form: MotionForm
    #: JointState names of the values: "" is the joint's own name, else ``<joint>/<suffix>``
    #: (MoveIt's names for multi-DOF joints).
    variables: tuple[str, ...]
    #: The values at zero configuration (identity quaternion where there is one).
    identity: tuple[float, ...]
    #: Degrees of freedom of the motion (a quaternion's four values are three).
    dofs: int
    #: Per value: the limit that clamps it, or None (never clamped).
    limits: tuple[LimitSource | None, ...]
    #: The shapes a cfg value of one configuration may have (``()``: one number).
    cfg_shapes: tuple[tuple[int, ...], ...]
    #: Values (N, size) from cfg values (N, *shape); ValueError naming the joint otherwise.
    values_from_cfg: Callable[[str, Array], Array]
    #: (F, 4, 4): motion = sum_k pose_features[k] * terms[k] (``motion_forms``).
    motion_terms: Callable[[JointGeometry], Array]
    #: (T, 4): motion quaternion = sum_k transform_features[k] * terms[k].
    quaternion_terms: Callable[[JointGeometry], Array]
    #: Where a unit quaternion (x, y, z, w) starts among the values, if there is one.
    quaternion_at: int | None = None
    bare_name: BareName | None = None
    #: Values (size,) from a MultiDOFJointState transform: translation (3,) in metres and
    #: quaternion (4,); None where the type takes no such transform.
    from_transform: Callable[[JointGeometry, Array, Array], Array] | None = None

    @property
    def size(self) -> int:
        """Number of values."""
        return self.form.size

    @property
    def single_value(self) -> bool:
        """One value: the joint can lead or follow a ``<mimic>``."""
        return self.form.size == 1 and self.quaternion_at is None

    def variable_names(self, joint_name: str) -> list[str]:
        """The JointState names of a joint's values."""
        return [joint_name if not s else f"{joint_name}/{s}" for s in self.variables]

    def motion(self, joint: JointGeometry, values: Array) -> Array:
        """Motion poses (N, 4, 4) of ``joint`` at values (N, size), from the form and terms."""
        features = self.form.pose_features(values.T, values.shape[0])
        terms = self.motion_terms(joint).reshape(-1, 16)
        motions: Array = (features @ terms).reshape(-1, 4, 4)
        return motions


# -- cfg shapes ----------------------------------------------------------------------------


def cfg_error(name: str, kind: JointType, shape: tuple[int, ...]) -> ValueError:
    """The error for a cfg value of a shape ``kind`` does not take (per configuration)."""
    if kind.cfg_shapes == ((),):
        accepted = "one number"
    else:
        shapes = [str(s) for s in kind.cfg_shapes]
        accepted = "shape " + " or ".join(
            [", ".join(shapes[:-1]), shapes[-1]] if shapes[1:] else shapes
        )
    return ValueError(f"joint {name!r}: a {kind.name} joint takes {accepted}, got shape {shape}")


def unit_quaternions(name: str, quaternions: Array) -> Array:
    """Quaternion rows (N, 4) normalised (scaled by their largest component first, so tiny and
    huge ones keep their digits); ValueError naming the joint for a zero or non-finite one."""
    largest = np.max(np.abs(quaternions), axis=1, keepdims=True)
    if not np.all((largest > 0.0) & (largest < np.inf)):
        raise ValueError(f"joint {name!r}: quaternion of zero or non-finite norm")
    scaled = quaternions / largest
    unit: Array = scaled / np.linalg.norm(scaled, axis=1, keepdims=True)
    return unit


def _no_values(name: str, array: Array) -> Array:
    return np.zeros((array.shape[0], 0))


def _one_number(kind: str) -> Callable[[str, Array], Array]:
    def values(name: str, array: Array) -> Array:
        if int(np.prod(array.shape[1:])) != 1:
            raise cfg_error(name, JOINT_TYPES[kind], array.shape[1:])
        return array.reshape(-1, 1)

    return values


def _two_axis_values(kind: str) -> Callable[[str, Array], Array]:
    def values(name: str, array: Array) -> Array:
        if array.shape[1:] != (2,):
            raise cfg_error(name, JOINT_TYPES[kind], array.shape[1:])
        return array

    return values


def _planar_values(name: str, array: Array) -> Array:
    """(2,) x, y or (3,) x, y, theta."""
    shape = array.shape[1:]
    if shape not in ((2,), (3,)):
        raise cfg_error(name, JOINT_TYPES["planar"], shape)
    out = np.zeros((array.shape[0], 3))
    out[:, : shape[0]] = array
    return out


def _floating_values(name: str, array: Array) -> Array:
    """(7,) x y z qx qy qz qw, (6,) x y z roll pitch yaw, or a (4, 4) pose."""
    shape = array.shape[1:]
    out = np.zeros((array.shape[0], 7))
    if shape == (7,):
        out[:, :3] = array[:, :3]
        out[:, 3:] = unit_quaternions(name, array[:, 3:])
    elif shape == (6,):
        out[:, :3] = array[:, :3]
        out[:, 3:] = matrices_to_quaternions(rpy_to_matrices(array[:, 3:]))
    elif shape == (4, 4):
        out[:, :3] = array[:, :3, 3]
        out[:, 3:] = matrices_to_quaternions(array[:, :3, :3])
    else:
        raise cfg_error(name, JOINT_TYPES["floating"], shape)
    return out


def _ball_values(name: str, array: Array) -> Array:
    """(4,) qx qy qz qw, (3,) roll pitch yaw, or a (3, 3) rotation."""
    shape = array.shape[1:]
    if shape == (4,):
        return unit_quaternions(name, array)
    if shape == (3,):
        return matrices_to_quaternions(rpy_to_matrices(array))
    if shape == (3, 3):
        return matrices_to_quaternions(array)
    raise cfg_error(name, JOINT_TYPES["ball"], shape)


# -- transforms and bare names ---------------------------------------------------------------


def _planar_from_transform(joint: JointGeometry, translation: Array, quaternion: Array) -> Array:
    """x, y along the plane basis; theta the rotation angle about the normal."""
    plane = plane_basis(joint.axis)
    theta = 2.0 * np.arctan2(quaternion[:3] @ plane[:, 2], quaternion[3])
    return np.array([translation @ plane[:, 0], translation @ plane[:, 1], theta])


def _floating_from_transform(joint: JointGeometry, translation: Array, quaternion: Array) -> Array:
    return np.concatenate((translation, quaternion))


def _ball_from_transform(joint: JointGeometry, translation: Array, quaternion: Array) -> Array:
    return np.array(quaternion, dtype=np.float64)


def _rotation_about_x(angles: Array) -> Array:
    """(R, 4) quaternions of rotations by ``angles`` (R,) rad about the joint frame's x axis.

    Gazebo's ball joint has three values, the components of its rotation vector (the physics
    engines' exponential coordinates), and its bridge publishes the first: the rotation vector
    (v, 0, 0), a rotation by v about x.
    """
    half = np.asarray(angles, dtype=np.float64) * 0.5
    out = np.zeros((half.shape[0], 4))
    out[:, 0] = np.sin(half)
    out[:, 3] = np.cos(half)
    return out


# -- the table -------------------------------------------------------------------------------


def _axis2(joint: JointGeometry) -> Array:
    return joint.axis2 if joint.axis2 is not None else DEFAULT_AXIS2


def _screw_entry(
    name: str,
    rotation: float,
    translation: Callable[[JointGeometry], float],
    limits: tuple[LimitSource | None, ...],
) -> JointType:
    """A one-value joint: rotation ``rotation * q`` about the axis and ``translation * q``
    along it."""
    return JointType(
        name=name,
        form=forms.SCREW,
        variables=("",),
        identity=(0.0,),
        dofs=1,
        limits=limits,
        cfg_shapes=((),),
        values_from_cfg=_one_number(name),
        motion_terms=lambda j: forms.screw_terms(j.axis, rotation, translation(j)),
        quaternion_terms=lambda j: forms.screw_quaternion_terms(j.axis, bool(rotation)),
    )


def _two_axis_entry(name: str) -> JointType:
    return JointType(
        name=name,
        form=forms.TWO_AXIS,
        variables=("axis1", "axis2"),
        identity=(0.0, 0.0),
        dofs=2,
        limits=("limit", "limit2"),
        cfg_shapes=((2,),),
        values_from_cfg=_two_axis_values(name),
        motion_terms=lambda j: forms.two_axis_terms(j.axis, _axis2(j)),
        quaternion_terms=lambda j: forms.two_axis_quaternion_terms(j.axis, _axis2(j)),
        bare_name=BareName((0,)),
    )


_FLOATING_VARIABLES = ("trans_x", "trans_y", "trans_z", "rot_x", "rot_y", "rot_z", "rot_w")

#: Every joint type, in ``Joint.TYPES`` order: URDF's six, then SDFormat's.
JOINT_TYPES: dict[str, JointType] = {
    entry.name: entry
    for entry in (
        JointType(
            name="fixed",
            form=forms.FIXED,
            variables=(),
            identity=(),
            dofs=0,
            limits=(),
            cfg_shapes=(),
            values_from_cfg=_no_values,
            motion_terms=lambda j: forms.fixed_terms(),
            quaternion_terms=lambda j: forms.fixed_quaternion_terms(),
        ),
        _screw_entry("prismatic", 0.0, lambda j: 1.0, ("limit",)),
        _screw_entry("revolute", 1.0, lambda j: 0.0, ("limit",)),
        _screw_entry("continuous", 1.0, lambda j: 0.0, (None,)),
        JointType(
            name="floating",
            form=forms.FLOATING,
            variables=_FLOATING_VARIABLES,
            identity=(0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0),
            dofs=6,
            limits=(None,) * 7,
            cfg_shapes=((6,), (7,), (4, 4)),
            values_from_cfg=_floating_values,
            motion_terms=lambda j: forms.floating_terms(),
            quaternion_terms=lambda j: forms.floating_quaternion_terms(),
            quaternion_at=3,
            from_transform=_floating_from_transform,
        ),
        JointType(
            name="planar",
            form=forms.PLANAR,
            variables=("x", "y", "theta"),
            identity=(0.0, 0.0, 0.0),
            dofs=3,
            limits=(None,) * 3,
            cfg_shapes=((2,), (3,)),
            values_from_cfg=_planar_values,
            motion_terms=lambda j: forms.planar_terms(plane_basis(j.axis)),
            quaternion_terms=lambda j: forms.planar_quaternion_terms(plane_basis(j.axis)),
            from_transform=_planar_from_transform,
        ),
        # screw_pitch: metres of travel along the axis per radian.
        _screw_entry("screw", 1.0, lambda j: j.screw_pitch, ("limit",)),
        _screw_entry("gearbox", 1.0, lambda j: 0.0, ("limit",)),
        _two_axis_entry("revolute2"),
        _two_axis_entry("universal"),
        JointType(
            name="ball",
            form=forms.BALL,
            variables=("rot_x", "rot_y", "rot_z", "rot_w"),
            identity=(0.0, 0.0, 0.0, 1.0),
            dofs=3,
            limits=(None,) * 4,
            cfg_shapes=((4,), (3,), (3, 3)),
            values_from_cfg=_ball_values,
            motion_terms=lambda j: forms.ball_terms(),
            quaternion_terms=lambda j: forms.ball_quaternion_terms(),
            quaternion_at=0,
            bare_name=BareName((0, 1, 2, 3), _rotation_about_x),
            from_transform=_ball_from_transform,
        ),
    )
}

#: Types whose value is one number: they can lead or follow a ``<mimic>``.
SINGLE_VALUE_TYPES = frozenset(name for name, kind in JOINT_TYPES.items() if kind.single_value)
#: Types with a second axis (``<axis2>``, limited by ``<axis2><limit>``).
TWO_AXIS_TYPES = frozenset(name for name, kind in JOINT_TYPES.items() if "limit2" in kind.limits)
