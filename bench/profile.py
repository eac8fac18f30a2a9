"""``python -m bench --profile``: where the node's per-JointState time goes.

Builds the real node in-process on the humanoid (``ignore_timestamp`` true, so every message
is published), then calls its JointState callback directly with synthetic messages: first
timed without a profiler (mean and median microseconds per callback), then under cProfile.
The /tf publications go to DDS as in the running node (serialization included), with no
subscriber. Prints the top functions by own time and by cumulative time, and a split of one
callback into its stages (JointState deserialization, kinematics.apply, joint_transforms,
serialization and publish).
"""

from __future__ import annotations

import cProfile
import io
import os
import pstats
import statistics
import time
from collections.abc import Callable
from typing import Any

import numpy as np

from .e2e import domain_id
from .models import humanoid

TOP_ENTRIES = 25


def _synthetic_messages(count: int) -> list[Any]:
    from sensor_msgs.msg import JointState

    spec = humanoid()
    names = [joint.name for joint in spec.independent_joints]
    values = spec.sample_independent(np.random.default_rng(5), count)
    messages = []
    start_ns = time.time_ns()
    for k in range(count):
        msg = JointState()
        msg.name = names
        msg.position = [float(values[name][k]) for name in names]
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(
            start_ns + k * 1_000_000, 1_000_000_000
        )
        messages.append(msg)
    return messages


def _per_call_us(call: Callable[[Any], None], messages: list[Any]) -> list[float]:
    samples = []
    for msg in messages:
        start = time.perf_counter()
        call(msg)
        samples.append((time.perf_counter() - start) * 1e6)
    return samples


def _stage_split(node: Any, messages: list[Any]) -> list[tuple[str, float]]:
    """Median microseconds of the callback's stages, called the way the node calls them.

    Uses the node's internals (``_model``, ``_tf.send_arrays``); an empty list where they
    changed. The first stage is rclpy's deserialization of the incoming JointState, which
    happens before the callback and is not in the callback's time.
    """
    from rclpy.serialization import deserialize_message, serialize_message
    from sensor_msgs.msg import JointState

    model = getattr(node, "_model", None)
    send_arrays = getattr(getattr(node, "_tf", None), "send_arrays", None)
    if model is None or send_arrays is None or not hasattr(model, "moving_frames"):
        return []
    kin, positions = model.kin, model.positions
    stages: dict[str, list[float]] = {
        "rclpy: deserialize JointState (before cb)": [],
        "kinematics.apply": [],
        "kinematics.joint_transforms": [],
        "frame list": [],
        "TransformSender.send_arrays (CDR+publish)": [],
    }
    raw = serialize_message(messages[0])
    for msg in messages:
        t0 = time.perf_counter()
        deserialize_message(raw, JointState)
        t1 = time.perf_counter()
        update = kin.apply(positions, msg.name, msg.position, clamp="hard")
        t2 = time.perf_counter()
        translations, quaternions = kin.joint_transforms(positions, update.moved)
        t3 = time.perf_counter()
        frames = [model.moving_frames[i] for i in update.moved.tolist()]
        t4 = time.perf_counter()
        send_arrays(frames, msg.header.stamp, translations, quaternions)
        t5 = time.perf_counter()
        for key, seconds in zip(stages, (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t5 - t4), strict=True):
            stages[key].append(seconds * 1e6)
    return [(key, statistics.median(values)) for key, values in stages.items()]


def profile_callback(count: int) -> int:
    """Run the profile and print it; 0 on success."""
    os.environ["ROS_DOMAIN_ID"] = str(domain_id())
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    from rclpy.parameter import Parameter

    from joint_tf_publisher.ros.node import JointTfPublisher

    spec = humanoid()
    rclpy.init()
    try:
        node = JointTfPublisher(
            parameter_overrides=[
                Parameter("robot_description", value=spec.to_urdf()),
                Parameter("ignore_timestamp", value=True),
            ]
        )
        callback = node._on_joint_state
        messages = _synthetic_messages(count)
        _per_call_us(callback, messages[: min(200, count)])  # warm caches
        samples = _per_call_us(callback, messages)
        counts = spec.counts()
        print(
            f"# JointState callback, {spec.name}: {counts['independent']} names per message, "
            f"{counts['moving']} transforms published per message, {count} messages\n"
        )
        print(
            f"without profiler: mean {statistics.mean(samples):.1f} us, median "
            f"{statistics.median(samples):.1f} us, p99 {np.quantile(samples, 0.99):.1f} us "
            f"per callback (= {1e6 / statistics.mean(samples):.0f} messages/s on one core)\n"
        )
        print("stages (median us):")
        for stage, micros in _stage_split(node, messages[: min(2000, count)]):
            print(f"  {stage:40s} {micros:8.1f}")
        profiler = cProfile.Profile()
        profiler.enable()
        for msg in messages:
            callback(msg)
        profiler.disable()
        for order in ("tottime", "cumulative"):
            stream = io.StringIO()
            pstats.Stats(profiler, stream=stream).sort_stats(order).print_stats(TOP_ENTRIES)
            print(f"\n## cProfile, top {TOP_ENTRIES} by {order}\n")
            print(_trim(stream.getvalue()))
        node.destroy_node()
    finally:
        rclpy.try_shutdown()
    return 0


def _trim(text: str) -> str:
    """pstats output without its header noise, paths shortened to the package."""
    lines = [line for line in text.splitlines() if line.strip()]
    start = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
    return "\n".join(line.replace(os.getcwd() + "/", "") for line in lines[start:])
