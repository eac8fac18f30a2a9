"""The benchmark robots, URDF files of the repository (their joint counts: docs/benchmarks.md,
Models), and what the sections need of them.

The humanoid (small tilts on every origin, so that a wrong rotation convention shows) is the
robot of every side-by-side run against robot_state_publisher. Metres and radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from functools import cached_property
from pathlib import Path
from typing import Any

import numpy as np

REPO_ROOT = Path(__file__).resolve().parent.parent
#: Where continuous joints are sampled (radians); they have no limits.
CONTINUOUS_RANGE = (-math.pi, math.pi)


@dataclass(frozen=True)
class ModelSpec:
    """A benchmark robot: its name and URDF file, read once by ``Robot.load``."""

    name: str
    path: Path

    @cached_property
    def robot(self) -> Any:
        """The robot as ``joint_tf_publisher.Robot`` reads it."""
        from joint_tf_publisher import Robot

        return Robot.load(self.path)

    @property
    def moving_joints(self) -> list[Any]:
        """Every joint but the fixed ones, in file order (topological for mimic chains)."""
        return [j for j in self.robot.joints.values() if j.joint_type != "fixed"]

    @property
    def independent_joints(self) -> list[Any]:
        """Moving, non-mimic joints in file order: the ones a JointState carries."""
        return [joint for joint in self.moving_joints if joint.mimic is None]

    @property
    def link_names(self) -> list[str]:
        """Every link of the robot."""
        return list(self.robot.links)

    def to_urdf(self) -> str:
        """The URDF text."""
        return self.path.read_text()

    def counts(self) -> dict[str, int]:
        """Joint counts by role, for tables and the JSON record."""
        joints, moving = len(self.robot.joints), len(self.moving_joints)
        independent = len(self.independent_joints)
        return {
            "joints": joints,
            "moving": moving,
            "independent": independent,
            "mimic": moving - independent,
            "fixed": joints - moving,
        }

    def sample(self, seed: int, count: int) -> list[dict[str, float]]:
        """``count`` configurations of the independent joints (name -> position, in
        ``independent_joints``' order), each value drawn inside its joint's hard limits by a
        generator seeded with ``seed``."""
        rng, joints = np.random.default_rng(seed), self.independent_joints
        columns = [rng.uniform(*(j.hard_limits() or CONTINUOUS_RANGE), size=count) for j in joints]
        names = [joint.name for joint in joints]
        return [dict(zip(names, row, strict=True)) for row in np.column_stack(columns).tolist()]

    def full_values(self, independent: dict[str, float]) -> dict[str, float]:
        """Values of every moving joint: mimic joints follow their leader (chains in order)."""
        values = dict(independent)
        for joint in self.moving_joints:
            if joint.mimic is not None:
                mimic = joint.mimic
                values[joint.name] = mimic.multiplier * values[mimic.joint] + mimic.offset
        return values


#: The benchmark models by name, smallest first.
MODELS = {
    "arm": ModelSpec("arm", REPO_ROOT / "urdf" / "demo_arm.urdf"),
    "humanoid": ModelSpec("humanoid", REPO_ROOT / "test" / "data" / "humanoid_fixed_base.urdf"),
}
