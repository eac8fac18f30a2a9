"""Section ``remote``: what the remote output costs the node, and what it saves the link.

This node on the humanoid at 1 kHz of JointStates (``ignore_timestamp``: every one published
on /tf), in interleaved rounds, without and with a remote output of 8 frames at 10 Hz
(``REMOTE_FRAMES``): the node's CPU per JointState (target: within 1.03x), and the bytes per
second on /tf and on remote/tf (serialized sizes as the bench's raw readers take them).
Method and results: docs/benchmarks.md, "Remote output".
"""

from __future__ import annotations

import os
import tempfile
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from . import dds
from .report import Table, ratio
from .vs_rsp import EVENTS, EXECUTOR_VARIABLE, ROBOTS, bench_robot, median

#: The humanoid's chosen links: the waist and head, a camera frame (fixed under the head: a
#: static), both palms, a fingertip (under a palm) and both soles; the root is their parent.
REMOTE_FRAMES = [
    "waist_pitch_link",
    "head",
    "left_camera_optical_frame",
    "l_palm",
    "r_palm",
    "l_index_tip",
    "l_sole",
    "r_sole",
]
REMOTE_RATE_HZ = 10.0
REMOTE_TOPIC = "/remote/tf"
RATE_HZ = 1000.0
PLAIN, REMOTE = "ours", "ours+remote"


class ByteCounter:
    """Serialized bytes and messages of one TFMessage topic, read by the bench's raw reader
    (``dds.RawTfReader``, the node's ``tf_qos``) on a node of its own."""

    def __init__(self, topic: str, name: str) -> None:
        self.bytes = 0
        self.messages = 0
        self._reader = dds.RawTfReader(topic, f"jtp_bench_bytes_{name}", self._count)

    def _count(self, data: bytes) -> None:
        self.bytes += len(data)
        self.messages += 1

    def close(self) -> None:
        self._reader.close()


@dataclass
class RemoteTurn:
    """One node's turn: its CPU per JointState at ``RATE_HZ`` over the window, the bytes and
    messages on each topic (the window's output: counted from its start to 0.5 s after its
    end), the window's length (s) and the machine's load average after it."""

    node: str
    cpu_us_per_message: float
    seconds: float
    tf_bytes: int
    tf_messages: int
    remote_bytes: int
    remote_messages: int
    load_average: float

    def as_json(self) -> dict[str, Any]:
        return dict(vars(self))


def run_turn(
    probe: dds.Probe, node: str, params: Path, rows: Sequence[Sequence[float]], window_s: float
) -> RemoteTurn:
    """Start the node on ``params``, measure one window at ``RATE_HZ``; stop it."""
    log = params.with_suffix(f".{node}.{time.monotonic_ns()}.log")
    probe.static_message = None
    environ = {**os.environ, EXECUTOR_VARIABLE: EVENTS}
    process = dds.start_node(dds.node_command(params), log, None, environ)
    tf, remote = ByteCounter("/tf", "tf"), ByteCounter(REMOTE_TOPIC, "remote")
    try:
        probe.wait_ready(process, log)
        dds.publish(probe, RATE_HZ, 0.5, rows)  # warm-up, not counted
        time.sleep(0.3)
        tf.bytes = tf.messages = remote.bytes = remote.messages = 0
        cpu_before = dds.cpu_seconds(process.pid)
        started = time.perf_counter()
        sent = len(dds.publish(probe, RATE_HZ, window_s, rows))
        seconds = time.perf_counter() - started
        cpu_s = dds.cpu_seconds(process.pid) - cpu_before
        load = os.getloadavg()[0]
        time.sleep(0.5)  # the window's last messages
        counts = (tf.bytes, tf.messages, remote.bytes, remote.messages)
    finally:
        tf.close()
        remote.close()
        dds.stop_process(process)
    time.sleep(1.0)  # let the stopped node's endpoints leave discovery
    return RemoteTurn(node, cpu_s * 1e6 / sent, seconds, *counts, load)


def tick_microseconds(description: str, count: int = 200) -> float:
    """Median microseconds of one remote message's work in-process (``RemoteOutput.tick``:
    the composition of ``REMOTE_FRAMES`` and the TFMessage's bytes), on the humanoid after a
    JointState of every joint; no DDS."""
    import logging

    import numpy as np

    from joint_tf_publisher import Robot
    from joint_tf_publisher.health.reporting import Reporter
    from joint_tf_publisher.node_core.parameters import Settings
    from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel
    from joint_tf_publisher.node_core.remote_output import RemoteOutput

    settings = Settings(remote_frames=tuple(REMOTE_FRAMES), ignore_timestamp=True)
    pipeline = JointStatePipeline(settings, Reporter(logging.getLogger("bench")), lambda: 1)
    pipeline.install(LoadedModel(Robot.from_xml_string(description), description))
    output = RemoteOutput(pipeline)
    output.configure()
    names = tuple(pipeline.model.kin.variable_names)  # type: ignore[union-attr]
    pipeline.joint_state(1, names, np.zeros(len(names)))
    samples = []
    for k in range(count):
        pipeline.unsent_stamp_ns = 1
        started = time.perf_counter()
        publication = output.tick(k * 1_000_000_000)
        assert publication is not None
        publication.to_bytes()
        samples.append((time.perf_counter() - started) * 1e6)
    return median(samples)


def run_remote(quick: bool) -> tuple[list[Table], dict[str, Any]]:
    """The section: ``rounds`` interleaved rounds (5, quick 2) of a window (6 s, quick 2 s)
    per node."""
    rounds, window_s = (2, 2.0) if quick else (5, 6.0)
    dds.use_bench_domain()
    import rclpy

    robot = bench_robot(ROBOTS["humanoid"])
    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-remote-"))
    base = {"ignore_timestamp": True}
    params = {
        PLAIN: dds.write_params(workdir / "plain.yaml", robot.description, **base),
        REMOTE: dds.write_params(
            workdir / "remote.yaml",
            robot.description,
            **base,
            **{"remote.frames": REMOTE_FRAMES, "remote.rate": REMOTE_RATE_HZ},
        ),
    }
    turns: list[RemoteTurn] = []
    rclpy.init()
    try:
        probe = dds.Probe(robot.joint_names)
        try:
            for index in range(rounds):
                for node in [PLAIN, REMOTE] if index % 2 == 0 else [REMOTE, PLAIN]:
                    turns.append(run_turn(probe, node, params[node], robot.rows, window_s))
                print(f"remote: round {index + 1}/{rounds}", flush=True)
        finally:
            probe.close()
    finally:
        rclpy.try_shutdown()
    tick_us = tick_microseconds(robot.description)
    return [remote_table(turns, rounds, window_s, tick_us)], {
        "tick_us": tick_us,
        "frames": REMOTE_FRAMES,
        "remote_rate_hz": REMOTE_RATE_HZ,
        "rate_hz": RATE_HZ,
        "rounds": rounds,
        "window_s": window_s,
        "turns": [turn.as_json() for turn in turns],
    }


def remote_table(
    turns: Sequence[RemoteTurn], rounds: int, window_s: float, tick_us: float
) -> Table:
    """CPU per JointState without and with the remote output, and bytes per second."""
    table = Table(
        f"Remote output: humanoid at {RATE_HZ:g} Hz, {len(REMOTE_FRAMES)} frames at "
        f"{REMOTE_RATE_HZ:g} Hz; medians of {rounds} interleaved rounds, {window_s:g} s each",
        [
            "CPU us/msg ours / ours+remote",
            "ours+remote/ours",
            "/tf kB/s",
            "remote/tf kB/s",
            "/tf / remote/tf",
            "remote/tf msg/s",
            "tick us (per JointState)",
            "load 1m",
        ],
    )

    def of(node: str) -> list[RemoteTurn]:
        return [turn for turn in turns if turn.node == node]

    plain = median(t.cpu_us_per_message for t in of(PLAIN))
    remote = median(t.cpu_us_per_message for t in of(REMOTE))
    tf_rate = median(t.tf_bytes / t.seconds for t in of(REMOTE))
    remote_rate = median(t.remote_bytes / t.seconds for t in of(REMOTE))
    remote_messages = median(t.remote_messages / t.seconds for t in of(REMOTE))
    load = median(t.load_average for t in turns)
    table.rows.append(
        [
            f"{plain:.0f} / {remote:.0f}",
            ratio(remote, plain),
            f"{tf_rate / 1e3:.0f}",
            f"{remote_rate / 1e3:.1f}",
            f"{tf_rate / remote_rate:.0f}x" if remote_rate else "-",
            f"{remote_messages:.1f}",
            f"{tick_us:.0f} ({tick_us * REMOTE_RATE_HZ / RATE_HZ:.1f})",
            f"{load:.1f}",
        ]
    )
    table.notes.append(
        "CPU us/msg = the node process's CPU time over the window / JointStates sent (every one "
        "published on /tf: ignore_timestamp), events executor; bytes = serialized TFMessages "
        "as the bench's raw readers take them, the window's output per second of it; the "
        f"remote statics (latched, once) are not counted; frames: {', '.join(REMOTE_FRAMES)}; "
        "tick us = one remote message's work in-process (compose and serialize; median of 200, "
        f"no DDS), in brackets spread over the JointStates at {REMOTE_RATE_HZ:g} Hz / "
        f"{RATE_HZ:g} Hz: the composition's share of the CPU per JointState"
    )
    return table
