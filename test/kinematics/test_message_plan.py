"""``Kinematics.message_plans``: one plan per message shape, a message's values to the poses
to publish in one call (``MessagePlan.resolve``)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from kinematics_reference import chain_robot, in_range_cfg, moving_index, random_robot

from joint_tf_publisher.kinematics import Kinematics


def every_other(kin: Kinematics) -> np.ndarray:
    mask = np.zeros(len(kin.moving_joints), dtype=bool)
    mask[::2] = True
    return mask


@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_resolve_gives_what_apply_and_joint_poses_give(clamp: str | None) -> None:
    for seed in range(4):
        robot = random_robot(60 + seed, count=30, types=("revolute", "prismatic", "continuous"))
        kin = robot.kinematics
        names = tuple(j.name for j in kin.moving_joints if j.mimic is None)
        mask = every_other(kin)
        plan = kin.message_plans(clamp, mask)(names)
        assert plan.name_plan.fast is not None
        assert plan.published.tolist() == [i for i in plan.moves.tolist() if mask[i]]
        plan_positions, general_positions = kin.new_positions(), kin.new_positions()
        for message in range(3):
            cfg = in_range_cfg(robot, clamp, np.random.default_rng(10 * seed + message))
            values = np.array([cfg[name] for name in names])
            resolved = plan.resolve(plan_positions, values)
            kin.apply(general_positions, names, values, clamp=clamp)
            # Every joint named and published, clamped nowhere: the published set itself.
            assert resolved.joints.tolist() == plan.published.tolist() and not resolved.clamped
            assert resolved.joints_key == plan.published.tobytes()
            np.testing.assert_allclose(
                resolved.poses, kin.joint_poses(general_positions, plan.published), atol=1e-12
            )
            np.testing.assert_allclose(plan_positions.values, general_positions.values, atol=1e-12)
            assert (plan_positions.received == general_positions.received).all()


@pytest.mark.parametrize("bad", [math.nan, math.inf, 1e101, 5.0])
def test_a_value_for_the_general_rules_gives_what_apply_gives(bad: float) -> None:
    kin = chain_robot().kinematics  # j1 hard limits [-1, 1], leads m1 -> m2 -> m3
    index = moving_index(kin)
    plan = kin.message_plans("hard", np.ones(len(kin.moving_joints), dtype=bool))(("j1", "j2"))
    positions, expected = kin.new_positions(), kin.new_positions()
    for values in ([0.5, 0.1], [bad, 0.1]):
        resolved = plan.resolve(positions, np.array(values))
        update = kin.apply(expected, ["j1", "j2"], values, clamp="hard")
        np.testing.assert_array_equal(positions.values, expected.values)
        assert (list(resolved.clamped), list(resolved.rejected)) == (
            update.clamped,
            update.rejected,
        )
    if bad == 5.0:  # clamped: j1 and its followers move and are published
        assert resolved.clamped == ["j1"]
        assert resolved.joints.tolist() == [index[name] for name in ("j1", "j2", "m1", "m2", "m3")]
    else:  # rejected: only j2 moved
        assert resolved.rejected == ["j1"] and resolved.joints.tolist() == [index["j2"]]
    np.testing.assert_array_equal(resolved.poses, kin.joint_poses(expected, resolved.joints))
    assert resolved.joints_key == resolved.joints.tobytes()


def test_a_clamp_that_moves_joints_not_named_publishes_those_too() -> None:
    kin = chain_robot().kinematics
    index = moving_index(kin)
    everything = np.ones(len(kin.moving_joints), dtype=bool)
    positions = kin.new_positions()
    kin.message_plans(None, everything)(("j1", "j2")).resolve(positions, np.array([0.9, 5.0]))
    resolved = kin.message_plans("hard", everything)(("c1",)).resolve(positions, np.array([1.0]))
    assert resolved.clamped == ["j2"]  # stored beyond [0, 0.2] before the clamp mode changed
    assert resolved.joints.tolist() == sorted([index["c1"], index["j2"]])


def test_plans_are_compiled_once_per_shape_and_keyed_by_value() -> None:
    kin = chain_robot().kinematics
    plans = kin.message_plans("hard", every_other(kin))
    first = plans(("j1", "j2"))
    assert plans(tuple(["j1", "j2"])) is first  # an equal tuple, another object
    assert plans(("j2", "j1")) is not first
    mask = every_other(kin)
    other = kin.message_plans("hard", mask)
    mask[:] = True  # the plans keep their own copy of the published set
    assert other(("j1", "j2")).published.tolist() == first.published.tolist()
    assert not first.moves.flags.writeable and not first.published.flags.writeable


def test_names_without_a_fast_path_take_the_general_rules() -> None:
    kin = chain_robot().kinematics
    plan = kin.message_plans(None, np.ones(len(kin.moving_joints), dtype=bool))(("j1", "j1"))
    assert plan.name_plan.fast is None  # a name given twice
    positions = kin.new_positions()
    resolved = plan.resolve(positions, np.array([0.1, 0.2]))
    assert kin.variable_values(positions)["j1"] == 0.2  # the last one written
    index = moving_index(kin)
    assert resolved.joints.tolist() == sorted(index[name] for name in ("j1", "m1", "m2", "m3"))
    np.testing.assert_array_equal(resolved.poses, kin.joint_poses(positions, resolved.joints))
    with pytest.raises(ValueError, match="clamp must be one of"):
        kin.message_plans("firm", np.ones(len(kin.moving_joints), dtype=bool))
