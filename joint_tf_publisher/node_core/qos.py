"""The QoS of every topic of the package as plain values: the one place its numbers live.

Holds each topic's history depth, reliability and durability (always keep last); imports
nothing (no rclpy, no rosbags), so the ROS adapter (``ros/qos.py``: rclpy's ``QoSProfile``
of each) and the bag commands (``cli/bag/qos.py``: rosbags' ``Qos`` of ``/tf`` and
``/tf_static``) build their profiles from the same numbers. docs/node.md lists the node's.
"""

from __future__ import annotations

from dataclasses import dataclass
from enum import Enum, auto


class Reliability(Enum):
    """Whether a lost sample is sent again (rclpy's ``ReliabilityPolicy``)."""

    RELIABLE = auto()
    BEST_EFFORT = auto()


class Durability(Enum):
    """Whether a late subscriber gets the samples sent before it came (rclpy's
    ``DurabilityPolicy``)."""

    VOLATILE = auto()
    TRANSIENT_LOCAL = auto()


@dataclass(frozen=True)
class TopicQos:
    """A topic's QoS: keep last ``depth`` messages, ``reliability``, ``durability``; the rest
    (deadline, lifespan, liveliness) at the middleware's defaults."""

    depth: int
    reliability: Reliability
    durability: Durability


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

_RELIABLE, _BEST_EFFORT = Reliability.RELIABLE, Reliability.BEST_EFFORT
_VOLATILE, _TRANSIENT_LOCAL = Durability.VOLATILE, Durability.TRANSIENT_LOCAL

#: ``joint_states`` and ``multi_dof_joint_states`` subscribed: sensor data's QoS (best
#: effort, so any publisher matches; volatile) with a deeper queue.
JOINT_STATES = TopicQos(JOINT_STATES_DEPTH, _BEST_EFFORT, _VOLATILE)
#: Keep last 1, reliable, transient local: a late subscriber gets the last message
#: (``robot_description``, the static unions' announcements).
LATCHED = TopicQos(1, _RELIABLE, _TRANSIENT_LOCAL)
#: ``/tf``, as tf2_ros's ``TransformBroadcaster`` publishes (C++ ``DynamicBroadcasterQoS``).
TF = TopicQos(TF_DEPTH, _RELIABLE, _VOLATILE)
#: ``/tf_static``: ``LATCHED``, as tf2_ros's ``StaticTransformBroadcaster`` publishes (C++
#: ``StaticBroadcasterQoS``).
TF_STATIC = LATCHED
#: ``remote/tf``: the latest message to a reader behind a slow link, never a queue of old
#: ones (reliable, so tf2 listeners match it).
REMOTE_TF = TopicQos(1, _RELIABLE, _VOLATILE)
#: A ``/tf_static`` reader, as tf2_ros's ``TransformListener`` reads it (C++
#: ``StaticListenerQoS``); also the static unions' announcements read.
TF_LISTENER_STATIC = TopicQos(TF_LISTENER_STATIC_DEPTH, _RELIABLE, _TRANSIENT_LOCAL)
#: A ``/clock`` reader: best effort, so it matches publishers of either reliability.
CLOCK = TopicQos(CLOCK_DEPTH, _BEST_EFFORT, _VOLATILE)
#: ``/diagnostics`` published, as diagnostic_updater's publisher
#: (``create_publisher(DiagnosticArray, '/diagnostics', 1)``).
DIAGNOSTICS = TopicQos(1, _RELIABLE, _VOLATILE)
#: A ``/diagnostics`` reader.
DIAGNOSTICS_LISTENER = TopicQos(DIAGNOSTICS_LISTENER_DEPTH, _RELIABLE, _VOLATILE)
#: ``joint_states`` published (what ``create_publisher(JointState, 'joint_states', 10)``
#: gives).
JOINT_STATES_PUBLISHER = TopicQos(JOINT_STATES_PUBLISHER_DEPTH, _RELIABLE, _VOLATILE)
