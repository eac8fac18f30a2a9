"""Section ``fleet``: N robots in one ``joint_tf_fleet`` process against N processes of ours.

For each setup (the fleet with N = 1, 10, 50 robots; N single-robot processes for N = 1, 10,
no more on a 2-core machine: 10 processes at 100 Hz each is already a full core of Python)
the bench starts the process(es) on one parameters file (a ``/rK/joint_tf_publisher:``
section per robot, the test robots in turn: the demo arm, the humanoid, the arm with a mimic
gripper, the fixed-base humanoid), and measures:

- startup: from starting the first process to the last robot's static set received on
  /tf_static (a late-joining, transient-local subscription of the bench), seconds;
- RSS of all the processes together, idle (statics out, no joint states) and at the end of
  the load window; per extra robot: (RSS(N) - RSS(1)) / (N - 1);
- under load: every robot's JointState at ``RATE_HZ`` (each robot's moving joints, stamped
  with the wall clock; ``ignore_timestamp`` so that each one is published), the rate sent
  in all, the processes' CPU time per JointState sent (µs) and in all (% of one core), and
  the share of /tf messages received.

The limit of one process (one core: its executor runs one callback at a time) is measured
with the fleet of ``LIMIT_ROBOTS`` robots at higher rates each (``LIMIT_RATES_HZ``): the
largest total rate whose /tf messages all arrive is what one fleet process serves here.

N C++ robot_state_publishers (N = 1, 10, 50; ``vs_rsp.locate_rsp``: a sourced distro's or the
rsp build kit's) run the same robots from the same kind of parameters file (each robot's
description as ``robot_description`` text, since RSP reads no file) and are measured the same
way; where there is none, the table says why and compares ours only.
"""

from __future__ import annotations

import json
import math
import os
import struct
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import Any

from joint_tf_publisher import Robot

from . import dds
from .models import REPO_ROOT
from .report import Table
from .vs_rsp import RspFound, locate_rsp, rsp_environment

#: The robots, in turn (robot K is MODELS[K % 4]).
MODELS = (
    REPO_ROOT / "urdf" / "demo_arm.urdf",
    REPO_ROOT / "test" / "urdf" / "humanoid.urdf",
    REPO_ROOT / "test" / "urdf" / "arm_mimic_gripper.urdf",
    REPO_ROOT / "test" / "data" / "humanoid_fixed_base.urdf",
)
FLEET_COUNTS = (1, 10, 50)
PROCESS_COUNTS = (1, 10)
#: Each robot's JointState rate, Hz.
RATE_HZ = 100.0
#: The limit of one fleet process: this many robots at these rates each, Hz.
LIMIT_ROBOTS = 10
LIMIT_RATES_HZ = (300.0, 600.0, 1000.0)
STARTUP_TIMEOUT_S = 120.0
#: History depth of the bench's /tf reader (the node's ``tf_qos`` deepened): every robot's
#: /tf at once is counted, none dropped while the reader thread waits for the GIL.
TF_READER_DEPTH = 1000
SETTLE_S = 1.0
FLEET = "fleet"
PROCESSES = "processes"
RSP = "rsp"
#: How many C++ robot_state_publisher processes (one per robot) are compared.
RSP_COUNTS = (1, 10, 50)
#: The header stamp in a CDR JointState: after the 4-byte encapsulation header, sec and nanosec.
JOINT_STATE_STAMP = struct.Struct("<iI")
JOINT_STATE_STAMP_OFFSET = 4


@dataclass
class Setup:
    """One setup's figures."""

    kind: str
    robots: int
    rate_hz: float
    seconds: float
    processes: int
    startup_s: float
    idle_rss_mb: float
    load_rss_mb: float
    sent: int
    received: int
    cpu_s: float

    @property
    def cpu_us_per_message(self) -> float:
        return self.cpu_s / self.sent * 1e6 if self.sent else math.nan


def moving_joints(path: Path) -> list[str]:
    """The one-value moving joints of a model that follow no other (what a driver sends)."""
    robot = Robot.load(path)
    kinds = ("revolute", "continuous", "prismatic")
    return [j.name for j in robot.joints.values() if j.joint_type in kinds and j.mimic is None]


def robot_sections(robots: int, node: str, description: Callable[[Path], str]) -> list[str]:
    """Each robot's section of a parameters file for ``node`` in namespace ``r<k>``: its
    description (``description`` of its model file: a ``name: value`` line), its prefix,
    every JointState published."""
    lines: list[str] = []
    for k in range(robots):
        lines += [
            f"/r{k}/{node}:",
            "  ros__parameters:",
            f"    {description(MODELS[k % len(MODELS)])}",
            f"    frame_prefix: r{k}/",
            "    ignore_timestamp: true",
        ]
    return lines


def write_params(path: Path, robots: int) -> Path:
    """The one parameters file of every setup: the fleet's robots and each robot's section."""
    lines = ["/joint_tf_fleet:", "  ros__parameters:"]
    lines.append(f"    robots: [{', '.join(f'r{k}' for k in range(robots))}]")
    lines += robot_sections(
        robots, "joint_tf_publisher", lambda model: f"description_file: {model}"
    )
    path.write_text("\n".join(lines) + "\n")
    return path


def write_rsp_params(path: Path, robots: int) -> Path:
    """The parameters file of N robot_state_publishers: each robot's description as text (a
    JSON string is a YAML string), its prefix, every JointState published."""
    lines = robot_sections(
        robots,
        "robot_state_publisher",
        lambda model: f"robot_description: {json.dumps(model.read_text())}",
    )
    path.write_text("\n".join(lines) + "\n")
    return path


def commands(kind: str, robots: int, params: Path, rsp: RspFound | None = None) -> list[list[str]]:
    """The command line of each process of a setup."""
    bin_dir = Path(sys.executable).parent
    ros_args = ["--ros-args", "--params-file", str(params), "--log-level", "warn"]
    if kind == RSP:
        assert rsp is not None
        return [[str(rsp.executable), *ros_args, "-r", f"__ns:=/r{k}"] for k in range(robots)]
    if kind == FLEET:
        return [[str(bin_dir / "joint_tf_fleet"), *ros_args]]
    node = str(bin_dir / "joint_tf_publisher")
    return [[node, *ros_args, "-r", f"__ns:=/r{k}"] for k in range(robots)]


class Bench:
    """The bench's ROS side: a raw JointState publisher per robot, a raw /tf counter and a
    /tf_static listener (each robot's prefix once its static set arrived)."""

    def __init__(self, robots: int) -> None:
        import rclpy
        from rclpy.executors import SingleThreadedExecutor
        from rclpy.serialization import serialize_message
        from sensor_msgs.msg import JointState
        from tf2_msgs.msg import TFMessage

        from joint_tf_publisher.ros.qos import tf_listener_static_qos, tf_qos

        self.node = rclpy.create_node("jtp_bench_fleet")
        self.publishers = []
        self.templates: list[bytearray] = []
        for k in range(robots):
            names = moving_joints(MODELS[k % len(MODELS)])
            message = JointState(name=names, position=[0.1] * len(names))
            self.templates.append(bytearray(serialize_message(message)))
            self.publishers.append(
                self.node.create_publisher(JointState, f"/r{k}/joint_states", 10)
            )
        self.statics: dict[str, float] = {}  # robot prefix -> time.monotonic() of its set
        self.node.create_subscription(
            TFMessage, "/tf_static", self._on_static, tf_listener_static_qos()
        )
        self.received = 0
        deep_tf_qos = tf_qos()
        deep_tf_qos.depth = TF_READER_DEPTH
        self._tf = dds.RawTfReader("/tf", "jtp_bench_fleet_tf", self._count, deep_tf_qos)
        self._closing = False
        self.executor = SingleThreadedExecutor()
        self.executor.add_node(self.node)
        self._thread = threading.Thread(target=self._spin, daemon=True)
        self._thread.start()

    def _spin(self) -> None:
        while not self._closing:
            self.executor.spin_once(timeout_sec=0.05)

    def _count(self, data: bytes) -> None:
        self.received += 1

    def _on_static(self, msg: Any) -> None:
        for transform in msg.transforms:
            prefix = transform.child_frame_id.split("/", 1)[0]
            self.statics.setdefault(prefix, time.monotonic())

    def wait_up(self, processes: Sequence[subprocess.Popen[bytes]], log: Path) -> None:
        """Until every robot's statics arrived and its joint_states matched."""
        deadline = time.monotonic() + STARTUP_TIMEOUT_S
        wanted = len(self.publishers)
        while not (
            len(self.statics) >= wanted
            and all(p.get_subscription_count() > 0 for p in self.publishers)
        ):
            if any(p.poll() is not None for p in processes) or time.monotonic() > deadline:
                tail = log.read_text(errors="replace")[-2000:]
                raise RuntimeError(f"{len(self.statics)}/{wanted} robots up:\n{tail}")
            time.sleep(0.02)

    def load(self, rate_hz: float, seconds: float) -> int:
        """Every robot's JointState at ``rate_hz`` for ``seconds`` (absolute schedule: late
        ticks are sent at once, never skipped); the number sent."""
        period, sent = 1.0 / rate_hz, 0
        start = time.perf_counter()
        for tick in range(int(round(rate_hz * seconds))):
            delay = start + tick * period - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
            sec, nanosec = divmod(time.time_ns(), 1_000_000_000)
            for publisher, template in zip(self.publishers, self.templates, strict=True):
                JOINT_STATE_STAMP.pack_into(template, JOINT_STATE_STAMP_OFFSET, sec, nanosec)
                publisher.publish(bytes(template))
                sent += 1
        return sent

    def close(self) -> None:
        self._closing = True
        self._thread.join(timeout=2.0)
        self._tf.close()
        self.executor.shutdown(timeout_sec=1.0)
        self.node.destroy_node()


def run_setup(
    kind: str,
    robots: int,
    rate_hz: float,
    workdir: Path,
    seconds: float,
    rsp: RspFound | None = None,
) -> Setup:
    """Start one setup, measure it, stop it."""
    write = write_rsp_params if kind == RSP else write_params
    params = write(workdir / f"{kind}-{robots}.yaml", robots)
    log = workdir / f"{kind}-{robots}-{rate_hz:g}.log"
    environ = rsp_environment(rsp, os.environ) if kind == RSP and rsp is not None else None
    bench = Bench(robots)
    processes: list[subprocess.Popen[bytes]] = []
    try:
        started = time.monotonic()
        with open(log, "wb") as out:
            for command in commands(kind, robots, params, rsp):
                processes.append(
                    subprocess.Popen(
                        command, stdout=out, stderr=subprocess.STDOUT, cwd=workdir, env=environ
                    )
                )
        bench.wait_up(processes, log)
        startup = max(bench.statics.values()) - started
        time.sleep(SETTLE_S)
        pids = [p.pid for p in processes]
        idle = sum(dds.rss_mb(pid) for pid in pids)
        bench.load(rate_hz, min(0.5, seconds / 4))  # warm-up
        time.sleep(0.5)
        bench.received = 0
        cpu_before = sum(dds.cpu_seconds(pid) for pid in pids)
        started = time.perf_counter()
        sent = bench.load(rate_hz, seconds)
        wall = time.perf_counter() - started
        cpu = sum(dds.cpu_seconds(pid) for pid in pids) - cpu_before
        loaded = sum(dds.rss_mb(pid) for pid in pids)
        time.sleep(1.0)  # the last messages arrive
        return Setup(
            kind,
            robots,
            rate_hz,
            wall,
            len(processes),
            startup,
            idle,
            loaded,
            sent,
            bench.received,
            cpu,
        )
    finally:
        bench.close()
        for process in processes:
            dds.stop_process(process)


def run_fleet(quick: bool) -> tuple[list[Table], dict[str, Any]]:
    """The section: every setup once (the machine is shared: one run, said in the notes)."""
    import rclpy

    dds.use_bench_domain()
    dds.byte_compile()
    rclpy.init()
    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-fleet-"))
    seconds = 2.0 if quick else 5.0
    setups: list[Setup] = []
    found = locate_rsp(os.environ)
    rsp = found if isinstance(found, RspFound) else None
    try:
        plan = [(FLEET, n, RATE_HZ) for n in FLEET_COUNTS]
        plan += [(PROCESSES, n, RATE_HZ) for n in PROCESS_COUNTS]
        if rsp is not None:
            plan += [(RSP, n, RATE_HZ) for n in RSP_COUNTS]
        plan += [(FLEET, LIMIT_ROBOTS, rate) for rate in LIMIT_RATES_HZ]
        for kind, robots, rate_hz in plan:
            print(f"fleet: {kind}, {robots} robots at {rate_hz:g} Hz", flush=True)
            setups.append(run_setup(kind, robots, rate_hz, workdir, seconds, rsp))
    finally:
        rclpy.try_shutdown()
    at_rate = [s for s in setups if s.rate_hz == RATE_HZ]
    limit = [s for s in setups if s.kind == FLEET and s.robots == LIMIT_ROBOTS]
    table = fleet_table(at_rate)
    if rsp is None:
        table.notes.append(f"no robot_state_publisher compared: {found}")
    tables = [table, limit_table(limit)]
    return tables, {"setups": [asdict(s) for s in setups]}


#: How a setup is named in the table.
SETUP_NAMES = {
    FLEET: "one fleet process",
    PROCESSES: "{n} node processes",
    RSP: "{n} robot_state_publishers (C++)",
}


def fleet_table(setups: Sequence[Setup]) -> Table:
    one = {s.kind: s for s in setups if s.robots == 1}
    table = Table(
        f"Fleet: N robots in one process against N processes ({RATE_HZ:g} Hz JointStates each)",
        [
            "setup",
            "robots",
            "startup to last statics (s)",
            "RSS idle (MB)",
            "per extra robot (MB)",
            "RSS under load (MB)",
            "JointStates/s sent",
            "CPU per JointState (µs)",
            "CPU (% of a core)",
            "/tf received",
        ],
    )
    for s in setups:
        base = one.get(s.kind)
        extra = (
            f"{(s.idle_rss_mb - base.idle_rss_mb) / (s.robots - 1):.2f}"
            if base is not None and s.robots > 1
            else "-"
        )
        table.rows.append(
            [
                SETUP_NAMES[s.kind].format(n=s.processes),
                str(s.robots),
                f"{s.startup_s:.2f}",
                f"{s.idle_rss_mb:.0f}",
                extra,
                f"{s.load_rss_mb:.0f}",
                f"{s.sent / s.seconds:,.0f}",
                f"{s.cpu_us_per_message:.0f}",
                f"{s.cpu_s / s.seconds:.0%}",
                f"{s.received / s.sent:.0%}" if s.sent else "-",
            ]
        )
    table.notes += [
        "robots in turn: demo arm, humanoid, arm with mimic gripper, fixed-base humanoid; "
        "ignore_timestamp: every JointState is published",
        "one run on a shared 2-core machine (other work running): CPU and startup are "
        f"indicative; load average at the end {os.getloadavg()[0]:.1f}",
        "processes: N = 10 at most (10 Python processes at 100 Hz fill a core here)",
    ]
    return table


def limit_table(setups: Sequence[Setup]) -> Table:
    """The fleet of ``LIMIT_ROBOTS`` robots at higher rates: what one process serves."""
    table = Table(
        f"The limit of one fleet process ({LIMIT_ROBOTS} robots, higher rates each)",
        [
            "rate each (Hz)",
            "JointStates/s sent",
            "fleet CPU (% of a core)",
            "CPU per JointState (µs)",
            "/tf received",
        ],
    )
    for s in setups:
        table.rows.append(
            [
                f"{s.rate_hz:g}",
                f"{s.sent / s.seconds:,.0f}",
                f"{s.cpu_s / s.seconds:.0%}",
                f"{s.cpu_us_per_message:.0f}",
                f"{s.received / s.sent:.0%}" if s.sent else "-",
            ]
        )
    table.notes.append(
        "the bench's own publisher (Python, in the same 2 cores) sends late at the higher "
        "rates: the rate sent is what was measured, not the one asked"
    )
    return table
