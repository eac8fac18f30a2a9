"""The ROS 2 type names the bag commands write and decode, and rosbags' store of message
types, the one they use: Jazzy's (tf2_msgs, std_msgs and sensor_msgs are the same in every
distro since Humble). Loading it takes about 0.1 s (rosbags defines every type of the
distro), so it is loaded once, where it is needed: the repair's writing process loads it at
its start, while the repair reads the description.
Imports nothing of the package; rosbags when the store is loaded.
"""

from __future__ import annotations

from functools import cache
from typing import Any

#: The ROS 2 type names of the messages the repair writes, and ``doctor --bag`` decodes.
TF_MESSAGE = "tf2_msgs/msg/TFMessage"
STRING = "std_msgs/msg/String"
DIAGNOSTIC_ARRAY = "diagnostic_msgs/msg/DiagnosticArray"


@cache
def typestore() -> Any:
    """The store (``rosbags.typesys.store.Typestore``)."""
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)
