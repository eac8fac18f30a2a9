"""The vs_rsp bench section's own logic: finding robot_state_publisher (or why it is skipped),
CPU per message from /proc, the parameters file, and the frame comparison.

None of these needs robot_state_publisher; the end-to-end run against it is
smoke_vs_rsp.py, which runs only in ``make bench``.
"""

from __future__ import annotations

import math
import os
import stat
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest

from bench import dds, vs_rsp
from bench.__main__ import parse_args
from bench.report import ratio
from bench.vs_rsp import FramePose

IDENTITY = (0.0, 0.0, 0.0, 1.0)
#: 90 degrees about z.
QUARTER_TURN_Z = (0.0, 0.0, math.sqrt(0.5), math.sqrt(0.5))


def make_executable(path: Path, text: str = "#!/bin/sh\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(path.stat().st_mode | stat.S_IXUSR)
    return path


# -- finding RSP --------------------------------------------------------------------------------


def test_a_sourced_ros_with_rsp_is_found_first(tmp_path: Path) -> None:
    prefix = tmp_path / "opt" / "ros"
    executable = make_executable(prefix / vs_rsp.RSP_EXECUTABLE)
    kit = tmp_path / "kit"
    make_executable(kit / "env.sh")
    make_executable(tmp_path / "root" / "install" / vs_rsp.RSP_EXECUTABLE)
    environ = {
        "AMENT_PREFIX_PATH": f"{tmp_path / 'empty'}{os.pathsep}{prefix}",
        "RSP_KIT": str(kit),
        "RSP_ROOT": str(tmp_path / "root"),
    }

    found = vs_rsp.locate_rsp(environ, tmp_path / "repo")

    assert isinstance(found, vs_rsp.RspFound)
    assert found.executable == executable
    assert found.env_script is None
    assert str(prefix) in found.origin


def test_the_kit_build_in_rsp_root_is_found_with_its_env_script(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    script = make_executable(kit / "env.sh")
    executable = make_executable(tmp_path / "root" / "install" / vs_rsp.RSP_EXECUTABLE)
    environ = {"RSP_KIT": str(kit), "RSP_ROOT": str(tmp_path / "root")}

    found = vs_rsp.locate_rsp(environ, tmp_path / "repo")

    assert isinstance(found, vs_rsp.RspFound)
    assert (found.executable, found.env_script, found.root) == (
        executable,
        script,
        tmp_path / "root",
    )


def test_default_kit_and_root_are_beside_and_inside_the_repository(tmp_path: Path) -> None:
    repo = tmp_path / "repo"
    make_executable(tmp_path / "shared" / "rsp" / "env.sh")
    executable = make_executable(repo / ".rsp" / "install" / vs_rsp.RSP_EXECUTABLE)

    found = vs_rsp.locate_rsp({}, repo)

    assert isinstance(found, vs_rsp.RspFound)
    assert found.executable == executable


def test_a_kit_without_a_build_says_how_to_build(tmp_path: Path) -> None:
    kit = tmp_path / "kit"
    make_executable(kit / "env.sh")
    # A file that is not executable is no build.
    not_built = tmp_path / "root" / "install" / vs_rsp.RSP_EXECUTABLE
    not_built.parent.mkdir(parents=True)
    not_built.write_text("")

    why = vs_rsp.locate_rsp({"RSP_KIT": str(kit), "RSP_ROOT": str(tmp_path / "root")}, tmp_path)

    assert isinstance(why, str)
    assert f"not built in {tmp_path / 'root'}" in why
    assert "make bench" in why and "--apt" in why


def test_without_kit_or_ros_it_says_nothing_was_found(tmp_path: Path) -> None:
    why = vs_rsp.locate_rsp(
        {"AMENT_PREFIX_PATH": str(tmp_path), "RSP_KIT": str(tmp_path / "no-kit")}, tmp_path
    )

    assert isinstance(why, str)
    assert why.startswith("no robot_state_publisher")
    assert str(tmp_path / "no-kit") in why


def test_the_kit_environment_is_sourced_and_keeps_the_bench_domain(tmp_path: Path) -> None:
    script = tmp_path / "env.sh"
    script.write_text(
        'export LD_LIBRARY_PATH="$RSP_ROOT/install/lib"\n'
        "export ROS_DOMAIN_ID=0\n"
        'echo "noise on stdout"\n'
    )
    found = vs_rsp.RspFound(tmp_path / "rsp", "test", script, tmp_path / "root")

    environ = vs_rsp.rsp_environment(
        found, {"PATH": os.environ["PATH"], "ROS_DOMAIN_ID": "142", "KEPT": "a=b"}
    )

    assert environ["LD_LIBRARY_PATH"] == f"{tmp_path / 'root'}/install/lib"
    assert environ["ROS_DOMAIN_ID"] == "142"
    assert environ["KEPT"] == "a=b"


def test_vs_rsp_is_a_section_with_its_robots() -> None:
    args = parse_args(["--sections", "fk,vs_rsp", "--robots", "arm", "--baseline", "HEAD~1"])

    assert args.sections == ["fk", "vs_rsp"]
    assert args.baseline == "HEAD~1"
    assert args.robots == ["arm"]
    with pytest.raises(SystemExit):
        parse_args(["--robots", "pr2"])
    with pytest.raises(SystemExit):
        parse_args(["--sections", "e2e"])


# -- /proc ----------------------------------------------------------------------------------------


def test_cpu_seconds_of_this_process_is_its_cpu_time_clock() -> None:
    before = time.process_time()
    measured = dds.cpu_seconds(os.getpid())
    after = time.process_time()

    assert before <= measured <= after


def test_the_main_thread_s_cpu_seconds_are_its_own_cpu_time() -> None:
    before = time.thread_time()
    measured = dds.thread_cpu_seconds(os.getpid())["main"]
    after = time.thread_time()

    assert before - 1e-6 <= measured <= after + 1e-6  # schedstat may lag the clock by < 1 us


#: join() returns before the kernel has reaped the worker's task (seen: still listed in
#: /proc/<pid>/task, its time counted as a live thread's): the child waits until it is gone.
CHILD_WITH_AN_ENDED_THREAD = """
import os, sys, threading, time
worker = threading.Thread(target=lambda: sum(range(5_000_000)))
worker.start()
worker.join()
while len(os.listdir("/proc/self/task")) > 1:
    time.sleep(0.001)
print(time.process_time(), flush=True)
sys.stdin.read()
"""


def test_cpu_seconds_of_another_process_count_its_ended_threads() -> None:
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD_WITH_AN_ENDED_THREAD],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert child.stdout is not None
        reported = float(child.stdout.readline())
        measured = dds.cpu_seconds(child.pid)
        live_threads = sum(dds.thread_cpu_seconds(child.pid).values())
    finally:
        child.communicate("")

    assert measured >= reported
    assert live_threads < reported  # the worker's time left with it: why the total is a clock
    assert math.isnan(dds.cpu_seconds(child.pid))


def test_cpu_per_message_is_the_window_s_cpu_over_the_messages_sent() -> None:
    window = dds.Window(100.0, 1.0, 1000, [0.001] * 900, 0.5, {"main": 0.25}, 80.0, 1.0)

    assert window.cpu_us_per_message() == pytest.approx(500.0)
    assert window.cpu_us_per_message("main") == pytest.approx(250.0)
    assert math.isnan(window.cpu_us_per_message("no such thread"))
    assert window.received == 900
    assert math.isnan(dds.Window(100.0, 1.0, 0, [], 0.5, {}, 80.0, 1.0).cpu_us_per_message())


# -- the parameters file --------------------------------------------------------------------------


@pytest.mark.ros
@pytest.mark.parametrize("ignore_timestamp", [True, False])
def test_rcl_reads_a_commented_urdf_from_the_parameters_file(
    tmp_path: Path, ignore_timestamp: bool
) -> None:
    import rclpy

    text = vs_rsp.ARM_URDF.read_text()
    assert "<!--" in text and '"' in text and "\n" in text
    extra = {"ignore_timestamp": True} if ignore_timestamp else {}
    path = dds.write_params(tmp_path / "arm.yaml", text, **extra)
    context = rclpy.Context()
    rclpy.init(args=["--ros-args", "--params-file", str(path)], context=context)
    try:
        node = rclpy.create_node(
            "robot_state_publisher",
            context=context,
            automatically_declare_parameters_from_overrides=True,
        )
        assert node.get_parameter("robot_description").value == text
        assert node.has_parameter("ignore_timestamp") is ignore_timestamp
        if ignore_timestamp:
            assert node.get_parameter("ignore_timestamp").value is True
        node.destroy_node()
    finally:
        rclpy.try_shutdown(context=context)


# -- frames ---------------------------------------------------------------------------------------


def pose(parent: str, xyz: tuple[float, float, float] = (0.0, 0.0, 0.0), q: Any = IDENTITY) -> Any:
    return FramePose(parent, xyz, tuple(q))


def test_equal_transforms_are_the_same_frames_with_zero_differences() -> None:
    ours = {"a": pose("base", (1.0, 2.0, 3.0), QUARTER_TURN_Z), "b": pose("a")}

    check = vs_rsp.compare_frames(ours, dict(ours))

    assert check.only_ours == check.only_rsp == []
    assert (check.compared, check.max_translation_m, check.max_rotation_rad) == (2, 0.0, 0.0)
    assert check.describe().startswith("same 2 frames")


def test_a_negated_quaternion_is_the_same_rotation() -> None:
    negated = tuple(-value for value in QUARTER_TURN_Z)

    check = vs_rsp.compare_frames(
        {"a": pose("base", q=QUARTER_TURN_Z)}, {"a": pose("base", q=negated)}
    )

    assert check.max_rotation_rad == 0.0


def test_tiny_rotations_are_measured_not_rounded_away() -> None:
    angle = 1e-12
    turned = (0.0, 0.0, math.sin(angle / 2), math.cos(angle / 2))

    assert vs_rsp.rotation_angle(IDENTITY, turned) == pytest.approx(angle, rel=1e-6)
    assert vs_rsp.rotation_angle(IDENTITY, QUARTER_TURN_Z) == pytest.approx(math.pi / 2)


def test_value_differences_are_measured_on_common_frames() -> None:
    ours = {"a": pose("base", (0.0, 0.0, 0.5)), "b": pose("a")}
    rsp = {"a": pose("base", (0.0, 0.001, 0.5), QUARTER_TURN_Z), "b": pose("a")}

    check = vs_rsp.compare_frames(ours, rsp)

    assert check.only_ours == check.only_rsp == []
    assert check.max_translation_m == pytest.approx(0.001)
    assert check.max_rotation_rad == pytest.approx(math.pi / 2)


def test_frames_sent_by_one_node_only_or_under_another_parent_are_listed() -> None:
    ours = {"a": pose("base"), "finger": pose("knuckle"), "tool": pose("a")}
    rsp = {"a": pose("base"), "tool": pose("flange")}

    check = vs_rsp.compare_frames(ours, rsp)

    assert check.only_ours == ["a -> tool", "knuckle -> finger"]
    assert check.only_rsp == ["flange -> tool"]
    assert check.compared == 1
    assert "only ours" in check.describe()


@pytest.mark.ros
def test_poses_are_read_from_transform_messages() -> None:
    from geometry_msgs.msg import TransformStamped

    msg = TransformStamped()
    msg.header.frame_id, msg.child_frame_id = "base", "tool"
    msg.transform.translation.x, msg.transform.translation.z = 0.25, -1.5
    msg.transform.rotation.z, msg.transform.rotation.w = QUARTER_TURN_Z[2:]

    assert vs_rsp.poses_by_child([msg]) == {
        "tool": FramePose("base", (0.25, 0.0, -1.5), QUARTER_TURN_Z)
    }


# -- robots and tables ----------------------------------------------------------------------------


def test_the_arm_sends_its_independent_joints_inside_their_limits() -> None:
    from joint_tf_publisher import Robot

    robot = vs_rsp.bench_robot(vs_rsp.ROBOTS["arm"])
    model = Robot.load(vs_rsp.ARM_URDF)

    assert robot.joint_names == [f"joint_{k}" for k in range(1, 8)] + ["finger_joint"]
    for row in robot.rows[:50]:
        for name, value in zip(robot.joint_names, row, strict=True):
            limits = model.joints[name].hard_limits() or (-math.pi, math.pi)
            assert limits[0] <= value <= limits[1]


def test_ratio_and_median() -> None:
    assert ratio(300.0, 200.0) == "1.5x"
    assert ratio(1.0, 0.0) == ratio(1.0, None) == ratio(None, 1.0) == "-"
    assert ratio(math.nan, 1.0) == ratio(1.0, math.nan) == "-"
    assert vs_rsp.median([3.0, math.nan, 1.0, 2.0]) == 2.0
    assert math.isnan(vs_rsp.median([math.nan]))


# -- the section over DDS, without RSP ------------------------------------------------------------


# -- the floor node and the executors -------------------------------------------------------------


@pytest.mark.ros
def test_the_floor_s_pieces_joined_with_a_stamp_are_the_tf_message_of_its_frames() -> None:
    from rclpy.serialization import deserialize_message
    from tf2_msgs.msg import TFMessage

    from bench.floor_node import tf_pieces

    frames = [["base", "link_1"], ["link_1", "a_much_longer_link_name"], ["l", "x"]]
    stamp = (-5).to_bytes(4, "little", signed=True) + (123_456_789).to_bytes(4, "little")

    message = deserialize_message(stamp.join(tf_pieces(frames)), TFMessage)

    assert [[t.header.frame_id, t.child_frame_id] for t in message.transforms] == frames
    assert {(t.header.stamp.sec, t.header.stamp.nanosec) for t in message.transforms} == {
        (-5, 123_456_789)
    }
    assert {t.transform.rotation.w for t in message.transforms} == {1.0}


def test_the_global_tree_s_node_runs_once_on_the_default_executor(tmp_path: Path) -> None:
    nodes = vs_rsp.contenders("no rsp", None, tmp_path, ["events", "rclpy"], global_tree=True)

    assert [(c.node, c.executor) for c in nodes][-1] == (vs_rsp.GLOBAL_TREE_NODE, "events")
    (with_tree,) = [c for c in nodes if c.node == vs_rsp.GLOBAL_TREE_NODE]
    command = with_tree.command(tmp_path / "p.yaml", tmp_path / "f.json")
    assert command[-2:] == ["-p", f"global_frame_prefix:={vs_rsp.GLOBAL_TREE_PREFIX}"]
    assert "--ros-args" in command[: command.index("-p")]
    assert with_tree.environ is not None
    assert with_tree.environ[vs_rsp.EXECUTOR_VARIABLE] == "events"
    without = vs_rsp.contenders("no rsp", None, tmp_path, ["events"])
    assert vs_rsp.GLOBAL_TREE_NODE not in [c.node for c in without]


def test_the_floor_and_each_revision_run_on_every_executor_rsp_once(tmp_path: Path) -> None:
    found = vs_rsp.RspFound(tmp_path / "rsp", "test")

    nodes = vs_rsp.contenders(found, None, tmp_path, ["events", "rclpy"])

    assert [(c.node, c.executor) for c in nodes] == [
        ("rsp", None),
        ("floor", "events"),
        ("ours", "events"),
        ("floor:rclpy", "rclpy"),
        ("ours:rclpy", "rclpy"),
    ]
    for node in nodes[1:]:
        assert node.environ is not None
        assert node.environ[vs_rsp.EXECUTOR_VARIABLE] == node.executor
    assert [c.modes for c in nodes if c.node.startswith("floor")] == [("ignore_timestamp",)] * 2
    assert nodes[2].modes == tuple(vs_rsp.MODES)
    floor = nodes[1].command(tmp_path / "p.yaml", tmp_path / "f.json")
    assert floor[1:4] == ["-m", "bench.floor_node", str(tmp_path / "f.json")]
    assert floor[4:7] == ["--ros-args", "--params-file", str(tmp_path / "p.yaml")]


def test_an_executor_this_rclpy_lacks_is_refused_before_anything_runs() -> None:
    with pytest.raises(ValueError, match="offers"):
        vs_rsp.run_vs_rsp(quick=True, rates=[100.0], executors=["threads"])


def test_executors_are_an_option() -> None:
    assert parse_args(["--executors", "rclpy,waitset"]).executors == ["rclpy", "waitset"]
    assert parse_args([]).executors is None


def test_the_bench_robot_carries_the_frames_of_its_moving_and_fixed_joints() -> None:
    robot = vs_rsp.bench_robot(vs_rsp.ROBOTS["arm"], count=2)

    assert (len(robot.frames["moving"]), len(robot.frames["static"])) == (11, 6)
    assert all(len(pair) == 2 and all(pair) for pair in robot.frames["moving"])


@pytest.mark.ros
def test_without_rsp_the_floor_a_baseline_and_this_node_run_interleaved_and_compared(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Without RSP the section still runs (and says why RSP is missing): the floor node (in
    ``ignore_timestamp`` mode only), this node at HEAD and the work tree's node, in turns (the
    order reversed every other round), over real DDS; all answer with one transform per
    moving joint and are measured, both revisions send the same frames and values, and the
    own-work table gives each node's CPU less the floor's."""
    monkeypatch.setenv("AMENT_PREFIX_PATH", "")
    monkeypatch.setenv("RSP_KIT", str(tmp_path / "no-kit"))

    tables, record = vs_rsp.run_vs_rsp(
        quick=True,
        rates=[100.0],
        robots=["arm"],
        rounds=2,
        window_s=1.0,
        baseline="HEAD",
        executors=["events"],
    )

    assert "without robot_state_publisher: no robot_state_publisher" in capsys.readouterr().out
    rates, own, startup = tables
    assert record["nodes"] == ["floor", "ours@HEAD", "ours"]
    assert [row[:3] for row in rates.rows] == [
        ["arm_mimic_gripper", "ignore_timestamp", "100"],
        ["arm_mimic_gripper", "defaults", "100"],
    ]
    modes = record["robots"]["arm_mimic_gripper"]["modes"]
    assert [turn["node"] for turn in modes["ignore_timestamp"]] == [
        "floor",
        "ours@HEAD",
        "ours",
        "ours",
        "ours@HEAD",
        "floor",
    ]
    assert [turn["node"] for turn in modes["defaults"]] == [
        "ours@HEAD",
        "ours",
        "ours",
        "ours@HEAD",
    ]
    for mode in vs_rsp.MODES:
        for turn in modes[mode]:
            (window,) = turn["windows"]
            assert window["received"] > 0 and window["sent"] >= 90, turn
            assert window["cpu_us_per_message"] > 0
            assert turn["transforms_per_message"] == 11 and turn["static_transforms"] == 6
            # the node's clock at its /tf_static publication: after its start, before receipt
            assert 0 < turn["published_ms"] <= turn["startup_ms"], turn
    (row,) = own.rows
    assert row[:3] == ["arm_mimic_gripper", "100", "events"]
    floor, base, ours = (float(cell) for cell in row[3].split(" / "))
    # own work and ratio, from the unrounded medians of the cells
    for own_us, times, node in ((row[4], row[6], base), (row[5], row[7], ours)):
        assert abs(float(own_us) - (node - floor)) <= 1
        assert abs(float(times.rstrip("x")) - node / floor) < 0.01
    assert row[8:] == ["-", "-"]  # no RSP
    notes = [note for note in startup.notes if "ours vs ours@HEAD: " in note]
    assert [note.split(": ", 1)[1].split(",")[0] for note in notes] == [
        "same 11 frames",
        "same 6 frames",
    ]
    for note in notes:
        translation, rotation = note.rsplit("within ", 1)[1].split(", ")
        assert float(translation.split()[0]) < 1e-9 and float(rotation.split()[0]) < 1e-9
    assert not [note for note in startup.notes if "vs floor" in note]  # its poses are dummies
