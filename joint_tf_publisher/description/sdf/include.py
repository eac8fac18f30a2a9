"""``<include>``: the model of another SDFormat file, put in place as libsdformat does.

The ``<uri>`` is found as ``uris.resolve`` says and read with the same hardened XML parser as
the description itself, its ``<sdf version>`` checked, and its first ``<model>`` (with its own
includes expanded) takes the include's place, as a nested model. The include's ``<name>``,
``<pose>`` (with its attributes), ``<static>`` and ``<placement_frame>`` (which needs a
``<pose>``) override the model's. With ``merge="true"`` (SDFormat 1.9+, in a model), the
included model's links, joints, frames and nested models join the including model's scope
instead, and what they called ``__model__`` becomes the proxy frame
``_merged__NAME__model__`` (``models.py``). Each element keeps the file and version it was
written in, for its meaning and for messages. Include cycles, more than
``MAX_INCLUDE_DEPTH`` files deep, more than ``MAX_INCLUDES`` includes or more than the
description size cap read in all are errors.
"""

from __future__ import annotations

from pathlib import Path

from lxml import etree

from ...errors import ModelError
from ..xmlio import MAX_DESCRIPTION_BYTES, drop_root_namespace, parse_xml, read_description
from .context import MODEL_FRAME, Context, FileOrigin, read_version
from .models import canonical_link_of, merged_frame_name
from .uris import RESOURCE_PATH_VARIABLES, NotFound, resolve

MAX_INCLUDE_DEPTH = 32
MAX_INCLUDES = 1000

#: What a merged model keeps of its own: the elements that name frames.
_MERGED_TAGS = ("link", "joint", "frame", "model")
#: Where merged elements may say ``__model__``, as "path@attribute" or a path to text.
_MODEL_REFERENCES = (
    "pose@relative_to",
    "@attached_to",
    "parent",
    "child",
    "axis/xyz@expressed_in",
    "axis2/xyz@expressed_in",
)


class Includer:
    """Expands the includes of one description, counting what it reads."""

    def __init__(self, ctx: Context, top_file: Path | None) -> None:
        self.ctx = ctx
        self.top_chain = (top_file.resolve(),) if top_file is not None else ()
        self.includes = 0
        self.bytes_read = 0

    def expand(self, model: etree._Element, chain: tuple[Path, ...] | None = None) -> None:
        """Replace every ``<include>`` in ``model`` and its nested models, in place."""
        chain = self.top_chain if chain is None else chain
        for include in model.findall("include"):
            included = self.load(include, chain)
            if self._merges(include):
                _merge(self.ctx, include, included)
            else:
                parent = include.getparent()
                assert parent is not None
                parent.replace(include, included)
        for nested in model.findall("model"):
            self.expand(nested, chain)

    def load(
        self, include: etree._Element, chain: tuple[Path, ...] | None = None
    ) -> etree._Element:
        """The model ``include`` names, its includes expanded and the overrides applied."""
        chain = self.top_chain if chain is None else chain
        ctx = self.ctx
        uri_element = include.find("uri")
        uri = (uri_element.text or "").strip() if uri_element is not None else ""
        if uri_element is None or not uri:
            raise ctx.error("<include> needs a <uri>", include, "<include>")
        try:
            path = resolve(uri, ctx.origin(include).folder)
        except NotFound as missing:
            raise ctx.error(_not_found(uri, missing), uri_element, "<include>") from None
        self._check_limits(path.resolve(), chain, uri_element)
        try:
            data = read_description(path)
        except ModelError as err:  # not a regular file, too large, outside the allowed folders
            raise ctx.error(f"{path}: {err.reason}", uri_element, "<include>") from None
        self.bytes_read += len(data)
        if self.bytes_read > MAX_DESCRIPTION_BYTES:
            raise ctx.error(
                f"includes read more than the {MAX_DESCRIPTION_BYTES} bytes allowed",
                uri_element,
                "<include>",
            )
        root = drop_root_namespace(parse_xml(data, str(path)))
        if root.tag != "sdf":
            raise ctx.error(f"{path} is not SDFormat (root <{root.tag}>)", uri_element, "<include>")
        model = root.find("model")
        if model is None:
            raise ctx.error(f"{path} has no <model> to include", uri_element, "<include>")
        ctx.set_origin(model, FileOrigin(str(path), read_version(root, str(path)), path.parent))
        self.expand(model, chain + (path.resolve(),))
        _override(ctx, include, model)
        return model

    def _check_limits(self, path: Path, chain: tuple[Path, ...], element: etree._Element) -> None:
        if path in chain:
            cycle = " -> ".join(str(p) for p in chain[chain.index(path) :] + (path,))
            raise self.ctx.error(f"include cycle: {cycle}", element, "<include>")
        if len(chain) >= MAX_INCLUDE_DEPTH:
            raise self.ctx.error(
                f"includes nested more than {MAX_INCLUDE_DEPTH} files deep", element, "<include>"
            )
        self.includes += 1
        if self.includes > MAX_INCLUDES:
            raise self.ctx.error(f"more than {MAX_INCLUDES} includes", element, "<include>")

    def _merges(self, include: etree._Element) -> bool:
        """Whether ``include`` asks for ``merge="true"`` where it can have it."""
        if include.get("merge", "false").strip() not in ("true", "1"):
            return False
        if self.ctx.version(include) < (1, 9):
            self.ctx.warn("'merge' needs SDFormat 1.9 or later; ignored", include, "<include>")
            return False
        return True


def _not_found(uri: str, missing: NotFound) -> str:
    message = f"cannot include {uri!r}: {missing.reason}"
    if missing.searched:
        message += f" (searched {', '.join(str(path) for path in missing.searched)})"
    elif uri.startswith("model://"):
        message += f" (no folder on {', '.join(RESOURCE_PATH_VARIABLES)})"
    return message


def _override(ctx: Context, include: etree._Element, model: etree._Element) -> None:
    """Apply the include's ``<name>``, ``<pose>``, ``<static>`` and ``<placement_frame>``."""
    name = (include.findtext("name") or "").strip()
    if name:
        model.set("name", name)
    pose = include.find("pose")
    if pose is not None:
        ctx.set_origin(pose, ctx.origin(include))  # read by the including file's version
        for own in model.findall("pose"):
            model.remove(own)
        model.insert(0, pose)
    static = include.find("static")
    if static is not None:
        for own in model.findall("static"):
            model.remove(own)
        model.append(static)
    placement = include.find("placement_frame")
    if placement is not None:
        if pose is None:
            raise ctx.error(
                "<placement_frame> needs a <pose> in the <include>", placement, "<include>"
            )
        model.set("placement_frame", (placement.text or "").strip())


def _merge(ctx: Context, include: etree._Element, model: etree._Element) -> None:
    """Put ``model``'s frames in place of ``include``, in the including model's scope.

    ``model`` stays behind, emptied, as the marker of the proxy frame: a ``<model>`` that
    ``models.flatten`` reads as the frame ``_merged__NAME__model__``.
    """
    name = model.get("name", "").strip()
    what = f"model {name!r}"
    canonical = canonical_link_of(ctx, model)
    if not canonical:
        raise ctx.error("model has no links", model, what)
    proxy = merged_frame_name(name)
    parent = include.getparent()
    assert parent is not None
    index = parent.index(include)
    parent.replace(include, model)
    ctx.mark_merged(model, canonical)
    for offset, child in enumerate([c for c in model if c.tag in _MERGED_TAGS]):
        ctx.set_origin(child, ctx.origin(child))  # before it leaves its file's <model>
        ctx.set_model_frame(child, proxy)
        _name_model_frame(child, proxy)
        parent.insert(index + offset, child)


def _name_model_frame(element: etree._Element, proxy: str) -> None:
    """Replace what ``element`` calls ``__model__`` by the proxy frame's name."""
    for reference in _MODEL_REFERENCES:
        path, _, attribute = reference.partition("@")
        target = element.find(path) if path else element
        if target is None:
            continue
        if attribute:
            if target.get(attribute, "").strip() == MODEL_FRAME:
                target.set(attribute, proxy)
        elif (target.text or "").strip() == MODEL_FRAME and element.tag == "joint":
            target.text = proxy
