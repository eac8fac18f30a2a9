"""What every subcommand of ``joint-tf-publisher`` shares: its usage error and how it loads
the model its arguments name, with the attachments they name (``main`` dispatches;
``doctor.command`` and the others use these without importing ``main``)."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ..description.compose import COMPOSED_SOURCE, Attachment, compose
from ..description.loader import expand_xacro
from ..description.xmlio import read_description
from ..errors import ModelError
from ..node_core.names import NODE_NAME
from ..node_core.parameters import ATTACHMENT_PREFIX, ParameterRejected, Settings
from ..robot import Robot
from .params_file import ParamsFileError, node_parameters

#: How ``--attach`` is written (its help and its errors).
ATTACH_FORM = "NAME:FILE@PARENT[:X,Y,Z,ROLL,PITCH,YAW][:PREFIX]"


class UsageError(Exception):
    """A command line that names something the model does not have (exit status 2)."""


def add_attachment_options(parser: argparse.ArgumentParser) -> None:
    """``--attach`` and ``--params``: descriptions hung from the model, as the node's
    ``attachments.*`` parameters hang them."""
    parser.add_argument(
        "--attach",
        action="append",
        default=[],
        metavar=ATTACH_FORM,
        help="hang the description in FILE from link PARENT by a fixed joint "
        "<PREFIX><NAME>_mount at the origin given (metres, radians; default zeros), its "
        "names prefixed with PREFIX; repeat for more, in order",
    )
    parser.add_argument(
        "--params",
        metavar="YAML",
        help="take the attachments of a node parameters file (attachments.names and "
        "attachments.<name>.*), before those of --attach: the sections rcl gives the node "
        f"{NODE_NAME} in the namespace --params-namespace names",
    )
    parser.add_argument(
        "--params-namespace",
        default="",
        metavar="NS",
        help="the namespace of the node whose --params sections apply (/**, the node's own "
        "/NS/joint_tf_publisher, ...; default: the root)",
    )


def load_model(args: argparse.Namespace) -> Robot:
    """The robot named by ``args.model`` (.urdf, .sdf, .xacro; ``-``: the text read from
    stdin by ``main``, in ``args.stdin_bytes``) with the attachments ``--params`` and
    ``--attach`` name. Raises ModelError, or UsageError for a malformed option."""
    attachments = attachments_of(args)
    if not attachments:
        if args.model == "-":
            return Robot.from_xml_string(
                args.stdin_bytes, source="<stdin>", model_name=args.model_name
            )
        return Robot.load(args.model, model_name=args.model_name)
    path = None if args.model == "-" else Path(args.model)
    source = "<stdin>" if path is None else str(path)
    try:
        if path is None:
            text: str | bytes = args.stdin_bytes
        elif path.suffix == ".xacro":
            text, source = expand_xacro(path), f"{path} (expanded)"
        else:
            text = read_description(path)
    except OSError as exc:
        raise ModelError(f"cannot read file: {exc.strerror}", source=source) from None
    composed = compose(text, attachments, source, args.model_name, path)
    return Robot.from_xml_string(composed, source=COMPOSED_SOURCE)


def attachments_of(args: argparse.Namespace) -> tuple[Attachment, ...]:
    """The attachments of ``--params`` then ``--attach`` (none for a subcommand without)."""
    params: str | None = getattr(args, "params", None)
    namespace: str = getattr(args, "params_namespace", "")
    found = attachments_in_params(Path(params), namespace) if params else ()
    return found + tuple(parse_attach(spec) for spec in getattr(args, "attach", []))


def parse_attach(spec: str) -> Attachment:
    """One ``--attach`` value (``ATTACH_FORM``) as an Attachment; UsageError naming it."""
    name, colon, rest = spec.partition(":")
    file, at, tail = rest.rpartition("@")
    if not (name and colon and file and at and tail):
        raise UsageError(f"--attach {spec!r}: write {ATTACH_FORM}")
    parent, *options = tail.split(":")
    if len(options) > 2:
        raise UsageError(f"--attach {spec!r}: write {ATTACH_FORM}")
    origin: Any = (0.0,) * 6
    if options and options[0]:
        try:
            origin = tuple(float(value) for value in options[0].split(","))
        except ValueError:
            origin = ()
        if len(origin) != 6:
            raise UsageError(f"--attach {spec!r}: the origin is 6 comma-separated numbers")
    prefix = options[1] if len(options) == 2 else ""
    return Attachment(name, parent, file=file, origin=origin, prefix=prefix)


def attachments_in_params(path: Path, namespace: str = "") -> tuple[Attachment, ...]:
    """The attachments a node parameters file gives the node in ``namespace``: its sections
    as rcl applies them (``params_file.node_parameters``, as ``bag repair --params`` reads
    them), nested or with dotted names; UsageError if it is not such a file."""
    try:
        parameters = node_parameters(path, namespace=namespace)
    except ParamsFileError as exc:  # read as every file is read: no FIFO or device waited on
        raise UsageError(f"--params {exc}") from None
    values = {
        name: value for name, value in parameters.items() if name.startswith(ATTACHMENT_PREFIX)
    }
    try:
        return Settings.from_values(values).attachment_list
    except ParameterRejected as exc:
        raise UsageError(f"--params {path}: {exc}") from None
