"""The ``joint-tf-publisher`` command: inspect, draw and run robot descriptions.

A thin dispatcher: each subcommand parses its arguments, loads the model and hands over to
``describe`` (check, fk), ``graph``, ``plot``, ``demo`` (demo, run), ``doctor.command``
(doctor), ``attach`` (attach, detach) or ``bag.command`` (bag repair); the ROS parts are
imported when used. Exit status: 0 on success, 1 for an invalid model (one line
``file:line: message`` on stderr), a failed tool, a bag that cannot be repaired or a problem
``doctor`` found, 2 for bad command-line usage.
"""

from __future__ import annotations

import argparse
import json
import logging
import os
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

from ..description.xmlio import MAX_DESCRIPTION_BYTES
from ..errors import ModelError
from ..robot import Robot
from .arguments import UsageError, add_attachment_options, load_model
from .attach import add_attach_parsers
from .bag.command import add_bag_parser
from .describe import check_report, check_warnings, format_number, pose_record, pose_table
from .doctor.command import add_doctor_parser
from .joint_values import parse_joint_values

PROG = "joint-tf-publisher"

EPILOG_VALUES = (
    "joint values: name=value in rad or m, or with a deg suffix (elbow_joint=90deg); "
    "multi-DOF joints take comma-separated values (planar x,y,theta; floating x,y,z,roll,"
    "pitch,yaw or x,y,z,qx,qy,qz,qw). Mimic joints follow their leader."
)


def read_stdin() -> bytes:
    """Standard input, at most one byte beyond ``MAX_DESCRIPTION_BYTES``: an endless stream
    is then refused by the parser's size check instead of filling memory."""
    return sys.stdin.buffer.read(MAX_DESCRIPTION_BYTES + 1)


def _print_warnings(robot: Robot) -> None:
    for text in robot.warnings:
        print(f"warning: {text}", file=sys.stderr)


def _joint_cfg(robot: Robot, values: Sequence[str]) -> dict[str, Any]:
    try:
        cfg, notes = parse_joint_values(robot, values)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    for note in notes:
        print(f"note: {note}", file=sys.stderr)
    return cfg


# -- subcommands ---------------------------------------------------------------------------


def cmd_check(args: argparse.Namespace) -> int:
    robot = load_model(args)
    ascii_only = args.ascii or not _can_encode(sys.stdout, "└│├")
    sys.stdout.write(check_report(robot, ascii_only=ascii_only))
    return 1 if args.strict and check_warnings(robot) else 0


def cmd_fk(args: argparse.Namespace) -> int:
    robot = load_model(args)
    _print_warnings(robot)
    cfg = _joint_cfg(robot, args.values)
    poses = robot.link_fk(cfg, clamp=args.clamp)
    clamped = _clamped_joints(robot, cfg, args.clamp)
    if clamped:
        print(f"note: clamped to {args.clamp} limits: {', '.join(clamped)}", file=sys.stderr)
    if args.link is not None:
        if args.link not in poses:
            raise UsageError(f"unknown link {args.link!r} in robot {robot.name!r}")
        poses = {args.link: poses[args.link]}
    if args.json:
        document = {
            "robot": robot.name,
            "frame": robot.root,
            "clamp": args.clamp,
            "clamped": clamped,
            "cfg": {name: _jsonable(value) for name, value in cfg.items()},
            "links": {name: pose_record(pose) for name, pose in poses.items()},
        }
        print(json.dumps(document, indent=2))
    else:
        sys.stdout.write(pose_table(poses, robot.root))
    return 0


def cmd_graph(args: argparse.Namespace) -> int:
    from .graph import render_dot, robot_to_dot

    robot = load_model(args)
    _print_warnings(robot)
    dot_text = robot_to_dot(robot)
    if args.output in (None, "-"):
        sys.stdout.write(dot_text)
        return 0
    render_dot(dot_text, Path(args.output))
    print(f"wrote {args.output}: {len(robot.links)} links, {len(robot.joints)} joints")
    return 0


def cmd_plot(args: argparse.Namespace) -> int:
    from .plot import plot_poses

    robot = load_model(args)
    _print_warnings(robot)
    cfg = _joint_cfg(robot, args.values)
    if args.sweep is not None:
        from .sweep import sweep_frames

        if args.sweep < 2:
            raise UsageError(f"--sweep needs at least 2 frames, got {args.sweep}")
        frames = sweep_frames(robot, args.sweep)
        for frame in frames:
            frame.update(cfg)  # values given on the command line hold in every frame
        poses_list = [robot.link_fk(frame, clamp=args.clamp) for frame in frames]
        titles = [f"{100 * k / (len(frames) - 1):.0f}% of range" for k in range(len(frames))]
    else:
        poses_list = [robot.link_fk(cfg, clamp=args.clamp)]
        titles = [_cfg_title(cfg)]
    plot_poses(
        robot,
        poses_list,
        Path(args.output),
        titles,
        labels=args.labels,
        elev=args.elev,
        azim=args.azim,
        dpi=args.dpi,
    )
    print(f"wrote {args.output}: {len(poses_list)} pose(s) of {len(robot.links)} links")
    return 0


def cmd_demo(args: argparse.Namespace) -> int:
    from .demo import run_demo

    robot = load_model(args)
    _print_warnings(robot)
    return run_demo(
        robot,
        rate_hz=args.rate,
        period_s=args.period,
        overshoot=args.overshoot,
        duration_s=args.duration,
        ros_args=args.ros_args,
    )


def cmd_run(args: argparse.Namespace) -> int:
    from .demo import run_with_node

    robot = load_model(args)
    _print_warnings(robot)
    if args.ee is not None and args.ee not in robot.links:
        raise UsageError(f"unknown link {args.ee!r} in robot {robot.name!r}")
    description = (
        args.stdin_bytes.decode("utf-8", errors="replace")
        if args.model == "-"
        else _description_text(args.model)
    )
    return run_with_node(
        robot,
        description,
        rate_hz=args.rate,
        period_s=args.period,
        overshoot=args.overshoot,
        duration_s=args.duration,
        end_effector=args.ee,
        node_params=args.param,
    )


# -- helpers -------------------------------------------------------------------------------


def _description_text(path: str) -> str:
    """The description text for the node's robot_description (xacro expanded)."""
    model_path = Path(path)
    if model_path.suffix == ".xacro":
        from ..description.loader import expand_xacro

        return expand_xacro(model_path)
    return model_path.read_text(encoding="utf-8")


def _clamped_joints(robot: Robot, cfg: dict[str, Any], clamp: str | None) -> list[str]:
    """Joints whose value ``clamp`` changes, by the kinematics (a cfg ignores the values of
    mimic followers, and computed followers are never clamped)."""
    followers = {joint.name for joint in robot.joints.values() if joint.mimic is not None}
    single = {
        name: float(value)
        for name, value in cfg.items()
        if np.ndim(value) == 0 and name not in followers
    }
    if clamp is None or not single:
        return []
    kinematics = robot.kinematics
    update = kinematics.apply(
        kinematics.new_positions(), list(single), list(single.values()), clamp=clamp
    )
    return list(update.clamped)


def _jsonable(value: Any) -> Any:
    return value.tolist() if hasattr(value, "tolist") else value


def _cfg_title(cfg: dict[str, Any]) -> str:
    if not cfg:
        return "zero configuration"
    text = ", ".join(f"{name}={_format_value(value)}" for name, value in cfg.items())
    return text if len(text) <= 90 else text[:87] + "..."


def _format_value(value: Any) -> str:
    values = value.tolist() if hasattr(value, "tolist") else [value]
    return ",".join(format_number(float(v)) for v in values)


def _can_encode(stream: Any, text: str) -> bool:
    try:
        text.encode(getattr(stream, "encoding", None) or "ascii")
    except (UnicodeEncodeError, LookupError):
        return False
    return True


# -- argument parsing ----------------------------------------------------------------------


def _add_model(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "model",
        metavar="MODEL",
        help="robot description: .urdf, .sdf or .xacro file, or - for stdin",
    )
    parser.add_argument(
        "--model-name",
        metavar="NAME",
        help="SDFormat: the <model> to use where the file has several",
    )


def _add_values(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "values", nargs="*", metavar="JOINT=VALUE", help="joint values (others are zero)"
    )
    parser.add_argument(
        "--clamp",
        choices=("hard", "soft"),
        help="clamp values into the hard limits or the safety (soft) limits",
    )


def _add_demo_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--rate",
        type=float,
        default=50.0,
        metavar="HZ",
        help="joint_states publish rate in Hz (default 50)",
    )
    parser.add_argument(
        "--period", type=float, default=8.0, metavar="S", help="sweep period in seconds (default 8)"
    )
    parser.add_argument(
        "--overshoot",
        type=float,
        default=0.1,
        metavar="FRACTION",
        help="how far every second limited joint sweeps beyond its limits, as "
        "a fraction of its range (default 0.1; 0 stays inside)",
    )
    parser.add_argument(
        "--duration",
        type=float,
        default=0.0,
        metavar="S",
        help="stop after S seconds (default 0: until Ctrl-C)",
    )


def build_parser() -> argparse.ArgumentParser:
    """The argument parser of ``joint-tf-publisher`` and its subcommands."""
    parser = argparse.ArgumentParser(
        prog=PROG,
        description="Inspect, draw and run URDF and SDFormat robot descriptions "
        "(no ROS install needed except for demo and run).",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    check = commands.add_parser(
        "check",
        help="validate a model and print its kinematic tree (like check_urdf)",
        description="Validate a robot description and print its tree with joint types, axes, "
        "limits, safety limits and mimic rules, counts and warnings. Exit 0 if "
        "valid, 1 with file:line: message if not.",
    )
    _add_model(check)
    check.add_argument("--ascii", action="store_true", help="draw the tree with ASCII only")
    check.add_argument("--strict", action="store_true", help="exit 1 if there are warnings")
    add_attachment_options(check)
    check.set_defaults(func=cmd_check)

    fk = commands.add_parser(
        "fk",
        help="link poses in the root frame at a configuration",
        description="Forward kinematics: pose (xyz in m, rpy in rad, quaternion x y z w) of "
        "every link, or of one, in the root link frame.",
        epilog=EPILOG_VALUES,
    )
    _add_model(fk)
    _add_values(fk)
    fk.add_argument("--link", metavar="NAME", help="print only this link")
    fk.add_argument("--json", action="store_true", help="machine-readable output")
    add_attachment_options(fk)
    fk.set_defaults(func=cmd_fk)

    add_attach_parsers(commands)

    graph = commands.add_parser(
        "graph",
        help="draw the tree with Graphviz (svg, png, pdf or dot)",
        description="The kinematic tree as a graph: links as nodes, joints as edges labelled "
        "with type, axis, limits and mimic. Rendering needs Graphviz's dot "
        "(Debian: apt-get install graphviz); .dot output does not.",
    )
    _add_model(graph)
    graph.add_argument(
        "-o",
        "--output",
        metavar="FILE",
        help="tree.svg, tree.png, tree.pdf or tree.dot (default: DOT on stdout)",
    )
    graph.set_defaults(func=cmd_graph)

    plot = commands.add_parser(
        "plot",
        help="3D picture of the skeleton at a configuration (matplotlib)",
        description="Draw the robot's skeleton: link origins as points, joints as segments "
        "coloured by type, RGB axes at each link frame.",
        epilog=EPILOG_VALUES,
    )
    _add_model(plot)
    _add_values(plot)
    plot.add_argument(
        "-o",
        "--output",
        default="pose.png",
        metavar="FILE",
        help="picture file, format from the suffix: png, svg, pdf (default pose.png)",
    )
    plot.add_argument(
        "--sweep",
        type=int,
        nargs="?",
        const=5,
        metavar="N",
        help="a strip of N poses (default 5) from every joint's lower limit to its upper limit",
    )
    plot.add_argument(
        "--labels",
        action=argparse.BooleanOptionalAction,
        default=None,
        help="write link names (default: for small robots)",
    )
    plot.add_argument("--elev", type=float, default=25.0, help="view elevation in degrees")
    plot.add_argument("--azim", type=float, default=-60.0, help="view azimuth in degrees")
    plot.add_argument("--dpi", type=int, default=100, help="resolution (default 100)")
    plot.set_defaults(func=cmd_plot)

    demo = commands.add_parser(
        "demo",
        help="publish joint_states sweeping every joint (needs rclpy)",
        description="A joint-state source: sweeps every moving joint through its limits "
        "(sine), mimic joints following their leader, and publishes "
        "sensor_msgs/JointState on joint_states. ROS arguments may follow "
        "--ros-args (e.g. -p rate:=20).",
    )
    _add_model(demo)
    _add_demo_options(demo)
    demo.set_defaults(func=cmd_demo)

    run = commands.add_parser(
        "run",
        help="start the node with the demo source and show live status (needs rclpy)",
        description="Start the joint_tf_publisher node on MODEL, feed it the demo's "
        "joint_states and show a live status line: JointState sent/s, /tf "
        "received/s, clamped joints, end-effector pose. Ctrl-C stops both.",
    )
    _add_model(run)
    _add_demo_options(run)
    run.add_argument(
        "--ee",
        metavar="LINK",
        help="end-effector link shown in the status (default: the deepest link)",
    )
    run.add_argument(
        "--param",
        action="append",
        default=[],
        metavar="NAME:=VALUE",
        help="extra node parameter, e.g. --param publish_frequency:=20",
    )
    run.set_defaults(func=cmd_run)

    add_doctor_parser(commands)
    add_bag_parser(commands)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of ``joint-tf-publisher``; returns the exit status."""
    arguments = list(sys.argv[1:] if argv is None else argv)
    ros_args: list[str] = []
    if "--ros-args" in arguments:
        split = arguments.index("--ros-args")
        arguments, ros_args = arguments[:split], arguments[split:]
    parser = build_parser()
    args, extra = parser.parse_known_args(arguments)
    # Joint values may also follow options (plot MODEL -o x.png elbow=1): argparse leaves them.
    if extra and hasattr(args, "values") and all("=" in a and a[0] != "-" for a in extra):
        args.values = [*args.values, *extra]
    elif extra:
        parser.error(f"unrecognized arguments: {' '.join(extra)}")
    args.ros_args = ros_args
    args.stdin_bytes = read_stdin() if getattr(args, "model", None) == "-" else b""
    # Model warnings are printed by the commands themselves, not also through logging; the
    # level is restored after, for callers of main() in a longer-lived process (tests).
    logger = logging.getLogger("joint_tf_publisher")
    saved_level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        return _dispatch(parser, args)
    finally:
        logger.setLevel(saved_level)


def _dispatch(parser: argparse.ArgumentParser, args: argparse.Namespace) -> int:
    """Run the chosen subcommand; turn expected failures into one line and an exit status."""
    try:
        status = int(args.func(args))
        sys.stdout.flush()  # buffered output (no PYTHONUNBUFFERED) meets a gone reader here
        return status
    except ModelError as exc:
        print(str(exc), file=sys.stderr)
        return 1
    except UsageError as exc:
        parser.exit(2, f"{PROG} {args.command}: error: {exc}\n")
    except ImportError as exc:  # rclpy or a message package, for demo and run
        print(
            f"{PROG} {args.command}: error: cannot import {exc.name or exc}: this command "
            "needs ROS 2 Python packages (a sourced ROS 2, or the project's .venv)",
            file=sys.stderr,
        )
        return 1
    except BrokenPipeError:
        # Output piped into a reader that stopped (| head): quiet, as Unix tools are.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except (RuntimeError, OSError, ValueError) as exc:
        print(f"{PROG} {args.command}: error: {exc}", file=sys.stderr)
        return 1
    except KeyboardInterrupt:
        return 130


if __name__ == "__main__":
    sys.exit(main())
