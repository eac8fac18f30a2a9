"""Every QoS profile of the package's topics, in one place (docs/node.md lists the node's).

Each function returns a fresh profile: rclpy writes QoS overrides into the one it is given.

- ``joint_states_qos``: ``joint_states`` and ``multi_dof_joint_states``, subscribed.
- ``latched_qos``: ``robot_description``, published or subscribed.
- ``tf_qos``, ``tf_static_qos``: ``/tf`` and ``/tf_static``, tf2_ros's profiles.
- ``remote_tf_qos``: the remote output's ``remote/tf`` (its ``remote/tf_static``:
  ``tf_static_qos``).
- ``diagnostics_qos``: ``/diagnostics``, published as diagnostic_updater publishes it.
- ``joint_states_publisher_qos``: ``joint_states`` published by the CLI's demo source.
- ``tf_listener_static_qos``, ``clock_qos``, ``diagnostics_listener_qos``: what ``doctor``
  reads ``/tf_static``, ``/clock`` and ``/diagnostics`` with; the static union
  (``static_union``) reads ``/tf_static`` with the first too.
- ``latched_qos`` and ``union_writers_listener_qos``: the static unions' announcements
  (``/tf_static_union_writers``), published and read.
"""

from __future__ import annotations

from rclpy.qos import DurabilityPolicy, HistoryPolicy, QoSProfile, ReliabilityPolicy

#: Queue depth of the joint-state subscriptions: 100 ms at 1 kHz (sensor data QoS has 5).
JOINT_STATES_DEPTH = 100
#: History depth of ``/tf``: tf2_ros's ``TransformBroadcaster`` default.
TF_DEPTH = 100
#: History depth of a ``/tf_static`` reader: room for the latched sets of many publishers at
#: once (a keep-last-1 reader keeps one of them when several arrive together), as tf2_ros's
#: ``TransformListener`` keeps.
TF_LISTENER_STATIC_DEPTH = 100
#: History depth of a ``/clock`` reader.
CLOCK_DEPTH = 10
#: History depth of a ``/diagnostics`` reader: every status of a burst of several nodes.
DIAGNOSTICS_LISTENER_DEPTH = 100
#: History depth of a ``joint_states`` publisher: rclpy's usual 10, as joint_state_publisher.
JOINT_STATES_PUBLISHER_DEPTH = 10


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


def remote_tf_qos() -> QoSProfile:
    """``remote/tf``: keep last 1, reliable, volatile: a reader behind a slow link gets the
    latest message, never a queue of old ones (reliable, so tf2 listeners match it)."""
    return _keep_last(1, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE)


def tf_static_qos() -> QoSProfile:
    """``/tf_static``: ``latched_qos``, as tf2_ros's ``StaticTransformBroadcaster`` publishes
    (C++ ``StaticBroadcasterQoS``: keep last 1, reliable, transient local)."""
    return latched_qos()


def tf_listener_static_qos() -> QoSProfile:
    """A ``/tf_static`` reader: keep last ``TF_LISTENER_STATIC_DEPTH``, reliable, transient
    local, as tf2_ros's ``TransformListener`` reads it (C++ ``StaticListenerQoS``)."""
    return _keep_last(
        TF_LISTENER_STATIC_DEPTH, ReliabilityPolicy.RELIABLE, DurabilityPolicy.TRANSIENT_LOCAL
    )


def union_writers_listener_qos() -> QoSProfile:
    """A reader of the static unions' announcements: keep last ``TF_LISTENER_STATIC_DEPTH``,
    reliable, transient local (each union node latches one; a late joiner gets them all)."""
    return tf_listener_static_qos()


def clock_qos() -> QoSProfile:
    """A ``/clock`` reader: best effort, so it matches publishers of either reliability."""
    return _keep_last(CLOCK_DEPTH, ReliabilityPolicy.BEST_EFFORT, DurabilityPolicy.VOLATILE)


def diagnostics_qos() -> QoSProfile:
    """``/diagnostics`` published: keep last 1, reliable, volatile, as diagnostic_updater's
    publisher (``create_publisher(DiagnosticArray, '/diagnostics', 1)``)."""
    return _keep_last(1, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE)


def diagnostics_listener_qos() -> QoSProfile:
    """A ``/diagnostics`` reader: keep last ``DIAGNOSTICS_LISTENER_DEPTH``, reliable, volatile."""
    return _keep_last(
        DIAGNOSTICS_LISTENER_DEPTH, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE
    )


def joint_states_publisher_qos() -> QoSProfile:
    """``joint_states`` published: keep last ``JOINT_STATES_PUBLISHER_DEPTH``, reliable,
    volatile (what ``create_publisher(JointState, 'joint_states', 10)`` gives)."""
    return _keep_last(
        JOINT_STATES_PUBLISHER_DEPTH, ReliabilityPolicy.RELIABLE, DurabilityPolicy.VOLATILE
    )


def _keep_last(
    depth: int, reliability: ReliabilityPolicy, durability: DurabilityPolicy
) -> QoSProfile:
    return QoSProfile(
        depth=depth, history=HistoryPolicy.KEEP_LAST, reliability=reliability, durability=durability
    )
