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
from ..node_core.names import NODE_NAME

#: The key under a node's name that holds its parameters.
PARAMETERS_KEY = "ros__parameters"


class ParamsFileError(ValueError):
    """A parameters file that cannot be read, or is no parameters file; the text says why."""


def node_parameters(path: Path, node: str = NODE_NAME) -> dict[str, Any]:
    """The parameters ``path`` gives node ``node`` (any namespace), by flattened name. Read
    as every file the package reads (``read_regular_file``: a regular file of at most
    ``MAX_DESCRIPTION_BYTES``, since it may hold a description; a FIFO or a device refused at
    once, never waited on)."""
    try:
        import yaml  # type: ignore[import-untyped]
    except ImportError:
        raise ParamsFileError(
            "reading a parameters file needs PyYAML (pip install pyyaml)"
        ) from None
    try:
        text = read_regular_file(path, MAX_DESCRIPTION_BYTES).decode("utf-8")
        document = yaml.safe_load(text)
    except ModelError as exc:
        raise ParamsFileError(str(exc)) from None
    except UnicodeDecodeError as exc:
        reason = f"{exc.reason} at byte {exc.start}"
        raise ParamsFileError(f"{path}: not UTF-8 text ({reason})") from None
    except yaml.YAMLError as exc:
        raise ParamsFileError(f"{path}: not YAML: {exc}") from None
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
