"""urdfpy-style configurations (``link_fk(cfg)``, ``link_fk_batch(cfgs)``) into variable rows.

A cfg maps joint names (or Joint objects, or MoveIt variable names) to values of the shapes
the joint's type takes (``model.joint_types``); absent joints sit at zero. A cfg is a
configuration of the independent joints, as in urdfpy: a value given for a mimic follower is
ignored, and every follower is multiplier * leader + offset from its leader's (clamped) value,
never clamped to its own limits. With ``clamp`` (``ClampMode.HARD`` or ``SOFT``) the
independent values are clamped first. (A JointState is a measurement instead: there a
follower's own value wins, see ``state``.)

A cfg may name a loop joint (``model.loops``): a revolute, continuous or prismatic one's value
(rad or m, ``LoopJoint.motion``) is held as the node holds it (``loop_values``: finite, clamped
into its ``<limit>`` with ``clamp``), a ball or fixed one's name gives nothing (ignored, as a
fixed tree joint's).

A cfg of plain numbers keyed by one-value joint or variable names takes a fast path: one
matrix product with a matrix cached per tuple of names (``CfgPlan``).
"""

from __future__ import annotations

import math
import sys
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np

from ..arrays import Array, BoolArray, IndexArray
from ..bounded_cache import bounded_cache
from ..model.clamp_mode import ClampMode
from ..model.joint_types import unit_quaternions
from .layout import Layout, follower_levels


@dataclass(frozen=True)
class CfgPlan:
    """How a cfg with one tuple of names maps onto the variable vector (cached)."""

    matrix: Array  # (V, K): single values = zero_values + matrix @ given (followers included)
    bound: float  # given values must stay below this magnitude (no overflow, finite)
    columns: IndexArray  # cfg entries that set a variable (not mimic or fixed joints) ...
    slots: IndexArray  # ... and the variable slot each of them sets


#: The largest double as an integer: a larger Python integer converts to no float.
_LARGEST_DOUBLE = int(sys.float_info.max)


def _floats(name: Any, value: Any) -> Array:
    """``value`` as a float64 array; ValueError naming joint ``name`` for an integer no
    double holds (a 400-digit one: numpy's OverflowError named nothing)."""
    try:
        array: Array = np.asarray(value, dtype=np.float64)
    except OverflowError:
        raise ValueError(f"joint {name!r}: an integer beyond any double in cfg") from None
    return array


def _shape_of(value: Any) -> tuple[int, ...]:
    """The array shape of a cfg value; cheap for numpy arrays (np.shape costs a conversion)."""
    shape = getattr(value, "shape", None)
    return tuple(shape) if shape is not None else tuple(np.shape(value))


class CfgReader:
    """Turns cfg mappings of one layout into resolved variable rows."""

    def __init__(self, layout: Layout) -> None:
        self.layout = layout
        self._zero_list: list[float] = layout.zero_values.tolist()
        #: The fast-path plan of a cfg with these keys (``bounded_cache`` of ``_make_plan``).
        self.plan = bounded_cache(self._make_plan)
        loop_joints = layout.robot.loop_joints
        #: Loop joints by name: their index in ``RobotModel.loop_joints`` (``loop_values``).
        self._loop_index = {loop.name: k for k, loop in enumerate(loop_joints)}
        #: Names whose value the variable rows leave out: fixed joints, loop joints.
        self._fixed_names = {joint.name for joint in layout.fixed_joints} | set(self._loop_index)
        # cfg names whose value is one number: one-value joints and variable names; -1 for
        # mimic followers, fixed and loop joints (their values are ignored here).
        self._float_slots: dict[str, int] = dict.fromkeys(self._fixed_names, -1)
        for i, joint in enumerate(layout.moving_joints):
            if layout.is_mimic[i]:
                self._float_slots[joint.name] = -1
                continue
            for name in joint.variable_names:
                self._float_slots[name] = layout.variable_lookup[name][1]
        self._levels = follower_levels(layout.followers)
        # Clamping acts on independent values only: followers are computed afterwards.
        self._ranges: dict[ClampMode, tuple[Array, Array]] = {}
        followers = [f.slot for f in layout.followers]
        for mode, (lower, upper) in layout.ranges.items():
            lower, upper = lower.copy(), upper.copy()
            lower[followers], upper[followers] = -np.inf, np.inf
            self._ranges[mode] = (lower, upper)

    # -- one configuration ---------------------------------------------------------------------

    def single(self, cfg: Mapping[Any, Any] | None, clamp: ClampMode) -> Array:
        """(V,) variable vector of one cfg, clamped and with followers resolved."""
        values = self._single_values(cfg) if cfg else self.layout.zero_values
        if clamp is not ClampMode.NONE:
            rows = values[None].copy()
            self.resolve(rows, clamp)
            values = rows[0]
        return values

    def _single_values(self, cfg: Mapping[Any, Any]) -> Array:
        """(V,) variable vector of one cfg mapping, followers resolved (not clamped).

        The fast path (``CfgPlan``) needs numbers under the plan's bound; anything else goes
        the general way, which also raises the errors (values that are not one number,
        non-finite values, followers that overflow).
        """
        keys = tuple(cfg)
        plan = self.plan(keys)
        if plan is not None:
            try:
                given = np.fromiter(cfg.values(), np.float64, len(keys))
            except (TypeError, ValueError, OverflowError):  # a value that is not one number
                pass
            else:
                if np.maximum.reduce(np.abs(given)) < plan.bound:  # False for nan and inf
                    fast: Array = plan.matrix @ given
                    fast += self.layout.zero_values
                    return fast
        return self._single_values_general(cfg)

    def _make_plan(self, keys: tuple[Any, ...]) -> CfgPlan | None:
        """The fast-path plan of a cfg with these keys, None where such a cfg takes the general
        path.

        Its (V, K) matrix S gives values = zero_values + S @ given: column k writes given
        value k into its slot and, scaled by the multipliers along a mimic chain, into every
        follower's slot; the zero vector already holds the followers' offsets. Columns of mimic
        and fixed joints are zero (their value is ignored). None (the general path) for names
        that are not one number, a slot given twice, and robots with quaternion values (which
        need normalising).
        """
        layout = self.layout
        matrix = np.zeros((layout.num_values, len(keys)))
        usable = not layout.quaternion_joints
        columns: list[int] = []
        slots: list[int] = []
        for column, key in enumerate(keys):
            slot = self._float_slots.get(key) if isinstance(key, str) and usable else None
            if slot is None or slot in slots:
                usable = False
                break
            if slot >= 0:
                matrix[slot, column] = 1.0
                columns.append(column)
                slots.append(slot)
        for follower in layout.followers:
            matrix[follower.slot] = follower.multiplier * matrix[follower.leader_slot]
        largest = float(np.max(np.abs(matrix), initial=1.0))
        if not (usable and math.isfinite(largest)):
            return None
        return CfgPlan(
            matrix,
            1e300 / largest,
            np.array(columns, dtype=np.intp),
            np.array(slots, dtype=np.intp),
        )

    def _single_values_general(self, cfg: Mapping[Any, Any]) -> Array:
        """``_single_values`` for any cfg: floats on a Python list, other values in numpy."""
        values = list(self._zero_list)
        slot_of = self._float_slots
        deferred: list[tuple[Any, Any]] = []
        for key, value in cfg.items():
            slot = slot_of.get(key)
            # An integer no double holds (a 400-digit one) goes to ``_fill``, which names it.
            if (
                slot is None
                or not isinstance(value, (float, int))
                or (isinstance(value, int) and not abs(value) <= _LARGEST_DOUBLE)
            ):
                deferred.append((key, value))
            elif slot >= 0:
                values[slot] = float(value)  # an int beyond int64 made an object array
            # slot -1: a mimic or fixed joint, whose given value is ignored
        if deferred:
            rows = np.array(values)[None]
            self._fill(rows, deferred, batched=False)
            self._check(rows)
            self.resolve(rows, ClampMode.NONE)
            single: Array = rows[0]
            return single
        for follower in self.layout.followers:
            values[follower.slot] = (
                follower.multiplier * values[follower.leader_slot] + follower.offset
            )
        array = np.array(values)
        if self.layout.quaternion_joints or not math.isfinite(sum(values)):
            self._check(array[None])
        return array

    def given_slots(self, keys: Any) -> BoolArray:
        """(V,) True at the slots a cfg with these keys gives: every value of each joint or
        variable named (mimic followers' names give nothing), and the followers of a given
        leader. Loops hold these and solve the others (``loop_solver``)."""
        layout = self.layout
        given = np.zeros(layout.num_values, dtype=bool)
        for key in keys:
            name = key if isinstance(key, str) else getattr(key, "name", key)
            index = layout.moving_index.get(name)
            if index is not None:
                if not layout.is_mimic[index]:
                    start = int(layout.slot[index])
                    given[start : start + int(layout.size[index])] = True
                continue
            found = layout.variable_lookup.get(name)
            if found is not None and not layout.is_mimic[found[0]]:
                given[found[1]] = True
        for follower in layout.followers:
            given[follower.slot] = given[follower.leader_slot]
        return given

    def loop_values(
        self, cfgs: Mapping[Any, Any], clamp: ClampMode, count: int | None = None
    ) -> tuple[BoolArray, Array] | None:
        """The loop joints a cfg gives a value (``LoopJoint.type.takes_value``): (K,) which,
        and their values (K,) (rad or m), or (count, K) for a batch of ``count``
        configurations; clamped into each loop joint's ``<limit>`` unless ``clamp`` is NONE
        (a loop joint has no safety controller: hard and soft alike). None where the cfg
        names none. ValueError naming the loop joint for a value that is not one finite
        number a configuration."""
        loops = self.layout.robot.loop_joints
        named = [
            (self._loop_index[name], value)
            for key, value in cfgs.items()
            if (name := key if isinstance(key, str) else getattr(key, "name", key))
            in self._loop_index
            and loops[self._loop_index[name]].type.takes_value
        ]
        if not named:
            return None
        held = np.zeros(len(loops), dtype=bool)
        values = np.zeros(len(loops) if count is None else (count, len(loops)))
        for k, value in named:
            loop = loops[k]
            column = _floats(loop.name, value)
            if column.size != (1 if count is None else count):
                raise ValueError(
                    f"loop joint {loop.name!r} takes one value per configuration, "
                    f"got shape {column.shape}"
                )
            if not np.all(np.isfinite(column)):
                raise ValueError(f"loop joint {loop.name!r}: non-finite value in cfg")
            if clamp is not ClampMode.NONE:
                lower = -np.inf if loop.lower is None else loop.lower
                upper = np.inf if loop.upper is None else loop.upper
                column = np.clip(column, lower, upper)
            held[k] = True
            values[..., k] = column.reshape(values[..., k].shape)
        return held, values

    # -- many configurations -------------------------------------------------------------------

    def batch(self, cfgs: Mapping[Any, Any], clamp: ClampMode) -> Array:
        """(N, V) variable rows of a batched cfg, clamped and with followers resolved."""
        values = self._batch_values_fast(cfgs)
        if values is None:
            values = self._batch_values_general(cfgs, self._batch_size(cfgs))
        self.resolve(values, clamp)
        return values

    def _batch_values_fast(self, cfgs: Mapping[Any, Any]) -> Array | None:
        """(N, V) rows (not resolved) of a batched cfg of 1-D number arrays, written by the
        cached ``plan``; None when the cfg needs the general path (other names or
        shapes, non-finite or huge values). The rows are a view of a (V, N) array, so that
        each variable is contiguous for batched FK."""
        plan = self.plan(tuple(cfgs))
        if plan is None:
            return None
        try:
            given = np.array(list(cfgs.values()), dtype=np.float64)  # (K, N)
        except (TypeError, ValueError, OverflowError):  # ragged, not numbers, no double's
            return None
        if given.ndim != 2 or given.shape[1] == 0:
            return None
        if not np.maximum.reduce(np.abs(given), axis=None) < plan.bound:  # also nan and inf
            return None
        columns = np.empty((self.layout.num_values, given.shape[1]))
        columns[:] = self.layout.zero_values[:, None]
        columns[plan.slots] = given[plan.columns]
        values: Array = columns.T
        return values

    def _batch_size(self, cfgs: Mapping[Any, Any]) -> int:
        sizes = {shape[0] for shape in map(_shape_of, cfgs.values()) if shape}
        if len(sizes) > 1:
            raise ValueError(f"cfgs have different batch sizes: {sorted(sizes)}")
        if not sizes:
            raise ValueError("cfgs must map joint names to arrays with a leading batch axis")
        return int(sizes.pop())

    def _batch_values_general(self, cfgs: Mapping[Any, Any], count: int) -> Array:
        """(N, V) variable rows from a batched cfg mapping (not yet resolved)."""
        values = np.tile(self.layout.zero_values, (count, 1))
        # Fast path: one column per one-value joint or variable name, in one assignment.
        slots: list[int] = []
        columns: list[Any] = []
        others: list[tuple[Any, Any]] = []
        for key, value in cfgs.items():
            slot = self._float_slots.get(key)
            if slot is None or _shape_of(value) != (count,):
                others.append((key, value))
            elif slot >= 0:
                slots.append(slot)
                columns.append(value)
        if slots:
            try:
                values[:, slots] = np.array(columns, dtype=np.float64).T
            except OverflowError:  # an integer no double holds: ``_fill`` names its joint
                others = list(cfgs.items())
        self._fill(values, others, batched=True)
        self._check(values)
        return values

    # -- shared --------------------------------------------------------------------------------

    def _fill(self, values: Array, items: list[tuple[Any, Any]], batched: bool) -> None:
        """Write cfg items into variable rows (N, V) through the joint types' cfg shapes.
        Mimic and fixed joints are skipped; unknown names and shapes raise ValueError."""
        layout = self.layout
        rows = values.shape[0]
        for key, value in items:
            name = key if isinstance(key, str) else getattr(key, "name", key)
            index = layout.moving_index.get(name)
            if index is None:
                found = layout.variable_lookup.get(name)
                if found is not None:
                    if not layout.is_mimic[found[0]]:
                        column = _floats(name, value)
                        if column.size != rows:
                            raise ValueError(
                                f"variable {name!r} takes one value per "
                                f"configuration, got shape {column.shape}"
                            )
                        values[:, found[1]] = column.reshape(rows)
                    continue
                if name in self._fixed_names:
                    continue
                raise ValueError(f"cfg names {name!r}, which is not a joint of this robot")
            if layout.is_mimic[index]:
                continue
            array = _floats(name, value)
            if not batched:
                array = array[None]
            elif array.shape[:1] != (rows,):
                raise ValueError(
                    f"joint {name!r}: batch of {array.shape[:1]} values, expected {rows}"
                )
            start = int(layout.slot[index])
            kind = layout.joint_types[index]
            values[:, start : start + kind.size] = kind.values_from_cfg(name, array)

    def _check(self, values: Array) -> None:
        """Normalise the quaternions of rows (N, V) in place; ValueError for non-finite
        values."""
        layout = self.layout
        for index, start in zip(layout.quaternion_joints, layout.quaternion_slots, strict=True):
            name = layout.moving_joints[index].name
            values[:, start : start + 4] = unit_quaternions(name, values[:, start : start + 4])
        if not np.all(np.isfinite(values)):
            slot = int(np.flatnonzero(~np.all(np.isfinite(values), axis=0))[0])
            name = layout.moving_joints[int(layout.slot_joint[slot])].name
            raise ValueError(f"joint {name!r}: non-finite value in cfg")

    def resolve(self, values: Array, clamp: ClampMode) -> None:
        """Clamp the independent values of rows (N, V) and set the followers, in place."""
        if clamp is not ClampMode.NONE:
            lower, upper = self._ranges[clamp]
            np.clip(values, lower, upper, out=values)
        for level in self._levels:
            value = level.multipliers * values[:, level.leader_slots] + level.offsets
            if not np.all(np.isfinite(value)):
                column = int(np.flatnonzero(~np.all(np.isfinite(value), axis=0))[0])
                name = self.layout.moving_joints[int(level.joints[column])].name
                raise ValueError(f"joint {name!r}: mimic value overflows")
            values[:, level.slots] = value
