"""The floor node of ``vs_rsp``: the least any rclpy node can do for the node's work per
JointState. A bench reference, not a product: public rclpy API only (the wait-set loop aside,
which is the package's own opt-in executor).

It reads a frames file (JSON: ``{"moving": [[parent, child], ...], "static": [...]}``), publishes
the static set once on ``/tf_static`` (latched, so the bench sees it start) and then, for every
JointState (a raw subscription, the node's QoS), copies the message's stamp into a
pre-serialised TFMessage of one transform per moving joint and publishes the bytes on ``/tf``:
no model, no kinematics, no rate limit (compare it in ``ignore_timestamp`` mode). The copy is one
C call (``bytes.join`` of the template's pieces around the stamps).

``python -m bench.floor_node FRAMES_FILE --ros-args ...``; ``JOINT_TF_PUBLISHER_EXECUTOR``
picks the executor as for the node (``events``, ``rclpy``, ``waitset``).
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path

import rclpy
from geometry_msgs.msg import TransformStamped
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor
from rclpy.node import Node
from rclpy.serialization import serialize_message
from rclpy.signals import SignalHandlerOptions
from rclpy.task import Future
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from joint_tf_publisher.node_core.stop_signals import StopSignals
from joint_tf_publisher.ros.qos import joint_states_qos, tf_qos, tf_static_qos

#: A stamp no real one equals (sec, nanosec): found in the serialised template, then cut out.
MARKER = (0x5EC0_7AB1, 0x0ACE_BEEF)
#: Where a JointState's header stamp is in its CDR bytes: after the 4-byte encapsulation header.
STAMP = slice(4, 12)


def tf_pieces(frames: list[list[str]]) -> list[bytes]:
    """A serialised TFMessage of ``frames`` (identity transforms) cut at every stamp: joining
    the pieces with an 8-byte stamp (int32 sec, uint32 nanosec, little endian) gives the
    message stamped so."""
    message = TFMessage()
    for parent, child in frames:
        item = TransformStamped(child_frame_id=child)
        item.header.frame_id = parent
        item.header.stamp.sec, item.header.stamp.nanosec = MARKER
        item.transform.rotation.w = 1.0
        message.transforms.append(item)
    marker = MARKER[0].to_bytes(4, "little") + MARKER[1].to_bytes(4, "little")
    pieces = serialize_message(message).split(marker)
    assert len(pieces) == len(frames) + 1, "the marker stamp occurs elsewhere"
    return pieces


class FloorNode(Node):
    """Stamp copy and publish per JointState; the static set once."""

    def __init__(self, frames: dict[str, list[list[str]]]) -> None:
        super().__init__("jtp_floor")
        static = tf_pieces(frames["static"])
        now = self.get_clock().now().seconds_nanoseconds()
        stamp = now[0].to_bytes(4, "little", signed=True) + now[1].to_bytes(4, "little")
        self.create_publisher(TFMessage, "/tf_static", tf_static_qos()).publish(stamp.join(static))
        self._pieces = tf_pieces(frames["moving"])
        self._tf = self.create_publisher(TFMessage, "/tf", tf_qos())
        self.create_subscription(
            JointState, "joint_states", self._on_joint_state, joint_states_qos(), raw=True
        )

    def _on_joint_state(self, data: bytes) -> None:
        self._tf.publish(data[STAMP].join(self._pieces))


def spin(node: Node, executor: str, stop: StopSignals | None) -> None:
    """Serve ``node`` as the package's node spins (``ros/runtime.py``): the events executor
    in turns of an hour (without a timeout it busy-waits while idle), rclpy's executor one
    callback at a time without a timeout, or the package's wait-set loop (until ``stop``)."""
    if executor == "waitset":
        from joint_tf_publisher.ros import waitset_loop

        assert stop is not None
        waitset_loop.spin(node, stop)
        return
    if executor == "rclpy":
        spinner = SingleThreadedExecutor()
        spinner.add_node(node)
        while rclpy.ok():
            spinner.spin_once()
        return
    from rclpy.experimental import EventsExecutor

    events = EventsExecutor()
    events.add_node(node)
    while rclpy.ok():
        events.spin_until_future_complete(Future(), timeout_sec=3600.0)


def main(argv: list[str]) -> int:
    """Run the floor node until SIGINT or SIGTERM."""
    frames = json.loads(Path(argv[1]).read_text())
    executor = os.environ.get("JOINT_TF_PUBLISHER_EXECUTOR", "").strip().lower() or "events"
    stop = None
    if executor == "waitset":  # the loop's own stop signals, as the node's console script
        stop = StopSignals()
        rclpy.init(args=argv, signal_handler_options=SignalHandlerOptions.NO)
    else:
        rclpy.init(args=argv)
    try:
        spin(FloorNode(frames), executor, stop)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
