"""``python -m bench.stages``: the node's main-thread CPU time per JointState, stage by stage.

The node runs as in the e2e section (a subprocess, ``ignore_timestamp: true``, the humanoid:
63 values in, 73 transforms out per message), but started through this module
(``--node``), which wraps the functions the node's spin loop and callback call with
thread-CPU-time accounting before building the unchanged node and running its ``spin``:
the wait set's ``wait`` and refill, ``take_message`` (rclpy's take and deserialization into
a Python JointState), the callback and what it calls (``Kinematics.apply``,
``Kinematics.joint_transforms``, ``Clock.now``, ``_report``, the TFMessage CDR write,
``Publisher.publish``), the executor turn and the timer check. Each wrapper adds its time
minus that of the wrapped calls inside it (exclusive time), so the stages add up; the
remainder of the main thread's CPU time is the spin loop's own Python.

CPU time, not wall time (``time.thread_time_ns``, only while the thread runs), so the split
holds on a loaded machine where sampling profilers see preempted threads as busy. The bench
signals the node (SIGUSR1) at the start and end of the window; the node writes its counters
to a JSON file each time and the table is the difference over the JointStates sent. Each
wrapper costs two thread-clock reads (system calls); their cost, measured in the node at
start, is reported and included in the stages' numbers.
"""

from __future__ import annotations

import argparse
import json
import os
import signal
import sys
import tempfile
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from . import e2e
from .models import humanoid

#: The environment variable naming the node's counters file (a suffix .N per dump).
OUT_VARIABLE = "JTP_STAGES_OUT"
WAIT = "wait set: wait"
REFILL = "wait set: clear + add subscriptions"
TAKE = "take_message -> a JointState: rclpy take + deserialize"
EMPTY_TAKE = "take_message -> None: nothing waiting"
CALLBACK = "callback: own code (_on_joint_state, rate limiter, masks, frame list)"
APPLY = "Kinematics.apply (names, clamp, mimic)"
TRANSFORMS = "Kinematics.joint_transforms"
CLOCK = "rclpy Clock.now"
REPORT = "_report"
CDR = "TFMessage CDR write (TFMessageLayout.write)"
SEND = "TfPublisher.publish own code"
PUBLISH = "Publisher.publish (rclpy -> Fast DDS)"
EXECUTOR = "executor turn (spin_once)"
TIMERS = "timer check (_next_timer_s)"
LOOP = "spin loop's own Python (remainder)"
STAGES = (
    WAIT,
    REFILL,
    TAKE,
    EMPTY_TAKE,
    CALLBACK,
    APPLY,
    TRANSFORMS,
    CLOCK,
    REPORT,
    CDR,
    SEND,
    PUBLISH,
)
STAGES = (*STAGES, EXECUTOR, TIMERS, LOOP)


class Accounts:
    """Calls and exclusive thread CPU time (ns) per stage, for one thread."""

    def __init__(self) -> None:
        self.calls: dict[str, int] = dict.fromkeys(STAGES, 0)
        self.exclusive_ns: dict[str, int] = dict.fromkeys(STAGES, 0)
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

    def snapshot(self) -> dict[str, Any]:
        """Counters so far, with the thread's total CPU time (ns)."""
        return {
            "thread_ns": time.thread_time_ns(),
            "calls": dict(self.calls),
            "exclusive_ns": dict(self.exclusive_ns),
        }


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


class _Subscription:
    """An rclpy Subscription seen through a timed handle; equal to the subscription it wraps
    (so the spin loop tells its hot subscriptions from the node's others)."""

    def __init__(self, subscription: Any, accounts: Accounts) -> None:
        self.subscription = subscription
        self.msg_type = subscription.msg_type
        self.raw = subscription.raw
        real = subscription.handle
        self.handle = _Handle(real, accounts.timed(TAKE, real.take_message, EMPTY_TAKE))

    def __eq__(self, other: object) -> bool:
        return other is self or other is self.subscription

    def __hash__(self) -> int:
        return hash(self.subscription)


class _WaitSet:
    """An rclpy WaitSet with timed wait and refill, given our handles or real ones."""

    def __init__(self, real: Any, accounts: Accounts) -> None:
        self.real = real
        self.wait = accounts.timed(WAIT, real.wait)
        self._clear = accounts.timed(REFILL, real.clear_entities)
        self._add = accounts.timed(REFILL, real.add_subscription)

    def clear_entities(self) -> None:
        self._clear()

    def add_subscription(self, handle: Any) -> None:
        self._add(handle.real if isinstance(handle, _Handle) else handle)

    def destroy_when_not_in_use(self) -> None:
        self.real.destroy_when_not_in_use()

    def __getattr__(self, name: str) -> Any:
        """Everything else (timers, services, guard conditions, readiness) as rclpy has it."""
        return getattr(self.real, name)


class _Implementation:
    """rclpy's C implementation module, with a WaitSet that makes timed wait sets."""

    def __init__(self, real: Any, accounts: Accounts) -> None:
        self._real = real
        self._accounts = accounts

    def WaitSet(self, *args: Any) -> _WaitSet:  # noqa: N802 (the name rclpy's module uses)
        return _WaitSet(self._real.WaitSet(*args), self._accounts)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._real, name)


def instrument(accounts: Accounts) -> None:
    """Wrap what the node's spin loop and callback call (before the node is built)."""
    from rclpy.clock import Clock
    from rclpy.executors import SingleThreadedExecutor
    from rclpy.publisher import Publisher

    from joint_tf_publisher import kinematics
    from joint_tf_publisher.ros import cdr, node, runtime, tf_publishers

    patches: list[tuple[Any, str, str]] = [
        (node.JointTfPublisher, "_on_joint_state", CALLBACK),
        (node.JointTfPublisher, "_report", REPORT),
        (kinematics.Kinematics, "apply", APPLY),
        (kinematics.Kinematics, "joint_transforms", TRANSFORMS),
        (Clock, "now", CLOCK),
        (cdr.TFMessageLayout, "write", CDR),
        (tf_publishers.TfPublisher, "publish", SEND),
        (Publisher, "publish", PUBLISH),
        (SingleThreadedExecutor, "spin_once", EXECUTOR),
        (runtime.WaitLoop, "_next_timer_s", TIMERS),
    ]
    for owner, name, stage in patches:
        if hasattr(owner, name):
            setattr(owner, name, accounts.timed(stage, getattr(owner, name)))
    real_inputs = node.JointTfPublisher.joint_state_inputs

    def inputs(self: Any) -> tuple[tuple[Any, Callable[[Any], None]], ...]:
        return tuple(
            (_Subscription(subscription, accounts), callback)
            for subscription, callback in real_inputs.__get__(self)
        )

    node.JointTfPublisher.joint_state_inputs = property(inputs)  # type: ignore[method-assign,assignment]
    runtime._rclpy = _Implementation(runtime._rclpy, accounts)  # type: ignore[assignment]


def node_main(ros_args: list[str]) -> int:
    """The node with timed stages; SIGUSR1 dumps the counters to ``$JTP_STAGES_OUT.<n>``."""
    accounts = Accounts()
    out = os.environ[OUT_VARIABLE]
    clock_ns = clock_read_ns()
    dumps = [0]

    def dump(_signum: int, _frame: Any) -> None:
        path = Path(f"{out}.{dumps[0]}")
        path.with_suffix(".tmp").write_text(
            json.dumps({**accounts.snapshot(), "clock_read_ns": clock_ns})
        )
        path.with_suffix(".tmp").rename(path)
        dumps[0] += 1

    signal.signal(signal.SIGUSR1, dump)
    instrument(accounts)
    from joint_tf_publisher.ros import runtime

    return runtime.main(ros_args)


def _dump(pid: int, out: Path, index: int) -> dict[str, Any]:
    """Signal the node and read its counters (RuntimeError after 5 s)."""
    path = Path(f"{out}.{index}")
    os.kill(pid, signal.SIGUSR1)
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

    from .spy import context_switches

    spec = humanoid()
    workdir = Path(tempfile.mkdtemp(prefix="jtp-bench-stages-"))
    params = e2e.write_params(workdir, spec.to_urdf())
    out = workdir / "counters"
    environ = {**os.environ, OUT_VARIABLE: str(out)}
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
        before = _dump(process.pid, out, 0)
        time.sleep(seconds)
        after = _dump(process.pid, out, 1)
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
