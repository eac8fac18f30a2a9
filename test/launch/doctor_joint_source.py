"""A joint-state source for doctor's broken setups: publishes the named joints on
``joint_states`` at 20 Hz (all at ``POSITION``, stamped with the node clock), and with ``--tf PARENT
CHILD`` also broadcasts that transform on /tf (a second publisher of a frame), with
``--diagnostic`` also a WARN status on /diagnostics once a second (diagnostic_msgs must be
importable: run it with the project's .venv interpreter in the kit).

Usage: ``python doctor_joint_source.py JOINT [JOINT ...] [--tf PARENT CHILD] [--diagnostic]``;
SIGINT ends it.
"""

from __future__ import annotations

import argparse

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.executors import ExternalShutdownException
from rclpy.node import Node
from sensor_msgs.msg import JointState
from tf2_ros import TransformBroadcaster

RATE_HZ = 20.0
#: The /diagnostics status ``--diagnostic`` publishes: name, message, hardware id, one value.
STATUS = ("doctor_joint_source: joint states", "wrist_1_joint stopped", "demo_arm")
STATUS_VALUE = ("stopped joints", "wrist_1_joint")
#: Every joint's position, rad or m: inside every limit of the demo arm (fingers: [0, 0.04] m).
POSITION = 0.02


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("joints", nargs="+")
    parser.add_argument("--tf", nargs=2, metavar=("PARENT", "CHILD"))
    parser.add_argument("--diagnostic", action="store_true")
    args, ros_args = parser.parse_known_args()
    rclpy.init(args=ros_args)
    node = rclpy.create_node("doctor_joint_source")
    publisher = node.create_publisher(JointState, "joint_states", 10)
    broadcaster = TransformBroadcaster(node) if args.tf else None
    if args.diagnostic:
        publish_diagnostics(node)

    def publish() -> None:
        stamp = node.get_clock().now().to_msg()
        message = JointState(name=list(args.joints), position=[POSITION] * len(args.joints))
        message.header.stamp = stamp
        publisher.publish(message)
        if broadcaster is not None:
            transform = TransformStamped()
            transform.header.stamp = stamp
            transform.header.frame_id, transform.child_frame_id = args.tf
            transform.transform.rotation.w = 1.0
            broadcaster.sendTransform(transform)

    node.create_timer(1.0 / RATE_HZ, publish)
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()


def publish_diagnostics(node: Node) -> None:
    """Publish ``STATUS`` at level WARN on /diagnostics once a second."""
    from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus, KeyValue

    publisher = node.create_publisher(DiagnosticArray, "/diagnostics", 10)
    name, message, hardware_id = STATUS

    def publish() -> None:
        status = DiagnosticStatus(
            level=DiagnosticStatus.WARN, name=name, message=message, hardware_id=hardware_id
        )
        status.values = [KeyValue(key=STATUS_VALUE[0], value=STATUS_VALUE[1])]
        array = DiagnosticArray(status=[status])
        array.header.stamp = node.get_clock().now().to_msg()
        publisher.publish(array)

    node.create_timer(1.0, publish)


if __name__ == "__main__":
    main()
