#!/usr/bin/env python3
"""Write test/data/rosdep_keys.yaml: where each package.xml dependency resolves per ROS 2 distro.

``rosdep install`` resolves a package.xml key either through the rosdep rules
(``rosdep/base.yaml``, ``rosdep/python.yaml`` of github.com/ros/rosdistro: system packages) or,
for ROS packages, through ``<distro>/distribution.yaml`` (a released package of that distro).
This script reads a checkout of ros/rosdistro and records, for every dependency key of
package.xml and each supported distro, where the key was found; a key that does not resolve
is written as ``null`` (test/test_rosdep_keys.py then fails).

System keys are resolved for the distro's Ubuntu release as ``release_platforms`` in its
distribution.yaml names it (Humble: jammy; Jazzy, Kilted: noble; Rolling: what it targets
at the checkout's commit).

Usage::

    git clone --depth 1 https://github.com/ros/rosdistro /tmp/rosdistro
    python3 tools/rosdep_facts.py /tmp/rosdistro        # rewrites test/data/rosdep_keys.yaml

Needs PyYAML and lxml (both in the project's venv).
"""

from __future__ import annotations

import argparse
import datetime
import subprocess
import sys
from pathlib import Path
from typing import Any

import yaml
from lxml import etree

ROOT = Path(__file__).resolve().parent.parent
FACTS_FILE = ROOT / "test" / "data" / "rosdep_keys.yaml"
DISTROS = ("humble", "jazzy", "kilted", "rolling")
RULE_FILES = ("rosdep/base.yaml", "rosdep/python.yaml")


def manifest_keys(manifest: Path) -> list[str]:
    """Every dependency key named in ``manifest`` (package.xml), sorted, without repeats: the
    text of each ``<depend>`` and ``<*_depend>`` element (REP 149)."""
    elements = etree.parse(str(manifest)).getroot().iterchildren(etree.Element)
    return sorted({(e.text or "").strip() for e in elements if e.tag.endswith("depend")})


def ubuntu_resolution(rule: Any, release: str) -> Any:
    """What a rosdep rule gives on Ubuntu ``release``: packages, a pip rule, or None."""
    if not isinstance(rule, dict) or "ubuntu" not in rule:
        return None
    ubuntu = rule["ubuntu"]
    if isinstance(ubuntu, dict) and any(key in ubuntu for key in (release, "*")):
        return ubuntu.get(release, ubuntu.get("*"))
    if isinstance(ubuntu, dict) and not ({"apt", "pip", "source"} & set(ubuntu)):
        return None  # per-release rules that name neither this release nor '*'
    return ubuntu


def describe(resolution: Any) -> str:
    """A short text for a rosdep resolution: the apt packages or the installer rule."""
    if isinstance(resolution, list):
        return "apt " + " ".join(str(name) for name in resolution)
    if isinstance(resolution, dict) and "packages" in resolution.get("apt", {}):
        return "apt " + " ".join(resolution["apt"]["packages"])
    if isinstance(resolution, dict) and "pip" in resolution:
        return "pip " + " ".join(resolution["pip"].get("packages", []))
    return str(resolution)


def released_packages(distribution: dict[str, Any]) -> dict[str, tuple[str, str]]:
    """Released package name -> (repository, release version) of one distribution.yaml."""
    found: dict[str, tuple[str, str]] = {}
    for repository, entry in distribution["repositories"].items():
        release = entry.get("release") or {}
        version = release.get("version")
        if not version:
            continue
        for package in release.get("packages", [repository]):
            found[package] = (repository, str(version))
    return found


def key_facts(rosdistro: Path, keys: list[str]) -> dict[str, dict[str, str | None]]:
    """key -> distro -> where the key resolves (None where it does not)."""
    rules: dict[str, tuple[str, Any]] = {}
    for name in RULE_FILES:
        for key, rule in yaml.safe_load((rosdistro / name).read_bytes()).items():
            rules.setdefault(key, (name, rule))
    facts: dict[str, dict[str, str | None]] = {key: {} for key in keys}
    for distro in DISTROS:
        distribution = yaml.safe_load((rosdistro / distro / "distribution.yaml").read_bytes())
        release = distribution["release_platforms"]["ubuntu"][0]  # the first it targets
        packages = released_packages(distribution)
        for key in keys:
            where: str | None = None
            if key in packages:
                repository, version = packages[key]
                where = f"{distro}/distribution.yaml: repository {repository}, {version}"
            elif key in rules:
                file_name, rule = rules[key]
                resolution = ubuntu_resolution(rule, release)
                if resolution is not None:
                    where = f"{file_name}: ubuntu {release}: {describe(resolution)}"
            facts[key][distro] = where
    return facts


def commit_of(rosdistro: Path) -> tuple[str, str]:
    """The checkout's commit hash and commit date (``git log``), or unknowns without git."""
    result = subprocess.run(
        ["git", "-C", str(rosdistro), "log", "-1", "--format=%H %cs"],
        capture_output=True,
        text=True,
        check=False,
    )
    if result.returncode != 0 or not result.stdout.strip():
        return "unknown", "unknown"
    commit, date = result.stdout.split()
    return commit, date


def render(facts: dict[str, dict[str, str | None]], commit: str, commit_date: str) -> str:
    """The facts file's text: a header saying where the facts come from, then the YAML."""
    today = datetime.date.today().isoformat()
    header = (
        "# Where each dependency key of package.xml resolves for `rosdep install`, per distro.\n"
        "# Facts read from https://github.com/ros/rosdistro: rosdep/base.yaml and\n"
        "# rosdep/python.yaml (system keys, on the distro's Ubuntu release) and\n"
        "# <distro>/distribution.yaml (released ROS packages).\n"
        f"# rosdistro commit {commit} of {commit_date}; written {today} by\n"
        "# tools/rosdep_facts.py (rerun it after changing package.xml's dependencies).\n"
        "# null: the key does not resolve on that distro.\n"
    )
    body = {
        "source": {
            "repository": "https://github.com/ros/rosdistro",
            "commit": commit,
            "commit_date": commit_date,
            "written": today,
        },
        "distros": list(DISTROS),
        "keys": facts,
    }
    return header + yaml.safe_dump(body, sort_keys=False, width=120)


def main(argv: list[str] | None = None) -> int:
    """Command line entry point; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument("rosdistro", type=Path, help="a checkout of github.com/ros/rosdistro")
    parser.add_argument("--output", type=Path, default=FACTS_FILE, help="file to write")
    args = parser.parse_args(argv)
    facts = key_facts(args.rosdistro, manifest_keys(ROOT / "package.xml"))
    args.output.parent.mkdir(parents=True, exist_ok=True)
    args.output.write_text(render(facts, *commit_of(args.rosdistro)), encoding="utf-8")
    missing = sorted(
        f"{key} ({distro})"
        for key, by in facts.items()
        for distro, where in by.items()
        if where is None
    )
    for entry in missing:
        print(f"rosdep_facts: does not resolve: {entry}", file=sys.stderr)
    print(f"rosdep_facts: wrote {args.output} ({len(facts)} keys)", file=sys.stderr)
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
