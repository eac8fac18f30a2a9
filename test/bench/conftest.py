"""Tests marked ``rsp`` run robot_state_publisher and belong to ``make bench``: they are
deselected (not skipped) unless ``JTP_BENCH_RSP=1``, which ``make bench`` sets."""

from __future__ import annotations

import os

import pytest


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Deselect the ``rsp`` tests outside ``make bench``."""
    if os.environ.get("JTP_BENCH_RSP") == "1":
        return
    deselected = [item for item in items if item.get_closest_marker("rsp")]
    if deselected:
        config.hook.pytest_deselected(items=deselected)
        items[:] = [item for item in items if not item.get_closest_marker("rsp")]
