"""``fleet.launch.py`` under the real launch system: robots from a parameters file, one process.

``ros2 launch joint_tf_publisher fleet.launch.py params_file:=... robots:=arm,base``: the
file lists only ``arm`` for the fleet and gives both robots' sections; the ``robots``
argument overrides the file's list, both robots' static sets arrive (their own
``frame_prefix`` from the file), both nodes answer as ``/<robot>/joint_tf_publisher``, and the
launch stops cleanly. ``multi_robot.launch.py one_process:=true`` is tested with its process
per robot twin in test_launch_global_tree.py.

Skipped where the launch tools are not importable (the pip world).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

REASON = "needs ROS 2's launch tools: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)

from launch_harness import (  # noqa: E402
    MIMIC_ARM,
    REPO,
    get_parameters,
    launched,
    wait_static_children,
)

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = pytest.mark.ros

ROBOTS = {"arm": MIMIC_ARM, "base": REPO / "test" / "urdf" / "mobile_base_planar.urdf"}


def test_fleet_launch_serves_the_robots_of_its_arguments(probe: Any, tmp_path: Path) -> None:
    params = tmp_path / "fleet.yaml"
    sections = ["/joint_tf_fleet:", "  ros__parameters:", "    robots: [arm]"]
    for name, model in ROBOTS.items():
        sections += [
            f"/{name}/joint_tf_publisher:",
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
    with launched("fleet.launch.py", arguments, tmp_path / "launch.log") as launch:
        with launch.explained():
            heard = wait_static_children(probe, expected)
            assert expected <= set(heard)
            assert get_parameters(probe, "/joint_tf_fleet", ["robots", "retry_period"]) == {
                "robots": ["arm", "base"],
                "retry_period": 2.5,
            }
            for name in ROBOTS:
                assert get_parameters(probe, f"/{name}/joint_tf_publisher", ["frame_prefix"]) == {
                    "frame_prefix": f"{name}/"
                }
        launch.assert_clean_stop(launch.interrupt())
