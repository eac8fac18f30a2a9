"""The fleet's spin loop (``fleet.serve``) in this process, under each executor it spins with.

The fleet runs in an rclpy context of its own, served on a thread; the test talks to it from
conftest's ``ros`` harness over DDS. A robot whose callback raises (its pipeline broken, as
test_runtime.py breaks the node's) does not take the fleet down: the exception is logged, the
other robot serves on, and a stop signal still ends the loop. The console script over DDS is
test_fleet_e2e.py.
"""

from __future__ import annotations

import os
import signal
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

import rclpy  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.errors import LOGGER  # noqa: E402
from joint_tf_publisher.node_core.log_routing import package_logs_to  # noqa: E402
from joint_tf_publisher.node_core.stop_signals import StopSignals  # noqa: E402
from joint_tf_publisher.ros import fleet, runtime  # noqa: E402

pytestmark = pytest.mark.ros

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
WAIT_S = 15.0


@pytest.fixture
def stop() -> Iterator[StopSignals]:
    signals = StopSignals()
    yield signals
    signals.restore()


@pytest.mark.parametrize("executor", [*runtime.container_executors(), runtime.WAITSET])
def test_a_robot_whose_callback_raises_does_not_take_the_fleet_down(
    ros: Any, stop: StopSignals, executor: str, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """``waitset`` serves one node only: asked for it, the fleet spins with the default and
    says so (fleet.md)."""
    params = tmp_path / "fleet.yaml"
    lines = ["/joint_tf_fleet:", "  ros__parameters:", "    robots: [good, bad]"]
    for name in ("good", "bad"):
        lines += [
            f"/{name}/joint_tf_publisher:",
            "  ros__parameters:",
            f"    description_file: {ARM_URDF}",
            f"    frame_prefix: {name}/",
            "    ignore_timestamp: true",
        ]
    params.write_text("\n".join(lines) + "\n")
    argv = ["joint_tf_fleet", "--ros-args", "--params-file", str(params)]
    context = rclpy.Context()
    rclpy.init(args=argv, context=context)
    the_fleet = fleet.Fleet(argv, context=context)
    raised: list[BaseException] = []

    def serve() -> None:
        try:
            fleet.serve(the_fleet, stop, executor)
        except BaseException as error:  # recorded: the test says the loop may not raise
            raised.append(error)

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    received: list[TFMessage] = []
    ros.node.create_subscription(TFMessage, "/tf", received.append, 1000)
    publishers = {
        name: ros.node.create_publisher(JointState, f"/{name}/joint_states", 10)
        for name in ("good", "bad")
    }

    def send_and_count(child: str) -> int:
        for publisher in publishers.values():
            publisher.publish(JointState(name=["joint_1"], position=[0.1]))
        return sum(any(t.child_frame_id == child for t in m.transforms) for m in received)

    try:
        assert ros.spin_until(lambda: len(the_fleet.robots) == 2, WAIT_S)
        assert ros.spin_until(lambda: send_and_count("bad/link_1") > 0, WAIT_S)

        def broken(*args: Any) -> None:
            raise RuntimeError("a broken pipeline")

        the_fleet.robots["/bad"].pipeline.joint_state = broken  # type: ignore[method-assign]
        the_fleet.robots["/bad"].pipeline.joint_state_bytes = broken  # type: ignore[method-assign]
        before = send_and_count("good/link_1")
        assert ros.spin_until(lambda: send_and_count("good/link_1") > before + 20, WAIT_S)
        assert thread.is_alive() and raised == []
        os.kill(os.getpid(), signal.SIGINT)
        thread.join(timeout=WAIT_S)
        assert not thread.is_alive(), "a stop signal did not end the fleet's loop"
        assert raised == []
        said = capfd.readouterr().err
        default = runtime.container_executors()[0]
        if executor == runtime.WAITSET:
            warning = f"the wait-set loop serves one node only: the fleet spins with {default}"
            assert warning in said, said
            assert f"spinning with {runtime.SPINNING_WITH[default]}" in said, said
    finally:
        context.try_shutdown()
        thread.join(timeout=WAIT_S)
        the_fleet.destroy_contained()
        the_fleet.destroy_node()


class Said:
    """A ROS logger's calls, recorded (``health.reporting.Logger``)."""

    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        self.lines.append(message)

    def warning(self, message: str) -> None:
        self.lines.append(message)

    def error(self, message: str) -> None:
        self.lines.append(message)


def test_description_warnings_go_to_the_robot_whose_thread_loads() -> None:
    """The fleet's start thread and the spin loop load descriptions at once (two robots):
    each robot's logger gets its own thread's warnings only, and the package logger's
    ``propagate`` comes back when both are done, whatever order they end in."""
    propagate = LOGGER.propagate
    said = {"start thread": Said(), "spin loop": Said()}
    inside = threading.Barrier(2, timeout=WAIT_S)
    logged = threading.Barrier(2, timeout=WAIT_S)

    first_ended = threading.Event()

    def load(name: str, first_out: bool) -> None:
        with package_logs_to(said[name]):
            inside.wait()
            LOGGER.warning(f"warning of the {name}")
            logged.wait()
            if not first_out:  # the other block ends first
                assert first_ended.wait(timeout=WAIT_S)
        if first_out:
            first_ended.set()

    threads = [
        threading.Thread(target=load, args=("start thread", False)),
        threading.Thread(target=load, args=("spin loop", True)),
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=WAIT_S)
    assert said["start thread"].lines == ["warning of the start thread"]
    assert said["spin loop"].lines == ["warning of the spin loop"]
    assert LOGGER.propagate is propagate
