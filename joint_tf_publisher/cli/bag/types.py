"""rosbags' store of ROS 2 message types, the one the bag commands use: Jazzy's (tf2_msgs,
std_msgs and sensor_msgs are the same in every distro since Humble). Loading it takes about
0.1 s (rosbags defines every type of the distro), so it is loaded once, where it is needed:
the repair's writing process loads it at its start, while the repair reads the description.
"""

from __future__ import annotations

from functools import cache
from typing import Any


@cache
def typestore() -> Any:
    """The store (``rosbags.typesys.store.Typestore``)."""
    from rosbags.typesys import Stores, get_typestore

    return get_typestore(Stores.ROS2_JAZZY)
