"""The bench's bag section works (no timing asserted: speed lives in ``make bench``): its
recording is the humanoid's joint states within their limits (so the repair takes the
node's short way, as a real recording would), its repair runs in a child process and gives
a peak RSS, and its parts add up to the JointStates of the recording."""

from __future__ import annotations

from pathlib import Path

from rosbags.rosbag2 import Reader

from bench.bag import RATE_HZ, parts, timed_repair, write_recording


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
