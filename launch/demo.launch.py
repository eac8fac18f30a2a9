"""The node plus a demo joint-state source that sweeps every joint (ROS 2 launch).

Starts the node exactly as ``joint_tf_publisher.launch.py`` does, with the same arguments
(``model``, ``xacro_args``, ``robot_description``, ``description_file``, ``node_name``,
``namespace``, ``params_file``, ``publish_frequency``, ``ignore_timestamp``, ``use_sim_time``,
``frame_prefix``, ``global_frame_prefix``, ``model_name``, ``time_offset``,
``static_republish_period``, ``rviz``), and the command line tool's demo source
(``joint-tf-publisher demo``) on the same description, in the same ``namespace`` and with the
same ``use_sim_time``: it publishes sensor_msgs/JointState on ``joint_states``, mimic joints
following their leader, every second limited joint sweeping a little beyond its limits so the
node's clamping shows. ``rate`` is the demo's joint_states rate in Hz. ``rviz:=true`` shows it
in RViz (fixed frame: the model's root link, with ``frame_prefix`` in front).

Example: ``ros2 launch joint_tf_publisher demo.launch.py namespace:=r1 frame_prefix:=r1/``
"""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path
from typing import Any

from launch import Action, LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnShutdown
from launch.launch_description_sources import load_python_launch_file_as_module
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "joint_tf_publisher"
CLI_EXECUTABLE = "joint-tf-publisher"
# The node's launch file, beside this one (installed together in share/<package>/launch).
NODE_LAUNCH = load_python_launch_file_as_module(
    str(Path(__file__).with_name("joint_tf_publisher.launch.py"))
)


def demo_model_file(context: LaunchContext) -> tuple[str, list[Action]]:
    """A file with the node's description for the demo source, and the actions cleaning up.

    The ``model`` file itself when the node gets it unchanged; else (xacro, or
    ``robot_description`` text, or ``description_file``) the same text, read now, in a
    temporary file removed at shutdown (the demo source does not follow later saves).
    """
    if NODE_LAUNCH.uses_model_file_as_is(context):
        return str(NODE_LAUNCH.model_path(context)), []
    text = NODE_LAUNCH.viewed_description(context)
    if not text:
        raise ValueError(
            "demo.launch.py needs a model file, a readable description_file or "
            "robot_description text"
        )
    folder = Path(tempfile.mkdtemp(prefix="joint_tf_publisher_demo_"))
    path = folder / "description.xml"
    path.write_text(text, encoding="utf-8")

    def remove_folder(event: Any, context: LaunchContext) -> None:
        shutil.rmtree(folder, ignore_errors=True)

    return str(path), [RegisterEventHandler(OnShutdown(on_shutdown=remove_folder))]


def demo_actions(context: LaunchContext) -> list[Action]:
    """The node (as joint_tf_publisher.launch.py starts it) and the demo source beside it."""
    model_file, cleanup = demo_model_file(context)
    arguments = ["demo", model_file, "--rate", LaunchConfiguration("rate").perform(context)]
    model_name = LaunchConfiguration("model_name").perform(context).strip()
    if model_name:
        arguments += ["--model-name", model_name]
    use_sim_time = LaunchConfiguration("use_sim_time").perform(context).strip()
    parameters: list[object] = []
    if use_sim_time:
        parameters.append({"use_sim_time": NODE_LAUNCH.parse_bool("use_sim_time", use_sim_time)})
    source = Node(
        package=PACKAGE,
        executable=CLI_EXECUTABLE,
        name="joint_state_demo",
        namespace=LaunchConfiguration("namespace").perform(context),
        arguments=arguments,
        parameters=parameters,
        output="screen",
    )
    return [*cleanup, *NODE_LAUNCH.node_actions(context), source]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription(
        [
            *NODE_LAUNCH.declare_arguments(),
            DeclareLaunchArgument(
                "rate", default_value="50.0", description="joint_states rate of the demo, Hz"
            ),
            OpaqueFunction(function=demo_actions),
        ]
    )
