"""Which ``<model>`` of an SDFormat file is the robot.

- ``model_name`` given: the model of that name, of ``<sdf>`` or of a ``<world>`` (included
  models by their ``<include><name>``, else their own name).
- ``<sdf><model>``: the first, as libsdformat's ``Root::Model()``.
- ``<sdf><world>``: a world holds the robot next to scenery (ground plane, buildings, lights,
  static models), written inline or included. The robot is the one model that is not
  ``<static>`` and has a joint (nested models' joints count); failing that, the one model that
  is not static. Several candidates are an error naming them, to be settled with
  ``model_name``. World-level includes that cannot be read (a Fuel web address, a model not on
  this machine's resource path, a broken file) are left out as scenery, with a warning.
"""

from __future__ import annotations

from collections.abc import Sequence

from lxml import etree

from ...errors import ModelError
from .context import Context, line
from .include import Includer


def select_model(
    ctx: Context, root: etree._Element, includer: Includer, model_name: str | None
) -> etree._Element:
    """The ``<model>`` to read (see the module docstring); ModelError naming the choices."""
    models = root.findall("model")
    worlds = root.findall("world")
    if model_name is None and models:
        return models[0]
    skipped: list[str] = []
    for world in worlds:
        models += _world_models(ctx, world, includer, skipped)
    if model_name is not None:
        for model in models:
            if model.get("name") == model_name:
                return model
        names = ", ".join(repr(m.get("name")) for m in models) or "none"
        raise ctx.error(
            f"no <model> named {model_name!r} (models: {names}){_left_out(skipped)}", root, "<sdf>"
        )
    if not worlds:
        raise ctx.error("no <model> in the description", root, "<sdf>")
    world = worlds[0]
    where = f"world {world.get('name')!r}"
    if not models and not skipped:
        raise ctx.error("world has no <model>; a robot description needs one", world, where)
    moving = [model for model in models if not ctx.flag(model, "static", where)]
    jointed = [model for model in moving if model.find(".//joint") is not None]
    for candidates, kind in (
        (jointed, "non-static models with joints"),
        (moving, "non-static models"),
    ):
        if len(candidates) == 1:
            return candidates[0]
        if candidates:
            raise ctx.error(
                f"{len(candidates)} {kind} could be the robot: {_listed(ctx, candidates)}; "
                "choose one with model_name",
                world,
                where,
            )
    static = f" (static: {_listed(ctx, models)})" if models else ""
    raise ctx.error(
        f"no model that could be the robot: every model is static{static}{_left_out(skipped)}",
        world,
        where,
    )


def _world_models(
    ctx: Context, world: etree._Element, includer: Includer, skipped: list[str]
) -> list[etree._Element]:
    """The models of ``world``, its includes loaded in their place; what could not be read is
    added to ``skipped`` (and warned about)."""
    models: list[etree._Element] = []
    for element in world:
        if element.tag == "model":
            models.append(element)
        elif element.tag == "include":
            uri = (element.findtext("uri") or "").strip()
            if element.get("merge", "false").strip() in ("true", "1"):
                ctx.warn("merge in a <world> is not read; included as a model", element, uri)
            try:
                model = includer.load(element)
            except ModelError as error:
                ctx.warn(f"left out as scenery: {error.reason}", element, "<include>")
                skipped.append(f"{uri!r} (line {line(element)})")
                continue
            world.replace(element, model)
            models.append(model)
    return models


def _listed(ctx: Context, models: Sequence[etree._Element]) -> str:
    """Each model's name and where it is written (its file too if included)."""
    return ", ".join(f"{model.get('name')!r} ({_where(ctx, model)})" for model in models)


def _where(ctx: Context, element: etree._Element) -> str:
    source = ctx.origin(element).source
    prefix = "line " if source == ctx.top.source else f"{source}:"
    return f"{prefix}{line(element)}"


def _left_out(skipped: list[str]) -> str:
    return f"; includes not read: {', '.join(skipped)}" if skipped else ""
