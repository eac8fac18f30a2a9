"""The closed forms of one set of passive joints as straight-line float code (``float_trace``).

``LoopSolver.close_by_forms`` runs a ``PassivePlan``'s forms (``loop_dyad``, ``loop_rod``)
from the points and axes they read. The general way places those from the FK of the whole
robot (numpy) and runs each form in plain floats; ``FormProgram`` records one such run as a
function of the values, compiled once and called for every later message:

- the FK of only the links a form reads, and in its loop's own frame: the link where the
  cycle's two sides part (the forms' results do not depend on the frame they are computed
  in), through only the joints below it (a legged robot's rod loop reads its crank, its
  universal joint and its knee, not the hip and thigh above them);
- each joint's motion written out in cos and sin of its value, constant terms folded (a unit
  axis's zeros and ones leave no work);
- the same forms' code, run on traced values: the branches it took are guards, so a message
  that would branch otherwise gets ``MISS`` (its caller takes the general way), and a new
  trace of that branch is recorded, up to ``MAX_TRACES`` a plan (then, rarely, in place
  of the least used one: ``REPLACE_AFTER``).

A form that does not apply (circles that do not meet) is a trace too: it returns None as the
general way does. Tree joints other than revolute, continuous, prismatic and fixed between a
loop's parting link and the links a form reads leave the plan without a program (the
general way). Metres and radians.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any, cast

import numpy as np

from ..arrays import Array
from ..model import Joint
from .float_trace import MISS, Trace, Tracer, cos, sin
from .layout import Layout
from .loop_dyad import CrankSlider, Dyad
from .loop_rod import BallRod

#: A closed form of one loop's passive joints (``LoopSolver``'s plans): ``solve(values,
#: poses)`` moves them in place and returns the position (m) and angle (rad) errors left, or
#: None where it does not apply. Here, not in ``loop_solver``, which imports this module.
ClosedForm = Dyad | CrankSlider | BallRod

#: Traces (branches of the forms) a plan records at most; beyond, a message none of them
#: covers takes the general way.
MAX_TRACES = 8
#: Once ``MAX_TRACES`` are recorded, every this many messages none covers, the next one is
#: recorded in place of the trace that covered the fewest messages since the last such
#: change: a plan whose first traces were of passing branches (a stand-up, a glitch, a
#: hostile publisher's eight messages) comes back to the compiled forms, and a stream that
#: no trace covers compiles at most once per this many messages (a trace costs about a
#: hundred general-way messages).
REPLACE_AFTER = 1000
#: Tree joint types a program moves (rotation about or travel along the joint's axis).
_ROTATING = ("revolute", "continuous")
_SLIDING = ("prismatic",)

#: A pose (3 rows of 4: rotation and translation) of traced values and constants.
_Pose = list[list[Any]]
#: Errors the forms leave: per loop, position (m) and angle (rad).
FormErrors = tuple[Sequence[float], Sequence[float]]


class _Step:
    """One tree joint below a loop's parting link: a constant pose (a fixed joint), or a
    moving joint's origin, axis, child offset and variable slot."""

    def __init__(self, joint: Joint, slot: int | None) -> None:
        self.slot = slot
        self.kind = joint.joint_type
        self.axis = _snapped([float(x) for x in joint.axis])
        self.origin = _rows(joint.origin)
        self.offset = _rows(joint.child_offset)
        self.constant = _rows(joint.child_pose()) if slot is None else None

    def pose(self, tracer: Tracer, values: Sequence[float]) -> _Pose:
        """The child link's pose in the parent's, at the traced value of the joint."""
        if self.constant is not None or self.slot is None:
            return cast(_Pose, self.constant)
        value: Any = tracer.input(values, self.slot)
        k = self.axis
        if self.kind in _SLIDING:
            motion: _Pose = [
                [1.0, 0.0, 0.0, k[0] * value],
                [0.0, 1.0, 0.0, k[1] * value],
                [0.0, 0.0, 1.0, k[2] * value],
            ]
        else:
            c, s = cos(value), sin(value)
            skew = [[0.0, -k[2], k[1]], [k[2], 0.0, -k[0]], [-k[1], k[0], 0.0]]
            motion = [
                [
                    k[i] * k[j] + c * ((1.0 if i == j else 0.0) - k[i] * k[j]) + s * skew[i][j]
                    for j in range(3)
                ]
                + [0.0]
                for i in range(3)
            ]
        return _compose(self.origin, _compose(motion, self.offset))


def _rows(pose: Array) -> _Pose:
    """The top three rows of a (4, 4) pose as floats (``_snapped``)."""
    return [_snapped(row) for row in np.asarray(pose, dtype=np.float64)[:3].tolist()]


#: A description's constant within this of 0, 1 or -1 is that number: the round-off of a
#: rotation's trigonometry (cos(pi / 2) is 6.1e-17, not 0), which would leave a product and
#: a sum a term in every message where the exact number leaves none. The results move by
#: the same round-off (1e-16 of the lengths), far inside the forms' exactness (1e-12).
ROUND_OFF = 1e-15


def _snapped(numbers: list[float]) -> list[float]:
    """``numbers`` with each within ``ROUND_OFF`` of 0, 1 or -1 made that number."""
    snapped = []
    for x in numbers:
        if abs(x) < ROUND_OFF:
            x = 0.0
        elif abs(abs(x) - 1.0) < ROUND_OFF:
            x = math.copysign(1.0, x)
        snapped.append(x)
    return snapped


def _compose(first: _Pose, second: _Pose) -> _Pose:
    """``first @ second`` of two poses (3 rows of 4, the fourth row 0 0 0 1 implied)."""
    result: _Pose = []
    for row in first:
        composed = []
        for column in range(4):
            total: Any = row[3] if column == 3 else 0.0
            for k in range(3):
                total = total + row[k] * second[k][column]
            composed.append(total)
        result.append(composed)
    return result


def _apply(pose: _Pose, column: Sequence[float]) -> list[Any]:
    """``pose @ column`` for a homogeneous column (a point: w = 1; an axis: w = 0)."""
    return [
        row[0] * column[0] + row[1] * column[1] + row[2] * column[2] + row[3] * column[3]
        for row in pose
    ]


class _Placing:
    """How one form's points and axes are placed in its loop's parting link's frame: per
    link it reads, the joints from there down to it, and (4, 2) the point and axis it
    carries."""

    def __init__(self, layout: Layout, form: ClosedForm) -> None:
        paths = [_tree_path(layout, layout.link_names[link]) for link in form.placing_links]
        common = 0
        while all(len(path) > common for path in paths) and all(
            path[common] is paths[0][common] for path in paths
        ):
            common += 1
        self.chains: list[list[_Step]] = []
        for path in paths:
            steps = []
            for joint in path[common:]:
                index = layout.moving_index.get(joint.name)
                if index is None:
                    steps.append(_Step(joint, None))
                elif joint.joint_type in _ROTATING + _SLIDING:
                    steps.append(_Step(joint, int(layout.slot[index])))
                else:
                    raise _NotCompilable(joint.name)
            self.chains.append(steps)
        self.columns: list[tuple[list[float], list[float]]] = [
            (_snapped(columns[:, 0].tolist()), _snapped(columns[:, 1].tolist()))
            for columns in form.placing_columns
        ]

    def placed(self, tracer: Tracer, values: Sequence[float]) -> list[list[list[Any]]]:
        """Per link read, its point and axis (traced) in the parting link's frame."""
        placed = []
        for chain, (point, axis) in zip(self.chains, self.columns, strict=True):
            pose: _Pose = [[1.0, 0.0, 0.0, 0.0], [0.0, 1.0, 0.0, 0.0], [0.0, 0.0, 1.0, 0.0]]
            for step in chain:
                pose = _compose(pose, step.pose(tracer, values))
            placed.append([_apply(pose, point), _apply(pose, axis)])
        return placed


class _NotCompilable(Exception):
    """A joint between a loop's parting link and a link its form reads that a program does
    not move."""


def _tree_path(layout: Layout, link: str) -> list[Joint]:
    """The tree joints from the root down to ``link``."""
    parent_joint = {joint.child: joint for joint in layout.robot.joints.values()}
    path: list[Joint] = []
    while link in parent_joint:
        joint = parent_joint[link]
        path.append(joint)
        link = joint.parent
    return path[::-1]


class _TracedValues:
    """The values as a form reads and moves them in a traced run: a slot read is the traced
    input (or what the run wrote there), a slot written is an output."""

    def __init__(self, tracer: Tracer, values: list[float]) -> None:
        self._tracer = tracer
        self._values = values
        self.written: dict[int, Any] = {}

    def __getitem__(self, slot: int) -> Any:
        if slot in self.written:
            return self.written[slot]
        return self._tracer.input(self._values, slot)

    def __setitem__(self, slot: int, value: Any) -> None:
        self.written[slot] = value


class FormProgram:
    """The forms of one plan compiled (module docstring); ``run`` per message."""

    def __init__(self, layout: Layout, forms: Sequence[ClosedForm]) -> None:
        self.forms = tuple(forms)
        self._placings = [_Placing(layout, form) for form in forms]
        #: The recorded traces, compiled (``record``), and how many messages each covered
        #: since the last replacement (``REPLACE_AFTER``).
        self.traces: list[Trace] = []
        self._covered: list[int] = []
        self._attempts = 0
        #: Messages no trace covered since the last recording, once the traces are full.
        self._misses = 0

    @classmethod
    def of(cls, layout: Layout, forms: Sequence[ClosedForm]) -> FormProgram | None:
        """The program of ``forms``, or None where a joint on their way is not one a program
        moves."""
        if not forms:
            return None
        try:
            return cls(layout, forms)
        except _NotCompilable:
            return None

    def run(self, values: Array) -> FormErrors | None | object:
        """Move the passive slots of ``values`` (V,) in place as the forms do, and return
        their errors (per loop, m and rad); None where a form does not apply (``values``
        untouched); ``MISS`` where no trace covers these values and no more may be recorded
        (``values`` untouched: the caller takes the general way)."""
        listed: list[float] = values.tolist()
        for index, trace in enumerate(self.traces):
            try:
                result = trace.floats(listed, values)
            except (ArithmeticError, ValueError):
                return MISS  # the general way raises, or answers, as it does
            if result is not MISS:
                self._covered[index] += 1
                return cast("FormErrors | None", result)
        if self._attempts >= MAX_TRACES:
            self._misses += 1
            if self._misses < REPLACE_AFTER:
                return MISS
            self._misses = 0
            recorded = self._replacing(listed)
        else:
            recorded = self.record(listed)
        if recorded is None:
            return MISS
        return cast("FormErrors | None", recorded.floats(listed, values))

    def record(self, listed: list[float]) -> Trace | None:
        """A new trace of the forms at the values ``listed`` (V floats), appended to
        ``traces``; None where ``MAX_TRACES`` were recorded or the run raised (the general
        way then raises or answers as it does)."""
        if self._attempts >= MAX_TRACES:
            return None
        self._attempts += 1
        recorded = self._record(listed)
        if recorded is not None:
            # The counts first: a run on another thread (``link_fk``) indexes them by trace.
            self._covered.append(1)
            self.traces.append(recorded)
        return recorded

    def _replacing(self, listed: list[float]) -> Trace | None:
        """A new trace of the forms at ``listed`` once ``MAX_TRACES`` were recorded, in place
        of the one that covered the fewest messages since the last replacement (appended
        where some recordings raised); None where the run raised."""
        recorded = self._record(listed)
        if recorded is None:
            return None
        if len(self.traces) < MAX_TRACES:
            self._covered.append(1)
            self.traces.append(recorded)
            return recorded
        least = self._covered.index(min(self._covered))
        covered = [0] * len(self.traces)
        covered[least] = 1
        self._covered = covered
        self.traces[least] = recorded
        return recorded

    def _record(self, listed: list[float]) -> Trace | None:
        """A trace of the forms at ``listed``, compiled; None where the run raised."""
        tracer = Tracer()
        traced = _TracedValues(tracer, listed)
        try:
            placed = [placing.placed(tracer, listed) for placing in self._placings]
            errors = []
            for form, points in zip(self.forms, placed, strict=True):
                error = form.solve_placed(cast(Array, traced), points)
                if error is None:
                    return tracer.compile(None, {})
                errors.append(error)
        except (ArithmeticError, ValueError, TypeError):
            return None
        result = (tuple(error[0] for error in errors), tuple(error[1] for error in errors))
        return tracer.compile(result, traced.written)
