"""tools/mutate.py (``make mutate``): which tests a module gets, and where a survivor is."""

from __future__ import annotations

import ast
import json
from pathlib import Path

import pytest
from conftest import load_tool

MUTATE = load_tool("mutate")


def test_a_module_gets_the_test_file_that_mirrors_it() -> None:
    (target,) = MUTATE.resolve_targets(["joint_tf_publisher/node_core/remote_output.py"])
    assert target.tests == (Path("test/node_core/test_remote_output.py"),)
    assert target.dotted == "joint_tf_publisher.node_core.remote_output"


def test_a_module_the_tree_does_not_mirror_gets_its_tests_from_the_override_file() -> None:
    (target,) = MUTATE.resolve_targets(["joint_tf_publisher/cli/bag/repair.py"])
    assert target.tests[:3] == (
        Path("test/bag/test_bag_repair.py"),
        Path("test/bag/test_bag_repair_rules.py"),
        Path("test/bag/test_bag_promises.py"),
    )


def test_every_override_names_existing_files() -> None:
    for module, tests in MUTATE.load_overrides().items():
        assert (MUTATE.ROOT / module).is_file(), module
        assert tests and all((MUTATE.ROOT / test).is_file() for test in tests), module


def test_an_absolute_path_from_any_folder_names_the_same_module(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    monkeypatch.chdir(tmp_path)
    absolute = MUTATE.ROOT / "joint_tf_publisher" / "node_core" / "fleet.py"
    (target,) = MUTATE.resolve_targets([str(absolute)])
    assert target.module == Path("joint_tf_publisher/node_core/fleet.py")


@pytest.mark.parametrize(
    ("given", "said"),
    [
        ("joint_tf_publisher/no_such_module.py", "not a Python module"),
        ("README.md", "not a Python module"),
        ("/etc/hostname", "not in this checkout"),
        ("joint_tf_publisher/__init__.py", "name its tests in tools/mutate_tests.yaml"),
    ],
)
def test_a_module_without_tests_or_outside_the_package_is_refused_by_name(
    given: str, said: str
) -> None:
    with pytest.raises(SystemExit) as refused:
        MUTATE.resolve_targets([given])
    assert said in str(refused.value)


SOURCE = """import x


def top(a):
    return a + 1


class Box:
    @property
    def inner(self):
        return 2
"""


def test_a_survivor_is_placed_on_the_line_its_diff_removes() -> None:
    top = MUTATE.function_start_line(SOURCE, "m.x_top__mutmut_3")
    assert top == 4
    diff = "--- f\n+++ f\n@@ -1,2 +1,2 @@\n def top(a):\n-    return a + 1\n+    return a - 1"
    assert MUTATE.changed_line(diff, top) == 5
    method = MUTATE.function_start_line(SOURCE, "m.xǁBoxǁinner__mutmut_1")
    assert method == 9
    diff = "@@ -1,3 +1,3 @@\n @property\n def inner(self):\n-    return 2\n+    return 3"
    assert MUTATE.changed_line(diff, method) == 11


def test_a_mutant_names_the_function_it_changes() -> None:
    module = "joint_tf_publisher.node_core.parameters"
    assert MUTATE.mutated_function(f"{module}.x__parse_rate__mutmut_12") == (None, "_parse_rate")
    assert MUTATE.mutated_function(f"{module}.xǁSettingsǁchanged__mutmut_3") == (
        "Settings",
        "changed",
    )


IMPORTED = """import os

from . import helpers
from .helpers import bound
from .made import factory as make, other
from joint_tf_publisher.made import absolute
from ..made import up_one


@bound(make("decorator"))
def later(x=make("default")):
    return make("body")


class Table:
    entry = make("class body")

    def method(self):
        return other("method")


TABLE = {"a": make("a")}
LAZY = lambda: up_one()
if __name__ == "__main__":
    absolute()
"""


def test_what_runs_at_import_is_the_top_level_decorators_defaults_and_class_bodies() -> None:
    called = MUTATE.calls_run_now(ast.parse(IMPORTED).body)
    assert called == {"bound", "make"}


def test_names_imported_from_a_module_are_found_relative_or_absolute() -> None:
    tree = ast.parse(IMPORTED)
    inner = Path("joint_tf_publisher/sub/user.py")
    assert MUTATE.imported_from(tree, inner, "joint_tf_publisher.sub.made") == {
        "make": "factory",
        "other": "other",
    }
    assert MUTATE.imported_from(tree, inner, "joint_tf_publisher.made") == {
        "absolute": "absolute",
        "up_one": "up_one",
    }
    package = Path("joint_tf_publisher/sub/__init__.py")
    assert MUTATE.imported_from(tree, package, "joint_tf_publisher.sub.helpers") == {
        "bound": "bound"
    }


def test_the_functions_a_module_runs_at_import_include_other_modules_calls_and_helpers(
    tmp_path: Path,
) -> None:
    package = tmp_path / "joint_tf_publisher"
    package.mkdir()
    (package / "made.py").write_text(
        "def helper(name):\n    return name\n\n\n"
        "def factory(name):\n    checked = helper(name)\n\n"
        "    def parse(value):\n        return runtime(value)\n\n    return parse\n\n\n"
        "def runtime(value):\n    return value\n\n\n"
        "def by_others():\n    return 1\n\n\n"
        "PARSE = factory('x')\n"
    )
    (package / "user.py").write_text("from .made import by_others as b\n\nVALUE = b()\n")
    target = MUTATE.Target(Path("joint_tf_publisher/made.py"), ())
    assert MUTATE.import_time_functions(target, tmp_path) == {"factory", "helper", "by_others"}


def test_the_parser_and_joint_type_factories_are_found_run_at_import() -> None:
    parameters = MUTATE.Target(Path("joint_tf_publisher/node_core/parameters.py"), ())
    found = MUTATE.import_time_functions(parameters)
    assert {"_parse_rate", "_parse_bool", "_parse_text", "_parse_names", "parse_seconds"} <= found
    assert not {"parse_clamp", "parse_static_republish_period", "shown"} & found
    joint_types = MUTATE.Target(Path("joint_tf_publisher/model/joint_types.py"), ())
    assert {"_screw_entry", "_one_number"} <= MUTATE.import_time_functions(joint_types)


def test_a_kept_folder_is_reused_only_for_the_same_modules_and_its_stale_copies_dropped(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """``--keep`` (MUTATE_KEEP) reuses the last run's folder, verdicts and all, when that run
    had the same modules and tests; a package module not mutated that changed since is copied
    again (its old copy removed: mutmut copies a file once); another module list, or no
    ``--keep``, starts afresh."""
    package = tmp_path / "joint_tf_publisher"
    package.mkdir()
    (tmp_path / "setup.cfg").write_text("[metadata]\nname = x\n")
    for name in ("mutated.py", "helper.py", "steady.py"):
        (package / name).write_text(f"# {name}\n")
    work = tmp_path / ".mutate"
    monkeypatch.setattr(MUTATE, "ROOT", tmp_path)
    monkeypatch.setattr(MUTATE, "WORK_DIR", work)
    mutated = MUTATE.Target(Path("joint_tf_publisher/mutated.py"), (Path("test/test_m.py"),))
    helper = MUTATE.Target(Path("joint_tf_publisher/helper.py"), (Path("test/test_h.py"),))

    assert not MUTATE.prepare_work_dir([mutated], keep=True)  # nothing to keep yet
    copies = work / "mutants" / "joint_tf_publisher"
    copies.mkdir(parents=True)
    for name in ("mutated.py", "helper.py", "steady.py"):
        (copies / name).write_text(f"# {name}\n")
    (work / "verdicts").write_text("a run's results")
    assert MUTATE.prepare_work_dir([mutated], keep=True)
    assert (work / "verdicts").is_file() and (copies / "helper.py").is_file()

    (package / "helper.py").write_text("# helper.py, changed\n")
    (copies / "mutated.py").write_text("# mutmut's mutants\n")
    assert MUTATE.prepare_work_dir([mutated], keep=True)
    assert not (copies / "helper.py").exists()  # copied again by mutmut
    assert (copies / "mutated.py").read_text() == "# mutmut's mutants\n"  # mutmut's own
    assert (copies / "steady.py").is_file()

    assert not MUTATE.prepare_work_dir([mutated, helper], keep=True)
    assert not (work / "verdicts").exists()
    (work / "verdicts").write_text("a run's results")
    assert not MUTATE.prepare_work_dir([mutated, helper], keep=False)
    assert not (work / "verdicts").exists()
    assert (work / "setup.cfg").read_text().startswith("[metadata]\nname = x\n")


def test_a_fresh_runs_verdict_stands_while_its_function_is_unchanged() -> None:
    """A kept folder's import-time mutants are judged again by a fresh run only once their
    function's hash (mutmut's) differs from the one recorded with the verdict, or for a
    mutant never judged so; a method's mutant is matched to its own method."""
    module = "joint_tf_publisher.node_core.parameters"
    judged = {
        f"{module}.x_parse_seconds__mutmut_1": "h1",
        f"{module}.x_parse_seconds__mutmut_2": "h1",
        f"{module}.x__parse_names__mutmut_1": "old",
        f"{module}.xǁTableǁread__mutmut_3": "h3",
    }
    hashes = {"x_parse_seconds": "h1", "x__parse_names": "new", "xǁTableǁread": "h3"}
    mutants = [*judged, f"{module}.x_parse_seconds__mutmut_9"]
    assert MUTATE.still_judged(judged, hashes, mutants) == {
        f"{module}.x_parse_seconds__mutmut_1",
        f"{module}.x_parse_seconds__mutmut_2",
        f"{module}.xǁTableǁread__mutmut_3",
    }
    assert MUTATE.function_hash(hashes, f"{module}.xǁTableǁread__mutmut_12") == "h3"
    assert MUTATE.function_hash(hashes, f"{module}.x_gone__mutmut_1") is None


def test_a_fresh_run_takes_the_import_time_mutants_and_where_asked_those_without_tests() -> None:
    """The fresh runs judge the mutants of what runs at import, whatever mutmut said of them;
    with ``--untraced`` also those mutmut found no test for or that survived its run (a
    method's too: the writer's child side, which a test may run only in its child), never
    another function's killed ones; ``--mutants`` globs narrow both."""
    module = "joint_tf_publisher.cli.bag.writer_process"
    results = {
        f"{module}.x_parse__mutmut_1": "survived",
        f"{module}.x_parse__mutmut_2": "killed",
        f"{module}.x_serve__mutmut_1": "no tests",
        f"{module}.xǁWriterServerǁcall__mutmut_4": "no tests",
        f"{module}.x_serve__mutmut_2": "survived",
        f"{module}.x_start__mutmut_1": "killed",
    }
    at_import = frozenset({"parse"})
    assert MUTATE.fresh_mutants(results, at_import) == [
        f"{module}.x_parse__mutmut_1",
        f"{module}.x_parse__mutmut_2",
    ]
    assert MUTATE.fresh_mutants(results, at_import, untraced=True) == [
        f"{module}.x_parse__mutmut_1",
        f"{module}.x_parse__mutmut_2",
        f"{module}.x_serve__mutmut_1",
        f"{module}.x_serve__mutmut_2",
        f"{module}.xǁWriterServerǁcall__mutmut_4",
    ]
    assert MUTATE.fresh_mutants(results, frozenset(), ["*ǁ*"], untraced=True) == [
        f"{module}.xǁWriterServerǁcall__mutmut_4"
    ]
    assert MUTATE.fresh_mutants(results, frozenset()) == []


def test_mutmuts_tests_get_a_wall_clock_limit_beside_the_options_given() -> None:
    """A deadlocked test spends no CPU, so mutmut's CPU limit never stops it: mutmut's pytest
    runs get pytest-timeout's wall-clock limit, after any PYTEST_ADDOPTS already given."""
    limit = f"--timeout={MUTATE.TEST_TIMEOUT_S}"
    assert MUTATE.with_test_timeout({"HOME": "/h"}) == {"HOME": "/h", "PYTEST_ADDOPTS": limit}
    given = MUTATE.with_test_timeout({"PYTEST_ADDOPTS": "-p no:cacheprovider"})
    assert given["PYTEST_ADDOPTS"] == f"-p no:cacheprovider {limit}"


def test_a_kept_folders_survivors_are_judged_again_once_their_tests_changed(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """mutmut keeps a verdict while its function is unchanged, so in a kept folder a survivor
    that a test written since kills read "survived". Once a module's test files change (a
    test added or edited), its survived and no-tests verdicts are dropped, and their fresh-run
    records with them, so the run judges them again with today's tests; killed ones and
    timeouts stay, and so does everything while the tests are as the last run had them."""
    module = "joint_tf_publisher.m"
    verdicts: dict[str, int | None] = {
        f"{module}.x_f__mutmut_1": 1,  # killed
        f"{module}.x_f__mutmut_2": 0,  # survived
        f"{module}.x_f__mutmut_3": 33,  # no tests
        f"{module}.x_f__mutmut_4": MUTATE.TIMEOUT_EXIT_CODE,
        f"{module}.x_f__mutmut_5": None,  # not run yet
    }
    saved: list[dict[str, int | None]] = []

    class Results:  # mutmut's SourceFileMutationData, as far as the tool uses it
        exit_code_by_key = verdicts

        def save(self) -> None:
            saved.append(dict(self.exit_code_by_key))

    work = tmp_path / ".mutate"
    (work / "mutants" / "joint_tf_publisher").mkdir(parents=True)
    (work / "mutants" / "joint_tf_publisher" / "m.py.meta").write_text("{}")
    (tmp_path / "test").mkdir()
    (tmp_path / "test" / "test_m.py").write_text("def test_one(): pass\n")
    fresh = {f"{module}.x_f__mutmut_2": "h", f"{module}.x_g__mutmut_1": "h"}
    (work / MUTATE.FRESH_RUNS_FILE).write_text(json.dumps(fresh))
    monkeypatch.setattr(MUTATE, "ROOT", tmp_path)
    monkeypatch.setattr(MUTATE, "WORK_DIR", work)
    monkeypatch.setattr(MUTATE, "mutation_data", lambda target: Results())
    target = MUTATE.Target(Path("joint_tf_publisher/m.py"), (Path("test/test_m.py"),))

    def unjudged() -> list[int]:
        return [int(name[-1]) for name, code in saved[-1].items() if code is None]

    assert MUTATE.judge_survivors_again([target]) == [target]  # no record yet: judged again
    assert unjudged() == [2, 3, 5]
    assert saved[-1][f"{module}.x_f__mutmut_4"] == MUTATE.TIMEOUT_EXIT_CODE
    assert json.loads((work / MUTATE.FRESH_RUNS_FILE).read_text()) == {
        f"{module}.x_g__mutmut_1": "h"
    }
    verdicts.update({f"{module}.x_f__mutmut_2": 0, f"{module}.x_f__mutmut_3": 0})
    assert MUTATE.judge_survivors_again([target]) == []  # the same tests: kept as they are
    assert len(saved) == 1 and verdicts[f"{module}.x_f__mutmut_2"] == 0
    (tmp_path / "test" / "test_m.py").write_text("def test_one(): pass\ndef test_two(): pass\n")
    assert MUTATE.judge_survivors_again([target]) == [target]
    assert unjudged() == [2, 3, 5] and saved[-1][f"{module}.x_f__mutmut_1"] == 1
