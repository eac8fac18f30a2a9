"""A tf2 consumer in a process of its own, as RViz: tf2_ros.Buffer + TransformListener.

Usage: ``python tf2_lookup.py STAMP_NS TIMEOUT_S TARGET,SOURCE... [--ros-args ...]``

Looks up each SOURCE frame in its TARGET frame at message time STAMP_NS (nanoseconds) with
the real tf2 buffer (static transforms from /tf_static, moving ones from /tf), each waited for
up to TIMEOUT_S seconds, and prints one JSON object: "TARGET,SOURCE" -> [x, y, z, qx, qy, qz,
qw] (the pose of SOURCE in TARGET: metres; quaternion x, y, z, w). Each lookup done is also
said at once on stderr (``resolved TARGET,SOURCE``), so a test can change the tree while the
Buffer runs. Exit code 1 with tf2's reason when a lookup fails. ROS arguments are its node's:
``--ros-args -r /tf:=/robot1/tf -r /tf_static:=/robot1/tf_static`` makes it a listener of
robot1's namespaced tree.
Run by test_tf2_buffer.py with the session's interpreter (a distro's or the kit's).
"""

from __future__ import annotations

import json
import sys

import rclpy
from rclpy.duration import Duration
from rclpy.time import Time
from rclpy.utilities import remove_ros_args
from tf2_ros import Buffer, TransformException, TransformListener


def main(argv: list[str]) -> int:
    stamp_ns, timeout_s, pairs = int(argv[0]), float(argv[1]), argv[2:]
    rclpy.init()  # with sys.argv: its ROS arguments, if any
    node = rclpy.create_node("tf2_lookup")
    buffer = Buffer()
    listener = TransformListener(buffer, node, spin_thread=True)
    poses: dict[str, list[float]] = {}
    try:
        for pair in pairs:
            target, source = pair.split(",")
            stamped = buffer.lookup_transform(
                target, source, Time(nanoseconds=stamp_ns), timeout=Duration(seconds=timeout_s)
            )
            t, q = stamped.transform.translation, stamped.transform.rotation
            poses[pair] = [t.x, t.y, t.z, q.x, q.y, q.z, q.w]
            print(f"resolved {pair}", file=sys.stderr, flush=True)
    except TransformException as err:
        print(f"tf2 lookup failed: {type(err).__name__}: {err}", file=sys.stderr)
        return 1
    finally:
        listener.unregister()
        node.destroy_node()
        rclpy.try_shutdown()
    print(json.dumps(poses))
    return 0


if __name__ == "__main__":
    sys.exit(main(remove_ros_args(sys.argv)[1:]))
