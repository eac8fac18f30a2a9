"""End to end: an arm and its gripper on two topics (``source_list``), over DDS.

The node's console script runs in namespace /sources with ``source_list`` naming
``arm/joint_states`` and ``gripper/joint_states``; the test's probe publishes on both with
different stamps, and every transform must carry the stamp of the message that gave its
joint (never the node clock), mimic followers the stamp of their leader's message. Run under
each executor the node can spin with.
"""

from __future__ import annotations

import time
from collections.abc import Iterator, Sequence
from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from node_harness import (  # noqa: E402
    TOLERANCE,
    WAIT_S,
    NodeUnderTest,
    Probe,
    fresh_stamp,
    matrix_of,
    probe_per_executor,  # noqa: F401 (the module's probe: each executor in turn)
    seconds_to_ns,
    stamp_msg,
    stamp_ns,
    started,
    wait_until,
)
from repo_paths import TEST_DIR  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
NAMESPACE = "/sources"
ARM_JOINTS = ["joint_1", "joint_2", "joint_3", "joint_4", "joint_5", "joint_6", "joint_7"]


@pytest.fixture(scope="module")
def robot() -> Robot:
    return Robot.load(ARM_URDF)


class Topic:
    """A JointState publisher of the probe on one of the node's topics."""

    def __init__(self, probe: Probe, node: NodeUnderTest, name: str) -> None:
        self.probe, self.node = probe, node
        self.publisher = probe.node.create_publisher(JointState, f"{NAMESPACE}/{name}", 100)

    def wait_matched(self) -> None:
        wait_until(lambda: self.publisher.get_subscription_count() > 0, what=self.publisher)

    def publish(self, names: Sequence[str], positions: Sequence[float], stamp_s: float) -> None:
        msg = JointState()
        msg.header.stamp = stamp_msg(stamp_s)
        msg.name, msg.position = list(names), [float(p) for p in positions]
        self.publisher.publish(msg)

    def publish_until_seen(
        self, names: Sequence[str], positions: Sequence[float], stamp_s: float, child: str
    ) -> TFMessage:
        """Publish again every second until /tf carries ``child`` at ``stamp_s`` (a best
        effort reader may drop what arrives before it has matched the publisher)."""
        start = len(self.probe.tf)
        deadline = time.monotonic() + WAIT_S
        while True:
            self.publish(names, positions, stamp_s)
            found = self.node.find_tf(start, child, stamp_s, timeout=1.0)
            if found is not None:
                return found
            if time.monotonic() > deadline:
                pytest.fail(f"no /tf with {child} at {stamp_s} ({self.node.stderr()[-500:]})")


@pytest.fixture(scope="class")
def two_topics(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[NodeUnderTest, Topic, Topic]]:
    params: dict[str, Any] = {
        "robot_description": ARM_URDF.read_text(),
        "source_list": ["arm/joint_states", "gripper/joint_states"],
    }
    node = started(probe, tmp_path_factory, NAMESPACE, params, handshake=("joint_1", "link_1"))
    arm, gripper = (
        Topic(probe, node, "arm/joint_states"),
        Topic(probe, node, "gripper/joint_states"),
    )
    arm.wait_matched()
    gripper.wait_matched()
    yield node, arm, gripper
    node.stop()


def stamps_by_child(msg: TFMessage) -> dict[str, int]:
    return {t.child_frame_id: stamp_ns(t.header.stamp) for t in msg.transforms}


class TestTwoTopics:
    def test_each_topic_publishes_its_joints_with_its_own_stamp(
        self, two_topics: tuple[NodeUnderTest, Topic, Topic], robot: Robot
    ) -> None:
        _, arm, gripper = two_topics
        arm_stamp = fresh_stamp()
        gripper_stamp = arm_stamp - 0.25  # another clock, a little behind
        values = [0.1 * (k + 1) for k in range(len(ARM_JOINTS))]
        from_arm = arm.publish_until_seen(ARM_JOINTS, values, arm_stamp, "link_7")
        from_gripper = gripper.publish_until_seen(
            ["finger_joint"], [0.4], gripper_stamp, "left_knuckle"
        )
        arm_children = {robot.joints[joint].child for joint in ARM_JOINTS}
        assert stamps_by_child(from_arm) == dict.fromkeys(arm_children, seconds_to_ns(arm_stamp))
        gripper_children = {
            "left_knuckle",
            "right_knuckle",
            "left_inner_finger",
            "right_inner_finger",
        }
        assert stamps_by_child(from_gripper) == dict.fromkeys(
            gripper_children, seconds_to_ns(gripper_stamp)
        )
        # finger_joint and its mimic followers (multiplier -1; right_inner_finger_joint
        # follows right_knuckle_joint with multiplier 1).
        gripper_values = {
            "finger_joint": 0.4,
            "right_knuckle_joint": -0.4,
            "left_inner_finger_joint": -0.4,
            "right_inner_finger_joint": -0.4,
        }
        received = {t.child_frame_id: matrix_of(t.transform) for t in from_gripper.transforms}
        for joint, value in gripper_values.items():
            expected = robot.joints[joint].child_pose(value)
            np.testing.assert_allclose(
                received[robot.joints[joint].child], expected, atol=TOLERANCE
            )

    def test_an_older_value_from_the_other_topic_leaves_the_joint_alone(
        self, two_topics: tuple[NodeUnderTest, Topic, Topic]
    ) -> None:
        _, arm, gripper = two_topics
        stamp = fresh_stamp()
        arm.publish_until_seen(["finger_joint"], [0.6], stamp, "left_knuckle")
        mixed = gripper.publish_until_seen(
            ["finger_joint", "joint_7"], [0.1, 0.3], stamp - 0.5, "link_7"
        )
        assert set(stamps_by_child(mixed)) == {"link_7"}  # finger_joint: the arm's is newer

    def test_changing_source_list_subscribes_again(
        self, two_topics: tuple[NodeUnderTest, Topic, Topic], probe: Probe
    ) -> None:
        node, arm, _ = two_topics
        (result,) = node.set_parameters(source_list=["base/joint_states"])
        assert result.successful, result.reason
        base = Topic(probe, node, "base/joint_states")
        base.wait_matched()
        wait_until(lambda: arm.publisher.get_subscription_count() == 0, what="arm unsubscribed")
        stamp = fresh_stamp()
        moved = base.publish_until_seen(["joint_2"], [0.7], stamp, "link_2")
        assert stamps_by_child(moved) == {"link_2": seconds_to_ns(stamp)}


# -- zeros.<joint>: a caster no driver publishes ----------------------------------------------

PLANAR_URDF = TEST_DIR / "urdf" / "mobile_base_planar.urdf"
BASE_ZEROS = {"caster_swivel_joint": 0.3, "base_planar_joint": [0.5, -0.25, 1.5]}


@pytest.fixture(scope="class")
def mobile_base(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    """The mobile base with zeros given as a YAML mapping (``zeros: {joint: value}``)."""
    params: dict[str, Any] = {
        "robot_description": PLANAR_URDF.read_text(),
        "publish_default_positions": True,
        "zeros": BASE_ZEROS,
    }
    node = started(probe, tmp_path_factory, "/zeros_base", params, handshake=None)
    yield node
    node.stop()


class TestZeros:
    def test_a_caster_and_a_base_given_by_zeros_are_published_there(
        self, mobile_base: NodeUnderTest
    ) -> None:
        robot = Robot.load(PLANAR_URDF)
        msg = mobile_base.wait_tf(0, "caster_swivel")
        received = {t.child_frame_id: matrix_of(t.transform) for t in msg.transforms}
        for joint, value in BASE_ZEROS.items():
            expected = robot.joints[joint].child_pose(np.array(value))
            np.testing.assert_allclose(
                received[robot.joints[joint].child], expected, atol=TOLERANCE
            )
        np.testing.assert_allclose(
            received["caster_wheel"], robot.joints["caster_wheel_joint"].child_pose(0.0)
        )
