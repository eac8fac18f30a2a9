"""Sections ``fk`` (single configuration), ``batch`` (N configurations) and ``build`` (load).

Every peer is checked once per model before it is timed: all link poses within
``POSE_TOLERANCE`` of ours at the same configuration. A peer that disagrees is reported as
WRONG and not timed; one that is missing or cannot read the model is reported as such.
"""

from __future__ import annotations

import functools
import tempfile
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from .models import ModelSpec, all_models, pr2_like
from .peers import BUILDERS, PEERS, Peer, PeerUnavailable, max_pose_error, quiet_peer_loggers
from .report import Table, micros, millis, ratio, verdict
from .timing import Budget, seconds_per_call_interleaved

#: Largest difference allowed between a peer's link poses and ours (m, or unitless rotation).
POSE_TOLERANCE = 1e-6
PEER_NAMES = [name for name in PEERS if name != "ours"]
BATCH_SIZES = (1, 100, 10_000)
#: Model of the batch section and of the FK targets (the PR2-sized tree).
TARGET_MODEL = "pr2_like"


@dataclass
class Context:
    """Shared by the sections of one run: budget, models written to disk, bound peers."""

    quick: bool
    budget: Budget
    directory: Path
    specs: list[ModelSpec] = field(default_factory=all_models)
    seed: int = 7
    _peers: dict[tuple[str, str], Peer | str] = field(default_factory=dict)

    def path(self, spec: ModelSpec) -> Path:
        """The model's URDF file (written on first use)."""
        path = self.directory / f"{spec.name}.urdf"
        if not path.exists():
            spec.write(self.directory)
        return path

    def peer(self, spec: ModelSpec, name: str) -> Peer | str:
        """The peer bound to the model, or a short reason it is unavailable (cached)."""
        key = (spec.name, name)
        if key not in self._peers:
            try:
                self._peers[key] = PEERS[name](spec, self.path(spec))
            except PeerUnavailable as exc:
                self._peers[key] = f"unavailable ({exc})"
            except Exception as exc:  # a peer that cannot read the model: report, go on
                self._peers[key] = f"failed to load ({type(exc).__name__}: {exc})"
        return self._peers[key]


def make_context(quick: bool) -> Context:
    """A context writing the models into a fresh temporary directory."""
    quiet_peer_loggers()
    directory = Path(tempfile.mkdtemp(prefix="jtp-bench-"))
    return Context(quick=quick, budget=Budget.for_mode(quick), directory=directory)


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
    columns = ["model (joints/moving/mimic)", "ours us", "ours tf path us"]
    for name in PEER_NAMES:
        columns += [f"{name} us", f"{name}/ours"]
    table = Table("FK, single configuration, all link poses (median per call)", columns)
    record: dict[str, Any] = {}
    for spec in ctx.specs:
        pool = _single_pool(spec, ctx.seed)
        checked = check_single(ctx, spec, pool)
        ready = {name: item.peer.fk_pool for name, item in checked.items() if item.peer}
        tf_path = _tf_path_pool(ctx, spec, pool)
        if tf_path is not None:
            ready["ours tf path"] = tf_path
        measured = seconds_per_call_interleaved(ready, ctx.budget)
        tf_path_seconds = measured["ours tf path"] / len(pool) if tf_path is not None else None
        times = {name: measured[name] / len(pool) if name in measured else None for name in checked}
        counts = spec.counts()
        row = [
            f"{spec.name} ({counts['joints']}/{counts['moving']}/{counts['mimic']})",
            micros(times["ours"]),
            micros(tf_path_seconds),
        ]
        for name in PEER_NAMES:
            cell = micros(times[name]) if times[name] else checked[name].status
            row += [cell, ratio(times[name], times["ours"])]
        table.rows.append(row)
        record[spec.name] = {
            "counts": counts,
            "seconds": times,
            "ours_tf_path_seconds": tf_path_seconds,
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
    table.notes.append(
        "ours tf path: what the node does per JointState, kinematics.apply (names and values "
        "of every independent joint, hard clamp) + joint_poses (parent->child translation "
        "and quaternion of every joint it moved); not in the ratios"
    )
    target = record.get(TARGET_MODEL, {}).get("seconds", {})
    table.notes.extend(_fk_targets(target))
    return table, record


def _tf_path_pool(ctx: Context, spec: ModelSpec, pool: list[dict[str, float]]) -> Any | None:
    """A callable running the node's per-message kinematics over ``pool``, or None if the
    kinematics API it uses is not there."""
    ours = ctx.peer(spec, "ours")
    if isinstance(ours, str):
        return None
    from joint_tf_publisher import Robot

    kin = Robot.load(ctx.path(spec)).kinematics
    apply = getattr(kin, "apply", None)
    joint_poses = getattr(kin, "joint_poses", None)
    if apply is None or joint_poses is None or not hasattr(kin, "new_positions"):
        return None
    positions = kin.new_positions()
    names = [joint.name for joint in spec.independent_joints]
    messages = [(names, [values[name] for name in names]) for values in pool]

    def run() -> None:
        for message_names, message_values in messages:
            update = apply(positions, message_names, message_values, clamp="hard")
            joint_poses(positions, update.moved)

    return run


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
    """Per-configuration FK time for N configurations on the PR2-sized model."""
    spec = (
        next(s for s in ctx.specs if s.name == TARGET_MODEL)
        if any(s.name == TARGET_MODEL for s in ctx.specs)
        else pr2_like()
    )
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


# -- section build ----------------------------------------------------------------------------


def run_build(ctx: Context) -> tuple[Table, dict[str, Any]]:
    """Load time per model: parse + compile for ours, each peer's load call."""
    columns = ["model (joints)", "ours ms"]
    for name in PEER_NAMES:
        columns += [f"{name} ms", f"{name}/ours"]
    table = Table("Model build: parse + compile (ours) vs load (peers), median per load", columns)
    record: dict[str, Any] = {}
    budget = Budget(ctx.budget.run_seconds, max(3, ctx.budget.repeats // 2))
    for spec in ctx.specs:
        path = ctx.path(spec)
        status: dict[str, str] = {}
        ready = {}
        for name, build in BUILDERS.items():
            try:
                build(path)
            except Exception as exc:  # missing peer or unreadable model: report it
                status[name] = f"unavailable ({type(exc).__name__})"
                continue
            ready[name] = functools.partial(build, path)
            status[name] = "ok"
        measured = seconds_per_call_interleaved(ready, budget)
        times: dict[str, float | None] = {name: measured.get(name) for name in BUILDERS}
        row = [f"{spec.name} ({spec.counts()['joints']})", millis(times["ours"])]
        for name in PEER_NAMES:
            row += [
                millis(times[name]) if times[name] else status[name],
                ratio(times[name], times["ours"]),
            ]
        table.rows.append(row)
        record[spec.name] = {"seconds": times, "status": status}
    table.notes.append(
        "ours: Robot.load (URDF parse + validation) + robot.kinematics (compile); "
        "pinocchio: buildModelFromUrdf + createData; yourdfpy: URDF.load with "
        "scene graph, no meshes; urchin: URDF.load(lazy_load_meshes=True)"
    )
    return table, record
