"""``float_trace``: one recorded run of float code compiled for floats and, the same lines, for
N rows at once (``Trace.rows``, what ``Robot.link_fk_batch`` runs): per row the float
function's result, its writes, and a miss where the float code returns ``MISS`` or raises."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest

from joint_tf_publisher.kinematics.float_trace import (
    MISS,
    Trace,
    Tracer,
    asin,
    atan2,
    cos,
    dist,
    maximum,
    minimum,
    select,
    sin,
    sqrt,
)

#: The values the trace is recorded at: x = 2, y = 0.5 (z is not read).
RECORDED = [2.0, 0.5, 7.0]


def _function(values: Any, out: Any) -> Any:
    """Float code with a branch, a choice, every traced function and a division by a traced
    value: its result, ``out[2]`` written."""
    x, y = values[0], values[1]
    if x < 0.0:  # a guard: negative x takes the other branch
        return None
    root = sqrt(x - 1.0) + y / (x - 1.5)  # raises for x < 1 and x == 1.5
    (chosen,) = select(x, "<=", y + 1.0, (x,), (y,))
    angle = asin(minimum(y, 1.0)) + atan2(y, x) + cos(x) * sin(y)
    out[2] = dist((x, y), (0.0, 1.0)) + maximum(x, y, 1.0)
    return root, (chosen, angle), 3.0


def _recorded() -> Trace:
    tracer = Tracer()
    inputs = [tracer.input(RECORDED, slot) for slot in range(3)]
    out: dict[int, Any] = {}
    result = _function(inputs, out)
    return tracer.compile(result, out)


def _floats(trace: Trace, column: list[float]) -> tuple[Any, list[float]] | None:
    """The float trace at ``column``: its result and writes, or None where it misses or
    raises."""
    out = list(column)
    try:
        result = trace.floats(column, out)
    except (ArithmeticError, ValueError):
        return None
    return None if result is MISS else (result, out)


def _flat(result: Any) -> list[Any]:
    if isinstance(result, tuple):
        return [item for part in result for item in _flat(part)]
    return [result]


COLUMNS = [
    [2.0, 0.5, 7.0],  # as recorded
    [3.0, 0.25, 0.0],  # the same branch, the choice the other way (x > y + 1)
    [1.2, 0.8, 1.0],  # the choice as recorded (x <= y + 1)
    [-1.0, 0.5, 0.0],  # the guard fails
    [1.5, 0.5, 0.0],  # a division by zero
    [0.5, 0.5, 0.0],  # sqrt of a negative
    [2.0, -3.0, 0.0],  # asin beyond -1
    [2.0, math.nan, 0.0],  # NaN: computed as the float code computes it (no raise)
    [10.0, 11.0, 4.0],  # max picks y
]


def test_rows_are_the_float_trace_column_by_column() -> None:
    """Each column's result and writes as the float trace's (to round-off of numpy's
    functions); a miss exactly where the float trace misses or raises."""
    trace = _recorded()
    values = np.array(COLUMNS).T.copy()
    out = values.copy()
    miss = np.zeros(values.shape[1], dtype=bool)
    with np.errstate(all="ignore"):
        result = trace.rows(values, out, miss)
    expected = [_floats(trace, column) for column in COLUMNS]
    assert miss.tolist() == [want is None for want in expected]
    assert miss.tolist() == [False, False, False, True, True, True, True, False, False]
    rows = [np.broadcast_to(item, miss.shape) for item in _flat(result)]
    for column, want in enumerate(expected):
        if want is None:
            continue
        floats, written = want
        got = [float(row[column]) for row in rows]
        np.testing.assert_allclose(got, _flat(floats), rtol=1e-15, atol=0.0, equal_nan=True)
        np.testing.assert_allclose(out[:, column], written, rtol=1e-15, equal_nan=True)
    chosen = rows[1]
    assert chosen[1] == 0.25 and chosen[2] == 1.2  # the choice both ways in one pass


@pytest.mark.parametrize("function", ["sqrt", "asin", "cos"])
def test_a_row_whose_float_code_raises_misses(function: str) -> None:
    """A function's argument where ``math`` raises ValueError: that row misses, the others
    not."""
    tracer = Tracer()
    x = tracer.input([0.5], 0)
    traced = {"sqrt": sqrt, "asin": asin, "cos": cos}[function](x)
    trace = tracer.compile(traced, {})
    values = np.array([[0.5, {"sqrt": -1.0, "asin": 1.5, "cos": math.inf}[function]]])
    miss = np.zeros(2, dtype=bool)
    with np.errstate(all="ignore"):
        trace.rows(values, values.copy(), miss)
    assert miss.tolist() == [False, True]
    with pytest.raises(ValueError):
        trace.floats([float(values[0, 1])], [0.0])


def test_max_min_and_dist_compile_to_no_call_of_them() -> None:
    """``maximum`` and ``minimum`` are traced as inline choices and ``dist`` as ``hypot`` of
    the differences (a call of the builtin ``max`` costs some ten times a choice, ``dist``
    two tuples more than ``hypot``), with the float code's results (``COLUMNS``)."""
    trace = _recorded()
    called = set(trace.floats.__code__.co_names)
    assert not called & {"max", "min", "dist"}
    assert "hypot" in called
    for column in COLUMNS:
        want = _floats(trace, column)
        if want is None:
            continue
        x, y = column[0], column[1]
        assert want[1][2] == math.dist((x, y), (0.0, 1.0)) + max(x, y, 1.0) or math.isnan(y)
