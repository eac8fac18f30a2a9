"""A node parameters file (``--params-file``) read as rcl reads it for one node, without rclpy.

The file maps node names to ``ros__parameters``: ``/**`` (every node), ``joint_tf_publisher``,
``/joint_tf_publisher``, ``/**/joint_tf_publisher``, ``/robot1/joint_tf_publisher``...
``node_parameters`` takes every section rcl gives the node in its namespace (``*`` one name
token, ``**`` any number; a bare name is the root namespace's; another namespace's section
is not taken), in file order, later values over earlier ones; plain values typed as rcl
types them (``rcl_scalar``); nested names are joined at the
dots (``attachments: {names: [g]}`` is ``attachments.names``), as rcl joins them. What the
values mean is the node's parameter table (``node_core.parameters.Settings``): this only
reads the file.
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any

from ..description.files import read_regular_file
from ..description.xmlio import MAX_DESCRIPTION_BYTES
from ..errors import ModelError
from ..node_core.names import NODE_NAME
from ..node_core.parameters import shown_text

#: The key under a node's name that holds its parameters.
PARAMETERS_KEY = "ros__parameters"
#: Deepest nesting of mappings and sequences read (a real file nests a few levels; Python's
#: recursion limit ended a file nested a few hundred deep in a RecursionError).
MAX_NESTING = 64
#: Most YAML nodes (mappings, sequences, scalars) read: PyYAML reads some 10,000 a second
#: on a loaded machine, and a 30 MB file of six million numbers took minutes and a GB. A
#: node's parameters are a few hundred values (an array parameter at most 4096 items).
MAX_NODES = 50_000


class ParamsFileError(ValueError):
    """A parameters file that cannot be read, or is no parameters file; the text says why."""


def read_document(path: Path) -> Any:
    """The YAML document of the parameters file ``path``, read as every file the package
    reads (``read_regular_file``: a regular file of at most ``MAX_DESCRIPTION_BYTES``, since
    it may hold a description; a FIFO or a device refused at once, never waited on).
    ParamsFileError naming the file (and the line) for a file that is not UTF-8 YAML, and for
    what rcl refuses or what would not end: an alias (``*name``; rcl: "Will not support
    aliasing", and a "billion laughs" of aliased mappings flattened without end), nesting
    deeper than ``MAX_NESTING``, more than ``MAX_NODES`` nodes."""
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise ParamsFileError(
            "reading a parameters file needs PyYAML (pip install pyyaml)"
        ) from None
    try:
        text = read_regular_file(path, MAX_DESCRIPTION_BYTES).decode("utf-8")
        loader = _bounded_loader(yaml)(text)
        try:
            return loader.get_single_data()
        finally:
            loader.dispose()
    except ModelError as exc:
        raise ParamsFileError(str(exc)) from None
    except UnicodeDecodeError as exc:
        reason = f"{exc.reason} at byte {exc.start}"
        raise ParamsFileError(f"{path}: not UTF-8 text ({reason})") from None
    except _Refused as exc:
        raise ParamsFileError(f"{path}: {exc}") from None
    except yaml.YAMLError as exc:
        raise ParamsFileError(f"{path}: not YAML: {' '.join(str(exc).split())}") from None


#: rcl's words for true and false (``rcl_yaml_param_parser``); PyYAML's YAML 1.1 lacks the
#: single letters.
_RCL_BOOLS = {
    **dict.fromkeys(
        ("y", "Y", "yes", "Yes", "YES", "true", "True", "TRUE", "on", "On", "ON"), True
    ),
    **dict.fromkeys(
        ("n", "N", "no", "No", "NO", "false", "False", "FALSE", "off", "Off", "OFF"), False
    ),
}
#: What rcl reads as an integer: ``strtoll(text, 0)`` whole (hexadecimal, C octal, decimal).
_RCL_INT = re.compile(r"[-+]?(?:0[xX][0-9a-fA-F]+|0[0-7]*|[1-9][0-9]*)")
#: What rcl reads as a double: ``strtod`` whole (no hexadecimal floats here), and YAML's
#: ``.nan`` and ``.inf`` words.
_RCL_FLOAT = re.compile(
    r"[-+]?(?:(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][-+]?[0-9]+)?|nan|inf(?:inity)?)"
    r"|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN)",
    re.IGNORECASE,
)
_INT64 = 2**63


def rcl_scalar(text: str) -> Any:
    """A plain (unquoted) scalar typed as rcl types it, where PyYAML's YAML 1.1 differs: a
    bool of rcl's words; an integer as ``strtoll`` reads it (``017`` is 15, ``1_000`` and
    ``0b101`` are text), one beyond int64 read as a double; a double as ``strtod`` reads it
    (``1e3``, ``5e-3``), one out of a double's range (``1e400``, ``1e-320``: strtod's ERANGE)
    text; ``1:30``, ``~``, ``null`` and dates text. So the bag commands see the values the
    node would be given."""
    if text in _RCL_BOOLS:
        return _RCL_BOOLS[text]
    if _RCL_INT.fullmatch(text):
        digits = text.lstrip("+-")
        base = (
            16 if digits[:2] in ("0x", "0X") else 8 if len(digits) > 1 and digits[0] == "0" else 10
        )
        number = int(digits, base) * (-1 if text.startswith("-") else 1)
        if -_INT64 <= number < _INT64:
            return number
    if _RCL_FLOAT.fullmatch(text):
        yaml_word = re.fullmatch(r"[-+]?\.[A-Za-z]+", text)
        value = float(text.replace(".", "", 1) if yaml_word else text)
        if not math.isfinite(value):  # strtod's NaN and infinity words, not an overflow
            return value if re.search("nan|inf", text, re.IGNORECASE) else text
        mantissa = re.split("[eE]", text)[0]
        underflow = 0.0 < abs(value) < sys.float_info.min or (
            value == 0.0 and any(digit in mantissa for digit in "123456789")
        )
        return text if underflow else value
    return text


class _Refused(ValueError):
    """What ``_bounded_loader`` refuses; the text says where and why."""


def _bounded_loader(yaml: Any) -> Any:
    """PyYAML's safe loader refusing aliases, nesting deeper than ``MAX_NESTING`` and more
    than ``MAX_NODES`` nodes as it composes (before any object is built)."""

    class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]
        depth = 0
        nodes = 0

        def construct_rcl(self, node: Any) -> Any:
            return rcl_scalar(node.value)

        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            for key, _ in node.value:  # a key is a name, as rcl reads it: yes, 1, ~ as text
                if key.tag == RCL_TAG:
                    key.tag = "tag:yaml.org,2002:str"
            return super().construct_mapping(node, deep)

        def compose_node(self, parent: Any, index: Any) -> Any:
            event = self.peek_event()
            line = event.start_mark.line + 1
            if isinstance(event, yaml.AliasEvent):
                raise _Refused(
                    f"line {line}: alias *{shown_text(event.anchor)}: a parameters file "
                    "takes no aliases (rcl refuses them too: write the value out)"
                )
            self.nodes += 1
            if self.nodes > MAX_NODES:
                raise _Refused(f"line {line}: more than {MAX_NODES} YAML values")
            self.depth += 1
            try:
                if self.depth > MAX_NESTING:
                    raise _Refused(f"line {line}: nested deeper than {MAX_NESTING} levels")
                return super().compose_node(parent, index)
            finally:
                self.depth -= 1

    # Every plain scalar is typed by rcl_scalar (PyYAML's bool, int, float, null and
    # timestamp resolvers dropped); quoted ones stay text, as rcl keeps them.
    BoundedLoader.yaml_implicit_resolvers = {}
    BoundedLoader.add_implicit_resolver("tag:yaml.org,2002:null", re.compile("^$"), [""])
    BoundedLoader.add_implicit_resolver(RCL_TAG, re.compile(r"(?s:.+)"), None)
    BoundedLoader.add_constructor(RCL_TAG, BoundedLoader.construct_rcl)
    return BoundedLoader


#: The tag ``_bounded_loader`` gives every plain scalar.
RCL_TAG = "tag:joint_tf_publisher,2026:rcl-scalar"


def node_parameters(path: Path, node: str = NODE_NAME, namespace: str = "") -> dict[str, Any]:
    """The parameters ``path`` gives node ``node`` in ``namespace`` ("" or ``/``: the root;
    ``robot1`` and ``/robot1`` alike), by flattened name; the file read by ``read_document``.
    A section applies as rcl applies it (``_applies``): ``/**``, ``/**/NODE``, the node's
    own ``/NS/NODE`` (or nested, ``/NS: {NODE: ...}``); another namespace's section does
    not (each robot of a file for several robots has its own)."""
    document = read_document(path)
    if not isinstance(document, dict):
        raise ParamsFileError(f"{path}: not a parameters file (no node sections)")
    fqn = (*namespace.strip("/").split("/"), node) if namespace.strip("/") else (node,)
    values: dict[str, Any] = {}
    found = False
    for key, parameters in _sections(document):
        found = True
        if _applies(key, fqn) and isinstance(parameters, dict):
            values.update(flattened(parameters))
    if not found:
        raise ParamsFileError(f"{path}: not a parameters file (no <node>: {PARAMETERS_KEY}:)")
    return values


def _sections(tree: dict[Any, Any], parent: str = "") -> list[tuple[str, Any]]:
    """(node name, its ``ros__parameters``) of every section in file order, a name nested
    under namespaces joined at ``/`` (``/robot1: {joint_tf_publisher: ...}``, as rcl joins
    them)."""
    found: list[tuple[str, Any]] = []
    for key, section in tree.items():
        if not isinstance(section, dict):
            continue
        name = f"{parent}/{str(key).strip('/')}"
        if PARAMETERS_KEY in section:
            found.append((name, section[PARAMETERS_KEY]))
        else:
            found += _sections(section, name)
    return found


def _applies(key: str, fqn: tuple[str, ...]) -> bool:
    """Whether the section ``key`` (a node name, ``*`` one token, ``**`` any number) names
    the node whose name's tokens are ``fqn``, as rcl matches it; token by token, in time
    linear in both (a key of many ``**`` cannot make it backtrack)."""
    reach = {0}  # how many of fqn's tokens the key's tokens so far can have matched
    for part in key.strip("/").split("/"):
        if part == "**":
            reach = set(range(min(reach), len(fqn) + 1)) if reach else set()
        else:
            reach = {i + 1 for i in reach if i < len(fqn) and part in ("*", fqn[i])}
    return len(fqn) in reach


def flattened(tree: dict[str, Any], parent: str = "") -> dict[str, Any]:
    """Nested parameters as rcl reads them: names joined at the dots."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{parent}{key}"
        flat.update(flattened(value, name + ".") if isinstance(value, dict) else {name: value})
    return flat
