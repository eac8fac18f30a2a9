"""Where the tests find the repository and their data (one place for every test folder)."""

from __future__ import annotations

from pathlib import Path

#: This folder: test/ (data under test/urdf and test/sdf).
TEST_DIR = Path(__file__).resolve().parent
#: The repository root (package.xml, launch/, config/, urdf/).
REPO_ROOT = TEST_DIR.parent
