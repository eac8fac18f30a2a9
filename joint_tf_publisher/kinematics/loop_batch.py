"""The closed forms of ``loop_dyad`` and ``loop_rod`` over N configurations at once, in numpy.

``Robot.link_fk_batch`` on a robot with loops (``LoopSolver.solve_from_drawing_batch``) walks
every configuration from the drawing as ``link_fk`` does, each step's loops closed here for all
rows in whole-array calls: the same geometry, step for step, as the forms' ``solve_placed``
(which works in plain floats, for one configuration at a time, where numpy's per-call cost
would be most of it). Each function takes ``placed``, (n, N, 3, 2): per link of the form's
``placing_links`` and row, the point (column 0) and axis (column 1) the form's
``placing_columns`` carry, in the root frame; it moves the form's slots of ``values`` (N, V)
in place where ``ok`` and returns ``BatchErrors``: per row whether the form applies and the
position (m) and angle (rad) errors it leaves. Rows where it does not apply are left as
they were (their values are the caller's to solve another way). Metres and radians.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..arrays import Array, BoolArray
from .loop_dyad import PARALLEL, CrankSlider, Dyad
from .loop_rod import DEGENERATE, MEETING, BallRod


class BatchErrors(NamedTuple):
    """Per row (N,): whether the form applied, and the position (m) and angle (rad) errors
    it leaves (zero where it did not apply)."""

    ok: BoolArray
    position_m: Array
    angle_rad: Array


def _dot(a: Array, b: Array) -> Array:
    """Row-wise dot products of (N, 3) arrays, summed in ``loop_dyad.dot``'s order."""
    result: Array = a[:, 0] * b[:, 0] + a[:, 1] * b[:, 1] + a[:, 2] * b[:, 2]
    return result


def _cross(a: Array, b: Array) -> Array:
    """Row-wise cross products of (N, 3) arrays, as ``loop_dyad.cross``."""
    a0, a1, a2 = a[:, 0], a[:, 1], a[:, 2]
    b0, b1, b2 = b[:, 0], b[:, 1], b[:, 2]
    result: Array = np.stack((a1 * b2 - a2 * b1, a2 * b0 - a0 * b2, a0 * b1 - a1 * b0), axis=1)
    return result


def _sine(a: Array, b: Array) -> Array:
    """Row-wise sines of the angles between unit vectors (``loop_dyad._sine``)."""
    c = _cross(a, b)
    result: Array = np.sqrt(_dot(c, c))
    return result


def _norm(a: Array) -> Array:
    result: Array = np.sqrt(_dot(a, a))
    return result


def _turn_2d(centre: Array, start: Array, end: Array) -> Array:
    """Row-wise ``loop_dyad._turn``: the angle (rad) from ``start`` to ``end`` about
    ``centre``, (N, 2) points."""
    x1, y1 = start[:, 0] - centre[:, 0], start[:, 1] - centre[:, 1]
    x2, y2 = end[:, 0] - centre[:, 0], end[:, 1] - centre[:, 1]
    result: Array = np.arctan2(x1 * y2 - y1 * x2, x1 * x2 + y1 * y2)
    return result


def _loop_angle(l1: Array, l2: Array) -> Array:
    """The angle (rad) between the loop joint's two axes, as the forms report it."""
    result: Array = np.arcsin(np.minimum(_sine(l1, l2), 1.0))
    return result


def dyad_batch(form: Dyad, values: Array, placed: Array) -> BatchErrors:
    """``Dyad.solve_placed`` for every row of ``values`` (N, V) (module docstring)."""
    a, n1 = placed[0, :, :, 0], placed[0, :, :, 1]
    b, n2 = placed[1, :, :, 0], placed[1, :, :, 1]
    p1, l1 = placed[2, :, :, 0], placed[2, :, :, 1]
    p2, l2 = placed[3, :, :, 0], placed[3, :, :, 1]
    parallel = np.maximum(np.maximum(_sine(n1, n2), _sine(n1, l1)), _sine(n1, l2)) <= PARALLEL
    # A right-handed basis (u, w, n) of the plane the loop points turn in.
    nx, ny, nz = n1[:, 0], n1[:, 1], n1[:, 2]
    zero = np.zeros_like(nx)
    small_x = np.abs(nx) < 0.9
    u = np.where(
        small_x[:, None],
        np.stack((zero, nz, -ny), axis=1),
        np.stack((-nz, zero, nx), axis=1),
    )
    u = u / _norm(u)[:, None]
    w = _cross(n1, u)

    def plane(point: Array) -> Array:
        return np.stack((_dot(point, u), _dot(point, w)), axis=1)

    a2, b2, q1, q2 = plane(a), plane(b), plane(p1), plane(p2)
    r1 = _norm_2d(q1 - a2)
    r2 = _norm_2d(q2 - b2)
    d = _norm_2d(b2 - a2)
    meets = parallel & (d >= 1e-12) & (d <= r1 + r2) & (d >= np.abs(r1 - r2))
    d = np.where(meets, d, 1.0)
    along = (r1 * r1 - r2 * r2 + d * d) / (2.0 * d)
    height = np.sqrt(np.maximum(r1 * r1 - along * along, 0.0))
    e = (b2 - a2) / d[:, None]
    foot = a2 + along[:, None] * e
    across = height[:, None] * np.stack((-e[:, 1], e[:, 0]), axis=1)
    first, second = foot + across, foot - across
    middle = (q1 + q2) / 2.0
    nearer = _norm_2d(first - middle) <= _norm_2d(second - middle)
    point = np.where(nearer[:, None], first, second)
    turn1 = _turn_2d(a2, q1, point)
    turn2 = _turn_2d(b2, q2, point) * np.where(_dot(n1, n2) > 0.0, 1.0, -1.0)
    values[meets, form.slots[0]] += turn1[meets]
    values[meets, form.slots[1]] += turn2[meets]
    offset = np.abs(_dot(p1, n1) - _dot(p2, n1))
    return _errors(meets, offset, _loop_angle(l1, l2))


def _norm_2d(a: Array) -> Array:
    result: Array = np.sqrt(a[:, 0] * a[:, 0] + a[:, 1] * a[:, 1])
    return result


def _errors(ok: BoolArray, position_m: Array, angle_rad: Array) -> BatchErrors:
    return BatchErrors(ok, np.where(ok, position_m, 0.0), np.where(ok, angle_rad, 0.0))


def crank_slider_batch(form: CrankSlider, values: Array, placed: Array) -> BatchErrors:
    """``CrankSlider.solve_placed`` for every row of ``values`` (N, V) (module docstring)."""
    centre, n = placed[0, :, :, 0], placed[0, :, :, 1]
    slide = placed[1, :, :, 1]
    p1, l1 = placed[2, :, :, 0], placed[2, :, :, 1]
    p2, l2 = placed[3, :, :, 0], placed[3, :, :, 1]
    ok = np.maximum(_sine(n, l1), _sine(n, l2)) <= PARALLEL
    length = _norm(slide)
    s = slide / length[:, None]
    ok &= np.abs(_dot(n, s)) <= PARALLEL
    rod = p1 - centre
    gap = p2 - centre
    rod_along, gap_along = _dot(n, rod), _dot(n, gap)
    radius_squared = _dot(rod, rod) - rod_along * rod_along
    gap_squared = _dot(gap, gap) - gap_along * gap_along
    half = _dot(gap, s)
    discriminant = half * half - gap_squared + radius_squared
    ok &= discriminant >= 0.0
    root = np.sqrt(np.where(ok, discriminant, 0.0))
    plus, minus = -half + root, -half - root
    # min(plus, minus, key=abs): the first of equal magnitudes.
    travel = np.where(np.abs(minus) < np.abs(plus), minus, plus)
    end = gap + travel[:, None] * s
    turn = np.arctan2(_dot(n, _cross(rod, end)), _dot(rod, end) - rod_along * _dot(n, end))
    values[ok, form.slots[0]] += turn[ok]
    values[ok, form.slots[1]] += (travel / length)[ok]
    return _errors(ok, np.abs(rod_along - gap_along), _loop_angle(l1, l2))


def ball_rod_batch(form: BallRod, values: Array, placed: Array) -> BatchErrors:
    """``BallRod.solve_placed`` for every row of ``values`` (N, V) (module docstring)."""
    o1, a1 = placed[0, :, :, 0], placed[0, :, :, 1]
    o2, a2 = placed[1, :, :, 0], placed[1, :, :, 1]
    o3, n = placed[2, :, :, 0], placed[2, :, :, 1]
    p1, p2 = placed[3, :, :, 0], placed[4, :, :, 0]
    centre, ok = _meeting_point(o1, a1, o2, a2)
    target, meets = _circle_meets_sphere(o3, n, p2, centre, _norm(p1 - centre))
    ok &= meets
    p = p1 - centre
    q = target - centre
    outer, inner, turns = _two_turns(a1, a2, p, q)
    ok &= turns
    circle = _turn_about(n, p2 - o3, target - o3)
    values[ok, form.slots[0]] += outer[ok]
    values[ok, form.slots[1]] += inner[ok]
    values[ok, form.slots[2]] += circle[ok]
    moved = _rotate(a1, outer, _rotate(a2, inner, p))
    return _errors(ok, _norm(moved - q), np.zeros(len(ok)))


def _meeting_point(o1: Array, a1: Array, o2: Array, a2: Array) -> tuple[Array, BoolArray]:
    """Row-wise ``loop_rod._meeting_point``: the points and where they exist."""
    cosine = _dot(a1, a2)
    sine_squared = 1.0 - cosine * cosine
    ok = sine_squared >= DEGENERATE
    sine_squared = np.where(ok, sine_squared, 1.0)
    gap = o1 - o2
    d, e = _dot(a1, gap), _dot(a2, gap)
    s = (cosine * e - d) / sine_squared
    t = (e - cosine * d) / sine_squared
    c1 = o1 + s[:, None] * a1
    c2 = o2 + t[:, None] * a2
    ok &= _norm(c1 - c2) <= MEETING
    return c1, ok


def _circle_meets_sphere(
    origin: Array, axis: Array, point: Array, centre: Array, radius: Array
) -> tuple[Array, BoolArray]:
    """Row-wise ``loop_rod._circle_meets_sphere``: the points and where they exist."""
    along = _dot(axis, point - origin)
    foot = origin + along[:, None] * axis
    rho = _norm(point - foot)
    height = _dot(axis, centre - foot)
    in_plane_squared = radius * radius - height * height
    ok = (rho >= DEGENERATE) & (in_plane_squared >= 0.0)
    in_plane = np.sqrt(np.where(ok, in_plane_squared, 0.0))
    g = centre - height[:, None] * axis - foot
    d = _norm(g)
    ok &= (d >= DEGENERATE) & (d <= rho + in_plane) & (d >= np.abs(rho - in_plane))
    d = np.where(ok, d, 1.0)
    across = (rho * rho - in_plane * in_plane + d * d) / (2.0 * d)
    side = np.sqrt(np.maximum(rho * rho - across * across, 0.0))
    e = g / d[:, None]
    chord = foot + across[:, None] * e
    offset = side[:, None] * _cross(axis, e)
    first, second = chord + offset, chord - offset
    nearer = _norm(first - point) <= _norm(second - point)
    return np.where(nearer[:, None], first, second), ok


def _turn_about(axis: Array, start: Array, end: Array) -> Array:
    """Row-wise ``loop_rod._turn_about`` (rad)."""
    sine = _dot(axis, _cross(start, end))
    cosine = _dot(start, end) - _dot(axis, start) * _dot(axis, end)
    result: Array = np.arctan2(sine, cosine)
    return result


def _rotate(axis: Array, angle: Array, v: Array) -> Array:
    """Row-wise ``loop_rod._rotate`` (Rodrigues)."""
    c, s = np.cos(angle)[:, None], np.sin(angle)[:, None]
    along = _dot(axis, v)[:, None] * (1.0 - c)
    result: Array = v * c + _cross(axis, v) * s + axis * along
    return result


def _two_turns(a1: Array, a2: Array, p: Array, q: Array) -> tuple[Array, Array, BoolArray]:
    """Row-wise ``loop_rod._two_turns``: the outer and inner turns (rad) and where they
    exist (Paden-Kahan subproblem 2, the pair nearest no turn)."""
    cosine = _dot(a1, a2)
    denominator = cosine * cosine - 1.0
    ok = -denominator >= DEGENERATE
    denominator = np.where(ok, denominator, -1.0)
    a2p, a1q, pp = _dot(a2, p), _dot(a1, q), _dot(p, p)
    x = (cosine * a2p - a1q) / denominator
    y = (cosine * a1q - a2p) / denominator
    normal = _cross(a1, a2)
    g_squared = (pp - x * x - y * y - 2.0 * x * y * cosine) / -denominator
    ok &= g_squared >= -DEGENERATE * np.maximum(pp, 1.0)
    g = np.sqrt(np.maximum(g_squared, 0.0))
    base = x[:, None] * a1 + y[:, None] * a2
    pairs = []
    for sign in (g, -g):
        z = base + sign[:, None] * normal
        pairs.append((_turn_about(a1, z, q), _turn_about(a2, p, z)))
    (outer1, inner1), (outer2, inner2) = pairs
    # The scalar form keeps the first pair unless the second's largest turn is smaller.
    second = np.maximum(np.abs(outer2), np.abs(inner2)) < np.maximum(np.abs(outer1), np.abs(inner1))
    return np.where(second, outer2, outer1), np.where(second, inner2, inner1), ok


def closed_form_batch(
    form: Dyad | CrankSlider | BallRod, values: Array, placed: Array
) -> BatchErrors:
    """The batched closed form of ``form`` (whichever of the three it is)."""
    if isinstance(form, CrankSlider):
        return crank_slider_batch(form, values, placed)
    if isinstance(form, Dyad):
        return dyad_batch(form, values, placed)
    return ball_rod_batch(form, values, placed)
