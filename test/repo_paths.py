"""Where the tests find the repository and their data (one place for every test folder)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

#: This folder: test/ (data under test/urdf and test/sdf).
TEST_DIR = Path(__file__).resolve().parent
#: The repository root (package.xml, launch/, config/, urdf/).
REPO_ROOT = TEST_DIR.parent
#: The node's parameters file, every parameter at its default.
CONFIG = REPO_ROOT / "config" / "joint_tf_publisher.yaml"


def config_parameters() -> dict[str, Any]:
    """CONFIG's parameters by name, as rcl reads them (nested names joined at the dots)."""
    import yaml

    tree = yaml.safe_load(CONFIG.read_text())["/**"]["ros__parameters"]
    return flattened(tree)


def flattened(tree: dict[str, Any], parent: str = "") -> dict[str, Any]:
    """Nested parameters as rcl reads them: names joined at the dots."""
    flat: dict[str, Any] = {}
    for key, value in tree.items():
        name = f"{parent}{key}"
        flat.update(flattened(value, name + ".") if isinstance(value, dict) else {name: value})
    return flat
