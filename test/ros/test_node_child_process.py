"""The node ``run`` starts, a child process of the command line, runs isolated from the
caller (#43.2): from a working folder and a ``PYTHONPATH`` of hostile modules it imports none
(test/hostile_modules.py). Needs rclpy."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from hostile_modules import ran

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")


@pytest.mark.ros
def test_the_node_run_starts_imports_nothing_from_the_caller(
    tmp_path: Path, markers: Path, hostile_on_the_path: None
) -> None:
    """``run``'s node (exits 1 at once on a description that does not parse, after its
    imports: rclpy, numpy, lxml, and the package from its own folder)."""
    pytest.importorskip("rclpy")
    from joint_tf_publisher.cli.demo import node_command, write_params_file

    params = write_params_file("<robot name='r'><link name='a'></robot>", tmp_path)
    result = subprocess.run(
        node_command(params, ["publish_frequency:=10.0"]),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1, result.stderr[-2000:]
    assert "joint_tf_publisher: " in result.stderr and "malformed XML" in result.stderr
    assert "Traceback" not in result.stderr
    assert ran(markers) == []
