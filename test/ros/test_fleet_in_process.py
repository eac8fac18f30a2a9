"""The fleet in this process, without DDS traffic (a real Fleet node and context): a robot
removed and listed again while its node is being made (the start thread's make held until the
test says); ``retry_period`` given as an integer, and values it refuses."""

from __future__ import annotations

import threading
from collections.abc import Callable
from typing import Any

import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

from rclpy.executors import SingleThreadedExecutor  # noqa: E402
from rclpy.parameter import Parameter  # noqa: E402

from joint_tf_publisher.ros import fleet  # noqa: E402

pytestmark = [pytest.mark.ros]

WAIT_S = 20.0
#: What a robot's start returns when its wait for xacro gives up (``xacro_process``).
GAVE_UP = "the node is stopping: xacro stopped"


def test_a_robot_listed_again_while_its_start_gives_up_is_started_afresh() -> None:
    argv = ["joint_tf_fleet", "--ros-args", "-p", "robots:=[a]"]
    context = rclpy.Context()
    rclpy.init(args=argv, context=context)
    executor = SingleThreadedExecutor(context=context)
    the_fleet = fleet.Fleet(argv, context=context)
    inside, release = threading.Event(), threading.Event()
    makes: list[str] = []

    def make(namespace: str, gone: Callable[[], bool]) -> Any:
        makes.append(namespace)
        inside.set()
        assert release.wait(WAIT_S)
        return GAVE_UP if gone() or len(makes) == 1 else "refused for its own reason"

    the_fleet._make = make  # type: ignore[method-assign]
    try:
        the_fleet.reconcile(executor)
        assert inside.wait(WAIT_S)
        for robots in ([], ["a"]):  # removed, then listed again, while it starts
            assert the_fleet.set_parameters([Parameter("robots", value=robots)])[0].successful
        release.set()
        future, _ = the_fleet._starts["/a"]
        future.result(timeout=WAIT_S)
        the_fleet.reconcile(executor)  # the give-up is no refusal: /a starts again
        assert "/a" not in the_fleet.state.refused, the_fleet.state.refused
        assert "/a" in the_fleet._starts  # a fresh start, under way
        the_fleet._starts["/a"][0].result(timeout=WAIT_S)
        the_fleet.reconcile(executor)
        assert makes == ["/a", "/a"]
        assert the_fleet.state.refused["/a"].reason == "refused for its own reason"
    finally:
        release.set()
        the_fleet.destroy_contained()
        the_fleet.destroy_node()
        executor.shutdown()
        context.try_shutdown()


def test_retry_period_takes_an_integer_and_refuses_what_is_no_period() -> None:
    """``retry_period: 5`` (an integer, as the node's doubles take one) at start and at
    runtime; a string, a boolean, NaN, a negative or too long period refused naming it."""
    argv = ["joint_tf_fleet", "--ros-args", "-p", "retry_period:=5"]
    context = rclpy.Context()
    rclpy.init(args=argv, context=context)
    the_fleet = fleet.Fleet(argv, context=context)
    try:
        assert the_fleet.state.retry_period_s == 5.0
        assert the_fleet.set_parameters([Parameter("retry_period", value=7)])[0].successful
        assert the_fleet.state.retry_period_s == 7.0
        for bad in ("5", True, float("nan"), -1.0, 1e400, 3601):
            result = the_fleet.set_parameters([Parameter("retry_period", value=bad)])[0]
            assert not result.successful and result.reason.startswith("retry_period must"), bad
        assert the_fleet.state.retry_period_s == 7.0
    finally:
        the_fleet.destroy_node()
        context.try_shutdown()
