"""The remote bench section's own logic: its frames are the humanoid's and its table's figures
come from the turns (no DDS here; ``python -m bench --sections remote`` runs it)."""

from __future__ import annotations

from bench.models import MODELS
from bench.remote import REMOTE_FRAMES, RemoteTurn, remote_table, tick_microseconds


def turn(node: str, cpu_us: float, remote_bytes: int = 0) -> RemoteTurn:
    return RemoteTurn(node, cpu_us, 2.0, 2_000_000, 2000, remote_bytes, 20, 1.0)


def test_the_chosen_frames_are_eight_links_of_the_humanoid() -> None:
    links = MODELS["humanoid"].robot.links
    assert len(REMOTE_FRAMES) == 8 and set(REMOTE_FRAMES) <= set(links)


def test_the_table_gives_the_cpu_ratio_and_the_bytes_saved() -> None:
    turns = [turn("ours", 200.0), turn("ours+remote", 204.0, 4000), turn("ours", 202.0)]
    turns.append(turn("ours+remote", 206.0, 4000))
    (row,) = remote_table(turns, 2, 2.0, 150.0).rows
    assert row[:7] == ["201 / 205", "1.02x", "1000", "2.0", "500x", "10.0", "150 (1.5)"]


def test_a_remote_message_is_timed_in_process() -> None:
    assert tick_microseconds(MODELS["humanoid"].to_urdf(), count=5) > 0.0
