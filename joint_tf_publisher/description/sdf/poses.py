"""SDFormat poses and the pose graph of one (flattened) model.

Frames: ``X_M_f`` is the pose of frame f in the top model's frame M at the zero
configuration, where SDFormat places every link at its ``<pose>``. Each named frame (link,
joint, ``<frame>``, nested model) has a pose relative to another frame (``relative_to``);
``PoseGraph.in_model`` composes them down to M. A frame is also attached to a link (what moves
it): ``PoseGraph.attached_link`` follows joints to their child link, ``<frame>``s to their
``attached_to`` and model frames to their canonical link.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np
from lxml import etree
from numpy.typing import NDArray

from ...transforms import inverse_pose, quaternion_to_matrix, xyz_rpy_to_matrix
from .context import MODEL_FRAME, WORLD, Context, line

Array = NDArray[np.float64]


@dataclass
class Frame:
    """A node of the pose graph: ``pose`` is this frame in frame ``relative_to``.

    ``kind`` is "link", "joint", "frame" (a ``<frame>``) or "model" (a nested model's frame,
    or the proxy frame of a merged include). ``attached_to`` names the frame a "frame" or
    "model" is attached to ("" for the model frame); ``placement`` a model's placement frame,
    which its ``pose`` places instead of the model frame.
    """

    kind: str
    name: str
    element: etree._Element
    pose: Array
    relative_to: str
    attached_to: str = ""
    placement: str = ""


def read_pose(ctx: Context, owner: etree._Element, what: str) -> tuple[Array, str | None]:
    """``owner``'s ``<pose>`` as (X_relative_to_owner, relative_to or None for the default)."""
    element = owner.find("pose")
    if element is None:
        return np.eye(4), None
    version = ctx.version(element)
    relative_to = element.get("relative_to", "").strip() or None
    if relative_to is not None and version < (1, 7):
        ctx.warn("'relative_to' needs SDFormat 1.7 or later; ignored", element, what)
        relative_to = None
    if element.get("frame", "").strip():
        raise ctx.error(
            "<pose frame=...> (SDFormat 1.5/1.6) is not supported; use SDFormat 1.7 'relative_to'",
            element,
            what,
        )
    if not (element.text or "").strip():
        return np.eye(4), relative_to
    rotation_format = element.get("rotation_format", "euler_rpy") if version >= (1, 9) else ""
    if rotation_format == "quat_xyzw":
        values = ctx.numbers(element, 7, what)
        pose = np.eye(4)
        try:
            pose[:3, :3] = quaternion_to_matrix(values[3:])
        except ValueError:
            raise ctx.error("<pose> quaternion has zero norm", element, what) from None
        pose[:3, 3] = values[:3]
        return pose, relative_to
    if rotation_format not in ("euler_rpy", ""):
        raise ctx.error(
            f"<pose rotation_format={rotation_format!r}>: expected 'euler_rpy' or 'quat_xyzw'",
            element,
            what,
        )
    values = ctx.numbers(element, 6, what)
    rpy = values[3:]
    if version >= (1, 9) and element.get("degrees", "false").strip() in ("true", "1"):
        rpy = [math.radians(angle) for angle in rpy]
    return xyz_rpy_to_matrix(values[:3], rpy), relative_to


def pose_in(X_M_A: Array, X_M_B: Array) -> Array:
    """X_A_B, frame B's pose in frame A, from both poses in the model frame M.

    Poses so large that the product overflows give inf or NaN entries without a numpy
    warning: each caller checks the result and raises a ModelError naming the element.
    """
    with np.errstate(over="ignore", invalid="ignore"):
        X_A_B: Array = inverse_pose(X_M_A) @ X_M_B
    return X_A_B


class PoseGraph:
    """The named frames of a model and their poses in the model frame M."""

    def __init__(self, ctx: Context) -> None:
        self.ctx = ctx
        self.frames: dict[str, Frame] = {}
        self.canonical = ""  # the top model's canonical link, once the links are read
        self._resolved: dict[str, Array] = {MODEL_FRAME: np.eye(4)}
        self._resolving: list[str] = []

    def add(self, frame: Frame) -> None:
        """Register a named frame; names are unique across kinds from 1.7."""
        what = f"{frame.kind} {frame.name!r}"
        earlier = self.frames.get(frame.name)
        if earlier is not None:
            if earlier.kind == frame.kind:
                raise self.ctx.error(
                    f"duplicate {frame.kind} name (first defined at line {line(earlier.element)})",
                    frame.element,
                    what,
                )
            if self.ctx.version(frame.element) >= (1, 7):
                raise self.ctx.error(
                    f"name {frame.name!r} is already used by {earlier.kind} at line "
                    f"{line(earlier.element)}; SDFormat 1.7 needs unique frame names",
                    frame.element,
                    what,
                )
            return  # before 1.7 links and joints may share names; poses never refer to them
        if frame.name in (MODEL_FRAME, WORLD):
            raise self.ctx.error(f"the name {frame.name!r} is reserved", frame.element, what)
        self.frames[frame.name] = frame
        self.ctx.label(what, frame.element)

    def set_world(self, X_M_world: Array) -> None:
        """Place the frame ``world`` (a joint's parent) in the model frame."""
        self._resolved[WORLD] = X_M_world

    def in_model(self, name: str, element: etree._Element | None, what: str) -> Array:
        """X_M_name: the pose of frame ``name`` in the model frame at zero configuration."""
        known = self._resolved.get(name)
        if known is not None:
            return known
        frame = self._frame(name, element, what)
        pose = self.in_model(frame.relative_to, _pose_or(frame), _label(frame)) @ self._local(frame)
        self._resolving.pop()
        self._resolved[name] = pose
        return pose

    def _frame(self, name: str, element: etree._Element | None, what: str) -> Frame:
        """The frame ``name``, entered on the resolution stack; ModelError if unknown or looping."""
        frame = self.frames.get(name)
        if frame is None:
            raise self.ctx.error(f"unknown frame {name!r}", element, what)
        if name in self._resolving:
            loop = " -> ".join(self._resolving[self._resolving.index(name) :] + [name])
            raise self.ctx.error(
                f"poses are relative to each other in a cycle: {loop}", frame.element, _label(frame)
            )
        self._resolving.append(name)
        return frame

    def _local(self, frame: Frame) -> Array:
        """``frame`` in its ``relative_to`` frame (its pose, placed as ``placed`` says)."""
        return self.placed(frame.pose, frame.name, frame.placement, frame.element)

    def placed(self, pose: Array, model: str, placement: str, element: etree._Element) -> Array:
        """The pose of model frame ``model`` whose ``<pose>`` is ``pose``: with a placement
        frame P, ``pose`` places P, so the model frame is at pose @ inv(X_model_P)."""
        if not placement:
            return pose
        X_model_P = self._within(placement, model, element, f"model {model!r}")
        return pose_in(X_model_P, pose)

    def _within(self, name: str, model: str, element: etree._Element, what: str) -> Array:
        """X_model_name for a frame ``name`` of nested model ``model`` (which poses inside a
        model always come back to): the local poses from ``name`` up to ``model``, composed."""
        pose = np.eye(4)
        seen: list[str] = []
        while name != model:
            frame = self.frames.get(name)
            if frame is None:
                raise self.ctx.error(f"unknown frame {name!r}", element, what)
            if name in seen:
                loop = " -> ".join(seen[seen.index(name) :] + [name])
                raise self.ctx.error(
                    f"poses are relative to each other in a cycle: {loop}", element, what
                )
            seen.append(name)
            pose = self._local(frame) @ pose
            name = frame.relative_to
        return pose

    def attached_link(self, name: str, element: etree._Element | None, what: str) -> str:
        """The link a frame is attached to: a link itself, a joint's child link, a
        ``<frame>``'s ``attached_to`` (the model frame by default), a model's canonical link;
        "" for a static nested model without links (fixed to the world, libsdformat's
        STATIC_MODEL), which no link carries."""
        seen: list[str] = []
        while True:
            if name in seen:
                loop = " -> ".join(seen[seen.index(name) :] + [name])
                raise self.ctx.error(
                    f"frames are attached to each other in a cycle: {loop}", element, what
                )
            seen.append(name)
            if name == MODEL_FRAME:
                name = self.canonical
                continue
            frame = self.frames.get(name)
            if frame is None:
                raise self.ctx.error(f"unknown frame {name!r}", element, what)
            if frame.kind == "link":
                return name
            if frame.kind == "joint":
                name = (frame.element.findtext("child") or "").strip()
            elif frame.kind == "model" and not frame.attached_to:
                return ""
            else:
                name = frame.attached_to or MODEL_FRAME


def _label(frame: Frame) -> str:
    return f"{frame.kind} {frame.name!r}"


def _pose_or(frame: Frame) -> etree._Element:
    """The element to blame for ``frame``'s placement: its ``<pose>``, else itself."""
    pose = frame.element.find("pose")
    return pose if pose is not None else frame.element
