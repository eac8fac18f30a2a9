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

mutmut works in a folder of its own: ``.mutate/`` of the checkout this script is in (whatever
the working folder), made anew each run, where the package, the tests and the data they read
are linked and mutmut's ``mutants/`` copy is written; mutmut's fork server (``process_isolation
= forkserver``) forks each mutant's pytest run from a process that never started DDS, so tests
that start rclpy nodes run as they do under ``make test``. One mutant at a time by default
(``MUTATE_JOBS``): the machine's other work keeps its cores.

Exit status: 0 when every module was run, 1 on a module or test file that does not exist or a
failed mutmut run (the clean tests failing first, for example), 2 on usage errors.
"""

from __future__ import annotations

import argparse
import ast
import os
import re
import shutil
import subprocess
import sys
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
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
        "use_git_change_detection = false\n"
    )


def prepare_work_dir(targets: Sequence[Target]) -> None:
    """WORK_DIR made anew: the package and the test inputs linked, setup.cfg with the config."""
    shutil.rmtree(WORK_DIR, ignore_errors=True)
    WORK_DIR.mkdir()
    for name in (PACKAGE, *TEST_INPUTS):
        if (ROOT / name).exists():
            (WORK_DIR / name).symlink_to(ROOT / name)
    setup_cfg = (ROOT / "setup.cfg").read_text()
    (WORK_DIR / "setup.cfg").write_text(f"{setup_cfg}\n{mutmut_config(targets)}")


def run_mutmut(jobs: int, mutants: Sequence[str] = ()) -> int:
    """``mutmut run`` (of the interpreter running this script: .venv's) in WORK_DIR, over
    ``mutants`` only where given (names or globs, as the report prints them); its exit
    status."""
    command = [sys.executable, "-m", "mutmut", "run", "--max-children", str(jobs), *mutants]
    return subprocess.run(command, cwd=WORK_DIR, check=False).returncode


def mutant_results(target: Target) -> dict[str, str]:
    """Every mutant of TARGET's module with its status (``killed``, ``survived``, ...), by
    mutant name, from mutmut's results in WORK_DIR (read in this process: mutmut reads its
    configuration from the working folder, so this one moves there)."""
    os.chdir(WORK_DIR)
    from mutmut.mutation.data import SourceFileMutationData
    from mutmut.stats import status_by_exit_code

    data = SourceFileMutationData(path=target.module)
    data.load()
    return {name: status_by_exit_code[code] for name, code in data.exit_code_by_key.items()}


def mutant_diff(target: Target, mutant: str) -> str:
    """MUTANT's diff against TARGET's module (the function it changes), as ``mutmut show``."""
    os.chdir(WORK_DIR)
    from mutmut.mutation.diff_apply import get_diff_for_mutant

    return str(get_diff_for_mutant(mutant, path=target.module))


def function_start_line(source: str, mutant: str) -> int:
    """The first line (decorators included) of the function MUTANT mutates in SOURCE; 1 if it
    is not found. mutmut names it ``<module>.x_<function>__mutmut_N`` or
    ``<module>.xǁ<Class>ǁ<method>__mutmut_N``."""
    mangled = mutant.partition("__mutmut_")[0].rpartition(".")[2]
    if "ǁ" in mangled:
        _, class_name, function_name = mangled.split("ǁ")
    else:
        class_name, function_name = None, mangled.removeprefix("x_")
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
    args = parser.parse_args(argv)
    targets = resolve_targets(args.modules)
    prepare_work_dir(targets)
    status = run_mutmut(max(1, args.jobs), args.mutants)
    if status != 0:
        print(f"mutate: mutmut run failed (exit {status}); its folder: {WORK_DIR}", file=sys.stderr)
        return 1
    report(targets)
    return 0


if __name__ == "__main__":
    sys.exit(main())
