"""Joint sweeps: configurations that move every joint across its range, for demo and plot.

A sweep is parametrised by a *fraction* per joint: 0 is the lower end of the joint's range,
1 the upper end; fractions outside [0, 1] go beyond the limits (the demo does that on purpose
for some joints, so the node's clamping shows). Ranges (radians or metres):

- revolute, prismatic, screw: the hard limits; where there are none, [-pi, pi] rad or
  [-0.1, 0.1] m; continuous: [-pi, pi].
- revolute2, universal: each axis over its own limit (``limit``, ``limit2``), else [-pi/2, pi/2].
- planar: x and y over [-0.2, 0.2] m, theta over [-pi/2, pi/2].
- floating: z over [-0.1, 0.1] m and yaw over [-pi/4, pi/4] about the joint frame's z.
- ball: yaw over [-pi/4, pi/4] (quaternion x, y, z, w).

Mimic joints (and SDF gearbox joints, which the parser turns into mimics) are not swept: they
follow their leader, value = multiplier * leader + offset, resolved along chains.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np

from ..model.elements import Joint, Limit
from ..model.joint_types import SINGLE_VALUE_TYPES
from ..robot import Robot
from ..transforms import matrix_to_quaternion, rpy_to_matrix


def _limited_range(limit: Limit | None, default: tuple[float, float]) -> tuple[float, float]:
    if limit is None or not limit.has_position_range or not limit.lower < limit.upper:
        return default
    if not (math.isfinite(limit.lower) and math.isfinite(limit.upper)):
        return default
    return (limit.lower, limit.upper)


def value_range(joint: Joint) -> tuple[float, float]:
    """The [lower, upper] a single-value joint is swept over (rad or m); see module docstring."""
    if joint.joint_type == "continuous":
        return (-math.pi, math.pi)
    default = (-0.1, 0.1) if joint.joint_type == "prismatic" else (-math.pi, math.pi)
    hard = joint.hard_limits()
    if hard is None or not hard[0] < hard[1] or not all(map(math.isfinite, hard)):
        return default
    return hard


def _between(bounds: tuple[float, float], fraction: float) -> float:
    return bounds[0] + fraction * (bounds[1] - bounds[0])


def joint_value(joint: Joint, fraction: float) -> Any:
    """The cfg value of ``joint`` at ``fraction`` of its sweep (shape as ``Joint.motion`` takes).

    Multi-DOF values follow the order of ``joint.variable_names``.
    """
    kind = joint.joint_type
    centred = 2.0 * fraction - 1.0
    if kind in SINGLE_VALUE_TYPES:
        return _between(value_range(joint), fraction)
    if kind in ("revolute2", "universal"):
        half_pi = (-math.pi / 2, math.pi / 2)
        return np.array(
            [
                _between(_limited_range(joint.limit, half_pi), fraction),
                _between(_limited_range(joint.limit2, half_pi), fraction),
            ]
        )
    if kind == "planar":
        return np.array([0.2 * centred, 0.2 * centred, math.pi / 2 * centred])
    rotation = matrix_to_quaternion(rpy_to_matrix((0.0, 0.0, math.pi / 4 * centred)))
    if kind == "floating":
        return np.concatenate([[0.0, 0.0, 0.1 * centred], rotation])
    if kind == "ball":
        return rotation
    raise ValueError(f"joint {joint.name!r}: a {kind} joint has no value")


def leader_joints(robot: Robot) -> list[Joint]:
    """The joints a sweep moves: every non-fixed joint that does not mimic another."""
    return [j for j in robot.joints.values() if j.joint_type != "fixed" and j.mimic is None]


class JointSweep:
    """A sine sweep of every leader joint through its range, for the ``demo`` source.

    Each leader oscillates with ``period_s`` seconds, phase-shifted from the previous one so
    the joints do not move in step. Every second joint with hard limits sweeps ``overshoot``
    (a fraction of its range) beyond them, split between both ends, so clamping can be seen.
    """

    def __init__(self, robot: Robot, period_s: float = 8.0, overshoot: float = 0.1) -> None:
        if period_s <= 0.0:
            raise ValueError(f"the sweep period must be positive, got {period_s} s")
        self.robot = robot
        self.period_s = period_s
        self.leaders = leader_joints(robot)
        limited = [j.name for j in self.leaders if j.hard_limits() is not None]
        self.overshooting = frozenset(limited[::2]) if overshoot > 0.0 else frozenset()
        self.overshoot = overshoot

    def fractions_at(self, time_s: float) -> dict[str, float]:
        """The sweep fraction of each leader joint at ``time_s`` seconds."""
        count = max(len(self.leaders), 1)
        fractions = {}
        for index, joint in enumerate(self.leaders):
            phase = 2.0 * math.pi * (time_s / self.period_s + index / count)
            amplitude = 0.5 * (1.0 + self.overshoot) if joint.name in self.overshooting else 0.5
            fractions[joint.name] = 0.5 + amplitude * math.sin(phase)
        return fractions

    def cfg_at(self, time_s: float) -> dict[str, Any]:
        """The leader joints' cfg at ``time_s`` seconds (as ``Robot.link_fk`` takes it)."""
        return {
            name: joint_value(self.robot.joints[name], fraction)
            for name, fraction in self.fractions_at(time_s).items()
        }

    def joint_state_at(self, time_s: float) -> tuple[list[str], list[float]]:
        """JointState names and positions at ``time_s``: leaders, then mimic followers.

        Multi-DOF joints appear under their ``variable_names`` (MoveIt's convention).
        """
        cfg = self.cfg_at(time_s)
        names: list[str] = []
        positions: list[float] = []
        for name, value in cfg.items():
            names.extend(self.robot.joints[name].variable_names)
            positions.extend(float(v) for v in np.atleast_1d(value))
        # Mimic followers as the kinematics resolves them (chains included), not clamped.
        kin = self.robot.kinematics
        state = kin.new_positions()
        kin.apply(state, names, positions, clamp=None)
        resolved = kin.variable_values(state)
        for joint in kin.moving_joints:
            if joint.mimic is not None:
                names.append(joint.name)
                positions.append(resolved[joint.name])
        return names, positions


def sweep_frames(robot: Robot, count: int) -> list[dict[str, Any]]:
    """``count`` configurations from every leader's lower end to its upper end, in step."""
    if count < 1:
        raise ValueError(f"a sweep needs at least one frame, got {count}")
    fractions: Sequence[float] = [0.5] if count == 1 else np.linspace(0.0, 1.0, count).tolist()
    return [
        {joint.name: joint_value(joint, fraction) for joint in leader_joints(robot)}
        for fraction in fractions
    ]
