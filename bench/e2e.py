"""Section ``e2e``: the node as a subprocess, JointState in over DDS, /tf out, timed.

For each rate the bench process publishes ``sensor_msgs/JointState`` for the humanoid (every
independent joint, 63 values) at that rate for a fixed window, stamped with the wall clock
(``time.time_ns``) at send time; the node runs with ``ignore_timestamp:=true`` and stamps
its /tf transforms with the JointState's stamp, so receipt time minus stamp is the latency
from send to /tf receipt (both processes read the same CLOCK_REALTIME).

/tf is read raw (serialized CDR): the subscriber takes the stamp of the first transform from
the bytes, so the measuring side costs a few microseconds per message. The first message is
also deserialized to check that offset and to count the transforms per message.

Measured per rate: JointStates sent, TFMessages received (distinct stamps among those sent),
drops (sent minus received), /tf rate, latency median / p99 / max, and the node's CPU (user +
system time from /proc/<pid>/stat over the window, percent of one core) and resident memory
(VmRSS, and the peak VmHWM, from /proc/<pid>/status at the end).

The ROS domain id is the bench's own (BENCH_ROS_DOMAIN_ID, else 100 + pid % 100) and discovery
is limited to localhost, so a run never talks to other processes' nodes.
"""

from __future__ import annotations

import compileall
import json
import math
import os
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from joint_tf_publisher.ros.stamps import ns_to_stamp, stamp_to_ns

from .models import ModelSpec, humanoid
from .report import Table, verdict

#: Offset of the first transform's header stamp in a CDR TFMessage: 4 bytes encapsulation
#: header, 4 bytes sequence length, then stamp.sec (int32) and stamp.nanosec (uint32).
STAMP_OFFSET = 8
CLOCK_TICKS = os.sysconf("SC_CLK_TCK")
TARGET_RATE = 1000.0


@dataclass
class RateResult:
    """One rate's window: counts, latencies (s) and the node's resources."""

    rate_hz: float
    window_s: float
    sent: int
    received: int
    latencies: list[float] = field(default_factory=list)
    cpu_percent: float = 0.0
    rss_mb: float = 0.0
    peak_rss_mb: float = 0.0
    thread_cpu_percent: dict[str, float] = field(default_factory=dict)
    load_average: float = 0.0
    cpu_s: float = 0.0

    @property
    def drops(self) -> int:
        """JointStates for which no TFMessage arrived."""
        return self.sent - self.received

    def latency(self, quantile: float) -> float:
        """Latency quantile (0..1) in seconds, NaN without samples."""
        return float(np.quantile(self.latencies, quantile)) if self.latencies else float("nan")

    def as_json(self) -> dict[str, Any]:
        """Plain data for results.json (latencies summarised, in milliseconds)."""
        return {
            "rate_hz": self.rate_hz,
            "window_s": round(self.window_s, 3),
            "sent": self.sent,
            "received": self.received,
            "drops": self.drops,
            "tf_rate_hz": round(self.received / self.window_s, 1),
            "latency_ms": {
                "median": self.latency(0.5) * 1e3,
                "p99": self.latency(0.99) * 1e3,
                "max": max(self.latencies, default=float("nan")) * 1e3,
            },
            "node_cpu_percent": round(self.cpu_percent, 1),
            "node_rss_mb": round(self.rss_mb, 1),
            "node_peak_rss_mb": round(self.peak_rss_mb, 1),
            "node_thread_cpu_percent": self.thread_cpu_percent,
            "load_average_1min": round(self.load_average, 2),
        }


# -- the node process --------------------------------------------------------------------------


def domain_id() -> int:
    """The bench's own ROS domain id: BENCH_ROS_DOMAIN_ID, else 100 + pid % 100."""
    return int(os.environ.get("BENCH_ROS_DOMAIN_ID", 100 + os.getpid() % 100))


def node_command(params_file: Path) -> list[str]:
    """The node's console script (venv bin/ or lib/joint_tf_publisher/), else ``-m``."""
    prefix = Path(sys.executable).parent.parent
    for candidate in (
        prefix / "bin" / "joint_tf_publisher",
        prefix / "lib" / "joint_tf_publisher" / "joint_tf_publisher",
    ):
        if candidate.exists():
            command = [str(candidate)]
            break
    else:
        found = shutil.which("joint_tf_publisher")
        command = [found] if found else [sys.executable, "-m", "joint_tf_publisher.entry"]
    return command + ["--ros-args", "--params-file", str(params_file), "--log-level", "warn"]


def write_params(
    directory: Path, description: str, ignore_timestamp: bool = True, name: str = "params"
) -> Path:
    """A parameters file ``<name>.yaml``: robot_description (a JSON string is valid YAML) and,
    with ``ignore_timestamp``, ``ignore_timestamp: true`` (else the node's defaults).

    A file, not ``-p``: rcl's argument parser rejects a URDF with XML comments given by -p.
    """
    path = directory / f"{name}.yaml"
    lines = ["/**:", "  ros__parameters:", f"    robot_description: {json.dumps(description)}"]
    if ignore_timestamp:
        lines.append("    ignore_timestamp: true")
    path.write_text("\n".join(lines) + "\n")
    return path


def stat_cpu_seconds(stat: str) -> float:
    """User + system CPU time, seconds, from the text of /proc/<pid>/stat (fields 14 and 15,
    utime and stime in clock ticks; counted after the command name's last ``)``, which may
    hold spaces and parentheses)."""
    fields = stat.rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / CLOCK_TICKS


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, seconds (/proc/<pid>/stat)."""
    return stat_cpu_seconds(Path(f"/proc/{pid}/stat").read_text())


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds per thread name of a process (/proc/<pid>/task/*), same-named summed.

    The thread whose id is the pid (where rclpy spins and the callbacks run) is "main".
    """
    totals: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = "main" if task.name == str(pid) else (task / "comm").read_text().strip()
            seconds = stat_cpu_seconds((task / "stat").read_text())
        except OSError:  # the thread ended meanwhile
            continue
        totals[name] = totals.get(name, 0.0) + seconds
    return totals


def memory_mb(pid: int) -> tuple[float, float]:
    """(VmRSS, VmHWM) of a process in MiB."""
    values = {}
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        key, _, rest = line.partition(":")
        if key in ("VmRSS", "VmHWM"):
            values[key] = int(rest.split()[0]) / 1024.0
    return values.get("VmRSS", 0.0), values.get("VmHWM", 0.0)


def stop_process(process: subprocess.Popen[bytes]) -> None:
    """SIGINT, then SIGTERM, then SIGKILL, to this one process only."""
    for sig, wait in ((signal.SIGINT, 5.0), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        if process.poll() is not None:
            return
        process.send_signal(sig)
        try:
            process.wait(timeout=wait)
        except subprocess.TimeoutExpired:
            continue


# -- the bench's ROS side --------------------------------------------------------------------


class Probe:
    """The bench's rclpy node: a JointState publisher and a raw /tf subscriber."""

    def __init__(self, joint_names: Sequence[str]) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage

        self._rclpy = rclpy
        self.node = rclpy.create_node("jtp_bench_probe")
        self.joint_names = list(joint_names)
        self.publisher = self.node.create_publisher(JointState, "joint_states", 100)
        tf_qos = QoSProfile(
            depth=100, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
        )
        # /tf arrives at up to 1 kHz: a node of its own, outside the executor, read by a
        # thread with a reused wait set (the executor's per-message overhead would make the
        # bench the slow reliable reader that stalls the node's writer).
        self.tf_node = rclpy.create_node("jtp_bench_tf")
        self._tf_type = TFMessage
        self._tf_sub = self.tf_node.create_subscription(
            TFMessage, "/tf", lambda _: None, tf_qos, raw=True
        )
        self._closing = False
        static_qos = QoSProfile(
            depth=1,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        self.static_count = -1
        self.static_message: Any = None
        self.static_received_s = math.nan  # time.monotonic() at the last /tf_static
        self.node.create_subscription(TFMessage, "/tf_static", self._on_static, static_qos)
        self.sent_count = 0  # JointStates published so far
        self.message = JointState()
        self.message.name = list(self.joint_names)
        self.received: list[tuple[int, int]] = []  # (stamp ns, receipt ns)
        self.first_raw: bytes | None = None
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self._spinner = threading.Thread(target=self._spin, daemon=True)
        self._spinner.start()
        self._tf_reader = threading.Thread(target=self._read_tf, daemon=True)
        self._tf_reader.start()

    def _spin(self) -> None:
        while self._rclpy.ok():
            try:
                self.executor.spin_once(timeout_sec=0.1)
            except Exception:  # shutdown while waiting
                return

    def _read_tf(self) -> None:
        """Take every /tf message as it arrives (one reused wait set), until close()."""
        from rclpy.impl.implementation_singleton import rclpy_implementation as _rclpy

        handle = self._tf_sub.handle
        wait_set = _rclpy.WaitSet(1, 0, 0, 0, 0, 0, self.tf_node.context.handle)
        try:
            while self._rclpy.ok() and not self._closing:
                with handle:
                    wait_set.clear_entities()
                    wait_set.add_subscription(handle)
                    wait_set.wait(100_000_000)
                    while (taken := handle.take_message(self._tf_type, True)) is not None:
                        self._on_tf(taken[0])
        except Exception:  # shutdown while waiting
            return

    def _on_tf(self, data: bytes) -> None:
        receipt = time.time_ns()
        sec, nanosec = struct.unpack_from("<iI", data, STAMP_OFFSET)
        self.received.append((stamp_to_ns(sec, nanosec), receipt))
        if self.first_raw is None:
            self.first_raw = bytes(data)

    def _on_static(self, msg: Any) -> None:
        self.static_received_s = time.monotonic()
        self.static_message = msg
        self.static_count = len(msg.transforms)

    def ready(self) -> bool:
        """The node's /tf_static arrived and both topics are matched."""
        return (
            self.static_count >= 0
            and self.publisher.get_subscription_count() > 0
            and self.node.count_publishers("/tf") > 0
        )

    def send(self, positions: list[float]) -> int:
        """Publish one JointState stamped now (wall clock); return the stamp in ns."""
        stamp_ns = time.time_ns()
        header = self.message.header
        header.stamp.sec, header.stamp.nanosec = ns_to_stamp(stamp_ns)
        self.message.position = positions
        self.publisher.publish(self.message)
        self.sent_count += 1
        return stamp_ns

    def close(self) -> None:
        """Stop spinning and reading, and destroy the nodes."""
        self._closing = True
        self._tf_reader.join(timeout=2.0)
        self.executor.shutdown(timeout_sec=1.0)
        self.tf_node.destroy_node()
        self.node.destroy_node()


def publish_window(
    probe: Probe, rate_hz: float, seconds: float, rows: list[list[float]]
) -> list[int]:
    """Publish at ``rate_hz`` for ``seconds`` on an absolute schedule; return the stamps sent.

    A late message is sent at once (never skipped), so the count is rate * seconds.
    """
    period = 1.0 / rate_hz
    total = int(round(rate_hz * seconds))
    stamps = []
    start = time.perf_counter()
    for k in range(total):
        delay = start + k * period - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        stamps.append(probe.send(rows[k % len(rows)]))
    return stamps


def measure_rate(
    probe: Probe, pid: int, rate_hz: float, seconds: float, rows: list[list[float]]
) -> RateResult:
    """One window at one rate: warm-up, timed window, drain, then the counts."""
    publish_window(probe, rate_hz, min(0.5, seconds / 4), rows)  # warm-up, not counted
    time.sleep(0.3)
    probe.received.clear()
    threads_before = thread_cpu_seconds(pid)
    cpu_before, wall_before = cpu_seconds(pid), time.perf_counter()
    stamps = publish_window(probe, rate_hz, seconds, rows)
    wall = time.perf_counter() - wall_before
    cpu = cpu_seconds(pid) - cpu_before
    threads = {
        name: round(100.0 * (spent - threads_before.get(name, 0.0)) / wall, 1)
        for name, spent in thread_cpu_seconds(pid).items()
    }
    load = os.getloadavg()[0]
    rss, peak = memory_mb(pid)
    time.sleep(0.5)  # let the last messages arrive
    sent = set(stamps)
    latencies: dict[int, float] = {}
    for stamp, receipt in list(probe.received):
        if stamp in sent and stamp not in latencies:
            latencies[stamp] = (receipt - stamp) / 1e9
    return RateResult(
        rate_hz,
        wall,
        len(stamps),
        len(latencies),
        list(latencies.values()),
        100.0 * cpu / wall,
        rss,
        peak,
        {name: value for name, value in threads.items() if value >= 0.5},
        load,
        cpu,
    )


def sample_rows(spec: ModelSpec, count: int) -> list[list[float]]:
    rng = np.random.default_rng(11)
    values = spec.sample_independent(rng, count)
    return [[float(values[j.name][k]) for j in spec.independent_joints] for k in range(count)]


def _first_message_check(probe: Probe) -> tuple[int, bool]:
    """Transforms per TFMessage, and whether the raw stamp offset matches deserialization."""
    from rclpy.serialization import deserialize_message
    from tf2_msgs.msg import TFMessage

    if probe.first_raw is None:
        return 0, False
    msg = deserialize_message(probe.first_raw, TFMessage)
    sec, nanosec = struct.unpack_from("<iI", probe.first_raw, STAMP_OFFSET)
    stamp = msg.transforms[0].header.stamp if msg.transforms else None
    return len(msg.transforms), stamp is not None and (stamp.sec, stamp.nanosec) == (sec, nanosec)


REPO_ROOT = Path(__file__).resolve().parent.parent
#: Package directory of the node, extracted from git for a baseline variant.
PACKAGE = "joint_tf_publisher"
#: The node of any revision that has ``entry.node_main`` (its console script), run by ``-c``.
BASELINE_MAIN = f"import sys; from {PACKAGE}.entry import node_main; sys.exit(node_main())"


def byte_compile(import_root: Path = REPO_ROOT) -> None:
    """Write the .pyc files of the package under ``import_root``, as an installed package has
    them (pip and colcon compile at install): where PYTHONDONTWRITEBYTECODE is set, as on some
    CI machines, the node would otherwise compile its modules at every start (about 80 ms)."""
    compileall.compile_dir(import_root / PACKAGE, quiet=1)


def extract_revision(revision: str, directory: Path) -> Path:
    """``git archive`` the package at ``revision`` into ``directory``; return the import root.

    Raises RuntimeError naming the revision when git cannot produce it.
    """
    root = directory / f"rev-{revision.replace('/', '_').replace('^', '-parent')}"
    root.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", revision, PACKAGE], cwd=REPO_ROOT, capture_output=True, check=False
    )
    if archive.returncode != 0:
        raise RuntimeError(f"git archive {revision}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    byte_compile(root)
    return root


def variant_command(variant: str, params_file: Path, import_root: Path | None) -> list[str]:
    """The node's console script for ``node``, ``bench.floor_node`` for ``floor``, and
    ``BASELINE_MAIN`` from ``import_root`` for a baseline."""
    ros_args = ["--ros-args", "--params-file", str(params_file), "--log-level", "warn"]
    if variant == "floor":
        return [sys.executable, "-m", "bench.floor_node", *ros_args]
    if variant == "floor-tight":
        return [sys.executable, "-m", "bench.floor_node", "--spin-tight", *ros_args]
    if variant == "node-lean":
        return [sys.executable, "-m", "bench.tight_node", *ros_args]
    if import_root is None:
        return node_command(params_file)
    return [sys.executable, "-c", BASELINE_MAIN, *ros_args]


def start_node(
    command: list[str],
    log_path: Path,
    import_root: Path | None,
    environ: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start a node subprocess, output to ``log_path``; ``import_root`` first on the path;
    in ``environ`` (default: this process's environment)."""
    env = dict(os.environ if environ is None else environ)
    first = str(import_root) if import_root is not None else str(REPO_ROOT)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [first, env.get("PYTHONPATH")]))
    cwd = import_root if import_root is not None else REPO_ROOT
    with open(log_path, "wb") as log:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=cwd, env=env)


def wait_ready(probe: Probe, process: subprocess.Popen[bytes], log_path: Path) -> None:
    """Until the node's /tf_static arrived and topics match; RuntimeError after 30 s."""
    deadline = time.monotonic() + 30.0
    while not probe.ready():
        if process.poll() is not None or time.monotonic() > deadline:
            tail = log_path.read_text(errors="replace")[-2000:]
            raise RuntimeError(f"node did not come up (exit {process.poll()}):\n{tail}")
        time.sleep(0.1)
    time.sleep(0.5)  # let endpoint discovery settle


def run_e2e(
    quick: bool, rates: list[float], baseline: str | None = None
) -> tuple[Table, dict[str, Any]]:
    """Start the node on the humanoid, measure every rate, stop it; first the node at git
    revision ``baseline`` too, when given (a before/after comparison in one run)."""
    spec = humanoid()
    window = 3.0 if quick else 10.0
    os.environ["ROS_DOMAIN_ID"] = str(domain_id())
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    sys.setswitchinterval(1e-4)  # the /tf callback thread must not wait 5 ms for the GIL
    import rclpy

    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-e2e-"))
    params = write_params(workdir, spec.to_urdf())
    variants: dict[str, Path | None] = {}
    if baseline:
        variants[f"node@{baseline}"] = extract_revision(baseline, workdir)
    variants["node"] = None
    variants["node-lean"] = None
    variants["floor"] = None
    variants["floor-tight"] = None
    counts = spec.counts()
    table = Table(
        f"End to end over DDS: {spec.name} ({counts['independent']} joints in each "
        f"JointState, {counts['moving']} moving, {counts['fixed']} fixed), "
        f"{window:g} s per rate",
        [
            "node",
            "rate Hz",
            "sent",
            "/tf received",
            "/tf Hz",
            "drops",
            "latency median ms",
            "p99 ms",
            "max ms",
            "node CPU %",
            "main thread %",
            "node RSS MB",
            "load 1m",
        ],
    )
    record: dict[str, Any] = {
        "model": spec.name,
        "domain_id": os.environ["ROS_DOMAIN_ID"],
        "variants": {},
    }
    rows = sample_rows(spec, 997)
    rclpy.init()
    probe = Probe([joint.name for joint in spec.independent_joints])
    try:
        for variant, import_root in variants.items():
            command = variant_command(variant, params, import_root)
            log_path = workdir / f"{variant.replace('/', '_')}.log"
            probe.static_count = -1
            process = start_node(command, log_path, import_root)
            try:
                wait_ready(probe, process, log_path)
                probe.first_raw = None
                results = [measure_rate(probe, process.pid, rate, window, rows) for rate in rates]
            finally:
                stop_process(process)
            time.sleep(1.0)  # let the old node's endpoints leave discovery
            per_message, offset_ok = _first_message_check(probe)
            table.rows.extend([variant, *_row(result)] for result in results)
            record["variants"][variant] = {
                "command": command[:3],
                "rates": [result.as_json() for result in results],
                "transforms_per_message": per_message,
                "static_transforms": probe.static_count,
                "stamp_offset_checked": offset_ok,
            }
            table.notes.append(
                f"{variant}: {per_message} transforms per TFMessage on /tf, "
                f"{probe.static_count} on /tf_static; raw stamp parse checked: "
                f"{offset_ok}"
            )
            table.notes.extend(f"{variant}: {note}" for note in _targets(results))
    finally:
        probe.close()
        rclpy.try_shutdown()
    table.notes.append(
        "node = the joint_tf_publisher console script of this work tree; node@REV = the "
        "package at git revision REV (--baseline), run with python -m; floor = rclpy + "
        "Fast DDS alone: JointState in, a pre-serialized TFMessage of as many transforms out, "
        "no joint math (bench/floor_node.py); -tight/-lean = spun by a reused wait set on "
        "joint_states instead of rclpy.spin (bench/floor_node.py, bench/tight_node.py)"
    )
    table.notes.append(
        "latency = /tf receipt (wall clock) - JointState stamp (wall clock at "
        "send); node CPU = utime+stime / window (100 = one core), main thread = where rclpy "
        "spins and callbacks run; load 1m = machine load average after the window (2 cores)"
    )
    return table, record


def _row(result: RateResult) -> list[str]:
    return [
        f"{result.rate_hz:g}",
        str(result.sent),
        str(result.received),
        f"{result.received / result.window_s:.0f}",
        str(result.drops),
        f"{result.latency(0.5) * 1e3:.3f}",
        f"{result.latency(0.99) * 1e3:.3f}",
        f"{max(result.latencies, default=float('nan')) * 1e3:.3f}",
        f"{result.cpu_percent:.0f}",
        f"{result.thread_cpu_percent.get('main', 0.0):.0f}",
        f"{result.rss_mb:.0f}",
        f"{result.load_average:.1f}",
    ]


def _targets(results: list[RateResult]) -> list[str]:
    target = next((r for r in results if r.rate_hz == TARGET_RATE), None)
    if target is None:
        return []
    median, p99 = target.latency(0.5), target.latency(0.99)
    checks = [
        (f"no drops ({target.drops})", target.drops == 0),
        (f"median < 1 ms ({median * 1e3:.3f})", median < 1e-3),
        (f"p99 < 5 ms ({p99 * 1e3:.3f})", p99 < 5e-3),
        (f"node CPU < 60% ({target.cpu_percent:.0f}%)", target.cpu_percent < 60.0),
    ]
    threads = ", ".join(
        f"{name} {value:g}%"
        for name, value in sorted(target.thread_cpu_percent.items(), key=lambda kv: -kv[1])[:6]
    )
    return [f"target at {TARGET_RATE:g} Hz: {text} -> {verdict(ok)}" for text, ok in checks] + [
        f"node CPU by thread at {TARGET_RATE:g} Hz: {threads}"
    ]
