"""The demo joint-state source (sweep), the live status of ``run``, and both over DDS."""

from __future__ import annotations

import contextlib
import io
import math
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest
from repo_paths import REPO_ROOT
from scipy.spatial.transform import Rotation
from test_user_errors import HUNG_SESSION_END, hung_console_script

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.status import (
    RateMeter,
    StatusPrinter,
    clamped_joints,
    compose_to_root,
    default_end_effector,
    format_status,
)
from joint_tf_publisher.cli.sweep import JointSweep, sweep_frames, value_range

DEMO_ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
ALL_TYPES = REPO_ROOT / "test" / "urdf" / "all_joint_types.urdf"
MIMIC_ARM = REPO_ROOT / "test" / "urdf" / "arm_mimic_gripper.urdf"


# -- sweep ---------------------------------------------------------------------------------


@pytest.mark.parametrize("path", [DEMO_ARM, ALL_TYPES, MIMIC_ARM], ids=lambda p: p.name)
def test_joint_state_names_cover_every_moving_joint(path: Path) -> None:
    robot = Robot.load(path)
    names, positions = JointSweep(robot).joint_state_at(1.3)
    expected = [n for j in robot.joints.values() if j.mimic is None for n in j.variable_names]
    expected += [j.name for j in robot.joints.values() if j.mimic is not None]
    assert sorted(names) == sorted(expected)
    assert len(positions) == len(names) and all(map(math.isfinite, positions))


def test_mimic_chain_follows_leader() -> None:
    robot = Robot.load(MIMIC_ARM)
    names, positions = JointSweep(robot).joint_state_at(0.7)
    state = dict(zip(names, positions, strict=True))
    # right_inner_finger_joint mimics right_knuckle_joint, which mimics finger_joint (x -1).
    assert state["right_knuckle_joint"] == pytest.approx(-state["finger_joint"])
    assert state["right_inner_finger_joint"] == pytest.approx(-state["finger_joint"])
    assert state["left_inner_finger_joint"] == pytest.approx(-state["finger_joint"])


def test_followers_with_offset_in_the_joint_state() -> None:
    robot = Robot.load(ALL_TYPES)
    names, positions = JointSweep(robot).joint_state_at(1.3)
    state = dict(zip(names, positions, strict=True))
    # all_joint_types.urdf: follower_joint = 2 * hinge_joint + 0.5 (hand-read from the file).
    assert state["follower_joint"] == pytest.approx(2 * state["hinge_joint"] + 0.5)


def test_sweep_covers_the_limits_and_overshoots_some() -> None:
    robot = Robot.load(DEMO_ARM)
    sweep = JointSweep(robot, period_s=2.0, overshoot=0.1)
    times = np.linspace(0.0, 2.0, 401)
    values = {name: [] for name in ("shoulder_pan_joint", "shoulder_lift_joint")}
    for t in times:
        cfg = sweep.cfg_at(float(t))
        for name in values:
            values[name].append(cfg[name])
    # The first limited joint overshoots by 5 % of its range at each end, the second does not.
    pan_range = 2 * 3.1416
    assert min(values["shoulder_pan_joint"]) == pytest.approx(-3.1416 - 0.05 * pan_range, 1e-3)
    assert max(values["shoulder_pan_joint"]) == pytest.approx(3.1416 + 0.05 * pan_range, 1e-3)
    assert min(values["shoulder_lift_joint"]) == pytest.approx(-2.0, abs=1e-3)
    assert max(values["shoulder_lift_joint"]) == pytest.approx(2.0, abs=1e-3)
    assert sweep.overshooting and sweep.overshooting < {j.name for j in sweep.leaders}
    no_overshoot = JointSweep(robot, overshoot=0.0)
    for t in times:
        for name, value in no_overshoot.cfg_at(float(t)).items():
            low, high = robot.joints[name].hard_limits() or (-np.inf, np.inf)
            assert low - 1e-12 <= value <= high + 1e-12


def test_sweep_is_periodic_and_phase_shifted() -> None:
    robot = Robot.load(DEMO_ARM)
    sweep = JointSweep(robot, period_s=4.0)
    first, later = sweep.cfg_at(0.3), sweep.cfg_at(4.3)
    for name in first:
        assert first[name] == pytest.approx(later[name])
    assert len({round(v, 6) for v in sweep.fractions_at(0.0).values()}) > 1


def test_multi_dof_values() -> None:
    robot = Robot.load(ALL_TYPES)
    names, positions = JointSweep(robot).joint_state_at(1.0)
    state = dict(zip(names, positions, strict=True))
    quat = [state[f"float_joint/rot_{a}"] for a in "xyzw"]
    assert np.linalg.norm(quat) == pytest.approx(1.0)
    yaw = Rotation.from_quat(quat).as_euler("xyz")[2]
    assert abs(yaw) <= math.pi / 4 + 1e-9
    assert abs(state["plane_joint/x"]) <= 0.2 and abs(state["plane_joint/theta"]) <= math.pi / 2


def test_sweep_frames_run_lower_to_upper() -> None:
    robot = Robot.load(DEMO_ARM)
    frames = sweep_frames(robot, 3)
    assert frames[0]["elbow_joint"] == pytest.approx(-2.6)
    assert frames[1]["elbow_joint"] == pytest.approx(0.0)
    assert frames[2]["elbow_joint"] == pytest.approx(2.6)
    assert "right_finger_joint" not in frames[0]  # a mimic follows, it is not swept
    with pytest.raises(ValueError, match="at least one frame"):
        sweep_frames(robot, 0)
    with pytest.raises(ValueError, match="period must be positive"):
        JointSweep(robot, period_s=0.0)


def test_value_range_defaults() -> None:
    robot = Robot.load(ALL_TYPES)
    assert value_range(robot.joints["wheel_joint"]) == (-math.pi, math.pi)
    assert value_range(robot.joints["slide_joint"]) == (-0.2, 0.3)


# -- status --------------------------------------------------------------------------------


def test_rate_meter_window() -> None:
    meter = RateMeter(window_s=1.0)
    for k in range(30):
        meter.tick(10.0 + k * 0.05)  # 20 Hz for 1.5 s
    assert meter.rate(11.45) == pytest.approx(21.0)
    assert meter.rate(20.0) == 0.0
    assert meter.total == 30


def test_default_end_effector() -> None:
    assert default_end_effector(Robot.load(DEMO_ARM)) == "left_finger_link"
    assert default_end_effector(Robot.load(ALL_TYPES)) == "wheel"


def test_compose_to_root_and_clamped_joints() -> None:
    robot = Robot.load(DEMO_ARM)
    sent = {"shoulder_pan_joint": 0.5, "elbow_joint": 3.0, "shoulder_lift_joint": 0.2}
    # What the node would publish with hard clamping: elbow 3.0 -> 2.6.
    published = {"shoulder_pan_joint": 0.5, "elbow_joint": 2.6, "shoulder_lift_joint": 0.2}
    transforms = {
        j.child: (j.parent, j.child_pose(published.get(j.name, 0.0))) for j in robot.joints.values()
    }
    received = {child: pose for child, (_, pose) in transforms.items()}
    assert clamped_joints(robot, sent, received) == ["elbow_joint"]
    expected = robot.link_fk(
        {"shoulder_pan_joint": 0.5, "elbow_joint": 2.6, "shoulder_lift_joint": 0.2}
    )["tool_flange"]
    np.testing.assert_allclose(
        compose_to_root(transforms, "tool_flange", "base_link"), expected, atol=1e-12
    )
    del transforms["wrist_2_link"]
    assert compose_to_root(transforms, "tool_flange", "base_link") is None


def test_format_status() -> None:
    pose = np.eye(4)
    pose[:3, 3] = (0.1, -0.2, 0.3)
    line = format_status(50.0, 20.0, 2, ["a", "b", "c", "d"], "tool", pose)
    assert line == (
        "joint_states out  50.0/s | /tf in  20.0/s (+2 static) | clamped: a, b, c +1"
        " | tool: xyz 0.1 -0.2 0.3 m rpy 0 0 0 rad"
    )
    assert "waiting for /tf" in format_status(0.0, 0.0, 0, [], "tool", None)


class FakeTty(io.StringIO):
    def isatty(self) -> bool:
        return True


def test_status_printer_in_place_on_tty_plain_lines_otherwise() -> None:
    tty = FakeTty()
    printer = StatusPrinter(tty)
    printer.show("one", now_s=0.0)
    assert not printer.due(now_s=0.05) and printer.due(now_s=0.2)
    printer.show("two", now_s=0.2)
    printer.finish()
    assert tty.getvalue() == "\rone\x1b[K\rtwo\x1b[K\n"
    plain = io.StringIO()
    printer = StatusPrinter(plain)
    printer.show("one", now_s=0.0)
    assert not printer.due(now_s=0.5) and printer.due(now_s=1.0)
    printer.show("two", now_s=1.0)
    printer.finish()
    assert plain.getvalue() == "one\ntwo\n"


# -- over DDS ------------------------------------------------------------------------------


def _cli(*argv: str) -> list[str]:
    return [sys.executable, "-m", "joint_tf_publisher.cli.main", *argv]


@pytest.mark.ros
@pytest.mark.slow
def test_demo_publishes_joint_states(ros, ros_subprocess_env: dict[str, str]) -> None:  # type: ignore[no-untyped-def]
    pytest.importorskip("rclpy")
    from sensor_msgs.msg import JointState

    received: list[JointState] = []
    ros.node.create_subscription(JointState, "joint_states", received.append, 10)
    process = subprocess.Popen(
        _cli("demo", str(DEMO_ARM), "--rate", "10", "--ros-args", "-p", "rate:=40"),
        cwd=REPO_ROOT,
        env=ros_subprocess_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        assert ros.spin_until(lambda: len(received) >= 20, timeout_s=20.0)
        start = len(received)
        ros.spin_for(1.0)
        rate = len(received) - start
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=20)
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert "demo: sweeping 7 joints of 'demo_arm'" in out
    assert 25 <= rate <= 50  # the ROS parameter (an integer here) overrides --rate
    message = received[-1]
    state = dict(zip(message.name, message.position, strict=True))
    assert state["right_finger_joint"] == pytest.approx(state["left_finger_joint"])
    assert set(state) == {
        j.name for j in Robot.load(DEMO_ARM).joints.values() if j.joint_type != "fixed"
    }


@pytest.mark.ros
@pytest.mark.slow
def test_run_shows_status_and_stops_on_sigint(ros_subprocess_env: dict[str, str]) -> None:
    pytest.importorskip("rclpy")
    pytest.importorskip("tf2_msgs.msg")
    process = subprocess.Popen(
        _cli("run", str(DEMO_ARM), "--ee", "tool_flange", "--period", "2"),
        cwd=REPO_ROOT,
        env=ros_subprocess_env,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    lines: list[str] = []
    deadline = time.monotonic() + 40.0
    try:
        assert process.stdout is not None
        while time.monotonic() < deadline:
            line = process.stdout.readline()
            if not line:
                break
            lines.append(line)
            live_so_far = [x for x in lines if "xyz" in x]
            # Enough live lines, and the sweep has reached a limit (slower on a loaded machine).
            if len(live_so_far) >= 4 and any("clamped: none" not in x for x in live_so_far):
                break
    finally:
        process.send_signal(signal.SIGINT)
        out, err = process.communicate(timeout=30)
    lines += out.splitlines(keepends=True)
    status = [x for x in lines if x.startswith("joint_states out")]
    assert process.returncode == 0, err
    assert "Traceback" not in err
    assert lines[0].startswith("run: node pid ")
    live = [x for x in status if "xyz" in x]
    assert len(live) >= 3, lines
    match = re.search(
        r"joint_states out +([\d.]+)/s \| /tf in +([\d.]+)/s \(\+(\d+) static\)", live[-1]
    )
    assert match is not None
    assert float(match[1]) > 30.0 and float(match[2]) > 5.0 and int(match[3]) == 2
    assert "tool_flange: xyz" in live[-1]
    # The demo sweeps beyond some limits; the node's clamping shows in the received /tf.
    assert any("clamped: none" not in x for x in live), live
    # The node is gone with us.
    time.sleep(0.5)
    node_pid = int(re.match(r"run: node pid (\d+)", lines[0])[1])  # type: ignore[index]
    with pytest.raises(ProcessLookupError):
        os.kill(node_pid, 0)


@pytest.mark.ros
@pytest.mark.slow
def test_run_reports_a_failing_node(ros_subprocess_env: dict[str, str]) -> None:
    pytest.importorskip("rclpy")
    pytest.importorskip("tf2_msgs.msg")
    result = subprocess.run(
        _cli("run", str(DEMO_ARM), "--param", "clamp:=sideways", "--duration", "30"),
        cwd=REPO_ROOT,
        env=ros_subprocess_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert result.returncode == 1
    assert "run: the node exited with status 1:" in result.stderr
    assert "clamp must be one of" in result.stderr
    assert "Traceback" not in result.stderr


def fail_if_runs_node_is_left(stdout: str, stderr: str) -> None:
    """Fail (killing it, so it cannot outlive the test) if the node ``run`` named in its
    first line (``run: node pid N``) still runs."""
    node = re.search(r"run: node pid (\d+)", stdout)
    if node is not None:
        with contextlib.suppress(ProcessLookupError):
            os.kill(int(node[1]), signal.SIGKILL)
            pytest.fail(f"run left its node running: {stderr[-2000:]}")


#: The spin raises (a callback's error: a /tf transform ``run``'s monitor cannot read) and the
#: session's teardown that follows never returns.
HUNG_END_AFTER_AN_ERROR = f"""{HUNG_SESSION_END}
def raises(*args, **kwargs):
    raise ValueError("a callback's error")
rclpy.executors.SingleThreadedExecutor.spin_once = raises"""


@pytest.mark.ros
@pytest.mark.slow
@pytest.mark.parametrize("command", ["demo", "run"])
@pytest.mark.parametrize(
    ("hang", "duration"),
    [(HUNG_SESSION_END, "1"), (HUNG_END_AFTER_AN_ERROR, "30")],
    ids=["after-its-duration", "after-an-error"],
)
def test_a_session_teardown_that_hangs_ends_by_the_deadline(
    command: str, hang: str, duration: str, ros_subprocess_env: dict[str, str]
) -> None:
    """The command's ROS session ends (its duration over, or its spin raised) and its
    teardown (the middleware's part of it) never returns: the process ends by its deadline,
    the hung step's stack on stderr, exit 1; run's node, in a session of its own, is
    stopped first, not left behind. The deadline was started only after a spin that
    returned: after an error such a process hung with SIGINT and SIGTERM a flag, ``run``'s
    node left running, until SIGKILL (a zero quaternion on /tf ended ``run``'s spin so)."""
    pytest.importorskip("rclpy")
    command_line = hung_console_script(
        "cli_main", hang, command, str(DEMO_ARM), "--duration", duration
    )
    try:
        result = subprocess.run(
            command_line,
            cwd=REPO_ROOT,
            env=ros_subprocess_env,
            capture_output=True,
            text=True,
            timeout=30,
        )
        stdout, stderr, code = result.stdout, result.stderr, result.returncode
    except subprocess.TimeoutExpired as err:  # killed: its node must not outlive the test
        stdout, stderr, code = str(err.stdout or ""), str(err.stderr or ""), None
    fail_if_runs_node_is_left(stdout, stderr)
    assert code == 1, stderr[-2000:]
    assert "Timeout (0:00:01)!" in stderr and "never_returns" in stderr, stderr[-2000:]


#: run's node slow to end (2 s from run's first signal to it), as a node of a big robot is.
SLOW_NODE_STOP = """import joint_tf_publisher.cli.demo as demo
stop_process = demo.stop_process
def stop_slowly(process, *args):
    if process.poll() is None:
        time.sleep(2.0)
    return stop_process(process, *args)
demo.stop_process = stop_slowly"""


@pytest.mark.ros
@pytest.mark.slow
def test_run_stops_its_node_before_the_deadline_starts(ros_subprocess_env: dict[str, str]) -> None:
    """``run``'s stop of its node (SIGINT, SIGTERM 5 s later, SIGKILL 3 s after that) is a
    correct end the deadline must not cut short: with the deadline started before it, a node
    slower to end than the deadline ended ``run`` with exit 1 and left the node running."""
    pytest.importorskip("rclpy")
    argv = ("run", str(DEMO_ARM), "--duration", "1")
    result = subprocess.run(
        hung_console_script("cli_main", SLOW_NODE_STOP, *argv, deadline_s=1.0),
        cwd=REPO_ROOT,
        env=ros_subprocess_env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert "run: node pid " in result.stdout, result.stderr[-2000:]
    fail_if_runs_node_is_left(result.stdout, result.stderr)
    assert result.returncode == 0, result.stderr[-2000:]
    assert "Timeout" not in result.stderr, result.stderr[-2000:]


@pytest.mark.ros
def test_runs_monitor_passes_over_a_transform_without_rotation() -> None:
    """Any publisher's /tf reaches ``run``'s monitor: a quaternion of zeros or NaN is passed
    over (it raised out of the spin: ``run: error: quaternion [0.0, 0.0, 0.0, 0.0] has no
    rotation``, exit 1, 1.2 s after such a publisher started)."""
    pytest.importorskip("rclpy")
    from geometry_msgs.msg import TransformStamped
    from tf2_msgs.msg import TFMessage

    from joint_tf_publisher.ros.demo_source import TfMonitor

    class Subscriber:
        def create_subscription(self, *args: object, **kwargs: object) -> None:
            pass

    monitor = TfMonitor(Subscriber())  # type: ignore[arg-type]
    transforms = []
    for child, w in (("zero", 0.0), ("nan", math.nan), ("good", 1.0)):
        stamped = TransformStamped()
        stamped.header.frame_id, stamped.child_frame_id = "base", child
        stamped.transform.rotation.w = w
        transforms.append(stamped)
    monitor._on_tf(TFMessage(transforms=transforms))
    assert set(monitor.transforms) == set(monitor.last_dynamic) == {"good"}


def test_the_command_line_imports_ros_only_through_the_ros_package() -> None:
    """``demo`` and ``run`` need rclpy, through ``joint_tf_publisher.ros.demo_source``; no
    module of ``cli`` imports a ROS package itself (not even inside a function)."""
    import ast

    ros_packages = {"rclpy", "rcl_interfaces", "sensor_msgs", "std_msgs", "tf2_msgs", "tf2_ros"}
    found = {}
    for module in sorted((REPO_ROOT / "joint_tf_publisher" / "cli").glob("*.py")):
        for node in ast.walk(ast.parse(module.read_text())):
            names = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and not node.level:
                names = [node.module or ""]
            for name in names:
                if name.split(".")[0] in ros_packages:
                    found.setdefault(module.name, []).append(name)
    assert found == {}


@pytest.mark.parametrize("command", ["demo", "run"])
def test_the_overshoot_defaults_to_a_tenth_of_the_range(command: str) -> None:
    """cli.md: ``--overshoot`` defaults to 0.1 of a joint's range (the sweep's figure of
    ``test_sweep_covers_the_limits_and_overshoots_some``), for ``demo`` and ``run`` alike;
    ``--overshoot 0`` stays inside."""
    from joint_tf_publisher.cli.main import build_parser

    arm = str(REPO_ROOT / "urdf" / "demo_arm.urdf")
    assert build_parser().parse_args([command, arm]).overshoot == 0.1
    assert build_parser().parse_args([command, arm, "--overshoot", "0"]).overshoot == 0.0
