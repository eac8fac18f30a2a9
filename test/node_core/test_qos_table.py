"""node_core/qos.py, the one place of the QoS numbers: docs/node.md's topic table says of each
topic the QoS the module gives it (rclpy's and rosbags' profiles made from it are compared in
test/bag/test_bag_qos.py)."""

from __future__ import annotations

import re

import pytest
from repo_paths import REPO_ROOT

from joint_tf_publisher.node_core import qos
from joint_tf_publisher.node_core.qos import Durability, Reliability, TopicQos

#: How node.md's topic table words each policy.
WORDS = {
    Reliability.RELIABLE: "reliable",
    Reliability.BEST_EFFORT: "best effort",
    Durability.VOLATILE: "volatile",
    Durability.TRANSIENT_LOCAL: "transient local",
}

#: A row of node.md's topic table (its topic cell starting so, its direction cell containing
#: the second text) and the QoS the module gives that topic.
ROWS = [
    ("`joint_states`", "subscribed", qos.JOINT_STATES),
    ("`robot_description`", "subscribed", qos.LATCHED),
    ("`robot_description`", "published", qos.LATCHED),
    ("`/tf`", "published", qos.TF),
    ("`/tf_static`", "published", qos.TF_STATIC),
    ("`/tf_static`", "subscribed", qos.TF_LISTENER_STATIC),
    ("`remote/tf`", "published", qos.REMOTE_TF),
    ("`remote/tf_static`", "published", qos.TF_STATIC),
    ("`loop_joint_states`", "published", qos.JOINT_STATES_PUBLISHER),
    ("`/diagnostics`", "published", qos.DIAGNOSTICS),
]


def table_rows() -> list[list[str]]:
    """The cells of node.md's topic table (rows of five cells whose third says the
    direction)."""
    rows = []
    for line in (REPO_ROOT / "docs" / "node.md").read_text().splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 5 and re.search(r"published|subscribed", cells[2]):
            rows.append(cells)
    return rows


def words(topic_qos: TopicQos) -> str:
    """The QoS as node.md's table says it."""
    reliability, durability = WORDS[topic_qos.reliability], WORDS[topic_qos.durability]
    return f"{reliability}, keep last {topic_qos.depth}, {durability}"


@pytest.mark.parametrize(("topic", "direction", "topic_qos"), ROWS)
def test_node_md_says_each_topics_qos_as_the_module_gives_it(
    topic: str, direction: str, topic_qos: TopicQos
) -> None:
    (row,) = [
        cells
        for cells in table_rows()
        if cells[0].split(" ")[0] == topic and cells[2].startswith(direction)
    ]
    assert row[3].startswith(words(topic_qos)), row
