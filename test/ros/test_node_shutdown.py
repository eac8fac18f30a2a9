"""Stopping the console script: any number of SIGINT/SIGTERM, at any moment, exit 0.

A terminal's Ctrl-C reaches the whole process group and ``ros2 launch`` forwards another, so
a node commonly gets two or three signals in quick succession: while starting, while joint
states stream, while already shutting down. Each run here sends 2 or 3 (SIGINT or SIGTERM,
0-50 ms apart) at a random moment and expects exit code 0 and no traceback, under each
executor the node can spin with. Regressions this
guards: a KeyboardInterrupt raised in ``destroy_node`` by the second signal (exit -2 under
launch), and a SIGSEGV when rclpy's signal thread triggered a guard condition being
destroyed.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from node_harness import EXECUTORS, Probe, fresh_stamp, started  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from test_user_errors import NODE, hung_console_script, params_file  # noqa: E402

from joint_tf_publisher.ros import runtime  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
STOP_SIGNALS = (signal.SIGINT, signal.SIGINT, signal.SIGTERM)
WAIT_S = 60.0


def send_a_few_signals(process: subprocess.Popen[bytes], rng: random.Random) -> list[str]:
    """2 or 3 stop signals, 0-50 ms apart; their names."""
    sent = []
    for _ in range(rng.randint(2, 3)):
        number = rng.choice(STOP_SIGNALS)
        if process.poll() is None:
            process.send_signal(number)
            sent.append(signal.Signals(number).name)
        time.sleep(rng.uniform(0.0, 0.05))
    return sent


def handlers_installed(pid: int) -> bool:
    """True once the process catches SIGTERM (/proc/<pid>/status SigCgt): the console
    script's own handlers are in place. Before that the interpreter itself is starting,
    where a signal ends any Python program by the default action."""
    try:
        status = Path(f"/proc/{pid}/status").read_text()
    except OSError:
        return False
    caught = int(
        next(line.split()[1] for line in status.splitlines() if line.startswith("SigCgt")), 16
    )
    return bool(caught & (1 << (signal.SIGTERM - 1)))


def started_console_script(params: Path, executor: str) -> subprocess.Popen[bytes]:
    """The node's console script on ``params`` under ``executor``, once its own signal
    handlers are in place (or ``WAIT_S`` passed); stderr piped."""
    process = subprocess.Popen(
        [*NODE, "--ros-args", "--params-file", str(params)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, runtime.EXECUTOR_VARIABLE: executor},
    )
    deadline = time.monotonic() + WAIT_S
    while not handlers_installed(process.pid) and time.monotonic() < deadline:
        time.sleep(0.002)
    return process


@pytest.fixture(scope="module")
def arm_params(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("shutdown") / "params.yaml"
    yield params_file(path, robot_description=ARM_URDF.read_text(), ignore_timestamp=True)


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("seed", range(8))
def test_signals_while_starting_exit_0(arm_params: Path, seed: int, executor: str) -> None:
    """From the moment the console script runs until well after the node is up."""
    rng = random.Random(seed)
    process = started_console_script(arm_params, executor)
    time.sleep(rng.uniform(0.0, 1.5))
    sent = send_a_few_signals(process, rng)
    _, stderr = process.communicate(timeout=WAIT_S)
    text = stderr.decode(errors="replace")
    assert process.returncode == 0, (sent, process.returncode, text[-2000:])
    assert "Traceback" not in text, (sent, text[-2000:])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("run", range(6))
def test_a_flood_of_signals_while_stopping_exit_0(
    arm_params: Path, run: int, executor: str
) -> None:
    """SIGINT every 0.2 ms from the moment the node is up until it has exited: a handler may
    then run inside itself, and a signal lands in every step of the shutdown. Regressions
    this guards: a handler taking a lock (``Event.set``; a RecursionError under a flood) and
    ``rclpy.try_shutdown``, whose signal-handler uninstall (rclpy 9) sets SIGINT and SIGTERM
    to SIG_DFL for a moment (exit -2); each ended about one run in ten so."""
    process = started_console_script(arm_params, executor)
    time.sleep(0.8 + 0.1 * run)  # the node is up (or nearly)
    sent = 0
    deadline = time.monotonic() + WAIT_S
    while process.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
            sent += 1
        time.sleep(0.0002)
    _, stderr = process.communicate(timeout=WAIT_S)
    text = stderr.decode(errors="replace")
    assert process.returncode == 0, (sent, process.returncode, text[-2000:])
    assert "Traceback" not in text and "Error" not in text, (sent, text[-2000:])


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("seed", range(4))
def test_signals_while_joint_states_stream_exit_0(
    probe: Probe,
    tmp_path_factory: pytest.TempPathFactory,
    monkeypatch: pytest.MonkeyPatch,
    seed: int,
    executor: str,
) -> None:
    rng = random.Random(seed)
    monkeypatch.setenv(runtime.EXECUTOR_VARIABLE, executor)
    node = started(
        probe,
        tmp_path_factory,
        f"/stop_{executor}_{seed}",
        {"robot_description": ARM_URDF.read_text(), "ignore_timestamp": True},
        handshake=("joint_1", "link_1"),
    )
    try:
        for k in range(rng.randint(5, 60)):
            node.publish(["joint_1", "joint_2"], [0.01 * k, -0.01 * k], fresh_stamp(0.001))
        sent = send_a_few_signals(node.process, rng)
        code = node.process.wait(timeout=WAIT_S)
    finally:
        if node.process.poll() is None:
            node.process.kill()
    assert code == 0, (sent, code, node.stderr()[-2000:])
    assert "Traceback" not in node.stderr()
    assert f"spinning with {runtime.SPINNING_WITH[executor]}" in node.stderr()


#: A node's teardown that never returns (a middleware participant whose deletion hangs).
HUNG_TEARDOWN = "import rclpy.node\nrclpy.node.Node.destroy_node = never_returns"


def stopped_once_ready(command: list[str], ready: Callable[[list[str]], bool]) -> tuple[int, str]:
    """``command`` started, SIGINT once ``ready`` (given its stderr lines so far) holds or
    its stderr ended; its exit status and whole stderr."""
    process = subprocess.Popen(
        command, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True
    )
    assert process.stderr is not None
    lines: list[str] = []
    deadline = time.monotonic() + WAIT_S
    while time.monotonic() < deadline and not ready(lines):
        line = process.stderr.readline()
        if not line:
            break
        lines.append(line)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=WAIT_S)
    return process.returncode, "".join(lines) + stderr


def stopped_with_a_hung_teardown(main: str, params: Path) -> tuple[int, str]:
    """The console script ``entry.<main>`` on ``params`` with ``HUNG_TEARDOWN`` and a 1 s
    end deadline, stopped by SIGINT once it spins; its exit status and stderr."""
    command = hung_console_script(main, HUNG_TEARDOWN, "--ros-args", "--params-file", str(params))
    return stopped_once_ready(command, lambda lines: any("spinning with" in x for x in lines))


def test_a_teardown_that_hangs_ends_by_the_deadline(arm_params: Path) -> None:
    """Stopped, the node's teardown never returns: the process ends by its end deadline, the
    hung step's stack on stderr, exit 1 (it hung until SIGKILL, SIGINT and SIGTERM being
    only a flag, then ignored)."""
    code, stderr = stopped_with_a_hung_teardown("node_main", arm_params)
    assert code == 1, stderr[-2000:]
    assert "Timeout (0:00:01)!" in stderr and "never_returns" in stderr, stderr[-2000:]


def test_a_refused_start_whose_shutdown_hangs_ends_by_the_deadline(tmp_path: Path) -> None:
    """The node refuses to start (a description that does not load) and the shutdown of its
    ROS context never returns: ended by the deadline too, after its one-line refusal."""
    params = params_file(tmp_path / "bad.yaml", robot_description="<robot name='r'>")
    hang = "import rclpy.context\nrclpy.context.Context.try_shutdown = never_returns"
    command = hung_console_script("node_main", hang, "--ros-args", "--params-file", str(params))
    completed = subprocess.run(command, capture_output=True, text=True, timeout=WAIT_S)
    assert completed.returncode == 1, completed.stderr[-2000:]
    assert "joint_tf_publisher: " in completed.stderr  # the refusal came first
    assert "Timeout (0:00:01)!" in completed.stderr, completed.stderr[-2000:]
    assert "never_returns" in completed.stderr, completed.stderr[-2000:]
