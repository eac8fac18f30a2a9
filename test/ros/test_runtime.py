"""The spin loop (``runtime.spin``) under each executor, over real rclpy and DDS.

The node runs in this process, in an rclpy context of its own, spun by ``runtime.spin`` on a
thread; the test talks to it from conftest's ``ros`` harness (another context, so over DDS).
Every spin test runs once per executor this rclpy offers (``runtime.available_executors()``):
rclpy's events executor, its SingleThreadedExecutor and the opt-in wait-set loop in the kit.
The choice of executor from ``JOINT_TF_PUBLISHER_EXECUTOR`` is tested as a function and
through the console script.
"""

from __future__ import annotations

import gc
import importlib.util
import os
import signal
import subprocess
import threading
import time
import tracemalloc
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

import rclpy  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402
from rclpy.parameter_client import AsyncParameterClient  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from test_user_errors import NODE, params_file  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.node_core.stop_signals import StopSignals  # noqa: E402
from joint_tf_publisher.ros import runtime  # noqa: E402
from joint_tf_publisher.ros.node import JointTfPublisher  # noqa: E402

pytestmark = pytest.mark.ros

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
EXECUTORS = runtime.available_executors()
#: How soon spin returns after a stop signal or a ROS shutdown, executor shut down: seconds.
STOP_WITHIN_S = 1.0
WAIT_S = 15.0


class SpunNode:
    """The node in a context of its own, spun by ``runtime.spin`` with ``executor`` on a
    thread (from ``start()``, called here unless ``start`` is False); ``parameters`` override
    the arm's defaults."""

    def __init__(
        self, stop: StopSignals, executor: str, start: bool = True, **parameters: Any
    ) -> None:
        self.context = rclpy.Context()
        rclpy.init(context=self.context)
        values = {"robot_description": ARM_URDF.read_text(), "ignore_timestamp": True}
        values.update(parameters)
        self.node = JointTfPublisher(
            context=self.context,
            parameter_overrides=[Parameter(name, value=value) for name, value in values.items()],
        )
        self.raised: list[BaseException] = []
        self.thread = threading.Thread(target=self._spin, args=(stop, executor), daemon=True)
        if start:
            self.start()

    def start(self) -> None:
        """Spin the node on its thread."""
        self.thread.start()

    def _spin(self, stop: StopSignals, executor: str) -> None:
        try:
            runtime.spin(self.node, stop, executor)
        except BaseException as error:  # recorded: the tests say whether spin may raise
            self.raised.append(error)

    def ended_within(self, seconds: float) -> bool:
        """Wait up to ``seconds`` for spin to return; True if it did."""
        self.thread.join(timeout=seconds)
        return not self.thread.is_alive()

    def close(self) -> None:
        self.context.try_shutdown()
        self.thread.join(timeout=10.0)
        self.node.destroy_node()


@pytest.fixture
def stop() -> Iterator[StopSignals]:
    signals = StopSignals()
    yield signals
    signals.restore()


@pytest.fixture(params=EXECUTORS)
def executor(request: pytest.FixtureRequest) -> str:
    """Each executor this rclpy offers, in turn."""
    name: str = request.param
    return name


class Streamer:
    """The test's side: publishes joint_1 on joint_states, records /tf, changes parameters."""

    def __init__(self, ros: Any) -> None:
        self.ros = ros
        self.received: list[TFMessage] = []
        ros.node.create_subscription(TFMessage, "/tf", self.received.append, 1000)
        self.publisher = ros.node.create_publisher(JointState, "joint_states", 10)
        self.parameters = AsyncParameterClient(ros.node, "joint_tf_publisher")
        self.sent = 0

    def send(self) -> None:
        state = JointState()
        state.name = ["joint_1"]
        state.position = [0.001 * (self.sent % 100)]
        self.publisher.publish(state)
        self.sent += 1

    def carrying(self, child: str, start: int = 0) -> int:
        """How many /tf messages since index ``start`` carry ``child``."""
        return sum(
            any(t.child_frame_id == child for t in msg.transforms) for msg in self.received[start:]
        )

    def served(self, child: str = "link_1") -> bool:
        """Send until the node publishes joint_1 (``child``); True if it did within WAIT_S."""
        start = len(self.received)

        def published() -> bool:
            self.send()
            return self.carrying(child, start) > 0

        return bool(self.ros.spin_until(published, timeout_s=WAIT_S))

    def stream_for(self, seconds: float) -> None:
        """Send a joint state about every 5 ms for ``seconds``, handling what arrives."""
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            self.send()
            self.ros.spin_for(0.005)

    def set(self, **values: Any) -> None:
        """Set parameters of the node through its service (while streaming); all must pass."""
        assert self.parameters.wait_for_services(timeout_sec=WAIT_S)
        future = self.parameters.set_parameters(
            [Parameter(name, value=value) for name, value in values.items()]
        )

        def answered() -> bool:
            self.send()
            return bool(future.done())

        assert self.ros.spin_until(answered, timeout_s=WAIT_S), "no set_parameters answer"
        assert all(result.successful for result in future.result().results), values


# -- serving, stopping ----------------------------------------------------------------------


def test_spin_serves_the_node_and_returns_at_a_ros_shutdown(
    ros: Any, stop: StopSignals, executor: str
) -> None:
    spun = SpunNode(stop, executor)
    try:
        streamer = Streamer(ros)
        assert streamer.served(), "no /tf"
        streamer.set(frame_prefix="spun/")
        assert spun.node.settings.frame_prefix == "spun/"
        assert streamer.served("spun/link_1"), "no /tf with the new prefix"
        spun.context.try_shutdown()
        assert spun.ended_within(STOP_WITHIN_S), "spin did not return at a ROS shutdown"
    finally:
        spun.close()
    assert spun.raised == [], "spin raised at shutdown instead of returning"


def test_a_ros_shutdown_under_callbacks_ends_spin_quietly(
    ros: Any, stop: StopSignals, executor: str
) -> None:
    """ROS shut down from another thread while joint states stream and the default-positions
    timer runs at 1 kHz: a callback or a wait then meets a destroyed entity (InvalidHandle) or
    context (RCLError). Spin returns as at any other shutdown (five times each)."""
    streamer = Streamer(ros)
    for _ in range(5):
        spun = SpunNode(stop, executor, publish_default_positions=True, publish_frequency=1000.0)
        try:
            assert streamer.served(), "no /tf"
            streamer.stream_for(0.1)
            spun.context.try_shutdown()  # with joint states in flight
            assert spun.ended_within(STOP_WITHIN_S), "spin did not return at a ROS shutdown"
        finally:
            spun.close()
        assert spun.raised == []


def test_a_stop_signal_ends_spin_within_a_second(stop: StopSignals, executor: str) -> None:
    spun = SpunNode(stop, executor)
    try:
        time.sleep(0.5)  # idle: nothing arrives
        assert spun.thread.is_alive()
        os.kill(os.getpid(), signal.SIGINT)
        assert spun.ended_within(STOP_WITHIN_S), "a stop signal did not end spin in time"
        assert spun.raised == []
        assert spun.context.ok()  # stopped by the flag, not by a shutdown
        owner = spun.node.executor  # spin shut its executor down: the node is in none
        assert owner is None or spun.node not in owner.get_nodes()
    finally:
        spun.close()


def test_other_signals_wake_spin_which_keeps_serving_and_idles(
    ros: Any, stop: StopSignals, executor: str
) -> None:
    """A signal with a Python handler (a profiler's SIGUSR1) wakes the loop so that the main
    thread can run the handler; the loop goes on serving, and waits without using the CPU."""
    handled: list[int] = []
    previous = signal.signal(signal.SIGUSR1, lambda number, frame: handled.append(number))
    spun = SpunNode(stop, executor)
    try:
        streamer = Streamer(ros)
        assert streamer.served(), "no /tf"
        for _ in range(3):
            os.kill(os.getpid(), signal.SIGUSR1)
            time.sleep(0.05)
        assert handled == [signal.SIGUSR1] * 3
        assert spun.thread.is_alive() and not stop.requested.is_set()
        cpu_before = time.process_time()
        time.sleep(1.0)
        idle_cpu_s = time.process_time() - cpu_before
        assert idle_cpu_s < 0.1, f"{idle_cpu_s:.2f} s of CPU in 1 s while idle"  # here: < 0.01
        assert streamer.served(), "no /tf after the signals"
    finally:
        signal.signal(signal.SIGUSR1, previous)
        spun.close()
    assert spun.raised == []


def spin_memory_bytes() -> int:
    """Bytes still allocated (tracemalloc) under ``runtime``'s frames, by the spin thread,
    outside a publish (rclpy frees some of a message's objects later: up to about 100 kB)."""
    gc.collect()
    under_spin = tracemalloc.Filter(True, runtime.__file__, all_frames=True)
    publishing = tracemalloc.Filter(False, f"*{os.sep}rclpy{os.sep}publisher.py", all_frames=True)
    snapshot = tracemalloc.take_snapshot().filter_traces([under_spin, publishing])
    return sum(trace.size for trace in snapshot.traces)


def test_spin_on_rclpy_s_executor_keeps_no_memory_per_callback(stop: StopSignals) -> None:
    """Callbacks run one after another leave the spin thread holding no more memory. rclpy up
    to 7.1 (Humble, Jazzy) adds a done callback to a Future it spins until for every callback
    it runs: a loop on one long-lived Future kept about 250 bytes per callback, so per
    JointState (measured under Jazzy's rclpy 7.1.6). The callbacks are a guard condition's,
    triggered one at a time, so that no message in flight is counted."""
    spun = SpunNode(stop, runtime.RCLPY, start=False)
    ran = threading.Event()
    guard = spun.node.create_guard_condition(ran.set)
    spun.start()

    def run_callbacks(count: int) -> None:
        for _ in range(count):
            ran.clear()
            guard.trigger()
            assert ran.wait(WAIT_S), "the guard condition's callback did not run"

    tracemalloc.start(32)  # frames: enough to reach runtime's from the callback
    try:
        run_callbacks(200)  # whatever a first callback sets up, first
        held = spin_memory_bytes()
        run_callbacks(2000)
        grown = spin_memory_bytes() - held
        assert grown < 20 * 2000, f"spin holds {grown} bytes more after 2000 callbacks"
    finally:
        tracemalloc.stop()
        spun.close()
    assert spun.raised == []


def test_a_callback_exception_is_counted_and_the_node_serves_on(
    ros: Any, stop: StopSignals, executor: str
) -> None:
    """Caught at the adapter's edge (``ros/edges.py``): counted in the health report under
    its cause, and the spin goes on; once the pipeline works again, /tf comes again (until
    issue #36 it propagated out of spin and ended the node)."""
    spun = SpunNode(stop, executor)
    try:
        streamer = Streamer(ros)
        assert streamer.served(), "no /tf"
        working = spun.node.pipeline.joint_state

        def broken(*args: Any) -> None:
            raise RuntimeError("a broken pipeline")

        spun.node.pipeline.joint_state = broken  # type: ignore[method-assign]
        failures = spun.node.pipeline.health.callback_failures
        assert ros.spin_until(lambda: (streamer.send(), bool(failures))[1], WAIT_S)
        assert spun.thread.is_alive()
        spun.node.pipeline.joint_state = working  # type: ignore[method-assign]
        assert streamer.served(), "no /tf after the failures"
    finally:
        spun.close()
    assert spun.raised == []
    assert list(failures) == ["joint_states: RuntimeError"]


# -- the default-positions timer, replaced on parameter changes while streaming ---------------


def default_rate_hz(streamer: Streamer, seconds: float = 1.0) -> float:
    """Default-position publications per second (link_3: its joint is never sent), measured
    while joint states stream."""
    start = len(streamer.received)
    streamer.stream_for(seconds)
    streamer.ros.spin_for(0.1)  # the last ones in flight
    return streamer.carrying("link_3", start) / seconds


def test_the_default_positions_timer_follows_parameter_changes_while_streaming(
    ros: Any, stop: StopSignals, executor: str
) -> None:
    """Each change of publish_frequency or publish_default_positions destroys the timer and
    makes a new one from inside a service callback, while the executor spins."""
    spun = SpunNode(stop, executor, publish_default_positions=True, publish_frequency=20.0)
    try:
        streamer = Streamer(ros)
        assert streamer.served(), "no /tf"
        for frequency in (20.0, 100.0, 5.0):
            streamer.set(publish_frequency=frequency)
            streamer.stream_for(0.2)  # the new timer's first period
            rate = default_rate_hz(streamer)
            assert 0.4 * frequency <= rate <= 1.6 * frequency + 2, (frequency, rate)
        streamer.set(publish_default_positions=False)
        streamer.stream_for(0.2)
        assert default_rate_hz(streamer, 0.5) == 0.0
        for k in range(20):  # quick changes, each a destroyed and a new timer
            streamer.set(publish_default_positions=True, publish_frequency=50.0 + k)
        assert default_rate_hz(streamer) >= 20.0
        assert spun.thread.is_alive()
    finally:
        spun.close()
    assert spun.raised == []


# -- which executor -----------------------------------------------------------------------------


def has_events_executor() -> bool:
    """True where rclpy has ``rclpy.experimental.EventsExecutor`` (Jazzy and later)."""
    if importlib.util.find_spec("rclpy.experimental") is None:
        return False
    return hasattr(importlib.import_module("rclpy.experimental"), "EventsExecutor")


def test_the_default_is_the_events_executor_where_rclpy_has_it() -> None:
    if os.environ.get("ROS_DISTRO") not in (None, "humble", "iron"):
        assert has_events_executor(), f"ROS {os.environ['ROS_DISTRO']}: no events executor"
    best = runtime.EVENTS if has_events_executor() else runtime.RCLPY
    assert runtime.available_executors()[0] == best
    assert runtime.choose_executor(None) == (best, None)
    assert runtime.choose_executor("  ") == (best, None)


def test_a_named_executor_is_used_whatever_its_case() -> None:
    for name in runtime.available_executors():
        assert runtime.choose_executor(name.upper()) == (name, None)


def test_an_unknown_value_warns_in_one_line_and_uses_the_default() -> None:
    chosen, warning = runtime.choose_executor("fast")
    assert chosen == runtime.available_executors()[0]
    assert warning == (
        "JOINT_TF_PUBLISHER_EXECUTOR='fast' is not one of events, rclpy, waitset: "
        f"spinning with the default, {chosen}"
    )


def test_an_executor_this_rclpy_lacks_warns_and_uses_the_best_it_has(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """As on Humble: no events executor."""
    monkeypatch.setattr(runtime, "_events_executor_type", lambda: None)
    assert runtime.available_executors() == (runtime.RCLPY, runtime.WAITSET)
    chosen, warning = runtime.choose_executor("events")
    assert chosen == runtime.RCLPY
    assert warning == (
        "JOINT_TF_PUBLISHER_EXECUTOR=events: this rclpy has no rclpy's events executor "
        "(rclpy.experimental.EventsExecutor): spinning with rclpy"
    )


def run_console_script(params: Path, environ: dict[str, str]) -> str:
    """Start the node, wait for its executor line, SIGINT it; its stderr (exit code 0)."""
    log = params.parent / "stderr.txt"
    with log.open("w") as err:
        process = subprocess.Popen(
            [*NODE, "--ros-args", "--params-file", str(params)],
            stdout=subprocess.DEVNULL,
            stderr=err,
            env=environ,
        )
    try:
        deadline = time.monotonic() + WAIT_S
        while "spinning with" not in log.read_text() and time.monotonic() < deadline:
            assert process.poll() is None, log.read_text()
            time.sleep(0.05)
    finally:
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=WAIT_S)
    assert code == 0, log.read_text()
    return log.read_text()


@pytest.mark.parametrize("value", [None, "bogus"])
def test_the_console_script_says_which_executor_spins(tmp_path: Path, value: str | None) -> None:
    environ = {k: v for k, v in os.environ.items() if k != runtime.EXECUTOR_VARIABLE}
    if value is not None:
        environ[runtime.EXECUTOR_VARIABLE] = value
    params = params_file(tmp_path / "params.yaml", robot_description=ARM_URDF.read_text())
    stderr = run_console_script(params, environ)
    best = runtime.available_executors()[0]
    assert f"spinning with {runtime.SPINNING_WITH[best]}" in stderr
    warned = [line for line in stderr.splitlines() if "[WARN]" in line]
    if value is None:
        assert warned == []
    else:
        (line,) = warned
        assert f"JOINT_TF_PUBLISHER_EXECUTOR='{value}' is not one of" in line
