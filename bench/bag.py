"""``bag`` section: ``joint-tf-publisher bag repair`` end to end on a recording of the
humanoid (read, compute, write), and where its time goes.

A recording of the humanoid's joint states at 1 kHz (``models``' humanoid:
test/make_humanoid_urdf.py's robot on a fixed base, as in every section; every independent
joint a sine within its limits, one JointState per millisecond, its description on
``/robot_description``) is written with rosbags' writer; the repair runs in a child process of
its own (``main`` of the command line), timed end to end, its peak RSS read from ``wait4``
(the repair's process; its writing process, reaped by it, shows only where it is the larger:
it peaks at about 31 MB, docs/benchmarks.md). Two lengths (10 s and 60 s; quick: 5 s and
20 s) show whether memory grows with the bag, and the longer once more in MCAP (rosbag2's
default storage since Jazzy). Then the parts in this process, on the shorter bag: rosbags
reading the bag alone, the node's pipeline alone on the JointStates in memory (the short way,
as the repair calls it), and writing the TFMessages alone (``BagOutput``: rosbags' writer in
its writing process).
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
    from rosbags.rosbag2 import StoragePlugin, Writer
    from rosbags.typesys import Stores, get_typestore

    store = get_typestore(Stores.ROS2_JAZZY)
    spec = MODELS["humanoid"]
    joints = spec.independent_joints
    names = [joint.name for joint in joints]
    count = round(seconds * RATE_HZ)
    types = store.types
    plugin = StoragePlugin.MCAP if storage == "mcap" else StoragePlugin.SQLITE3
    with Writer(path, version=9, storage_plugin=plugin) as writer:
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
    from joint_tf_publisher.cli.bag.repair import StderrLogger
    from joint_tf_publisher.cli.bag.storage import BagOutput, open_bag, tf_qos
    from joint_tf_publisher.health.reporting import Reporter
    from joint_tf_publisher.node_core.cdr import JointStateReader
    from joint_tf_publisher.node_core.parameter_changes import (
        TOPIC_SOURCE,
        load_description,
        prepared_model,
    )
    from joint_tf_publisher.node_core.parameters import Settings
    from joint_tf_publisher.node_core.pipeline import JointStatePipeline

    started = time.perf_counter()
    bag = open_bag(source)
    states = [bytes(data) for c, _, data in bag.messages() if c.topic == "/joint_states"]
    bag.close()
    read_s = time.perf_counter() - started

    settings = Settings(ignore_timestamp=True)
    pipeline = JointStatePipeline(settings, Reporter(StderrLogger()), lambda: T0_NS)
    model, settings = prepared_model(
        load_description, MODELS["humanoid"].to_urdf(), TOPIC_SOURCE, settings
    )
    pipeline.install(model, settings)
    reader = JointStateReader()
    started = time.perf_counter()
    out: list[bytes] = []
    for data in states:
        message = pipeline.joint_state_bytes(data, 0)
        if message is None:
            state = reader.read(data)
            assert state is not None
            publication = pipeline.joint_state(*state, 0, reader.block)
            message = b"" if publication is None else publication.to_bytes()
        out.append(message)
    pipeline_s = time.perf_counter() - started

    started = time.perf_counter()
    output = BagOutput(workdir / "write_only", "sqlite3", force=True)
    definition, digest = messages.definition("tf2_msgs/msg/TFMessage")
    connection = output.connection("/tf", "tf2_msgs/msg/TFMessage", definition, digest, [tf_qos()])
    for k, data in enumerate(out):
        output.write(connection, T0_NS + k * 1_000_000, data)
    output.finish()
    write_s = time.perf_counter() - started
    return {"read": read_s, "pipeline": pipeline_s, "write": write_s, "count": float(len(states))}


def run_bag(quick: bool) -> tuple[list[Table], dict[str, Any]]:
    """The section: end to end at two lengths, then the parts."""
    lengths = QUICK_LENGTHS_S if quick else LENGTHS_S
    rows: list[list[str]] = []
    record: dict[str, Any] = {"rate_hz": RATE_HZ, "runs": []}
    with tempfile.TemporaryDirectory(prefix="bench-bag-") as folder:
        workdir = Path(folder)
        for seconds in lengths:
            source = workdir / f"humanoid_{seconds:g}s"
            count = write_recording(source, seconds)
            wall_s, rss_mb = timed_repair(source, workdir / f"repaired_{seconds:g}s")
            rate = count / wall_s
            rows.append(
                [f"{seconds:g} s", f"{count:,}", f"{wall_s:.1f}", f"{rate:,.0f}", f"{rss_mb:.0f}"]
            )
            record["runs"].append(
                {
                    "seconds": seconds,
                    "joint_states": count,
                    "wall_s": wall_s,
                    "rate": rate,
                    "rss_mb": rss_mb,
                }
            )
        source = workdir / "humanoid_mcap"
        count = write_recording(source, lengths[1], "mcap")
        wall_s, rss_mb = timed_repair(source, workdir / "repaired_mcap")
        rate = count / wall_s
        rows.append(
            [
                f"{lengths[1]:g} s, MCAP",
                f"{count:,}",
                f"{wall_s:.1f}",
                f"{rate:,.0f}",
                f"{rss_mb:.0f}",
            ]
        )
        record["runs"].append(
            {"seconds": lengths[1], "storage": "mcap", "joint_states": count, "wall_s": wall_s,
             "rate": rate, "rss_mb": rss_mb}
        )  # fmt: skip
        split = parts(workdir / f"humanoid_{lengths[0]:g}s", workdir)
    record["parts"] = split
    count = split["count"]
    part_rows = [
        [
            name,
            f"{split[name]:.2f}",
            f"{1e6 * split[name] / count:.1f}",
            f"{count / split[name]:,.0f}",
        ]
        for name in ("read", "pipeline", "write")
    ]
    spec = MODELS["humanoid"]
    end_to_end = Table(
        f"bag repair: the humanoid at {RATE_HZ:g} Hz, end to end",
        ["recording", "JointStates", "wall s", "JointStates/s", "peak RSS MB"],
        rows,
        [
            f"{len(spec.independent_joints)} joints per JointState; sqlite3 in and out (MCAP in "
            "and out on its row); one "
            "child process per run (start-up and imports included), peak RSS from wait4 (the "
            "repair's process; its writing process peaks at about 31 MB)",
            "target: >= 20,000 JointStates/s, memory flat in the bag's length",
        ],
    )
    where = Table(
        f"bag repair: where the time goes ({lengths[0]:g} s recording, each part alone)",
        ["part", "s", "us per JointState", "JointStates/s"],
        part_rows,
        [
            "read: rosbags iterating the bag; pipeline: the node's JointStatePipeline on the "
            "bytes in memory (short way); write: rosbags writing as many TFMessages",
        ],
    )
    return [end_to_end, where], record
