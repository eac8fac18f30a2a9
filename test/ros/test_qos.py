"""qos: every profile of the node, against what it claims to equal: tf2_ros's broadcasters
(their publishers on a real node), rclpy's sensor-data profile, a fresh profile per call."""

from __future__ import annotations

import copy
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_ros", reason="needs tf2_ros (run in .venv: make test)")

from rclpy.qos import QoSProfile, qos_profile_sensor_data  # noqa: E402
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


def test_the_latched_profile_is_tf_static_s_and_keeps_one_sample() -> None:
    assert qos.latched_qos() == qos.tf_static_qos()
    assert qos.latched_qos().depth == 1


def test_joint_states_is_sensor_data_with_a_deeper_queue() -> None:
    expected = copy.copy(qos_profile_sensor_data)
    expected.depth = qos.JOINT_STATES_DEPTH
    assert qos.joint_states_qos() == expected
    assert qos_profile_sensor_data.depth < qos.JOINT_STATES_DEPTH


def test_each_call_gives_a_fresh_profile() -> None:
    """rclpy writes QoS overrides into the profile it is given."""
    makers = (qos.joint_states_qos, qos.latched_qos, qos.tf_qos, qos.tf_static_qos)
    for make in (*makers, qos.tf_listener_static_qos, qos.clock_qos):
        assert make() is not make()
