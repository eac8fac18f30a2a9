#!/usr/bin/env python3
"""Mutation testing over chosen modules with the tests that mirror them (``make mutate``).

``make mutate MODULES="joint_tf_publisher/node_core/parameters.py ..."`` runs mutmut 3
(requirements/mutate.txt, installed into .venv by the target) over the given modules, each
with its tests: ``joint_tf_publisher/A/B/x.py`` is tested by ``test/A/B/test_x.py`` (the test
tree mirrors the package), unless tools/mutate_tests.yaml names its tests (where the tree does
not mirror: ``cli/bag/repair.py`` is tested by ``test/bag/test_bag_repair.py``). It prints each
surviving mutant (file:line and the diff) and a count per module (killed / survived / timeout /
no tests), and exits 0 once mutmut ran (survivors are a report, not a failure). ``--mutants
NAME ...`` (``make mutate MUTANTS=...``) tests only those: a run's survivors again, once their
tests are written. Not in CI.

mutmut's mutants are switched on per test run, in a process that imported the package with
none on: what the package builds while it is imported (a table of parser closures,
``parse_x = factory("x")``) keeps the original code. The mutants of those functions, the ones
the package's top level calls (``import_time_functions``), are therefore run again after
mutmut's run, each in a fresh pytest process that has it on from the start (``fresh_run``),
and their results replace mutmut's: they are counted like the rest. With ``--untraced``
(``MUTATE_UNTRACED=1``) so are the mutants mutmut found no test for or that survived its
run: code the tests run in a child process (bag repair's writer) inherits the mutant from the
fresh run's environment.

mutmut works in a folder of its own: ``.mutate/`` of the checkout this script is in (whatever
the working folder), made anew each run unless ``--keep`` (``MUTATE_KEEP=1``) finds the last
run's of the same modules (``prepare_work_dir``), where the package, the tests and the data
they read are linked and mutmut's ``mutants/`` copy is written; mutmut's fork server
(``process_isolation = forkserver``) forks each mutant's pytest run from a process that
never started DDS, so tests that start rclpy nodes run as they do under ``make test``. In a
kept folder, a module whose tests changed since the last run has its survivors judged again
(``judge_survivors_again``). One mutant at a time by default (``MUTATE_JOBS``): the machine's
other work keeps its cores.

Exit status: 0 when every module was run, 1 on a module or test file that does not exist or a
failed mutmut run (the clean tests failing first, for example), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import ast
import fnmatch
import hashlib
import json
import os
import re
import shutil
import subprocess
import sys
import time
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT / "tools"))  # source_imports, shared with tools/compat.py
from source_imports import imported_module, package_of  # noqa: E402

#: Where mutmut works (linked inputs, its mutants/ copy and results); ignored by git.
WORK_DIR = ROOT / ".mutate"
PACKAGE = "joint_tf_publisher"
#: Modules whose tests do not mirror them: module path -> test files (repository-relative).
OVERRIDES_FILE = ROOT / "tools" / "mutate_tests.yaml"
#: What the tests read besides the package and test/ (linked into WORK_DIR, copied by mutmut).
TEST_INPUTS = (
    "test",
    "urdf",
    "config",
    "launch",
    "docs",
    "bench",
    "tools",
    "requirements",
    "resource",
    "interfaces",
    "package.xml",
    "setup.py",
    "README.md",
    "CHANGELOG.rst",
    "LICENSE",
    "pyproject.toml",
)
#: The statuses counted per module, in the order printed.
COUNTED = ("killed", "survived", "timeout", "no tests")
#: mutmut stops a mutant's test run after this many times (the tests' duration in its stats
#: run + 1 s): its default, 15, timed out mutants that fail at once on the shared machine
#: under a load of 11 (a forked run's collection alone took longer).
TIMEOUT_MULTIPLIER = 60
#: A test's wall-clock limit in mutmut's runs, s (pytest-timeout, through PYTEST_ADDOPTS so
#: that a kept folder's configuration is unchanged): mutmut's limit is CPU time, and a mutant
#: that deadlocks a test and its child (bag repair's writer, each reading the pipe from the
#: other) spends none, so the run would wait forever; the test fails instead (killed). The
#: slowest mapped test takes about 2 s on an idle machine.
TEST_TIMEOUT_S = 60
#: mutmut's exit code of a test run stopped by its timeout (its ``status_by_exit_code``).
TIMEOUT_EXIT_CODE = 36
#: mutmut's exit codes of the verdicts a test added since can change: survived, no tests.
UNKILLED_EXIT_CODES = frozenset({0, 5, 33})
#: In WORK_DIR: each module's tests as the last run had them (``tests_digest``), by module.
TESTS_FILE = "tests.json"
#: A fresh run of a mutant is stopped after this many times the clean run's duration, plus
#: ``FRESH_TIMEOUT_EXTRA_S`` (a mutant that loops forever), s.
FRESH_TIMEOUT_FACTOR = 10
FRESH_TIMEOUT_EXTRA_S = 60.0


@dataclass(frozen=True)
class Target:
    """One module to mutate: its repository-relative path and the test files that test it."""

    module: Path
    tests: tuple[Path, ...]

    @property
    def dotted(self) -> str:
        """The module's import name (``joint_tf_publisher.node_core.parameters``)."""
        return ".".join(self.module.with_suffix("").parts)


def mirrored_tests(module: Path) -> tuple[Path, ...]:
    """The test file that mirrors MODULE (``test/<subpackage>/test_<name>.py``), if it exists."""
    inner = module.relative_to(PACKAGE)
    candidate = Path("test") / inner.parent / f"test_{inner.stem}.py"
    return (candidate,) if (ROOT / candidate).is_file() else ()


def load_overrides() -> dict[Path, tuple[Path, ...]]:
    """tools/mutate_tests.yaml: module path -> its test files, where the tree does not mirror."""
    import yaml

    tree = yaml.safe_load(OVERRIDES_FILE.read_text()) or {}
    return {Path(module): tuple(Path(test) for test in tests) for module, tests in tree.items()}


def resolve_targets(modules: Sequence[str]) -> list[Target]:
    """Each MODULES entry (repository-relative or absolute) with its tests; SystemExit(1) on a
    module or test file that does not exist, or a module no test file is known for."""
    overrides = load_overrides()
    targets = []
    for given in modules:
        path = Path(given)
        absolute = path if path.is_absolute() else ROOT / path
        try:
            module = absolute.resolve().relative_to(ROOT)
        except ValueError:
            sys.exit(f"mutate: {given}: not in this checkout ({ROOT})")
        if not (ROOT / module).is_file() or module.parts[0] != PACKAGE or module.suffix != ".py":
            sys.exit(f"mutate: {given}: not a Python module of {PACKAGE}/")
        tests = overrides.get(module) or mirrored_tests(module)
        if not tests:
            sys.exit(
                f"mutate: {module}: no test/…/test_{module.stem}.py mirrors it; "
                f"name its tests in {OVERRIDES_FILE.relative_to(ROOT)}"
            )
        missing = [str(test) for test in tests if not (ROOT / test).is_file()]
        if missing:
            sys.exit(f"mutate: {module}: test file(s) not found: {', '.join(missing)}")
        targets.append(Target(module, tests))
    return targets


def mutmut_config(targets: Sequence[Target]) -> str:
    """The [mutmut] section of WORK_DIR/setup.cfg for TARGETS."""

    def listed(items: Sequence[str]) -> str:
        return "".join(f"\n    {item}" for item in items)

    tests = sorted({str(test) for target in targets for test in target.tests})
    inputs = [name for name in TEST_INPUTS if (ROOT / name).exists()]
    return (
        "[mutmut]\n"
        f"source_paths ={listed([PACKAGE])}\n"
        f"only_mutate ={listed([str(target.module) for target in targets])}\n"
        f"pytest_add_cli_args_test_selection ={listed(tests)}\n"
        f"also_copy ={listed(inputs)}\n"
        "process_isolation = forkserver\n"
        f"timeout_multiplier = {TIMEOUT_MULTIPLIER:g}\n"
        "use_git_change_detection = false\n"
    )


def prepare_work_dir(targets: Sequence[Target], keep: bool = False) -> bool:
    """WORK_DIR for TARGETS; True when kept. With KEEP, and when the last run's configuration
    (setup.cfg: the same modules and tests) is this one, it is kept as that run left it:
    mutmut then traces only new tests, makes mutants again only of the functions that
    changed and runs only the mutants with no verdict (or those named), and the package's
    unmutated modules that changed since are copied again (``drop_stale_copies``).
    Otherwise it is made anew: the package and the test inputs linked, setup.cfg written."""
    setup_cfg = f"{(ROOT / 'setup.cfg').read_text()}\n{mutmut_config(targets)}"
    config = WORK_DIR / "setup.cfg"
    if keep and config.is_file() and config.read_text() == setup_cfg:
        drop_stale_copies(targets)
        return True
    shutil.rmtree(WORK_DIR, ignore_errors=True)
    WORK_DIR.mkdir()
    for name in (PACKAGE, *TEST_INPUTS):
        if (ROOT / name).exists():
            (WORK_DIR / name).symlink_to(ROOT / name)
    config.write_text(setup_cfg)
    return False


def tests_digest(target: Target) -> str:
    """A digest (sha256, hex) of TARGET's test files, names and contents: it differs once a
    test is added, changed or removed there."""
    digest = hashlib.sha256()
    for test in target.tests:
        digest.update(f"{test}\0".encode() + (ROOT / test).read_bytes() + b"\0")
    return digest.hexdigest()


def unkilled(exit_codes: Mapping[str, int | None]) -> list[str]:
    """The mutants of EXIT_CODES (mutmut's, by name) whose verdict a new test can change:
    survived, or no tests."""
    return sorted(name for name, code in exit_codes.items() if code in UNKILLED_EXIT_CODES)


def judge_survivors_again(targets: Sequence[Target]) -> list[Target]:
    """In a kept WORK_DIR, the TARGETS whose tests changed since the last run (``TESTS_FILE``)
    get their ``unkilled`` mutants' verdicts dropped, and their fresh-run records with them:
    mutmut keeps a verdict while its function is unchanged, so a survivor that a test written
    since kills read "survived" until then. Every target's digest is recorded for the next
    run. The targets so treated."""
    record = WORK_DIR / TESTS_FILE
    before = json.loads(record.read_text()) if record.is_file() else {}
    changed = []
    for target in targets:
        if before.get(str(target.module)) == tests_digest(target):
            continue
        if (WORK_DIR / "mutants" / f"{target.module}.meta").is_file():
            data = mutation_data(target)
            again = unkilled(data.exit_code_by_key)
            data.exit_code_by_key.update(dict.fromkeys(again))
            data.save()
            judged = {name: hashed for name, hashed in fresh_runs().items() if name not in again}
            (WORK_DIR / FRESH_RUNS_FILE).write_text(json.dumps(judged, indent=1, sort_keys=True))
            changed.append(target)
    record.write_text(
        json.dumps({str(target.module): tests_digest(target) for target in targets}, indent=1)
    )
    return changed


def drop_stale_copies(targets: Sequence[Target]) -> None:
    """The copies in WORK_DIR/mutants of the package's modules not mutated (not TARGETS')
    that differ from the module now, removed so that mutmut copies them again (it copies a
    source file once and compares only the mutated ones' times)."""
    mutated = {target.module for target in targets}
    for source in sorted((ROOT / PACKAGE).rglob("*.py")):
        module = source.relative_to(ROOT)
        copy = WORK_DIR / "mutants" / module
        if module not in mutated and copy.is_file() and copy.read_bytes() != source.read_bytes():
            copy.unlink()


def run_mutmut(jobs: int, mutants: Sequence[str] = ()) -> int:
    """``mutmut run`` (of the interpreter running this script: .venv's) in WORK_DIR, over
    ``mutants`` only where given (names or globs, as the report prints them); its exit
    status."""
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *mutants]
    return subprocess.run(command, cwd=WORK_DIR, env=with_test_timeout(), check=False).returncode


def with_test_timeout(environ: Mapping[str, str] | None = None) -> dict[str, str]:
    """ENVIRON (default: this process's) with ``TEST_TIMEOUT_S`` added to PYTEST_ADDOPTS."""
    environ = dict(os.environ if environ is None else environ)
    given = environ.get("PYTEST_ADDOPTS", "")
    environ["PYTEST_ADDOPTS"] = f"{given} --timeout={TEST_TIMEOUT_S}".strip()
    return environ


def mutation_data(target: Target) -> Any:
    """mutmut's results of TARGET's module in WORK_DIR, loaded (its ``SourceFileMutationData``:
    verdicts by mutant name, hashes by function), read in this process: mutmut reads its
    configuration from the working folder, so this one moves there."""
    os.chdir(WORK_DIR)
    from mutmut.mutation.data import SourceFileMutationData

    data = SourceFileMutationData(path=target.module)
    data.load()
    return data


def mutant_results(target: Target) -> dict[str, str]:
    """Every mutant of TARGET's module with its status (``killed``, ``survived``, ...), by
    mutant name, from mutmut's results in WORK_DIR."""
    from mutmut.stats import status_by_exit_code

    data = mutation_data(target)
    return {name: status_by_exit_code[code] for name, code in data.exit_code_by_key.items()}


def import_name(module: Path) -> str:
    """The name MODULE (repository-relative) is imported by: its package's for ``__init__.py``."""
    return ".".join(module.with_suffix("").parts).removesuffix(".__init__")


def runs_as_script(node: ast.AST) -> bool:
    """NODE is ``if __name__ == "__main__":`` (its body does not run at import)."""
    if not isinstance(node, ast.If) or not isinstance(node.test, ast.Compare):
        return False
    sides = [node.test.left, *node.test.comparators]
    return {ast.dump(side) for side in sides} == {
        ast.dump(ast.Name("__name__", ast.Load())),
        ast.dump(ast.Constant("__main__")),
    }


def calls_run_now(body: Iterable[ast.AST]) -> set[str]:
    """The names BODY calls by name when it runs: its calls outside the bodies of the
    functions and lambdas it defines (their decorators and default values run now, their
    bodies when called) and of ``if __name__ == "__main__":``; a class body runs now."""
    names: set[str] = set()
    pending = list(body)
    while pending:
        node = pending.pop()
        if runs_as_script(node):
            continue
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.Lambda):
            arguments = node.args
            pending += [*arguments.defaults, *(d for d in arguments.kw_defaults if d)]
            if not isinstance(node, ast.Lambda):
                pending += node.decorator_list
            continue
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Name):
            names.add(node.func.id)
        pending += ast.iter_child_nodes(node)
    return names


def imported_from(tree: ast.Module, module: Path, source: str) -> dict[str, str]:
    """The names TREE (the module MODULE, repository-relative) binds by ``from SOURCE import
    name [as local]`` (absolute or relative): local name -> name in SOURCE."""
    package = package_of(module)
    names = {}
    for node in ast.walk(tree):
        if not isinstance(node, ast.ImportFrom) or imported_module(node, package) != source:
            continue
        names.update({alias.asname or alias.name: alias.name for alias in node.names})
    return names


def import_time_functions(target: Target, root: Path = ROOT) -> frozenset[str]:
    """The functions of TARGET's module that run while the package (in ROOT) is imported:
    those the top level of a package module calls by name (the module's own, or another's
    that imports them with ``from ... import``), and the module's functions these call
    outside their nested functions (a factory's helpers). Methods are not followed."""
    source = import_name(target.module)
    tree = ast.parse((root / target.module).read_text())
    functions = {
        node.name: node
        for node in tree.body
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
    }
    called = calls_run_now(tree.body) & functions.keys()
    for path in sorted((root / PACKAGE).rglob("*.py")):
        module = path.relative_to(root)
        if module == target.module:
            continue
        other = ast.parse(path.read_text())
        local = imported_from(other, module, source)
        called |= {local[name] for name in calls_run_now(other.body) if name in local}
    called &= functions.keys()
    pending = list(called)
    while pending:
        helpers = calls_run_now(functions[pending.pop()].body) & functions.keys() - called
        called |= helpers
        pending += helpers
    return frozenset(called)


def mutated_function(mutant: str) -> tuple[str | None, str]:
    """The class (None for a module-level function) and the function MUTANT mutates: mutmut
    names it ``<module>.x_<function>__mutmut_N`` or ``<module>.xǁ<Class>ǁ<method>__mutmut_N``."""
    mangled = mutant.partition("__mutmut_")[0].rpartition(".")[2]
    if "ǁ" in mangled:
        _, class_name, function_name = mangled.split("ǁ")
        return class_name, function_name
    return None, mangled.removeprefix("x_")


def fresh_run(target: Target, mutant: str, timeout_s: float | None = None) -> tuple[int, float]:
    """TARGET's tests in a fresh pytest process of mutmut's ``mutants/`` copy with MUTANT on
    from its start (imports included; "" for none, ``fail`` for mutmut's check that the copy
    is what the tests import): pytest's exit status (``TIMEOUT_EXIT_CODE`` after
    TIMEOUT_S) and the run's duration, s."""
    mutants_dir = WORK_DIR / "mutants"
    path = os.pathsep.join(filter(None, [str(mutants_dir), os.environ.get("PYTHONPATH")]))
    env = {**with_test_timeout(), "MUTANT_UNDER_TEST": mutant, "PYTHONPATH": path}
    command = [sys.executable, "-m", "pytest", "--rootdir=.", "-x", "-q", "-p", "no:cacheprovider"]
    command += [str(test) for test in target.tests]
    start = time.monotonic()
    try:
        completed = subprocess.run(
            command,
            cwd=mutants_dir,
            env=env,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            timeout=timeout_s,
            check=False,
        )
    except subprocess.TimeoutExpired:
        return TIMEOUT_EXIT_CODE, time.monotonic() - start
    return completed.returncode, time.monotonic() - start


def fresh_timeout_s(target: Target) -> float:
    """The timeout of TARGET's fresh mutant runs, from a clean fresh run of its tests;
    SystemExit(1) when that run fails or when mutmut's forced failure passes (the tests
    would not import the mutated copy)."""
    status, duration_s = fresh_run(target, "")
    if status != 0:
        sys.exit(f"mutate: {target.module}: its tests fail in a fresh run (exit {status})")
    if fresh_run(target, "fail")[0] == 0:
        sys.exit(f"mutate: {target.module}: its tests do not import {WORK_DIR}/mutants")
    return FRESH_TIMEOUT_FACTOR * duration_s + FRESH_TIMEOUT_EXTRA_S


def save_results(target: Target, exit_codes: Mapping[str, int]) -> None:
    """EXIT_CODES (by mutant name) into mutmut's results of TARGET's module (its ``.meta``
    file in WORK_DIR: the report and ``mutmut browse`` read them), each with its function's
    hash in ``FRESH_RUNS_FILE`` (a run that keeps WORK_DIR judges it again only once the
    function changed)."""
    data = mutation_data(target)
    data.exit_code_by_key.update(exit_codes)
    data.save()
    judged = fresh_runs()
    judged.update({name: function_hash(data.hash_by_function_name, name) for name in exit_codes})
    (WORK_DIR / FRESH_RUNS_FILE).write_text(json.dumps(judged, indent=1, sort_keys=True))


#: In WORK_DIR: the mutants ``fresh_run`` judged, with their function's hash (mutmut's) then.
FRESH_RUNS_FILE = "fresh_runs.json"


def fresh_runs() -> dict[str, str | None]:
    """``FRESH_RUNS_FILE``'s record (empty when there is none)."""
    record = WORK_DIR / FRESH_RUNS_FILE
    return json.loads(record.read_text()) if record.is_file() else {}


def function_hash(hash_by_function: Mapping[str, str], mutant: str) -> str | None:
    """The hash mutmut keeps of the function MUTANT changes (None: not among them)."""
    return hash_by_function.get(mutant.rpartition("__mutmut_")[0].rpartition(".")[2])


def judged_already(target: Target, mutants: Sequence[str]) -> set[str]:
    """Those of MUTANTS whose ``fresh_run`` verdict in WORK_DIR still stands: judged by a
    fresh run, and their function unchanged since (mutmut keeps verdicts of unchanged
    functions; it gave the others a new one of its own)."""
    return still_judged(fresh_runs(), mutation_data(target).hash_by_function_name, mutants)


def still_judged(
    judged: Mapping[str, str | None], hash_by_function: Mapping[str, str], mutants: Sequence[str]
) -> set[str]:
    """Those of MUTANTS in JUDGED (``fresh_runs``) whose function's hash is the one recorded."""
    return {
        name
        for name in mutants
        if name in judged and judged[name] == function_hash(hash_by_function, name)
    }


def fresh_mutants(
    results: Mapping[str, str],
    import_time: frozenset[str],
    wanted: Sequence[str] = (),
    untraced: bool = False,
) -> list[str]:
    """The mutants of RESULTS (name -> mutmut's status) that a fresh run judges: those of the
    IMPORT_TIME functions (``import_time_functions``) and, where UNTRACED, those mutmut found
    no test for ("no tests") or whose tests let them survive ("survived": mutmut's run
    followed only the tests that call the function in-process, where a test that runs it in
    a child, the writer's storage read back from its bag, is neither followed nor given the
    mutant); only those matching WANTED's names or globs, where given."""
    at_import = {(None, function) for function in import_time}

    def judged_fresh(name: str, status: str) -> bool:
        return mutated_function(name) in at_import or (
            untraced and status in ("no tests", "survived")
        )

    return sorted(
        name
        for name, status in results.items()
        if judged_fresh(name, status)
        and (not wanted or any(fnmatch.fnmatchcase(name, glob) for glob in wanted))
    )


def run_fresh_mutants(
    targets: Sequence[Target], wanted: Sequence[str] = (), untraced: bool = False
) -> None:
    """Each target's ``fresh_mutants`` run again by ``fresh_run`` (each one's status printed
    as it ends), their results saved over mutmut's."""
    from mutmut.stats import status_by_exit_code

    for target in targets:
        forked = mutant_results(target)
        functions = import_time_functions(target)
        mutants = fresh_mutants(forked, functions, wanted, untraced)
        if not wanted:  # mutmut ran only the undecided: so does this
            mutants = sorted(set(mutants) - judged_already(target, mutants))
        if not mutants:
            continue
        what = f"what the package runs at import ({', '.join(sorted(functions)) or 'none'})"
        if untraced:
            what += " or that no test runs in its own process"
        print(f"\nmutate: {target.module}: {len(mutants)} mutant(s) of {what}, each in a fresh")
        print("pytest process that has it on from its start, child processes included")
        timeout_s = fresh_timeout_s(target)
        for name in mutants:
            exit_code = fresh_run(target, name, timeout_s)[0]
            save_results(target, {name: exit_code})  # kept if the run is stopped meanwhile
            status = status_by_exit_code[exit_code]
            print(f"  {name}: {status} (in mutmut's run: {forked[name]})", flush=True)


def mutant_diff(target: Target, mutant: str) -> str:
    """MUTANT's diff against TARGET's module (the function it changes), as ``mutmut show``."""
    os.chdir(WORK_DIR)
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    return str(get_diff_for_mutant(mutant, path=target.module))


def function_start_line(source: str, mutant: str) -> int:
    """The first line (decorators included) of the function MUTANT mutates in SOURCE; 1 if it
    is not found."""
    class_name, function_name = mutated_function(mutant)
    tree = ast.parse(source)
    scopes: list[ast.AST] = [tree]
    if class_name is not None:
        scopes = [
            node
            for node in ast.walk(tree)
            if isinstance(node, ast.ClassDef) and node.name == class_name
        ]
    for scope in scopes:
        for node in ast.iter_child_nodes(scope):
            if (
                isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
                and node.name == function_name
            ):
                return min([node.lineno] + [d.lineno for d in node.decorator_list])
    return 1


def changed_line(diff: str, function_line: int) -> int:
    """The file line of the first line DIFF removes, given the function's first file line."""
    offset = 0
    in_hunk = False
    for line in diff.splitlines():
        hunk = re.match(r"@@ -(\d+)", line)
        if hunk:
            offset, in_hunk = int(hunk.group(1)), True
            continue
        if not in_hunk:
            continue
        if line.startswith("-"):
            return function_line + offset - 1
        if not line.startswith("+"):
            offset += 1
    return function_line


def report(targets: Sequence[Target]) -> None:
    """Each survivor (file:line and diff), then each module's counts."""
    statuses = {target: mutant_results(target) for target in targets}
    for target in targets:
        source = (ROOT / target.module).read_text()
        mine = statuses[target]
        for name in sorted(n for n, status in mine.items() if status == "survived"):
            diff = mutant_diff(target, name)
            line = changed_line(diff, function_start_line(source, name))
            print(f"\nsurvived: {target.module}:{line}  ({name})\n{diff}")
    print("\nmutate: per module (killed / survived / timeout / no tests / other)")
    for target in targets:
        counts = Counter(statuses[target].values())
        other = sum(count for status, count in counts.items() if status not in COUNTED)
        numbers = " / ".join(str(counts[status]) for status in COUNTED)
        tests = ", ".join(str(test) for test in target.tests)
        print(f"  {target.module}: {numbers} / {other}   (tests: {tests})")


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("modules", nargs="+", help="package modules, e.g. joint_tf_publisher/x.py")
    parser.add_argument(
        "--jobs",
        type=int,
        default=int(os.environ.get("MUTATE_JOBS") or 1),
        help="mutants tested at once (default: MUTATE_JOBS or 1)",
    )
    parser.add_argument(
        "--mutants",
        nargs="+",
        default=(),
        metavar="NAME",
        help="only these mutants (names or globs as the report prints them, e.g. the "
        "survivors of a run, again after adding tests)",
    )
    parser.add_argument(
        "--keep",
        action="store_true",
        default=os.environ.get("MUTATE_KEEP", "") not in ("", "0"),
        help="keep the last run's folder when it had these modules (default: MUTATE_KEEP): "
        "only new tests are traced and only mutants with no verdict run, plus those named",
    )
    parser.add_argument(
        "--untraced",
        action="store_true",
        default=os.environ.get("MUTATE_UNTRACED", "") not in ("", "0"),
        help="also run the mutants mutmut found no test for, each in a fresh pytest process "
        "(default: MUTATE_UNTRACED): code the tests run in a child process (bag repair's "
        "writer) inherits the mutant there",
    )
    args = parser.parse_args(argv)
    targets = resolve_targets(args.modules)
    if prepare_work_dir(targets, args.keep):
        print(f"mutate: the last run's verdicts kept ({WORK_DIR}); MUTATE_KEEP=0 starts afresh")
    for target in judge_survivors_again(targets):
        print(f"mutate: {target.module}: its tests changed: its survivors are judged again")
    status = run_mutmut(max(1, args.jobs), args.mutants)
    if status != 0:
        print(f"mutate: mutmut run failed (exit {status}); its folder: {WORK_DIR}", file=sys.stderr)
        return 1
    run_fresh_mutants(targets, args.mutants, args.untraced)
    report(targets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
