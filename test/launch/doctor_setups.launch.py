"""The setups ``doctor`` is tested on: the node on the bundled demo arm with a joint-state
source (``doctor_joint_source.py``), healthy or broken on purpose.

Argument ``setup``:
- ``healthy``: every leader joint of the arm published.
- ``missing_joint``: every one but ``wrist_1_joint``.
- ``second_publisher``: healthy, and the source also broadcasts ``base_link -> shoulder_link``
  on /tf, a frame the node publishes too.
- ``sim_time_no_clock``: healthy, but the node has ``use_sim_time: true`` and nothing
  publishes /clock.
- ``diagnostics_warn``: healthy, and the source also publishes a WARN status on /diagnostics.

Argument ``python``: the interpreter of the source (default: launch's; ``diagnostics_warn``
needs one that imports diagnostic_msgs).
"""

from __future__ import annotations

import sys
from pathlib import Path

from launch import Action, LaunchContext, LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    ExecuteProcess,
    IncludeLaunchDescription,
    OpaqueFunction,
)
from launch.launch_description_sources import PythonLaunchDescriptionSource

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent.parent
ARM = ROOT / "urdf" / "demo_arm.urdf"
LEADERS = (
    "shoulder_pan_joint",
    "shoulder_lift_joint",
    "elbow_joint",
    "wrist_1_joint",
    "wrist_2_joint",
    "wrist_3_joint",
    "left_finger_joint",
)
SETUPS = ("healthy", "missing_joint", "second_publisher", "sim_time_no_clock", "diagnostics_warn")


def setup_actions(context: LaunchContext) -> list[Action]:
    setup = context.launch_configurations["setup"]
    python = context.launch_configurations["python"]
    if setup not in SETUPS:
        raise ValueError(f"setup must be one of {SETUPS}, got {setup!r}")
    joints = [j for j in LEADERS if not (setup == "missing_joint" and j == "wrist_1_joint")]
    extra = ["--tf", "base_link", "shoulder_link"] if setup == "second_publisher" else []
    extra += ["--diagnostic"] if setup == "diagnostics_warn" else []
    node = IncludeLaunchDescription(
        PythonLaunchDescriptionSource(str(ROOT / "launch" / "joint_tf_publisher.launch.py")),
        launch_arguments={
            "model": str(ARM),
            "use_sim_time": "true" if setup == "sim_time_no_clock" else "false",
        }.items(),
    )
    source = ExecuteProcess(
        cmd=[python, str(HERE / "doctor_joint_source.py"), *joints, *extra],
        name="doctor_joint_source",
        output="screen",
    )
    return [node, source]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription(
        [
            DeclareLaunchArgument("setup", description=f"one of {', '.join(SETUPS)}"),
            DeclareLaunchArgument(
                "python", default_value=sys.executable, description="the source's interpreter"
            ),
            OpaqueFunction(function=setup_actions),
        ]
    )
