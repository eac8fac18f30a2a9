"""``joint-tf-publisher attach`` and ``detach``: hang a description from a running node's
robot (or swap the one of that name), or take it off, in one call of the node's
``~/set_attachments`` service. What to send is worked out here (rclpy-free); the call is
``ros.attachment_client`` (imported when a command runs).
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from ..description.compose import Attachment
from ..description.paths import expand_user
from ..node_core.parameters import ATTACHMENTS, parameter_name
from .arguments import ATTACH_FORM, UsageError, parse_attach

#: The node's default full name.
DEFAULT_NODE = "/joint_tf_publisher"


def attach_values(attachment: Attachment, names: tuple[str, ...]) -> dict[str, Any]:
    """The ``~/set_attachments`` request that hangs ``attachment`` (added to ``names``, the
    node's ``attachments.names``, or replacing the one of its name): every field, the file as
    an absolute path (the node's working folder is not the caller's)."""
    name = attachment.name

    def field(field_name: str) -> str:
        return parameter_name(name, field_name)

    return {
        ATTACHMENTS: list(names) if name in names else [*names, name],
        field("file"): str(expand_user(attachment.file, "the attachment's file").resolve()),
        field("description"): "",
        field("parent"): attachment.parent,
        field("origin"): [float(value) for value in attachment.origin],
        field("prefix"): attachment.prefix,
    }


def detach_values(name: str, names: tuple[str, ...]) -> dict[str, Any]:
    """The ``~/set_attachments`` request that takes ``name`` off; UsageError if the node
    has no attachment of that name."""
    if name not in names:
        listed = ", ".join(names) or "none"
        raise UsageError(f"the node has no attachment {name!r} (it has: {listed})")
    return {ATTACHMENTS: [other for other in names if other != name]}


def add_attach_parsers(commands: Any) -> None:
    """The ``attach`` and ``detach`` subcommands."""
    attach = commands.add_parser(
        "attach",
        help="hang a description from a running node's robot, or swap the one of that name",
        description="Hang the description in FILE from link PARENT of the robot a running "
        "joint_tf_publisher publishes (the node's attachments.* parameters, set in one call "
        "of its ~/set_attachments service), or swap the attachment of that name for it. "
        "Exit 0 when the node takes it, 1 with the node's reason when it refuses.",
    )
    attach.add_argument("attachment", metavar=ATTACH_FORM, help="as check's --attach")
    _add_node_options(attach)
    attach.set_defaults(func=cmd_attach)
    detach = commands.add_parser(
        "detach",
        help="take an attachment off a running node's robot",
        description="Remove the attachment NAME from a running joint_tf_publisher.",
    )
    detach.add_argument("name", metavar="NAME")
    _add_node_options(detach)
    detach.set_defaults(func=cmd_detach)


def _add_node_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--node",
        default=DEFAULT_NODE,
        metavar="NAME",
        help=f"the node's full name (default {DEFAULT_NODE})",
    )
    parser.add_argument(
        "--timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds to wait for the node (default 10)",
    )


def cmd_attach(args: argparse.Namespace) -> int:
    attachment = parse_attach(args.attachment)
    return _send(args, lambda names: attach_values(attachment, names))


def cmd_detach(args: argparse.Namespace) -> int:
    return _send(args, lambda names: detach_values(args.name, names))


def _send(args: argparse.Namespace, values_for: Any) -> int:
    """Read the node's attachment names, send what ``values_for(names)`` asks; 0 when the
    node takes it, 1 with its reason."""
    from ..ros.attachment_client import AttachmentClient

    with AttachmentClient(args.node, args.timeout, args.ros_args) as client:
        accepted, reason = client.set_attachments(values_for(client.names()))
    if not accepted:
        print(f"{args.node} refused: {reason}", file=sys.stderr)
        return 1
    print(f"{args.node}: attachments changed")
    return 0
