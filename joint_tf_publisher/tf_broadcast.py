"""tf2 broadcasting for the node: tf2_ros's broadcasters where importable, else equivalents.

Topics and QoS are tf2_ros's own:

- ``/tf``: depth 100, reliable, volatile (``tf2_ros.TransformBroadcaster``).
- ``/tf_static``: depth 1, reliable, transient local (``tf2_ros.StaticTransformBroadcaster``).

tf2_ros is not installable without a ROS distribution (see ROS-ON-PIP.md); where it is
missing, plain publishers with the same topics and QoS take its place, so peers cannot tell
the difference.

``StaticTransformSet`` differs from tf2_ros's static broadcaster on purpose: it holds the
COMPLETE current set of static transforms and ``replace`` swaps that set as a whole. tf2_ros
accumulates every transform ever sent (and some distros drop a second transform for a child
frame already sent), so a reloaded model or a changed frame prefix would leave stale frames in
the latched message. Here the one latched message always is exactly the current set.

Only the node imports this module (it needs rclpy).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from tf2_msgs.msg import TFMessage

TF_TOPIC = "/tf"
TF_STATIC_TOPIC = "/tf_static"


def tf_qos() -> QoSProfile:
    """QoS of ``/tf``: keep last 100, reliable, volatile (tf2_ros DynamicBroadcasterQoS)."""
    return QoSProfile(
        depth=100,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.VOLATILE,
    )


def tf_static_qos() -> QoSProfile:
    """QoS of ``/tf_static``: keep last 1, reliable, transient local (StaticBroadcasterQoS)."""
    return QoSProfile(
        depth=1,
        history=HistoryPolicy.KEEP_LAST,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )


def _tf2_ros() -> Any | None:
    """The tf2_ros module, or None where it is not installed."""
    try:
        import tf2_ros
    except ImportError:
        return None
    return tf2_ros


class TransformSender:
    """Publishes moving transforms on ``/tf``: one call, one TFMessage."""

    def __init__(self, node: Node) -> None:
        tf2_ros = _tf2_ros()
        self.uses_tf2_ros = tf2_ros is not None
        if tf2_ros is not None:
            self._broadcaster = tf2_ros.TransformBroadcaster(node)
        else:
            self._publisher = node.create_publisher(TFMessage, TF_TOPIC, tf_qos())

    def send(self, transforms: list[TransformStamped]) -> None:
        """Publish ``transforms`` together in one TFMessage (nothing for an empty list)."""
        if not transforms:
            return
        if self.uses_tf2_ros:
            self._broadcaster.sendTransform(transforms)
        else:
            self._publisher.publish(TFMessage(transforms=transforms))


class StaticTransformSet:
    """The latched ``/tf_static`` message of one node, always the complete current set."""

    def __init__(self, node: Node) -> None:
        self._node = node
        self._tf2_ros = _tf2_ros()
        self.uses_tf2_ros = self._tf2_ros is not None
        self._broadcaster: Any = None
        self._publisher: Any = None
        self.transforms: list[TransformStamped] = []

    def replace(self, transforms: Sequence[TransformStamped]) -> None:
        """Publish ``transforms`` as the whole static set, dropping every earlier transform.

        Late-joining subscribers receive exactly this set. An empty set is published too, so
        a reload to a model without fixed joints clears the frames of the previous one.
        """
        self.transforms = list(transforms)
        if self._tf2_ros is not None:
            # tf2_ros keeps (and merges into) everything sent before: start a fresh
            # broadcaster, and a fresh writer, so the latched sample is the new set only.
            if self._broadcaster is not None:
                old_publisher = getattr(self._broadcaster, "pub_tf", None)
                if old_publisher is not None:
                    self._node.destroy_publisher(old_publisher)
            self._broadcaster = self._tf2_ros.StaticTransformBroadcaster(self._node)
            self._broadcaster.sendTransform(self.transforms)
            return
        if self._publisher is None:
            self._publisher = self._node.create_publisher(
                TFMessage, TF_STATIC_TOPIC, tf_static_qos()
            )
        self._publisher.publish(TFMessage(transforms=self.transforms))
