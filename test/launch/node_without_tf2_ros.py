"""The node's console script ``joint_tf_publisher`` with tf2_ros made unimportable.

Usage: ``python node_without_tf2_ros.py [--ros-args ...]``, arguments as for the executable.

Where tf2_ros is missing the node publishes /tf and /tf_static through its own publishers
(same topics and QoS); with a distro or the kit tf2_ros is always importable, so this is how
the tests run that fallback under the real stack. ``sys.modules[name] = None`` makes every
later ``import tf2_ros`` raise ImportError (the import system's documented behaviour).
"""

from __future__ import annotations

import sys
from importlib.metadata import entry_points

sys.modules["tf2_ros"] = None  # type: ignore[assignment]

if __name__ == "__main__":
    # The first installation found (an editable one and a colcon one run the same code).
    script = next(iter(entry_points(group="console_scripts", name="joint_tf_publisher")))
    sys.exit(script.load()())
