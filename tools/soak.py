#!/usr/bin/env python3
"""Soak test (``make soak``): the node on a 60-joint robot, fed JointState at 1 kHz for a while.

The node runs as a subprocess on the humanoid test robot (61 moving joints: a floating base, 50
driven revolute joints, 10 finger mimics; 11 fixed joints) with ``ignore_timestamp``, through
the bench's runner of nodes (bench/dds.py): its probe publishes JointState at ``--rate`` Hz
(every driven variable moving sinusoidally within its limits, stamped with the wall clock) and
reads ``/tf`` raw on a thread of its own (the latency of every message); one message in
``--check-every`` is checked in full afterwards for non-finite values and unit quaternions.
The report (text, then one ``SOAK_REPORT {json}`` line) gives messages in and out, latency,
the node's memory (start, after the warm-up, end) and CPU; exit status 1 when the node died,
published nothing or a non-finite value, or grew by more than ``--max-rss-growth-mb``.

``--seconds`` feeds for a wall-clock time (a loaded machine sends fewer messages in it);
``--messages N`` feeds exactly N messages at up to ``--rate``, however long that takes, so the
node is judged on the same burst on any machine (giving up, and failing, after ``MAX_SLOWDOWN``
times their nominal time). ``ROS_DOMAIN_ID`` is respected (a private one is chosen if unset).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the bench's runner of nodes over DDS
from bench import dds  # noqa: E402

DEFAULT_MODEL = ROOT / "test" / "urdf" / "humanoid.urdf"
NAMESPACE = "/soak"
PREFIX = "soak/"
DRAIN_S = 1.0
#: A feed by count (--messages) gives up after this many times its nominal time (at least
#: MIN_GIVE_UP_S): the sender is then far too slow for the run to mean anything.
MAX_SLOWDOWN = 20.0
MIN_GIVE_UP_S = 30.0


@dataclass
class SoakReport:
    """What one soak run measured. Latencies in milliseconds, memory in MiB. ``seconds`` is the
    feed's duration at full rate (--seconds, or --messages / --rate), ``rate_hz`` the highest
    sending rate, ``messages_target`` --messages (None: a feed for ``seconds``), ``feed_seconds``
    the wall-clock time the feed took."""

    model: str
    moving_joints: int
    seconds: float
    rate_hz: float
    reliable: bool = False
    unknown_names: int = 0
    messages_target: int | None = None
    feed_seconds: float = math.nan
    messages_in: int = 0
    messages_out: int = 0
    dropped: int = 0
    transforms_per_message: float = math.nan
    checked_messages: int = 0
    non_finite_messages: int = 0
    bad_quaternion_messages: int = 0
    latency_median_ms: float = math.nan
    latency_p99_ms: float = math.nan
    latency_max_ms: float = math.nan
    rss_start_mib: float = math.nan
    rss_warm_mib: float = math.nan
    rss_end_mib: float = math.nan
    rss_growth_mib: float = math.nan
    node_cpu_percent: float = math.nan
    feeder_cpu_percent: float = math.nan  # this process: feeding and reading /tf
    load_average: float = math.nan
    node_alive: bool = False
    node_exit_status: int | None = None
    memory_samples: list[tuple[float, float]] = field(default_factory=list)  # (s, MiB)
    failures: list[str] = field(default_factory=list)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="soak.py", description=(__doc__ or "").split("\n\n")[0])
    add = parser.add_argument
    length = parser.add_mutually_exclusive_group()
    length.add_argument(
        "--seconds", type=float, default=60.0, help="feeding time, wall clock (default 60)"
    )
    length.add_argument(
        "--messages", type=int, metavar="N", help="feed exactly N messages at up to --rate"
    )
    add("--rate", type=float, default=1000.0, help="JointState Hz (default 1000)")
    add("--model", type=Path, default=DEFAULT_MODEL, help="URDF or SDF file")
    add("--warmup", type=float, help="seconds before the baseline memory sample (default 10%%)")
    add("--max-rss-growth-mb", type=float, default=5.0, help="allowed RSS growth after warm-up")
    add("--check-every", type=int, default=10, help="check one /tf message in N in full")
    add("--reliable", action="store_true", help="joint_states reliable, depth 1000 (QoS override)")
    add("--unknown-names", type=int, default=0, metavar="N", help="N fresh unknown names a message")
    args = parser.parse_args(argv)
    if args.rate <= 0 or args.check_every < 1 or args.unknown_names < 0:
        parser.error("--rate must be positive, --check-every at least 1, --unknown-names >= 0")
    if args.messages is not None:
        args.seconds = args.messages / args.rate
    if args.seconds <= 0:
        parser.error("--seconds and --messages must be positive")
    if args.warmup is None:
        args.warmup = min(10.0, max(1.0, 0.1 * args.seconds))
    return args


class Feeder:
    """Sinusoidal JointState values for every driven variable, within the joint limits."""

    def __init__(self, robot: Any) -> None:
        self.names: list[str] = list(robot.kinematics.variable_names)
        self._centre: list[float] = []
        self._amplitude: list[float] = []
        self._quaternion: dict[str, int] = {}
        for index, name in enumerate(self.names):
            joint = robot.joints.get(name)
            limits = joint.hard_limits() if joint is not None else None
            if limits is not None:
                self._centre.append(0.5 * (limits[0] + limits[1]))
                self._amplitude.append(0.45 * (limits[1] - limits[0]))
                continue
            if "/rot_" in name:
                self._quaternion[name[-1]] = index  # "x" of "./rot_x"
            self._centre.append(0.0)
            self._amplitude.append(0.0 if "/rot_" in name else 0.2)

    def values(self, t: float) -> list[float]:
        """Positions at time ``t`` (s): each variable at its own phase, 0.5 Hz."""
        pairs = enumerate(zip(self._centre, self._amplitude, strict=True))
        values = [c + a * math.sin(math.pi * t + 0.37 * index) for index, (c, a) in pairs]
        half = 0.25 * math.sin(math.pi * t)  # a floating base turns by +-0.5 rad about z
        for axis, component in zip("xyzw", (0.0, 0.0, math.sin(half), math.cos(half)), strict=True):
            if axis in self._quaternion:
                values[self._quaternion[axis]] = component
        return values


def check_messages(report: SoakReport, kept: list[bytes]) -> None:
    """Deserialize the kept /tf messages into ``report``: how many, their transforms per
    message, and how many carry a non-finite value or a non-unit quaternion."""
    from rclpy.serialization import deserialize_message
    from tf2_msgs.msg import TFMessage

    transforms = 0
    for data in kept:
        numbers = [
            (item.transform.translation, item.transform.rotation)
            for item in deserialize_message(data, TFMessage).transforms
        ]
        transforms += len(numbers)
        finite = all(
            math.isfinite(v) for p, q in numbers for v in (p.x, p.y, p.z, q.x, q.y, q.z, q.w)
        )
        unit = all(abs(math.hypot(q.x, q.y, q.z, q.w) - 1.0) <= 1e-6 for _, q in numbers)
        report.non_finite_messages += not finite
        report.bad_quaternion_messages += finite and not unit
    report.checked_messages = len(kept)
    if kept:
        report.transforms_per_message = transforms / len(kept)


def run_soak(args: argparse.Namespace) -> SoakReport:
    """Start the node, feed it, measure; the node is stopped at the end."""
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    sys.setswitchinterval(1e-4)  # the /tf reader thread must not wait 5 ms for the GIL
    import rclpy

    from joint_tf_publisher import Robot

    robot = Robot.load(args.model)
    feeder = Feeder(robot)
    moving = len(robot.kinematics.moving_joints)
    report = SoakReport(str(args.model), moving, args.seconds, args.rate, args.reliable)
    report.unknown_names, report.messages_target = args.unknown_names, args.messages
    rclpy.init()
    probe = dds.Probe(feeder.names, f"{NAMESPACE}/joint_states", args.check_every)
    try:
        with tempfile.TemporaryDirectory(prefix="soak-") as scratch:
            reliable = {"subscription": {"reliability": "reliable", "depth": 1000}}
            overrides = {f"{NAMESPACE}/joint_states": reliable}
            qos = {"qos_overrides": overrides} if args.reliable else {}
            params = dds.write_params(
                Path(scratch) / "soak_params.yaml",
                args.model.read_text(),
                frame_prefix=PREFIX,
                ignore_timestamp=True,
                **qos,
            )
            log_path = Path(scratch) / "node.log"
            process = dds.start_node(
                [*dds.node_command(params), "-r", f"__ns:={NAMESPACE}"], log_path
            )
            try:
                probe.wait_ready(process, log_path)
                probe.received.clear()
                report.rss_start_mib = dds.rss_mb(process.pid)
                cpu_start, feeder_start = dds.cpu_seconds(process.pid), time.process_time()
                started = time.monotonic()
                _feed(args, report, feeder, probe, process.pid)
                report.feed_seconds = time.monotonic() - started
                report.node_cpu_percent = 100.0 * (dds.cpu_seconds(process.pid) - cpu_start)
                report.feeder_cpu_percent = 100.0 * (time.process_time() - feeder_start)
                report.node_cpu_percent /= report.feed_seconds
                report.feeder_cpu_percent /= report.feed_seconds
                report.load_average = os.getloadavg()[0]
                report.rss_end_mib = dds.rss_mb(process.pid)
                time.sleep(DRAIN_S)  # let the last transforms arrive
                report.node_alive = process.poll() is None
            finally:
                report.node_exit_status = dds.stop_process(process)
                node_log = log_path.read_text() if log_path.exists() else ""
        latencies_ms = [(receipt - stamp) / 1e6 for stamp, receipt in probe.received]
        check_messages(report, probe.kept)
    finally:
        probe.close()
        rclpy.try_shutdown()
    report.messages_out = len(latencies_ms)
    report.dropped = max(0, report.messages_in - report.messages_out)
    if latencies_ms:  # as bench/dds.py's Window.latency
        median, p99, most = np.quantile(latencies_ms, [0.5, 0.99, 1.0]).tolist()
        report.latency_median_ms, report.latency_p99_ms, report.latency_max_ms = median, p99, most
    report.rss_growth_mib = report.rss_end_mib - report.rss_warm_mib
    report.failures = failures(report, args.max_rss_growth_mb, node_log)
    return report


def _feed(
    args: argparse.Namespace, report: SoakReport, feeder: Feeder, probe: dds.Probe, pid: int
) -> None:
    """Publish at most ``args.rate`` messages a second, for ``args.seconds`` or (with
    ``args.messages``) until that many are sent; sample the node's memory on the way.

    The feed's progress is its time in the first case and, by count, the nominal time of the
    messages sent (their number over the rate): the warm-up, the memory samples and the
    values sent then depend on the count only, not on how fast this machine sends them.
    """
    period, by_count = 1.0 / args.rate, args.messages is not None
    give_up_s = max(MIN_GIVE_UP_S, MAX_SLOWDOWN * args.seconds)
    start = next_send = time.monotonic()
    next_sample, sample_every = args.warmup, max(1.0, args.seconds / 20.0)
    while True:
        now = time.monotonic()
        progress = report.messages_in * period if by_count else now - start
        done = report.messages_in >= args.messages if by_count else progress >= args.seconds
        if done or now - start > give_up_s:
            break
        if progress >= next_sample:
            rss = dds.rss_mb(pid)
            report.memory_samples.append((round(now - start, 2), round(rss, 2)))
            if math.isnan(report.rss_warm_mib):
                report.rss_warm_mib = rss
            next_sample += sample_every
            if math.isnan(rss):  # the node is gone
                break
        if now < next_send:
            time.sleep(next_send - now)
            continue
        positions = feeder.values(progress)
        if args.unknown_names:
            noise = [f"noise_{report.messages_in}_{k}" for k in range(args.unknown_names)]
            probe.message.name = feeder.names + noise
            positions += [0.0] * args.unknown_names
        probe.send(positions)
        report.messages_in += 1
        next_send += period
        if next_send < now - 0.1:  # fell far behind: do not burst to catch up
            next_send = now + period


def failures(report: SoakReport, max_rss_growth_mib: float, node_log: str) -> list[str]:
    """What went wrong in a measured run, in words; none when it passed."""
    found = []
    target, sent = report.messages_target, report.messages_in
    if target is not None and sent < target and report.node_alive:
        found.append(
            f"the feeder sent {sent} of its {target} messages in {report.feed_seconds:.1f} s "
            f"and gave up (load average {report.load_average:.1f}): this machine is too slow "
            "to feed the node (no verdict on the node)"
        )
    if not report.node_alive:
        found.append(f"the node died (exit {report.node_exit_status}):\n{node_log}")
    if report.messages_out == 0:
        found.append("the node published nothing on /tf")
    if report.non_finite_messages or report.bad_quaternion_messages:
        found.append("the node published non-finite values or non-unit quaternions")
    if not report.rss_growth_mib <= max_rss_growth_mib:
        found.append(
            f"the node's memory grew by {report.rss_growth_mib:.1f} MiB after the warm-up "
            f"(allowed {max_rss_growth_mib:g})"
        )
    if "Traceback" in node_log:
        found.append(f"a traceback in the node's log:\n{node_log}")
    return found


def print_report(r: SoakReport) -> None:
    """The human-readable report, then the machine-readable line."""
    length = (
        f"{r.messages_target} messages at up to" if r.messages_target else f"{r.seconds:g} s at"
    )
    options = (", reliable joint_states" if r.reliable else "") + (
        f", {r.unknown_names} fresh unknown names" if r.unknown_names else ""
    )
    lines = [
        f"soak: {r.model} ({r.moving_joints} moving joints), {length} {r.rate_hz:g} Hz{options}",
        f"  messages in      {r.messages_in} in {r.feed_seconds:.1f} s "
        f"({r.messages_in / r.feed_seconds:.0f} Hz)",
        f"  messages out     {r.messages_out} (/tf of this node)",
        f"  dropped          {r.dropped} ({100.0 * r.dropped / max(1, r.messages_in):.2f} %)",
        f"  checked in full  {r.checked_messages} messages ({r.transforms_per_message:.1f} "
        f"transforms each), {r.non_finite_messages} with non-finite values, "
        f"{r.bad_quaternion_messages} with non-unit quaternions",
        f"  latency          median {r.latency_median_ms:.2f} ms, p99 {r.latency_p99_ms:.2f} ms, "
        f"max {r.latency_max_ms:.2f} ms",
        f"  node memory      start {r.rss_start_mib:.1f} MiB, after warm-up {r.rss_warm_mib:.1f} "
        f"MiB, end {r.rss_end_mib:.1f} MiB (growth {r.rss_growth_mib:+.2f} MiB)",
        f"  CPU              node {r.node_cpu_percent:.0f} %, feeder and reader "
        f"{r.feeder_cpu_percent:.0f} % of a core; load average {r.load_average:.1f} on "
        f"{os.cpu_count()} cores",
        f"  node             {'alive' if r.node_alive else 'DEAD'} at the end, exit status "
        f"{r.node_exit_status} after SIGINT",
        "  result           " + ("PASS" if not r.failures else "FAIL"),
        *(f"  failure: {failure}" for failure in r.failures),
    ]
    print("\n".join(lines))
    print("SOAK_REPORT " + json.dumps(asdict(r)), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    try:
        report = run_soak(args)
    except RuntimeError as err:
        print(f"soak.py: {err}", file=sys.stderr)
        return 1
    print_report(report)
    return 0 if not report.failures else 1


if __name__ == "__main__":
    sys.exit(main())
