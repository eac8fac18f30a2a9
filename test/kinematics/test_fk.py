"""Forward kinematics of one configuration (``link_fk``) against the independent reference."""

from __future__ import annotations

import numpy as np
import pytest
from kinematics_reference import (
    FILE_ROBOTS,
    assert_poses_close,
    homogeneous,
    load,
    random_cfg,
    random_robot,
    reference_fk,
    reference_values,
)
from scipy.spatial.transform import Rotation


@pytest.mark.parametrize("seed", range(6))
def test_link_fk_matches_recursive_reference_for_every_joint_type(seed: int) -> None:
    robot = random_robot(seed, count=30)
    rng = np.random.default_rng(100 + seed)
    for _ in range(5):
        cfg = random_cfg(robot, rng)
        expected = reference_fk(robot, reference_values(robot, cfg))
        assert_poses_close(robot.link_fk(cfg), expected)


def test_link_fk_without_cfg_is_the_zero_configuration() -> None:
    robot = random_robot(7)
    assert_poses_close(robot.link_fk(), reference_fk(robot, reference_values(robot, {})))
    assert_poses_close(robot.link_fk({}), reference_fk(robot, reference_values(robot, {})))


@pytest.mark.parametrize("relative", FILE_ROBOTS)
def test_link_fk_matches_reference_on_test_robots(relative: str) -> None:
    robot = load(relative)
    rng = np.random.default_rng(5)
    for _ in range(3):
        cfg = random_cfg(robot, rng)
        expected = reference_fk(robot, reference_values(robot, cfg))
        assert_poses_close(robot.link_fk(cfg), expected)


def test_link_fk_takes_every_documented_multi_dof_shape() -> None:
    robot = random_robot(3, types=("floating", "ball", "planar", "revolute2", "universal"), count=5)
    rng = np.random.default_rng(0)
    floating, ball, planar = (robot.joints[f"joint_{k}"] for k in range(3))
    rotation = Rotation.random(random_state=rng)
    xyz, rpy = rng.uniform(-1, 1, 3), rotation.as_euler("xyz")  # fixed-axis roll, pitch, yaw
    expected_floating = np.concatenate([xyz, rotation.as_quat()])
    pose = homogeneous(rotation.as_matrix(), xyz)
    reference = reference_fk(
        robot,
        reference_values(
            robot,
            {
                floating.name: expected_floating,
                ball.name: rotation.as_quat(),
                planar.name: np.array([0.3, -0.2, 0.0]),
            },
        ),
    )
    for floating_value in (
        expected_floating,
        np.concatenate([xyz, rpy]),
        pose,
        np.concatenate([xyz, 3.0 * rotation.as_quat()]),
    ):
        for ball_value in (rotation.as_quat(), rpy, rotation.as_matrix()):
            cfg = {
                floating.name: floating_value,
                ball.name: ball_value,
                planar.name: np.array([0.3, -0.2]),
            }
            assert_poses_close(robot.link_fk(cfg), reference)
    # MoveIt variable names work in cfg too, and Joint objects as keys.
    by_variable = {
        f"{floating.name}/trans_x": xyz[0],
        f"{floating.name}/trans_y": xyz[1],
        f"{floating.name}/trans_z": xyz[2],
        planar: [0.3, -0.2],
    }
    by_variable |= dict(
        zip([f"{ball.name}/rot_{c}" for c in "xyzw"], rotation.as_quat(), strict=True)
    )
    by_variable |= dict(
        zip([f"{floating.name}/rot_{c}" for c in "xyzw"], rotation.as_quat(), strict=True)
    )
    assert_poses_close(robot.link_fk(by_variable), reference)


def test_link_fk_results_are_fresh_arrays() -> None:
    """A later call never changes the poses an earlier call returned."""
    robot = random_robot(5, count=30)
    rng = np.random.default_rng(5)
    first_cfg, second_cfg = random_cfg(robot, rng), random_cfg(robot, rng)
    first = robot.link_fk(first_cfg)
    kept = {name: pose.copy() for name, pose in first.items()}
    robot.link_fk(second_cfg)
    robot.link_fk_batch({name: np.stack([v, v]) for name, v in second_cfg.items()})
    assert_poses_close(first, kept)
