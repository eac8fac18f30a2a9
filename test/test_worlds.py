"""The distros users run: tests run again in other environments, each counted here.

* ``jazzy``: the node's DDS tests (all of test/ros: end to end, parameters, storms, the spin
  loop under each executor rclpy offers, ...; and the tests checked against rclpy's own wire
  format and time: the CDR layouts, the stamps, the doctor's listener) under ROS 2 Jazzy's rclpy
  7.1.6, Fast DDS 2.14 and numpy 1.26.4 (``.venv-jazzy``, PyPI wheels, ``tools/env.py --world
  jazzy``), in an environment where no other ROS is sourced.
* ``humble`` and ``jazzy-core`` (tools/compat.py): the rclpy-free core tests under Humble's
  Python 3.10, numpy 1.21 and lxml 4.8, and under Ubuntu 24.04's Python 3.12, numpy 1.26 and
  lxml 5.2 (``.compat/``), with this checkout on ``PYTHONPATH``.
* ``pinocchio`` (tools/compat.py): the tests against pinocchio and urdfdom, whose ``pin``
  wheels need numpy 2, which ``.venv`` must not get over a sourced distro's numpy.

``make worlds`` (part of ``make test``) builds them. At collection each world's pytest
collects its tests (``--collect-only``), and each test there is one test here
(``test_in_world[<world>: <its node id>]``). The first of a world's tests to run runs that
world's pytest once on the selected ones (strict skips, a log in the world's folder); each
test here then passes, or fails with the failure text from there. A world that cannot run
here (its interpreter is missing; Jazzy's wheels beside a sourced distro) is one skipped
test saying why: allowed outside the project's machines only (test/conftest.py).
"""

from __future__ import annotations

import json
import os
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
from conftest import REPORT_VARIABLE, load_tool, ros_world
from repo_paths import REPO_ROOT

#: A hang guard for one world's whole run (the Jazzy DDS tests take about 4 minutes).
WORLD_RUN_LIMIT_S = 1800.0


ENV_TOOL = load_tool("env")
COMPAT_TOOL = load_tool("compat")


@dataclass(frozen=True)
class World:
    """An environment of its own and the tests (paths from the repository root) it runs."""

    name: str
    python: Path
    tests: tuple[str, ...]
    environ: Callable[[], dict[str, str]]
    #: Why it cannot run here; "" when it can.
    missing: str
    log: Path


def jazzy_world() -> World:
    """The node's DDS tests under Jazzy's wheels, without the kit's or a distro's variables."""
    venv = REPO_ROOT / ENV_TOOL.WORLD_VENVS["jazzy"]
    missing = ""
    if ros_world() == "distro":
        missing = "a ROS 2 distro is sourced: its own rclpy is the one under test"
    return World(
        name="jazzy",
        python=venv / "bin" / "python",
        tests=(
            "test/ros",
            "test/node_core/test_cdr.py",
            "test/test_stamps.py",
            "test/cli/test_doctor_listener.py",
        ),
        environ=lambda: dict(ENV_TOOL.unsourced_env(), JTP_STRICT_SKIPS="1"),
        missing=missing,
        log=venv / "pytest.log",
    )


def compat_world(env: Any) -> World:
    """A tools/compat.py environment running the core tests."""
    missing = ""
    if COMPAT_TOOL.find_interpreter(env.python) is None:
        missing = COMPAT_TOOL.missing_reason(env)
    return World(
        name="jazzy-core" if env.name == "jazzy" else env.name,
        python=env.path / "bin" / "python",
        tests=tuple(f"test/{name}" for name in env.tests),
        environ=lambda: COMPAT_TOOL.pytest_environ(ENV_TOOL.unsourced_env()),
        missing=missing,
        log=COMPAT_TOOL.COMPAT_DIR / f"{env.name}.log",
    )


WORLDS = (jazzy_world(), *(compat_world(env) for env in COMPAT_TOOL.ENVIRONMENTS))


@dataclass(frozen=True)
class Case:
    """One test of a world (``nodeid``), or, without one, why the world has none here."""

    world: World
    nodeid: str = ""
    problem: str = ""

    def __str__(self) -> str:
        return f"{self.world.name}: {self.nodeid or 'not run'}"


def pytest_command(world: World, *arguments: str) -> list[str]:
    """The world's pytest, without this session's cache, on ``arguments``."""
    return [str(world.python), "-m", "pytest", "-q", "-p", "no:cacheprovider", *arguments]


def collect(worlds: Sequence[World]) -> list[Case]:
    """Each world's tests, as its pytest collects them (the worlds at once); one Case saying
    why for a world that cannot run here or whose collection failed."""
    cases: list[Case] = []
    started: dict[World, subprocess.Popen[str]] = {}
    for world in worlds:
        if world.missing:
            cases.append(Case(world, problem=world.missing))
        elif not world.python.exists():
            cases.append(Case(world, problem=f"{world.python} is missing: run `make worlds`"))
        else:
            started[world] = subprocess.Popen(
                pytest_command(world, "--collect-only", *world.tests),
                cwd=REPO_ROOT,
                env=world.environ(),
                stdout=subprocess.PIPE,
                stderr=subprocess.STDOUT,
                text=True,
            )
    for world, process in started.items():
        output, _ = process.communicate()
        nodeids = [line for line in output.splitlines() if "::" in line]
        if process.returncode != 0 or not nodeids:
            problem = f"collecting in {world.name} failed:\n{output[-3000:]}"
            cases.append(Case(world, problem=problem))
        cases.extend(Case(world, nodeid) for nodeid in nodeids)
    return cases


def param(case: Case) -> Any:
    """``case`` as a pytest parameter (the Jazzy tests carry the ``ros`` marker)."""
    marks = [pytest.mark.ros] if case.world.name == "jazzy" else []
    return pytest.param(case, id=str(case), marks=marks)


CASES = collect(WORLDS)


def run_world(world: World, selected: list[str]) -> dict[str, list[str]]:
    """Run the world's pytest on ``selected`` node ids (all its tests: its test paths);
    each test's [outcome, text] by node id (conftest.py's REPORT_VARIABLE)."""
    everything = [case.nodeid for case in CASES if case.world == world]
    arguments = list(world.tests) if sorted(selected) == sorted(everything) else selected
    with tempfile.TemporaryDirectory(prefix=f"jtp-{world.name}-") as scratch:
        report = Path(scratch) / "report.json"
        environ = dict(world.environ(), **{REPORT_VARIABLE: str(report)})
        with world.log.open("w") as log:
            subprocess.run(
                pytest_command(world, *arguments),
                cwd=REPO_ROOT,
                env=environ,
                stdout=log,
                stderr=subprocess.STDOUT,
                timeout=WORLD_RUN_LIMIT_S,
                check=False,
            )
        if not report.exists():
            return {}
        outcomes: dict[str, list[str]] = json.loads(report.read_text(encoding="utf-8"))
        return outcomes


@pytest.fixture(scope="session")
def world_outcomes() -> dict[str, dict[str, list[str]]]:
    """Each world's outcomes by node id, filled by the first of its tests that runs."""
    return {}


@pytest.mark.parametrize("case", [param(case) for case in CASES])
def test_in_world(
    case: Case, world_outcomes: dict[str, dict[str, list[str]]], request: pytest.FixtureRequest
) -> None:
    """The world's test passed there (strict skips: a skip there is a failure)."""
    world = case.world
    if case.problem == world.missing and world.missing:
        pytest.skip(f"{world.name}: {world.missing}")
    if case.problem:
        pytest.fail(case.problem, pytrace=False)
    if world.name not in world_outcomes:
        selected = [
            item.callspec.params["case"].nodeid
            for item in request.session.items
            if isinstance(item, pytest.Function)
            and hasattr(item, "callspec")
            and item.originalname == "test_in_world"
            and item.callspec.params["case"].world == world
        ]
        world_outcomes[world.name] = run_world(world, selected)
    outcome, text = world_outcomes[world.name].get(case.nodeid, ["not run", ""])
    log = os.path.relpath(world.log, REPO_ROOT)
    if outcome == "skipped":
        pytest.skip(f"skipped in {world.name}: {text}")
    if outcome != "passed":
        pytest.fail(f"{outcome} in {world.name} (log: {log}):\n{text}", pytrace=False)


def test_humble_colcon_build(monkeypatch: pytest.MonkeyPatch) -> None:
    """colcon with Humble's setuptools 59.6.0 (Python 3.10), outside any sourced ROS, builds
    and installs the package without a warning (tools/compat.py's colcon check)."""
    env = next(env for env in COMPAT_TOOL.ENVIRONMENTS if env.colcon)
    world = compat_world(env)
    if world.missing:
        pytest.skip(f"{world.name}: {world.missing}")
    for name in ENV_TOOL.SOURCED_VARIABLES:
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("PATH", ENV_TOOL.unsourced_env()["PATH"])
    assert "installs all" in COMPAT_TOOL.colcon_build(world.python)


def test_a_test_reaching_ros_through_the_package_is_no_core_test(tmp_path: Path) -> None:
    """The core worlds have no ROS: a test importing a package module whose own top-level
    imports reach a ROS package (the doctor's listener imports diagnostic_msgs) is left out,
    as one importing rclpy is; a module that imports the listener only in a function (the
    doctor's command) does not reach it by being imported."""
    assert COMPAT_TOOL.package_imports_ros("joint_tf_publisher.cli.doctor.listener")
    assert not COMPAT_TOOL.package_imports_ros("joint_tf_publisher.cli.doctor.command")
    through_listener = tmp_path / "test_a.py"
    through_listener.write_text(
        "def test_x():\n    from joint_tf_publisher.cli.doctor.listener import Heard\n"
    )
    through_command = tmp_path / "test_b.py"
    through_command.write_text("from joint_tf_publisher.cli.doctor.command import main\n")
    assert COMPAT_TOOL.imports_ros(through_listener)
    assert not COMPAT_TOOL.imports_ros(through_command)
    assert "cli/test_doctor.py" in COMPAT_TOOL.core_tests()
    assert "cli/test_doctor_listener.py" not in COMPAT_TOOL.core_tests()


def test_a_module_reaching_ros_through_an_import_cycle_is_found_from_either_side(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Two of the package's modules that import each other, one of them rclpy after the
    other: both reach ROS, whichever is asked first (an answer given while the cycle was being
    read must not be kept)."""
    package = tmp_path / "joint_tf_publisher"
    package.mkdir()
    (package / "__init__.py").write_text("")
    (package / "first.py").write_text("from . import second\nimport rclpy\n")
    (package / "second.py").write_text("from .first import thing\n")
    (package / "apart.py").write_text("from . import second as _\nimport numpy\n")
    monkeypatch.setattr(COMPAT_TOOL, "ROOT", tmp_path)
    COMPAT_TOOL.package_imports_ros.cache_clear()
    COMPAT_TOOL._top_level_imports.cache_clear()
    try:
        assert COMPAT_TOOL.package_imports_ros("joint_tf_publisher.first")
        assert COMPAT_TOOL.package_imports_ros("joint_tf_publisher.second")
        assert COMPAT_TOOL.package_imports_ros("joint_tf_publisher.apart")
        assert not COMPAT_TOOL.package_imports_ros("joint_tf_publisher")
    finally:
        COMPAT_TOOL.package_imports_ros.cache_clear()
        COMPAT_TOOL._top_level_imports.cache_clear()
