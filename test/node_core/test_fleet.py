"""The fleet's policy without DDS (``node_core.fleet``): which robots to start, stop and
retry, its status, and what it reads of a command line. The fleet over DDS is
test/ros/test_fleet_e2e.py."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pytest
from repo_paths import REPO_ROOT

from joint_tf_publisher.errors import ModelError
from joint_tf_publisher.health.model import Level
from joint_tf_publisher.node_core.description_source import stamp_of
from joint_tf_publisher.node_core.fleet import (
    DEFAULT_RETRY_PERIOD_S,
    RETRY_PERIOD,
    ROBOTS,
    FleetPlan,
    FleetState,
    RobotStatus,
    file_stamps,
    merging_rule,
    named_as_given,
    names_a_node,
    params_copies,
    params_files,
    parse_retry_period,
    refused_log,
    robot_arguments,
    robot_namespace,
    robot_node_namespace,
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


def test_a_robot_is_made_with_the_process_ros_arguments_but_its_name_and_namespace() -> None:
    """As rclcpp_components' container makes a component: its own arguments, not the rules
    that place the container's node (launch_ros's ``namespace=`` and ``name=``)."""
    argv = ["joint_tf_fleet", "--ros-args", "-r", "__ns:=/x", "--params-file", "f.yaml"]
    argv += ["--remap", "__node:=fleet", "-r", "joint_tf_fleet:__ns:=/y", "-r", "/tf:=tf"]
    argv += ["-p", "robots:=[a]", "--", "--ros-args", "-r", "__name:=n", "--log-level", "info"]
    assert robot_arguments(argv) == (
        "--ros-args",
        "--params-file",
        "f.yaml",
        "-r",
        "/tf:=tf",
        "-p",
        "robots:=[a]",
        "--log-level",
        "info",
    )
    assert names_a_node("__ns:=/x") and names_a_node("fleet:__node:=f")
    assert not names_a_node("/tf:=tf") and not names_a_node("__nsx:=y")


@pytest.mark.parametrize(
    ("fleet_namespace", "robot", "nested"),
    [("/", "/a", "/a"), ("/x", "/a", "/x/a"), ("/x/y", "/site/a", "/x/y/site/a")],
)
def test_a_robot_nests_under_the_fleets_namespace(
    fleet_namespace: str, robot: str, nested: str
) -> None:
    assert robot_node_namespace(fleet_namespace, robot) == nested


def test_params_copies_are_the_files_as_they_are_now(tmp_path: Path) -> None:
    params = tmp_path / "fleet.yaml"
    params.write_text("/**:\n  ros__parameters:\n    a: 1\n")
    argv = ["x", "--params-file", str(params), "--ros-args", "--params-file", str(params)]
    with params_copies(argv) as copied:
        assert copied[:3] == argv[:3]  # not a ROS argument: left as it is
        copy = Path(copied[5])
        assert copy != params and copy.read_text() == params.read_text()
    assert not copy.exists()


def test_a_params_file_that_is_a_fifo_is_refused_naming_it(tmp_path: Path) -> None:
    fifo = tmp_path / "fleet.yaml"
    os.mkfifo(fifo)
    with (
        pytest.raises(ModelError, match=rf"^--params-file {fifo}: .*not a regular file \(a FIFO"),
        params_copies(["x", "--ros-args", "--params-file", str(fifo)]),
    ):
        pass


def test_a_robot_starting_is_not_started_again() -> None:
    state = FleetState(("/a",))
    assert state.plan(0.0, INPUTS) == FleetPlan(start=("/a",))
    state.start("/a")
    assert state.plan(0.0, EDITED) == FleetPlan()
    assert state.status("/a") is RobotStatus.WAITING
    state.refuse("/a", "no", 0.0, INPUTS)
    assert state.starting == set()
    state.start("/a")
    state.started("/a")
    assert state.starting == set() and state.status("/a") is RobotStatus.SERVING


def test_file_stamps_change_with_an_edit_and_a_removal(tmp_path: Path) -> None:
    path = tmp_path / "params.yaml"
    absent = file_stamps([path])
    assert absent == ((path, None),)
    path.write_text("a")
    first = file_stamps([path])
    path.write_text("ab")
    mtime_ns = os.stat(path).st_mtime_ns + 10**9
    os.utime(path, ns=(mtime_ns, mtime_ns))
    assert file_stamps([path]) != first != absent


def test_file_stamps_change_when_a_file_is_replaced_by_one_of_the_same_time_and_size(
    tmp_path: Path,
) -> None:
    """An editor's save by renaming a new file over the old one, within the clock's
    granularity: the node's description file stamp (``stamp_of``: the inode too), one type
    for both (issue #48), sees it, where the fleet's own (path, mtime, size) did not."""
    path, new = tmp_path / "params.yaml", tmp_path / "params.yaml.new"
    path.write_text("a")
    new.write_text("b")
    status = os.stat(path)
    os.utime(new, ns=(status.st_atime_ns, status.st_mtime_ns))
    before = file_stamps([path])
    os.replace(new, path)
    assert path.read_text() == "b" and os.stat(path).st_mtime_ns == status.st_mtime_ns
    assert file_stamps([path]) != before


def test_docs_give_the_fleet_s_parameters_their_type_and_default() -> None:
    text = (REPO_ROOT / "docs" / "fleet.md").read_text()
    assert f"| `{ROBOTS}` | string array | [] |" in text
    assert f"| `{RETRY_PERIOD}` | double | {DEFAULT_RETRY_PERIOD_S} |" in text


def test_a_robot_removed_and_listed_again_while_it_starts_starts_afresh() -> None:
    """Its start may have given up when it left (a xacro wait polls "no longer wanted"):
    that outcome is dropped, not a refusal that would hold the robot until a retry."""
    state = FleetState(("/a", "/b"))
    state.start("/a")
    state.start("/b")
    state.want(("/b",))
    state.want(("/a", "/b"))
    assert state.plan(0.0, INPUTS) == FleetPlan()  # still starting: not started twice
    assert state.start_ended("/a") is False
    assert state.start_ended("/b") is True  # listed throughout: its outcome stands
    state.started("/b")
    assert state.plan(0.0, INPUTS) == FleetPlan(start=("/a",))
    state.start("/a")
    assert state.start_ended("/a") is True  # the fresh start's outcome stands


def test_rcl_s_refusal_of_a_copy_names_the_file_as_given(tmp_path: Path) -> None:
    """rcl names the copy it read (a temporary file, another name each start: each retry's
    refusal looked new and was logged again) and its C source lines."""
    params = tmp_path / "fleet.yaml"
    params.write_text("/**:\n  ros__parameters:\n    a: [1, 2\n")
    argv = ["x", "--ros-args", "-p", "a:=1", "--params-file", str(params)]
    with params_copies(argv) as copied:
        rcl = (
            f"Couldn't parse params file: '--params-file {copied[5]}'. Error: Error parsing a "
            "event near line 3, at /project/src/parse.c:776, at /project/src/rcl/arguments.c:415"
        )
        reason = named_as_given(rcl, copied, argv)
    assert reason == (
        f"Couldn't parse params file: '--params-file {params}'. Error: Error parsing a "
        "event near line 3"
    )


@pytest.mark.parametrize(("given", "seconds"), [(5, 5.0), (0, 0.0), (-0.0, 0.0), (3600.0, 3600.0)])
def test_retry_period_is_a_number_of_seconds(given: object, seconds: float) -> None:
    assert parse_retry_period(given) == seconds


@pytest.mark.parametrize(
    "bad", ["5", True, None, [1.0], float("nan"), float("inf"), -1e-300, 3600.5, 10**400]
)
def test_retry_period_refuses_what_is_no_period(bad: object) -> None:
    with pytest.raises(ParameterRejected, match=r"^retry_period must be "):
        parse_retry_period(bad)


@pytest.mark.parametrize(
    "rule",
    [
        "joint_states:=/shared_js",
        "~/joint_states:=/shared_js",
        "joint_tf_publisher:joint_states:=/shared_js",
        "set_parameters:=/one/set_parameters",
    ],
)
def test_a_rule_sending_a_name_of_every_robot_to_one_is_refused_naming_it(rule: str) -> None:
    """Each robot's node is made with the process's rules: a relative or private name onto an
    absolute one would give every robot one robot's joint states (silently wrong /tf)."""
    reason = merging_rule(["joint_tf_fleet", "--ros-args", "-r", "__ns:=/x", "--remap", rule])
    assert reason is not None and reason.startswith(f"--remap {rule}: every robot's "), reason


@pytest.mark.parametrize(
    "rule",
    [
        "joint_states:=js",  # each robot's own
        "joint_states:=~/js",
        "/a/joint_states:=/shared_js",  # one robot's
        "/tf:=tf",  # each robot's own tree (Nav2's layout)
        "/tf:=/fleet_tf",  # absolute onto absolute: one name already
        "joint_tf_fleet:joint_states:=/js",  # the fleet's node only
        "__ns:=/x",  # places the fleet's node, not passed down
    ],
)
def test_rules_that_keep_each_robot_apart_pass(rule: str) -> None:
    assert (
        merging_rule(["joint_tf_fleet", "--ros-args", "-r", rule, "--log-level", "debug"]) is None
    )


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
    assert file_stamps([path]) == ((path, stamp_of(path)),)


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
