"""``joint-tf-publisher doctor`` against running setups under the real launch system (the kit
or a distro): ``doctor_setups.launch.py`` starts the node on the demo arm with a joint-state
source, healthy or broken on purpose, and the command, run as a user runs it, must say what is
wrong (exit 1) or that all is well (exit 0).

Each setup is polled with doctor itself until it reports what the setup should show (the
launch's nodes take a while to start on a loaded machine), up to ``START_S``.
"""

from __future__ import annotations

import json
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

REASON = "needs ROS 2's launch: a sourced distro or the kit (make test)"
pytest.importorskip("launch", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)

from launch_harness import CLI_S, START_S, launched  # noqa: E402

LAUNCH_FILE = str(Path(__file__).resolve().parent / "doctor_setups.launch.py")
NODE = "/joint_tf_publisher"
#: How long each doctor run listens, seconds.
LISTEN_S = 3.0


def doctor(*arguments: str) -> tuple[int, dict[str, Any]]:
    """Run ``joint-tf-publisher doctor --json ARGUMENTS``; its exit status and report."""
    command = [sys.executable, "-m", "joint_tf_publisher.cli.main", "doctor", "--json"]
    result = subprocess.run(
        [*command, "--seconds", str(LISTEN_S), *arguments],
        capture_output=True,
        text=True,
        timeout=CLI_S,
    )
    assert result.returncode in (0, 1), result.stderr
    return result.returncode, json.loads(result.stdout)


def doctor_until(accept: Any, *arguments: str) -> tuple[int, dict[str, Any]]:
    """Doctor's first report for which ``accept(status, report)`` holds; fails with the last
    report after ``START_S``."""
    deadline = time.monotonic() + START_S
    while True:
        status, report = doctor(*arguments)
        if accept(status, report):
            return status, report
        if time.monotonic() > deadline:
            pytest.fail(f"doctor never reported as expected; last (exit {status}):\n{report}")


def findings_of(report: dict[str, Any], kind: str) -> list[dict[str, Any]]:
    return [finding for finding in report["findings"] if finding["kind"] == kind]


def test_a_healthy_setup_exits_0(tmp_path: Path) -> None:
    with launched(LAUNCH_FILE, {"setup": "healthy"}, tmp_path / "launch.log") as launch:
        with launch.explained():
            status, report = doctor_until(lambda status, _: status == 0, "--node", NODE)
            assert report["healthy"] is True
            assert report["heard"]["robot"] == "demo_arm"
            assert report["heard"]["tf_publishers"] == [NODE]
            # --frame-prefix overrides the node's (none here): its robot is then absent
            status, report = doctor("--node", NODE, "--frame-prefix", "r9/")
            assert status == 1 and findings_of(report, "robot_absent"), report


def test_a_joint_never_published_is_named_with_its_frames(tmp_path: Path) -> None:
    with launched(LAUNCH_FILE, {"setup": "missing_joint"}, tmp_path / "launch.log") as launch:
        with launch.explained():

            def names_the_joint_its_source_and_the_node_s_warning(
                status: int, report: dict[str, Any]
            ) -> bool:
                return any(
                    f["details"]["joint"] == "wrist_1_joint"
                    and f["details"]["joint_state_publishers"] == ["/doctor_joint_source"]
                    and "diagnostics" in f["details"]
                    for f in findings_of(report, "missing_frames")
                )

            # A report may come from a window the source started in, before the node's
            # never-received WARN (after its joint_state_timeout, on /diagnostics at 1 Hz), or
            # before the graph has discovered the source's node (the graph names it only
            # then): poll until one report of the running setup says all three.
            status, report = doctor_until(
                names_the_joint_its_source_and_the_node_s_warning, "--node", NODE
            )
            assert status == 1, report
            (finding,) = findings_of(report, "missing_frames")
            assert finding["details"]["joint"] == "wrist_1_joint"
            assert {"wrist_1_link", "tool_flange"} <= set(finding["details"]["frames"])
            assert finding["details"]["joint_state_publishers"] == ["/doctor_joint_source"]
            assert not findings_of(report, "split_tree")
            # One cause, one finding: the node's own WARN is its evidence, not a second one.
            evidence = finding["details"]["diagnostics"]
            assert evidence["level"] == "WARN"
            assert evidence["message"].startswith("1 joint(s) never received: wrist_1_joint;")
            assert not findings_of(report, "diagnostics"), report


def test_a_second_publisher_of_a_frame_is_named(tmp_path: Path) -> None:
    with launched(LAUNCH_FILE, {"setup": "second_publisher"}, tmp_path / "launch.log") as launch:
        with launch.explained():

            def two_named(status: int, report: dict[str, Any]) -> bool:
                found = findings_of(report, "two_publishers")
                return bool(found) and len(found[0]["details"]["sources"]) == 2

            status, report = doctor_until(two_named, "--node", NODE)
            assert status == 1
            (finding,) = findings_of(report, "two_publishers")
            assert finding["details"]["frames"] == ["shoulder_link"]
            sources = " ".join(finding["details"]["sources"])
            assert "/doctor_joint_source" in sources and NODE in sources


def test_a_sim_time_node_without_clock_is_found_without_naming_the_node(tmp_path: Path) -> None:
    arguments = {"setup": "sim_time_no_clock"}
    with launched(LAUNCH_FILE, arguments, tmp_path / "launch.log") as launch:
        with launch.explained():
            # No --node: the state publisher is found as the robot_description publisher.
            status, report = doctor_until(
                lambda _, report: bool(findings_of(report, "sim_time_without_clock"))
            )
            assert status == 1
            (finding,) = findings_of(report, "sim_time_without_clock")
            assert finding["details"]["nodes"] == [NODE]
            assert finding["summary"].startswith("clock:")


def test_a_status_on_diagnostics_that_is_not_ok_is_reported(tmp_path: Path) -> None:
    # The source runs with this test's interpreter, which imports diagnostic_msgs.
    arguments = {"setup": "diagnostics_warn", "python": sys.executable}
    with launched(LAUNCH_FILE, arguments, tmp_path / "launch.log") as launch:
        with launch.explained():
            status, report = doctor_until(
                lambda _, report: bool(findings_of(report, "diagnostics")), "--node", NODE
            )
            assert status == 1
            (finding,) = findings_of(report, "diagnostics")
            assert finding["severity"] == "warning"
            assert finding["details"] == {
                "name": "doctor_joint_source: joint states",
                "level": "WARN",
                "hardware_id": "demo_arm",
                "message": "wrist_1_joint stopped",
                "values": {"stopped joints": "wrist_1_joint"},
            }
