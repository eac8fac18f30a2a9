"""Adapters giving every library the same four operations: build, single FK, batch FK, poses.

Every adapter is driven with equivalent configurations: ``values`` always holds a value for
every moving joint (mimic joints already following their leader, see
``ModelSpec.full_values``); each adapter passes on what its library expects (pinocchio
takes mimic joints as independent joints and continuous joints as (cos, sin); yourdfpy and
urchin compute mimic joints themselves from the independent ones).

What is timed per library ("all link poses in the root frame"):

- ours: ``robot.link_fk(cfg)``, a dict of (4, 4) arrays; batch ``robot.link_fk_batch(cfgs)``.
- pinocchio: ``pin.framesForwardKinematics`` (every frame placement into ``data.oMf``,
  no copy out); batch: a Python loop over configurations.
- yourdfpy: ``update_cfg`` then ``get_transform`` for every link; batch: a loop.
- urchin: ``link_fk(cfg)``; batch ``link_fk_batch(cfgs)``.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from .models import ModelSpec

Values = dict[str, float]
BatchValues = dict[str, np.ndarray]
Poses = dict[str, np.ndarray]


@dataclass
class Peer:
    """One library bound to one model: callables prepared so the timed call does only FK.

    ``set_pool`` takes a few configurations; ``fk_pool`` runs single-configuration FK on each
    in turn (a fresh configuration every call, as a state publisher sees: yourdfpy's scene
    graph caches poses while the configuration is unchanged); ``poses`` is the first one's.
    """

    name: str
    fk_pool: Callable[[], object]
    poses: Callable[[], Poses]
    set_pool: Callable[[list[Values]], int]
    set_batch: Callable[[BatchValues], int]
    fk_batch: Callable[[], object]
    batch_is_loop: bool


class PeerUnavailable(RuntimeError):
    """A peer library that is not installed or cannot read the model."""


# -- ours --------------------------------------------------------------------------------------


def ours(spec: ModelSpec, path: Path) -> Peer:
    """Our ``Robot.link_fk`` / ``link_fk_batch`` through the public API."""
    from joint_tf_publisher import Robot

    robot = Robot.load(path)
    independent = [joint.name for joint in spec.independent_joints]
    state: dict[str, Any] = {"pool": [], "cfgs": {}}

    def set_pool(pool: list[Values]) -> int:
        state["pool"] = [{name: float(values[name]) for name in independent} for values in pool]
        return len(pool)

    def fk_pool() -> None:
        for cfg in state["pool"]:
            robot.link_fk(cfg)

    def set_batch(values: BatchValues) -> int:
        state["cfgs"] = {name: np.ascontiguousarray(values[name]) for name in independent}
        return len(values[independent[0]])

    return Peer(
        name="ours",
        fk_pool=fk_pool,
        poses=lambda: dict(robot.link_fk(state["pool"][0])),
        set_pool=set_pool,
        set_batch=set_batch,
        fk_batch=lambda: robot.link_fk_batch(state["cfgs"]),
        batch_is_loop=False,
    )


# -- pinocchio --------------------------------------------------------------------------------


def pinocchio(spec: ModelSpec, path: Path) -> Peer:
    """pinocchio: mimic joints fed as independent joints (default parser), continuous as cos/sin."""
    pin = _import("pinocchio")
    model = pin.buildModelFromUrdf(str(path))
    data = model.createData()
    frame_ids = {link: model.getFrameId(link, pin.FrameType.BODY) for link in spec.link_names}
    missing = [link for link, frame in frame_ids.items() if frame >= model.nframes]
    if missing:
        raise PeerUnavailable(f"pinocchio has no frame for links {missing[:3]}")
    slots = [
        (model.names[i], model.joints[i].idx_q, model.joints[i].nq) for i in range(1, model.njoints)
    ]
    state: dict[str, Any] = {"pool": [], "qs": []}

    def to_q(values: dict[str, Any], count: int) -> np.ndarray:
        q = np.tile(pin.neutral(model), (count, 1))
        for name, index, width in slots:
            value = np.asarray(values[name], dtype=np.float64)
            if width == 1:
                q[:, index] = value
            elif width == 2:  # continuous: (cos, sin)
                q[:, index], q[:, index + 1] = np.cos(value), np.sin(value)
            else:
                raise PeerUnavailable(f"pinocchio joint {name!r} has nq={width}")
        return q

    def set_pool(pool: list[Values]) -> int:
        state["pool"] = [to_q(values, 1)[0].copy() for values in pool]
        return len(pool)

    def set_batch(values: BatchValues) -> int:
        count = len(next(iter(values.values())))
        state["qs"] = list(to_q(values, count))
        return count

    def fk_pool() -> None:
        for q in state["pool"]:
            pin.framesForwardKinematics(model, data, q)

    def poses_at(q: np.ndarray) -> Poses:
        """FK at q, every link pose copied out (``.homogeneous`` is a new array)."""
        pin.framesForwardKinematics(model, data, q)
        return {link: data.oMf[frame].homogeneous for link, frame in frame_ids.items()}

    def poses() -> Poses:
        return poses_at(state["pool"][0])

    def fk_batch() -> None:
        for q in state["qs"]:
            pin.framesForwardKinematics(model, data, q)

    return Peer(
        "pinocchio",
        fk_pool,
        poses,
        set_pool,
        set_batch,
        fk_batch,
        True,
    )


# -- yourdfpy -----------------------------------------------------------------------------------


def yourdfpy_peer(spec: ModelSpec, path: Path) -> Peer:
    """yourdfpy: ``update_cfg`` with the actuated joints, then a transform per link."""
    robot = _import("yourdfpy").URDF.load(
        str(path),
        build_scene_graph=True,
        load_meshes=False,
        build_collision_scene_graph=False,
        load_collision_meshes=False,
    )
    actuated = list(robot.actuated_joint_names)
    links = spec.link_names
    state: dict[str, Any] = {"pool": [], "cfgs": []}

    def to_cfg(values: dict[str, Any]) -> np.ndarray:
        return np.array([values[name] for name in actuated], dtype=np.float64)

    def set_pool(pool: list[Values]) -> int:
        state["pool"] = [to_cfg(values) for values in pool]
        return len(pool)

    def set_batch(values: BatchValues) -> int:
        state["cfgs"] = list(to_cfg(values).T)
        return len(state["cfgs"])

    def all_poses(cfg: np.ndarray) -> Poses:
        robot.update_cfg(cfg)
        return {link: robot.get_transform(link) for link in links}

    def fk_pool() -> None:
        for cfg in state["pool"]:
            all_poses(cfg)

    def fk_batch() -> None:
        for cfg in state["cfgs"]:
            all_poses(cfg)

    return Peer(
        "yourdfpy",
        fk_pool,
        lambda: all_poses(state["pool"][0]),
        set_pool,
        set_batch,
        fk_batch,
        True,
    )


# -- urchin -------------------------------------------------------------------------------------


def urchin_peer(spec: ModelSpec, path: Path) -> Peer:
    """urchin (the maintained urdfpy fork): ``link_fk`` and ``link_fk_batch``."""
    robot = _import("urchin").URDF.load(str(path), lazy_load_meshes=True)
    independent = [joint.name for joint in spec.independent_joints]
    state: dict[str, Any] = {"pool": [], "cfgs": {}}

    def set_pool(pool: list[Values]) -> int:
        state["pool"] = [{name: float(values[name]) for name in independent} for values in pool]
        return len(pool)

    def fk_pool() -> None:
        for cfg in state["pool"]:
            robot.link_fk(cfg=cfg, use_names=True)

    def set_batch(values: BatchValues) -> int:
        state["cfgs"] = {name: np.asarray(values[name]) for name in independent}
        return len(values[independent[0]])

    return Peer(
        name="urchin",
        fk_pool=fk_pool,
        poses=lambda: dict(robot.link_fk(cfg=state["pool"][0], use_names=True)),
        set_pool=set_pool,
        set_batch=set_batch,
        fk_batch=lambda: robot.link_fk_batch(cfgs=state["cfgs"], use_names=True),
        batch_is_loop=False,
    )


# -- registry -----------------------------------------------------------------------------------

#: Peer constructors in table order (ours first).
PEERS: dict[str, Callable[[ModelSpec, Path], Peer]] = {
    "ours": ours,
    "pinocchio": pinocchio,
    "yourdfpy": yourdfpy_peer,
    "urchin": urchin_peer,
}


def _import(module: str) -> Any:
    try:
        return importlib.import_module(module)
    except Exception as exc:  # an ImportError, or a broken install raising anything
        raise PeerUnavailable(f"{module} not importable: {exc}") from None


def quiet_peer_loggers() -> None:
    """Silence the peers' own load-time chatter (yourdfpy logs every missing mesh)."""
    for name in ("yourdfpy", "trimesh", "urchin"):
        logging.getLogger(name).setLevel(logging.ERROR)


def max_pose_error(reference: Poses, other: Poses) -> float:
    """Largest absolute difference over every matrix entry of every link both poses hold."""
    missing = set(reference) - set(other)
    if missing:
        raise KeyError(f"links missing from peer poses: {sorted(missing)[:3]}")
    return max(float(np.max(np.abs(reference[link] - other[link]))) for link in reference)
