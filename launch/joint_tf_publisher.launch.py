"""Start joint_tf_publisher on a robot model file (ROS 2 launch; needs a ROS install).

Arguments:
- ``model``: path of a .urdf, .sdf or .xacro file (xacro is expanded); default: the bundled
  ``urdf/demo_arm.urdf``.
- ``frame_prefix``: text prepended to every frame id (default "").
- ``use_sim_time``: take time from /clock (default false).
- ``params_file``: a ROS 2 parameters file (e.g. this package's
  ``config/joint_tf_publisher.yaml``), applied first; ``model`` always sets
  robot_description, the other arguments override the file when given.
- ``namespace``: the node's namespace (default "": topics joint_states, robot_description).
- ``model_name``: SDFormat only, the ``<model>`` to publish where the file has several.

Example: ``ros2 launch joint_tf_publisher joint_tf_publisher.launch.py model:=/path/arm.urdf``
"""

from __future__ import annotations

import os
from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "joint_tf_publisher"


def read_description(model: Path) -> str:
    """The robot description text of a .urdf, .sdf or .xacro file (xacro expanded)."""
    if model.suffix == ".xacro":
        from joint_tf_publisher.description import expand_xacro

        return expand_xacro(model)
    return model.read_text()


def true_text(text: str) -> bool:
    return text.strip().lower() in ("true", "1", "yes", "on")


def node_actions(context: LaunchContext) -> list[Node]:
    model = Path(os.path.expanduser(LaunchConfiguration("model").perform(context)))
    params_file = LaunchConfiguration("params_file").perform(context)
    parameters: list[object] = [params_file] if params_file else []
    # The description always comes from `model`; the other arguments override the params
    # file only when given (not at their defaults), so the file can set them.
    overrides: dict[str, object] = {"robot_description": read_description(model)}
    frame_prefix = LaunchConfiguration("frame_prefix").perform(context)
    use_sim_time = true_text(LaunchConfiguration("use_sim_time").perform(context))
    model_name = LaunchConfiguration("model_name").perform(context)
    if frame_prefix or not params_file:
        overrides["frame_prefix"] = frame_prefix
    if use_sim_time or not params_file:
        overrides["use_sim_time"] = use_sim_time
    if model_name:
        overrides["model_name"] = model_name
    parameters.append(overrides)
    return [
        Node(
            package=PACKAGE,
            executable="joint_tf_publisher",
            namespace=LaunchConfiguration("namespace").perform(context),
            output="screen",
            parameters=parameters,
        )
    ]


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory(PACKAGE))
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "model",
                default_value=str(share / "urdf" / "demo_arm.urdf"),
                description="robot model file: .urdf, .sdf or .xacro",
            ),
            DeclareLaunchArgument(
                "frame_prefix", default_value="", description="prefix of every frame id"
            ),
            DeclareLaunchArgument(
                "use_sim_time", default_value="false", description="use the /clock topic"
            ),
            DeclareLaunchArgument(
                "params_file",
                default_value="",
                description="parameters file applied before the arguments above",
            ),
            DeclareLaunchArgument("namespace", default_value="", description="node namespace"),
            DeclareLaunchArgument(
                "model_name", default_value="", description="SDFormat: the <model> to publish"
            ),
            OpaqueFunction(function=node_actions),
        ]
    )
