"""The soak test in its short form: tools/soak.py on a burst of messages, asserted on its report.

``make soak`` runs the full version (60 s at 1 kHz, by hand or in a nightly job); this runs
the same script on SOAK_MESSAGES JointStates at up to 1 kHz (3 s on an idle machine) with the
same checks, so that ``make test`` catches a node that dies, publishes nothing, publishes a NaN
or leaks memory quickly. Every message also carries three names the robot does not have, fresh
each time, so that the node's per-name caches and its unknown-name log are churned too.

The burst is counted, not timed (``--messages``): a loaded machine sends it more slowly
instead of sending less of it, so the node is judged on the same burst everywhere (the memory
baseline after the same first messages) and the sender's speed is no verdict on the node.
"""

from __future__ import annotations

import importlib.util
import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

pytestmark = [pytest.mark.ros]

SOAK_SCRIPT = Path(__file__).resolve().parent.parent / "tools" / "soak.py"
SOAK_MESSAGES = 3000
SOAK_RATE_HZ = 1000
#: Messages (at SOAK_RATE_HZ: seconds of them) before the baseline memory sample.
WARMUP_S = 1.0
#: Growth of the node's RSS after the warm-up allowed in the short run (MiB); the full soak
#: uses 5 MiB over 60 s.
MAX_GROWTH_MIB = 5.0


def run_soak(env: dict[str, str], *arguments: str) -> tuple[int, dict[str, Any], str]:
    """Run tools/soak.py; its exit status, its SOAK_REPORT as a dict, and its whole output."""
    completed = subprocess.run(
        [sys.executable, str(SOAK_SCRIPT), *arguments],
        capture_output=True,
        text=True,
        timeout=300,  # a loaded machine takes longer to send the burst
        env=env,
        stdin=subprocess.DEVNULL,
    )
    output = completed.stdout + completed.stderr
    report_lines = [
        line for line in completed.stdout.splitlines() if line.startswith("SOAK_REPORT")
    ]
    assert report_lines, output
    report: dict[str, Any] = json.loads(report_lines[-1].split(" ", 1)[1])
    return completed.returncode, report, output


def test_short_soak(ros_subprocess_env: dict[str, str]) -> None:
    status, report, output = run_soak(
        ros_subprocess_env,
        "--messages",
        str(SOAK_MESSAGES),
        "--rate",
        str(SOAK_RATE_HZ),
        "--warmup",
        str(WARMUP_S),
        "--max-rss-growth-mb",
        str(MAX_GROWTH_MIB),
        "--unknown-names",
        "3",
    )
    assert status == 0, output
    assert report["failures"] == [], output
    assert report["node_alive"] and report["node_exit_status"] == 0, output
    assert report["moving_joints"] >= 60
    # The whole burst was sent, however long it took: the node is judged on all of it.
    assert report["messages_target"] == SOAK_MESSAGES, output
    assert report["messages_in"] == SOAK_MESSAGES, output
    assert report["messages_out"] > 0, output
    # One /tf message per JointState at most (ignore_timestamp, no default positions).
    assert report["messages_out"] <= report["messages_in"], output
    assert report["checked_messages"] > 0, output
    assert report["transforms_per_message"] == report["moving_joints"], output
    assert report["non_finite_messages"] == 0 and report["bad_quaternion_messages"] == 0
    assert math.isfinite(report["latency_max_ms"]), output
    assert report["rss_growth_mib"] <= MAX_GROWTH_MIB, output
    print(output.split("SOAK_REPORT")[0])


def load_soak_module() -> Any:
    """tools/soak.py imported as a module (it is a script, not part of the package)."""
    name = "jtp_tools_soak"
    if name in sys.modules:
        return sys.modules[name]
    spec = importlib.util.spec_from_file_location(name, SOAK_SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # dataclasses look their module up while being created
    spec.loader.exec_module(module)
    return module


def test_soak_verdict_fails_on_each_problem() -> None:
    """Control: the script's PASS is real: each problem alone turns the verdict to failure."""
    soak = load_soak_module()

    def failures(log: str = "", growth: float = 0.5, **measured: Any) -> list[str]:
        report = soak.SoakReport(model="m", moving_joints=61, seconds=5, rate_hz=1000)
        report.messages_in, report.messages_out, report.node_alive = 1000, 900, True
        report.rss_growth_mib = growth
        for name, value in measured.items():
            setattr(report, name, value)
        return list(soak.failures(report, 5.0, log))

    assert failures() == []
    assert failures(node_alive=False)
    assert failures(messages_out=0)
    assert failures(non_finite_messages=1)
    assert failures(bad_quaternion_messages=1)
    assert failures(growth=6.0)
    assert failures(growth=math.nan)
    assert failures(log="Traceback (most recent call last):")


def test_soak_by_count_fails_only_on_a_short_burst() -> None:
    """--messages: the feed's nominal time is the count over the rate; a burst sent whole
    passes however long it took, a burst the feeder gave up on fails, naming the feeder."""
    soak = load_soak_module()
    args = soak.parse_args(["--messages", "3000", "--rate", "1000"])
    assert args.seconds == 3.0
    with pytest.raises(SystemExit):
        soak.parse_args(["--messages", "3000", "--seconds", "3"])

    def failures(sent: int) -> list[str]:
        report = soak.SoakReport(
            model="m", moving_joints=61, seconds=3.0, rate_hz=1000, messages_target=3000
        )
        report.messages_in, report.node_alive, report.feed_seconds = sent, True, 17.0
        report.messages_out, report.rss_growth_mib = sent // 2, 0.0
        return list(soak.failures(report, args.max_rss_growth_mb, ""))

    assert failures(3000) == []
    (failure,) = failures(548)
    assert "548 of its 3000" in failure and "feeder" in failure


def test_soak_feeder_values_are_valid() -> None:
    """Every fed value lies within its joint's limits; floating-base quaternions are unit."""
    soak = load_soak_module()
    from joint_tf_publisher import Robot

    robot = Robot.load(soak.DEFAULT_MODEL)
    feeder = soak.Feeder(robot)
    kin = robot.kinematics
    for t in (0.0, 0.3, 1.7, 59.9):
        values = feeder.values(t)
        positions = kin.new_positions()
        update = kin.apply(positions, feeder.names, values)
        assert update.rejected == [] and update.clamped == [], (t, update)
        assert len(update.moved) == len(kin.moving_joints)
