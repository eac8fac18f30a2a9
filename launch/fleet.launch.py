"""A fleet in one process: ``joint_tf_fleet`` runs one joint_tf_publisher node per robot.

Every robot is the node users know (``/<robot>/joint_tf_publisher``, its parameters, topics
and services), all in one process with one DDS participant and one executor (docs/fleet.md).
Each robot's parameters come from ``params_file`` exactly as they would for a process of its
own: ``/<robot>/joint_tf_publisher:`` keys for that robot, ``/**`` keys for every node, so
the file of a launch that starts a process per robot serves the fleet unchanged. With
``namespace:=site`` the fleet is ``/site/joint_tf_fleet`` and each robot nests under it
(``/site/<robot>/joint_tf_publisher``: its section is keyed so).

Arguments:

- ``params_file`` (required): a ROS 2 parameters file with each robot's parameters (its
  ``description_file`` or ``robot_description``, ``frame_prefix`` ...) and, if ``robots`` is
  not given, the fleet's own (``/joint_tf_fleet: robots: [robot1, robot2]``).
- ``robots``: the robots' namespaces, comma-separated; given, it overrides the file's list.
- ``retry_period``: seconds between two retries of a robot whose node did not start
  (empty: the file's, else 10.0; 0: only when the parameters file changes).
- ``namespace``: the fleet's namespace (empty: the root; also a ``PushRosNamespace``
  around this launch file), under which the robots nest.

Example: ``ros2 launch joint_tf_publisher fleet.launch.py params_file:=fleet.yaml
robots:=robot1,robot2,robot3``; ``ros2 param set /joint_tf_fleet robots "[robot1, robot4]"``
then starts robot4 and stops robot2 and robot3 while the others serve on.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from launch import Action, LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction, RegisterEventHandler
from launch.event_handlers import OnShutdown
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "joint_tf_publisher"
EXECUTABLE = "joint_tf_fleet"
#: The fleet node's name (its parameters' key in a parameters file).
FLEET_NODE = "/joint_tf_fleet"


def robot_list(text: str) -> list[str]:
    """The ``robots`` argument as namespaces (``wanted_robots``: ValueError naming a bad one)."""
    from joint_tf_publisher.node_core.fleet import wanted_robots

    return [name.lstrip("/") for name in wanted_robots([n for n in text.split(",") if n.strip()])]


def fleet_parameters_file(parameters: dict[str, Any]) -> tuple[str, list[Action]]:
    """``parameters`` as the fleet node's section of a parameters file (keyed ``/**/`` and
    its name: in any namespace), written to a temporary file removed at shutdown; its path
    and the action that removes it."""
    folder = Path(tempfile.mkdtemp(prefix="joint_tf_fleet_"))
    path = folder / "fleet.yaml"
    key = "/**" + FLEET_NODE
    path.write_text(yaml.safe_dump({key: {"ros__parameters": parameters}}))

    def remove_folder(event: Any, context: LaunchContext) -> None:
        shutil.rmtree(folder, ignore_errors=True)

    return str(path), [RegisterEventHandler(OnShutdown(on_shutdown=remove_folder))]


def fleet_actions(context: LaunchContext) -> list[Action]:
    """The fleet's process: ``params_file``, then the fleet's own arguments given, in
    ``namespace`` (launch_ros passes it as ``-r __ns:=``, which places the fleet's node;
    the robots nest under it, docs/fleet.md)."""
    params_file = LaunchConfiguration("params_file").perform(context).strip()
    if not params_file:
        raise ValueError("fleet.launch.py needs params_file:= (the robots' parameters)")
    parameters: list[object] = [os.path.expanduser(params_file)]
    overrides: dict[str, Any] = {}
    robots = LaunchConfiguration("robots").perform(context)
    if robots.strip():
        overrides["robots"] = robot_list(robots)
    retry_period = LaunchConfiguration("retry_period").perform(context).strip()
    if retry_period:
        try:
            overrides["retry_period"] = float(retry_period)
        except ValueError:
            msg = f"launch argument retry_period:={retry_period!r} is not a number"
            raise ValueError(msg) from None
    cleanup: list[Action] = []
    if overrides:  # the fleet node's own key: over the file's (a /** value would not be)
        path, cleanup = fleet_parameters_file(overrides)
        parameters.append(path)
    return [
        *cleanup,
        Node(
            package=PACKAGE,
            executable=EXECUTABLE,
            namespace=LaunchConfiguration("namespace").perform(context).strip() or None,
            output="screen",
            parameters=parameters,
        ),
    ]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "params_file",
                description="parameters file: each robot's /<robot>/joint_tf_publisher "
                "section (and /** for all), and /joint_tf_fleet's robots if not given here",
            ),
            DeclareLaunchArgument(
                "robots",
                default_value="",
                description="the robots' namespaces, comma-separated (empty: the file's)",
            ),
            DeclareLaunchArgument(
                "retry_period",
                default_value="",
                description="seconds between two retries of a robot that did not start "
                "(empty: the file's, else 10.0; 0: only when the file changes)",
            ),
            DeclareLaunchArgument(
                "namespace",
                default_value="",
                description="the fleet's namespace (empty: the root); the robots nest "
                "under it: /<namespace>/<robot>/joint_tf_publisher",
            ),
            OpaqueFunction(function=fleet_actions),
        ]
    )
