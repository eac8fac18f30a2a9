"""Safe XML parsing for robot descriptions, which may come from untrusted sources.

A robot_description parameter can be set by anything on the ROS graph, so the parser
resolves no external entities, loads no DTD, touches no network, and refuses huge trees.
"""

from __future__ import annotations

from pathlib import Path
from typing import cast

from lxml import etree

from .errors import ModelError

#: Largest description accepted, in bytes (a PR2 URDF is about 0.4 MB).
MAX_DESCRIPTION_BYTES = 32 * 1024 * 1024


def _safe_parser() -> etree.XMLParser:
    return etree.XMLParser(
        resolve_entities=False,
        no_network=True,
        load_dtd=False,
        dtd_validation=False,
        huge_tree=False,
        remove_comments=True,
        remove_pis=True,
    )


def parse_xml(text: str | bytes, source: str = "<string>") -> etree._Element:
    """Parse ``text`` into its root element; ModelError (with line) on malformed or hostile XML."""
    try:
        data = text.encode("utf-8") if isinstance(text, str) else text
    except UnicodeEncodeError as exc:
        raise ModelError(
            f"description is not valid Unicode: {exc.reason} at character {exc.start}",
            source=source,
        ) from None
    if len(data) > MAX_DESCRIPTION_BYTES:
        raise ModelError(
            f"description is {len(data)} bytes, more than the {MAX_DESCRIPTION_BYTES} allowed",
            source=source,
        )
    if not data.strip():
        raise ModelError("description is empty", source=source)
    try:
        root = etree.fromstring(data, parser=_safe_parser())
    except etree.XMLSyntaxError as exc:
        line = exc.lineno if exc.lineno else None
        message = " ".join(str(exc.msg).split())  # libxml2 messages may span lines
        raise ModelError(f"malformed XML: {message}", source=source, line=line) from None
    if root is None:
        raise ModelError("description has no root element", source=source)
    return root


def drop_root_namespace(root: etree._Element) -> etree._Element:
    """Take the namespace of ``root``'s own tag off every element in that namespace, in place.

    A description may declare a default namespace on its root (``<robot xmlns="...">``, some
    xacro outputs), which puts every unprefixed element in it: ``{ns}joint`` instead of
    ``joint``. The parsers read plain tags, so those elements are renamed to their local names.
    Elements of other namespaces (``xacro:``, extension blocks) keep theirs, and are ignored as
    before. Renaming keeps each element's source line. Returns ``root``.
    """
    namespace = etree.QName(root).namespace
    if not namespace:
        return root
    prefix = f"{{{namespace}}}"
    for element in list(root.iter(f"{prefix}*")):
        element.tag = element.tag[len(prefix) :]
    return root


def read_description(path: Path) -> bytes:
    """The bytes of a description file, refusing (without reading on) one over the size cap."""
    with path.open("rb") as stream:
        data = stream.read(MAX_DESCRIPTION_BYTES + 1)
    if len(data) > MAX_DESCRIPTION_BYTES:
        raise ModelError(
            f"description is more than the {MAX_DESCRIPTION_BYTES} bytes allowed", source=str(path)
        )
    return data


def line_of(element: etree._Element) -> int | None:
    """The line ``element`` starts on in its text (1-based), or None if unknown.

    Use this instead of ``element.sourceline``, which lxml-stubs types loosely.
    """
    return cast("int | None", element.sourceline)
