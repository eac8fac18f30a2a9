"""The bench runner (bench/dds.py)'s setup of the node it starts: the package byte-compiled, as an
installed package is, for the working tree and for a baseline revision alike."""

from __future__ import annotations

from pathlib import Path

from bench import dds


def test_an_extracted_revision_is_byte_compiled(tmp_path: Path) -> None:
    root = dds.extract_revision("HEAD", tmp_path)
    package = root / dds.PACKAGE
    compiled = {path.name.split(".")[0] for path in (package / "__pycache__").glob("*.pyc")}
    assert {"__init__", "robot"} <= compiled
    assert list((package / "ros" / "__pycache__").glob("node.*.pyc"))


def test_byte_compile_writes_every_module_of_the_package(tmp_path: Path) -> None:
    package = tmp_path / dds.PACKAGE / "sub"
    package.mkdir(parents=True)
    (package / "module.py").write_text("VALUE = 1\n")
    dds.byte_compile(tmp_path)
    assert list((package / "__pycache__").glob("module.*.pyc"))


def test_a_baseline_runs_from_its_extracted_package_beside_the_floor_and_ours(
    tmp_path: Path,
) -> None:
    from bench import vs_rsp

    nodes = vs_rsp.contenders("no robot_state_publisher", "HEAD", tmp_path)

    assert [node.node for node in nodes] == ["floor", "ours@HEAD", "ours"]
    baseline = nodes[1]
    assert baseline.import_root is not None
    assert (baseline.import_root / dds.PACKAGE / "ros" / "node.py").is_file()
    params = tmp_path / "params.yaml"
    command = baseline.command(params, tmp_path / "frames.json")
    assert command[1:3] == ["-c", dds.ENTRY]
    assert command[-4:] == ["--params-file", str(params), "--log-level", "warn"]
