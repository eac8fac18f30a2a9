"""URDF ``<robot>`` element to a Robot, with the joint semantics of docs/joint-semantics.md.

Reads every element and attribute of the URDF ``<joint>`` (origin, parent, child, axis,
calibration, dynamics, limit, mimic, safety_controller) and the names of ``<link>``s; visual,
collision, inertial, transmission and gazebo data are not needed for transforms and are
skipped. URDF versions 1.0, 1.1 and 1.2 are read as urdfdom 6.0 reads them.

``context`` (the version, diagnostics, attribute and number readers), ``joints`` (a joint's
type, links, origin, axis, dynamics, calibration, mimic), ``limits`` (``<limit>`` per version,
``<safety_controller>``) and ``robot`` (the document: links, joints, the assembled model).

Every error is a ModelError naming source, line and element; every oddity that does not stop
loading is a warning (logged, and kept on ``Robot.warnings``). Units: metres and radians.
"""

from .context import SUPPORTED_VERSIONS
from .joints import URDF_JOINT_TYPES
from .robot import robot_from_element

__all__ = ["SUPPORTED_VERSIONS", "URDF_JOINT_TYPES", "robot_from_element"]
