"""The e2e bench module's setup of the node it starts: the package byte-compiled, as an
installed package is, for the working tree and for a baseline revision alike."""

from __future__ import annotations

from pathlib import Path

from bench import e2e


def test_an_extracted_revision_is_byte_compiled(tmp_path: Path) -> None:
    root = e2e.extract_revision("HEAD", tmp_path)
    package = root / e2e.PACKAGE
    compiled = {path.name.split(".")[0] for path in (package / "__pycache__").glob("*.pyc")}
    assert {"__init__", "robot"} <= compiled
    assert list((package / "ros" / "__pycache__").glob("node.*.pyc"))


def test_byte_compile_writes_every_module_of_the_package(tmp_path: Path) -> None:
    package = tmp_path / e2e.PACKAGE / "sub"
    package.mkdir(parents=True)
    (package / "module.py").write_text("VALUE = 1\n")
    e2e.byte_compile(tmp_path)
    assert list((package / "__pycache__").glob("module.*.pyc"))
