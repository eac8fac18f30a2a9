"""The fleet's policy without DDS (``node_core.fleet``): which robots to start, stop and
retry, its status, and what it reads of a command line. The fleet over DDS is
test/ros/test_fleet_e2e.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from repo_paths import REPO_ROOT

from joint_tf_publisher.health.model import Level
from joint_tf_publisher.node_core.fleet import (
    DEFAULT_RETRY_PERIOD_S,
    RETRY_PERIOD,
    ROBOTS,
    FleetPlan,
    FleetState,
    RobotStatus,
    file_stamps,
    params_files,
    parse_retry_period,
    refused_log,
    robot_namespace,
    wanted_robots,
)
from joint_tf_publisher.node_core.parameters import ParameterRejected

INPUTS = (("params.yaml", 1, 10),)
EDITED = (("params.yaml", 2, 11),)


@pytest.mark.parametrize(
    ("given", "namespace"),
    [("robot1", "/robot1"), ("/robot1", "/robot1"), (" site/robot_2/ ", "/site/robot_2")],
)
def test_a_namespace_is_absolute(given: str, namespace: str) -> None:
    assert robot_namespace(given) == namespace


@pytest.mark.parametrize("bad", ["", "/", "1robot", "robot 1", "a//b", "r-1", "~/r", "r.1"])
def test_what_is_no_namespace_is_refused_naming_it(bad: str) -> None:
    with pytest.raises(ParameterRejected, match=r"robots: .* is no robot namespace"):
        robot_namespace(bad)


def test_the_list_keeps_its_order_and_refuses_a_robot_twice() -> None:
    assert wanted_robots(["b", "/a", "c/d"]) == ("/b", "/a", "/c/d")
    assert wanted_robots([]) == ()
    with pytest.raises(ParameterRejected, match="robots: /a is listed twice"):
        wanted_robots(["a", "b", "/a/"])


def test_an_empty_array_of_any_type_and_none_are_no_robot_and_other_types_are_refused() -> None:
    assert wanted_robots(None) == ()
    assert wanted_robots([False][:0]) == ()
    with pytest.raises(ParameterRejected, match="True is no namespace: give strings"):
        wanted_robots([True])
    with pytest.raises(ParameterRejected, match="'r1' is no array"):
        wanted_robots("r1")


def test_new_robots_start_and_removed_ones_stop() -> None:
    state = FleetState()
    state.want(wanted_robots(["r1", "r2"]))
    assert state.plan(0.0, INPUTS) == FleetPlan(start=("/r1", "/r2"))
    state.started("/r1")
    state.started("/r2")
    assert not state.plan(0.0, INPUTS)

    state.want(wanted_robots(["r2", "r3"]))
    assert state.plan(1.0, INPUTS) == FleetPlan(stop=("/r1",), start=("/r3",))
    state.stopped("/r1")
    state.started("/r3")
    assert not state.plan(1.0, INPUTS)
    assert state.serving == {"/r2", "/r3"}


def test_a_refused_robot_is_retried_after_the_period_or_when_the_inputs_change() -> None:
    state = FleetState(retry_period_s=10.0)
    state.want(("/ok", "/bad"))
    state.started("/ok")
    assert state.refuse("/bad", "robot_description:3: nowhere", 100.0, INPUTS)
    assert not state.plan(105.0, INPUTS)  # nothing changed, not due yet
    assert state.plan(110.0, INPUTS) == FleetPlan(start=("/bad",))
    assert state.plan(101.0, EDITED) == FleetPlan(start=("/bad",))  # a params file changed


def test_without_a_period_only_a_change_of_inputs_retries() -> None:
    state = FleetState(retry_period_s=0.0)
    state.want(("/bad",))
    state.refuse("/bad", "reason", 0.0, INPUTS)
    assert not state.plan(1e6, INPUTS)
    assert state.plan(1.0, EDITED) == FleetPlan(start=("/bad",))


def test_a_refusal_is_news_once_per_reason() -> None:
    state = FleetState()
    state.want(("/bad",))
    assert state.refuse("/bad", "reason one", 0.0, INPUTS)
    assert not state.refuse("/bad", "reason one", 10.0, INPUTS)
    assert state.refuse("/bad", "reason two", 20.0, INPUTS)


def test_a_robot_listed_again_tries_afresh() -> None:
    state = FleetState(retry_period_s=0.0)
    state.want(("/bad",))
    state.refuse("/bad", "reason", 0.0, INPUTS)
    state.want(())
    assert state.refused == {}
    state.want(("/bad",))
    assert state.plan(0.0, INPUTS) == FleetPlan(start=("/bad",))


def test_the_report_names_a_refused_robot_and_its_reason() -> None:
    state = FleetState()
    assert state.report().level is Level.OK
    state.want(("/r1", "/r2", "/r3"))
    starting = state.report()
    assert starting.level is Level.WARN and starting.message == "3 of 3 robots starting"

    state.started("/r1")
    state.started("/r3")
    state.refuse("/r2", "description_file: /x.urdf:4: joint 'j': no parent", 0.0, INPUTS)
    report = state.report()
    assert report.level is Level.ERROR
    assert report.message == (
        "1 of 3 robots refused: /r2: description_file: /x.urdf:4: joint 'j': no parent; 2 serving"
    )
    assert report.values == (
        ("/r1", "serving"),
        ("/r2", "refused: description_file: /x.urdf:4: joint 'j': no parent"),
        ("/r3", "serving"),
    )
    assert state.status("/r2") is RobotStatus.REFUSED

    state.started("/r2")
    assert state.report().message == "3 robots serving"
    assert state.report().level is Level.OK


def test_the_log_line_says_who_why_and_when_again() -> None:
    line = refused_log("/r2", "robot_description:3:\n  no link", 10.0)
    assert line == (
        "robot /r2 refused: robot_description:3: no link (the others serve on; tried again "
        "when the parameters files change and every 10 s)"
    )
    assert "every" not in refused_log("/r2", "x", 0.0)


def test_params_files_are_read_from_the_ros_args_blocks() -> None:
    argv = [
        "joint_tf_fleet",
        "--params-file",  # not ROS's: before --ros-args
        "no.yaml",
        "--ros-args",
        "-p",
        "robots:=[a]",
        "--params-file",
        "one.yaml",
        "--",
        "--ros-args",
        "--params-file",
        "two.yaml",
    ]
    assert params_files(argv) == (Path("one.yaml"), Path("two.yaml"))
    assert params_files(["x", "--ros-args", "--params-file"]) == ()


def test_file_stamps_change_with_an_edit_and_a_removal(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    absent = file_stamps([path])
    assert absent == ((str(path), -1, -1),)
    path.write_text("a")
    first = file_stamps([path])
    path.write_text("ab")
    os.utime(path, ns=(first[0][1] + 10**9, first[0][1] + 10**9))
    assert file_stamps([path]) != first != absent


def test_docs_give_the_fleet_s_parameters_their_type_and_default() -> None:
    text = (REPO_ROOT / "docs" / "fleet.md").read_text()
    assert f"| `{ROBOTS}` | string array | [] |" in text
    assert f"| `{RETRY_PERIOD}` | double | {DEFAULT_RETRY_PERIOD_S} |" in text


@pytest.mark.parametrize(
    ("value", "seconds"), [(0, 0.0), (5, 5.0), (0.5, 0.5), (3600, 3600.0), (3600.0, 3600.0)]
)
def test_retry_period_takes_any_number_up_to_and_at_its_bounds(value: Any, seconds: float) -> None:
    """An integer as ros2cli and launch send ``retry_period 5``; 0 and 3600 themselves."""
    assert parse_retry_period(value) == seconds


@pytest.mark.parametrize("value", [-0.001, -1, 3600.001, 3601, float("nan"), True, "5", None])
def test_retry_period_outside_its_bounds_or_no_number_is_refused_by_name(value: Any) -> None:
    with pytest.raises(ParameterRejected, match="^retry_period must be"):
        parse_retry_period(value)


# -- issue #44: the survivors of make mutate over node_core/fleet.py ---------------------------


def test_a_ros_args_block_ends_at_double_dash() -> None:
    argv = ["fleet", "--ros-args", "--params-file", "a.yaml", "--", "--params-file", "b.yaml"]
    assert params_files(argv) == (Path("a.yaml"),)


def test_a_file_stamp_names_its_path(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    path.write_text("x")
    status = os.stat(path)
    assert file_stamps([path]) == ((str(path), status.st_mtime_ns, status.st_size),)


def test_a_period_under_a_second_retries_and_is_said() -> None:
    state = FleetState(wanted=("/a",), retry_period_s=0.5)
    state.refuse("/a", "broken", 10.0, INPUTS)
    assert state.plan(10.4, INPUTS).start == ()
    assert state.plan(10.5, INPUTS).start == ("/a",)
    assert refused_log("/a", "broken", 0.5).endswith(
        "tried again when the parameters files change and every 0.5 s)"
    )


def test_a_plan_is_true_when_it_stops_or_starts_anything() -> None:
    assert FleetPlan(stop=("/a",)) and FleetPlan(start=("/b",))
    assert not FleetPlan()


def test_a_serving_robot_refused_later_is_refused_not_serving() -> None:
    state = FleetState(wanted=("/a",))
    state.started("/a")
    state.refuse("/a", "broken", 1.0, INPUTS)
    assert state.status("/a") is RobotStatus.REFUSED
    assert state.report().message == "1 of 1 robots refused: /a: broken; 0 serving"


def test_the_status_counts_the_other_refused_starting_and_serving_robots() -> None:
    state = FleetState(wanted=("/a", "/b", "/c", "/d"))
    state.started("/d")
    report = state.report()
    assert (report.level, report.message) == (Level.WARN, "3 of 4 robots starting")
    assert report.values == (("/a", "starting"), ("/b", "starting"), ("/c", "starting"),
                             ("/d", "serving"))  # fmt: skip
    state.refuse("/a", "broken", 1.0, INPUTS)
    state.refuse("/b", "broken", 1.0, INPUTS)
    assert state.report().message == "2 of 4 robots refused: /a: broken (and 1 more); 1 serving"
    state.refuse("/c", "broken", 1.0, INPUTS)
    assert state.report().message == "3 of 4 robots refused: /a: broken (and 2 more); 1 serving"
    for name in ("/a", "/b", "/c"):
        state.started(name)
    report = state.report()
    assert (report.level, report.message) == (Level.OK, "4 robots serving")
    assert report.values == tuple((name, "serving") for name in ("/a", "/b", "/c", "/d"))
