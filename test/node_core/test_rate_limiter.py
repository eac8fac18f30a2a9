"""The rate limiter's publication times, and the extremes it remembers between messages."""

from __future__ import annotations

import numpy as np

from joint_tf_publisher.node_core.rate_limiter import NEVER_NS, RateLimiter


def joints(*indices: int) -> np.ndarray:
    """A read-only index array, as ``MessagePlan.moves`` is (the limiter remembers those)."""
    array = np.array(indices, dtype=np.intp)
    array.flags.writeable = False
    return array


def test_joints_never_published_are_at_never() -> None:
    limiter = RateLimiter(4)
    assert limiter.extremes(joints(0, 3)) == (NEVER_NS, NEVER_NS)


def test_extremes_span_the_joints_asked_about() -> None:
    limiter = RateLimiter(4)
    limiter.record(joints(0, 1), 100)
    limiter.record(joints(1, 2), 200)
    assert limiter.extremes(joints(0, 1, 2)) == (100, 200)
    assert limiter.extremes(joints(3, 2)) == (NEVER_NS, 200)


def test_the_same_array_asked_again_sees_a_record_of_other_joints() -> None:
    """What is remembered for one array is dropped when another array's times change."""
    limiter = RateLimiter(4)
    arm, wrist = joints(0, 1, 2), joints(2, 3)
    limiter.record(arm, 100)
    assert limiter.extremes(arm) == (100, 100)
    limiter.record(wrist, 250)  # joint 2 is in both
    assert limiter.extremes(arm) == (100, 250)
    assert limiter.extremes(wrist) == (250, 250)
    limiter.record(arm, 300)
    assert limiter.extremes(wrist) == (250, 300)


def test_reset_forgets_every_time() -> None:
    limiter = RateLimiter(3)
    every = joints(0, 1, 2)
    limiter.record(every, 500)
    assert limiter.extremes(every) == (500, 500)
    limiter.reset()
    assert limiter.extremes(every) == (NEVER_NS, NEVER_NS)


def test_a_writable_array_changed_between_calls_is_read_afresh() -> None:
    limiter = RateLimiter(3)
    limiter.record(joints(0), 100)
    limiter.record(joints(1), 200)
    asked = np.array([0], dtype=np.intp)
    assert limiter.extremes(asked) == (100, 100)
    asked[0] = 1
    assert limiter.extremes(asked) == (200, 200)
