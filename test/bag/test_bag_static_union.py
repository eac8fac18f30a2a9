"""``bag repair --static-union``: the repaired bag's /tf_static carries the union of every
recorded publisher's statics, kept as the node's ``static_union`` keeps them (newest per frame,
a conflict's first publisher kept and reported, hostile frames refused and counted), written
at the start, at each change and every period, so a slice or a late start has them all; and
without the option the repair is as it was.

The recordings are made here with rosbags' writer (``bag_maker``): the demo arm, and two
recorded ``/tf_static`` connections, as a bag merged from two recordings has them (rosbag2
records no writer GIDs: one connection is one publisher).
"""

from __future__ import annotations

from itertools import pairwise
from pathlib import Path
from typing import Any

import pytest
from bag_maker import T0_NS, TF_MESSAGE, Topic, recording, tf_message, transform
from repo_paths import REPO_ROOT
from rosbags.interfaces import QosDurability
from rosbags.rosbag2 import Reader
from test_bag_repair import check_every_link

from joint_tf_publisher import Robot
from joint_tf_publisher.cli.bag import messages
from joint_tf_publisher.cli.bag.qos import tf_qos, tf_static_qos
from joint_tf_publisher.cli.main import main

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
MS = 10**6
NAN = float("nan")
#: The arm's fixed joints' children: its static set.
ROBOT_STATICS = {"tool_flange", "gripper_base_link"}


def hostile_recording(path: Path) -> Path:
    """0.5 s of the arm (100 JointStates a second) with two recorded /tf_static publishers:

    - A (latched): ``camera`` at the start; NaN, its-own-parent, a rotation of length 2, a
      two-frame cycle and the robot's own ``tool_flange`` at 100 ms; ``lidar`` alone at
      200 ms (a tool that latches only its last message); ``camera`` recalibrated at 300 ms;
    - B (another QoS: a second connection): ``camera`` under another parent at 150 ms (a
      conflict: A keeps it) and ``gps``.
    """
    a = [
        (0, [transform(T0_NS, "base_link", "camera", (0.1, 0, 0))]),
        (
            100,
            [
                transform(T0_NS, "base_link", "nan_frame", (NAN, 0, 0)),
                transform(T0_NS, "selfie", "selfie", (0, 0, 0)),
                transform(T0_NS, "base_link", "squashed", (0, 0, 0), (0, 0, 0, 2.0)),
                transform(T0_NS, "loop_b", "loop_a", (0, 0, 0)),
                transform(T0_NS, "loop_a", "loop_b", (0, 0, 0)),
                transform(T0_NS, "base_link", "tool_flange", (9.0, 9.0, 9.0)),
            ],
        ),
        (200, [transform(T0_NS, "base_link", "lidar", (0, 0, 0.4))]),
        (300, [transform(T0_NS, "base_link", "camera", (0.3, 0, 0))]),
    ]
    b = [
        (
            150,
            [
                transform(T0_NS, "world", "camera", (5.0, 0, 0)),
                transform(T0_NS, "base_link", "gps", (0, 0, 1.0)),
            ],
        )
    ]
    extra = [("A", T0_NS + ms * MS, tf_message(ts)) for ms, ts in a]
    extra += [("B", T0_NS + ms * MS, tf_message(ts)) for ms, ts in b]
    bag, _ = recording(
        path,
        ARM,
        "sqlite3",
        count=50,
        extra_topics=[
            Topic("/tf_static", TF_MESSAGE, [tf_static_qos()], key="A"),
            Topic("/tf_static", TF_MESSAGE, [tf_qos()], key="B"),
        ],
        extra=extra,
    )
    return bag


def statics_of(out: Path) -> list[tuple[int, dict[str, Any]]]:
    """Each /tf_static message of ``out``: (log time ms from the start, child -> transform)."""
    with Reader(out) as reader:
        return [
            (
                (time_ns - T0_NS) // MS,
                {t.child_frame_id: t for t in messages.tf_transforms(bytes(data))},
            )
            for connection, time_ns, data in reader.messages()
            if connection.topic == "/tf_static"
        ]


def repair(*args: str) -> int:
    return main(["bag", "repair", *args])


def test_without_the_option_the_recorded_statics_are_merged_as_before(tmp_path: Path) -> None:
    """The default is unchanged: every recorded static frame as of each set's time, whatever
    it holds (NaN, a cycle), the later publisher's value of a frame winning; one set at the
    start (no period)."""
    out = tmp_path / "out"
    assert repair(str(hostile_recording(tmp_path / "in")), "-o", str(out)) == 0
    (only,) = statics_of(out)
    time_ms, frames = only
    assert time_ms == 0
    assert {"nan_frame", "selfie", "squashed", "loop_a", "loop_b", "gps", "lidar"} <= set(frames)
    assert frames["camera"].header.frame_id == "base_link"  # its first value at the start


def test_the_union_keeps_every_publishers_frames_and_refuses_the_hostile_ones(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "out"
    bag = hostile_recording(tmp_path / "in")
    assert repair(str(bag), "-o", str(out), "--static-union") == 0
    sets = statics_of(out)
    robot = Robot.load(ARM)
    flange = robot.joints["tool_flange_joint"].origin[:3, 3]
    for _, frames in sets:
        assert ROBOT_STATICS <= set(frames)  # the robot's own, with its own values
        got = frames["tool_flange"].transform.translation
        assert (got.x, got.y, got.z) == pytest.approx(tuple(flange))
        assert frames["tool_flange"].header.frame_id == "wrist_3_link"
        assert not {"nan_frame", "selfie", "squashed", "loop_b"} & set(frames)
        if "camera" in frames:  # never B's: A gave it first
            assert frames["camera"].header.frame_id == "base_link"
    # at the start, then each change once the debouncer lets it go (100 ms)
    times = [time_ms for time_ms, _ in sets]
    assert times[0] == 0 and times == sorted(times) and len(set(times)) == len(times)
    assert all(b - a >= 100 for a, b in zip(times[1:], times[2:], strict=False))
    last_ms, last = sets[-1]
    assert last_ms >= 300
    assert set(last) == ROBOT_STATICS | {"camera", "loop_a", "lidar", "gps"}
    assert last["camera"].transform.translation.x == 0.3  # the owner's recalibration
    assert last["camera"].header.stamp.sec == T0_NS // 10**9  # foreign stamps kept
    lidar_first = next(t for t, frames in sets if "lidar" in frames)
    assert all("camera" in frames for t, frames in sets if t >= lidar_first)  # additive
    captured = capsys.readouterr()
    assert "camera (kept /tf_static#" in captured.err and "refused /tf_static#" in captured.err
    summary = captured.out
    assert (
        "static union of 4 recorded foreign frame(s) (of 10000) from 2 recorded publisher(s)"
        in (summary)
    )
    for reason in (
        "value not finite (1x)",
        "frame is its own parent (1x)",
        "rotation far from unit length (1x)",
        "closes a cycle (1x)",
        "frame held by another publisher (1x)",
    ):
        assert reason in summary
    assert "1 conflict(s) (camera (kept /tf_static#" in summary
    assert "1 recorded robot transform(s) replaced" in summary  # A's tool_flange
    with Reader(out) as reader:
        (static,) = [c for c in reader.connections if c.topic == "/tf_static"]
        (qos,) = static.ext.offered_qos_profiles
        assert qos.durability is QosDurability.TRANSIENT_LOCAL


def test_a_slice_or_a_late_start_finds_every_frame_within_a_period(tmp_path: Path) -> None:
    """With a period every set is complete as of its time: playback started anywhere (a
    slice, --start-offset) gets the whole union within one period, the frames of a publisher
    that latched only its last message included."""
    out = tmp_path / "out"
    bag = hostile_recording(tmp_path / "in")
    assert (
        repair(str(bag), "-o", str(out), "--static-union", "--static-republish-period", "0.1") == 0
    )
    sets = statics_of(out)
    times = [time_ms for time_ms, _ in sets]
    assert all(b - a <= 110 for a, b in zip(times, times[1:], strict=False))
    assert times[-1] >= 400
    for time_ms, frames in sets:
        if time_ms >= 400:  # after the last change: everything
            assert set(frames) == ROBOT_STATICS | {"camera", "loop_a", "lidar", "gps"}


def test_the_params_file_turns_it_on_with_its_cap_and_the_robots_prefixed_frames(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``static_union`` and ``static_union_max_frames`` from --params, as the node reads
    them: the robot's own frames are its prefixed ones (a recorded static naming one never
    overrides it; one hanging the robot's root from ``world`` is foreign and kept), and the
    recorded frames beyond the cap are refused and counted."""
    params = tmp_path / "params.yaml"
    params.write_text(
        "/**:\n  ros__parameters:\n    frame_prefix: arm/\n    static_union: true\n"
        "    static_union_max_frames: 2\n"
    )
    recorded = [
        transform(T0_NS, "world", "arm/base_link", (1.0, 2.0, 0.0)),
        transform(T0_NS, "arm/wrist_3_link", "arm/tool_flange", (9.0, 9.0, 9.0)),
        *(transform(T0_NS, "world", f"marker_{k}", (float(k), 0, 0)) for k in range(3)),
    ]
    bag, states = recording(
        tmp_path / "in",
        ARM,
        "mcap",
        count=20,
        extra_topics=[Topic("/tf_static", TF_MESSAGE, [tf_static_qos()])],
        extra=[("/tf_static", T0_NS, tf_message(recorded))],
    )
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--params", str(params)) == 0
    last = statics_of(out)[-1][1]
    assert set(last) == {f"arm/{frame}" for frame in ROBOT_STATICS} | {
        "arm/base_link",
        "marker_0",
    }
    assert last["arm/tool_flange"].transform.translation.z == pytest.approx(0.02)
    assert last["arm/base_link"].header.frame_id == "world"
    summary = capsys.readouterr().out
    assert "static union of 2 recorded foreign frame(s) (of 2)" in summary
    assert "beyond static_union_max_frames (2x)" in summary
    assert "1 recorded robot transform(s) replaced" in summary
    robot = Robot.load(ARM)
    assert check_every_link(out, robot, states, prefix="arm/") == len(states)


def test_many_conflicts_are_warned_ten_times_then_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Two recorded publishers disagreeing on 300 frames, agreeing, then disagreeing again:
    600 conflicts started, one stderr line each before, and the summary listed all 300. Now
    10 lines, one for the 590 more, and the summary names 10 and counts 300."""
    frames = range(300)
    a = [(0, [transform(T0_NS, "base_link", f"m{k}", (0.1, 0, 0)) for k in frames])]
    b = [
        (ms, [transform(T0_NS, "base_link", f"m{k}", (x, 0, 0)) for k in frames])
        for ms, x in ((100, 0.5), (150, 0.1), (200, 0.5))
    ]
    extra = [("A", T0_NS + ms * MS, tf_message(ts)) for ms, ts in a]
    extra += [("B", T0_NS + ms * MS, tf_message(ts)) for ms, ts in b]
    bag, _ = recording(
        tmp_path / "in",
        ARM,
        "sqlite3",
        count=30,
        extra_topics=[
            Topic("/tf_static", TF_MESSAGE, [tf_static_qos()], key="A"),
            Topic("/tf_static", TF_MESSAGE, [tf_qos()], key="B"),
        ],
        extra=extra,
    )
    assert repair(str(bag), "-o", str(tmp_path / "out"), "--static-union") == 0
    captured = capsys.readouterr()
    lines = [line for line in captured.err.splitlines() if "given differently at" in line]
    assert len(lines) == 10
    assert "at 0.100 s of the recording" in lines[0]  # B's first message, 100 ms in
    assert "static union: 590 more static frame(s) given differently" in captured.err
    assert "300 conflict(s) (m0 (kept /tf_static#" in captured.out
    assert " and 290 more)" in captured.out


def test_change_sets_that_would_outgrow_the_budget_are_written_less_often(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """9,000 recorded frames (0.86 MB a set) over 10 s: a set every 0.1 s could add 86 MB,
    over the 64 MiB floor, so changes are written at most every 0.1288 s of log time, said in
    a warning and the summary. One of them then moves every 20 ms of log time for 0.6 s: the
    sets written for it are at least that lengthened interval apart in log time, and several
    (the debouncer runs on the recording's clock, not on the wall clock of a repair that takes
    a moment)."""
    frames = [transform(T0_NS, "world", f"marker_{k:05d}", (k, 0, 0)) for k in range(9000)]
    moves = [
        (
            "/tf_static",
            T0_NS + k * 20 * MS,
            tf_message([transform(T0_NS, "world", "marker_00000", (0, k, 0))]),
        )
        for k in range(1, 31)
    ]
    bag, _ = recording(
        tmp_path / "in",
        ARM,
        "mcap",
        count=11,
        rate_hz=1.0,
        extra_topics=[Topic("/tf_static", TF_MESSAGE, [tf_static_qos()])],
        extra=[("/tf_static", T0_NS, tf_message(frames)), *moves],
    )
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--static-union") == 0
    captured = capsys.readouterr()
    assert "static union: its changes are written at most every 0.1288 s" in captured.err
    assert "changes at most every 0.1288 s" in captured.out
    sets = statics_of(out)
    assert len(sets[-1][1]) == 9000 + len(ROBOT_STATICS)
    times = [ms for ms, _ in sets]
    changes = [ms for ms in times if 0 < ms < 700]
    assert len(changes) >= 3, times
    assert all(b - a >= 128 for a, b in pairwise(changes)), times
    assert sets[-1][1]["marker_00000"].transform.translation.y == 30  # the last move


def test_a_change_still_pending_at_the_end_is_written_at_the_last_log_time(
    tmp_path: Path,
) -> None:
    """A recorded static that changes at the recording's last moment, before the union's
    interval lets a set out: the output does not end without it. The set that holds it is
    written at the last log time (the recording's 0.49 s)."""
    first = tf_message([transform(T0_NS, "base_link", "camera", (0.1, 0, 0))])
    moved = tf_message([transform(T0_NS, "base_link", "camera", (0.3, 0, 0))])
    bag, _ = recording(
        tmp_path / "in",
        ARM,
        "sqlite3",
        count=50,  # JointStates at 0, 10, ..., 490 ms
        extra_topics=[Topic("/tf_static", TF_MESSAGE, [tf_static_qos()], key="A")],
        extra=[("A", T0_NS, first), ("A", T0_NS + 490 * MS, moved)],
    )
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--static-union") == 0
    sets = statics_of(out)
    cameras = [(ms, f["camera"].transform.translation.x) for ms, f in sets if "camera" in f]
    assert cameras[0][1] == pytest.approx(0.1) and cameras[0][0] < 490  # its first value
    last_ms, frames = sets[-1]
    assert (last_ms, frames["camera"].transform.translation.x) == (490, pytest.approx(0.3))
    assert ROBOT_STATICS <= set(frames)  # a complete set, the robot's own in it
