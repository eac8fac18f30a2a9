"""The fleet bench section's own logic (no DDS here; ``python -m bench --sections fleet``
runs it): the robot_state_publishers it compares get the fleet's robots, as text."""

from __future__ import annotations

from pathlib import Path

import yaml

from bench.fleet import MODELS, RSP, SETUP_NAMES, Setup, commands, fleet_table, write_rsp_params
from bench.vs_rsp import RspFound


def test_each_robot_state_publisher_gets_its_robot_as_text_and_its_prefix(tmp_path: Path) -> None:
    params = yaml.safe_load(write_rsp_params(tmp_path / "rsp.yaml", 5).read_text())
    assert list(params) == [f"/r{k}/robot_state_publisher" for k in range(5)]
    for k in range(5):
        values = params[f"/r{k}/robot_state_publisher"]["ros__parameters"]
        assert values["robot_description"] == MODELS[k % len(MODELS)].read_text()
        assert values["frame_prefix"] == f"r{k}/" and values["ignore_timestamp"] is True


def test_one_robot_state_publisher_per_robot_in_its_namespace(tmp_path: Path) -> None:
    found = RspFound(Path("/opt/rsp/robot_state_publisher"), "test")
    lines = commands(RSP, 3, tmp_path / "rsp.yaml", found)
    assert [line[0] for line in lines] == [str(found.executable)] * 3
    assert [line[-1] for line in lines] == ["__ns:=/r0", "__ns:=/r1", "__ns:=/r2"]


def test_the_table_names_the_robot_state_publishers_and_their_memory_per_robot() -> None:
    one = Setup(RSP, 1, 100.0, 2.0, 1, 0.1, 40.0, 40.0, 200, 200, 0.01)
    ten = Setup(RSP, 10, 100.0, 2.0, 10, 0.5, 400.0, 400.0, 2000, 2000, 0.1)
    rows = fleet_table([one, ten]).rows
    assert rows[1][0] == SETUP_NAMES[RSP].format(n=10) == "10 robot_state_publishers (C++)"
    assert rows[1][4] == "40.00"  # (400 - 40) / 9 MB per extra robot
