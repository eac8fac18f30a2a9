"""One JointState to the poses to publish, in one call: what the node does per message.

A ``HotPath`` is compiled for one tuple of names, one clamp mode and one set of joints to
publish. ``poses`` applies the message's values by the fast path of its name plan
(``joint_state_names.FastApply``: every value usable and inside its range, nothing to clamp)
and returns the poses of the chosen joints (``joint_transforms.PosePlan``), with no report
object and no lookups per call. Any other message returns None and leaves the positions
untouched: the caller then takes the general path (``Kinematics.apply`` and
``Kinematics.joint_poses``), which gives the same values and poses.
"""

from __future__ import annotations

import numpy as np
from numpy.typing import NDArray

from .joint_state_names import FastApply
from .joint_transforms import PosePlan, poses_of
from .state import JointPositions, apply_fast

Array = NDArray[np.float64]


class HotPath:
    """JointState values -> poses (n, 7) of chosen joints (see the module docstring)."""

    def __init__(self, fast: FastApply, clamp: str | None, poses: PosePlan) -> None:
        self._fast = fast
        self._clamp = clamp
        self._poses = poses

    def poses(self, positions: JointPositions, values: Array) -> Array | None:
        """Apply ``values`` (float64, one per name: radians or metres) to ``positions`` and
        return the chosen joints' poses: rows of translation x y z (metres) and quaternion
        x y z w. None, with ``positions`` untouched, when the message needs the general
        path (an unusable value, a clamp to do)."""
        if not apply_fast(self._fast, positions, values, self._clamp):
            return None
        return poses_of(self._poses, positions.values)
