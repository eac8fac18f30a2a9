"""The description layer's one file reader, the folders allowed at runtime, and xacro in a child.

Real files, FIFOs, devices and symlinks in a temporary folder; real xacro in a real child
process (``xacro_process``). No rclpy. That the node answers in time over DDS while /tf flows
is test/ros/test_node_files.py.
"""

from __future__ import annotations

import os
import sys
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from xacro_payloads import MODE_ARGUMENT, quote_breaking_value

from joint_tf_publisher import Robot
from joint_tf_publisher.description.files import (
    ALLOWED_FOLDERS_PARAMETER,
    FileRefused,
    FileRules,
    allowed_folders,
    read_regular_file,
    reading_under,
)
from joint_tf_publisher.description.loader import expand_xacro_file, read_file
from joint_tf_publisher.description.xacro_process import XacroRun
from joint_tf_publisher.description.xmlio import MAX_DESCRIPTION_BYTES, read_description
from joint_tf_publisher.errors import ModelError

pytest.importorskip("xacro")

ROBOT = '<robot name="r"><link name="base"/></robot>\n'

#: The issue's payload: xacro's guard rejects names starting with "__", not strings; the
#: expansion runs ``touch {marker}`` as the reading process's user (checked with xacro 2.1).
CODE_XACRO = """<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="w" value="${{[c for c in python.vars(python.type)['__subclasses__'](python.type.mro(python.type)[-1]) if 'wrap_close' in python.repr(c)][0]}}"/>
  <xacro:property name="f" value="${{python.vars(w)['__init__']}}"/>
  <link name="${{python.vars(python.type(python.vars(python.type(f))['__globals__']))['__get__'](python.vars(python.type(f))['__globals__'], f)['system']('touch {marker}')}}"/>
</robot>
"""  # noqa: E501


def finishes(call: Callable[[], Any], seconds: float = 10.0) -> Any:
    """``call()``'s result (or its exception, raised here), failing if it blocks longer than
    ``seconds`` (a bound against a hang, not a speed check)."""
    outcome: list[Any] = []

    def run() -> None:
        try:
            outcome.append(("value", call()))
        except BaseException as exc:  # handed to the test thread
            outcome.append(("error", exc))

    thread = threading.Thread(target=run, daemon=True)
    thread.start()
    thread.join(seconds)
    assert outcome, f"blocked for more than {seconds} s"
    kind, value = outcome[0]
    if kind == "error":
        raise value
    return value


@pytest.fixture
def fifo(tmp_path: Path) -> Iterator[Path]:
    path = tmp_path / "robot.urdf"
    os.mkfifo(path)
    yield path


# -- the safe reader ----------------------------------------------------------------------------


def test_a_fifo_is_refused_at_once_naming_it(fifo: Path) -> None:
    with pytest.raises(
        FileRefused, match=rf"^{fifo}: cannot read file: not a regular file \(a FIFO"
    ):
        finishes(lambda: read_description(fifo))


def test_a_fifo_description_file_is_refused_by_the_public_loader(fifo: Path) -> None:
    with pytest.raises(ModelError, match="not a regular file"):
        finishes(lambda: Robot.load(fifo))


def test_a_directory_is_refused(tmp_path: Path) -> None:
    with pytest.raises(FileRefused, match=r"not a regular file \(a directory\)"):
        read_description(tmp_path)


def test_a_device_is_refused_without_reading() -> None:
    with pytest.raises(
        FileRefused, match=r"^/dev/zero: .*not a regular file \(a character device\)"
    ):
        finishes(lambda: read_description(Path("/dev/zero")))


def test_an_oversize_file_is_refused_before_reading(tmp_path: Path) -> None:
    path = tmp_path / "huge.urdf"
    with path.open("wb") as stream:
        stream.truncate(4 * 1024**3)  # sparse: 4 GB that take no disk
    with pytest.raises(
        FileRefused, match=rf"4294967296 bytes, more than the {MAX_DESCRIPTION_BYTES}"
    ):
        read_description(path)


def test_an_unreadable_file_names_the_reason_and_never_its_content(tmp_path: Path) -> None:
    path = tmp_path / "shadow"
    path.write_bytes(b"root:$6$secret-hash:19000:0:99999:7:::\n")
    with pytest.raises(ModelError) as refused:
        Robot.load(path)
    assert "secret" not in str(refused.value) and "root:" not in str(refused.value)
    path.write_bytes(b"<shadow>root:$6$secret-hash</shadow>\n")
    with pytest.raises(ModelError, match=r"root element is <shadow>") as refused:
        Robot.load(path)
    assert "secret" not in str(refused.value)
    path.write_bytes(b"<robot>\xff\xfesecret</robot>")
    with pytest.raises(ModelError) as refused:
        Robot.load(path)
    assert "secret" not in str(refused.value)


# -- the folders allowed at runtime ---------------------------------------------------------


def test_anywhere_without_rules(tmp_path: Path) -> None:
    (tmp_path / "r.urdf").write_text(ROBOT)
    assert read_description(tmp_path / "r.urdf") == ROBOT.encode()


def test_outside_the_allowed_folders_is_refused_naming_the_parameter(tmp_path: Path) -> None:
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    (allowed / "r.urdf").write_text(ROBOT)
    (other / "r.urdf").write_text(ROBOT)
    (allowed / "link.urdf").symlink_to(other / "r.urdf")
    with reading_under(FileRules(allowed_folders([allowed]))):
        assert read_description(allowed / "r.urdf") == ROBOT.encode()
        for outside in (
            other / "r.urdf",
            allowed / "link.urdf",
            allowed / ".." / "other" / "r.urdf",
        ):
            with pytest.raises(
                FileRefused,
                match=rf"refused at runtime: {other / 'r.urdf'} is outside the folders allowed "
                rf"\({allowed}\); list its folder in the read-only parameter "
                rf"{ALLOWED_FOLDERS_PARAMETER} at start",
            ):
                read_description(outside)
    assert read_description(allowed / "link.urdf") == ROBOT.encode()  # the rules are gone


def test_a_folder_named_like_an_allowed_one_is_not_inside_it(tmp_path: Path) -> None:
    (tmp_path / "robot").mkdir()
    (tmp_path / "robot2").mkdir()
    (tmp_path / "robot2" / "r.urdf").write_text(ROBOT)
    with reading_under(FileRules(allowed_folders([tmp_path / "robot"]))):
        with pytest.raises(FileRefused, match="outside the folders allowed"):
            read_description(tmp_path / "robot2" / "r.urdf")


def swapped_after_the_check(
    monkeypatch: pytest.MonkeyPatch, swap: Callable[[], None]
) -> list[Path]:
    """Every ``FileRules.check`` from now on runs ``swap`` (once) after it checked: the
    real race between the reader's check and its open, driven deterministically. The
    paths checked are listed."""
    check = FileRules.check
    checked: list[Path] = []

    def check_then_swap(rules: FileRules, path: Path, source: str | None = None) -> Path:
        resolved = check(rules, path, source)
        if not checked:
            swap()
        checked.append(resolved)
        return resolved

    monkeypatch.setattr(FileRules, "check", check_then_swap)
    return checked


def test_a_symlink_swapped_after_the_check_does_not_lead_outside(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#43.14: the file read is the one checked (the link's old target), not the secret the
    link points to once the check is done."""
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    (allowed / "real.urdf").write_text(ROBOT)
    (other / "secret.urdf").write_text('<robot name="secret"/>')
    link = allowed / "robot.urdf"
    link.symlink_to(allowed / "real.urdf")

    def swap() -> None:
        (allowed / "new_link").symlink_to(other / "secret.urdf")
        os.replace(allowed / "new_link", link)

    checked = swapped_after_the_check(monkeypatch, swap)
    with reading_under(FileRules(allowed_folders([allowed]))):
        assert read_regular_file(link, 1000) == ROBOT.encode()
    assert checked == [allowed / "real.urdf"]
    assert os.readlink(link) == str(other / "secret.urdf")  # the swap did happen


def test_a_folder_swapped_for_a_symlink_after_the_check_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """#43.14: a folder of the checked path replaced by a symlink to another folder after
    the check: refused, nothing of the other folder's file read."""
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    (allowed / "urdf").mkdir(parents=True)
    other.mkdir()
    (allowed / "urdf" / "robot.urdf").write_text(ROBOT)
    (other / "robot.urdf").write_text('<robot name="secret"/>')

    def swap() -> None:
        (allowed / "urdf").rename(allowed / "urdf.old")
        (allowed / "urdf").symlink_to(other)

    swapped_after_the_check(monkeypatch, swap)
    with reading_under(FileRules(allowed_folders([allowed]))):
        with pytest.raises(FileRefused) as refused:
            read_regular_file(allowed / "urdf" / "robot.urdf", 1000)
    assert str(refused.value) == (
        f"{allowed / 'urdf' / 'robot.urdf'}: cannot read file: a part of its path is a symbolic "
        "link, not followed (a loop, or a link put there after the path was checked)"
    )
    assert (allowed / "urdf" / "robot.urdf").read_text() == '<robot name="secret"/>'


# -- xacro, out of process --------------------------------------------------------------------


def test_code_in_a_xacro_outside_the_allowed_folders_never_runs(tmp_path: Path) -> None:
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    marker = tmp_path / "created"
    evil = other / "evil.urdf.xacro"
    evil.write_text(CODE_XACRO.format(marker=marker))
    with reading_under(FileRules(allowed_folders([allowed]))):
        with pytest.raises(ModelError, match=rf"{ALLOWED_FOLDERS_PARAMETER}"):
            read_file(evil)
        # included from an allowed file: refused by the child before it is parsed
        top = allowed / "top.urdf.xacro"
        top.write_text(
            '<robot name="t" xmlns:xacro="http://www.ros.org/wiki/xacro">'
            f'<xacro:include filename="{evil}"/></robot>'
        )
        with pytest.raises(
            ModelError, match=rf"outside the folders allowed.*{ALLOWED_FOLDERS_PARAMETER}"
        ):
            read_file(top)
    assert not marker.exists()
    # The payload is live: where the start (no rules) expands it, it runs, in the child.
    expand_xacro_file(evil, {})
    assert marker.exists()


def moded_xacro(folder: Path) -> Path:
    """A xacro file in ``folder`` that pastes its argument ``mode`` into an expression."""
    path = folder / "moded.urdf.xacro"
    path.write_text(
        '<robot name="m" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
        f'{MODE_ARGUMENT}  <link name="base"/>\n</robot>\n'
    )
    return path


def test_a_runtime_argument_cannot_change_what_xacro_evaluates(tmp_path: Path) -> None:
    """#43.1: at runtime a value that is not plain is refused before xacro starts; plain
    values (what users pass) and the start's own values are expanded."""
    moded = moded_xacro(tmp_path)
    marker = tmp_path / "created"
    hostile = quote_breaking_value(marker)
    rules = FileRules(allowed_folders([tmp_path]), start_arguments=frozenset({("mode", "sim")}))
    with reading_under(rules):
        with pytest.raises(ModelError) as refused:
            expand_xacro_file(moded, {"mode": hostile})
        for value in ("x'", 'x"', "a b", "x)", "x]", "${x}", "$(env HOME)", "a\\b", "__x", "\n"):
            with pytest.raises(ModelError, match=r"^description_args: the value of 'mode' "):
                expand_xacro_file(moded, {"mode": value})
        for value in ("sim", "left_", "ur5e", "1.5", "-0.25", "/opt/ros/share/x/cfg.yaml", ""):
            assert "<robot" in str(expand_xacro_file(moded, {"mode": value}).data)
        assert 'name="sim_only"' in str(expand_xacro_file(moded, {"mode": "sim"}).data)
    assert str(refused.value) == (
        "description_args: the value of 'mode' given at runtime holds \"'\" at offset 0; a value "
        "from the graph may hold only letters, digits and _ . , : / + - (never two underscores "
        "in a row), so that it cannot change an expression xacro evaluates: give other values "
        "at start (launch file, command line, parameters file)"
    )
    assert not marker.exists()


def test_the_starts_own_arguments_are_trusted_and_passed_as_they_are(tmp_path: Path) -> None:
    """A start value is the operator's: not refused, not mangled (quotes and spaces reach
    xacro as written), also when a runtime request passes it again."""
    titled = tmp_path / "titled.urdf.xacro"
    titled.write_text(
        '<robot name="t" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="title" default=""/><link name="$(arg title)"/></robot>'
    )
    title = """it's a "robot" (v2)"""
    assert f'name="{title.replace(chr(34), "&quot;")}"' in str(
        expand_xacro_file(titled, {"title": title}).data
    )
    start = frozenset({("title", title)})
    with reading_under(FileRules(allowed_folders([tmp_path]), start_arguments=start)):
        assert "robot" in str(expand_xacro_file(titled, {"title": title}).data)
        with pytest.raises(ModelError, match="given at runtime"):
            expand_xacro_file(titled, {"title": title + "!"})


def test_a_value_longer_than_a_command_line_argument_reaches_xacro(tmp_path: Path) -> None:
    """The request goes to the xacro child on its stdin: a plain value of 200,000 characters
    (Linux takes at most 128 KiB in one argument of a command line: it was "Argument list too
    long", an OSError, not a refusal) is expanded like a short one."""
    named = tmp_path / "named.urdf.xacro"
    named.write_text(
        '<robot name="n" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:arg name="n" default="a"/><link name="$(arg n)"/></robot>'
    )
    value = "a" * 200_000
    with reading_under(FileRules(allowed_folders([tmp_path]))):
        assert f'<link name="{value}"/>' in str(expand_xacro_file(named, {"n": value}).data)


def test_xacro_expands_when_the_working_folder_is_gone(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A node whose working folder was deleted (started from a folder removed since) still
    expands its (absolute) xacro file; a relative path is refused naming it, never a
    FileNotFoundError from ``os.getcwd``."""
    moded = moded_xacro(tmp_path)
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with reading_under(FileRules(allowed_folders([tmp_path]))):
        assert 'name="sim_only"' in str(expand_xacro_file(moded, {"mode": "sim"}).data)
        with pytest.raises(FileRefused, match=r"^moded.urdf.xacro: .*working folder is gone"):
            read_regular_file(Path(moded.name), MAX_DESCRIPTION_BYTES)


def test_a_symlink_removed_while_the_path_is_resolved_is_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``realpath`` reads a link after seeing it (``lstat``, then ``readlink``): a swap
    between the two is an OSError out of ``realpath`` (a running swap loop met it 20 times in
    24,000 reads); refused naming the file, as any swap is (was an OSError, not a refusal)."""
    (tmp_path / "real.urdf").write_text(ROBOT)
    link = tmp_path / "link.urdf"
    link.symlink_to(tmp_path / "real.urdf")
    readlink = os.readlink

    def swapped_first(name: Any, *args: Any, **kwargs: Any) -> Any:
        if os.fspath(name) == str(link) and link.is_symlink():
            link.unlink()  # the swap: gone between realpath's lstat and its readlink
        return readlink(name, *args, **kwargs)

    monkeypatch.setattr(os, "readlink", swapped_first)
    with reading_under(FileRules(allowed_folders([tmp_path]))):
        with pytest.raises(FileRefused, match=r"link.urdf: cannot read file: its path changed"):
            read_regular_file(link, 1000)


def test_a_path_holding_a_nul_byte_is_refused_naming_it(tmp_path: Path) -> None:
    """A ModelError (was ``ValueError: embedded null byte`` from ``realpath``), at runtime and
    from the public loader (``Robot.load``; xacro's ``load_yaml('a\\x00b')``)."""
    with reading_under(FileRules(allowed_folders([tmp_path]))):
        with pytest.raises(FileRefused, match="its name holds a NUL byte"):
            read_regular_file(tmp_path / "a\x00b.urdf", 100)
    with pytest.raises(ModelError, match="its name holds a NUL byte"):
        Robot.load(tmp_path / "a\x00b.urdf")


def test_a_refusal_naming_a_file_whose_name_is_not_utf8_is_utf8(tmp_path: Path) -> None:
    """A symlink in an allowed folder to a file outside whose name holds the byte 0xff: the
    refusal names the resolved path with ``\\xff``, valid UTF-8 (a parameter refusal's reason
    and rclpy's logger take nothing else)."""
    allowed = tmp_path / "allowed"
    allowed.mkdir()
    outside = os.fsencode(tmp_path) + b"/\xff.urdf"
    with open(outside, "w") as file:
        file.write(ROBOT)
    os.symlink(outside, os.fsencode(allowed / "link.urdf"))
    with reading_under(FileRules(allowed_folders([allowed]))):
        with pytest.raises(FileRefused) as refused:
            read_regular_file(allowed / "link.urdf", 100)
    assert f"{tmp_path}/\\xff.urdf is outside the folders allowed" in str(refused.value)
    assert str(refused.value).encode("utf-8") and refused.value.why.encode("utf-8")


def test_a_fifo_include_is_refused_at_once(tmp_path: Path, fifo: Path) -> None:
    top = tmp_path / "top.urdf.xacro"
    top.write_text(
        '<robot name="t" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        f'<xacro:include filename="{fifo.name}"/></robot>'
    )
    with pytest.raises(ModelError, match=rf"{fifo}.*not a regular file|not a regular file.*{fifo}"):
        finishes(lambda: read_file(top))


def test_a_slow_xacro_is_stopped_at_the_time_limit(tmp_path: Path) -> None:
    slow = tmp_path / "slow.urdf.xacro"
    slow.write_text(
        '<robot name="${python.sum(python.range(10**12))}" '
        'xmlns:xacro="http://www.ros.org/wiki/xacro"/>\n'
    )
    with pytest.raises(ModelError, match=rf"^{slow}: xacro took more than the 1 s allowed"):
        finishes(lambda: expand_xacro_file(slow, {}, time_limit_s=1.0), seconds=20.0)


def test_a_wait_gives_up_when_the_process_stops(tmp_path: Path) -> None:
    slow = tmp_path / "slow.urdf.xacro"
    slow.write_text(
        '<robot name="${python.sum(python.range(10**12))}" '
        'xmlns:xacro="http://www.ros.org/wiki/xacro"/>\n'
    )
    stop = threading.Event()
    run = XacroRun(slow, {}, FileRules(stopped=stop.is_set), limit_bytes=MAX_DESCRIPTION_BYTES)
    stop.set()
    with pytest.raises(ModelError, match="the node is stopping"):
        finishes(run.wait)


def test_a_xacro_over_the_memory_limit_fails(tmp_path: Path) -> None:
    hungry = tmp_path / "hungry.urdf.xacro"
    hungry.write_text(
        '<robot name="${python.len(\'x\' * 2**32)}" xmlns:xacro="http://www.ros.org/wiki/xacro"/>\n'
    )
    with pytest.raises(ModelError, match=rf"^{hungry}: xacro failed: out of memory"):
        finishes(lambda: expand_xacro_file(hungry, {}), seconds=20.0)


def test_an_error_names_the_included_file_and_its_line(tmp_path: Path) -> None:
    (tmp_path / "part.xacro").write_text('<robot>\n<link name="a">\n</robot>\n')
    top = tmp_path / "top.urdf.xacro"
    top.write_text(
        '<robot name="t" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
        '<xacro:include filename="part.xacro"/>\n</robot>\n'
    )
    with pytest.raises(
        ModelError, match=rf"^{tmp_path / 'part.xacro'}:3: xacro failed: "
    ) as failed:
        read_file(top)
    assert set(failed.value.files) == {top, tmp_path / "part.xacro"}  # type: ignore[attr-defined]


def test_the_files_xacro_read_are_listed_and_nothing_stays_in_the_reader(tmp_path: Path) -> None:
    (tmp_path / "part.xacro").write_text('<robot><link name="a"/></robot>\n')
    top = tmp_path / "top.urdf.xacro"
    top.write_text(
        '<robot name="t" xmlns:xacro="http://www.ros.org/wiki/xacro">'
        '<xacro:include filename="part.xacro"/></robot>\n'
    )
    read = read_file(top)
    assert read.files == (top, tmp_path / "part.xacro")
    assert Robot.from_xml_string(read.text()).links.keys() == {"a"}
    # xacro runs in children: the reading process never imports it (its lists grow forever)
    code = (
        "import sys; from pathlib import Path; from joint_tf_publisher import Robot\n"
        f"for _ in range(3): Robot.load(Path({str(top)!r}))\n"
        "print('xacro' in sys.modules)"
    )
    import subprocess

    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"


def test_robot_load_of_a_xacro_still_works() -> None:
    from repo_paths import REPO_ROOT

    assert (
        Robot.load(REPO_ROOT / "test" / "urdf" / "small_arm.urdf.xacro").name == "small_arm_xacro"
    )


def test_read_regular_file_reads_at_most_its_limit(tmp_path: Path) -> None:
    path = tmp_path / "r.urdf"
    path.write_text(ROBOT)
    assert read_regular_file(path, len(ROBOT)) == ROBOT.encode()
    with pytest.raises(FileRefused, match="more than the 3 allowed"):
        read_regular_file(path, 3)


# -- what each refusal names (the mutation run's survivors, #44) -----------------------------


def test_a_missing_file_is_refused_with_the_systems_words(tmp_path: Path) -> None:
    """The reason is the error's text as the system words it, not its symbol (``ENOENT``)."""
    missing = tmp_path / "absent.urdf"
    with pytest.raises(FileRefused) as refused:
        read_regular_file(missing, 100)
    assert str(refused.value) == f"{missing}: cannot read file: No such file or directory"


def test_a_refusal_names_the_source_given_and_checks_the_path(tmp_path: Path) -> None:
    """``read_regular_file(path, limit, source)`` (the fleet's ``--params-file PATH``): the
    path is what is checked and read; the refusal names the source."""
    allowed, other = tmp_path / "allowed", tmp_path / "other"
    allowed.mkdir()
    other.mkdir()
    (allowed / "r.urdf").write_text(ROBOT)
    (other / "r.urdf").write_text(ROBOT)
    source = f"--params-file {allowed / 'r.urdf'}"
    assert read_regular_file(allowed / "r.urdf", 100, source) == ROBOT.encode()
    with reading_under(FileRules(allowed_folders([allowed]))):
        assert read_regular_file(allowed / "r.urdf", 100, source) == ROBOT.encode()
        with pytest.raises(FileRefused) as refused:
            read_regular_file(other / "r.urdf", 100, "attachments.tool.file")
    assert str(refused.value).startswith(
        f"attachments.tool.file: cannot read file: refused at runtime: {other / 'r.urdf'} is "
        f"outside the folders allowed ({allowed}); "
    )


def test_check_names_the_path_as_given_where_no_source_is(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``FileRules.check``'s refusals without a ``source``: the path (its repr for a NUL
    byte), the folders allowed joined by ", " (``none`` for an empty list), and a relative
    path once the working folder is gone said so."""
    a, b = tmp_path / "a", tmp_path / "b"
    rules = FileRules((a, b))
    outside = tmp_path / "c.urdf"
    with pytest.raises(FileRefused) as refused:
        rules.check(outside)
    assert str(refused.value).startswith(
        f"{outside}: cannot read file: refused at runtime: {outside} is outside the folders "
        f"allowed ({a}, {b}); list its folder"
    )
    with pytest.raises(FileRefused, match=rf"^{outside}: .*outside the folders allowed \(none\)"):
        FileRules(()).check(outside)
    with pytest.raises(FileRefused) as refused:
        rules.check(Path("a\x00b.urdf"))
    assert str(refused.value) == "'a\\x00b.urdf': cannot read file: its name holds a NUL byte"
    gone = tmp_path / "gone"
    gone.mkdir()
    monkeypatch.chdir(gone)
    gone.rmdir()
    with pytest.raises(FileRefused) as refused:
        rules.check(Path("r.urdf"))
    assert str(refused.value) == (
        "r.urdf: cannot read file: a relative path, and the working folder is gone: "
        "No such file or directory"
    )


def test_an_empty_allowed_folder_entry_allows_nothing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """An empty entry of ``allowed_description_folders`` (``['']``, a launch argument left
    empty) is no folder: not the working folder, which ``realpath('')`` would give."""
    monkeypatch.chdir(tmp_path)
    assert allowed_folders(["", str(tmp_path / "x")]) == (tmp_path / "x",)
    assert allowed_folders([""]) == ()


def test_a_file_that_grows_after_its_size_was_checked_is_read_to_its_limit_and_one_byte(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The size ``fstat`` gave is no bound on what a read gets (a log being written, a
    ``/proc`` file): 4 MiB appended right after the check, the limit 2 MiB (two reads of
    1 MiB land on it exactly): refused after the limit and one byte, never returned."""
    path = tmp_path / "growing.urdf"
    path.write_bytes(b"<")
    fstat = os.fstat

    def fstat_then_grow(fd: int) -> os.stat_result:
        info = fstat(fd)
        with path.open("ab") as stream:
            stream.write(b" " * (4 << 20))
        return info

    monkeypatch.setattr(os, "fstat", fstat_then_grow)
    with pytest.raises(FileRefused) as refused:
        read_regular_file(path, 2 << 20)
    assert str(refused.value) == f"{path}: cannot read file: more than the {2 << 20} bytes allowed"


def test_a_file_of_several_reads_is_read_whole_and_a_read_error_is_named(
    tmp_path: Path,
) -> None:
    """A file over one read's 1 MiB comes back whole; a regular file whose read fails
    (``/proc/self/mem`` at offset 0: EIO) is refused naming it and the error; one larger
    than the limit names its size."""
    big = tmp_path / "big.urdf"
    data = bytes(range(256)) * (6 << 10)  # 1.5 MiB
    big.write_bytes(data)
    assert read_regular_file(big, 2 << 20) == data
    with pytest.raises(FileRefused) as refused:
        read_regular_file(big, 1000)
    assert (
        str(refused.value)
        == f"{big}: cannot read file: {len(data)} bytes, more than the 1000 allowed"
    )
    with pytest.raises(FileRefused) as refused:
        read_regular_file(Path("/proc/self/mem"), 100)
    assert str(refused.value) == "/proc/self/mem: cannot read file: Input/output error"
