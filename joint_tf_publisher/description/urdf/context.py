"""What every URDF element reader shares: the file's version, where to report, attribute readers.

Numbers are read as urdfdom reads them (``inf`` only where urdfdom accepts it, never NaN);
every error names the source, line and element (``Context.error``).
"""

from __future__ import annotations

import math
import re
from collections.abc import Collection
from dataclasses import dataclass

from lxml import etree

from ...errors import Diagnostics, ModelError
from ..xmlio import line_of

#: URDF versions read, as (major, minor).
SUPPORTED_VERSIONS = ((1, 0), (1, 1), (1, 2))


_NUMBER = re.compile(
    r"[+-]?(?:(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|inf|infinity|nan)",
    re.IGNORECASE | re.ASCII,
)


@dataclass(frozen=True)
class Context:
    """What every element parser needs: where to report, and the file's URDF version."""

    diag: Diagnostics
    version: tuple[int, int]

    def error(self, message: str, element: etree._Element, owner: str | None) -> ModelError:
        return self.diag.error(message, line_of(element), owner)


def read_version(root: etree._Element, diag: Diagnostics) -> tuple[int, int]:
    text = root.get("version")
    if text is None:
        return (1, 0)
    supported = ", ".join(f"{major}.{minor}" for major, minor in SUPPORTED_VERSIONS)
    match = re.fullmatch(r"\s*(\d+)\.(\d+)\s*", text, re.ASCII)
    if match is None:
        raise diag.error(
            f"version {text!r} is not of the form 'x.y' (supported: {supported})",
            line_of(root),
            "<robot>",
        )
    version = (int(match.group(1)), int(match.group(2)))
    if version not in SUPPORTED_VERSIONS:
        raise diag.error(
            f"unsupported URDF version {text!r} (supported: {supported})", line_of(root), "<robot>"
        )
    return version


# -- attributes ------------------------------------------------------------------------------


def required_name(
    element: etree._Element, ctx: Context, owner: str | None, empty_ok: bool = False
) -> str:
    """The ``name`` attribute, which must be written; an empty (or blank) name is an error,
    or where ``empty_ok`` (robots and joints: urdfdom loads them) a warning."""
    value = element.get("name")
    if value is None:
        raise ctx.error(f"<{element.tag}> requires 'name'", element, owner)
    if not value.strip():
        if not empty_ok:
            raise ctx.error(f"<{element.tag}> has an empty 'name'", element, owner)
        ctx.diag.warn(f"<{element.tag}> has an empty 'name'", line_of(element), owner)
    return value


def required_text(element: etree._Element, attribute: str, ctx: Context, owner: str) -> str:
    value = element.get(attribute)
    if value is None:
        raise ctx.error(f"<{element.tag}> requires '{attribute}'", element, owner)
    return value


def parse_number(
    text: str, attribute: str, element: etree._Element, ctx: Context, owner: str, allow_inf: bool
) -> float:
    """``text`` (one number of ``attribute``) as a float; errors quote the whole attribute."""
    token = text.strip()
    if _NUMBER.fullmatch(token) is None:
        hint = " (unexpanded xacro?)" if "$" in token else ""
        shown = element.get(attribute, text)
        raise ctx.error(
            f"<{element.tag}> {attribute}={shown!r} is not a number{hint}", element, owner
        )
    value = float(token)
    if not math.isfinite(value):
        if math.isnan(value):
            raise ctx.error(f"<{element.tag}> {attribute} is NaN", element, owner)
        if not allow_inf:
            shown = element.get(attribute, text)
            raise ctx.error(f"<{element.tag}> {attribute}={shown!r} must be finite", element, owner)
    return value


def optional_float(
    element: etree._Element,
    attribute: str,
    ctx: Context,
    owner: str,
    default: float | None,
    allow_inf: bool = False,
) -> float | None:
    """An optional number attribute; ``default`` where it is absent."""
    text = element.get(attribute)
    if text is None:
        return default
    return parse_number(text, attribute, element, ctx, owner, allow_inf)


def float_or(
    element: etree._Element,
    attribute: str,
    ctx: Context,
    owner: str,
    default: float,
    allow_inf: bool = False,
) -> float:
    value = optional_float(element, attribute, ctx, owner, default, allow_inf)
    assert value is not None
    return value


def required_float(
    element: etree._Element, attribute: str, ctx: Context, owner: str, allow_inf: bool = False
) -> float:
    text = required_text(element, attribute, ctx, owner)
    return parse_number(text, attribute, element, ctx, owner, allow_inf)


def vector(
    element: etree._Element,
    attribute: str,
    size: int,
    ctx: Context,
    owner: str,
    default: tuple[float, ...],
) -> list[float]:
    """A whitespace-separated vector of ``size`` finite numbers; ``default`` where absent."""
    text = element.get(attribute)
    if text is None:
        return list(default)
    parts = text.split()
    if len(parts) != size:
        raise ctx.error(
            f"<{element.tag}> {attribute}={text!r} must have {size} numbers, got {len(parts)}",
            element,
            owner,
        )
    return [parse_number(p, attribute, element, ctx, owner, False) for p in parts]


def one_of(
    value: str,
    choices: Collection[str],
    kind: str,
    element: etree._Element,
    ctx: Context,
    owner: str,
) -> str:
    """``value`` if it is one of ``choices``; else ModelError ``unknown <kind> 'value' (expected
    one of ...)`` naming ``owner``."""
    if value not in choices:
        raise ctx.error(
            f"unknown {kind} {value!r} (expected one of {', '.join(choices)})", element, owner
        )
    return value


def children_by_tag(element: etree._Element, ctx: Context, owner: str) -> dict[str, etree._Element]:
    """The first child element of each tag; a repeated tag is ignored with a warning."""
    first: dict[str, etree._Element] = {}
    for child in element:
        tag: object = child.tag
        if not isinstance(tag, str):
            continue
        if tag in first:
            ctx.diag.warn(
                f"several <{tag}> elements; only the first (line {line_of(first[tag])}) is used",
                line_of(child),
                owner,
            )
        else:
            first[tag] = child
    return first
