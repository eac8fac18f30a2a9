"""SDFormat 1.4 to 1.11 robot descriptions: one ``<model>`` into a ``RobotModel``.

``context`` (element origins, diagnostics, number readers), ``poses`` (``<pose>`` and the pose
graph), ``joints`` (types, axes per version, limits, mimic, screw pitch), ``gearbox`` (gearbox
joints as mimic couplings), ``world`` (which model is the robot) and ``build`` (the model's
links, joints, frames and TF tree).
"""

from .build import robot_from_element
from .context import SUPPORTED_VERSIONS
from .joints import SDF_JOINT_TYPES

__all__ = ["SDF_JOINT_TYPES", "SUPPORTED_VERSIONS", "robot_from_element"]
