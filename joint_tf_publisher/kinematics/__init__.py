"""Compiled kinematics of a validated model, one concern per module:

- ``layout``: the tree compiled once (order, fixed joints folded, frames, variable slots);
- ``joint_state_names`` and ``state``: JointState input resolved into a variable vector
  (mimic, clamping, rejection of unusable values);
- ``joint_transforms``: per-joint parent->child transforms (what the node publishes);
- ``message_plan``: per message shape, a JointState's values to the poses to publish, in one
  call (the node's hot path);
- ``cfg``: urdfpy-style configurations into variable rows;
- ``fk`` and ``fk_batch``: forward kinematics of one or many configurations;
- ``kinematics``: the ``Kinematics`` facade holding them all.

What each joint type is (its values, limits and motion) comes from ``model.joint_types``.
"""

from .kinematics import Kinematics
from .layout import CLAMPING, MAX_JOINT_VALUE, Layout, compile_layout
from .message_plan import MessagePlan, Resolved
from .state import JointPositions, Update

__all__ = [
    "CLAMPING",
    "MAX_JOINT_VALUE",
    "JointPositions",
    "Kinematics",
    "Layout",
    "MessagePlan",
    "Resolved",
    "Update",
    "compile_layout",
]
