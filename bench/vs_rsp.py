"""Section ``vs_rsp``: this node and the C++ robot_state_publisher (RSP), side by side.

Where RSP is found (see ``locate_rsp``: a sourced ROS 2 that has it, else the rsp build kit's
build in ``RSP_ROOT``), both nodes get the same robots, rates and JointStates, in interleaved
rounds: each round starts RSP, measures it, stops it, then does the same with this node
(A B A B), so a drift in machine load hits both alike. Elsewhere the section says why it is
skipped and succeeds.

Robots: the humanoid of ``bench/models.py`` (63 values per JointState, 73 moving and 20 fixed
joints) and ``test/urdf/arm_mimic_gripper.urdf`` (a 7-axis arm with a mimic gripper: 8 values,
11 moving and 6 fixed joints; its XML comments also check the parameters-file path). Modes:
``ignore_timestamp: true`` (every JointState is published) and the defaults (at most
``publish_frequency`` = 20 Hz per joint in message time). Both nodes get their parameters
from a file: a URDF with XML comments given by ``-p`` fails in rcl's argument parser.

One node's turn: start the process; time from the start to the first /tf_static at the bench
(startup); RSS at idle; one JointState (the first row) whose /tf answer and the /tf_static
set are kept to compare frames and values with the other node's; then for each rate
``e2e.measure_rate`` (warm-up, timed window, drain): JointStates sent, /tf messages received,
latency (receipt - stamp, both wall clock, the reader in the bench process), the node's CPU
(utime + stime from /proc/<pid>/stat over the window) and RSS. CPU per message = that CPU
time / JointStates sent. Tables give the median over rounds (drops: the sum) and the ratio
ours / RSP: below 1 this node is cheaper or faster.
"""

from __future__ import annotations

import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from . import e2e
from .models import humanoid
from .report import Table

#: Where a ROS 2 prefix keeps the RSP executable (as ``ros2 pkg prefix`` + ``ros2 run`` find it).
RSP_EXECUTABLE = Path("lib", "robot_state_publisher", "robot_state_publisher")
REPO_ROOT = e2e.REPO_ROOT
ARM_URDF = REPO_ROOT / "test" / "urdf" / "arm_mimic_gripper.urdf"
#: The nodes of a round, in the order they run.
NODES = ("rsp", "ours")
MODES = {"ignore_timestamp": True, "defaults": False}
ROBOTS = ("humanoid", "arm")


# -- finding robot_state_publisher --------------------------------------------------------------


@dataclass(frozen=True)
class RspFound:
    """An RSP executable, what found it, and (for the kit's build) the env.sh to source."""

    executable: Path
    origin: str
    env_script: Path | None = None
    root: Path | None = None


def rsp_kit(environ: Mapping[str, str], repo_root: Path = REPO_ROOT) -> Path:
    """The rsp build kit's folder: ``RSP_KIT``, else ``../shared/rsp`` beside the repository."""
    return Path(environ.get("RSP_KIT") or repo_root.parent / "shared" / "rsp")


def rsp_root(environ: Mapping[str, str], repo_root: Path = REPO_ROOT) -> Path:
    """Where the kit builds RSP: ``RSP_ROOT``, else ``.rsp/`` in the repository."""
    return Path(environ.get("RSP_ROOT") or repo_root / ".rsp")


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def locate_rsp(environ: Mapping[str, str], repo_root: Path = REPO_ROOT) -> RspFound | str:
    """RSP to run, or the reason there is none (a sentence for the skipped table).

    First a sourced ROS 2: a prefix of ``AMENT_PREFIX_PATH`` with the executable; then the
    rsp build kit (``rsp_kit``) built into ``rsp_root`` (``make bench`` builds it there).
    """
    for prefix in filter(None, environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        candidate = Path(prefix) / RSP_EXECUTABLE
        if _is_executable(candidate):
            return RspFound(candidate, f"sourced ROS 2 ({prefix})")
    kit, root = rsp_kit(environ, repo_root), rsp_root(environ, repo_root)
    script = kit / "env.sh"
    built = root / "install" / RSP_EXECUTABLE
    if script.is_file() and _is_executable(built):
        return RspFound(built, f"built by the rsp kit in {root}", script, root)
    if script.is_file():
        return (
            f"robot_state_publisher is not built in {root}: `make bench` builds it there from "
            f"{kit} (about 13 minutes on 2 cores the first time; its Debian packages once "
            f"with RSP_ROOT={root} bash {kit / 'build.sh'} --apt); RSP_ROOT reuses a build "
            "elsewhere"
        )
    return (
        "no robot_state_publisher: no sourced ROS 2 has it (AMENT_PREFIX_PATH) and there is no "
        f"rsp build kit at {kit} (set RSP_KIT to its folder)"
    )


def rsp_environment(found: RspFound, base: Mapping[str, str]) -> dict[str, str]:
    """The environment to run RSP in: ``base``, plus the kit's env.sh when it has one.

    The bench's domain and discovery range are kept, so both nodes talk to the same probe.
    """
    environ = dict(base)
    if found.env_script is not None:
        environ["RSP_ROOT"] = str(found.root)
        dumped = subprocess.run(
            ["bash", "-c", 'source "$1" >/dev/null && env -0', "env.sh", str(found.env_script)],
            env=environ,
            capture_output=True,
            check=True,
        ).stdout.decode()
        environ = dict(item.split("=", 1) for item in dumped.split("\0") if "=" in item)
    for name in ("ROS_DOMAIN_ID", "ROS_AUTOMATIC_DISCOVERY_RANGE"):
        if name in base:
            environ[name] = base[name]
    return environ


# -- what is compared ---------------------------------------------------------------------------


def cpu_per_message_us(cpu_before_s: float, cpu_after_s: float, messages: int) -> float:
    """CPU microseconds per message from two samples of a process's utime + stime (s); NaN
    without messages."""
    if messages <= 0:
        return math.nan
    return (cpu_after_s - cpu_before_s) * 1e6 / messages


@dataclass(frozen=True)
class FramePose:
    """One transform: parent frame, translation (m) and rotation quaternion (x, y, z, w)."""

    parent: str
    translation: tuple[float, float, float]
    rotation: tuple[float, float, float, float]


def poses_by_child(transforms: Iterable[Any]) -> dict[str, FramePose]:
    """geometry_msgs/TransformStamped messages as {child frame: pose}."""
    poses = {}
    for transform in transforms:
        t, r = transform.transform.translation, transform.transform.rotation
        poses[transform.child_frame_id] = FramePose(
            transform.header.frame_id, (t.x, t.y, t.z), (r.x, r.y, r.z, r.w)
        )
    return poses


@dataclass(frozen=True)
class FrameCheck:
    """Two nodes' transforms compared: edges (``parent -> child``) only one of them sends,
    and the largest differences over the edges both send (m, rad)."""

    only_ours: list[str]
    only_rsp: list[str]
    compared: int
    max_translation_m: float
    max_rotation_rad: float

    @property
    def same_frames(self) -> bool:
        """True when both send exactly the same edges."""
        return not self.only_ours and not self.only_rsp

    def describe(self) -> str:
        """One line for the table notes."""
        if self.same_frames:
            text = f"same {self.compared} frames"
        else:
            text = (
                f"frames differ: only ours {self.only_ours or '-'}, only RSP "
                f"{self.only_rsp or '-'}; {self.compared} common"
            )
        return (
            f"{text}, values within {self.max_translation_m:.1e} m, {self.max_rotation_rad:.1e} rad"
        )


def rotation_angle(q1: Sequence[float], q2: Sequence[float]) -> float:
    """Angle (rad) of the rotation between two quaternions (q and -q are the same rotation):
    4 atan2(|a - b|, |a + b|) of the unit quaternions with b on a's side, exact to rounding
    even for tiny angles (where 2 acos(a . b) loses half the digits)."""
    a, b = np.asarray(q1, dtype=float), np.asarray(q2, dtype=float)
    a, b = a / np.linalg.norm(a), b / np.linalg.norm(b)
    if float(a @ b) < 0.0:
        b = -b
    return 4.0 * math.atan2(float(np.linalg.norm(a - b)), float(np.linalg.norm(a + b)))


def compare_frames(ours: Mapping[str, FramePose], rsp: Mapping[str, FramePose]) -> FrameCheck:
    """Edges and values of our transforms against RSP's for the same input."""

    def edges(poses: Mapping[str, FramePose]) -> set[str]:
        return {f"{pose.parent} -> {child}" for child, pose in poses.items()}

    ours_edges, rsp_edges = edges(ours), edges(rsp)
    common = [child for child in ours if child in rsp and ours[child].parent == rsp[child].parent]
    translation = max(
        (
            float(np.max(np.abs(np.subtract(ours[c].translation, rsp[c].translation))))
            for c in common
        ),
        default=0.0,
    )
    rotation = max((rotation_angle(ours[c].rotation, rsp[c].rotation) for c in common), default=0.0)
    return FrameCheck(
        sorted(ours_edges - rsp_edges),
        sorted(rsp_edges - ours_edges),
        len(common),
        translation,
        rotation,
    )


def ratio(ours: float, rsp: float) -> str:
    """ours / RSP as ``1.23x`` (below 1: ours is cheaper or faster), or a dash."""
    if not (math.isfinite(ours) and math.isfinite(rsp)) or rsp <= 0.0:
        return "-"
    return f"{ours / rsp:.2f}x"


def median(values: Iterable[float]) -> float:
    """Median of the finite values, NaN without any."""
    finite = [value for value in values if math.isfinite(value)]
    return statistics.median(finite) if finite else math.nan


# -- robots -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchRobot:
    """A robot as both nodes get it: description text, JointState names, rows of positions."""

    name: str
    description: str
    joint_names: list[str]
    rows: list[list[float]]


ROW_COUNT = 997


def humanoid_robot() -> BenchRobot:
    """The e2e section's humanoid (bench/models.py) with its rows of positions."""
    spec = humanoid()
    names = [joint.name for joint in spec.independent_joints]
    return BenchRobot("humanoid", spec.to_urdf(), names, e2e.sample_rows(spec, ROW_COUNT))


def arm_robot(path: Path = ARM_URDF) -> BenchRobot:
    """A URDF file's robot: the independent joints (moving, not mimic) sampled inside their
    hard limits (continuous joints in [-pi, pi])."""
    from joint_tf_publisher import Robot

    robot = Robot.load(path)
    joints = [j for j in robot.joints.values() if j.joint_type != "fixed" and j.mimic is None]
    rng = np.random.default_rng(17)
    ranges = [joint.hard_limits() or (-math.pi, math.pi) for joint in joints]
    rows = [[float(rng.uniform(lower, upper)) for lower, upper in ranges] for _ in range(ROW_COUNT)]
    return BenchRobot(path.stem, path.read_text(), [joint.name for joint in joints], rows)


ROBOT_MAKERS = {"humanoid": humanoid_robot, "arm": arm_robot}


# -- measuring ----------------------------------------------------------------------------------


@dataclass
class Turn:
    """One node's turn in one round: startup, idle memory, the compared output, the windows."""

    node: str
    startup_s: float
    idle_rss_mb: float
    moving: dict[str, FramePose]
    static: dict[str, FramePose]
    windows: list[e2e.RateResult] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """Plain data for results.json, CPU per message added to each window."""
        return {
            "node": self.node,
            "startup_ms": round(self.startup_s * 1e3, 1),
            "idle_rss_mb": round(self.idle_rss_mb, 1),
            "transforms_per_message": len(self.moving),
            "static_transforms": len(self.static),
            "windows": [
                {**w.as_json(), "cpu_us_per_message": round(cpu_per_message_us(0, w.cpu_s, w.sent))}
                for w in self.windows
            ],
        }


def _answer_to_first_row(probe: e2e.Probe, robot: BenchRobot) -> dict[str, FramePose]:
    """Send the first row until its /tf message arrives (the joint_states QoS is best effort);
    its transforms by child frame. RuntimeError after 5 tries."""
    from rclpy.serialization import deserialize_message
    from tf2_msgs.msg import TFMessage

    probe.first_raw = None
    for _ in range(5):
        probe.send(robot.rows[0])
        deadline = time.monotonic() + 1.0
        while probe.first_raw is None and time.monotonic() < deadline:
            time.sleep(0.01)
        if probe.first_raw is not None:
            return poses_by_child(deserialize_message(probe.first_raw, TFMessage).transforms)
    raise RuntimeError("no /tf answer to the first JointState")


@dataclass(frozen=True)
class Contender:
    """One of the compared nodes: its name in NODES, command line and environment."""

    node: str
    command: list[str]
    environ: Mapping[str, str]


def run_turn(
    probe: e2e.Probe,
    contender: Contender,
    robot: BenchRobot,
    rates: Sequence[float],
    window_s: float,
    log_path: Path,
) -> Turn:
    """Start one node, measure startup, idle RSS, its answer and every rate; stop it."""
    probe.static_count = -1
    started_s = time.monotonic()
    process = e2e.start_node(contender.command, log_path, None, contender.environ)
    try:
        e2e.wait_ready(probe, process, log_path)
        startup_s = probe.static_received_s - started_s
        idle_rss, _ = e2e.memory_mb(process.pid)
        static = poses_by_child(probe.static_message.transforms)
        moving = _answer_to_first_row(probe, robot)
        turn = Turn(contender.node, startup_s, idle_rss, moving, static)
        for rate in rates:
            turn.windows.append(e2e.measure_rate(probe, process.pid, rate, window_s, robot.rows))
    finally:
        e2e.stop_process(process)
    time.sleep(1.0)  # let the stopped node's endpoints leave discovery
    return turn


def run_rounds(
    robot: BenchRobot,
    mode: str,
    contenders: Sequence[Contender],
    rates: Sequence[float],
    rounds: int,
    window_s: float,
    workdir: Path,
) -> list[Turn]:
    """``rounds`` rounds of one robot in one mode, each a turn of every contender in order."""
    turns = []
    probe = e2e.Probe(robot.joint_names)
    try:
        for index in range(rounds):
            for contender in contenders:
                log = workdir / f"{robot.name}-{mode}-{contender.node}-{index}.log"
                turns.append(run_turn(probe, contender, robot, rates, window_s, log))
            print(f"vs_rsp: {robot.name} {mode} round {index + 1}/{rounds} done", flush=True)
    finally:
        probe.close()
    return turns


def run_vs_rsp(
    quick: bool,
    rates: Sequence[float],
    robots: Sequence[str] = ROBOTS,
    rounds: int | None = None,
    window_s: float | None = None,
) -> tuple[list[Table], dict[str, Any]]:
    """The section: skipped (with the reason) without RSP, else every robot, mode and rate.

    ``rounds`` and ``window_s`` (seconds per rate) default to 5 and 6 s, 2 and 2 s when quick.
    """
    found = locate_rsp(os.environ)
    if isinstance(found, str):
        table = Table(f"Against robot_state_publisher: skipped, {found}", ["status"], [])
        print(f"vs_rsp skipped: {found}", flush=True)
        return [table], {"skipped": found}
    rounds = rounds or (2 if quick else 5)
    window_s = window_s or (2.0 if quick else 6.0)
    os.environ["ROS_DOMAIN_ID"] = str(e2e.domain_id())
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    sys.setswitchinterval(1e-4)  # the /tf reader thread must not wait 5 ms for the GIL
    import rclpy

    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-rsp-"))
    rsp_environ = rsp_environment(found, os.environ)
    record: dict[str, Any] = {
        "rsp": {"executable": str(found.executable), "origin": found.origin},
        "rounds": rounds,
        "window_s": window_s,
        "robots": {},
    }
    turns: dict[tuple[str, str], list[Turn]] = {}
    rclpy.init()
    try:
        for robot_name in robots:
            robot = ROBOT_MAKERS[robot_name]()
            for mode, ignore_timestamp in MODES.items():
                params = e2e.write_params(
                    workdir, robot.description, ignore_timestamp, f"{robot.name}-{mode}"
                )
                contenders = [
                    Contender(
                        "rsp",
                        [str(found.executable), "--ros-args", "--params-file", str(params)],
                        rsp_environ,
                    ),
                    Contender("ours", e2e.node_command(params), os.environ.copy()),
                ]
                turns[(robot.name, mode)] = run_rounds(
                    robot, mode, contenders, rates, rounds, window_s, workdir
                )
            record["robots"][robot.name] = {
                "joint_names": len(robot.joint_names),
                "modes": {
                    mode: [turn.as_json() for turn in turns[(robot.name, mode)]] for mode in MODES
                },
            }
    finally:
        rclpy.try_shutdown()
    tables = [rate_table(turns, rounds, window_s), startup_table(turns, found)]
    record["summary"] = {"rates": tables[0].as_json(), "startup": tables[1].as_json()}
    return tables, record


# -- tables -------------------------------------------------------------------------------------


def _by_node(turns: Sequence[Turn]) -> dict[str, list[Turn]]:
    return {node: [turn for turn in turns if turn.node == node] for node in NODES}


def main_thread_us(window: e2e.RateResult) -> float:
    """CPU microseconds per JointState of the node's main thread over a window."""
    share = window.thread_cpu_percent.get("main", 0.0) / 100.0
    return cpu_per_message_us(0.0, share * window.window_s, window.sent)


def _medians(
    windows: Mapping[str, list[e2e.RateResult]], pick: Callable[[e2e.RateResult], float]
) -> dict[str, float]:
    """Per node, the median over its windows of ``pick(window)``."""
    return {node: median(pick(window) for window in windows[node]) for node in NODES}


def _pair(values: Mapping[str, float], digits: int) -> str:
    return " / ".join(f"{values[node]:.{digits}f}" for node in NODES)


def rate_table(turns: Mapping[tuple[str, str], list[Turn]], rounds: int, window_s: float) -> Table:
    """Per robot, mode and rate: medians over the rounds of RSP / ours, and ours / RSP."""
    table = Table(
        f"Against robot_state_publisher (C++): medians of {rounds} interleaved rounds, "
        f"{window_s:g} s per rate; cells RSP / ours",
        [
            "robot",
            "mode",
            "rate Hz",
            "CPU us/msg",
            "CPU ours/RSP",
            "main thread us/msg",
            "latency median ms",
            "median ours/RSP",
            "p99 ms",
            "drops (of sent)",
            "/tf Hz",
            "RSS MB",
            "load 1m",
        ],
    )
    for (robot, mode), robot_turns in turns.items():
        by_node = _by_node(robot_turns)
        for index, rate in enumerate(w.rate_hz for w in robot_turns[0].windows):
            windows = {node: [t.windows[index] for t in by_node[node]] for node in NODES}
            cpu = _medians(windows, lambda w: cpu_per_message_us(0.0, w.cpu_s, w.sent))
            main = _medians(windows, main_thread_us)
            latency = _medians(windows, lambda w: w.latency(0.5) * 1e3)
            p99 = _medians(windows, lambda w: w.latency(0.99) * 1e3)
            tf_hz = _medians(windows, lambda w: w.received / w.window_s)
            rss = _medians(windows, lambda w: w.rss_mb)
            drops = " / ".join(str(sum(w.drops for w in windows[node])) for node in NODES)
            sent = sum(w.sent for w in windows["ours"])
            table.rows.append(
                [
                    robot,
                    mode,
                    f"{rate:g}",
                    _pair(cpu, 0),
                    ratio(cpu["ours"], cpu["rsp"]),
                    _pair(main, 0),
                    _pair(latency, 2),
                    ratio(latency["ours"], latency["rsp"]),
                    _pair(p99, 2),
                    f"{drops} ({sent})" if mode == "ignore_timestamp" else "-",
                    _pair(tf_hz, 0),
                    _pair(rss, 0),
                    f"{median(w.load_average for n in NODES for w in windows[n]):.1f}",
                ]
            )
    table.notes.append(
        "CPU us/msg = the node process's utime + stime (/proc/<pid>/stat) over the window / "
        "JointStates sent; main thread = the same for the thread that runs the callbacks "
        "(/proc/<pid>/task); latency = /tf receipt - JointState stamp (wall clock, reader in the "
        "bench process); drops = JointStates with no /tf message of their stamp, summed over "
        "the rounds (defaults mode: publications are rate-limited to 20 Hz, so none counted); "
        "RSS = VmRSS at the end of the window; load 1m = the machine's load average after "
        "the windows (both nodes' median)"
    )
    return table


def startup_table(turns: Mapping[tuple[str, str], list[Turn]], found: RspFound) -> Table:
    """Per robot: startup to first /tf_static, idle RSS, and the frame and value check."""
    table = Table(
        "Startup and memory against robot_state_publisher (medians over every turn); cells "
        "RSP / ours",
        [
            "robot",
            "startup ms",
            "startup ours/RSP",
            "idle RSS MB",
            "RSS ours/RSP",
            "/tf transforms",
            "/tf_static transforms",
        ],
    )
    robots = dict.fromkeys(robot for robot, _ in turns)
    for robot in robots:
        every = [turn for (name, _), group in turns.items() if name == robot for turn in group]
        by_node = _by_node(every)
        startup = {n: median(t.startup_s * 1e3 for t in by_node[n]) for n in NODES}
        rss = {n: median(t.idle_rss_mb for t in by_node[n]) for n in NODES}
        first = {n: by_node[n][0] for n in NODES}
        table.rows.append(
            [
                robot,
                _pair(startup, 0),
                ratio(startup["ours"], startup["rsp"]),
                _pair(rss, 0),
                ratio(rss["ours"], rss["rsp"]),
                " / ".join(str(len(first[n].moving)) for n in NODES),
                " / ".join(str(len(first[n].static)) for n in NODES),
            ]
        )
        moving = compare_frames(first["ours"].moving, first["rsp"].moving)
        static = compare_frames(first["ours"].static, first["rsp"].static)
        table.notes.append(f"{robot} /tf for the same JointState: {moving.describe()}")
        table.notes.append(f"{robot} /tf_static: {static.describe()}")
    table.notes.append(
        "startup = process start to the first /tf_static at the bench; idle RSS = VmRSS once "
        f"it arrived, before any JointState; RSP: {found.executable} ({found.origin})"
    )
    return table
