"""Compiled kinematics of a validated model: state resolution (mimic, clamping), per-joint
transforms and forward kinematics, single and batched."""

from .compiled import CLAMP_MODES, MAX_JOINT_VALUE, SCALAR_TYPES, JointPositions, Kinematics, Update

__all__ = [
    "CLAMP_MODES",
    "MAX_JOINT_VALUE",
    "SCALAR_TYPES",
    "JointPositions",
    "Kinematics",
    "Update",
]
