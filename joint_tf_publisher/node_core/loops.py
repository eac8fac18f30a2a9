"""The node's closed loops: each JointState's passive joints solved (``kinematics.loop_solver``).

Given joints are those a source gave (``JointPositions.received``: a joint-state topic, or a
mimic leader's value); every other joint of a loop's cycle is passive. A loop joint a source
gave a value (``JointPositions.loop_received``) is held at it (``LoopSolver.holding``). A
``zeros.<joint>`` value of a passive joint is where its solve starts, not a value held: the
node declares a ``zeros`` parameter for every joint, so a set one cannot be told from a
default one.

Each solve starts from the values stored (the previous solution): the branch nearest it, so a
crank turns full circles. Where the loops close (within ``loop_tolerance``), or the given
joints over-determine them (the least-squares fit), the passive values are stored; where they
cannot close, the passive joints keep their last closed values (no jump, never NaN), the given
joints go on moving, and the health report says which loop joint, how far apart and since when
(``health.model.LoopFacts``). No rclpy here.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from ..bounded_cache import bounded_cache
from ..health.model import LoopFacts
from ..kinematics import JointPositions, Kinematics
from ..kinematics.loop_program import FormErrors
from ..kinematics.loop_solver import (
    MAX_ITERATIONS,
    LoopSolver,
    PassivePlan,
)

#: Iterations of one JointState's solve at most while a loop is held open (from its last
#: closed values, each message anew): a stream the loop cannot follow costs a bounded time.
HELD_ITERATIONS = 8
#: Largest step of a passive joint the predictor takes (rad or m): beyond, the stream is not
#: smooth and the solve starts where the last one ended.
PREDICTION_LIMIT = 0.05


class LoopClosing:
    """Closes the loops of one model under one ``loop_tolerance`` (module docstring).

    ``facts`` is what the health report reads; ``steady_ns`` the clock of its "since".
    """

    def __init__(
        self,
        kin: Kinematics,
        solver: LoopSolver,
        tolerance: float,
        steady_ns: Callable[[], int],
    ) -> None:
        self.kin = kin
        self.solver = solver
        self.tolerance = tolerance
        self._steady_ns = steady_ns
        self._slot_joint = kin.layout.slot_joint
        #: The passive joints' plan by the bytes of ``JointPositions.received``: looked up
        #: once a JointState, compiled once per set of joints received.
        self._plan_of_received = bounded_cache(self._plan_for_received)
        #: The values before the last solve that closed the loops (the predictor's).
        self._previous: Array | None = None
        #: The forms' errors (per loop, m and rad) last tested within the tolerance and
        #: stored in ``facts`` by ``_closed_form``; None once ``facts`` were written otherwise.
        self._stored_errors: FormErrors | None = None
        count = len(solver.loop_joints)
        self.facts = LoopFacts(
            tuple(joint.name for joint in solver.loop_joints), np.zeros(count), np.zeros(count)
        )

    def _plan_for_received(self, received: bytes) -> PassivePlan:
        """The passive joints' plan when the bytes of a (M,) bool mask ``received`` mark the
        moving joints received."""
        given: BoolArray = np.frombuffer(received, dtype=bool)[self._slot_joint]
        return self.solver.plan_for(given)

    def given(self, positions: JointPositions) -> BoolArray:
        """(V,) the slots a source gives: those of the joints received."""
        given: BoolArray = positions.received[self._slot_joint]
        return given

    def close(self, positions: JointPositions) -> IndexArray:
        """Solve the passive joints of ``positions`` in place (module docstring); the moving
        joints they are (to publish)."""
        solver = self.solver
        # A loop joint's own value given (held there): a byte of the (K,) bool mask set (a
        # fraction of numpy's ``any`` per message).
        if b"\x01" in positions.loop_received.tobytes():
            solver = solver.holding(positions.loop_received)
            solver.hold_values(positions.loop_values)
            plan = solver.plan_for(self.given(positions))
        else:
            plan = self._plan_of_received(positions.received.tobytes())
        if plan.forms and self._closed_form(positions, plan, solver):
            return plan.joints
        given = self.given(positions)
        start = positions.values
        previous = self._previous
        if (
            not plan.forms
            and not plan.over_determined  # a fit's own corrections are no motion to go on with
            and previous is not None
            and previous.shape == start.shape
        ):
            # A smooth stream: the passive joints go on as they went (a first-order
            # predictor, at most PREDICTION_LIMIT a joint), which halves the iterations
            # (a closed form needs none).
            start = start.copy()
            free = ~given
            change = start[free] - previous[free]
            start[free] += np.clip(change, -PREDICTION_LIMIT, PREDICTION_LIMIT)
        held = bool(self.facts.not_closed_since_ns) and not self.facts.over_determined
        # While a loop is held open, each message's search is bounded (it starts again from
        # the held values at the next one): an unclosable stream costs a bounded time.
        solution = solver.solve(start, given, HELD_ITERATIONS if held else MAX_ITERATIONS, plan)
        facts = self.facts
        self._stored_errors = None
        facts.position_error_m = solution.position_error_m
        facts.angle_error_rad = solution.angle_error_rad
        facts.over_determined = solution.over_determined
        closed = (solution.position_error_m <= self.tolerance) & (
            solution.angle_error_rad <= self.tolerance
        )
        if closed.all():
            facts.not_closed_since_ns.clear()
        else:
            now_ns = self._steady_ns()
            for name, ok in zip(facts.joints, closed.tolist(), strict=True):
                if ok:
                    facts.not_closed_since_ns.pop(name, None)
                else:
                    facts.not_closed_since_ns.setdefault(name, now_ns)
        if closed.all() or solution.over_determined:
            free = ~given
            self._previous = positions.values.copy()
            positions.values[free] = solution.values[free]
        else:
            self._previous = None
        joints: IndexArray = plan.joints
        return joints

    def _closed_form(
        self, positions: JointPositions, plan: PassivePlan, solver: LoopSolver
    ) -> bool:
        """Close the loops in ``positions`` by their closed forms (``plan.forms``), in place,
        and say so; False, ``positions`` untouched, where a form does not apply or leaves a
        loop beyond the tolerance (``close`` then takes the general way)."""
        values = positions.values
        before = values.copy()
        errors = solver.close_by_forms(values, plan)
        if errors is None:
            return False
        facts = self.facts
        if errors is not self._stored_errors or facts.not_closed_since_ns:
            # (A compiled trace whose errors are constants returns the one same tuple: those
            # errors were tested and stored by the message before.)
            positions_m, angles_rad = errors
            tolerance = self.tolerance
            for error in (*positions_m, *angles_rad):
                # As the general way's test (``<=``): an error that is not a number is not
                # closed.
                if not error <= tolerance:
                    values[:] = before
                    self._stored_errors = None
                    return False
            facts.position_error_m[:] = positions_m
            facts.angle_error_rad[:] = angles_rad
            facts.not_closed_since_ns.clear()
            self._stored_errors = errors
        facts.over_determined = plan.over_determined
        self._previous = before
        return True
