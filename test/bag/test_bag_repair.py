"""``joint-tf-publisher bag repair``: bags made here with rosbags' writer (sqlite3 and MCAP)
from the test robots, repaired, and read back: every link composed from /tf_static + /tf
equals ``Robot.link_fk`` at each JointState, a real tf2 BufferCore resolves every link, the
bytes are the node pipeline's own, QoS and other topics are as they should be, and bad
inputs get one line and an exit status."""

from __future__ import annotations

import os
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from bag_maker import (
    JOINT_STATE,
    STRING,
    T0_NS,
    TF_MESSAGE,
    Topic,
    joint_state,
    recording,
    string,
    sweep,
    tf_message,
    transform,
    write_bag,
)
from repo_paths import REPO_ROOT
from rosbags.interfaces import QosDurability, QosReliability
from rosbags.rosbag2 import Reader
from scipy.spatial.transform import Rotation

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.bag import messages
from joint_tf_publisher.cli.bag import repair as repair_module
from joint_tf_publisher.cli.bag import writer as writer_module
from joint_tf_publisher.cli.bag.qos import tf_qos, tf_static_qos
from joint_tf_publisher.cli.main import main
from joint_tf_publisher.cli.params_file import ParamsFileError, node_parameters
from joint_tf_publisher.health.reporting import Reporter
from joint_tf_publisher.node_core.parameter_changes import (
    TOPIC_SOURCE,
    load_description,
    prepared_model,
)
from joint_tf_publisher.node_core.parameters import Settings
from joint_tf_publisher.node_core.pipeline import JointStatePipeline

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
STORAGES = ("sqlite3", "mcap")
TOLERANCE = 1e-9


def read_bag(path: Path) -> tuple[dict[str, Any], list[tuple[str, int, bytes]]]:
    """(connections by topic, every message as (topic, log time, bytes)) of a bag."""
    with Reader(path) as reader:
        connections = {c.topic: c for c in reader.connections}
        return connections, [(c.topic, t, bytes(d)) for c, t, d in reader.messages()]


def pose(values: Any) -> np.ndarray:
    """(4, 4) of a TransformStamped's transform (scipy: independent of the package)."""
    t, q = values.transform.translation, values.transform.rotation
    matrix = np.eye(4)
    matrix[:3, :3] = Rotation.from_quat([q.x, q.y, q.z, q.w]).as_matrix()
    matrix[:3, 3] = (t.x, t.y, t.z)
    return matrix


def composed(edges: dict[str, tuple[str, np.ndarray]], frame: str, root: str) -> np.ndarray:
    """``frame``'s pose in ``root`` through ``edges`` (child -> (parent, pose))."""
    result = np.eye(4)
    while frame != root:
        parent, matrix = edges[frame]
        result = matrix @ result
        frame = parent
    return result


def repair(*args: str) -> int:
    return main(["bag", "repair", *args])


def check_every_link(
    out: Path,
    robot: Robot,
    states: list[tuple[int, dict[str, float]]],
    prefix: str = "",
    tf_topics: tuple[str, str] = ("/tf", "/tf_static"),
) -> int:
    """Replay ``out``'s /tf_static and /tf (``tf_topics``: tf, tf_static) in log-time order;
    once every message of a JointState's log time is in, every link of ``robot`` (frames with
    ``prefix``) composed from them equals its FK, and every /tf transform then is stamped
    with that JointState's stamp. Returns the states checked."""
    _, recorded = read_bag(out)
    by_time = dict(states)
    edges: dict[str, tuple[str, np.ndarray]] = {}
    checked = 0

    def check(time_ns: int) -> None:
        nonlocal checked
        for link, matrix in robot.link_fk(by_time[time_ns]).items():
            got = composed(edges, prefix + link, prefix + robot.root)
            np.testing.assert_allclose(got, matrix, atol=TOLERANCE)
        checked += 1

    pending: int | None = None  # the log time of the last /tf message, a JointState's
    for topic, time_ns, data in recorded:
        if topic not in tf_topics:
            continue
        if pending is not None and time_ns != pending:
            check(pending)
            pending = None
        transforms = messages.tf_transforms(data)
        for t in transforms:
            edges[t.child_frame_id] = (t.header.frame_id, pose(t))
        if topic == tf_topics[0] and time_ns in by_time:
            stamps = {t.header.stamp.sec * 10**9 + t.header.stamp.nanosec for t in transforms}
            assert stamps == {time_ns}  # the JointState's stamp, as the node stamps
            pending = time_ns
    if pending is not None:
        check(pending)
    return checked


@pytest.mark.parametrize("storage", STORAGES)
def test_every_link_of_the_repaired_bag_is_the_packages_fk(tmp_path: Path, storage: str) -> None:
    bag, states = recording(tmp_path / "in", ARM, storage)
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    assert check_every_link(out, Robot.load(ARM), states) == len(states)
    connections, recorded = read_bag(out)
    first_time = min(t for _, t, _ in recorded)
    statics = [(t, d) for topic, t, d in recorded if topic == "/tf_static"]
    assert statics[0][0] == first_time  # at the bag's start
    # /tf_static recorded reliable and transient local (ros2 bag play latches it), /tf as the node
    (static_qos,) = connections["/tf_static"].ext.offered_qos_profiles
    assert static_qos.durability is QosDurability.TRANSIENT_LOCAL
    assert static_qos.reliability is QosReliability.RELIABLE and static_qos.depth == 1
    (tf_profile,) = connections["/tf"].ext.offered_qos_profiles
    assert tf_profile.durability is QosDurability.VOLATILE and tf_profile.depth == 100
    # ... as metadata.yaml says it, which `ros2 bag play` reads
    import yaml

    metadata = yaml.safe_load((out / "metadata.yaml").read_text())["rosbag2_bagfile_information"]
    topics = {
        t["topic_metadata"]["name"]: t["topic_metadata"]
        for t in metadata["topics_with_message_count"]
    }
    profiles = topics["/tf_static"]["offered_qos_profiles"]
    profiles = yaml.safe_load(profiles) if isinstance(profiles, str) else profiles
    assert [(p["durability"], p["reliability"], p["depth"]) for p in profiles] == [
        ("transient_local", "reliable", 1)
    ]
    # the bag's files are named as the bag (as rosbag2 names them), nothing hidden left
    data_file = "out.mcap" if storage == "mcap" else "out.db3"
    assert sorted(path.name for path in out.iterdir()) == sorted([data_file, "metadata.yaml"])
    assert metadata["relative_file_paths"] == [data_file]
    assert sorted(path.name for path in tmp_path.iterdir()) == ["in", "out"]


@pytest.mark.parametrize("storage", STORAGES)
@pytest.mark.parametrize("compression", ["file", "message"])
def test_a_compressed_bag_is_repaired_into_one_compressed_alike(
    tmp_path: Path, storage: str, compression: str
) -> None:
    bag, states = recording(tmp_path / "in", ARM, storage, compression=compression)
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    assert check_every_link(out, Robot.load(ARM), states) == len(states)
    with Reader(out) as reader:
        assert (reader.compression_mode, reader.compression_format) == (compression, "zstd")
    suffix = ".mcap" if storage == "mcap" else ".db3"  # a file compressed whole: .mcap.zstd
    assert [p.suffixes[0] for p in out.iterdir() if p.name != "metadata.yaml"] == [suffix]


def test_mcap_is_written_with_zstd_chunks_as_rosbag2_writes_it(tmp_path: Path) -> None:
    """An MCAP output's chunks are zstd-compressed (rosbag2's MCAP default): MCAP's chunk
    record names its compression (a uint32-prefixed string, the MCAP spec), and the file is
    far smaller than its messages; a sqlite3 output has no compression."""
    bag, states = recording(tmp_path / "in", ARM, "sqlite3", count=200)
    assert repair(str(bag), "-o", str(tmp_path / "db3")) == 0
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--storage", "mcap") == 0
    assert check_every_link(out, Robot.load(ARM), states) == len(states)
    with Reader(out) as reader:
        assert not reader.compression_mode  # the storage's own, not rosbag2's
        payload = sum(len(data) for _, _, data in reader.messages())
    data = (out / "out.mcap").read_bytes()
    assert b"\x04\x00\x00\x00zstd" in data and len(data) < payload / 2
    with Reader(tmp_path / "db3") as reader:
        assert not reader.compression_mode


def test_the_storage_can_change_and_the_input_is_a_bare_file(tmp_path: Path) -> None:
    bag, states = recording(tmp_path / "in", ARM, "sqlite3")
    assert repair(str(bag / "metadata.yaml"), "-o", str(tmp_path / "by_metadata")) == 0
    (db3,) = bag.glob("*.db3")
    out = tmp_path / "out"
    assert repair(str(db3), "-o", str(out), "--storage", "mcap") == 0
    assert [p.suffix for p in out.iterdir() if p.suffix in (".mcap", ".db3")] == [".mcap"]
    assert check_every_link(out, Robot.load(ARM), states) == len(states)


def test_the_repair_writes_the_node_pipelines_own_bytes(tmp_path: Path) -> None:
    """One engine: the node's pipeline fed the same JointStates (as the node's subscription
    does: the short way, else the reader) gives exactly the /tf and /tf_static bytes."""
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=30)
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    _, recorded_in = read_bag(bag)
    _, recorded_out = read_bag(out)

    class Quiet:
        def info(self, message: str) -> None: ...
        def warning(self, message: str) -> None: ...
        def error(self, message: str) -> None: ...

    settings = Settings(ignore_timestamp=True)
    pipeline = JointStatePipeline(settings, Reporter(Quiet()), lambda: T0_NS)
    model, settings = prepared_model(load_description, ARM.read_text(), TOPIC_SOURCE, settings)
    pipeline.install(model, settings)
    expected = []
    for topic, _, data in recorded_in:
        if topic != "/joint_states":
            continue
        message = pipeline.take_joint_state(data, 0)
        if not isinstance(message, bytes):
            message = b"" if message is None else message.to_bytes()
        expected.append(message)
    static = pipeline.static_publication(T0_NS)
    assert static is not None
    assert [d for topic, _, d in recorded_out if topic == "/tf"] == expected
    assert [d for topic, _, d in recorded_out if topic == "/tf_static"] == [static.to_bytes()]


def test_a_real_tf2_buffer_resolves_every_link(tmp_path: Path) -> None:
    """The kit's tf2_ros Buffer (tf2's BufferCore), fed the repaired bag's messages
    as rclpy deserializes them, gives every link at each JointState's stamp."""
    tf2_ros = pytest.importorskip("tf2_ros", reason="needs the ROS 2 kit (make env) or a distro")
    from builtin_interfaces.msg import Time
    from rclpy.serialization import deserialize_message
    from tf2_msgs.msg import TFMessage

    bag, states = recording(tmp_path / "in", ARM, "mcap", count=20)
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    buffer = tf2_ros.Buffer()  # tf2's BufferCore, what RViz reads through
    _, recorded = read_bag(out)
    for topic, _, data in recorded:
        if topic in ("/tf", "/tf_static"):
            for stamped in deserialize_message(data, TFMessage).transforms:
                if topic == "/tf_static":
                    buffer.set_transform_static(stamped, "bag")
                else:
                    buffer.set_transform(stamped, "bag")
    robot = Robot.load(ARM)
    for stamp_ns, cfg in states[::5]:
        expected = robot.link_fk(cfg)
        for link, matrix in expected.items():
            if link == robot.root:
                continue
            got = buffer.lookup_transform_core(
                robot.root, link, Time(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9)
            )
            t, q = got.transform.translation, got.transform.rotation
            np.testing.assert_allclose((t.x, t.y, t.z), matrix[:3, 3], atol=TOLERANCE)
            rotation = Rotation.from_quat([q.x, q.y, q.z, q.w]).as_matrix()
            np.testing.assert_allclose(rotation, matrix[:3, :3], atol=TOLERANCE)


def test_other_publishers_frames_are_kept_and_the_robots_replaced(tmp_path: Path) -> None:
    """A recording with a localisation's /tf (odom -> base_link), a camera's static frame
    recorded late and volatile, and the robot's own frames from an old state publisher (at a
    wrong value): the repaired /tf keeps odom, every /tf_static message holds the camera and
    the robot's statics, the robot's recorded frames are gone (and counted)."""
    robot = Robot.load(ARM)
    stale = [
        transform(T0_NS + k * 10**7, "base_link", "shoulder_link", (9.0, 9.0, 9.0))
        for k in range(5)
    ]
    odom = [
        transform(T0_NS + k * 10**7, "odom", "base_link", (float(k), 0.0, 0.0)) for k in range(5)
    ]
    extra = [("/tf", T0_NS + k * 10**7 + 1, tf_message([odom[k], stale[k]])) for k in range(5)]
    camera = transform(T0_NS, "base_link", "camera_link", (0.1, 0.0, 0.5))
    extra.append(("/tf_static", T0_NS + 3 * 10**8, tf_message([camera])))
    bag, states = recording(
        tmp_path / "in",
        ARM,
        "sqlite3",
        count=40,
        extra_topics=[Topic("/tf", TF_MESSAGE, [tf_qos()]), Topic("/tf_static", TF_MESSAGE, [])],
        extra=extra,
    )
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    _, recorded = read_bag(out)
    tf_children = [
        [t.child_frame_id for t in messages.tf_transforms(d)]
        for topic, _, d in recorded
        if topic == "/tf"
    ]
    assert sum(children == ["base_link"] for children in tf_children) == 5  # odom kept
    assert not any("shoulder_link" in c and len(c) == 1 for c in tf_children)
    fixed = {j.child for j in robot.joints.values() if j.joint_type == "fixed"}
    statics = [messages.tf_transforms(d) for topic, _, d in recorded if topic == "/tf_static"]
    assert statics
    for message in statics:
        assert {t.child_frame_id for t in message} == fixed | {"camera_link"}
    assert check_every_link(out, robot, states) == len(states)


def test_other_topics_are_copied_byte_for_byte_with_their_definition_and_qos(
    tmp_path: Path,
) -> None:
    from bag_maker import STORE
    from rosbags.interfaces import Qos, QosHistory, QosLiveliness, QosTime

    best_effort = Qos(
        QosHistory.KEEP_LAST,
        7,
        QosReliability.BEST_EFFORT,
        QosDurability.VOLATILE,
        QosTime(0, 0),
        QosTime(0, 0),
        QosLiveliness.AUTOMATIC,
        QosTime(0, 0),
        False,
    )
    chatter = [("/chatter", T0_NS + k * 3 * 10**6, string(f"hello {k}")) for k in range(10)]
    bag, _ = recording(
        tmp_path / "in",
        ARM,
        "mcap",
        count=10,
        extra_topics=[Topic("/chatter", STRING, [best_effort])],
        extra=chatter,
    )
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    connections_in, recorded_in = read_bag(bag)
    connections_out, recorded_out = read_bag(out)
    for topic in ("/chatter", "/joint_states", "/robot_description"):
        assert [(t, d) for name, t, d in recorded_out if name == topic] == [
            (t, d) for name, t, d in recorded_in if name == topic
        ]
        assert connections_out[topic].msgdef == connections_in[topic].msgdef
        assert connections_out[topic].digest == connections_in[topic].digest
        assert (
            connections_out[topic].ext.offered_qos_profiles
            == connections_in[topic].ext.offered_qos_profiles
        )
    assert (
        connections_out["/chatter"].msgdef.data == STORE.generate_msgdef(STRING, ros_version=2)[0]
    )


def test_a_description_change_mid_bag_republishes_the_complete_static_set(tmp_path: Path) -> None:
    """The bag's /robot_description changes at 0.25 s (the flange moved, a sensor added):
    from then on the new static set and the new FK; before, the old."""
    old_text = ARM.read_text()
    new_text = old_text.replace(
        "</robot>",
        '<link name="sensor_link"/><joint name="sensor_joint" type="fixed">'
        '<parent link="base_link"/><child link="sensor_link"/><origin xyz="0 0 0.7"/>'
        "</joint></robot>",
    )
    assert new_text != old_text
    change_ns = T0_NS + 25 * 10**7
    bag, states = recording(
        tmp_path / "in",
        ARM,
        "sqlite3",
        count=50,
        extra=[("/robot_description", change_ns, string(new_text))],
    )
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    _, recorded = read_bag(out)
    statics = [(t, messages.tf_transforms(d)) for topic, t, d in recorded if topic == "/tf_static"]
    assert [t for t, _ in statics] == [T0_NS, change_ns]
    assert "sensor_link" not in {t.child_frame_id for t in statics[0][1]}
    assert "sensor_link" in {t.child_frame_id for t in statics[1][1]}
    new_robot = Robot.from_xml_string(new_text)
    later = [(t, cfg) for t, cfg in states if t > change_ns]
    assert check_every_link(out, new_robot, later) == len(later)


def test_params_set_prefix_and_the_static_republish_period(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text(
        "/**:\n  ros__parameters:\n    frame_prefix: left/\n"
        "joint_tf_publisher:\n  ros__parameters:\n    static_republish_period: 0.1\n"
        "other_node:\n  ros__parameters:\n    frame_prefix: wrong/\n"
    )
    assert node_parameters(params) == {"frame_prefix": "left/", "static_republish_period": 0.1}
    bag, states = recording(tmp_path / "in", ARM, "sqlite3", count=50)  # 0.49 s
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--params", str(params)) == 0
    _, recorded = read_bag(out)
    static_times = [t for topic, t, _ in recorded if topic == "/tf_static"]
    assert static_times == [T0_NS + k * 10**8 for k in range(5)]
    assert check_every_link(out, Robot.load(ARM), states, prefix="left/") == len(states)


def test_the_rate_cap_applies_only_when_the_params_set_it(tmp_path: Path) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    publish_frequency: 20.0\n")
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=50, rate_hz=100.0)
    assert repair(str(bag), "-o", str(tmp_path / "all")) == 0
    assert repair(str(bag), "-o", str(tmp_path / "capped"), "--params", str(params)) == 0
    assert sum(t == "/tf" for t, _, _ in read_bag(tmp_path / "all")[1]) == 50
    assert sum(t == "/tf" for t, _, _ in read_bag(tmp_path / "capped")[1]) == 10


def test_description_file_wins_over_the_bags(tmp_path: Path) -> None:
    """A bag recorded with an old description, repaired with the new file: the new FK, and
    /robot_description carries the new text."""
    new = tmp_path / "arm.urdf"
    new.write_text(ARM.read_text().replace('name="demo_arm"', 'name="demo_arm_v2"'))
    bag, states = recording(tmp_path / "in", ARM, "sqlite3", count=10)
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--description", str(new)) == 0
    _, recorded = read_bag(out)
    (text,) = [
        messages.string_value(d) for topic, _, d in recorded if topic == "/robot_description"
    ]
    assert 'name="demo_arm_v2"' in text
    assert check_every_link(out, Robot.load(new), states) == len(states)


# -- bad inputs ----------------------------------------------------------------------------


def test_a_missing_bag_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert repair(str(tmp_path / "nothing"), "-o", str(tmp_path / "out")) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no such bag" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("name", ["broken.db3", "broken.mcap"])
def test_a_corrupt_bag_is_one_line_and_exit_1(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str
) -> None:
    broken = tmp_path / name
    broken.write_bytes(b"this is no bag at all" * 50)
    assert repair(str(broken), "-o", str(tmp_path / "out")) == 1
    err = capsys.readouterr().err
    assert "cannot read the bag" in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == [broken]  # no output, no partial folder


def test_a_storage_it_cannot_read(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag = tmp_path / "recording.bag"
    bag.write_bytes(b"#ROSBAG V2.0\n")
    assert repair(str(bag), "-o", str(tmp_path / "out")) == 1
    assert "cannot read the bag" in capsys.readouterr().err


def test_no_joint_states_and_no_description(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag = write_bag(
        tmp_path / "in", "sqlite3", [Topic("/chatter", STRING)], [("/chatter", T0_NS, string("x"))]
    )
    assert repair(str(bag), "-o", str(tmp_path / "out")) == 1
    assert capsys.readouterr().err == (  # why, and what to do
        f"joint-tf-publisher bag repair: error: {bag}: no /joint_states and no description: "
        "nothing to compute the robot's TF from (give --description FILE; the bag needs its "
        "joint states)\n"
    )
    assert not (tmp_path / "out").exists()


def test_joint_states_without_a_description_ask_for_one(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5, description=False)
    assert repair(str(bag), "-o", str(tmp_path / "out")) == 1
    assert capsys.readouterr().err == (
        f"joint-tf-publisher bag repair: error: {bag}: no /robot_description in the bag: give "
        "the robot's description with --description FILE\n"
    )


def test_a_given_description_that_does_not_load_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--description`` naming a file that is no robot: one line naming the file, as given,
    and the model's reason; no output."""
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5, description=False)
    broken = tmp_path / "broken.urdf"
    broken.write_text('<robot name="r"><link name="a"/><joint name="j" type="fixed"/></robot>')
    assert repair(str(bag), "-o", str(tmp_path / "out"), "--description", str(broken)) == 1
    err = capsys.readouterr().err
    assert err.startswith(
        f"joint-tf-publisher bag repair: error: the description ({broken}) does not load: "
    ), err
    assert err.count("\n") == 1 and not (tmp_path / "out").exists()


@pytest.mark.parametrize("storage", STORAGES)
def test_an_empty_recording_gets_a_fixed_robots_static_set_at_time_zero(
    storage: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recording of no message at all (a recorder stopped at once), given the description
    of a robot whose joints are all fixed: nothing needs joint states, so the output is the
    robot's static set, once, at log time and stamp 0 (there is no recorded time), after the
    description given, as a repair writes it."""
    bag = write_bag(tmp_path / "in", storage, [Topic("/chatter", STRING)], [])
    out = tmp_path / "out"
    tool = REPO_ROOT / "urdf" / "suction_tool.urdf"
    assert repair(str(bag), "-o", str(out), "--description", str(tool)) == 0
    capsys.readouterr()
    _, written = read_bag(out)
    assert [(topic, time_ns) for topic, time_ns, _ in written] == [
        ("/robot_description", 0),
        ("/tf_static", 0),
    ]
    (only,) = messages.tf_transforms(written[1][2])
    assert (only.header.frame_id, only.child_frame_id) == ("base_link", "cup")
    assert (only.header.stamp.sec, only.header.stamp.nanosec) == (0, 0)


def test_an_undecodable_joint_state_is_counted_and_skipped(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    good = joint_state(T0_NS + 5 * 10**6, ["shoulder_pan_joint"], [0.5])
    bag, states = recording(
        tmp_path / "in",
        ARM,
        "sqlite3",
        count=10,
        extra=[
            ("/joint_states", T0_NS + 10**6, b"\x00\x01\x00\x00\xff"),
            ("/joint_states", T0_NS + 5 * 10**6, good),
        ],
    )
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    summary = capsys.readouterr().out
    assert (
        "12 joint states (1 undecodable, 0 of mismatched lengths, 0 stamped out of range: "
        "skipped) -> 11 /tf messages"
    ) in summary


def test_a_refused_description_names_its_file_and_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    bad = tmp_path / "bad.urdf"
    bad.write_text(
        '<robot name="r">\n  <link name="a"/>\n  <joint name="j" type="fixed">\n'
        '    <parent link="a"/><child link="nowhere"/>\n  </joint>\n</robot>\n'
    )
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    assert repair(str(bag), "-o", str(tmp_path / "out"), "--description", str(bad)) == 1
    err = capsys.readouterr().err
    assert f"{bad}:3" in err and "nowhere" in err and "Traceback" not in err
    assert not (tmp_path / "out").exists()


def test_an_existing_output_needs_force(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bag, states = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0  # a bag: what --force replaces
    (out / "keep").write_text("mine")
    capsys.readouterr()
    with pytest.raises(SystemExit) as exited:
        repair(str(bag), "-o", str(out))
    assert exited.value.code == 2
    assert "exists" in capsys.readouterr().err and (out / "keep").exists()
    assert repair(str(bag), "-o", str(out), "--force") == 0
    assert not (out / "keep").exists()
    assert check_every_link(out, Robot.load(ARM), states) == len(states)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in", "out"]


def test_a_bad_params_file_is_one_line(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    clamp: sideways\n")
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    assert repair(str(bag), "-o", str(tmp_path / "out"), "--params", str(params)) == 1
    assert "clamp must be one of" in capsys.readouterr().err
    # Hostile numbers and sizes (issue 43): a 400-digit integer was an OverflowError traceback.
    hostile = {
        "publish_frequency": "9" * 400,
        "time_offset": "-" + "9" * 400,
        "diagnostic_period": ".nan",
        "joint_state_timeout": ".inf",
        "remote.rate": "1.0e+400",
        "source_time_offsets": "[.nan]",
        "static_republish_period": "true",
        "remote.frames": "[" + ", ".join(["x"] * 5000) + "]",
    }
    for name, text in hostile.items():
        params.write_text(f"/**:\n  ros__parameters:\n    {name}: {text}\n")
        assert repair(str(bag), "-o", str(tmp_path / "out"), "--params", str(params)) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--params {params}: {name}" in err, err
    # A FIFO or a device (or a file of the wrong encoding) as --params: refused at once, not
    # waited on or read without end: --params is read as every file the package reads.
    fifo = tmp_path / "fifo.yaml"
    os.mkfifo(fifo)
    (tmp_path / "latin1.yaml").write_bytes(b"/**:\n  ros__parameters:\n    frame_prefix: \xe9\n")
    for path, words in (
        (fifo, "not a regular file (a FIFO"),
        (Path("/dev/zero"), "not a regular file (a character device)"),
        (tmp_path / "latin1.yaml", "not UTF-8 text"),
    ):
        assert repair(str(bag), "-o", str(tmp_path / "out"), "--params", str(path)) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--params {path}: " in err and words in err, err
    (tmp_path / "empty.yaml").write_text("just: text\n")
    with pytest.raises(ParamsFileError, match="not a parameters file"):
        node_parameters(tmp_path / "empty.yaml")


def test_without_rosbags_the_command_says_how_to_install_it(tmp_path: Path) -> None:
    import subprocess
    import sys

    argv = ["bag", "repair", str(tmp_path / "in"), "-o", str(tmp_path / "out")]
    code = (
        "import sys; sys.modules['rosbags'] = None; sys.modules['rosbags.rosbag2'] = None\n"
        "from joint_tf_publisher.cli.main import main\n"
        f"sys.exit(main({argv!r}))\n"
    )
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert run.returncode == 1
    assert run.stderr.count("\n") == 1 and "pip install rosbags" in run.stderr


def test_without_rosbags_both_bag_commands_say_how_to_install_it_in_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """In-process (the test above runs the command in a child, whose code a mutant does not
    reach): with ``rosbags.rosbag2`` not importable, ``bag repair`` and ``doctor --bag`` each
    give one line with both ways to install it (recordings.md), exit 1."""
    monkeypatch.setitem(sys.modules, "rosbags.rosbag2", None)
    for argv in (
        ["bag", "repair", str(tmp_path / "in"), "-o", str(tmp_path / "out")],
        ["doctor", "--bag", str(tmp_path / "in")],
    ):
        assert main(argv) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "pip install rosbags" in err, err
        assert "pip install 'joint_tf_publisher[bag]'" in err, err


def test_a_progress_line_on_a_terminal_only(tmp_path: Path) -> None:
    """On a terminal (a pty) stderr shows the progress line, rewritten in place; piped, only
    the summary goes out (stdout) and stderr stays empty."""
    import os
    import pty
    import subprocess
    import sys

    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=1100, rate_hz=1000.0)
    command = [sys.executable, "-m", "joint_tf_publisher.cli.main", "bag", "repair", str(bag)]
    piped = subprocess.run([*command, "-o", str(tmp_path / "a")], capture_output=True, timeout=120)
    assert piped.returncode == 0 and piped.stderr == b""
    assert piped.stdout.decode().startswith(f"wrote {tmp_path / 'a'}: 1101 messages in")
    leader, follower = pty.openpty()
    with subprocess.Popen(
        [*command, "-o", str(tmp_path / "b")], stdout=subprocess.DEVNULL, stderr=follower
    ) as child:
        os.close(follower)
        seen = b""
        while True:
            try:
                chunk = os.read(leader, 4096)
            except OSError:  # the child closed the terminal
                break
            if not chunk:
                break
            seen += chunk
        assert child.wait(timeout=120) == 0
    os.close(leader)
    assert b"\r" in seen and b"joint states" in seen and b"% 1024/1101 messages" in seen


def test_multi_dof_joint_states_are_read_as_the_node_reads_them(tmp_path: Path) -> None:
    """A mobile base's planar joint from /multi_dof_joint_states (as Gazebo or MoveIt send
    it), its wheels from /joint_states: every link is the FK of both."""
    from bag_maker import STORE

    planar = REPO_ROOT / "test" / "urdf" / "mobile_base_planar.urdf"
    types = STORE.types
    theta = 0.8
    transform_value = types["geometry_msgs/msg/Transform"](
        translation=types["geometry_msgs/msg/Vector3"](x=1.5, y=-0.5, z=0.0),
        rotation=types["geometry_msgs/msg/Quaternion"](
            x=0.0, y=0.0, z=float(np.sin(theta / 2)), w=float(np.cos(theta / 2))
        ),
    )
    stamp_ns = T0_NS + 5 * 10**6
    time_type = types["builtin_interfaces/msg/Time"]
    header = types["std_msgs/msg/Header"](
        stamp=time_type(sec=stamp_ns // 10**9, nanosec=stamp_ns % 10**9), frame_id=""
    )
    multi = types["sensor_msgs/msg/MultiDOFJointState"](
        header=header,
        joint_names=["base_planar_joint"],
        transforms=[transform_value],
        twist=[],
        wrench=[],
    )
    data = bytes(STORE.serialize_cdr(multi, "sensor_msgs/msg/MultiDOFJointState"))
    bag, states = recording(
        tmp_path / "in", planar, "mcap", count=10,
        extra_topics=[Topic("/multi_dof_joint_states", "sensor_msgs/msg/MultiDOFJointState")],
        extra=[("/multi_dof_joint_states", stamp_ns, data)],
    )  # fmt: skip
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    robot = Robot.load(planar)
    later = [
        (t, {**cfg, "base_planar_joint": np.array([1.5, -0.5, theta])})
        for t, cfg in states
        if t > stamp_ns
    ]
    assert check_every_link(out, robot, later) == len(later)


def test_a_refused_description_mid_bag_keeps_the_model_as_the_node_does(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A recorded description that does not load: said with its line, the model stays (the
    node's rule for its topic), the repair goes on."""
    broken = ARM.read_text().replace('<child link="shoulder_link"/>', '<child link="nowhere"/>', 1)
    bag, states = recording(
        tmp_path / "in", ARM, "sqlite3", count=20,
        extra=[("/robot_description", T0_NS + 5 * 10**7, string(broken))],
    )  # fmt: skip
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    err = capsys.readouterr().err
    assert "robot description from topic rejected, the running model stays" in err
    assert "robot_description topic:" in err and "nowhere" in err
    assert check_every_link(out, Robot.load(ARM), states) == len(states)


def split_bag(folder: Path, storage: str) -> tuple[Path, list[tuple[int, dict[str, float]]]]:
    """A bag of two files, as `ros2 bag record --max-bag-duration` splits one: the
    description in the first file only, the joint states in both."""
    import shutil

    import yaml

    first, states = recording(folder / "first", ARM, storage, count=40)
    later = [(t + 40 * 10**7, cfg) for t, cfg in states]  # the next 0.4 s
    second = write_bag(
        folder / "second",
        storage,
        [Topic("/joint_states", "sensor_msgs/msg/JointState")],
        [("/joint_states", t, joint_state(t, list(cfg), list(cfg.values()))) for t, cfg in later],
    )
    metadata_path = first / "metadata.yaml"
    document = yaml.safe_load(metadata_path.read_text())
    info = document["rosbag2_bagfile_information"]
    (second_info,) = yaml.safe_load((second / "metadata.yaml").read_text())[
        "rosbag2_bagfile_information"
    ]["files"]
    suffix = ".mcap" if storage == "mcap" else ".db3"
    name = f"first_1{suffix}"
    shutil.move(second / second_info["path"], first / name)
    info["relative_file_paths"].append(name)
    info["files"].append({**second_info, "path": name})
    info["message_count"] += second_info["message_count"]
    info["duration"]["nanoseconds"] = later[-1][0] - T0_NS
    for topic in info["topics_with_message_count"]:
        if topic["topic_metadata"]["name"] == "/joint_states":
            topic["message_count"] += len(later)
    metadata_path.write_text(yaml.safe_dump(document))
    return first, states + later


@pytest.mark.parametrize("storage", STORAGES)
def test_a_split_bag_is_read_whole(tmp_path: Path, storage: str) -> None:
    bag, states = split_bag(tmp_path, storage)
    with Reader(bag) as reader:
        assert sum(1 for c, _, _ in reader.messages() if c.topic == "/joint_states") == 80
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    assert check_every_link(out, Robot.load(ARM), states) == 80


def test_another_publishers_static_frame_takes_its_value_at_each_time(tmp_path: Path) -> None:
    """A camera mount moved at 0.25 s, and its publisher republishing every 0.05 s: each
    /tf_static written (every 0.1 s) holds the value as of its log time, the first one the
    first value recorded (before the camera's first message too)."""
    moved_ns = T0_NS + 25 * 10**7
    extra = [
        (
            "/tf_static",
            T0_NS + 10**7 + k * 5 * 10**7,
            tf_message(
                [transform(T0_NS, "base_link", "camera", (0.1 if t < moved_ns else 0.3, 0, 0))]
            ),
        )
        for k in range(10)
        if (t := T0_NS + 10**7 + k * 5 * 10**7)
    ]
    bag, _ = recording(
        tmp_path / "in", ARM, "sqlite3", count=50,
        extra_topics=[Topic("/tf_static", TF_MESSAGE, [tf_static_qos()])], extra=extra,
    )  # fmt: skip
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--static-republish-period", "0.1") == 0
    _, recorded = read_bag(out)
    camera = [
        (t, next(x for x in messages.tf_transforms(d) if x.child_frame_id == "camera"))
        for topic, t, d in recorded
        if topic == "/tf_static"
    ]
    assert [(t - T0_NS) // 10**7 for t, _ in camera] == [0, 10, 20, 30, 40]
    assert [c.transform.translation.x for _, c in camera] == [0.1, 0.1, 0.1, 0.3, 0.3]


def test_a_connection_recorded_without_a_definition_gets_rosbags_own() -> None:
    """rosbag2 before Iron recorded no message definitions: a known type takes rosbags'
    definition and hash, an unknown one is copied without (never refused)."""
    from bag_maker import STORE
    from rosbags.interfaces import (
        Connection,
        ConnectionExtRosbag2,
        MessageDefinition,
        MessageDefinitionFormat,
    )

    from joint_tf_publisher.cli.bag.repair import recorded_definition

    def recorded(msgtype: str) -> Connection:
        empty = MessageDefinition(MessageDefinitionFormat.NONE, "")
        return Connection(1, "/x", msgtype, empty, "", 0, ConnectionExtRosbag2("cdr", []), None)

    definition, digest = recorded_definition(recorded(STRING))
    assert (definition, digest) == (
        STORE.generate_msgdef(STRING, ros_version=2)[0],
        STORE.hash_rihs01(STRING),
    )
    assert recorded_definition(recorded("my_msgs/msg/Private")) == ("", "")


def test_a_xacro_description_with_arguments(tmp_path: Path) -> None:
    from test_bag_repair_rules import xacro_arm

    xacro = xacro_arm(tmp_path / "arm.urdf.xacro")
    bag, states = recording(tmp_path / "in", ARM, "sqlite3", count=10)
    out = tmp_path / "out"
    assert (
        repair(
            str(bag),
            "-o",
            str(out),
            "--description",
            str(xacro),
            "--description-args",
            "height:=0.5",
        )
        == 0
    )
    expected = Robot.from_xml_string(
        ARM.read_text().replace('<origin xyz="0 0 0.1"', '<origin xyz="0 0 0.5"', 1)
    )
    assert check_every_link(out, expected, states) == len(states)


def test_a_repair_leaves_no_writing_process_behind(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """The writing process started at the repair's start (its start-up overlapping the
    bag's first reading) is the one the output writes through and stops: every writing
    process a repair starts has ended when it returns, whether it wrote the bag or refused
    the recording once read."""
    started: list[subprocess.Popen[bytes]] = []

    def kept(start: Callable[[], subprocess.Popen[bytes]]) -> Callable[[], Any]:
        def starting() -> subprocess.Popen[bytes]:
            started.append(start())
            return started[-1]

        return starting

    monkeypatch.setattr(repair_module, "start_writer", kept(repair_module.start_writer))
    monkeypatch.setattr(writer_module, "start_writer", kept(writer_module.start_writer))
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    chatter = write_bag(
        tmp_path / "chatter", "sqlite3", [Topic("/chatter", STRING)],
        [("/chatter", T0_NS, string("x"))],
    )  # fmt: skip
    for source, status in ((bag, 0), (chatter, 1)):  # written; refused once read
        started.clear()
        assert repair(str(source), "-o", str(tmp_path / f"out-{status}")) == status
        assert len(started) == 1 and started[0].poll() is not None
    capsys.readouterr()


def test_a_description_but_no_joint_states_writes_nothing_for_a_moving_robot(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without joint states the repair would only take the robot's recorded frames away:
    refused (exit 1, nothing written); a robot without moving joints needs none."""
    recorded_tf = [
        ("/tf", T0_NS, tf_message([transform(T0_NS, "base_link", "shoulder_link", (0, 0, 0.1))]))
    ]
    bag = write_bag(
        tmp_path / "in", "sqlite3",
        [Topic("/tf", TF_MESSAGE), Topic("/robot_description", STRING, [tf_static_qos()])],
        [*recorded_tf, ("/robot_description", T0_NS, string(ARM.read_text()))],
    )  # fmt: skip
    assert repair(str(bag), "-o", str(tmp_path / "out")) == 1
    assert capsys.readouterr().err == (  # why, what is kept, and what to do
        f"joint-tf-publisher bag repair: error: {bag}: no joint states (/joint_states, "
        "/multi_dof_joint_states): robot 'demo_arm' has moving joints whose frames cannot be "
        "rebuilt (its recorded /tf is left as it is: no output written); a JointState topic "
        "of another name goes in --params source_list\n"
    )
    assert not (tmp_path / "out").exists()
    fixed = tmp_path / "fixed.urdf"
    fixed.write_text(
        '<robot name="stand"><link name="base"/><link name="top"/>'
        '<joint name="post" type="fixed"><parent link="base"/><child link="top"/>'
        '<origin xyz="0 0 1"/></joint></robot>'
    )
    assert repair(str(bag), "-o", str(tmp_path / "out"), "--description", str(fixed)) == 0
    _, recorded = read_bag(tmp_path / "out")
    (static,) = [messages.tf_transforms(d) for topic, _, d in recorded if topic == "/tf_static"]
    assert [t.child_frame_id for t in static] == ["top"]


def test_the_nodes_parameters_file_applies_offline(tmp_path: Path) -> None:
    """source_list, time_offset and attachments from the node's own YAML: the wrist joints
    from a second topic, every stamp shifted by time_offset, and the attached tool's frames
    in the static set, with every link the FK of the composed robot."""
    from joint_tf_publisher.description.compose import Attachment, compose

    suction = REPO_ROOT / "urdf" / "suction_tool.urdf"
    params = tmp_path / "params.yaml"
    params.write_text(
        "joint_tf_publisher:\n  ros__parameters:\n"
        "    source_list: [wrist_states]\n"
        "    time_offset: -0.01\n"
        "    attachments:\n      names: [tool]\n"
        f"      tool:\n        file: {suction}\n        parent: tool_flange\n"
        "        prefix: tool_\n        origin: [0.0, 0.0, 0.05, 0.0, 0.0, 0.0]\n"
    )
    robot = Robot.load(ARM)
    bag_states = sweep(robot, 20, 100.0)
    wrist = {"wrist_1_joint", "wrist_2_joint", "wrist_3_joint"}
    messages_in = []
    for t, cfg in bag_states:
        arm = {k: v for k, v in cfg.items() if k not in wrist}
        hand = {k: v for k, v in cfg.items() if k in wrist}
        messages_in.append(("/joint_states", t, joint_state(t, list(arm), list(arm.values()))))
        messages_in.append(("/wrist_states", t, joint_state(t, list(hand), list(hand.values()))))
    topics = [
        Topic("/joint_states", "sensor_msgs/msg/JointState"),
        Topic("/wrist_states", "sensor_msgs/msg/JointState"),
        Topic("/robot_description", STRING, [tf_static_qos()]),
    ]
    messages_in.append(("/robot_description", T0_NS, string(ARM.read_text())))
    bag = write_bag(tmp_path / "in", "mcap", topics, messages_in)
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--params", str(params)) == 0
    _, recorded = read_bag(out)
    stamps = {
        t.header.stamp.sec * 10**9 + t.header.stamp.nanosec - time_ns
        for topic, time_ns, d in recorded
        if topic == "/tf"
        for t in messages.tf_transforms(d)
    }
    assert stamps == {-(10**7)}
    tool = Attachment(
        "tool", "tool_flange", file=str(suction), origin=(0, 0, 0.05, 0, 0, 0), prefix="tool_"
    )
    composed_robot = Robot.from_xml_string(compose(ARM.read_text(), (tool,)))
    assert {"tool_base_link", "tool_cup"} <= set(composed_robot.links)
    shifted = [(t - 10**7, cfg) for t, cfg in bag_states]
    edges: dict[str, tuple[str, np.ndarray]] = {}
    checked = 0
    by_time = dict(shifted)
    for topic, _, data in recorded:
        if topic not in ("/tf", "/tf_static"):
            continue
        transforms = messages.tf_transforms(data)
        for t in transforms:
            edges[t.child_frame_id] = (t.header.frame_id, pose(t))
        stamp = transforms[0].header.stamp.sec * 10**9 + transforms[0].header.stamp.nanosec
        if topic == "/tf" and {t.child_frame_id for t in transforms} & {"wrist_1_link"}:
            for link, matrix in composed_robot.link_fk(by_time[stamp]).items():
                np.testing.assert_allclose(
                    composed(edges, link, robot.root), matrix, atol=TOLERANCE
                )
            checked += 1
    assert checked == len(shifted)


def test_the_global_tree_goes_out_too(tmp_path: Path) -> None:
    """global_frame_prefix: each JointState's transforms in both trees on /tf, and one
    /tf_static message with both static sets (playback latches one message per topic)."""
    params = tmp_path / "params.yaml"
    params.write_text("/**:\n  ros__parameters:\n    global_frame_prefix: fleet/arm1/\n")
    bag, states = recording(tmp_path / "in", ARM, "sqlite3", count=10)
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--params", str(params)) == 0
    _, recorded = read_bag(out)
    (static,) = [messages.tf_transforms(d) for topic, _, d in recorded if topic == "/tf_static"]
    assert {t.child_frame_id for t in static} == {
        prefix + child
        for prefix in ("", "fleet/arm1/")
        for child in ("tool_flange", "gripper_base_link")
    }
    assert sum(topic == "/tf" for topic, _, _ in recorded) == 2 * len(states)
    robot = Robot.load(ARM)
    assert check_every_link(out, robot, states) == len(states)
    assert check_every_link(out, robot, states, prefix="fleet/arm1/") == len(states)


def namespaced_recording(
    path: Path, robot_tf_in_namespace: bool, wrist_topic: bool = True
) -> tuple[Path, list[tuple[int, dict[str, float]]]]:
    """The arm run in namespace robot1: its joint states on /robot1/joint_states and (the
    wrist's, with ``wrist_topic``) /robot1/arm_states (a relative source_list topic), its
    description on
    /robot1/robot_description, a static frame of it recorded volatile on /robot1/tf_static
    (Nav2's layout, ``robot_tf_in_namespace``) or /tf_static; another robot's frame on the
    global /tf."""
    robot = Robot.load(ARM)
    states = sweep(robot, 20, 100.0)
    wrist = {"wrist_1_joint", "wrist_2_joint", "wrist_3_joint"} if wrist_topic else set()
    tf_static = "/robot1/tf_static" if robot_tf_in_namespace else "/tf_static"
    a_link = next(iter(robot.joints.values())).child  # the robot's: replaced
    old_static = tf_message([transform(T0_NS, "old_parent", a_link, [0.0, 0.0, 0.0])])
    messages_in = [
        ("/robot1/robot_description", T0_NS, string(ARM.read_text())),
        (tf_static, T0_NS, old_static),
    ]
    for t, cfg in states:
        arm = {k: v for k, v in cfg.items() if k not in wrist}
        hand = {k: v for k, v in cfg.items() if k in wrist}
        messages_in += [
            ("/robot1/joint_states", t, joint_state(t, list(arm), list(arm.values()))),
            ("/tf", t, tf_message([transform(t, "map", "robot2/base", [1.0, 2.0, 0.0])])),
        ]
        if hand:
            messages_in.append(
                ("/robot1/arm_states", t, joint_state(t, list(hand), list(hand.values())))
            )
    topics = [
        Topic("/robot1/joint_states", "sensor_msgs/msg/JointState"),
        Topic("/robot1/arm_states", "sensor_msgs/msg/JointState"),
        Topic("/robot1/robot_description", STRING, [tf_static_qos()]),
        Topic(tf_static, TF_MESSAGE),
        Topic("/tf", TF_MESSAGE, [tf_qos()]),
    ]
    messages_in.sort(key=lambda m: m[1])
    return write_bag(path, "mcap", topics, messages_in), states


@pytest.mark.parametrize("robot_tf_in_namespace", [True, False])
def test_a_robot_recorded_in_a_namespace(tmp_path: Path, robot_tf_in_namespace: bool) -> None:
    """--namespace: the robot's joint states, description and relative source_list topics
    under it; its TF where the recording has it (Nav2's /robot1/tf, else the global /tf);
    the other robot's global /tf kept as it was."""
    bag, states = namespaced_recording(tmp_path / "in", robot_tf_in_namespace)
    params = tmp_path / "params.yaml"
    # The section of the node in /robot1 (a bare joint_tf_publisher: is the root node's).
    params.write_text(
        "/robot1/joint_tf_publisher:\n  ros__parameters:\n    source_list: [arm_states]\n"
    )
    assert repair(str(bag), "-o", str(tmp_path / "root")) == 1  # no joint states in the root
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--namespace", "robot1", "--params", str(params)) == 0
    names = ("/robot1/tf", "/robot1/tf_static") if robot_tf_in_namespace else ("/tf", "/tf_static")
    assert check_every_link(out, Robot.load(ARM), states, tf_topics=names) == len(states)
    connections, recorded = read_bag(out)
    (static_qos,) = connections[names[1]].ext.offered_qos_profiles
    assert static_qos.durability is QosDurability.TRANSIENT_LOCAL
    statics = [
        t for topic, _, d in recorded if topic == names[1] for t in messages.tf_transforms(d)
    ]
    assert statics and all(t.header.frame_id != "old_parent" for t in statics)  # replaced
    others = [d for topic, _, d in recorded if topic == "/tf" and b"robot2/base" in d]
    assert len(others) == len(states)  # the other robot's frames, kept as they were


def test_a_namespace_that_is_not_one_is_a_usage_error(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exited:
        repair(str(tmp_path / "in"), "-o", str(tmp_path / "out"), "--namespace", "1robot")
    assert exited.value.code == 2
    assert "--namespace: '1robot' is no namespace" in capsys.readouterr().err


def test_the_doctor_reads_a_namespaced_recording_and_its_repair(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """doctor --bag --namespace: the robot's topics under it; the recorded volatile
    /robot1/tf_static found, its fix the repair with --namespace, the repair healthy."""
    import json

    bag, _ = namespaced_recording(tmp_path / "in", robot_tf_in_namespace=True, wrist_topic=False)
    code = main(["doctor", "--bag", str(bag), "--namespace", "robot1", "--json"])
    document = json.loads(capsys.readouterr().out)
    assert code == 1
    (latched,) = [f for f in document["findings"] if f["kind"] == "tf_static_not_latched"]
    assert "--namespace /robot1" in latched["fix"]
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--namespace", "robot1") == 0
    assert "1 recorded robot transform(s) replaced" in capsys.readouterr().out
    assert main(["doctor", "--bag", str(out), "--namespace", "/robot1/", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["healthy"] is True
    with pytest.raises(SystemExit) as exited:  # a live node's namespace comes with --node
        main(["doctor", "--namespace", "robot1"])
    assert exited.value.code == 2


def test_the_doctor_takes_the_nodes_parameters_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """doctor --bag --params: the source_list topics' joints count as recorded (the wrist's
    on /robot1/arm_states), and the suggested repair carries the file; a file that does not
    load is one line and exit 1; --params without --bag is a usage error. Keys the node would
    not declare (issue 47) are warned about by both, with what was meant, never refused."""
    import json

    bag, _ = namespaced_recording(tmp_path / "in", robot_tf_in_namespace=True)
    params = tmp_path / "params.yaml"
    params.write_text(  # the section of the node in /robot1, and another robot's
        "/robot1/joint_tf_publisher:\n  ros__parameters:\n    source_list: [arm_states]\n"
        "    attachments: [tool]\n    publish_frequncy: 5.0\n"
        "/robot2/joint_tf_publisher:\n  ros__parameters:\n    source_list: [other]\n"
        "    robot2_only: 1\n"
    )
    warned = (
        f"warning: --params {params}: parameter 'attachments' is given for this node but is "
        "none of its parameters: ignored; did you mean attachments.names?",
        f"warning: --params {params}: parameter 'publish_frequncy' is given for this node but "
        "is none of its parameters: ignored; did you mean publish_frequency?",
    )
    doctor = ["doctor", "--bag", str(bag), "--namespace", "robot1", "--json"]
    assert main(doctor) == 1
    without = json.loads(capsys.readouterr().out)
    (missing,) = [f for f in without["findings"] if f["kind"] == "joints_not_recorded"]
    assert set(missing["details"]["joints"]) == {"wrist_1_joint", "wrist_2_joint", "wrist_3_joint"}
    assert main([*doctor, "--params", str(params)]) == 1
    printed = capsys.readouterr()
    found = json.loads(printed.out)
    assert [line.split(" (a /**")[0] for line in printed.err.splitlines()] == list(warned)
    assert "joints_not_recorded" not in [f["kind"] for f in found["findings"]]
    (latched,) = [f for f in found["findings"] if f["kind"] == "tf_static_not_latched"]
    assert f"--params {params}" in latched["fix"]
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--namespace", "robot1", "--params", str(params)) == 0
    err = capsys.readouterr().err
    assert all(line in err for line in warned), err
    assert (
        main(["doctor", "--bag", str(out), "--namespace", "robot1", "--params", str(params)]) == 0
    )
    capsys.readouterr()
    params.write_text("/**:\n  ros__parameters:\n    source_list: 3\n")
    assert main([*doctor, "--params", str(params)]) == 1
    assert capsys.readouterr().err.count("\n") == 1
    with pytest.raises(SystemExit) as exited:
        main(["doctor", "--params", str(params)])
    assert exited.value.code == 2


def test_a_loop_robots_bag_is_repaired_with_its_loop_closed(tmp_path: Path) -> None:
    """A four-bar (URDF ``<loop_joint>``) recorded with its crank alone, through a full turn:
    the repaired /tf carries the passive coupler and rocker too, every link where the
    package's FK (the loop closed) puts it."""
    description = REPO_ROOT / "test" / "data" / "loops" / "four_bar_loop_joint.urdf"
    robot = Robot.load(description)
    states = [
        (T0_NS + k * 10_000_000, {"ground_crank": float(crank)})
        for k, crank in enumerate(np.linspace(0.0, 2 * np.pi, 60))
    ]
    messages = [("/joint_states", t, joint_state(t, list(v), list(v.values()))) for t, v in states]
    messages.append(("/robot_description", T0_NS, string(description.read_text())))
    topics = [
        Topic("/joint_states", JOINT_STATE),
        Topic("/robot_description", STRING, [tf_static_qos()]),
    ]
    bag = write_bag(tmp_path / "in", "mcap", topics, sorted(messages, key=lambda m: m[1]))
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out)) == 0
    assert check_every_link(out, robot, states) == len(states)
