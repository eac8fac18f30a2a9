"""ROS names the node's rules check (no rclpy here): the node's name, a namespace."""

from __future__ import annotations

import re

#: The node's name (each robot's in a fleet).
NODE_NAME = "joint_tf_publisher"

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")


def absolute_namespace(text: str) -> str | None:
    """``text`` (``robot1``, ``/robot1``, ``/site/robot1/``) as an absolute namespace
    (``/robot1``); None unless each of its tokens is a ROS name (a letter or ``_`` first,
    then letters, digits, ``_``) and it is not the root."""
    name = text.strip().strip("/")
    return "/" + name if _NAMESPACE.fullmatch(name) else None
