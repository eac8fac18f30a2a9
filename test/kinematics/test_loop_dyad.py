"""``loop_dyad``'s planar dyad on points placed by hand: where the two circles meet, which of
the two meeting points is taken, and each case where the form does not apply (the iterative
solver's then). ``test_loop_closed_forms`` checks the forms on whole linkages."""

from __future__ import annotations

import math
from typing import TypeVar

import numpy as np
import pytest

from bench.loop_models import four_bar, slider_crank
from joint_tf_publisher import Robot
from joint_tf_publisher.kinematics.loop_dyad import PARALLEL, CrankSlider, Dyad
from joint_tf_publisher.kinematics.loop_solver import ClosedForm

FormT = TypeVar("FormT", bound=ClosedForm)

Z = [0.0, 0.0, 1.0]


def form_of(robot: Robot, kind: type[FormT]) -> FormT:
    """The one closed form of ``robot``'s loop with its crank given, a ``kind``."""
    solver = robot.kinematics.loops
    assert solver is not None
    given = robot.kinematics.cfg.given_slots(["crank_joint"])
    (form,) = solver.plan(solver.passive_slots(given).tobytes()).forms
    assert type(form) is kind
    return form


def _dyad() -> Dyad:
    """The four-bar's dyad (its slots: the coupler's and the rocker's values)."""
    return form_of(four_bar(), Dyad)


def _turned(point: list[float], centre: list[float], axis: list[float], angle: float) -> np.ndarray:
    """``point`` turned by ``angle`` (rad) about the line through ``centre`` along unit
    ``axis`` (Rodrigues)."""
    k = np.array(axis)
    v = np.array(point) - np.array(centre)
    turned = (
        v * math.cos(angle) + np.cross(k, v) * math.sin(angle) + k * (k @ v) * (1 - math.cos(angle))
    )
    return np.asarray(turned + np.array(centre))


def _solve(
    placed: list[list[list[float]]],
) -> tuple[Dyad, np.ndarray, tuple[float, float] | None]:
    form = _dyad()
    values = np.full(3, 0.25)
    return form, values, form.solve_placed(values, placed)


def _placed(
    a: list[float],
    n1: list[float],
    b: list[float],
    n2: list[float],
    p1: list[float],
    p2: list[float],
    l1: list[float] | None = None,
    l2: list[float] | None = None,
) -> list[list[list[float]]]:
    return [[a, n1], [b, n2], [p1, n1 if l1 is None else l1], [p2, n1 if l2 is None else l2]]


@pytest.mark.parametrize(
    "axis",
    [Z, [1.0, 0.0, 0.0], [0.6, 0.0, 0.8], [0.0, -0.6, 0.8]],
    ids=["z", "x", "xz", "yz"],
)
def test_both_points_turn_onto_the_meeting_point_nearest_their_middle(axis: list[float]) -> None:
    """Circles of radius 2 about centres 3 apart, in the plane normal to ``axis`` (each basis
    the form picks): the coupler's and the rocker's turns take their points to the one
    meeting point, the one on the side of the points' middle; nothing left open."""
    k = np.array(axis)
    u = np.cross(k, [0.0, 1.0, 0.0] if abs(k[1]) < 0.9 else [1.0, 0.0, 0.0])
    u /= np.linalg.norm(u)
    w = np.cross(k, u)

    def at(x: float, y: float) -> list[float]:
        return (x * u + y * w + 0.3 * k).tolist()

    a, b = at(0.0, 0.0), at(3.0, 0.0)
    for side in (1.0, -1.0):
        p1, p2 = at(0.0, 2.0 * side), at(3.0, 2.0 * side)
        form, values, errors = _solve(_placed(a, axis, b, axis, p1, p2))
        assert errors is not None
        assert errors[0] < 1e-12 and errors[1] < 1e-12
        turn1 = values[form.slots[0]] - 0.25
        turn2 = values[form.slots[1]] - 0.25
        meeting = np.array(at(1.5, side * math.sqrt(4.0 - 2.25)))
        assert np.allclose(_turned(p1, a, axis, turn1), meeting, atol=1e-12)
        assert np.allclose(_turned(p2, b, axis, turn2), meeting, atol=1e-12)
        (other,) = set(range(3)) - set(form.slots)
        assert values[other] == 0.25  # no other slot moved


def test_an_axis_the_other_way_turns_its_joint_the_other_way() -> None:
    """The rocker's axis antiparallel to the coupler's: its turn is about its own axis."""
    down = [0.0, 0.0, -1.0]
    a, b, p1, p2 = [0.0, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [3.0, 2.0, 0.0]
    form, values, errors = _solve(_placed(a, Z, b, down, p1, p2))
    assert errors is not None
    meeting = np.array([1.5, math.sqrt(1.75), 0.0])
    assert np.allclose(_turned(p2, b, down, values[form.slots[1]] - 0.25), meeting, atol=1e-12)
    assert np.allclose(_turned(p1, a, Z, values[form.slots[0]] - 0.25), meeting, atol=1e-12)


def test_what_the_form_leaves_is_reported() -> None:
    """The loop points apart along the axis (the form cannot move them there) and the loop
    joint's axes a hair apart (within ``PARALLEL``): those are the errors returned."""
    a, b = [0.0, 0.0, 0.0], [3.0, 0.0, 0.0]
    tilted = [0.0, 2e-10, 1.0]
    tilted = (np.array(tilted) / np.linalg.norm(tilted)).tolist()
    _, _, errors = _solve(_placed(a, Z, b, Z, [0.0, 2.0, 0.25], [3.0, 2.0, 0.0], l2=tilted))
    assert errors is not None
    assert math.isclose(errors[0], 0.25, rel_tol=1e-12)
    assert math.isclose(errors[1], 2e-10, rel_tol=1e-6)


@pytest.mark.parametrize(
    "placed",
    [
        # Axes no longer parallel: the coupler's and the rocker's, and each side of the pin.
        _placed([0, 0, 0], Z, [3, 0, 0], [0, 0.01, 1], [0, 2, 0], [3, 2, 0]),
        _placed([0, 0, 0], Z, [3, 0, 0], Z, [0, 2, 0], [3, 2, 0], l1=[0, 0.01, 1]),
        _placed([0, 0, 0], Z, [3, 0, 0], Z, [0, 2, 0], [3, 2, 0], l2=[0, 0.01, 1]),
        # Circles apart, one inside the other, and about one centre.
        _placed([0, 0, 0], Z, [5, 0, 0], Z, [0, 2, 0], [5, 2, 0]),
        _placed([0, 0, 0], Z, [0.5, 0, 0], Z, [0, 2, 0], [0.5, 0.5, 0]),
        _placed([0, 0, 0], Z, [0, 0, 0], Z, [0, 2, 0], [2, 0, 0]),
    ],
    ids=["coupler-rocker", "pin-link1", "pin-link2", "apart", "inside", "concentric"],
)
def test_where_the_form_does_not_apply_it_says_so_and_moves_nothing(
    placed: list[list[list[float]]],
) -> None:
    _, values, errors = _solve([[list(map(float, v)) for v in pair] for pair in placed])
    assert errors is None
    assert values.tolist() == [0.25, 0.25, 0.25]


def test_circles_that_touch_meet_in_one_point() -> None:
    """Centres exactly r1 + r2 apart: the form applies (the boundary is inside)."""
    a, b = [0.0, 0.0, 0.0], [4.0, 0.0, 0.0]
    form, values, errors = _solve(_placed(a, Z, b, Z, [0.0, 2.0, 0.0], [4.0, 2.0, 0.0]))
    assert errors is not None
    assert np.allclose(_turned([0.0, 2.0, 0.0], a, Z, values[form.slots[0]] - 0.25), [2, 0, 0])


def test_axes_exactly_parallel_apart_still_count_as_parallel() -> None:
    """``PARALLEL`` is the largest sine that counts as parallel (the bound is inside): the
    pin's axis 1e-9 off the coupler's (its sine exactly ``PARALLEL``) takes the dyad; the
    slider's axis 1e-9 off the plane, and the pin's 1e-9 off the rod's, take the slider's
    form. Beyond, neither applies."""
    assert PARALLEL == 1e-9
    off = [1e-9, 0.0, 1.0]  # sine to z: exactly 1e-9
    a, b, p1, p2 = [0.0, 0.0, 0.0], [3.0, 0.0, 0.0], [0.0, 2.0, 0.0], [3.0, 2.0, 0.0]
    assert _solve(_placed(a, Z, b, Z, p1, p2, l2=off))[2] is not None
    assert _solve(_placed(a, Z, b, Z, p1, p2, l2=[2e-9, 0.0, 1.0]))[2] is None
    form = form_of(slider_crank(), CrankSlider)
    rod_end, slider_pin = [0.0, 1.0, 0.0], [2.0, 0.0, 0.0]
    for slide, pin in (([1.0, 0.0, 1e-9], Z), ([1.0, 0.0, 0.0], off)):
        placed = [[a, Z], [slider_pin, slide], [rod_end, pin], [slider_pin, Z]]
        values = np.zeros(3)
        assert form.solve_placed(values, placed) is not None
    for slide, pin in (([1.0, 0.0, 2e-9], Z), ([1.0, 0.0, 0.0], [2e-9, 0.0, 1.0])):
        placed = [[a, Z], [slider_pin, slide], [rod_end, pin], [slider_pin, Z]]
        values = np.zeros(3)
        assert form.solve_placed(values, placed) is None
        assert values.tolist() == [0.0, 0.0, 0.0]


@pytest.mark.parametrize(
    "axis",
    [[0.0, -0.6, 0.8], [0.92, 0.3, 0.25], [-0.95, 0.2, -0.24]],
    ids=["first-basis", "second-basis", "second-basis-negative"],
)
def test_the_pivots_may_lie_anywhere_along_their_axes(axis: list[float]) -> None:
    """The coupler's pivot 0.3 above the loop points' plane and the rocker's 0.5 below it
    (a joint's origin anywhere on its axis): only the plane's orthonormal basis places them
    alike, whichever basis the axis picks."""
    k = np.array(axis) / np.linalg.norm(axis)
    u = np.cross(k, [0.0, 1.0, 0.0] if abs(k[1]) < 0.9 else [1.0, 0.0, 0.0])
    u /= np.linalg.norm(u)
    w = np.cross(k, u)

    def at(x: float, y: float, height: float) -> list[float]:
        return (x * u + y * w + height * k).tolist()

    a, b = at(0.0, 0.0, 0.3), at(3.0, 0.0, -0.5)
    p1, p2 = at(0.0, 2.0, 0.1), at(3.0, 2.0, 0.1)
    normal = k.tolist()
    form, values, errors = _solve(_placed(a, normal, b, normal, p1, p2))
    assert errors is not None and errors[0] < 1e-12
    meeting = np.array(at(1.5, math.sqrt(1.75), 0.1))
    assert np.allclose(_turned(p1, a, normal, values[form.slots[0]] - 0.25), meeting, atol=1e-12)
    assert np.allclose(_turned(p2, b, normal, values[form.slots[1]] - 0.25), meeting, atol=1e-12)


def test_a_slide_nearly_tangent_to_the_rods_circle_meets_it() -> None:
    """The slider's line 0.9 from the rod's pivot, the rod 1 long: they meet (the
    discriminant, 0.19, is small but not negative) at x = +-0.436, the nearer taken."""
    form = form_of(slider_crank(), CrankSlider)
    values = np.zeros(3)
    centre, pin = [0.0, 0.0, 0.0], [0.0, 0.9, 0.0]
    placed = [[centre, Z], [pin, [1.0, 0.0, 0.0]], [[1.0, 0.0, 0.0], Z], [pin, Z]]
    errors = form.solve_placed(values, placed)
    assert errors is not None and errors[0] == 0.0
    travel = values[form.slots[1]]
    assert math.isclose(abs(travel), math.sqrt(0.19), rel_tol=1e-12)
    turn = values[form.slots[0]]
    end = _turned([1.0, 0.0, 0.0], centre, Z, turn)
    assert np.allclose(end, [travel, 0.9, 0.0], atol=1e-12)
