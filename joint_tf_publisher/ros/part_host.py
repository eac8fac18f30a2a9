"""What the node (``node``) gives every part it composes (``joint_state_inputs``,
``description_input``, ``tf_outputs``): the node that makes the part's publishers,
subscriptions and timers, the pipeline the part feeds or reads, the guards of its callbacks
and the node clock; as rclcpp hands a component its node's interfaces.

It may import rclpy, ``node_core.pipeline`` and the adapter's ``edges``.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from rclpy.node import Node

from ..node_core.pipeline import JointStatePipeline
from .edges import Edges


@dataclass(frozen=True)
class PartHost:
    """``node`` makes the part's entities, ``pipeline`` is the node's policy, ``edges``
    guards the part's callbacks (``edges.Edges``), ``now_ns`` reads the node clock (ns)."""

    node: Node
    pipeline: JointStatePipeline
    edges: Edges
    now_ns: Callable[[], int]
