"""The facade ``joint_tf_publisher.Robot``: loading and urdfpy's link_fk(link=, links=)."""

from __future__ import annotations

import numpy as np
import pytest
from repo_paths import TEST_DIR

from joint_tf_publisher import Robot
from joint_tf_publisher.description import load_file
from joint_tf_publisher.model import RobotModel

ARM = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"


@pytest.fixture(scope="module")
def arm() -> Robot:
    return Robot.load(ARM)


def moving_cfg(robot: Robot) -> dict[str, float]:
    """A value for every revolute/prismatic leader: 0.1 rad or m, enough to move every link."""
    return {
        name: 0.1
        for name, joint in robot.joints.items()
        if joint.joint_type in ("revolute", "prismatic", "continuous") and joint.mimic is None
    }


def test_load_gives_the_facade_over_the_parsed_model(arm: Robot) -> None:
    parsed = load_file(ARM)
    assert isinstance(arm, RobotModel) and not isinstance(parsed, Robot)
    assert (arm.name, arm.root, list(arm.links), list(arm.joints)) == (
        parsed.name,
        parsed.root,
        list(parsed.links),
        list(parsed.joints),
    )
    assert Robot.from_model(parsed).kinematics is not None


def test_link_fk_link_returns_that_links_pose_by_name_or_link(arm: Robot) -> None:
    cfg = moving_cfg(arm)
    every = arm.link_fk(cfg)
    for name, link in arm.links.items():
        np.testing.assert_array_equal(arm.link_fk(cfg, link=name), every[name])
        np.testing.assert_array_equal(arm.link_fk(cfg, link=link), every[name])


def test_link_fk_links_returns_a_mapping_of_just_those(arm: Robot) -> None:
    cfg = moving_cfg(arm)
    every = arm.link_fk(cfg)
    chosen = list(arm.links)[-2:]
    poses = arm.link_fk(cfg, links=chosen)
    assert list(poses) == chosen
    for name in chosen:
        np.testing.assert_array_equal(poses[name], every[name])


def test_link_fk_batch_link_and_links(arm: Robot) -> None:
    leader = next(iter(moving_cfg(arm)))
    cfgs = {leader: np.linspace(-0.2, 0.2, 5)}
    every = arm.link_fk_batch(cfgs)
    last = list(arm.links)[-1]
    np.testing.assert_array_equal(arm.link_fk_batch(cfgs, link=last), every[last])
    assert arm.link_fk_batch(cfgs, links=[last])[last].shape == (5, 4, 4)


def test_unknown_link_names_the_robot_and_close_matches(arm: Robot) -> None:
    known = list(arm.links)[-1]
    with pytest.raises(ValueError, match=rf"has no link '{known}x'; did you mean {known}"):
        arm.link_fk(link=known + "x")
    with pytest.raises(ValueError, match="give link= or links=, not both"):
        arm.link_fk(link=known, links=[known])
