"""Every QoS profile of the node's topics, in one place (docs/node.md lists them per topic).

Each function returns a fresh profile: rclpy writes QoS overrides into the one it is given.

- ``joint_states_qos``: ``joint_states`` and ``multi_dof_joint_states``, subscribed.
- ``latched_qos``: ``robot_description``, published or subscribed.
- ``tf_qos``, ``tf_static_qos``: ``/tf`` and ``/tf_static``, tf2_ros's profiles.
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

#: Queue depth of the joint-state subscriptions: 100 ms at 1 kHz (sensor data QoS has 5).
JOINT_STATES_DEPTH = 100
#: History depth of ``/tf``: tf2_ros's ``TransformBroadcaster`` default.
TF_DEPTH = 100


def joint_states_qos() -> QoSProfile:
    """Sensor data's QoS (best effort, so any publisher matches; volatile) with a deeper
    queue, ``JOINT_STATES_DEPTH``; overridable with ``qos_overrides.<topic>.subscription.*``."""
    return _keep_last(JOINT_STATES_DEPTH, ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.VOLATILE)


def latched_qos() -> QoSProfile:
    """Keep last 1, reliable, transient local: a late subscriber gets the last message."""
    return _keep_last(1, ReliabilityPolicy.RELIABLE, DurabilityPolicy.TRANSIENT_LOCAL)


def tf_qos() -> QoSProfile:
    """``/tf``: keep last ``TF_DEPTH``, reliable, volatile, as tf2_ros's
    ``TransformBroadcaster`` publishes (C++ ``DynamicBroadcasterQoS``)."""
    return _keep_last(TF_DEPTH, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE)


def tf_static_qos() -> QoSProfile:
    """``/tf_static``: ``latched_qos``, as tf2_ros's ``StaticTransformBroadcaster`` publishes
    (C++ ``StaticBroadcasterQoS``: keep last 1, reliable, transient local)."""
    return latched_qos()


def _keep_last(
    depth: int, reliability: ReliabilityPolicy, durability: DurabilityPolicy
) -> QoSProfile:
    return QoSProfile(
        depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=reliability, durability=durability
    )
