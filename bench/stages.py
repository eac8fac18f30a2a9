"""``python -m bench.stages``: the node's main-thread CPU time per JointState, stage by stage.

The node runs as in the e2e section (a subprocess, ``ignore_timestamp: true``, the humanoid:
63 values in, 73 transforms out per message), but started through this module
(``--node``), which wraps the functions the node's spin loop and callback call with
thread-CPU-time accounting before building the unchanged node and running it as its console
script does (``STAGE_PATCHES``: the wait sets' wait and refill, ``take_message`` on the
joint-state subscriptions, the JointState CDR read, the pipeline and what it calls, the
TFMessage write and publish, the executor turn, the spin loop's own checks). Each wrapper adds
its time minus that of the wrapped calls inside it (exclusive time), so the stages add up; the
remainder of the main thread's CPU time is the spin loop's own Python. A function the node no
longer has is listed as not instrumented, so the tool follows the node's changes loudly.

CPU time, not wall time (``time.thread_time_ns``; only while the thread runs), so the split
holds on a loaded machine, where sampling profilers see preempted threads as busy. The bench
asks the node through a FIFO (a thread blocked on it: no polling, no signal, since every
signal stops the node) to write its counters to a JSON file at the start and the end of the
window; the table is the difference per JointState handled. Each wrapper costs two
thread-clock reads (system calls, about 1 us); their cost, measured in the node at start, is
reported and included in the stages' numbers.
"""

from __future__ import annotations

import argparse
import importlib
import json
import os
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import e2e
from .models import humanoid

#: The environment variable naming the node's counters file (a suffix .N per dump, .fifo for
#: the requests).
OUT_VARIABLE = "JTP_STAGES_OUT"
WAIT = "wait set: wait"
REFILL = "wait set: clear + add entities, readiness queries"
TAKE = "take_message -> a JointState (raw bytes)"
EMPTY_TAKE = "take_message -> None: nothing waiting"
CALLBACK = "callback: own code (JointTfPublisher._on_joint_state, _publish)"
CDR_READ = "JointState CDR read (stamp, name block check, positions)"
PIPELINE = "pipeline.joint_state own code (checks, limiter)"
PLAN = "MessagePlan.resolve own code (one kinematics call per message)"
APPLY = "StateResolver.apply_general (names, clamp, mimic: the general path)"
HOT_APPLY = "hot path: fast apply (values, bounds check, mimic levels)"
HOT_POSES = "hot path: poses of the published joints"
PUBLISHED = "pipeline._published own code (limiter record, finiteness, Publication)"
TRANSFORMS = "JointTransforms.poses (the general path)"
TF_PUBLISH = "TfPublisher.publish own code"
CDR_WRITE = "TFMessage CDR write (TFMessageLayout.write)"
PUBLISH = "Publisher.publish (rclpy -> Fast DDS)"
CLOCK = "rclpy Clock.now"
EXECUTOR = "executor turn (spin_once)"
FULL_TURN = "full wait set turn own code (WaitLoop._wait_all)"
READY = "others-ready check (WaitLoop._others_ready)"
COLLECT = "entity collection (WaitLoop._collect)"
TIMERS = "timer check (_next_timer_s)"
LOOP = "spin loop's own Python (remainder)"
STAGES = (WAIT, REFILL, TAKE, EMPTY_TAKE, CALLBACK, CDR_READ, PIPELINE, PLAN, HOT_APPLY)
STAGES = (*STAGES, HOT_POSES, APPLY, PUBLISHED)
STAGES = (*STAGES, TRANSFORMS, TF_PUBLISH, CDR_WRITE, PUBLISH, CLOCK, EXECUTOR, FULL_TURN)
STAGES = (*STAGES, READY, COLLECT, TIMERS, LOOP)

#: (module, class.function or function, stage) wrapped before the node is built.
STAGE_PATCHES = (
    ("joint_tf_publisher.ros.node", "JointTfPublisher._on_joint_state", CALLBACK),
    ("joint_tf_publisher.ros.cdr", "JointStateReader.read", CDR_READ),
    ("joint_tf_publisher.ros.pipeline", "JointStatePipeline.joint_state", PIPELINE),
    ("joint_tf_publisher.kinematics.message_plan", "MessagePlan.resolve", PLAN),
    ("joint_tf_publisher.kinematics.message_plan", "apply_fast", HOT_APPLY),
    ("joint_tf_publisher.kinematics.message_plan", "poses_of", HOT_POSES),
    ("joint_tf_publisher.kinematics.state", "StateResolver.apply_general", APPLY),
    ("joint_tf_publisher.ros.pipeline", "JointStatePipeline._published", PUBLISHED),
    ("joint_tf_publisher.kinematics.joint_transforms", "JointTransforms.poses", TRANSFORMS),
    ("joint_tf_publisher.ros.tf_publishers", "TfPublisher.publish", TF_PUBLISH),
    ("joint_tf_publisher.ros.cdr", "TFMessageLayout.write", CDR_WRITE),
    ("rclpy.publisher", "Publisher.publish", PUBLISH),
    ("rclpy.clock", "Clock.now", CLOCK),
    ("rclpy.executors", "SingleThreadedExecutor.spin_once", EXECUTOR),
    ("joint_tf_publisher.ros.waitset_loop", "WaitLoop._wait_all", FULL_TURN),
    ("joint_tf_publisher.ros.waitset_loop", "WaitLoop._others_ready", READY),
    ("joint_tf_publisher.ros.waitset_loop", "WaitLoop._collect", COLLECT),
    ("joint_tf_publisher.ros.waitset_loop", "WaitLoop._next_timer_s", TIMERS),
)
#: Where the spin loop's wait sets come from (its ``_rclpy`` is replaced by a timed one) and
#: whose ``WaitLoop`` gets its hot subscriptions with timed handles.
RUNTIME_MODULE = "joint_tf_publisher.ros.waitset_loop"
NODE_CLASS = ("joint_tf_publisher.ros.node", "JointTfPublisher")
#: Wait-set methods that are the wait itself; every other method is refill or readiness.
WAIT_METHODS = frozenset({"wait"})


class Accounts:
    """Calls and exclusive thread CPU time (ns) per stage, for one thread."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = dict.fromkeys(STAGES, 0)
        self.exclusive_ns: dict[str, int] = dict.fromkeys(STAGES, 0)
        self.missing: list[str] = []
        self._children_ns: list[int] = []

    def timed(
        self, stage: str, function: Callable[..., Any], stage_if_none: str | None = None
    ) -> Callable[..., Any]:
        """``function`` with its exclusive CPU time and calls added to ``stage`` (to
        ``stage_if_none`` instead, when given, for calls that return None)."""
        clock = time.thread_time_ns
        children = self._children_ns

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            start = clock()
            children.append(0)
            result = None
            try:
                result = function(*args, **kwargs)
                return result
            finally:
                elapsed = clock() - start
                inner = children.pop()
                charged = stage_if_none if stage_if_none and result is None else stage
                self.exclusive_ns[charged] += elapsed - inner
                self.calls[charged] += 1
                if children:
                    children[-1] += elapsed

        return wrapper

    def snapshot(self, thread_ns: int) -> dict[str, Any]:
        """Counters so far, with the measured thread's total CPU time ``thread_ns``."""
        return {
            "thread_ns": thread_ns,
            "calls": dict(self.calls),
            "exclusive_ns": dict(self.exclusive_ns),
            "missing": list(self.missing),
        }


def context_switches(pid: int) -> int:
    """Voluntary context switches of a process's main thread so far (/proc/<pid>/status)."""
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("voluntary_ctxt_switches:"):
            return int(line.split()[1])
    return 0


def clock_read_ns(samples: int = 20000) -> float:
    """CPU time (ns) of one ``time.thread_time_ns`` call, the wrappers' unit of overhead."""
    start = time.thread_time_ns()
    for _ in range(samples):
        time.thread_time_ns()
    return (time.thread_time_ns() - start) / (samples + 1)


class _Handle:
    """A subscription handle whose ``take_message`` is timed (entered like the real one)."""

    def __init__(self, handle: Any, take: Callable[..., Any]) -> None:
        self.real = handle
        self.take_message = take

    def __enter__(self) -> Any:
        return self.real.__enter__()

    def __exit__(self, *exc: Any) -> Any:
        return self.real.__exit__(*exc)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)


class _Subscription:
    """An rclpy Subscription seen through a timed handle (other attributes forwarded). It is
    equal to the subscription it wraps: the spin loop tells its hot subscriptions from the
    node's others by comparing them."""

    def __init__(self, subscription: Any, accounts: Accounts) -> None:
        self.real = subscription
        handle = subscription.handle
        self.handle = _Handle(handle, accounts.timed(TAKE, handle.take_message, EMPTY_TAKE))

    def __getattr__(self, name: str) -> Any:
        return getattr(self.real, name)

    def __eq__(self, other: object) -> bool:
        return self.real is (other.real if isinstance(other, _Subscription) else other)

    def __hash__(self) -> int:
        return id(self.real)


def _unwrapped(value: Any) -> Any:
    return value.real if isinstance(value, _Handle) else value


class _WaitSet:
    """An rclpy WaitSet whose methods are timed: ``wait`` as WAIT, the rest as REFILL."""

    def __init__(self, real: Any, accounts: Accounts) -> None:
        self._real = real
        self._accounts = accounts
        self._methods: dict[str, Callable[..., Any]] = {}

    def __getattr__(self, name: str) -> Any:
        if name not in self._methods:
            method = getattr(self._real, name)
            if not callable(method):
                return method

            def call(*args: Any, method: Callable[..., Any] = method) -> Any:
                return method(*map(_unwrapped, args))

            stage = WAIT if name in WAIT_METHODS else REFILL
            self._methods[name] = self._accounts.timed(stage, call)
        return self._methods[name]


class _Implementation:
    """rclpy's C implementation module, with a WaitSet that makes timed wait sets."""

    def __init__(self, real: Any, accounts: Accounts) -> None:
        self._real = real
        self._accounts = accounts

    def WaitSet(self, *args: Any) -> _WaitSet:  # noqa: N802 (the name rclpy's module uses)
        return _WaitSet(self._real.WaitSet(*args), self._accounts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def _resolve(module_name: str, path: str) -> tuple[Any, str] | None:
    """(owner, attribute) of ``module:path`` (``Class.function`` or ``function``), or None."""
    try:
        owner: Any = importlib.import_module(module_name)
    except ImportError:
        return None
    *parents, name = path.split(".")
    for parent in parents:
        owner = getattr(owner, parent, None)
        if owner is None:
            return None
    return (owner, name) if hasattr(owner, name) else None


def instrument(accounts: Accounts) -> None:
    """Wrap what the node's spin loop and callback call (before the node is built); the
    patches that find nothing are listed in ``accounts.missing``."""
    for module_name, path, stage in STAGE_PATCHES:
        found = _resolve(module_name, path)
        if found is None:
            accounts.missing.append(f"{module_name}.{path}")
            continue
        owner, name = found
        setattr(owner, name, accounts.timed(stage, getattr(owner, name)))
    loop_class = _resolve(RUNTIME_MODULE, "WaitLoop")
    runtime = _resolve(RUNTIME_MODULE, "_rclpy")
    if loop_class is None or runtime is None:
        accounts.missing.append("the spin loop's wait sets and hot subscriptions")
        return
    loop_cls = getattr(*loop_class)
    real_init = loop_cls.__init__

    def init(self: Any, node: Any, executor: Any, hot: Any, wake: Any) -> None:
        real_init(self, node, executor, [_Subscription(s, accounts) for s in hot], wake)

    loop_cls.__init__ = init
    module, name = runtime
    setattr(module, name, _Implementation(getattr(module, name), accounts))


def _serve_dumps(accounts: Accounts, out: str, clock_ns: float) -> None:
    """Write the counters to ``<out>.<n>`` for each line ``n`` read from ``<out>.fifo``; the
    main thread's CPU time through its thread clock."""
    main_clock = time.pthread_getcpuclockid(threading.main_thread().ident or 0)
    while True:
        with open(f"{out}.fifo") as requests:
            for line in requests:
                snapshot = accounts.snapshot(time.clock_gettime_ns(main_clock))
                path = Path(f"{out}.{line.strip()}")
                path.with_suffix(".tmp").write_text(
                    json.dumps({**snapshot, "clock_read_ns": clock_ns})
                )
                path.with_suffix(".tmp").rename(path)


def node_main(ros_args: list[str]) -> int:
    """The node with timed stages, run as its console script runs it."""
    accounts = Accounts()
    out = os.environ[OUT_VARIABLE]
    clock_ns = clock_read_ns()
    instrument(accounts)
    threading.Thread(
        target=_serve_dumps, args=(accounts, out, clock_ns), name="jtp-stages", daemon=True
    ).start()
    from joint_tf_publisher.entry import node_main as console_node_main

    sys.argv = ros_args
    return console_node_main()


def _dump(out: Path, index: int) -> dict[str, Any]:
    """Ask the node for its counters (through the FIFO) and read them; RuntimeError after 5 s."""
    path = Path(f"{out}.{index}")
    with open(f"{out}.fifo", "w") as requests:
        requests.write(f"{index}\n")
    deadline = time.monotonic() + 5.0
    while not path.exists():
        if time.monotonic() > deadline:
            raise RuntimeError(f"the node wrote no counters to {path}")
        time.sleep(0.01)
    data: dict[str, Any] = json.loads(path.read_text())
    return data


def stage_table(
    before: dict[str, Any], after: dict[str, Any], messages: int
) -> list[tuple[str, float, float]]:
    """(stage, calls per message, exclusive CPU us per message), the remainder as LOOP."""
    rows = []
    accounted = 0
    for stage in STAGES[:-1]:
        spent = after["exclusive_ns"][stage] - before["exclusive_ns"][stage]
        calls = after["calls"][stage] - before["calls"][stage]
        accounted += spent
        rows.append((stage, calls / messages, spent / 1e3 / messages))
    remainder = after["thread_ns"] - before["thread_ns"] - accounted
    rows.append((LOOP, float("nan"), remainder / 1e3 / messages))
    return rows


def run(rate_hz: float, seconds: float) -> int:
    """Start the timed node, publish, print the stage table for one window."""
    os.environ["ROS_DOMAIN_ID"] = str(e2e.domain_id())
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    sys.setswitchinterval(1e-4)
    import rclpy

    spec = humanoid()
    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-stages-"))
    params = e2e.write_params(workdir, spec.to_urdf())
    out = workdir / "counters"
    os.mkfifo(f"{out}.fifo")
    from joint_tf_publisher.ros.runtime import EXECUTOR_VARIABLE

    # The stages are those of the wait-set loop, whose wait and take are Python calls (the
    # events executor's are C++, out of this tool's reach).
    environ = {**os.environ, OUT_VARIABLE: str(out), EXECUTOR_VARIABLE: "waitset"}
    command = [sys.executable, "-m", "bench.stages", "--node", "--ros-args"]
    command += ["--params-file", str(params), "--log-level", "warn"]
    rows = e2e.sample_rows(spec, 997)
    rclpy.init()
    probe = e2e.Probe([joint.name for joint in spec.independent_joints])
    log = workdir / "node.log"
    process = e2e.start_node(command, log, None, environ)
    try:
        e2e.wait_ready(probe, process, log)
        publisher = threading.Thread(
            target=e2e.publish_window, args=(probe, rate_hz, seconds + 3.0, rows), daemon=True
        )
        publisher.start()
        time.sleep(1.5)  # warm-up
        threads_before = e2e.thread_cpu_seconds(process.pid)
        switches_before, sent_before = context_switches(process.pid), probe.sent_count
        probe.received.clear()
        before = _dump(out, 0)
        time.sleep(seconds)
        after = _dump(out, 1)
        sent = probe.sent_count - sent_before
        switches = context_switches(process.pid) - switches_before
        threads = {
            name: spent - threads_before.get(name, 0.0)
            for name, spent in e2e.thread_cpu_seconds(process.pid).items()
        }
        publisher.join()
        received = len({stamp for stamp, _ in probe.received})
    finally:
        e2e.stop_process(process)
        probe.close()
        rclpy.try_shutdown()
    # Per JointState handled (callbacks run): the same on a starved machine that drops some.
    messages = after["calls"][CALLBACK] - before["calls"][CALLBACK]
    table = stage_table(before, after, messages)
    wrapped_calls = sum(calls for _, calls, _ in table if calls == calls)
    print(
        f"# Main-thread CPU per JointState by stage: humanoid at {rate_hz:g} Hz, "
        f"ignore_timestamp true, {seconds:g} s window, load 1m {os.getloadavg()[0]:.1f}\n"
    )
    print("| stage | calls per message | CPU us per message | share |\n| --- | --- | --- | --- |")
    main_us = (after["thread_ns"] - before["thread_ns"]) / 1e3 / messages
    for stage, calls, micros in table:
        shown_calls = "-" if calls != calls else f"{calls:.2f}"
        print(f"| {stage} | {shown_calls} | {micros:.1f} | {100 * micros / main_us:.0f} % |")
    print(f"| **main thread** | | **{main_us:.1f}** | 100 % |")
    for name, spent in sorted(threads.items(), key=lambda kv: -kv[1]):
        if name != "main" and spent * 1e6 / messages >= 0.5:
            print(f"| thread {name} (/proc) | | {spent * 1e6 / messages:.1f} | |")
    print(f"| **process (/proc)** | | **{sum(threads.values()) * 1e6 / messages:.1f}** | |\n")
    print(
        f"JointStates sent {sent}, handled {messages} (every number above is per JointState "
        f"handled), /tf messages received {received}; main-thread sleeps "
        f"(voluntary context switches) per message {switches / messages:.2f}; wrapped calls per "
        f"message {wrapped_calls:.1f}, each adding about {2 * after['clock_read_ns'] / 1e3:.2f} "
        "us of clock reads (included above)"
    )
    if after["missing"]:
        print(f"not instrumented (not in this version of the node): {', '.join(after['missing'])}")
    return 0


def main(argv: list[str] | None = None) -> int:
    """``python -m bench.stages [--rate HZ] [--seconds S]``; ``--node`` runs the timed node."""
    argv = sys.argv[1:] if argv is None else argv
    if argv[:1] == ["--node"]:
        return node_main([sys.argv[0], *argv[1:]])
    parser = argparse.ArgumentParser(prog="python -m bench.stages", description=__doc__)
    parser.add_argument("--rate", type=float, default=1000.0, help="JointStates per second")
    parser.add_argument("--seconds", type=float, default=10.0, help="measured window, s")
    args = parser.parse_args(argv)
    return run(args.rate, args.seconds)


if __name__ == "__main__":
    sys.exit(main())
