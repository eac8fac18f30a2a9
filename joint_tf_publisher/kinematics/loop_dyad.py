"""Closed forms for the commonest loops: a planar dyad (a four-bar's coupler and rocker) and
a slider-crank's rod and slider (``CrankSlider``: the second passive joint prismatic, its loop
point on a line instead of a circle).

One revolute (or continuous) loop joint whose loop has exactly two passive joints, both
revolute, one on each side, their axes and the loop joint's parallel: the loop point turns on
a circle about each passive joint's axis, and the loop closes where the two circles meet
(Freudenstein's four-bar, whatever drives it). Of the two meeting points, the one nearest the
warm start's loop points is taken (the branch rule of ``loop_solver``). No iteration: one FK,
then one product places the form's points and axes, and some 40 float operations in
Python finish it (numpy's per-call cost would be most of it).

``solve_placed`` returns None where the form does not apply at these values (axes no longer
parallel, circles or line that do not meet): the general solver takes over. Metres and
radians.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np

from ..arrays import Array, IndexArray
from .float_trace import asin, atan2, dist, maximum, minimum, select, sqrt

#: A 3-vector in plain floats (numpy's per-call cost would be most of a closed form's).
Vector = Sequence[float]

#: Axes closer to parallel than this (the sine of their angle) count as parallel.
PARALLEL = 1e-9


@dataclass(frozen=True)
class Dyad:
    """The dyad of one set of passive joints: for each side, the passive joint's slot, the
    link its motion carries (its child) and the inverse of its child offset, and its axis in
    its joint frame; ``links`` and ``T_link_joint`` place the loop joint's frames (link1's,
    then link2's); ``axis`` is the loop joint's axis in its frame."""

    slots: tuple[int, int]
    children: tuple[int, int]
    inverse_offsets: tuple[Array, Array]
    joint_axes: tuple[Array, Array]
    links: tuple[int, int]
    T_link_joint: tuple[Array, Array]
    axis: Array
    #: The four links whose poses place the form's points and axes (each passive joint's
    #: child, then the loop joint's link1 and link2), and (4, 4, 2) in each link's frame the
    #: point (homogeneous) and the axis (w = 0) it carries: one product places all eight.
    placing_links: IndexArray = field(init=False, repr=False, compare=False)
    placing_columns: Array = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        columns = np.zeros((4, 4, 2))
        carried = zip(
            self.inverse_offsets + self.T_link_joint,
            self.joint_axes + (self.axis, self.axis),
            strict=True,
        )
        for k, (frame, axis) in enumerate(carried):
            columns[k, :, 0] = frame[:, 3]
            columns[k, :3, 1] = frame[:3, :3] @ axis
        object.__setattr__(
            self, "placing_links", np.array(self.children + self.links, dtype=np.intp)
        )
        object.__setattr__(self, "placing_columns", columns)

    def solve_placed(
        self, values: Array, placed: list[list[list[float]]]
    ) -> tuple[float, float] | None:
        """Move ``values``' two passive slots (in place) so that the loop closes, from
        ``placed``: per link of ``placing_links``, the point and axis ``placing_columns``
        carry, in the root frame at ``values`` (plain floats); the position (m) and angle
        (rad) errors the form leaves (the loop points' offset along the axes, the loop axes'
        angle), or None where it does not apply (``values`` untouched)."""
        (a, n1), (b, n2), (p1, l1), (p2, l2) = placed
        if maximum(_sine(n1, n2), _sine(n1, l1), _sine(n1, l2)) > PARALLEL:
            return None
        # A right-handed basis (u, w, n) of the plane the loop points turn in.
        nx, ny, nz = n1
        if abs(nx) < 0.9:  # u along n x (1, 0, 0)
            ux, uy, uz = 0.0, nz, -ny
        else:  # along n x (0, 1, 0)
            ux, uy, uz = -nz, 0.0, nx
        norm = sqrt(ux * ux + uy * uy + uz * uz)
        ux, uy, uz = ux / norm, uy / norm, uz / norm
        wx, wy, wz = ny * uz - nz * uy, nz * ux - nx * uz, nx * uy - ny * ux
        a2 = (a[0] * ux + a[1] * uy + a[2] * uz, a[0] * wx + a[1] * wy + a[2] * wz)
        b2 = (b[0] * ux + b[1] * uy + b[2] * uz, b[0] * wx + b[1] * wy + b[2] * wz)
        q1 = (p1[0] * ux + p1[1] * uy + p1[2] * uz, p1[0] * wx + p1[1] * wy + p1[2] * wz)
        q2 = (p2[0] * ux + p2[1] * uy + p2[2] * uz, p2[0] * wx + p2[1] * wy + p2[2] * wz)
        r1 = dist(q1, a2)
        r2 = dist(q2, b2)
        d = dist(a2, b2)
        if d < 1e-12 or d > r1 + r2 or d < abs(r1 - r2):
            return None
        along = (r1 * r1 - r2 * r2 + d * d) / (2.0 * d)
        height = sqrt(maximum(r1 * r1 - along * along, 0.0))
        ex, ey = (b2[0] - a2[0]) / d, (b2[1] - a2[1]) / d
        foot_x, foot_y = a2[0] + along * ex, a2[1] + along * ey
        first = (foot_x - height * ey, foot_y + height * ex)
        second = (foot_x + height * ey, foot_y - height * ex)
        middle = ((q1[0] + q2[0]) / 2.0, (q1[1] + q2[1]) / 2.0)
        point = select(dist(first, middle), "<=", dist(second, middle), first, second)
        turn1 = _turn(a2, q1, point)
        turn2 = _turn(b2, q2, point) * (1.0 if dot(n1, n2) > 0.0 else -1.0)
        values[self.slots[0]] += turn1
        values[self.slots[1]] += turn2
        offset = abs(dot(p1, n1) - dot(p2, n1))
        angle = asin(minimum(_sine(l1, l2), 1.0))
        return offset, angle


def dot(a: Vector, b: Vector) -> float:
    """The dot product of 3-vectors ``a`` and ``b`` (plain floats)."""
    return a[0] * b[0] + a[1] * b[1] + a[2] * b[2]


def cross(a: Vector, b: Vector) -> list[float]:
    """The cross product of 3-vectors ``a`` and ``b`` (plain floats)."""
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def _sine(a: Vector, b: Vector) -> float:
    """The sine of the angle between unit vectors ``a`` and ``b``."""
    c = cross(a, b)
    return sqrt(dot(c, c))


def _turn(centre: Sequence[float], start: Sequence[float], end: Sequence[float]) -> float:
    """The angle (rad, counter-clockwise in the plane) from ``start`` to ``end`` about
    ``centre``."""
    x1, y1 = start[0] - centre[0], start[1] - centre[1]
    x2, y2 = end[0] - centre[0], end[1] - centre[1]
    return atan2(x1 * y2 - y1 * x2, x1 * x2 + y1 * y2)


@dataclass(frozen=True)
class CrankSlider(Dyad):
    """A slider-crank's rod and slider: as ``Dyad``, the first passive joint revolute (the
    rod's, its side's loop frame first in ``links``), the second prismatic (the slider's,
    its axis normal to the others). The rod's loop point turns on a circle about the rod's
    axis, the slider's moves on a line; the loop closes where they meet (of the two points,
    the one nearest the slider's warm start)."""

    def solve_placed(
        self, values: Array, placed: list[list[list[float]]]
    ) -> tuple[float, float] | None:
        """As ``Dyad.solve_placed``: the rod's turn (rad) and the slider's travel (m, along
        its axis) moved in place."""
        (centre, n), (_, slide), (p1, l1), (p2, l2) = placed
        if maximum(_sine(n, l1), _sine(n, l2)) > PARALLEL:
            return None
        length = sqrt(dot(slide, slide))
        s = [slide[0] / length, slide[1] / length, slide[2] / length]
        if abs(dot(n, s)) > PARALLEL:
            return None
        # In the plane normal to n: the rod's point at radius r about the centre, the
        # slider's point p2 + t s; |p2 + t s - centre|^2 = r^2.
        rod = [p1[k] - centre[k] for k in range(3)]
        gap = [p2[k] - centre[k] for k in range(3)]
        rod_along, gap_along = dot(n, rod), dot(n, gap)
        radius_squared = dot(rod, rod) - rod_along * rod_along
        gap_squared = dot(gap, gap) - gap_along * gap_along
        half = dot(gap, s)
        discriminant = half * half - gap_squared + radius_squared
        if discriminant < 0.0:
            return None
        root = sqrt(discriminant)
        plus, minus = -half + root, -half - root  # the shorter travel: min(key=abs)
        (travel,) = select(abs(minus), "<", abs(plus), (minus,), (plus,))
        end = [gap[k] + travel * s[k] for k in range(3)]
        turn = atan2(dot(n, cross(rod, end)), dot(rod, end) - rod_along * dot(n, end))
        values[self.slots[0]] += turn
        values[self.slots[1]] += travel / length
        offset = abs(rod_along - gap_along)
        angle = asin(minimum(_sine(l1, l2), 1.0))
        return offset, angle
