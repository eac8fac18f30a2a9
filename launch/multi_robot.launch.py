"""Several robots, two trees: each robot's own tree in its namespace, and one global tree.

Each robot of ``robots`` runs its node (``joint_tf_publisher.launch.py``; with ``demo:=true``
``demo.launch.py``, a demo joint-state source beside it) in its namespace, in a scoped group
with Nav2's multi-robot remapping of every node in it: ``/tf:=tf`` and
``/tf_static:=tf_static`` (``SetRemap``), so the robot's own tree is on ``/<name>/tf`` and
``/<name>/tf_static`` with unprefixed frames, as the robot's navigation stack expects. Each
node's ``global_frame_prefix`` is ``<name>/``: the same transforms also go out on the
absolute ``/tf`` and ``/tf_static`` as ``<name>/base_link`` ..., one tree of every robot for
fleet tools and RViz (fixed frame e.g. ``robot1/base_link``). docs/ros.md, "Several robots,
two trees", shows the views.

Arguments:

- ``robots``: the robots' namespaces, comma-separated (default ``robot1,robot2``).
- ``model``, ``xacro_args``, ``publish_frequency``, ``ignore_timestamp``, ``use_sim_time``,
  ``time_offset``, ``static_republish_period``, ``static_union``: as in
  ``joint_tf_publisher.launch.py``, the same for every robot (default: the bundled demo arm).
- ``demo``: ``true`` (default) also starts a demo joint-state source per robot (its ``rate``
  in Hz, default 50.0); ``false`` leaves the robots' ``joint_states`` to their drivers.
- ``one_process``: ``true`` runs every robot's node in one ``joint_tf_fleet`` process (one
  DDS participant, a few MB per robot: docs/fleet.md) instead of a process per robot; the
  nodes, their names, parameters, topics and remappings are the same. Default ``false``.

Example: ``ros2 launch joint_tf_publisher multi_robot.launch.py robots:=robot1,robot2,robot3``
"""

from __future__ import annotations

import re
import shutil
import tempfile
from pathlib import Path
from typing import Any

import yaml
from ament_index_python.packages import get_package_share_directory
from launch import Action, LaunchContext, LaunchDescription
from launch.actions import (
    DeclareLaunchArgument,
    GroupAction,
    IncludeLaunchDescription,
    OpaqueFunction,
    RegisterEventHandler,
)
from launch.event_handlers import OnShutdown
from launch.launch_description_sources import (
    PythonLaunchDescriptionSource,
    load_python_launch_file_as_module,
)
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node, SetRemap

HERE = Path(__file__).resolve().parent
NODE_LAUNCH_FILE = HERE / "joint_tf_publisher.launch.py"
DEMO_LAUNCH_FILE = HERE / "demo.launch.py"
NODE_LAUNCH = load_python_launch_file_as_module(str(NODE_LAUNCH_FILE))
#: Nav2's multi-robot remapping of each robot's nodes: its tf topics into its namespace.
NAMESPACED_TF = (("/tf", "tf"), ("/tf_static", "tf_static"))
#: The launch arguments handed on to each robot's node launch as they are.
PASSED_ON = (
    "model",
    "xacro_args",
    "publish_frequency",
    "ignore_timestamp",
    "use_sim_time",
    "time_offset",
    "static_republish_period",
    "static_union",
)
_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")


def robot_names(text: str) -> list[str]:
    """The ``robots`` argument as namespaces (no leading or trailing ``/``); ValueError for an
    empty list, a repeated name or one that is no valid namespace."""
    names = [name.strip().strip("/") for name in text.split(",") if name.strip().strip("/")]
    if not names:
        raise ValueError("launch argument robots:= names no robot")
    for name in names:
        if not _NAMESPACE.fullmatch(name):
            raise ValueError(f"launch argument robots: {name!r} is no valid namespace")
    if len(set(names)) != len(names):
        raise ValueError(f"launch argument robots: a name is given twice in {text!r}")
    return names


def robot_group(context: LaunchContext, name: str, demo: bool) -> GroupAction:
    """One robot: its node (and demo source) in namespace ``name``, tf remapped into it, the
    global tree's frames prefixed ``<name>/``."""
    arguments = {"namespace": name, "global_frame_prefix": f"{name}/"}
    for argument in PASSED_ON + (("rate",) if demo else ()):
        arguments[argument] = LaunchConfiguration(argument).perform(context)
    launch_file = DEMO_LAUNCH_FILE if demo else NODE_LAUNCH_FILE
    return GroupAction(
        [
            *(SetRemap(src=src, dst=dst) for src, dst in NAMESPACED_TF),
            IncludeLaunchDescription(
                PythonLaunchDescriptionSource(str(launch_file)),
                launch_arguments=arguments.items(),
            ),
        ],
        scoped=True,  # the remappings and arguments stay with this robot
    )


def robots_actions(context: LaunchContext) -> list[Action]:
    """A ``robot_group`` per name of the ``robots`` argument, or with ``one_process`` the
    ``fleet_group`` of them all."""
    names = robot_names(LaunchConfiguration("robots").perform(context))
    demo = NODE_LAUNCH.parse_bool("demo", LaunchConfiguration("demo").perform(context))
    if NODE_LAUNCH.parse_bool("one_process", LaunchConfiguration("one_process").perform(context)):
        return fleet_group(context, names, demo)
    return [robot_group(context, name, demo) for name in names]


def robot_parameters(context: LaunchContext, name: str) -> dict[str, Any]:
    """Robot ``name``'s node parameters as ``robot_group``'s node launch sets them: the
    model's description (xacro expanded), ``global_frame_prefix`` ``<name>/`` and the
    ``PASSED_ON`` arguments given."""
    model_text = LaunchConfiguration("model").perform(context).strip()
    if model_text:
        model = Path(model_text).expanduser()
    else:  # the bundled demo arm, as the node's launch file takes it
        model = Path(get_package_share_directory("joint_tf_publisher")) / "urdf" / "demo_arm.urdf"
    parameters: dict[str, Any] = {
        "robot_description": NODE_LAUNCH.file_text(context, model),
        "global_frame_prefix": f"{name}/",
    }
    for argument in PASSED_ON:
        text = LaunchConfiguration(argument).perform(context).strip()
        if not text or argument in ("model", "xacro_args"):
            continue
        if argument in NODE_LAUNCH.BOOL_ARGUMENTS:
            parameters[argument] = NODE_LAUNCH.parse_bool(argument, text)
        else:
            parameters[argument] = NODE_LAUNCH.parse_float(argument, text)
    return parameters


def fleet_group(context: LaunchContext, names: list[str], demo: bool) -> list[Action]:
    """Every robot's node in one ``joint_tf_fleet`` process: a parameters file with each
    robot's section (``/<name>/joint_tf_publisher``) and the fleet's ``robots``, written to a
    temporary folder removed at shutdown; the same tf remapping (process-wide: every robot's
    node resolves ``tf`` in its namespace); with ``demo`` a demo source per robot."""
    folder = Path(tempfile.mkdtemp(prefix="joint_tf_fleet_"))
    sections: dict[str, Any] = {"/joint_tf_fleet": {"ros__parameters": {"robots": names}}}
    for name in names:
        sections[f"/{name}/joint_tf_publisher"] = {
            "ros__parameters": robot_parameters(context, name)
        }
    params = folder / "fleet.yaml"
    params.write_text(yaml.safe_dump(sections))

    def remove_folder(event: Any, context: LaunchContext) -> None:
        shutil.rmtree(folder, ignore_errors=True)

    actions: list[Action] = [
        RegisterEventHandler(OnShutdown(on_shutdown=remove_folder)),
        GroupAction(
            [
                *(SetRemap(src=src, dst=dst) for src, dst in NAMESPACED_TF),
                # No name or namespace: launch_ros makes them process-wide remappings.
                Node(
                    package="joint_tf_publisher",
                    executable="joint_tf_fleet",
                    output="screen",
                    parameters=[str(params)],
                ),
            ],
            scoped=True,
        ),
    ]
    if demo:
        model = folder / "description.xml"
        model.write_text(robot_parameters(context, names[0])["robot_description"])
        rate = LaunchConfiguration("rate").perform(context)
        actions += [
            Node(
                package="joint_tf_publisher",
                executable="joint-tf-publisher",
                name="joint_state_demo",
                namespace=name,
                arguments=["demo", str(model), "--rate", rate],
                output="screen",
            )
            for name in names
        ]
    return actions


def generate_launch_description() -> LaunchDescription:
    keep = " (empty: the node's default)"
    return LaunchDescription(
        [
            DeclareLaunchArgument(
                "robots",
                default_value="robot1,robot2",
                description="the robots' namespaces, comma-separated; each robot's global "
                "tree frames are <name>/...",
            ),
            DeclareLaunchArgument(
                "model",
                default_value="",
                description="robot model file for every robot: .urdf, .sdf or .xacro "
                "(empty: the bundled demo arm)",
            ),
            DeclareLaunchArgument(
                "xacro_args", default_value="", description="xacro arguments for model"
            ),
            DeclareLaunchArgument(
                "publish_frequency",
                default_value="",
                description="maximum /tf rate per joint, Hz" + keep,
            ),
            DeclareLaunchArgument(
                "ignore_timestamp",
                default_value="",
                description="true: no rate limiting" + keep,
            ),
            DeclareLaunchArgument(
                "use_sim_time",
                default_value="",
                description="true: the nodes' clocks follow /clock" + keep,
            ),
            NODE_LAUNCH.table_argument("time_offset", "; empty: the node's default"),
            NODE_LAUNCH.table_argument("static_republish_period", "; empty: the node's default"),
            NODE_LAUNCH.table_argument("static_union", "; empty: the node's default"),
            DeclareLaunchArgument(
                "demo",
                default_value="true",
                description="true: a demo joint-state source per robot",
            ),
            DeclareLaunchArgument(
                "rate", default_value="50.0", description="joint_states rate of each demo, Hz"
            ),
            DeclareLaunchArgument(
                "one_process",
                default_value="false",
                description="true: every robot's node in one joint_tf_fleet process (one DDS "
                "participant) instead of a process each",
            ),
            OpaqueFunction(function=robots_actions),
        ]
    )
