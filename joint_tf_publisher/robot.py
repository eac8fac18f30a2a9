"""``Robot``: the public facade over the layers (load a description, forward kinematics).

It sits above ``description`` (parsing) and ``kinematics`` (compiled FK), so the model stays a
leaf of plain dataclasses and no import runs upward. The API follows urdfpy's ``URDF``:
``Robot.load(path)``, ``robot.link_fk(cfg, link=..., links=...)``, ``robot.link_fk_batch(cfgs)``.
Poses are (4, 4) homogeneous matrices of each link frame in the root link frame, in metres.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, fields
from pathlib import Path
from typing import Any, overload

from .arrays import Array
from .description.loader import load_file, load_string
from .kinematics import Kinematics
from .model import ClampLike, Link, RobotModel

LinkRef = str | Link


@dataclass(eq=False)
class Robot(RobotModel):
    """A robot: links and joints in file order, a single root link, and its kinematics.

    Build one with ``Robot.load(path)`` or ``Robot.from_xml_string(text)``. ``warnings``
    holds the non-fatal oddities found while loading (also logged through ``logging``).
    """

    _kinematics: Kinematics | None = field(default=None, init=False, repr=False)

    @classmethod
    def from_model(cls, model: RobotModel) -> Robot:
        """The facade over an already parsed model (shares its links and joints)."""
        return cls(**{item.name: getattr(model, item.name) for item in fields(RobotModel)})

    @classmethod
    def load(cls, path: str | Path, model_name: str | None = None) -> Robot:
        """Read a .urdf, .sdf or .xacro file. Raises ModelError naming file and line."""
        return cls.from_model(load_file(Path(path), model_name=model_name))

    @classmethod
    def from_xml_string(
        cls,
        text: str | bytes,
        source: str = "<string>",
        model_name: str | None = None,
        path: Path | None = None,
    ) -> Robot:
        """Parse URDF or SDF text, detected by its root element. Raises ModelError.

        ``path``: the file the text was read from (SDFormat ``<include>``s of relative paths
        start from its folder)."""
        return cls.from_model(load_string(text, source=source, model_name=model_name, path=path))

    @property
    def kinematics(self) -> Kinematics:
        """The compiled kinematics of this robot, built on first use and cached."""
        if self._kinematics is None:
            self._kinematics = Kinematics(self)
        return self._kinematics

    @overload
    def link_fk(
        self,
        cfg: Mapping[str, Any] | None = None,
        clamp: ClampLike = None,
        link: None = None,
        links: Iterable[LinkRef] | None = None,
    ) -> dict[str, Array]: ...
    @overload
    def link_fk(self, cfg: Mapping[str, Any] | None, clamp: ClampLike, link: LinkRef) -> Array: ...
    @overload
    def link_fk(
        self,
        cfg: Mapping[str, Any] | None = None,
        clamp: ClampLike = None,
        *,
        link: LinkRef,
    ) -> Array: ...
    def link_fk(
        self,
        cfg: Mapping[str, Any] | None = None,
        clamp: ClampLike = None,
        link: LinkRef | None = None,
        links: Iterable[LinkRef] | None = None,
    ) -> dict[str, Array] | Array:
        """Link poses (4, 4) in the root link frame at ``cfg`` (joint name -> value).

        Absent joints sit at zero; a value given for a mimic follower is ignored; ``clamp`` is
        None, "hard" or "soft". With ``link`` (a name or Link) just that link's pose; with
        ``links`` a mapping of those links only; else every link's.
        """
        poses = self.kinematics.link_fk(cfg, clamp=clamp)
        return self._select(poses, link, links)

    @overload
    def link_fk_batch(
        self,
        cfgs: Mapping[str, Any],
        clamp: ClampLike = None,
        link: None = None,
        links: Iterable[LinkRef] | None = None,
    ) -> dict[str, Array]: ...
    @overload
    def link_fk_batch(self, cfgs: Mapping[str, Any], clamp: ClampLike, link: LinkRef) -> Array: ...
    @overload
    def link_fk_batch(
        self, cfgs: Mapping[str, Any], clamp: ClampLike = None, *, link: LinkRef
    ) -> Array: ...
    def link_fk_batch(
        self,
        cfgs: Mapping[str, Any],
        clamp: ClampLike = None,
        link: LinkRef | None = None,
        links: Iterable[LinkRef] | None = None,
    ) -> dict[str, Array] | Array:
        """As ``link_fk`` for N configurations: poses (N, 4, 4); cfgs maps names to (N, ...)."""
        poses = self.kinematics.link_fk_batch(cfgs, clamp=clamp)
        return self._select(poses, link, links)

    def _select(
        self, poses: dict[str, Array], link: LinkRef | None, links: Iterable[LinkRef] | None
    ) -> dict[str, Array] | Array:
        """``poses`` narrowed to ``link`` (a pose) or ``links`` (a mapping)."""
        if link is not None and links is not None:
            raise ValueError("give link= or links=, not both")
        if link is not None:
            return poses[self._link_name(link)]
        if links is not None:
            return {name: poses[name] for name in map(self._link_name, links)}
        return poses

    def _link_name(self, link: LinkRef) -> str:
        """The name of ``link`` (a name or a Link); ValueError naming close matches."""
        name = link.name if isinstance(link, Link) else link
        if name in self.links:
            return name
        close = difflib.get_close_matches(str(name), list(self.links), n=3)
        hint = f"; did you mean {', '.join(close)}?" if close else ""
        raise ValueError(f"robot {self.name!r} has no link {name!r}{hint}")
