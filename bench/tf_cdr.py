"""A preallocated, vectorised TFMessage writer: the proposal measured by ``--profile``.

The profile shows that most of the node's per-JointState time is spent turning Python
``TransformStamped`` objects into the wire format (``rclpy`` converts every field through
Python attribute access) and filling those objects. For a fixed list of (parent, child)
frame pairs, the serialized ``tf2_msgs/TFMessage`` (CDR, little endian, as rmw_fastrtps
writes it) has a fixed layout: only the stamps and the 7 doubles of each transform change.
``TFMessageWriter`` builds that byte template once and then writes a message with two numpy
scatters; ``Publisher.publish(bytes)`` sends it without any Python message object.

CDR (XCDR1) rules used: a 4-byte encapsulation header (0x00 0x01 = CDR little endian), then
each primitive aligned to its size relative to the end of that header; a string is a uint32
length counting the terminating NUL, the bytes and the NUL; a sequence is a uint32 count then
its elements.

Only the bench imports this module (not the node): it is evidence for the node's owner, and
``bench.profile`` checks that its output deserializes to the node's own message.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence

import numpy as np
from numpy.typing import NDArray

ENCAPSULATION = b"\x00\x01\x00\x00"


class _Buffer:
    """A growing CDR payload with alignment relative to the payload start."""

    def __init__(self) -> None:
        self.data = bytearray()

    def align(self, size: int) -> None:
        self.data.extend(b"\x00" * (-len(self.data) % size))

    def uint32(self, value: int) -> None:
        self.align(4)
        self.data.extend(struct.pack("<I", value))

    def string(self, text: str) -> None:
        encoded = text.encode() + b"\x00"
        self.uint32(len(encoded))
        self.data.extend(encoded)


class TFMessageWriter:
    """Serialized TFMessages for a fixed list of (parent frame, child frame) pairs."""

    def __init__(self, frames: Sequence[tuple[str, str]]) -> None:
        payload = _Buffer()
        payload.uint32(len(frames))
        stamp_offsets: list[int] = []
        value_offsets: list[int] = []
        for parent, child in frames:
            payload.align(4)
            stamp_offsets.append(len(payload.data))
            payload.data.extend(b"\x00" * 8)  # stamp: int32 sec, uint32 nanosec
            payload.string(parent)
            payload.string(child)
            payload.align(8)
            value_offsets.append(len(payload.data))
            payload.data.extend(struct.pack("<7d", 0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))
        self.template = np.frombuffer(ENCAPSULATION + bytes(payload.data), dtype=np.uint8).copy()
        head = len(ENCAPSULATION)
        self._stamp_index = (np.array(stamp_offsets)[:, None] + head + np.arange(8)).ravel()
        self._value_index = (np.array(value_offsets)[:, None] + head + np.arange(56)).ravel()
        self.count = len(frames)

    def write(
        self,
        stamp_sec: int,
        stamp_nanosec: int,
        translations: NDArray[np.float64],
        quaternions: NDArray[np.float64],
    ) -> bytes:
        """The serialized message: every transform stamped, translations (m) and xyzw."""
        buffer = self.template
        stamp = np.frombuffer(struct.pack("<iI", stamp_sec, stamp_nanosec), dtype=np.uint8)
        buffer[self._stamp_index] = np.tile(stamp, self.count)
        values = np.empty((self.count, 7))
        values[:, :3] = translations
        values[:, 3:] = quaternions
        buffer[self._value_index] = values.view(np.uint8).ravel()
        return buffer.tobytes()
