"""``bag.topics``: a recorded robot's topics resolved in its node's namespace, as rcl resolves
them, its tf in the namespace only where the recording has it there (Nav2's layout)."""

from __future__ import annotations

import pytest

from joint_tf_publisher.cli.bag.topics import robot_topics


def test_the_root_namespace_is_the_nodes_own_names() -> None:
    for root in ("", "/"):
        topics = robot_topics(root, {"/robot1/tf"})
        assert (topics.joint_states, topics.robot_description, topics.tf, topics.tf_static) == (
            "/joint_states",
            "/robot_description",
            "/tf",
            "/tf_static",
        )
        assert topics.resolved("arm_states") == "/arm_states"


def test_relative_names_go_under_the_namespace_and_tf_where_recorded() -> None:
    topics = robot_topics("site/robot1/", {"/tf", "/joint_states"})
    assert topics.namespace == "/site/robot1"
    assert topics.joint_states == "/site/robot1/joint_states"
    assert topics.multi_dof_joint_states == "/site/robot1/multi_dof_joint_states"
    assert topics.robot_description == "/site/robot1/robot_description"
    assert (topics.tf, topics.tf_static) == ("/tf", "/tf_static")  # tf2's absolute names
    assert topics.resolved("arm_states") == "/site/robot1/arm_states"
    assert topics.resolved("/arm_states") == "/arm_states"
    nav2 = robot_topics("/site/robot1", {"/tf", "/site/robot1/tf_static"})
    assert (nav2.tf, nav2.tf_static) == ("/site/robot1/tf", "/site/robot1/tf_static")


@pytest.mark.parametrize("namespace", ["1robot", "robot-1", "a//b", "robot 1"])
def test_a_namespace_that_is_not_one_is_refused(namespace: str) -> None:
    with pytest.raises(ValueError, match="is no namespace"):
        robot_topics(namespace)
