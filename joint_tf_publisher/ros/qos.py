"""Every QoS profile of the package's topics as rclpy's ``QoSProfile`` (docs/node.md lists the
node's); their numbers are ``node_core/qos.py``'s, which the bag commands read too.

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

from ..node_core import qos
from ..node_core.qos import Durability, Reliability, TopicQos

_RELIABILITY = {
    Reliability.RELIABLE: ReliabilityPolicy.RELIABLE,
    Reliability.BEST_EFFORT: ReliabilityPolicy.BEST_EFFORT,
}
_DURABILITY = {
    Durability.VOLATILE: DurabilityPolicy.VOLATILE,
    Durability.TRANSIENT_LOCAL: DurabilityPolicy.TRANSIENT_LOCAL,
}


def profile(topic_qos: TopicQos) -> QoSProfile:
    """A fresh ``QoSProfile`` of ``topic_qos``: keep last its depth, its reliability and
    durability."""
    return QoSProfile(
        depth=topic_qos.depth,
        history=HistoryPolicy.KEEP_LAST,
        reliability=_RELIABILITY[topic_qos.reliability],
        durability=_DURABILITY[topic_qos.durability],
    )


def joint_states_qos() -> QoSProfile:
    """``qos.JOINT_STATES``; overridable with ``qos_overrides.<topic>.subscription.*``."""
    return profile(qos.JOINT_STATES)


def latched_qos() -> QoSProfile:
    """``qos.LATCHED``: a late subscriber gets the last message."""
    return profile(qos.LATCHED)


def tf_qos() -> QoSProfile:
    """``/tf``: ``qos.TF``, as tf2_ros's ``TransformBroadcaster`` publishes."""
    return profile(qos.TF)


def remote_tf_qos() -> QoSProfile:
    """``remote/tf``: ``qos.REMOTE_TF``, keep last 1."""
    return profile(qos.REMOTE_TF)


def tf_static_qos() -> QoSProfile:
    """``/tf_static``: ``qos.TF_STATIC`` (``latched_qos``), as tf2_ros's
    ``StaticTransformBroadcaster`` publishes."""
    return profile(qos.TF_STATIC)


def tf_listener_static_qos() -> QoSProfile:
    """A ``/tf_static`` reader: ``qos.TF_LISTENER_STATIC``, as tf2_ros's
    ``TransformListener`` reads it."""
    return profile(qos.TF_LISTENER_STATIC)


def union_writers_listener_qos() -> QoSProfile:
    """A reader of the static unions' announcements: ``tf_listener_static_qos`` (each union
    node latches one; a late joiner gets them all)."""
    return tf_listener_static_qos()


def clock_qos() -> QoSProfile:
    """A ``/clock`` reader: ``qos.CLOCK``."""
    return profile(qos.CLOCK)


def diagnostics_qos() -> QoSProfile:
    """``/diagnostics`` published: ``qos.DIAGNOSTICS``, as diagnostic_updater's publisher."""
    return profile(qos.DIAGNOSTICS)


def diagnostics_listener_qos() -> QoSProfile:
    """A ``/diagnostics`` reader: ``qos.DIAGNOSTICS_LISTENER``."""
    return profile(qos.DIAGNOSTICS_LISTENER)


def joint_states_publisher_qos() -> QoSProfile:
    """``joint_states`` published: ``qos.JOINT_STATES_PUBLISHER``."""
    return profile(qos.JOINT_STATES_PUBLISHER)
