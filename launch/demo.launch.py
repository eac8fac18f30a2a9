"""The node plus a demo joint-state source that sweeps every joint (ROS 2 launch).

Starts ``joint_tf_publisher.launch.py`` on ``model`` (default: the bundled
``urdf/demo_arm.urdf``) and the command line tool's demo source
(``joint-tf-publisher demo MODEL``), which publishes sensor_msgs/JointState on
``joint_states``, mimic joints following their leader, every second limited joint sweeping a
little beyond its limits so the node's clamping shows. View it with RViz (fixed frame: the
model's root link).

Example: ``ros2 launch joint_tf_publisher demo.launch.py rate:=100``
"""

from __future__ import annotations

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import DeclareLaunchArgument, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "joint_tf_publisher"


def generate_launch_description() -> LaunchDescription:
    share = Path(get_package_share_directory(PACKAGE))
    model = LaunchConfiguration("model")
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "model",
                default_value=str(share / "urdf" / "demo_arm.urdf"),
                description="robot model file: .urdf, .sdf or .xacro",
            ),
            DeclareLaunchArgument(
                "rate", default_value="50.0", description="joint_states rate of the demo, Hz"
            ),
            DeclareLaunchArgument(
                "frame_prefix", default_value="", description="prefix of every frame id"
            ),
            DeclareLaunchArgument(
                "use_sim_time", default_value="false", description="use the /clock topic"
            ),
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(
                    str(share / "launch" / "joint_tf_publisher.launch.py")
                ),
                launch_arguments={
                    "model": model,
                    "frame_prefix": LaunchConfiguration("frame_prefix"),
                    "use_sim_time": LaunchConfiguration("use_sim_time"),
                }.items(),
            ),
            Node(
                package=PACKAGE,
                executable="joint-tf-publisher",
                name="joint_state_demo",
                arguments=["demo", model, "--rate", LaunchConfiguration("rate")],
                output="screen",
            ),
        ]
    )
