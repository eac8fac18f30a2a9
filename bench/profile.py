"""``python -m bench --profile``: where the node's per-JointState time goes.

Builds the real node in-process on the humanoid (``ignore_timestamp`` true, so every message
is published), then calls its JointState callback directly with synthetic messages: first
timed without a profiler (mean and median microseconds per callback), then under cProfile.
The /tf publications go to DDS as in the running node (serialization included), with no
subscriber. The messages are serialized, as the node's subscription delivers them. Prints
the top functions by own time and by cumulative time, and a split of one callback into its
stages (reading the CDR bytes, the pipeline with the kinematics (the hot path) inside
it, writing the TFMessage bytes, publishing), with rclpy's deserialization for comparison.
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


def _synthetic_messages(count: int) -> list[bytes]:
    from rclpy.serialization import serialize_message
    from sensor_msgs.msg import JointState

    from joint_tf_publisher.ros.stamps import ns_to_stamp

    spec = humanoid()
    names = [joint.name for joint in spec.independent_joints]
    values = spec.sample_independent(np.random.default_rng(5), count)
    messages = []
    start_ns = time.time_ns()
    for k in range(count):
        msg = JointState()
        msg.name = names
        msg.position = [float(values[name][k]) for name in names]
        msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(start_ns + k * 1_000_000)
        messages.append(serialize_message(msg))
    return messages


def _per_call_us(call: Callable[[Any], None], messages: list[Any]) -> list[float]:
    samples = []
    for msg in messages:
        start = time.perf_counter()
        call(msg)
        samples.append((time.perf_counter() - start) * 1e6)
    return samples


def _stage_split(node: Any, messages: list[bytes]) -> list[tuple[str, float]]:
    """Median microseconds of the callback's stages, called the way the node calls them
    (``cdr.JointStateReader``, ``pipeline.joint_state``, ``Publication.to_bytes``, the /tf
    publisher), and kinematics' share of the pipeline."""
    from rclpy.serialization import deserialize_message
    from sensor_msgs.msg import JointState

    from joint_tf_publisher.kinematics import MessagePlan
    from joint_tf_publisher.ros.cdr import JointStateReader

    reader, pipeline = JointStateReader(), node.pipeline
    stages: dict[str, list[float]] = {
        "rclpy: deserialize JointState (not used)": [],
        "cdr: read JointState": [],
        "pipeline.joint_state": [],
        "  of which kinematics (MessagePlan.resolve: apply, then poses)": [],
        "Publication.to_bytes": [],
    }
    spent = {"kinematics": 0.0}
    resolve = MessagePlan.resolve

    def timed_resolve(self: MessagePlan, *args: Any) -> Any:
        start = time.perf_counter()
        result = resolve(self, *args)
        spent["kinematics"] = time.perf_counter() - start
        return result

    MessagePlan.resolve = timed_resolve  # type: ignore[method-assign]
    try:
        for data in messages:
            t0 = time.perf_counter()
            deserialize_message(data, JointState)
            t1 = time.perf_counter()
            state = reader.read(data)
            t2 = time.perf_counter()
            publication = pipeline.joint_state(*state)
            t3 = time.perf_counter()
            publication.to_bytes()
            t4 = time.perf_counter()
            seconds = (
                t1 - t0,
                t2 - t1,
                t3 - t2,
                spent["kinematics"],
                t4 - t3,
            )
            for key, value in zip(stages, seconds, strict=True):
                stages[key].append(value * 1e6)
    finally:
        MessagePlan.resolve = resolve  # type: ignore[method-assign]
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
        (joint_states,) = [s for s in node.subscriptions if s.topic_name == "/joint_states"]
        callback = joint_states.callback
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
        print("stages (median us; publishing is the rest of the callback):")
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
