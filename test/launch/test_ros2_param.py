"""The ros2 command line on the launched node: ``ros2 param list|get|set|describe|dump`` and
``ros2 node info``, as a ROS user inspects a robot_state_publisher.

One ``ros2 launch joint_tf_publisher joint_tf_publisher.launch.py`` (the bundled arm) for the
module; the ros2 commands go through this session's ros2 daemon (stopped at the end). The
node's own parameters are the ones ``config/joint_tf_publisher.yaml`` documents.

Needs the ROS 2 tools (a sourced distro, or the kit that ``make test`` builds) with this
package built and sourced; skipped where launch_testing is not importable.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import yaml

REASON = "needs ROS 2's launch tools and ros2cli: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("ros2param", reason=REASON)

from launch_harness import (  # noqa: E402
    REPO,
    Launch,
    launched,
    ros2_daemon,
    ros2_on_node,
    wait_static_children,
)
from repo_paths import config_parameters, flattened  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = pytest.mark.ros

NODE = "/joint_tf_publisher"
MODEL = REPO / "urdf" / "demo_arm.urdf"
#: The node's own parameters, as its documented parameters file lists them.
PARAMETERS = sorted(config_parameters())


@pytest.fixture(scope="module")
def node(probe: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launch]:
    """The launched node, up (its static transforms received), with the ros2 daemon."""
    log = tmp_path_factory.mktemp("param") / "launch.log"
    with ros2_daemon(), launched("joint_tf_publisher.launch.py", {}, log) as launch:
        robot = Robot.load(MODEL)
        wait_static_children(
            probe, {j.child for j in robot.joints.values() if j.joint_type == "fixed"}
        )
        yield launch


def describe(output: str) -> dict[str, str]:
    """``ros2 param describe`` output split by parameter: name -> its block of lines."""
    blocks = re.split(r"^Parameter name: ", output, flags=re.MULTILINE)
    return {block.split("\n", 1)[0].strip(): block for block in blocks if block.strip()}


def test_param_list_shows_every_parameter(node: Launch) -> None:
    listed = ros2_on_node(NODE, "param", "list", NODE).split()
    assert set(PARAMETERS) <= set(listed), sorted(set(PARAMETERS) - set(listed))
    assert "use_sim_time" in listed


def test_param_describe_shows_descriptions_and_constraints(node: Launch) -> None:
    blocks = describe(ros2_on_node(NODE, "param", "describe", NODE, *PARAMETERS))
    assert set(blocks) == set(PARAMETERS)
    for block in blocks.values():
        description = re.search(r"^\s*Description: (.*)$", block, flags=re.MULTILINE)
        assert description is not None and description.group(1).strip(), block
    assert "Read only: true" in blocks["use_robot_description_topic"]
    assert "Read only: true" in blocks["description_from_topic"]


def test_param_describe_shows_the_range_of_publish_frequency(node: Launch) -> None:
    block = describe(ros2_on_node(NODE, "param", "describe", NODE, "publish_frequency"))
    assert "Min value: 0.0" in block["publish_frequency"]
    assert "Max value: 1000.0" in block["publish_frequency"]


def test_param_get_reads_the_description_and_the_defaults(node: Launch) -> None:
    text = ros2_on_node(NODE, "param", "get", NODE, "robot_description")
    assert text.startswith("String value is: ")
    robot = Robot.from_xml_string(text.removeprefix("String value is: "))
    assert set(robot.links) == set(Robot.load(MODEL).links)
    assert ros2_on_node(NODE, "param", "get", NODE, "clamp").strip() == "String value is: hard"


def test_param_set_applies_a_valid_value_and_rejects_an_invalid_one(node: Launch) -> None:
    output = ros2_on_node(NODE, "param", "set", NODE, "publish_frequency", "33.0")
    assert "Set parameter successful" in output
    got = ros2_on_node(NODE, "param", "get", NODE, "publish_frequency")
    assert got.strip() == "Double value is: 33.0"
    output = ros2_on_node(NODE, "param", "set", NODE, "publish_frequency", "0.0")
    # Under the rates' 0.001 Hz: rclpy's range refuses it first, naming it and the range.
    assert "Setting parameter failed: Parameter publish_frequency out of range" in output
    assert "Min: 0.001" in output
    got = ros2_on_node(NODE, "param", "get", NODE, "publish_frequency")
    assert got.strip() == "Double value is: 33.0"


#: The node's settable array parameters, which the README's ``"[]"`` clears.
ARRAYS = ("source_list", "exclude_joints", "description_args", "source_time_offsets")


@pytest.mark.parametrize("parameter", [*ARRAYS, "attachments.names"])
def test_param_set_of_an_empty_list_clears_an_array_parameter(node: Launch, parameter: str) -> None:
    """ros2cli sends ``"[]"`` as an empty BOOL_ARRAY; the node takes it for any array
    parameter (rclpy refused it: "Wrong parameter type, expected '9' got '6'")."""
    output = ros2_on_node(NODE, "param", "set", NODE, parameter, "[]")
    assert "Set parameter successful" in output, output
    got = ros2_on_node(NODE, "param", "get", NODE, parameter)
    assert got.strip().endswith("values are: []"), got
    output = ros2_on_node(NODE, "param", "set", NODE, parameter, "[true]")
    assert "Setting parameter failed" in output and "array" in output, output


def test_node_info_lists_topics_and_parameter_services(node: Launch) -> None:
    info = ros2_on_node(NODE, "node", "info", NODE)
    subscribers, rest = info.split("Publishers:", 1)
    publishers, services = rest.split("Service Servers:", 1)
    assert "/joint_states: sensor_msgs/msg/JointState" in subscribers
    assert "/multi_dof_joint_states: sensor_msgs/msg/MultiDOFJointState" in subscribers
    for topic in ("/tf: tf2_msgs/msg/TFMessage", "/tf_static: tf2_msgs/msg/TFMessage"):
        assert topic in publishers
    assert "/robot_description: std_msgs/msg/String" in publishers
    for service in ("get_parameters", "set_parameters", "describe_parameters"):
        assert f"{NODE}/{service}: rcl_interfaces/srv/" in services


def test_param_dump_restarts_the_node_unchanged(node: Launch, probe: Any, tmp_path: Path) -> None:
    assert "Parameter not set" not in ros2_on_node(NODE, "param", "get", NODE, "exclude_joints")
    dumped = ros2_on_node(NODE, "param", "dump", NODE)
    parameters = flattened(yaml.safe_load(dumped)[NODE]["ros__parameters"])
    assert set(PARAMETERS) <= set(parameters), dumped
    # The dump as params_file (no model: the description is the file's): the same node.
    dump_file = tmp_path / "dump.yaml"
    dump_file.write_text(dumped)
    node.assert_clean_stop(node.interrupt())
    arguments = {"params_file": str(dump_file)}
    with launched("joint_tf_publisher.launch.py", arguments, tmp_path / "again.log"):
        assert ros2_on_node(NODE, "param", "dump", NODE) == dumped


def test_sigint_to_launch_ends_everything_cleanly(node: Launch) -> None:
    if node.process.poll() is None:  # still running unless the dump test restarted it
        node.assert_clean_stop(node.interrupt())
