"""CDR, the ROS 2 wire format, for the node's two hot messages: no rclpy, no message classes.

Every ROS 2 RMW serializes a message as a 4-byte encapsulation header (``00 01 00 00``: CDR,
little endian) and then each field in order, each primitive aligned to its own size counted
from the end of that header: a string is a uint32 length (counting its NUL), the bytes and
the NUL; a sequence is a uint32 count and its elements. Padding bytes carry no meaning (a
serializer may leave them uninitialised).

- ``JointStateReader`` reads ``sensor_msgs/JointState``: stamp, names and positions. Names
  change rarely, so it keeps the last message's name block (the bytes from the name count to
  the end of the last name) and, when the next message has the same bytes at the same place,
  reuses the decoded names and the offset of the positions: a byte comparison instead of
  decoding strings. Positions are a numpy view of the message bytes.
- ``TFMessageLayout`` writes ``tf2_msgs/TFMessage`` for a fixed list of (parent, child) frame
  pairs: built once as a byte template, then only stamps and the 7 doubles of each transform
  (translation, quaternion: ``poses`` rows) are written, through uint32 and float64 views of
  one buffer, three indexed assignments in all. A ``Publication`` is one such message to send:
  a layout, a stamp and the poses (and, for the global tree, a second layout of the same
  transforms: one more ``write``).

- ``read_multi_dof_joint_state`` reads ``sensor_msgs/MultiDOFJointState``: stamp, joint names
  and transforms (the node's ``multi_dof_joint_states``, a recording's for bag repair), in
  either byte order; the twists and wrenches after them are not read.

``JointStateReader`` returns None for anything it does not read (another encapsulation, a
truncated message); the caller then deserializes the message the ordinary way.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np
from numpy.typing import NDArray

from ..arrays import Array
from ..stamps import ns_to_stamp, stamp_to_ns

#: CDR little endian, the only encapsulation ``JointStateReader`` reads (options ignored).
CDR_LE = b"\x00\x01"
#: CDR big endian, which ``read_multi_dof_joint_state`` reads too.
CDR_BE = b"\x00\x00"
#: Encapsulation header written by ``TFMessageLayout``: CDR little endian, no options.
ENCAPSULATION = b"\x00\x01\x00\x00"
#: Size of the encapsulation header; alignment counts from its end.
HEADER_SIZE = 4
_STAMP_AND_FRAME_ID = struct.Struct("<iII")  # header.stamp.sec, .nanosec, frame_id length
_UINT32 = struct.Struct("<I")
_FLOAT64 = np.dtype("<f8")


def _align(offset: int, size: int) -> int:
    """``offset`` (from the message start) moved up to a multiple of ``size`` in the payload."""
    return offset + (-(offset - HEADER_SIZE) % size)


@dataclass
class NameBlock:
    """The name sequence of one JointState layout: its bytes, names, and what follows.

    ``start`` is the message offset of the name count; ``data`` the bytes from there to the
    end of the last name (the latest seen); ``meaning`` is 1 for the bytes that carry meaning
    and 0 for padding, ``masked`` = ``data`` with padding zeroed; ``positions_at`` the offset
    of the position count, ``values_at`` that of the first position.
    """

    start: int
    data: bytes
    names: tuple[str, ...]
    positions_at: int
    values_at: int
    meaning: NDArray[np.uint8]
    masked: NDArray[np.uint8]

    def matches(self, data: bytes) -> bool:
        """True if ``data`` has this name block at ``start`` (padding may differ; then the
        block remembers the new bytes, for a fast comparison next time)."""
        end = self.start + len(self.data)
        if data.startswith(self.data, self.start):  # in place: no copy of the block
            return True
        if len(data) < end:
            return False
        view = np.frombuffer(data, np.uint8, len(self.data), self.start)
        if not np.array_equal(view & self.meaning, self.masked):
            return False
        self.data = data[self.start : end]
        return True

    def read_same(self, data: bytes, count: int) -> tuple[int, Array] | None:
        """Stamp (ns) and positions of ``data`` when it is a CDR little-endian JointState with
        this name block (``matches``) and ``count`` positions; None for anything else
        (nothing decoded: ``JointStateReader.read`` takes it). The read of the pipeline's
        short way: no names decoded."""
        try:
            sec, nanosec, frame_id_size = _STAMP_AND_FRAME_ID.unpack_from(data, HEADER_SIZE)
            (given,) = _UINT32.unpack_from(data, self.positions_at)
        except struct.error:  # shorter than the block's offsets
            return None
        if (
            given != count
            or not data.startswith(CDR_LE)
            or _align(HEADER_SIZE + 12 + frame_id_size, 4) != self.start
            or len(data) < self.values_at + 8 * count
            or not self.matches(data)
        ):
            return None
        return stamp_to_ns(sec, nanosec), np.frombuffer(data, _FLOAT64, count, self.values_at)


class JointStateData(NamedTuple):
    """What ``JointStateReader.read`` takes from a JointState (a tuple: cheap to make).

    ``stamp_ns``: header stamp in nanoseconds. ``names``: the joint names (a value: callers
    compare it by equality). ``positions``: radians or metres, a read-only view of the
    message (length checked against ``names`` by the caller).
    """

    stamp_ns: int
    names: tuple[str, ...]
    positions: Array


class JointStateReader:
    """Reads serialized ``sensor_msgs/JointState`` messages, remembering the last names."""

    def __init__(self) -> None:
        self._block: NameBlock | None = None

    @property
    def block(self) -> NameBlock | None:
        """The name block of the last message read (None before the first)."""
        return self._block

    def read(self, data: bytes) -> JointStateData | None:
        """Stamp, names and positions of ``data``; None where it is not CDR little endian or
        is truncated."""
        if data[:2] != CDR_LE:
            return None
        try:
            sec, nanosec, frame_id_size = _STAMP_AND_FRAME_ID.unpack_from(data, HEADER_SIZE)
            start = _align(HEADER_SIZE + 12 + frame_id_size, 4)
            block = self._block
            if block is None or block.start != start or not block.matches(data):
                block = self._block = _read_names(data, start)
            (count,) = _UINT32.unpack_from(data, block.positions_at)
            positions = np.frombuffer(data, _FLOAT64, count, block.values_at if count else 0)
        except (struct.error, ValueError, UnicodeDecodeError):
            return None
        return JointStateData(stamp_to_ns(sec, nanosec), block.names, positions)


class UndecodableMessage(ValueError):
    """Bytes that are not the message they were taken for (the pipeline's intake)."""


class MultiDofJointStateData(NamedTuple):
    """What ``read_multi_dof_joint_state`` takes from a MultiDOFJointState: its header stamp
    (ns), joint names, and per name its transform: ``translations`` (K, 3) in metres,
    ``quaternions`` (K, 4) x y z w."""

    stamp_ns: int
    names: tuple[str, ...]
    translations: Array
    quaternions: Array


def read_multi_dof_joint_state(data: bytes) -> MultiDofJointStateData | None:
    """Stamp, joint names and transforms of a serialized ``sensor_msgs/MultiDOFJointState``
    (CDR, either byte order); None where it is another encapsulation or truncated."""
    order = {CDR_LE: "<", CDR_BE: ">"}.get(bytes(data[:2]))
    if order is None:
        return None
    uint32 = struct.Struct(order + "I")
    try:
        sec, nanosec, frame_id_size = struct.unpack_from(order + "iII", data, HEADER_SIZE)
        names, _, end = _strings(data, _align(HEADER_SIZE + 12 + frame_id_size, 4), uint32)
        offset = _align(end, 4)
        (transforms,) = uint32.unpack_from(data, offset)
        offset = _align(offset + 4, 8) if transforms else 0
        values = np.frombuffer(data, np.dtype(order + "f8"), 7 * transforms, offset)
    except (struct.error, ValueError):
        return None
    poses = values.astype(np.float64).reshape(-1, 7)
    return MultiDofJointStateData(
        stamp_to_ns(sec, nanosec), tuple(names), poses[:, :3], poses[:, 3:]
    )


def _strings(
    data: bytes, start: int, uint32: struct.Struct = _UINT32
) -> tuple[list[str], list[int], int]:
    """The CDR string sequence at ``start`` (a ``uint32`` count, then per string its size, its
    bytes and a NUL, each size aligned to 4): the strings, the offsets (from ``start``) of the
    padding bytes between them, and the offset just after the last; struct.error or
    ValueError if truncated."""
    (count,) = uint32.unpack_from(data, start)
    if count > len(data):
        raise ValueError("name count beyond the message")
    names: list[str] = []
    padding: list[int] = []
    offset = end = start + 4
    for _ in range(count):
        aligned = _align(offset, 4)
        padding.extend(range(offset - start, aligned - start))
        (size,) = uint32.unpack_from(data, aligned)
        end = aligned + 4 + size
        if size == 0 or end > len(data):
            raise ValueError("string beyond the message")
        names.append(bytes(data[aligned + 4 : end - 1]).decode("utf-8", "replace"))
        offset = end
    return names, padding, end


def _read_names(data: bytes, start: int) -> NameBlock:
    """Decode the name sequence at ``start``; struct.error or ValueError if truncated."""
    names, padding, end = _strings(data, start)
    block = data[start:end]
    meaning = np.full(len(block), 0xFF, dtype=np.uint8)
    meaning[padding] = 0
    masked = np.frombuffer(block, np.uint8) & meaning
    positions_at = _align(end, 4)
    return NameBlock(
        start, block, tuple(names), positions_at, _align(positions_at + 4, 8), meaning, masked
    )


class TFMessageLayout:
    """Serialized ``tf2_msgs/TFMessage``s for one fixed list of (parent, child) frame pairs.

    ``write`` stamps every transform alike and copies the poses in; the returned bytes are the
    whole message, ready for ``Publisher.publish``.
    """

    def __init__(self, frames: Sequence[tuple[str, str]]) -> None:
        self.frames = tuple(frames)
        payload = bytearray()

        def align(size: int) -> None:
            payload.extend(b"\x00" * (-len(payload) % size))

        def put_uint32(value: int) -> None:
            align(4)
            payload.extend(_UINT32.pack(value))

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
        message = ENCAPSULATION + bytes(payload)
        # One buffer whose payload (after the header) starts 8-byte aligned in memory: the
        # stamps are 4-aligned uint32 pairs, the transforms 8-aligned runs of 7 doubles.
        storage = np.zeros(len(message) + 8, dtype=np.uint8)
        first = (-storage.ctypes.data - HEADER_SIZE) % 8
        self._buffer = storage[first : first + len(message)]
        self._buffer[:] = np.frombuffer(message, dtype=np.uint8)
        self._words = self._buffer[: len(message) // 4 * 4].view("<u4")
        doubles = self._buffer[HEADER_SIZE : HEADER_SIZE + (len(message) - HEADER_SIZE) // 8 * 8]
        self._doubles = doubles.view("<f8")
        stamps = (np.array(stamp_offsets, dtype=np.intp) + HEADER_SIZE) // 4
        self._sec_index, self._nanosec_index = stamps, stamps + 1
        values = np.array(value_offsets, dtype=np.intp) // 8
        self._pose_index = values[:, None] + np.arange(7)

    def write(self, stamp_ns: int | NDArray[np.int64], poses: Array) -> bytes:
        """The message: every transform stamped ``stamp_ns`` (ns since the epoch of its clock;
        or an array: transform i stamped ``stamp_ns[i]``), row i of ``poses`` (n, 7) for
        ``frames[i]``: translation x y z (metres), then quaternion x y z w."""
        sec, nanosec = ns_to_stamp(stamp_ns)
        words = self._words
        words[self._sec_index] = sec & 0xFFFFFFFF
        words[self._nanosec_index] = nanosec
        self._doubles[self._pose_index] = poses
        return self._buffer.tobytes()


class Publication(NamedTuple):
    """One TFMessage to publish: transform i is ``layout.frames[i]`` at ``poses[i]``
    (translation x y z in metres, quaternion x y z w), all stamped ``stamp_ns``.

    ``global_layout``: the same frames with the global tree's prefix (``tf_outputs``), where
    the node publishes one; the same poses and stamp then go out with it too (the first
    ``len(global_layout.frames)`` of them: the static union's set has the node's own
    transforms first, then foreign ones that stay out of the global tree).
    ``stamps_ns``: per transform, its own stamp (ns) instead of ``stamp_ns`` (the static
    union's foreign transforms keep theirs); None: all ``stamp_ns``.
    """

    layout: TFMessageLayout
    stamp_ns: int
    poses: Array
    global_layout: TFMessageLayout | None = None
    stamps_ns: NDArray[np.int64] | None = None

    def in_global_tree(self) -> Publication | None:
        """The node's own transforms with the global tree's frames; None without a global
        tree."""
        if self.global_layout is None:
            return None
        return Publication(
            self.global_layout, self.stamp_ns, self.poses[: len(self.global_layout.frames)]
        )

    def stamps(self) -> NDArray[np.int64]:
        """Per transform, its stamp (ns)."""
        if self.stamps_ns is not None:
            return self.stamps_ns
        return np.full(len(self.layout.frames), self.stamp_ns, dtype=np.int64)

    @property
    def translations(self) -> Array:
        """(n, 3) metres."""
        return self.poses[:, :3]

    @property
    def quaternions(self) -> Array:
        """(n, 4) x y z w."""
        return self.poses[:, 3:]

    def to_bytes(self) -> bytes:
        """The serialized TFMessage (CDR)."""
        stamps = self.stamp_ns if self.stamps_ns is None else self.stamps_ns
        return self.layout.write(stamps, self.poses)
