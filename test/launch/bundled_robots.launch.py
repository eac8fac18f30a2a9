"""Three bundled robots in one launch, as a user's bringup file would start them (tests only).

Each robot is the package's ``joint_tf_publisher.launch.py`` in its own scoped group, with
its own namespace and frame prefix (``<name>/``) and ``ignore_timestamp:=true``: a URDF with
mimic joints, an SDFormat model with every SDF joint type, a floating-base humanoid.
``ROBOTS`` is read by test_tf2_buffer.py. Run: ``ros2 launch test/launch/bundled_robots.launch.py``.
"""

from __future__ import annotations

from pathlib import Path

from ament_index_python.packages import get_package_share_directory
from launch import LaunchDescription
from launch.actions import GroupAction, IncludeLaunchDescription
from launch.launch_description_sources import PythonLaunchDescriptionSource

TEST_DIR = Path(__file__).resolve().parent.parent
#: namespace (and frame prefix without its slash) -> model file
ROBOTS = {
    "urdf_mimic": TEST_DIR / "urdf" / "arm_mimic_gripper.urdf",
    "sdf_joints": TEST_DIR / "sdf" / "all_joint_types.sdf",
    "floating_base": TEST_DIR / "urdf" / "humanoid.urdf",
}


def generate_launch_description() -> LaunchDescription:
    node_launch = Path(get_package_share_directory("joint_tf_publisher"))
    source = PythonLaunchDescriptionSource(
        str(node_launch / "launch" / "joint_tf_publisher.launch.py")
    )
    return LaunchDescription(
        [
            GroupAction(
                [
                    IncludeLaunchDescription(
                        source,
                        launch_arguments={
                            "model": str(model),
                            "namespace": name,
                            "frame_prefix": f"{name}/",
                            "ignore_timestamp": "true",
                        }.items(),
                    )
                ],
                scoped=True,
            )
            for name, model in ROBOTS.items()
        ]
    )
