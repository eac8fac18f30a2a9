"""Namespace prefixes a description uses without declaring them, read as urdfdom reads them.

XML readers without namespace processing (urdfdom's TinyXML2, libsdformat) read
``<drake:joint>`` or ``drake:acceleration="..."`` in a file that never declares ``xmlns:drake``
as plain unknown markup, which robot description parsers ignore. libxml2 refuses such a
file. ``xmlio.parse_xml`` uses this module where a strict parse fails with undeclared prefixes
as its only errors: the prefixes are declared on the root's start tag (in
UNDECLARED_PREFIX_NAMESPACE, on the root's own line, so no line number changes) and the text is
parsed again by the same strict parser.
"""

from __future__ import annotations

import re

from lxml import etree

#: Namespace (plus the prefix) given to a prefix the text uses without declaring it.
UNDECLARED_PREFIX_NAMESPACE = "urn:joint-tf-publisher:undeclared-prefix:"

#: libxml2's message for an undeclared prefix, on an element or on an attribute.
_UNDECLARED_PREFIX_MESSAGE = re.compile(r"Namespace prefix (\S+) (?:on|for) ")
#: A prefixed element (``<p:x``, ``</p:x``) or attribute (`` p:x=``) name.
_PREFIXED_NAME = re.compile(r"(?:</?|\s)([A-Za-z_][A-Za-z0-9_.-]*):[A-Za-z_][A-Za-z0-9_.-]*")
_PREFIX_DECLARATION = re.compile(r"\bxmlns:([A-Za-z_][A-Za-z0-9_.-]*)\s*=")
_ASCII_PREFIX = re.compile(r"[A-Za-z_][A-Za-z0-9_.-]*")
_XML_NAME = re.compile(r"[^\s/>]+")

#: How a document in a wide encoding starts (BOM, or "<" without one), most specific first,
#: and the codec (with its byte order) that decodes and encodes it alike.
_WIDE_ENCODINGS = (
    (b"\x00\x00\xfe\xff", "utf-32-be"),
    (b"\xff\xfe\x00\x00", "utf-32-le"),
    (b"\x00\x00\x00<", "utf-32-be"),
    (b"<\x00\x00\x00", "utf-32-le"),
    (b"\xfe\xff", "utf-16-be"),
    (b"\xff\xfe", "utf-16-le"),
    (b"\x00<", "utf-16-be"),
    (b"<\x00", "utf-16-le"),
)


def is_undeclared_prefix(error: etree._LogEntry) -> bool:
    """True if libxml2's ``error`` is a namespace prefix used without a declaration."""
    return bool(error.type == etree.ErrorTypes.NS_ERR_UNDEFINED_NAMESPACE)


def undeclared_prefixes(errors: list[etree._LogEntry]) -> set[str]:
    """The prefixes undeclared according to ``errors``; empty if any is another error."""
    prefixes: set[str] = set()
    for error in errors:
        match = _UNDECLARED_PREFIX_MESSAGE.match(error.message)
        if not is_undeclared_prefix(error) or match is None:
            return set()
        prefixes.add(match.group(1))
    return prefixes


def prefix_candidates(data: bytes) -> set[str]:
    """Prefixes ``data`` appears to use in element or attribute names but never declares.

    An over-estimate is harmless (an unused declaration changes nothing); prefixes declared
    anywhere are left out, so that none is declared twice on the root.
    """
    try:
        text = data.decode(_scan_encoding(data))
    except UnicodeDecodeError:
        return set()
    used = {match.group(1) for match in _PREFIXED_NAME.finditer(text)}
    declared = {match.group(1) for match in _PREFIX_DECLARATION.finditer(text)}
    return {prefix for prefix in used - declared if not prefix.lower().startswith("xml")}


def declare_on_root(data: bytes, prefixes: list[str]) -> bytes | None:
    """``data`` with ``xmlns:<prefix>`` declarations added right after the root's name.

    None if the root's start tag is not found (an encoding the scan does not read). Nothing
    is added but attributes on the root's own line, so line numbers do not change.
    """
    if not all(_ASCII_PREFIX.fullmatch(prefix) for prefix in prefixes):
        return None  # its bytes depend on the text's encoding, which the scan does not know
    encoding = _scan_encoding(data)
    try:
        text = data.decode(encoding)
    except UnicodeDecodeError:
        return None
    end = _root_name_end(text)
    if end is None:
        return None
    declarations = "".join(
        f' xmlns:{prefix}="{UNDECLARED_PREFIX_NAMESPACE}{prefix}"' for prefix in prefixes
    )
    return (text[:end] + declarations + text[end:]).encode(encoding)


def _scan_encoding(data: bytes) -> str:
    """A codec that reads ``data`` losslessly for the scan: its wide encoding, or latin-1.

    Latin-1 maps every byte to one character, so in any ASCII-compatible encoding (UTF-8,
    ISO-8859-x, ...) the markup characters the scan looks for are where they are in bytes.
    """
    for start, encoding in _WIDE_ENCODINGS:
        if data.startswith(start):
            return encoding
    return "latin-1"


def _root_name_end(text: str) -> int | None:
    """Index just after the root element's name in well-formed XML ``text``, or None.

    Skips what may come before the root: a byte order mark, the XML declaration,
    processing instructions, comments, whitespace and a document type declaration (with its
    internal subset).
    """
    index = 0
    # A byte order mark as decoded from a wide encoding, or from UTF-8 as latin-1.
    for mark in ("\ufeff", "\xef\xbb\xbf"):
        if text.startswith(mark):
            index = len(mark)
    while index < len(text):
        if text[index] in " \t\r\n":
            index += 1
        elif text.startswith("<?", index):
            index = _after(text, "?>", index + 2)
        elif text.startswith("<!--", index):
            index = _after(text, "-->", index + 4)
        elif text.startswith("<!DOCTYPE", index):
            index = _after_doctype(text, index + len("<!DOCTYPE"))
        elif text.startswith("<", index):
            name = _XML_NAME.match(text, index + 1)
            return name.end() if name is not None else None
        else:
            return None
    return None


def _after(text: str, end_mark: str, start: int) -> int:
    """Index just after the next ``end_mark`` from ``start`` (len(text) if there is none)."""
    found = text.find(end_mark, start)
    return len(text) if found < 0 else found + len(end_mark)


def _after_doctype(text: str, index: int) -> int:
    """Index just after a document type declaration whose keyword ends at ``index``."""
    in_subset = False
    while index < len(text):
        char = text[index]
        if char in "\"'":
            index = _after(text, char, index + 1)
        elif in_subset and text.startswith("<!--", index):
            index = _after(text, "-->", index + 4)
        elif in_subset and text.startswith("<?", index):
            index = _after(text, "?>", index + 2)
        elif char == "[":
            in_subset, index = True, index + 1
        elif char == "]":
            in_subset, index = False, index + 1
        elif char == ">" and not in_subset:
            return index + 1
        else:
            index += 1
    return index
