"""joint_tf_publisher: robot descriptions and joint states to tf2 transforms.

The core (this package without ``node``) needs only numpy and lxml.
"""

from .errors import ModelError
from .model import Calibration, Dynamics, Joint, Limit, Link, Mimic, Robot, SafetyController

__all__ = [
    "Calibration",
    "Dynamics",
    "Joint",
    "Limit",
    "Link",
    "Mimic",
    "ModelError",
    "Robot",
    "SafetyController",
]
