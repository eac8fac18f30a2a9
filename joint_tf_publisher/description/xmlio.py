"""Safe XML parsing for robot descriptions, which may come from untrusted sources.

A robot_description parameter can be set by anything on the ROS graph, so the parser
resolves no external entities, loads no DTD, touches no network, and refuses huge trees.
Markup in a namespace prefix the text never declares is read as urdfdom reads it: as unknown
markup (``prefixes``), under the same protections.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import cast

from lxml import etree

from ..errors import LOGGER, ModelError
from .files import read_regular_file
from .prefixes import (
    UNDECLARED_PREFIX_NAMESPACE,
    declare_on_root,
    is_undeclared_prefix,
    prefix_candidates,
    undeclared_prefixes,
)

#: Largest description accepted, in bytes (a PR2 URDF is about 0.4 MB).
MAX_DESCRIPTION_BYTES = 32 * 1024 * 1024

#: Most text that internal entity references may add, where libxml2 has no limit of its own.
MAX_ENTITY_EXPANSION_BYTES = 4 * 1024 * 1024

#: The first libxml2 with its own entity amplification limit ("Maximum entity amplification
#: factor exceeded"). Older ones (2.9.x: Ubuntu 22.04 and 24.04, so Humble and Jazzy with the
#: system python3-lxml) expand a quadratic blowup in an attribute for minutes.
LIBXML2_WITH_AMPLIFICATION_LIMIT = (2, 11, 0)

#: Most parses of one text while declaring undeclared prefixes (each round adds some).
MAX_PREFIX_ROUNDS = 4

_INTERNAL_ENTITY = re.compile(rb"""<!ENTITY\s+([^\s%"'<>&;]+)\s+(?:"([^"]*)"|'([^']*)')""")
_INTERNAL_PARAMETER_ENTITY = re.compile(rb"""<!ENTITY\s+%\s*[^\s"'<>]+\s+["']""")
_ENTITY_REFERENCE = re.compile(rb"""&([^\s%"'<>&;#]+);""")
#: How a document in a wide encoding starts (BOM, or "<" without one), most specific first.
_WIDE_ENCODINGS = (
    (b"\x00\x00\xfe\xff", "utf-32"),
    (b"\xff\xfe\x00\x00", "utf-32"),
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16"),
    (b"\xff\xfe", "utf-16"),
    (b"\x00<", "utf-16-be"),
    (b"<\x00", "utf-16-le"),
)


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
    if not libxml2_limits_expansion(etree.LIBXML_VERSION):
        check_entity_expansion(data, source)
    root = _parse_declaring_prefixes(data, source)
    if root is None:
        raise ModelError("description has no root element", source=source)
    return root


def _parse_declaring_prefixes(data: bytes, source: str) -> etree._Element | None:
    """Parse ``data`` with the hardened parser, reading undeclared prefixes as urdfdom does.

    XML readers without namespace processing (urdfdom's TinyXML2, libsdformat) read
    ``<drake:joint>`` or ``drake:acceleration="..."`` without any ``xmlns:drake`` as plain
    unknown markup; libxml2 refuses them. Where a parse fails with undeclared prefixes as its
    only errors, those prefixes (and any other the text appears to use without declaring it)
    are declared on the root's start tag (``prefixes.declare_on_root``), and the text is
    parsed again by the same strict parser. The declarations add no line break, so every line
    number is still that of ``data`` (columns on the root's line move). Any other error is
    reported with its own line, even where undeclared prefixes come before it.
    """
    text = data
    declared: set[str] = set()
    reported: set[str] = set()
    for _ in range(MAX_PREFIX_ROUNDS):
        parser = _safe_parser()
        try:
            root = etree.fromstring(text, parser=parser)
        except etree.XMLSyntaxError as exc:
            # The parser's own log: the exception's may hold errors of earlier parses.
            errors = [e for e in parser.error_log if e.level >= etree.ErrorLevels.ERROR]
            missing = undeclared_prefixes(errors)
            if not missing or missing <= declared:
                raise _syntax_error(exc, errors, source) from None
            reported |= missing
            if not declared:
                missing |= prefix_candidates(data)
            declared |= missing
            with_declarations = declare_on_root(data, sorted(declared))
            if with_declarations is None:
                raise _syntax_error(exc, errors, source) from None
            text = with_declarations
            continue
        if reported:
            LOGGER.info(
                "%s: namespace prefix(es) %s used without a declaration: read as extension "
                "markup (ignored)",
                source,
                ", ".join(sorted(reported)),
            )
        return root
    # Each round declares at least one more prefix; this many rounds means a hostile text.
    raise ModelError(
        f"malformed XML: more than {MAX_PREFIX_ROUNDS} rounds of undeclared namespace prefixes",
        source=source,
    )


def _syntax_error(
    exc: etree.XMLSyntaxError, errors: list[etree._LogEntry], source: str
) -> ModelError:
    """ModelError for a failed parse: its first error (``errors``, of level ERROR or above)
    other than an undeclared prefix; ``exc``'s own where there is none."""
    real = [e for e in errors if not is_undeclared_prefix(e)]
    if not real:
        line = exc.lineno if exc.lineno else None
        message = " ".join(str(exc.msg).split())  # libxml2 messages may span lines
        return ModelError(f"malformed XML: {message}", source=source, line=line)
    first = real[0]
    message = " ".join(str(first.message).split())
    return ModelError(
        f"malformed XML: {message}, line {first.line}, column {first.column}",
        source=source,
        line=first.line if first.line else None,
    )


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
    if namespace.startswith(UNDECLARED_PREFIX_NAMESPACE):
        return root  # an undeclared prefix on the root: not a robot or sdf element
    prefix = f"{{{namespace}}}"
    for element in list(root.iter(f"{prefix}*")):
        element.tag = element.tag[len(prefix) :]
    return root


def libxml2_limits_expansion(version: tuple[int, ...]) -> bool:
    """True if libxml2 ``version`` refuses entity amplification itself (2.11 and later)."""
    return tuple(version[:3]) >= LIBXML2_WITH_AMPLIFICATION_LIMIT


def check_entity_expansion(data: bytes, source: str = "<string>") -> None:
    """Refuse ``data`` if its internal entities would expand it by too much.

    What libxml2 2.11 and later do themselves, for older ones: the text the entity references
    would add (nested references counted through) must stay within MAX_ENTITY_EXPANSION_BYTES,
    and internal parameter entities (of no use in a robot description) are refused. Counts are
    upper bounds: a reference inside a comment counts too. ModelError names the line of the
    first reference (of the most expanding entity) that crosses the bound.
    """
    data = _as_utf8(data)
    if b"<!ENTITY" not in data:
        return
    parameter = _INTERNAL_PARAMETER_ENTITY.search(data)
    if parameter is not None:
        raise ModelError(
            "malformed XML: internal parameter entities are refused",
            source=source,
            line=data.count(b"\n", 0, parameter.start()) + 1,
        )
    values = {
        match.group(1): match.group(2) if match.group(2) is not None else match.group(3)
        for match in _INTERNAL_ENTITY.finditer(data)
    }
    # References in the declarations count through the entities using them, not on their own.
    outside = _INTERNAL_ENTITY.sub(lambda match: b"\n" * match[0].count(b"\n"), data)
    sizes: dict[bytes, int] = {}
    added = 0
    for reference in _ENTITY_REFERENCE.finditer(outside):
        expanded = _expanded_size(reference.group(1), values, sizes, set())
        added += expanded - len(reference[0])
        if max(added, expanded) > MAX_ENTITY_EXPANSION_BYTES:
            raise ModelError(
                f"malformed XML: entity expansion refused: entity references would add more"
                f" than the {MAX_ENTITY_EXPANSION_BYTES} bytes allowed (amplification;"
                f" libxml2 {_version_text(etree.LIBXML_VERSION)} has no limit of its own)",
                source=source,
                line=outside.count(b"\n", 0, reference.start()) + 1,
            )


def _as_utf8(data: bytes) -> bytes:
    """``data`` in UTF-8 if it is UTF-16 or UTF-32 (as libxml2 detects them), else as is."""
    for start, encoding in _WIDE_ENCODINGS:
        if data.startswith(start):
            return data.decode(encoding, errors="replace").encode("utf-8")
    return data


def _expanded_size(
    name: bytes, values: dict[bytes, bytes], sizes: dict[bytes, int], open_names: set[bytes]
) -> int:
    """Bytes that ``&name;`` expands to (its own length if not an internal entity; memoized).

    A reference loop counts as unbounded (libxml2 refuses it anyway).
    """
    if name in sizes:
        return sizes[name]
    value = values.get(name)
    if value is None:
        return len(name) + 2
    if name in open_names:
        return MAX_ENTITY_EXPANSION_BYTES + 1
    open_names.add(name)
    size = len(value)
    for reference in _ENTITY_REFERENCE.finditer(value):
        size += _expanded_size(reference.group(1), values, sizes, open_names) - len(reference[0])
        size = min(size, MAX_ENTITY_EXPANSION_BYTES + 1)
    open_names.discard(name)
    sizes[name] = size
    return size


def _version_text(version: tuple[int, ...]) -> str:
    return ".".join(str(part) for part in version)


def read_description(path: Path, source: str | None = None) -> bytes:
    """The bytes of a description file (``files.read_regular_file``: a regular file of at
    most MAX_DESCRIPTION_BYTES, within the folders the current rules allow); ModelError
    naming the file (or ``source``) and the reason, never its content."""
    return read_regular_file(path, MAX_DESCRIPTION_BYTES, source)


def written_tag(element: etree._Element) -> str:
    """``element``'s name as the text writes it: ``drake:robot``, not ``{namespace}robot``."""
    tag: object = element.tag
    if not isinstance(tag, str):
        return ""
    local = etree.QName(tag).localname
    return f"{element.prefix}:{local}" if element.prefix else local


def line_of(element: etree._Element) -> int | None:
    """The line ``element`` starts on in its text (1-based), or None if unknown.

    Use this instead of ``element.sourceline``, which lxml-stubs types loosely.
    """
    return cast("int | None", element.sourceline)
