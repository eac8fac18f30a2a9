"""ROS side of ``demo`` and ``run``: a joint-state source, and the node with a live status.

The only module of the command line that imports rclpy (``cli`` imports it when ``demo`` or
``run`` is used). ``demo`` publishes ``sensor_msgs/JointState`` on ``joint_states`` from a
``sweep.JointSweep`` at the ROS parameter ``rate`` (Hz). ``run`` starts the node
``joint_tf_publisher`` as a subprocess with the description as ``robot_description``, runs the
demo source in this process, and listens to /tf and /tf_static for the status line. SIGINT
or SIGTERM stops both cleanly (exit 0).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import time
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from types import FrameType
from typing import Any

import numpy as np

from ..robot import Robot
from ..transforms import quaternion_to_matrix
from .status import (
    RateMeter,
    StatusPrinter,
    clamped_joints,
    compose_to_root,
    default_end_effector,
    format_status,
)
from .sweep import JointSweep

#: Sent positions remembered for matching /tf stamps back to what was sent.
SENT_HISTORY = 512


class StopFlag:
    """Set by SIGINT or SIGTERM; the loops poll it (no KeyboardInterrupt, no traceback)."""

    def __init__(self) -> None:
        self.stopped = False
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True


class JointStateSource:
    """Publishes the sweep on ``joint_states`` at ``rate`` Hz from an rclpy timer."""

    def __init__(
        self, node: Any, robot: Robot, rate_hz: float, period_s: float, overshoot: float
    ) -> None:
        from sensor_msgs.msg import JointState

        self._message_type = JointState
        self.node = node
        self.sweep = JointSweep(robot, period_s=period_s, overshoot=overshoot)
        from rcl_interfaces.msg import ParameterDescriptor

        # Dynamic typing: `-p rate:=20` (an integer) is as good as 20.0.
        descriptor = ParameterDescriptor(description="joint_states rate, Hz", dynamic_typing=True)
        rate = float(node.declare_parameter("rate", rate_hz, descriptor).value)
        if rate <= 0.0:
            raise ValueError(f"rate must be positive, got {rate} Hz")
        self.publisher = node.create_publisher(JointState, "joint_states", 10)
        self.meter = RateMeter()
        self.sent: OrderedDict[int, dict[str, float]] = OrderedDict()
        self._start_s = time.monotonic()
        self.timer = node.create_timer(1.0 / rate, self.publish)

    def publish(self) -> None:
        """Send the sweep's positions for now, stamped with the ROS clock."""
        names, positions = self.sweep.joint_state_at(time.monotonic() - self._start_s)
        message = self._message_type()
        stamp = self.node.get_clock().now()
        message.header.stamp = stamp.to_msg()
        message.name = names
        message.position = positions
        self.publisher.publish(message)
        self.meter.tick()
        self.sent[stamp.nanoseconds] = dict(zip(names, positions, strict=True))
        while len(self.sent) > SENT_HISTORY:
            self.sent.popitem(last=False)


class TfMonitor:
    """Listens to /tf and /tf_static; keeps the latest transform per child frame."""

    def __init__(self, node: Any) -> None:
        from tf2_msgs.msg import TFMessage

        from ..ros.tf_publishers import TF_STATIC_TOPIC, TF_TOPIC, tf_qos, tf_static_qos

        self.meter = RateMeter()
        self.transforms: dict[str, tuple[str, np.ndarray]] = {}
        self.static_frames: set[str] = set()
        self.last_stamp_ns: int | None = None
        self.last_dynamic: dict[str, np.ndarray] = {}
        node.create_subscription(TFMessage, TF_TOPIC, self._on_tf, tf_qos())
        node.create_subscription(TFMessage, TF_STATIC_TOPIC, self._on_static, tf_static_qos())

    def _store(self, message: Any) -> dict[str, np.ndarray]:
        received = {}
        for stamped in message.transforms:
            t, q = stamped.transform.translation, stamped.transform.rotation
            pose = np.eye(4)
            pose[:3, :3] = quaternion_to_matrix((q.x, q.y, q.z, q.w))
            pose[:3, 3] = (t.x, t.y, t.z)
            self.transforms[stamped.child_frame_id] = (stamped.header.frame_id, pose)
            received[stamped.child_frame_id] = pose
            stamp = stamped.header.stamp
            self.last_stamp_ns = stamp.sec * 1_000_000_000 + stamp.nanosec
        return received

    def _on_tf(self, message: Any) -> None:
        self.last_dynamic = self._store(message)
        self.meter.tick()

    def _on_static(self, message: Any) -> None:
        self.static_frames.update(self._store(message))


def _spin_until_stopped(
    executor: Any, stop: StopFlag, duration_s: float, on_tick: Callable[[], None] | None = None
) -> None:
    end_s = time.monotonic() + duration_s if duration_s > 0.0 else float("inf")
    while not stop.stopped and time.monotonic() < end_s:
        executor.spin_once(timeout_sec=0.02)
        if on_tick is not None:
            on_tick()


def _init_ros(ros_args: Sequence[str]) -> Any:
    import rclpy
    from rclpy.signals import SignalHandlerOptions

    context = rclpy.Context()
    rclpy.init(
        args=["joint-tf-publisher", *ros_args],
        context=context,
        signal_handler_options=SignalHandlerOptions.NO,
    )
    return context


def run_demo(
    robot: Robot,
    rate_hz: float,
    period_s: float,
    overshoot: float,
    duration_s: float = 0.0,
    ros_args: Sequence[str] = (),
) -> int:
    """Publish the sweep on ``joint_states`` until SIGINT/SIGTERM or ``duration_s``; exit 0."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    stop = StopFlag()
    context = _init_ros(ros_args)
    node = rclpy.create_node("joint_state_demo", context=context)
    executor = SingleThreadedExecutor(context=context)
    try:
        source = JointStateSource(node, robot, rate_hz, period_s, overshoot)
        executor.add_node(node)
        print(
            f"demo: sweeping {len(source.sweep.leaders)} joints of {robot.name!r} on "
            f"{node.resolve_topic_name('joint_states')} (Ctrl-C stops)",
            flush=True,
        )
        _spin_until_stopped(executor, stop, duration_s)
    finally:
        executor.shutdown()
        node.destroy_node()
        context.try_shutdown()
    return 0


def node_command(params_file: Path, node_params: Sequence[str]) -> list[str]:
    """The command starting the node: the installed ``joint_tf_publisher`` console script
    beside this interpreter if present, else ``node.main`` through this interpreter."""
    script = Path(sys.executable).parent / "joint_tf_publisher"
    if script.is_file():
        command = [str(script)]
    else:
        command = [
            sys.executable,
            "-c",
            "import sys; from joint_tf_publisher.ros.runtime import main; sys.exit(main())",
        ]
    extra = [arg for param in node_params for arg in ("-p", param)]
    return [*command, "--ros-args", "--params-file", str(params_file), *extra]


def write_params_file(description: str, directory: Path) -> Path:
    """A ROS parameters file setting ``robot_description`` (JSON strings are valid YAML)."""
    path = directory / "joint_tf_publisher_params.yaml"
    text = json.dumps({"/**": {"ros__parameters": {"robot_description": description}}})
    path.write_text(text, encoding="utf-8")
    return path


def _stop_process(process: subprocess.Popen[bytes]) -> int:
    for sig, wait_s in ((signal.SIGINT, 5.0), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0)):
        if process.poll() is not None:
            break
        process.send_signal(sig)
        try:
            process.wait(timeout=wait_s)
        except subprocess.TimeoutExpired:
            continue
    return process.wait()


def _log_tail(path: Path, lines: int = 15) -> str:
    try:
        return "\n".join(path.read_text(errors="replace").splitlines()[-lines:])
    except OSError:
        return ""


def run_with_node(
    robot: Robot,
    description: str,
    rate_hz: float,
    period_s: float,
    overshoot: float,
    duration_s: float = 0.0,
    end_effector: str | None = None,
    node_params: Sequence[str] = (),
) -> int:
    """Start the node on ``description``, feed it the demo and show a live status line.

    Returns 0 after SIGINT/SIGTERM or ``duration_s``; 1 if the node exits by itself (its log
    tail is printed).
    """
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    stop = StopFlag()
    ee = end_effector or default_end_effector(robot)
    with tempfile.TemporaryDirectory(prefix="jtp-run-") as scratch:
        params_file = write_params_file(description, Path(scratch))
        log_path = Path(scratch) / "node.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                node_command(params_file, node_params),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
                env=dict(os.environ, PYTHONUNBUFFERED="1"),
            )
        print(
            f"run: node pid {process.pid} on {robot.name!r}, demo at {rate_hz:g} Hz, "
            f"end effector {ee!r} (Ctrl-C stops)",
            flush=True,
        )
        context = _init_ros([])
        node = rclpy.create_node("joint_tf_publisher_run", context=context)
        executor = SingleThreadedExecutor(context=context)
        printer = StatusPrinter(sys.stdout)
        node_failed = False
        try:
            source = JointStateSource(node, robot, rate_hz, period_s, overshoot)
            monitor = TfMonitor(node)
            executor.add_node(node)

            def refresh() -> None:
                nonlocal node_failed
                if process.poll() is not None:
                    node_failed = stop.stopped = True
                    return
                if not printer.due():
                    return
                sent = source.sent.get(monitor.last_stamp_ns or -1, {})
                clamped = clamped_joints(robot, sent, monitor.last_dynamic)
                pose = compose_to_root(monitor.transforms, ee, robot.root)
                printer.show(
                    format_status(
                        source.meter.rate(),
                        monitor.meter.rate(),
                        len(monitor.static_frames),
                        clamped,
                        ee,
                        pose,
                    )
                )

            _spin_until_stopped(executor, stop, duration_s, refresh)
        finally:
            printer.finish()
            executor.shutdown()
            node.destroy_node()
            context.try_shutdown()
            code = _stop_process(process)
        if node_failed:
            print(
                f"run: the node exited with status {code}:\n{_log_tail(log_path)}", file=sys.stderr
            )
            return 1
    return 0
