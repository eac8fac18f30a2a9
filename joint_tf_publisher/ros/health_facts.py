"""The facts of one robot model that the health report needs (no rclpy): which frames each
moving joint carries, which joints are excluded or follow a mimic leader, and the limits a
clamped value went beyond."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
from numpy.typing import NDArray

from ..arrays import BoolArray
from ..kinematics import Kinematics
from ..model.clamp_mode import ClampMode


class RobotFacts:
    """The facts of one model the report needs: joint names, the frames each moving joint
    carries (its child link and everything below it, with ``frame_prefix``), excluded joints,
    mimic leaders. ``ranges``: per clamp mode, (lower, upper) per JointState variable name."""

    def __init__(self, kin: Kinematics, excluded: Iterable[str], frame_prefix: str) -> None:
        layout = kin.layout
        moving = kin.moving_joints
        self.robot = kin.robot.name
        self.joint_names = [joint.name for joint in moving]
        self.num_fixed = len(kin.fixed_joints)
        excluded_names = set(excluded)
        self.excluded = np.array([name in excluded_names for name in self.joint_names], dtype=bool)
        index = {name: i for i, name in enumerate(self.joint_names)}
        #: Per moving joint: its mimic leader's index, or -1.
        self.leader = np.array(
            [
                index.get(joint.mimic.joint, -1) if joint.mimic is not None else -1
                for joint in moving
            ],
            dtype=np.intp,
        )
        #: Per moving joint: frames (prefixed link names) absent while it is never received.
        self.frames_below: list[list[str]] = [[] for _ in moving]
        for link_index, link_name in enumerate(layout.link_names):
            frame = int(layout.link_frame[link_index])
            while frame > 0:  # frame i + 1 is moving joint i's child frame
                self.frames_below[frame - 1].append(frame_prefix + link_name)
                frame = int(layout.parent_frame[frame - 1])
        self._ranges = layout.ranges
        self._variables = layout.variable_lookup

    def excursion(self, name: str, value: float, clamp: ClampMode) -> tuple[str, float] | None:
        """For a JointState variable ``name`` given ``value``: its joint and how far
        ``value`` lies beyond its ``clamp`` limits (radians or metres), None if within."""
        found = self._variables.get(name)
        if found is None:
            return None
        joint, slot = found
        lower, upper = self._ranges[clamp]
        beyond = max(float(lower[slot]) - value, value - float(upper[slot]))
        return (self.joint_names[joint], beyond) if beyond > 0.0 else None

    def follow_leaders(self, received: BoolArray, last_ns: NDArray[np.int64]) -> None:
        """Mimic followers (chains of any depth) whose leader is ``received`` count as
        received, at their leader's arrival time ``last_ns`` (both per moving joint, updated
        in place)."""
        leader = self.leader
        changed = True
        while changed:
            changed = False
            for follower in np.flatnonzero((leader >= 0) & ~received).tolist():
                if received[leader[follower]]:
                    received[follower] = True
                    last_ns[follower] = last_ns[leader[follower]]
                    changed = True
