"""qos: /tf, /tf_static and the static reader have tf2_ros's own profiles, read from the
publishers and subscriptions tf2_ros's broadcasters and listener make on a real node.

Here, not in test/ros: it needs tf2_ros, which the ROS 2 tools have (a sourced distro or the
kit) and the Jazzy wheels world does not.
"""

from __future__ import annotations

from typing import Any

import pytest

REASON = "needs tf2_ros: a sourced distro or the kit (make test)"
pytest.importorskip("rclpy", reason=REASON)
pytest.importorskip("tf2_ros", reason=REASON)

from rclpy.qos import QoSProfile  # noqa: E402
from tf2_ros import (  # noqa: E402
    Buffer,
    StaticTransformBroadcaster,
    TransformBroadcaster,
    TransformListener,
)

from joint_tf_publisher.ros import qos  # noqa: E402

pytestmark = pytest.mark.ros


def publisher_qos(node: Any, topic: str) -> QoSProfile:
    (profile,) = [p.qos_profile for p in node.publishers if p.topic_name == topic]
    return profile


def test_tf_and_tf_static_are_tf2_ros_broadcasters_profiles(ros: Any) -> None:
    node = ros.create_node("tf2_ros_broadcasters")
    TransformBroadcaster(node)
    StaticTransformBroadcaster(node)
    assert qos.tf_qos() == publisher_qos(node, "/tf")
    assert qos.tf_static_qos() == publisher_qos(node, "/tf_static")


def test_the_static_reader_is_tf2_ros_listener_s(ros: Any) -> None:
    node = ros.create_node("tf2_ros_listener")
    TransformListener(Buffer(), node, spin_thread=False)
    (profile,) = [s.qos_profile for s in node.subscriptions if s.topic_name == "/tf_static"]
    assert qos.tf_listener_static_qos() == profile
