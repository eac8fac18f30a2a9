"""The bench's bag section works (no timing asserted: speed lives in ``make bench``): its
recording is the humanoid's joint states within their limits (so the repair takes the
node's short way, as a real recording would), its repair runs in a child process and gives
a peak RSS, and its parts add up to the JointStates of the recording."""

from __future__ import annotations

from pathlib import Path

from rosbags.rosbag2 import Reader

from bench.bag import RATE_HZ, parts, timed_repair, timed_runs, write_recording


def test_the_bag_section_repairs_its_recording(tmp_path: Path) -> None:
    count = write_recording(tmp_path / "in", 0.05)
    assert count == round(0.05 * RATE_HZ)
    seconds, rss_mb = timed_repair(tmp_path / "in", tmp_path / "out")
    assert seconds > 0 and rss_mb > 0
    with Reader(tmp_path / "out") as reader:
        counts = {c.topic: c.msgcount for c in reader.connections}
    assert counts["/tf"] == counts["/joint_states"] == count
    split = parts(tmp_path / "in", tmp_path)
    assert split["count"] == count and all(split[k] > 0 for k in ("read", "pipeline", "write"))


def test_each_timed_run_writes_a_fresh_output(tmp_path: Path) -> None:
    write_recording(tmp_path / "in", 0.02, "mcap")
    (tmp_path / "out").mkdir()  # a run never fails on the one before's output
    results = timed_runs(tmp_path / "in", tmp_path / "out", 2)
    assert len(results) == 2 and all(wall > 0 and rss > 0 for wall, rss in results)
    assert not (tmp_path / "out").exists()  # removed after the last run
