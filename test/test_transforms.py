"""Rigid-transform helpers against scipy's Rotation and explicit formulas."""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from numpy.typing import NDArray
from scipy.spatial.transform import Rotation

from joint_tf_publisher.transforms import (
    axis_angle_to_matrix,
    axis_angles_to_matrices,
    matrices_to_quaternions,
    matrix_to_quaternion,
    matrix_to_rpy,
    plane_basis,
    pose_matrix,
    quaternion_multiply,
    quaternion_to_matrix,
    quaternions_to_matrices,
    rpy_to_matrices,
    rpy_to_matrix,
    unit_and_norm,
    xyz_rpy_to_matrix,
)

Array = NDArray[np.float64]
SETTINGS = settings(max_examples=80, deadline=None)

rolls = st.floats(-math.pi, math.pi)
pitches = st.floats(-math.pi / 2 + 1e-3, math.pi / 2 - 1e-3)
quaternions = (
    st.tuples(*[st.floats(-1.0, 1.0)] * 4).map(np.array).filter(lambda q: np.linalg.norm(q) > 0.1)
)
unit_vectors = (
    st.tuples(*[st.floats(-1.0, 1.0)] * 3)
    .map(np.array)
    .filter(lambda v: np.linalg.norm(v) > 0.1)
    .map(lambda v: v / np.linalg.norm(v))
)


def scipy_rpy(rpy: tuple[float, float, float] | list[float]) -> Array:
    """URDF fixed-axis rpy is scipy's extrinsic 'xyz' Euler sequence."""
    return np.array(Rotation.from_euler("xyz", rpy).as_matrix(), dtype=np.float64)


def test_rpy_single_axes_explicit() -> None:
    a = 0.7
    c, s = math.cos(a), math.sin(a)
    np.testing.assert_allclose(rpy_to_matrix([a, 0, 0]), [[1, 0, 0], [0, c, -s], [0, s, c]])
    np.testing.assert_allclose(rpy_to_matrix([0, a, 0]), [[c, 0, s], [0, 1, 0], [-s, 0, c]])
    np.testing.assert_allclose(rpy_to_matrix([0, 0, a]), [[c, -s, 0], [s, c, 0], [0, 0, 1]])


@SETTINGS
@given(roll=rolls, pitch=st.floats(-math.pi, math.pi), yaw=rolls)
def test_rpy_to_matrix_matches_scipy(roll: float, pitch: float, yaw: float) -> None:
    np.testing.assert_allclose(
        rpy_to_matrix([roll, pitch, yaw]), scipy_rpy([roll, pitch, yaw]), atol=1e-12
    )


@SETTINGS
@given(roll=rolls, pitch=pitches, yaw=rolls)
def test_rpy_round_trip(roll: float, pitch: float, yaw: float) -> None:
    back = matrix_to_rpy(scipy_rpy([roll, pitch, yaw]))
    assert -math.pi / 2 <= back[1] <= math.pi / 2
    np.testing.assert_allclose(scipy_rpy(list(back)), scipy_rpy([roll, pitch, yaw]), atol=1e-9)
    # Away from +-pi wrap-around the angles themselves come back.
    if abs(roll) < math.pi - 1e-6 and abs(yaw) < math.pi - 1e-6:
        np.testing.assert_allclose(back, [roll, pitch, yaw], atol=1e-7)


@SETTINGS
@given(roll=rolls, yaw=rolls, sign=st.sampled_from([-1.0, 1.0]))
def test_rpy_round_trip_at_gimbal_lock(roll: float, yaw: float, sign: float) -> None:
    rotation = scipy_rpy([roll, sign * math.pi / 2, yaw])
    back = matrix_to_rpy(rotation)
    assert back[1] == pytest.approx(sign * math.pi / 2)
    np.testing.assert_allclose(scipy_rpy(list(back)), rotation, atol=1e-9)


@SETTINGS
@given(quat=quaternions)
def test_quaternion_to_matrix_matches_scipy(quat: Array) -> None:
    np.testing.assert_allclose(
        quaternion_to_matrix(quat), Rotation.from_quat(quat).as_matrix(), atol=1e-12
    )


def test_zero_quaternion_is_refused() -> None:
    with pytest.raises(ValueError, match="has no rotation"):
        quaternion_to_matrix([0.0, 0.0, 0.0, 0.0])


@SETTINGS
@given(quat=quaternions)
def test_matrix_to_quaternion_matches_scipy_up_to_sign(quat: Array) -> None:
    expected = Rotation.from_quat(quat).as_quat()
    expected = expected if expected[3] >= 0 else -expected
    got = matrix_to_quaternion(Rotation.from_quat(quat).as_matrix())
    assert got[3] >= 0.0
    assert np.linalg.norm(got) == pytest.approx(1.0)
    # w == 0 leaves the sign free: compare rotations there, components elsewhere.
    if expected[3] > 1e-6:
        np.testing.assert_allclose(got, expected, atol=1e-9)
    np.testing.assert_allclose(
        Rotation.from_quat(got).as_matrix(), Rotation.from_quat(quat).as_matrix(), atol=1e-9
    )


def test_matrices_to_quaternions_every_branch() -> None:
    # Identity (trace branch) and half turns about x, y, z (each diagonal branch).
    rotvecs = np.array(
        [
            [0, 0, 0],
            [math.pi, 0, 0],
            [0, math.pi, 0],
            [0, 0, math.pi],
            [0.3, -2.9, 0.2],
            [2.0, 1.0, -0.5],
        ]
    )
    rotations = Rotation.from_rotvec(rotvecs)
    got = matrices_to_quaternions(rotations.as_matrix())
    assert got.shape == (6, 4)
    assert np.all(got[:, 3] >= 0)
    np.testing.assert_allclose(
        Rotation.from_quat(got).as_matrix(), rotations.as_matrix(), atol=1e-12
    )


@SETTINGS
@given(axis=unit_vectors, angle=st.floats(-10, 10))
def test_axis_angle_matches_scipy_rotvec(axis: Array, angle: float) -> None:
    np.testing.assert_allclose(
        axis_angle_to_matrix(axis, angle),
        Rotation.from_rotvec(axis * angle).as_matrix(),
        atol=1e-12,
    )


def test_pose_and_xyz_rpy_matrices() -> None:
    pose = xyz_rpy_to_matrix([1.0, -2.0, 3.0], [0.1, 0.2, 0.3])
    np.testing.assert_allclose(pose[:3, :3], scipy_rpy([0.1, 0.2, 0.3]), atol=1e-12)
    np.testing.assert_array_equal(pose[:3, 3], [1.0, -2.0, 3.0])
    np.testing.assert_array_equal(pose[3], [0.0, 0.0, 0.0, 1.0])
    np.testing.assert_array_equal(pose_matrix(), np.eye(4))
    np.testing.assert_array_equal(pose_matrix([1, 2, 3])[:3, 3], [1, 2, 3])


def test_plane_basis_documented_cases() -> None:
    np.testing.assert_array_equal(plane_basis([0, 0, 1]), np.eye(3))
    np.testing.assert_array_equal(plane_basis([0, 0, 5]), np.eye(3))
    # Normal -z: a half turn about x, so e1 = x and e2 = -y.
    np.testing.assert_allclose(plane_basis([0, 0, -1]), np.diag([1.0, -1.0, -1.0]))
    # Normal x: the shortest rotation from z to x is a quarter turn about y.
    np.testing.assert_allclose(
        plane_basis([1, 0, 0]), Rotation.from_rotvec([0, math.pi / 2, 0]).as_matrix(), atol=1e-12
    )


@SETTINGS
@given(normal=unit_vectors)
def test_plane_basis_is_right_handed_with_normal_last(normal: Array) -> None:
    basis = plane_basis(normal * 2.5)
    np.testing.assert_allclose(basis.T @ basis, np.eye(3), atol=1e-12)
    assert np.linalg.det(basis) == pytest.approx(1.0)
    np.testing.assert_allclose(basis[:, 2], normal, atol=1e-12)


# -- batched helpers ------------------------------------------------------------------------

RNG = np.random.default_rng(7)


def test_quaternion_multiply_composes_rotations_like_scipy() -> None:
    a, b = RNG.normal(size=(5, 4)), RNG.normal(size=(5, 4))
    product = quaternion_multiply(a, b)
    expected = (Rotation.from_quat(a) * Rotation.from_quat(b)).as_matrix()
    np.testing.assert_allclose(Rotation.from_quat(product).as_matrix(), expected, atol=1e-12)
    # Broadcasting one quaternion against many.
    np.testing.assert_allclose(quaternion_multiply(a[0], b), quaternion_multiply(a[[0] * 5], b))


def test_quaternions_to_matrices_matches_scipy() -> None:
    quats = RNG.normal(size=(8, 4))
    np.testing.assert_allclose(
        quaternions_to_matrices(quats), Rotation.from_quat(quats).as_matrix(), atol=1e-12
    )


def test_rpy_to_matrices_matches_scipy() -> None:
    rpy = RNG.uniform(-4, 4, size=(8, 3))
    np.testing.assert_allclose(
        rpy_to_matrices(rpy), Rotation.from_euler("xyz", rpy).as_matrix(), atol=1e-12
    )


def test_axis_angles_to_matrices_matches_scipy() -> None:
    axis = np.array([2.0, -1.0, 2.0]) / 3.0
    angles = RNG.uniform(-7, 7, size=9)
    np.testing.assert_allclose(
        axis_angles_to_matrices(axis, angles),
        Rotation.from_rotvec(angles[:, None] * axis).as_matrix(),
        atol=1e-12,
    )


@pytest.mark.parametrize(
    ("vector", "unit", "norm"),
    [
        ([0.0, 3.0, 4.0], [0.0, 0.6, 0.8], 5.0),
        ([1e300, 1e300, 0.0], [math.sqrt(0.5), math.sqrt(0.5), 0.0], math.sqrt(2) * 1e300),
        ([1.5e308, 1.5e308, 0.0], [math.sqrt(0.5), math.sqrt(0.5), 0.0], math.inf),
        ([0.0, -1e-320, 0.0], [0.0, -1.0, 0.0], 1e-320),
        ([0.0, 0.0, 0.0, 2.0], [0.0, 0.0, 0.0, 1.0], 2.0),
    ],
)
def test_unit_and_norm_survives_huge_and_subnormal_components(
    vector: list[float], unit: list[float], norm: float
) -> None:
    got_unit, got_norm = unit_and_norm(vector)
    assert got_unit is not None
    np.testing.assert_allclose(got_unit, unit, atol=1e-15)
    assert got_norm == pytest.approx(norm, rel=1e-12)


def test_unit_and_norm_of_zero() -> None:
    assert unit_and_norm([0.0, 0.0, 0.0]) == (None, 0.0)
