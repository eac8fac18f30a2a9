"""Which ``<model>`` of an SDFormat file is the robot."""

from __future__ import annotations

from lxml import etree

from ...errors import ModelError
from .context import line


def select_model(root: etree._Element, source: str, model_name: str | None) -> etree._Element:
    """The ``<model>`` to read: named, else the first under ``<sdf>`` or its ``<world>``s."""
    models = list(root.findall("model")) + list(root.findall("world/model"))
    if model_name is not None:
        for model in models:
            if model.get("name") == model_name:
                return model
        names = ", ".join(repr(m.get("name")) for m in models) or "none"
        raise _error(f"no <model> named {model_name!r} (models: {names})", source, root, "<sdf>")
    if models:
        return models[0]
    include = root.find("include")
    if include is None:
        include = root.find("world/include")
    if include is not None:
        raise _error(
            "<include> is not supported: expand included models into the file "
            "(e.g. with 'gz sdf -p')",
            source,
            include,
            "<include>",
        )
    world = root.find("world")
    if world is not None:
        raise _error(
            "world has no <model>; a robot description needs one",
            source,
            world,
            f"world {world.get('name')!r}",
        )
    raise _error("no <model> in the description", source, root, "<sdf>")


def _error(message: str, source: str, element: etree._Element, what: str) -> ModelError:
    return ModelError(message, source=source, line=line(element), element=what)
