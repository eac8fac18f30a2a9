"""Section ``fk``: our FK of one configuration against pinocchio, yourdfpy and urchin, all link
poses in the root frame, per model. A peer is timed only if its link poses equal ours (within
``POSE_TOLERANCE``) at every configuration timed; else it is reported WRONG, or unavailable.
"""

from __future__ import annotations

from typing import Any

from .models import MODELS, ModelSpec
from .peers import PEERS, Peer, PeerUnavailable, max_pose_error, quiet_peer_loggers
from .report import Table, micros, ratio
from .timing import seconds_per_call_interleaved

#: Largest difference allowed between a peer's link poses and ours (m, or unitless rotation).
POSE_TOLERANCE = 1e-6
PEER_NAMES = [name for name in PEERS if name != "ours"]
#: Model of the FK targets.
TARGET_MODEL = "humanoid"
#: Configurations cycled through, each call of a library getting the next.
POOL_SIZE = 16


def bind(spec: ModelSpec, name: str) -> Peer | str:
    """The peer bound to the model, or a short reason it is unavailable."""
    try:
        return PEERS[name](spec)
    except PeerUnavailable as exc:
        return f"unavailable ({exc})"
    except Exception as exc:  # a peer that cannot read the model: report, go on
        return f"failed to load ({type(exc).__name__}: {exc})"


def checked_peers(spec: ModelSpec, pool: list[dict[str, float]]) -> dict[str, Peer | str]:
    """Every library bound to ``spec``, if its link poses equal ours at each configuration of
    ``pool``; else why it is not timed."""
    peers = {name: bind(spec, name) for name in PEERS}
    ours = peers["ours"]
    if isinstance(ours, str):
        raise RuntimeError(f"our FK is not usable on {spec.name}: {ours}")
    references = [ours.poses(values) for values in pool]
    for name, peer in peers.items():
        if isinstance(peer, str):
            continue
        pairs = zip(pool, references, strict=True)
        error = max(max_pose_error(reference, peer.poses(values)) for values, reference in pairs)
        if error > POSE_TOLERANCE:
            peers[name] = f"WRONG (max pose error {error:.2g})"
    return peers


def run_fk(quick: bool) -> tuple[list[Table], dict[str, Any]]:
    """FK of one configuration, all link poses, per model and library."""
    quiet_peer_loggers()
    columns = ["model (joints/moving/mimic)", "ours us"]
    for name in PEER_NAMES:
        columns += [f"{name} us", f"{name}/ours"]
    table = Table("FK, single configuration, all link poses (median per call)", columns)
    record: dict[str, Any] = {}
    for spec in MODELS.values():
        pool = [spec.full_values(values) for values in spec.sample(7, POOL_SIZE)]
        peers = checked_peers(spec, pool)
        ready = {name: p.fk_pool(pool) for name, p in peers.items() if not isinstance(p, str)}
        measured = seconds_per_call_interleaved(ready, quick)
        seconds = {name: measured[name] / POOL_SIZE if name in measured else None for name in PEERS}
        counts = spec.counts()
        row = [f"{spec.name} ({counts['joints']}/{counts['moving']}/{counts['mimic']})"]
        row.append(micros(seconds["ours"]))
        for name in PEER_NAMES:
            status = peers[name]
            row += [status if isinstance(status, str) else micros(seconds[name])]
            row += [ratio(seconds[name], seconds["ours"])]
        table.rows.append(row)
        statuses = {name: peer if isinstance(peer, str) else "ok" for name, peer in peers.items()}
        record[spec.name] = {"counts": counts, "seconds": seconds, "status": statuses}
    table.notes.append(
        f"every peer's link poses checked against ours first at each of the {POOL_SIZE} "
        f"configurations timed (max abs error <= {POSE_TOLERANCE:g}); each call gets the next "
        "configuration; libraries timed in turn, run by run; peer/ours > 1: ours is faster; "
        "pinocchio: framesForwardKinematics only (poses stay in data.oMf); yourdfpy: "
        "update_cfg + get_transform per link; urchin/ours: link_fk"
    )
    target = record[TARGET_MODEL]["seconds"]
    ours, pin, ydf = target["ours"], target["pinocchio"], target["yourdfpy"]
    if ours and pin:
        table.notes.append(
            f"target {TARGET_MODEL}: ours within 10x of pinocchio: ours/pinocchio = "
            f"{ours / pin:.3g}x -> {'PASS' if ours <= 10 * pin else 'FAIL'}"
        )
    if ours and ydf:
        table.notes.append(
            f"target {TARGET_MODEL}: >= 40x faster than yourdfpy: {ydf / ours:.3g}x "
            f"-> {'PASS' if ydf >= 40 * ours else 'FAIL'}"
        )
    return [table], record
