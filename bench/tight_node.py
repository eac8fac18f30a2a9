"""The real node spun by a lean loop: the reference the e2e ``node-lean`` rows measure.

``python -m bench.tight_node --ros-args ...`` builds ``JointTfPublisher`` unchanged and runs
it with ``spin_lean`` instead of ``rclpy.spin``. The e2e floor rows show that rclpy's
executor, which rebuilds a wait set of every entity of the node (parameter services,
subscriptions, timers, events) for each callback, costs about half a core at 1 kHz before
any joint math. ``spin_lean`` waits on the joint_states subscription alone with a reused wait
set, takes every JointState waiting, and hands everything else (parameter services,
multi-DOF states, the description topic, timers) to the ordinary executor at most every
``SERVICE_PERIOD_S``. Bench only: the evidence that led to ``ros.runtime.WaitLoop``, which
the node now uses (the same idea, plus the multi-DOF subscription, an executor turn only when
something else is ready, and a blocking wait on every entity when idle); the ``node-lean``
rows stay as a reference for it.
"""

from __future__ import annotations

import sys
import time
from typing import Any

import rclpy
from rclpy.executors import ExternalShutdownException, SingleThreadedExecutor

from joint_tf_publisher.ros.node import JointTfPublisher, StartupError

#: Longest wait (s) before the other entities of the node are serviced.
SERVICE_PERIOD_S = 0.01


def spin_lean(node: Any, executor: SingleThreadedExecutor) -> None:
    """Serve joint_states from a reused wait set; the rest through ``executor`` every 10 ms."""
    from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

    (subscription,) = [s for s in node.subscriptions if s.topic_name == "/joint_states"]
    callback = subscription.callback
    handle, msg_type, raw = subscription.handle, subscription.msg_type, subscription.raw
    context = node.context
    wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, context.handle)
    next_service = time.monotonic()
    while context.ok():
        with handle, context.handle:
            wait_set.clear_entities()
            wait_set.add_subscription(handle)
            wait_set.wait(int(SERVICE_PERIOD_S * 1e9))
            while (taken := handle.take_message(msg_type, raw)) is not None:
                callback(taken[0])
        now = time.monotonic()
        if now >= next_service:
            executor.spin_once(timeout_sec=0.0)
            next_service = now + SERVICE_PERIOD_S


def main() -> int:
    """Run the node with ``spin_lean`` until SIGINT."""
    rclpy.init(args=sys.argv)
    try:
        node = JointTfPublisher()
    except StartupError as err:
        print(f"tight_node: {err}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    executor = SingleThreadedExecutor()
    executor.add_node(node)
    try:
        spin_lean(node, executor)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        executor.shutdown(timeout_sec=0.5)
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
