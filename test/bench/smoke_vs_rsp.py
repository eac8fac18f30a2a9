"""The vs_rsp section end to end against the real robot_state_publisher, shortened.

Runs only in ``make bench``, which names this file (``pytest test/bench/smoke_vs_rsp.py``): its
name does not match pytest's ``test_*.py``, so ``make test`` never collects it. It needs RSP
built (about 13 minutes the first time), which ``make test`` does not do.
"""

from __future__ import annotations

import math
import os

import pytest

from bench import vs_rsp

pytestmark = [pytest.mark.ros, pytest.mark.slow]

#: The one frame the arm's /tf lacks with robot_state_publisher: right_inner_finger_joint
#: mimics right_knuckle_joint, itself a mimic, and RSP resolves mimic joints in one pass in
#: name order, before right_knuckle_joint has a value.
RSP_MISSES = ["right_knuckle -> right_inner_finger"]


def test_rsp_the_floor_and_this_node_answer_the_same_joint_states_and_are_measured() -> None:
    """RSP, and the floor and this node on every executor this rclpy offers."""
    found = vs_rsp.locate_rsp(os.environ)
    if isinstance(found, str):
        pytest.skip(found)
    executors = vs_rsp.available_executors()

    tables, record = vs_rsp.run_vs_rsp(
        quick=True, rates=[100.0], robots=["arm"], rounds=1, window_s=1.0
    )

    rates, own, startup = tables
    assert [row[:3] for row in rates.rows] == [
        ["arm_mimic_gripper", "ignore_timestamp", "100"],
        ["arm_mimic_gripper", "defaults", "100"],
    ]
    turns = record["robots"]["arm_mimic_gripper"]["modes"]["ignore_timestamp"]
    pairs = [["floor", "ours"]] + [[f"floor:{e}", f"ours:{e}"] for e in executors[1:]]
    assert [turn["node"] for turn in turns] == ["rsp"] + [n for pair in pairs for n in pair]
    assert [row[2] for row in own.rows] == list(executors)
    for row in own.rows:
        floor, ours = (float(cell) for cell in row[3].split(" / "))
        assert abs(float(row[4]) - (ours - floor)) <= 1  # own work, from unrounded medians
        assert abs(float(row[5].rstrip("x")) - ours / floor) < 0.01 and row[7] != "-"
    for turn in turns:
        window = turn["windows"][0]
        assert window["received"] > 0.5 * window["sent"] > 0, turn["node"]
        assert window["cpu_us_per_message"] > 0
        assert math.isfinite(window["latency_ms"]["median"])
        assert turn["startup_ms"] > 0 and turn["idle_rss_mb"] > 0
        assert turn["static_transforms"] == 6
    assert [turn["transforms_per_message"] for turn in turns] == [10] + [11] * 2 * len(pairs)
    moving, static = startup.notes[:2]
    assert f"only ours {RSP_MISSES}, only RSP -; 10 common" in moving
    assert static.startswith("arm_mimic_gripper /tf_static, ours vs RSP: same 6 frames")
    for note in (moving, static):
        translation, rotation = note.rsplit("within ", 1)[1].split(", ")
        assert float(translation.split()[0]) < 1e-9 and float(rotation.split()[0]) < 1e-6
