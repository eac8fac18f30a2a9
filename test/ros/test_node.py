"""The node in process, over real rclpy and DDS: declarations, statics, QoS.

The node runs inside the test process (its own rclpy context, from conftest's ``ros``
fixture). The console script over DDS is in test_node_e2e.py; the policy (rate limiting,
clamping, reports) in test_pipeline.py; the spin loops in test_runtime.py.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from rcl_interfaces.msg import ParameterType  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.node_core.parameters import (  # noqa: E402
    PARAMETERS,
    SETTING_FIELDS,
    ZEROS_DESCRIPTION,
    takes_any_empty_array,
)
from joint_tf_publisher.node_core.qos import JOINT_STATES_DEPTH  # noqa: E402
from joint_tf_publisher.ros.node import JointTfPublisher  # noqa: E402
from joint_tf_publisher.ros.parameter_declarations import StartupError  # noqa: E402
from joint_tf_publisher.ros.qos import tf_static_qos  # noqa: E402
from joint_tf_publisher.ros.tf_publishers import layout_matches_rmw  # noqa: E402

pytestmark = pytest.mark.ros

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
TWO_LINKS = (
    '<robot name="two"><link name="a"/><link name="b"/>'
    '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>'
)
ARM_STATICS = {"pedestal", "arm_base", "ee_link", "hand", "camera_link", "camera_optical_frame"}


def make_node(ros: Any, **overrides: Any) -> JointTfPublisher:
    parameters = [Parameter(name, value=value) for name, value in overrides.items()]
    node = JointTfPublisher(context=ros.context, parameter_overrides=parameters)
    ros.executor.add_node(node)
    ros._owned.append(node)
    return node


# -- start ----------------------------------------------------------------------------------------


def test_empty_description_is_a_startup_error(ros: Any) -> None:
    with pytest.raises(StartupError, match="parameter robot_description is empty"):
        make_node(ros)


def test_a_static_republish_period_under_a_tenth_of_a_second_is_a_startup_error(
    ros: Any,
) -> None:
    """A 1 ns period was a busy timer flooding /tf_static; 0.1 s is the smallest but 0."""
    with pytest.raises(StartupError, match=r"static_republish_period must be 0 \(off\) or >= 0.1"):
        make_node(ros, robot_description=TWO_LINKS, static_republish_period=1e-9)
    node = make_node(ros, robot_description=TWO_LINKS, static_republish_period=0.1)
    assert node.settings.static_republish_period == 0.1


def test_invalid_description_names_the_line(ros: Any) -> None:
    text = "<robot name='r'>\n<link name='a'/>\n<joint name='j' type='bogus'/>\n</robot>"
    with pytest.raises(StartupError, match=r"robot_description:3: .*'j'"):
        make_node(ros, robot_description=text)


# -- parameters: the table, declared ----------------------------------------------------------


def test_every_parameter_of_the_table_is_declared_with_its_descriptor_and_a_value(
    ros: Any,
) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    for spec in PARAMETERS:
        parameter = node.get_parameter(spec.name)
        expected = list(spec.default) if isinstance(spec.default, tuple) else spec.default
        if spec.name != "robot_description":
            assert parameter.value == expected, spec.name
        descriptor = node.describe_parameter(spec.name)
        assert descriptor.description == spec.description
        assert descriptor.read_only == spec.declared_read_only
        if spec.float_range is not None:
            (value_range,) = descriptor.floating_point_range
            assert (value_range.from_value, value_range.to_value) == spec.float_range
    # The empty list is a string array (rcl would type a bare [] as a byte array).
    assert node.get_parameter("exclude_joints").type_ == Parameter.Type.STRING_ARRAY
    assert node.get_parameter_types(["exclude_joints"]) == [ParameterType.PARAMETER_STRING_ARRAY]


def test_a_parameter_given_without_a_value_gets_its_default(ros: Any) -> None:
    """rcl reads ``exclude_joints: []`` in a parameters file (as ``ros2 param dump`` writes
    it) and ``-p frame_prefix:=`` as "not set": the node gives them their defaults."""
    parameters = [
        Parameter("robot_description", value=TWO_LINKS),
        Parameter("exclude_joints", Parameter.Type.NOT_SET),
        Parameter("frame_prefix", Parameter.Type.NOT_SET),
    ]
    node = JointTfPublisher(context=ros.context, parameter_overrides=parameters)
    ros._owned.append(node)
    assert node.get_parameter("exclude_joints").value == []
    assert node.get_parameter("frame_prefix").value == ""
    assert node.get_parameter("exclude_joints").type_ == Parameter.Type.STRING_ARRAY


def test_runtime_change_is_all_or_nothing(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    results = node.set_parameters_atomically(
        [Parameter("frame_prefix", value="x/"), Parameter("publish_frequency", value=0.0)]
    )
    assert not results.successful
    assert "publish_frequency" in results.reason  # rclpy's range: [0.001, 1000] Hz
    assert node.settings.frame_prefix == ""
    assert node.get_parameter("frame_prefix").value == ""
    accepted = node.set_parameters([Parameter("exclude_joints", value=["j", "k"])])
    assert accepted[0].successful
    assert node.settings.exclude_joints == ("j", "k")


def test_read_only_parameters_cannot_change(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    for name in ("description_from_topic", "use_robot_description_topic"):
        (result,) = node.set_parameters([Parameter(name, value=True)])
        assert not result.successful
    assert not node.settings.description_from_topic
    (result,) = node.set_parameters([Parameter("allowed_description_folders", value=["/"])])
    assert not result.successful
    assert result.reason.startswith("allowed_description_folders is read-only")
    assert node.get_parameter("allowed_description_folders").value == []
    (result,) = node.set_parameters([Parameter("publish_loop_joint_states", value=True)])
    assert not result.successful
    assert not node.settings.publish_loop_joint_states


def test_every_double_parameter_takes_a_whole_number_at_start_and_at_runtime(ros: Any) -> None:
    """ros2cli (``ros2 param set ... remote.rate 5``), ``-p publish_frequency:=50`` and launch
    send a whole number as an integer: rclpy refuses one for a double declared without
    dynamic typing before the node sees it. Every double parameter takes its documented
    maximum so, at start and at runtime, as the double it stands for."""
    doubles = {spec.name: spec for spec in PARAMETERS if spec.type_name == "double"}
    assert all(spec.float_range is not None for spec in doubles.values())
    maxima = {name: int(spec.float_range[1]) for name, spec in doubles.items() if spec.float_range}
    node = make_node(ros, robot_description=TWO_LINKS, **maxima)
    fields = {name: SETTING_FIELDS.get(name, name) for name in doubles}
    for name, maximum in maxima.items():
        value = getattr(node.settings, fields[name])
        assert value == maximum and isinstance(value, float), (name, value)
    again = make_node(ros, robot_description=TWO_LINKS)
    for name, maximum in maxima.items():
        (result,) = again.set_parameters([Parameter(name, value=maximum)])
        assert result.successful, (name, result.reason)
        value = getattr(again.settings, fields[name])
        assert value == maximum and isinstance(value, float), (name, value)


def test_ros2cli_s_empty_list_clears_every_settable_array_parameter(ros: Any) -> None:
    """``ros2 param set /node remote.frames "[]"`` sends an empty BOOL_ARRAY: every settable
    array parameter takes it (an empty array of any type clears it) and reads back empty;
    a non-empty array of another type is refused naming the parameter."""
    node = make_node(ros, robot_description=TWO_LINKS)
    settable = [spec for spec in PARAMETERS if takes_any_empty_array(spec)]
    assert {"remote.frames", "attachments.names", "source_time_offsets"} <= {
        spec.name for spec in settable
    }
    for spec in settable:
        (result,) = node.set_parameters([Parameter(spec.name, Parameter.Type.BOOL_ARRAY, [])])
        assert result.successful, (spec.name, result.reason)
        assert list(node.get_parameter(spec.name).value) == [], spec.name
        assert getattr(node.settings, SETTING_FIELDS.get(spec.name, spec.name)) == ()
        (result,) = node.set_parameters([Parameter(spec.name, Parameter.Type.BOOL_ARRAY, [True])])
        assert not result.successful and result.reason.startswith(spec.name), spec.name


def test_default_positions_go_out_at_publish_frequency_and_follow_its_changes(ros: Any) -> None:
    """node.md: ``publish_default_positions`` publishes at ``publish_frequency``; a change of
    either at runtime replaces the timer (the node's timers, as rclpy lists them)."""
    node = make_node(
        ros,
        robot_description=ARM_URDF.read_text(),
        publish_default_positions=True,
        publish_frequency=50,
    )
    periods = lambda: sorted(timer.timer_period_ns for timer in node.timers)  # noqa: E731
    base = [period for period in periods() if period != 20_000_000]
    assert sorted([*base, 20_000_000]) == periods()
    assert node.set_parameters([Parameter("publish_frequency", value=200.0)])[0].successful
    assert sorted([*base, 5_000_000]) == periods()
    (result,) = node.set_parameters([Parameter("publish_default_positions", value=False)])
    assert result.successful and periods() == base


# -- /tf_static: owned, replaced whole ------------------------------------------------------------


def late_static_set(ros: Any, topic: str = "/tf_static") -> set[str]:
    """Child frames of the latched messages on ``topic``, read by a new subscription."""
    received: list[Any] = []
    subscription = ros.node.create_subscription(TFMessage, topic, received.append, tf_static_qos())
    try:
        assert ros.spin_until(lambda: bool(received), timeout_s=10.0), f"no {topic}"
        ros.spin_for(0.2)  # a second writer's sample, if any, would arrive too
        return {t.child_frame_id for msg in received for t in msg.transforms}
    finally:
        ros.node.destroy_subscription(subscription)


def test_statics_are_replaced_whole_on_prefix_change_and_reload(ros: Any) -> None:
    node = make_node(ros, robot_description=ARM_URDF.read_text(), frame_prefix="a/")
    assert late_static_set(ros) == {"a/" + child for child in ARM_STATICS}
    assert node.set_parameters([Parameter("frame_prefix", value="b/")])[0].successful
    assert late_static_set(ros) == {"b/" + child for child in ARM_STATICS}
    result = node.set_parameters([Parameter("robot_description", value=TWO_LINKS)])[0]
    assert result.successful, result.reason
    assert late_static_set(ros) == {"b/b"}


def test_the_node_owns_its_tf_publishers_with_tf2_qos(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)

    def qos_of(topic: str) -> Any:
        mine = [
            info.qos_profile
            for info in ros.node.get_publishers_info_by_topic(topic)
            if info.node_name == node.get_name()
        ]
        return mine[0] if len(mine) == 1 else None

    assert ros.spin_until(lambda: qos_of("/tf") and qos_of("/tf_static"), timeout_s=10.0)
    tf, tf_static = qos_of("/tf"), qos_of("/tf_static")
    assert (tf.reliability, tf.durability) == (
        ReliabilityPolicy.RELIABLE,
        DurabilityPolicy.VOLATILE,
    )
    assert (tf_static.reliability, tf_static.durability) == (
        ReliabilityPolicy.RELIABLE,
        DurabilityPolicy.TRANSIENT_LOCAL,
    )
    assert layout_matches_rmw()  # so both publish pre-serialized bytes


# -- the global tree ---------------------------------------------------------------------------


def test_one_prefix_for_both_trees_on_one_topic_is_refused_at_start_and_at_runtime(
    ros: Any,
) -> None:
    same = r"global_frame_prefix 'r/' equals frame_prefix .* on /tf and /tf_static already"
    with pytest.raises(StartupError, match=same):
        make_node(ros, robot_description=TWO_LINKS, frame_prefix="r/", global_frame_prefix="r/")
    node = make_node(ros, robot_description=TWO_LINKS, frame_prefix="r/")
    (refused,) = node.set_parameters([Parameter("global_frame_prefix", value="r/")])
    assert not refused.successful
    assert "equals frame_prefix" in refused.reason
    assert node.get_parameter("global_frame_prefix").value == ""
    assert node.set_parameters([Parameter("global_frame_prefix", value="g/")])[0].successful
    (refused,) = node.set_parameters([Parameter("frame_prefix", value="g/")])
    assert not refused.successful
    assert "equals frame_prefix" in refused.reason
    assert node.settings.frame_prefix == "r/"


def test_the_global_tree_reaches_the_absolute_topics_despite_nav2_s_remapping(ros: Any) -> None:
    """The node started as Nav2's multi-robot launch starts it: namespace and remappings as
    command-line arguments of its process (rcl's global arguments)."""
    import rclpy

    remaps = ["-r", "__ns:=/r7", "-r", "/tf:=tf", "-r", "/tf_static:=tf_static"]
    context = rclpy.Context()
    rclpy.init(context=context, args=["joint_tf_publisher", "--ros-args", *remaps])
    parameters = [
        Parameter("robot_description", value=ARM_URDF.read_text()),
        Parameter("global_frame_prefix", value="r7/"),
    ]
    node = JointTfPublisher(context=context, parameter_overrides=parameters)
    try:
        assert late_static_set(ros, "/r7/tf_static") == ARM_STATICS
        assert late_static_set(ros) == {"r7/" + child for child in ARM_STATICS}
        publishers = ros.node.get_publishers_info_by_topic("/tf_static")
        assert [(p.node_namespace, p.node_name) for p in publishers] == [
            ("/r7", "joint_tf_publisher_global_tf")
        ]
        assert node.set_parameters([Parameter("global_frame_prefix", value="q7/")])[0].successful
        assert late_static_set(ros) == {"q7/" + child for child in ARM_STATICS}
        assert node.set_parameters([Parameter("global_frame_prefix", value="")])[0].successful
        assert ros.spin_until(lambda: ros.node.count_publishers("/tf_static") == 0)
        assert ros.node.count_publishers("/tf") == 0
        assert late_static_set(ros, "/r7/tf_static") == ARM_STATICS
    finally:
        node.destroy_node()
        context.try_shutdown()


def test_the_global_tree_s_statics_are_republished_with_the_node_s_own(ros: Any) -> None:
    """``static_republish_period``: a volatile subscriber that joins late gets both trees'
    complete static sets (each in one message) within a period or two."""
    make_node(
        ros,
        robot_description=ARM_URDF.read_text(),
        global_frame_prefix="g/",
        static_republish_period=0.3,
    )
    received: list[Any] = []
    volatile = QoSProfile(
        depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
    )
    subscription = ros.node.create_subscription(TFMessage, "/tf_static", received.append, volatile)
    try:

        def sets() -> list[set[str]]:
            return [{t.child_frame_id for t in msg.transforms} for msg in received]

        both = [ARM_STATICS, {"g/" + child for child in ARM_STATICS}]
        assert ros.spin_until(lambda: all(s in sets() for s in both), timeout_s=10.0), sets()
    finally:
        ros.node.destroy_subscription(subscription)


class StartRecordingNode(JointTfPublisher):
    """The node, with what it does at start recorded in ``events`` in order: each publisher
    and subscription it makes (rclpy's create_publisher and create_subscription) and each
    publication on its latched topics (the real publisher's publish, called through)."""

    LATCHED = ("/tf_static", "robot_description")

    def __init__(self, events: list[str], **kwargs: Any) -> None:
        self.events = events
        super().__init__(**kwargs)

    def create_publisher(self, *args: Any, **kwargs: Any) -> Any:
        publisher = super().create_publisher(*args, **kwargs)
        topic = args[1] if len(args) > 1 else kwargs["topic"]
        self.events.append(f"publisher {topic}")
        if topic in self.LATCHED:
            send = publisher.publish

            def publish(message: Any) -> None:
                self.events.append(f"published {topic}")
                send(message)

            publisher.publish = publish
        return publisher

    def create_subscription(self, *args: Any, **kwargs: Any) -> Any:
        subscription = super().create_subscription(*args, **kwargs)
        self.events.append(f"subscription {args[1] if len(args) > 1 else kwargs['topic']}")
        return subscription


def start_recording(ros: Any, events: list[str], **overrides: Any) -> StartRecordingNode:
    parameters = [Parameter(name, value=value) for name, value in overrides.items()]
    node = StartRecordingNode(events, context=ros.context, parameter_overrides=parameters)
    ros._owned.append(node)
    return node


def test_description_and_statics_go_out_before_the_node_makes_its_other_entities(
    ros: Any,
) -> None:
    """As in robot_state_publisher's constructor: the latched samples are published once the
    model is built, before the /tf and /diagnostics publishers and every subscription."""
    events: list[str] = []
    start_recording(
        ros, events, robot_description=ARM_URDF.read_text(), source_list=["arm/joint_states"]
    )
    published = events.index("published /tf_static")
    assert events.index("published robot_description") < published
    assert not [event for event in events[:published] if event.startswith("subscription")]
    assert {
        "publisher /tf",
        "publisher /diagnostics",
        "subscription joint_states",
        "subscription arm/joint_states",
        "subscription multi_dof_joint_states",
    } <= set(events[published + 1 :])


def test_a_node_refused_at_start_publishes_nothing(ros: Any) -> None:
    """Every startup check (here the source_list) comes before the /tf_static publisher is
    made and anything is published: a refused node leaves no latched sample behind."""
    events: list[str] = []
    with pytest.raises(StartupError, match="source_list: invalid topic name"):
        start_recording(ros, events, robot_description=TWO_LINKS, source_list=["two words"])
    assert "publisher /tf_static" not in events
    assert not [event for event in events if event.startswith("published")]


TWO_MODELS = """<?xml version="1.0"?>
<sdf version="1.9">
  <world name="w">
    <model name="first">
      <link name="base_a"/>
      <link name="tip_a"><pose>0 0 1 0 0 0</pose></link>
      <joint name="fix_a" type="fixed"><parent>base_a</parent><child>tip_a</child></joint>
    </model>
    <model name="second">
      <link name="base_b"/>
      <link name="tip_b"><pose>0 0 2 0 0 0</pose></link>
      <joint name="fix_b" type="fixed"><parent>base_b</parent><child>tip_b</child></joint>
    </model>
  </world>
</sdf>
"""


def test_model_name_picks_the_sdf_model_and_can_change_at_runtime(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_MODELS, model_name="second")
    statics = node.pipeline.static_publication(0)
    assert statics is not None and statics.layout.frames == (("base_b", "tip_b"),)
    result = node.set_parameters([Parameter("model_name", value="nothere")])[0]
    assert not result.successful
    assert "no <model> named 'nothere'" in result.reason
    result = node.set_parameters([Parameter("model_name", value="first")])[0]
    assert result.successful, result.reason
    statics = node.pipeline.static_publication(0)
    assert statics is not None and statics.layout.frames == (("base_a", "tip_a"),)
    np.testing.assert_allclose(statics.translations, [[0.0, 0.0, 1.0]])


# -- QoS ----------------------------------------------------------------------------------------


def joint_state_subscriptions(node: JointTfPublisher) -> tuple[Any, Any]:
    """The node's subscriptions to joint_states and multi_dof_joint_states."""
    by_topic = {subscription.topic_name: subscription for subscription in node.subscriptions}
    return by_topic["/joint_states"], by_topic["/multi_dof_joint_states"]


def test_joint_states_use_sensor_data_qos_deeper_with_overrides(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    subscriptions = joint_state_subscriptions(node)
    assert subscriptions[0].raw  # JointState is read from its bytes
    for subscription in subscriptions:
        assert subscription.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
        assert subscription.qos_profile.durability == DurabilityPolicy.VOLATILE
        assert subscription.qos_profile.depth == JOINT_STATES_DEPTH == 100
    joint_states, multi_dof = joint_state_subscriptions(
        make_node(
            ros,
            robot_description=TWO_LINKS,
            **{
                "qos_overrides./joint_states.subscription.reliability": "reliable",
                "qos_overrides./joint_states.subscription.depth": 7,
            },
        )
    )
    assert joint_states.qos_profile.reliability == ReliabilityPolicy.RELIABLE
    assert joint_states.qos_profile.depth == 7
    assert multi_dof.qos_profile.depth == JOINT_STATES_DEPTH


# -- source_list: further joint-state topics --------------------------------------------------


def subscribed_topics(node: JointTfPublisher) -> set[str]:
    return {subscription.topic_name for subscription in node.subscriptions}


def test_source_list_topics_are_subscribed_with_qos_overrides_and_resubscribed_on_change(
    ros: Any,
) -> None:
    node = make_node(
        ros,
        robot_description=TWO_LINKS,
        source_list=["arm/joint_states", "gripper_states"],
        **{"qos_overrides./gripper_states.subscription.reliability": "reliable"},
    )
    joint_state_topics = {"/joint_states", "/arm/joint_states", "/gripper_states"}
    assert joint_state_topics <= subscribed_topics(node)
    by_topic = {subscription.topic_name: subscription for subscription in node.subscriptions}
    assert by_topic["/gripper_states"].qos_profile.reliability == ReliabilityPolicy.RELIABLE
    assert by_topic["/arm/joint_states"].qos_profile.depth == JOINT_STATES_DEPTH
    assert all(by_topic[topic].raw for topic in joint_state_topics)
    (result,) = node.set_parameters([Parameter("source_list", value=["base/joint_states"])])
    assert result.successful, result.reason
    topics = subscribed_topics(node)
    assert "/base/joint_states" in topics
    assert not {"/arm/joint_states", "/gripper_states"} & topics


@pytest.mark.parametrize(
    ("topics", "reason"),
    [
        (["two words"], "source_list: invalid topic name 'two words'"),
        (["joint_states"], "source_list: 'joint_states' is /joint_states, which the node reads"),
    ],
)
def test_a_source_list_the_node_cannot_read_is_rejected(
    ros: Any, topics: list[str], reason: str
) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    (result,) = node.set_parameters([Parameter("source_list", value=topics)])
    assert not result.successful
    assert reason in result.reason
    assert node.settings.source_list == ()
    with pytest.raises(StartupError, match=reason):
        make_node(ros, robot_description=TWO_LINKS, source_list=topics)


# -- zeros.<joint>: per-joint start values ------------------------------------------------------


def test_zeros_are_declared_per_joint_given_at_start_and_checked_at_runtime(ros: Any) -> None:
    node = make_node(
        ros,
        robot_description=ARM_URDF.read_text(),
        publish_default_positions=True,
        **{"zeros.joint_2": 0.5},
    )
    assert node.get_parameter("zeros.joint_2").value == 0.5
    assert node.get_parameter("zeros.joint_1").value == 0.0
    assert node.get_parameter("zeros.finger_joint").value == 0.0
    assert not node.has_parameter("zeros.right_knuckle_joint")  # a mimic follower
    assert not node.has_parameter("zeros.end_effector")  # fixed
    descriptor = node.describe_parameter("zeros.joint_2")
    assert descriptor.description == ZEROS_DESCRIPTION and descriptor.dynamic_typing
    assert dict(node.settings.zeros)["joint_2"] == (0.5,)
    (result,) = node.set_parameters([Parameter("zeros.finger_joint", value=2.0)])
    assert not result.successful
    assert "zeros.finger_joint = [2.0] is outside the joint's limits" in result.reason
    (result,) = node.set_parameters([Parameter("zeros.finger_joint", value=0.4)])
    assert result.successful, result.reason
    publication = node.pipeline.default_positions()
    assert publication is not None
    children = dict(
        zip([child for _, child in publication.layout.frames], publication.poses, strict=True)
    )
    robot = Robot.load(ARM_URDF)
    for joint, value in (("joint_2", 0.5), ("finger_joint", 0.4), ("right_knuckle_joint", -0.4)):
        pose = robot.joints[joint].child_pose(value)
        np.testing.assert_allclose(children[robot.joints[joint].child][:3], pose[:3, 3], atol=1e-9)
    # A new description: the parameters of joints it lacks go, its own come at their zero.
    result = node.set_parameters([Parameter("robot_description", value=TWO_LINKS)])[0]
    assert result.successful, result.reason
    assert not node.has_parameter("zeros.joint_2")
    assert node.settings.zeros == ()


def test_a_zero_given_at_start_outside_the_limits_is_a_startup_error(ros: Any) -> None:
    """A zero is checked as it is declared, after the first /tf_static went out: the refused
    node is destroyed, so no latched set of it stays for later subscribers in this process."""
    with pytest.raises(StartupError, match=r"zeros.finger_joint = \[-1.0\] is outside"):
        make_node(ros, robot_description=ARM_URDF.read_text(), **{"zeros.finger_joint": -1.0})
    publishers = ros.node.get_publishers_info_by_topic("/tf_static")
    assert [info.node_name for info in publishers] == []


def test_a_new_description_keeps_the_zeros_of_joints_it_still_has(ros: Any) -> None:
    """joint_2 keeps its zero; finger_joint, now a mimic follower, loses its parameter."""
    node = make_node(
        ros,
        robot_description=ARM_URDF.read_text(),
        **{"zeros.joint_2": 0.5, "zeros.finger_joint": 0.3},
    )
    text = ARM_URDF.read_text().replace(
        '<limit lower="0" upper="0.8" effort="1000" velocity="2.0"/>',
        '<limit lower="0" upper="0.8" effort="1000" velocity="2.0"/>'
        '<mimic joint="joint_7" multiplier="0.1"/>',
        1,
    )
    assert text != ARM_URDF.read_text()
    (result,) = node.set_parameters([Parameter("robot_description", value=text)])
    assert result.successful, result.reason
    assert not node.has_parameter("zeros.finger_joint")
    assert node.get_parameter("zeros.joint_2").value == 0.5
    assert dict(node.settings.zeros)["joint_2"] == (0.5,)
    assert "finger_joint" not in dict(node.settings.zeros)
