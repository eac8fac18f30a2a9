"""The node with a tool hung from the robot: the attachments example (ROS 2 launch).

Starts the node exactly as ``joint_tf_publisher.launch.py`` does, with the same arguments
(``model``, default the bundled ``urdf/demo_arm.urdf``; ``namespace``, ``frame_prefix``,
``rviz``, ...), plus one attachment named ``tool`` (parameters ``attachments.names: [tool]``
and ``attachments.tool.*``):

- ``tool``: its description file, .urdf, .sdf or .xacro (default: the bundled
  ``urdf/gripper.urdf``, a two-finger gripper; ``urdf/suction_tool.urdf`` is the other tool).
- ``tool_parent``: the link it hangs from (default ``tool_flange``, the demo arm's flange;
  the demo arm carries a gripper of its own there, which stays).
- ``tool_origin``: ``"x y z roll pitch yaw"`` of the tool in that link's frame, metres and
  radians (default ``"0 0 0.1 0 0 0"``: beyond the arm's own fingers).
- ``tool_prefix``: prepended to the tool's link and joint names (default ``tool_``).

The tool's root link hangs from ``tool_parent`` by the fixed joint ``<tool_prefix>tool_mount``.
A tool change is one ``ros2 param set`` (docs/ros.md, "Tool change at runtime"):
``ros2 param set /joint_tf_publisher attachments.tool.file <path of another tool>``.

Example: ``ros2 launch joint_tf_publisher tool_change.launch.py rviz:=true``
"""

from __future__ import annotations

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import Action, LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.launch_description_sources import load_python_launch_file_as_module
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "joint_tf_publisher"
#: The attachment's name, so its parameters are ``attachments.tool.*``.
TOOL = "tool"
# The node's launch file, beside this one (installed together in share/<package>/launch).
NODE_LAUNCH = load_python_launch_file_as_module(
    str(Path(__file__).with_name("joint_tf_publisher.launch.py"))
)


def tool_parameters(context: LaunchContext) -> dict[str, object]:
    """The ``attachments.*`` parameters of the ``tool`` arguments."""
    file = LaunchConfiguration("tool").perform(context).strip()
    if not file:
        file = str(Path(get_package_share_directory(PACKAGE)) / "urdf" / "gripper.urdf")
    origin_text = LaunchConfiguration("tool_origin").perform(context)
    origin = [NODE_LAUNCH.parse_float("tool_origin", item) for item in origin_text.split()]
    if len(origin) != 6:
        raise ValueError(f"launch argument tool_origin:={origin_text!r} is not 6 numbers")
    prefix = f"attachments.{TOOL}."
    return {
        "attachments.names": [TOOL],
        prefix + "file": str(Path(file).expanduser()),
        prefix + "parent": LaunchConfiguration("tool_parent").perform(context),
        prefix + "origin": origin,
        prefix + "prefix": LaunchConfiguration("tool_prefix").perform(context),
    }


def tool_actions(context: LaunchContext) -> list[Action]:
    """The node as joint_tf_publisher.launch.py starts it, with the tool attached; with
    ``rviz:=true``, RViz beside it."""
    parameters = NODE_LAUNCH.node_parameters(context)
    namespace = LaunchConfiguration("namespace").perform(context)
    actions: list[Action] = [
        Node(
            package=PACKAGE,
            executable=NODE_LAUNCH.EXECUTABLE,
            name=LaunchConfiguration("node_name").perform(context),
            namespace=namespace,
            output="screen",
            parameters=[*parameters, tool_parameters(context)],
        )
    ]
    if NODE_LAUNCH.parse_bool("rviz", LaunchConfiguration("rviz").perform(context)):
        overrides = parameters[-1]  # node_parameters ends with the arguments given
        description = str(overrides.get("robot_description", ""))
        actions += NODE_LAUNCH.rviz_actions(context, description, namespace)
    return actions


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription(
        [
            *NODE_LAUNCH.declare_arguments(),
            DeclareLaunchArgument(
                "tool",
                default_value="",
                description="the tool's description file (.urdf, .sdf, .xacro); empty: the "
                "bundled urdf/gripper.urdf",
            ),
            DeclareLaunchArgument(
                "tool_parent", default_value="tool_flange", description="link the tool hangs from"
            ),
            DeclareLaunchArgument(
                "tool_origin",
                default_value="0 0 0.1 0 0 0",
                description="x y z roll pitch yaw of the tool in tool_parent's frame (m, rad)",
            ),
            DeclareLaunchArgument(
                "tool_prefix",
                default_value="tool_",
                description="prepended to the tool's link and joint names",
            ),
            OpaqueFunction(function=tool_actions),
        ]
    )
