"""stamps: a header stamp (sec, nanosec) <-> integer nanoseconds, checked against rclpy's own
``rclpy.time.Time`` where that accepts the time (not before the epoch)."""

from __future__ import annotations

import random

import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")

from rclpy.time import Time  # noqa: E402

from joint_tf_publisher.stamps import ns_to_stamp, stamp_to_ns  # noqa: E402

pytestmark = pytest.mark.ros

INT32_MIN, INT32_MAX = -(2**31), 2**31 - 1


def test_agrees_with_rclpy_time_from_the_epoch_to_int32s_end() -> None:
    rng = random.Random(7)
    samples = [0, 1, 999_999_999, 1_000_000_000, (INT32_MAX + 1) * 10**9 - 1]
    samples += [rng.randrange(0, (INT32_MAX + 1) * 10**9) for _ in range(1000)]
    for stamp_ns in samples:
        msg = Time(nanoseconds=stamp_ns).to_msg()
        assert ns_to_stamp(stamp_ns) == (msg.sec, msg.nanosec)
        assert stamp_to_ns(msg.sec, msg.nanosec) == Time.from_msg(msg).nanoseconds == stamp_ns


def test_a_time_before_the_epoch_keeps_nanosec_in_range_and_round_trips() -> None:
    """rclpy's Time refuses these; a message's int32 sec holds them."""
    rng = random.Random(8)
    samples = [-1, -(10**9), -(10**9) - 1, INT32_MIN * 10**9]
    samples += [rng.randrange(INT32_MIN * 10**9, 0) for _ in range(1000)]
    for stamp_ns in samples:
        sec, nanosec = ns_to_stamp(stamp_ns)
        assert INT32_MIN <= sec < 0 and 0 <= nanosec < 10**9
        assert stamp_to_ns(sec, nanosec) == stamp_ns
    assert ns_to_stamp(-1) == (-1, 999_999_999)
