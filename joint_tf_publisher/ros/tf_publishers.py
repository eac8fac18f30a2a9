"""The node's /tf and /tf_static publishers, owned by the node (tf2_ros's topics and QoS).

- ``/tf``: ``qos.tf_qos``, keep last 100, reliable, volatile (tf2_ros ``TransformBroadcaster``).
- ``/tf_static``: ``qos.tf_static_qos``, keep last 1, reliable, transient local (tf2_ros
  ``StaticTransformBroadcaster``): every publication is one TFMessage with the node's whole
  static set, from this one publisher, so the one latched sample a late subscriber gets is
  complete. The set is replaced as a whole: a reloaded model or a new frame prefix leaves
  no stale frames in the latched sample, and every changed origin is sent (tf2_ros_py's
  broadcaster skips a child frame it has sent before; rclcpp's merges into what it sent).
  ``republish`` sends the current set again, unchanged (``static_republish_period``).

The global tree (``node_core.tf_outputs``: ``global_frame_prefix`` set) goes out on the
absolute ``/tf`` and ``/tf_static`` with the same QoS, through ``GlobalTree``: the two
publishers of a node of their own, ``<node name>_global_tf`` in the node's namespace, made
with ``use_global_arguments=False`` so that the user's remapping rules (``--ros-args -r
/tf:=tf``, which a launch file's ``remappings`` and ``SetRemap`` become) do not apply to its
names: rcl remaps a publisher's topic by the rules of its node, and a remapping is fixed when
the publisher is made. That node is never spun: it has publishers only (no parameter, logger
or type-description services, no /rosout). Each publication then goes out twice: the own
layout on the node's publisher, the global one (``Publication.in_global_tree``) on the global
tree's.

Every publisher sends a ``cdr.Publication`` as serialized bytes (``Publisher.publish`` takes
bytes as they are). ``layout_matches_rmw`` checks once that the RMW reads those bytes back as
the same message; where it does not, both publishers build message objects instead.
"""

from __future__ import annotations

from functools import cache

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from rclpy.node import Node
from rclpy.parameter import Parameter
from rclpy.publisher import Publisher
from rclpy.serialization import deserialize_message
from tf2_msgs.msg import TFMessage

from ..node_core.cdr import Publication, TFMessageLayout
from ..node_core.tf_outputs import (
    GLOBAL_TF_STATIC_TOPIC,
    GLOBAL_TF_TOPIC,
    TF_STATIC_TOPIC,
    TF_TOPIC,
    TfTopics,
)
from ..stamps import ns_to_stamp
from .qos import remote_tf_qos, tf_qos, tf_static_qos

#: The global tree's node is named after the node: ``<node name>`` + this.
GLOBAL_TREE_NODE_SUFFIX = "_global_tf"


def to_message(publication: Publication) -> TFMessage:
    """The publication as a ``tf2_msgs/TFMessage`` object."""
    transforms = []
    for (parent, child), stamp_ns, (tx, ty, tz), (qx, qy, qz, qw) in zip(
        publication.layout.frames,
        publication.stamps().tolist(),
        publication.translations.tolist(),
        publication.quaternions.tolist(),
        strict=True,
    ):
        sec, nanosec = ns_to_stamp(stamp_ns)
        msg = TransformStamped()
        msg.header.stamp = Time(sec=sec, nanosec=nanosec)
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


def own_topics(node: Node) -> TfTopics:
    """Where ``node``'s own /tf and /tf_static publishers go, after the user's remappings."""
    return TfTopics(node.resolve_topic_name(TF_TOPIC), node.resolve_topic_name(TF_STATIC_TOPIC))


def unspun_node(node: Node, suffix: str) -> Node:
    """A node beside ``node`` (named ``<its name><suffix>``, in its namespace and context)
    that no executor spins: without the user's remapping rules (``use_global_arguments=False``:
    its topics are taken as given), /rosout, parameter and type-description services. The
    global tree's publishers and the static union's readers live on such nodes."""
    return Node(
        node.get_name() + suffix,
        namespace=node.get_namespace(),
        context=node.context,
        use_global_arguments=False,
        enable_rosout=False,
        start_parameter_services=False,
        # Jazzy and later: no ~/get_type_description service (nobody spins this node).
        parameter_overrides=[Parameter("start_type_description_service", value=False)],
    )


class GlobalTree:
    """The global tree's /tf and /tf_static publishers, on a node of their own that the
    user's remapping rules do not reach (see the module docstring)."""

    def __init__(self, node: Node) -> None:
        self.node = unspun_node(node, GLOBAL_TREE_NODE_SUFFIX)
        self.tf = self.node.create_publisher(TFMessage, GLOBAL_TF_TOPIC, tf_qos())
        self.tf_static = self.node.create_publisher(
            TFMessage, GLOBAL_TF_STATIC_TOPIC, tf_static_qos()
        )

    def destroy(self) -> None:
        """Destroy the publishers and their node (the global tree's latched statics go)."""
        self.node.destroy_node()


class TfPublisher:
    """Publishes moving transforms on ``/tf`` (and on the global tree's where the node has
    one): one publication, one TFMessage per tree."""

    def __init__(self, node: Node) -> None:
        self.publisher = node.create_publisher(TFMessage, TF_TOPIC, tf_qos())
        self.raw = layout_matches_rmw()
        #: The global tree's /tf publisher (None without a global tree).
        self.global_publisher: Publisher[TFMessage] | None = None

    def publish(self, publication: Publication) -> None:
        """Send ``publication`` (serialized where the RMW reads our bytes), and its global
        tree's frames to the global tree."""
        _send(self.publisher, self.global_publisher, publication, self.raw)


class StaticTfPublisher:
    """The latched ``/tf_static`` message of one node (and of its global tree where it has
    one): always its complete current set."""

    def __init__(self, node: Node, topic: str = TF_STATIC_TOPIC) -> None:
        self.publisher = node.create_publisher(TFMessage, topic, tf_static_qos())
        self.raw = layout_matches_rmw()
        #: The global tree's /tf_static publisher (None without a global tree).
        self.global_publisher: Publisher[TFMessage] | None = None
        #: The set last published (None before the first).
        self.current: Publication | None = None

    def replace(self, publication: Publication) -> None:
        """Publish ``publication`` as the whole static set (an empty one too: a reload to a
        model without fixed joints clears the frames of the previous one), on the node's
        topic and on the global tree's alike."""
        self.current = publication
        _send(self.publisher, self.global_publisher, publication, self.raw)

    def republish(self) -> None:
        """Publish the current set again as it was (its stamp too), on the node's topic and on
        the global tree's alike; nothing before the first."""
        if self.current is not None:
            _send(self.publisher, self.global_publisher, self.current, self.raw)


class RemoteTfPublisher:
    """The remote output's two publishers (``node_core.remote_output``): its capped
    TFMessages on ``topic`` (``qos.remote_tf_qos``) and its complete static set, latched, on
    ``static_topic`` (``qos.tf_static_qos``). Both names are the node's, so namespaces and
    remappings apply."""

    def __init__(self, node: Node, topic: str, static_topic: str) -> None:
        self._node = node
        self.publisher = node.create_publisher(TFMessage, topic, remote_tf_qos())
        try:
            self.static = StaticTfPublisher(node, static_topic)
        except BaseException:  # refused (a topic of another type): nothing left behind
            node.destroy_publisher(self.publisher)
            raise

    def publish(self, publication: Publication) -> None:
        """Send one capped message."""
        _send(self.publisher, None, publication, self.static.raw)

    def destroy(self) -> None:
        """Destroy both publishers (the latched static set goes with them)."""
        self._node.destroy_publisher(self.publisher)
        self._node.destroy_publisher(self.static.publisher)


def _send(
    publisher: Publisher[TFMessage],
    global_publisher: Publisher[TFMessage] | None,
    publication: Publication,
    raw: bool,
) -> None:
    """Publish ``publication`` with ``publisher``, and its global tree's frames with
    ``global_publisher`` where both exist: bytes where the RMW reads them (``raw``), else
    messages."""
    publisher.publish(publication.to_bytes() if raw else to_message(publication))
    if global_publisher is not None:
        global_publication = publication.in_global_tree()
        if global_publication is not None:
            global_publisher.publish(
                global_publication.to_bytes() if raw else to_message(global_publication)
            )
