"""What every subcommand of ``joint-tf-publisher`` shares: its usage error and how it loads
the model its arguments name (``main`` dispatches; ``doctor.command`` and the others use these
without importing ``main``)."""

from __future__ import annotations

import argparse

from ..robot import Robot


class UsageError(Exception):
    """A command line that names something the model does not have (exit status 2)."""


def load_model(args: argparse.Namespace) -> Robot:
    """The robot named by ``args.model`` (.urdf, .sdf, .xacro; ``-``: the text read from
    stdin by ``main``, in ``args.stdin_bytes``). Raises ModelError."""
    if args.model == "-":
        return Robot.from_xml_string(args.stdin_bytes, source="<stdin>", model_name=args.model_name)
    return Robot.load(args.model, model_name=args.model_name)
