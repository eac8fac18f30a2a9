"""``python -m bench --profile``: where the node's time per JointState goes, in-process.

Through public entry points only: the pipeline the node runs (``JointStatePipeline.joint_state``,
``ignore_timestamp`` true) on the humanoid, then the CDR bytes of its answer
(``Publication.to_bytes``), for synthetic JointStates; microseconds per call of each, of both
with a global tree too (``global_frame_prefix``: the global tree's bytes as well), of the
intake every door calls (``take_joint_state``: the JointState's bytes to the TFMessage's, its
short way after the first message), and of ``Robot.link_fk`` for comparison; then the top
functions under cProfile. No rclpy context is created: nothing of DDS runs, nothing is left to
stop at exit.
"""

from __future__ import annotations

import cProfile
import io
import logging
import os
import pstats
import statistics
import time
from collections.abc import Callable

import numpy as np

from .models import MODELS

TOP_ENTRIES = 25


def _micros(call: Callable[[int], object], count: int) -> list[float]:
    """Microseconds of each of ``count`` calls ``call(k)``."""
    samples = []
    for k in range(count):
        start = time.perf_counter()
        call(k)
        samples.append((time.perf_counter() - start) * 1e6)
    return samples


def _summary(samples: list[float]) -> str:
    return (
        f"mean {statistics.mean(samples):7.1f}  median {statistics.median(samples):7.1f}  "
        f"p99 {np.quantile(samples, 0.99):7.1f}"
    )


def profile_callback(count: int) -> int:
    """Time and profile ``count`` JointStates; print the figures; 0."""
    from joint_tf_publisher import Robot
    from joint_tf_publisher.health.reporting import Reporter
    from joint_tf_publisher.node_core.parameters import Settings
    from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel

    spec = MODELS["humanoid"]
    robot = Robot.from_xml_string(spec.to_urdf())

    def pipeline_of(settings: Settings) -> JointStatePipeline:
        made = JointStatePipeline(settings, Reporter(logging.getLogger("bench")), time.time_ns)
        made.install(LoadedModel(robot, spec.to_urdf()))
        return made

    pipeline = pipeline_of(Settings(ignore_timestamp=True))
    with_global_tree = pipeline_of(Settings(ignore_timestamp=True, global_frame_prefix="fleet/"))
    configurations = spec.sample(5, count)
    names = tuple(configurations[0])
    rows = [np.array(list(values.values())) for values in configurations]
    start_ns = time.time_ns()

    def message(k: int) -> None:
        publication = pipeline.joint_state(start_ns + k * 1_000_000, names, rows[k])
        assert publication is not None
        publication.to_bytes()

    def message_with_global_tree(k: int) -> None:
        publication = with_global_tree.joint_state(start_ns + k * 1_000_000, names, rows[k])
        assert publication is not None
        publication.to_bytes()
        global_publication = publication.in_global_tree()
        assert global_publication is not None
        global_publication.to_bytes()

    from rclpy.serialization import serialize_message  # no context: nothing of DDS runs
    from sensor_msgs.msg import JointState

    def serialized(k: int) -> bytes:
        msg = JointState(name=list(names), position=rows[k].tolist())
        stamp_ns = start_ns + k * 1_000_000
        msg.header.stamp.sec, msg.header.stamp.nanosec = divmod(stamp_ns, 1_000_000_000)
        return bytes(serialize_message(msg))

    joint_states = [serialized(k) for k in range(count)]
    intake = pipeline_of(Settings(ignore_timestamp=True))

    def take(k: int) -> None:
        message = intake.take_joint_state(joint_states[k])
        if not isinstance(message, bytes):  # the first message of the stream: a Publication
            assert message is not None
            message.to_bytes()

    publications = [pipeline.joint_state(start_ns, names, row) for row in rows[:200]]  # warm up
    for row in rows[:200]:
        with_global_tree.joint_state(start_ns, names, row)
    counts = spec.counts()
    print(
        f"# {spec.name}: {counts['independent']} names per JointState, "
        f"{counts['moving']} transforms per answer, {count} messages; microseconds per call\n"
    )
    stages = {
        "pipeline.joint_state": lambda k: pipeline.joint_state(start_ns + k, names, rows[k]),
        "Publication.to_bytes": lambda k: publications[k % len(publications)].to_bytes(),
        "both (the node's work per JointState)": message,
        "both + the global tree (global_frame_prefix)": message_with_global_tree,
        "take_joint_state (the intake: bytes in, bytes out)": take,
        "Robot.link_fk (every link, for comparison)": lambda k: robot.link_fk(configurations[k]),
    }
    for stage, call in stages.items():
        print(f"  {stage:52s} {_summary(_micros(call, count))}")
    profiler = cProfile.Profile()
    profiler.runcall(lambda: list(map(message, range(count))))
    for order in ("tottime", "cumulative"):
        stream = io.StringIO()
        pstats.Stats(profiler, stream=stream).sort_stats(order).print_stats(TOP_ENTRIES)
        lines = [line for line in stream.getvalue().splitlines() if line.strip()]
        first = next((i for i, line in enumerate(lines) if "ncalls" in line), 0)
        print(f"\n## cProfile of 'both', top {TOP_ENTRIES} by {order}\n")
        print("\n".join(line.replace(os.getcwd() + "/", "") for line in lines[first:]))
    return 0
