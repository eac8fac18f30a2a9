"""bench.spy's reading of py-spy stacks: frames, raw lines, and the stage of a stack."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from bench import spy, stages
from bench.spy import Frame

SPIN_LOOP = """\
    def _wait_hot(self, timeout_s):
        wait_set.wait(max(0, int(timeout_s * 1e9)))
                taken = handle.take_message(msg_type, raw)
"""


@pytest.fixture
def sources(tmp_path: Path) -> spy.SourceLines:
    package = tmp_path / "joint_tf_publisher" / "ros"
    package.mkdir(parents=True)
    (package / "runtime.py").write_text(SPIN_LOOP)
    return spy.SourceLines([tmp_path / "missing", tmp_path])


def loop(line: int) -> Frame:
    return Frame("WaitLoop._wait_hot", "joint_tf_publisher/ros/runtime.py", line)


def test_a_frame_keeps_function_path_and_line() -> None:
    assert spy.parse_frame("Kinematics.apply (joint_tf_publisher/kinematics.py:786)") == Frame(
        "Kinematics.apply", "joint_tf_publisher/kinematics.py", 786
    )
    assert spy.parse_frame("<listcomp> (a/b.py:3)") == Frame("<listcomp>", "a/b.py", 3)
    assert spy.parse_frame("0x7fda1264524a (libc.so.6)") == Frame(
        "0x7fda1264524a (libc.so.6)", "", 0
    )


def test_raw_lines_sum_per_stack() -> None:
    lines = [
        "<module> (x:8);spin (joint_tf_publisher/ros/node.py:782) 5\n",
        "<module> (x:8);spin (joint_tf_publisher/ros/node.py:782) 2\n",
        "<module> (x:8) 1\n",
        "not a sample line\n",
    ]

    stacks = spy.parse_raw(lines)

    spin_stack = (Frame("<module>", "x", 8), Frame("spin", "joint_tf_publisher/ros/node.py", 782))
    assert stacks == {spin_stack: 7, (Frame("<module>", "x", 8),): 1}


def test_the_nearest_named_frame_from_the_leaf_decides(sources: spy.SourceLines) -> None:
    numpy_leaf = Frame("_any", "numpy/_core/_methods.py", 61)
    callback = Frame("JointTfPublisher._on_joint_state", "joint_tf_publisher/ros/node.py", 537)
    apply = Frame("StateResolver.apply_general", "joint_tf_publisher/kinematics/state.py", 121)
    publish = Frame("Publisher.publish", "rclpy/publisher.py", 74)

    assert spy.classify((loop(4), callback, apply, numpy_leaf), sources) == stages.APPLY
    assert spy.classify((loop(4), callback), sources) == stages.CALLBACK
    assert spy.classify((loop(4), callback, publish), sources) == stages.PUBLISH


def test_spin_loop_lines_are_told_apart_by_their_text(sources: spy.SourceLines) -> None:
    header_init = Frame("Header.__init__", "std_msgs/msg/_header.py", 95)

    assert spy.classify((loop(2),), sources) == stages.WAIT
    assert spy.classify((loop(3),), sources) == stages.TAKE
    assert spy.classify((loop(3), header_init), sources) == stages.TAKE
    assert spy.classify((loop(1),), sources) == stages.LOOP
    assert spy.classify((loop(99),), sources) == stages.LOOP  # past the end of the file
    assert spy.classify((Frame("main", "elsewhere.py", 1),), sources) == spy.OTHER
    # The lines of functions outside the spin loop are not read.
    other_function = Frame("WaitLoopHelper", "joint_tf_publisher/ros/runtime.py", 2)
    assert spy.classify((other_function,), sources) == spy.OTHER


def test_every_timed_function_names_its_stage_in_stacks() -> None:
    for _, path, stage in stages.STAGE_PATCHES:
        assert spy.classify((Frame(path, "x.py", 1),), spy.SourceLines([])) == stage


def test_shares_add_up_to_one(sources: spy.SourceLines) -> None:
    stacks = spy.parse_raw(
        [
            "WaitLoop.run (joint_tf_publisher/ros/runtime.py:1);"
            "WaitLoop._wait_hot (joint_tf_publisher/ros/runtime.py:2) 3",
            "WaitLoop._take_hot (joint_tf_publisher/ros/runtime.py:3) 1",
        ]
    )

    shares = spy.stage_shares(stacks, sources)

    assert shares[stages.WAIT] == pytest.approx(0.75)
    assert shares[stages.TAKE] == pytest.approx(0.25)
    assert sum(shares.values()) == pytest.approx(1.0)
    assert spy.stage_shares(spy.parse_raw([]), sources) == {}


def test_context_switches_of_this_process_count_its_sleeps() -> None:
    import time

    before = stages.context_switches(os.getpid())
    for _ in range(5):
        time.sleep(0.001)

    assert stages.context_switches(os.getpid()) >= before + 5
