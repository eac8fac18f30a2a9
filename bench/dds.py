"""The one runner of nodes over DDS, for the ``vs_rsp`` section and ``tools/soak.py``.

A node runs as a subprocess on a parameters file; the ``Probe`` publishes JointState stamped
with the wall clock and reads /tf raw (the first stamp at ``STAMP_OFFSET`` of the CDR bytes):
receipt minus stamp is the latency. /tf is taken by the bench's one raw reader
(``RawTfReader``, which the fleet and remote sections use too; the QoS are the node's,
``ros/qos.py``) with one reused wait set (``read_raw``): an
executor's per-message overhead would make the bench the slow reliable reader that stalls the
node's writer at 1 kHz. The node's CPU time comes from its CPU-time clock and, per thread,
from /proc (both in nanoseconds); its memory from /proc.
"""

from __future__ import annotations

import compileall
import json
import math
import os
import struct
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from joint_tf_publisher.cli import demo
from joint_tf_publisher.stamps import ns_to_stamp, stamp_to_ns

from .models import REPO_ROOT

PACKAGE = "joint_tf_publisher"
#: The first transform's header stamp in a CDR TFMessage: 4 bytes encapsulation header, 4 bytes
#: sequence length, then stamp.sec (int32) and stamp.nanosec (uint32).
STAMP_OFFSET = 8
STAMP = struct.Struct("<iI")


def use_bench_domain() -> None:
    """This process's DDS domain: BENCH_ROS_DOMAIN_ID, else 100 + pid % 100; localhost."""
    os.environ["ROS_DOMAIN_ID"] = os.environ.get(
        "BENCH_ROS_DOMAIN_ID", str(100 + os.getpid() % 100)
    )
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")


# -- the node process ---------------------------------------------------------------------------


#: What the node's console script runs (setup.py), for a node without the script.
ENTRY = f"import sys; from {PACKAGE}.entry import node_main; sys.exit(node_main())"


def node_command(params_file: Path, import_root: Path | None = None) -> list[str]:
    """The node's console script beside this interpreter (venv bin/ or colcon's lib/), else
    its entry point by ``python -c``; always the latter for ``import_root`` (a baseline's
    extracted package, first on the node's path: see ``start_node``)."""
    ros_args = ["--ros-args", "--params-file", str(params_file), "--log-level", "warn"]
    prefix = Path(sys.executable).parent.parent
    for script in (prefix / "bin" / PACKAGE, prefix / "lib" / PACKAGE / PACKAGE):
        if import_root is None and script.exists():
            return [str(script), *ros_args]
    return [sys.executable, "-c", ENTRY, *ros_args]


def write_params(path: Path, description: str, **parameters: object) -> Path:
    """A parameters file for every node: robot_description (a JSON string is valid YAML) and
    ``parameters`` (JSON values; a dict is a nested mapping). A file, not ``-p``: rcl's
    argument parser rejects a URDF with XML comments given by -p."""
    values = {"robot_description": description, **parameters}
    lines = ["/**:", "  ros__parameters:"]
    lines += [f"    {name}: {json.dumps(value)}" for name, value in values.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


def byte_compile(import_root: Path = REPO_ROOT) -> None:
    """Write the package's .pyc files, as pip and colcon do at install: where
    PYTHONDONTWRITEBYTECODE is set the node would compile itself at every start (~80 ms)."""
    compileall.compile_dir(import_root / PACKAGE, quiet=1)


def extract_revision(revision: str, directory: Path) -> Path:
    """The package at git ``revision`` (``git archive``) byte-compiled under ``directory``;
    the import root. RuntimeError naming the revision when git cannot produce it."""
    root = directory / f"rev-{revision.replace('/', '_').replace('^', '-parent')}"
    root.mkdir(parents=True, exist_ok=True)
    archive = subprocess.run(
        ["git", "archive", revision, PACKAGE], cwd=REPO_ROOT, capture_output=True
    )
    if archive.returncode != 0:
        raise RuntimeError(f"git archive {revision}: {archive.stderr.decode().strip()}")
    subprocess.run(["tar", "-x", "-C", str(root)], input=archive.stdout, check=True)
    byte_compile(root)
    return root


def start_node(
    command: list[str],
    log_path: Path,
    import_root: Path | None = None,
    environ: Mapping[str, str] | None = None,
) -> subprocess.Popen[bytes]:
    """Start a node, its output to ``log_path``, ``import_root`` (else the repository) first
    on its Python path, in ``environ`` (default: this process's)."""
    env = dict(os.environ if environ is None else environ)
    first = str(import_root or REPO_ROOT)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [first, env.get("PYTHONPATH")]))
    with open(log_path, "wb") as log:
        return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, cwd=first, env=env)


def stop_process(process: subprocess.Popen[bytes]) -> int:
    """SIGINT, then SIGTERM, then SIGKILL to this one process (the package's own escalation,
    20 s for SIGINT: a node under load takes longer); its exit status."""
    return demo.stop_process(process, interrupt_wait_s=20.0)


def process_cpu_clock(pid: int) -> int:
    """The clock id of a process's CPU time, all its threads summed, ended ones included:
    Linux's ``MAKE_PROCESS_CPUCLOCK(pid, CPUCLOCK_SCHED)`` (what ``clock_getcpuclockid(3)``
    returns), read in nanoseconds, where /proc/<pid>/stat counts in 10 ms ticks."""
    return ((~pid) << 3) | 2


def cpu_seconds(pid: int) -> float:
    """User + system CPU time of a process so far, seconds (ns resolution); NaN once it is
    gone."""
    try:
        return time.clock_gettime_ns(process_cpu_clock(pid)) / 1e9
    except OSError:
        return math.nan


def thread_cpu_seconds(pid: int) -> dict[str, float]:
    """CPU seconds per thread name (same names summed; from each thread's
    /proc/<pid>/task/<tid>/schedstat, nanoseconds on the CPU); the thread whose id is the pid,
    where rclpy spins and the callbacks run, is ``main``."""
    totals: dict[str, float] = {}
    for task in Path(f"/proc/{pid}/task").iterdir():
        try:
            name = "main" if task.name == str(pid) else (task / "comm").read_text().strip()
            on_cpu_ns = int((task / "schedstat").read_text().split()[0])
        except OSError:  # the thread ended meanwhile
            continue
        totals[name] = totals.get(name, 0.0) + on_cpu_ns / 1e9
    return totals


def rss_mb(pid: int) -> float:
    """The resident memory (VmRSS) of a process in MiB; NaN once it is gone."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024.0  # kB
    except OSError:
        pass
    return math.nan


# -- the bench's ROS side -----------------------------------------------------------------------


def read_raw(
    subscription: Any,
    context: Any,
    message_type: Any,
    on_message: Callable[[bytes], None],
    done: Callable[[], bool],
) -> None:
    """Hand every serialized message of ``subscription`` (a raw one, of node ``context``) to
    ``on_message`` until ``done()``: one reused wait set, every queued message taken per
    wake-up, ``done`` asked every 10 ms at least."""
    from rclpy.impl.implementation_singleton import rclpy_implementation as binding

    handle = subscription.handle
    wait_set = binding.WaitSet(1, 0, 0, 0, 0, 0, context.handle)
    while not done():
        with handle:
            wait_set.clear_entities()
            wait_set.add_subscription(handle)
            wait_set.wait(10_000_000)  # ns
            while (taken := handle.take_message(message_type, True)) is not None:
                on_message(taken[0])


class RawTfReader:
    """A TFMessage topic read raw, the bench's one reader of /tf (and remote/tf): a node of
    its own, outside any executor, a raw subscription with ``qos`` (default: the node's
    ``tf_qos``) and a thread handing every message's bytes to ``on_message``
    (``read_raw``) until ``close``."""

    def __init__(
        self, topic: str, name: str, on_message: Callable[[bytes], None], qos: Any = None
    ) -> None:
        import rclpy
        from tf2_msgs.msg import TFMessage

        from joint_tf_publisher.ros.qos import tf_qos

        self._node = rclpy.create_node(name)
        subscription = self._node.create_subscription(
            TFMessage, topic, lambda _: None, tf_qos() if qos is None else qos, raw=True
        )
        self._closing = False
        done = lambda: self._closing or not rclpy.ok()  # noqa: E731
        self._thread = threading.Thread(
            target=read_raw,
            args=(subscription, self._node.context, TFMessage, on_message, done),
            daemon=True,
        )
        self._thread.start()

    def close(self) -> None:
        """Stop the thread and destroy the node (rclpy itself stays up)."""
        self._closing = True
        self._thread.join(timeout=2.0)
        self._node.destroy_node()


@dataclass
class Window:
    """One rate's timed window: counts, latencies (s), the node's CPU and memory."""

    rate_hz: float
    seconds: float
    sent: int
    latencies: list[float]
    cpu_s: float
    thread_cpu_s: dict[str, float]
    rss_mb: float
    load_average: float

    @property
    def received(self) -> int:
        """JointStates whose /tf message arrived."""
        return len(self.latencies)

    def latency(self, quantile: float) -> float:
        """Latency quantile (0..1), seconds; NaN without samples."""
        return float(np.quantile(self.latencies, quantile)) if self.latencies else math.nan

    def cpu_us_per_message(self, thread: str | None = None) -> float:
        """CPU microseconds per JointState sent, of the process or of one of its threads."""
        spent = self.cpu_s if thread is None else self.thread_cpu_s.get(thread, math.nan)
        return spent * 1e6 / self.sent if self.sent else math.nan

    def as_json(self) -> dict[str, Any]:
        """Plain data for results.json (seconds, milliseconds, microseconds, MiB)."""
        latency_ms = {"median": self.latency(0.5) * 1e3, "p99": self.latency(0.99) * 1e3}
        figures = {"received": self.received, "latency_ms": latency_ms}
        figures["cpu_us_per_message"] = self.cpu_us_per_message()
        figures["main_thread_us_per_message"] = self.cpu_us_per_message("main")
        return {**{k: v for k, v in vars(self).items() if k != "latencies"}, **figures}


class Probe:
    """The bench's rclpy side: a JointState publisher, a raw /tf reader (a thread on a node
    of its own, outside the executor) and a /tf_static subscriber (spun by a thread)."""

    def __init__(
        self, joint_names: Sequence[str], topic: str = "joint_states", keep_every: int = 0
    ) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage

        from joint_tf_publisher.ros.qos import tf_static_qos

        self.node = rclpy.create_node("jtp_bench_probe")
        self.publisher = self.node.create_publisher(JointState, topic, 100)
        self.message = JointState(name=list(joint_names))
        self.received: list[tuple[int, int]] = []  # (stamp ns, receipt ns)
        self.first_raw: bytes | None = None  # the first /tf message since it was last reset
        self.keep_every = keep_every  # keep one /tf message in so many (0: none) in ``kept``
        self.kept: list[bytes] = []
        self.static_message: Any = None
        self.static_received_s = math.nan  # time.monotonic() at the last /tf_static
        self.node.create_subscription(TFMessage, "/tf_static", self._on_static, tf_static_qos())
        self._tf = RawTfReader("/tf", "jtp_bench_tf", self._on_tf)
        self._closing = False
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        done = lambda: self._closing or not rclpy.ok()  # noqa: E731
        self._thread = threading.Thread(target=self._spin, args=(done,), daemon=True)
        self._thread.start()

    def _spin(self, done: Callable[[], bool]) -> None:
        while not done():
            self.executor.spin_once(timeout_sec=0.05)

    def _on_tf(self, data: bytes) -> None:
        receipt = time.time_ns()
        sec, nanosec = STAMP.unpack_from(data, STAMP_OFFSET)
        self.received.append((stamp_to_ns(sec, nanosec), receipt))
        if self.first_raw is None:
            self.first_raw = bytes(data)
        if self.keep_every and len(self.received) % self.keep_every == 0:
            self.kept.append(bytes(data))

    def _on_static(self, msg: Any) -> None:
        self.static_received_s = time.monotonic()
        self.static_message = msg

    def wait_ready(
        self, process: subprocess.Popen[bytes], log_path: Path, timeout_s: float = 60.0
    ) -> None:
        """Until a new /tf_static arrived and both topics matched; RuntimeError with the
        node's log after ``timeout_s`` or once it exited."""
        deadline = time.monotonic() + timeout_s
        while not (
            self.static_message is not None
            and self.publisher.get_subscription_count() > 0
            and self.node.count_publishers("/tf") > 0
        ):
            if process.poll() is not None or time.monotonic() > deadline:
                tail = log_path.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"node did not come up (exit {process.poll()}):\n{tail}")
            time.sleep(0.05)
        time.sleep(0.5)  # let endpoint discovery settle

    def send(self, positions: Sequence[float]) -> int:
        """Publish one JointState stamped now (wall clock); the stamp in ns."""
        stamp_ns = time.time_ns()
        self.message.header.stamp.sec, self.message.header.stamp.nanosec = ns_to_stamp(stamp_ns)
        self.message.position = list(positions)
        self.publisher.publish(self.message)
        return stamp_ns

    def answer(self, positions: Sequence[float]) -> Any:
        """The TFMessage answering one JointState of ``positions``, sent until it comes (the
        node's joint_states QoS is best effort); RuntimeError after 5 tries."""
        from rclpy.serialization import deserialize_message
        from tf2_msgs.msg import TFMessage

        self.first_raw = None
        for _ in range(5):
            self.send(positions)
            deadline = time.monotonic() + 1.0
            while self.first_raw is None and time.monotonic() < deadline:
                time.sleep(0.01)
            if self.first_raw is not None:
                return deserialize_message(self.first_raw, TFMessage)
        raise RuntimeError("no /tf answer to a JointState")

    def close(self) -> None:
        """Stop the threads and destroy the nodes (rclpy itself stays up)."""
        self._closing = True
        self._thread.join(timeout=2.0)
        self._tf.close()
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()


def publish(
    probe: Probe, rate_hz: float, seconds: float, rows: Sequence[Sequence[float]]
) -> list[int]:
    """Publish ``rows`` in turn at ``rate_hz`` for ``seconds`` on an absolute schedule (a late
    message is sent at once, never skipped); the stamps sent."""
    period, stamps = 1.0 / rate_hz, []
    start = time.perf_counter()
    for k in range(int(round(rate_hz * seconds))):
        delay = start + k * period - time.perf_counter()
        if delay > 0:
            time.sleep(delay)
        stamps.append(probe.send(rows[k % len(rows)]))
    return stamps


def measure(
    probe: Probe, pid: int, rate_hz: float, seconds: float, rows: Sequence[Sequence[float]]
) -> Window:
    """One rate: a warm-up (not counted), the timed window, a drain, then the counts."""
    publish(probe, rate_hz, min(0.5, seconds / 4), rows)
    time.sleep(0.3)
    probe.received.clear()
    threads_before, cpu_before = thread_cpu_seconds(pid), cpu_seconds(pid)
    started = time.perf_counter()
    stamps = publish(probe, rate_hz, seconds, rows)
    wall = time.perf_counter() - started
    cpu = cpu_seconds(pid) - cpu_before
    threads = {
        name: spent - threads_before.get(name, 0.0)
        for name, spent in thread_cpu_seconds(pid).items()
    }
    load, rss = os.getloadavg()[0], rss_mb(pid)
    time.sleep(0.5)  # let the last messages arrive
    sent, latencies = set(stamps), {}
    for stamp, receipt in list(probe.received):
        if stamp in sent:
            latencies.setdefault(stamp, (receipt - stamp) / 1e9)
    return Window(rate_hz, wall, len(stamps), list(latencies.values()), cpu, threads, rss, load)
