"""A closed form for a spatial rod loop: a rod hung by a universal joint, its far end a ball.

One ball loop joint whose loop has exactly three passive joints, all revolute: on one side two
whose axes meet in a point C (a universal joint: the rod's end, the loop point on that side,
moves on a sphere about C), on the other side one (the loop point there turns on a circle
about its axis: a knee driven by the rod, an RSSR linkage's rocker). The loop closes where the
circle meets the sphere (a circle-circle intersection in the circle's plane); the universal
joint's two angles then turn the rod's end onto that point (Paden-Kahan subproblem 2). Of the
two meeting points, the one nearest the warm start's loop point is taken, and of the two
universal joint solutions the one nearest the warm start (the branch rule of ``loop_solver``).
No iteration: one FK, one product that places the points and axes, then some 150 float
operations in Python (numpy's per-call cost would be most of it).

``BallRod.solve`` returns None where the form does not apply at these values (axes of the
universal joint that no longer meet or are parallel, a circle and sphere that do not meet):
the general solver takes over. Metres and radians.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import cast

import numpy as np

from ..arrays import Array, IndexArray
from .float_trace import atan2, cos, dist, maximum, select, sin, sqrt
from .loop_dyad import Vector, cross, dot

#: Axes of the universal joint whose lines pass farther apart than this (m) do not meet.
MEETING = 1e-12
#: Below this (m, or the sine of an angle) a length or an angle counts as none.
DEGENERATE = 1e-12


@dataclass(frozen=True)
class BallRod:
    """The rod loop of one set of passive joints: ``slots`` the universal joint's outer
    (nearer the root) and inner passive slots, then the circle's; ``frames`` each of those
    joints' frame in its child link (the inverse of its child offset) with its axis there,
    then the loop joint's frame on the rod's side and on the circle's side, in their links
    ``links`` (five link indices)."""

    slots: tuple[int, int, int]
    links: tuple[int, ...]
    frames: tuple[Array, ...]
    axes: tuple[Array, ...]
    #: The five links as an index array, and (5, 4, 2) in each link's frame the point
    #: (homogeneous) and the axis (w = 0) it carries: one product places all ten.
    placing_links: IndexArray = field(init=False, repr=False, compare=False)
    placing_columns: Array = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        columns = np.zeros((5, 4, 2))
        for k, frame in enumerate(self.frames):
            columns[k, :, 0] = frame[:, 3]
            if k < 3:
                columns[k, :3, 1] = frame[:3, :3] @ self.axes[k]
        object.__setattr__(self, "placing_links", np.array(self.links, dtype=np.intp))
        object.__setattr__(self, "placing_columns", columns)

    def solve_placed(
        self, values: Array, placed: list[list[list[float]]]
    ) -> tuple[float, float] | None:
        """Move ``values``' three passive slots (in place) so that the loop closes, from
        ``placed``: per link of ``placing_links``, the point and axis ``placing_columns``
        carry, in the root frame at ``values`` (plain floats); the position error (m) the
        form leaves and 0 rad (a ball joint has no angle to close), or None where it does not
        apply (``values`` untouched)."""
        (o1, a1), (o2, a2), (o3, n), (p1, _), (p2, _) = placed
        centre = _meeting_point(o1, a1, o2, a2)
        if centre is None:
            return None
        target = _circle_meets_sphere(o3, n, p2, centre, _distance(p1, centre))
        if target is None:
            return None
        p = _minus(p1, centre)
        q = _minus(target, centre)
        turns = _two_turns(a1, a2, p, q)
        if turns is None:
            return None
        outer, inner = turns
        circle = _turn_about(n, _minus(p2, o3), _minus(target, o3))
        values[self.slots[0]] += outer
        values[self.slots[1]] += inner
        values[self.slots[2]] += circle
        # What the turns leave: the rod's end turned by them, against the meeting point.
        moved = _rotate(a1, outer, _rotate(a2, inner, p))
        return _distance(moved, q), 0.0


def _minus(a: Vector, b: Vector) -> list[float]:
    return [a[0] - b[0], a[1] - b[1], a[2] - b[2]]


def _distance(a: Vector, b: Vector) -> float:
    return dist(a, b)


def _meeting_point(o1: Vector, a1: Vector, o2: Vector, a2: Vector) -> list[float] | None:
    """Where the lines (o1, a1) and (o2, a2) (unit axes) meet; None where they are parallel
    or pass farther apart than ``MEETING``."""
    ax, ay, az = a1
    bx, by, bz = a2
    cosine = ax * bx + ay * by + az * bz
    sine_squared = 1.0 - cosine * cosine
    if sine_squared < DEGENERATE:
        return None
    wx, wy, wz = o1[0] - o2[0], o1[1] - o2[1], o1[2] - o2[2]
    d = ax * wx + ay * wy + az * wz
    e = bx * wx + by * wy + bz * wz
    s = (cosine * e - d) / sine_squared
    t = (e - cosine * d) / sine_squared
    c1 = [o1[0] + s * ax, o1[1] + s * ay, o1[2] + s * az]
    gap = dist(c1, (o2[0] + t * bx, o2[1] + t * by, o2[2] + t * bz))
    return None if gap > MEETING else c1


def _circle_meets_sphere(
    origin: Vector, axis: Vector, point: Vector, centre: Vector, radius: float
) -> list[float] | None:
    """The point of the circle that ``point`` turns on about the line (``origin``, ``axis``)
    at ``radius`` from ``centre``, nearest ``point``; None where they do not meet."""
    nx, ny, nz = axis
    along = nx * (point[0] - origin[0]) + ny * (point[1] - origin[1]) + nz * (point[2] - origin[2])
    hx, hy, hz = origin[0] + along * nx, origin[1] + along * ny, origin[2] + along * nz
    rho = dist(point, (hx, hy, hz))
    height = nx * (centre[0] - hx) + ny * (centre[1] - hy) + nz * (centre[2] - hz)
    in_plane_squared = radius * radius - height * height
    if rho < DEGENERATE or in_plane_squared < 0.0:
        return None
    in_plane = sqrt(in_plane_squared)
    # The sphere's circle in the plane: about the centre's foot, radius in_plane.
    gx = centre[0] - height * nx - hx
    gy = centre[1] - height * ny - hy
    gz = centre[2] - height * nz - hz
    d = sqrt(gx * gx + gy * gy + gz * gz)
    if d < DEGENERATE or d > rho + in_plane or d < abs(rho - in_plane):
        return None
    across = (rho * rho - in_plane * in_plane + d * d) / (2.0 * d)
    side = sqrt(maximum(rho * rho - across * across, 0.0))
    ex, ey, ez = gx / d, gy / d, gz / d
    # Along e to the chord, then across it along n x e, on either side.
    cx, cy, cz = hx + across * ex, hy + across * ey, hz + across * ez
    fx, fy, fz = side * (ny * ez - nz * ey), side * (nz * ex - nx * ez), side * (nx * ey - ny * ex)
    first = [cx + fx, cy + fy, cz + fz]
    second = [cx - fx, cy - fy, cz - fz]
    return list(select(dist(first, point), "<=", dist(second, point), first, second))


def _turn_about(axis: Vector, start: Vector, end: Vector) -> float:
    """The angle (rad, right-handed about unit ``axis``) that turns ``start`` towards
    ``end`` (their parts normal to the axis)."""
    nx, ny, nz = axis
    sx, sy, sz = start
    ex, ey, ez = end
    sine = nx * (sy * ez - sz * ey) + ny * (sz * ex - sx * ez) + nz * (sx * ey - sy * ex)
    cosine = (sx * ex + sy * ey + sz * ez) - (nx * sx + ny * sy + nz * sz) * (
        nx * ex + ny * ey + nz * ez
    )
    return atan2(sine, cosine)


def _rotate(axis: Vector, angle: float, v: Vector) -> list[float]:
    """``v`` turned by ``angle`` (rad) about unit ``axis`` (Rodrigues)."""
    c, s = cos(angle), sin(angle)
    nx, ny, nz = axis
    vx, vy, vz = v
    along = (nx * vx + ny * vy + nz * vz) * (1.0 - c)
    return [
        vx * c + (ny * vz - nz * vy) * s + nx * along,
        vy * c + (nz * vx - nx * vz) * s + ny * along,
        vz * c + (nx * vy - ny * vx) * s + nz * along,
    ]


def _two_turns(a1: Vector, a2: Vector, p: Vector, q: Vector) -> tuple[float, float] | None:
    """The turns (outer about ``a1``, inner about ``a2``, rad; unit axes through one point,
    the origin of ``p`` and ``q``) that take ``p`` to ``q`` (as long), the pair nearest no
    turn; None where the axes are parallel or no pair exists (Paden-Kahan subproblem 2)."""
    cosine = dot(a1, a2)
    denominator = cosine * cosine - 1.0
    if -denominator < DEGENERATE:
        return None
    a2p, a1q, pp = dot(a2, p), dot(a1, q), dot(p, p)
    x = (cosine * a2p - a1q) / denominator
    y = (cosine * a1q - a2p) / denominator
    normal = cross(a1, a2)
    g_squared = (pp - x * x - y * y - 2.0 * x * y * cosine) / -denominator
    if g_squared < -DEGENERATE * maximum(pp, 1.0):
        return None
    g = sqrt(maximum(g_squared, 0.0))
    # The turns to z = x a1 + y a2 +- g m (m = a1 x a2) from the dot products alone, since
    # a1 . m = a2 . m = 0, a1 x m = cos a1 - a2 and m x a2 = cos a2 - a1: the outer turn's
    # sine a1 . (z x q) and cosine z . q - (a1 . z)(a1 . q), the inner's a2 . (p x z) and
    # p . z - (a2 . p)(a2 . z) (``_turn_about``), each a part plus or minus g times another.
    normal = cross(a1, a2)
    a1p, a2q, mp, mq = dot(a1, p), dot(a2, q), dot(normal, p), dot(normal, q)
    outer = (y * mq, g * (cosine * a1q - a2q), x * a1q + y * a2q - (x + y * cosine) * a1q, g * mq)
    inner = (x * mp, g * (cosine * a2p - a1p), x * a1p + y * a2p - a2p * (x * cosine + y), g * mp)
    best: tuple[float, float] = (math.inf, math.inf)
    for side in (1.0, -1.0):
        pair = (
            atan2(outer[0] + side * outer[1], outer[2] + side * outer[3]),
            atan2(inner[0] + side * inner[1], inner[2] + side * inner[3]),
        )
        best = cast(
            "tuple[float, float]",
            select(maximum(abs(pair[0]), abs(pair[1])), "<", maximum(*map(abs, best)), pair, best),
        )
    return best
