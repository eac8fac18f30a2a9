"""The facts of one robot model that the health report needs (no rclpy): which frames each
moving joint carries, which joints are excluded or follow a mimic leader, and the limits a
clamped value went beyond."""

from __future__ import annotations

from collections.abc import Iterable, Sequence

import numpy as np
from numpy.typing import NDArray

from ..arrays import Array, BoolArray, IndexArray
from ..bounded_cache import bounded_cache
from ..kinematics import Kinematics
from ..model.clamp_mode import ClampMode


class RobotFacts:
    """The facts of one model the report needs: joint names, the frames each moving joint
    carries (its child link and everything below it, with ``frame_prefix``), excluded joints,
    mimic leaders, and each joint's limits per clamp mode."""

    def __init__(self, kin: Kinematics, excluded: Iterable[str], frame_prefix: str) -> None:
        layout = kin.layout
        moving = kin.moving_joints
        self.robot = kin.robot.name
        self.joint_names = [joint.name for joint in moving]
        self.num_fixed = len(kin.fixed_joints)
        #: Every frame of the robot: its links' names with ``frame_prefix``.
        self.frames = frozenset(frame_prefix + name for name in layout.link_names)
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
        #: Per tuple of JointState names: (message index, slot, moving joint) of each name
        #: that is a moving joint's variable (``bounded_cache``).
        self.message_slots = bounded_cache(self._message_slots)

    def _message_slots(self, names: tuple[str, ...]) -> tuple[IndexArray, IndexArray, IndexArray]:
        found = [
            (i, *self._variables[name]) for i, name in enumerate(names) if name in self._variables
        ]
        rows = np.array(found, dtype=np.intp).reshape(-1, 3)
        return rows[:, 0], rows[:, 2], rows[:, 1]

    def excursions(
        self, names: tuple[str, ...], values: Sequence[float] | Array, clamp: ClampMode
    ) -> dict[str, float]:
        """Per joint, how far the values a message (``names``, ``values``) gives it lie beyond
        its ``clamp`` limits, the largest (radians or metres); joints within are left out."""
        index, slots, joints = self.message_slots(names)
        given = np.asarray(values, dtype=np.float64)[index]
        lower, upper = self._ranges[clamp]
        with np.errstate(invalid="ignore"):  # a rejected inf against an unlimited joint: NaN
            beyond = np.maximum(lower[slots] - given, given - upper[slots])
        result: dict[str, float] = {}
        for k in np.flatnonzero(beyond > 0.0).tolist():
            name = self.joint_names[joints[k]]
            result[name] = max(result.get(name, 0.0), float(beyond[k]))
        return result

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


def never_received(facts: RobotFacts, received: BoolArray) -> tuple[list[str], list[str]]:
    """The moving joints not ``received`` (per moving joint, excluded joints and mimic
    followers already counted) and the frames missing with them (every frame below each,
    prefixed, sorted): what the health report names (``Key.NEVER_RECEIVED``,
    ``Key.MISSING_FRAMES``)."""
    never = np.flatnonzero(~received).tolist()
    names = [facts.joint_names[i] for i in never]
    missing = sorted({frame for i in never for frame in facts.frames_below[i]})
    return names, missing


def never_given(facts: RobotFacts, moved: IndexArray) -> tuple[list[str], list[str]]:
    """``never_received`` where only the moving joints ``moved`` (``Kinematics.moved_joints``
    of every message) were given: excluded joints count as received, and mimic followers
    with their leader, as in the node's report (doctor --bag asks it of a recording)."""
    received = facts.excluded.copy()
    received[moved] = True
    facts.follow_leaders(received, np.zeros(len(received), dtype=np.int64))
    return never_received(facts, received)


def frames_left(before: RobotFacts | None, after: RobotFacts) -> list[str]:
    """The frames of ``before`` (the model, or prefix, the node had) that ``after`` does not
    have, sorted: a description or ``frame_prefix`` change took them away, and every tf2
    listener that heard them keeps them (statics at their last pose) until it restarts."""
    if before is None:
        return []
    return sorted(before.frames - after.frames)
