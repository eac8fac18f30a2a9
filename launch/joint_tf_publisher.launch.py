"""Start joint_tf_publisher on a robot model: a drop-in for robot_state_publisher's launch files.

Arguments (``ros2 launch joint_tf_publisher joint_tf_publisher.launch.py -s`` lists them):

- ``model``: a .urdf, .sdf or .xacro file. A .xacro file (or any file when ``xacro_args`` is
  given) is expanded with xacro. Default: the bundled ``urdf/demo_arm.urdf``, unless
  ``params_file`` is given: then the description is the file's (or, with
  ``description_from_topic: true`` there, the robot_description topic's).
- ``xacro_args``: xacro arguments, ``"name:=value name2:=value2"`` (of ``model`` or
  ``description_file``).
- ``robot_description``: the description text itself; when given, ``model`` is not read.
- ``description_file``: a .urdf, .sdf or .xacro file the node reads itself (its
  ``description_file`` parameter, ``xacro_args`` its ``description_args``) and loads again
  within a second of each save: edit the file, see the change (with ``rviz:=true``) without
  relaunching. Instead of ``model`` and ``robot_description`` (which pass the text, read
  once here, as robot_state_publisher's launch files do).
- ``node_name``: the node's name (default ``joint_tf_publisher``); ``robot_state_publisher``
  lets tools that ask that node for ``robot_description`` (gz_ros2_control) find it.
- ``namespace``: the node's namespace (its ``joint_states`` and ``robot_description`` follow).
- ``params_file``: a ROS 2 parameters file (e.g. the package's
  ``config/joint_tf_publisher.yaml``), applied first.
- ``publish_frequency``, ``ignore_timestamp``, ``use_sim_time``, ``frame_prefix``,
  ``global_frame_prefix`` (the global tree's, for several robots: ``multi_robot.launch.py``),
  ``model_name`` (SDFormat: the ``<model>`` to publish), ``time_offset`` (seconds added to
  joint-state stamps, REP 138), ``static_republish_period`` (seconds between republications
  of /tf_static, for bridges and recorders), ``static_union`` (``true``: every /tf_static
  publisher's statics in the node's one latched message): the node parameters of these names.
  Left empty (the default) they keep the value of ``params_file``, else the node's default;
  given, they override ``params_file``.
- ``remote_frames``: links for a viewer on another machine, ``"base_link tool0"`` (spaces or
  commas): the node's ``remote.frames`` (its remote output on ``remote/tf`` and
  ``remote/tf_static``, docs/ros.md "Remote viewers"). Empty (the default) keeps
  ``params_file``'s, else none.
- ``rviz``: ``true`` also starts RViz (``rviz2``, an optional dependency) with the package's
  ``config/joint_tf_publisher.rviz`` (grid, robot model from ``robot_description``, tf frames
  with their names), its fixed frame the description's root link with ``frame_prefix`` in
  front, as urdf_launch's ``display.launch.py`` offers. Default ``false``.

Example: ``ros2 launch joint_tf_publisher joint_tf_publisher.launch.py
model:=robot.urdf.xacro xacro_args:="prefix:=left_ use_gripper:=true" frame_prefix:=r1/``

``demo.launch.py`` reuses ``declare_arguments`` and ``node_actions`` of this file.
"""

from __future__ import annotations

import os
import shlex
from pathlib import Path

from ament_index_python.packages import (
    PackageNotFoundError,
    get_package_prefix,
    get_package_share_directory,
)
from launch import Action, LaunchContext, LaunchDescription
from launch.actions import DeclareLaunchArgument, OpaqueFunction
from launch.substitutions import LaunchConfiguration
from launch_ros.actions import Node

PACKAGE = "joint_tf_publisher"
EXECUTABLE = "joint_tf_publisher"
DEFAULT_NODE_NAME = "joint_tf_publisher"
#: RViz: package, executable and the view it opens (in this package's share folder).
RVIZ_PACKAGE = "rviz2"
RVIZ_EXECUTABLE = "rviz2"
RVIZ_CONFIG = ("config", "joint_tf_publisher.rviz")
#: The RViz view reads the description here; remapped into the node's namespace.
RVIZ_DESCRIPTION_TOPIC = "/robot_description"
RVIZ_MISSING = (
    "rviz:=true needs rviz2, an optional dependency that is not installed: "
    "sudo apt install ros-$ROS_DISTRO-rviz2, or "
    "JOINT_TF_PUBLISHER_RVIZ=true rosdep install --from-paths src --ignore-src"
)
TRUE_TEXTS = ("true", "1", "yes", "on")
FALSE_TEXTS = ("false", "0", "no", "off")
#: The arguments that set the node parameter of their name when given, as what they hold.
NUMBER_ARGUMENTS = ("publish_frequency", "time_offset", "static_republish_period")
BOOL_ARGUMENTS = ("ignore_timestamp", "use_sim_time", "static_union")
TEXT_ARGUMENTS = ("frame_prefix", "global_frame_prefix", "model_name")
#: What an empty parameter argument means, ending its description.
KEEP = "; empty: the value in params_file, else the node's default"


def table_argument(name: str, keep: str = KEEP) -> DeclareLaunchArgument:
    """The launch argument of node parameter ``name``: empty by default (``keep`` says what
    that means), described as the node's parameter table (``PARAMETERS``) describes it, with
    the node's default."""
    from joint_tf_publisher.node_core.parameters import PARAMETERS_BY_NAME

    spec = PARAMETERS_BY_NAME[name]
    return DeclareLaunchArgument(
        name,
        default_value="",
        description=f"{spec.description} (node default {spec.default})" + keep,
    )


def declare_arguments() -> list[DeclareLaunchArgument]:
    """The launch arguments of this file, with their defaults and descriptions."""
    keep = KEEP
    return [
        DeclareLaunchArgument(
            "model",
            default_value="",
            description="robot model file: .urdf, .sdf or .xacro (xacro is expanded); "
            "empty: the bundled demo arm, or with params_file that file's description",
        ),
        DeclareLaunchArgument(
            "xacro_args",
            default_value="",
            description='xacro arguments for model, e.g. "prefix:=left_ use_gripper:=true"',
        ),
        DeclareLaunchArgument(
            "robot_description",
            default_value="",
            description="the URDF or SDFormat text itself (then model is not read)",
        ),
        DeclareLaunchArgument(
            "description_file",
            default_value="",
            description="a .urdf, .sdf or .xacro file the node reads itself and loads again "
            "when it is saved (edit and see); instead of model and robot_description",
        ),
        DeclareLaunchArgument(
            "node_name",
            default_value=DEFAULT_NODE_NAME,
            description="node name; robot_state_publisher for tools that ask that node",
        ),
        DeclareLaunchArgument("namespace", default_value="", description="node namespace"),
        DeclareLaunchArgument(
            "params_file",
            default_value="",
            description="ROS 2 parameters file, applied before the arguments",
        ),
        DeclareLaunchArgument(
            "publish_frequency",
            default_value="",
            description="maximum /tf rate per joint, Hz (node default 20.0)" + keep,
        ),
        DeclareLaunchArgument(
            "ignore_timestamp",
            default_value="",
            description="true: no rate limiting (node default false)" + keep,
        ),
        DeclareLaunchArgument(
            "use_sim_time",
            default_value="",
            description="true: the node clock follows /clock (default false)" + keep,
        ),
        DeclareLaunchArgument(
            "frame_prefix",
            default_value="",
            description="text prepended to every frame id, e.g. r1/" + keep,
        ),
        DeclareLaunchArgument(
            "global_frame_prefix",
            default_value="",
            description="non-empty: also the global tree on the absolute /tf and /tf_static, "
            "frames with this prefix, e.g. robot1/" + keep,
        ),
        DeclareLaunchArgument(
            "model_name",
            default_value="",
            description="SDFormat: the <model> to publish where the file has several" + keep,
        ),
        table_argument("time_offset"),
        table_argument("static_republish_period"),
        table_argument("static_union"),
        DeclareLaunchArgument(
            "remote_frames",
            default_value="",
            description="links of the remote output (remote.frames: each relative to its "
            'nearest listed ancestor, on remote/tf), e.g. "base_link tool0"' + keep,
        ),
        DeclareLaunchArgument(
            "rviz",
            default_value="false",
            description="true: also start RViz (rviz2) on the robot and its frames",
        ),
    ]


def parse_bool(name: str, text: str) -> bool:
    """A launch argument's ``true``/``false`` text as a bool; ValueError naming it otherwise."""
    folded = text.strip().lower()
    if folded in TRUE_TEXTS:
        return True
    if folded in FALSE_TEXTS:
        return False
    raise ValueError(f"launch argument {name}:={text!r} is not true or false")


def parse_float(name: str, text: str) -> float:
    """A launch argument's number text as a float; ValueError naming it otherwise."""
    try:
        return float(text)
    except ValueError:
        raise ValueError(f"launch argument {name}:={text!r} is not a number") from None


def parse_xacro_args(text: str) -> dict[str, str]:
    """``"name:=value other:='a b'"`` (shell quoting) as xacro's mappings ``{name: value}``."""
    mappings: dict[str, str] = {}
    for item in shlex.split(text):
        name, separator, value = item.partition(":=")
        if not separator or not name:
            raise ValueError(f"xacro_args: {item!r} is not name:=value")
        mappings[name] = value
    return mappings


def expand_xacro(model: Path, mappings: dict[str, str]) -> str:
    """The URDF text xacro makes of ``model`` with the arguments ``mappings``."""
    import xacro

    return str(xacro.process_file(str(model), mappings=mappings).toxml())


def description_file(context: LaunchContext) -> Path | None:
    """The ``description_file`` the node is to read itself (``~`` expanded, absolute), None
    when not given; ValueError when ``model`` or ``robot_description`` is given too."""
    text = LaunchConfiguration("description_file").perform(context).strip()
    if not text:
        return None
    for other in ("model", "robot_description"):
        if LaunchConfiguration(other).perform(context).strip():
            raise ValueError(
                f"launch arguments description_file and {other} both give the robot "
                "description: give one of them"
            )
    return Path(os.path.expanduser(text)).absolute()


def model_path(context: LaunchContext) -> Path | None:
    """The ``model`` file (``~`` expanded); if not given, the bundled demo arm, or None when
    ``description_file`` or ``params_file`` is given (the description is theirs)."""
    text = LaunchConfiguration("model").perform(context).strip()
    if text:
        return Path(os.path.expanduser(text))
    if description_file(context) is not None:
        return None
    if LaunchConfiguration("params_file").perform(context).strip():
        return None
    return Path(get_package_share_directory(PACKAGE)) / "urdf" / "demo_arm.urdf"


def uses_model_file_as_is(context: LaunchContext) -> bool:
    """True when the description is the ``model`` file's text unchanged (no xacro, no text)."""
    model = model_path(context)
    return (
        not LaunchConfiguration("robot_description").perform(context).strip()
        and model is not None
        and model.suffix != ".xacro"
        and not LaunchConfiguration("xacro_args").perform(context).strip()
    )


def description_text(context: LaunchContext) -> str:
    """The description text the node gets: ``robot_description``, else ``model``'s
    (``file_text``); "" for neither (``description_file`` or ``params_file`` gives it)."""
    text = LaunchConfiguration("robot_description").perform(context)
    if text.strip():
        return text
    model = model_path(context)
    return "" if model is None else file_text(context, model)


def file_text(context: LaunchContext, path: Path) -> str:
    """``path``'s description: xacro expanded (with ``xacro_args``) for a .xacro file or
    when ``xacro_args`` is given, else the file's text."""
    xacro_args = LaunchConfiguration("xacro_args").perform(context)
    if path.suffix == ".xacro" or xacro_args.strip():
        return expand_xacro(path, parse_xacro_args(xacro_args))
    return path.read_text(encoding="utf-8")


def viewed_description(context: LaunchContext) -> str:
    """The description as the tools started beside the node read it once at launch (RViz's
    fixed frame, the demo's joint-state source): ``description_text``, else the
    ``description_file``'s text now; "" where there is none or the file cannot be read
    (the node then says why)."""
    path = description_file(context)
    if path is None:
        return description_text(context)
    try:
        return file_text(context, path)
    except Exception:  # unreadable, or xacro failed (it raises many types): the node says why
        return ""


def node_parameters(context: LaunchContext) -> list[object]:
    """The node's ``parameters``: ``params_file`` first, then the arguments given."""
    params_file = LaunchConfiguration("params_file").perform(context).strip()
    parameters: list[object] = [os.path.expanduser(params_file)] if params_file else []
    overrides: dict[str, object] = {}
    description = description_text(context)
    if description:
        overrides["robot_description"] = description
    path = description_file(context)
    if path is not None:
        overrides["description_file"] = str(path)
        xacro_args = LaunchConfiguration("xacro_args").perform(context)
        if xacro_args.strip():
            mappings = parse_xacro_args(xacro_args)
            overrides["description_args"] = [f"{name}:={value}" for name, value in mappings.items()]
    for name in NUMBER_ARGUMENTS + BOOL_ARGUMENTS + TEXT_ARGUMENTS:
        text = LaunchConfiguration(name).perform(context)
        if not text.strip():
            continue
        if name in NUMBER_ARGUMENTS:
            overrides[name] = parse_float(name, text)
        elif name in BOOL_ARGUMENTS:
            overrides[name] = parse_bool(name, text)
        else:
            overrides[name] = text
    remote_frames = LaunchConfiguration("remote_frames").perform(context)
    if remote_frames.strip():
        overrides["remote.frames"] = remote_frames.replace(",", " ").split()
    parameters.append(overrides)
    return parameters


def node_actions(context: LaunchContext) -> list[Action]:
    """The joint_tf_publisher node, configured by this file's launch arguments; with
    ``rviz:=true``, RViz beside it (``rviz_actions``)."""
    parameters = node_parameters(context)
    namespace = LaunchConfiguration("namespace").perform(context)
    actions: list[Action] = [
        Node(
            package=PACKAGE,
            executable=EXECUTABLE,
            name=LaunchConfiguration("node_name").perform(context),
            namespace=namespace,
            output="screen",
            parameters=parameters,
        )
    ]
    if parse_bool("rviz", LaunchConfiguration("rviz").perform(context)):
        actions += rviz_actions(context, viewed_description(context), namespace)
    return actions


def root_frame(context: LaunchContext, description: str) -> str | None:
    """``frame_prefix`` + the root link of ``description`` (the node's, read by the package's
    own parser, its warnings left to the node); None without a description (it comes from
    ``params_file`` or the topic) or when it does not load (the node then says why)."""
    if not description.strip():
        return None
    from joint_tf_publisher import Robot
    from joint_tf_publisher.errors import LOGGER, ModelError

    model_name = LaunchConfiguration("model_name").perform(context).strip() or None
    disabled, LOGGER.disabled = LOGGER.disabled, True  # the node logs the warnings
    try:
        root = Robot.from_xml_string(description, "robot_description", model_name).root
    except ModelError:
        return None
    finally:
        LOGGER.disabled = disabled
    return LaunchConfiguration("frame_prefix").perform(context) + root


def rviz_actions(context: LaunchContext, description: str, namespace: str) -> list[Action]:
    """RViz with the package's view: ``-d`` its config, ``-f`` the fixed frame (``root_frame``;
    without one, the config's), the view's ``/robot_description`` remapped to the node's
    namespace, and ``use_sim_time`` when given. Without rviz2, a RuntimeError saying how to
    install it, raised before the launch starts any process."""
    try:
        get_package_prefix(RVIZ_PACKAGE)
    except PackageNotFoundError:
        raise RuntimeError(RVIZ_MISSING) from None
    config = Path(get_package_share_directory(PACKAGE)).joinpath(*RVIZ_CONFIG)
    arguments = ["-d", str(config)]
    fixed_frame = root_frame(context, description)
    if fixed_frame is not None:
        arguments += ["-f", fixed_frame]
    ros_arguments: list[str] = []
    if namespace.strip("/"):
        topic = f"/{namespace.strip('/')}{RVIZ_DESCRIPTION_TOPIC}"
        ros_arguments += ["-r", f"{RVIZ_DESCRIPTION_TOPIC}:={topic}"]
    use_sim_time = LaunchConfiguration("use_sim_time").perform(context).strip()
    if use_sim_time:
        flag = str(parse_bool("use_sim_time", use_sim_time)).lower()
        ros_arguments += ["-p", f"use_sim_time:={flag}"]
    return [
        Node(
            package=RVIZ_PACKAGE,
            executable=RVIZ_EXECUTABLE,
            output="screen",
            arguments=arguments,
            ros_arguments=ros_arguments,
        )
    ]


def generate_launch_description() -> LaunchDescription:
    return LaunchDescription([*declare_arguments(), OpaqueFunction(function=node_actions)])
