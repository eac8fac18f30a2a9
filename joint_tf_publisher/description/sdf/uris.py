"""Where an ``<include><uri>`` points: a model folder or an SDFormat file on this machine.

- ``model://NAME/...``: under each root of ``GZ_SIM_RESOURCE_PATH``, then
  ``IGN_GAZEBO_RESOURCE_PATH`` (its name before Gazebo Garden), then ``SDF_PATH``
  (libsdformat's own); each a list of folders separated by ``:``.
- ``package://PKG/...``: under ``share/PKG`` of the first ``AMENT_PREFIX_PATH`` prefix whose
  ament index registers PKG (what ``ament_index_python.get_package_share_directory`` does),
  then under the resource roots as ``model://`` (where Gazebo looks for it).
- ``file://PATH`` and plain paths: absolute, or relative to the including file's folder (the
  working directory for text not read from a file), then to the resource roots.
- ``http://`` and ``https://`` (Gazebo Fuel) are never fetched.

A folder is a model folder: its ``model.config`` names the SDFormat file (the ``<sdf>`` of the
highest version this reader supports), or without one, ``model.sdf`` (libsdformat needs the
``model.config``; ``gz sdf`` users often have only ``model.sdf``).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from ...errors import ModelError
from ..ament_index import ament_share
from ..xmlio import parse_xml, read_description
from .context import SUPPORTED_VERSIONS

#: Environment variables naming resource roots, searched in this order.
RESOURCE_PATH_VARIABLES = ("GZ_SIM_RESOURCE_PATH", "IGN_GAZEBO_RESOURCE_PATH", "SDF_PATH")

_NEWEST = max(tuple(int(part) for part in v.split(".")) for v in SUPPORTED_VERSIONS)


class NotFound(Exception):
    """A URI that names nothing here; ``searched`` lists the paths tried, in order."""

    def __init__(self, reason: str, searched: Sequence[Path] = ()) -> None:
        super().__init__(reason)
        self.reason = reason
        self.searched = list(searched)


def resource_roots() -> list[Path]:
    """The folders of GZ_SIM_RESOURCE_PATH, IGN_GAZEBO_RESOURCE_PATH and SDF_PATH, in order."""
    roots: list[Path] = []
    for variable in RESOURCE_PATH_VARIABLES:
        for part in os.environ.get(variable, "").split(os.pathsep):
            if part and Path(part) not in roots:
                roots.append(Path(part))
    return roots


def resolve(uri: str, folder: Path | None) -> Path:
    """The SDFormat file ``uri`` names, seen from a file in ``folder``; NotFound if none."""
    candidates = _candidates(uri, folder)
    for candidate in candidates:
        if candidate.is_dir():
            return model_file(candidate)
        if candidate.is_file():
            return candidate
    raise NotFound("not found", candidates)


def _candidates(uri: str, folder: Path | None) -> list[Path]:
    """The paths ``uri`` may stand for, in search order."""
    scheme, separator, rest = uri.partition("://")
    if not separator:
        scheme, rest = "", uri
    roots = resource_roots()
    if scheme in ("http", "https"):
        raise NotFound(
            "a web address (Gazebo Fuel) is never fetched: download the model and add its "
            "parent folder to GZ_SIM_RESOURCE_PATH"
        )
    if scheme == "model":
        return [root / rest for root in roots]
    if scheme == "package":
        package, _, inside = rest.partition("/")
        share = ament_share(package)
        found = [share / inside] if share is not None else []
        return found + [root / rest for root in roots]
    if scheme not in ("", "file"):
        raise NotFound(
            f"unknown URI scheme {scheme!r}: use model://, package://, file:// or a path"
        )
    path = Path(rest)
    if path.is_absolute():
        return [path]
    base = folder if folder is not None else Path.cwd()
    return [base / path] + [root / path for root in roots]


def model_file(model_folder: Path) -> Path:
    """The SDFormat file of a model folder (see the module docstring); NotFound if none."""
    config = model_folder / "model.config"
    if not config.is_file():
        fallback = model_folder / "model.sdf"
        if fallback.is_file():
            return fallback
        raise NotFound("a folder without model.config or model.sdf", [config, fallback])
    try:
        root = parse_xml(read_description(config), str(config))
    except ModelError as exc:
        raise NotFound(f"unreadable model.config: {exc}") from None
    best: tuple[tuple[int, ...], str] | None = None
    for sdf in root.findall("sdf"):
        name = (sdf.text or "").strip()
        try:
            version = tuple(int(part) for part in sdf.get("version", "0").split("."))
        except ValueError:
            continue
        if name and version <= _NEWEST and (best is None or version > best[0]):
            best = (version, name)
    if best is None:
        raise NotFound(f"{config} names no <sdf> file of a supported version")
    path = model_folder / best[1]
    if not path.is_file():
        raise NotFound(f"{config} names {best[1]!r}, which does not exist", [path])
    return path
