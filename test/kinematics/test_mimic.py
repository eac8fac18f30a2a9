"""Mimic followers, the same rule in every API.

- JointState (``apply``): a follower given a value in the message takes it, clamped like any
  given value (robot_state_publisher's rule: the measurement wins).
- Otherwise, and always for a cfg (``link_fk``, ``link_fk_batch``: a configuration of the
  independent joints, as urdfpy's), a follower is multiplier * leader + offset from its
  leader's clamped value and is not clamped to its own limits.
- ``Joint.is_valid`` judges one joint against its own limits.

Checked on a PR2-style gripper (follower multiplier -1, both limits [0, 0.548]) whose
follower must reach -0.548, and on chain_robot's chain of followers.
"""

from __future__ import annotations

import numpy as np
import pytest
from kinematics_reference import (
    GRIPPER_URDF,
    TOLERANCE,
    all_transforms,
    assert_poses_close,
    assert_transforms_match,
    chain_robot,
    moving_index,
    reference_fk,
    reference_values,
)

from joint_tf_publisher import Robot
from joint_tf_publisher.kinematics import Kinematics
from joint_tf_publisher.model import Mimic

GRIPPER_UPPER = 0.548


@pytest.fixture
def gripper() -> Robot:
    return Robot.from_xml_string(GRIPPER_URDF, source="gripper.urdf")


def follower_value(kin: Kinematics, positions: object) -> float:
    return kin.variable_values(positions)["r_gripper_joint"]  # type: ignore[arg-type]


@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_pr2_gripper_follower_reaches_minus_the_leader_in_every_api(
    gripper: Robot, clamp: str | None
) -> None:
    kin = gripper.kinematics
    positions = kin.new_positions()
    # The leader beyond its upper limit: clamped to 0.548 (unless clamp is None).
    leader = GRIPPER_UPPER if clamp else 0.7
    update = kin.apply(positions, ["l_gripper_joint"], [0.7], clamp=clamp)
    assert follower_value(kin, positions) == -leader
    assert update.clamped == (["l_gripper_joint"] if clamp else [])
    values = {"l_gripper_joint": leader, "r_gripper_joint": -leader}
    translations, quaternions = all_transforms(kin, positions)
    assert_transforms_match(kin, translations, quaternions, range(2), values)
    expected = reference_fk(gripper, values)
    assert_poses_close(gripper.link_fk({"l_gripper_joint": 0.7}, clamp=clamp), expected)
    batch = gripper.link_fk_batch({"l_gripper_joint": np.full(3, 0.7)}, clamp=clamp)
    for name, pose in expected.items():
        np.testing.assert_allclose(batch[name][2], pose, atol=TOLERANCE, rtol=0)
    # is_valid is per joint: -0.548 lies outside the follower's own limits.
    follower = gripper.joints["r_gripper_joint"]
    assert not follower.is_valid(-GRIPPER_UPPER) and follower.is_valid(GRIPPER_UPPER)


def test_a_follower_given_in_the_message_takes_that_value_clamped(gripper: Robot) -> None:
    kin = gripper.kinematics
    index = moving_index(kin)
    positions = kin.new_positions()
    update = kin.apply(positions, ["r_gripper_joint"], [-0.3], clamp=None)
    assert follower_value(kin, positions) == -0.3
    assert update.moved.tolist() == [index["r_gripper_joint"]]
    assert positions.received.tolist() == [False, True]
    # Given with its leader: still its own value, clamped into its own limits like any.
    update = kin.apply(positions, ["l_gripper_joint", "r_gripper_joint"], [0.2, -0.3])
    assert follower_value(kin, positions) == 0.0
    assert update.clamped == ["r_gripper_joint"]
    # A message that moves neither leaves it where it was.
    robot = chain_robot()
    chain = robot.kinematics
    chain_positions = chain.new_positions()
    chain.apply(chain_positions, ["j1", "m1"], [0.2, -0.9])
    update = chain.apply(chain_positions, ["j2"], [0.1])
    assert chain.variable_values(chain_positions)["m1"] == -0.9
    assert update.moved.tolist() == [moving_index(chain)["j2"]]
    # The next message that moves its leader: the follower follows its leader again.
    kin.apply(positions, ["l_gripper_joint"], [0.25])
    assert follower_value(kin, positions) == -0.25


def test_a_follower_whose_given_value_is_rejected_keeps_its_last_good_value(
    gripper: Robot,
) -> None:
    """Not clamped to its own limits either: -0.5 stays, although outside [0, 0.548]."""
    kin = gripper.kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["l_gripper_joint"], [0.5])
    update = kin.apply(
        positions, ["l_gripper_joint", "r_gripper_joint"], [0.4, float("nan")], clamp="hard"
    )
    assert update.rejected == ["r_gripper_joint"] and update.clamped == []
    assert follower_value(kin, positions) == -0.5
    assert kin.variable_values(positions)["l_gripper_joint"] == 0.4


@pytest.mark.parametrize("clamp", [None, "hard"])
def test_a_chain_uses_given_followers_and_computes_the_rest_from_them(clamp: str | None) -> None:
    robot = chain_robot()
    kin = robot.kinematics
    index = moving_index(kin)
    positions = kin.new_positions()
    update = kin.apply(positions, ["m1", "j1", "m3"], [9.0, 0.4, 9.0], clamp=clamp)
    m1 = 9.0 if clamp is None else 1.5  # m1's own limits: [-1.5, 1.5]
    # m2 = -m1 + 0.1 from the given m1, not clamped into its own [-0.3, 2]; m3 as given.
    expected = {"j1": 0.4, "m1": m1, "m2": -m1 + 0.1, "m3": 9.0}
    assert update.clamped == ([] if clamp is None else ["m1"])
    assert update.moved.tolist() == sorted(index[n] for n in expected)
    assert all(positions.received[index[n]] for n in expected)
    assert not positions.received[index["j2"]]
    ids = [index[n] for n in expected]
    translations, quaternions = kin.joint_transforms(positions, ids)
    assert_transforms_match(kin, translations, quaternions, ids, expected)
    measured = reference_values(robot, {"m1": 9.0, "j1": 0.4, "m3": 9.0}, clamp, measured=True)
    assert measured == pytest.approx(expected | {"j2": 0.0, "c1": 0.0, "w1": 0.0})


def test_a_cfg_ignores_values_given_for_followers() -> None:
    robot = chain_robot()
    fk = robot.link_fk({"j1": 0.4, "m2": 5.0})
    assert_poses_close(fk, reference_fk(robot, reference_values(robot, {"j1": 0.4})))
    batch = robot.link_fk_batch({"j1": np.array([0.4, 0.4]), "m2": np.array([5.0, 5.0])})
    for name, pose in fk.items():
        np.testing.assert_allclose(batch[name][1], pose, atol=TOLERANCE, rtol=0)


def test_mimic_followers_move_only_with_their_leader() -> None:
    robot = chain_robot()
    kin = robot.kinematics
    positions = kin.new_positions()
    kin.apply(positions, ["j1"], [0.2])
    update = kin.apply(positions, ["j2"], [0.1])
    assert update.moved.tolist() == [moving_index(kin)["j2"]]


@pytest.mark.parametrize("clamp", [None, "hard", "soft"])
def test_clamping_modes_clamp_given_values_and_never_computed_followers(
    clamp: str | None,
) -> None:
    robot = chain_robot()
    kin = robot.kinematics
    positions = kin.new_positions()
    update = kin.apply(positions, ["j1", "j2", "c1", "w1"], [2.0, -1.0, 7.0, 5.0], clamp=clamp)
    # Expected by hand from the limits written in chain_robot; m1 = 2 j1 leaves m1's own
    # [-1.5, 1.5] in hard mode and m2 = -m1 + 0.1 leaves m2's [-0.3, 2] in every mode.
    j1 = {None: 2.0, "hard": 1.0, "soft": 0.5}[clamp]
    m1 = 2.0 * j1
    m2 = -m1 + 0.1
    j2 = -1.0 if clamp is None else 0.0
    values = {"j1": j1, "m1": m1, "m2": m2, "m3": 0.5 * m2, "j2": j2, "c1": 7.0, "w1": 5.0}
    assert reference_values(robot, {"j1": 2.0, "j2": -1.0, "c1": 7.0, "w1": 5.0}, clamp) == (
        pytest.approx(values)
    )
    translations, quaternions = all_transforms(kin, positions)
    assert_transforms_match(kin, translations, quaternions, range(len(values)), values)
    assert set(update.clamped) == (set() if clamp is None else {"j1", "j2"})
    assert update.rejected == [] and update.unknown == []
    # link_fk and the public Robot.link_fk_batch apply the same rule.
    fk = robot.link_fk({"j1": 2.0, "j2": -1.0, "c1": 7.0, "w1": 5.0}, clamp=clamp)
    assert_poses_close(fk, reference_fk(robot, values))
    batch = robot.link_fk_batch(
        {
            "j1": np.array([2.0, 2.0]),
            "j2": np.array([-1.0, -1.0]),
            "c1": np.array([7.0, 7.0]),
            "w1": np.array([5.0, 5.0]),
        },
        clamp=clamp,
    )
    for name, pose in fk.items():
        np.testing.assert_allclose(batch[name][1], pose, atol=TOLERANCE, rtol=0)


def test_a_name_plan_moves_the_given_joints_and_their_followers() -> None:
    kin = chain_robot().kinematics
    index = moving_index(kin)
    assert kin.state.plans.plan(("j1",)).moves.tolist() == sorted(
        index[n] for n in ("j1", "m1", "m2", "m3")
    )
    assert kin.state.plans.plan(("m2", "ghost")).moves.tolist() == sorted(
        [index["m2"], index["m3"]]
    )
    assert kin.state.plans.plan(("j2",)).moves.tolist() == [index["j2"]]


def test_mimic_overflow_keeps_the_follower_finite() -> None:
    robot = chain_robot()
    robot.joints["m1"].mimic = Mimic("j1", 1e250, 0.0)
    kin = Kinematics(robot)
    positions = kin.new_positions()
    update = kin.apply(positions, ["j1"], [1e99], clamp=None)
    # m1 = 1e250 * j1 overflows: m1 keeps its last good value (0), so m2 and m3 stay finite.
    assert update.rejected == ["m1"]
    assert np.isfinite(positions.values).all()
    index = moving_index(kin)
    assert positions.values[index["j1"]] == 1e99
    assert positions.values[index["m1"]] == 0.0
