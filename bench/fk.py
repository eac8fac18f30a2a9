"""Sections ``fk`` (single configuration) and ``batch`` (N configurations): our FK against
pinocchio, yourdfpy and urchin, all link poses in the root frame.

Every peer is checked once per model before it is timed: all link poses within
``POSE_TOLERANCE`` of ours at the same configuration. A peer that disagrees is reported as
WRONG and not timed; one that is missing or cannot read the model is reported as such.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import numpy as np

from .models import ModelSpec, all_models
from .peers import PEERS, Peer, PeerUnavailable, max_pose_error, quiet_peer_loggers
from .report import Table, micros, ratio, verdict
from .timing import Budget, seconds_per_call_interleaved

#: Largest difference allowed between a peer's link poses and ours (m, or unitless rotation).
POSE_TOLERANCE = 1e-6
PEER_NAMES = [name for name in PEERS if name != "ours"]
BATCH_SIZES = (1, 100, 10_000)
#: Model of the batch section and of the FK targets.
TARGET_MODEL = "humanoid"


@dataclass
class Context:
    """Shared by the sections of one run: budget, models, bound peers."""

    quick: bool
    budget: Budget
    specs: list[ModelSpec] = field(default_factory=all_models)
    seed: int = 7
    _peers: dict[tuple[str, str], Peer | str] = field(default_factory=dict)

    def peer(self, spec: ModelSpec, name: str) -> Peer | str:
        """The peer bound to the model, or a short reason it is unavailable (cached)."""
        key = (spec.name, name)
        if key not in self._peers:
            try:
                self._peers[key] = PEERS[name](spec, spec.path)
            except PeerUnavailable as exc:
                self._peers[key] = f"unavailable ({exc})"
            except Exception as exc:  # a peer that cannot read the model: report, go on
                self._peers[key] = f"failed to load ({type(exc).__name__}: {exc})"
        return self._peers[key]


def make_context(quick: bool) -> Context:
    """A context of every benchmark model, peers not bound yet."""
    quiet_peer_loggers()
    return Context(quick=quick, budget=Budget.for_mode(quick))


#: Configurations cycled through by single-configuration FK timing.
POOL_SIZE = 16


def _single_pool(spec: ModelSpec, seed: int) -> list[dict[str, float]]:
    """POOL_SIZE configurations of every moving joint (mimic joints following)."""
    rng = np.random.default_rng(seed)
    full = spec.full_values(spec.sample_independent(rng, POOL_SIZE))
    return [{name: float(values[k]) for name, values in full.items()} for k in range(POOL_SIZE)]


@dataclass
class Checked:
    """A peer ready to time (``peer``) or the reason it is not (``status``), and its error."""

    peer: Peer | None
    status: str
    error: float | None = None


def check_single(ctx: Context, spec: ModelSpec, pool: list[dict[str, float]]) -> dict[str, Checked]:
    """Compare every peer's link poses with ours at each configuration of ``pool``, then
    leave every peer holding the whole pool for timing."""
    ours = ctx.peer(spec, "ours")
    if isinstance(ours, str):
        raise RuntimeError(f"our FK is not usable on {spec.name}: {ours}")
    references = []
    for values in pool:
        ours.set_pool([values])
        references.append(ours.poses())
    checked = {"ours": Checked(ours, "ok", 0.0)}
    for name in PEER_NAMES:
        peer = ctx.peer(spec, name)
        if isinstance(peer, str):
            checked[name] = Checked(None, peer)
            continue
        error = 0.0
        for values, reference in zip(pool, references, strict=True):
            peer.set_pool([values])
            error = max(error, max_pose_error(reference, peer.poses()))
        status = "ok" if error <= POSE_TOLERANCE else f"WRONG (max pose error {error:.2g})"
        checked[name] = Checked(peer if status == "ok" else None, status, error)
    for item in checked.values():
        if item.peer is not None:
            item.peer.set_pool(pool)
    return checked


# -- section fk --------------------------------------------------------------------------------


def run_fk(ctx: Context) -> tuple[Table, dict[str, Any]]:
    """FK of one configuration, all link poses, per model and library."""
    columns = ["model (joints/moving/mimic)", "ours us"]
    for name in PEER_NAMES:
        columns += [f"{name} us", f"{name}/ours"]
    table = Table("FK, single configuration, all link poses (median per call)", columns)
    record: dict[str, Any] = {}
    for spec in ctx.specs:
        pool = _single_pool(spec, ctx.seed)
        checked = check_single(ctx, spec, pool)
        ready = {name: item.peer.fk_pool for name, item in checked.items() if item.peer}
        measured = seconds_per_call_interleaved(ready, ctx.budget)
        times = {name: measured[name] / len(pool) if name in measured else None for name in checked}
        counts = spec.counts()
        row = [
            f"{spec.name} ({counts['joints']}/{counts['moving']}/{counts['mimic']})",
            micros(times["ours"]),
        ]
        for name in PEER_NAMES:
            cell = micros(times[name]) if times[name] else checked[name].status
            row += [cell, ratio(times[name], times["ours"])]
        table.rows.append(row)
        record[spec.name] = {
            "counts": counts,
            "seconds": times,
            "pose_error": {n: c.error for n, c in checked.items()},
            "status": {n: c.status for n, c in checked.items()},
        }
    table.notes.append(
        f"every peer's link poses checked against ours first at each of the "
        f"{POOL_SIZE} configurations timed (max abs error <= {POSE_TOLERANCE:g}); "
        "each call gets the next configuration; libraries timed in turn, run by run; "
        "peer/ours > 1: ours is faster"
    )
    table.notes.append(
        "pinocchio: framesForwardKinematics only (poses stay in data.oMf); "
        "yourdfpy: update_cfg + get_transform per link; urchin/ours: link_fk"
    )
    target = record.get(TARGET_MODEL, {}).get("seconds", {})
    table.notes.extend(_fk_targets(target))
    return table, record


def _fk_targets(seconds: dict[str, float | None]) -> list[str]:
    ours, pin, ydf = seconds.get("ours"), seconds.get("pinocchio"), seconds.get("yourdfpy")
    notes = []
    if ours and pin:
        notes.append(
            f"target {TARGET_MODEL}: ours within 10x of pinocchio: ours/pinocchio = "
            f"{ours / pin:.3g}x -> {verdict(ours <= 10 * pin)}"
        )
    if ours and ydf:
        notes.append(
            f"target {TARGET_MODEL}: >= 40x faster than yourdfpy: {ydf / ours:.3g}x "
            f"-> {verdict(ydf >= 40 * ours)}"
        )
    return notes


# -- section batch -----------------------------------------------------------------------------


def run_batch(ctx: Context) -> tuple[Table, dict[str, Any]]:
    """Per-configuration FK time for N configurations on the target model."""
    spec = next(spec for spec in ctx.specs if spec.name == TARGET_MODEL)
    loop_cap = 30 if ctx.quick else 300
    checked = check_single(ctx, spec, _single_pool(spec, ctx.seed))
    _check_batch(ctx, spec, checked)
    columns = ["N", "ours us/config"]
    for name in PEER_NAMES:
        columns += [f"{name} us/config", f"{name}/ours"]
    counts = spec.counts()
    table = Table(
        f"FK batched, {spec.name} ({counts['joints']} joints), per configuration", columns
    )
    record: dict[str, Any] = {"model": spec.name, "loop_cap": loop_cap, "rows": {}}
    rng = np.random.default_rng(ctx.seed + 1)
    for size in BATCH_SIZES:
        values = spec.full_values(spec.sample_independent(rng, size))
        sampled: dict[str, int] = {}
        ready = {}
        for name, item in checked.items():
            if item.peer is None:
                continue
            count = size if not item.peer.batch_is_loop else min(size, loop_cap)
            if name == "pinocchio":
                count = size  # pinocchio's loop is fast enough to run whole
            item.peer.set_batch({joint: column[:count] for joint, column in values.items()})
            sampled[name] = count
            ready[name] = item.peer.fk_batch
        measured = seconds_per_call_interleaved(ready, ctx.budget)
        per_config: dict[str, float | None] = {
            name: measured[name] / sampled[name] if name in measured else None for name in checked
        }
        row = [f"{size:,}", micros(per_config["ours"])]
        for name in PEER_NAMES:
            seconds = per_config[name]
            cell = micros(seconds) if seconds else checked[name].status
            if seconds and sampled[name] < size:
                cell += f" (loop of {sampled[name]})"
            row += [cell, ratio(seconds, per_config["ours"])]
        table.rows.append(row)
        record["rows"][str(size)] = {"seconds_per_config": per_config, "configs_timed": sampled}
    table.notes.append(
        "ours and urchin: one link_fk_batch call for all N; pinocchio: Python "
        "loop of framesForwardKinematics; yourdfpy: loop of update_cfg + "
        "get_transform (timed on at most the first "
        f"{loop_cap} configurations, per-configuration time reported)"
    )
    last = record["rows"][str(BATCH_SIZES[-1])]["seconds_per_config"]
    if last.get("ours") and last.get("pinocchio"):
        slower = last["ours"] / last["pinocchio"]
        table.notes.append(
            f"target N={BATCH_SIZES[-1]:,}: ours per configuration no slower than "
            f"pinocchio's loop: ours/pinocchio = {slower:.3g}x -> "
            f"{verdict(slower <= 1.0)}"
        )
    return table, record


def _check_batch(ctx: Context, spec: ModelSpec, checked: dict[str, Checked]) -> None:
    """Check batched poses of ours and urchin at 3 configurations against single FK of ours."""
    rng = np.random.default_rng(ctx.seed + 2)
    values = spec.full_values(spec.sample_independent(rng, 3))
    ours = checked["ours"].peer
    assert ours is not None
    references = []
    for k in range(3):
        ours.set_pool([{name: float(column[k]) for name, column in values.items()}])
        references.append(ours.poses())
    for item in checked.values():
        if item.peer is None or item.peer.batch_is_loop:
            continue
        item.peer.set_batch(values)
        result = item.peer.fk_batch()
        stacks = {str(getattr(link, "name", link)): pose for link, pose in dict(result).items()}
        for k in range(3):
            error = max_pose_error(references[k], {link: s[k] for link, s in stacks.items()})
            if error > POSE_TOLERANCE:
                item.peer = None
                item.status = f"WRONG batch (max pose error {error:.2g})"
                break
