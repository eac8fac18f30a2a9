#!/usr/bin/env python3
"""Run the core tests under the Python, numpy and lxml of older ROS 2 distros (``make compat``).

Our ``.venv`` has CPython 3.11 and numpy 2 (the Kilted wheels need them); users run the
package on Ubuntu's system Python packages. This script builds one scratch virtual
environment per distro combination (``ENVIRONMENTS``: the Ubuntu release's system packages,
where PyPI has a wheel for them) under ``.compat/`` (git-ignored), from PyPI, and runs the
test files that need no rclpy there (``core_tests``) with ``PYTHONPATH`` at this repository
(the package is not installed into them). ``humble`` also builds the package as colcon's
ament_python build does on Humble (``colcon_build``). It prints one summary line per
environment and exits non-zero if any environment failed or could not be built.

Not covered: pinocchio (its tests run in the ``pinocchio`` environment, whose ``pin`` wheels
need numpy 2) and the ROS-facing tests (rclpy exists only as Kilted wheels for CPython 3.11).
lxml's wheels bundle their own libxml2 (4.8.0: 2.9.12; 5.2.1: 2.12.6), while Ubuntu's
python3-lxml uses the system libxml2 (2.9.13 on 22.04, 2.9.14 on 24.04).

Each environment is built by tools/env.py's ``ensure_venv``: rebuilt when its interpreter
version or pins change, reused otherwise. ``make test`` runs the same tests in these
environments too, one by one and counted (test/test_worlds.py); ``make worlds`` builds them
first with ``--build`` (only builds, and says once which interpreter is missing).
"""

from __future__ import annotations

import argparse
import ast
import functools
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))  # one way to create a venv and pip into it: env.py's
import env as env_tool  # noqa: E402
from source_imports import imported_module, package_of  # noqa: E402

COMPAT_DIR = ROOT / ".compat"

#: The tests whose reference (pinocchio, the ``pin`` wheels, and urdfdom's check_urdf that
#: they bring) needs numpy 2: in an environment of their own, never in .venv, which holds a
#: sourced distro's numpy (test/conftest.py leaves them out where pinocchio is missing).
ORACLE_TESTS = (
    "kinematics/test_kinematics_pinocchio.py",
    "description/test_urdfdom_differential.py",
)
#: What the test files import besides the pinned packages (any version for that Python).
TEST_TOOLS = ("pytest", "hypothesis", "xacro")
#: colcon as a ROS user has it, for the environments that build the package with it.
COLCON_TOOLS = ("colcon-core", "colcon-ros", "colcon-python-setup-py")
PACKAGE = "joint_tf_publisher"
#: What a colcon build must install (relative to install/<package>).
INSTALLED = (
    f"lib/{PACKAGE}/{PACKAGE}",
    f"lib/{PACKAGE}/joint-tf-publisher",
    f"share/{PACKAGE}/package.xml",
    f"share/{PACKAGE}/launch/{PACKAGE}.launch.py",
    f"share/{PACKAGE}/launch/demo.launch.py",
    f"share/{PACKAGE}/config/{PACKAGE}.yaml",
    f"share/{PACKAGE}/urdf/demo_arm.urdf",
    f"share/ament_index/resource_index/packages/{PACKAGE}",
)
VERSIONS_PROBE = (
    "import json, platform, numpy, lxml.etree as e, importlib.util as u, importlib.metadata as m;"
    " print(json.dumps({'python': platform.python_version(), 'numpy': numpy.__version__,"
    " 'lxml': e.__version__, 'libxml2': '.'.join(map(str, e.LIBXML_VERSION)),"
    " 'setuptools': m.version('setuptools') if u.find_spec('setuptools') else None}))"
)


TEST_DIR = ROOT / "test"
#: Top-level names of imports that make a test need ROS 2 (or pinocchio): no core test.
ROS_IMPORT = re.compile(r"(rclpy|launch\w*|tf2_ros|pinocchio|\w+_msgs|\w+_interfaces)$")


def package_module(dotted: str) -> Path | None:
    """The file of the package's module ``dotted`` (a package's ``__init__.py``), or None."""
    path = ROOT.joinpath(*dotted.split("."))
    for candidate in (path.with_suffix(".py"), path / "__init__.py"):
        if candidate.is_file():
            return candidate
    return None


def module_level_imports(module: Path) -> list[str]:
    """The dotted names the module's own top-level statements import (what importing it
    imports; those inside functions wait for a call), relative ones made absolute."""
    package = package_of(module.relative_to(ROOT))
    names: list[str] = []
    for node in ast.parse(module.read_text(encoding="utf-8")).body:
        if isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = imported_module(node, package)
            if node.level:
                names.extend(f"{base}.{alias.name}" for alias in node.names)
            names.append(base)
    return names


@functools.cache
def package_imports_ros(dotted: str) -> bool:
    """True when importing the package's module ``dotted`` imports a ROS 2 package: itself,
    or any of the package's modules its top level imports, theirs in turn (import cycles
    included: each module is read once per question)."""
    seen: set[str] = set()
    waiting = [dotted]
    while waiting:
        name = waiting.pop()
        if name in seen:
            continue
        seen.add(name)
        for imported in _top_level_imports(name):
            if ROS_IMPORT.match(imported.split(".")[0]):
                return True
            if imported.startswith(f"{PACKAGE}."):
                waiting.append(imported)
    return False


@functools.cache
def _top_level_imports(dotted: str) -> tuple[str, ...]:
    """``module_level_imports`` of the package's module ``dotted``; none for a name that is
    not a module of the package (``from .x import function``)."""
    module = package_module(dotted)
    return () if module is None else tuple(module_level_imports(module))


@functools.cache
def _test_helpers() -> dict[str, Path]:
    """The modules under test/ by name (the first found of a name), what a test file's
    ``import node_harness`` finds: one walk of test/ for every question."""
    helpers: dict[str, Path] = {}
    for path in sorted(TEST_DIR.rglob("*.py")):
        helpers.setdefault(path.stem, path)
    return helpers


@functools.cache
def imports_ros(module: Path) -> bool:
    """True when ``module`` imports a ROS 2 package or the package's ``ros`` adapter, itself,
    through a test helper it imports (a module of test/, e.g. node_harness) or through a
    module of the package whose top-level imports do (e.g. the doctor's listener)."""
    for node in ast.walk(ast.parse(module.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        else:
            continue
        for name in names:
            top = name.split(".")[0]
            if ROS_IMPORT.match(top) or name.startswith(f"{PACKAGE}.ros"):
                return True
            if name.startswith(f"{PACKAGE}.") and package_imports_ros(name):
                return True
            helper = _test_helpers().get(top)
            if helper is not None and helper != module and imports_ros(helper):
                return True
    return False


@functools.cache
def core_tests() -> tuple[str, ...]:
    """The test files (relative to test/) that need neither rclpy nor pinocchio: those of
    every rclpy-free part of the package (test/X/ or test/test_X.py for each
    joint_tf_publisher/X but ``ros``) that import no ROS 2 package, less ORACLE_TESTS."""
    parts = [path.stem for path in (ROOT / PACKAGE).iterdir() if path.stem != "ros"]
    found = [
        path
        for part in parts
        for path in [*(TEST_DIR / part).glob("test_*.py"), TEST_DIR / f"test_{part}.py"]
        if path.is_file() and not imports_ros(path)
    ]
    names = {path.relative_to(TEST_DIR).as_posix() for path in found}
    return tuple(sorted(names - set(ORACLE_TESTS)))


@dataclass(frozen=True)
class CompatEnv:
    """One distro combination: a Python minor version and pinned packages."""

    name: str
    python: str
    pins: tuple[str, ...]
    colcon: bool = False
    #: The test files it runs (relative to test/); None: the core tests (``core_tests``,
    #: read from the tree when asked, not when this module is imported: test/conftest.py
    #: imports it in every pytest run).
    only_tests: tuple[str, ...] | None = None

    @property
    def tests(self) -> tuple[str, ...]:
        """The test files it runs (relative to test/)."""
        return core_tests() if self.only_tests is None else self.only_tests

    @property
    def requirements(self) -> tuple[str, ...]:
        return (*self.pins, *TEST_TOOLS, *(COLCON_TOOLS if self.colcon else ()))

    @property
    def path(self) -> Path:
        return COMPAT_DIR / self.name

    @property
    def stamp(self) -> str:
        """What the environment is built from; a change means a rebuild."""
        return " ".join((self.python, *self.requirements))


ENVIRONMENTS = (
    # Ubuntu 22.04's (Humble), with its setuptools and colcon, which build the package there.
    CompatEnv(
        "humble",
        "3.10",
        ("numpy==1.21.5", "lxml==4.8.0", "scipy==1.8.0", "matplotlib==3.5.1", "setuptools==59.6.0"),
        colcon=True,
    ),
    # Ubuntu 24.04's (Jazzy, Kilted, Rolling); matplotlib 3.8.4: 24.04's 3.6.3 has no wheel
    # for Python 3.12.
    CompatEnv(
        "jazzy",
        "3.12",
        ("numpy==1.26.4", "lxml==5.2.1", "scipy==1.11.4", "matplotlib==3.8.4"),
    ),
    CompatEnv(
        "pinocchio",
        "3.11",
        ("pin>=3.0", "numpy>=2", "scipy>=1.10", "lxml>=4.9"),
        only_tests=ORACLE_TESTS,
    ),
)


def find_interpreter(version: str) -> Path | None:
    """A CPython ``version`` (``"3.10"``) interpreter: pyenv's newest, else one on PATH."""
    pyenv_root = Path(os.environ.get("PYENV_ROOT", Path.home() / ".pyenv"))
    candidates = sorted(
        (pyenv_root / "versions").glob(f"{version}.*/bin/python"),
        key=lambda path: [int(part) for part in re.findall(r"\d+", path.parent.parent.name)],
    )
    if candidates:
        return candidates[-1]
    on_path = shutil.which(f"python{version}")
    return Path(on_path) if on_path else None


def ensure_env(env: CompatEnv, rebuild: bool) -> Path:
    """The environment's python, building the environment first where needed."""

    def build(venv: Path) -> None:
        interpreter = find_interpreter(env.python)
        if interpreter is None:
            raise env_tool.EnvError(missing_reason(env))
        env_tool.run([interpreter, "-m", "venv", venv])
        env_tool.pip_install(venv, *env.requirements)

    python = env_tool.venv_python(env.path)
    env_tool.ensure_venv(env.path, env.stamp, build, lambda _: python.exists(), rebuild=rebuild)
    return python


def versions(python: Path) -> dict[str, str]:
    """The Python, numpy, lxml, libxml2 and setuptools (None: absent) versions of ``python``."""
    found: dict[str, str] = json.loads(env_tool.python_output(python, VERSIONS_PROBE))
    return found


def pytest_environ(base: dict[str, str]) -> dict[str, str]:
    """``base`` for a strict pytest run of this checkout in an environment (not installed
    there: on ``PYTHONPATH``), plotting without a display."""
    return dict(base, PYTHONPATH=str(ROOT), JTP_STRICT_SKIPS="1", MPLBACKEND="Agg")


def run_tests(env: CompatEnv, python: Path) -> tuple[bool, str]:
    """Run ``env``'s tests in it: (passed, pytest's closing counts); the log goes to a file."""
    log = COMPAT_DIR / f"{env.name}.log"
    command = [str(python), "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    command += [str(ROOT / "test" / name) for name in env.tests]
    environ = pytest_environ(dict(os.environ))
    with log.open("w") as out:
        completed = subprocess.run(
            command, cwd=ROOT, env=environ, stdout=out, stderr=subprocess.STDOUT, check=False
        )
    lines = [line for line in log.read_text().splitlines() if line.strip()]
    closing = lines[-1].strip("= ") if lines else "no output"
    return completed.returncode == 0, f"{closing} (log: {log.relative_to(ROOT)})"


def colcon_build(python: Path) -> str:
    """``colcon build`` of a copy of this repository with ``python``'s colcon and setuptools;
    EnvError unless it installs INSTALLED without a setuptools warning. Returns a phrase."""
    with tempfile.TemporaryDirectory(prefix="jtp-colcon-") as scratch:
        workspace = Path(scratch)
        copy_sources(workspace / "src" / PACKAGE)
        colcon: list[str | Path] = [python.absolute().parent / "colcon", "--log-base", "log"]
        colcon += ["build", "--base-paths", "src", "--event-handlers", "console_direct+"]
        environ = dict(env_tool.clean_env(), COLCON_HOME=str(workspace / ".colcon"))
        output = env_tool.run(colcon, cwd=workspace, env=environ)
        warnings = [line for line in output.splitlines() if "Warning" in line]
        if warnings:
            raise env_tool.EnvError(f"colcon build warned: {warnings[0]}")
        prefix = workspace / "install" / PACKAGE
        missing = [name for name in INSTALLED if not (prefix / name).is_file()]
        if missing:
            raise env_tool.EnvError(f"colcon build did not install {', '.join(missing)}")
    return f"colcon build with setuptools {versions(python)['setuptools']} installs all"


def copy_sources(destination: Path) -> None:
    """Copy the checkout's sources as git sees them: tracked files and new ones not ignored."""
    command = ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"]
    listed = subprocess.run(command, cwd=ROOT, capture_output=True, text=True, check=True)
    for name in filter(None, listed.stdout.split("\0")):
        if (ROOT / name).is_file():  # not a tracked file deleted in the work tree
            (destination / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, destination / name)


def missing_reason(env: CompatEnv) -> str:
    """Why ``env`` cannot be built here (its interpreter is missing)."""
    return (
        f"no CPython {env.python} here (pyenv's $PYENV_ROOT/versions/{env.python}.* or"
        f" python{env.python} on PATH): its core tests skip"
    )


def check(env: CompatEnv, rebuild: bool, build_only: bool = False) -> bool:
    """Build ``env`` (if needed) and, unless ``build_only``, test it; print its summary line.
    ``build_only`` where its Python is missing: say so once, and succeed."""
    start = time.monotonic()
    if build_only and find_interpreter(env.python) is None:
        print(f"compat {env.name}: {missing_reason(env)}", flush=True)
        return True
    try:
        python = ensure_env(env, rebuild)
        passed, detail = True, "built"
        if not build_only:
            passed, result = run_tests(env, python)
            found = versions(python)
            detail = f"Python {found['python']}, numpy {found['numpy']}, lxml {found['lxml']}"
            detail += f" (libxml2 {found['libxml2']}): {result}"
            if env.colcon:
                detail += f"; {colcon_build(python)}"
    except (env_tool.EnvError, subprocess.CalledProcessError) as exc:
        passed, detail = False, str(exc)
    status = "ok" if passed else "FAILED"
    print(f"compat {env.name}: {status}: {detail} [{time.monotonic() - start:.0f} s]", flush=True)
    return passed


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    names = [env.name for env in ENVIRONMENTS]
    parser.add_argument("--only", nargs="+", choices=names, help="environments to check")
    parser.add_argument("--rebuild", action="store_true", help="rebuild the environments")
    parser.add_argument("--build", action="store_true", help="only build (where possible)")
    args = parser.parse_args(argv)
    COMPAT_DIR.mkdir(exist_ok=True)
    chosen = [env for env in ENVIRONMENTS if not args.only or env.name in args.only]
    results = [check(env, args.rebuild, args.build) for env in chosen]
    return 0 if all(results) else 1


if __name__ == "__main__":
    sys.exit(main())
