"""bench.stages' accounting: exclusive CPU time per stage, and the per-message table."""

from __future__ import annotations

import time

import pytest

from bench import stages


def burn(seconds: float) -> int:
    """Spend about ``seconds`` of this thread's CPU time."""
    end = time.thread_time() + seconds
    count = 0
    while time.thread_time() < end:
        count += 1
    return count


def test_nested_stages_count_their_own_time_only() -> None:
    accounts = stages.Accounts()
    inner = accounts.timed(stages.APPLY, lambda: burn(0.02))

    def outer_body() -> None:
        burn(0.01)
        inner()
        inner()

    outer = accounts.timed(stages.CALLBACK, outer_body)

    outer()

    assert accounts.calls[stages.CALLBACK] == 1 and accounts.calls[stages.APPLY] == 2
    assert accounts.exclusive_ns[stages.APPLY] == pytest.approx(40e6, rel=0.25)
    assert accounts.exclusive_ns[stages.CALLBACK] == pytest.approx(10e6, rel=0.5)


def test_calls_returning_none_go_to_their_own_stage() -> None:
    accounts = stages.Accounts()
    take = accounts.timed(stages.TAKE, lambda value: value, stages.EMPTY_TAKE)

    assert take("msg") == "msg"
    assert take(None) is None
    assert take(None) is None

    assert (accounts.calls[stages.TAKE], accounts.calls[stages.EMPTY_TAKE]) == (1, 2)


def test_an_exception_is_still_accounted() -> None:
    accounts = stages.Accounts()

    def fail() -> None:
        raise ValueError("x")

    with pytest.raises(ValueError):
        accounts.timed(stages.PUBLISH, fail)()

    assert accounts.calls[stages.PUBLISH] == 1


def test_the_table_is_per_message_with_the_rest_of_the_thread_as_loop() -> None:
    before = stages.Accounts().snapshot(thread_ns=1_000_000)
    after = stages.Accounts().snapshot(thread_ns=0)
    after["calls"][stages.TAKE] = 200
    after["exclusive_ns"][stages.TAKE] = 20_000_000  # 20 ms
    after["exclusive_ns"][stages.PUBLISH] = 10_000_000
    after["thread_ns"] = 1_000_000 + 50_000_000

    rows = {
        stage: (calls, micros) for stage, calls, micros in stages.stage_table(before, after, 100)
    }

    assert rows[stages.TAKE] == (2.0, 200.0)
    assert rows[stages.PUBLISH] == (0.0, 100.0)
    assert rows[stages.LOOP][1] == pytest.approx(200.0)
    assert sum(micros for _, micros in rows.values()) == pytest.approx(500.0)


@pytest.mark.ros
def test_instrumenting_this_node_finds_every_function_it_times() -> None:
    """Every wrapped function exists in the node as it is: a renamed one would be reported as
    not instrumented, and this fails until STAGE_PATCHES follows the node."""
    for module, path, _ in stages.STAGE_PATCHES:
        assert stages._resolve(module, path) is not None, f"{module}.{path}"
    assert stages._resolve(*stages.NODE_CLASS) is not None
    assert stages._resolve(stages.RUNTIME_MODULE, "_rclpy") is not None


def test_a_timed_subscription_equals_the_one_it_wraps() -> None:
    class Handle:
        def take_message(self, *args: object) -> None:
            return None

    class Subscription:
        handle = Handle()

    real, other = Subscription(), Subscription()
    timed = stages._Subscription(real, stages.Accounts())

    assert real in [timed] and timed == real and real == timed
    assert other not in [timed] and timed != other
    assert timed.handle.take_message() is None


def test_a_clock_read_costs_less_than_a_millisecond() -> None:
    assert 0 < stages.clock_read_ns(1000) < 1e6


@pytest.mark.ros
@pytest.mark.slow
def test_the_timed_node_reports_every_hot_stage(ros_subprocess_env: dict[str, str]) -> None:
    import subprocess
    import sys

    from bench.e2e import REPO_ROOT

    env = {**ros_subprocess_env, "BENCH_ROS_DOMAIN_ID": ros_subprocess_env["ROS_DOMAIN_ID"]}
    done = subprocess.run(
        [sys.executable, "-m", "bench.stages", "--rate", "200", "--seconds", "2"],
        cwd=REPO_ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    rows = {
        cells[1]: cells[2:4]
        for line in done.stdout.splitlines()
        if line.startswith("| ") and len(cells := [c.strip() for c in line.split("|")]) > 3
    }
    hot = (stages.HOT_APPLY, stages.HOT_POSES)
    for stage in (stages.TAKE, stages.CALLBACK, *hot, stages.PUBLISH):
        calls, micros = rows[stage]
        assert 0.5 < float(calls) <= 1.1 and float(micros) > 0.0, (stage, rows[stage])
