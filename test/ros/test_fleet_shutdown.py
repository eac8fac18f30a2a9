"""Stopping the fleet's console script: stop signals at any moment, exit 0, every robot gone.

As test_node_shutdown.py does for the node: 2 or 3 SIGINT/SIGTERM at a random moment while
the fleet starts its robots (two robots, one refused), and a flood of SIGINT while it stops,
under each executor the fleet can spin with. The fleet stops its loop between two robots'
starts, so a signal during a long start list is not held up by the rest of it.
"""

from __future__ import annotations

import contextlib
import os
import random
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from repo_paths import REPO_ROOT, TEST_DIR  # noqa: E402
from test_node_shutdown import (  # noqa: E402
    handlers_installed,
    send_a_few_signals,
    stopped_once_ready,
    stopped_with_a_hung_teardown,
)
from test_user_errors import console_script, hung_console_script  # noqa: E402

from joint_tf_publisher.ros import runtime  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: The executors the fleet spins with (test ids).
EXECUTORS = runtime.container_executors()
FLEET = console_script("joint_tf_fleet", "joint_tf_publisher.ros.fleet")
WAIT_S = 60.0


@pytest.fixture(scope="module")
def fleet_params(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    path = tmp_path_factory.mktemp("fleet_shutdown") / "fleet.yaml"
    path.write_text(
        f"""/joint_tf_fleet:
  ros__parameters:
    robots: [r1, r2, refused]
/r1/joint_tf_publisher:
  ros__parameters:
    description_file: {REPO_ROOT / "urdf" / "demo_arm.urdf"}
/r2/joint_tf_publisher:
  ros__parameters:
    description_file: {TEST_DIR / "urdf" / "humanoid.urdf"}
/refused/joint_tf_publisher:
  ros__parameters:
    description_file: {path.with_name("absent.urdf")}
"""
    )
    yield path


def started_fleet(params: Path, executor: str) -> subprocess.Popen[bytes]:
    """The fleet's console script on ``params`` under ``executor``, once its own signal
    handlers are in place (or ``WAIT_S`` passed); stderr piped."""
    process = subprocess.Popen(
        [*FLEET, "--ros-args", "--params-file", str(params)],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env={**os.environ, runtime.EXECUTOR_VARIABLE: executor},
    )
    deadline = time.monotonic() + WAIT_S
    while not handlers_installed(process.pid) and time.monotonic() < deadline:
        time.sleep(0.002)
    return process


@pytest.mark.parametrize("executor", EXECUTORS)
@pytest.mark.parametrize("seed", range(4))
def test_signals_while_the_fleet_starts_exit_0(
    fleet_params: Path, seed: int, executor: str
) -> None:
    rng = random.Random(seed)
    process = started_fleet(fleet_params, executor)
    time.sleep(rng.uniform(0.0, 2.0))
    sent = send_a_few_signals(process, rng)
    _, stderr = process.communicate(timeout=WAIT_S)
    text = stderr.decode(errors="replace")
    assert process.returncode == 0, (sent, process.returncode, text[-2000:])
    assert "Traceback" not in text, (sent, text[-2000:])


@pytest.mark.parametrize("executor", EXECUTORS)
def test_a_flood_of_signals_while_the_fleet_stops_exit_0(fleet_params: Path, executor: str) -> None:
    """SIGINT every 0.2 ms from the moment both robots serve until the fleet has exited."""
    process = started_fleet(fleet_params, executor)
    assert process.stderr is not None
    seen = b""
    while b"robot /r2 serving" not in seen:
        line = process.stderr.readline()
        assert line, seen.decode(errors="replace")[-2000:]
        seen += line
    sent = 0
    deadline = time.monotonic() + WAIT_S
    while process.poll() is None and time.monotonic() < deadline:
        with contextlib.suppress(ProcessLookupError):
            process.send_signal(signal.SIGINT)
            sent += 1
        time.sleep(0.0002)
    _, stderr = process.communicate(timeout=WAIT_S)
    text = (seen + stderr).decode(errors="replace")
    assert process.returncode == 0, (sent, process.returncode, text[-2000:])
    assert "Traceback" not in text, (sent, text[-2000:])
    assert f"spinning with {runtime.SPINNING_WITH[executor]}" in text


def test_an_invalid_robots_list_at_start_is_one_line_and_exit_1() -> None:
    completed = subprocess.run(
        [*FLEET, "--ros-args", "-p", "robots:=[arm, 2nd]"],
        capture_output=True,
        text=True,
        timeout=WAIT_S,
    )
    assert completed.returncode == 1, completed.stderr
    lines = completed.stderr.strip().splitlines()
    assert lines == [
        "joint_tf_fleet: robots: '2nd' is no robot namespace (tokens of letters, digits and _, "
        "not starting with a digit, separated by /; not the root namespace)"
    ], lines


def test_a_teardown_that_hangs_ends_by_the_deadline(fleet_params: Path) -> None:
    """As the node's (test_node_shutdown.py): the fleet's robots' teardown never returns."""
    code, stderr = stopped_with_a_hung_teardown("fleet_main", fleet_params)
    assert code == 1, stderr[-2000:]
    assert "Timeout (0:00:01)!" in stderr and "never_returns" in stderr, stderr[-2000:]


def test_the_end_deadline_bounds_each_robots_teardown_not_their_sum(tmp_path: Path) -> None:
    """Six robots whose nodes take 0.5 s each to destroy (3 s in all) under a 1.5 s end
    deadline: each robot's end restarts it, so the fleet ends cleanly; a deadline on the sum
    would end a large fleet's clean stop as hung (about 9 ms a robot: 1,400 robots in 12 s)."""
    namespaces = [f"slow{k}" for k in range(6)]
    sections = "".join(
        f"/{name}/joint_tf_publisher:\n  ros__parameters:\n"
        f"    description_file: {REPO_ROOT / 'urdf' / 'demo_arm.urdf'}\n"
        for name in namespaces
    )
    params = tmp_path / "slow.yaml"
    params.write_text(f"/joint_tf_fleet:\n  ros__parameters:\n    robots: {namespaces}\n{sections}")
    slow = (
        "import rclpy.node\n"
        "destroy = rclpy.node.Node.destroy_node\n"
        "def slowly(node):\n"
        "    time.sleep(0.5 if node.get_namespace() != '/' else 0.0)\n"
        "    destroy(node)\n"
        "rclpy.node.Node.destroy_node = slowly"
    )
    command = hung_console_script(
        "fleet_main", slow, "--ros-args", "--params-file", str(params), deadline_s=1.5
    )
    code, stderr = stopped_once_ready(
        command, lambda lines: sum("serving" in x for x in lines) == len(namespaces)
    )
    assert code == 0, stderr[-3000:]
    assert "Timeout" not in stderr


def big_robot(joints: int) -> str:
    """A URDF named 'big' of ``joints`` revolute joints in a binary tree."""
    parts = ['<robot name="big">', '<link name="l0"/>']
    for k in range(1, joints + 1):
        parts.append(
            f'<link name="l{k}"/><joint name="j{k}" type="revolute">'
            f'<parent link="l{(k - 1) // 2}"/><child link="l{k}"/><axis xyz="0 0 1"/>'
            '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'
        )
    return "\n".join([*parts, "</robot>"])


def test_a_big_robots_start_under_way_gives_up_at_a_stop(tmp_path: Path) -> None:
    """The fleet's end waits for the robot start under way; a big robot's declares a
    ``zeros.<joint>`` parameter per joint, seconds in all (2000 joints: about 3 s; 3000: 8 s),
    which a stop gives up as it does a wait for xacro. It went on to its end under the end
    deadline: a correct end (4000 joints, SIGINT to exit 12.0 s) ended as hung, exit 1."""
    big = tmp_path / "big.urdf"
    big.write_text(big_robot(2000))
    params = tmp_path / "big.yaml"
    params.write_text(
        "/joint_tf_fleet:\n  ros__parameters:\n    robots: [big]\n"
        f"/big/joint_tf_publisher:\n  ros__parameters:\n    description_file: {big}\n"
    )
    command = hung_console_script(
        "fleet_main", "pass", "--ros-args", "--params-file", str(params), deadline_s=2.0
    )
    # SIGINT as its zeros.<joint> declarations begin (they follow that line).
    code, stderr = stopped_once_ready(
        command, lambda lines: any("2000 moving joints" in x for x in lines)
    )
    assert code == 0, stderr[-3000:]
    assert "Timeout" not in stderr and "serving" not in stderr, stderr[-3000:]
