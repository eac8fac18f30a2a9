"""launch_testing test of launch/joint_tf_publisher.launch.py (needs a ROS 2 install).

Skipped where ``launch_testing`` is not importable (the pip environment without the kit);
there the same behaviour is covered over DDS by the node's end-to-end tests, which start its
entry point directly. With a sourced ROS 2 (or the kit) and the package built, ``make test``
runs it through launch_testing's pytest plugin; by hand:
``launch_test test/launch/test_launch_node.py``.

It starts the node through the package's launch file on the sample arm with a frame prefix,
then checks: the static transforms arrive on /tf_static (with the prefix), a JointState
comes back as one /tf message stamped with its stamp, and the node exits cleanly.
"""

from __future__ import annotations

import sys
import time
import unittest
from pathlib import Path
from typing import Any

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parents[n]) for n in (0, 1)]  # for launch_test
import launch_harness as harness  # noqa: E402  (the first import: skips without ROS 2)
import launch_testing  # noqa: E402
import rclpy  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

PREFIX = "lt/"


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    return harness.ready_to_test(
        harness.node_launch(model=str(harness.MIMIC_ARM), frame_prefix=PREFIX)
    )


def _latched() -> QoSProfile:
    return QoSProfile(
        depth=1, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.TRANSIENT_LOCAL
    )


class TestJointTfPublisherLaunch(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        rclpy.init()
        cls.node = rclpy.create_node("launch_test_probe")

    @classmethod
    def tearDownClass(cls) -> None:
        cls.node.destroy_node()
        rclpy.shutdown()

    def spin_until(self, condition: Any, timeout_s: float = 20.0) -> bool:
        deadline = time.monotonic() + timeout_s
        while not condition():
            if time.monotonic() > deadline:
                return False
            rclpy.spin_once(self.node, timeout_sec=0.05)
        return True

    def test_static_transforms_carry_the_prefix(self) -> None:
        received: list[Any] = []
        self.node.create_subscription(TFMessage, "/tf_static", received.append, _latched())
        self.assertTrue(self.spin_until(lambda: bool(received)), "no /tf_static")
        children = {t.child_frame_id for t in received[-1].transforms}
        self.assertIn(PREFIX + "camera_optical_frame", children)
        self.assertTrue(all(name.startswith(PREFIX) for name in children))

    def test_joint_state_comes_back_on_tf(self) -> None:
        received: list[Any] = []
        self.node.create_subscription(TFMessage, "/tf", received.append, 100)
        publisher = self.node.create_publisher(JointState, "joint_states", 10)
        msg = JointState(name=["joint_1", "finger_joint"], position=[0.5, 0.4])
        msg.header.stamp.sec = 1234

        def seen() -> bool:
            # A new stamp each try: the node's rate limiter (message time) rightly drops a
            # repeated stamp, and the first message may go out before discovery completes.
            msg.header.stamp.sec += 1
            publisher.publish(msg)
            return any(
                t.child_frame_id == PREFIX + "link_1" and t.header.stamp.sec > 1234
                for m in received
                for t in m.transforms
            )

        self.assertTrue(self.spin_until(seen), "no /tf for joint_1")


@launch_testing.post_shutdown_test()
class TestJointTfPublisherShutdown(harness.ExitCodes, unittest.TestCase):
    pass
