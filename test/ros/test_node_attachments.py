"""Attachments over DDS: an arm with a gripper on its flange, a tool change at runtime, an
attachment added and removed, bad attachments refused (the real console script).

One node for the module (DDS tests are costly): the sample arm (urdf/demo_arm.urdf) with
urdf/gripper.urdf on ``tool_flange``. Each test starts from that state and leaves the node
in it. The composition itself (names, SDFormat, errors) is tested without DDS in
test/description/test_compose.py.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import time
from collections.abc import Iterator
from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from node_harness import (  # noqa: E402
    RESEND_S,
    NodeUnderTest,
    Probe,
    Recorder,
    fresh_stamp,
    latched_qos,
    matrix_of,
    parameter_value,
    started,
    wait_until,
)
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.srv import ListParameters, SetParametersAtomically  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import REPO_ROOT  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.description.compose import Attachment, compose  # noqa: E402
from joint_tf_publisher.transforms import xyz_rpy_to_matrix  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
GRIPPER = REPO_ROOT / "urdf" / "gripper.urdf"
SUCTION = REPO_ROOT / "urdf" / "suction_tool.urdf"
ORIGIN = [0.0, 0.0, 0.01, 0.0, 0.0, 0.5]
NAMESPACE = "/tooled"
GRIPPER_FRAMES = {"tool_base_link", "tool_tcp"}  # its fixed joints (its fingers move)
SUCTION_FRAMES = {"tool_base_link", "tool_cup"}


class Tooled:
    """The node under test and what the probe records of it (live subscriptions)."""

    def __init__(self, node: NodeUnderTest, probe: Probe) -> None:
        self.node = node
        self.probe = probe
        self.statics = probe.subscribe(TFMessage, "/tf_static", latched_qos())
        self.descriptions = probe.subscribe(String, f"{NAMESPACE}/robot_description", latched_qos())
        self._atomic = probe.node.create_client(
            SetParametersAtomically, f"{NAMESPACE}/joint_tf_publisher/set_attachments"
        )
        self._list = probe.node.create_client(
            ListParameters, f"{NAMESPACE}/joint_tf_publisher/list_parameters"
        )
        wait_until(self.descriptions.messages, what="robot_description")
        wait_until(self.statics.messages, what="/tf_static")

    def set_attachments(self, **values: Any) -> Any:
        """One call of the node's ~/set_attachments (names with ``__`` for dots)."""
        request = SetParametersAtomically.Request()
        request.parameters = [
            ParameterMsg(name=name.replace("__", "."), value=parameter_value(value))
            for name, value in values.items()
        ]
        return self._call(self._atomic, request).result

    def parameter_names(self) -> set[str]:
        request = ListParameters.Request()
        request.prefixes = ["attachments"]
        return set(self._call(self._list, request).result.names)

    def _call(self, client: Any, request: Any) -> Any:
        assert client.wait_for_service(timeout_sec=20.0)
        futures = [client.call_async(request)]
        sent = [time.monotonic()]

        def answered() -> Any:
            done = next((future for future in futures if future.done()), None)
            if done is None and time.monotonic() - sent[0] > RESEND_S:
                futures.append(client.call_async(request))  # a lost reply (node_harness)
                sent[0] = time.monotonic()
            return done

        return wait_until(answered, what="a service response").result()

    def frames(self) -> dict[str, Any]:
        """The newest static set heard by the live subscription, by child frame."""
        return {t.child_frame_id: t for t in self.statics.messages()[-1].transforms}


@pytest.fixture(scope="module")
def tooled(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Tooled]:
    node = started(
        probe,
        tmp_path_factory,
        NAMESPACE,
        {
            "robot_description": ARM.read_text(),
            "attachments.names": ["gripper"],
            "attachments.gripper.file": str(GRIPPER),
            "attachments.gripper.parent": "tool_flange",
            "attachments.gripper.prefix": "tool_",
            "attachments.gripper.origin": ORIGIN,
        },
        handshake=("shoulder_pan_joint", "shoulder_link"),
    )
    yield Tooled(node, probe)
    node.stop()


def gripper(file: str = str(GRIPPER)) -> Attachment:
    return Attachment("gripper", "tool_flange", file=file, origin=tuple(ORIGIN), prefix="tool_")  # type: ignore[arg-type]


def test_the_gripper_hangs_from_the_flange_with_the_composed_description(
    tooled: Tooled,
) -> None:
    text = tooled.descriptions.messages()[-1].data
    assert text == compose(ARM.read_text(), [gripper()])
    robot = Robot.from_xml_string(text)
    statics = tooled.node.static_set()
    mount = statics["tool_base_link"]
    assert mount.header.frame_id == "tool_flange"
    np.testing.assert_allclose(
        matrix_of(mount.transform), xyz_rpy_to_matrix(ORIGIN[:3], ORIGIN[3:]), atol=1e-9
    )
    assert statics["tool_tcp"].header.frame_id == "tool_base_link"
    assert {"tool_flange", "gripper_base_link"} <= set(statics)  # the arm's own statics too
    # The gripper's joint moves with joint states, its mimic follower with it, clamped.
    stamp = fresh_stamp()
    msg = tooled.node.publish_and_wait(["tool_finger_joint"], [0.5], stamp, "tool_left_finger")
    moved = {t.child_frame_id: matrix_of(t.transform) for t in msg.transforms}
    expected = robot.link_fk({"tool_finger_joint": 0.5}, clamp="hard")
    base = expected["tool_base_link"]
    for frame in ("tool_left_finger", "tool_right_finger"):
        np.testing.assert_allclose(
            moved[frame], np.linalg.inv(base) @ expected[frame], atol=1e-9, err_msg=frame
        )
    assert moved["tool_left_finger"][1, 3] == pytest.approx(0.01 + 0.04)  # clamped at 0.04 m


def test_a_tool_change_republishes_description_and_statics_in_one_step(tooled: Tooled) -> None:
    descriptions, statics = len(tooled.descriptions), len(tooled.statics)
    (result,) = tooled.node.set_parameters(**{"attachments.gripper.file": str(SUCTION)})
    assert result.successful, result.reason
    try:
        wait_until(lambda: len(tooled.descriptions) > descriptions, what="the new description")
        wait_until(lambda: len(tooled.statics) > statics, what="the new static set")
        tooled.probe.spin_for(0.3)
        assert len(tooled.descriptions) == descriptions + 1
        assert len(tooled.statics) == statics + 1  # one complete set, not one per frame
        assert tooled.descriptions.messages()[-1].data == compose(
            ARM.read_text(), [gripper(str(SUCTION))]
        )
        frames = tooled.frames()
        assert SUCTION_FRAMES <= set(frames) and "tool_tcp" not in frames
        assert {"tool_flange", "gripper_base_link"} <= set(frames)
        assert frames["tool_base_link"].header.frame_id == "tool_flange"  # the same mount
        wait_until(
            lambda: re.search(
                r"^\[WARN\].*\btool_left_finger, tool_right_finger, tool_tcp\b",
                tooled.node.stderr(),
                re.MULTILINE,
            ),
            what="the frames that left, named",
        )
    finally:
        (back,) = tooled.node.set_parameters(**{"attachments.gripper.file": str(GRIPPER)})
    assert back.successful, back.reason
    wait_until(lambda: "tool_tcp" in tooled.frames(), what="the gripper back")


@pytest.mark.parametrize(
    ("values", "reason"),
    [
        (
            {"attachments.gripper.parent": "tool_flang"},
            r"^attachments\.gripper\.parent: no link 'tool_flang' in the robot or an earlier "
            r"attachment; did you mean tool_flange",
        ),
        (
            {"attachments.gripper.file": str(REPO_ROOT / "urdf" / "missing.urdf")},
            r"^attachments\.gripper\.file: cannot read .*missing\.urdf: No such file",
        ),
        (
            {"attachments.gripper.prefix": ""},
            r"^attachments\.gripper: link 'base_link' is already in the robot",
        ),
        (
            # not in a folder allowed at runtime (the start's files are in urdf/)
            {"attachments.gripper.file": str(REPO_ROOT / "README.md")},
            r"^attachments\.gripper\.file: cannot read /.*/README\.md: refused at runtime: .*"
            r"outside the folders allowed .* allowed_description_folders",
        ),
        (  # a new robot description must keep the links its attachments hang from
            {"robot_description": ARM.read_text().replace('"tool_flange"', '"flange"')},
            r"^attachments\.gripper\.parent: no link 'tool_flange' in the robot",
        ),
        (
            {"attachments.names": ["gripper", "camera"]},
            r"'camera' is new: add it together with its attachments\.camera\.\* parameters in "
            r"one call of the node's ~/set_attachments service",
        ),
    ],
    ids=[
        "missing-parent",
        "missing-file",
        "name-clash",
        "does-not-load",
        "robot-without-parent",
        "new-name",
    ],
)
def test_a_bad_attachment_is_refused_with_its_reason_and_the_old_tool_stays(
    tooled: Tooled, values: dict[str, Any], reason: str
) -> None:
    statics, descriptions = len(tooled.statics), len(tooled.descriptions)
    results = tooled.node.set_parameters(**values)
    assert not results[0].successful
    assert re.search(reason, results[0].reason), results[0].reason
    tooled.probe.spin_for(0.3)
    assert (len(tooled.statics), len(tooled.descriptions)) == (statics, descriptions)
    assert GRIPPER_FRAMES <= set(tooled.node.static_set())


def test_an_attachment_is_added_in_one_call_and_removed_in_one_set(tooled: Tooled) -> None:
    refused = tooled.set_attachments(
        attachments__names=["gripper", "cup"],
        attachments__cup__file=str(SUCTION),
        attachments__cup__parent="tool_tpc",
    )
    assert not refused.successful and "no link 'tool_tpc'" in refused.reason
    broken = tooled.set_attachments(
        attachments__names=["gripper", "cup"],
        attachments__cup__description="<robot name='cup'>\n<link name='a'>\n</robot>",
        attachments__cup__parent="tool_tcp",
    )
    assert not broken.successful
    assert re.match(r"attachments\.cup\.description:3: ", broken.reason), broken.reason
    assert not any(name.startswith("attachments.cup.") for name in tooled.parameter_names())
    statics = len(tooled.statics)
    added = tooled.set_attachments(
        attachments__names=["gripper", "cup"],
        attachments__cup__file=str(SUCTION),
        attachments__cup__parent="tool_tcp",
        attachments__cup__prefix="cup_",
    )
    assert added.successful, added.reason
    wait_until(lambda: "cup_cup" in tooled.frames(), what="the cup's frames")
    assert len(tooled.statics) == statics + 1  # declared first, composed once
    assert tooled.frames()["cup_base_link"].header.frame_id == "tool_tcp"
    assert {f"attachments.cup.{f}" for f in ("file", "parent", "prefix", "origin")} <= (
        tooled.parameter_names()
    )
    (removed,) = tooled.node.set_parameters(**{"attachments.names": ["gripper"]})
    assert removed.successful, removed.reason
    wait_until(lambda: "cup_cup" not in tooled.frames(), what="the cup's frames gone")
    assert GRIPPER_FRAMES <= set(tooled.frames())
    assert not any(name.startswith("attachments.cup.") for name in tooled.parameter_names())


def cli(*arguments: str) -> subprocess.CompletedProcess[str]:
    """``joint-tf-publisher ARGUMENTS`` for the module's node, in a process of its own."""
    command = [sys.executable, "-m", "joint_tf_publisher.cli.main", *arguments]
    command += ["--node", f"{NAMESPACE}/joint_tf_publisher"]
    return subprocess.run(command, capture_output=True, text=True, timeout=60)


def test_the_attach_and_detach_commands_take_one_call_each(tooled: Tooled) -> None:
    refused = cli("attach", f"cup:{SUCTION}@tool_tpc::cup_")
    assert refused.returncode == 1
    assert "refused: attachments.cup.parent: no link 'tool_tpc'" in refused.stderr
    attached = cli("attach", f"cup:{SUCTION}@tool_tcp:0,0,0.01,0,0,0:cup_")
    assert attached.returncode == 0, attached.stderr
    wait_until(lambda: "cup_cup" in tooled.frames(), what="the cup's frames")
    mount = tooled.frames()["cup_base_link"]
    assert mount.header.frame_id == "tool_tcp"
    assert mount.transform.translation.z == pytest.approx(0.01)
    detached = cli("detach", "cup")
    assert detached.returncode == 0, detached.stderr
    wait_until(lambda: "cup_base_link" not in tooled.frames(), what="the cup's frames gone")
    assert GRIPPER_FRAMES <= set(tooled.frames())


def static_sets(probe: Probe) -> Recorder:
    """The latched static sets of every node from now on (one sample per writer: depth
    100), each message a node's complete set."""
    every_set = QoSProfile(
        depth=100,
        reliability=ReliabilityPolicy.RELIABLE,
        durability=DurabilityPolicy.TRANSIENT_LOCAL,
    )
    return probe.subscribe(TFMessage, "/tf_static", every_set)


def newest_set_with(sets: Recorder, frame: str) -> dict[str, Any]:
    """The newest static set that holds ``frame``, by child frame; {} before one came."""
    found = [m for m in sets.messages() if any(t.child_frame_id == frame for t in m.transforms)]
    return {t.child_frame_id: t for t in found[-1].transforms} if found else {}


def test_attachments_compose_onto_a_description_from_the_topic(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """With description_from_topic the attachments hang from the robot heard on the topic
    (the node publishes its transforms, not the topic it reads). Its frames are prefixed
    t/, apart from the module's node's."""
    node = started(
        probe,
        tmp_path_factory,
        "/topic_tooled",
        {
            "description_from_topic": True,
            "frame_prefix": "t/",
            "attachments.names": ["gripper"],
            "attachments.gripper.file": str(GRIPPER),
            "attachments.gripper.parent": "tool_flange",
            "attachments.gripper.prefix": "tool_",
        },
        handshake=None,
    )
    sets = static_sets(probe)
    try:
        publisher = probe.node.create_publisher(String, node.description_topic, latched_qos())
        publisher.publish(String(data=ARM.read_text()))
        statics = wait_until(lambda: newest_set_with(sets, "t/tool_tcp"), what="the gripper")
        assert statics["t/tool_base_link"].header.frame_id == "t/tool_flange"
        assert probe.node.count_publishers(node.description_topic) == 1  # the probe's only
    finally:
        assert node.stop() == 0


def test_attachments_stay_on_a_description_file_through_its_saves(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """With description_file the attachments hang from the file's robot, and from each
    save of it that loads (frames prefixed f/, apart from the other nodes')."""
    folder = tmp_path_factory.mktemp("edited_arm")
    arm = folder / "arm.urdf"
    arm.write_text(ARM.read_text())
    node = started(
        probe,
        tmp_path_factory,
        "/file_tooled",
        {
            "description_file": str(arm),
            "frame_prefix": "f/",
            "attachments.names": ["gripper"],
            "attachments.gripper.file": str(GRIPPER),
            "attachments.gripper.parent": "tool_flange",
            "attachments.gripper.prefix": "tool_",
        },
        handshake=None,
    )
    sets = static_sets(probe)
    try:
        wait_until(lambda: newest_set_with(sets, "f/tool_tcp"), what="the gripper's statics")
        moved = ARM.read_text().replace(
            '<child link="tool_flange"/>\n    <origin xyz="0 0 0.02"',
            '<child link="tool_flange"/>\n    <origin xyz="0 0 0.05"',
        )
        assert moved != ARM.read_text()
        temporary = arm.with_name("arm.urdf.swp")  # saved as an editor saves
        temporary.write_text(moved)
        os.replace(temporary, arm)
        statics = wait_until(
            lambda: (
                (found := newest_set_with(sets, "f/tool_flange"))
                and found["f/tool_flange"].transform.translation.z == pytest.approx(0.05)
                and found
            ),
            what="the saved flange",
        )
        assert statics["f/tool_tcp"].header.frame_id == "f/tool_base_link"
        assert statics["f/tool_base_link"].header.frame_id == "f/tool_flange"
    finally:
        assert node.stop() == 0
