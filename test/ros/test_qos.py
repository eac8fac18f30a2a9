"""qos: the profiles against what they claim to equal: rclpy's sensor-data profile, each other,
a fresh profile per call. tf2_ros's own (broadcasters, listener) are compared in
test/launch/test_qos_tf2_ros.py, with the ROS 2 tools that have tf2_ros."""

from __future__ import annotations

import copy

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

from rclpy.qos import QoSProfile, qos_profile_sensor_data  # noqa: E402

from joint_tf_publisher.node_core.qos import DIAGNOSTICS_LISTENER_DEPTH, JOINT_STATES_DEPTH  # noqa: E402
from joint_tf_publisher.ros import qos  # noqa: E402

pytestmark = pytest.mark.ros


def test_the_latched_profile_is_tf_static_s_and_keeps_one_sample() -> None:
    assert qos.latched_qos() == qos.tf_static_qos()
    assert qos.latched_qos().depth == 1


def test_joint_states_is_sensor_data_with_a_deeper_queue() -> None:
    expected = copy.copy(qos_profile_sensor_data)
    expected.depth = JOINT_STATES_DEPTH
    assert qos.joint_states_qos() == expected
    assert qos_profile_sensor_data.depth < JOINT_STATES_DEPTH


def test_each_call_gives_a_fresh_profile() -> None:
    """rclpy writes QoS overrides into the profile it is given."""
    makers = (qos.joint_states_qos, qos.latched_qos, qos.tf_qos, qos.tf_static_qos)
    for make in (*makers, qos.tf_listener_static_qos, qos.clock_qos):
        assert make() is not make()
    for make in (qos.diagnostics_qos, qos.diagnostics_listener_qos, qos.joint_states_publisher_qos):
        assert make() is not make()


def test_diagnostics_and_joint_states_publishers_have_the_profiles_of_a_plain_depth() -> None:
    """diagnostic_updater publishes /diagnostics with ``create_publisher(..., 1)`` and
    joint_state_publisher its joint states with depth 10: rclpy's profile for a plain depth."""
    assert qos.diagnostics_qos() == QoSProfile(depth=1)
    assert qos.joint_states_publisher_qos() == QoSProfile(depth=10)
    listener = qos.diagnostics_listener_qos()
    assert listener.reliability == qos.diagnostics_qos().reliability
    assert listener.depth == DIAGNOSTICS_LISTENER_DEPTH > 1
