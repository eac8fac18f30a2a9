"""tools/mutate.py (``make mutate``): which tests a module gets, and where a survivor is."""

from __future__ import annotations

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
    assert target.tests == (
        Path("test/bag/test_bag_repair.py"),
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
