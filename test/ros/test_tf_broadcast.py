"""tf_broadcast: the serialized TFMessage writer and the /tf sender's two paths.

Expected messages are built field by field with the generated message classes and compared
after the RMW's own deserializer read the bytes (an independent reading of the layout).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from builtin_interfaces.msg import Time  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.serialization import deserialize_message, serialize_message  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.ros.tf_broadcast import (  # noqa: E402
    SerializedTFMessage,
    TransformSender,
    tf_qos,
    tf_static_qos,
)

pytestmark = pytest.mark.ros


def random_transforms(count: int, seed: int) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    quaternions = rng.normal(size=(count, 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    return rng.uniform(-100.0, 100.0, (count, 3)), quaternions


def assert_message(msg: Any, frames: list[tuple[str, str]], stamp: Time, t: Any, q: Any) -> None:
    assert len(msg.transforms) == len(frames)
    for k, transform in enumerate(msg.transforms):
        assert (transform.header.frame_id, transform.child_frame_id) == frames[k]
        assert (transform.header.stamp.sec, transform.header.stamp.nanosec) == (
            stamp.sec,
            stamp.nanosec,
        )
        tr, rot = transform.transform.translation, transform.transform.rotation
        assert [tr.x, tr.y, tr.z] == t[k].tolist()
        assert [rot.x, rot.y, rot.z, rot.w] == q[k].tolist()


# Frame names of every length modulo 8 exercise every padding case of the layout.
FRAMES = [("p" * n, "child/" + "c" * (n + 1)) for n in range(10)] + [("ünï", "")]


def test_serialized_message_reads_back_as_the_same_message() -> None:
    layout = SerializedTFMessage(FRAMES)
    for seed, stamp in enumerate([Time(sec=0, nanosec=1), Time(sec=-5, nanosec=999_999_999)]):
        t, q = random_transforms(len(FRAMES), seed)
        msg = deserialize_message(layout.write(stamp, t, q), TFMessage)
        assert_message(msg, FRAMES, stamp, t, q)


def test_size_equals_the_rmw_serialization_and_every_write_stands_alone() -> None:
    """As long as rclpy's serialization (no trailing padding; the RMW leaves its padding
    bytes unset, so they are not compared) and read back equal, write after write (the
    buffer is reused)."""
    from joint_tf_publisher.ros.tf_broadcast import _transform, fill_transforms

    for frames in (FRAMES, FRAMES[:1], []):
        layout = SerializedTFMessage(frames)
        for seed, stamp in enumerate([Time(sec=-5, nanosec=999_999_999), Time(sec=7, nanosec=3)]):
            t, q = random_transforms(len(frames), seed)
            expected = TFMessage(
                transforms=fill_transforms([_transform(*pair) for pair in frames], t, q, stamp)
            )
            written = layout.write(stamp, t, q)
            assert len(written) == len(serialize_message(expected))
            assert deserialize_message(written, TFMessage) == expected


def test_layout_is_checked_against_the_rmw() -> None:
    assert SerializedTFMessage(FRAMES).matches_rmw()
    assert SerializedTFMessage([]).matches_rmw()


def test_qos_profiles_are_tf2_ros() -> None:
    dynamic, static = tf_qos(), tf_static_qos()
    assert (dynamic.depth, dynamic.reliability, dynamic.durability) == (
        100,
        ReliabilityPolicy.RELIABLE,
        DurabilityPolicy.VOLATILE,
    )
    assert (static.depth, static.reliability, static.durability) == (
        1,
        ReliabilityPolicy.RELIABLE,
        DurabilityPolicy.TRANSIENT_LOCAL,
    )


@pytest.mark.parametrize("serialized", [True, False], ids=["bytes", "message-objects"])
def test_sender_publishes_one_message_either_way(
    ros: Any, monkeypatch: pytest.MonkeyPatch, serialized: bool
) -> None:
    if not serialized:  # an RMW that would not read the bytes back: message objects instead
        monkeypatch.setattr(SerializedTFMessage, "matches_rmw", lambda self: False)
    sender = TransformSender(ros.node)
    received: list[Any] = []
    listener = ros.create_node("tf_listener")
    listener.create_subscription(TFMessage, "/tf", received.append, QoSProfile(depth=10))
    frames = FRAMES[:4]
    t, q = random_transforms(len(frames), 3)
    stamp = Time(sec=42, nanosec=7)

    def sent_and_received() -> bool:
        sender.send_arrays(frames, stamp, t, q)
        return bool(received)

    assert ros.spin_until(sent_and_received, timeout_s=10.0)
    assert_message(received[0], frames, stamp, t, q)
    assert (tuple(frames) in sender._layouts) and (
        (sender._layouts[tuple(frames)] is not None) == serialized
    )
