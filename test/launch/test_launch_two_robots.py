"""launch_testing: two robots in one launch, each in its namespace with its frame prefix.

The package's ``joint_tf_publisher.launch.py`` is included twice, each in a scoped group
(as a multi-robot bringup file does): the mimic arm as ``r1`` with frames ``r1/...`` and the
bundled demo arm as ``r2`` with frames ``r2/...``. Both static sets arrive on /tf_static;
a JointState on ``/r1/joint_states`` moves only r1's frames, one on ``/r2/joint_states`` only
r2's.

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
from launch_harness import joint_state, send_until_tf, wait_static_children  # noqa: E402
from node_harness import open_probe  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

ROOT = REPO_ROOT
LAUNCH_FILE = ROOT / "launch" / "joint_tf_publisher.launch.py"
ROBOTS = {
    "r1": ROOT / "test" / "urdf" / "arm_mimic_gripper.urdf",
    "r2": ROOT / "urdf" / "demo_arm.urdf",
}


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    robots = [
        GroupAction(
            [
                IncludeLaunchDescription(
                    PythonLaunchDescriptionSource(str(LAUNCH_FILE)),
                    launch_arguments={
                        "model": str(model),
                        "namespace": name,
                        "frame_prefix": f"{name}/",
                    }.items(),
                )
            ],
            scoped=True,
        )
        for name, model in ROBOTS.items()
    ]
    return LaunchDescription([*robots, launch_testing.actions.ReadyToTest()])


def fixed_children(name: str) -> set[str]:
    robot = Robot.load(ROBOTS[name])
    return {f"{name}/{j.child}" for j in robot.joints.values() if j.joint_type == "fixed"}


class TestTwoRobots(unittest.TestCase):
    @classmethod
    def setUpClass(cls) -> None:
        cls._probe = open_probe()
        cls.probe = cls._probe.__enter__()

    @classmethod
    def tearDownClass(cls) -> None:
        cls._probe.__exit__(None, None, None)

    def test_both_static_sets_arrive_prefixed(self) -> None:
        children = set(
            wait_static_children(self.probe, fixed_children("r1") | fixed_children("r2"))
        )
        self.assertTrue(all(child.startswith(("r1/", "r2/")) for child in children), children)

    def test_each_namespace_moves_only_its_robot(self) -> None:
        for name, joint in (("r1", "joint_1"), ("r2", "shoulder_pan_joint")):
            child = Robot.load(ROBOTS[name]).joints[joint].child
            msg = joint_state([joint], [0.25], 88.0)
            transforms = send_until_tf(self.probe, f"/{name}/joint_states", msg, f"{name}/{child}")
            self.assertTrue(all(frame.startswith(f"{name}/") for frame in transforms), transforms)
            parents = {t.header.frame_id for t in transforms.values()}
            self.assertTrue(all(parent.startswith(f"{name}/") for parent in parents), parents)


@launch_testing.post_shutdown_test()
class TestTwoRobotsShutdown(unittest.TestCase):
    def test_exit_codes(self, proc_info: Any) -> None:
        launch_testing.asserts.assertExitCodes(proc_info)
