"""Forward kinematics of N configurations (``link_fk_batch``): every path (one configuration,
a few, many in chunks) against single FK and the reference."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from kinematics_reference import (
    SCALAR,
    TOLERANCE,
    random_cfg,
    random_robot,
    reference_fk,
    reference_values,
)


@pytest.mark.parametrize("rows", [1, 5, 40, 1500])
@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_batch_fast_path_equals_single_fk(rows: int, clamp: str | None) -> None:
    """A batched cfg of 1-D arrays (or lists) of a 1-DOF robot with mimic chains takes the
    cached matrix path: every row equals single FK of that row, clamped or not."""
    robot = random_robot(7, count=40, types=(*SCALAR, "fixed"), mimic_share=0.4)
    rng = np.random.default_rng(7)
    free = [j.name for j in robot.joints.values() if j.joint_type != "fixed" and j.mimic is None]
    batch = {name: rng.uniform(-2.5, 2.5, rows) for name in free[::-1]}
    for cfgs in (batch, {name: column.tolist() for name, column in batch.items()}):
        poses = robot.link_fk_batch(cfgs, clamp=clamp)
        assert list(poses) == list(robot.links)
        for k in sorted(set(range(min(rows, 40))) | {rows // 2, rows - 1}):
            single = robot.link_fk({name: float(c[k]) for name, c in batch.items()}, clamp=clamp)
            for name in robot.links:
                assert poses[name].shape == (rows, 4, 4)
                np.testing.assert_allclose(poses[name][k], single[name], atol=TOLERANCE, rtol=0)
    assert robot.kinematics.cfg.plan(tuple(batch)) is not None  # the fast path


def test_link_fk_batch_equals_repeated_single() -> None:
    robot = random_robot(11, count=30)
    rng = np.random.default_rng(11)
    cfgs = [random_cfg(robot, rng) for _ in range(7)]
    batch = {name: np.stack([cfg[name] for cfg in cfgs]) for name in cfgs[0]}
    poses = robot.link_fk_batch(batch)
    assert list(poses) == list(robot.links)
    for k, cfg in enumerate(cfgs):
        single = robot.link_fk(cfg)
        for name in robot.links:
            assert poses[name].shape == (7, 4, 4)
            np.testing.assert_allclose(poses[name][k], single[name], atol=TOLERANCE, rtol=0)
    # Absent joints sit at zero in every row; a batch of one works.
    one = robot.link_fk_batch({"joint_0": np.array([0.4])})
    single = robot.link_fk({"joint_0": 0.4})
    for name in robot.links:
        np.testing.assert_allclose(one[name][0], single[name], atol=TOLERANCE, rtol=0)


@pytest.mark.parametrize("rows", [1, 5, 33, 80, 2100])
def test_link_fk_batch_matches_reference_for_small_and_large_batches(rows: int) -> None:
    # Few configurations and many take different paths (all links at once, joint by joint);
    # 2100 spans two chunks of batched FK, the last one partial.
    robot = random_robot(13, count=30)
    rng = np.random.default_rng(rows)
    cfgs = [random_cfg(robot, rng) for _ in range(rows)]
    batch = robot.link_fk_batch({name: np.stack([c[name] for c in cfgs]) for name in cfgs[0]})
    for k in sorted({0, rows // 2, rows - 1}):
        expected = reference_fk(robot, reference_values(robot, cfgs[k]))
        for name, pose in expected.items():
            assert batch[name].shape == (rows, 4, 4)
            np.testing.assert_allclose(batch[name][k], pose, atol=TOLERANCE, rtol=0)


def test_link_fk_batch_rejects_inconsistent_batches() -> None:
    robot = random_robot(12, types=("revolute", "floating"), count=2)
    with pytest.raises(ValueError, match="different batch sizes"):
        robot.link_fk_batch({"joint_0": np.zeros(3), "joint_1": np.zeros((4, 7))})
    with pytest.raises(ValueError, match="leading batch axis"):
        robot.link_fk_batch({"joint_0": 1.0})


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000), rows=st.integers(1, 6))
def test_batch_and_single_agree_with_reference_property(seed: int, rows: int) -> None:
    robot = random_robot(seed % 5, count=12)
    rng = np.random.default_rng(seed)
    cfgs = [random_cfg(robot, rng, scale=10.0) for _ in range(rows)]
    batch = robot.link_fk_batch({n: np.stack([c[n] for c in cfgs]) for n in cfgs[0]})
    for k, cfg in enumerate(cfgs):
        expected = reference_fk(robot, reference_values(robot, cfg))
        for name, pose in expected.items():
            np.testing.assert_allclose(batch[name][k], pose, atol=TOLERANCE, rtol=0)


def test_the_batched_fk_is_built_only_when_a_batch_needs_it() -> None:
    """A node never batches: its kinematics keeps no ``BatchFk`` (some 50 kB a humanoid, which
    a fleet of robots in one process pays per robot) until a large batch asks for it."""
    from repo_paths import TEST_DIR

    from joint_tf_publisher import Robot
    from joint_tf_publisher.kinematics.kinematics import FEW_CONFIGURATIONS

    robot = Robot.load(TEST_DIR / "urdf" / "humanoid.urdf")
    kin = robot.kinematics
    robot.link_fk(link="head")
    robot.link_fk_batch({"neck_yaw_joint": np.full(FEW_CONFIGURATIONS, 0.3)})
    assert "batch_fk" not in vars(kin)
    many = robot.link_fk_batch({"neck_yaw_joint": np.full(FEW_CONFIGURATIONS + 1, 0.3)})
    assert "batch_fk" in vars(kin)
    np.testing.assert_allclose(
        many["head"][-1], robot.link_fk({"neck_yaw_joint": 0.3}, link="head")
    )
