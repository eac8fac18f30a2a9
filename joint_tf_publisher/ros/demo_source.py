"""The ROS side of ``joint-tf-publisher demo`` and ``run``: a joint-state source and a /tf
monitor in one rclpy node of their own context, spun until the command stops.

``DemoSession`` owns the context (no rclpy signal handlers: the command handles SIGINT and
SIGTERM itself), the node and the executor. ``JointStateSource`` publishes ``joint_states``
at the node's ``rate`` parameter from a function of time (the command's sweep);
``TfMonitor`` keeps the latest transform of every child frame on /tf and /tf_static.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import numpy as np
import rclpy
from rcl_interfaces.msg import ParameterDescriptor
from rclpy.executors import SingleThreadedExecutor
from rclpy.node import Node
from rclpy.signals import SignalHandlerOptions
from sensor_msgs.msg import JointState
from tf2_msgs.msg import TFMessage

from ..node_core.tf_outputs import TF_STATIC_TOPIC, TF_TOPIC
from ..stamps import stamp_to_ns
from ..transforms import quaternion_to_matrix
from .qos import joint_states_publisher_qos, tf_qos, tf_static_qos

#: Sent positions remembered for matching /tf stamps back to what was sent.
SENT_HISTORY = 512
#: Longest the session's spin waits before checking whether to stop, seconds.
SPIN_STEP_S = 0.02

JointStateAt = Callable[[float], tuple[list[str], list[float]]]


class JointStateSource:
    """Publishes ``joint_state_at(t)`` on ``joint_states`` at ``rate`` Hz (ROS parameter
    ``rate`` of the node, default ``rate_hz``), stamped with the ROS clock; t in seconds
    since the source started."""

    def __init__(
        self,
        node: Node,
        rate_hz: float,
        joint_state_at: JointStateAt,
        on_publish: Callable[[], None] = lambda: None,
    ) -> None:
        self.node = node
        self._joint_state_at = joint_state_at
        self._on_publish = on_publish
        # Dynamic typing: `-p rate:=20` (an integer) is as good as 20.0.
        descriptor = ParameterDescriptor(description="joint_states rate, Hz", dynamic_typing=True)
        rate = float(node.declare_parameter("rate", rate_hz, descriptor).value)
        if rate <= 0.0:
            raise ValueError(f"rate must be positive, got {rate} Hz")
        self.publisher = node.create_publisher(
            JointState, "joint_states", joint_states_publisher_qos()
        )
        self.topic = node.resolve_topic_name("joint_states")
        #: Sent positions by stamp (ns), the latest ``SENT_HISTORY``.
        self.sent: OrderedDict[int, dict[str, float]] = OrderedDict()
        self._start_s = time.monotonic()
        self.timer = node.create_timer(1.0 / rate, self.publish)

    def publish(self) -> None:
        """Send the positions for now, stamped with the ROS clock."""
        names, positions = self._joint_state_at(time.monotonic() - self._start_s)
        message = JointState()
        stamp = self.node.get_clock().now()
        message.header.stamp = stamp.to_msg()
        message.name = names
        message.position = positions
        self.publisher.publish(message)
        self._on_publish()
        self.sent[stamp.nanoseconds] = dict(zip(names, positions, strict=True))
        while len(self.sent) > SENT_HISTORY:
            self.sent.popitem(last=False)


class TfMonitor:
    """Listens to /tf and /tf_static; keeps the latest transform per child frame and calls
    ``on_tf`` for each /tf message."""

    def __init__(self, node: Node, on_tf: Callable[[], None] = lambda: None) -> None:
        self._on_tf_message = on_tf
        #: Child frame -> (parent frame, pose (4, 4) in the parent frame).
        self.transforms: dict[str, tuple[str, np.ndarray]] = {}
        self.static_frames: set[str] = set()
        self.last_stamp_ns: int | None = None
        #: Child frame -> pose of the last /tf message's transforms.
        self.last_dynamic: dict[str, np.ndarray] = {}
        node.create_subscription(TFMessage, TF_TOPIC, self._on_tf, tf_qos())
        node.create_subscription(TFMessage, TF_STATIC_TOPIC, self._on_static, tf_static_qos())

    def _store(self, message: Any) -> dict[str, np.ndarray]:
        received = {}
        for stamped in message.transforms:
            t, q = stamped.transform.translation, stamped.transform.rotation
            pose = np.eye(4)
            try:
                pose[:3, :3] = quaternion_to_matrix((q.x, q.y, q.z, q.w))
            except ValueError:  # no rotation (zero, NaN): any publisher's; not ``run``'s end
                continue
            pose[:3, 3] = (t.x, t.y, t.z)
            self.transforms[stamped.child_frame_id] = (stamped.header.frame_id, pose)
            received[stamped.child_frame_id] = pose
            stamp = stamped.header.stamp
            self.last_stamp_ns = stamp_to_ns(stamp.sec, stamp.nanosec)
        return received

    def _on_tf(self, message: Any) -> None:
        self.last_dynamic = self._store(message)
        self._on_tf_message()

    def _on_static(self, message: Any) -> None:
        self.static_frames.update(self._store(message))


class DemoSession:
    """One rclpy context with one node (``node``) and its executor, for a command's lifetime.

    Use as a context manager; ``spin`` runs callbacks until told to stop.
    """

    def __init__(self, node_name: str, ros_args: Sequence[str] = ()) -> None:
        self.context = rclpy.Context()
        rclpy.init(
            args=["joint-tf-publisher", *ros_args],
            context=self.context,
            signal_handler_options=SignalHandlerOptions.NO,
        )
        self.node = rclpy.create_node(node_name, context=self.context)
        self.executor = SingleThreadedExecutor(context=self.context)

    def __enter__(self) -> DemoSession:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self.executor.shutdown()
        self.node.destroy_node()
        self.context.try_shutdown()

    def spin(
        self,
        stopped: Callable[[], bool],
        duration_s: float = 0.0,
        on_tick: Callable[[], None] | None = None,
    ) -> None:
        """Run callbacks until ``stopped()`` or ``duration_s`` (0: no limit) has passed,
        calling ``on_tick`` after each turn."""
        self.executor.add_node(self.node)
        end_s = time.monotonic() + duration_s if duration_s > 0.0 else float("inf")
        while not stopped() and time.monotonic() < end_s:
            self.executor.spin_once(timeout_sec=SPIN_STEP_S)
            if on_tick is not None:
                on_tick()
