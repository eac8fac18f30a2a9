"""How ``joint_tf_publisher.launch.py`` turns its arguments into the node's parameters.

Its functions run here on a real ``launch.LaunchContext`` holding the launch configurations
``ros2 launch name:=value`` would set (no process is started): which description the node
gets (text, model file, xacro with arguments, the bundled default, none with a params file),
and which parameters override the params file.

Skipped where ROS 2's launch is not importable (the pip environment without the kit).
"""

from __future__ import annotations

import subprocess
from pathlib import Path
from typing import Any

import pytest

REASON = "needs ROS 2's launch tools: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)

from launch import LaunchContext  # noqa: E402
from launch.launch_description_sources import load_python_launch_file_as_module  # noqa: E402
from launch_harness import REPO, package_share  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.node_core.parameters import PARAMETERS_BY_NAME  # noqa: E402

NODE_LAUNCH = load_python_launch_file_as_module(
    str(REPO / "launch" / "joint_tf_publisher.launch.py")
)
XACRO = REPO / "test" / "urdf" / "small_arm.urdf.xacro"
URDF = REPO / "test" / "urdf" / "arm_mimic_gripper.urdf"


def context(**given: str) -> LaunchContext:
    """A context with every argument at its declared default, then ``given`` set."""
    launch_context = LaunchContext()
    for argument in NODE_LAUNCH.declare_arguments():
        value = "".join(s.perform(launch_context) for s in argument.default_value)
        launch_context.launch_configurations[argument.name] = value
    launch_context.launch_configurations.update(given)
    return launch_context


def overrides(launch_context: LaunchContext) -> dict[str, Any]:
    """The parameters the launch file sets after the params file (the last entry)."""
    parameters = NODE_LAUNCH.node_parameters(launch_context)
    assert isinstance(parameters[-1], dict)
    return parameters[-1]


def test_parse_xacro_args_reads_shell_quoted_name_value_pairs() -> None:
    parsed = NODE_LAUNCH.parse_xacro_args("prefix:=left_ name:='two words' empty:=")
    assert parsed == {"prefix": "left_", "name": "two words", "empty": ""}
    assert NODE_LAUNCH.parse_xacro_args("  ") == {}


@pytest.mark.parametrize("bad", ["prefix", ":=value", "prefix=left_"])
def test_parse_xacro_args_names_a_malformed_item(bad: str) -> None:
    with pytest.raises(ValueError, match="is not name:=value"):
        NODE_LAUNCH.parse_xacro_args(bad)


def test_boolean_and_number_arguments_are_checked() -> None:
    assert NODE_LAUNCH.parse_bool("use_sim_time", "True") is True
    assert NODE_LAUNCH.parse_bool("use_sim_time", "0") is False
    with pytest.raises(ValueError, match="use_sim_time:='maybe' is not true or false"):
        NODE_LAUNCH.parse_bool("use_sim_time", "maybe")
    assert NODE_LAUNCH.parse_float("publish_frequency", "50") == 50.0
    with pytest.raises(ValueError, match="publish_frequency:='fast' is not a number"):
        NODE_LAUNCH.parse_float("publish_frequency", "fast")


def test_default_is_the_bundled_demo_arm() -> None:
    text = overrides(context())["robot_description"]
    assert text == (package_share() / "urdf" / "demo_arm.urdf").read_text()
    assert NODE_LAUNCH.uses_model_file_as_is(context())


def test_a_params_file_without_model_leaves_the_description_to_the_file(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    given = overrides(context(params_file=str(params)))
    assert "robot_description" not in given
    assert NODE_LAUNCH.node_parameters(context(params_file=str(params)))[0] == str(params)


def test_robot_description_text_wins_over_model() -> None:
    text = "<robot name='inline'><link name='only'/></robot>"
    assert overrides(context(robot_description=text, model=str(URDF)))["robot_description"] == text


def test_xacro_is_expanded_with_its_arguments_as_the_xacro_command_does() -> None:
    text = overrides(context(model=str(XACRO), xacro_args="prefix:=left_"))["robot_description"]
    command = subprocess.run(
        ["xacro", str(XACRO), "prefix:=left_"], capture_output=True, text=True, check=True
    )
    assert set(Robot.from_xml_string(text).links) == set(
        Robot.from_xml_string(command.stdout).links
    )
    assert "left_link_3" in Robot.from_xml_string(text).links


def test_description_file_is_the_node_s_to_read_with_xacro_args_as_its_arguments(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The node gets the path (absolute, so its working directory does not matter) and not
    the text: it reads the file itself and loads it again on each save."""
    monkeypatch.chdir(XACRO.parent)
    given = overrides(context(description_file=XACRO.name, xacro_args="prefix:=left_ b:='x y'"))
    assert given == {
        "description_file": str(XACRO),
        "description_args": ["prefix:=left_", "b:=x y"],
    }
    assert NODE_LAUNCH.model_path(context(description_file=str(URDF))) is None
    # What RViz's fixed frame and the demo source read once: the file, expanded.
    viewed = NODE_LAUNCH.viewed_description(
        context(description_file=str(XACRO), xacro_args="prefix:=left_")
    )
    assert Robot.from_xml_string(viewed).root == "left_base_link"
    assert NODE_LAUNCH.viewed_description(context(description_file=str(tmp_path / "no.urdf"))) == ""


@pytest.mark.parametrize("other", ["model", "robot_description"])
def test_description_file_and_another_description_are_refused_naming_both(other: str) -> None:
    given = context(description_file=str(URDF), **{other: str(URDF)})
    with pytest.raises(ValueError, match=f"description_file and {other} both give"):
        NODE_LAUNCH.node_parameters(given)


def test_only_given_arguments_override_the_params_file() -> None:
    assert overrides(context(model=str(URDF))).keys() == {"robot_description"}
    given = overrides(
        context(
            model=str(URDF),
            publish_frequency="50",
            ignore_timestamp="true",
            use_sim_time="false",
            frame_prefix="r1/",
            model_name="arm",
            time_offset="-0.008",
            static_republish_period="2",
            static_union="true",
        )
    )
    del given["robot_description"]
    assert given == {
        "publish_frequency": 50.0,
        "ignore_timestamp": True,
        "use_sim_time": False,
        "frame_prefix": "r1/",
        "model_name": "arm",
        "time_offset": -0.008,
        "static_republish_period": 2.0,
        "static_union": True,
    }
    with pytest.raises(ValueError, match="time_offset:='late' is not a number"):
        NODE_LAUNCH.node_parameters(context(time_offset="late"))


def test_remote_frames_become_the_remote_output_s_list() -> None:
    given = overrides(context(model=str(URDF), remote_frames="base_link, tool0 camera"))
    assert given["remote.frames"] == ["base_link", "tool0", "camera"]
    assert "remote.frames" not in overrides(context(model=str(URDF)))


@pytest.mark.parametrize("name", ["time_offset", "static_republish_period", "static_union"])
def test_parameter_arguments_say_what_the_parameter_table_says(name: str) -> None:
    """``ros2 launch ... -s`` shows the node's own description and default of the parameter."""
    (argument,) = (a for a in NODE_LAUNCH.declare_arguments() if a.name == name)
    spec = PARAMETERS_BY_NAME[name]
    assert argument.description.startswith(f"{spec.description} (node default {spec.default})")
