"""The tool-change example under the real launch system, read by a real tf2 Buffer.

``tool_change.launch.py`` hangs urdf/gripper.urdf from the sample arm's flange. A running
``tf2_lookup.py`` (tf2_ros.Buffer + TransformListener in a process of its own, as RViz)
resolves the gripper's tip; then one ``ros2 param set`` swaps the gripper for
urdf/suction_tool.urdf, and the same Buffer resolves the new tool at the same mount, with
the pose the composed description gives.

Needs the ROS 2 tools (a sourced distro, or the kit that ``make test`` builds) with this
package built and sourced; skipped where launch_testing and tf2_ros are not importable.
"""

from __future__ import annotations

import json
import subprocess
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REASON = "needs ROS 2's launch tools and tf2_ros: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("tf2_ros", reason=REASON)

import numpy as np  # noqa: E402
from launch_harness import (  # noqa: E402
    START_S,
    Launch,
    kit_python,
    launched,
    package_share,
    ros2_daemon,
    ros2_on_node,
    wait_static_children,
)
from scipy.spatial.transform import Rotation  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.description.compose import Attachment, compose  # noqa: E402

pytestmark = pytest.mark.ros

LOOKUP = Path(__file__).resolve().parent / "tf2_lookup.py"
ORIGIN = (0.0, 0.0, 0.1, 0.0, 0.0, 0.0)  # the launch file's default tool_origin
NODE = "/joint_tf_publisher"


def tool(file: Path) -> Attachment:
    return Attachment("tool", "tool_flange", file=str(file), origin=ORIGIN, prefix="tool_")


@pytest.fixture(scope="module")
def tool_launch(probe: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launch]:
    log = tmp_path_factory.mktemp("tool_change") / "launch.log"
    with ros2_daemon(), launched("tool_change.launch.py", {}, log) as launch:
        with launch.explained():
            wait_static_children(probe, {"tool_base_link", "tool_tcp"})
        yield launch


def test_a_running_tf2_buffer_resolves_the_new_tool_after_a_swap(
    tool_launch: Launch,
) -> None:
    share = package_share()
    arm = (share / "urdf" / "demo_arm.urdf").read_text()
    gripper, suction = share / "urdf" / "gripper.urdf", share / "urdf" / "suction_tool.urdf"
    lookup = subprocess.Popen(
        [
            kit_python(),
            str(LOOKUP),
            "0",
            str(START_S),
            "tool_flange,tool_tcp",
            "tool_flange,tool_cup",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert lookup.stderr is not None
        first = lookup.stderr.readline()
        assert first.strip() == "resolved tool_flange,tool_tcp", first + lookup.stderr.read()
        output = ros2_on_node(NODE, "param", "set", NODE, "attachments.tool.file", str(suction))
        assert "Set parameter successful" in output, output
        stdout, stderr = lookup.communicate(timeout=START_S + 30)
    finally:
        if lookup.poll() is None:
            lookup.kill()
            lookup.wait()
    assert lookup.returncode == 0, stderr
    poses = json.loads(stdout)
    for pair, file in (("tool_flange,tool_tcp", gripper), ("tool_flange,tool_cup", suction)):
        robot = Robot.from_xml_string(compose(arm, [tool(file)]))
        frame = pair.split(",")[1]
        expected = np.linalg.inv(robot.link_fk(link="tool_flange")) @ robot.link_fk(link=frame)
        x, y, z, *quaternion = poses[pair]
        np.testing.assert_allclose([x, y, z], expected[:3, 3], atol=1e-9, err_msg=pair)
        np.testing.assert_allclose(
            Rotation.from_quat(quaternion).as_matrix(), expected[:3, :3], atol=1e-9, err_msg=pair
        )
    tool_launch.wait_for_output(r"\[WARN\].*\btool_left_finger, tool_right_finger, tool_tcp\b")
