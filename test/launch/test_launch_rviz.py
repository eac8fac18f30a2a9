"""``rviz:=true``: both Python launch files start RViz on the package's view of the robot.

rviz2 is not built in the ROS 2 client kit, so no RViz process starts here: the launch
files' functions run on a real ``launch.LaunchContext`` (as ``ros2 launch name:=value`` sets
it, see test_launch_arguments.py) and the actions they return are read as the launch system
would run them: the rviz2 ``Node`` only with ``rviz:=true``, its ``-d`` config the installed
``config/joint_tf_publisher.rviz``, its ``-f`` fixed frame ``<frame_prefix><root link>`` of
the very description the node gets (the root told by the package's own parser), the view's
``/robot_description`` remapped into the node's namespace. rviz2 itself is a stand-in: an
ament prefix of its own (the index marker and an executable that does nothing) put first on
``AMENT_PREFIX_PATH``, which is all that ``ros2 launch`` looks up.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
import yaml

REASON = "needs ROS 2's launch tools: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)

from ament_index_python.packages import get_package_prefix  # noqa: E402
from launch import LaunchContext  # noqa: E402
from launch.launch_description_sources import load_python_launch_file_as_module  # noqa: E402
from launch_harness import REPO, package_share  # noqa: E402
from launch_ros.actions import Node  # noqa: E402
from test_launch_arguments import NODE_LAUNCH, URDF, XACRO, context  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

DEMO_LAUNCH = load_python_launch_file_as_module(str(REPO / "launch" / "demo.launch.py"))
TWO_MODELS = """<sdf version="1.9"><world name="w">
  <model name="first"><link name="base_a"/></model>
  <model name="second"><link name="base_b"/><link name="tip_b"/>
    <joint name="j" type="fixed"><parent>base_b</parent><child>tip_b</child></joint></model>
</world></sdf>"""


@pytest.fixture(autouse=True)
def stand_in_rviz2(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An ament prefix holding a package ``rviz2`` (index marker and executable), searched
    first: the launch files find rviz2 as they would in an install that has it."""
    prefix = tmp_path / "rviz2_prefix"
    marker = prefix / "share" / "ament_index" / "resource_index" / "packages" / "rviz2"
    marker.parent.mkdir(parents=True)
    marker.write_text("")
    executable = prefix / "lib" / "rviz2" / "rviz2"
    executable.parent.mkdir(parents=True)
    executable.write_text("#!/bin/sh\n")
    executable.chmod(0o755)
    monkeypatch.setenv("AMENT_PREFIX_PATH", f"{prefix}:{os.environ['AMENT_PREFIX_PATH']}")
    return prefix


def rviz_nodes(actions: list[Any]) -> list[Node]:
    return [a for a in actions if isinstance(a, Node) and a.node_package == "rviz2"]


def command_line(node: Node, launch_context: LaunchContext) -> list[str]:
    """The node's command, each item substituted as the launch system does."""
    return ["".join(s.perform(launch_context) for s in item) for item in node.cmd]


def option(arguments: list[str], flag: str) -> str | None:
    """The value after ``flag`` in ``arguments``, None if absent."""
    return arguments[arguments.index(flag) + 1] if flag in arguments else None


def rviz_command(**given: str) -> list[str]:
    """The command line of the one rviz2 node ``node_actions`` starts for ``given``."""
    launch_context = context(rviz="true", **given)
    (rviz,) = rviz_nodes(NODE_LAUNCH.node_actions(launch_context))
    assert (rviz.node_package, rviz.node_executable) == ("rviz2", "rviz2")
    return command_line(rviz, launch_context)[1:]


def test_rviz_starts_only_when_asked_and_defaults_to_false() -> None:
    (declared,) = [a for a in NODE_LAUNCH.declare_arguments() if a.name == "rviz"]
    assert "".join(s.perform(LaunchContext()) for s in declared.default_value) == "false"
    for value in ("false", "0", "no"):
        actions = NODE_LAUNCH.node_actions(context(rviz=value))
        assert rviz_nodes(actions) == [] and len(actions) == 1
    assert len(rviz_nodes(NODE_LAUNCH.node_actions(context(rviz="true")))) == 1
    with pytest.raises(ValueError, match="rviz:='sometimes' is not true or false"):
        NODE_LAUNCH.node_actions(context(rviz="sometimes"))


def test_the_executable_is_the_installed_rviz2(stand_in_rviz2: Path) -> None:
    launch_context = context(rviz="true")
    (rviz,) = rviz_nodes(NODE_LAUNCH.node_actions(launch_context))
    assert command_line(rviz, launch_context)[0] == str(stand_in_rviz2 / "lib/rviz2/rviz2")


def test_without_rviz2_the_launch_stops_before_starting_anything(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Not a half-started launch (the node running on, orphaned): ``node_actions`` raises
    before it returns any action, with what to install."""
    own_prefix = get_package_prefix("joint_tf_publisher")
    monkeypatch.setenv("AMENT_PREFIX_PATH", own_prefix)
    with pytest.raises(RuntimeError, match=r"rviz:=true needs rviz2.*apt install"):
        NODE_LAUNCH.node_actions(context(rviz="true"))
    assert len(NODE_LAUNCH.node_actions(context(rviz="false"))) == 1


def test_the_config_is_the_installed_view_of_grid_robot_model_and_named_frames() -> None:
    config = Path(option(rviz_command(), "-d") or "")
    assert config == package_share() / "config" / "joint_tf_publisher.rviz"
    assert config.read_text() == (REPO / "config" / "joint_tf_publisher.rviz").read_text()
    manager = yaml.safe_load(config.read_text())["Visualization Manager"]
    displays = {display["Class"]: display for display in manager["Displays"]}
    assert displays.keys() == {
        "rviz_default_plugins/Grid",
        "rviz_default_plugins/RobotModel",
        "rviz_default_plugins/TF",
    }
    robot_model = displays["rviz_default_plugins/RobotModel"]
    assert robot_model["Description Source"] == "Topic"
    topic = robot_model["Description Topic"]
    assert topic["Value"] == NODE_LAUNCH.RVIZ_DESCRIPTION_TOPIC == "/robot_description"
    # The node latches its description: a volatile reader started after it would miss it.
    assert (topic["Durability Policy"], topic["Reliability Policy"]) == (
        "Transient Local",
        "Reliable",
    )
    assert displays["rviz_default_plugins/TF"]["Show Names"] is True


def test_the_fixed_frame_is_the_prefixed_root_link_of_the_node_s_description() -> None:
    root = Robot.load(URDF).root
    assert option(rviz_command(model=str(URDF)), "-f") == root
    assert option(rviz_command(model=str(URDF), frame_prefix="r1/"), "-f") == f"r1/{root}"
    xacro_root = Robot.from_xml_string(
        NODE_LAUNCH.description_text(context(model=str(XACRO), xacro_args="prefix:=left_"))
    ).root
    assert xacro_root.startswith("left_")
    assert option(rviz_command(model=str(XACRO), xacro_args="prefix:=left_"), "-f") == xacro_root
    demo_root = Robot.load(package_share() / "urdf" / "demo_arm.urdf").root
    assert option(rviz_command(), "-f") == demo_root


def test_with_description_file_the_fixed_frame_is_the_file_s_root_link() -> None:
    """The node reads the file itself; the launch file reads it once too, for RViz."""
    command = rviz_command(description_file=str(XACRO), xacro_args="prefix:=left_")
    assert option(command, "-f") == "left_" + Robot.load(XACRO).root


def test_the_fixed_frame_follows_model_name_in_a_file_of_several_models() -> None:
    assert option(rviz_command(robot_description=TWO_MODELS, model_name="second"), "-f") == (
        "base_b"
    )
    assert option(rviz_command(robot_description=TWO_MODELS, model_name="first"), "-f") == (
        "base_a"
    )


def test_without_a_description_to_read_the_config_s_fixed_frame_stays(tmp_path: Path) -> None:
    """The description comes from params_file (or the topic); one that does not load is the
    node's to report: RViz keeps the config's fixed frame in both cases."""
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    frame_prefix: p/\n")
    assert option(rviz_command(params_file=str(params)), "-f") is None
    assert option(rviz_command(robot_description="<robot name='broken'>"), "-f") is None


def test_the_view_reads_the_description_of_the_node_s_namespace() -> None:
    assert "-r" not in rviz_command()
    for namespace in ("r1", "/r1", "/r1/"):
        arguments = rviz_command(namespace=namespace)
        ros_arguments = arguments[arguments.index("--ros-args") :]
        assert option(ros_arguments, "-r") == "/robot_description:=/r1/robot_description"


def test_use_sim_time_reaches_rviz_when_given() -> None:
    assert "use_sim_time:=true" in rviz_command(use_sim_time="true")
    assert not any("use_sim_time" in item for item in rviz_command())


def test_the_demo_starts_rviz_on_the_demo_arm_beside_the_node_and_its_source() -> None:
    launch_context = LaunchContext()
    for argument in DEMO_LAUNCH.generate_launch_description().entities:
        if hasattr(argument, "default_value") and hasattr(argument, "name"):
            value = "".join(s.perform(launch_context) for s in argument.default_value)
            launch_context.launch_configurations[argument.name] = value
    assert launch_context.launch_configurations["rviz"] == "false"
    assert rviz_nodes(DEMO_LAUNCH.demo_actions(launch_context)) == []
    launch_context.launch_configurations["rviz"] = "true"
    actions = DEMO_LAUNCH.demo_actions(launch_context)
    (rviz,) = rviz_nodes(actions)
    packages = [a.node_package for a in actions if isinstance(a, Node)]
    assert packages == ["joint_tf_publisher", "rviz2", "joint_tf_publisher"]
    arguments = command_line(rviz, launch_context)[1:]
    demo_root = Robot.load(package_share() / "urdf" / "demo_arm.urdf").root
    assert option(arguments, "-f") == demo_root
    assert option(arguments, "-d") == str(package_share() / "config" / "joint_tf_publisher.rviz")
