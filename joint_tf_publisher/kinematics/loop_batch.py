"""The compiled closed forms (``loop_program``) over N configurations at once.

``Robot.link_fk_batch`` on a robot with loops (``LoopSolver.solve_from_drawing_batch``) walks
every configuration from the drawing as ``link_fk`` does; at each step ``close_rows`` runs the
plan's ``FormProgram`` on all the rows: the same recorded traces ``link_fk`` and the node run
one message at a time, compiled over arrays (``float_trace.Trace.rows``), so the forms'
geometry is written once (``loop_dyad``, ``loop_rod``). A row no trace covers gets a new trace
recorded at its values (the program's ``MAX_TRACES`` shared with the node's messages); a row
still uncovered, or where a form does not apply, is left to the caller's general way (``covered``
False). Metres and radians.
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from .loop_program import FormProgram


class FormRows(NamedTuple):
    """The forms run on N rows: ``values`` (V, N) with the passive slots moved where
    ``covered`` (N,); per loop and row the position (m) and angle (rad) errors left
    (K, N; zero where not covered)."""

    values: Array
    covered: BoolArray
    position_m: Array
    angle_rad: Array


def close_rows(program: FormProgram, values: Array) -> FormRows:
    """The forms of ``program`` on each column of ``values`` (V, N) (module docstring)."""
    count = values.shape[1]
    forms = len(program.forms)
    solved = values.copy()
    covered = np.zeros(count, dtype=bool)
    position_m = np.zeros((forms, count))
    angle_rad = np.zeros((forms, count))
    pending: IndexArray = np.arange(count)
    tried = 0
    with np.errstate(all="ignore"):  # the rows a trace misses compute what they compute
        while pending.size:
            if tried == len(program.traces):  # none covers pending[0]: one recorded there
                if program.record(values[:, pending[0]].tolist()) is None:
                    break  # no more traces (or the forms raised there): the general way
            trace = program.traces[tried]
            tried += 1
            part = values if pending.size == count else values[:, pending]
            written = part.copy()
            miss = np.zeros(pending.size, dtype=bool)
            result = trace.rows(part, written, miss)
            hit = ~miss
            if result is not None:  # (None: a form does not apply: the general way)
                taken = pending[hit]
                if taken.size == count:  # every row (the common case): no indexing
                    solved = written
                else:
                    solved[:, taken] = written[:, hit]
                covered[taken] = True
                for k, (position, angle) in enumerate(zip(*result, strict=True)):
                    position_m[k, taken] = position[hit] if np.ndim(position) else position
                    angle_rad[k, taken] = angle[hit] if np.ndim(angle) else angle
            pending = pending[miss]
    return FormRows(solved, covered, position_m, angle_rad)
