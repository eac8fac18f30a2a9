"""Which ``<model>`` of an SDFormat file is the robot.

- ``model_name`` given: the model of that name, of ``<sdf>`` or of a ``<world>`` (included
  models by their ``<include><name>``, else their own name).
- ``<sdf><model>``: the first, as libsdformat's ``Root::Model()`` (which allows one: a
  second gives a warning naming its line).
- ``<sdf><world>``: a world holds the robot next to scenery (ground plane, buildings, lights,
  static models), written inline or included. The robot is the one model that is not
  ``<static>`` and has a joint (nested models' joints count); failing that, the one model that
  is not static. Several candidates are an error naming them, to be settled with
  ``model_name``. A model (or world-level include) that cannot be read, its includes
  included (a Fuel web address, a model not on this machine's resource path, a broken file),
  is left out as scenery, with a warning; naming it in ``model_name`` gives the error.

Another model of the robot's name is an error naming both (``model_name`` could not tell them
apart). What libsdformat refuses in the other models, which are not published (two of one
name, a malformed ``<pose>``), is a warning naming its line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from lxml import etree

from ...errors import ModelError
from .context import Context, line
from .include import Includer
from .poses import read_pose


@dataclass
class _Unread:
    """A world's model that could not be read: its name if known, where it is, why."""

    name: str | None
    where: str
    error: ModelError


def select_model(
    ctx: Context, root: etree._Element, includer: Includer, model_name: str | None
) -> etree._Element:
    """The ``<model>`` to read (see the module docstring); ModelError naming the choices."""
    models = root.findall("model")
    worlds = root.findall("world")
    if len(models) > 1:
        ctx.warn(
            f"{len(models)} <model>s in <sdf>, where libsdformat allows one (and reads the "
            f"first, {models[0].get('name')!r})",
            models[1],
            "<sdf>",
        )
    if model_name is None and models:
        return _checked(ctx, models[0], models)
    unread: list[_Unread] = []
    for world in worlds:
        models += _world_models(ctx, world, includer, unread)
    if model_name is not None:
        return _checked(ctx, _named(ctx, root, models, unread, model_name), models)
    if not worlds:
        raise ctx.error("no <model> in the description", root, "<sdf>")
    world = worlds[0]
    where = f"world {world.get('name')!r}"
    if not models and not unread:
        raise ctx.error("world has no <model>; a robot description needs one", world, where)
    moving = [model for model in models if not ctx.flag(model, "static", where)]
    jointed = [model for model in moving if model.find(".//joint") is not None]
    for candidates, kind in (
        (jointed, "non-static models with joints"),
        (moving, "non-static models"),
    ):
        if len(candidates) == 1:
            return _checked(ctx, candidates[0], models)
        if candidates:
            raise ctx.error(
                f"{len(candidates)} {kind} could be the robot: {_listed(ctx, candidates)}; "
                "choose one with model_name",
                world,
                where,
            )
    static = f" (static: {_listed(ctx, models)})" if models else ""
    raise ctx.error(
        f"no model that could be the robot: every model is static{static}{_not_read(unread)}",
        world,
        where,
    )


def _checked(ctx: Context, robot: etree._Element, models: list[etree._Element]) -> etree._Element:
    """``robot``, once the other ``models`` are checked as libsdformat would: a model of the
    robot's name is an error (which one is meant?); two other models of one name, and a
    malformed ``<pose>`` of another model, are warnings (libsdformat refuses the file, but
    the robot can be published)."""
    name = robot.get("name")
    twins = [model for model in models if model.get("name") == name]
    if len(twins) > 1:
        raise ctx.error(
            f"{len(twins)} models are named {name!r}: {_listed(ctx, twins)}; model names "
            "must be unique",
            twins[1],
            f"model {name!r}",
        )
    seen: dict[str | None, etree._Element] = {}
    for model in models:
        other = model.get("name")
        if other in seen and model is not robot:
            ctx.warn(
                f"another model is named {other!r} ({_where(ctx, seen[other])}); "
                "libsdformat refuses duplicate model names",
                model,
                f"model {other!r}",
            )
        seen.setdefault(other, model)
        if model is not robot:
            try:
                read_pose(ctx, model, f"model {other!r}")
            except ModelError as error:
                ctx.warn(
                    f"{error.reason}; libsdformat refuses it, but the model is not the robot",
                    model.find("pose"),
                    f"model {other!r}",
                )
    return robot


def _named(
    ctx: Context,
    root: etree._Element,
    models: list[etree._Element],
    unread: list[_Unread],
    name: str,
) -> etree._Element:
    """The model called ``name``; the reason it could not be read if that is why it is absent."""
    for model in models:
        if model.get("name") == name:
            return model
    for item in unread:
        if item.name == name:
            raise item.error
    names = ", ".join(repr(m.get("name")) for m in models) or "none"
    raise ctx.error(
        f"no <model> named {name!r} (models: {names}){_not_read(unread)}", root, "<sdf>"
    )


def _world_models(
    ctx: Context, world: etree._Element, includer: Includer, unread: list[_Unread]
) -> list[etree._Element]:
    """The models of ``world`` with their includes loaded in place; what cannot be read is
    left out as scenery, warned about and added to ``unread``."""
    models: list[etree._Element] = []
    for element in world:
        if element.tag not in ("model", "include"):
            continue
        if element.tag == "model":
            name: str | None = element.get("name", "")
            where = f"{name!r} (line {line(element)})"
        else:
            name = (element.findtext("name") or "").strip() or None
            where = f"{(element.findtext('uri') or '').strip()!r} (line {line(element)})"
            if element.get("merge", "false").strip() in ("true", "1"):
                ctx.warn("merge in a <world> is not read; included as a model", element, where)
        try:
            model = element
            if element.tag == "include":
                model = includer.load(element)
            includer.expand(model)
        except ModelError as error:
            what = f"model {name!r}" if element.tag == "model" else "<include>"
            ctx.warn(f"left out as scenery: {_why(ctx, error)}", element, what)
            unread.append(_Unread(name, where, error))
            continue
        if model is not element:
            world.replace(element, model)
        models.append(model)
    return models


def _why(ctx: Context, error: ModelError) -> str:
    """The error's reason, with its place where that is in another file."""
    return error.reason if error.source == ctx.top.source else str(error)


def _listed(ctx: Context, models: Sequence[etree._Element]) -> str:
    """Each model's name and where it is written (its file too if included)."""
    return ", ".join(f"{model.get('name')!r} ({_where(ctx, model)})" for model in models)


def _where(ctx: Context, element: etree._Element) -> str:
    source = ctx.origin(element).source
    prefix = "line " if source == ctx.top.source else f"{source}:"
    return f"{prefix}{line(element)}"


def _not_read(unread: list[_Unread]) -> str:
    return f"; not read: {', '.join(item.where for item in unread)}" if unread else ""
