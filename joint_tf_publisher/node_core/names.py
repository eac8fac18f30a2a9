"""ROS names the node's rules check (no rclpy here): a namespace."""

from __future__ import annotations

import re

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")


def absolute_namespace(text: str) -> str | None:
    """``text`` (``robot1``, ``/robot1``, ``/site/robot1/``) as an absolute namespace
    (``/robot1``); None unless each of its tokens is a ROS name (a letter or ``_`` first,
    then letters, digits, ``_``) and it is not the root."""
    name = text.strip().strip("/")
    return "/" + name if _NAMESPACE.fullmatch(name) else None
