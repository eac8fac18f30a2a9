"""Section ``vs_rsp``: this node and the C++ robot_state_publisher (RSP) side by side, with this
node at an older git revision (``--baseline REV``) too, in interleaved rounds (each runs every
node in turn: start, measure, stop), so a drift in the machine's load hits all alike. RSP comes
from a sourced ROS 2 or the rsp build kit (``locate_rsp``); without RSP and baseline the section
says why it is skipped and succeeds. Method and results: docs/benchmarks.md.
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

from joint_tf_publisher.stamps import stamp_to_ns

from . import dds
from .models import MODELS, REPO_ROOT, ModelSpec
from .report import Table, ratio

#: Where a ROS 2 prefix keeps the RSP executable (as ``ros2 pkg prefix`` + ``ros2 run`` find it).
RSP_EXECUTABLE = Path("lib", "robot_state_publisher", "robot_state_publisher")
ARM_URDF = REPO_ROOT / "test" / "urdf" / "arm_mimic_gripper.urdf"
#: The robots by their name on the command line: the humanoid, and an arm with a mimic gripper.
ROBOTS = {"humanoid": MODELS["humanoid"], "arm": ModelSpec(ARM_URDF.stem, ARM_URDF)}
MODES = {"ignore_timestamp": True, "defaults": False}
#: With ``global_tree``: this node again with ``global_frame_prefix`` (the global tree on /tf
#: beside its own output: every /tf message twice), by this name and with this prefix.
GLOBAL_TREE_NODE = "ours+global"
GLOBAL_TREE_PREFIX = "fleet/"
#: The transforms a turn keeps, and where they came from.
KINDS = {"moving": "/tf for the same JointState", "static": "/tf_static"}


# -- finding robot_state_publisher --------------------------------------------------------------


@dataclass(frozen=True)
class RspFound:
    """An RSP executable, what found it, and (for the kit's build) the env.sh to source."""

    executable: Path
    origin: str
    env_script: Path | None = None
    root: Path | None = None


def _is_executable(path: Path) -> bool:
    return path.is_file() and os.access(path, os.X_OK)


def locate_rsp(environ: Mapping[str, str], repo_root: Path = REPO_ROOT) -> RspFound | str:
    """RSP to run, or the reason there is none (a sentence for the skipped table).

    First a sourced ROS 2: a prefix of ``AMENT_PREFIX_PATH`` with the executable; then the
    rsp build kit (``RSP_KIT``, else ``../shared/rsp`` beside the repository) built into
    ``RSP_ROOT`` (else ``.rsp/`` in the repository: ``make bench`` builds it there).
    """
    for prefix in filter(None, environ.get("AMENT_PREFIX_PATH", "").split(os.pathsep)):
        candidate = Path(prefix) / RSP_EXECUTABLE
        if _is_executable(candidate):
            return RspFound(candidate, f"sourced ROS 2 ({prefix})")
    kit = Path(environ.get("RSP_KIT") or repo_root.parent / "shared" / "rsp")
    root = Path(environ.get("RSP_ROOT") or repo_root / ".rsp")
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


@dataclass(frozen=True)
class FramePose:
    """One transform: parent frame, translation (m) and rotation quaternion (x, y, z, w)."""

    parent: str
    translation: tuple[float, float, float]
    rotation: tuple[float, float, float, float]


def poses_by_child(transforms: Iterable[Any]) -> dict[str, FramePose]:
    """geometry_msgs/TransformStamped messages as {child frame: pose}."""
    return {
        item.child_frame_id: FramePose(item.header.frame_id, (t.x, t.y, t.z), (r.x, r.y, r.z, r.w))
        for item in transforms
        for t, r in [(item.transform.translation, item.transform.rotation)]
    }


@dataclass(frozen=True)
class FrameCheck:
    """Two nodes' transforms compared: edges (``parent -> child``) only one of them sends,
    and the largest differences over the edges both send (m, rad)."""

    only_ours: list[str]
    only_rsp: list[str]
    compared: int
    max_translation_m: float
    max_rotation_rad: float

    def describe(self, other: str = "RSP") -> str:
        """One line for the table notes; ``other`` names the node compared with ours."""
        text = f"same {self.compared} frames"
        if self.only_ours or self.only_rsp:
            text = f"frames differ: only ours {self.only_ours or '-'}, only {other} "
            text += f"{self.only_rsp or '-'}; {self.compared} common"
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
    moved = [np.abs(np.subtract(ours[c].translation, rsp[c].translation)).max() for c in common]
    turned = [rotation_angle(ours[c].rotation, rsp[c].rotation) for c in common]
    only_ours, only_rsp = sorted(ours_edges - rsp_edges), sorted(rsp_edges - ours_edges)
    return FrameCheck(
        only_ours, only_rsp, len(common), float(max(moved, default=0.0)), max(turned, default=0.0)
    )


def median(values: Iterable[float]) -> float:
    """Median of the finite values, NaN without any."""
    finite = [value for value in values if math.isfinite(value)]
    return statistics.median(finite) if finite else math.nan


# -- robots -------------------------------------------------------------------------------------


@dataclass(frozen=True)
class BenchRobot:
    """A robot as every node gets it: description text, JointState names, rows of positions."""

    name: str
    description: str
    joint_names: list[str]
    rows: list[list[float]]


def bench_robot(spec: ModelSpec, count: int = 997) -> BenchRobot:
    """``spec`` with ``count`` rows of its independent joints' positions, inside their limits."""
    configurations = spec.sample(11, count)
    rows = [list(values.values()) for values in configurations]
    return BenchRobot(spec.name, spec.to_urdf(), list(configurations[0]), rows)


# -- measuring ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contender:
    """One of the compared nodes: its name in the tables, how to run it on a parameters file."""

    node: str
    command: Callable[[Path], list[str]]
    environ: Mapping[str, str] | None = None
    import_root: Path | None = None


@dataclass
class Turn:
    """One node's turn in one round: startup, idle memory, the compared output, the windows."""

    node: str
    startup_s: float
    idle_rss_mb: float
    moving: dict[str, FramePose]
    static: dict[str, FramePose]
    published_s: float  # process start to the /tf_static stamp (``published_s``)
    windows: list[dds.Window] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """Plain data for results.json."""
        return {
            "node": self.node,
            "startup_ms": round(self.startup_s * 1e3, 1),
            "published_ms": round(self.published_s * 1e3, 1),
            "idle_rss_mb": round(self.idle_rss_mb, 1),
            "transforms_per_message": len(self.moving),
            "static_transforms": len(self.static),
            "windows": [window.as_json() for window in self.windows],
        }


def published_s(static: Any, started_ns: int) -> float:
    """Seconds from ``started_ns`` (wall clock) to the stamp of the /tf_static message
    ``static``: the node's clock as it published (RSP's and ours), without DDS discovery's
    part of the startup; NaN for an empty set."""
    if not static.transforms:
        return math.nan
    stamp = static.transforms[0].header.stamp
    return (stamp_to_ns(stamp.sec, stamp.nanosec) - started_ns) / 1e9


def run_turn(
    probe: dds.Probe,
    contender: Contender,
    robot: BenchRobot,
    params: Path,
    rates: Sequence[float],
    window_s: float,
    log: Path,
) -> Turn:
    """Start one node, measure startup, idle RSS, its answer and every rate; stop it."""
    probe.static_message = None
    started_s, started_ns = time.monotonic(), time.time_ns()
    process = dds.start_node(
        contender.command(params), log, contender.import_root, contender.environ
    )
    try:
        probe.wait_ready(process, log)
        turn = Turn(
            contender.node,
            probe.static_received_s - started_s,
            dds.rss_mb(process.pid),
            poses_by_child(probe.answer(robot.rows[0]).transforms),
            poses_by_child(probe.static_message.transforms),
            published_s(probe.static_message, started_ns),
        )
        turn.windows = [
            dds.measure(probe, process.pid, rate, window_s, robot.rows) for rate in rates
        ]
    finally:
        dds.stop_process(process)
    time.sleep(1.0)  # let the stopped node's endpoints leave discovery
    return turn


def contenders(
    found: RspFound | str, baseline: str | None, workdir: Path, global_tree: bool = False
) -> list[Contender]:
    """RSP where found, the baseline where asked for, then this work tree's node (and, with
    ``global_tree``, the same with a global tree: ``GLOBAL_TREE_NODE``)."""
    nodes = []
    if not isinstance(found, str):
        rsp = [str(found.executable), "--ros-args", "--params-file"]
        nodes.append(
            Contender("rsp", lambda params: [*rsp, str(params)], rsp_environment(found, os.environ))
        )
    if baseline:
        root = dds.extract_revision(baseline, workdir)
        nodes.append(Contender(f"ours@{baseline}", lambda p: dds.node_command(p, root), None, root))
    nodes.append(Contender("ours", dds.node_command))
    if global_tree:
        prefix = ["-p", f"global_frame_prefix:={GLOBAL_TREE_PREFIX}"]
        nodes.append(Contender(GLOBAL_TREE_NODE, lambda params: dds.node_command(params) + prefix))
    return nodes


def round_order(nodes: Sequence[Contender], index: int) -> list[Contender]:
    """The nodes of round ``index`` in the order they run: as given in even rounds, reversed
    in odd ones, so that no node always runs first or last (a position effect, such as the
    machine's state after the node before, then falls on every node alike)."""
    return list(nodes) if index % 2 == 0 else list(reversed(nodes))


def run_vs_rsp(
    quick: bool,
    rates: Sequence[float],
    robots: Sequence[str] = tuple(ROBOTS),
    rounds: int | None = None,
    window_s: float | None = None,
    baseline: str | None = None,
    global_tree: bool = False,
) -> tuple[list[Table], dict[str, Any]]:
    """The section: skipped (with the reason) without RSP and baseline, else every robot, mode
    and rate. ``rounds`` and ``window_s`` (s per rate) default to 5 and 6 s (quick: 2 and 2 s).
    ``global_tree`` adds this node with a global tree (``GLOBAL_TREE_NODE``)."""
    found = locate_rsp(os.environ)
    if isinstance(found, str) and not baseline:
        print(f"vs_rsp skipped: {found}", flush=True)
        return [Table(f"Against robot_state_publisher: skipped, {found}", ["status"], [])], {
            "skipped": found
        }
    rounds, window_s = rounds or (2 if quick else 5), window_s or (2.0 if quick else 6.0)
    dds.use_bench_domain()
    sys.setswitchinterval(1e-4)  # the /tf reader thread must not wait 5 ms for the GIL
    import rclpy

    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-rsp-"))
    nodes = contenders(found, baseline, workdir, global_tree)
    rsp = found if isinstance(found, str) else f"{found.executable} ({found.origin})"
    record: dict[str, Any] = {"nodes": [c.node for c in nodes], "rsp": rsp, "robots": {}}
    record.update(rounds=rounds, window_s=window_s)
    turns: dict[tuple[str, str], list[Turn]] = {}
    rclpy.init()
    try:
        for robot in (bench_robot(ROBOTS[name]) for name in robots):
            probe = dds.Probe(robot.joint_names)
            try:
                for mode, ignore_timestamp in MODES.items():
                    params = dds.write_params(
                        workdir / f"{robot.name}-{mode}.yaml",
                        robot.description,
                        **({"ignore_timestamp": True} if ignore_timestamp else {}),
                    )
                    group = turns.setdefault((robot.name, mode), [])
                    for index in range(rounds):
                        for node in round_order(nodes, index):
                            log = workdir / f"{robot.name}-{mode}-{node.node}-{index}.log"
                            group.append(run_turn(probe, node, robot, params, rates, window_s, log))
                        print(f"vs_rsp: {robot.name} {mode} round {index + 1}/{rounds}", flush=True)
            finally:
                probe.close()
            record["robots"][robot.name] = {
                "joint_names": len(robot.joint_names),
                "modes": {mode: [t.as_json() for t in turns[(robot.name, mode)]] for mode in MODES},
            }
    finally:
        rclpy.try_shutdown()
    names = [c.node for c in nodes]
    return [rate_table(turns, names, rounds, window_s), startup_table(turns, names, rsp)], record


# -- tables -------------------------------------------------------------------------------------


def _cells(values: Mapping[str, float], digits: int) -> str:
    return " / ".join(f"{value:.{digits}f}" for value in values.values())


def _ratios(values: Mapping[str, float]) -> str:
    """ours / every other node, as ``1.05x`` each, in the order of the nodes."""
    return " / ".join(
        ratio(values["ours"], value) for node, value in values.items() if node != "ours"
    )


def rate_table(
    turns: Mapping[tuple[str, str], list[Turn]], names: Sequence[str], rounds: int, window_s: float
) -> Table:
    """Per robot, mode and rate: medians over the rounds for every node, and ours / the others."""
    ratios = " / ".join(f"ours/{other}" for other in names if other != "ours")
    columns = f"robot|mode|rate Hz|CPU us/msg|CPU {ratios}|main thread us/msg|latency median ms|"
    columns += "p99 ms|drops (of sent)|/tf Hz|RSS MB|load 1m"
    title = f"Side by side: medians of {rounds} interleaved rounds, {window_s:g} s per rate; "
    table = Table(title + f"cells {' / '.join(names)}", columns.split("|"))
    for (robot, mode), group in turns.items():
        for index, rate in enumerate(w.rate_hz for w in group[0].windows):
            windows = {name: [t.windows[index] for t in group if t.node == name] for name in names}

            def medians(pick: Callable[[dds.Window], float]) -> dict[str, float]:
                return {name: median(pick(w) for w in windows[name]) for name in names}  # noqa: B023

            cpu = medians(lambda w: w.cpu_us_per_message())
            drops = " / ".join(str(sum(w.sent - w.received for w in windows[n])) for n in names)
            sent = sum(w.sent for w in windows["ours"])
            table.rows.append(
                [robot, mode, f"{rate:g}", _cells(cpu, 0), _ratios(cpu)]
                + [_cells(medians(lambda w: w.cpu_us_per_message("main")), 0)]
                + [_cells(medians(lambda w: w.latency(0.5) * 1e3), 2)]
                + [_cells(medians(lambda w: w.latency(0.99) * 1e3), 2)]
                + [f"{drops} ({sent})" if mode == "ignore_timestamp" else "-"]
                + [_cells(medians(lambda w: w.received / w.seconds), 0)]
                + [_cells(medians(lambda w: w.rss_mb), 0)]
                + [f"{median(w.load_average for ws in windows.values() for w in ws):.1f}"]
            )
    table.notes.append(
        "CPU us/msg = the node process's CPU time (its CPU-time clock, ns) over the window / "
        "JointStates sent; main thread = the same for the thread that runs the callbacks "
        "(/proc/<pid>/task/<tid>/schedstat, ns); latency = /tf receipt - JointState stamp "
        "(wall clock, reader in the bench process); drops = JointStates with no /tf message "
        "of their stamp, summed over the rounds (defaults mode: publications are rate-limited"
        " to 20 Hz, so none counted); RSS = VmRSS at the end of the window; load 1m = the "
        "machine's load average after the windows"
    )
    if GLOBAL_TREE_NODE in names:
        table.notes.append(
            f"{GLOBAL_TREE_NODE} = this node with global_frame_prefix {GLOBAL_TREE_PREFIX!r}: "
            "every transform also in the global tree, a second /tf message per JointState "
            "(latency and drops count the first of the two); its CPU less ours' is the global "
            "tree's cost"
        )
    return table


def startup_table(
    turns: Mapping[tuple[str, str], list[Turn]], names: Sequence[str], rsp: str
) -> Table:
    """Per robot: startup to first /tf_static, idle RSS, and the frames and values compared."""
    table = Table(
        f"Startup and memory (medians over every turn); cells {' / '.join(names)}",
        "robot|startup ms|startup ours/others|published ms|idle RSS MB|RSS ours/others|"
        "/tf transforms|/tf_static transforms".split("|"),
    )
    for robot in dict.fromkeys(name for name, _ in turns):
        every = [turn for (name, _), group in turns.items() if name == robot for turn in group]
        startup = {n: median(t.startup_s * 1e3 for t in every if t.node == n) for n in names}
        published = {n: median(t.published_s * 1e3 for t in every if t.node == n) for n in names}
        rss = {n: median(t.idle_rss_mb for t in every if t.node == n) for n in names}
        first = {n: next(t for t in every if t.node == n) for n in names}
        table.rows.append(
            [robot, _cells(startup, 0), _ratios(startup), _cells(published, 0)]
            + [_cells(rss, 0), _ratios(rss)]
            + [" / ".join(str(len(getattr(first[n], kind))) for n in names) for kind in KINDS]
        )
        # The global tree's node answers twice per JointState (its /tf and the global tree's):
        # its frames are not compared.
        for other in (name for name in names if name not in ("ours", GLOBAL_TREE_NODE)):
            label = "RSP" if other == "rsp" else other
            for kind, topic in KINDS.items():
                check = compare_frames(getattr(first["ours"], kind), getattr(first[other], kind))
                table.notes.append(f"{robot} {topic}, ours vs {label}: {check.describe(label)}")
    table.notes.append(
        "startup = process start to the first /tf_static at the bench; published = to that "
        "message's stamp, the node's clock as it published: startup less DDS discovery, which "
        "adds under 0.1 s in most turns and up to ~3 s in others (a minimal rclpy node's too), "
        "so startup's median swings from run to run; idle RSS = VmRSS once it arrived, before "
        f"any JointState; RSP: {rsp}"
    )
    return table
