"""What every SDFormat reader shares: where each element came from, diagnostics, readers.

A robot may be read from several files (``<include>``), each with its own SDFormat version,
and from nested models, each a naming scope. ``Context`` records the file (``FileOrigin``) of
the elements copied in from other files and the scope of each ``<model>`` element, and finds
them for any element by walking up its ancestors; errors and warnings name that file.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from itertools import chain
from pathlib import Path

from lxml import etree

from ...errors import LOGGER, Diagnostics, ModelError, locate
from ..xmlio import line_of

Version = tuple[int, int]

#: SDFormat versions read, as written in ``<sdf version>``.
SUPPORTED_VERSIONS = ("1.4", "1.5", "1.6", "1.7", "1.8", "1.9", "1.10", "1.11")

MODEL_FRAME = "__model__"
WORLD = "world"
#: What separates the names of nested models and their elements: ``outer::inner::link``.
SCOPE_SEPARATOR = "::"


@dataclass(frozen=True)
class FileOrigin:
    """A description text: its name in messages, its SDFormat version, and the folder that
    relative ``<include>`` URIs in it start from (None for text not read from a file)."""

    source: str
    version: Version
    folder: Path | None


class SourcedDiagnostics(Diagnostics):
    """Diagnostics whose messages name the file an element label (``joint 'j'``) came from.

    The model checks shared with URDF (``model.validate``) report by label and line; labels
    of elements read from an included file are mapped to that file here.
    """

    def __init__(self, source: str) -> None:
        super().__init__(source)
        self.label_sources: dict[str, str] = {}

    def source_of(self, label: str | None) -> str:
        return self.label_sources.get(label, self.source) if label else self.source

    def error(
        self, message: str, line: int | None = None, element: str | None = None
    ) -> ModelError:
        return ModelError(message, source=self.source_of(element), line=line, element=element)

    def warn(self, message: str, line: int | None = None, element: str | None = None) -> None:
        text = locate(message, source=self.source_of(element), line=line, element=element)
        LOGGER.warning("%s", text)
        self.warnings.append(text)


def line(element: etree._Element | None) -> int | None:
    """The source line of ``element``, if known."""
    return line_of(element) if element is not None else None


def read_version(root: etree._Element, source: str) -> Version:
    """The version of an ``<sdf>`` root; ModelError naming the supported ones if not one."""
    text = root.get("version", "").strip()
    if text not in SUPPORTED_VERSIONS:
        shown = repr(text) if text else "missing"
        raise ModelError(
            f"SDFormat version {shown}; supported: {', '.join(SUPPORTED_VERSIONS)}",
            source=source,
            line=line(root),
            element="<sdf>",
        )
    major, minor = text.split(".")
    return int(major), int(minor)


def scoped(scope: str, name: str) -> str:
    """``name`` as written in a model of scope ``scope`` ("" at the top), as a top-level name.

    ``__model__`` is the scope's model frame (named like the scope), ``a::__model__`` the frame
    of nested model ``a``; ``world`` and the empty string stay as they are.
    """
    if not name or name == WORLD:
        return name
    if name == MODEL_FRAME:
        return scope or MODEL_FRAME
    suffix = SCOPE_SEPARATOR + MODEL_FRAME
    if name.endswith(suffix):
        name = name[: -len(suffix)]
    return f"{scope}{SCOPE_SEPARATOR}{name}" if scope else name


class Context:
    """Diagnostics and element origins for reading one robot model."""

    def __init__(self, top: FileOrigin) -> None:
        self.top = top
        self.diag = SourcedDiagnostics(top.source)
        self._files: dict[etree._Element, FileOrigin] = {}
        self._scopes: dict[etree._Element, str] = {}
        self._merged: dict[etree._Element, str] = {}
        self._model_frames: dict[etree._Element, str] = {}

    # -- where an element came from ------------------------------------------------------------

    def set_origin(self, element: etree._Element, origin: FileOrigin) -> None:
        """``element`` and everything under it were read from ``origin``."""
        self._files[element] = origin

    def set_scope(self, model: etree._Element, scope: str) -> None:
        """The elements of ``model`` (a ``<model>``) are named in ``scope``."""
        self._scopes[model] = scope

    def mark_merged(self, marker: etree._Element, canonical: str) -> None:
        """``marker`` is the ``<model>`` left by a merged include whose canonical link is
        ``canonical`` (named in the model it was merged into)."""
        self._merged[marker] = canonical

    def merged_canonical(self, model: etree._Element) -> str | None:
        """The canonical link of a merged include's marker; None for any other model."""
        return self._merged.get(model)

    def set_model_frame(self, element: etree._Element, frame: str) -> None:
        """``element`` came from a merged include: its ``__model__`` is ``frame`` (the proxy
        frame, named in the model it was merged into). The first (innermost) merge wins."""
        self._model_frames.setdefault(element, frame)

    def origin(self, element: etree._Element | None) -> FileOrigin:
        for node in _self_and_ancestors(element):
            found = self._files.get(node)
            if found is not None:
                return found
        return self.top

    def version(self, element: etree._Element | None) -> Version:
        return self.origin(element).version

    def scope(self, element: etree._Element) -> str:
        """The scope ``element`` is named in: that of the nearest enclosing ``<model>``."""
        for node in _self_and_ancestors(element.getparent()):
            found = self._scopes.get(node)
            if found is not None:
                return found
        return ""

    def scope_frame(self, element: etree._Element) -> str:
        """What ``__model__`` means where ``element`` is written: the frame of the enclosing
        model (``__model__`` at the top, else named like its scope), or a merged include's
        proxy frame."""
        for node in _self_and_ancestors(element):
            proxy = self._model_frames.get(node)
            if proxy is not None:
                return scoped(self.scope(node), proxy)
            if node is not element and node in self._scopes:
                return self._scopes[node] or MODEL_FRAME
        return MODEL_FRAME

    def label(self, what: str, element: etree._Element) -> None:
        """Messages about ``what`` (``joint 'j'``) from the model checks name element's file."""
        source = self.origin(element).source
        if source != self.top.source:
            self.diag.label_sources[what] = source

    # -- diagnostics -----------------------------------------------------------------------------

    def error(
        self, message: str, element: etree._Element | None, what: str | None = None
    ) -> ModelError:
        source = self.origin(element).source
        return ModelError(message, source=source, line=line(element), element=what)

    def warn(self, message: str, element: etree._Element | None, what: str | None = None) -> None:
        text = locate(message, source=self.origin(element).source, line=line(element), element=what)
        LOGGER.warning("%s", text)
        self.diag.warnings.append(text)

    # -- small readers ---------------------------------------------------------------------------

    def numbers(
        self, element: etree._Element, count: int | tuple[int, ...], what: str, finite: bool = True
    ) -> list[float]:
        """The whitespace-separated numbers of ``element``'s text; ModelError if malformed."""
        words = (element.text or "").split()
        counts = (count,) if isinstance(count, int) else count
        if len(words) not in counts:
            wanted = " or ".join(str(c) for c in counts)
            raise self.error(
                f"<{element.tag}> needs {wanted} numbers, got {len(words)}", element, what
            )
        try:
            values = [float(word) for word in words]
        except ValueError:
            raise self.error(
                f"<{element.tag}> is not a list of numbers: {(element.text or '').strip()!r}",
                element,
                what,
            ) from None
        for value in values:
            if math.isnan(value) or (finite and math.isinf(value)):
                raise self.error(f"<{element.tag}> must be finite, got {value}", element, what)
        return values

    def number(
        self, parent: etree._Element, tag: str, default: float, what: str, finite: bool = True
    ) -> float:
        element = parent.find(tag)
        if element is None:
            return default
        return self.numbers(element, 1, what, finite=finite)[0]

    def flag(self, parent: etree._Element, tag: str, what: str) -> bool | None:
        """``<tag>`` of ``parent`` as true/false (1/0), None if absent; ModelError if neither."""
        element = parent.find(tag)
        if element is None:
            return None
        text = (element.text or "").strip().lower()
        if text in ("1", "true"):
            return True
        if text in ("0", "false"):
            return False
        raise self.error(f"<{tag}> must be true or false, got {text!r}", element, what)

    def required_text(self, parent: etree._Element, tag: str, what: str) -> str:
        element = parent.find(tag)
        text = (element.text or "").strip() if element is not None else ""
        if not text:
            raise self.error(f"missing <{tag}>", element if element is not None else parent, what)
        return text


def _self_and_ancestors(element: etree._Element | None) -> chain[etree._Element]:
    if element is None:
        return chain()
    return chain([element], element.iterancestors())
