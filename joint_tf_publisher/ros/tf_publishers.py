"""The node's /tf and /tf_static publishers, owned by the node (tf2_ros's topics and QoS).

- ``/tf``: ``qos.tf_qos``, keep last 100, reliable, volatile (tf2_ros ``TransformBroadcaster``).
- ``/tf_static``: ``qos.tf_static_qos``, keep last 1, reliable, transient local (tf2_ros
  ``StaticTransformBroadcaster``): every publication carries the node's whole static set, so
  the one latched sample a late subscriber gets is complete. Unlike tf2_ros, which merges
  what is sent into everything sent before, the set is replaced as a whole: a reloaded model
  or a new frame prefix leaves no stale frames behind.

Both publish a ``cdr.Publication`` as serialized bytes (``Publisher.publish`` takes
bytes as they are). ``layout_matches_rmw`` checks once that the RMW reads those bytes back as
the same message; where it does not, both publishers build message objects instead.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.serialization import deserialize_message
from tf2_msgs.msg import TFMessage

from ..node_core.cdr import Publication, TFMessageLayout
from ..stamps import ns_to_stamp
from .qos import tf_qos, tf_static_qos

TF_TOPIC = "/tf"
TF_STATIC_TOPIC = "/tf_static"


def to_message(publication: Publication) -> TFMessage:
    """The publication as a ``tf2_msgs/TFMessage`` object."""
    sec, nanosec = ns_to_stamp(publication.stamp_ns)
    stamp = Time(sec=sec, nanosec=nanosec)
    transforms = []
    for (parent, child), (tx, ty, tz), (qx, qy, qz, qw) in zip(
        publication.layout.frames,
        publication.translations.tolist(),
        publication.quaternions.tolist(),
        strict=True,
    ):
        msg = TransformStamped()
        msg.header.stamp = stamp
        msg.header.frame_id = parent
        msg.child_frame_id = child
        translation = msg.transform.translation
        translation.x, translation.y, translation.z = tx, ty, tz
        rotation = msg.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = qx, qy, qz, qw
        transforms.append(msg)
    return TFMessage(transforms=transforms)


@cache
def layout_matches_rmw() -> bool:
    """True if the RMW deserializes ``TFMessageLayout``'s bytes into exactly the message
    ``to_message`` builds (frame names of every length modulo 8, odd values)."""
    frames = [("p" * (k % 9), "c" * (k % 7 + 1)) for k in range(12)]
    # Values with every bit of the mantissa used, of both signs (no numpy.random: it would
    # stay loaded, about 3 MB of the node's memory, for this one check).
    poses = 5.0 * np.sin(np.arange(len(frames) * 7) * 1.7 + 0.3).reshape(len(frames), 7)
    publication = Publication(TFMessageLayout(frames), -1_700_000_123_456_789, poses)
    try:
        received = deserialize_message(publication.to_bytes(), TFMessage)
    except Exception:  # any RMW complaint means: do not use these bytes
        return False
    return bool(received == to_message(publication))


class TfPublisher:
    """Publishes moving transforms on ``/tf``: one publication, one TFMessage."""

    def __init__(self, node: Node) -> None:
        self.publisher = node.create_publisher(TFMessage, TF_TOPIC, tf_qos())
        self.raw = layout_matches_rmw()

    def publish(self, publication: Publication) -> None:
        """Send ``publication`` (serialized where the RMW reads our bytes)."""
        self.publisher.publish(publication.to_bytes() if self.raw else to_message(publication))


class StaticTfPublisher:
    """The latched ``/tf_static`` message of one node: always its complete current set."""

    def __init__(self, node: Node) -> None:
        self.publisher = node.create_publisher(TFMessage, TF_STATIC_TOPIC, tf_static_qos())
        self.raw = layout_matches_rmw()
        #: The set last published (None before the first).
        self.current: Publication | None = None

    def replace(self, publication: Publication) -> None:
        """Publish ``publication`` as the whole static set (an empty one too: a reload to a
        model without fixed joints clears the frames of the previous one)."""
        self.current = publication
        self.publisher.publish(publication.to_bytes() if self.raw else to_message(publication))
