"""cdr: JointState read from, and TFMessage written as, the bytes the RMW itself produces.

The oracle is rclpy's own (de)serialization through the RMW (``serialize_message``,
``deserialize_message``); the module under test imports no rclpy.
"""

from __future__ import annotations

import math
import random
import struct

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from builtin_interfaces.msg import Time  # noqa: E402
from geometry_msgs.msg import Transform, TransformStamped, Twist  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from sensor_msgs.msg import JointState, MultiDOFJointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.node_core.cdr import (  # noqa: E402
    JointStateReader,
    TFMessageLayout,
    read_multi_dof_joint_state,
)
from joint_tf_publisher.stamps import ns_to_stamp, stamp_to_ns  # noqa: E402

pytestmark = pytest.mark.ros


def joint_state(
    names: list[str], positions: list[float], stamp_ns: int = 0, frame_id: str = ""
) -> JointState:
    msg = JointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(stamp_ns)
    msg.header.frame_id = frame_id
    msg.name = names
    msg.position = positions
    return msg


def random_names(rng: random.Random, count: int) -> list[str]:
    """Names of every length modulo 4 (so every padding), some not ASCII."""
    alphabet = "abcdefghij_/0123456789"
    names = []
    for k in range(count):
        name = "".join(rng.choice(alphabet) for _ in range(rng.randint(1, 13)))
        names.append(name + ("é" if k % 5 == 0 else "") + str(k))
    return names


@pytest.mark.parametrize("seed", range(40))
def test_reads_what_the_rmw_writes(seed: int) -> None:
    rng = random.Random(seed)
    count = rng.randint(0, 30)
    names = random_names(rng, count)
    positions = [rng.uniform(-1e3, 1e3) for _ in range(count)]
    stamp_ns = rng.randint(-(2**31) * 10**9, (2**31 - 1) * 10**9)
    msg = joint_state(names, positions, stamp_ns, "f" * rng.randint(0, 9))
    msg.velocity = [1.0] * rng.randint(0, count)
    msg.effort = [2.0] * rng.randint(0, 3)
    data = JointStateReader().read(serialize_message(msg))
    assert data is not None
    assert data.stamp_ns == stamp_ns == stamp_to_ns(msg.header.stamp.sec, msg.header.stamp.nanosec)
    assert data.names == tuple(names)
    assert data.positions.tolist() == positions


def test_positions_may_be_missing_or_of_another_length() -> None:
    reader = JointStateReader()
    empty = reader.read(serialize_message(joint_state(["a", "b"], [])))
    assert empty is not None and empty.names == ("a", "b") and empty.positions.size == 0
    longer = reader.read(serialize_message(joint_state(["a"], [1.0, 2.0, math.nan])))
    assert longer is not None and longer.names == ("a",)
    assert longer.positions[:2].tolist() == [1.0, 2.0] and math.isnan(longer.positions[2])


def test_names_that_repeat_change_or_move_are_read_as_sent() -> None:
    """The reader remembers the last name block: a message with the same names, then one
    with a name of the same length changed, then one whose frame id moves the names, each
    reads as sent."""
    reader = JointStateReader()
    first = reader.read(serialize_message(joint_state(["j1", "joint_2"], [0.1, 0.2])))
    again = reader.read(serialize_message(joint_state(["j1", "joint_2"], [0.3, 0.4], 7)))
    assert first is not None and again is not None
    assert first.names == again.names == ("j1", "joint_2")
    assert again.positions.tolist() == [0.3, 0.4] and again.stamp_ns == 7
    # Same length, one letter different; then a frame id that moves the name block.
    other = reader.read(serialize_message(joint_state(["j1", "joint_3"], [0.5, 0.6])))
    moved = reader.read(serialize_message(joint_state(["j1", "joint_3"], [0.7, 0.8], 0, "base")))
    assert other is not None and other.names == ("j1", "joint_3")
    assert moved is not None and moved.names == ("j1", "joint_3")
    assert moved.positions.tolist() == [0.7, 0.8]


def test_padding_bytes_may_differ_between_messages() -> None:
    """Serializers may leave padding uninitialised: the names still match (no decoding)."""
    reader = JointStateReader()
    names = ["a", "bc", "def", "ghij", "k"]  # padding after each but "def"
    data = serialize_message(joint_state(names, [0.0] * 5))
    first = reader.read(data)
    assert first is not None
    garbled = bytearray(data)
    offset = 4 + 8 + 4 + 1  # encapsulation, stamp, frame id length, frame id ""
    offset += -(offset - 4) % 4 + 4  # aligned name count
    for name in names:
        offset += -(offset - 4) % 4
        end = offset + 4 + len(name) + 1
        garbled[end : end + (-(end - 4) % 4)] = b"\xee" * (-(end - 4) % 4)
        offset = end
    assert bytes(garbled) != data
    second = reader.read(bytes(garbled))
    assert second is not None and second.names == first.names == tuple(names)
    # The remembered block (with the garbled padding) still tells a changed name.
    changed = reader.read(serialize_message(joint_state([*names[:-1], "m"], [0.0] * 5)))
    assert changed is not None and changed.names == (*names[:-1], "m")


def test_what_it_cannot_read_is_none() -> None:
    reader = JointStateReader()
    data = serialize_message(joint_state(["a", "b"], [1.0, 2.0]))
    assert reader.read(b"\x00\x00" + data[2:]) is None  # big endian encapsulation
    second_position = data.index(struct.pack("<d", 2.0))
    assert reader.read(data[: second_position + 4]) is None  # truncated positions
    assert reader.read(data[:20]) is None  # truncated names
    assert reader.read(b"") is None
    assert reader.read(data) is not None


def random_transforms(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    translations = rng.uniform(-5.0, 5.0, (count, 3))
    quaternions = rng.normal(size=(count, 4))
    return translations, quaternions / np.linalg.norm(quaternions, axis=1, keepdims=True)


def expected_message(
    frames: list[tuple[str, str]], stamp_ns: int, translations: np.ndarray, quaternions: np.ndarray
) -> TFMessage:
    sec, nanosec = ns_to_stamp(stamp_ns)
    transforms = []
    for (parent, child), t, q in zip(frames, translations, quaternions, strict=True):
        msg = TransformStamped()
        msg.header.stamp = Time(sec=sec, nanosec=nanosec)
        msg.header.frame_id, msg.child_frame_id = parent, child
        msg.transform.translation.x, msg.transform.translation.y = t[0], t[1]
        msg.transform.translation.z = t[2]
        rotation = msg.transform.rotation
        rotation.x, rotation.y, rotation.z, rotation.w = q
        transforms.append(msg)
    return TFMessage(transforms=transforms)


@pytest.mark.parametrize("count", [0, 1, 7, 40])
def test_layout_writes_what_the_rmw_reads_and_writes(count: int) -> None:
    frames = [("p" * (k % 9), f"child_{k}" + "x" * (k % 5)) for k in range(count)]
    layout = TFMessageLayout(frames)
    for seed, stamp_ns in enumerate([0, 1_700_000_123_456_789_012, -3_500_000_001]):
        translations, quaternions = random_transforms(count, seed)
        data = layout.write(stamp_ns, np.hstack((translations, quaternions)))
        expected = expected_message(frames, stamp_ns, translations, quaternions)
        assert deserialize_message(data, TFMessage) == expected
        assert len(data) == len(serialize_message(expected))  # padding aside, the same bytes


def test_each_write_stands_alone() -> None:
    frames = [("a", "b"), ("b", "c")]
    layout = TFMessageLayout(frames)
    first = layout.write(5, np.hstack(random_transforms(2, 1)))
    second_values = random_transforms(2, 2)
    second = layout.write(6, np.hstack(second_values))
    assert first != second
    assert deserialize_message(second, TFMessage) == expected_message(frames, 6, *second_values)


def multi_dof_joint_state(
    names: list[str], poses: np.ndarray, stamp_ns: int, frame_id: str
) -> MultiDOFJointState:
    """A MultiDOFJointState of ``names`` at ``poses`` (rows x y z qx qy qz qw), with twists
    after them (which the reader leaves)."""
    msg = MultiDOFJointState()
    msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(stamp_ns)
    msg.header.frame_id = frame_id
    msg.joint_names = names
    for row in poses.tolist():
        transform = Transform()
        t, r = transform.translation, transform.rotation
        t.x, t.y, t.z, r.x, r.y, r.z, r.w = row
        msg.transforms.append(transform)
        msg.twist.append(Twist())
    return msg


@pytest.mark.parametrize("seed", range(12))
def test_a_multi_dof_joint_state_is_read_as_the_rmw_wrote_it(seed: int) -> None:
    """``read_multi_dof_joint_state`` (the node's and bag repair's one reader) gives what
    rclpy serialized. A recording's big endian bytes: test/bag/test_bag_rules.py."""
    rng = random.Random(seed)
    count = rng.randint(0, 6)
    names = random_names(rng, count)
    poses = np.random.default_rng(seed).normal(size=(count, 7))
    stamp_ns, frame_id = rng.randrange(1 << 40), "odom"[: rng.randint(0, 4)]
    data = bytes(serialize_message(multi_dof_joint_state(names, poses, stamp_ns, frame_id)))
    state = read_multi_dof_joint_state(data)
    assert state is not None
    assert state.stamp_ns == stamp_ns and state.names == tuple(names)
    assert state.translations.tolist() == poses[:, :3].tolist()
    assert state.quaternions.tolist() == poses[:, 3:].tolist()


def test_a_multi_dof_joint_state_it_cannot_read_is_none() -> None:
    poses = np.array([[1.0, 2.0, 3.0, 0.0, 0.0, 0.0, 1.0]])
    data = bytes(serialize_message(multi_dof_joint_state(["base"], poses, 5, "odom")))
    assert read_multi_dof_joint_state(b"\x00\x03" + data[2:]) is None  # another encapsulation
    assert read_multi_dof_joint_state(data[: -48 - 56 + 8]) is None  # truncated transforms
    assert read_multi_dof_joint_state(data[:20]) is None  # truncated names
    assert read_multi_dof_joint_state(data[:4]) is None
    assert read_multi_dof_joint_state(b"") is None
    count_at = data.index(b"base") - 8
    assert (
        read_multi_dof_joint_state(data[:count_at] + b"\xf0\xff\xff\xff" + data[count_at + 4 :])
        is None
    )
    assert read_multi_dof_joint_state(data) is not None
