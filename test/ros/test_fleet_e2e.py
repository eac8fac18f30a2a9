"""The fleet over DDS: the console script ``joint_tf_fleet`` in a subprocess, many robots in it.

One fleet process serves the module (robots ``arm`` and ``base`` with different
descriptions, ``broken`` whose description file does not load; ``extra`` is in the
parameters file but not listed at start). The tests run in file order on it: each robot's
frames chained as FK gives them; parameters from the file's per-namespace and wildcard
keys; one DDS participant for every node of the process; the broken robot named (log line,
the fleet's /diagnostics) while the others serve, then fixed without a restart; a robot added
and one removed at runtime; a robot's parameter service answering while another is flooded
at 1 kHz; SIGINT stopping every robot with exit code 0. The fleet's decisions without DDS are
test/node_core/test_fleet.py.
"""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from node_harness import (  # noqa: E402
    RESEND_S,
    WAIT_S,
    Probe,
    compose,
    fresh_stamp,
    parameter_value,
    stamp_msg,
    tree_of,
    wait_until,
)
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.msg import ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import GetParameters, SetParameters  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import REPO_ROOT, TEST_DIR  # noqa: E402
from sensor_msgs.msg import JointState  # noqa: E402
from test_user_errors import console_script  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

FLEET = console_script("joint_tf_fleet", "joint_tf_publisher.ros.fleet")
ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
BASE = TEST_DIR / "urdf" / "mobile_base_planar.urdf"
EXTRA = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
#: A description whose joint names a child link that does not exist (line 3).
BROKEN = """<robot name="broken">
  <link name="a"/>
  <joint name="j" type="fixed"><parent link="a"/><child link="nowhere"/></joint>
</robot>
"""
ARM_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint", "wrist_1_joint"]


def params_yaml(broken: Path) -> str:
    """The fleet's parameters file: per-namespace keys for each robot, wildcard ones for all."""
    return f"""/joint_tf_fleet:
  ros__parameters:
    robots: [arm, base, broken]
    retry_period: 1.0
/**:
  ros__parameters:
    publish_frequency: 77.0
    ignore_timestamp: true
/arm/joint_tf_publisher:
  ros__parameters:
    description_file: {ARM}
    frame_prefix: arm/
/base/joint_tf_publisher:
  ros__parameters:
    description_file: {BASE}
    frame_prefix: base/
    publish_frequency: 55.0
    publish_default_positions: true
    frame_prefx: typo/
/broken/joint_tf_publisher:
  ros__parameters:
    description_file: {broken}
    frame_prefix: broken/
/extra/joint_tf_publisher:
  ros__parameters:
    description_file: {EXTRA}
    frame_prefix: extra/
"""


class FleetUnderTest:
    """The fleet's console script, its stderr in a file, and the probe's view of it;
    ``params``: its parameters file's text (default ``params_yaml``), ``arguments``: more
    ROS arguments, ``name``: the fleet node's fully qualified name they give it."""

    def __init__(
        self,
        probe: Probe,
        workdir: Path,
        params: str | None = None,
        arguments: tuple[str, ...] = (),
        name: str = "/joint_tf_fleet",
    ) -> None:
        self.probe = probe
        self.name = name
        self.broken = workdir / "broken.urdf"
        self.broken.write_text(BROKEN)
        self.params = workdir / "fleet.yaml"
        self.params.write_text(params_yaml(self.broken) if params is None else params)
        self.stderr_path = workdir / "stderr.txt"
        with open(self.stderr_path, "w") as err:
            self.process = subprocess.Popen(
                [*FLEET, "--ros-args", "--params-file", str(self.params), *arguments],
                stdout=subprocess.DEVNULL,
                stderr=err,
                env={**os.environ, "PYTHONUNBUFFERED": "1"},
                cwd=workdir,
            )
        #: Every /tf_static message (each robot's latched set, and those published later).
        self.statics: list[TFMessage] = []
        probe.node.create_subscription(
            TFMessage,
            "/tf_static",
            self.statics.append,
            QoSProfile(
                depth=100,
                reliability=ReliabilityPolicy.RELIABLE,
                durability=DurabilityPolicy.TRANSIENT_LOCAL,
            ),
        )
        self.diagnostics: list[DiagnosticStatus] = []
        probe.node.create_subscription(
            DiagnosticArray,
            "/diagnostics",
            lambda msg: self.diagnostics.extend(msg.status),
            QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE),
        )

    def stderr(self) -> str:
        return self.stderr_path.read_text()

    def fleet_status(self) -> DiagnosticStatus | None:
        """The fleet's latest status on /diagnostics."""
        status_name = f"{self.name.rsplit('/', 1)[-1]}: robots"
        found = [s for s in self.diagnostics if s.name == status_name]
        return found[-1] if found else None

    def nodes(self) -> set[str]:
        """Fully qualified names of the nodes in the graph."""
        return {
            f"{namespace.rstrip('/')}/{name}"
            for name, namespace in self.probe.node.get_node_names_and_namespaces()
        }

    def call(self, service_type: Any, name: str, request: Any) -> Any:
        """Call service ``name``, sent again every ``RESEND_S`` while unanswered."""
        client = self.probe.node.create_client(service_type, name)
        try:
            assert client.wait_for_service(timeout_sec=WAIT_S), name
            futures = [client.call_async(request)]
            last = time.monotonic()

            def answered() -> Any:
                nonlocal last
                done = next((future for future in futures if future.done()), None)
                if done is None and time.monotonic() - last > RESEND_S:
                    futures.append(client.call_async(request))
                    last = time.monotonic()
                return done

            return wait_until(answered, what=f"an answer from {name}").result()
        finally:
            self.probe.node.destroy_client(client)

    def get(self, node: str, *names: str) -> list[Any]:
        """Values of ``names`` on ``node`` (GetParameters)."""
        response = self.call(
            GetParameters, f"{node}/get_parameters", GetParameters.Request(names=list(names))
        )
        return [_value(value) for value in response.values]

    def set_robots(self, robots: list[str]) -> Any:
        return self.set(self.name, robots=robots)

    def set(self, node: str, **values: Any) -> Any:
        """Set ``values`` on ``node`` in one SetParameters call; the first result."""
        request = SetParameters.Request(
            parameters=[
                ParameterMsg(name=name, value=parameter_value(value))
                for name, value in values.items()
            ]
        )
        return self.call(SetParameters, f"{node}/set_parameters", request).results[0]

    def resolved(self, target: str, source: str, stamp_s: float | None = None) -> Any:
        """``source``'s pose (4, 4) in ``target`` from the static sets and the /tf messages
        stamped ``stamp_s`` (None: statics only) received so far; None while a frame of the
        chain is missing."""
        messages = list(self.statics)
        if stamp_s is not None:
            stamp_ns = round(stamp_s * 1e9)
            messages += [
                m
                for m in self.probe.tf.messages()
                if m.transforms
                and m.transforms[0].header.stamp.sec * 10**9 + m.transforms[0].header.stamp.nanosec
                == stamp_ns
            ]
        try:
            return compose(tree_of(messages), source, target)
        except KeyError:
            return None

    def stop(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGINT)
        try:
            return self.process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
            raise


def _value(value: Any) -> Any:
    """A ParameterValue message's Python value (the types these tests read)."""
    return {
        1: value.bool_value,
        3: value.double_value,
        4: value.string_value,
        9: list(value.string_array_value),
    }.get(value.type)


@contextlib.contextmanager
def serving(running: FleetUnderTest, nodes: set[str]) -> Iterator[FleetUnderTest]:
    """``running`` once ``nodes`` (fully qualified) are on the graph; stopped afterwards."""
    try:
        wait_until(
            lambda: nodes <= running.nodes(),
            what=lambda: f"the robots' nodes ({running.nodes()}, {running.stderr()[-1000:]})",
        )
        yield running
    finally:
        running.stop()


@pytest.fixture(scope="module")
def fleet(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FleetUnderTest]:
    running = FleetUnderTest(probe, tmp_path_factory.mktemp("fleet"))
    with serving(running, {"/arm/joint_tf_publisher", "/base/joint_tf_publisher"}):
        yield running


def test_each_robot_frames_are_its_own_fk(fleet: FleetUnderTest) -> None:
    """Two robots, two descriptions, one process: each robot's moving frames (joint states on
    its namespaced topic) and static frames, chained, are its FK (a real tf2 Buffer resolves
    them in test/launch/test_launch_fleet.py)."""
    publisher = fleet.probe.node.create_publisher(JointState, "/arm/joint_states", 10)
    stamp_s = fresh_stamp()
    values = [0.3, -0.4, 0.5, 0.2]
    message = JointState(name=ARM_JOINTS, position=values)
    message.header.stamp = stamp_msg(stamp_s)
    arm = Robot.load(ARM)
    expected = arm.link_fk(dict(zip(ARM_JOINTS, values, strict=True)), link="wrist_1_link")

    def arm_resolved() -> bool:
        publisher.publish(message)  # again until heard: discovery may drop the first
        return fleet.resolved("arm/base_link", "arm/wrist_1_link", stamp_s) is not None

    wait_until(arm_resolved, what=lambda: f"arm/wrist_1_link ({fleet.stderr()[-800:]})")
    pose = fleet.resolved("arm/base_link", "arm/wrist_1_link", stamp_s)
    np.testing.assert_allclose(pose, expected, atol=1e-9)
    fleet.probe.node.destroy_publisher(publisher)
    base = Robot.load(BASE)
    wait_until(lambda: fleet.resolved("base/base_footprint", "base/base_link") is not None)
    np.testing.assert_allclose(
        fleet.resolved("base/base_footprint", "base/base_link"),
        base.joints["base_joint"].origin,
        atol=1e-9,
    )


def test_parameters_come_from_per_namespace_and_wildcard_keys(fleet: FleetUnderTest) -> None:
    """As for a process per robot: ``/<ns>/joint_tf_publisher:`` keys over ``/**`` ones."""
    assert fleet.get("/arm/joint_tf_publisher", "publish_frequency", "frame_prefix") == [
        77.0,
        "arm/",
    ]
    assert fleet.get(
        "/base/joint_tf_publisher", "publish_frequency", "ignore_timestamp", "frame_prefix"
    ) == [55.0, True, "base/"]
    assert fleet.get("/joint_tf_fleet", "robots") == [["arm", "base", "broken"]]
    # A key no robot declares (issue 47): that robot warns once, naming what was meant; the
    # fleet's own keys, in its section, are no robot's.
    lines = lambda: fleet.stderr().splitlines()  # noqa: E731
    warned = wait_until(
        lambda: [line for line in lines() if "none of its parameters" in line],
        what="the unknown key's warning",
    )
    assert len(warned) == 1, warned
    assert "[base.joint_tf_publisher]" in warned[0] and "'frame_prefx'" in warned[0]
    assert "did you mean frame_prefix" in warned[0]


def udp_ports(pid: int) -> set[int]:
    """The local UDP ports of the sockets process ``pid`` holds (/proc)."""
    inodes = set()
    for fd in os.listdir(f"/proc/{pid}/fd"):
        with contextlib.suppress(OSError):
            target = os.readlink(f"/proc/{pid}/fd/{fd}")
            if target.startswith("socket:["):
                inodes.add(target[len("socket:[") : -1])
    ports = set()
    for table in ("/proc/net/udp", "/proc/net/udp6"):
        for line in Path(table).read_text().splitlines()[1:]:
            fields = line.split()
            if fields[9] in inodes:
                ports.add(int(fields[1].rsplit(":", 1)[1], 16))
    return ports


def test_every_node_of_the_fleet_shares_one_dds_participant(fleet: FleetUnderTest) -> None:
    """The fleet process (3 nodes and more) holds the unicast ports of ONE DDS participant.

    DDSI-RTPS's well-known ports: participant ``i`` of domain ``d`` listens on
    7400 + 250 d + 10 + 2 i (discovery) and + 11 + 2 i (user data); a process whose nodes had
    a participant each would hold a pair per node."""
    domain = int(os.environ.get("ROS_DOMAIN_ID") or 0)
    base = 7400 + 250 * domain
    assert {"/joint_tf_fleet", "/arm/joint_tf_publisher", "/base/joint_tf_publisher"} <= (
        fleet.nodes()
    )
    unicast = [port for port in udp_ports(fleet.process.pid) if base + 10 <= port < base + 250]
    participants = {(port - base - 10) // 2 for port in unicast}
    assert len(participants) == 1, sorted(unicast)


def test_a_broken_robot_is_named_while_the_others_serve_then_fixed(fleet: FleetUnderTest) -> None:
    """The refused description's file and line in one log line and the fleet's status; the
    file fixed, the robot comes up without a restart."""
    where = f"{fleet.broken}:3: joint 'j': child link 'nowhere' does not exist"
    status = wait_until(
        lambda: (s := fleet.fleet_status()) is not None and s.level == DiagnosticStatus.ERROR and s,
        what="the fleet's ERROR status",
    )
    assert f"/broken: {where}" in status.message, status.message
    values = {value.key: value.value for value in status.values}
    assert values["/arm"] == "serving" and values["/base"] == "serving"
    assert values["/broken"] == f"refused: {where}"
    lines = [line for line in fleet.stderr().splitlines() if "robot /broken refused" in line]
    assert len(lines) == 1 and where in lines[0], lines  # once, though retried every second
    # Each retry (every second) makes its node and destroys it: off the graph between two.
    wait_until(
        lambda: "/broken/joint_tf_publisher" not in fleet.nodes(), what="/broken off the graph"
    )

    fleet.broken.write_text(ARM.read_text())
    wait_until(
        lambda: fleet.resolved("broken/tool_flange", "broken/gripper_base_link") is not None,
        what=lambda: f"the fixed robot's statics ({fleet.stderr()[-800:]})",
    )
    wait_until(
        lambda: (s := fleet.fleet_status()) is not None and s.level == DiagnosticStatus.OK,
        what="the fleet's OK status",
    )
    assert fleet.fleet_status().message == "3 robots serving"


def test_robots_added_and_removed_at_runtime(fleet: FleetUnderTest) -> None:
    """``robots`` set at runtime: the new robot starts (its parameters from the file), the
    removed one's node leaves the graph; the others are not restarted."""
    bad = fleet.set_robots(["arm", "extra", "no robot"])
    assert not bad.successful and "'no robot' is no robot namespace" in bad.reason
    starts = fleet.stderr().count("robot /arm serving")

    assert fleet.set_robots(["arm", "broken", "extra"]).successful
    wait_until(
        lambda: fleet.resolved("extra/world", "extra/pedestal") is not None,
        what=lambda: f"the added robot's statics ({fleet.stderr()[-800:]})",
    )
    wait_until(lambda: "/base/joint_tf_publisher" not in fleet.nodes(), what="/base to leave")
    assert "robot /base stopped" in fleet.stderr()
    assert fleet.stderr().count("robot /arm serving") == starts
    assert fleet.get("/extra/joint_tf_publisher", "frame_prefix", "publish_frequency") == [
        "extra/",
        77.0,
    ]


def test_a_robot_added_after_the_params_file_changed_reads_it_again(
    fleet: FleetUnderTest,
) -> None:
    """rcl read the file at the process's start; a robot whose section was added since
    starts with it all the same (the file handed to its node again)."""
    text = fleet.params.read_text()
    fleet.params.write_text(
        text + f"/late/joint_tf_publisher:\n  ros__parameters:\n"
        f"    description_file: {BASE}\n    frame_prefix: late/\n    publish_frequency: 33.0\n"
    )
    assert fleet.set_robots(["arm", "broken", "extra", "late"]).successful
    wait_until(
        lambda: "/late/joint_tf_publisher" in fleet.nodes(),
        what=lambda: f"the late robot ({fleet.stderr()[-800:]})",
    )
    assert fleet.get("/late/joint_tf_publisher", "frame_prefix", "publish_frequency") == [
        "late/",
        33.0,
    ]


def arm_tf_count(fleet: FleetUnderTest) -> int:
    """/tf messages of the ``arm`` robot the probe received."""
    return sum(
        1
        for msg in fleet.probe.tf.messages()
        if msg.transforms and msg.transforms[0].child_frame_id.startswith("arm/")
    )


def test_a_flooded_robot_does_not_starve_another(fleet: FleetUnderTest) -> None:
    """While ``arm`` gets JointStates at about 1 kHz (and publishes each), ``extra``'s
    parameter service answers, its latched statics reach a new subscriber and its health
    report goes on (one a second)."""
    node = fleet.probe.node
    publisher = node.create_publisher(JointState, "/arm/joint_states", 100)
    client = node.create_client(GetParameters, "/extra/joint_tf_publisher/get_parameters")
    assert client.wait_for_service(timeout_sec=WAIT_S)
    arm_tf_before = arm_tf_count(fleet)
    statics: list[TFMessage] = []
    # A latched sample from each robot's writer: a queue for them all.
    late_joiner = QoSProfile(
        depth=100,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    future = None
    reports_before = 0
    sent = 0
    flood_until = time.monotonic() + 3.0
    give_up = flood_until + WAIT_S

    def extra_reports() -> int:
        return sum(1 for s in fleet.diagnostics if s.hardware_id == "arm_mimic_gripper")

    def extra_statics() -> bool:
        return any(t.child_frame_id == "extra/pedestal" for msg in statics for t in msg.transforms)

    def done() -> bool:
        return (
            future is not None
            and future.done()
            and extra_statics()
            and extra_reports() - reports_before >= 2
        )

    while (time.monotonic() < flood_until or not done()) and time.monotonic() < give_up:
        message = JointState(name=ARM_JOINTS, position=[0.001 * (sent % 1000)] * 4)
        message.header.stamp = stamp_msg(fresh_stamp(0.001))
        publisher.publish(message)
        sent += 1
        fleet.probe.executor.spin_once(timeout_sec=0.0)
        time.sleep(0.001)
        if sent == 500:  # the flood is on: ask the other robot, join its statics late
            future = client.call_async(GetParameters.Request(names=["frame_prefix"]))
            node.create_subscription(TFMessage, "/tf_static", statics.append, late_joiner)
            reports_before = extra_reports()
    node.destroy_client(client)
    node.destroy_publisher(publisher)
    assert future is not None and future.done(), "no answer from extra while arm was flooded"
    assert _value(future.result().values[0]) == "extra/"
    assert extra_statics(), "extra's latched statics did not reach a late subscriber"
    assert extra_reports() - reports_before >= 2
    served = arm_tf_count(fleet) - arm_tf_before
    assert served > sent // 4, (sent, served)  # the flood was served, not dropped


def test_an_empty_array_of_any_type_clears_the_robots(fleet: FleetUnderTest) -> None:
    """``ros2 param set /joint_tf_fleet robots "[]"`` (ros2cli sends an empty BOOL_ARRAY)
    stops every robot; booleans that are not empty are refused; a list brings a robot back."""

    def set_value(value: ParameterValue) -> Any:
        request = SetParameters.Request(parameters=[ParameterMsg(name="robots", value=value)])
        return fleet.call(SetParameters, "/joint_tf_fleet/set_parameters", request).results[0]

    bools = ParameterType.PARAMETER_BOOL_ARRAY
    refused = set_value(ParameterValue(type=bools, bool_array_value=[True]))
    assert not refused.successful and "is no namespace" in refused.reason
    assert set_value(ParameterValue(type=bools, bool_array_value=[])).successful
    wait_until(
        lambda: not any(name.endswith("/joint_tf_publisher") for name in fleet.nodes()),
        what="every robot to leave the graph",
    )
    assert fleet.set_robots(["arm"]).successful
    wait_until(lambda: "/arm/joint_tf_publisher" in fleet.nodes(), what="/arm back")


def set_fleet(fleet: FleetUnderTest, name: str, value: ParameterValue) -> Any:
    """Set the fleet's parameter ``name`` to ``value`` (a ParameterValue as sent)."""
    request = SetParameters.Request(parameters=[ParameterMsg(name=name, value=value)])
    return fleet.call(SetParameters, "/joint_tf_fleet/set_parameters", request).results[0]


def test_robots_unset_at_runtime_is_refused_while_the_robots_serve_on(
    fleet: FleetUnderTest,
) -> None:
    """``ros2 param delete /joint_tf_fleet robots`` (a NOT_SET value): refused, naming the
    parameter; the robots serve on."""
    unset = set_fleet(fleet, "robots", ParameterValue(type=ParameterType.PARAMETER_NOT_SET))
    assert not unset.successful and "robots cannot be unset" in unset.reason
    assert fleet.get("/joint_tf_fleet", "robots") == [["arm"]]
    assert "/arm/joint_tf_publisher" in fleet.nodes()
    assert fleet.get("/arm/joint_tf_publisher", "frame_prefix") == ["arm/"]


def status_of(fleet: FleetUnderTest, namespace: str) -> str:
    """The robot's value in the fleet's latest status ("" before one names it)."""
    status = fleet.fleet_status()
    values = {value.key: value.value for value in status.values} if status else {}
    return str(values.get(namespace, ""))


def refused(fleet: FleetUnderTest, namespace: str) -> bool:
    return status_of(fleet, namespace).startswith("refused: ")


def test_a_refused_robot_is_retried_on_a_params_file_change_and_by_the_new_period(
    fleet: FleetUnderTest,
) -> None:
    """``retry_period`` 0 (sent as a whole number, as ros2cli sends it): a refused robot is
    retried only when a parameters file changes, and comes up then; ``retry_period`` set at
    runtime applies to the robots refused before it."""
    integer = ParameterType.PARAMETER_INTEGER
    zero = set_fleet(fleet, "retry_period", ParameterValue(type=integer, integer_value=0))
    assert zero.successful, zero.reason
    workdir = fleet.params.parent
    late_a, late_c = workdir / "late_a.urdf", workdir / "late_c.urdf"
    fleet.params.write_text(
        fleet.params.read_text()
        + "".join(
            f"/{name}/joint_tf_publisher:\n  ros__parameters:\n"
            f"    description_file: {path}\n    frame_prefix: {name}/\n"
            for name, path in (("late_a", late_a), ("late_c", late_c))
        )
    )
    assert fleet.set_robots(["arm", "late_a", "late_c"]).successful
    wait_until(
        lambda: refused(fleet, "/late_a") and refused(fleet, "/late_c"),
        what=lambda: f"late_a and late_c refused ({fleet.stderr()[-800:]})",
    )
    # The fleet took the 0: its refusal names the file change as the only retry.
    (line,) = [line for line in fleet.stderr().splitlines() if "robot /late_c refused" in line]
    assert line.endswith("tried again when the parameters files change)"), line
    late_a.write_text(BASE.read_text())
    # The only retry with retry_period 0: a parameters file changed (here: a comment added).
    fleet.params.write_text(fleet.params.read_text() + "# late_a fixed\n")
    wait_until(
        lambda: "/late_a/joint_tf_publisher" in fleet.nodes(),
        what=lambda: f"late_a retried on the file change ({fleet.stderr()[-800:]})",
    )
    # The status says late_a serves once the pass that retried both is over: late_c's retry
    # on the file change is behind it, so what brings late_c up below is the period alone.
    wait_until(lambda: status_of(fleet, "/late_a") == "serving", what="late_a serving")
    assert refused(fleet, "/late_c")
    late_c.write_text(BASE.read_text())  # no parameters file changes: only a period retries
    period = set_fleet(fleet, "retry_period", ParameterValue(type=integer, integer_value=1))
    assert period.successful, period.reason
    wait_until(
        lambda: "/late_c/joint_tf_publisher" in fleet.nodes(),
        what=lambda: f"late_c retried by the new period ({fleet.stderr()[-800:]})",
    )


def test_sigint_stops_every_robot_and_exits_0(fleet: FleetUnderTest) -> None:
    """Last in the module: the fleet stops on SIGINT, its nodes leave, exit code 0."""
    assert fleet.stop() == 0, fleet.stderr()[-2000:]
    assert "Traceback" not in fleet.stderr()
    wait_until(
        lambda: not {"/arm/joint_tf_publisher", "/joint_tf_fleet"} & fleet.nodes(),
        what="the fleet's nodes to leave the graph",
    )
