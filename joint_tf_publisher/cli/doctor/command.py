"""``joint-tf-publisher doctor``: listen to a running system, say what is wrong and what to do.

Joins the ROS listening (``listener``, imported when the command runs) to the rclpy-free
analysis (``analysis``) and its report (``report``); with ``--bag`` a recording is read
instead (``recording``, no ROS). Exit status: 0 when
healthy, 1 when a problem is found, 2 for a bad command line (``main``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ...errors import ModelError
from ...model.elements import RobotModel
from ...robot import Robot
from ..arguments import UsageError, load_model
from ..bag.command import add_namespace_option, checked_namespace
from .analysis import DEFAULT_LAG_S, diagnose
from .observation import DiagnosticRecord, HeardTransform, Observation, is_healthy
from .report import json_report, text_report

if TYPE_CHECKING:
    from .listener import Heard

#: Default of ``--seconds``: a few 1 Hz diagnostics reports (discovery is waited for first).
DEFAULT_SECONDS = 3.0


def node_name(text: str) -> str:
    """A node name as given on the command line, fully qualified (``name`` -> ``/name``)."""
    name = text if text.startswith("/") else "/" + text
    if name.endswith("/") or "//" in name or " " in name:
        raise ValueError(f"not a node name: {text!r}")
    return name


def observation_of(
    heard: Heard, robot: RobotModel | None, source: str, frame_prefix: str | None
) -> Observation:
    """The analysis's view of what the listening heard, checked against ``robot`` (the
    description given, or else the state publisher's, or the topic's)."""
    setup = heard.setup
    if robot is None:
        text = setup.description if setup is not None and setup.description else heard.description
        source = f"{setup.node} robot_description" if setup is not None else "robot_description"
        robot = load_text(text, source) if text else None
    if frame_prefix is None:
        frame_prefix = setup.frame_prefix if setup is not None else ""
    return Observation(
        listened_s=round(heard.listened_s, 3),
        now_ns=heard.now_ns,
        transforms=[
            HeardTransform(parent, child, static, newest_ns, publisher, count)
            for (parent, child, static, publisher), (newest_ns, count) in heard.transforms.items()
        ],
        statuses=[
            DiagnosticRecord(name, level, message, hardware_id, values)
            for name, level, message, hardware_id, values in sorted(heard.statuses.values())
        ],
        clock_ns=heard.clock_ns,
        clock_publishers=heard.clock_publishers,
        robot=robot,
        description_source=source if robot is not None else "",
        frame_prefix=frame_prefix,
        excluded_joints=setup.excluded_joints if setup is not None else (),
        joint_state_topic=heard.joint_state_topic,
        joint_state_publishers=heard.joint_state_publishers,
        sim_time_nodes=heard.sim_time_nodes,
        union_nodes=heard.union_nodes,
        silent_node=heard.silent_node,
        unasked_nodes=heard.unasked_nodes,
    )


def load_text(text: str, source: str) -> RobotModel | None:
    """The robot of a description heard; None with a warning on stderr if it does not load."""
    try:
        return Robot.from_xml_string(text, source=source)
    except ModelError as exc:
        print(f"warning: the description heard does not load: {exc}", file=sys.stderr)
        return None


def run_doctor(
    robot: RobotModel | None,
    source: str,
    node: str | None,
    seconds: float,
    lag_s: float,
    frame_prefix: str | None,
    as_json: bool,
    ros_args: list[str],
) -> int:
    """Listen, diagnose, print; 0 when healthy, 1 when a problem is found."""
    from .listener import DoctorTarget, listen

    target = DoctorTarget(node=node, description_given=robot is not None)
    heard = listen(seconds, target, ros_args)
    observation = observation_of(heard, robot, source, frame_prefix)
    findings = diagnose(observation, lag_s)
    report = json_report if as_json else text_report
    sys.stdout.write(report(observation, findings) + ("\n" if as_json else ""))
    return 0 if is_healthy(findings) else 1


def cmd_doctor(args: argparse.Namespace) -> int:
    """``doctor``: check the options, load the description if given, listen and report."""
    if args.description is not None:
        if args.model is not None:
            raise UsageError("give the description once: MODEL or --description")
        args.model = args.description
    if args.bag is not None:
        return cmd_doctor_bag(args)
    if args.namespace or args.params is not None:
        raise UsageError(
            "--namespace and --params are for --bag (a live node's namespace and parameters "
            "come with --node)"
        )
    if args.seconds <= 0.0 or args.lag <= 0.0:
        raise UsageError("--seconds and --lag must be positive")
    try:
        node = node_name(args.node) if args.node is not None else None
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    robot = None
    if args.model is not None:
        robot = load_model(args)
        for text in robot.warnings:
            print(f"warning: {text}", file=sys.stderr)
    return run_doctor(
        robot,
        "<stdin>" if args.model == "-" else str(args.model),
        node,
        args.seconds,
        args.lag,
        args.frame_prefix,
        args.json,
        args.ros_args,
    )


def cmd_doctor_bag(args: argparse.Namespace) -> int:
    """``doctor --bag IN``: the findings over a recording (``recording``), no ROS needed."""
    from .recording import run_bag_doctor

    robot = None
    if args.model is not None:
        robot = load_model(args)
        for text in robot.warnings:
            print(f"warning: {text}", file=sys.stderr)
    status, report = run_bag_doctor(
        Path(args.bag),
        robot,
        "<stdin>" if args.model == "-" else str(args.model or ""),
        args.frame_prefix,
        args.json,
        checked_namespace(args.namespace),
        None if args.params is None else Path(args.params),
    )
    sys.stdout.write(report)
    return status


def add_doctor_parser(commands: Any) -> None:
    """The ``doctor`` subcommand's parser, added to ``commands`` (argparse subparsers)."""
    doctor = commands.add_parser(
        "doctor",
        help="listen to a running system and say why frames are missing or wrong (needs rclpy)",
        description="Listen a few seconds to /tf, /tf_static, /clock, /diagnostics and the "
        "robot description, and say in plain words what is wrong, most serious first, each "
        "with its likely cause and the fix: description frames absent from TF (and the "
        "joint that moves each), frames published twice or with two parents, lagging "
        "frames, stamps of another clock, use_sim_time without /clock, a TF graph split "
        "into several trees, and what /diagnostics reports. Exit 0 when healthy, 1 when a "
        "problem is found.",
    )
    doctor.add_argument(
        "model",
        nargs="?",
        metavar="MODEL",
        help="robot description to check the frames against (.urdf, .sdf, .xacro or -); "
        "default: the robot_description of --node, else of the robot_description topic",
    )
    doctor.add_argument(
        "--model-name",
        metavar="NAME",
        help="SDFormat: the <model> to use where the file has several",
    )
    doctor.add_argument(
        "--node",
        metavar="NAME",
        help="the state publisher's node (e.g. /joint_tf_publisher): its robot_description, "
        "frame_prefix, exclude_joints and namespace (its joint_states) are used",
    )
    doctor.add_argument(
        "--seconds",
        type=float,
        default=DEFAULT_SECONDS,
        metavar="S",
        help=f"how long to listen (default {DEFAULT_SECONDS:g})",
    )
    doctor.add_argument(
        "--lag",
        type=float,
        default=DEFAULT_LAG_S,
        metavar="S",
        help="a /tf frame whose newest stamp is older than the newest by more than S seconds "
        f"is lagging (default {DEFAULT_LAG_S:g})",
    )
    doctor.add_argument(
        "--frame-prefix",
        metavar="PREFIX",
        help="prefix of the robot's frames (default: the node's frame_prefix, else none)",
    )
    doctor.add_argument(
        "--bag",
        metavar="IN",
        help="diagnose a recording instead of the running system (a rosbag2 folder, .db3 or "
        ".mcap; needs rosbags): its /tf_static, joint states, clocks and description; "
        "each fix that is a repair names the `bag repair` command",
    )
    doctor.add_argument(
        "--description",
        metavar="FILE",
        help="the robot's description (as MODEL); with --bag, compared with the recording's",
    )
    add_namespace_option(doctor)
    doctor.add_argument(
        "--params",
        metavar="YAML",
        help="with --bag: the node's parameters file (its source_list topics are joint states "
        "too, its frame_prefix the robot's; the suggested repair carries it)",
    )
    doctor.add_argument("--json", action="store_true", help="machine-readable output")
    doctor.set_defaults(func=cmd_doctor)
