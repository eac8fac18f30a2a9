"""tf_publishers: /tf and /tf_static (their QoS: test_qos.py), as bytes or as message objects."""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from rclpy.serialization import deserialize_message  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.node_core.cdr import Publication, TFMessageLayout  # noqa: E402
from joint_tf_publisher.ros import qos, tf_publishers  # noqa: E402

pytestmark = pytest.mark.ros

FRAMES = [("world", "base"), ("base", "l1"), ("l1", "a_much_longer_link_name"), ("x", "y")]


def publication(stamp_ns: int = 42_000_000_007) -> Publication:
    rng = np.random.default_rng(3)
    quaternions = rng.normal(size=(len(FRAMES), 4))
    quaternions /= np.linalg.norm(quaternions, axis=1, keepdims=True)
    translations = rng.uniform(-2, 2, (len(FRAMES), 3))
    return Publication(TFMessageLayout(FRAMES), stamp_ns, np.hstack((translations, quaternions)))


def test_bytes_and_message_objects_are_the_same_message() -> None:
    assert tf_publishers.layout_matches_rmw()
    sample = publication()
    assert deserialize_message(sample.to_bytes(), TFMessage) == tf_publishers.to_message(sample)


@pytest.mark.parametrize("raw", [True, False], ids=["bytes", "message-objects"])
def test_both_publishers_send_one_message_either_way(ros: Any, raw: bool) -> None:
    """Message objects are the path where the RMW would not read our bytes back."""
    tf = tf_publishers.TfPublisher(ros.node)
    static = tf_publishers.StaticTfPublisher(ros.node)
    tf.raw = static.raw = raw
    listener = ros.create_node("tf_listener")
    received: list[Any] = []
    latched: list[Any] = []
    listener.create_subscription(TFMessage, "/tf", received.append, qos.tf_qos())
    sample = publication()
    static.replace(sample)
    listener.create_subscription(TFMessage, "/tf_static", latched.append, qos.tf_static_qos())

    def sent_and_received() -> bool:
        tf.publish(sample)
        return bool(received) and bool(latched)

    assert ros.spin_until(sent_and_received, timeout_s=10.0)
    expected = tf_publishers.to_message(sample)
    assert received[0] == expected and latched[-1] == expected
