"""Float arithmetic traced into straight-line Python: one run of a float function, recorded
with its constants folded, becomes a function of its inputs (``Tracer``).

A closed form of a loop (``loop_dyad``, ``loop_rod``) is some hundred float operations whose
cost in Python is mostly the interpreter's: attribute and tuple look-ups, calls of small
helpers, and terms that are zero for every message (a unit axis's zeros, a joint origin's
zero offsets). Run once on ``Traced`` values, the same code records each operation whose
result is not a constant as one line ``tN = a op b``; an operation on constants is done
there and then, and a term times 0.0 or 1.0, plus 0.0, is left out (exact for finite
values). The lines, compiled once, are the form's work for every later message.

Branches: a comparison of a traced value happens in the run (so the form takes its branch)
and is recorded as a guard: where a later message's values compare otherwise, the compiled
function returns ``MISS`` and its caller takes the general way (the same form on plain
floats). The math functions the forms call (``sqrt``, ``atan2``, ``asin``, ``cos``,
``sin``, ``dist``) are the ``math`` module's for floats and traced for a ``Traced``; ``max``
and ``min`` (``maximum``, ``minimum``) are traced as choices, not calls.

The same recorded lines compile a second time for N configurations at once
(``Trace.rows``): each ``values[slot]`` a row of N, numpy's functions in place of ``math``'s,
a guard a mask of the rows that miss, a choice ``numpy.where``, and a row where the float code
would raise (a division by zero, a square root of a negative ...) a row that misses too. So
``Robot.link_fk_batch`` runs the forms' one code, not a copy of their geometry. The float
compile has no numpy: a message's values go in as a list of floats.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable, Iterable, Mapping, Sequence
from typing import Any, cast

import numpy as np

from ..arrays import Array, BoolArray

#: What a compiled trace returns where a guard fails (its caller takes the general way).
MISS = object()

#: A compiled trace: the values (V,) as a list of floats and the array its writes go to in,
#: its result (or ``MISS``, nothing written) out.
Compiled = Callable[[list[float], Any], Any]
#: A trace compiled for rows (``Trace.rows``): the values (V, N), the (V, N) array its writes
#: go to and the (N,) mask of rows that miss (set in place), its result (arrays of N) out.
CompiledRows = Callable[[Array, Array, BoolArray], Any]


class Traced:
    """A float of a traced run: its name in the recorded lines and its value in this run."""

    __slots__ = ("name", "tracer", "value")

    def __init__(self, tracer: Tracer, name: str, value: float) -> None:
        self.tracer = tracer
        self.name = name
        self.value = value

    # -- arithmetic (a constant operand folded where the result is exact) -----------------

    def __add__(self, other: object) -> Any:
        return self.tracer.sum(self, "+", other)

    def __radd__(self, other: object) -> Any:
        return self.tracer.sum(other, "+", self)

    def __sub__(self, other: object) -> Any:
        return self.tracer.sum(self, "-", other)

    def __rsub__(self, other: object) -> Any:
        return self.tracer.sum(other, "-", self)

    def __mul__(self, other: object) -> Any:
        return self.tracer.product(self, other)

    def __rmul__(self, other: object) -> Any:
        return self.tracer.product(self, other)

    def __truediv__(self, other: object) -> Any:
        if _is_constant(other) and other == 1.0:
            return self
        return self.tracer.binary(self, "/", other)

    def __rtruediv__(self, other: object) -> Any:
        return self.tracer.binary(other, "/", self)

    def __neg__(self) -> Traced:
        return self.tracer.record(f"-{self.name}", -self.value)

    def __pos__(self) -> Traced:
        return self

    def __abs__(self) -> Traced:
        return self.tracer.record(f"abs({self.name})", abs(self.value))

    # -- comparisons: taken in this run, recorded as guards ----------------------------------

    def __lt__(self, other: object) -> bool:
        return self.tracer.compare(self, "<", other)

    def __le__(self, other: object) -> bool:
        return self.tracer.compare(self, "<=", other)

    def __gt__(self, other: object) -> bool:
        return self.tracer.compare(self, ">", other)

    def __ge__(self, other: object) -> bool:
        return self.tracer.compare(self, ">=", other)

    def __float__(self) -> float:
        raise TypeError("a traced value read as a float: call float_trace's math functions")


def _is_constant(value: object) -> bool:
    return isinstance(value, (float, int))


def _term(value: object) -> str:
    """``value`` as it is written in a recorded line."""
    if isinstance(value, Traced):
        return value.name
    number = float(cast(float, value))
    if math.isfinite(number):
        return repr(number)
    return "nan" if math.isnan(number) else ("inf" if number > 0 else "(-inf)")


def _value(value: object) -> float:
    return value.value if isinstance(value, Traced) else float(cast(float, value))


_OPERATORS: dict[str, Callable[[float, float], float]] = {
    "+": lambda a, b: a + b,
    "-": lambda a, b: a - b,
    "*": lambda a, b: a * b,
    "/": lambda a, b: a / b,
}
_COMPARISONS: dict[str, Callable[[float, float], bool]] = {
    "<": lambda a, b: a < b,
    "<=": lambda a, b: a <= b,
    ">": lambda a, b: a > b,
    ">=": lambda a, b: a >= b,
}


class Tracer:
    """Records one run of float code on ``Traced`` values (module docstring)."""

    def __init__(self) -> None:
        self.lines: list[str] = []
        self._inputs: dict[int, Traced] = {}
        #: Each expression recorded, by its text: one written twice is computed once.
        self._recorded: dict[str, Traced] = {}
        #: Per recorded name, the test of its operands under which the float code raises
        #: (``Trace.rows`` counts such a row as a miss).
        self._faults: dict[str, str] = {}
        self._count = 0

    def input(self, values: Sequence[float], slot: int) -> Traced:
        """The traced input ``values[slot]`` (read once in the compiled function)."""
        traced = self._inputs.get(slot)
        if traced is None:
            traced = self._inputs[slot] = self.record(f"values[{slot}]", float(values[slot]))
        return traced

    def record(self, expression: str, value: float) -> Traced:
        """A traced value: the line ``tN = expression``, ``value`` in this run (the name of
        the same expression recorded before, if it was: expressions have no side effects)."""
        known = self._recorded.get(expression)
        if known is not None:
            return known
        name = f"t{self._count}"
        self._count += 1
        self.lines.append(f"{name} = {expression}")
        traced = self._recorded[expression] = Traced(self, name, value)
        return traced

    def binary(self, left: object, operator: str, right: object) -> Traced:
        value = _OPERATORS[operator](_value(left), _value(right))
        traced = self.record(f"{_term(left)} {operator} {_term(right)}", value)
        if operator == "/" and isinstance(right, Traced):
            self._faults[traced.name] = f"{right.name} == 0.0"  # ZeroDivisionError
        return traced

    def sum(self, left: object, operator: str, right: object) -> Any:
        """``left + right`` or ``left - right``, one of them traced: a constant 0.0 left out
        (``0.0 - x`` is ``-x``)."""
        if _is_constant(right) and right == 0.0:
            return left
        if _is_constant(left) and left == 0.0:
            return right if operator == "+" else -cast(Traced, right)
        return self.binary(left, operator, right)

    def product(self, traced: Traced, other: object) -> Any:
        """``traced * other``: 0.0 for a constant 0, ``traced`` for 1, its negative for -1."""
        if _is_constant(other):
            if other == 0.0:
                return 0.0
            if other == 1.0:
                return traced
            if other == -1.0:
                return -traced
        return self.binary(traced, "*", other)

    def compare(self, left: object, operator: str, right: object) -> bool:
        """``left operator right`` in this run, recorded as a guard on later runs."""
        outcome = _COMPARISONS[operator](_value(left), _value(right))
        test = f"{_term(left)} {operator} {_term(right)}"
        self.lines.append(f"if {'not ' if outcome else ''}({test}): return MISS")
        return outcome

    def call(self, function: str, arguments: Sequence[object], value: float) -> Traced:
        """The traced result ``value`` of ``function(*arguments)`` (a name of ``_NAMESPACE``)."""
        traced = self.record(f"{function}({', '.join(map(_term, arguments))})", value)
        fault = _MATH_FAULTS.get(function)
        if fault is not None:
            self._faults[traced.name] = fault.format(_term(arguments[0]))
        return traced

    def compile(self, result: object, writes: Mapping[int, object]) -> Trace:
        """The recorded lines as a ``Trace``: a function of the values (a list of floats) and
        an array ``out`` that writes ``writes`` (traced values or constants by index) to
        ``out`` once past every guard and returns ``result`` (nested tuples and lists of
        traced values and constants, as tuples); for rows on first use."""
        stores = [f"out[{index}] = {_term(value)}" for index, value in writes.items()]
        lines = _live([*self.lines, *stores, f"return {_written(result)}"])
        return Trace(_exec(_inlined(lines), _NAMESPACE), lines, self._faults)


class Trace:
    """One recorded run of float code, compiled: ``floats`` (a message's values as a list of
    floats), and ``rows`` for N configurations at once (module docstring)."""

    __slots__ = ("_faults", "_lines", "_rows", "floats")

    def __init__(self, floats: Compiled, lines: list[str], faults: Mapping[str, str]) -> None:
        self.floats = floats
        self._lines = lines
        self._faults = faults
        self._rows: CompiledRows | None = None

    @property
    def rows(self) -> CompiledRows:
        """The same lines over arrays (compiled on first use): ``rows(values, out, miss)``
        with ``values`` and ``out`` (V, N), each ``values[slot]`` a row of N configurations;
        writes every row of ``out`` and sets ``miss`` (N,) where the float code would return
        ``MISS`` or raise (those rows' writes and results are not the forms')."""
        if self._rows is None:
            self._rows = cast(CompiledRows, _exec(_over_rows(self._lines, self._faults), _ROWS))
        return self._rows


def _exec(lines: list[str], namespace: Mapping[str, Any]) -> Callable[..., Any]:
    """The function ``traced(values, out[, miss])`` whose body is ``lines``."""
    rows = namespace is _ROWS
    body = "\n".join(f"    {line}" for line in lines)
    source = f"def traced(values, out{', miss' if rows else ''}):\n{body}\n"
    scope: dict[str, Any] = dict(namespace)
    exec(compile(source, "<float_trace>", "exec"), scope)  # noqa: S102 (own lines)
    return cast("Callable[..., Any]", scope["traced"])


_GUARD = re.compile(r"if (not )?\((.*)\): return MISS")
_CHOICE = re.compile(r"(\S+) if (t[0-9]+) else (\S+)")


def _over_rows(lines: list[str], faults: Mapping[str, str]) -> list[str]:
    """``lines`` (live, not inlined) over rows: a guard ORs the rows it fails into ``miss``,
    a choice is ``where``, a value whose float operation raises ORs its rows into ``miss``
    (its operands' test, ``Tracer._faults``); the rest is numpy's arithmetic as written."""
    over_rows = []
    tested: set[str] = set()  # (cos and sin of one value: one test)
    for line in lines:
        guard = _GUARD.fullmatch(line)
        if guard is not None:
            failing = f"~({guard[2]})" if guard[1] else f"({guard[2]})"
            over_rows.append(f"miss |= {failing}")
            continue
        target, _, expression = line.partition(" = ")
        choice = _CHOICE.fullmatch(expression) if target[0] == "t" else None
        if choice is not None:
            line = f"{target} = where({choice[2]}, {choice[1]}, {choice[3]})"
        over_rows.append(line)
        fault = faults.get(target)
        if fault is not None and fault not in tested:
            tested.add(fault)
            over_rows.append(f"miss |= {fault}")
    return over_rows


_NAME = re.compile(r"\bt[0-9]+\b")


def _inlined(lines: list[str]) -> list[str]:
    """``lines`` with each value used once written into the line that uses it (no name
    stored and loaded: a third fewer interpreter steps; the same operations in the same
    order, so the same results). Evaluated later than recorded, behind a guard or two: the
    caller treats an arithmetic error of a compiled run as a miss."""
    lines = _live(lines)
    uses: dict[str, int] = {}
    for line in lines:
        for name in _NAME.findall(line.partition(" = ")[2] if line[0] == "t" else line):
            uses[name] = uses.get(name, 0) + 1
    pending: dict[str, str] = {}
    kept = []
    for line in lines:
        target, _, expression = line.partition(" = ") if line[0] == "t" else ("", "", line)
        expression = _NAME.sub(
            lambda found: f"({pending.pop(found[0])})" if found[0] in pending else found[0],
            expression,
        )
        if target and uses.get(target) == 1:
            pending[target] = expression
        else:
            kept.append(f"{target} = {expression}" if target else expression)
    return kept


def _live(lines: list[str]) -> list[str]:
    """``lines`` without the values that no guard, store or result needs (a pose's entries
    a form does not read): the lines kept in their order."""
    live: set[str] = set()
    kept = []
    for line in reversed(lines):
        if line[0] == "t":
            target, _, expression = line.partition(" = ")
            if target not in live:
                continue
        else:
            expression = line
        live.update(_NAME.findall(expression))
        kept.append(line)
    return kept[::-1]


def _written(result: object) -> str:
    """``result`` as an expression of the recorded names (tuples for sequences)."""
    if result is None:
        return "None"
    if isinstance(result, (tuple, list)):
        return "(" + "".join(f"{_written(item)}, " for item in result) + ")"
    return _term(result)


_NAMESPACE: dict[str, Any] = {
    "MISS": MISS,
    "inf": math.inf,
    "nan": math.nan,
    "sqrt": math.sqrt,
    "atan2": math.atan2,
    "asin": math.asin,
    "cos": math.cos,
    "sin": math.sin,
    "hypot": math.hypot,
    "abs": abs,
}
#: Per math function of ``_NAMESPACE``, the test of its argument ``{}`` under which it raises
#: ValueError (a NaN argument returns NaN).
_MATH_FAULTS = {
    "sqrt": "{} < 0.0",
    "asin": "abs({}) > 1.0",
    "cos": "abs({}) == inf",
    "sin": "abs({}) == inf",
}


def _hypot_rows(*coordinates: Any) -> Array:
    """``math.hypot`` of coordinates that are rows (or constants)."""
    total: Any = 0.0
    for x in coordinates:
        total = total + x * x
    result: Array = np.sqrt(total)
    return result


#: ``_NAMESPACE`` for rows (``Trace.rows``): numpy's functions of the same names.
_ROWS: dict[str, Any] = {
    "inf": math.inf,
    "nan": math.nan,
    "sqrt": np.sqrt,
    "atan2": np.arctan2,
    "asin": np.arcsin,
    "cos": np.cos,
    "sin": np.sin,
    "hypot": _hypot_rows,
    "abs": np.abs,
    "where": np.where,
}


def _tracer_of(arguments: Iterable[object]) -> Tracer | None:
    for argument in arguments:
        if isinstance(argument, Traced):
            return argument.tracer
    return None


def _scalar(name: str, function: Callable[..., float], *arguments: float) -> float:
    """``function(*arguments)``, traced where an argument is."""
    tracer = _tracer_of(arguments)
    if tracer is None:
        return function(*arguments)
    value = function(*(_value(argument) for argument in arguments))
    return cast(float, tracer.call(name, arguments, value))


def sqrt(x: float) -> float:
    """``math.sqrt``, traced for a traced ``x``."""
    return _scalar("sqrt", math.sqrt, x)


def atan2(y: float, x: float) -> float:
    """``math.atan2`` (rad), traced for traced arguments."""
    return _scalar("atan2", math.atan2, y, x)


def asin(x: float) -> float:
    """``math.asin`` (rad), traced for a traced ``x``."""
    return _scalar("asin", math.asin, x)


def cos(x: float) -> float:
    """``math.cos`` of ``x`` (rad), traced for a traced ``x``."""
    return _scalar("cos", math.cos, x)


def sin(x: float) -> float:
    """``math.sin`` of ``x`` (rad), traced for a traced ``x``."""
    return _scalar("sin", math.sin, x)


def dist(p: Sequence[float], q: Sequence[float]) -> float:
    """``math.dist`` of two points, traced where a coordinate is: recorded as ``math.hypot``
    of the coordinates' differences (the same function of the same differences, so the same
    result, without the two tuples a call; a difference with a constant 0.0 left out)."""
    tracer = _tracer_of((*p, *q))
    if tracer is None:
        return math.dist(p, q)
    value = math.dist([_value(x) for x in p], [_value(x) for x in q])
    differences = [
        float(x) - float(y) if _is_constant(x) and _is_constant(y) else x - y
        for x, y in zip(p, q, strict=True)
    ]
    return cast(float, tracer.call("hypot", differences, value))


def maximum(*numbers: float) -> float:
    """The builtin ``max`` of ``numbers``, traced where one is as its choices (a later number
    taken only where it is greater, as ``max`` does, a NaN kept or passed over alike): an
    inline choice costs a fraction of a call of ``max``."""
    return _extreme(">", max, numbers)


def minimum(*numbers: float) -> float:
    """The builtin ``min`` of ``numbers``, traced where one is as its choices (``maximum``)."""
    return _extreme("<", min, numbers)


def _extreme(operator: str, builtin: Callable[..., float], numbers: Sequence[float]) -> float:
    """``builtin(*numbers)`` (``max`` for ``>``, ``min`` for ``<``); where a number is
    traced, each later one chosen where it compares ``operator`` the one kept so far."""
    tracer = _tracer_of(numbers)
    if tracer is None:
        return builtin(*numbers)
    kept: object = numbers[0]
    for other in numbers[1:]:
        if _is_constant(kept) and _is_constant(other):
            kept = builtin(kept, other)
            continue
        outcome = _COMPARISONS[operator](_value(other), _value(kept))
        condition = tracer.record(f"{_term(other)} {operator} {_term(kept)}", float(outcome))
        kept = tracer.record(
            f"{_term(other)} if {condition.name} else {_term(kept)}",
            _value(other if outcome else kept),
        )
    return cast(float, kept)


def select(
    left: float, operator: str, right: float, chosen: Sequence[float], other: Sequence[float]
) -> tuple[float, ...]:
    """``chosen`` where ``left operator right`` (``<`` or ``<=``), else ``other`` (both of one
    length), traced as a choice in each later run, not as a guard: an assembly's two
    solutions change places along a path."""
    outcome = _COMPARISONS[operator](_value(left), _value(right))
    tracer = _tracer_of((left, right, *chosen, *other))
    if tracer is None:
        return tuple(chosen if outcome else other)
    test = f"{_term(left)} {operator} {_term(right)}"
    condition = tracer.record(test, float(outcome))
    return tuple(
        cast(
            float,
            tracer.record(
                f"{_term(a)} if {condition.name} else {_term(b)}", _value(a if outcome else b)
            ),
        )
        for a, b in zip(chosen, other, strict=True)
    )
