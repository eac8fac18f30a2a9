"""launch_testing: two robots in one launch, each in its namespace with its frame prefix.

The package's ``joint_tf_publisher.launch.py`` is included twice, each in a scoped group
(as a multi-robot bringup file does): the mimic arm as ``r1`` with frames ``r1/...`` and the
bundled demo arm as ``r2`` with frames ``r2/...``. Both static sets arrive on /tf_static;
a JointState on ``/r1/joint_states`` moves only r1's frames, one on ``/r2/joint_states`` only
r2's.

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

from joint_tf_publisher import Robot  # noqa: E402

ROBOTS = {"r1": harness.MIMIC_ARM, "r2": harness.REPO / "urdf" / "demo_arm.urdf"}


@pytest.mark.launch_test
def generate_test_description() -> LaunchDescription:
    return harness.ready_to_test(
        *(
            GroupAction(
                [harness.node_launch(model=str(model), namespace=name, frame_prefix=f"{name}/")],
                scoped=True,
            )
            for name, model in ROBOTS.items()
        )
    )


def fixed_children(name: str) -> set[str]:
    robot = Robot.load(ROBOTS[name])
    return {f"{name}/{j.child}" for j in robot.joints.values() if j.joint_type == "fixed"}


class TestTwoRobots(harness.ProbeTestCase):
    def test_both_static_sets_arrive_prefixed(self) -> None:
        children = set(
            harness.wait_static_children(self.probe, fixed_children("r1") | fixed_children("r2"))
        )
        self.assertTrue(all(child.startswith(("r1/", "r2/")) for child in children), children)

    def test_each_namespace_moves_only_its_robot(self) -> None:
        for name, joint in (("r1", "joint_1"), ("r2", "shoulder_pan_joint")):
            child = Robot.load(ROBOTS[name]).joints[joint].child
            msg = harness.joint_state([joint], [0.25], 88.0)
            transforms = harness.send_until_tf(
                self.probe, f"/{name}/joint_states", msg, f"{name}/{child}"
            )
            self.assertTrue(all(frame.startswith(f"{name}/") for frame in transforms), transforms)
            parents = {t.header.frame_id for t in transforms.values()}
            self.assertTrue(all(parent.startswith(f"{name}/") for parent in parents), parents)


@launch_testing.post_shutdown_test()
class TestTwoRobotsShutdown(harness.ExitCodes, unittest.TestCase):
    pass
