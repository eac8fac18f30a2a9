"""Fuzz: the bytes of a JointState, random or mutated, through the fast reader and the
pipeline (no DDS): nothing raises, whatever arrives.

``JointStateReader.read`` gives stamp, names and positions or None (the node then hands the
bytes to the RMW); the pipeline's intake (``take_joint_state``) gives bytes (its short way),
a Publication or None, and ``UndecodableMessage`` for what its reader does not read. The
mutations are those of test/ros/test_node_edges.py's run over DDS: truncations, flipped
bytes, huge counts, strings of the wrong length or bytes, random bytes. The oracle for valid
messages is the RMW's own serialization (test_cdr.py).
"""

from __future__ import annotations

import struct

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from test_pipeline import T0, Rig

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

from rclpy.serialization import serialize_message  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402

from joint_tf_publisher.node_core.cdr import JointStateReader, UndecodableMessage  # noqa: E402
from joint_tf_publisher.node_core.joint_sources import JOINT_STATES_SOURCE  # noqa: E402
from joint_tf_publisher.stamps import ns_to_stamp  # noqa: E402

pytestmark = pytest.mark.ros

NAMES = ["joint_1", "joint_2", "finger_joint"]


def valid(stamp_ns: int = T0) -> bytes:
    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(stamp_ns)
    msg.header.frame_id = "base"
    msg.name = list(NAMES)
    msg.position = [0.1, 0.2, 0.01]
    return bytes(serialize_message(msg))


VALID = valid()


@st.composite
def mutated(draw: st.DrawFn) -> bytes:
    """A mutation of ``VALID`` or random bytes."""
    data = bytearray(VALID)
    kind = draw(st.sampled_from(["truncate", "flip", "count", "string", "random", "extend"]))
    if kind == "truncate":
        return bytes(data[: draw(st.integers(0, len(data) - 1))])
    if kind == "flip":
        for index in draw(st.lists(st.integers(0, len(data) - 1), min_size=1, max_size=8)):
            data[index] ^= 1 << draw(st.integers(0, 7))
        return bytes(data)
    if kind == "count":
        offset = draw(st.integers(1, (len(data) - 4) // 4)) * 4
        value = draw(
            st.sampled_from([0xFFFFFFFF, 0x7FFFFFFF, 1 << 20, 0]) | st.integers(0, 2**32 - 1)
        )
        return bytes(data[:offset]) + struct.pack("<I", value) + bytes(data[offset + 4 :])
    if kind == "string":
        name = draw(st.sampled_from(NAMES)).encode() + b"\x00"
        replacement = draw(st.binary(min_size=len(name), max_size=len(name)))
        return bytes(data).replace(name, replacement)
    if kind == "extend":
        return bytes(data) + draw(st.binary(max_size=64))
    return draw(st.binary(max_size=300))


@settings(max_examples=300, deadline=None)
@given(messages=st.lists(mutated(), min_size=1, max_size=5))
def test_any_bytes_through_the_reader_and_the_pipeline_raise_nothing(
    messages: list[bytes],
) -> None:
    rig = Rig(ignore_timestamp=True)
    reader = JointStateReader()
    # A valid message first, so that the short way is open for the stream.
    for data in [VALID, valid(T0 + 1), *messages, valid(T0 + 2)]:
        state = reader.read(data)
        if state is not None:
            assert len(state.positions) <= len(data) // 8
        try:
            rig.pipeline.take_joint_state(data, JOINT_STATES_SOURCE)
        except UndecodableMessage:
            assert state is None  # the node hands it to the RMW
    # The stream goes on: a valid message after the junk is published.
    message = rig.pipeline.take_joint_state(valid(T0 + 3), JOINT_STATES_SOURCE)
    if isinstance(message, bytes):
        assert message
    else:
        assert message is not None
        assert np.isfinite(message.translations).all()
