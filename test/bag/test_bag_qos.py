"""The bag commands' QoS (``cli/bag/qos.py``) and the node's (``ros/qos.py``) are one fact,
``node_core/qos.py``'s: every topic's QoS there, made into rosbags' ``Qos``, is rclpy's profile
of it field by field (deadline, lifespan and liveliness lease unspecified: rclpy's default);
the profiles written for ``/tf`` and ``/tf_static`` are the node's; a topic plays latched only
where every recorded profile is transient local."""

from __future__ import annotations

import pytest

pytest.importorskip("rosbags", reason="bag repair needs rosbags (requirements/dev.txt)")

from rclpy.qos import HistoryPolicy  # noqa: E402
from rosbags.interfaces import QosHistory, QosLiveliness  # noqa: E402

from joint_tf_publisher.cli.bag import qos as bag_qos  # noqa: E402
from joint_tf_publisher.node_core import qos  # noqa: E402
from joint_tf_publisher.node_core.qos import TopicQos  # noqa: E402
from joint_tf_publisher.ros import qos as ros_qos  # noqa: E402

#: Every topic's QoS ``node_core/qos.py`` names.
TOPIC_QOS = sorted(name for name, value in vars(qos).items() if isinstance(value, TopicQos))


def test_every_topic_qos_is_seen_and_both_policies_of_each_kind_occur() -> None:
    found = [getattr(qos, name) for name in TOPIC_QOS]
    assert {"TF", "TF_STATIC", "JOINT_STATES", "LATCHED"} <= set(TOPIC_QOS)
    assert {q.reliability for q in found} == set(qos.Reliability)
    assert {q.durability for q in found} == set(qos.Durability)


@pytest.mark.parametrize("name", TOPIC_QOS)
def test_a_topics_qos_is_the_same_in_rosbags_and_rclpy(name: str) -> None:
    topic_qos = getattr(qos, name)
    written, live = bag_qos.profile(topic_qos), ros_qos.profile(topic_qos)
    assert written.history is QosHistory.KEEP_LAST and live.history == HistoryPolicy.KEEP_LAST
    assert written.depth == live.depth == topic_qos.depth
    assert written.reliability.name == live.reliability.name == topic_qos.reliability.name
    assert written.durability.name == live.durability.name == topic_qos.durability.name
    assert written.liveliness is QosLiveliness.AUTOMATIC
    assert written.avoid_ros_namespace_conventions is False  # false, as rosbag2 writes
    for duration in ("deadline", "lifespan", "liveliness_lease_duration"):  # 0: unspecified
        time = getattr(written, duration)
        assert time.sec * 10**9 + time.nsec == getattr(live, duration).nanoseconds == 0


def test_the_profiles_written_for_tf_and_tf_static_are_the_nodes() -> None:
    assert bag_qos.tf_qos() == bag_qos.profile(qos.TF)
    assert bag_qos.tf_static_qos() == bag_qos.profile(qos.TF_STATIC)
    assert ros_qos.tf_qos() == ros_qos.profile(qos.TF)
    assert ros_qos.tf_static_qos() == ros_qos.profile(qos.TF_STATIC)
    assert (qos.TF.depth, qos.TF_STATIC.depth) == (100, 1)


def test_a_topic_plays_latched_when_every_recorded_profile_is_transient_local() -> None:
    latched, volatile = bag_qos.tf_static_qos(), bag_qos.tf_qos()
    assert bag_qos.is_latched([latched]) and bag_qos.is_latched([latched, latched])
    assert not bag_qos.is_latched([latched, volatile])
    assert not bag_qos.is_latched([])
