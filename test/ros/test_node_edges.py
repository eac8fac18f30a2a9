"""The node's edges over DDS: requests and messages that ended the node end nothing now.

One node for the module (the real console script): the sample arm with urdf/gripper.urdf on
``tool_flange``, ``ignore_timestamp`` (every valid JointState is published). Each test leaves
it in that state. What it proves, each failing before issue #36's fixes (the node died): an
attachment file whose path holds ``--``; ``~nosuchuser``; an atomic change that removes a
name and sets its field, then ``attach`` of that name; junk bytes on ``joint_states`` and on
``multi_dof_joint_states``; an empty array as ros2cli sends ``"[]"`` (a BOOL_ARRAY); and a
few seconds of random and mutated serialized JointStates, every valid one in between
served. The policy (counts, log lines) is tested without DDS in
test/node_core/test_callback_edge.py.
"""

from __future__ import annotations

import random
import re
import shutil
import struct
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from diagnostic_msgs.msg import DiagnosticArray  # noqa: E402
from node_harness import (  # noqa: E402
    RESEND_S,
    NodeUnderTest,
    Probe,
    fresh_stamp,
    latched_qos,
    parameter_value,
    stamp_msg,
    started,
    wait_until,
)
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.msg import ParameterType, ParameterValue  # noqa: E402
from rcl_interfaces.srv import SetParameters, SetParametersAtomically  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from rclpy.serialization import serialize_message  # noqa: E402
from repo_paths import REPO_ROOT  # noqa: E402
from sensor_msgs.msg import JointState, MultiDOFJointState  # noqa: E402
from std_msgs.msg import String  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher.cli.attach import attach_values  # noqa: E402
from joint_tf_publisher.description.compose import Attachment  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
GRIPPER = REPO_ROOT / "urdf" / "gripper.urdf"
SUCTION = REPO_ROOT / "urdf" / "suction_tool.urdf"
NAMESPACE = "/edges"
NODE = f"{NAMESPACE}/joint_tf_publisher"
GRIPPER_FIELDS = {
    "attachments.gripper.file": str(GRIPPER),
    "attachments.gripper.parent": "tool_flange",
    "attachments.gripper.prefix": "tool_",
}
#: Arm joints and the frame each moves (the fuzz's valid messages).
ARM_JOINTS = ["shoulder_pan_joint", "shoulder_lift_joint", "elbow_joint"]
CHILD = "shoulder_link"
#: How long the fuzz runs, seconds.
FUZZ_S = 3.0


class Edged:
    """The node under test, its services and what the probe records of it."""

    def __init__(self, node: NodeUnderTest, probe: Probe, folder: Path) -> None:
        self.node = node
        self.probe = probe
        #: A folder the node may read at runtime (``allowed_description_folders``).
        self.folder = folder
        self.statics = probe.subscribe(TFMessage, "/tf_static", latched_qos())
        self.descriptions = probe.subscribe(String, f"{NAMESPACE}/robot_description", latched_qos())
        diagnostics_qos = QoSProfile(
            depth=100,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.VOLATILE,
        )
        self.diagnostics = probe.subscribe(DiagnosticArray, "/diagnostics", diagnostics_qos)
        self._attachments = probe.node.create_client(
            SetParametersAtomically, f"{NODE}/set_attachments"
        )
        self._atomic = probe.node.create_client(
            SetParametersAtomically, f"{NODE}/set_parameters_atomically"
        )
        self._set = probe.node.create_client(SetParameters, f"{NODE}/set_parameters")
        wait_until(self.descriptions.messages, what="robot_description")

    def alive(self) -> bool:
        return self.node.process.poll() is None

    def set_attachments(self, values: dict[str, Any]) -> Any:
        """One call of the node's ~/set_attachments."""
        return self._call(self._attachments, _request(SetParametersAtomically, values)).result

    def set_atomically(self, values: dict[str, Any]) -> Any:
        """One call of rclpy's set_parameters_atomically (``ros2 param load``'s kind)."""
        return self._call(self._atomic, _request(SetParametersAtomically, values)).result

    def set_typed(self, name: str, value: ParameterValue) -> Any:
        """set_parameters of one parameter with exactly ``value``'s type."""
        request = SetParameters.Request()
        request.parameters = [ParameterMsg(name=name, value=value)]
        return self._call(self._set, request).results[0]

    def _call(self, client: Any, request: Any) -> Any:
        assert client.wait_for_service(timeout_sec=20.0)
        futures = [client.call_async(request)]
        sent = [time.monotonic()]

        def answered() -> Any:
            done = next((future for future in futures if future.done()), None)
            if done is None and time.monotonic() - sent[0] > RESEND_S:
                assert self.alive(), self.node.stderr()[-2000:]
                futures.append(client.call_async(request))  # a lost reply (node_harness)
                sent[0] = time.monotonic()
            return done

        return wait_until(answered, what="a service response").result()

    def frames(self) -> set[str]:
        return {t.child_frame_id for t in self.statics.messages()[-1].transforms}

    def served(self, stamp_s: float) -> None:
        """A valid JointState stamped ``stamp_s`` is published on /tf (sent again each
        second until seen: best effort); fails with the node's stderr if it died."""
        assert self.alive(), self.node.stderr()[-2000:]
        self.node.publish_and_wait(ARM_JOINTS, [0.1, 0.2, 0.3], stamp_s, CHILD)

    def reported(self, key: str, text: str) -> bool:
        """Some /diagnostics report of the node had ``text`` in its value ``key``."""
        for array in self.diagnostics.messages():
            for status in array.status:
                values = {item.key: item.value for item in status.values}
                if status.hardware_id == "demo_arm" and text in values.get(key, ""):
                    return True
        return False


def _request(service: Any, values: dict[str, Any]) -> Any:
    request = service.Request()
    request.parameters = [
        ParameterMsg(name=name, value=parameter_value(value)) for name, value in values.items()
    ]
    return request


@pytest.fixture(scope="module")
def edged(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Edged]:
    folder = tmp_path_factory.mktemp("allowed")
    node = started(
        probe,
        tmp_path_factory,
        NAMESPACE,
        {
            "robot_description": ARM.read_text(),
            "ignore_timestamp": True,
            "diagnostic_period": 0.5,
            "attachments.names": ["gripper"],
            **GRIPPER_FIELDS,
            "allowed_description_folders": [str(folder)],
        },
        handshake=(ARM_JOINTS[0], CHILD),
    )
    yield Edged(node, probe, folder)
    assert node.stop() == 0, node.stderr()[-2000:]


# -- requests --------------------------------------------------------------------------------


def test_an_attachment_file_whose_path_holds_two_dashes_loads(edged: Edged) -> None:
    """The composed URDF names the file in a comment, where ``--`` cannot stand (lxml
    raised ValueError out of the parameter callback)."""
    dashed = edged.folder / "gripper--v2.urdf"
    shutil.copy(GRIPPER, dashed)
    descriptions = len(edged.descriptions)
    (result,) = edged.node.set_parameters(**{"attachments.gripper.file": str(dashed)})
    try:
        assert result.successful, result.reason
        wait_until(lambda: len(edged.descriptions) > descriptions, what="the new description")
        assert f"from {edged.folder}/gripper-%2Dv2.urdf " in edged.descriptions.messages()[-1].data
    finally:
        (back,) = edged.node.set_parameters(**{"attachments.gripper.file": str(GRIPPER)})
    assert back.successful, back.reason
    edged.served(fresh_stamp())


def test_a_home_folder_of_no_user_is_refused_naming_the_parameter(edged: Edged) -> None:
    path = "~nosuchuser_jtp/g.urdf"
    (result,) = edged.node.set_parameters(**{"attachments.gripper.file": path})
    assert not result.successful
    assert result.reason == (
        "attachments.gripper.file: cannot expand '~nosuchuser_jtp/g.urdf': no home folder "
        "for user 'nosuchuser_jtp'"
    )
    refused = edged.set_attachments(
        {"attachments.names": ["gripper"], **GRIPPER_FIELDS, "attachments.gripper.file": path}
    )
    assert not refused.successful and "no home folder" in refused.reason
    edged.served(fresh_stamp())


def cup_values(names: tuple[str, ...]) -> dict[str, Any]:
    """What ``joint-tf-publisher attach cup:SUCTION@tool_tcp::cup_`` sends."""
    return attach_values(Attachment("cup", "tool_tcp", file=str(SUCTION), prefix="cup_"), names)


@pytest.mark.parametrize("field_first", [False, True], ids=["names-first", "field-first"])
def test_an_atomic_change_of_names_with_a_field_then_attach_of_that_name(
    edged: Edged, field_first: bool
) -> None:
    """rclpy stores a parameter its atomic change sets after the node's callback returns:
    a field of a name the change removes stayed declared behind the node's back, and the
    next ``attach`` of that name raised ParameterAlreadyDeclaredException."""
    attached = edged.set_attachments(cup_values(("gripper",)))
    assert attached.successful, attached.reason
    wait_until(lambda: "cup_cup" in edged.frames(), what="the cup's frames")
    change: list[tuple[str, Any]] = [
        ("attachments.names", ["gripper"]),
        ("attachments.cup.prefix", "cup2_"),
    ]
    if field_first:
        change.reverse()
    removed = edged.set_atomically(dict(change))
    assert removed.successful, removed.reason
    wait_until(lambda: "cup_cup" not in edged.frames(), what="the cup's frames gone")
    # Adding a name with its field through rclpy's own service: refused (undeclared), alive.
    added = edged.set_atomically(
        {"attachments.names": ["gripper", "mug"], "attachments.mug.file": str(SUCTION)}
    )
    assert not added.successful
    again = edged.set_attachments(cup_values(("gripper",)))
    assert again.successful, again.reason
    wait_until(lambda: "cup_cup" in edged.frames(), what="the cup's frames again")
    (detached,) = edged.node.set_parameters(**{"attachments.names": ["gripper"]})
    assert detached.successful, detached.reason
    wait_until(lambda: "cup_cup" not in edged.frames(), what="the cup's frames gone again")
    edged.served(fresh_stamp())


#: An empty array as ros2cli sends ``"[]"``.
EMPTY_BOOL_ARRAY = ParameterValue(type=ParameterType.PARAMETER_BOOL_ARRAY, bool_array_value=[])


@pytest.mark.parametrize(
    "parameter", ["source_list", "exclude_joints", "description_args", "source_time_offsets"]
)
def test_an_empty_bool_array_clears_an_array_parameter(edged: Edged, parameter: str) -> None:
    result = edged.set_typed(parameter, EMPTY_BOOL_ARRAY)
    assert result.successful, result.reason
    wrong = ParameterValue(type=ParameterType.PARAMETER_BOOL_ARRAY, bool_array_value=[True])
    result = edged.set_typed(parameter, wrong)
    assert not result.successful
    assert re.match(rf"^{parameter} must be a (string|double) array \(or \[\]", result.reason)


def test_an_empty_bool_array_clears_the_attachments(edged: Edged) -> None:
    """And ``detach`` of the last attachment (``~/set_attachments`` with an empty list,
    which the node set as an empty BYTE_ARRAY: refused)."""
    result = edged.set_typed("attachments.names", EMPTY_BOOL_ARRAY)
    assert result.successful, result.reason
    wait_until(lambda: "tool_tcp" not in edged.frames(), what="the gripper gone")
    back = edged.set_attachments({"attachments.names": ["gripper"], **GRIPPER_FIELDS})
    assert back.successful, back.reason
    wait_until(lambda: "tool_tcp" in edged.frames(), what="the gripper back")
    detached = edged.set_attachments({"attachments.names": []})
    assert detached.successful, detached.reason
    wait_until(lambda: "tool_tcp" not in edged.frames(), what="the gripper gone again")
    back = edged.set_attachments({"attachments.names": ["gripper"], **GRIPPER_FIELDS})
    assert back.successful, back.reason
    wait_until(lambda: "tool_tcp" in edged.frames(), what="the gripper back again")
    edged.served(fresh_stamp())


@pytest.mark.parametrize("atomically", [False, True], ids=["set", "set-atomically"])
def test_a_parameter_of_an_unknown_type_is_refused_by_rclpy_s_own_services(
    edged: Edged, atomically: bool
) -> None:
    """rclpy's parameter services raised ValueError out of the callback for a type it does
    not know (``200 is not a valid Parameter.Type``); guarded, they answer with the reason."""
    value = ParameterValue(type=200)
    if atomically:
        request = SetParametersAtomically.Request()
        request.parameters = [ParameterMsg(name="publish_frequency", value=value)]
        result = edged._call(edged._atomic, request).result
    else:
        result = edged.set_typed("publish_frequency", value)
    assert not result.successful
    assert result.reason.endswith("ValueError: 200 is not a valid Parameter.Type"), result.reason
    edged.served(fresh_stamp())
    wait_until(
        lambda: edged.reported("callback failures", "ValueError ("),
        what="the callback failure on /diagnostics",
    )


# -- messages --------------------------------------------------------------------------------


def valid_bytes(stamp_s: float, positions: list[float] | None = None) -> bytes:
    msg = JointState()
    msg.header.stamp = stamp_msg(stamp_s)
    msg.header.frame_id = "base"
    msg.name = list(ARM_JOINTS)
    msg.position = positions or [0.1, 0.2, 0.3]
    return bytes(serialize_message(msg))


#: Bytes the fast reader leaves to the RMW, which cannot decode them.
JUNK = {
    "big endian flag on little endian bytes": lambda data: b"\x00\x00" + data[2:],
    "truncated": lambda data: data[:13],
    "name count beyond the message": lambda data: data[:16] + b"\xf0\xff\xff\xff" + data[20:],
    "header only": lambda data: data[:4],
    "random": lambda data: random.Random(7).randbytes(len(data)),
}


def test_junk_bytes_on_joint_states_are_counted_and_the_node_serves_on(edged: Edged) -> None:
    data = valid_bytes(1.0)
    for junk in JUNK.values():
        edged.node.joint_states.publish(junk(data))
    edged.served(fresh_stamp())
    wait_until(
        lambda: edged.reported("undecodable messages", "sensor_msgs/JointState ("),
        what="undecodable JointStates on /diagnostics",
    )
    assert "sensor_msgs/JointState dropped: its bytes do not decode" in edged.node.stderr()


def test_junk_bytes_on_multi_dof_joint_states_are_counted_and_the_node_serves_on(
    edged: Edged,
) -> None:
    data = bytes(serialize_message(MultiDOFJointState(joint_names=["a"])))
    for junk in JUNK.values():
        edged.node.multi_dof.publish(junk(data))
    edged.served(fresh_stamp())
    wait_until(
        lambda: edged.reported("undecodable messages", "sensor_msgs/MultiDOFJointState ("),
        what="undecodable MultiDOFJointStates on /diagnostics",
    )
    assert edged.alive()


def mutations(rng: random.Random, data: bytes) -> Iterator[bytes]:
    """Random and mutated serialized JointStates: truncations, flipped bytes, huge counts
    (names, positions), strings whose length or bytes are wrong, random bytes."""
    count_at = [i for i in range(4, len(data) - 4, 4)]
    mutate: list[Callable[[], bytes]] = [
        lambda: data[: rng.randrange(len(data))],
        lambda: _flipped(rng, data),
        lambda: _put(data, rng.choice(count_at), rng.choice([0xFFFFFFFF, 0x7FFFFFFF, 1 << 20])),
        lambda: _put(data, rng.choice(count_at), rng.randrange(1 << 32)),
        lambda: data.replace(b"elbow_joint\x00", bytes(rng.randbytes(12))),
        lambda: data.replace(b"base\x00", b"base!"),  # no NUL
        lambda: rng.randbytes(rng.randrange(1, 200)),
        lambda: data[:4] + rng.randbytes(rng.randrange(200)),
        lambda: data + rng.randbytes(rng.randrange(64)),
    ]
    while True:
        yield rng.choice(mutate)()


def _flipped(rng: random.Random, data: bytes) -> bytes:
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        out[rng.randrange(len(out))] ^= 1 << rng.randrange(8)
    return bytes(out)


def _put(data: bytes, offset: int, value: int) -> bytes:
    return data[:offset] + struct.pack("<I", value) + data[offset + 4 :]


def test_fuzz_random_and_mutated_joint_states_never_end_the_node(edged: Edged) -> None:
    """For ``FUZZ_S`` s: bursts of 20 mutated or random messages, each followed by a valid
    one with a stamp of its own, which must arrive on /tf (sent again each second until it
    does: best effort). The node never dies and serves every valid message."""
    rng = random.Random(36)
    source = mutations(rng, valid_bytes(2.0, [0.4, 0.5, 0.6]))
    deadline = time.monotonic() + FUZZ_S
    sent = served = 0
    while time.monotonic() < deadline:
        for _ in range(20):
            junk = next(source)
            if junk:  # an empty sample is no DDS message
                edged.node.joint_states.publish(junk)
                sent += 1
        edged.served(fresh_stamp())
        served += 1
    assert edged.alive(), edged.node.stderr()[-2000:]
    assert sent >= 100 and served >= 5, (sent, served)
    lines = edged.node.stderr().splitlines()
    undecodable = [line for line in lines if "do not decode" in line]
    assert len(undecodable) <= 1 + FUZZ_S / 10, undecodable  # throttled
    assert "Traceback" not in edged.node.stderr()
