"""``fleet.launch.py`` under the real launch system: robots from a parameters file, one process.

``ros2 launch joint_tf_publisher fleet.launch.py params_file:=... robots:=arm,base``: the
file lists only ``arm`` for the fleet and gives both robots' sections; the ``robots``
argument overrides the file's list, both robots' static sets arrive (their own
``frame_prefix`` from the file), both nodes answer as ``/<robot>/joint_tf_publisher``, a
real tf2 Buffer resolves each robot's frames as its FK, and the launch stops cleanly.
``multi_robot.launch.py one_process:=true`` is tested with its process-per-robot twin in
test_launch_global_tree.py.

Skipped where the launch tools and tf2_ros are not importable (the pip world).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

REASON = "needs ROS 2's launch tools: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)
pytest.importorskip("tf2_ros", reason=REASON)

import numpy as np  # noqa: E402
from launch_harness import (  # noqa: E402
    MIMIC_ARM,
    REPO,
    get_parameters,
    launched,
    wait_static_children,
)
from node_harness import stamp_msg, wait_until  # noqa: E402
from rclpy.duration import Duration  # noqa: E402
from rclpy.time import Time  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_ros import Buffer, TransformListener  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = pytest.mark.ros

ROBOTS = {"arm": MIMIC_ARM, "base": REPO / "test" / "urdf" / "mobile_base_planar.urdf"}


def test_fleet_launch_serves_the_robots_of_its_arguments(probe: Any, tmp_path: Path) -> None:
    params = tmp_path / "fleet.yaml"
    sections = ["/site/joint_tf_fleet:", "  ros__parameters:", "    robots: [arm]"]
    for name, model in ROBOTS.items():
        sections += [
            f"/site/{name}/joint_tf_publisher:",
            "  ros__parameters:",
            f"    description_file: {model}",
            f"    frame_prefix: {name}/",
        ]
    params.write_text("\n".join(sections) + "\n")
    expected = {
        f"{name}/{joint.child}"
        for name, model in ROBOTS.items()
        for joint in Robot.load(model).joints.values()
        if joint.joint_type == "fixed"
    }
    arguments = {"params_file": str(params), "robots": "arm,base", "retry_period": "2.5"}
    arguments["namespace"] = "site"  # the fleet in /site, each robot nested under it
    with launched("fleet.launch.py", arguments, tmp_path / "launch.log") as launch:
        with launch.explained():
            heard = wait_static_children(probe, expected)
            assert expected <= set(heard)
            assert get_parameters(probe, "/site/joint_tf_fleet", ["robots", "retry_period"]) == {
                "robots": ["arm", "base"],
                "retry_period": 2.5,
            }
            for name in ROBOTS:
                node = f"/site/{name}/joint_tf_publisher"
                assert get_parameters(probe, node, ["frame_prefix"]) == {"frame_prefix": f"{name}/"}
            resolve_each_robot_in_a_tf2_buffer(probe)
        launch.assert_clean_stop(launch.interrupt())


def resolve_each_robot_in_a_tf2_buffer(probe: Any) -> None:
    """A real tf2 Buffer (tf2_ros, as RViz) resolves each robot's frames as its FK: the arm's
    moving tip at a JointState's stamp, the base's fixed frame."""
    buffer = Buffer()
    listener = TransformListener(buffer, probe.node, spin_thread=False)
    publisher = probe.node.create_publisher(JointState, "/site/arm/joint_states", 10)
    try:
        arm = Robot.load(ROBOTS["arm"])
        cfg = {"joint_1": 0.4, "joint_2": -0.3}
        stamp_s = 4321.5
        message = JointState(name=list(cfg), position=list(cfg.values()))
        message.header.stamp = stamp_msg(stamp_s)
        stamp = Time(seconds=stamp_s)

        def arm_resolved() -> bool:
            publisher.publish(message)  # again until heard: discovery may drop the first
            return bool(buffer.can_transform("arm/world", "arm/link_2", stamp, Duration()))

        wait_until(arm_resolved, what="arm/link_2 in the tf2 Buffer")
        t = buffer.lookup_transform("arm/world", "arm/link_2", stamp).transform.translation
        expected = arm.link_fk(cfg, link="link_2")[:3, 3]
        np.testing.assert_allclose([t.x, t.y, t.z], expected, atol=1e-9)
        base = Robot.load(ROBOTS["base"])
        wait_until(
            lambda: buffer.can_transform("base/base_footprint", "base/base_link", Time()),
            what="base/base_link in the tf2 Buffer",
        )
        t = buffer.lookup_transform("base/base_footprint", "base/base_link", Time()).transform
        origin = base.joints["base_joint"].origin[:3, 3]
        np.testing.assert_allclose(
            [t.translation.x, t.translation.y, t.translation.z], origin, atol=1e-9
        )
    finally:
        listener.unregister()
        probe.node.destroy_publisher(publisher)
