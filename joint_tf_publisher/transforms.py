"""Rigid-transform helpers on plain numpy arrays.

Conventions used throughout the package:
- A pose is a (4, 4) homogeneous matrix ``T_a_b``: the pose of frame b expressed in frame a.
- rpy is URDF's fixed-axis roll, pitch, yaw in radians: R = Rz(yaw) @ Ry(pitch) @ Rx(roll).
- Quaternions are (x, y, z, w), ROS order, unit norm.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import ArrayLike

from .arrays import Array


def rpy_to_matrix(rpy: ArrayLike) -> Array:
    """Rotation matrix (3, 3) from fixed-axis roll, pitch, yaw in radians."""
    rotations = rpy_to_matrices(np.asarray(rpy, dtype=np.float64).reshape(1, 3))
    return rotations.reshape(3, 3)


def matrix_to_rpy(rotation: ArrayLike) -> Array:
    """Fixed-axis roll, pitch, yaw (radians) of a (3, 3) rotation; pitch in [-pi/2, pi/2]."""
    r = np.asarray(rotation, dtype=np.float64)
    pitch = np.arctan2(-r[2, 0], np.hypot(r[0, 0], r[1, 0]))
    if np.isclose(np.cos(pitch), 0.0, atol=1e-12):
        # Gimbal lock: only roll - yaw (or roll + yaw) is defined; put it all in roll.
        yaw = 0.0
        roll = np.arctan2(r[0, 1], r[1, 1]) if pitch > 0 else -np.arctan2(r[0, 1], r[1, 1])
    else:
        roll = np.arctan2(r[2, 1], r[2, 2])
        yaw = np.arctan2(r[1, 0], r[0, 0])
    return np.array([roll, pitch, yaw])


def quaternion_to_matrix(quat_xyzw: ArrayLike) -> Array:
    """Rotation matrix (3, 3) from a quaternion (x, y, z, w); normalised first."""
    q = np.asarray(quat_xyzw, dtype=np.float64)
    norm = np.linalg.norm(q)
    if norm == 0.0 or not np.isfinite(norm):
        raise ValueError(f"quaternion {q.tolist()} has no rotation (norm {norm})")
    return quaternions_to_matrices(q.reshape(1, 4)).reshape(3, 3)


def matrix_to_quaternion(rotation: ArrayLike) -> Array:
    """Quaternion (x, y, z, w) with w >= 0 of a (3, 3) rotation matrix."""
    quaternions = matrices_to_quaternions(np.asarray(rotation, dtype=np.float64)[None])
    quaternion: Array = quaternions[0]
    return quaternion


def matrices_to_quaternions(rotations: ArrayLike) -> Array:
    """Quaternions (N, 4) as (x, y, z, w), w >= 0, of rotations (N, 3, 3); vectorised.

    Uses the largest-diagonal branch per matrix (Shepperd's method) for accuracy.
    """
    r = np.asarray(rotations, dtype=np.float64)
    n = r.shape[0]
    m00, m11, m22 = r[:, 0, 0], r[:, 1, 1], r[:, 2, 2]
    trace = m00 + m11 + m22
    candidates = np.stack([trace, m00, m11, m22], axis=1)
    branch = np.argmax(candidates, axis=1)
    quat = np.empty((n, 4))
    # One formula per branch; each is accurate where its pivot is largest.
    s = np.sqrt(np.maximum(1.0 + 2.0 * candidates[np.arange(n), branch] - trace, 1e-300)) * 2.0
    b0, b1, b2, b3 = (branch == k for k in range(4))
    quat[b0] = (
        np.stack(
            [
                (r[b0, 2, 1] - r[b0, 1, 2]),
                (r[b0, 0, 2] - r[b0, 2, 0]),
                (r[b0, 1, 0] - r[b0, 0, 1]),
                0.25 * s[b0] * s[b0],
            ],
            axis=1,
        )
        / s[b0, None]
    )
    quat[b1] = (
        np.stack(
            [
                0.25 * s[b1] * s[b1],
                (r[b1, 0, 1] + r[b1, 1, 0]),
                (r[b1, 0, 2] + r[b1, 2, 0]),
                (r[b1, 2, 1] - r[b1, 1, 2]),
            ],
            axis=1,
        )
        / s[b1, None]
    )
    quat[b2] = (
        np.stack(
            [
                (r[b2, 0, 1] + r[b2, 1, 0]),
                0.25 * s[b2] * s[b2],
                (r[b2, 1, 2] + r[b2, 2, 1]),
                (r[b2, 0, 2] - r[b2, 2, 0]),
            ],
            axis=1,
        )
        / s[b2, None]
    )
    quat[b3] = (
        np.stack(
            [
                (r[b3, 0, 2] + r[b3, 2, 0]),
                (r[b3, 1, 2] + r[b3, 2, 1]),
                0.25 * s[b3] * s[b3],
                (r[b3, 1, 0] - r[b3, 0, 1]),
            ],
            axis=1,
        )
        / s[b3, None]
    )
    quat *= np.where(quat[:, 3:4] < 0.0, -1.0, 1.0)
    quat /= np.linalg.norm(quat, axis=1, keepdims=True)
    return quat


def axis_angle_to_matrix(axis: ArrayLike, angle: float) -> Array:
    """Rotation matrix (3, 3) by ``angle`` radians about the unit vector ``axis`` (Rodrigues)."""
    return axis_angles_to_matrices(axis, np.array([angle], dtype=np.float64)).reshape(3, 3)


def pose_matrix(
    translation: ArrayLike = (0.0, 0.0, 0.0), rotation: ArrayLike | None = None
) -> Array:
    """Homogeneous (4, 4) matrix from a translation (3,) in metres and a rotation (3, 3)."""
    pose = np.eye(4)
    if rotation is not None:
        pose[:3, :3] = rotation
    pose[:3, 3] = translation
    return pose


def xyz_rpy_to_matrix(xyz: ArrayLike, rpy: ArrayLike) -> Array:
    """Homogeneous (4, 4) matrix from URDF ``<origin xyz rpy>`` values (metres, radians)."""
    return pose_matrix(xyz, rpy_to_matrix(rpy))


def plane_basis(normal: ArrayLike) -> Array:
    """Rotation (3, 3) whose columns (e1, e2, n) span a planar joint's plane and its normal.

    The rule (documented in README): the shortest rotation taking the joint frame's z axis
    onto the unit ``normal``; for a normal along -z, a half turn about x. For the usual
    normal (0, 0, 1), e1 and e2 are the joint frame's x and y axes, as MoveIt assumes.
    """
    n = np.asarray(normal, dtype=np.float64)
    n = n / np.linalg.norm(n)
    z = np.array([0.0, 0.0, 1.0])
    cross = np.cross(z, n)
    sin_angle = np.linalg.norm(cross)
    cos_angle = float(n @ z)
    if sin_angle < 1e-12:
        return np.eye(3) if cos_angle > 0 else np.diag([1.0, -1.0, -1.0])
    return axis_angle_to_matrix(cross / sin_angle, float(np.arctan2(sin_angle, cos_angle)))


def quaternion_multiply(a: ArrayLike, b: ArrayLike) -> Array:
    """Hamilton product ``a * b`` of quaternions (..., 4) as (x, y, z, w); broadcasts.

    As rotations, the product applies ``b`` first, then ``a`` (R(a * b) = R(a) @ R(b)).
    """
    p = np.asarray(a, dtype=np.float64)
    q = np.asarray(b, dtype=np.float64)
    x1, y1, z1, w1 = p[..., 0], p[..., 1], p[..., 2], p[..., 3]
    x2, y2, z2, w2 = q[..., 0], q[..., 1], q[..., 2], q[..., 3]
    return np.stack(
        [
            w1 * x2 + x1 * w2 + y1 * z2 - z1 * y2,
            w1 * y2 - x1 * z2 + y1 * w2 + z1 * x2,
            w1 * z2 + x1 * y2 - y1 * x2 + z1 * w2,
            w1 * w2 - x1 * x2 - y1 * y2 - z1 * z2,
        ],
        axis=-1,
    )


def quaternions_to_matrices(quats_xyzw: ArrayLike) -> Array:
    """Rotation matrices (N, 3, 3) of quaternions (N, 4) as (x, y, z, w), each normalised.

    The caller ensures non-zero, finite norms (a zero quaternion gives NaN).
    """
    q = np.asarray(quats_xyzw, dtype=np.float64)
    q = q / np.linalg.norm(q, axis=-1, keepdims=True)
    x, y, z, w = q[:, 0], q[:, 1], q[:, 2], q[:, 3]
    out = np.empty((q.shape[0], 3, 3))
    out[:, 0, 0] = 1 - 2 * (y * y + z * z)
    out[:, 0, 1] = 2 * (x * y - z * w)
    out[:, 0, 2] = 2 * (x * z + y * w)
    out[:, 1, 0] = 2 * (x * y + z * w)
    out[:, 1, 1] = 1 - 2 * (x * x + z * z)
    out[:, 1, 2] = 2 * (y * z - x * w)
    out[:, 2, 0] = 2 * (x * z - y * w)
    out[:, 2, 1] = 2 * (y * z + x * w)
    out[:, 2, 2] = 1 - 2 * (x * x + y * y)
    return out


def rpy_to_matrices(rpy: ArrayLike) -> Array:
    """Rotation matrices (N, 3, 3) from fixed-axis roll, pitch, yaw (N, 3) in radians."""
    angles = np.asarray(rpy, dtype=np.float64)
    cr, sr = np.cos(angles[:, 0]), np.sin(angles[:, 0])
    cp, sp = np.cos(angles[:, 1]), np.sin(angles[:, 1])
    cy, sy = np.cos(angles[:, 2]), np.sin(angles[:, 2])
    out = np.empty((angles.shape[0], 3, 3))
    out[:, 0, 0] = cy * cp
    out[:, 0, 1] = cy * sp * sr - sy * cr
    out[:, 0, 2] = cy * sp * cr + sy * sr
    out[:, 1, 0] = sy * cp
    out[:, 1, 1] = sy * sp * sr + cy * cr
    out[:, 1, 2] = sy * sp * cr - cy * sr
    out[:, 2, 0] = -sp
    out[:, 2, 1] = cp * sr
    out[:, 2, 2] = cp * cr
    return out


def axis_angles_to_matrices(axis: ArrayLike, angles: ArrayLike) -> Array:
    """Rotation matrices (N, 3, 3) by ``angles`` (N,) radians about one unit ``axis`` (3,)."""
    x, y, z = np.asarray(axis, dtype=np.float64)
    theta = np.asarray(angles, dtype=np.float64)
    c, s = np.cos(theta), np.sin(theta)
    v = 1.0 - c
    out = np.empty((theta.shape[0], 3, 3))
    out[:, 0, 0] = c + x * x * v
    out[:, 0, 1] = x * y * v - z * s
    out[:, 0, 2] = x * z * v + y * s
    out[:, 1, 0] = y * x * v + z * s
    out[:, 1, 1] = c + y * y * v
    out[:, 1, 2] = y * z * v - x * s
    out[:, 2, 0] = z * x * v - y * s
    out[:, 2, 1] = z * y * v + x * s
    out[:, 2, 2] = c + z * z * v
    return out


def unit_and_norm(vector: ArrayLike) -> tuple[Array | None, float]:
    """The unit vector along a finite ``vector`` and its Euclidean norm; (None, 0.0) if zero.

    Scaled by the largest component first, so huge or subnormal components neither overflow
    nor underflow into a zero or infinite direction (the norm itself may still be inf).
    """
    v = np.asarray(vector, dtype=np.float64)
    scale = float(np.max(np.abs(v)))
    if scale == 0.0:
        return None, 0.0
    scaled = v / scale
    length = float(np.sqrt(scaled @ scaled))
    return scaled / length, length * scale


def inverse_pose(T_a_b: ArrayLike) -> Array:
    """T_b_a (4, 4) of a rigid pose T_a_b: rotation transposed, translation -R^T t."""
    pose = np.asarray(T_a_b, dtype=np.float64)
    inverse = np.eye(4)
    rotation_t = pose[:3, :3].T
    inverse[:3, :3] = rotation_t
    inverse[:3, 3] = -rotation_t @ pose[:3, 3]
    return inverse


def quaternion_product_matrices(quaternion: ArrayLike) -> tuple[Array, Array]:
    """(4, 4) matrices L, R of a quaternion q (x, y, z, w) with q * p = L @ p and p * q = R @ p.

    Columns are products with the unit quaternions e_k, so they hold only +-components of q.
    """
    q = np.asarray(quaternion, dtype=np.float64)
    units = np.eye(4)
    left = quaternion_multiply(q, units).T
    right = quaternion_multiply(units, q).T
    return left, right


def _rotation_form() -> Array:
    """(3, 3, 4, 4) symmetric F with R(q)[j, k] = q @ F[j, k] @ q for unit q (x, y, z, w).

    The homogeneous form of ``quaternion_to_matrix``: 1 - 2 (y^2 + z^2) = x^2 - y^2 - z^2 + w^2.
    """
    x, y, z, w = range(4)
    terms = {
        (0, 0): [(1, x, x), (-1, y, y), (-1, z, z), (1, w, w)],
        (0, 1): [(2, x, y), (-2, z, w)],
        (0, 2): [(2, x, z), (2, y, w)],
        (1, 0): [(2, x, y), (2, z, w)],
        (1, 1): [(-1, x, x), (1, y, y), (-1, z, z), (1, w, w)],
        (1, 2): [(2, y, z), (-2, x, w)],
        (2, 0): [(2, x, z), (-2, y, w)],
        (2, 1): [(2, y, z), (2, x, w)],
        (2, 2): [(-1, x, x), (-1, y, y), (1, z, z), (1, w, w)],
    }
    form = np.zeros((3, 3, 4, 4))
    for (j, k), products in terms.items():
        for coefficient, a, b in products:
            form[j, k, a, b] += 0.5 * coefficient
            form[j, k, b, a] += 0.5 * coefficient
    return form


#: See ``_rotation_form``.
ROTATION_FORM = _rotation_form()


def rotation_quadratic_form(vector: ArrayLike) -> Array:
    """(4, 4, 3) Q with R(q) @ v = q @ Q[:, :, j] @ q (component j) for unit quaternions q."""
    v = np.asarray(vector, dtype=np.float64)
    form: Array = np.einsum("jkab,k->abj", ROTATION_FORM, v)
    return form
