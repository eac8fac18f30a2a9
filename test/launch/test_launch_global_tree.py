"""Several robots, two trees: ``multi_robot.launch.py`` under the real launch system, read by
real tf2 Buffers.

One launch at a time (``ros2 launch joint_tf_publisher multi_robot.launch.py``, robots
``robot1`` and ``robot2``, the arm with a mimic gripper, no demo source): each node runs in its
robot's namespace with Nav2's remapping ``/tf:=tf``, ``/tf_static:=tf_static`` and
``global_frame_prefix:=<name>/``, and ``time_offset`` and ``static_republish_period`` handed
on to every robot. The test publishes one JointState per robot, each robot at other joint
values, at a fixed stamp (``time_offset`` before the stamp looked up; again every 0.2 s:
``ignore_timestamp``), while three
``tf2_lookup.py`` processes (``tf2_ros.Buffer`` + ``TransformListener``, as RViz) look up every
link in the robot's root frame at that stamp: one listening to ``/robot1/tf`` and
``/robot1/tf_static`` (unprefixed frames), one to robot2's, one to the absolute ``/tf`` and
``/tf_static`` (both robots, prefixed). Every pose must equal ``Robot.link_fk`` of that robot's
values to 1e-9. The global ``/tf_static`` must hold both robots' fixed frames, prefixed, and
nothing else. Every test runs twice: with a process per robot, and with ``one_process:=true``
(every robot's node in one ``joint_tf_fleet`` process): a launch moves between the two
without a change to what the robots publish.

Skipped where the launch tools and tf2_ros are not importable (the pip world).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator, Mapping
from pathlib import Path
from typing import Any

import pytest

REASON = "needs ROS 2's launch tools and tf2_ros: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("launch_ros", reason=REASON)
pytest.importorskip("tf2_ros", reason=REASON)

import numpy as np  # noqa: E402
from launch_harness import (  # noqa: E402
    MIMIC_ARM,
    START_S,
    Launch,
    get_parameters,
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

ROBOTS = ("robot1", "robot2")
TOLERANCE = 1e-9
STAMP_S = 5432.25
#: The ``time_offset`` argument, seconds: joint states stamped this much before ``STAMP_S``
#: are on /tf at ``STAMP_S``.
TIME_OFFSET_S = 0.25
STATIC_REPUBLISH_PERIOD_S = 2.0
LOOKUP = Path(__file__).resolve().parent / "tf2_lookup.py"


@pytest.fixture(scope="module")
def arm() -> Robot:
    return Robot.load(MIMIC_ARM)


def fixed_children(robot: Robot, prefix: str) -> set[str]:
    return {prefix + j.child for j in robot.joints.values() if j.joint_type == "fixed"}


@pytest.fixture(scope="module", params=["processes", "one_process"])
def two_robots(
    probe: Any, arm: Robot, tmp_path_factory: pytest.TempPathFactory, request: Any
) -> Iterator[Launch]:
    """The launch, up: both robots' global static sets received. Once with a process per
    robot, once with ``one_process:=true`` (the fleet): the same tests hold for both."""
    log = tmp_path_factory.mktemp("multi_robot") / "launch.log"
    arguments = {
        "one_process": str(request.param == "one_process").lower(),
        "robots": ",".join(ROBOTS),
        "model": str(MIMIC_ARM),
        "demo": "false",
        "ignore_timestamp": "true",
        "time_offset": str(TIME_OFFSET_S),
        "static_republish_period": str(STATIC_REPUBLISH_PERIOD_S),
    }
    with launched("multi_robot.launch.py", arguments, log) as launch:
        with launch.explained():
            wait_static_children(
                probe, set().union(*(fixed_children(arm, f"{name}/") for name in ROBOTS))
            )
        yield launch


def robot_values(robot: Robot, name: str) -> dict[str, Any]:
    """Joint values of robot ``name``: each robot's differ (robot2's are robot1's, halved)."""
    values = leader_values(robot)
    if name == ROBOTS[0]:
        return values
    return {joint: np.asarray(value) * 0.5 for joint, value in values.items()}


def lookup_process(robot: Robot, prefixes: list[str], tf_namespace: str | None) -> Any:
    """tf2_lookup.py asking for every link of ``robot`` in its root frame, once per prefix in
    ``prefixes``; listening to ``/<tf_namespace>/tf`` and ``.../tf_static``, or to the
    absolute topics for None."""
    pairs = [
        f"{prefix}{robot.root},{prefix}{link}"
        for prefix in prefixes
        for link in robot.links
        if link != robot.root
    ]
    ros_args: list[str] = []
    if tf_namespace is not None:
        ros_args = ["--ros-args"]
        for topic in ("tf", "tf_static"):
            ros_args += ["-r", f"/{topic}:=/{tf_namespace}/{topic}"]
    stamp_ns = str(int(round(STAMP_S * 1e9)))
    return subprocess.Popen(
        [kit_python(), str(LOOKUP), stamp_ns, str(START_S), *pairs, *ros_args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )


def publish_until_done(
    probe: Any, processes: Mapping[str, Any], messages: Mapping[str, Any]
) -> dict[str, dict[str, list[float]]]:
    """Publish ``messages`` (topic -> message) every 0.2 s until every process has ended;
    each process's poses by "TARGET,SOURCE" (the test fails with its reason if one failed)."""
    publishers = {
        topic: probe.node.create_publisher(type(m), topic, 10) for topic, m in messages.items()
    }
    deadline = time.monotonic() + 2 * START_S
    try:
        while any(p.poll() is None for p in processes.values()) and time.monotonic() < deadline:
            for topic, publisher in publishers.items():
                publisher.publish(messages[topic])
            pause(0.2)
    finally:
        for publisher in publishers.values():
            probe.node.destroy_publisher(publisher)
        for process in processes.values():
            if process.poll() is None:
                process.kill()
    results = {}
    for listener, process in processes.items():
        stdout, stderr = process.communicate(timeout=30.0)
        assert process.returncode == 0, f"tf2 Buffer of {listener}: {stderr}"
        results[listener] = json.loads(stdout)
    return results


def pose_matrix(values: list[float]) -> np.ndarray:
    """(4, 4) pose of [x, y, z, qx, qy, qz, qw], the rotation by scipy (independent code)."""
    pose = np.eye(4)
    pose[:3, :3] = Rotation.from_quat(values[3:]).as_matrix()
    pose[:3, 3] = values[:3]
    return pose


def assert_tree_matches_fk(
    poses: Mapping[str, list[float]], robot: Robot, prefix: str, cfg: Mapping[str, Any]
) -> None:
    """Every link of ``robot`` in ``poses`` (looked up with ``prefix``) is at its FK."""
    expected = robot.link_fk(cfg, clamp="hard")
    root = prefix + robot.root
    for link, pose in expected.items():
        if link == robot.root:
            continue
        looked_up = pose_matrix(poses[f"{root},{prefix}{link}"])
        np.testing.assert_allclose(looked_up, pose, atol=TOLERANCE, err_msg=prefix + link)


def test_two_namespaced_trees_and_one_global_tree_resolve_in_tf2_buffers(
    probe: Any, two_robots: Launch, arm: Robot
) -> None:
    values = {name: robot_values(arm, name) for name in ROBOTS}
    processes = {name: lookup_process(arm, [""], name) for name in ROBOTS}
    processes["global"] = lookup_process(arm, [f"{name}/" for name in ROBOTS], None)
    messages = {
        f"/{name}/joint_states": joint_state_of(arm, values[name], STAMP_S - TIME_OFFSET_S)
        for name in ROBOTS
    }
    with two_robots.explained():
        poses = publish_until_done(probe, processes, messages)
    for name in ROBOTS:
        assert_tree_matches_fk(poses[name], arm, "", values[name])  # its own tree, unprefixed
        assert_tree_matches_fk(poses["global"], arm, f"{name}/", values[name])


def test_the_global_static_tree_holds_every_robot_prefixed_and_nothing_else(
    probe: Any, two_robots: Launch, arm: Robot
) -> None:
    expected = set().union(*(fixed_children(arm, f"{name}/") for name in ROBOTS))
    heard = wait_static_children(probe, expected)
    assert set(heard) == expected
    for transform in heard.values():
        prefix = transform.child_frame_id.split("/", 1)[0] + "/"
        assert transform.header.frame_id.startswith(prefix), transform


def test_every_robot_s_node_has_the_arguments_handed_on(probe: Any, two_robots: Launch) -> None:
    names = ["time_offset", "static_republish_period", "global_frame_prefix"]
    for name in ROBOTS:
        assert get_parameters(probe, f"/{name}/joint_tf_publisher", names) == {
            "time_offset": TIME_OFFSET_S,
            "static_republish_period": STATIC_REPUBLISH_PERIOD_S,
            "global_frame_prefix": f"{name}/",
        }


def test_the_launch_stops_cleanly(two_robots: Launch) -> None:
    two_robots.assert_clean_stop(two_robots.interrupt())
