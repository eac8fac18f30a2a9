"""A running tf2 consumer in a process of its own, as RViz: tf2_ros.Buffer + TransformListener,
asked one lookup at a time.

Usage: ``python tf2_watch.py``, then one request per line on standard input:
``TARGET SOURCE TIMEOUT_S``. For each it looks up SOURCE in TARGET at the latest time (what
RViz does for statics) with the real tf2 buffer, waiting up to TIMEOUT_S seconds, and prints
one JSON line: ``[x, y, z, qx, qy, qz, qw]`` (metres; quaternion x, y, z, w), or
``{"error": "<tf2's reason>"}``. It prints ``ready`` once its listener runs. End of input
ends it. Run by test_tf2_static_change.py with the session's interpreter.
"""

from __future__ import annotations

import json
import sys

import rclpy
from rclpy.duration import Duration
from rclpy.time import Time
from tf2_ros import Buffer, TransformException, TransformListener


def main() -> int:
    rclpy.init()
    node = rclpy.create_node("tf2_watch")
    buffer = Buffer()
    listener = TransformListener(buffer, node, spin_thread=True)
    print("ready", flush=True)
    try:
        for line in sys.stdin:
            target, source, timeout_s = line.split()
            try:
                stamped = buffer.lookup_transform(
                    target, source, Time(), timeout=Duration(seconds=float(timeout_s))
                )
            except TransformException as err:
                print(json.dumps({"error": f"{type(err).__name__}: {err}"}), flush=True)
                continue
            t, q = stamped.transform.translation, stamped.transform.rotation
            print(json.dumps([t.x, t.y, t.z, q.x, q.y, q.z, q.w]), flush=True)
    finally:
        listener.unregister()
        node.destroy_node()
        rclpy.try_shutdown()
    return 0


if __name__ == "__main__":
    sys.exit(main())
