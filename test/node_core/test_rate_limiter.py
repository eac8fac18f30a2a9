"""The rate limiter's publication times: what it answers about a set of joints is always what
their times are, whatever it remembers between messages."""

from __future__ import annotations

import numpy as np

from joint_tf_publisher.node_core.rate_limiter import NEVER_NS, RateLimiter


def joints(*indices: int) -> tuple[np.ndarray, bytes]:
    """An index array and its key (its bytes, as ``MessagePlan.moves_key``): a new array and a
    new bytes object on every call, so that keys are equal by value only."""
    array = np.array(indices, dtype=np.intp)
    return array, array.tobytes()


def test_joints_never_published_are_at_never() -> None:
    limiter = RateLimiter(4)
    assert limiter.extremes(*joints(0, 3)) == (NEVER_NS, NEVER_NS)


def test_extremes_span_the_joints_asked_about() -> None:
    limiter = RateLimiter(4)
    limiter.record(*joints(0, 1), 100)
    limiter.record(*joints(1, 2), 200)
    assert limiter.extremes(*joints(0, 1, 2)) == (100, 200)
    assert limiter.extremes(*joints(3, 2)) == (NEVER_NS, 200)
    assert limiter.times(np.array([0, 1, 2, 3])).tolist() == [100, 200, 200, NEVER_NS]


def test_the_same_joints_asked_again_see_a_record_of_other_joints() -> None:
    limiter = RateLimiter(4)
    limiter.record(*joints(0, 1, 2), 100)
    assert limiter.extremes(*joints(0, 1, 2)) == (100, 100)
    limiter.record(*joints(2, 3), 250)  # joint 2 is in both
    assert limiter.extremes(*joints(0, 1, 2)) == (100, 250)
    assert limiter.extremes(*joints(2, 3)) == (250, 250)
    limiter.record(*joints(0, 1, 2), 300)
    assert limiter.extremes(*joints(2, 3)) == (250, 300)


def test_reset_forgets_every_time() -> None:
    limiter = RateLimiter(3)
    limiter.record(*joints(0, 1, 2), 500)
    assert limiter.extremes(*joints(0, 1, 2)) == (500, 500)
    limiter.reset()
    assert limiter.extremes(*joints(0, 1, 2)) == (NEVER_NS, NEVER_NS)


def test_any_sequence_answers_as_the_times_are() -> None:
    """Random records, resets and questions over a few joint sets (as message shapes repeat)
    against the times kept in a plain list."""
    rng = np.random.default_rng(7)
    count = 6
    shapes = [tuple(sorted(rng.choice(count, size=k, replace=False))) for k in (1, 2, 3, 3, 6)]
    limiter, expected = RateLimiter(count), [NEVER_NS] * count
    for step in range(2000):
        shape = shapes[int(rng.integers(len(shapes)))]
        action = rng.random()
        if action < 0.4:
            stamp_ns = int(rng.integers(0, 10_000))
            limiter.record(*joints(*shape), stamp_ns)
            for joint in shape:
                expected[joint] = stamp_ns
        elif action < 0.42:
            limiter.reset()
            expected = [NEVER_NS] * count
        else:
            times = [expected[joint] for joint in shape]
            assert limiter.extremes(*joints(*shape)) == (min(times), max(times)), step
