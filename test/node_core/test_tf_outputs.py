"""tf_outputs: which trees the node publishes, with which prefixes, and the refusal; and the
pipeline's publications in both trees. No rclpy: the node's wiring is in test/ros/test_node.py,
two robots over DDS with real tf2 Buffers in test/launch/test_launch_global_tree.py.
"""

from __future__ import annotations

import numpy as np
import pytest
from test_pipeline import ARM_URDF, FOLLOWERS, T0, Rig, fixed_children

from joint_tf_publisher import Robot
from joint_tf_publisher.node_core.cdr import Publication
from joint_tf_publisher.node_core.parameter_changes import plan_change
from joint_tf_publisher.node_core.parameters import ParameterRejected, Settings
from joint_tf_publisher.node_core.pipeline import LoadedModel
from joint_tf_publisher.node_core.tf_outputs import NOT_REMAPPED, TfTopics

#: The node's own topics under Nav2's multi-robot launch (``/tf:=tf``,
#: ``/tf_static:=tf_static`` in namespace ``robot1``).
NAV2_REMAPPED = TfTopics("/robot1/tf", "/robot1/tf_static")


def settings(frame_prefix: str, global_frame_prefix: str) -> Settings:
    return Settings.from_values(
        {"frame_prefix": frame_prefix, "global_frame_prefix": global_frame_prefix}
    )


# -- the refusal ---------------------------------------------------------------------------------


@pytest.mark.parametrize("prefix", ["r/", "fleet/robot1/"])
def test_one_prefix_on_the_global_tree_s_own_topics_is_refused_naming_both(prefix: str) -> None:
    with pytest.raises(ParameterRejected) as refused:
        NOT_REMAPPED.check(settings(prefix, prefix))
    reason = str(refused.value)
    assert "equals frame_prefix" in reason
    assert "on /tf and /tf_static already" in reason
    assert "-r /tf:=tf -r /tf_static:=tf_static" in reason  # what to do instead


def test_only_the_topic_left_unremapped_is_named() -> None:
    half = TfTopics("/robot1/tf", "/tf_static")
    with pytest.raises(ParameterRejected, match=r"on /tf_static already"):
        half.check(settings("robot1/", "robot1/"))


@pytest.mark.parametrize(
    ("topics", "frame_prefix", "global_frame_prefix"),
    [
        (NAV2_REMAPPED, "", "robot1/"),  # Nav2: own tree unprefixed, global tree prefixed
        (NAV2_REMAPPED, "robot1/", "robot1/"),  # one prefix, two topics
        (NOT_REMAPPED, "", "robot1/"),  # one topic, two prefixes: two distinct trees
        (NOT_REMAPPED, "", ""),  # no global tree
        (NOT_REMAPPED, "robot1/", ""),
    ],
)
def test_settings_that_put_no_frame_twice_on_a_topic_are_accepted(
    topics: TfTopics, frame_prefix: str, global_frame_prefix: str
) -> None:
    topics.check(settings(frame_prefix, global_frame_prefix))


def test_a_runtime_change_is_planned_against_where_the_node_s_topics_go() -> None:
    """``ros2 param set`` of either prefix: refused where the node's topics are not
    remapped, accepted where they are (nothing is loaded either way)."""

    def no_load(*args: object, **kwargs: object) -> LoadedModel:
        raise AssertionError("no description is loaded for a prefix change")

    arm = LoadedModel(Robot.load(ARM_URDF), ARM_URDF.read_text())
    running = Settings(global_frame_prefix="robot1/")
    with pytest.raises(ParameterRejected, match="equals frame_prefix"):
        plan_change(running, arm, {"frame_prefix": "robot1/"}, no_load)
    with pytest.raises(ParameterRejected, match="equals frame_prefix"):
        plan_change(
            Settings(frame_prefix="a/"),
            arm,
            {"global_frame_prefix": "a/"},
            no_load,
            tf_topics=NOT_REMAPPED,
        )
    change = plan_change(
        running,
        arm,
        {"frame_prefix": "robot1/"},
        no_load,
        tf_topics=NAV2_REMAPPED,
    )
    assert (change.settings.frame_prefix, change.settings.global_frame_prefix) == (
        "robot1/",
        "robot1/",
    )


# -- both trees from one pipeline ------------------------------------------------------------------


def in_global_tree(publication: Publication | None) -> Publication:
    assert publication is not None
    global_publication = publication.in_global_tree()
    assert global_publication is not None
    return global_publication


def renamed(frames: tuple[tuple[str, str], ...], old: str, new: str) -> tuple[tuple[str, str], ...]:
    return tuple((new + p.removeprefix(old), new + c.removeprefix(old)) for p, c in frames)


def test_a_joint_state_goes_to_both_trees_with_their_prefixes() -> None:
    rig = Rig(global_frame_prefix="robot1/")
    own = rig.send(["joint_6", "finger_joint"], [0.1, 0.2])
    assert own is not None
    global_ = in_global_tree(own)
    assert own.layout.frames[0] == ("link_5", "link_6")  # frame_prefix "" keeps its frames
    assert global_.layout.frames == renamed(own.layout.frames, "", "robot1/")
    assert {child for _, child in global_.layout.frames} >= {"robot1/" + f for f in FOLLOWERS}
    assert global_.stamp_ns == own.stamp_ns == T0
    np.testing.assert_array_equal(global_.poses, own.poses)


def test_the_static_set_and_default_positions_go_to_both_trees() -> None:
    rig = Rig(frame_prefix="own/", global_frame_prefix="fleet/robot1/", exclude_joints=("joint_7",))
    statics = rig.pipeline.static_publication(T0)
    assert statics is not None
    global_statics = in_global_tree(statics)
    assert {child for _, child in global_statics.layout.frames} == {
        "fleet/robot1/" + child for child in fixed_children(rig.robot)
    }
    assert global_statics.layout.frames == renamed(statics.layout.frames, "own/", "fleet/robot1/")
    np.testing.assert_array_equal(global_statics.poses, statics.poses)
    defaults = rig.pipeline.default_positions()
    assert defaults is not None
    global_defaults = in_global_tree(defaults)
    assert global_defaults.layout.frames == renamed(defaults.layout.frames, "own/", "fleet/robot1/")
    assert ("fleet/robot1/link_6", "fleet/robot1/link_7") not in global_defaults.layout.frames
    np.testing.assert_array_equal(global_defaults.poses, defaults.poses)


def test_without_a_global_prefix_there_is_no_global_tree() -> None:
    rig = Rig(frame_prefix="r1/")
    publication = rig.send(["joint_6"], [0.1])
    statics = rig.pipeline.static_publication(T0)
    assert publication is not None and statics is not None
    assert publication.in_global_tree() is None
    assert statics.in_global_tree() is None


def test_setting_changing_and_clearing_the_global_prefix_at_runtime() -> None:
    rig = Rig()
    on = rig.pipeline.configure(Settings(global_frame_prefix="robot1/"))
    assert on.switch_global_tree and on.republish_statics
    assert (
        in_global_tree(rig.pipeline.static_publication(T0))
        .layout.frames[0][0]
        .startswith("robot1/")
    )
    renamed_prefix = rig.pipeline.configure(Settings(global_frame_prefix="robot2/"))
    assert renamed_prefix.republish_statics and not renamed_prefix.switch_global_tree
    global_ = in_global_tree(rig.send(["joint_6"], [0.1]))
    assert global_.layout.frames == (("robot2/link_5", "robot2/link_6"),)
    off = rig.pipeline.configure(Settings())
    assert off.switch_global_tree and off.republish_statics
    statics = rig.pipeline.static_publication(T0)
    assert statics is not None and statics.in_global_tree() is None
    untouched = rig.pipeline.configure(Settings(publish_frequency=30.0))
    assert not untouched.switch_global_tree and not untouched.republish_statics
