"""The rclpy floor of the e2e section: a node that does everything but the kinematics.

``python -m bench.floor_node --ros-args --params-file P`` reads ``robot_description`` only to
count the moving joints, subscribes ``joint_states`` with the node's QoS (sensor data), and
for each JointState publishes one pre-serialized TFMessage of as many transforms (identity
poses, the message's stamp) on ``/tf`` with tf2's QoS, spun by ``rclpy.spin``. Its CPU,
drops and latency are what rclpy + Fast DDS cost in this process layout before any joint
math: the node cannot do better than this row without changing executor or transport.
"""

from __future__ import annotations

import sys

import numpy as np
import rclpy
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from rclpy.qos import qos_profile_sensor_data
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from joint_tf_publisher import Robot
from joint_tf_publisher.ros.cdr import TFMessageLayout
from joint_tf_publisher.ros.qos import tf_qos, tf_static_qos
from joint_tf_publisher.ros.stamps import stamp_to_ns


class FloorNode(Node):
    """JointState in, a constant-shape TFMessage out; no joint math."""

    def __init__(self) -> None:
        super().__init__("jtp_bench_floor")
        text = self.declare_parameter("robot_description", "").value
        self.declare_parameter("ignore_timestamp", True)
        robot = Robot.from_xml_string(str(text))
        moving = [joint for joint in robot.joints.values() if joint.joint_type != "fixed"]
        self._layout = TFMessageLayout([(joint.parent, joint.child) for joint in moving])
        self._poses = np.tile([0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0], (len(moving), 1))
        self._publisher = self.create_publisher(TFMessage, "/tf", tf_qos())
        self._static = self.create_publisher(TFMessage, "/tf_static", tf_static_qos())
        self._static.publish(TFMessage())
        self.joint_states = self.create_subscription(
            JointState, "joint_states", self._on_joint_state, qos_profile_sensor_data
        )

    def _on_joint_state(self, msg: JointState) -> None:
        stamp_ns = stamp_to_ns(msg.header.stamp.sec, msg.header.stamp.nanosec)
        raw = self._layout.write(stamp_ns, self._poses)
        self._publisher.publish(raw)


def spin_tight(node: FloorNode) -> None:
    """A minimal loop instead of rclpy.spin: one reused wait set on the one subscription,
    then take every message waiting before waiting again (no executor, no tasks)."""
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

    subscription = node.joint_states
    handle = subscription.handle
    context = node.context
    wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, context.handle)
    with handle, context.handle:
        while context.ok():
            wait_set.clear_entities()
            wait_set.add_subscription(handle)
            wait_set.wait(100_000_000)
            while True:
                taken = handle.take_message(subscription.msg_type, False)
                if taken is None:
                    break
                subscription.callback(taken[0])


def main() -> int:
    """Spin the floor node until SIGINT (``--spin-tight``: the minimal loop instead)."""
    rclpy.init(args=sys.argv)
    node = FloorNode()
    try:
        if "--spin-tight" in sys.argv:
            spin_tight(node)
        else:
            rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
