"""ROS names the node's rules check (no rclpy here): the node's name, a namespace."""

from __future__ import annotations

import re

#: The node's name (each robot's in a fleet).
NODE_NAME = "joint_tf_publisher"

#: What a namespace is, as a refusal of one says it (``absolute_namespace``'s rule).
NAMESPACE_RULE = "tokens of letters, digits and _, not starting with a digit, separated by /"

_NAMESPACE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(/[A-Za-z_][A-Za-z0-9_]*)*")


def absolute_namespace(text: str) -> str | None:
    """``text`` (``robot1``, ``/robot1``, ``/site/robot1/``) as an absolute namespace
    (``/robot1``); None unless each of its tokens is a ROS name (a letter or ``_`` first,
    then letters, digits, ``_``) and it is not the root."""
    name = text.strip().strip("/")
    return "/" + name if _NAMESPACE.fullmatch(name) else None


def namespace_refusal(text: str, what: str = "namespace", root_refused: bool = True) -> str:
    """Why ``text``, given as ``what``, is no namespace (``absolute_namespace`` gave None):
    ``NAMESPACE_RULE``; ``root_refused``: the caller takes no root namespace either."""
    root = "; not the root namespace" if root_refused else ""
    return f"{text!r} is no {what} ({NAMESPACE_RULE}{root})"
