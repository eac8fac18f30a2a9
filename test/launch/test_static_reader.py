"""The launch tests' /tf_static reader hears every node's latched set, however they arrive.

Several nodes that published their static set already (each on its own keep-last-1
transient-local publisher, as the node does) are matched by one new reader at about the same
time, so their samples reach it together. A keep-last-1 reader (``node_harness.latched_qos``)
holds one of them and drops the rest for good, which made the three-robot launch of
test_tf2_buffer.py wait 90 s for a robot whose set had come and gone. This test makes the
samples arrive together on purpose: the reader is not taken from until the publishers have
matched it and had time to deliver.
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

import rclpy  # noqa: E402
from geometry_msgs.msg import TransformStamped  # noqa: E402
from launch_harness import static_listener_qos, wait_static_children  # noqa: E402
from node_harness import wait_until  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.ros.tf_publishers import tf_static_qos  # noqa: E402

pytestmark = pytest.mark.ros

#: The static publishers, in the order they publish (the first is the oldest sample).
NODES = ("first", "second", "third")
WAIT_S = 60.0
#: Time the publishers get to deliver to the matched reader before anything is taken, s.
DELIVERY_S = 1.0


def static_set(node: str) -> TFMessage:
    transform = TransformStamped()
    transform.header.frame_id = f"{node}/base"
    transform.child_frame_id = f"{node}/sensor"
    transform.transform.rotation.w = 1.0
    return TFMessage(transforms=[transform])


@pytest.fixture
def static_publishers() -> Iterator[None]:
    """One participant per node, each with the node's /tf_static QoS, published in order."""
    contexts: list[Any] = []
    nodes: list[Any] = []  # referenced until the end: a collected node takes its publisher
    try:
        for name in NODES:
            context = rclpy.Context()
            rclpy.init(context=context)
            contexts.append(context)
            node = rclpy.create_node(f"static_{name}", context=context)
            nodes.append(node)
            publisher = node.create_publisher(TFMessage, "/tf_static", tf_static_qos())
            publisher.publish(static_set(name))
            time.sleep(0.05)  # distinct source timestamps
        yield
    finally:
        for node in nodes:
            node.destroy_node()
        for context in contexts:
            rclpy.try_shutdown(context=context)


def children() -> set[str]:
    return {f"{name}/sensor" for name in NODES}


def test_a_reader_taking_late_still_has_every_set(probe: Any, static_publishers: None) -> None:
    received: list[TFMessage] = []
    subscription = probe.node.create_subscription(
        TFMessage, "/tf_static", received.append, static_listener_qos()
    )
    try:
        # Not spun while the publishers match and deliver: their samples wait together.
        deadline = time.monotonic() + WAIT_S
        while subscription.get_publisher_count() < len(NODES):
            assert time.monotonic() < deadline, "the static publishers were not matched"
            time.sleep(0.05)
        time.sleep(DELIVERY_S)

        def heard() -> set[str]:
            return {t.child_frame_id for msg in received for t in msg.transforms}

        wait_until(lambda: children() <= heard(), WAIT_S, what=lambda: f"{children()} in {heard()}")
    finally:
        probe.node.destroy_subscription(subscription)


def test_wait_static_children_hears_every_set(probe: Any, static_publishers: None) -> None:
    assert children() <= set(wait_static_children(probe, children(), timeout=WAIT_S))
