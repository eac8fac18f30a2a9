"""Where a Python module's ``from ... import`` statements import from, relative ones made
absolute: tools/compat.py (which of the package's modules reach ROS) and tools/mutate.py (what
runs while the package is imported) read the package's imports this way."""

from __future__ import annotations

import ast
from collections.abc import Sequence
from pathlib import PurePath


def package_of(module: PurePath) -> tuple[str, ...]:
    """The dotted parts of the package MODULE (a repository-relative ``.py`` path) is in; a
    package's ``__init__.py`` is in that package itself."""
    return module.parent.parts


def imported_module(node: ast.ImportFrom, package: Sequence[str]) -> str:
    """The absolute name of the module NODE imports from, written in the package PACKAGE
    (dotted parts): ``from .x import y`` in ``a.b`` imports from ``a.b.x``, ``from .. import
    y`` from ``a``."""
    if not node.level:
        return node.module or ""
    base = list(package[: len(package) - node.level + 1])
    return ".".join([*base, node.module] if node.module else base)
