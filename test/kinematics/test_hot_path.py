"""``Kinematics.hot_path``: a message's values to the poses to publish, in one call."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kinematics_reference import chain_robot, in_range_cfg, random_robot


@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_the_hot_path_gives_what_apply_and_joint_poses_give(clamp: str | None) -> None:
    for seed in range(4):
        robot = random_robot(60 + seed, count=30, types=("revolute", "prismatic", "continuous"))
        kin = robot.kinematics
        names = [j.name for j in kin.moving_joints if j.mimic is None]
        published = np.arange(0, len(kin.moving_joints), 2)  # every other joint
        hot = kin.hot_path(names, published, clamp)
        assert hot is not None
        hot_positions, general_positions = kin.new_positions(), kin.new_positions()
        for message in range(3):
            cfg = in_range_cfg(robot, clamp, np.random.default_rng(10 * seed + message))
            values = np.array([cfg[name] for name in names])
            poses = hot.poses(hot_positions, values)
            kin.apply(general_positions, names, values, clamp=clamp)
            assert poses is not None
            np.testing.assert_allclose(
                poses, kin.joint_poses(general_positions, published), atol=1e-12
            )
            np.testing.assert_allclose(hot_positions.values, general_positions.values, atol=1e-12)
            assert (hot_positions.received == general_positions.received).all()


@pytest.mark.parametrize("bad", [math.nan, math.inf, 1e101, 5.0])
def test_a_value_for_the_general_path_leaves_the_positions_untouched(bad: float) -> None:
    kin = chain_robot().kinematics  # j1 hard limits [-1, 1]
    hot = kin.hot_path(["j1", "j2"], np.arange(len(kin.moving_joints)), "hard")
    assert hot is not None
    positions = kin.new_positions()
    assert hot.poses(positions, np.array([0.5, 0.1])) is not None
    before = positions.values.copy(), positions.received.copy()
    assert hot.poses(positions, np.array([bad, 0.1])) is None
    np.testing.assert_array_equal(positions.values, before[0])
    np.testing.assert_array_equal(positions.received, before[1])


def test_names_without_a_fast_path_have_no_hot_path() -> None:
    kin = chain_robot().kinematics
    assert kin.hot_path(["j1", "j1"], [0], None) is None  # a name given twice
    with pytest.raises(ValueError, match="clamp must be one of"):
        kin.hot_path(["j1"], [0], "firm")
