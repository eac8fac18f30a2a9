"""``bag repair`` bounded by the recording: the static republish period's bounds from
every source of the command (its option, ``--params``), the count of republished static sets
bounded by the recorded messages (an outlier first log time makes no flood)."""

from __future__ import annotations

from pathlib import Path

import pytest
from bag_maker import (
    STRING,
    T0_NS,
    TF_MESSAGE,
    Topic,
    recording,
    string,
    tf_message,
    tf_static_qos,
    transform,
)
from repo_paths import REPO_ROOT
from rosbags.rosbag2 import Reader

from joint_tf_publisher.cli.bag import repair as repair_module
from joint_tf_publisher.cli.main import main

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
S = 10**9


def repair(*args: str) -> int:
    return main(["bag", "repair", *args])


def static_times(out: Path) -> list[int]:
    with Reader(out) as reader:
        return [t for c, t, _ in reader.messages() if c.topic == "/tf_static"]


def params_file(folder: Path, period: str) -> Path:
    path = folder / "params.yaml"
    path.write_text(f"/**:\n  ros__parameters:\n    static_republish_period: {period}\n")
    return path


@pytest.mark.parametrize("period", ["1.0e-9", "1.0e-6", "0.0999", "1.0e-320"])
@pytest.mark.parametrize("source", ["option", "params"])
def test_a_period_under_a_tenth_of_a_second_is_refused_from_every_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], period: str, source: str
) -> None:
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    given = (
        ["--static-republish-period", period]
        if source == "option"
        else ["--params", str(params_file(tmp_path, period))]
    )
    assert repair(str(bag), "-o", str(tmp_path / "out"), *given) == 1
    err = capsys.readouterr().err.strip()
    if source == "params" and period == "1.0e-320":
        # rcl reads a value strtod underflows as text (cli/params_file.py types plain values
        # as rcl does): refused as no number, naming the parameter all the same.
        reason = "static_republish_period must be a number of seconds, got '1.0e-320'"
    else:
        reason = "static_republish_period must be 0 (off) or >= 0.1 s"
    assert reason in err and "\n" not in err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("rate", ["1.0e-300", "1.0e-11", "0.000999"])
def test_a_rate_under_one_per_1000_seconds_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], rate: str
) -> None:
    """``publish_frequency`` 1e-300 Hz (with the default positions published at it) was an
    ``OverflowError`` traceback: 1 / 1e-300 s is no integer of nanoseconds."""
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    params = tmp_path / "params.yaml"
    params.write_text(
        "/**:\n  ros__parameters:\n"
        f"    publish_frequency: {rate}\n    publish_default_positions: true\n"
    )
    assert repair(str(bag), "-o", str(tmp_path / "out"), "--params", str(params)) == 1
    err = capsys.readouterr().err.strip()
    assert "publish_frequency must be >= 0.001 and <= 1000 Hz" in err and "\n" not in err, err
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize(("period", "expected"), [("0.1", 5), ("0", 1)])
@pytest.mark.parametrize("source", ["option", "params"])
def test_the_bound_itself_and_0_are_taken_from_every_source(
    tmp_path: Path, period: str, expected: int, source: str
) -> None:
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=50)  # 0.49 s at 100 Hz
    given = (
        ["--static-republish-period", period]
        if source == "option"
        else ["--params", str(params_file(tmp_path, period))]
    )
    assert repair(str(bag), "-o", str(tmp_path / "out"), *given) == 0
    assert static_times(tmp_path / "out") == [T0_NS + k * S // 10 for k in range(expected)]


@pytest.mark.parametrize("source", ["option", "params"])
def test_the_period_s_upper_bound_is_taken_and_above_it_refused_from_every_source(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], source: str
) -> None:
    """cli.md: ``--static-republish-period`` other than 0 or [0.1, 3600] is exit 1, as the
    node's parameter (``MAX_PERIOD_S``); the bound itself writes (one set in a short bag)."""
    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    for period, code in (("3600", 0), ("3600.5", 1)):
        given = (
            ["--static-republish-period", period]
            if source == "option"
            else ["--params", str(params_file(tmp_path, period))]
        )
        out = tmp_path / f"out_{period}"
        assert repair(str(bag), "-o", str(out), *given) == code
        err = capsys.readouterr().err.strip()
        if code == 0:
            assert static_times(out) == [T0_NS]
        else:
            assert "static_republish_period must be >= 0 and <= 3600 s, got 3600.5" in err, err
            assert "\n" not in err and not out.exists()


@pytest.mark.parametrize("period", ["0.1", "1"])  # the smallest; the doctor's suggestion
def test_an_outlier_first_log_time_makes_no_flood_of_static_sets(
    tmp_path: Path, period: str
) -> None:
    """A /robot_description logged 3 hours before the rest (a recorder's clock set late): the
    static sets follow the recorded messages, one at the first message after the gap, then
    one per period (was one per period of the gap: 108,000 sets at 0.1 s)."""
    outlier_ns = T0_NS - 3 * 3600 * S
    bag, _ = recording(
        tmp_path / "in",
        ARM,
        "mcap",
        count=100,  # 0.99 s at 100 Hz
        extra_topics=[Topic("/chatter", STRING)],
        extra=[("/chatter", outlier_ns, string("early"))],
    )
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--static-republish-period", period) == 0
    times = static_times(out)
    period_ns = round(float(period) * S)
    after_gap = [T0_NS + k * period_ns for k in range(S // period_ns)]
    assert times == [outlier_ns, *after_gap]


def test_other_publishers_recorded_statics_do_not_blow_the_output_up(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every static set carries the other publishers' recorded statics: 10,000 of them
    (1 MB) every 0.1 s made a 2.3 MB recording of 20 s a 172 MB output. The period is
    lengthened so that the sets after the first add at most the input's size (its floor,
    64 MiB, set to 0 here to keep the bag small), said in a warning and the summary."""
    monkeypatch.setattr(repair_module, "STATIC_REPUBLISH_FLOOR_BYTES", 0)
    many = tf_message(transform(T0_NS, "world", f"marker_{i}", [i, 0, 0]) for i in range(2000))
    bag, _ = recording(
        tmp_path / "in",
        ARM,
        "sqlite3",
        count=200,  # 2 s at 100 Hz: 20 periods of 0.1 s
        extra_topics=[Topic("/tf_static", TF_MESSAGE, [tf_static_qos()])],
        extra=[("/tf_static", T0_NS, many)],
    )
    size = sum(file.stat().st_size for file in bag.iterdir())
    out = tmp_path / "out"
    assert repair(str(bag), "-o", str(out), "--static-republish-period", "0.1") == 0
    err = capsys.readouterr().err
    assert "static_republish_period 0.1 s lengthened to" in err, err
    with Reader(out) as reader:
        sets = [len(data) for c, _, data in reader.messages() if c.topic == "/tf_static"]
    assert len(sets) >= 2 and sum(sets[1:]) <= size, (sets, size)
