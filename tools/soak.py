#!/usr/bin/env python3
"""Soak test (``make soak``): the node on a 60-joint robot, fed JointState at 1 kHz for a while.

Starts the node's console script as a subprocess (as ``ros2 run`` would) on the humanoid test
robot (61 moving joints: a floating base, 50 driven revolute joints, 10 finger mimics; 11 fixed
joints), with ``ignore_timestamp`` so that every JointState is published. This process
publishes JointState at ``--rate`` Hz (every driven variable moving sinusoidally within its
limits, stamped with the wall clock at sending); a separate monitor process (this script with
``--monitor``, so that receiving does not slow the sending) listens to ``/tf`` in serialized
form: the stamp gives the latency of every message; one message in ``--check-every`` is
deserialized in full and checked for non-finite values and unit quaternions.

Report (text, then one ``SOAK_REPORT {json}`` line): messages in and out, dropped, latency
(median, p99, max), the node's resident memory (at start, after the warm-up, at the end) and
CPU use. Exit status 0 when the node stayed up, published, never published a non-finite value
and its memory after the warm-up grew by at most ``--max-rss-growth-mb``; 1 otherwise.

``--seconds`` feeds for a wall-clock time: a loaded machine sends fewer messages in it.
``--messages N`` feeds by count instead: exactly N messages, at most ``--rate`` per second,
however long the machine takes (the warm-up and the memory samples fall after the same number
of messages however slow the sender is), so the node is judged on the same burst on any
machine. A feed by count that has not sent its N messages after ``MAX_SLOWDOWN`` times their
nominal time (N / rate) gives up, and the run fails saying so.

Usage: ``python tools/soak.py [--seconds 60 | --messages 60000] [--rate 1000]`` in the venv
(``.venv/bin/python``); ``ROS_DOMAIN_ID`` is respected (a private one is chosen if unset).
"""

from __future__ import annotations

import argparse
import json
import math
import os
import select
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # the bench's runner of nodes over DDS, shared
from bench import dds  # noqa: E402

DEFAULT_MODEL = ROOT / "test" / "urdf" / "humanoid.urdf"
NAMESPACE = "/soak"
PREFIX = "soak/"
CONNECT_TIMEOUT_S = 60.0
DRAIN_S = 1.0
#: A feed by count (--messages) gives up after this many times its nominal time (at least
#: MIN_GIVE_UP_S): the sender is then far too slow for the run to mean anything.
MAX_SLOWDOWN = 20.0
MIN_GIVE_UP_S = 30.0


@dataclass
class MemorySample:
    """The node's resident set size (MiB) at ``seconds`` after feeding started."""

    seconds: float
    rss_mib: float


@dataclass
class SoakReport:
    """What one soak run measured. Latencies in milliseconds, memory in MiB."""

    model: str
    moving_joints: int
    #: The feed's duration at full rate: --seconds, or --messages / --rate.
    seconds: float
    #: The highest sending rate; a loaded machine sends slower.
    rate_hz: float
    reliable: bool = False
    unknown_names: int = 0
    #: --messages: the number of messages to send (None: feed for ``seconds``).
    messages_target: int | None = None
    #: Wall-clock time the feed took.
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
    feeder_cpu_percent: float = math.nan
    monitor_cpu_percent: float = math.nan
    load_average: float = math.nan
    node_alive: bool = False
    node_exit_status: int | None = None
    memory_samples: list[MemorySample] = field(default_factory=list)
    failures: list[str] = field(default_factory=list)


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(
        prog="soak.py", description=__doc__.split("\n\n")[0] if __doc__ else None
    )
    length = parser.add_mutually_exclusive_group()
    length.add_argument(
        "--seconds",
        type=float,
        default=None,
        help="feeding time, wall clock (default 60; a loaded machine sends fewer messages)",
    )
    length.add_argument(
        "--messages",
        type=int,
        default=None,
        metavar="N",
        help="feed exactly N messages at up to --rate, however long that takes (instead "
        "of --seconds; the warm-up is then --warmup times --rate messages)",
    )
    parser.add_argument("--rate", type=float, default=1000.0, help="JointState Hz (default 1000)")
    parser.add_argument("--model", type=Path, default=DEFAULT_MODEL, help="URDF or SDF file")
    parser.add_argument(
        "--warmup",
        type=float,
        default=None,
        help="seconds (with --messages: their number at --rate) before the baseline memory "
        "sample (default: 10%% of the feed, 1..10 s)",
    )
    parser.add_argument(
        "--max-rss-growth-mb",
        type=float,
        default=5.0,
        help="allowed growth of the node's RSS after the warm-up, MiB (default 5)",
    )
    parser.add_argument(
        "--check-every",
        type=int,
        default=10,
        help="deserialize and check one /tf message in N in full (default 10)",
    )
    parser.add_argument(
        "--reliable",
        action="store_true",
        help="make the node's joint_states subscription reliable, depth 1000 (default: its "
        "own best-effort QoS, which drops what the node cannot take)",
    )
    parser.add_argument(
        "--unknown-names",
        type=int,
        default=0,
        metavar="N",
        help="add N names the robot does not have, fresh in every message (default 0): "
        "exercises the node's per-name caches and its unknown-name log",
    )
    parser.add_argument("--monitor", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.messages is not None and args.messages <= 0:
        parser.error("--messages must be positive")
    if args.rate <= 0 or args.check_every < 1 or args.unknown_names < 0:
        parser.error(
            "--rate must be positive, --check-every at least 1, --unknown-names not negative"
        )
    if args.messages is not None:
        args.seconds = args.messages / args.rate  # their duration at full rate
    elif args.seconds is None:
        args.seconds = 60.0
    if args.seconds <= 0:
        parser.error("--seconds must be positive")
    if args.warmup is None:
        args.warmup = min(10.0, max(1.0, 0.1 * args.seconds))
    return args


class Feeder:
    """Sinusoidal JointState values for every driven variable, within the joint limits."""

    def __init__(self, robot: Any) -> None:
        kin = robot.kinematics
        self.names: list[str] = list(kin.variable_names)
        self._centre: list[float] = []
        self._amplitude: list[float] = []
        self._quaternion: dict[str, int] = {}
        for index, name in enumerate(self.names):
            joint = robot.joints.get(name)
            limits = joint.hard_limits() if joint is not None else None
            if limits is not None:
                self._centre.append(0.5 * (limits[0] + limits[1]))
                self._amplitude.append(0.45 * (limits[1] - limits[0]))
            elif "/rot_" in name:
                self._quaternion[name[-1]] = index  # "x" of "./rot_x"
                self._centre.append(0.0)
                self._amplitude.append(0.0)
            else:
                self._centre.append(0.0)
                self._amplitude.append(0.2)

    def values(self, t: float) -> list[float]:
        """Positions at time ``t`` (s): each variable at its own phase, 0.5 Hz."""
        values = [
            centre + amplitude * math.sin(math.pi * t + 0.37 * index)
            for index, (centre, amplitude) in enumerate(
                zip(self._centre, self._amplitude, strict=True)
            )
        ]
        if self._quaternion:
            half = 0.25 * math.sin(math.pi * t)  # yaw of +-0.5 rad about z
            quaternion = (0.0, 0.0, math.sin(half), math.cos(half))
            for axis, component in zip("xyzw", quaternion, strict=True):
                if axis in self._quaternion:
                    values[self._quaternion[axis]] = component
        return values


class TfMonitor:
    """Counts serialized /tf messages of the soaked node, their latency, and checks a sample."""

    def __init__(self, check_every: int) -> None:
        from rclpy.serialization import deserialize_message
        from tf2_msgs.msg import TFMessage

        self._deserialize = deserialize_message
        self._message_type = TFMessage
        self.check_every = check_every
        self.messages = 0
        self.transforms = 0
        self.latencies_ns: list[int] = []
        self.checked = 0
        self.non_finite = 0
        self.bad_quaternion = 0

    def __call__(self, data: bytes) -> None:
        received_ns = time.time_ns()
        if len(data) < dds.STAMP_OFFSET + dds.STAMP.size:
            return
        sec, nanosec = dds.STAMP.unpack_from(data, dds.STAMP_OFFSET)
        if PREFIX.encode() not in data[:256]:
            return  # another node's /tf
        self.messages += 1
        self.latencies_ns.append(received_ns - (sec * 1_000_000_000 + nanosec))
        if self.messages % self.check_every == 0:
            self._check(self._deserialize(data, self._message_type))

    def summary(self) -> dict[str, Any]:
        """Counts and latency statistics (ms) for the report."""
        latencies = sorted(self.latencies_ns)
        return {
            "messages": self.messages,
            "transforms": self.transforms,
            "checked": self.checked,
            "non_finite": self.non_finite,
            "bad_quaternion": self.bad_quaternion,
            "latency_median_ms": statistics.median(latencies) / 1e6 if latencies else math.nan,
            "latency_p99_ms": percentile(latencies, 0.99) / 1e6 if latencies else math.nan,
            "latency_max_ms": latencies[-1] / 1e6 if latencies else math.nan,
        }

    def _check(self, msg: Any) -> None:
        self.checked += 1
        self.transforms += len(msg.transforms)
        finite = True
        unit = True
        for item in msg.transforms:
            t, r = item.transform.translation, item.transform.rotation
            numbers = (t.x, t.y, t.z, r.x, r.y, r.z, r.w)
            if not all(math.isfinite(value) for value in numbers):
                finite = False
            elif abs(math.sqrt(r.x**2 + r.y**2 + r.z**2 + r.w**2) - 1.0) > 1e-6:
                unit = False
        self.non_finite += not finite
        self.bad_quaternion += not unit


def write_params(directory: Path, description: str, reliable: bool = False) -> Path:
    """The node's parameters file: the description, a prefix, every message published;
    ``reliable``: its joint_states subscription reliable with depth 1000 (QoS overrides)."""
    path = dds.write_params(
        directory / "soak_params.yaml", description, frame_prefix=PREFIX, ignore_timestamp=True
    )
    if reliable:
        overrides = [f"      {NAMESPACE}/joint_states:", "        subscription:"]
        overrides += ["          reliability: reliable", "          depth: 1000"]
        path.write_text(path.read_text() + "\n".join(["    qos_overrides:", *overrides]) + "\n")
    return path


def percentile(sorted_values: list[int], fraction: float) -> float:
    """The ``fraction`` quantile of ascending ``sorted_values`` (nearest rank)."""
    index = min(len(sorted_values) - 1, max(0, math.ceil(fraction * len(sorted_values)) - 1))
    return float(sorted_values[index])


def stop_requested() -> bool:
    """True once the main process wrote a line to (or closed) the monitor's stdin."""
    return bool(select.select([sys.stdin], [], [], 0.0)[0])


def run_monitor(args: argparse.Namespace) -> int:
    """The monitor process: count /tf until a line (or EOF) on stdin, then print its summary.

    /tf is read with one reused wait set, taking every queued message per wake-up: through an
    executor (about a wait-set rebuild per message) the monitor could become the slow reliable
    reader whose full history stalls the node's /tf writer, and the soak would measure itself.
    """
    import rclpy
    from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy
    from tf2_msgs.msg import TFMessage

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("soak_monitor", context=context)
    monitor = TfMonitor(args.check_every)
    tf_qos = QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
    )
    subscription = node.create_subscription(TFMessage, "/tf", monitor, tf_qos, raw=True)
    print("READY", flush=True)
    dds.read_raw(subscription, context, TFMessage, monitor, stop_requested)
    print("MONITOR " + json.dumps(monitor.summary()), flush=True)
    node.destroy_node()
    rclpy.try_shutdown(context=context)
    return 0


def _read_line(stream: Any, prefix: str, timeout_s: float) -> str:
    """The first line of ``stream`` starting with ``prefix`` (RuntimeError after the timeout)."""
    deadline = time.monotonic() + timeout_s
    while (remaining := deadline - time.monotonic()) > 0:
        if select.select([stream], [], [], remaining)[0]:
            line = stream.readline()
            if not line:
                break
            if line.startswith(prefix):
                return str(line[len(prefix) :].strip())
    raise RuntimeError(f"the monitor process sent no {prefix.strip()!r} line")


def run_soak(args: argparse.Namespace) -> SoakReport:
    """Start the monitor and the node, feed the node, measure; both are stopped at the end."""
    os.environ.setdefault("ROS_DOMAIN_ID", str(1 + os.getpid() % 100))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from sensor_msgs.msg import JointState

    from joint_tf_publisher import Robot

    robot = Robot.load(args.model)
    feeder = Feeder(robot)
    report = SoakReport(
        model=str(args.model),
        moving_joints=len(robot.kinematics.moving_joints),
        seconds=args.seconds,
        rate_hz=args.rate,
        reliable=args.reliable,
        unknown_names=args.unknown_names,
        messages_target=args.messages,
    )
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("soak_feeder", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    publisher = node.create_publisher(JointState, f"{NAMESPACE}/joint_states", 100)
    monitor_command = [sys.executable, str(Path(__file__).resolve()), "--monitor"]
    monitor_command += ["--check-every", str(args.check_every)]
    monitor = subprocess.Popen(
        monitor_command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True
    )
    node_log = ""
    summary: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="soak-") as scratch:
        params = write_params(Path(scratch), args.model.read_text(), args.reliable)
        log_path = Path(scratch) / "node.log"
        try:
            _read_line(monitor.stdout, "READY", CONNECT_TIMEOUT_S)
            command = [*dds.node_command(params), "-r", f"__ns:={NAMESPACE}"]
            with log_path.open("w") as log:
                process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)
            try:
                _wait_connected(executor, publisher, node, process, log_path)
                report.rss_start_mib = dds.memory_mb(process.pid)[0]
                cpu_start = [dds.cpu_seconds(p.pid) for p in (process, monitor)]
                feeder_start = time.process_time()
                feed_start = time.monotonic()
                _feed(args, report, feeder, publisher, process, JointState)
                report.feed_seconds = time.monotonic() - feed_start
                cpu_end = [dds.cpu_seconds(p.pid) for p in (process, monitor)]
                report.feeder_cpu_percent = 100.0 * (time.process_time() - feeder_start)
                report.node_cpu_percent = 100.0 * (cpu_end[0] - cpu_start[0])
                report.monitor_cpu_percent = 100.0 * (cpu_end[1] - cpu_start[1])
                for name in ("feeder_cpu_percent", "node_cpu_percent", "monitor_cpu_percent"):
                    setattr(report, name, getattr(report, name) / report.feed_seconds)
                report.load_average = os.getloadavg()[0]
                report.rss_end_mib = dds.memory_mb(process.pid)[0]
                time.sleep(DRAIN_S)  # let the last transforms reach the monitor
                report.node_alive = process.poll() is None
            finally:
                report.node_exit_status = dds.stop_process(process)
                node_log = log_path.read_text() if log_path.exists() else ""
            assert monitor.stdin is not None
            monitor.stdin.write("stop\n")
            monitor.stdin.flush()
            summary = json.loads(_read_line(monitor.stdout, "MONITOR ", CONNECT_TIMEOUT_S))
        finally:
            _stop_monitor(monitor)
            executor.shutdown()
            node.destroy_node()
            rclpy.try_shutdown(context=context)
    _summarise(report, summary, args, node_log)
    return report


def _stop_monitor(monitor: subprocess.Popen[str]) -> None:
    try:
        monitor.wait(timeout=20.0)
    except subprocess.TimeoutExpired:
        monitor.kill()
        monitor.wait()


def _wait_connected(
    executor: Any, publisher: Any, node: Any, process: subprocess.Popen[bytes], log_path: Path
) -> None:
    """Until the node subscribes to our joint states and its /tf meets the monitor."""
    start = time.monotonic()
    while not (publisher.get_subscription_count() > 0 and node.count_publishers("/tf") > 0):
        status = process.poll()
        if status is not None or time.monotonic() > start + CONNECT_TIMEOUT_S:
            state = "running" if status is None else f"exited with status {status}"
            raise RuntimeError(
                f"the node did not come up in {time.monotonic() - start:.0f} s (process "
                f"{state}; joint_states subscribers {publisher.get_subscription_count()}, /tf "
                f"publishers {node.count_publishers('/tf')}; load average "
                f"{os.getloadavg()[0]:.1f} on {os.cpu_count()} cores); its log:\n"
                f"{log_path.read_text()}"
            )
        executor.spin_once(timeout_sec=0.05)
    # Matching of the node's /tf writer with the monitor's reader may lag a little.
    end = time.monotonic() + 1.0
    while time.monotonic() < end:
        executor.spin_once(timeout_sec=0.05)


def _feed(
    args: argparse.Namespace,
    report: SoakReport,
    feeder: Feeder,
    publisher: Any,
    process: subprocess.Popen[bytes],
    joint_state_type: Any,
) -> None:
    """Publish at most ``args.rate`` messages a second, for ``args.seconds`` or (with
    ``args.messages``) until that many are sent; sample the node's memory on the way.

    The feed's progress is its time in the first case and, by count, the nominal time of the
    messages sent (their number over the rate): the warm-up, the memory samples and the
    values sent then depend on the count only, not on how fast this machine sends them.
    """
    period = 1.0 / args.rate
    by_count = args.messages is not None
    give_up_s = max(MIN_GIVE_UP_S, MAX_SLOWDOWN * args.seconds)
    message = joint_state_type()
    message.name = feeder.names
    start = time.monotonic()
    next_send = start
    next_sample = args.warmup
    sample_every = max(1.0, args.seconds / 20.0)
    while True:
        now = time.monotonic()
        progress = report.messages_in * period if by_count else now - start
        if by_count:
            if report.messages_in >= args.messages or now - start > give_up_s:
                break
        elif progress >= args.seconds:
            break
        if progress >= next_sample:
            rss = dds.memory_mb(process.pid)[0]
            report.memory_samples.append(MemorySample(round(now - start, 2), round(rss, 2)))
            if math.isnan(report.rss_warm_mib):
                report.rss_warm_mib = rss
            next_sample += sample_every
            if process.poll() is not None:
                break
        if now < next_send:
            time.sleep(next_send - now)
            continue
        stamp_ns = time.time_ns()
        message.header.stamp.sec = stamp_ns // 1_000_000_000
        message.header.stamp.nanosec = stamp_ns % 1_000_000_000
        positions = feeder.values(progress)
        if args.unknown_names:
            sent = report.messages_in
            noise = [f"noise_{sent}_{k}" for k in range(args.unknown_names)]
            message.name = feeder.names + noise
            positions = positions + [0.0] * args.unknown_names
        message.position = positions
        publisher.publish(message)
        report.messages_in += 1
        next_send += period
        if next_send < now - 0.1:  # fell far behind: do not burst to catch up
            next_send = now + period


def _summarise(
    report: SoakReport, summary: dict[str, Any], args: argparse.Namespace, node_log: str
) -> None:
    report.messages_out = int(summary.get("messages", 0))
    report.dropped = max(0, report.messages_in - report.messages_out)
    report.checked_messages = int(summary.get("checked", 0))
    if report.checked_messages:
        report.transforms_per_message = int(summary["transforms"]) / report.checked_messages
    report.non_finite_messages = int(summary.get("non_finite", 0))
    report.bad_quaternion_messages = int(summary.get("bad_quaternion", 0))
    report.latency_median_ms = float(summary.get("latency_median_ms", math.nan))
    report.latency_p99_ms = float(summary.get("latency_p99_ms", math.nan))
    report.latency_max_ms = float(summary.get("latency_max_ms", math.nan))
    report.rss_growth_mib = report.rss_end_mib - report.rss_warm_mib
    target = report.messages_target
    if target is not None and report.messages_in < target and report.node_alive:
        report.failures.append(
            f"the feeder sent {report.messages_in} of its {target} messages in "
            f"{report.feed_seconds:.1f} s and gave up (load average {report.load_average:.1f}): "
            "this machine is too slow to feed the node (no verdict on the node)"
        )
    if not report.node_alive:
        report.failures.append(f"the node died (exit {report.node_exit_status}):\n{node_log}")
    if report.messages_out == 0:
        report.failures.append("the node published nothing on /tf")
    if report.non_finite_messages or report.bad_quaternion_messages:
        report.failures.append("the node published non-finite values or non-unit quaternions")
    if not report.rss_growth_mib <= args.max_rss_growth_mb:
        report.failures.append(
            f"the node's memory grew by {report.rss_growth_mib:.1f} MiB after the warm-up "
            f"(allowed {args.max_rss_growth_mb:g})"
        )
    if "Traceback" in node_log:
        report.failures.append(f"a traceback in the node's log:\n{node_log}")


def print_report(report: SoakReport) -> None:
    """The human-readable report, then the machine-readable line."""
    lines = [
        f"soak: {report.model} ({report.moving_joints} moving joints), "
        + (
            f"{report.messages_target} messages at up to {report.rate_hz:g} Hz"
            if report.messages_target is not None
            else f"{report.seconds:g} s at {report.rate_hz:g} Hz"
        )
        + (", reliable joint_states" if report.reliable else "")
        + (f", {report.unknown_names} fresh unknown names" if report.unknown_names else ""),
        f"  messages in      {report.messages_in} in {report.feed_seconds:.1f} s "
        f"({report.messages_in / report.feed_seconds:.0f} Hz)",
        f"  messages out     {report.messages_out} (/tf of this node)",
        f"  dropped          {report.dropped} "
        f"({100.0 * report.dropped / max(1, report.messages_in):.2f} %)",
        f"  checked in full  {report.checked_messages} messages "
        f"({report.transforms_per_message:.1f} transforms each), "
        f"{report.non_finite_messages} with non-finite values, "
        f"{report.bad_quaternion_messages} with non-unit quaternions",
        f"  latency          median {report.latency_median_ms:.2f} ms, "
        f"p99 {report.latency_p99_ms:.2f} ms, max {report.latency_max_ms:.2f} ms",
        f"  node memory      start {report.rss_start_mib:.1f} MiB, after warm-up "
        f"{report.rss_warm_mib:.1f} MiB, end {report.rss_end_mib:.1f} MiB "
        f"(growth {report.rss_growth_mib:+.2f} MiB)",
        f"  CPU              node {report.node_cpu_percent:.0f} %, feeder "
        f"{report.feeder_cpu_percent:.0f} %, monitor {report.monitor_cpu_percent:.0f} % of a "
        f"core; load average {report.load_average:.1f} on {os.cpu_count()} cores",
        f"  node             {'alive' if report.node_alive else 'DEAD'} at the end, "
        f"exit status {report.node_exit_status} after SIGINT",
        "  result           " + ("PASS" if not report.failures else "FAIL"),
    ]
    lines += [f"  failure: {failure}" for failure in report.failures]
    print("\n".join(lines))
    print("SOAK_REPORT " + json.dumps(asdict(report)), flush=True)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    if args.monitor:
        return run_monitor(args)
    try:
        report = run_soak(args)
    except RuntimeError as err:
        print(f"soak.py: {err}", file=sys.stderr)
        return 1
    print_report(report)
    return 0 if not report.failures else 1


if __name__ == "__main__":
    sys.exit(main())
