"""The end deadline under a real ``ros2 launch``: it must come before launch's SIGKILL.

A console script whose end never returns (a middleware participant's deletion that hangs)
ends by its deadline (``stop_signals.END_DEADLINE_S``), its stacks in launch's output and
exit 1, not by launch's SIGKILL (10 s after its SIGINT by default), which ends it without a
word (exit -9). Needs the ROS 2 tools (a sourced distro or the kit); the package need not be
installed (the launch file is written here).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

import pytest

REASON = "needs ROS 2's launch tools: a sourced distro or the kit (make test)"
pytest.importorskip("launch", reason=REASON)

from repo_paths import REPO_ROOT  # noqa: E402
from test_user_errors import HUNG_SESSION_END, hung_console_script  # noqa: E402

from joint_tf_publisher.node_core.stop_signals import END_DEADLINE_S  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: Longest wait for the demo to start, then for launch to end after its SIGINT, seconds.
WAIT_S = 60.0

LAUNCH_FILE = """\
from launch import LaunchDescription
from launch.actions import ExecuteProcess


def generate_launch_description():
    return LaunchDescription([ExecuteProcess(cmd={command!r}, output="screen")])
"""


def test_a_hung_end_under_ros2_launch_ends_by_the_deadline_not_launchs_sigkill(
    tmp_path: Path, ros_subprocess_env: dict[str, str]
) -> None:
    """``joint-tf-publisher demo`` with its console script's own deadline, its session's
    teardown hung, under ``ros2 launch`` stopped by SIGINT: exit 1 with the hung step's
    stack (a deadline of 12 s: launch's SIGTERM at 5 s, a flag, its SIGKILL at 10 s, exit -9,
    no stack)."""
    command = hung_console_script(
        "cli_main",
        HUNG_SESSION_END,
        "demo",
        str(REPO_ROOT / "urdf" / "demo_arm.urdf"),
        deadline_s=None,
    )
    launch_file = tmp_path / "hung_demo.launch.py"
    launch_file.write_text(LAUNCH_FILE.format(command=command))
    log_path = tmp_path / "launch.log"
    with log_path.open("w") as log:
        launch = subprocess.Popen(
            ["ros2", "launch", str(launch_file)],
            stdout=log,
            stderr=subprocess.STDOUT,
            env=ros_subprocess_env,
            start_new_session=True,
        )
    try:
        deadline = time.monotonic() + WAIT_S
        while "Ctrl-C stops" not in log_path.read_text() and launch.poll() is None:
            assert time.monotonic() < deadline, log_path.read_text()[-3000:]
            time.sleep(0.1)
        launch.send_signal(signal.SIGINT)
        launch.wait(timeout=WAIT_S)
    finally:
        if launch.poll() is None:
            os.killpg(launch.pid, signal.SIGKILL)
            launch.wait()
    output = log_path.read_text(errors="replace")
    assert f"Timeout (0:00:{END_DEADLINE_S:02.0f})!" in output, output[-3000:]
    assert "never_returns" in output, output[-3000:]
    # Ended by the deadline, before launch's SIGKILL (how long launch takes to end after
    # its last process is launch's own business: no bound on the whole run here).
    assert "exit code 1," in output and "SIGKILL" not in output, output[-3000:]
