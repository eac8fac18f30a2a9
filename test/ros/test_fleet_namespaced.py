"""A fleet in a namespace, a slow robot, and its parameters files edited or swapped, over DDS.

One fleet process (the console script, ``-r __ns:=/x -r __node:=fleet_x``, as a launch
file's ``namespace=`` and ``name=`` give it) serves the module: robots ``a`` and ``b`` nest
under its namespace (``/x/a/joint_tf_publisher``) with their own sections of the file. Then,
in file order: a robot whose xacro expands for 5 s (the xacro time limit, every retry) while
``a``'s /tf keeps flowing; a key deleted from the file gone for a robot started after; the
file replaced by a FIFO: a robot started then is refused naming it, the fleet serves on. The
fleet's other behaviour is test/ros/test_fleet_e2e.py's.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from diagnostic_msgs.msg import DiagnosticStatus  # noqa: E402
from node_harness import Probe, fresh_stamp, stamp_msg, wait_until  # noqa: E402
from repo_paths import REPO_ROOT, TEST_DIR  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from test_fleet_e2e import FLEET, FleetUnderTest, serving  # noqa: E402
from test_user_errors import RCL_OWN_LINE, assert_one_clear_line, run  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.node_core.parameters import PARAMETERS_BY_NAME  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
BASE = TEST_DIR / "urdf" / "mobile_base_planar.urdf"
ARM_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint"]
#: Expands for longer than the xacro time limit (5 s): refused then, each retry alike.
SLOW_XACRO = (
    '<robot name="${python.sum(python.range(10**12))}" '
    'xmlns:xacro="http://www.ros.org/wiki/xacro"/>\n'
)
FLEET_NAME = "/x/fleet_x"
B_FREQUENCY = "    publish_frequency: 55.0\n"


def params_yaml(slow: Path) -> str:
    """The fleet's file: sections by the nested nodes' fully qualified names."""
    return f"""{FLEET_NAME}:
  ros__parameters:
    robots: [a, b]
    retry_period: 1.0
/**:
  ros__parameters:
    ignore_timestamp: true
/x/a/joint_tf_publisher:
  ros__parameters:
    description_file: {ARM}
    frame_prefix: a/
/x/b/joint_tf_publisher:
  ros__parameters:
    description_file: {BASE}
    frame_prefix: b/
{B_FREQUENCY}/x/slow/joint_tf_publisher:
  ros__parameters:
    description_file: {slow}
    frame_prefix: slow/
"""


@pytest.fixture(scope="module")
def fleet(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetUnderTest]:
    workdir = tmp_path_factory.mktemp("fleet_ns")
    slow = workdir / "slow.urdf.xacro"
    slow.write_text(SLOW_XACRO)
    running = FleetUnderTest(
        probe,
        workdir,
        params=params_yaml(slow),
        arguments=("-r", "__ns:=/x", "-r", "__node:=fleet_x"),
        name=FLEET_NAME,
    )
    with serving(running, {"/x/a/joint_tf_publisher", "/x/b/joint_tf_publisher"}):
        yield running


def test_robots_nest_under_the_fleets_namespace_with_their_own_sections(
    fleet: FleetUnderTest,
) -> None:
    """``/x/a/joint_tf_publisher`` and ``/x/b/...``, once each; their sections applied;
    their relative topics under ``/x/<robot>``."""
    names = [
        f"{namespace.rstrip('/')}/{name}"
        for name, namespace in fleet.probe.node.get_node_names_and_namespaces()
    ]
    assert FLEET_NAME in names
    assert names.count("/x/a/joint_tf_publisher") == 1, names
    assert names.count("/x/b/joint_tf_publisher") == 1, names
    assert "/x/joint_tf_publisher" not in names and "/x/fleet_x/joint_tf_publisher" not in names
    assert fleet.get("/x/a/joint_tf_publisher", "frame_prefix") == ["a/"]
    assert fleet.get("/x/b/joint_tf_publisher", "frame_prefix", "publish_frequency") == [
        "b/",
        55.0,
    ]
    for robot in ("a", "b"):
        wait_until(
            lambda robot=robot: fleet.probe.node.count_subscribers(f"/x/{robot}/joint_states") > 0,
            what=f"/x/{robot}/joint_states subscribed",
        )
    wait_until(
        lambda: fleet.resolved("a/tool_flange", "a/gripper_base_link") is not None,
        what="a's statics",
    )


def test_a_remote_topic_on_another_robots_topic_is_refused_in_words(
    fleet: FleetUnderTest,
) -> None:
    """One process: the middleware refuses ``a`` a TFMessage publisher on ``b``'s JointState
    topic. Refused naming the type (no C source line); ``a``'s remote output stays on its
    topic."""
    a = "/x/a/joint_tf_publisher"
    assert fleet.set(a, **{"remote.frames": ["wrist_1_link"]}).successful
    refused = fleet.set(a, **{"remote.topic": "/x/b/joint_states"})
    assert not refused.successful
    assert refused.reason == (
        "remote.topic: '/x/b/joint_states' is /x/b/joint_states, a topic of type "
        "sensor_msgs/msg/JointState in this process; the remote output publishes "
        "tf2_msgs/msg/TFMessage: give it a topic of its own"
    )
    node = fleet.probe.node
    remote: list[TFMessage] = []
    subscription = node.create_subscription(TFMessage, "/x/a/remote/tf", remote.append, 10)
    publisher = node.create_publisher(JointState, "/x/a/joint_states", 10)

    def remote_flows() -> bool:
        message = JointState(name=ARM_JOINTS, position=[0.1, 0.2, 0.3, 0.4])
        message.header.stamp = stamp_msg(fresh_stamp(0.2))
        publisher.publish(message)
        fleet.probe.spin_for(0.05)
        return len(remote) >= 2

    try:
        wait_until(remote_flows, what=lambda: f"a's remote output ({fleet.stderr()[-800:]})")
    finally:
        node.destroy_subscription(subscription)
        node.destroy_publisher(publisher)
    assert fleet.set(a, **{"remote.frames": []}).successful


def children(pid: int) -> set[str]:
    """The process ids of ``pid``'s child processes (a xacro expansion runs in one)."""
    found: set[str] = set()
    for task in os.listdir(f"/proc/{pid}/task"):
        try:
            found.update(Path(f"/proc/{pid}/task/{task}/children").read_text().split())
        except OSError:
            continue
    return found


def test_a_slow_robot_does_not_stop_the_others_tf(fleet: FleetUnderTest) -> None:
    """While ``slow``'s xacro expands (a child process of the fleet, 5 s each try), ``a``'s
    JointStates keep coming out on /tf: counted while that child runs, not timed."""
    publisher = fleet.probe.node.create_publisher(JointState, "/x/a/joint_states", 100)
    try:
        wait_until(lambda: publisher.get_subscription_count() > 0, what="a's subscription")
        assert fleet.set_robots(["a", "b", "slow"]).successful
        pid = fleet.process.pid
        wait_until(lambda: children(pid), what="slow's xacro expansion to start")
        received_during = 0
        sent_during = 0
        seen = len(fleet.probe.tf)
        while children(pid) and received_during < 50:
            message = JointState(name=ARM_JOINTS, position=[0.1, 0.2, 0.3, 0.4])
            message.header.stamp = stamp_msg(fresh_stamp(0.01))
            publisher.publish(message)
            sent_during += 1
            fleet.probe.spin_for(0.01)
            arrived = fleet.probe.tf.messages(seen)
            seen += len(arrived)
            if children(pid):  # still expanding when these arrived
                received_during += sum(
                    1
                    for m in arrived
                    if m.transforms and m.transforms[0].child_frame_id[:2] == "a/"
                )
        assert received_during >= 50, (received_during, sent_during, fleet.stderr()[-800:])
    finally:
        fleet.probe.node.destroy_publisher(publisher)
    assert fleet.set_robots(["a", "b"]).successful  # no more retries of slow
    wait_until(lambda: not children(fleet.process.pid), what="slow's last expansion to end")
    wait_until(lambda: "/x/slow/joint_tf_publisher" not in fleet.nodes(), what="slow to leave")


def test_a_key_deleted_from_the_file_is_gone_for_a_robot_started_after(
    fleet: FleetUnderTest,
) -> None:
    """``b``'s ``publish_frequency`` deleted from the file: ``b`` started again has the
    default, not the value the process read at its start."""
    fleet.params.write_text(fleet.params.read_text().replace(B_FREQUENCY, ""))
    assert fleet.set_robots(["a"]).successful
    wait_until(lambda: "/x/b/joint_tf_publisher" not in fleet.nodes(), what="b to leave")
    assert fleet.set_robots(["a", "b"]).successful
    wait_until(lambda: "/x/b/joint_tf_publisher" in fleet.nodes(), what="b back")
    default = PARAMETERS_BY_NAME["publish_frequency"].default
    assert fleet.get("/x/b/joint_tf_publisher", "frame_prefix", "publish_frequency") == [
        "b/",
        default,
    ]


def test_a_params_file_replaced_by_a_fifo_is_refused_not_waited_on(
    fleet: FleetUnderTest,
) -> None:
    """A robot started while the file is a FIFO is refused naming it (the safe reader never
    opens it for reading); the fleet answers and the others serve on."""
    fleet.params.unlink()
    os.mkfifo(fleet.params)
    assert fleet.set_robots(["a", "b", "c"]).successful
    reason = f"--params-file {fleet.params}: cannot read file: not a regular file (a FIFO"

    def refused() -> DiagnosticStatus | None:
        status = fleet.fleet_status()
        ok = status is not None and status.level == DiagnosticStatus.ERROR
        return status if ok and reason in status.message else None

    status = wait_until(refused, what=lambda: f"c refused ({fleet.stderr()[-800:]})")
    values = {value.key: value.value for value in status.values}
    assert values["/a"] == "serving" and values["/b"] == "serving", values
    assert fleet.get("/x/a/joint_tf_publisher", "frame_prefix") == ["a/"]
    assert fleet.get(FLEET_NAME, "robots") == [["a", "b", "c"]]


def test_a_fifo_params_file_at_start_is_one_line_and_exit_1(
    tmp_path: Path, ros_subprocess_env: dict[str, str]
) -> None:
    fifo = tmp_path / "fleet.yaml"
    os.mkfifo(fifo)
    completed = run([*FLEET, "--ros-args", "--params-file", str(fifo)], env=ros_subprocess_env)
    assert_one_clear_line(
        completed, f"joint_tf_fleet: --params-file {fifo}: ", ("not a regular file", "FIFO")
    )


def test_invalid_yaml_at_start_names_the_file_as_given(
    tmp_path: Path, ros_subprocess_env: dict[str, str]
) -> None:
    """rcl reads a copy (``params_copies``): its refusal names the user's file, not the
    copy, and holds no C source location."""
    params = tmp_path / "fleet.yaml"
    params.write_text("/**:\n  ros__parameters:\n    anchor: &a 1\n    alias: *a\n")
    completed = run([*FLEET, "--ros-args", "--params-file", str(params)], env=ros_subprocess_env)
    line = assert_one_clear_line(
        completed,
        "joint_tf_fleet: cannot initialise ROS: ",
        (f"'--params-file {params}'", "aliasing"),
        ignore=RCL_OWN_LINE,
    )
    assert ".c:" not in line and "joint_tf_fleet-" not in line, line


def test_a_rule_sending_every_robots_joint_states_to_one_topic_is_one_line_and_exit_1(
    ros_subprocess_env: dict[str, str],
) -> None:
    """Each robot's node is made with the process's rules: ``joint_states:=/shared_js`` would
    make every robot read one topic (each robot's /tf from one robot's joint states)."""
    completed = run(
        [*FLEET, "--ros-args", "-p", "robots:=[a, b]", "-r", "joint_states:=/shared_js"],
        env=ros_subprocess_env,
    )
    assert_one_clear_line(
        completed,
        "joint_tf_fleet: -r joint_states:=/shared_js: ",
        ("every robot's joint_states would be /shared_js", "-r /<robot>/joint_states:="),
    )
