"""Section ``vs_rsp``: this node and the C++ robot_state_publisher (RSP) side by side, with the
floor node (``floor_node``: the least an rclpy node can do for the same messages) and this node
at an older git revision (``--baseline REV``) too, in interleaved rounds (each runs every node
in turn: start, measure, stop), so a drift in the machine's load hits all alike. The floor and
this node run on every executor asked for (``--executors``; default: each this rclpy offers),
and a table gives each one's own work: node minus floor. RSP comes from a sourced ROS 2 or the
rsp build kit (``locate_rsp``); without it the section says why and compares the others.
Method and results: docs/benchmarks.md.
"""

from __future__ import annotations

import json
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
#: The mode the floor node runs in: it publishes every JointState (it has no rate limiter).
FLOOR_MODE = "ignore_timestamp"
FLOOR = "floor"
#: The node's default executor where rclpy has it, and the environment variable that picks
#: one, for the node and the floor: ``ros/runtime.py``'s ``EVENTS`` and ``EXECUTOR_VARIABLE``
#: (not imported here: this module loads without ROS).
EVENTS = "events"
EXECUTOR_VARIABLE = "JOINT_TF_PUBLISHER_EXECUTOR"
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
    """A robot as every node gets it: description text, JointState names, rows of positions,
    and the (parent, child) frames of its moving and fixed joints (for the floor node)."""

    name: str
    description: str
    joint_names: list[str]
    rows: list[list[float]]
    frames: dict[str, list[tuple[str, str]]] = field(default_factory=dict)


def bench_robot(spec: ModelSpec, count: int = 997) -> BenchRobot:
    """``spec`` with ``count`` rows of its independent joints' positions, inside their limits."""
    configurations = spec.sample(11, count)
    rows = [list(values.values()) for values in configurations]
    kin = spec.robot.kinematics
    frames = {
        kind: [(joint.parent, joint.child) for joint in joints]
        for kind, joints in (("moving", kin.moving_joints), ("static", kin.fixed_joints))
    }
    return BenchRobot(spec.name, spec.to_urdf(), list(configurations[0]), rows, frames)


# -- measuring ----------------------------------------------------------------------------------


@dataclass(frozen=True)
class Contender:
    """One of the compared nodes: its name in the tables, how to run it on a parameters file
    and a frames file (``write_frames``), on which executor (None: RSP's own)."""

    node: str
    command: Callable[[Path, Path], list[str]]
    environ: Mapping[str, str] | None = None
    import_root: Path | None = None
    executor: str | None = None
    modes: tuple[str, ...] = tuple(MODES)


def write_frames(path: Path, robot: BenchRobot) -> Path:
    """The floor node's frames file: ``robot.frames`` as JSON."""
    path.write_text(json.dumps(robot.frames))
    return path


def floor_command(params: Path, frames: Path) -> list[str]:
    """The floor node (``bench/floor_node.py``) on ``frames``, with the node's parameters file
    (it reads none of them but ``use_sim_time``, as rclpy does)."""
    ros_args = ["--ros-args", "--params-file", str(params), "--log-level", "warn"]
    return [sys.executable, "-m", "bench.floor_node", str(frames), *ros_args]


def available_executors() -> tuple[str, ...]:
    """The executors this rclpy offers the node, the default first (``ros/runtime.py``)."""
    from joint_tf_publisher.ros import runtime

    return runtime.available_executors()


def named(node: str, executor: str, default: str) -> str:
    """A contender's name in the tables: ``node`` on the default executor, else
    ``node:executor``."""
    return node if executor == default else f"{node}:{executor}"


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
    frames: Path,
    rates: Sequence[float],
    window_s: float,
    log: Path,
) -> Turn:
    """Start one node, measure startup, idle RSS, its answer and every rate; stop it."""
    probe.static_message = None
    started_s, started_ns = time.monotonic(), time.time_ns()
    process = dds.start_node(
        contender.command(params, frames), log, contender.import_root, contender.environ
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
    found: RspFound | str,
    baseline: str | None,
    workdir: Path,
    executors: Sequence[str] = (EVENTS,),
    global_tree: bool = False,
) -> list[Contender]:
    """RSP where found; then, on each of ``executors`` (the first is the default, its nodes
    named plainly), the floor node (``ignore_timestamp`` mode only), the baseline where asked
    for, and this work tree's node; with ``global_tree``, this node with a global tree too
    (``GLOBAL_TREE_NODE``, on the default executor)."""
    nodes = []
    if not isinstance(found, str):
        rsp = [str(found.executable), "--ros-args", "--params-file"]
        nodes.append(
            Contender(
                "rsp", lambda params, _: [*rsp, str(params)], rsp_environment(found, os.environ)
            )
        )
    root = dds.extract_revision(baseline, workdir) if baseline else None
    for executor in executors:
        environ = {**os.environ, EXECUTOR_VARIABLE: executor}

        def name(node: str, executor: str = executor) -> str:
            return named(node, executor, executors[0])

        nodes.append(Contender(name(FLOOR), floor_command, environ, None, executor, (FLOOR_MODE,)))
        if root is not None:
            base = lambda p, _, root=root: dds.node_command(p, root)  # noqa: E731
            nodes.append(Contender(name(f"ours@{baseline}"), base, environ, root, executor))
        ours = lambda p, _: dds.node_command(p)  # noqa: E731
        nodes.append(Contender(name("ours"), ours, environ, None, executor))
    if global_tree:
        prefix = ["-p", f"global_frame_prefix:={GLOBAL_TREE_PREFIX}"]
        environ = {**os.environ, EXECUTOR_VARIABLE: executors[0]}
        with_tree = lambda p, _: dds.node_command(p) + prefix  # noqa: E731
        nodes.append(Contender(GLOBAL_TREE_NODE, with_tree, environ, None, executors[0]))
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
    executors: Sequence[str] | None = None,
    global_tree: bool = False,
) -> tuple[list[Table], dict[str, Any]]:
    """The section: every robot, mode and rate, for RSP (where found; else the reason is
    printed and noted), the floor, the baseline and this node on each of ``executors``
    (default: every one this rclpy offers), and with ``global_tree`` this node with a global
    tree (``GLOBAL_TREE_NODE``). ``rounds`` and ``window_s`` (s per rate) default to 5 and 6 s
    (quick: 2 and 2 s)."""
    found = locate_rsp(os.environ)
    if isinstance(found, str):
        print(f"vs_rsp without robot_state_publisher: {found}", flush=True)
    offered = available_executors()
    executors = tuple(executors or offered)
    if unknown := [name for name in executors if name not in offered]:
        raise ValueError(f"executors {unknown}: this rclpy offers {', '.join(offered)}")
    rounds, window_s = rounds or (2 if quick else 5), window_s or (2.0 if quick else 6.0)
    dds.use_bench_domain()
    sys.setswitchinterval(1e-4)  # the /tf reader thread must not wait 5 ms for the GIL
    import rclpy

    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-rsp-"))
    nodes = contenders(found, baseline, workdir, executors, global_tree)
    rsp = found if isinstance(found, str) else f"{found.executable} ({found.origin})"
    record: dict[str, Any] = {"nodes": [c.node for c in nodes], "rsp": rsp, "robots": {}}
    record.update(rounds=rounds, window_s=window_s, executors=list(executors))
    turns: dict[tuple[str, str], list[Turn]] = {}
    rclpy.init()
    try:
        for robot in (bench_robot(ROBOTS[name]) for name in robots):
            probe = dds.Probe(robot.joint_names)
            frames = write_frames(workdir / f"{robot.name}-frames.json", robot)
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
                            if mode not in node.modes:
                                continue
                            log = workdir / f"{robot.name}-{mode}-{node.node}-{index}.log"
                            group.append(
                                run_turn(probe, node, robot, params, frames, rates, window_s, log)
                            )
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
    default = [c.node for c in nodes if c.executor in (None, executors[0])]
    tables = [rate_table(turns, default, rounds, window_s), own_work_table(turns, nodes, executors)]
    return [*tables, startup_table(turns, names, rsp)], record


# -- tables -------------------------------------------------------------------------------------


def _cells(values: Mapping[str, float], digits: int) -> str:
    """The values joined by `` / ``, ``-`` for a node without one (the floor in defaults
    mode)."""
    return " / ".join(
        f"{value:.{digits}f}" if math.isfinite(value) else "-" for value in values.values()
    )


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


def own_work_table(
    turns: Mapping[tuple[str, str], list[Turn]],
    nodes: Sequence[Contender],
    executors: Sequence[str],
) -> Table:
    """Per robot, rate and executor (``ignore_timestamp`` mode, where the floor runs): the
    median CPU per JointState of the floor and of this node (and the baseline), each node's
    own work (node minus floor, us) and node / floor; RSP's figure beside them."""
    ours = [c for c in nodes if c.executor is not None and c.node.split(":")[0] != FLOOR]
    labels = list(dict.fromkeys(c.node.split(":")[0] for c in ours))
    columns = ["robot", "rate Hz", "executor", f"CPU us/msg {FLOOR} / {' / '.join(labels)}"]
    columns += [f"{label} - {FLOOR} us" for label in labels]
    columns += [f"{label}/{FLOOR}" for label in labels] + ["RSP us", f"{FLOOR}/RSP"]
    table = Table(
        "Own work per JointState: each node minus the floor node, per executor "
        f"({FLOOR_MODE}; medians over the rounds)",
        columns,
    )
    for (robot, mode), group in turns.items():
        if mode != FLOOR_MODE:
            continue
        for index, rate in enumerate(w.rate_hz for w in group[0].windows):

            def cpu(node: str, index: int = index, group: list[Turn] = group) -> float:
                windows = (t.windows[index] for t in group if t.node == node)
                return median(window.cpu_us_per_message() for window in windows)

            rsp = cpu("rsp")
            for executor in executors:
                floor = cpu(named(FLOOR, executor, executors[0]))
                mine = [cpu(named(label, executor, executors[0])) for label in labels]
                table.rows.append(
                    [robot, f"{rate:g}", executor]
                    + [" / ".join(f"{v:.0f}" if math.isfinite(v) else "-" for v in [floor, *mine])]
                    + [f"{v - floor:.0f}" if math.isfinite(v - floor) else "-" for v in mine]
                    + [ratio(v, floor) for v in mine]
                    + [f"{rsp:.0f}" if math.isfinite(rsp) else "-", ratio(floor, rsp)]
                )
    table.notes.append(
        f"{FLOOR} = bench/floor_node.py: a raw JointState subscription whose callback copies the "
        "stamp into a pre-serialised TFMessage (one transform per moving joint) and publishes "
        "the bytes, on the same executor; own work = the node's CPU per JointState minus the "
        "floor's"
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
        # its frames are not compared, nor the floor's.
        for other in (
            name
            for name in names
            if name not in ("ours", GLOBAL_TREE_NODE) and not name.startswith(FLOOR)
        ):
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
