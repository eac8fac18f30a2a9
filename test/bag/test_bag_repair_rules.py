"""``bag repair``'s rules outside its ``Repair`` run, called in-process (issue #44's mutation
rule over cli/bag/repair.py): the settings and the description the repair takes from
``--params`` and ``--description``, the static sets' schedule and byte budget, the summary
line's words, the logger's lines on stderr and the progress line on a terminal. Each test
here was checked to fail with the mutants of ``make mutate`` it answers."""

from __future__ import annotations

import io
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from joint_tf_publisher.cli.bag.repair import (
    StderrLogger,
    fitted_interval,
    input_bytes,
    next_static_mark,
)
from joint_tf_publisher.node_core.parameters import Settings

MS = 10**6


def test_the_logger_writes_each_level_on_stderr_with_its_word(
    capsys: pytest.CaptureFixture[str],
) -> None:
    """The pipeline's lines offline go to stderr (stdout holds the summary alone), each
    with the word that says its level; a stream given takes them instead."""
    logger = StderrLogger()
    logger.info("a model installed")
    logger.warning("a joint never received")
    logger.error("a description refused")
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err == (
        "note: a model installed\nwarning: a joint never received\nerror: a description refused\n"
    )
    stream = io.StringIO()
    StderrLogger(stream).warning("to the stream")
    assert stream.getvalue() == "warning: to the stream\n"
    assert capsys.readouterr().err == ""


def test_the_next_static_set_is_due_at_the_next_period_mark_gaps_not_made_up() -> None:
    """After a set written at ``time_ns`` for the mark ``mark_ns``, the next is due at the
    first later multiple of the period past the first mark: on the mark itself, one period
    on; late within a period, the period's end; after a gap of several periods, the mark
    after the gap (one set, not one per period passed)."""
    period_ns = 100 * MS
    mark_ns = 5_000 * MS
    assert next_static_mark(mark_ns, mark_ns, period_ns) == mark_ns + period_ns
    assert next_static_mark(mark_ns, mark_ns + 99 * MS, period_ns) == mark_ns + period_ns
    assert next_static_mark(mark_ns, mark_ns + 100 * MS, period_ns) == mark_ns + 2 * period_ns
    after_gap = next_static_mark(mark_ns, mark_ns + 735 * MS, period_ns)
    assert after_gap == mark_ns + 8 * period_ns
    assert isinstance(after_gap, int)  # a log time in ns, as the bag stores it


def test_static_sets_over_the_budget_are_spaced_to_fit_it_exactly() -> None:
    """The sets of ``set_bytes`` written every interval over the recording add at most the
    byte budget: an interval that fits (the budget reached exactly included) is kept; one
    that does not is lengthened to whole ns (the recording's length times a set's bytes over
    the budget, rounded up) at which they fit."""
    # 25 s at 10 s: 2 sets (the partial third period writes none) of 10 bytes = the budget
    assert fitted_interval(25, 10, 10, 20) == 10
    assert fitted_interval(30, 10, 10, 30) == 10
    # 3 sets of 10 bytes over a budget of 20: every 15 ns, 2 sets
    longer = fitted_interval(30, 10, 10, 20)
    assert longer == 15 and isinstance(longer, int)
    assert 10 * (30 // longer) <= 20
    # rounded up: 1,000 ns of 7-byte sets in 300 bytes -> ceil(7000 / 300) = 24 ns
    assert fitted_interval(1_000, 1, 7, 300) == 24
    assert 7 * (1_000 // 24) <= 300 < 7 * (1_000 // 23)


def test_the_input_size_is_the_bag_files_together(tmp_path: Path) -> None:
    """The byte budget's input size: every file of a bag folder that its metadata lists,
    and metadata.yaml, added; a bare storage file's own size."""
    from bag_maker import recording
    from repo_paths import REPO_ROOT

    bag, _ = recording(tmp_path / "in", REPO_ROOT / "urdf" / "demo_arm.urdf", "sqlite3")
    (bag / "notes.txt").write_text("not the bag's" * 1000)  # in the folder, not listed
    files = [bag / "metadata.yaml", *bag.glob("*.db3")]
    assert len(files) == 2
    assert input_bytes(bag) == sum(file.stat().st_size for file in files)
    database = files[1]
    assert input_bytes(database) == database.stat().st_size


# -- settings: --params in the node's namespace, the repair's rate cap, the period option ----


def params_yaml(path: Path, sections: dict[str, dict[str, Any]]) -> Path:
    """A parameters file of ``sections`` (section key -> parameters, as YAML flow text)."""
    import yaml

    path.write_text(yaml.safe_dump({k: {"ros__parameters": v} for k, v in sections.items()}))
    return path


def test_params_are_the_sections_of_the_nodes_namespace_and_unknown_keys_are_warned(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--params`` gives the node in ``--namespace`` its own section over ``/**`` (another
    robot's section does not apply); a key the node would not declare is a warning on
    stderr naming the file, and none given is the node's defaults; a file that does not
    load or a value refused is refused naming the file."""
    from joint_tf_publisher.cli.bag.errors import BagError
    from joint_tf_publisher.cli.bag.repair import RepairOptions, params_settings, repair_settings

    params = params_yaml(
        tmp_path / "fleet.yaml",
        {
            "/**": {"frame_prefix": "any/", "not_a_parameter": 1},
            "/robot1/joint_tf_publisher": {"frame_prefix": "one/"},
            "/robot2/joint_tf_publisher": {"frame_prefix": "two/"},
        },
    )
    settings, values = params_settings(params, "robot1")
    assert (settings.frame_prefix, values["frame_prefix"]) == ("one/", "one/")
    err = capsys.readouterr().err
    assert err.startswith(f"warning: --params {params}: ") and "not_a_parameter" in err, err
    assert params_settings(params, "")[0].frame_prefix == "any/"
    options = RepairOptions(tmp_path / "in", tmp_path / "out", params=params, namespace="robot2")
    assert repair_settings(options)[0].frame_prefix == "two/"
    capsys.readouterr()
    settings, values = params_settings(None)
    assert (settings.frame_prefix, values) == ("", {})
    assert capsys.readouterr().err == ""
    refused = params_yaml(tmp_path / "refused.yaml", {"/**": {"clamp": "sideways"}})
    missing = tmp_path / "missing.yaml"
    for path, words in ((refused, "clamp must be one of"), (missing, str(missing))):
        with pytest.raises(BagError) as error:
            params_settings(path)
        assert str(error.value).startswith(f"--params {path}") and words in str(error.value)


def test_every_recorded_state_is_kept_unless_the_params_set_the_rate_cap(tmp_path: Path) -> None:
    """Without ``publish_frequency`` or ``ignore_timestamp`` in ``--params`` the repair
    keeps every JointState (``ignore_timestamp``); either one in the file is the node's
    setting as given; ``--static-republish-period`` wins over the file's and is refused by
    name out of range."""
    from joint_tf_publisher.cli.bag.errors import BagError
    from joint_tf_publisher.cli.bag.repair import RepairOptions, repair_settings

    def settings_of(values: dict[str, Any] | None, period: float | None = None) -> Settings:
        params = None if values is None else params_yaml(tmp_path / "p.yaml", {"/**": values})
        options = RepairOptions(
            tmp_path / "in", tmp_path / "out", params=params, static_republish_period=period
        )
        return repair_settings(options)[0]

    assert settings_of(None).ignore_timestamp is True
    assert settings_of({"frame_prefix": "a/"}).ignore_timestamp is True
    capped = settings_of({"publish_frequency": 50.0})
    assert (capped.ignore_timestamp, capped.publish_frequency) == (False, 50.0)
    assert settings_of({"ignore_timestamp": False}).ignore_timestamp is False
    both = {"ignore_timestamp": True, "publish_frequency": 50.0}
    assert settings_of(both).ignore_timestamp is True
    period = {"static_republish_period": 5.0}
    assert settings_of(period).static_republish_period == 5.0
    assert settings_of(period, 2.0).static_republish_period == 2.0
    with pytest.raises(BagError, match="^static_republish_period must be 0"):
        settings_of(None, 0.05)


# -- the description: the node's one source, --description as its description_file ----------


def xacro_arm(path: Path) -> Path:
    """demo_arm as a .xacro whose first joint's height is the argument ``height``."""
    from repo_paths import REPO_ROOT

    text = (REPO_ROOT / "urdf" / "demo_arm.urdf").read_text()
    text = text.replace(
        '<robot name="demo_arm">',
        '<robot name="demo_arm" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="height" default="0.1"/>',
    )
    text = text.replace('<origin xyz="0 0 0.1"', '<origin xyz="0 0 $(arg height)"', 1)
    assert "$(arg height)" in text
    path.write_text(text)
    return path


def test_the_description_is_the_nodes_one_source_with_description_as_its_file(
    tmp_path: Path,
) -> None:
    """Which description the bag commands load: none given (blank text counts as none) is
    the recording's topic, as is ``description_from_topic``; the file's
    ``description_file`` (with its ``description_args``) or ``robot_description``, loaded as
    the node loads them, or ``--description`` (with its own arguments) in place of the
    file's ``description_file``; each loaded model named for its refusals, a refused
    text's lines as the node names them."""
    from repo_paths import REPO_ROOT

    from joint_tf_publisher.cli.bag.repair import description_choice, given_description
    from joint_tf_publisher.errors import ModelError
    from joint_tf_publisher.node_core.description_source import DescriptionSource

    arm = REPO_ROOT / "urdf" / "demo_arm.urdf"
    xacro = xacro_arm(tmp_path / "arm.urdf.xacro")

    def choice(values: dict[str, Any], given: bool = False) -> DescriptionSource | None:
        return description_choice(Settings.from_values(values), values, given, None)

    def loaded(
        values: dict[str, Any], description: Path | None = None, args: tuple[str, ...] = ()
    ) -> tuple[str, float]:
        """(the name given_description gives it, the first joint's height loaded)."""
        settings = Settings.from_values(values)
        answer = given_description(settings, values, description, args)
        assert answer is not None
        loader, name = answer
        model, _ = loader(settings)
        first = model.robot.joints["shoulder_pan_joint"]
        return name, round(float(first.origin[2, 3]), 6)

    blank = {"robot_description": "  \n", "description_file": " "}
    for values in ({}, blank):
        assert choice(values) is None
        assert given_description(Settings.from_values(values), values) is None
    topic = {"description_from_topic": True}
    assert choice(topic) is DescriptionSource.TOPIC
    assert given_description(Settings.from_values(topic), topic) is None
    assert choice({}, given=True) is DescriptionSource.FILE
    assert choice({"description_file": str(arm)}) is DescriptionSource.FILE
    text = {"robot_description": arm.read_text()}
    assert choice(text) is DescriptionSource.PARAMETER
    assert loaded(text) == ("robot_description parameter", 0.1)
    in_file = {"description_file": str(xacro), "description_args": ["height:=0.5"]}
    assert loaded(in_file) == (str(xacro), 0.5)
    assert loaded({}, xacro, ("height:=0.7",)) == (str(xacro), 0.7)
    assert loaded(in_file, xacro, ("height:=0.7",)) == (str(xacro), 0.7)  # over the file's
    assert loaded({"description_file": str(arm)}, xacro) == (str(xacro), 0.1)
    broken = {
        "robot_description": '<robot name="x">\n  <link name="a"/>\n  <joint name="j" '
        'type="revolute"/>\n</robot>'
    }
    answer = given_description(Settings.from_values(broken), broken)
    assert answer is not None
    with pytest.raises(ModelError, match="^robot_description:3: joint 'j'"):
        answer[0](Settings.from_values(broken))


def test_two_description_sources_are_refused_naming_where_each_was_given(
    tmp_path: Path,
) -> None:
    """Two sources (``--description`` and the file's ``robot_description``, or two in the
    file) are the node's refusal, after the options that gave them."""
    from repo_paths import REPO_ROOT

    from joint_tf_publisher.cli.bag.errors import BagError
    from joint_tf_publisher.cli.bag.repair import description_choice, given_description

    arm = REPO_ROOT / "urdf" / "demo_arm.urdf"
    params = tmp_path / "params.yaml"
    text = {"robot_description": arm.read_text()}
    both = {**text, "description_file": str(arm)}
    cases = (
        (text, True, params, f"--description and --params {params}: "),
        (text, True, None, "--description: "),
        (both, False, params, f"--params {params}: "),
    )
    for values, given, path, where in cases:
        with pytest.raises(BagError) as refused:
            description_choice(Settings.from_values(values), values, given, path)
        said = str(refused.value)
        assert said.startswith(where) and "both give the robot description" in said, said
    with pytest.raises(BagError, match=f"^--description and --params {params}: "):
        given_description(Settings.from_values(text), text, arm, (), params)


# -- the first pass: the recording's descriptions and other publishers' statics -------------


def test_the_first_pass_finds_each_description_change_and_each_static_value(
    tmp_path: Path,
) -> None:
    """The first read of a recording: its descriptions in log-time order without consecutive
    repeats (a return to an earlier one is a change), every recorded static transform
    counted by child frame with its values, a value repeated (a republishing publisher)
    kept once and a new parent a new value; the messages that do not decode counted."""
    from bag_maker import STRING, T0_NS, TF_MESSAGE, Topic, string, tf_message, transform, write_bag

    from joint_tf_publisher.cli.bag.reader import open_bag
    from joint_tf_publisher.cli.bag.repair import first_pass
    from joint_tf_publisher.cli.bag.topics import robot_topics

    def at(k: int) -> int:
        return T0_NS + k * 100 * MS

    def camera(parent: str, x: float) -> object:
        return transform(at(0), parent, "camera", (x, 0.0, 0.0))

    recorded = [
        ("/robot_description", at(0), string("<robot name='a'/>")),
        ("/robot_description", at(1), string("<robot name='a'/>")),
        ("/robot_description", at(2), string("<robot name='b'/>")),
        ("/robot_description", at(3), string("<robot name='a'/>")),
        ("/robot_description", at(4), b"\x00\x01\x00\x00"),
        (
            "/tf_static",
            at(0),
            tf_message([camera("world", 1.0), transform(at(0), "w", "m", (2.0, 0.0, 0.0))]),
        ),
        ("/tf_static", at(1), tf_message([camera("world", 1.0)])),
        ("/tf_static", at(2), tf_message([camera("world", 1.5)])),
        ("/tf_static", at(3), tf_message([camera("base", 1.5)])),
        ("/tf_static", at(4), b"\x00\x01\x00\x00\x07"),
        ("/chatter", at(1), string("not a description")),
    ]
    topics = [
        Topic("/robot_description", STRING),
        Topic("/tf_static", TF_MESSAGE),
        Topic("/chatter", STRING),
    ]
    bag = write_bag(tmp_path / "in", "sqlite3", topics, recorded)
    with open_bag(bag) as opened:
        descriptions, statics, broken = first_pass(opened, robot_topics(""))
    assert descriptions == [
        (at(0), "<robot name='a'/>"),
        (at(2), "<robot name='b'/>"),
        (at(3), "<robot name='a'/>"),
    ]
    assert broken == 2
    assert statics.count == {"camera": 4, "m": 1}
    values = {
        child: [(t, v.header.frame_id, v.transform.translation.x) for t, v in changes]
        for child, changes in statics.changes.items()
    }
    assert values == {
        "camera": [(at(0), "world", 1.0), (at(2), "world", 1.5), (at(3), "base", 1.5)],
        "m": [(at(0), "w", 2.0)],
    }


def test_a_definition_or_hash_missing_alone_is_completed_from_rosbags() -> None:
    """A connection recorded with a definition but no type hash keeps its definition and
    takes rosbags' hash; one with a hash but no definition keeps its hash and takes
    rosbags' definition."""
    from bag_maker import STORE, STRING
    from rosbags.interfaces import (
        Connection,
        ConnectionExtRosbag2,
        MessageDefinition,
        MessageDefinitionFormat,
    )

    from joint_tf_publisher.cli.bag.repair import recorded_definition

    def recorded(definition: str, digest: str) -> Connection:
        msgdef = MessageDefinition(MessageDefinitionFormat.MSG, definition)
        return Connection(1, "/x", STRING, msgdef, digest, 0, ConnectionExtRosbag2("cdr", []), None)

    known = STORE.generate_msgdef(STRING, ros_version=2)[0]
    known_digest = STORE.hash_rihs01(STRING)
    assert recorded_definition(recorded("string data # ours", "")) == (
        "string data # ours",
        known_digest,
    )
    assert recorded_definition(recorded("", "RIHS01_ours")) == (known, "RIHS01_ours")
    assert recorded_definition(recorded("string data", "RIHS01_x")) == ("string data", "RIHS01_x")


# -- the summary line ------------------------------------------------------------------------


def test_the_summary_line_says_every_count_in_its_words() -> None:
    """The one line ``bag repair`` ends with (docs/recordings.md): its counts, the kept
    frames' first five names and how many more, the rate (none for no time), the period
    lengthened, and with ``--static-union`` the union's frames, publishers, refusals by
    reason and conflicts."""
    from joint_tf_publisher.cli.bag.repair import RepairSummary
    from joint_tf_publisher.health.model import UnionConflictFact, UnionFacts

    summary = RepairSummary(
        messages_in=40,
        joint_states=30,
        undecodable=1,
        tf_out=28,
        transforms_out=224,
        frames_replaced=3,
        frames_kept={f"frame_{i}": 2 for i in range(7)},
        mismatched_lengths=2,
        stamps_out_of_range=4,
        statics_written=5,
        static_period=0.25,
        descriptions=2,
        copied=11,
        seconds=0.5,
        output="out",
    )
    assert summary.line() == (
        "wrote out: 40 messages in, 30 joint states (1 undecodable, 2 of mismatched lengths, "
        "4 stamped out of range: skipped) -> 28 /tf messages with 224 transforms; 3 recorded "
        "robot transform(s) replaced, 14 kept that the repair does not write (frame_0, "
        "frame_1, frame_2, frame_3, frame_4 and 2 more); 5 /tf_static message(s) (every "
        "0.250 s, lengthened to fit); 2 description(s); 11 messages copied; 0.5 s (60 joint "
        "states/s)"
    )
    plain = RepairSummary(
        joint_states=30, frames_kept={f"f{i}": 1 for i in range(5)}, seconds=0.0, output="o"
    )
    line = plain.line()
    assert "5 kept that the repair does not write (f0, f1, f2, f3, f4); 0 /tf_static " in line
    assert "/tf_static message(s); 0 description(s)" in line and line.endswith("(0 joint states/s)")
    nothing_kept = RepairSummary(output="o").line()
    assert "0 kept that the repair does not write; 0 /tf_static message(s); 0 desc" in nothing_kept
    union = UnionFacts(
        frames=3,
        max_frames=10,
        publishers=("/camera_driver", "/lidar_driver"),
        refused={"within the robot's tree": 1, "beyond static_union_max_frames": 2},
        conflicts=(UnionConflictFact("camera", "/tf_static#1", "/tf_static#2", 0),),
        more_conflicts=1,
    )
    with_union = replace(summary, union=union, union_interval=0.5).line()
    assert (
        "lengthened to fit), with the static union of 3 recorded foreign frame(s) (of 10) from "
        "2 recorded publisher(s), changes at most every 0.5 s (lengthened to fit); 3 recorded "
        "static transform(s) refused (beyond static_union_max_frames (2x), within the robot's "
        "tree (1x)), 2 conflict(s) (camera (kept /tf_static#1, refused /tf_static#2) and 1 "
        "more); 2 description(s)"
    ) in with_union
    quiet = replace(summary, union=UnionFacts(frames=0, max_frames=10), union_interval=None)
    assert (
        "with the static union of 0 recorded foreign frame(s) (of 10) from 0 recorded "
        "publisher(s); 0 recorded static transform(s) refused, 0 conflict(s); 2 description(s)"
    ) in quiet.line()


# -- a repair's run, in-process: its counts and its progress line ------------------------------


def test_the_summary_counts_the_states_dropped_and_the_transforms_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Each JointState the node's pipeline drops is counted by reason (3 of mismatched
    lengths, 2 stamped out of range with the file's ``time_offset``), and the /tf
    messages and transforms counted are those written."""
    from bag_maker import T0_NS, joint_state, recording
    from repo_paths import REPO_ROOT
    from rosbags.rosbag2 import Reader

    from joint_tf_publisher.cli.bag import messages
    from joint_tf_publisher.cli.main import main

    last_stamp_ns = (2**31 - 1) * 10**9
    names = ["shoulder_pan_joint", "elbow_joint"]
    dropped = [(T0_NS + k * MS + 1, joint_state(T0_NS, names, [0.1])) for k in range(3)]
    dropped += [(T0_NS + k * MS + 2, joint_state(last_stamp_ns, names, [0.1, 0.2])) for k in (1, 2)]
    bag, states = recording(
        tmp_path / "in",
        REPO_ROOT / "urdf" / "demo_arm.urdf",
        count=6,
        extra=[("/joint_states", t, data) for t, data in dropped],
    )
    params = params_yaml(tmp_path / "p.yaml", {"/**": {"time_offset": 1.0}})
    out = tmp_path / "out"
    assert main(["bag", "repair", str(bag), "-o", str(out), "--params", str(params)]) == 0
    summary = capsys.readouterr().out
    assert "11 joint states (0 undecodable, 3 of mismatched lengths, 2 stamped out of range" in (
        summary
    )
    with Reader(out) as reader:
        written = [messages.tf_transforms(d) for c, _, d in reader.messages() if c.topic == "/tf"]
    assert len(written) == len(states)
    counted = f"-> {len(written)} /tf messages with {sum(map(len, written))} transforms;"
    assert counted in summary, summary


def test_a_progress_line_on_a_terminal_and_nothing_on_a_pipe(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``run_repair`` with stderr a terminal (a pty) shows the progress line, rewritten in
    place and cleared at the end; with stderr a pipe it writes nothing there."""
    import os
    import pty
    import sys

    from bag_maker import recording
    from repo_paths import REPO_ROOT

    from joint_tf_publisher.cli.bag.repair import RepairOptions, run_repair

    bag, _ = recording(tmp_path / "in", REPO_ROOT / "urdf" / "demo_arm.urdf", count=1030)
    piped = io.StringIO()
    monkeypatch.setattr(sys, "stderr", piped)
    assert run_repair(RepairOptions(bag, tmp_path / "a")).joint_states == 1030
    assert piped.getvalue() == ""
    leader, follower = pty.openpty()
    try:
        with os.fdopen(follower, "w", closefd=True) as terminal:
            monkeypatch.setattr(sys, "stderr", terminal)
            assert run_repair(RepairOptions(bag, tmp_path / "b")).joint_states == 1030
            terminal.flush()
            monkeypatch.setattr(sys, "stderr", sys.__stderr__)
            os.set_blocking(leader, False)
            seen = os.read(leader, 1 << 16)
    finally:
        os.close(leader)
    assert b"% 1024/1031 messages, 1023 joint states\r" in seen, seen
    assert seen.endswith(b"\r" + b" " * 70 + b"\r"), seen
