"""launch_testing: a user's launch file remaps the node's joint_states topic (launch_ros SetRemap).

The package's ``joint_tf_publisher.launch.py`` is included under
``SetRemap(joint_states -> /arm/remapped_joint_states)``, as a bringup file routes a driver's
topic to robot_state_publisher. A JointState on the remapped topic must come back on /tf,
and nothing may subscribe ``/joint_states`` any more.

Skipped where launch_testing is not importable (the pip environment without the kit).
"""

from __future__ import annotations

import sys
import unittest
from pathlib import Path

import pytest

sys.path[:0] = [str(Path(__file__).resolve().parents[n]) for n in (0, 1)]  # for launch_test
import launch_harness as harness  # noqa: E402  (the first import: skips without ROS 2)
import launch_testing  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import GroupAction  # noqa: E402
from launch_ros.actions import SetRemap  # noqa: E402
from node_harness import wait_until  # noqa: E402

REMAPPED = "/arm/remapped_joint_states"


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    remapped = [
        SetRemap(src="joint_states", dst=REMAPPED),
        harness.node_launch(model=str(harness.MIMIC_ARM)),
    ]
    return harness.ready_to_test(GroupAction(remapped))


class TestRemappedJointStates(harness.ProbeTestCase):
    def test_the_remapped_topic_drives_tf(self) -> None:
        msg = harness.joint_state(["joint_1"], [0.5], 77.0)
        transforms = harness.send_until_tf(self.probe, REMAPPED, msg, "link_1")
        self.assertEqual(transforms["link_1"].header.frame_id, "arm_base")

    def test_nothing_listens_on_joint_states(self) -> None:
        node = self.probe.node
        wait_until(lambda: node.count_subscribers(REMAPPED) > 0, harness.START_S, what=REMAPPED)
        self.assertEqual(node.count_subscribers("/joint_states"), 0)


@launch_testing.post_shutdown_test()
class TestRemapShutdown(harness.ExitCodes, unittest.TestCase):
    pass
