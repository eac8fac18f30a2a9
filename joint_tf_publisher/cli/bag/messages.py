"""The few messages the bag commands look into: TFMessage (recorded ``/tf`` and
``/tf_static``: whose frames), std_msgs/String (``/robot_description``)
and DiagnosticArray (the node's recorded health report, for ``doctor --bag``), through rosbags'
CDR (de)serializer (a MultiDOFJointState is read by the node's own reader,
``cdr.read_multi_dof_joint_state``). The TFMessages the
repair writes for the robot are the node's own bytes (``node_core.cdr``); these only read
recorded messages and merge other publishers' static frames into the robot's static set.
"""

from __future__ import annotations

import struct
from typing import Any

from .types import DIAGNOSTIC_ARRAY, STRING, TF_MESSAGE, typestore

#: A recorded TransformStamped (rosbags' message class: header.frame_id, child_frame_id...).
Transform = Any


def definition(msgtype: str) -> tuple[str, str]:
    """(message definition, RIHS01 hash) of ``msgtype``, for a new connection."""
    store = typestore()
    text, _ = store.generate_msgdef(msgtype, ros_version=2)
    return text, store.hash_rihs01(msgtype)


def tf_transforms(data: bytes | memoryview) -> list[Transform]:
    """The transforms of a serialized TFMessage; ValueError if it does not decode."""
    try:
        return list(typestore().deserialize_cdr(bytes(data), TF_MESSAGE).transforms)
    except Exception as exc:  # rosbags raises several types for broken CDR
        raise ValueError(f"not a TFMessage: {exc}") from None


def tf_bytes(transforms: list[Transform]) -> bytes:
    """A serialized TFMessage of ``transforms``."""
    store = typestore()
    message = store.types[TF_MESSAGE](transforms=transforms)
    return bytes(store.serialize_cdr(message, TF_MESSAGE))


def merged_tf(data: bytes, extra: list[Transform]) -> bytes:
    """The TFMessage ``data`` with ``extra`` transforms after its own (``data`` itself when
    there are none)."""
    if not extra:
        return data
    return tf_bytes(tf_transforms(data) + extra)


def diagnostic_statuses(
    data: bytes | memoryview,
) -> list[tuple[str, int, str, str, tuple[tuple[str, str], ...]]]:
    """Name, level, message, hardware id and (key, value) pairs of each status of a
    serialized diagnostic_msgs/DiagnosticArray; ValueError if it does not decode."""
    try:
        message = typestore().deserialize_cdr(bytes(data), DIAGNOSTIC_ARRAY)
    except Exception as exc:  # rosbags raises several types for broken CDR
        raise ValueError(f"not a DiagnosticArray: {exc}") from None
    return [
        (
            status.name,
            int(status.level),
            status.message,
            status.hardware_id,
            tuple((value.key, value.value) for value in status.values),
        )
        for status in message.status
    ]


def string_value(data: bytes | memoryview) -> str:
    """The text of a serialized std_msgs/String; ValueError if it does not decode."""
    raw = bytes(data)
    try:
        (size,) = struct.unpack_from("<I" if raw[1:2] == b"\x01" else ">I", raw, 4)
    except struct.error:
        raise ValueError("not a std_msgs/String: too short") from None
    if size == 0 or 8 + size > len(raw):
        raise ValueError("not a std_msgs/String: its length runs beyond the message")
    return raw[8 : 8 + size - 1].decode("utf-8", "replace")


def string_bytes(text: str) -> bytes:
    """A serialized std_msgs/String."""
    store = typestore()
    return bytes(store.serialize_cdr(store.types[STRING](data=text), STRING))
