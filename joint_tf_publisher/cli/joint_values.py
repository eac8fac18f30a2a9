"""Joint values written on the command line: ``name=value`` into a cfg for ``Robot.link_fk``.

A value is a number in radians or metres, or in degrees with a ``deg`` suffix (``90deg``);
multi-DOF joints take comma-separated values in the shapes of ``Joint``'s docstring, e.g.
``base_planar_joint=0.5,0.2,1.57`` (x, y, theta) or ``float_joint=0,0,1,0,0,0`` (xyz rpy).
"""

from __future__ import annotations

import difflib
import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model.elements import RobotModel


def parse_number(text: str) -> float:
    """A float from ``text``; a ``deg`` suffix converts degrees to radians. ValueError if bad."""
    stripped = text.strip()
    factor = 1.0
    if stripped.endswith("deg"):
        stripped, factor = stripped[:-3], math.pi / 180.0
    try:
        value = float(stripped)
    except ValueError:
        raise ValueError(f"{text!r} is not a number") from None
    if not math.isfinite(value):
        raise ValueError(f"{text!r} is not a finite number")
    return value * factor


def unknown_joint_message(robot: RobotModel, name: str) -> str:
    """``unknown joint 'x'`` with the closest joint names as suggestions."""
    close = difflib.get_close_matches(name, list(robot.joints), n=3)
    hint = f"; did you mean {', '.join(repr(c) for c in close)}?" if close else ""
    return f"unknown joint {name!r} in robot {robot.name!r}{hint}"


def parse_joint_values(
    robot: RobotModel, assignments: Sequence[str]
) -> tuple[dict[str, Any], list[str]]:
    """The cfg given by ``name=value`` assignments, and notes on values that will be ignored.

    Raises ValueError naming the bad assignment: no ``=``, unknown joint, not a number, or the
    wrong number of values for the joint's type.
    """
    cfg: dict[str, Any] = {}
    notes: list[str] = []
    for assignment in assignments:
        name, sep, text = assignment.partition("=")
        if not sep or not name:
            raise ValueError(f"{assignment!r}: joint values are written name=value")
        joint = robot.joints.get(name)
        if joint is None:
            raise ValueError(unknown_joint_message(robot, name))
        values = [parse_number(part) for part in text.split(",")]
        value: Any = values[0] if len(values) == 1 else np.array(values)
        if joint.joint_type == "fixed":
            notes.append(f"{name!r} is a fixed joint: its value is ignored")
            continue
        try:
            joint.motion(value)
        except ValueError as exc:
            raise ValueError(f"{assignment!r}: {exc}") from None
        if joint.mimic is not None:
            notes.append(f"{name!r} mimics {joint.mimic.joint!r}: its value is ignored")
        cfg[name] = value
    return cfg, notes
