"""Motion forms: how a family of joint types moves, as constant terms weighted by features.

The motion of a joint, the pose (4, 4) of its moved frame in its frame at zero, is linear in a
few features of its values v (radians, metres, quaternion components):

    motion(v) = sum_k pose_features(v)[k] * M[k]

The features are shared by a family of joint types, the *form* (``SCREW``: revolute,
continuous, prismatic, screw and gearbox joints; ``TWO_AXIS``; ``PLANAR``; ``FLOATING``;
``BALL``; ``FIXED``); they depend on the values only. The terms ``M`` (F, 4, 4) are constants
of one joint (its axis, pitch or plane), built by its entry in ``joint_types``.

The unit quaternion (x, y, z, w) of the motion's rotation is linear in the *transform
features*, which hold the pose features too (at ``pose_in_transform``):

    quaternion(v) = sum_k transform_features(v)[k] * Q[k]

so one product gives a joint's translation and quaternion at once (``kinematics``).

Any motion fits this shape: its 16 entries can serve as features with unit matrices as
terms. Few, cheap features make the hot paths fast: one matrix product per form.

Feature functions work on many rows at once (one row per joint and configuration): the
values come variable by variable, ``variables[k]`` (R,) the k-th value of every row (an array
(size, R) or a tuple of (R,) arrays, so that the hot paths pass a gathered vector without a
reshape), and the features go into ``out`` (R, F), which may be a strided view. Pose feature 0
is the constant 1, set by the caller (single FK keeps it in a template): pose fillers write
features 1 to F - 1. Transform fillers write every feature.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ..arrays import Array
from ..transforms import ROTATION_FORM, quaternion_multiply

#: The values of R rows, variable by variable: ``variables[k]`` (R,) is value k of every row.
Variables = Array | Sequence[Array]
#: Fills ``out`` (R, F) with the features of ``variables``.
FeatureFiller = Callable[[Variables, Array], None]
#: The features of ``variables`` at the given indices, each (R,).
FeaturePicker = Callable[[Variables, Sequence[int]], list[Array]]

#: From this many rows on, cos and sin come from one tan (see ``cos_sin``).
TAN_HALF_ANGLE_FROM = 256


@dataclass(frozen=True)
class MotionForm:
    """The features of one family of joint types (see the module docstring)."""

    name: str
    #: Number of values of a joint of this form.
    size: int
    pose_feature_count: int
    transform_feature_count: int
    #: Index in the transform features of each pose feature.
    pose_in_transform: tuple[int, ...]
    fill_pose_features: FeatureFiller
    fill_transform_features: FeatureFiller
    #: Some transform features alone, by index (each (R,)); None: compute them all.
    some_transform_features: FeaturePicker | None = None
    #: (cos index, sin index, scale): transform features cos(scale q) and sin(scale q) of
    #: the form's first value q, which a caller may take as one exp(i scale q).
    trigonometric_pairs: tuple[tuple[int, int, float], ...] = ()

    def pose_features(self, variables: Variables, count: int) -> Array:
        """(R, F) pose features of ``count`` rows of values, given variable by variable."""
        out = np.empty((count, self.pose_feature_count))
        out[:, 0] = 1.0
        self.fill_pose_features(variables, out)
        return out

    def transform_features(self, variables: Variables, count: int) -> Array:
        """(R, T) transform features of ``count`` rows of values, given variable by variable."""
        out = np.empty((count, self.transform_feature_count))
        self.fill_transform_features(variables, out)
        return out

    def transform_features_at(
        self, variables: Variables, count: int, indices: Sequence[int]
    ) -> list[Array]:
        """Transform features ``indices`` alone, each (R,): what a caller that needs a few
        of them computes (a URDF revolute joint's transform needs 2 of the screw form's 6)."""
        if self.some_transform_features is not None:
            return self.some_transform_features(variables, indices)
        features = np.empty((self.transform_feature_count, count))
        self.fill_transform_features(variables, features.T)
        return [features[k] for k in indices]


def cos_sin(angles: Array, cos_out: Array, sin_out: Array) -> None:
    """cos and sin of ``angles`` (radians) into the two outputs (same shape).

    Many angles go through t = tan(q / 2): cos q = (1 - t^2) / (1 + t^2), sin q = 2 t / (1 + t^2)
    (within 2.3e-16 of np.cos and np.sin, also at q = pi where t is about 1.6e16, and for |q|
    up to 1e12). numpy vectorises float64 tan but not sin and cos on every build: one tan and
    five arithmetic passes cost a fifth of np.cos + np.sin on long arrays.
    """
    if angles.size < TAN_HALF_ANGLE_FROM:
        np.cos(angles, out=cos_out)
        np.sin(angles, out=sin_out)
        return
    t = np.multiply(angles, 0.5)
    np.tan(t, out=t)
    t_squared = t * t
    scale = np.add(t_squared, 1.0)
    np.reciprocal(scale, out=scale)
    np.subtract(1.0, t_squared, out=cos_out)
    cos_out *= scale
    np.multiply(t, scale, out=sin_out)
    sin_out *= 2.0


def unit_quaternion_rows(variables: Variables) -> Array:
    """(R, 4) unit quaternions of the variables x, y, z, w (each (R,)), divided by their
    norms (the caller keeps them away from zero)."""
    quaternions = np.stack(list(variables), axis=1)
    norms = np.sqrt(np.add.reduce(quaternions * quaternions, axis=1))
    unit: Array = quaternions / norms[:, None]
    return unit


def _quadratic(quaternions: Array) -> Array:
    """(R, 16) products q_a q_b (row-major in a, b) of unit quaternion rows (R, 4)."""
    products: Array = (quaternions[:, :, None] * quaternions[:, None, :]).reshape(-1, 16)
    return products


# -- fixed: no values; features [1] ------------------------------------------------------------


def _fill_nothing(variables: Variables, out: Array) -> None:
    """Pose features of a fixed joint: only the constant 1, which the caller sets."""


def _fill_constant(variables: Variables, out: Array) -> None:
    out[:, 0] = 1.0


FIXED = MotionForm("fixed", 0, 1, 1, (0,), _fill_nothing, _fill_constant)


# -- screw: one value q; pose [1, cos q, sin q, q] ----------------------------------------------


def _fill_screw_pose(variables: Variables, out: Array) -> None:
    q = variables[0]
    if q.size < TAN_HALF_ANGLE_FROM:  # cos_sin, inlined: the hot path of single FK
        np.cos(q, out[:, 1])
        np.sin(q, out[:, 2])
    else:
        cos_sin(q, out[:, 1], out[:, 2])
    out[:, 3] = q


def _screw_transform_features_at(variables: Variables, indices: Sequence[int]) -> list[Array]:
    """The screw form's transform features at ``indices``, each (R,), computed alone:
    [cos q, cos q/2, sin q, sin q/2, 1, q] (the cos/sin pairs are its
    ``trigonometric_pairs``)."""
    q = variables[0]
    half = q * 0.5 if 1 in indices or 3 in indices else q
    features: list[Array] = []
    for k in indices:
        angle = half if k in (1, 3) else q
        if k in (0, 1):
            features.append(np.cos(angle))
        elif k in (2, 3):
            features.append(np.sin(angle))
        else:
            features.append(np.ones_like(q) if k == 4 else np.array(q, dtype=np.float64))
    return features


def _fill_screw_transform(variables: Variables, out: Array) -> None:
    """All six ``_screw_transform_features_at``."""
    for k, feature in enumerate(_screw_transform_features_at(variables, range(6))):
        out[:, k] = feature


SCREW = MotionForm(
    "screw",
    1,
    4,
    6,
    (4, 0, 2, 5),
    _fill_screw_pose,
    _fill_screw_transform,
    _screw_transform_features_at,
    ((0, 2, 1.0), (1, 3, 0.5)),
)


# -- two axes: q1, q2; pose [1, c1, s1] x [1, c2, s2] ------------------------------------------


def _one_cos_sin(angles: Array) -> Array:
    """(R, 3) rows [1, cos q, sin q]."""
    rows = np.empty((angles.shape[0], 3))
    rows[:, 0] = 1.0
    cos_sin(angles, rows[:, 1], rows[:, 2])
    return rows


def _fill_two_axis_pose(variables: Variables, out: Array) -> None:
    first, second = _one_cos_sin(variables[0]), _one_cos_sin(variables[1])
    out[:] = (first[:, :, None] * second[:, None, :]).reshape(-1, 9)


def _fill_two_axis_transform(variables: Variables, out: Array) -> None:
    """Pose features, then [cos, sin](q1/2) x [cos, sin](q2/2)."""
    _fill_two_axis_pose(variables, out[:, :9])
    first_half, second_half = variables[0] * 0.5, variables[1] * 0.5
    first = np.stack((np.cos(first_half), np.sin(first_half)), axis=1)
    second = np.stack((np.cos(second_half), np.sin(second_half)), axis=1)
    out[:, 9:13] = (first[:, :, None] * second[:, None, :]).reshape(-1, 4)


TWO_AXIS = MotionForm(
    "two_axis", 2, 9, 13, tuple(range(9)), _fill_two_axis_pose, _fill_two_axis_transform
)


# -- planar: x, y, theta; pose [1, cos theta, sin theta, x, y] ---------------------------------


def _fill_planar_pose(variables: Variables, out: Array) -> None:
    cos_sin(variables[2], out[:, 1], out[:, 2])
    out[:, 3] = variables[0]
    out[:, 4] = variables[1]


def _fill_planar_transform(variables: Variables, out: Array) -> None:
    """Pose features, then [cos theta/2, sin theta/2]."""
    out[:, 0] = 1.0
    _fill_planar_pose(variables, out[:, :5])
    half = variables[2] * 0.5
    np.cos(half, out=out[:, 5])
    np.sin(half, out=out[:, 6])


PLANAR = MotionForm("planar", 3, 5, 7, tuple(range(5)), _fill_planar_pose, _fill_planar_transform)


# -- floating: x, y, z, qx, qy, qz, qw; pose [1, x, y, z, q q^T] --------------------------------


def _fill_translation(variables: Variables, out: Array) -> None:
    """Features 1, 2, 3: x, y, z (variables 0, 1, 2)."""
    for k in range(3):
        out[:, 1 + k] = variables[k]


def _fill_floating_pose(variables: Variables, out: Array) -> None:
    _fill_translation(variables, out)
    out[:, 4:20] = _quadratic(unit_quaternion_rows(variables[3:7]))


def _fill_floating_transform(variables: Variables, out: Array) -> None:
    """Pose features, then the unit quaternion."""
    quaternions = unit_quaternion_rows(variables[3:7])
    out[:, 0] = 1.0
    _fill_translation(variables, out)
    out[:, 4:20] = _quadratic(quaternions)
    out[:, 20:24] = quaternions


FLOATING = MotionForm(
    "floating", 7, 20, 24, tuple(range(20)), _fill_floating_pose, _fill_floating_transform
)


# -- ball: qx, qy, qz, qw; pose [1, q q^T] -----------------------------------------------------


def _fill_ball_pose(variables: Variables, out: Array) -> None:
    out[:, 1:17] = _quadratic(unit_quaternion_rows(variables[0:4]))


def _fill_ball_transform(variables: Variables, out: Array) -> None:
    """Pose features, then the unit quaternion."""
    quaternions = unit_quaternion_rows(variables[0:4])
    out[:, 0] = 1.0
    out[:, 1:17] = _quadratic(quaternions)
    out[:, 17:21] = quaternions


BALL = MotionForm("ball", 4, 17, 21, tuple(range(17)), _fill_ball_pose, _fill_ball_transform)


# -- terms: the constant matrices joint_types builds from a joint's axes ------------------------


def _skew(vector: Array) -> Array:
    x, y, z = vector
    return np.array([[0.0, -z, y], [z, 0.0, -x], [-y, x, 0.0]])


def rotation_terms(axis: Array) -> Array:
    """(3, 4, 4) terms of a rotation about the unit ``axis`` for features [1, cos, sin].

    Rodrigues: R = a a^T + cos (I - a a^T) + sin [a]x; the constant term holds the
    homogeneous 1.
    """
    terms = np.zeros((3, 4, 4))
    outer = np.outer(axis, axis)
    terms[0, :3, :3] = outer
    terms[0, 3, 3] = 1.0
    terms[1, :3, :3] = np.eye(3) - outer
    terms[2, :3, :3] = _skew(axis)
    return terms


def translation_term(direction: Array) -> Array:
    """(4, 4) term of a translation along ``direction`` (m per unit of its feature)."""
    term = np.zeros((4, 4))
    term[:3, 3] = direction
    return term


def screw_terms(axis: Array, rotation: float, translation: float) -> Array:
    """(4, 4, 4) ``SCREW`` terms: a rotation of ``rotation`` * q rad about the unit ``axis``
    (1 or 0) and a translation of ``translation`` * q m along it."""
    terms = np.zeros((4, 4, 4))
    if rotation:
        terms[:3] = rotation_terms(axis)
    else:
        terms[0] = np.eye(4)
    terms[3] = translation_term(translation * axis)
    return terms


def screw_quaternion_terms(axis: Array, rotates: bool) -> Array:
    """(6, 4) ``SCREW`` quaternion terms: (a sin(q/2), cos(q/2)), or the identity."""
    terms = np.zeros((6, 4))
    if rotates:
        terms[1, 3] = 1.0
        terms[3, :3] = axis
    else:
        terms[4, 3] = 1.0
    return terms


def two_axis_terms(axis: Array, axis2: Array) -> Array:
    """(9, 4, 4) ``TWO_AXIS`` terms: rotation about ``axis``, then about ``axis2``."""
    first, second = rotation_terms(axis), rotation_terms(axis2)
    terms: Array = np.matmul(first[:, None], second[None, :]).reshape(9, 4, 4)
    return terms


def _axis_quaternions(axis: Array) -> Array:
    """(2, 4): the quaternion of a rotation about ``axis`` is these rows weighted by
    [cos, sin] of half the angle."""
    return np.array([[0.0, 0.0, 0.0, 1.0], [*axis, 0.0]])


def two_axis_quaternion_terms(axis: Array, axis2: Array) -> Array:
    """(13, 4) ``TWO_AXIS`` quaternion terms: the product of the two axes' quaternions."""
    terms = np.zeros((13, 4))
    first, second = _axis_quaternions(axis), _axis_quaternions(axis2)
    terms[9:13] = quaternion_multiply(first[:, None], second[None, :]).reshape(4, 4)
    return terms


def planar_terms(plane: Array) -> Array:
    """(5, 4, 4) ``PLANAR`` terms for the plane basis (3, 3) with columns e1, e2, normal:
    translation x e1 + y e2, then rotation about the normal."""
    terms = np.zeros((5, 4, 4))
    terms[:3] = rotation_terms(plane[:, 2])
    terms[3] = translation_term(plane[:, 0])
    terms[4] = translation_term(plane[:, 1])
    return terms


def planar_quaternion_terms(plane: Array) -> Array:
    """(7, 4) ``PLANAR`` quaternion terms: rotation about the plane's normal."""
    terms = np.zeros((7, 4))
    terms[5:7] = _axis_quaternions(plane[:, 2])
    return terms


def _quadratic_rotation_terms() -> Array:
    """(16, 4, 4): R(q) = sum_ab q_a q_b terms[4 a + b] for unit q (``ROTATION_FORM``)."""
    terms = np.zeros((16, 4, 4))
    terms[:, :3, :3] = ROTATION_FORM.transpose(2, 3, 0, 1).reshape(16, 3, 3)
    return terms


QUADRATIC_ROTATION_TERMS = _quadratic_rotation_terms()


def floating_terms() -> Array:
    """(20, 4, 4) ``FLOATING`` terms: translation (x, y, z), rotation by the quaternion."""
    terms = np.zeros((20, 4, 4))
    terms[0, 3, 3] = 1.0
    for k in range(3):
        terms[1 + k, k, 3] = 1.0
    terms[4:20] = QUADRATIC_ROTATION_TERMS
    return terms


def floating_quaternion_terms() -> Array:
    """(24, 4) ``FLOATING`` quaternion terms: the quaternion itself."""
    terms = np.zeros((24, 4))
    terms[20:24] = np.eye(4)
    return terms


def ball_terms() -> Array:
    """(17, 4, 4) ``BALL`` terms: rotation by the quaternion."""
    terms = np.zeros((17, 4, 4))
    terms[0, 3, 3] = 1.0
    terms[1:17] = QUADRATIC_ROTATION_TERMS
    return terms


def ball_quaternion_terms() -> Array:
    """(21, 4) ``BALL`` quaternion terms: the quaternion itself."""
    terms = np.zeros((21, 4))
    terms[17:21] = np.eye(4)
    return terms


def fixed_terms() -> Array:
    """(1, 4, 4): the identity."""
    return np.eye(4).reshape(1, 4, 4)


def fixed_quaternion_terms() -> Array:
    """(1, 4): the identity quaternion."""
    return np.array([[0.0, 0.0, 0.0, 1.0]])
