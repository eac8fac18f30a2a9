"""A node parameters file (``--params-file``) read as rcl reads it for one node, without rclpy.

The file maps node names to ``ros__parameters``: ``/**`` (every node), ``joint_tf_publisher``,
``/joint_tf_publisher``, ``/**/joint_tf_publisher``, ``/robot1/joint_tf_publisher``...
``node_parameters`` takes every section whose name matches the node's last name part (or is
a wildcard), in file order, later values over earlier ones; nested names are joined at the
dots (``attachments: {names: [g]}`` is ``attachments.names``), as rcl joins them. What the
values mean is the node's parameter table (``node_core.parameters.Settings``): this only
reads the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from ..description.files import read_regular_file
from ..description.xmlio import MAX_DESCRIPTION_BYTES
from ..errors import ModelError
from ..node_core.parameters import shown_text

#: The node's name (``ros.node.NODE_NAME``, which imports rclpy).
NODE_NAME = "joint_tf_publisher"
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


class _Refused(ValueError):
    """What ``_bounded_loader`` refuses; the text says where and why."""


def _bounded_loader(yaml: Any) -> Any:
    """PyYAML's safe loader refusing aliases, nesting deeper than ``MAX_NESTING`` and more
    than ``MAX_NODES`` nodes as it composes (before any object is built)."""

    class BoundedLoader(yaml.SafeLoader):  # type: ignore[misc]
        depth = 0
        nodes = 0

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

    return BoundedLoader


def node_parameters(path: Path, node: str = NODE_NAME) -> dict[str, Any]:
    """The parameters ``path`` gives node ``node`` (any namespace), by flattened name; the
    file read by ``read_document``."""
    document = read_document(path)
    if not isinstance(document, dict):
        raise ParamsFileError(f"{path}: not a parameters file (no node sections)")
    values: dict[str, Any] = {}
    found = False
    for key, section in document.items():
        if not isinstance(section, dict) or PARAMETERS_KEY not in section:
            continue
        found = True
        if _names_node(str(key), node) and isinstance(section[PARAMETERS_KEY], dict):
            values.update(flattened(section[PARAMETERS_KEY]))
    if not found:
        raise ParamsFileError(f"{path}: not a parameters file (no <node>: {PARAMETERS_KEY}:)")
    return values


def _names_node(key: str, node: str) -> bool:
    """Whether a section's name applies to ``node``: its last part is the name or a wildcard."""
    last = key.rstrip("/").rpartition("/")[2]
    return last in (node, "*", "**")


def flattened(tree: dict[str, Any], parent: str = "") -> dict[str, Any]:
    """Nested parameters as rcl reads them: names joined at the dots."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{parent}{key}"
        flat.update(flattened(value, name + ".") if isinstance(value, dict) else {name: value})
    return flat
