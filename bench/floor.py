"""Section ``floor``: what the FK ratios against pinocchio are made of, on pr2_like.

pinocchio's timed call (``framesForwardKinematics``) leaves its poses inside ``data.oMf``;
ours returns what the public API promises, a new dict of (4, 4) arrays (batched: of
(N, 4, 4) arrays). This section measures, in the same run and interleaved:

- pinocchio as in the fk and batch sections, and pinocchio with every link pose copied out
  into the same containers ours returns (what a caller of pinocchio does to get our result);
- the Python floor of the container alone, with no kinematics at all: a fresh (L, 4, 4)
  array and a dict of its L views (single), a fresh (L, N, 4, 4) array written once
  (batch, per configuration); and the cost of one numpy call of the kind FK is made of (a
  stacked 4x4 ``np.matmul`` over the moving joints), as a unit;
- ours, ``link_fk`` and ``link_fk_batch``.

The FK targets compare ours with the first row; the others say how much of that budget the
container and numpy's per-call cost take before any kinematics is done.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .fk import BATCH_SIZES, TARGET_MODEL, Context, _single_pool, check_single
from .models import pr2_like
from .report import Table, micros
from .timing import seconds_per_call_interleaved


def run_floor(ctx: Context) -> tuple[Table, dict[str, Any]]:
    """Single and batched FK on pr2_like: pinocchio with and without copy-out, the Python
    container floor, ours."""
    spec = next((s for s in ctx.specs if s.name == TARGET_MODEL), None) or pr2_like()
    pool = _single_pool(spec, ctx.seed)
    checked = check_single(ctx, spec, pool)  # leaves ours and pinocchio holding the pool
    ours, pin = checked["ours"].peer, checked["pinocchio"].peer
    if ours is None or pin is None or pin.fk_pool_copy is None or pin.fk_batch_copy is None:
        raise RuntimeError(f"pinocchio is needed for this section: {checked['pinocchio'].status}")
    links = spec.link_names
    moving = spec.counts()["moving"]
    size = BATCH_SIZES[-1]
    copy_cap = 100 if ctx.quick else 1000  # the copy-out loop takes ~0.1 ms per configuration

    def container_single() -> None:
        for _ in pool:
            dict(zip(links, np.empty((len(links), 4, 4)), strict=False))

    stack_a, stack_b = np.random.default_rng(0).random((2, moving, 4, 4))

    def one_call() -> None:
        for _ in pool:
            np.matmul(stack_a, stack_b)

    single = seconds_per_call_interleaved(
        {
            "pinocchio": pin.fk_pool,
            "pinocchio + copy out": pin.fk_pool_copy,
            "container": container_single,
            "one call": one_call,
            "ours": ours.fk_pool,
        },
        ctx.budget,
    )
    single = {name: seconds / len(pool) for name, seconds in single.items()}

    rng = np.random.default_rng(ctx.seed + 1)
    values = spec.full_values(spec.sample_independent(rng, size))
    ours.set_batch(values)
    pin.set_batch(values)
    batch_counts = {"pinocchio": size, "container": size, "ours": size}

    def container_batch() -> None:
        np.empty((len(links), size, 4, 4)).fill(0.0)

    calls = {
        "pinocchio": pin.fk_batch,
        "container": container_batch,
        "ours": ours.fk_batch,
    }
    batch = seconds_per_call_interleaved(calls, ctx.budget)
    # The copy-out loop is ~25x slower: timed alone on the first copy_cap configurations.
    pin.set_batch({joint: column[:copy_cap] for joint, column in values.items()})
    batch.update(
        seconds_per_call_interleaved({"pinocchio + copy out": pin.fk_batch_copy}, ctx.budget)
    )
    batch_counts["pinocchio + copy out"] = copy_cap
    batch = {name: seconds / batch_counts[name] for name, seconds in batch.items()}

    def ratio_to_pin(seconds: float | None, reference: float) -> str:
        return "-" if seconds is None else f"{seconds / reference:.3g}x"

    rows = [
        ("pinocchio framesForwardKinematics (poses stay in data.oMf)", "pinocchio", "pinocchio"),
        (
            "pinocchio + every link pose copied out (dict of (4,4); dict of (N,4,4))",
            "pinocchio + copy out",
            "pinocchio + copy out",
        ),
        (
            f"Python floor: the result container alone (dict of {len(links)} views of a new "
            f"({len(links)},4,4) array; a new ({len(links)},N,4,4) array written once)",
            "container",
            "container",
        ),
        (f"one numpy call: np.matmul of two ({moving},4,4) stacks", "one call", None),
        ("ours: link_fk / link_fk_batch", "ours", "ours"),
    ]
    table = Table(
        f"Where the time goes against pinocchio, {spec.name} ({len(links)} links, "
        f"{moving} moving joints)",
        ["what", "single us", "x pinocchio", f"N={size:,} us/config", "x pinocchio loop"],
    )
    for label, single_key, batch_key in rows:
        batch_seconds = batch.get(batch_key) if batch_key else None
        table.rows.append(
            [
                label,
                micros(single[single_key]),
                ratio_to_pin(single[single_key], single["pinocchio"]),
                micros(batch_seconds),
                ratio_to_pin(batch_seconds, batch["pinocchio"]),
            ]
        )
    budget_left = 10 * single["pinocchio"] - single["container"]
    table.notes.append(
        f"single: the 10x target leaves {budget_left * 1e6:.3g} us for all the kinematics once "
        f"the container is built, {budget_left / single['one call']:.3g} numpy calls of the "
        "unit above (ours makes about 20: their number grows with the log of the tree depth, "
        "not with the joints)"
    )
    table.notes.append(
        f"batch: writing the result once costs {batch['container'] / batch['pinocchio']:.3g}x "
        "pinocchio's loop per configuration, which itself writes no result; pinocchio + copy "
        f"out timed on the first {copy_cap:,} configurations"
    )
    record = {
        "model": spec.name,
        "single_seconds": single,
        "batch_seconds_per_config": batch,
        "batch_size": size,
        "copy_out_configs_timed": copy_cap,
    }
    return table, record
