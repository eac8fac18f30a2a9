"""Shared pytest setup: a private DDS domain per session and a small rclpy harness.

Environment (set before any test imports rclpy, inherited by every subprocess a test starts):

* ``ROS_DOMAIN_ID``: if unset, a value in 1..100 derived from this process id, so two test
  sessions on one machine (teammates, CI, ``make run``) do not hear each other.
* ``ROS_AUTOMATIC_DISCOVERY_RANGE=LOCALHOST`` (Kilted): discovery and traffic stay on loopback.

Strict runs: with ``JTP_STRICT_SKIPS=1`` (``make test`` and so CI set it) a skipped test or test
module fails: a broken or partial environment can never pass by skipping. Two allowances:
the launch tests (``test/launch/``), which need a ROS 2 install (launch, launch_testing, ros2,
tf2_ros), may skip in the pip world only, where neither a distro nor the ROS 2 client kit is
present (``JTP_ROS_WORLD``, set by tools/ros_env.sh, is ``pip`` or unset, and launch_testing
is not importable). With a distro or the kit they must run. And test/test_worlds.py's other
environments may skip (an interpreter missing) except in the kit world (the project's
machines and CI).

A run that test/test_worlds.py starts in another environment writes each test's outcome to
the file ``JTP_REPORT_JSON`` names.

Fixtures for tests that talk ROS (rclpy is imported lazily, so the core tests run without it):

* ``ros``: a :class:`RosHarness` with its own rclpy context, one node and an executor;
  ``ros.spin_until(predicate, timeout_s)`` spins until the predicate holds.
* ``ros_subprocess_env``: the environment for a child process that should join the same domain.

The child-process tests' fixtures (``markers``, ``hostile_on_the_path``: hostile modules in
the working folder, on ``PYTHONPATH`` and first on this process's path) come from
test/hostile_modules.py.
"""

from __future__ import annotations

import importlib.util
import json
import logging
import os
import signal
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

import pytest
from hostile_modules import hostile_on_the_path, markers  # noqa: F401  (fixtures)

DOMAIN_ID_RANGE = range(1, 101)


def private_domain_id(pid: int) -> int:
    """A DDS domain id in 1..100 derived from ``pid`` (ids up to 232 are valid on Linux)."""
    return DOMAIN_ID_RANGE.start + pid % len(DOMAIN_ID_RANGE)


def load_tool(name: str) -> ModuleType:
    """tools/<name>.py as a module (the project's scripts are not part of the package)."""
    path = Path(__file__).resolve().parent.parent / "tools" / f"{name}.py"
    spec = importlib.util.spec_from_file_location(f"jtp_{name}_tool", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up there
    spec.loader.exec_module(module)
    return module


#: The tests against pinocchio need numpy 2 and so an environment of their own
#: (tools/compat.py, run by test/test_worlds.py); where pinocchio is missing (.venv) they are
#: not collected.
collect_ignore = (
    [] if importlib.util.find_spec("pinocchio") else list(load_tool("compat").ORACLE_TESTS)
)


def union_supported() -> bool:
    """Whether this rclpy gives each message's publisher, which the static union needs
    (``ros.static_union.union_supported``); False without rclpy."""
    try:
        from joint_tf_publisher.ros.static_union import union_supported as supported
    except ImportError:
        return False
    return supported()


#: The static union's DDS tests need it (Kilted and later); elsewhere (Jazzy) the node refuses
#: ``static_union``, which test/ros/test_node_parameters.py checks in every world.
if not union_supported():
    collect_ignore += [
        "ros/test_node_static_union.py",
        "ros/test_node_static_union_hostile.py",
        "ros/test_fleet_static_union.py",
    ]

#: Test folders whose expectations other folders reuse (the over-DDS SDF tests compare with
#: test/description's hand-composed poses): importable from any test, even one run alone.
SHARED_TEST_FOLDERS = ("description",)
for _folder in SHARED_TEST_FOLDERS:
    _path = os.path.join(os.path.dirname(os.path.abspath(__file__)), _folder)
    if _path not in sys.path:
        sys.path.append(_path)


def pytest_configure(config: pytest.Config) -> None:
    """Give this session its own DDS domain on localhost unless the caller chose one.

    Also keep the package's logger propagating to the root logger (where pytest's ``caplog``
    listens): where launch is installed, launch_testing's pytest plugin imports it before any
    test, and launch makes every logger created afterwards a LaunchLogger that does not
    propagate.
    """
    os.environ.setdefault("ROS_DOMAIN_ID", str(private_domain_id(os.getpid())))
    os.environ.setdefault("ROS_AUTOMATIC_DISCOVERY_RANGE", "LOCALHOST")
    logging.getLogger("joint_tf_publisher").propagate = True
    sigint_for_children()


def sigint_for_children() -> None:
    """Children this process starts get SIGINT's default action, whatever this process got.

    A shell without job control starts a background command (``make test &`` in a script, an
    agent's or a CI runner's shell) with SIGINT ignored, and an ignored signal stays ignored
    across exec: every ``ros2 launch`` a launch test interrupts would ignore it and be killed
    after the test's timeout. A handled signal is reset to its default at exec, so SIGINT is
    handled here (as Python's own default handler) where it came ignored."""
    if signal.getsignal(signal.SIGINT) == signal.SIG_IGN:
        signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(autouse=True)
def session_domain(monkeypatch: pytest.MonkeyPatch) -> None:
    """The session's DDS domain back after each test. Code a test runs in-process may set
    another for the process (the bench's sections: ``bench.dds.use_bench_domain``, 100 to
    199), which every later test and the processes it starts would inherit; above 101 DDS's
    well-known ports fall among Linux's ephemeral ones (ROS 2's domain ID guide), where any
    process's outgoing socket may hold one."""
    monkeypatch.setenv("ROS_DOMAIN_ID", os.environ["ROS_DOMAIN_ID"])


#: The launch tests live in test/launch/ (a test module in a folder of this name).
LAUNCH_TEST_FOLDER = "launch"


def ros_world() -> str:
    """``distro``, ``kit`` or ``pip`` as tools/ros_env.sh says; ``pip`` when run without it."""
    return os.environ.get("JTP_ROS_WORLD") or "pip"


def launch_tests_may_skip() -> bool:
    """True only in the pip world: no distro, no kit, so no launch_testing to run them with."""
    return ros_world() == "pip" and importlib.util.find_spec("launch_testing") is None


def is_launch_test(path: str) -> bool:
    """True for a test module in a folder named ``launch`` (test/launch/)."""
    return os.path.basename(os.path.dirname(os.path.abspath(path))) == LAUNCH_TEST_FOLDER


def strict_skips() -> bool:
    """True when skips are failures: ``make test`` (and so CI) sets JTP_STRICT_SKIPS=1."""
    return os.environ.get("JTP_STRICT_SKIPS") == "1"


#: The tests run in other environments (test/test_worlds.py): a world that cannot run here
#: skips, saying why, except on the project's machines (the kit world), where all must run.
WORLDS_TEST_MODULE = "test_worlds.py"


def allowed_skip(where: str) -> bool:
    """True for the two skips a strict run allows (launch tests, other worlds) where allowed."""
    if is_launch_test(where):
        return launch_tests_may_skip()
    return os.path.basename(where) == WORLDS_TEST_MODULE and ros_world() != "kit"


def _fail_skip(report: pytest.CollectReport | pytest.TestReport, where: str) -> None:
    """Turn a skipped report into a failure naming the skip's reason."""
    if not report.skipped or allowed_skip(where):
        return
    reason = report.longrepr[-1] if isinstance(report.longrepr, tuple) else report.longrepr
    report.outcome = "failed"
    report.longrepr = f"skipped in a strict run (JTP_STRICT_SKIPS=1), reason: {reason}"


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector: pytest.Collector) -> Iterator[None]:
    """In a strict run, a module that skips itself (importorskip) fails instead."""
    outcome = yield
    if strict_skips():
        _fail_skip(outcome.get_result(), str(collector.path))


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> Iterator[None]:
    """In a strict run, a skipped test fails instead (an xfail stays an xfail)."""
    outcome = yield
    report = outcome.get_result()
    if strict_skips() and not hasattr(report, "wasxfail"):
        _fail_skip(report, str(item.path))


#: Where a pytest run started by test/test_worlds.py (in another environment) writes each
#: test's outcome: the file named by this variable, as JSON {nodeid: [outcome, text]}.
REPORT_VARIABLE = "JTP_REPORT_JSON"
_outcomes: dict[str, list[str]] = {}


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    """Record each test's outcome (its worst phase, after the strict-skip rule) for
    REPORT_VARIABLE."""
    if not os.environ.get(REPORT_VARIABLE):
        return
    outcome = _outcomes.setdefault(report.nodeid, ["passed", ""])
    if report.failed or (report.skipped and outcome[0] == "passed"):
        outcome[0] = report.outcome
        outcome[1] += f"[{report.when}] {report.longreprtext}\n"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    """Write the outcomes recorded for REPORT_VARIABLE."""
    path = os.environ.get(REPORT_VARIABLE)
    if path:
        with open(path, "w", encoding="utf-8") as out:
            json.dump(_outcomes, out)


def pytest_report_header(config: pytest.Config) -> list[str]:
    """Show the ROS world and DDS settings in pytest's header, to tell runs apart."""
    launch_tests = "may skip (pip world)" if launch_tests_may_skip() else "must run"
    return [
        f"ROS world: {ros_world()} (tools/ros_env.sh); launch tests {launch_tests}",
        f"ROS_DOMAIN_ID={os.environ.get('ROS_DOMAIN_ID')} "
        f"ROS_AUTOMATIC_DISCOVERY_RANGE={os.environ.get('ROS_AUTOMATIC_DISCOVERY_RANGE')}",
    ]


@dataclass
class RosHarness:
    """One rclpy context with one node (``node``) spun by a single-threaded executor."""

    context: Any
    node: Any
    executor: Any
    _owned: list[Any] = field(default_factory=list)

    def spin_until(self, predicate: Callable[[], bool], timeout_s: float = 10.0) -> bool:
        """Spin until ``predicate()`` is true; False if ``timeout_s`` seconds pass first."""
        deadline = time.monotonic() + timeout_s
        while not predicate():
            remaining = deadline - time.monotonic()
            if remaining <= 0.0:
                return predicate()
            self.executor.spin_once(timeout_sec=min(0.05, remaining))
        return True

    def spin_for(self, duration_s: float) -> None:
        """Spin for ``duration_s`` seconds, handling whatever arrives."""
        deadline = time.monotonic() + duration_s
        while (remaining := deadline - time.monotonic()) > 0.0:
            self.executor.spin_once(timeout_sec=min(0.05, remaining))

    def create_node(self, name: str) -> Any:
        """A further node in this context, spun by the same executor, destroyed at teardown."""
        import rclpy

        extra = rclpy.create_node(name, context=self.context)
        self.executor.add_node(extra)
        self._owned.append(extra)
        return extra


@pytest.fixture
def ros(request: pytest.FixtureRequest) -> Iterator[RosHarness]:
    """An initialised rclpy context with one node named after the test; shut down afterwards."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    node_name = "test_" + "".join(c if c.isalnum() else "_" for c in request.node.name)[:50]
    node = rclpy.create_node(node_name, context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    harness = RosHarness(context=context, node=node, executor=executor)
    try:
        yield harness
    finally:
        for extra in [*harness._owned, node]:
            executor.remove_node(extra)
            extra.destroy_node()
        executor.shutdown()
        context.try_shutdown()


@pytest.fixture(scope="module")
def probe() -> Iterator[Any]:
    """The test module's DDS participant for end-to-end tests (``node_harness.Probe``)."""
    from node_harness import open_probe  # imports rclpy: only for the tests that need it

    with open_probe() as participant:
        yield participant


@pytest.fixture
def ros_subprocess_env() -> dict[str, str]:
    """``os.environ`` for a child process on this session's DDS domain, unbuffered output."""
    env = dict(os.environ)
    env["PYTHONUNBUFFERED"] = "1"
    return env
