"""Nested models, flattened into one model with the names libsdformat and Gazebo give them.

A link ``l`` of model ``inner`` nested in the robot's model is named ``inner::l``; deeper
nesting adds scopes (``outer::inner::l``). Names written inside a nested model refer to its own
elements, so every reference in it is scoped the same way: ``<parent>``, ``<child>``,
``relative_to``, ``attached_to``, ``expressed_in``, ``canonical_link``, ``placement_frame``,
``<gearbox_reference_body>`` and ``<mimic joint>``; ``__model__`` there is the nested model's
frame, named like its scope (``inner``, also reachable as ``inner::__model__``). A nested
model's ``<pose>`` is relative to its parent model's frame (or ``relative_to`` in the parent's
scope), and places its ``placement_frame`` instead of its model frame where one is named. Its
frame is attached to its canonical link (libsdformat's rule: ``canonical_link``, else its first
link, else the canonical link of its first nested model). A static nested model may have no
link at all (libsdformat's STATIC_MODEL): fixed to the world, it carries no published frame.

Before SDFormat 1.7 a joint could share its name with a link or nested model of its model;
libsdformat renames such a joint ``NAME_joint`` (a link written after a joint or nested model
of its name ``NAME_link``), with a warning, and so does ``flatten``: Gazebo's joint states use
the new name.

A merged include (``<include merge="true">``, ``include.py``) leaves its elements in the
parent's scope and an empty ``<model>`` as a marker: it becomes the proxy frame
``_merged__NAME__model__``, which stands for the included model's ``__model__``.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from lxml import etree

from .context import SCOPE_SEPARATOR, Context, scoped

#: Elements of a model that name frames, with the reference attributes ("@name") and texts.
_REFERENCES: dict[str, tuple[str, ...]] = {
    "link": ("pose@relative_to",),
    "frame": ("@attached_to", "pose@relative_to"),
    "joint": (
        "parent",
        "child",
        "pose@relative_to",
        "axis/xyz@expressed_in",
        "axis2/xyz@expressed_in",
        "axis/mimic@joint",
        "axis2/mimic@joint",
        "gearbox_reference_body",
    ),
}


@dataclass
class ModelFrame:
    """The frame of a nested model (or a merged include's proxy frame), by scoped names."""

    name: str
    element: etree._Element
    canonical: str
    placement: str


@dataclass
class FlatModel:
    """The links, joints and ``<frame>``s of a model and all its nested models, file order."""

    links: list[etree._Element] = field(default_factory=list)
    joints: list[etree._Element] = field(default_factory=list)
    frames: list[etree._Element] = field(default_factory=list)
    models: list[ModelFrame] = field(default_factory=list)
    canonical: str = ""


def merged_frame_name(model_name: str) -> str:
    """libsdformat's name of a merged include's proxy frame."""
    return f"_merged__{model_name}__model__"


def flatten(ctx: Context, model: etree._Element) -> FlatModel:
    """Scope every name in ``model``'s nested models and gather their elements (in place)."""
    flat = FlatModel()
    flat.canonical = _flatten_into(ctx, model, "", flat, f"model {model.get('name')!r}")
    return flat


def canonical_link_of(ctx: Context, model: etree._Element) -> str:
    """A model's canonical link as named inside it ("" if it has no link at all)."""
    merged = ctx.merged_canonical(model)
    if merged is not None:
        return merged
    written = model.get("canonical_link", "").strip()
    if written and ctx.version(model) >= (1, 7):
        return written
    link = model.find("link")
    if link is not None:
        return link.get("name", "").strip()
    nested = model.find("model")
    if nested is None:
        return ""
    inner = canonical_link_of(ctx, nested)
    if not inner or ctx.merged_canonical(nested) is not None:
        return inner  # a merged include's elements are named in this model
    return f"{nested.get('name', '').strip()}{SCOPE_SEPARATOR}{inner}"


def _flatten_into(
    ctx: Context, model: etree._Element, scope: str, flat: FlatModel, what: str
) -> str:
    """Add ``model``'s elements, named in ``scope``; returns its canonical link (scoped)."""
    ctx.set_scope(model, scope)
    _rename_colliding_names(ctx, model, what)
    canonical = scoped(scope, canonical_link_of(ctx, model))  # before the names change
    for child in model:
        tag = child.tag
        if tag in _REFERENCES:
            _scope_references(child, scope)
            getattr(flat, f"{tag}s").append(child)
        elif tag == "model":
            flat.models.append(_nested(ctx, child, scope, flat))
    if not canonical:
        if scope and ctx.flag(model, "static", what):
            return ""  # a static nested model may have no link (libsdformat's STATIC_MODEL)
        raise ctx.error("model has no links", model, what)
    if canonical not in {link.get("name") for link in flat.links}:
        written = model.get("canonical_link", "").strip()
        raise ctx.error(f"canonical_link {written!r} is not a link of the model", model, what)
    return canonical


def _rename_colliding_names(ctx: Context, model: etree._Element, what: str) -> None:
    """Before 1.7, rename (in place, with a warning) each link or joint whose name an earlier
    element of another kind (link, joint, nested model) of ``model`` has, as libsdformat's
    Model::Load does: ``NAME_link`` or ``NAME_joint``, then ``NAME_joint0``, ``NAME_joint1``
    ... until free. Two elements of one kind and name stay an error (``PoseGraph.add``)."""
    if ctx.version(model) >= (1, 7):
        return
    kinds: dict[str, str] = {}
    for child in model:
        if child.tag not in ("link", "joint", "model"):
            continue
        name = child.get("name", "").strip()
        earlier = kinds.get(name)
        if name and child.tag != "model" and earlier not in (None, child.tag):
            new_name = f"{name}_{child.tag}"
            counter = 0
            while new_name in kinds:
                new_name = f"{name}_{child.tag}{counter}"
                counter += 1
            ctx.warn(
                f"name {name!r} is already used by a {earlier} of {what}; renamed {new_name!r}, "
                "as libsdformat does before SDFormat 1.7",
                child,
                f"{child.tag} {name!r}",
            )
            child.set("name", new_name)
            name = new_name
        kinds.setdefault(name, child.tag)


def _nested(ctx: Context, model: etree._Element, scope: str, flat: FlatModel) -> ModelFrame:
    """The frame of a nested ``<model>`` (its elements added to ``flat``), or of the marker a
    merged include left."""
    name = model.get("name", "").strip()
    if not name:
        raise ctx.error("<model> needs a 'name'", model, "model")
    _scope_attribute(model.find("pose"), "relative_to", scope)
    placement = model.get("placement_frame", "").strip()
    merged = ctx.merged_canonical(model)
    if merged is not None:
        ctx.set_scope(model, scope)
        frame_name = scoped(scope, merged_frame_name(name))
        return ModelFrame(frame_name, model, scoped(scope, merged), scoped(scope, placement))
    inner_scope = scoped(scope, name)
    canonical = _flatten_into(ctx, model, inner_scope, flat, f"model {inner_scope!r}")
    return ModelFrame(inner_scope, model, canonical, scoped(inner_scope, placement))


def _scope_references(element: etree._Element, scope: str) -> None:
    """Rename ``element`` and the frames it refers to into ``scope``, in place."""
    _scope_attribute(element, "name", scope)
    for reference in _REFERENCES[element.tag]:
        path, _, attribute = reference.partition("@")
        target = element.find(path) if path else element
        if target is None:
            continue
        if attribute:
            _scope_attribute(target, attribute, scope)
        elif target.text and target.text.strip():
            target.text = scoped(scope, target.text.strip())


def _scope_attribute(element: etree._Element | None, attribute: str, scope: str) -> None:
    if element is None:
        return
    value = element.get(attribute, "").strip()
    if value:
        element.set(attribute, scoped(scope, value))
