"""``joint-tf-publisher bag repair IN -o OUT``: the command line of ``repair``.

Exit status: 0 the output was written; 1 the input cannot be repaired (a missing, broken or
unreadable bag, a description that does not load, nothing to compute the TF from, rosbags
not installed), one line on stderr saying why and what to do; 2 a bad command line (an
output that exists without ``--force``, an unknown option); 130 Ctrl-C, 143 SIGTERM, each
after the same clean-up (``terminate_as_exit``; a stop while ``--force`` removes the old bag,
after the new one has OUT's name, with a warning naming what is left of it). Never a
traceback, never a half-written output under the output's name.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import Any

from ...node_core.parameters import ParameterRejected, parse_description_args
from ..arguments import UsageError
from .errors import BagError
from .reader import bag_location
from .repair import RepairOptions, run_repair
from .settings import STORAGES
from .stops import terminate_as_exit
from .topics import robot_topics
from .writer import checked_output


def cmd_bag_repair(args: argparse.Namespace) -> int:
    """``bag repair``: check the command line, repair, print the summary."""
    output = Path(args.output)
    try:  # the input named however it is (a bag or its file): never written over
        checked_output(bag_location(Path(args.input)), output)
    except BagError as exc:
        print(f"joint-tf-publisher bag repair: error: {exc}", file=sys.stderr)
        return 1
    if output.exists() and not args.force:
        raise UsageError(f"{output} exists: give another output or --force to replace it")
    try:
        description_args = parse_description_args(args.description_args)
    except ParameterRejected as exc:
        raise UsageError(f"--description-args: {exc}") from None
    if description_args and args.description is None:
        raise UsageError("--description-args needs --description")
    options = RepairOptions(
        source=Path(args.input),
        output=output,
        force=args.force,
        storage=args.storage,
        description=None if args.description is None else Path(args.description),
        description_args=description_args,
        params=None if args.params is None else Path(args.params),
        static_republish_period=args.static_republish_period,
        static_union=args.static_union,
        namespace=checked_namespace(args.namespace),
    )
    try:
        with terminate_as_exit():
            summary = run_repair(options)
    except BagError as exc:
        print(f"joint-tf-publisher bag repair: error: {exc}", file=sys.stderr)
        return 1
    print(summary.line())
    return 0


def add_bag_parser(commands: Any) -> None:
    """The ``bag`` subcommand (with ``repair``), added to ``commands`` (argparse subparsers)."""
    bag = commands.add_parser(
        "bag",
        help="rebuild a recording's /tf and /tf_static from its joint states (needs rosbags)",
        description="Work on rosbag2 recordings (sqlite3 or MCAP) without ROS: see "
        "docs/recordings.md. `doctor --bag IN` says what is wrong with a recording's TF.",
    )
    actions = bag.add_subparsers(dest="bag_command", required=True, metavar="ACTION")
    repair = actions.add_parser(
        "repair",
        help="write a new bag whose robot TF is what joint_tf_publisher publishes live",
        description="Write OUT, a copy of the bag IN whose robot TF is computed from its "
        "joint states by joint_tf_publisher's own engine: one /tf message per JointState at "
        "its log time, the complete static set on /tf_static (reliable, transient local) at "
        "the start, at each description change and every static_republish_period; other "
        "publishers' /tf kept and their static frames merged into each /tf_static message; "
        "every other topic copied byte for byte. IN is never changed. Exit 0 written, 1 the "
        "input cannot be repaired, 2 bad command line.",
    )
    repair.add_argument("input", metavar="IN", help="bag folder, or a .db3 or .mcap file")
    repair.add_argument(
        "-o", "--output", required=True, metavar="OUT", help="the new bag (a folder)"
    )
    repair.add_argument("--force", action="store_true", help="replace OUT if it exists")
    repair.add_argument(
        "--storage", choices=STORAGES, help="storage of OUT (default: the same as IN)"
    )
    repair.add_argument(
        "--description",
        metavar="FILE",
        help="the robot's description (.urdf, .sdf, .xacro), over the bag's /robot_description",
    )
    repair.add_argument(
        "--description-args",
        nargs="+",
        default=[],
        metavar="NAME:=VALUE",
        help="xacro arguments for --description",
    )
    repair.add_argument(
        "--params",
        metavar="YAML",
        help="the node's parameters file (frame_prefix, zeros, clamp, source_list, "
        "time_offset, attachments, static_republish_period, publish_frequency...)",
    )
    repair.add_argument(
        "--static-republish-period",
        type=float,
        metavar="S",
        help="write the static set again every S seconds of log time, so playback from the "
        "middle (--start-offset) and split files find it (over --params)",
    )
    repair.add_argument(
        "--static-union",
        action="store_true",
        default=None,
        help="write on /tf_static the union of every recorded publisher's statics, kept per "
        "child frame as the node's static_union keeps them (newest per frame, a conflict's "
        "first publisher kept and reported, a cap, hostile frames refused and counted): at "
        "the start, at each change and every static_republish_period (over --params' "
        "static_union)",
    )
    add_namespace_option(repair)
    repair.set_defaults(func=cmd_bag_repair)


def add_namespace_option(parser: argparse.ArgumentParser) -> None:
    """``--namespace NS``, for the repair and ``doctor --bag``."""
    parser.add_argument(
        "--namespace",
        default="",
        metavar="NS",
        help="the namespace the robot's node ran in: its joint_states, robot_description and "
        "relative source_list topics under NS; its tf under NS where the recording has NS/tf "
        "or NS/tf_static (Nav2's multi-robot layout), else /tf (default: the root)",
    )


def checked_namespace(text: str) -> str:
    """``--namespace`` as given, or a UsageError saying why it is no namespace."""
    try:
        robot_topics(text)
    except ValueError as exc:
        raise UsageError(f"--namespace: {exc}") from None
    return text
