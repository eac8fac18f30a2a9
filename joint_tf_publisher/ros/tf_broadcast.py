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

import struct
from collections.abc import Sequence
from typing import Any

import numpy as np
from builtin_interfaces.msg import Time
from geometry_msgs.msg import TransformStamped
from numpy.typing import NDArray
from rclpy.node import Node
from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy
from rclpy.serialization import deserialize_message
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


class SerializedTFMessage:
    """Serialized ``tf2_msgs/TFMessage``s for one fixed list of (parent, child) frame pairs.

    The node's hot path: turning Python ``TransformStamped`` objects into the wire format is
    most of the cost of a publication (rclpy converts every field by attribute access). For
    fixed frame ids the serialized message has a fixed layout in which only the stamps and
    the 7 doubles of each transform change, so it is built once as a byte template and then
    written through uint32 and float64 views of it (three indexed assignments);
    ``Publisher.publish(bytes)`` sends it as is.

    Layout (CDR, little endian, as every ROS 2 RMW serializes): a 4-byte encapsulation
    header, then each primitive aligned to its size counted from the end of the header; a
    string is a uint32 length (counting its NUL), the bytes and the NUL; a sequence a uint32
    count and its elements. ``matches_rmw`` checks the result against the RMW's own
    deserializer before the node relies on it.
    """

    ENCAPSULATION = b"\x00\x01\x00\x00"  # CDR, little endian

    def __init__(self, frames: Sequence[tuple[str, str]]) -> None:
        self.frames = list(frames)
        payload = bytearray()

        def align(size: int) -> None:
            payload.extend(b"\x00" * (-len(payload) % size))

        def put_uint32(value: int) -> None:
            align(4)
            payload.extend(struct.pack("<I", value))

        def put_string(text: str) -> None:
            encoded = text.encode() + b"\x00"
            put_uint32(len(encoded))
            payload.extend(encoded)

        stamp_offsets: list[int] = []
        value_offsets: list[int] = []
        put_uint32(len(self.frames))
        for parent, child in self.frames:
            align(4)
            stamp_offsets.append(len(payload))
            payload.extend(bytes(8))  # int32 sec, uint32 nanosec
            put_string(parent)
            put_string(child)
            align(8)
            value_offsets.append(len(payload))
            payload.extend(struct.pack("<7d", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))
        message = self.ENCAPSULATION + bytes(payload)
        head = len(self.ENCAPSULATION)
        # Views of one buffer whose payload (after the 4-byte header) starts 8-byte aligned:
        # the stamps are 4-aligned uint32 pairs and the transforms 8-aligned doubles, so
        # ``write`` assigns them through two index arrays, with no byte shuffling.
        storage = np.zeros(len(message) + 8, dtype=np.uint8)
        start = (-storage.ctypes.data - head) % 8
        self._buffer = storage[start : start + len(message)]
        self._buffer[:] = np.frombuffer(message, dtype=np.uint8)
        self._words = self._buffer[: len(message) // 4 * 4].view("<u4")
        self._doubles = self._buffer[head : head + (len(message) - head) // 8 * 8].view("<f8")
        stamps = (np.array(stamp_offsets, dtype=np.intp) + head) // 4
        self._stamp_index = stamps[:, None] + np.arange(2)
        values = np.array(value_offsets, dtype=np.intp) // 8
        self._translation_index = values[:, None] + np.arange(3)
        self._rotation_index = values[:, None] + np.arange(3, 7)

    def write(
        self, stamp: Time, translations: NDArray[np.float64], quaternions: NDArray[np.float64]
    ) -> bytes:
        """The serialized message: every transform stamped ``stamp``, translations in metres
        (N, 3) and quaternions x, y, z, w (N, 4), in the order of ``frames``."""
        self._words[self._stamp_index] = (stamp.sec & 0xFFFFFFFF, stamp.nanosec)
        self._doubles[self._translation_index] = translations
        self._doubles[self._rotation_index] = quaternions
        return self._buffer.tobytes()

    def matches_rmw(self) -> bool:
        """True if the RMW deserializes ``write`` into exactly the equivalent message."""
        count = len(self.frames)
        stamp = Time(sec=1_700_000_123, nanosec=456_789)
        rng = np.random.default_rng(7)
        translations = rng.uniform(-5.0, 5.0, (count, 3))
        quaternions = rng.normal(size=(count, 4))
        quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
        expected = TFMessage(
            transforms=fill_transforms(
                [_transform(parent, child) for parent, child in self.frames],
                translations,
                quaternions,
                stamp,
            )
        )
        try:
            received = deserialize_message(self.write(stamp, translations, quaternions), TFMessage)
        except Exception:  # any RMW complaint means: do not use this writer
            return False
        return bool(received == expected)


def _transform(parent: str, child: str) -> TransformStamped:
    msg = TransformStamped()
    msg.header.frame_id = parent
    msg.child_frame_id = child
    return msg


def fill_transforms(
    messages: Sequence[TransformStamped],
    translations: NDArray[np.float64],
    quaternions: NDArray[np.float64],
    stamp: Time,
) -> list[TransformStamped]:
    """Write stamp, translations (metres) and quaternions (xyzw) into ``messages``, in order."""
    for msg, (tx, ty, tz), (qx, qy, qz, qw) in zip(
        messages, translations.tolist(), quaternions.tolist(), strict=True
    ):
        msg.header.stamp = stamp
        translation = msg.transform.translation
        translation.x, translation.y, translation.z = tx, ty, tz
        rotation = msg.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = qx, qy, qz, qw
    return list(messages)


class TransformSender:
    """Publishes moving transforms on ``/tf``: one call, one TFMessage.

    ``send_arrays`` publishes pre-serialized bytes (``SerializedTFMessage``, one per list of
    frame pairs, cached) through the same publisher, tf2_ros's where it is used; where the
    RMW does not read the bytes back as the same message it falls back to message objects.
    """

    MAX_CACHED_LAYOUTS = 64

    def __init__(self, node: Node) -> None:
        tf2_ros = _tf2_ros()
        self.uses_tf2_ros = tf2_ros is not None
        if tf2_ros is not None:
            self._broadcaster = tf2_ros.TransformBroadcaster(node)
            self._raw_publisher = getattr(self._broadcaster, "pub_tf", None)
        else:
            self._publisher = node.create_publisher(TFMessage, TF_TOPIC, tf_qos())
            self._raw_publisher = self._publisher
        self._layouts: dict[tuple[tuple[str, str], ...], SerializedTFMessage | None] = {}

    def send(self, transforms: list[TransformStamped]) -> None:
        """Publish ``transforms`` together in one TFMessage (nothing for an empty list)."""
        if not transforms:
            return
        if self.uses_tf2_ros:
            self._broadcaster.sendTransform(transforms)
        else:
            self._publisher.publish(TFMessage(transforms=transforms))

    def send_arrays(
        self,
        frames: Sequence[tuple[str, str]],
        stamp: Time,
        translations: NDArray[np.float64],
        quaternions: NDArray[np.float64],
    ) -> None:
        """Publish one TFMessage: transform i from ``frames[i]`` (parent, child) with
        translation (metres) and quaternion (x, y, z, w) row i, all stamped ``stamp``."""
        if not len(frames):
            return
        key = tuple(frames)
        layout = self._layouts[key] if key in self._layouts else self._new_layout(key)
        if layout is not None and self._raw_publisher is not None:
            self._raw_publisher.publish(layout.write(stamp, translations, quaternions))
            return
        self.send(
            fill_transforms(
                [_transform(parent, child) for parent, child in frames],
                translations,
                quaternions,
                stamp,
            )
        )

    def _new_layout(self, key: tuple[tuple[str, str], ...]) -> SerializedTFMessage | None:
        if len(self._layouts) >= self.MAX_CACHED_LAYOUTS:
            self._layouts.clear()
        layout = SerializedTFMessage(key)
        usable = layout if layout.matches_rmw() else None
        self._layouts[key] = usable
        return usable


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
