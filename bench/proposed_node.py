"""The node with the proposed /tf hot path, for before/after numbers (bench only).

``python -m bench.proposed_node --ros-args ...`` runs ``JointTfPublisher`` unchanged except
for ``_send_moving``: instead of filling Python ``TransformStamped`` objects and letting rclpy
convert them, it writes the serialized TFMessage from a byte template
(``bench.tf_cdr.TFMessageWriter``, one per set of published joints, cached) and publishes
the bytes. Same topic, QoS, frames, stamps and values; ``bench.profile`` checks the bytes
deserialize to the node's own message. This file is evidence for the node's owner, not a
second node: the change belongs in ``node.py`` / ``tf_broadcast.py``.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np
import rclpy
from rclpy.executors import ExternalShutdownException

from joint_tf_publisher.node import JointTfPublisher, StartupError

from .tf_cdr import TFMessageWriter


class ProposedJointTfPublisher(JointTfPublisher):
    """JointTfPublisher whose moving transforms are published as pre-laid-out CDR bytes."""

    def __init__(self, **kwargs: Any) -> None:
        self._writers: dict[tuple[int, bytes], TFMessageWriter] = {}
        super().__init__(**kwargs)
        tf = self._tf
        broadcaster = getattr(tf, "_broadcaster", None)
        self._tf_publisher = getattr(broadcaster, "pub_tf", None) or tf._publisher

    def _send_moving(self, model: Any, indices: Any, stamp: Any) -> None:
        translations, quaternions = model.kin.joint_transforms(model.positions, indices)
        finite = np.isfinite(translations).all(axis=1) & np.isfinite(quaternions).all(axis=1)
        if not finite.all():
            indices, translations, quaternions = (
                indices[finite],
                translations[finite],
                quaternions[finite],
            )
        key = (id(model), indices.tobytes())
        writer = self._writers.get(key)
        if writer is None:
            if len(self._writers) > 64:
                self._writers.clear()
            frames = [
                (model.moving_messages[i].header.frame_id, model.moving_messages[i].child_frame_id)
                for i in indices.tolist()
            ]
            writer = self._writers[key] = TFMessageWriter(frames)
        self._tf_publisher.publish(
            writer.write(stamp.sec, stamp.nanosec, translations, quaternions)
        )


def main(args: list[str] | None = None) -> int:
    """Run the proposed node until SIGINT, as ``joint_tf_publisher`` does."""
    rclpy.init(args=args)
    try:
        node = ProposedJointTfPublisher()
    except StartupError as err:
        print(f"proposed_node: {err}", file=sys.stderr)
        rclpy.try_shutdown()
        return 1
    try:
        rclpy.spin(node)
    except (KeyboardInterrupt, ExternalShutdownException):
        pass
    finally:
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
