"""``loop_rod``'s steps on points placed by hand: where two axes meet, where a circle meets a
sphere, the universal joint's two turns (Paden-Kahan subproblem 2), and each case where the
form does not apply. ``test_loop_closed_forms`` checks the form on whole linkages."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.spatial.transform import Rotation
from test_loop_dyad import form_of

from bench.loop_models import rssr
from joint_tf_publisher.kinematics import loop_rod
from joint_tf_publisher.kinematics.loop_rod import BallRod

X, Y, Z = [1.0, 0.0, 0.0], [0.0, 1.0, 0.0], [0.0, 0.0, 1.0]


def _turn(axis: list[float], angle: float) -> np.ndarray:
    return np.asarray(Rotation.from_rotvec(np.array(axis) * angle).as_matrix())


@pytest.mark.parametrize(
    ("o2", "a2"),
    [([0.0, 0.0, 2.0], X), ([-0.8, 0.0, -0.4], [0.6, 0.0, 0.8])],
    ids=["normal", "oblique"],
)
def test_two_axes_meet_where_they_cross(o2: list[float], a2: list[float]) -> None:
    """The z line through (1, 0, 0) and a line through (1, 0, 2): they meet there."""
    centre = loop_rod._meeting_point([1.0, 0.0, 0.0], Z, o2, a2)
    assert centre is not None and np.allclose(centre, [1.0, 0.0, 2.0], atol=1e-15)
    swapped = loop_rod._meeting_point(o2, a2, [1.0, 0.0, 0.0], Z)
    assert swapped is not None and np.allclose(swapped, [1.0, 0.0, 2.0], atol=1e-15)


def test_two_oblique_axes_meet_where_they_cross() -> None:
    """Two lines through (1, 2, 3), each axis with x, y and z components, their origins
    2 m and 1.5 m from it along them."""
    crossing = np.array([1.0, 2.0, 3.0])
    a1 = np.array([0.3, 0.5, 0.8]) / np.linalg.norm([0.3, 0.5, 0.8])
    a2 = np.array([-0.4, 0.7, 0.2]) / np.linalg.norm([-0.4, 0.7, 0.2])
    o1, o2 = crossing - 2.0 * a1, crossing + 1.5 * a2
    centre = loop_rod._meeting_point(o1.tolist(), a1.tolist(), o2.tolist(), a2.tolist())
    assert centre is not None and np.allclose(centre, crossing, atol=1e-14)


def test_axes_that_do_not_meet_have_no_point() -> None:
    """Parallel axes, and axes that pass 1e-9 m apart (beyond ``MEETING``)."""
    assert loop_rod._meeting_point([0.0, 0.0, 0.0], Z, [1.0, 0.0, 0.0], Z) is None
    assert loop_rod._meeting_point([1.0, 0.0, 0.0], Z, [0.0, 1e-9, 2.0], X) is None
    assert loop_rod._meeting_point([1.0, 0.0, 0.0], Z, [0.0, 1e-13, 2.0], X) is not None


@pytest.mark.parametrize(
    ("start", "expected"),
    [([0.8, 0.6, 0.0], [1.0, 0.0, 0.0]), ([0.6, 0.8, 0.0], [0.0, 1.0, 0.0])],
)
@pytest.mark.parametrize("origin", [[0.0, 0.0, 0.0], [0.0, 0.0, -1.0]])
def test_a_circle_meets_a_sphere_nearest_the_point(
    start: list[float], expected: list[float], origin: list[float]
) -> None:
    """The unit circle about z (its origin anywhere on the axis) and the sphere about
    (1, 1, 0.5) through (1, 0, 0) and (0, 1, 0): the meeting point nearer ``start``."""
    point = loop_rod._circle_meets_sphere(origin, Z, start, [1.0, 1.0, 0.5], math.sqrt(1.25))
    assert point is not None and np.allclose(point, expected, atol=1e-12)


@pytest.mark.parametrize(
    ("start", "centre", "radius"),
    [
        ([0.0, 0.0, 0.0], [1.0, 1.0, 0.5], 1.0),  # the point on the axis: no circle
        ([1.0, 0.0, 0.0], [1.0, 1.0, 3.0], 1.0),  # the sphere above the circle's plane
        ([1.0, 0.0, 0.0], [5.0, 0.0, 0.0], 1.0),  # beside the circle, apart
        ([1.0, 0.0, 0.0], [0.1, 0.0, 0.0], 0.2),  # inside the circle
        ([1.0, 0.0, 0.0], [0.0, 0.0, 0.5], 2.0),  # about its axis: no single point
    ],
    ids=["on-axis", "above", "apart", "inside", "concentric"],
)
def test_a_circle_and_a_sphere_that_do_not_meet_have_no_point(
    start: list[float], centre: list[float], radius: float
) -> None:
    assert loop_rod._circle_meets_sphere([0.0, 0.0, 0.0], Z, start, centre, radius) is None


def test_a_circle_that_touches_the_sphere_meets_it() -> None:
    """The sphere's circle in the plane touching the unit circle from outside, and from
    inside (tangent circles meet: the bounds are inside)."""
    point = loop_rod._circle_meets_sphere([0.0, 0.0, 0.0], Z, [0.0, 1.0, 0.0], [2.0, 0.0, 0.0], 1.0)
    assert point is not None and np.allclose(point, [1.0, 0.0, 0.0], atol=1e-7)
    point = loop_rod._circle_meets_sphere([0.0, 0.0, 0.0], Z, [0.0, 1.0, 0.0], [0.5, 0.0, 0.0], 0.5)
    assert point is not None and np.allclose(point, [1.0, 0.0, 0.0], atol=1e-7)


@pytest.mark.parametrize(
    ("a1", "a2", "outer", "inner"),
    [(Z, X, 0.3, -0.2), (Z, [0.6, 0.0, 0.8], -0.5, 0.4), (Y, Z, 0.25, 0.15)],
)
def test_the_universal_joint_turns_the_rod_end_onto_the_point(
    a1: list[float], a2: list[float], outer: float, inner: float
) -> None:
    """q = R(a1, outer) R(a2, inner) p: the pair found is (outer, inner), the nearer of
    the two pairs to no turn."""
    p = np.array([0.2, 0.5, 0.7])
    q = _turn(a1, outer) @ _turn(a2, inner) @ p
    turns = loop_rod._two_turns(a1, a2, p.tolist(), q.tolist())
    assert turns is not None
    assert np.allclose(turns, (outer, inner), atol=1e-12)
    rotated = loop_rod._rotate(a1, turns[0], loop_rod._rotate(a2, turns[1], p.tolist()))
    assert np.allclose(rotated, q, atol=1e-12)


def test_the_universal_joint_has_no_turns_for_parallel_axes_or_an_unreachable_point() -> None:
    p = [0.2, 0.5, 0.7]
    assert loop_rod._two_turns(Z, Z, p, [0.5, 0.2, 0.7]) is None
    # |p| kept, but beyond what turns about z and then x reach from p (z = 0.7 about x).
    reach = float(np.linalg.norm(p))
    assert loop_rod._two_turns(Z, X, [0.0, 0.0, reach], [reach, 0.0, 0.0]) is not None
    assert loop_rod._two_turns(X, Z, [0.0, 0.0, reach], [0.0, 0.0, -reach]) is not None
    assert loop_rod._two_turns(Z, X, [reach, 0.0, 0.0], [0.0, 0.0, reach]) is None


def test_turn_about_and_rotate_are_right_handed() -> None:
    assert math.isclose(loop_rod._turn_about(Z, X, Y), math.pi / 2)
    assert math.isclose(loop_rod._turn_about(Z, Y, X), -math.pi / 2)
    # The parts along the axis are left out.
    assert math.isclose(loop_rod._turn_about(Z, [1.0, 0.0, 5.0], [0.0, 2.0, -3.0]), math.pi / 2)
    assert np.allclose(loop_rod._rotate(Z, math.pi / 2, [1.0, 0.0, 2.0]), [0.0, 1.0, 2.0])
    assert np.allclose(loop_rod._rotate(X, 0.3, [0.0, 1.0, 0.0]), _turn(X, 0.3) @ Y)
    assert loop_rod._distance([1.0, 2.0, 3.0], [1.0, 2.0, 5.0]) == 2.0
    assert loop_rod._minus([1.0, 2.0, 3.0], [0.5, 2.5, 3.0]) == [0.5, -0.5, 0.0]


def _rod() -> BallRod:
    return form_of(rssr(), BallRod)


def test_the_rod_form_closes_placed_points_and_moves_only_its_slots() -> None:
    """The universal joint at the origin (axes z, then x), the rod's end at p1; the circle's
    axis y through (2, 0, 0), its point p2: both end on the meeting point, nothing left."""
    form = _rod()
    values = np.full(4, 0.25)
    p1 = [0.0, 1.0, 0.0]
    p2 = [2.0, 0.0, 1.5]
    placed = [[[0.0, 0.0, 0.0], Z], [[0.0, 0.0, 0.0], X], [[2.0, 0.0, 0.0], Y], [p1, Z], [p2, Z]]
    errors = form.solve_placed(values, placed)
    assert errors is not None and errors[0] < 1e-12 and errors[1] == 0.0
    outer, inner, circle = (values[slot] - 0.25 for slot in form.slots)
    end = _turn(Z, outer) @ _turn(X, inner) @ np.array(p1)
    pin = np.array([2.0, 0.0, 0.0]) + _turn(Y, circle) @ (np.array(p2) - [2.0, 0.0, 0.0])
    assert np.allclose(end, pin, atol=1e-12)
    assert math.isclose(float(np.linalg.norm(end)), 1.0)
    (other,) = set(range(4)) - set(form.slots)
    assert values[other] == 0.25


@pytest.mark.parametrize(
    "placed",
    [
        # The universal joint's axes parallel; the circle out of the rod's reach; an end
        # the universal joint cannot turn onto (its axes meet away from the rod's end line).
        [[[0, 0, 0], Z], [[0, 0, 0], Z], [[2, 0, 0], Y], [[0, 1, 0], Z], [[2, 0, 1.5], Z]],
        [[[0, 0, 0], Z], [[0, 0, 0], X], [[5, 0, 0], Y], [[0, 1, 0], Z], [[5, 0, 1.5], Z]],
    ],
    ids=["parallel", "out-of-reach"],
)
def test_where_the_rod_form_does_not_apply_it_says_so_and_moves_nothing(
    placed: list[list[list[float]]],
) -> None:
    form = _rod()
    values = np.full(4, 0.25)
    as_floats = [[list(map(float, v)) for v in pair] for pair in placed]
    assert form.solve_placed(values, as_floats) is None
    assert values.tolist() == [0.25] * 4


def test_a_tilted_circle_meets_the_sphere_as_the_upright_one() -> None:
    """The upright case turned so that the circle's axis has x, y and z components, its
    origin 1 down the axis (the point's foot is found along the axis from the origin)."""
    turn = Rotation.from_rotvec([0.3, -0.5, 0.2]).as_matrix()
    axis = turn @ Z
    point = loop_rod._circle_meets_sphere(
        (-axis).tolist(),
        axis.tolist(),
        (turn @ [0.8, 0.6, 0.0]).tolist(),
        (turn @ [1.0, 1.0, 0.5]).tolist(),
        math.sqrt(1.25),
    )
    assert point is not None and np.allclose(point, turn @ X, atol=1e-12)


def test_the_universal_joints_reach_has_a_round_off_margin_of_its_size() -> None:
    """A point just beyond the rod end's reach (g^2 a hair below 0: round-off) still turns:
    the margin is 1e-12 of |p|^2 (|p| = 2: g^2 = -1e-12 taken), at least 1e-12 (|p| = 1:
    -1.5e-12 refused)."""
    assert loop_rod._two_turns(Z, X, [2.0, 0.0, 0.0], [0.0, 2.0, 1e-6]) is not None
    assert loop_rod._two_turns(Z, X, [1.0, 0.0, 0.0], [0.0, 1.0, math.sqrt(1.5e-12)]) is None
