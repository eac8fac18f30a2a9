"""The QoS a bag records, as rosbags' ``Qos``: ``/tf`` and ``/tf_static`` written as the node
publishes them, and whether ``ros2 bag play`` offers a recorded topic latched.

The numbers are ``node_core/qos.py``'s (the node's own ``ros/qos.py`` makes rclpy's profiles
of the same), so ``ros2 bag play`` offers ``/tf_static`` reliable and transient local: a
late subscriber gets the statics, as from the node. Imports ``node_core.qos``; rosbags when
a profile is made.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING

from ...node_core import qos
from ...node_core.qos import Durability, Reliability, TopicQos

if TYPE_CHECKING:
    from rosbags.interfaces import Qos


def profile(topic_qos: TopicQos) -> Qos:
    """rosbags' ``Qos`` of ``topic_qos``: keep last its depth, its reliability and
    durability; the rest (deadline, lifespan, liveliness) at the defaults."""
    from rosbags.interfaces import (
        Qos,
        QosDurability,
        QosHistory,
        QosLiveliness,
        QosReliability,
        QosTime,
    )

    zero = QosTime(0, 0)
    reliability = {
        Reliability.RELIABLE: QosReliability.RELIABLE,
        Reliability.BEST_EFFORT: QosReliability.BEST_EFFORT,
    }[topic_qos.reliability]
    durability = {
        Durability.VOLATILE: QosDurability.VOLATILE,
        Durability.TRANSIENT_LOCAL: QosDurability.TRANSIENT_LOCAL,
    }[topic_qos.durability]
    return Qos(
        QosHistory.KEEP_LAST,
        topic_qos.depth,
        reliability,
        durability,
        zero,
        zero,
        QosLiveliness.AUTOMATIC,
        zero,
        False,
    )


def tf_qos() -> Qos:
    """``/tf`` as the node publishes it (``qos.TF``: keep last 100, reliable, volatile)."""
    return profile(qos.TF)


def tf_static_qos() -> Qos:
    """``/tf_static`` (and ``robot_description``) as the node publishes it (``qos.TF_STATIC``:
    keep last 1, reliable, transient local)."""
    return profile(qos.TF_STATIC)


def is_latched(profiles: Sequence[Qos]) -> bool:
    """Whether ``ros2 bag play`` offers a topic recorded with ``profiles`` transient local:
    every profile recorded is (none recorded: it plays volatile)."""
    from rosbags.interfaces import QosDurability

    return bool(profiles) and all(p.durability is QosDurability.TRANSIENT_LOCAL for p in profiles)
