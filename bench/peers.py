"""Adapters giving every library the same operations: FK of each of a pool of configurations in
turn, and all link poses (in the root frame) at one configuration.

Each gets configurations of every moving joint (mimic joints following their leader,
``ModelSpec.full_values``) and passes on what its library expects: pinocchio takes mimic joints
as independent joints and continuous joints as (cos, sin); yourdfpy and urchin compute mimic
joints themselves. Timed: ours and urchin ``link_fk``; pinocchio ``framesForwardKinematics``
(poses stay in ``data.oMf``); yourdfpy ``update_cfg`` then ``get_transform`` for every link.
"""

from __future__ import annotations

import importlib
import logging
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np

from .models import ModelSpec

Values = dict[str, float]
Poses = dict[str, np.ndarray]


@dataclass(frozen=True)
class Peer:
    """One library bound to one model. ``prepare`` turns a configuration into the library's
    input, ``fk`` does FK of a prepared one, ``link_poses`` gives every link's pose (4, 4)."""

    fk: Callable[[Any], object]
    prepare: Callable[[Values], Any]
    link_poses: Callable[[Any], Poses]

    def poses(self, values: Values) -> Poses:
        """Every link's pose (4, 4) at the configuration ``values``."""
        return self.link_poses(self.prepare(values))

    def fk_pool(self, configurations: list[Values]) -> Callable[[], None]:
        """The call to time: FK of each of ``configurations`` in turn (a fresh one every
        call, as a state publisher sees), prepared once here so that it does only FK."""
        pool = [self.prepare(values) for values in configurations]

        def fk_each() -> None:
            for prepared in pool:
                self.fk(prepared)

        return fk_each


class PeerUnavailable(RuntimeError):
    """A peer library that is not installed or cannot read the model."""


def _independent(spec: ModelSpec) -> Callable[[Values], Values]:
    names = [joint.name for joint in spec.independent_joints]
    return lambda values: {name: float(values[name]) for name in names}


def ours(spec: ModelSpec) -> Peer:
    """Our ``Robot.link_fk`` through the public API."""
    from joint_tf_publisher import Robot

    robot = Robot.load(spec.path)
    return Peer(robot.link_fk, _independent(spec), lambda cfg: dict(robot.link_fk(cfg)))


def pinocchio(spec: ModelSpec) -> Peer:
    """pinocchio: mimic joints fed as independent joints (default parser), continuous as cos/sin."""
    pin = _import("pinocchio")
    model = pin.buildModelFromUrdf(str(spec.path))
    data = model.createData()
    frames = {link: model.getFrameId(link, pin.FrameType.BODY) for link in spec.link_names}
    if missing := [link for link, frame in frames.items() if frame >= model.nframes]:
        raise PeerUnavailable(f"pinocchio has no frame for links {missing[:3]}")
    slots = [
        (model.names[i], model.joints[i].idx_q, model.joints[i].nq) for i in range(1, model.njoints)
    ]

    def to_q(values: Values) -> np.ndarray:
        q = pin.neutral(model).copy()
        for name, index, width in slots:
            if width == 1:
                q[index] = values[name]
            elif width == 2:  # continuous: (cos, sin)
                q[index], q[index + 1] = np.cos(values[name]), np.sin(values[name])
            else:
                raise PeerUnavailable(f"pinocchio joint {name!r} has nq={width}")
        return q

    def fk(q: np.ndarray) -> None:
        pin.framesForwardKinematics(model, data, q)

    def link_poses(q: np.ndarray) -> Poses:
        fk(q)
        return {link: data.oMf[frame].homogeneous for link, frame in frames.items()}

    return Peer(fk, to_q, link_poses)


def yourdfpy(spec: ModelSpec) -> Peer:
    """yourdfpy: ``update_cfg`` with the actuated joints, then a transform per link."""
    robot = _import("yourdfpy").URDF.load(
        str(spec.path),
        build_scene_graph=True,
        load_meshes=False,
        build_collision_scene_graph=False,
        load_collision_meshes=False,
    )
    actuated, links = list(robot.actuated_joint_names), spec.link_names

    def link_poses(cfg: np.ndarray) -> Poses:
        robot.update_cfg(cfg)
        return {link: robot.get_transform(link) for link in links}

    return Peer(link_poses, lambda values: np.array([values[n] for n in actuated]), link_poses)


def urchin(spec: ModelSpec) -> Peer:
    """urchin (the maintained urdfpy fork): ``link_fk``."""
    robot = _import("urchin").URDF.load(str(spec.path), lazy_load_meshes=True)

    def fk(cfg: Values) -> Any:
        return robot.link_fk(cfg=cfg, use_names=True)

    return Peer(fk, _independent(spec), lambda cfg: dict(fk(cfg)))


#: Peer constructors in table order (ours first).
PEERS: dict[str, Callable[[ModelSpec], Peer]] = {
    "ours": ours,
    "pinocchio": pinocchio,
    "yourdfpy": yourdfpy,
    "urchin": urchin,
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
    if missing := set(reference) - set(other):
        raise KeyError(f"links missing from peer poses: {sorted(missing)[:3]}")
    return max(float(np.max(np.abs(reference[link] - other[link]))) for link in reference)
