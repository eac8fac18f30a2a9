"""pipeline with several joint-state topics (``source_list``): each message keeps its stamp,
and between topics the newer stamp wins. No rclpy: topics are the pipeline's source numbers.
The same over DDS, with two publishers: test_node_e2e_sources.py.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pytest
from test_pipeline import ALL_TYPES_URDF, MS, T0, Rig, assert_pose, poses

from joint_tf_publisher.health.model import GraphFacts
from joint_tf_publisher.node_core.joint_sources import FIRST_LISTED_SOURCE, JOINT_STATES_SOURCE
from joint_tf_publisher.node_core.pipeline import Publication

ARM = JOINT_STATES_SOURCE
GRIPPER = FIRST_LISTED_SOURCE
BASE = FIRST_LISTED_SOURCE + 1


def send(
    rig: Rig, source: int, names: Sequence[str], values: Sequence[float], stamp_ns: int
) -> Publication | None:
    return rig.pipeline.joint_state(stamp_ns, tuple(names), np.array(values, dtype=float), source)


def stored(rig: Rig, name: str) -> float:
    assert rig.pipeline.model is not None
    return rig.robot.kinematics.variable_values(rig.pipeline.model.positions)[name]


@pytest.fixture
def arm() -> Rig:
    return Rig()


def test_each_topic_is_published_with_its_own_stamp_and_rate_limited_per_joint(
    arm: Rig,
) -> None:
    first = send(arm, ARM, ["joint_1", "joint_2"], [0.1, 0.2], T0)
    gripper = send(arm, GRIPPER, ["finger_joint"], [0.3], T0 - 7 * MS)
    assert first is not None and gripper is not None
    assert gripper.stamp_ns == T0 - 7 * MS  # its own stamp, older than the arm's: published
    assert_pose(gripper, arm.robot, "finger_joint", 0.3)
    assert_pose(gripper, arm.robot, "right_knuckle_joint", -0.3)  # its mimic followers
    assert send(arm, GRIPPER, ["finger_joint"], [0.31], T0 + 10 * MS) is None  # 20 Hz
    assert send(arm, ARM, ["joint_1", "joint_2"], [0.1, 0.2], T0 + 50 * MS) is not None
    assert not arm.logger.containing("rate limiter reset")


def test_a_value_older_than_another_topics_is_ignored_without_a_reset(arm: Rig) -> None:
    assert send(arm, ARM, ["joint_1", "joint_2"], [0.5, 0.5], T0) is not None
    older = send(arm, GRIPPER, ["joint_1", "joint_3"], [0.1, 0.2], T0 - 10 * MS)
    assert older is not None  # joint_3 is the gripper topic's alone: set and published
    assert set(poses(older)) == {arm.robot.joints["joint_3"].child}
    assert stored(arm, "joint_1") == pytest.approx(0.5)
    assert send(arm, GRIPPER, ["joint_1"], [0.1], T0 - 5 * MS) is None  # nothing left
    assert stored(arm, "joint_1") == pytest.approx(0.5)
    assert not arm.logger.containing("rate limiter reset")
    assert arm.logger.containing("a value older than another topic's is ignored: joint_1")
    model = arm.pipeline.model
    assert model is not None and model.sources.conflicts == {"joint_1": 2}


def test_a_newer_value_from_another_topic_wins(arm: Rig) -> None:
    assert send(arm, ARM, ["joint_1"], [0.5], T0) is not None
    newer = send(arm, BASE, ["joint_1"], [-0.4], T0 + 60 * MS)
    assert newer is not None and newer.stamp_ns == T0 + 60 * MS
    assert_pose(newer, arm.robot, "joint_1", -0.4)
    assert send(arm, ARM, ["joint_1"], [0.6], T0 + 30 * MS) is None  # older than BASE's now


def test_a_jump_back_on_the_topic_of_the_newer_value_still_resets(arm: Rig) -> None:
    assert send(arm, ARM, ["joint_1"], [0.5], T0) is not None
    assert send(arm, GRIPPER, ["finger_joint"], [0.2], T0) is not None
    looped = send(arm, ARM, ["joint_1"], [0.1], T0 - 60_000 * MS)  # the arm's bag looped
    assert looped is not None
    assert_pose(looped, arm.robot, "joint_1", 0.1)
    assert arm.logger.containing("joint state stamps jumped backwards: rate limiter reset")


def test_ignore_timestamp_takes_the_last_value_to_arrive() -> None:
    rig = Rig(ignore_timestamp=True)
    assert send(rig, ARM, ["joint_1"], [0.5], T0) is not None
    older = send(rig, GRIPPER, ["joint_1"], [0.1], T0 - 10 * MS)
    assert older is not None
    assert_pose(older, rig.robot, "joint_1", 0.1)


def test_a_message_naming_no_joint_of_the_robot_from_a_second_topic_is_dropped(arm: Rig) -> None:
    assert send(arm, ARM, ["joint_1"], [0.5], T0) is not None
    assert send(arm, GRIPPER, ["nothere"], [0.1], T0 - 10 * MS) is None
    assert send(arm, GRIPPER, [], [], T0 - 5 * MS) is None


def test_a_multi_dof_value_older_than_another_topics_is_ignored_as_a_joint_states() -> None:
    """A MultiDOFJointState takes the JointState path: between topics the newer stamp wins
    for it too, joint by joint."""
    rig = Rig(ALL_TYPES_URDF)
    plane = ["plane_joint/x", "plane_joint/y", "plane_joint/theta"]
    assert send(rig, ARM, plane, [0.5, -0.25, 0.3], T0) is not None
    lift = [0.0, 0.0, 2.0]  # float_joint: 2 m up, no turn
    older = rig.pipeline.multi_dof_joint_state(
        T0 - 10 * MS,
        ("plane_joint", "float_joint"),
        np.array([[9.0, 9.0, 0.0], lift]),
        np.array([[0.0, 0.0, 0.0, 1.0]] * 2),
    )
    assert older is not None  # float_joint is the multi-DOF topic's alone: set and published
    assert set(poses(older)) == {rig.robot.joints["float_joint"].child}
    assert_pose(older, rig.robot, "float_joint", np.array([*lift, 0.0, 0.0, 0.0, 1.0]))
    assert [stored(rig, name) for name in plane] == pytest.approx([0.5, -0.25, 0.3])
    assert rig.logger.containing("a value older than another topic's is ignored: plane_joint")


def test_two_topics_sending_the_same_names_are_two_publishers_of_those_joints(arm: Rig) -> None:
    names = ["joint_1", "joint_2"]
    for k in range(3):  # alternating, as two drivers would
        send(arm, ARM, names, [0.1, 0.2], T0 + 100 * k * MS)
        send(arm, GRIPPER, names, [0.1, 0.2], T0 + (100 * k + 50) * MS)
    topics = {ARM: "joint_states", GRIPPER: "/gripper/joint_states"}
    report = arm.pipeline.health.report(GraphFacts({}, T0, False, topics))
    assert "joint_1 (joint_states, /gripper/joint_states)" in report.message
    assert "joint_2 (joint_states, /gripper/joint_states)" in report.message
