"""``bag`` section: ``joint-tf-publisher bag repair`` end to end on a recording of the
humanoid (read, compute, write), and where its time goes.

A recording of the humanoid's joint states at 1 kHz (``models``' humanoid:
test/make_humanoid_urdf.py's robot on a fixed base, as in every section; every independent
joint a sine within its limits, one JointState per millisecond, its description on
``/robot_description``) is written with rosbags' writer; the repair runs in a child process of
its own (``main`` of the command line), timed end to end, its peak RSS read from ``wait4``
(the repair's process; its writing process, reaped by it, shows only where it is the larger:
it peaks at about 31 MB, docs/benchmarks.md). The recordings are written first: 60 s in MCAP
(rosbag2's default storage since Iron, what ``ros2 bag record`` writes on Jazzy and Kilted:
zstd-compressed chunks) and in sqlite3, and 10 s in sqlite3 (quick: 20 s and 5 s), the two
lengths showing whether memory grows with the bag. Each is repaired ``RUNS`` times (quick:
once), the page cache flushed before each run, and the median quoted with the range. Then
the parts in this process, on the shorter bag: rosbags reading the bag alone, the node's
pipeline alone on the JointStates in memory (the short way, as the repair calls it), and
writing the TFMessages alone (``BagOutput``: rosbags' writer in its writing process).
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import numpy as np

from .models import MODELS
from .report import Table

#: JointState rate of the recording, Hz.
RATE_HZ = 1000.0
#: Recording lengths, s (full, quick).
LENGTHS_S = (10.0, 60.0)
QUICK_LENGTHS_S = (5.0, 20.0)
T0_NS = 1_767_225_600 * 1_000_000_000


def write_recording(path: Path, seconds: float, storage: str = "sqlite3") -> int:
    """The humanoid's joint states for ``seconds`` at ``RATE_HZ`` at ``path``; their count."""
    from rosbags.rosbag2 import CompressionFormat, CompressionMode, StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    spec = MODELS["humanoid"]
    joints = spec.independent_joints
    names = [joint.name for joint in joints]
    count = round(seconds * RATE_HZ)
    types = store.types
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    writer = Writer(path, version=9, storage_plugin=plugin)
    if storage == "mcap":  # zstd chunks, as `ros2 bag record` writes MCAP
        writer.set_compression(CompressionMode.STORAGE, CompressionFormat.ZSTD)
    with writer:
        states = writer.add_connection(
            "/joint_states", "sensor_msgs/msg/JointState", typestore=store
        )
        described = writer.add_connection(
            "/robot_description", "std_msgs/msg/String", typestore=store
        )
        text = types["std_msgs/msg/String"](data=spec.to_urdf())
        writer.write(described, T0_NS, store.serialize_cdr(text, "std_msgs/msg/String"))
        phases = np.arange(len(names), dtype=np.float64)
        # Within the limits (a value to clamp leaves the short way, as in the node).
        low, high = np.array([_range(joint) for joint in joints]).T
        middle, half = (low + high) / 2, 0.45 * (high - low)
        for k in range(count):
            stamp_ns = T0_NS + round(k * 1e9 / RATE_HZ)
            time_type = types["builtin_interfaces/msg/Time"]
            header = types["std_msgs/msg/Header"](
                stamp=time_type(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id=""
            )
            message = types["sensor_msgs/msg/JointState"](
                header=header,
                name=names,
                position=middle + half * np.sin(0.001 * k + phases),
                velocity=np.zeros(0),
                effort=np.zeros(0),
            )
            writer.write(
                states, stamp_ns, store.serialize_cdr(message, "sensor_msgs/msg/JointState")
            )
    return count


def _range(joint: Any) -> tuple[float, float]:
    """The values ``joint`` takes without clamping (continuous: a turn), radians or metres."""
    if joint.limit is None or joint.joint_type == "continuous":
        return -3.0, 3.0
    return float(joint.limit.lower), float(joint.limit.upper)


def timed_repair(source: Path, output: Path) -> tuple[float, float]:
    """Wall seconds and peak RSS (MB) of ``bag repair source -o output`` in a child process."""
    code = (
        "import sys; from joint_tf_publisher.cli.main import main; "
        f"sys.exit(main(['bag', 'repair', {str(source)!r}, '-o', {str(output)!r}]))"
    )
    started = time.perf_counter()
    child = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.DEVNULL)
    _, status, usage = os.wait4(child.pid, 0)
    seconds = time.perf_counter() - started
    child.returncode = os.waitstatus_to_exitcode(status)
    if child.returncode:
        raise RuntimeError(f"bag repair failed with status {child.returncode}")
    return seconds, usage.ru_maxrss / 1024.0


def parts(source: Path, workdir: Path) -> dict[str, float]:
    """Seconds of each part of a repair of ``source``, alone, in this process: reading the
    bag (rosbags), the pipeline on its JointStates in memory, writing as many TFMessages."""
    from joint_tf_publisher.cli.bag import messages
    from joint_tf_publisher.cli.bag.qos import tf_qos
    from joint_tf_publisher.cli.bag.reader import open_bag
    from joint_tf_publisher.cli.bag.repair import StderrLogger
    from joint_tf_publisher.cli.bag.types import TF_MESSAGE
    from joint_tf_publisher.cli.bag.writer import BagOutput, BagTopic
    from joint_tf_publisher.health.reporting import Reporter
    from joint_tf_publisher.node_core.parameter_changes import (
        TOPIC_SOURCE,
        load_description,
        prepared_model,
    )
    from joint_tf_publisher.node_core.parameters import Settings
    from joint_tf_publisher.node_core.pipeline import JointStatePipeline

    started = time.perf_counter()
    with open_bag(source) as bag:
        states = [bytes(data) for c, _, data in bag.messages() if c.topic == "/joint_states"]
    read_s = time.perf_counter() - started

    settings = Settings(ignore_timestamp=True)
    pipeline = JointStatePipeline(settings, Reporter(StderrLogger()), lambda: T0_NS)
    model, settings = prepared_model(
        load_description, MODELS["humanoid"].to_urdf(), TOPIC_SOURCE, settings
    )
    pipeline.install(model, settings)
    started = time.perf_counter()
    out: list[bytes] = []
    for data in states:
        message = pipeline.take_joint_state(data, 0)  # the intake, as the repair calls it
        if not isinstance(message, bytes):
            message = b"" if message is None else message.to_bytes()
        out.append(message)
    pipeline_s = time.perf_counter() - started

    started = time.perf_counter()
    with BagOutput(workdir / "write_only", "sqlite3", force=True) as output:
        definition, digest = messages.definition(TF_MESSAGE)
        tf = BagTopic("/tf", TF_MESSAGE, (tf_qos(),), msgdef=definition, digest=digest)
        connection = output.connection(tf)
        for k, data in enumerate(out):
            output.write(connection, T0_NS + k * 1_000_000, data)
    write_s = time.perf_counter() - started
    return {"read": read_s, "pipeline": pipeline_s, "write": write_s, "count": float(len(states))}


#: Timed runs of each recording (quick: one), their median quoted with their range.
RUNS = 3


def timed_runs(source: Path, output: Path, runs: int) -> list[tuple[float, float]]:
    """``runs`` repairs of ``source`` (wall s, peak RSS MB), each into a fresh ``output``,
    after the page cache's dirty pages are written out (``os.sync``: a run pays for its own
    writing, not for the recording's or the run's before)."""
    import shutil

    results = []
    for _ in range(runs):
        shutil.rmtree(output, ignore_errors=True)
        os.sync()
        results.append(timed_repair(source, output))
    shutil.rmtree(output, ignore_errors=True)
    return results


def run_bag(quick: bool) -> tuple[list[Table], dict[str, Any]]:
    """The section: the recordings written first, then each repaired end to end (MCAP, the
    storage `ros2 bag record` writes since Iron, then sqlite3 at two lengths), then the
    parts."""
    short_s, long_s = QUICK_LENGTHS_S if quick else LENGTHS_S
    runs = 1 if quick else RUNS
    rows: list[list[str]] = []
    record: dict[str, Any] = {"rate_hz": RATE_HZ, "timed_runs": runs, "runs": []}
    with tempfile.TemporaryDirectory(prefix="bench-bag-") as folder:
        workdir = Path(folder)
        recordings = [
            (f"{long_s:g} s, MCAP", long_s, "mcap"),
            (f"{long_s:g} s, sqlite3", long_s, "sqlite3"),
            (f"{short_s:g} s, sqlite3", short_s, "sqlite3"),
        ]
        counts = {
            label: write_recording(workdir / f"in_{index}", seconds, storage)
            for index, (label, seconds, storage) in enumerate(recordings)
        }
        for index, (label, seconds, storage) in enumerate(recordings):
            results = timed_runs(workdir / f"in_{index}", workdir / "out", runs)
            walls = sorted(wall for wall, _ in results)
            wall_s = float(np.median(walls))
            count = counts[label]
            rss_mb = max(rss for _, rss in results)
            rows.append(
                [
                    label,
                    f"{count:,}",
                    f"{wall_s:.2f} ({walls[0]:.2f}-{walls[-1]:.2f})",
                    f"{count / wall_s:,.0f} ({count / walls[-1]:,.0f}-{count / walls[0]:,.0f})",
                    f"{rss_mb:.0f}",
                ]
            )
            record["runs"].append(
                {"seconds": seconds, "storage": storage, "joint_states": count, "walls_s": walls,
                 "wall_s": wall_s, "rate": count / wall_s, "rss_mb": rss_mb}
            )  # fmt: skip
        split = parts(workdir / "in_2", workdir)
    record["parts"] = split
    parts_count = split["count"]
    part_rows = [
        [
            name,
            f"{split[name]:.2f}",
            f"{1e6 * split[name] / parts_count:.1f}",
            f"{parts_count / split[name]:,.0f}",
        ]
        for name in ("read", "pipeline", "write")
    ]
    spec = MODELS["humanoid"]
    end_to_end = Table(
        f"bag repair: the humanoid at {RATE_HZ:g} Hz, end to end",
        [
            "recording (storage in and out)",
            "JointStates",
            "wall s: median (range)",
            "JointStates/s: median (range)",
            "peak RSS MB",
        ],
        rows,
        [
            f"{len(spec.independent_joints)} joints per JointState; {runs} run(s) of each, one "
            "child process per run (start-up and imports included), the page cache's dirty "
            "pages written out before each (os.sync); peak RSS from wait4 (the repair's "
            "process; its writing process peaks at about 31 MB)",
            "target: >= 20,000 JointStates/s, memory flat in the bag's length",
        ],
    )
    where = Table(
        f"bag repair: where the time goes ({short_s:g} s recording, each part alone)",
        ["part", "s", "us per JointState", "JointStates/s"],
        part_rows,
        [
            "read: rosbags iterating the bag; pipeline: the node's JointStatePipeline on the "
            "bytes in memory (short way); write: rosbags writing as many TFMessages",
        ],
    )
    return [end_to_end, where], record
