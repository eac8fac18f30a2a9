"""A real tf2 Buffer (what RViz and every tf2 user reads) reproduces the project's own FK.

``bundled_robots.launch.py`` starts three bundled robots in one launch (a URDF with mimic
joints, an SDFormat model with every SDF joint type, a floating-base humanoid), each in its
own namespace with its frame prefix. This test publishes one JointState of every leader joint
at a fixed stamp (again every 0.2 s: ``ignore_timestamp`` makes the node republish it) while
``tf2_lookup.py``, a separate process with ``tf2_ros.Buffer`` + ``TransformListener``, looks
up every link in the robot's root frame at that stamp. Each pose must equal
``Robot.load(model).link_fk(cfg)`` to 1e-9 (metres, rotation matrix entries). tf2_tools'
``view_frames`` must list every frame of the three trees. The node's fallbacks must give the
Buffer the same: tf2_ros made unimportable (``node_without_tf2_ros.py``: the node's own
publishers where it would use tf2_ros's broadcasters) and, with
``JOINT_TF_PUBLISHER_EXECUTOR=rclpy``, rclpy's SingleThreadedExecutor instead of its events
executor (for node versions that read that variable; others ignore it).

Needs the ROS 2 tools (a sourced distro, or the kit that ``make test`` builds) with this
package built and sourced; skipped where launch_testing and tf2_ros are not importable.
"""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

REASON = "needs ROS 2's launch tools and tf2_ros: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)
pytest.importorskip("tf2_ros", reason=REASON)

import numpy as np  # noqa: E402
from launch.launch_description_sources import load_python_launch_file_as_module  # noqa: E402
from launch_harness import (  # noqa: E402
    START_S,
    Launch,
    joint_state_of,
    kit_python,
    launched,
    leader_values,
    wait_static_children,
)
from node_harness import pause  # noqa: E402
from scipy.spatial.transform import Rotation  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = pytest.mark.ros

TOLERANCE = 1e-9
STAMP_S = 4321.5
HERE = Path(__file__).resolve().parent
ROBOTS_LAUNCH = HERE / "bundled_robots.launch.py"
ROBOTS: dict[str, Path] = load_python_launch_file_as_module(str(ROBOTS_LAUNCH)).ROBOTS
FALLBACK_NODE = HERE / "node_without_tf2_ros.py"
LOOKUP = HERE / "tf2_lookup.py"


def pose_matrix(values: list[float]) -> np.ndarray:
    """(4, 4) pose of [x, y, z, qx, qy, qz, qw], the rotation by scipy (independent code)."""
    pose = np.eye(4)
    pose[:3, :3] = Rotation.from_quat(values[3:]).as_matrix()
    pose[:3, 3] = values[:3]
    return pose


def fixed_children(robot: Robot, prefix: str) -> set[str]:
    return {prefix + j.child for j in robot.joints.values() if j.joint_type == "fixed"}


@pytest.fixture(scope="module")
def robots_launch(probe: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Launch]:
    """The three robots' launch, up: every robot's static transforms received (a failure
    shows what was heard, who publishes, and the output of the launch and its nodes)."""
    log = tmp_path_factory.mktemp("bundled_robots") / "launch.log"
    with launched(str(ROBOTS_LAUNCH), {}, log) as launch:
        expected: set[str] = set()
        for name, model in ROBOTS.items():
            expected |= fixed_children(Robot.load(model), f"{name}/")
        with launch.explained():
            wait_static_children(probe, expected)
        yield launch


def publish_while(
    probe: Any, process: subprocess.Popen[str], messages: dict[str, Any]
) -> tuple[str, str]:
    """Publish ``messages`` (topic -> message) every 0.2 s until ``process`` ends; its
    standard output and error."""
    publishers = {
        topic: probe.node.create_publisher(type(msg), topic, 10) for topic, msg in messages.items()
    }
    deadline = time.monotonic() + 2 * START_S
    try:
        while process.poll() is None and time.monotonic() < deadline:
            for topic, publisher in publishers.items():
                publisher.publish(messages[topic])
            pause(0.2)
        return process.communicate(timeout=30.0)
    finally:
        for publisher in publishers.values():
            probe.node.destroy_publisher(publisher)
        if process.poll() is None:
            process.kill()
            process.wait()


def look_up(probe: Any, robot: Robot, cfg: dict[str, Any], prefix: str, topic: str) -> dict:
    """Every link of ``robot`` in its root frame, by tf2_lookup.py while ``cfg`` is published
    on ``topic``: link name -> pose (4, 4)."""
    root = prefix + robot.root
    pairs = [f"{root},{prefix}{link}" for link in robot.links if link != robot.root]
    stamp_ns = str(int(round(STAMP_S * 1e9)))
    lookup = subprocess.Popen(
        [kit_python(), str(LOOKUP), stamp_ns, str(START_S), *pairs],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    stdout, stderr = publish_while(probe, lookup, {topic: joint_state_of(robot, cfg, STAMP_S)})
    assert lookup.returncode == 0, f"tf2_lookup.py failed: {stderr}"
    poses = json.loads(stdout)
    return {
        pair.split(",")[1][len(prefix) :]: pose_matrix(values) for pair, values in poses.items()
    }


def assert_buffer_matches_fk(probe: Any, model: Path, prefix: str, topic: str) -> None:
    robot = Robot.load(model)
    cfg = leader_values(robot)
    looked_up = look_up(probe, robot, cfg, prefix, topic)
    expected = robot.link_fk(cfg, clamp="hard")
    assert set(looked_up) == set(expected) - {robot.root}
    for link, T_root_link in looked_up.items():
        np.testing.assert_allclose(T_root_link, expected[link], atol=TOLERANCE, err_msg=link)


@pytest.mark.parametrize("name", list(ROBOTS))
def test_tf2_buffer_matches_fk(probe: Any, robots_launch: Launch, name: str) -> None:
    # tf2_ros is importable here (the module needs it): the node's tf2_ros path, if it has one.
    assert_buffer_matches_fk(probe, ROBOTS[name], f"{name}/", f"/{name}/joint_states")


#: How long view_frames listens, seconds (its --wait-time). A new DDS participant can take up
#: to one more of Fast DDS's 3 s participant announcements to discover a running node
#: (docs/benchmarks.md, "Startup"): with 3 s, one robot's frames were missing in a clean-clone
#: run.
VIEW_FRAMES_WAIT_S = "8"


def test_view_frames_lists_every_frame(probe: Any, robots_launch: Launch, tmp_path: Path) -> None:
    robots = {name: Robot.load(model) for name, model in ROBOTS.items()}
    messages = {
        f"/{name}/joint_states": joint_state_of(robot, leader_values(robot), STAMP_S)
        for name, robot in robots.items()
    }
    output = tmp_path / "frames"
    view_frames = subprocess.Popen(
        ["ros2", "run", "tf2_tools", "view_frames"]
        + ["--wait-time", VIEW_FRAMES_WAIT_S, "-o", str(output)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=tmp_path,
    )
    publish_while(probe, view_frames, messages)
    graph = Path(f"{output}.gv").read_text()
    edges = set(re.findall(r'"([^"]+)" -> "([^"]+)"\[label', graph))
    for name, robot in robots.items():
        expected = {(f"{name}/{j.parent}", f"{name}/{j.child}") for j in robot.joints.values()}
        assert expected <= edges, sorted(expected - edges)


def test_sigint_ends_the_three_robots_cleanly(robots_launch: Launch) -> None:
    robots_launch.assert_clean_stop(robots_launch.interrupt())


@contextmanager
def node_without_tf2_ros(model: Path, log: Path) -> Iterator[subprocess.Popen[bytes]]:
    """The node's console script run with tf2_ros unimportable and rclpy's public executor
    (its fallbacks), in namespace /fallback with frame prefix fallback/."""
    params = log.with_suffix(".yaml")
    params.write_text(
        "/**:\n  ros__parameters:\n"
        f"    robot_description: {json.dumps(model.read_text(encoding='utf-8'))}\n"
        "    frame_prefix: fallback/\n"
        "    ignore_timestamp: true\n"
    )
    command = [kit_python(), str(FALLBACK_NODE), "--ros-args", "-r", "__ns:=/fallback"]
    env = dict(os.environ, JOINT_TF_PUBLISHER_EXECUTOR="rclpy")
    with open(log, "w") as output:
        process = subprocess.Popen(
            [*command, "--params-file", str(params)],
            stdout=output,
            stderr=subprocess.STDOUT,
            env=env,
        )
    try:
        yield process
    finally:
        if process.poll() is None:
            process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=30.0)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()


def test_tf2_buffer_matches_fk_through_the_node_s_fallbacks(probe: Any, tmp_path: Path) -> None:
    model = ROBOTS["urdf_mimic"]
    log = tmp_path / "node.log"
    with node_without_tf2_ros(model, log) as process:
        wait_static_children(probe, fixed_children(Robot.load(model), "fallback/"))
        assert_buffer_matches_fk(probe, model, "fallback/", "/fallback/joint_states")
        assert process.poll() is None, log.read_text()
        process.send_signal(signal.SIGINT)
        assert process.wait(timeout=30.0) == 0, log.read_text()
    assert "Traceback" not in log.read_text()


def test_the_fallback_wrapper_hides_tf2_ros() -> None:
    """The wrapper's trick, checked in a child interpreter: tf2_ros cannot be imported."""
    code = (
        f"import runpy; runpy.run_path({str(FALLBACK_NODE)!r}, run_name='wrapper'); import tf2_ros"
    )
    result = subprocess.run([kit_python(), "-c", code], capture_output=True, text=True, timeout=60)
    assert result.returncode != 0
    assert "ModuleNotFoundError: import of tf2_ros halted" in result.stderr, result.stderr
