"""The live status of ``joint-tf-publisher run``: rates, clamped joints, end-effector pose.

Pure Python and numpy (no rclpy): ``demo`` feeds it what it sends and receives. Transforms are
(4, 4) poses ``T_parent_child`` keyed by child frame; positions are radians or metres.
"""

from __future__ import annotations

import collections
import shutil
import time
from collections.abc import Mapping
from typing import TextIO

import numpy as np

from ..arrays import Array
from ..model.elements import RobotModel
from ..transforms import matrix_to_rpy
from .describe import format_vector

#: A received transform differing from the unclamped one by more than this (m, or rotation
#: matrix entries) means the node clamped the joint.
CLAMP_TOLERANCE = 1e-6


class RateMeter:
    """Events per second over the last ``window_s`` seconds (monotonic clock)."""

    def __init__(self, window_s: float = 1.0) -> None:
        self.window_s = window_s
        self.total = 0
        self._times: collections.deque[float] = collections.deque()

    def tick(self, now_s: float | None = None) -> None:
        """Count one event at ``now_s`` (default: now)."""
        self.total += 1
        self._times.append(time.monotonic() if now_s is None else now_s)

    def rate(self, now_s: float | None = None) -> float:
        """Events per second in the window ending at ``now_s``."""
        now = time.monotonic() if now_s is None else now_s
        while self._times and self._times[0] < now - self.window_s:
            self._times.popleft()
        return len(self._times) / self.window_s


def default_end_effector(robot: RobotModel) -> str:
    """The link with the most moving joints above it (ties: fewest joints, then file order)."""
    parent_joint = {joint.child: joint for joint in robot.joints.values()}
    best, best_key = robot.root, (0, 0)
    for name in robot.links:
        moving = total = 0
        link = name
        while link in parent_joint and total <= len(robot.joints):
            joint = parent_joint[link]
            moving += joint.joint_type != "fixed"
            total += 1
            link = joint.parent
        if (moving, -total) > best_key:
            best, best_key = name, (moving, -total)
    return best


def compose_to_root(
    transforms: Mapping[str, tuple[str, Array]], frame: str, root: str
) -> Array | None:
    """``T_root_frame`` composed from ``child -> (parent, T_parent_child)``; None if incomplete."""
    pose = np.eye(4)
    for _ in range(len(transforms) + 1):
        if frame == root:
            return pose
        if frame not in transforms:
            return None
        parent, T_parent_child = transforms[frame]
        pose = T_parent_child @ pose
        frame = parent
    return None


def clamped_joints(
    robot: RobotModel, sent: Mapping[str, float], received: Mapping[str, Array]
) -> list[str]:
    """Joints whose received transform is not the one their sent value gives: the node clamped.

    ``sent`` maps joint names to the positions sent (followers included); ``received`` maps
    child frames to ``T_parent_child`` from /tf. Only joints with hard limits are examined.
    """
    clamped = []
    for joint in robot.joints.values():
        if joint.hard_limits() is None or joint.name not in sent or joint.child not in received:
            continue
        expected = joint.child_pose(sent[joint.name])
        if np.max(np.abs(received[joint.child] - expected)) > CLAMP_TOLERANCE:
            clamped.append(joint.name)
    return clamped


def format_status(
    sent_rate: float,
    tf_rate: float,
    static_frames: int,
    clamped: list[str],
    end_effector: str,
    T_root_ee: Array | None,
) -> str:
    """One status line: JointState out/s, /tf in/s, clamped joints, end-effector pose."""
    if T_root_ee is None:
        pose = "waiting for /tf"
    else:
        pose = (
            f"xyz {format_vector(np.round(T_root_ee[:3, 3], 3))} m "
            f"rpy {format_vector(np.round(matrix_to_rpy(T_root_ee[:3, :3]), 2))} rad"
        )
    shown = ", ".join(clamped[:3]) + (f" +{len(clamped) - 3}" if len(clamped) > 3 else "")
    return (
        f"joint_states out {sent_rate:5.1f}/s | /tf in {tf_rate:5.1f}/s "
        f"(+{static_frames} static) | clamped: {shown or 'none'} | {end_effector}: {pose}"
    )


class StatusPrinter:
    """Shows status lines: refreshed in place on a terminal, one plain line per second if not."""

    def __init__(self, stream: TextIO, interval_s: float = 1.0) -> None:
        self.stream = stream
        self.is_tty = stream.isatty()
        self.interval_s = interval_s if not self.is_tty else 0.1
        self._last_s = -float("inf")
        self._shown = False

    def due(self, now_s: float | None = None) -> bool:
        """True when a new line should be shown."""
        now = time.monotonic() if now_s is None else now_s
        return now - self._last_s >= self.interval_s

    def show(self, line: str, now_s: float | None = None) -> None:
        """Print ``line``: over the previous one (``\\r``, clear to end) on a terminal."""
        self._last_s = time.monotonic() if now_s is None else now_s
        if self.is_tty:
            width = shutil.get_terminal_size((100, 20)).columns - 1
            self.stream.write("\r" + line[:width] + "\x1b[K")
            self._shown = True
        else:
            self.stream.write(line + "\n")
        self.stream.flush()

    def finish(self) -> None:
        """End the in-place line so what follows starts on a new one."""
        if self._shown:
            self.stream.write("\n")
            self.stream.flush()
            self._shown = False
