"""In-process tests of the node module: parameters, their documentation, the tf2_ros path.

The behaviour over DDS with the real console script is in test_node_e2e.py; here the node
runs inside the test process (its own rclpy context, from conftest's ``ros`` fixture), which
lets a fake ``tf2_ros`` stand in for the real one that is not installable without ROS.
"""

from __future__ import annotations

import re
import sys
import types
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")
yaml = pytest.importorskip("yaml")

from rclpy.exceptions import ParameterUninitializedException  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import REPO_ROOT  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.ros import node as node_module  # noqa: E402
from joint_tf_publisher.ros.node import (  # noqa: E402
    JointTfPublisher,
    StartupError,
    parse_clamp,
    parse_frequency,
    parse_joint_names,
)

pytestmark = pytest.mark.ros

ARM_URDF = REPO_ROOT / "test" / "urdf" / "arm_mimic_gripper.urdf"
CONFIG = REPO_ROOT / "config" / "joint_tf_publisher.yaml"
TWO_LINKS = (
    '<robot name="two"><link name="a"/><link name="b"/>'
    '<joint name="j" type="fixed"><parent link="a"/><child link="b"/></joint></robot>'
)


def make_node(ros: Any, **overrides: Any) -> JointTfPublisher:
    parameters = [Parameter(name, value=value) for name, value in overrides.items()]
    node = JointTfPublisher(context=ros.context, parameter_overrides=parameters)
    ros.executor.add_node(node)
    ros._owned.append(node)
    return node


def declared_defaults(node: JointTfPublisher) -> dict[str, Any]:
    """The node's own parameters (not rclpy's standard ones) and their values."""
    names = set(node._parameters) - {"use_sim_time", "start_type_description_service"}
    values = {}
    for name in names:
        if "qos_overrides" in name:
            continue
        try:
            values[name] = node.get_parameter(name).value
        except ParameterUninitializedException:  # typed, without a default
            values[name] = None
    return values


# -- values --------------------------------------------------------------------------------


@pytest.mark.parametrize("value", [0.0, -1.0, 1000.5, "fast", True])
def test_publish_frequency_out_of_range_is_rejected(value: Any) -> None:
    with pytest.raises(node_module._Rejected, match="publish_frequency must be"):
        parse_frequency(value)


def test_publish_frequency_accepts_integers_and_the_bounds() -> None:
    assert parse_frequency(50) == 50.0
    assert parse_frequency(1000.0) == 1000.0


def test_clamp_modes() -> None:
    assert [parse_clamp(mode) for mode in ("hard", "soft", "none")] == ["hard", "soft", "none"]
    with pytest.raises(node_module._Rejected, match="clamp must be one of hard, soft, none"):
        parse_clamp("tight")


def test_exclude_joints_from_array_or_comma_separated_text() -> None:
    assert parse_joint_names(["a", " b ", ""]) == ("a", "b")
    assert parse_joint_names("a, b") == ("a", "b")
    assert parse_joint_names(None) == ()


# -- the node in process -------------------------------------------------------------------


def test_empty_description_is_a_startup_error(ros: Any) -> None:
    with pytest.raises(StartupError, match="parameter robot_description is empty"):
        make_node(ros)


def test_invalid_description_names_the_line(ros: Any) -> None:
    text = "<robot name='r'>\n<link name='a'/>\n<joint name='j' type='bogus'/>\n</robot>"
    with pytest.raises(StartupError, match=r"robot_description:3: .*'j'"):
        make_node(ros, robot_description=text)


def test_config_file_lists_every_parameter_with_its_default(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    config = yaml.safe_load(CONFIG.read_text())["/**"]["ros__parameters"]
    defaults = declared_defaults(node)
    defaults["robot_description"] = ""  # overridden above to start the node
    defaults["exclude_joints"] = [""]  # declared without a value; "" names are ignored
    assert config == defaults
    assert parse_joint_names(config["exclude_joints"]) == ()


def test_readme_documents_every_parameter(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    readme = (REPO_ROOT / "README.md").read_text()
    section = readme.split("## Parameters", 1)[1].split("\n## ", 1)[0]
    rows = set(re.findall(r"^\| `([a-z_]+)` \|", section, flags=re.MULTILINE))
    documented = rows | set(re.findall(r"`(description_from_topic)` is an alias", section))
    assert set(declared_defaults(node)) <= documented


def test_runtime_change_is_all_or_nothing(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    results = node.set_parameters_atomically(
        [Parameter("frame_prefix", value="x/"), Parameter("publish_frequency", value=0.0)]
    )
    assert not results.successful
    assert "publish_frequency must be" in results.reason
    assert node._settings.frame_prefix == ""
    assert node.get_parameter("frame_prefix").value == ""


# -- tf2_ros path: a fake with the accumulating static broadcaster of newer distros ----------------


class _FakeStaticTransformBroadcaster:
    """Like rclpy tf2_ros's: accumulates what was sent, keeping the first per child frame."""

    def __init__(self, node: Any) -> None:
        qos = QoSProfile(
            depth=1,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        self.pub_tf = node.create_publisher(TFMessage, "/tf_static", qos)
        self.net_message = TFMessage()

    def sendTransform(self, transforms: list[Any]) -> None:  # noqa: N802 (tf2_ros's name)
        known = {t.child_frame_id for t in self.net_message.transforms}
        self.net_message.transforms.extend(t for t in transforms if t.child_frame_id not in known)
        self.pub_tf.publish(self.net_message)


class _FakeTransformBroadcaster:
    def __init__(self, node: Any) -> None:
        self.pub_tf = node.create_publisher(TFMessage, "/tf", 100)

    def sendTransform(self, transforms: list[Any]) -> None:  # noqa: N802 (tf2_ros's name)
        self.pub_tf.publish(TFMessage(transforms=transforms))


@pytest.fixture
def fake_tf2_ros(monkeypatch: pytest.MonkeyPatch) -> Iterator[types.ModuleType]:
    module = types.ModuleType("tf2_ros")
    module.StaticTransformBroadcaster = _FakeStaticTransformBroadcaster  # type: ignore[attr-defined]
    module.TransformBroadcaster = _FakeTransformBroadcaster  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, "tf2_ros", module)
    yield module


def late_static_set(ros: Any) -> set[str]:
    """Child frames of the latched /tf_static message, read by a new subscription."""
    received: list[Any] = []
    qos = QoSProfile(
        depth=1,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    subscription = ros.node.create_subscription(TFMessage, "/tf_static", received.append, qos)
    try:
        assert ros.spin_until(lambda: bool(received), timeout_s=10.0), "no /tf_static"
        ros.spin_for(0.2)  # a second writer's sample, if any, would arrive too
        return {t.child_frame_id for msg in received for t in msg.transforms}
    finally:
        ros.node.destroy_subscription(subscription)


def test_tf2_ros_statics_are_replaced_whole_on_prefix_change(
    ros: Any, fake_tf2_ros: types.ModuleType
) -> None:
    node = make_node(ros, robot_description=ARM_URDF.read_text(), frame_prefix="a/")
    assert node._tf_static.uses_tf2_ros and node._tf.uses_tf2_ros
    assert late_static_set(ros) == {
        "a/pedestal",
        "a/arm_base",
        "a/ee_link",
        "a/hand",
        "a/camera_link",
        "a/camera_optical_frame",
    }
    result = node.set_parameters([Parameter("frame_prefix", value="b/")])[0]
    assert result.successful
    # The fake keeps "a/..." forever in its own message; a fresh broadcaster must be used.
    assert late_static_set(ros) == {
        "b/pedestal",
        "b/arm_base",
        "b/ee_link",
        "b/hand",
        "b/camera_link",
        "b/camera_optical_frame",
    }


def test_tf2_ros_statics_follow_a_reloaded_description(
    ros: Any, fake_tf2_ros: types.ModuleType
) -> None:
    node = make_node(ros, robot_description=ARM_URDF.read_text())
    assert "camera_link" in late_static_set(ros)
    result = node.set_parameters([Parameter("robot_description", value=TWO_LINKS)])[0]
    assert result.successful, result.reason
    assert late_static_set(ros) == {"b"}


# -- SDFormat: model_name --------------------------------------------------------------------

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
    assert node._model is not None and node._model.robot.name == "second"
    assert [t.child_frame_id for t in node._tf_static.transforms] == ["tip_b"]
    result = node.set_parameters([Parameter("model_name", value="nothere")])[0]
    assert not result.successful
    assert "no <model> named 'nothere'" in result.reason
    assert node._model.robot.name == "second"
    result = node.set_parameters([Parameter("model_name", value="first")])[0]
    assert result.successful, result.reason
    assert [t.child_frame_id for t in node._tf_static.transforms] == ["tip_a"]
    translation = node._tf_static.transforms[0].transform.translation
    assert (translation.x, translation.y, translation.z) == (0.0, 0.0, 1.0)


# -- QoS ----------------------------------------------------------------------------------------


def test_joint_states_use_sensor_data_qos_deeper_with_overrides(ros: Any) -> None:
    node = make_node(ros, robot_description=TWO_LINKS)
    for subscription in (node._joint_state_sub, node._multi_dof_sub):
        assert subscription.qos_profile.reliability == ReliabilityPolicy.BEST_EFFORT
        assert subscription.qos_profile.durability == DurabilityPolicy.VOLATILE
        assert subscription.qos_profile.depth == node_module.JOINT_STATES_DEPTH == 100
    override = "qos_overrides./joint_states.subscription.reliability"
    overridden = JointTfPublisher(
        context=ros.context,
        parameter_overrides=[
            Parameter("robot_description", value=TWO_LINKS),
            Parameter(override, value="reliable"),
        ],
    )
    ros._owned.append(overridden)
    ros.executor.add_node(overridden)
    assert overridden._joint_state_sub.qos_profile.reliability == ReliabilityPolicy.RELIABLE
    assert overridden._joint_state_sub.qos_profile.depth == node_module.JOINT_STATES_DEPTH
    depth = JointTfPublisher(
        context=ros.context,
        parameter_overrides=[
            Parameter("robot_description", value=TWO_LINKS),
            Parameter("qos_overrides./joint_states.subscription.depth", value=7),
        ],
    )
    ros._owned.append(depth)
    assert depth._joint_state_sub.qos_profile.depth == 7
    assert depth._multi_dof_sub.qos_profile.depth == node_module.JOINT_STATES_DEPTH


def test_spin_falls_back_to_the_executor_without_rclpy_waitset(
    ros: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An rclpy whose internals lack ``WaitSet``: node.spin still serves joint states."""
    import threading

    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    monkeypatch.setattr(node_module, "_rclpy", types.SimpleNamespace())
    context = rclpy.Context()
    rclpy.init(context=context)
    node = JointTfPublisher(
        context=context,
        parameter_overrides=[
            Parameter("robot_description", value=ARM_URDF.read_text()),
            Parameter("ignore_timestamp", value=True),
        ],
    )
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    raised: list[BaseException] = []

    def spin() -> None:
        try:
            node_module.spin(node, executor)
        except BaseException as error:  # recorded: spin must return quietly on shutdown
            raised.append(error)

    spinner = threading.Thread(target=spin, daemon=True)
    spinner.start()
    received: list[TFMessage] = []
    ros.node.create_subscription(TFMessage, "/tf", received.append, 100)
    publisher = ros.node.create_publisher(JointState, "joint_states", 10)
    try:
        state = JointState()
        state.name = ["joint_1"]
        state.position = [0.3]

        def published() -> bool:
            publisher.publish(state)
            return any(t.child_frame_id for message in received for t in message.transforms)

        assert ros.spin_until(published, timeout_s=15.0), "no /tf through the fallback"
    finally:
        context.try_shutdown()
        spinner.join(timeout=10.0)
        executor.shutdown()
        node.destroy_node()
    assert not spinner.is_alive()
    assert raised == [], "node.spin raised at shutdown instead of returning"
