"""Per-joint transforms (what the node publishes) against ``Joint.child_pose`` and the reference."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from kinematics_reference import TOLERANCE, random_robot
from scipy.spatial.transform import Rotation


def test_fixed_transforms_are_the_fixed_joints_poses() -> None:
    robot = random_robot(61, types=("fixed", "revolute"), count=12)
    kin = robot.kinematics
    translations, quaternions = kin.fixed_transforms()
    assert len(kin.fixed_joints) == translations.shape[0] == quaternions.shape[0] > 0
    for row, joint in enumerate(kin.fixed_joints):
        expected = joint.origin @ joint.child_offset
        np.testing.assert_allclose(translations[row], expected[:3, 3], atol=TOLERANCE)
        np.testing.assert_allclose(
            Rotation.from_quat(quaternions[row]).as_matrix(), expected[:3, :3], atol=TOLERANCE
        )


@pytest.mark.parametrize("seed", range(6))
def test_joint_transforms_of_multi_dof_joints_equal_child_pose(seed: int) -> None:
    """The composed closed form of planar, floating and ball joints (and the other paths)
    equals ``Joint.child_pose`` at the stored values, also for stored quaternions that are
    not unit (written by hand), large translations and any order of indices."""
    robot = random_robot(
        seed, count=14, types=("floating", "ball", "planar", "revolute", "universal", "prismatic")
    )
    kin = robot.kinematics
    rng = np.random.default_rng(seed)
    positions = kin.new_positions()
    for _ in range(5):
        positions.values[:] = rng.uniform(-4.0, 4.0, positions.values.size)
        for index, joint in enumerate(kin.moving_joints):
            start = int(kin.layout.slot[index])
            if joint.joint_type == "floating":
                positions.values[start : start + 3] *= 10.0 ** rng.uniform(-3, 30)
            if joint.joint_type in ("floating", "ball"):
                first = start + (3 if joint.joint_type == "floating" else 0)
                positions.values[first : first + 4] *= 10.0 ** rng.uniform(-5, 5)
        indices = rng.integers(0, len(kin.moving_joints), 20)
        with warnings.catch_warnings():
            warnings.simplefilter("error")
            translations, quaternions = kin.transforms.transforms(positions.values, indices)
        for row, index in enumerate(indices):
            joint = kin.moving_joints[index]
            start = int(kin.layout.slot[index])
            expected = joint.child_pose(
                positions.values[start : start + int(kin.layout.size[index])]
            )
            scale = max(1.0, float(np.max(np.abs(expected[:3, 3]))))
            np.testing.assert_allclose(
                translations[row], expected[:3, 3], atol=1e-12 * scale, rtol=0
            )
            rotation = Rotation.from_quat(quaternions[row]).as_matrix()
            np.testing.assert_allclose(rotation, expected[:3, :3], atol=1e-12, rtol=0)
            assert abs(np.linalg.norm(quaternions[row]) - 1.0) < 1e-12
