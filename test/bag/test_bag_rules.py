"""One rule per fact across the doors (#48): the node's rules and the bag commands' on the same
inputs give the same answers.

The node's rules are its policy without DDS: the description installed as it installs one
from the topic (``prepared_model`` under the settings its parameters file gives), a
``JointStatePipeline`` fed the recording's joint states, its health report once the joint
state timeout passed, its own frames (``own_transforms``) and its description source rule
(``description_source``). The doors are the commands as a user runs them: ``doctor --bag``
(the joints never received and the frames missing with them) and ``bag repair`` (the robot
frames it writes, the description it takes). Inputs: nested joints by their bare names
(Gazebo's), the bare name of a two-axis joint (ros_gz), a ``frame_prefix``, an attachment from
``--params`` with a moving joint and its mimic follower, and two description sources."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from bag_maker import (
    JOINT_STATE,
    STRING,
    T0_NS,
    Topic,
    joint_state,
    multi_dof_joint_state,
    string,
    write_bag,
)
from repo_paths import REPO_ROOT, TEST_DIR
from rosbags.rosbag2 import Reader

from joint_tf_publisher.cli.bag import messages
from joint_tf_publisher.cli.bag.qos import tf_static_qos
from joint_tf_publisher.cli.bag.repair import params_settings
from joint_tf_publisher.cli.main import main
from joint_tf_publisher.health.model import GraphFacts, JointStateHealth, Key
from joint_tf_publisher.health.reporting import Reporter
from joint_tf_publisher.node_core.cdr import JointStateReader, read_multi_dof_joint_state
from joint_tf_publisher.node_core.description_source import description_source
from joint_tf_publisher.node_core.parameter_changes import (
    TOPIC_SOURCE,
    load_description,
    prepared_model,
)
from joint_tf_publisher.node_core.parameters import ParameterRejected
from joint_tf_publisher.node_core.pipeline import JointStatePipeline

S = 10**9
#: Nested models' joints (``left::knee``, ``right::knee``, ``left::ankle``), a top-level
#: ``ankle``: ``knee`` is ambiguous (ignored), ``ankle`` is the top-level one, ``right::knee``
#: is scoped. No two-axis joint: a composed description is URDF (the attachment case).
NESTED_SDF = """<sdf version="1.9">
<model name="walker">
  <link name="body"/>
  <model name="left">
    <link name="thigh"/><link name="shin"/><link name="foot"/>
    <joint name="knee" type="revolute"><parent>thigh</parent><child>shin</child>
      <axis><xyz>0 1 0</xyz><limit><lower>-2</lower><upper>0</upper></limit></axis></joint>
    <joint name="ankle" type="revolute"><parent>shin</parent><child>foot</child>
      <axis><xyz>0 1 0</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
  </model>
  <model name="right">
    <link name="thigh"/><link name="shin"/>
    <joint name="knee" type="revolute"><parent>thigh</parent><child>shin</child>
      <axis><xyz>0 1 0</xyz><limit><lower>-2</lower><upper>0</upper></limit></axis></joint>
  </model>
  <joint name="left_mount" type="fixed"><parent>body</parent><child>left::thigh</child></joint>
  <joint name="right_mount" type="fixed"><parent>body</parent><child>right::thigh</child></joint>
  <link name="toe"/>
  <joint name="ankle" type="revolute"><parent>body</parent><child>toe</child>
    <axis><xyz>0 0 1</xyz><limit><lower>-1</lower><upper>1</upper></limit></axis></joint>
</model>
</sdf>"""
GRIPPER = REPO_ROOT / "urdf" / "gripper.urdf"

#: (description, the JointState names recorded, the attachment's parent link or None).
CASES = {
    # nested joints by bare names, with the gripper (moving joint and mimic) attached
    "nested": (NESTED_SDF, ["ankle", "knee", "right::knee"], "toe"),
    # the bare name of a universal joint (its first angle) and nested bare names
    "bare": ((TEST_DIR / "sdf" / "walker_nested.sdf").read_text(), ["hip", "ankle"], None),
}


def params_file(path: Path, attach_to: str | None, extra: str = "") -> Path:
    """The node's parameters: a frame prefix, and the gripper attached to ``attach_to``."""
    text = "joint_tf_publisher:\n  ros__parameters:\n    frame_prefix: w/\n" + extra
    if attach_to is not None:
        text += (
            "    attachments:\n      names: [grip]\n"
            f"      grip:\n        file: {GRIPPER}\n        parent: {attach_to}\n"
            "        prefix: g_\n        origin: [0.0, 0.0, 0.05, 0.0, 0.0, 0.0]\n"
        )
    path.write_text(text)
    return path


def recording(path: Path, description: str, names: list[str]) -> Path:
    """Ten joint states of ``names`` every 10 ms and the description, as recorded."""
    times = [T0_NS + k * 10**7 for k in range(10)]
    recorded = [("/joint_states", t, joint_state(t, names, [0.1] * len(names))) for t in times]
    recorded.append(("/robot_description", T0_NS, string(description)))
    topics = [
        Topic("/joint_states", JOINT_STATE),
        Topic("/robot_description", STRING, [tf_static_qos()]),
    ]
    return write_bag(path, "sqlite3", topics, sorted(recorded, key=lambda item: item[1]))


class NodeRules:
    """The node's policy on the recording: its description from the topic under its
    parameters, its pipeline fed the joint states, its health report after the timeout."""

    def __init__(self, params: Path, description: str, names: list[str]) -> None:
        settings, _ = params_settings(params)
        self.steady_ns = S  # the steady clock at the arrivals (0 would be "never")
        self.health = JointStateHealth(settings.joint_state_timeout, lambda: self.steady_ns)
        self.pipeline = JointStatePipeline(settings, Reporter(_Quiet()), lambda: T0_NS, self.health)
        model, settings = prepared_model(load_description, description, TOPIC_SOURCE, settings)
        self.pipeline.install(model, settings)
        reader = JointStateReader()
        self.published: set[tuple[str, str]] = set()
        for k in range(10):
            stamp_ns = T0_NS + k * 10**7
            state = reader.read(joint_state(stamp_ns, names, [0.1] * len(names)))
            assert state is not None
            publication = self.pipeline.joint_state(*state, 0, reader.block)
            if publication is not None:
                self.published |= set(publication.layout.frames)
        statics = self.pipeline.static_publication(T0_NS)
        assert statics is not None
        self.published |= set(statics.layout.frames)

    def never_received(self) -> tuple[list[str], list[str]]:
        """The joints the report names never received and the frames it names missing."""
        self.steady_ns += 10 * S  # past joint_state_timeout
        values = dict(self.health.report(GraphFacts({}, T0_NS)).values)
        return (
            [name for name in values[Key.NEVER_RECEIVED].split(", ") if name],
            [name for name in values[Key.MISSING_FRAMES].split(", ") if name],
        )


class _Quiet:
    def info(self, message: str) -> None: ...
    def warning(self, message: str) -> None: ...
    def error(self, message: str) -> None: ...


def read_frames(path: Path) -> set[tuple[str, str]]:
    """Every (parent, child) a bag's /tf and /tf_static carry."""
    with Reader(path) as reader:
        return {
            (t.header.frame_id, t.child_frame_id)
            for connection, _, data in reader.messages()
            if connection.topic in ("/tf", "/tf_static")
            for t in messages.tf_transforms(bytes(data))
        }


@pytest.mark.parametrize("case", sorted(CASES))
def test_the_doors_answer_as_the_node(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """doctor --bag names the joints and frames the node's health report names; bag repair
    writes the frames the node publishes, every one of them the node's own."""
    description, names, attach_to = CASES[case]
    params = params_file(tmp_path / "params.yaml", attach_to)
    bag = recording(tmp_path / "in", description, names)
    node = NodeRules(params, description, names)
    joints, frames = node.never_received()
    assert joints and all(frame.startswith("w/") for frame in frames)
    if attach_to is not None:  # the attachment counts, its mimic follower with it
        assert {"g_finger_joint", "g_right_finger_joint"} <= set(joints)

    code = main(["doctor", "--bag", str(bag), "--json", "--params", str(params)])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    (found,) = [f for f in document["findings"] if f["kind"] == "joints_not_recorded"]
    assert (found["details"]["joints"], found["details"]["frames"]) == (joints, frames)

    out = tmp_path / "out"
    assert main(["bag", "repair", str(bag), "-o", str(out), "--params", str(params)]) == 0
    capsys.readouterr()
    written = read_frames(out)
    assert written == node.published
    own = node.pipeline.own_transforms()
    assert {child: parent for parent, child in written}.items() <= own.items()


def test_two_description_sources_are_refused_as_the_node_refuses(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """robot_description and description_file both given: the node refuses to start; so do
    doctor --bag and bag repair, in the node's words, and so does --description (the
    command line's description_file) beside the file's robot_description."""
    arm = REPO_ROOT / "urdf" / "demo_arm.urdf"
    text = arm.read_text()
    with pytest.raises(ParameterRejected) as refused:
        description_source(text, str(arm), False)
    said = str(refused.value)
    assert "robot_description and description_file both give" in said
    bag = recording(tmp_path / "in", text, ["shoulder_pan_joint"])
    inline = "".join(f"      {line}\n" for line in text.splitlines())
    both = params_file(
        tmp_path / "both.yaml",
        None,
        f"    description_file: {arm}\n    robot_description: |\n{inline}",
    )
    one = params_file(tmp_path / "one.yaml", None, f"    robot_description: |\n{inline}")
    for params, extra in ((both, []), (one, ["--description", str(arm)])):
        doctor = ["doctor", "--bag", str(bag), "--params", str(params), *extra]
        repair = ["bag", "repair", str(bag), "-o", str(tmp_path / "out"), "--params", str(params)]
        for command in ([*repair, *extra], doctor):
            assert main(command) != 0, command
            err = capsys.readouterr().err
            assert said in err, command
            # named as given: the file, and --description beside it
            named = " and ".join([*(["--description"] if extra else []), f"--params {params}"])
            assert f"{named}: {said}" in err, command
    assert not (tmp_path / "out").exists()


def test_a_description_in_the_parameters_file_is_the_doctors_as_the_repairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A parameters file's description_file is the one the doctor judges the recording
    against, as the repair rebuilds it from (the recording's /robot_description is not)."""
    arm = REPO_ROOT / "urdf" / "demo_arm.urdf"
    bag = recording(tmp_path / "in", NESTED_SDF, ["shoulder_pan_joint"])
    params = params_file(tmp_path / "p.yaml", None, f"    description_file: {arm}\n")
    code = main(["doctor", "--bag", str(bag), "--json", "--params", str(params)])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    assert document["heard"]["robot"] == "demo_arm"
    assert document["heard"]["description_source"] == str(arm)
    (found,) = [f for f in document["findings"] if f["kind"] == "joints_not_recorded"]
    assert "shoulder_pan_joint" not in found["details"]["joints"]
    assert "elbow_joint" in found["details"]["joints"]


def test_the_doctors_description_is_over_the_parameters_files_as_the_repairs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``doctor --bag IN --description FILE`` beside a parameters file whose
    ``description_file`` names another robot judges the recording against FILE, as
    ``--description`` is the repair's over the file's (``-p`` over a parameters file)."""
    arm = REPO_ROOT / "urdf" / "demo_arm.urdf"
    sdf = tmp_path / "nested.sdf"
    sdf.write_text(NESTED_SDF)
    bag = recording(tmp_path / "in", NESTED_SDF, ["shoulder_pan_joint"])
    params = params_file(tmp_path / "p.yaml", None, f"    description_file: {sdf}\n")
    doctor = ["doctor", "--bag", str(bag), "--json", "--params", str(params)]
    main([*doctor, "--description", str(arm)])
    document = json.loads(capsys.readouterr().out)
    assert document["heard"]["robot"] == "demo_arm"
    assert document["heard"]["description_source"] == str(arm)
    main(doctor)  # the file's own, where none is given
    assert json.loads(capsys.readouterr().out)["heard"]["description_source"] == str(sdf)


@pytest.mark.parametrize("seed", range(6))
def test_a_recorded_multi_dof_joint_state_reads_alike_in_either_byte_order(seed: int) -> None:
    """A recording may hold big endian CDR (rosbags writes it; no RMW here does): the node's
    one MultiDOFJointState reader, which doctor --bag and bag repair use, reads it as the
    little endian bytes of the same message."""
    rng = np.random.default_rng(seed)
    count = int(rng.integers(0, 6))
    names = [f"joint_{k}" + "é" * (k % 2) + "x" * k for k in range(count)]
    poses = rng.normal(size=(count, 7))
    stamp_ns = T0_NS + int(rng.integers(0, S))
    little = multi_dof_joint_state(stamp_ns, names, poses.tolist())
    big = multi_dof_joint_state(stamp_ns, names, poses.tolist(), little_endian=False)
    assert big[:2] == b"\x00\x00" and little[:2] == b"\x00\x01"
    for data in (little, big):
        state = read_multi_dof_joint_state(data)
        assert state is not None
        assert state.stamp_ns == stamp_ns and state.names == tuple(names)
        assert state.translations.tolist() == poses[:, :3].tolist()
        assert state.quaternions.tolist() == poses[:, 3:].tolist()
