"""``description_file`` over DDS: the console script reads a URDF file, and a save reaches
/tf_static, robot_description and /tf; a broken save keeps the running model and says why
(file:line) in one log line and the health report on /diagnostics; the next good save loads.
The parameters that give the description are exclusive (``ros2 param set`` refused naming
them; at start: test_node_e2e.py's startup errors). Runtime changes of ``description_file``
and ``description_args`` load the new file, or are refused with the reason. A xacro include
saved unreadable is refused, and loads once a ``chmod`` makes it readable, without a new save
(the node reads files as a user does, also where the tests run as root: ``READS_AS_A_USER``).

One node serves the module (its tests run in order, each saving the file it needs first).
Which saves load, and what the reasons say, is test/node_core/test_description_source.py.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("diagnostic_msgs.msg", reason="needs diagnostic_msgs (run in .venv)")

from diagnostic_msgs.msg import DiagnosticArray, DiagnosticStatus  # noqa: E402
from node_harness import (  # noqa: E402
    READS_AS_A_USER,
    WAIT_S,
    NodeUnderTest,
    Probe,
    fresh_stamp,
    latched_qos,
    matrix_of,
    parameter_value,
    started,
    wait_until,
)
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.srv import SetParametersAtomically  # noqa: E402
from rclpy.qos import QoSProfile, ReliabilityPolicy  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.health.model import Key  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NAMESPACE = "/edited"
STATUS_NAME = "joint_tf_publisher: joint states"
#: The issue's bound: a save on disk reaches /tf_static within this, seconds.
SAVE_TO_TF_STATIC_S = 2.0

ROBOT = """<robot name="edited">
  <link name="base"/>
  <link name="arm"/>
  <link name="{tool}"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/>
    <child link="arm"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="mount" type="fixed">
    <parent link="arm"/>
    <child link="{tool}"/>
    <origin xyz="{x} 0 0"/>
  </joint>
</robot>
"""
#: Line 11: the fixed joint's child link does not exist.
BROKEN = ROBOT.replace(
    '<child link="{tool}"/>\n    <origin', '<child link="nowhere"/>\n    <origin'
)

XACRO = """<robot name="edited" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="tool" default="tool"/>
  <link name="base"/>
  <link name="arm"/>
  <link name="$(arg tool)"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/>
    <child link="arm"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
  <joint name="mount" type="fixed">
    <parent link="arm"/>
    <child link="$(arg tool)"/>
    <origin xyz="0.9 0 0"/>
  </joint>
</robot>
"""

#: ROBOT's parts: the arm (its shoulder) and the tool on its mount.
_SHOULDER = ROBOT[ROBOT.index('  <joint name="shoulder"') : ROBOT.index('  <joint name="mount"')]
_MOUNT = ROBOT[ROBOT.index('  <joint name="mount"') : ROBOT.index("</robot>")]
_XMLNS = 'xmlns:xacro="http://www.ros.org/wiki/xacro"'
#: A xacro file of ROBOT whose tool and mount come from the file it includes.
INCLUDING_XACRO = (
    f'<robot name="edited" {_XMLNS}>\n  <link name="base"/>\n  <link name="arm"/>\n'
    + _SHOULDER.replace("{", "{{").replace("}", "}}")
    + '  <xacro:include filename="{include}"/>\n</robot>\n'
)
#: The included file: ROBOT's tool and mount (``{x}``).
MOUNT_XACRO = (
    f'<robot {_XMLNS}>\n  <link name="tool"/>\n' + _MOUNT.replace("{tool}", "tool") + "</robot>\n"
)


def save(path: Path, text: str, mode: int = 0o644) -> None:
    """Save as an editor does: a new file renamed over the old one (with permissions ``mode``,
    given before it arrives: a save of mode 0 is never readable)."""
    temporary = path.with_name(path.name + ".swp")
    temporary.write_text(text)
    temporary.chmod(mode)
    os.replace(temporary, path)


class Watcher:
    """The probe's own /tf_static (latched) and /diagnostics subscriptions, kept for the
    module, with each message's arrival time (monotonic seconds)."""

    def __init__(self, probe: Probe) -> None:
        self.statics: list[tuple[float, TFMessage]] = []
        self.statuses: list[DiagnosticStatus] = []
        probe.node.create_subscription(
            TFMessage,
            "/tf_static",
            lambda m: self.statics.append((time.monotonic(), m)),
            latched_qos(),
        )
        probe.node.create_subscription(
            DiagnosticArray,
            "/diagnostics",
            self._on_array,
            QoSProfile(depth=100, reliability=ReliabilityPolicy.RELIABLE),
        )

    def _on_array(self, array: DiagnosticArray) -> None:
        self.statuses += [status for status in array.status if status.name == STATUS_NAME]

    def mount(self, start: int = 0) -> tuple[float, str, float] | None:
        """(arrival, tool frame, x) of the newest /tf_static set since ``start``."""
        for arrival, msg in reversed(self.statics[start:]):
            for t in msg.transforms:
                if t.header.frame_id == "arm":
                    return arrival, t.child_frame_id, t.transform.translation.x
        return None

    def wait_mount(self, start: int, tool: str, x: float) -> float:
        """Wait for a /tf_static set since ``start`` with ``tool`` at ``x``; its arrival."""
        found = wait_until(
            lambda: (m := self.mount(start)) and m[1:] == (tool, pytest.approx(x)) and m,
            what=lambda: f"/tf_static with {tool} at x={x} (newest: {self.mount()})",
        )
        return float(found[0])

    def report(self, start: int, condition: Any) -> dict[str, str]:
        """The values of the first health report since ``start`` for which ``condition``
        (of its values by key) holds."""

        def found() -> dict[str, str] | None:
            for status in self.statuses[start:]:
                values = {value.key: value.value for value in status.values}
                if condition(values):
                    return values
            return None

        return wait_until(found, what=lambda: f"a health report ({self.statuses[-1:]})")


@pytest.fixture(scope="module")
def robot_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("description") / "robot.urdf"
    save(path, ROBOT.format(tool="tool", x=0.1))
    return path


@pytest.fixture(scope="module")
def watcher(probe: Probe) -> Watcher:
    return Watcher(probe)


@pytest.fixture(scope="module")
def node(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory, robot_file: Path, watcher: Watcher
) -> Iterator[NodeUnderTest]:
    params = {"description_file": str(robot_file), "diagnostic_period": 0.25}
    node = started(
        probe,
        tmp_path_factory,
        NAMESPACE,
        params,
        handshake=("shoulder", "arm"),
        launcher=READS_AS_A_USER,
    )
    yield node
    node.stop()


def set_atomically(node: NodeUnderTest, **values: Any) -> Any:
    """One SetParametersAtomically call (``ros2 param set`` sets one parameter at a time)."""
    client = node.probe.node.create_client(
        SetParametersAtomically, f"{NAMESPACE}/joint_tf_publisher/set_parameters_atomically"
    )
    try:
        assert client.wait_for_service(timeout_sec=WAIT_S)
        request = SetParametersAtomically.Request()
        request.parameters = [
            ParameterMsg(name=name, value=parameter_value(value)) for name, value in values.items()
        ]
        future = client.call_async(request)
        wait_until(future.done, what="set_parameters_atomically response")
        return future.result().result
    finally:
        node.probe.node.destroy_client(client)


def test_the_file_is_read_at_start(node: NodeUnderTest, robot_file: Path, watcher: Watcher) -> None:
    watcher.wait_mount(0, "tool", 0.1)
    assert f"description_file: watching {robot_file} for saves" in node.stderr()
    description = node.probe.subscribe(String, node.description_topic, latched_qos())
    wait_until(
        lambda: [m.data for m in description.messages()] == [robot_file.read_text()],
        what="the file's text on robot_description",
    )


def test_a_save_reaches_tf_static_within_2_s(
    node: NodeUnderTest, robot_file: Path, watcher: Watcher
) -> None:
    description = node.probe.subscribe(String, node.description_topic, latched_qos())
    start = len(watcher.statics)
    text = ROBOT.format(tool="tool", x=0.25)
    saved = time.monotonic()
    save(robot_file, text)
    arrived = watcher.wait_mount(start, "tool", 0.25)
    assert arrived - saved < SAVE_TO_TF_STATIC_S
    wait_until(lambda: description.messages()[-1].data == text, what="the saved robot_description")
    # The new set is the latched one a late subscriber gets.
    late = node.static_set()
    assert matrix_of(late["tool"].transform)[0, 3] == pytest.approx(0.25)


def test_a_broken_save_keeps_the_model_says_why_once_and_a_good_save_loads(
    node: NodeUnderTest, robot_file: Path, watcher: Watcher
) -> None:
    save(robot_file, ROBOT.format(tool="tool", x=0.3))
    watcher.wait_mount(0, "tool", 0.3)
    statics, reports = len(watcher.statics), len(watcher.statuses)
    save(robot_file, BROKEN.format(tool="tool", x=0.4))
    reason = (
        f"description_file not reloaded, the running model stays: {robot_file}:11: "
        "joint 'mount': child link 'nowhere' does not exist"
    )
    refused = watcher.report(reports, lambda v: v[Key.REFUSED_DESCRIPTION] == reason)
    assert refused[Key.ROBOT] == "edited"
    # 3 s (six polls) later: still one log line, no new static set, the old model publishes.
    later = len(watcher.statuses)
    wait_until(lambda: len(watcher.statuses) >= later + 12, what="3 s of health reports")
    assert node.stderr().count(reason) == 1, node.stderr()
    assert len(watcher.statics) == statics
    msg = node.publish_and_wait(["shoulder"], [0.5], fresh_stamp(), "arm")
    (moved,) = [t for t in msg.transforms if t.child_frame_id == "arm"]
    assert moved.transform.rotation.z == pytest.approx(0.24740395925452294)  # sin(0.25)
    # The next good save loads and the report no longer names a refusal.
    save(robot_file, ROBOT.format(tool="tool", x=0.5))
    watcher.wait_mount(statics, "tool", 0.5)
    reports = len(watcher.statuses)
    watcher.report(reports, lambda v: v[Key.REFUSED_DESCRIPTION] == "")


def test_a_second_source_is_refused_naming_the_parameters(
    node: NodeUnderTest, robot_file: Path, watcher: Watcher
) -> None:
    (result,) = node.set_parameters(robot_description=ROBOT.format(tool="other", x=0.7))
    assert not result.successful
    assert result.reason.startswith(
        "robot_description and description_file both give the robot description: set exactly "
        "one of robot_description, description_file and description_from_topic"
    )
    (result,) = node.set_parameters(description_file="")
    assert not result.successful
    assert "parameter robot_description is empty" in result.reason
    # Nothing changed: the file is still watched.
    start = len(watcher.statics)
    save(robot_file, ROBOT.format(tool="tool", x=0.6))
    watcher.wait_mount(start, "tool", 0.6)


def test_a_new_file_and_new_xacro_arguments_load_at_runtime(
    node: NodeUnderTest, robot_file: Path, watcher: Watcher
) -> None:
    pytest.importorskip("xacro")
    xacro_file = robot_file.with_name("robot.urdf.xacro")
    save(xacro_file, XACRO)
    start = len(watcher.statics)
    (result,) = node.set_parameters(description_file=str(xacro_file))
    assert result.successful, result.reason
    watcher.wait_mount(start, "tool", 0.9)
    assert f"description_file: watching {xacro_file} for saves" in node.stderr()
    start = len(watcher.statics)
    (result,) = node.set_parameters(description_args=["tool:=gripper"])
    assert result.successful, result.reason
    watcher.wait_mount(start, "gripper", 0.9)
    # A file that does not load is refused with its reason; nothing changes.
    broken = robot_file.with_name("broken.urdf")
    save(broken, BROKEN.format(tool="tool", x=0.1))
    result = set_atomically(node, description_file=str(broken), description_args=[])
    assert not result.successful
    assert result.reason == f"{broken}:11: joint 'mount': child link 'nowhere' does not exist"
    assert node.static_set()["gripper"].header.frame_id == "arm"
    start = len(watcher.statics)
    save(xacro_file, XACRO.replace("0.9 0 0", "0.95 0 0"))  # the file kept is still watched
    watcher.wait_mount(start, "gripper", 0.95)


def test_one_atomic_change_switches_between_text_and_file(
    node: NodeUnderTest, robot_file: Path, watcher: Watcher
) -> None:
    start = len(watcher.statics)
    text = ROBOT.format(tool="camera", x=0.8)
    result = set_atomically(node, robot_description=text, description_file="")
    assert result.successful, result.reason
    watcher.wait_mount(start, "camera", 0.8)
    start = len(watcher.statics)
    result = set_atomically(
        node, robot_description="", description_file=str(robot_file), description_args=[]
    )
    assert result.successful, result.reason
    watcher.wait_mount(start, "tool", 0.6)


def test_an_include_saved_unreadable_loads_once_a_chmod_makes_it_readable(
    node: NodeUnderTest, robot_file: Path, watcher: Watcher
) -> None:
    """The file watch reads again a file it could not read (robustness.md: a chmod's change
    time is part of the stamp): an include saved unreadable with the main file unchanged, and
    a new include named by a save of the main file, each refused naming it and loaded by the
    chmod alone."""
    pytest.importorskip("xacro")
    main = robot_file.with_name("including.urdf.xacro")
    mount = robot_file.with_name("mount.xacro")
    save(mount, MOUNT_XACRO.format(x=0.11))
    save(main, INCLUDING_XACRO.format(include=mount.name))
    start = len(watcher.statics)
    result = set_atomically(node, description_file=str(main), description_args=[])
    assert result.successful, result.reason
    watcher.wait_mount(start, "tool", 0.11)
    refused = f"description_file not reloaded, the running model stays: {main}: xacro failed: "
    cases = ((mount, False, 0.12), (mount.with_name("new.xacro"), True, 0.13))
    for include, saved_main, x in cases:
        statics, reports = len(watcher.statics), len(watcher.statuses)
        save(include, MOUNT_XACRO.format(x=x), mode=0)
        if saved_main:
            save(main, INCLUDING_XACRO.format(include=include.name))
        reason = watcher.report(reports, lambda v: v[Key.REFUSED_DESCRIPTION].startswith(refused))[
            Key.REFUSED_DESCRIPTION
        ]
        assert f"Permission denied: {include}" in reason, reason
        assert len(watcher.statics) == statics  # the running model stays
        include.chmod(0o644)  # no save: only the change time moves
        watcher.wait_mount(statics, "tool", x)
        watcher.report(len(watcher.statuses), lambda v: v[Key.REFUSED_DESCRIPTION] == "")


def test_a_topic_description_that_does_not_load_is_in_the_health_report(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory, watcher: Watcher
) -> None:
    """The same report for the other runtime source: until one loads, and after."""
    params = {"description_from_topic": True, "diagnostic_period": 0.25}
    node = started(probe, tmp_path_factory, "/from_topic", params, handshake=None)
    try:
        publisher = probe.node.create_publisher(String, node.description_topic, latched_qos())
        reports = len(watcher.statuses)
        publisher.publish(String(data="<robot name='broken'><link name='a'/>"))
        refused = watcher.report(
            reports,
            lambda v: v[Key.REFUSED_DESCRIPTION].startswith(
                "robot description from topic rejected: robot_description topic:1: "
            ),
        )
        assert refused[Key.ROBOT] == ""  # none loaded yet: no model stays
        publisher.publish(String(data=ROBOT.format(tool="tool", x=0.2).replace("edited", "topic")))
        reports = len(watcher.statuses)
        loaded = watcher.report(reports, lambda v: v[Key.ROBOT] == "topic")
        assert loaded[Key.REFUSED_DESCRIPTION] == ""
    finally:
        assert node.stop() == 0
