"""The kept profiler (``python -m bench --profile``) runs to its end and exits cleanly.

It drives the node's pipeline in-process without creating an rclpy context, so nothing of DDS
is left running at exit (``python -m bench.stages``, the profiler it replaced, aborted there
in one of two runs: ``terminate called without an active exception``)."""

from __future__ import annotations

import subprocess
import sys

from repo_paths import REPO_ROOT


def test_the_profiler_prints_its_figures_and_exits_with_zero() -> None:
    for _ in range(2):
        result = subprocess.run(
            [sys.executable, "-m", "bench", "--profile", "--profile-messages", "300"],
            cwd=REPO_ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert result.returncode == 0, result.stderr[-3000:]
        assert "terminate called" not in result.stderr
        figures = (
            "pipeline.joint_state",
            "Publication.to_bytes",
            "global tree",
            "take_joint_state",
            "Robot.link_fk",
        )
        for figure in figures:
            assert figure in result.stdout
        assert "top 25 by tottime" in result.stdout and "joint_tf_publisher" in result.stdout
