"""``python -m bench --profile``: where the node's per-JointState time goes.

Builds the real node in-process on the humanoid (``ignore_timestamp`` true, so every message
is published), then calls its JointState callback directly with synthetic messages: first
timed without a profiler (mean and median microseconds per callback), then under cProfile.
The /tf publications go to DDS as in the running node (serialization included), with no
subscriber. Prints the top functions by own time and by cumulative time, and a split of one
callback into its stages (kinematics.apply, joint_transforms, message filling, publish).
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
from .tf_cdr import TFMessageWriter

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
    """Median microseconds of the callback's stages, called the way the node calls them."""
    from joint_tf_publisher.node import fill_transforms

    model = node._model
    kin, positions = model.kin, model.positions
    stages: dict[str, list[float]] = {
        "kinematics.apply": [],
        "joint_transforms": [],
        "fill_transforms (Python messages)": [],
        "TFMessage + publish": [],
        "proposed: TFMessageWriter.write (CDR)": [],
        "proposed: publish(bytes)": [],
    }
    from tf2_msgs.msg import TFMessage

    publisher = node._tf._publisher if not node._tf.uses_tf2_ros else None
    writers: dict[bytes, TFMessageWriter] = {}
    for msg in messages:
        t0 = time.perf_counter()
        update = kin.apply(positions, msg.name, msg.position, clamp="hard")
        t1 = time.perf_counter()
        translations, quaternions = kin.joint_transforms(positions, update.moved)
        t2 = time.perf_counter()
        transforms = fill_transforms(
            [model.moving_messages[i] for i in update.moved.tolist()],
            translations,
            quaternions,
            msg.header.stamp,
        )
        t3 = time.perf_counter()
        if publisher is not None:
            publisher.publish(TFMessage(transforms=transforms))
        t4 = time.perf_counter()
        key_bytes = update.moved.tobytes()
        writer = writers.get(key_bytes)
        if writer is None:
            writer = writers[key_bytes] = TFMessageWriter(
                [(m.header.frame_id, m.child_frame_id) for m in transforms]
            )
            if publisher is not None:
                _check_same_bytes(writer, transforms, translations, quaternions)
        stamp = msg.header.stamp
        t5 = time.perf_counter()
        raw = writer.write(stamp.sec, stamp.nanosec, translations, quaternions)
        t6 = time.perf_counter()
        if publisher is not None:
            publisher.publish(raw)
        t7 = time.perf_counter()
        spans = (t1 - t0, t2 - t1, t3 - t2, t4 - t3, t6 - t5, t7 - t6)
        for key, seconds in zip(stages, spans, strict=True):
            stages[key].append(seconds * 1e6)
    return [(key, statistics.median(values)) for key, values in stages.items()]


def _check_same_bytes(
    writer: TFMessageWriter, transforms: list[Any], translations: Any, quaternions: Any
) -> None:
    """The proposed writer's bytes must deserialize to the node's own message, field for field.

    (Not compared byte for byte: rclpy leaves whatever was in memory in CDR padding bytes.)
    """
    from rclpy.serialization import deserialize_message, serialize_message
    from tf2_msgs.msg import TFMessage

    stamp = transforms[0].header.stamp
    ours = writer.write(stamp.sec, stamp.nanosec, translations, quaternions)
    expected = TFMessage(transforms=transforms)
    if len(ours) != len(serialize_message(expected)):
        raise AssertionError("TFMessageWriter output length differs from rclpy's")
    if deserialize_message(ours, TFMessage) != expected:
        raise AssertionError("TFMessageWriter output deserializes to a different TFMessage")


def profile_callback(count: int) -> int:
    """Run the profile and print it; 0 on success."""
    os.environ["ROS_DOMAIN_ID"] = str(domain_id())
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    from rclpy.parameter import Parameter

    from joint_tf_publisher.node import JointTfPublisher

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
        print(
            "stages (median us; 'proposed' = serialized TFMessage from a byte template, "
            "checked equal to the node's message):"
        )
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
