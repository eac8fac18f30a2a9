"""``demo`` and ``run``: the sweep as joint states, and the node with a live status.

``demo`` publishes ``sensor_msgs/JointState`` on ``joint_states`` from a ``sweep.JointSweep``
at the ROS parameter ``rate`` (Hz). ``run`` starts the node ``joint_tf_publisher`` as a
subprocess with the description as ``robot_description``, runs the demo source in this
process, and listens to /tf and /tf_static for the status line. SIGINT or SIGTERM stops both
cleanly (exit 0). The ROS parts live in ``ros.demo_source`` (imported when a command runs, so
the rest of the command line needs no ROS).
"""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from pathlib import Path
from types import FrameType

from ..child_process import python_command
from ..node_core.stop_signals import END_DEADLINE
from ..robot import Robot
from .status import (
    RateMeter,
    StatusPrinter,
    clamped_joints,
    compose_to_root,
    default_end_effector,
    format_status,
)
from .sweep import JointSweep

#: The module that runs the node as its console script does.
NODE_MODULE = "joint_tf_publisher.entry"


class StopFlag:
    """Set by SIGINT or SIGTERM; the loops poll it (no KeyboardInterrupt, no traceback)."""

    def __init__(self) -> None:
        self.stopped = False
        signal.signal(signal.SIGINT, self._stop)
        signal.signal(signal.SIGTERM, self._stop)

    def _stop(self, signum: int, frame: FrameType | None) -> None:
        self.stopped = True


def run_demo(
    robot: Robot,
    rate_hz: float,
    period_s: float,
    overshoot: float,
    duration_s: float = 0.0,
    ros_args: Sequence[str] = (),
) -> int:
    """Publish the sweep on ``joint_states`` until SIGINT/SIGTERM or ``duration_s``; exit 0."""
    from ..ros.demo_source import DemoSession, JointStateSource

    stop = StopFlag()
    sweep = JointSweep(robot, period_s=period_s, overshoot=overshoot)
    with DemoSession("joint_state_demo", ros_args) as session:
        source = JointStateSource(session.node, rate_hz, sweep.joint_state_at)
        print(
            f"demo: sweeping {len(sweep.leaders)} joints of {robot.name!r} on "
            f"{source.topic} (Ctrl-C stops)",
            flush=True,
        )
        try:
            session.spin(lambda: stop.stopped, duration_s)
        finally:  # the command ends, also by an error: its session's teardown is bounded too
            END_DEADLINE.start()
    return 0


def node_command(params_file: Path, node_params: Sequence[str]) -> list[str]:
    """The command starting the node: its console script's entry (``entry``, as ``python -m
    joint_tf_publisher.entry``) in this interpreter, isolated from the caller's folder and
    ``PYTHONPATH`` (``child_process``), its output unbuffered."""
    extra = [arg for param in node_params for arg in ("-p", param)]
    ros_args = ["--ros-args", "--params-file", str(params_file), *extra]
    return python_command(NODE_MODULE, *ros_args, unbuffered=True)


def write_params_file(description: str, directory: Path) -> Path:
    """A ROS parameters file setting ``robot_description`` (JSON strings are valid YAML)."""
    path = directory / "joint_tf_publisher_params.yaml"
    text = json.dumps({"/**": {"ros__parameters": {"robot_description": description}}})
    path.write_text(text, encoding="utf-8")
    return path


def stop_process(process: subprocess.Popen[bytes], interrupt_wait_s: float = 5.0) -> int:
    """SIGINT (then ``interrupt_wait_s`` seconds to end), then SIGTERM, then SIGKILL to this
    one process, each only while it still runs; its exit status."""
    signals = ((signal.SIGINT, interrupt_wait_s), (signal.SIGTERM, 3.0), (signal.SIGKILL, 3.0))
    for sig, wait_s in signals:
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
    from ..ros.demo_source import DemoSession, JointStateSource, TfMonitor

    stop = StopFlag()
    ee = end_effector or default_end_effector(robot)
    sweep = JointSweep(robot, period_s=period_s, overshoot=overshoot)
    with tempfile.TemporaryDirectory(prefix="jtp-run-") as scratch:
        params_file = write_params_file(description, Path(scratch))
        log_path = Path(scratch) / "node.log"
        with log_path.open("wb") as log:
            process = subprocess.Popen(
                node_command(params_file, node_params),
                stdout=log,
                stderr=subprocess.STDOUT,
                start_new_session=True,
            )
        print(
            f"run: node pid {process.pid} on {robot.name!r}, demo at {rate_hz:g} Hz, "
            f"end effector {ee!r} (Ctrl-C stops)",
            flush=True,
        )
        printer = StatusPrinter(sys.stdout)
        node_failed = False
        sent_meter, tf_meter = RateMeter(), RateMeter()
        try:
            with DemoSession("joint_tf_publisher_run") as session:
                source = JointStateSource(
                    session.node, rate_hz, sweep.joint_state_at, on_publish=sent_meter.tick
                )
                monitor = TfMonitor(session.node, on_tf=tf_meter.tick)

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
                            sent_meter.rate(),
                            tf_meter.rate(),
                            len(monitor.static_frames),
                            clamped,
                            ee,
                            pose,
                        )
                    )

                try:
                    session.spin(lambda: stop.stopped, duration_s, refresh)
                finally:  # the command ends, also by an error
                    # The node first: a session teardown that hangs until the deadline ends
                    # this process must not leave the node (in a session of its own) running.
                    # Its stop is bounded by itself (SIGKILL 8 s after SIGINT, before launch's
                    # 10 s) and may take longer than the deadline: the deadline starts after.
                    stop_process(process)
                    END_DEADLINE.start()  # its session's teardown is bounded too
        finally:
            printer.finish()
            code = stop_process(process)
        if node_failed:
            print(
                f"run: the node exited with status {code}:\n{_log_tail(log_path)}", file=sys.stderr
            )
            return 1
    return 0
