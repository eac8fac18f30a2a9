"""urdfpy-style cfg mappings: accepted forms, the cached fast paths, errors by message.

A cfg is a configuration of the independent joints: values given for mimic followers are
ignored (see test_mimic.py for the follower rule itself)."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from kinematics_reference import (
    SCALAR,
    TOLERANCE,
    assert_poses_close,
    chain_robot,
    random_robot,
    reference_fk,
    reference_values,
)


def test_link_fk_rejects_bad_cfg_by_message() -> None:
    robot = random_robot(4, types=("revolute", "floating", "ball"), count=3)
    with pytest.raises(ValueError, match="'nope', which is not a joint"):
        robot.link_fk({"nope": 1.0})
    with pytest.raises(ValueError, match="joint 'joint_0': non-finite value"):
        robot.link_fk({"joint_0": float("nan")})
    with pytest.raises(ValueError, match="joint 'joint_0': non-finite value"):
        robot.link_fk({"joint_0": np.array(np.inf)})
    with pytest.raises(ValueError, match="joint 'joint_1': quaternion of zero"):
        robot.link_fk({"joint_1": np.zeros(7)})
    with pytest.raises(
        ValueError,
        match=r"joint 'joint_2': a ball joint takes shape \(4,\), \(3,\) or \(3, 3\), "
        r"got shape \(5,\)",
    ):
        robot.link_fk({"joint_2": np.zeros(5)})
    with pytest.raises(ValueError, match="joint 'joint_0': a revolute joint takes one number"):
        robot.link_fk({"joint_0": [1.0, 2.0]})
    with pytest.raises(ValueError, match="clamp must be one of"):
        robot.link_fk({"joint_0": 1.0}, clamp="firm")


def test_integers_beyond_a_double_are_refused_naming_the_joint() -> None:
    """#45 review: a 400-digit integer was numpy's or Python's "int too large to convert to
    float" naming no joint (``link_fk`` and ``link_fk_batch``), and 10**300 (a double holds
    it, beyond int64) made an object array the FK could not take (a UFuncTypeError)."""
    robot = random_robot(4, types=("revolute", "floating", "ball"), count=3)
    huge = 10**400
    with pytest.raises(ValueError, match="joint 'joint_0': an integer beyond any double"):
        robot.link_fk({"joint_0": huge})
    with pytest.raises(ValueError, match="joint 'joint_0': an integer beyond any double"):
        robot.link_fk({"joint_0": -huge, "joint_1": np.zeros(7) + [0, 0, 0, 0, 0, 0, 1]})
    for batch in ([huge, 0], np.array([0, huge], dtype=object)):
        with pytest.raises(ValueError, match="joint 'joint_0': an integer beyond any double"):
            robot.link_fk_batch({"joint_0": batch})
    single = robot.link_fk({"joint_0": 10**300})
    assert single.keys() == robot.link_fk({"joint_0": 1e300}).keys()
    for name, pose in robot.link_fk({"joint_0": 10**300}).items():
        np.testing.assert_array_equal(pose, robot.link_fk({"joint_0": 1e300})[name])
    rows = robot.link_fk_batch({"joint_0": [10**300, 2**70]})
    for name, poses in rows.items():
        np.testing.assert_array_equal(poses[1], robot.link_fk({"joint_0": 2.0**70})[name])


@pytest.mark.parametrize("seed", range(3))
def test_float_cfg_fast_path_equals_reference_for_any_value_form(seed: int) -> None:
    """1-DOF robots with fixed joints and mimic chains: a cfg of numbers takes the cached
    matrix path; ints, numpy scalars, 0-d arrays, number strings, subsets of the joints, any
    key order and ignored mimic/fixed values give the reference poses."""
    robot = random_robot(seed, count=40, types=(*SCALAR, "fixed"), mimic_share=0.4)
    kin = robot.kinematics
    rng = np.random.default_rng(200 + seed)
    free = [j.name for j in robot.joints.values() if j.joint_type != "fixed" and j.mimic is None]
    ignored = [j.name for j in robot.joints.values() if j.joint_type == "fixed" or j.mimic]
    for trial in range(6):
        values = {name: float(rng.uniform(-2.5, 2.5)) for name in free}
        if trial == 1:
            values = {name: round(value) for name, value in values.items()}  # ints
        expected = reference_fk(robot, reference_values(robot, values))
        names = list(rng.permutation(free))
        forms: list[dict[str, Any]] = [
            {name: values[name] for name in names},
            {name: np.float64(values[name]) for name in free},
            {name: np.float32(values[name]) for name in free},
            {name: np.array(values[name]) for name in free},
            {**values, **{name: float("nan") for name in ignored}},
        ]
        for cfg in forms:
            atol = 1e-6 if isinstance(next(iter(cfg.values())), np.float32) else TOLERANCE
            for name, pose in robot.link_fk(cfg).items():
                np.testing.assert_allclose(pose, expected[name], atol=atol, rtol=0)
    subset = {name: 0.3 for name in free[::3]}
    assert_poses_close(robot.link_fk(subset), reference_fk(robot, reference_values(robot, subset)))
    as_text = {name: "0.3" for name in subset}
    assert_poses_close(robot.link_fk(as_text), robot.link_fk(subset))
    assert kin.cfg.plan(tuple(free)) is not None  # such a cfg takes the fast path


@pytest.mark.filterwarnings("error")
def test_float_cfg_fast_path_falls_back_for_errors_and_odd_values() -> None:
    """Non-finite leaders, overflowing mimic followers, a one-element list and a Joint key
    go the general path: same errors, same poses; more key tuples than the cache holds."""
    robot = chain_robot()
    reference = robot.link_fk({"j1": 0.4, "j2": 0.1})
    assert_poses_close(robot.link_fk({"j1": [0.4], "j2": 0.1}), reference)
    joint_keys: dict[Any, float] = {robot.joints["j1"]: 0.4, "j2": 0.1}
    assert_poses_close(robot.link_fk(joint_keys), reference)
    with pytest.raises(ValueError, match="joint 'j1': non-finite value"):
        robot.link_fk({"j1": float("inf"), "j2": 0.1})
    with pytest.raises(ValueError, match="joint 'm1': non-finite value"):
        robot.link_fk({"j1": 1.5e308})  # m1 = 2 j1 overflows
    with pytest.raises(ValueError, match="'nope', which is not a joint"):
        robot.link_fk({"j1": 0.4, "nope": 1.0})
    names = ["j1", "j2", "c1", "w1", "m1", "f1"]
    for k in range(150):  # many distinct key tuples: the cache is cleared and refilled
        keys = [names[(k + i) % len(names)] for i in range(1 + k % len(names))]
        cfg = dict.fromkeys(keys, 0.01 * k)
        expected = reference_fk(robot, reference_values(robot, cfg))
        assert_poses_close(robot.link_fk(cfg), expected)


@pytest.mark.filterwarnings("ignore:overflow encountered:RuntimeWarning")
def test_batch_fast_path_falls_back_for_errors() -> None:
    robot = chain_robot()
    with pytest.raises(ValueError, match="different batch sizes"):
        robot.link_fk_batch({"j1": np.zeros(3), "j2": np.zeros(2)})
    with pytest.raises(ValueError, match="leading batch axis"):
        robot.link_fk_batch({"j1": 0.3, "j2": 0.1})
    with pytest.raises(ValueError, match="joint 'j1': non-finite value"):
        robot.link_fk_batch({"j1": np.array([0.1, np.nan]), "j2": np.zeros(2)})
    with pytest.raises(ValueError, match="mimic value overflows"):
        robot.link_fk_batch({"j1": np.array([0.1, 1.5e308])})
    with pytest.raises(ValueError, match="clamp must be one of"):
        robot.link_fk_batch({"j1": np.zeros(2)}, clamp="firm")
    column = robot.link_fk_batch({"j1": np.array([[0.2], [0.3]])})  # (N, 1): general path
    rows = robot.link_fk_batch({"j1": np.array([0.2, 0.3])})
    for name in robot.links:
        np.testing.assert_allclose(column[name], rows[name], atol=TOLERANCE, rtol=0)
