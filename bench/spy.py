"""``python -m bench.spy``: where the running node's CPU time per JointState goes.

The node runs as in the e2e section (a subprocess, ``ignore_timestamp: true``, the humanoid:
63 values in, 73 transforms out per message) while the bench publishes JointStates at
``--rate`` Hz. Over one window:

- /proc gives the node's CPU time per thread (utime + stime of /proc/<pid>/task/*/stat) and
  the main thread's context switches (``voluntary_ctxt_switches`` in its status: each one is
  a wait that slept, so their count per message is the wake-ups per message);
- py-spy (``pip install py-spy``; not a dependency of the project) samples the node's Python
  stacks from outside (``--nonblocking``: the node is never paused; idle samples, where the
  thread sleeps in a wait, are left out), so the share of samples in each stage times the main
  thread's CPU per message is that stage's CPU per message.

Stages are found by walking each sampled stack from its leaf to its root and taking the first
frame that names one (``classify``: the functions ``bench.stages`` times); frames of the
node's own spin loop are told apart by the text of their source line (a wait, a take, the
rest). Prints one table (us per message) and,
with ``--raw PATH``, keeps py-spy's raw stacks for a flame graph.
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

from . import e2e
from .models import humanoid
from .stages import LOOP, STAGE_PATCHES, TAKE, WAIT, context_switches
from .stages import STAGES as STAGE_NAMES

#: A py-spy raw frame: ``function (path:line)``.
FRAME = re.compile(r"^(?P<function>.*) \((?P<path>[^():]+):(?P<line>\d+)\)$")

OTHER = "other"
#: The stages of ``bench.stages`` (one list for both tools), then OTHER.
STAGES = (*STAGE_NAMES, OTHER)
#: Functions that name a stage wherever they appear in a stack, as py-spy names them
#: (``Class.function``): the functions ``bench.stages`` wraps.
FUNCTION_STAGES = {path: stage for _, path, stage in STAGE_PATCHES}
#: The spin loop's own functions, whose lines are told apart by their text.
SPIN_LOOP_PACKAGE = "joint_tf_publisher/"


@dataclass(frozen=True)
class Frame:
    """One frame of a sampled stack."""

    function: str
    path: str
    line: int


def parse_frame(text: str) -> Frame:
    """A py-spy raw frame (``function (path:line)``); a frame without a place keeps line 0."""
    match = FRAME.match(text.strip())
    if match is None:
        return Frame(text.strip(), "", 0)
    return Frame(match["function"], match["path"], int(match["line"]))


def parse_raw(lines: Iterable[str]) -> Counter[tuple[Frame, ...]]:
    """py-spy's ``--format raw`` output: ``root;...;leaf count`` per line -> counts per stack."""
    stacks: Counter[tuple[Frame, ...]] = Counter()
    for line in lines:
        stack, _, count = line.rstrip("\n").rpartition(" ")
        if stack and count.isdigit():
            stacks[tuple(parse_frame(text) for text in stack.split(";"))] += int(count)
    return stacks


class SourceLines:
    """Source lines of the frames' files (paths as py-spy shows them, relative to sys.path)."""

    def __init__(self, roots: Iterable[Path]) -> None:
        self.roots = list(roots)
        self._cache: dict[str, list[str]] = {}

    def text(self, frame: Frame) -> str:
        """The frame's source line, stripped; empty when the file is not found."""
        if frame.path not in self._cache:
            found = next(
                (root / frame.path for root in self.roots if (root / frame.path).is_file()), None
            )
            self._cache[frame.path] = found.read_text().splitlines() if found else []
        lines = self._cache[frame.path]
        return lines[frame.line - 1].strip() if 0 < frame.line <= len(lines) else ""


def classify(stack: tuple[Frame, ...], sources: SourceLines) -> str:
    """The stage of one sampled stack (root first): the first frame from the leaf that names
    one. A generated message's ``__init__`` (``.../msg/_*.py``) runs inside rclpy's take; the
    spin loop's own lines are told apart by their text."""
    for frame in reversed(stack):
        if frame.function in FUNCTION_STAGES:
            return FUNCTION_STAGES[frame.function]
        if "/msg/_" in frame.path and frame.function.endswith("__init__"):
            return TAKE
        if frame.path.startswith(SPIN_LOOP_PACKAGE) and _is_spin_loop(frame.function):
            text = sources.text(frame)
            if "take_message" in text:
                return TAKE
            if ".wait(" in text:
                return WAIT
            return LOOP
    return OTHER


def _is_spin_loop(function: str) -> bool:
    """The node's spin loop: ``WaitLoop``'s methods, or an older node's spin functions."""
    return function.startswith("WaitLoop.") or function in ("spin", "_handle_joint_states")


def stage_shares(stacks: Counter[tuple[Frame, ...]], sources: SourceLines) -> dict[str, float]:
    """Share (0..1) of the samples in each stage."""
    counts: Counter[str] = Counter()
    for stack, count in stacks.items():
        counts[classify(stack, sources)] += count
    total = sum(counts.values())
    return {stage: counts[stage] / total for stage in STAGES} if total else {}


def run(rate_hz: float, seconds: float, sampling_hz: int, raw_path: Path | None) -> int:
    """Start the node, publish, sample it with py-spy over one window, print the table."""
    py_spy = shutil.which("py-spy") or str(Path(sys.executable).parent / "py-spy")
    if not Path(py_spy).exists():
        print("bench.spy needs py-spy: pip install py-spy", file=sys.stderr)
        return 1
    os.environ["ROS_DOMAIN_ID"] = str(e2e.domain_id())
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    sys.setswitchinterval(1e-4)
    import rclpy

    spec = humanoid()
    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-spy-"))
    params = e2e.write_params(workdir, spec.to_urdf())
    raw_path = raw_path or workdir / "py-spy.raw"
    rows = e2e.sample_rows(spec, 997)
    rclpy.init()
    probe = e2e.Probe([joint.name for joint in spec.independent_joints])
    log = workdir / "node.log"
    process = e2e.start_node(e2e.node_command(params), log, None)
    try:
        e2e.wait_ready(probe, process, log)
        publisher = threading.Thread(
            target=e2e.publish_window, args=(probe, rate_hz, seconds + 4.0, rows), daemon=True
        )
        publisher.start()
        time.sleep(1.5)  # warm-up
        probe.received.clear()
        threads_before = e2e.thread_cpu_seconds(process.pid)
        sent_before = probe.sent_count
        switches_before, wall_before = context_switches(process.pid), time.perf_counter()
        spy = subprocess.run(
            [py_spy, "record", "--pid", str(process.pid), "--rate", str(sampling_hz),
             "--nonblocking", "--format", "raw", "--duration", str(int(seconds)),
             "--output", str(raw_path)],
            capture_output=True, text=True, check=False,
        )  # fmt: skip
        wall = time.perf_counter() - wall_before
        threads = {
            name: spent - threads_before.get(name, 0.0)
            for name, spent in e2e.thread_cpu_seconds(process.pid).items()
        }
        switches = context_switches(process.pid) - switches_before
        messages = probe.sent_count - sent_before
        publisher.join()
        received = len(probe.received)
    finally:
        e2e.stop_process(process)
        probe.close()
        rclpy.try_shutdown()
    if spy.returncode != 0 or not raw_path.exists():
        print(f"py-spy failed ({spy.returncode}): {spy.stdout}{spy.stderr}", file=sys.stderr)
        return 1
    stacks = parse_raw(raw_path.read_text().splitlines())
    sources = SourceLines([e2e.REPO_ROOT, *map(Path, filter(None, sys.path))])
    shares = stage_shares(stacks, sources)
    main_us = threads.get("main", 0.0) * 1e6 / messages
    print(
        f"# Where the time goes: humanoid at {rate_hz:g} Hz, ignore_timestamp true, "
        f"{wall:.1f} s window, {sum(stacks.values())} py-spy samples at {sampling_hz} Hz, "
        f"load 1m {os.getloadavg()[0]:.1f}\n"
    )
    print("| stage | share of main-thread samples | us per message |\n| --- | --- | --- |")
    for stage in STAGES:
        if shares.get(stage):
            print(f"| {stage} | {shares[stage] * 100:.1f} % | {shares[stage] * main_us:.1f} |")
    print(f"| **main thread (/proc)** | 100 % | **{main_us:.1f}** |")
    for name, spent in sorted(threads.items(), key=lambda kv: -kv[1]):
        if name != "main" and spent * 1e6 / messages >= 0.5:
            print(f"| thread {name} (/proc) | - | {spent * 1e6 / messages:.1f} |")
    total_us = sum(threads.values()) * 1e6 / messages
    print(f"| **process (/proc)** | - | **{total_us:.1f}** |\n")
    print(
        f"JointStates sent {messages}, /tf messages received {received}; main "
        f"thread wake-ups (voluntary context switches) per message: {switches / messages:.2f}; "
        f"raw stacks: {raw_path}"
    )
    return 0


def main(argv: list[str] | None = None) -> int:
    """Command line: ``python -m bench.spy [--rate HZ] [--seconds S] [--sampling-rate HZ]``."""
    parser = argparse.ArgumentParser(prog="python -m bench.spy", description=__doc__)
    parser.add_argument("--rate", type=float, default=1000.0, help="JointStates per second")
    parser.add_argument("--seconds", type=float, default=20.0, help="sampled window, s")
    parser.add_argument("--sampling-rate", type=int, default=250, help="py-spy samples/s")
    parser.add_argument("--raw", type=Path, help="keep py-spy's raw stacks here")
    args = parser.parse_args(argv)
    return run(args.rate, args.seconds, args.sampling_rate, args.raw)


if __name__ == "__main__":
    sys.exit(main())
