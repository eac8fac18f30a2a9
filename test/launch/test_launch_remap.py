"""launch_testing: a user's launch file remaps the node's joint_states topic (launch_ros SetRemap).

The package's ``joint_tf_publisher.launch.py`` is included under
``SetRemap(joint_states -> /arm/remapped_joint_states)``, as a bringup file routes a driver's
topic to robot_state_publisher. A JointState on the remapped topic must come back on /tf,
and nothing may subscribe ``/joint_states`` any more.

Skipped where launch_testing is not importable (the pip environment without the kit).
"""

from __future__ import annotations

import unittest
from typing import Any

import pytest
from repo_paths import REPO_ROOT

REASON = "needs ROS 2's launch_testing: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)

import launch_testing.actions  # noqa: E402
import launch_testing.asserts  # noqa: E402
from launch import LaunchDescription  # noqa: E402
from launch.actions import GroupAction, IncludeLaunchDescription  # noqa: E402
from launch.launch_description_sources import PythonLaunchDescriptionSource  # noqa: E402
from launch_harness import START_S, joint_state, send_until_tf  # noqa: E402
from launch_ros.actions import SetRemap  # noqa: E402
from node_harness import open_probe, wait_until  # noqa: E402

ROOT = REPO_ROOT
LAUNCH_FILE = ROOT / "launch" / "joint_tf_publisher.launch.py"
MODEL = ROOT / "test" / "urdf" / "arm_mimic_gripper.urdf"
REMAPPED = "/arm/remapped_joint_states"


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    return LaunchDescription(
        [
            GroupAction(
                [
                    SetRemap(src="joint_states", dst=REMAPPED),
                    IncludeLaunchDescription(
                        PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
                        launch_arguments={"model": str(MODEL)}.items(),
                    ),
                ]
            ),
            launch_testing.actions.ReadyToTest(),
        ]
    )


class TestRemappedJointStates(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls._probe = open_probe()
        cls.probe = cls._probe.__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls._probe.__exit__(None, None, None)

    def test_the_remapped_topic_drives_tf(self) -> None:
        msg = joint_state(["joint_1"], [0.5], 77.0)
        transforms = send_until_tf(self.probe, REMAPPED, msg, "link_1")
        self.assertEqual(transforms["link_1"].header.frame_id, "arm_base")

    def test_nothing_listens_on_joint_states(self) -> None:
        node = self.probe.node
        wait_until(lambda: node.count_subscribers(REMAPPED) > 0, START_S, what=REMAPPED)
        self.assertEqual(node.count_subscribers("/joint_states"), 0)


@launch_testing.post_shutdown_test()
class TestRemapShutdown(unittest.TestCase):
    def test_exit_code(self, proc_info: Any) -> None:
        launch_testing.asserts.assertExitCodes(proc_info)
