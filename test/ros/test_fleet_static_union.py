"""The fleet with ``static_union`` on (issue #46): ONE union for the whole process, not one per
robot. Two robots of one fleet in this process (``fleet.serve`` on a thread, in a context of
its own), each with a global tree, and one foreign ``/tf_static`` publisher of the test's: a
late subscriber gets every robot's statics and the foreign frame in one message from one
writer of the fleet, and each robot's global tree; the first robot removed hands the union to
the other, which keeps the foreign frame.
"""

from __future__ import annotations

import os
import signal
import threading
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

import rclpy  # noqa: E402
from geometry_msgs.msg import TransformStamped  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.node_core.stop_signals import StopSignals  # noqa: E402
from joint_tf_publisher.ros import fleet  # noqa: E402
from joint_tf_publisher.ros.qos import tf_listener_static_qos, tf_static_qos  # noqa: E402

pytestmark = pytest.mark.ros

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
WAIT_S = 20.0


def robot_statics(prefix: str) -> set[str]:
    robot = Robot.load(ARM_URDF)
    return {prefix + j.child for j in robot.joints.values() if j.joint_type == "fixed"}


class LateSubscriber:
    """A new /tf_static subscriber as tf2's listener asks (transient local, keep last 100):
    the child frames of each message it gets, and the writer (GID) that sent it."""

    def __init__(self, ros: Any) -> None:
        self.received: list[tuple[bytes, set[str]]] = []
        ros.node.create_subscription(TFMessage, "/tf_static", self.heard, tf_listener_static_qos())

    def heard(self, message: TFMessage, info: Any) -> None:
        writer = bytes(info["publisher_gid"]["data"])
        self.received.append((writer, {t.child_frame_id for t in message.transforms}))

    @property
    def frames(self) -> list[set[str]]:
        return [frames for _, frames in self.received]


def test_one_union_for_the_whole_fleet(ros: Any, tmp_path: Path) -> None:
    params = tmp_path / "fleet.yaml"
    lines = ["/joint_tf_fleet:", "  ros__parameters:", "    robots: [r1, r2]"]
    lines += ["/**:", "  ros__parameters:", "    static_union: true"]
    for name in ("r1", "r2"):
        lines += [
            f"/{name}/joint_tf_publisher:",
            "  ros__parameters:",
            f"    description_file: {ARM_URDF}",
            f"    frame_prefix: {name}/",
            f"    global_frame_prefix: site/{name}/",
        ]
    params.write_text("\n".join(lines) + "\n")
    lidar = TransformStamped()
    lidar.header.frame_id, lidar.child_frame_id = "world", "lidar"
    lidar.transform.rotation.w = 1.0
    foreign = ros.node.create_publisher(TFMessage, "/tf_static", tf_static_qos())
    foreign.publish(TFMessage(transforms=[lidar]))
    argv = ["joint_tf_fleet", "--ros-args", "--params-file", str(params)]
    context = rclpy.Context()
    rclpy.init(args=argv, context=context)
    the_fleet = fleet.Fleet(argv, context=context)
    stop = StopSignals()
    thread = threading.Thread(target=fleet.serve, args=(the_fleet, stop), daemon=True)
    thread.start()
    everything = robot_statics("r1/") | robot_statics("r2/") | {"lidar"}
    try:
        assert ros.spin_until(lambda: len(the_fleet.robots) == 2, WAIT_S)
        late = LateSubscriber(ros)  # late: after the fleet's robots serve
        assert ros.spin_until(lambda: any(frames >= everything for frames in late.frames), WAIT_S)
        fleet_nodes = {"/r1/joint_tf_publisher", "/r2/joint_tf_publisher"}
        writers = ros.node.get_publishers_info_by_topic("/tf_static")
        by_fleet = [w for w in writers if f"{w.node_namespace}/{w.node_name}" in fleet_nodes]
        assert len(by_fleet) == 2  # each robot has its writer, yet...
        robot_frames = robot_statics("r1/") | robot_statics("r2/")
        ros.spin_until(lambda: False, 1.0)  # whatever else is latched arrives meanwhile
        # ...one of them sends: one message, every robot's and the foreign statics
        fleet_writers = {writer for writer, frames in late.received if frames & robot_frames}
        assert len(fleet_writers) == 1
        assert all(frames >= robot_frames for frames in late.frames if frames & robot_frames)
        global_frames = robot_statics("site/r1/") | robot_statics("site/r2/")
        assert set().union(*late.frames) >= global_frames  # each global tree's writer sends
        # the first robot leaves: the other hosts the union, the foreign frame kept
        host = next(
            name for name, node in the_fleet.robots.items() if node._outputs.union.union is not None
        )
        other = ({"/r1", "/r2"} - {host}).pop()
        the_fleet.set_parameters([Parameter("robots", value=[other.strip("/")])])
        prefix = other.strip("/") + "/"
        survivors = robot_statics(prefix) | {"lidar"}
        ros.node.destroy_publisher(foreign)  # the foreign publisher leaves: statics stay
        assert ros.spin_until(lambda: len(the_fleet.robots) == 1, WAIT_S)
        late = LateSubscriber(ros)
        assert ros.spin_until(lambda: survivors in late.frames, WAIT_S)
        assert the_fleet.robots[other]._outputs.union.union is not None
    finally:
        if thread.is_alive():  # the fleet's loop ends before its context does
            os.kill(os.getpid(), signal.SIGINT)
            thread.join(timeout=WAIT_S)
        context.try_shutdown()
        the_fleet.destroy_contained()
        the_fleet.destroy_node()
        stop.restore()
