"""Every spelling of a bag's path, for both bag commands (``bag repair`` and ``doctor --bag``):
the folder, a trailing slash, ``.``, ``..``, its metadata.yaml, its data file, relative and
absolute, through a symlink. And the output never the input, inside it or around it,
whatever the spellings of either; ``--force`` replaces only a bag that is not the input;
the doctor's suggested output is beside the bag, never inside it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import signal
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from bag_maker import recording
from repo_paths import REPO_ROOT

from joint_tf_publisher.cli.bag import writer
from joint_tf_publisher.cli.bag.stops import STOPS, HeldStops, terminate_as_exit
from joint_tf_publisher.cli.main import main

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"


@pytest.fixture
def rec(tmp_path: Path) -> Path:
    """A small recording at ``tmp_path/data/rec`` with a file of the user's inside it
    (metadata.yaml does not list it) and one beside it: both must survive every refusal."""
    bag, _ = recording(tmp_path / "data" / "rec", ARM, "sqlite3", count=10)
    (bag / "notes.txt").write_text("mine")
    (bag.parent / "other.txt").write_text("mine too")
    return bag


def listing(folder: Path) -> list[str]:
    return sorted(str(p.relative_to(folder)) for p in folder.rglob("*"))


def data_file(bag: Path) -> Path:
    (found,) = bag.glob("*.db3")
    return found


#: Spellings of the input bag, made from the bag's folder; each returns (working folder,
#: spelling).
SPELLINGS: dict[str, Callable[[Path], tuple[Path, str]]] = {
    "folder": lambda bag: (bag.parent, "rec"),
    "absolute": lambda bag: (bag.parent, str(bag)),
    "trailing slash": lambda bag: (bag.parent, "rec/"),
    "dot": lambda bag: (bag, "."),
    "dot dot": lambda bag: (bag / "sub", ".."),
    "metadata.yaml": lambda bag: (bag.parent, "rec/metadata.yaml"),
    "data file": lambda bag: (bag.parent, f"rec/{data_file(bag).name}"),
    "symlink": lambda bag: (bag.parent, "link"),
    "dot dot inside": lambda bag: (bag.parent, "rec/sub/../"),
}


def spelled(bag: Path, name: str, monkeypatch: pytest.MonkeyPatch) -> str:
    (bag / "sub").mkdir(exist_ok=True)
    (bag.parent / "link").unlink(missing_ok=True)
    (bag.parent / "link").symlink_to(bag, target_is_directory=True)
    folder, text = SPELLINGS[name](bag)
    monkeypatch.chdir(folder)
    return text


@pytest.mark.parametrize("name", list(SPELLINGS))
def test_every_spelling_of_the_input_works_for_both_commands(
    rec: Path, name: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    given = spelled(rec, name, monkeypatch)
    before = listing(rec)
    out = rec.parent / "out"
    assert main(["bag", "repair", given, "-o", str(out)]) == 0, capsys.readouterr().err
    capsys.readouterr()
    assert main(["doctor", "--bag", given, "--json"]) == 1  # no /tf_static: a finding
    document = json.loads(capsys.readouterr().out)
    assert document["heard"]["bag"] == str(rec) and document["heard"]["joint_states"] == 10
    command = shlex.split(document["heard"]["repair"])
    suggested = Path(command[command.index("-o") + 1])
    assert (Path.cwd() / suggested).resolve() == rec.parent / "rec_repaired"  # beside it
    assert main(["doctor", "--bag", str(out), "--json"]) == 0
    capsys.readouterr()
    assert listing(rec) == before


#: (input spelling, output spelling) that name the input, something inside it or around it,
#: from the working folder ``data`` (the bag's parent).
CLASHES = [
    ("rec", "rec"),
    ("rec/metadata.yaml", "rec"),  # the case: the input's folder replaced
    ("rec", "rec/"),
    ("rec", "./rec/../rec"),
    ("rec", "link"),
    ("link", "rec"),
    ("rec/DATA", "rec"),
    ("rec", "rec/metadata.yaml"),
    ("rec", "rec/new"),
    ("rec", "link/new"),
    ("rec", "."),  # the parent, holding the input
    ("rec", "../data"),
    ("rec/metadata.yaml", ".."),  # the grandparent
    ("rec", "/"),
]


@pytest.mark.parametrize("force", [False, True], ids=["", "force"])
@pytest.mark.parametrize(("given", "output"), CLASHES)
def test_the_output_is_never_the_input_inside_it_or_around_it(
    rec: Path,
    given: str,
    output: str,
    force: bool,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    (rec.parent / "link").symlink_to(rec, target_is_directory=True)
    monkeypatch.chdir(rec.parent)
    top = rec.parent.parent
    before = listing(top)
    given = given.replace("DATA", data_file(rec).name)
    argv = ["bag", "repair", given, "-o", output] + (["--force"] if force else [])
    assert main(argv) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "input bag" in err and "Traceback" not in err, err
    assert listing(top) == before


def test_force_replaces_only_a_bag(
    rec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    folder = tmp_path / "photos"
    folder.mkdir()
    (folder / "cat.jpg").write_text("mine")
    not_a_bag = tmp_path / "not_a_bag"
    not_a_bag.mkdir()
    (not_a_bag / "metadata.yaml").write_text("title: my notes\n")
    fifo = tmp_path / "fifo_bag"
    fifo.mkdir()
    os.mkfifo(fifo / "metadata.yaml")  # never read: it would block
    a_file = tmp_path / "file.txt"
    a_file.write_text("mine")
    for output in (folder, not_a_bag, fifo, a_file):
        before = listing(tmp_path / "data")
        assert main(["bag", "repair", str(rec), "-o", str(output), "--force"]) == 1
        err = capsys.readouterr().err.strip()
        assert "not a rosbag2 bag" in err and "\n" not in err, err
        assert listing(tmp_path / "data") == before and output.exists()
    assert (folder / "cat.jpg").read_text() == "mine" and a_file.read_text() == "mine"
    old = tmp_path / "old"
    assert main(["bag", "repair", str(rec), "-o", str(old)]) == 0
    (old / "stale").write_text("x")
    assert main(["bag", "repair", str(rec), "-o", str(old), "--force"]) == 0  # a bag: replaced
    assert not (old / "stale").exists() and (old / "metadata.yaml").is_file()
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial left


def test_an_input_that_would_block_or_flood_the_reader_is_refused_by_name(
    rec: Path, tmp_path: Path
) -> None:
    """A FIFO as the input's metadata.yaml, as a file it lists or as a bare .mcap would block
    rosbags' reader forever (both commands hung); a 20 MB metadata.yaml would be read whole.
    Each is one line naming the file, exit 1, before anything is read (a child process, so
    that a hang fails the test by its timeout instead of hanging the run)."""
    fifo_meta = tmp_path / "fifo_meta"
    fifo_meta.mkdir()
    os.mkfifo(fifo_meta / "metadata.yaml")
    fifo_data = tmp_path / "fifo_data"
    fifo_data.mkdir()
    (fifo_data / "metadata.yaml").write_text((rec / "metadata.yaml").read_text())
    os.mkfifo(fifo_data / data_file(rec).name)
    bare = tmp_path / "bare.mcap"
    os.mkfifo(bare)
    huge = tmp_path / "huge_meta"
    huge.mkdir()
    with (huge / "metadata.yaml").open("wb") as stream:
        stream.truncate(20 * 1024 * 1024)
    cases = [
        (fifo_meta, fifo_meta / "metadata.yaml"),
        (fifo_data, fifo_data / data_file(rec).name),
        (bare, bare),
        (huge, huge / "metadata.yaml"),
    ]
    for given, named in cases:
        for command in (
            ["bag", "repair", str(given), "-o", str(tmp_path / "out")],
            ["doctor", "--bag", str(given)],
        ):
            run = subprocess.run(
                [sys.executable, "-m", "joint_tf_publisher.cli.main", *command],
                capture_output=True,
                text=True,
                timeout=60,
            )
            err = run.stderr.strip()
            assert run.returncode == 1 and "\n" not in err and str(named) in err, err
    assert not (tmp_path / "out").exists()


def on_each_check(
    monkeypatch: pytest.MonkeyPatch, act: Callable[[Path, int], None], after: bool = False
) -> None:
    """``act(path, n)`` run at the output's nth check (``writer.replacement_refusal``: 1 as
    the output is made, 2 at ``finish``, 3 on the old bag ``--force`` moved aside), before
    the check or ``after`` it: where these tests make a race or a signal come."""
    real = writer.replacement_refusal
    calls = 0

    def checked(path: Path, force: bool) -> str | None:
        nonlocal calls
        calls += 1
        if not after:
            act(path, calls)
        refusal = real(path, force)
        if after:
            act(path, calls)
        return refusal

    monkeypatch.setattr(writer, "replacement_refusal", checked)


@pytest.mark.parametrize("swap", ["symlink to the input", "a folder of the user's", "the input"])
def test_what_takes_the_outputs_name_after_the_check_is_checked_again(
    rec: Path,
    tmp_path: Path,
    swap: str,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--force`` over a bag ``old``: between the last check and the rename, ``old`` is
    swapped for a symlink to the input, a folder that is no bag, or the input renamed to
    its name. What was moved aside is checked, not what was checked before: put back, one
    line, exit 1, the input and the user's folder intact (the input renamed in was removed;
    a symlink made an OSError out of rmtree, after the symlink and the partial were gone)."""
    old = tmp_path / "old"
    assert main(["bag", "repair", str(rec), "-o", str(old)]) == 0
    capsys.readouterr()
    mine = tmp_path / "mine"
    mine.mkdir()
    (mine / "photo.jpg").write_text("mine")

    def swapping(path: Path, call: int) -> None:
        if call == 2:  # finish's check done: the swap
            shutil.rmtree(path)
            if swap == "symlink to the input":
                path.symlink_to(rec, target_is_directory=True)
            elif swap == "a folder of the user's":
                mine.rename(path)
            else:
                rec.rename(path)

    on_each_check(monkeypatch, swapping, after=True)
    input_listing = listing(rec)
    assert main(["bag", "repair", str(rec), "-o", str(old), "--force"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and str(old) in err and "Traceback" not in err, err
    if swap == "symlink to the input":
        assert old.is_symlink() and listing(rec) == input_listing
    elif swap == "a folder of the user's":
        assert (old / "photo.jpg").read_text() == "mine"
    else:
        assert listing(old) == input_listing  # the input, at the name it was given
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial left


def test_an_old_bag_moved_aside_survives_a_new_bag_that_cannot_take_its_name(
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--force`` over a bag ``old``: the old bag is moved aside, then a folder of the user's
    takes the name before the new bag does, so the new bag cannot be put there. Neither bag
    is lost: exit 1, one line saying where the old bag is kept, the user's folder as it was.
    (The partial folder was removed, and the old bag in it with the new one.)"""
    old = tmp_path / "old"
    assert main(["bag", "repair", str(rec), "-o", str(old)]) == 0
    (old / "mark").write_text("the old bag")
    capsys.readouterr()

    def intruding(path: Path, call: int) -> None:
        if path.name == "replaced-old":  # the old bag moved aside and checked: the intrusion
            old.mkdir()
            (old / "mine.txt").write_text("mine")

    on_each_check(monkeypatch, intruding, after=True)
    assert main(["bag", "repair", str(rec), "-o", str(old), "--force"]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and "Traceback" not in err, err
    (kept,) = tmp_path.glob(".old.partial-*/replaced-old")
    assert str(kept) in err and (kept / "mark").read_text() == "the old bag"
    assert listing(old) == ["mine.txt"] and (old / "mine.txt").read_text() == "mine"


def test_a_bag_that_takes_the_outputs_name_during_a_repair_without_force_is_kept(
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """No ``--force``: ``out`` is new at the start, then another bag takes its name while the
    repair writes (a second repair, a recorder). It is not replaced: the user did not ask
    for that. Exit 1, one line saying it exists, the other bag as it was. (The check at the
    rename asked as if ``--force`` were given: the other bag was removed, exit 0.)"""
    other = tmp_path / "other"
    assert main(["bag", "repair", str(rec), "-o", str(other)]) == 0
    (other / "mark").write_text("another's bag")
    out = tmp_path / "out"
    capsys.readouterr()

    def arriving(path: Path, call: int) -> None:
        if call == 2:  # finish's check: the other bag took the name meanwhile
            other.rename(out)

    on_each_check(monkeypatch, arriving)
    assert main(["bag", "repair", str(rec), "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{out} exists" in err, err
    assert (out / "mark").read_text() == "another's bag" and writer.is_rosbag2_bag(out)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial left


def test_an_empty_folder_that_takes_the_outputs_name_at_the_rename_is_kept(
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``out`` new, and an empty folder of the user's made at its name after the last check,
    just before the rename: it is not replaced (a rename onto an empty folder replaces it
    without a word; the new bag is given its name only where nothing has it): exit 1, one
    line with the system's reason, the user's folder the same folder, no partial left."""
    out = tmp_path / "out"

    def arriving(path: Path, call: int) -> None:
        if call == 2:  # finish's check done: the user's folder arrives
            out.mkdir()

    on_each_check(monkeypatch, arriving, after=True)
    assert main(["bag", "repair", str(rec), "-o", str(out)]) == 1
    err = capsys.readouterr().err.strip()
    assert "\n" not in err and f"{out}: cannot write the bag: [Errno 17]" in err, err
    assert err.endswith(f"[Errno 17] File exists: '{out}'"), err  # the name taken, the reason
    assert out.is_dir() and list(out.iterdir()) == []
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial left


def test_ctrl_c_after_the_old_bag_is_moved_aside_puts_it_back(
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--force`` over a bag ``old``, Ctrl-C (SIGINT) once the old bag is moved aside and
    before the new one has its name: exit 130, the old bag back at its name, no partial
    folder left. (The partial folder was removed, the old bag in it: neither bag left.)"""
    old = tmp_path / "old"
    assert main(["bag", "repair", str(rec), "-o", str(old)]) == 0
    (old / "mark").write_text("the old bag")
    capsys.readouterr()

    def interrupted(path: Path, call: int) -> None:
        if path.name == "replaced-old":  # the old bag moved aside, being checked
            raise KeyboardInterrupt

    on_each_check(monkeypatch, interrupted)
    assert main(["bag", "repair", str(rec), "-o", str(old), "--force"]) == 130
    assert (old / "mark").read_text() == "the old bag" and writer.is_rosbag2_bag(old)
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial left


def test_sigterm_while_the_old_bag_is_aside_puts_it_back_and_leaves_no_partial_folder(
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SIGTERM (a ``kill``, a container's stop) just after ``--force`` moved the old bag
    aside: the repair ends as Ctrl-C ends it, with the shell's status of a terminated
    process (143): the old bag back at its name, no partial folder left, the handler before
    restored. (It had none: the process died with the old bag in the partial folder.)"""
    old = tmp_path / "old"
    assert main(["bag", "repair", str(rec), "-o", str(old)]) == 0
    (old / "mark").write_text("the old bag")
    capsys.readouterr()

    def terminated_meanwhile(path: Path, call: int) -> None:
        if path.name == "replaced-old":  # the old bag is aside: the stop comes
            os.kill(os.getpid(), signal.SIGTERM)

    on_each_check(monkeypatch, terminated_meanwhile)
    before = signal.getsignal(signal.SIGTERM)
    with pytest.raises(SystemExit) as stopped:
        main(["bag", "repair", str(rec), "-o", str(old), "--force"])
    assert stopped.value.code == 128 + signal.SIGTERM
    assert (old / "mark").read_text() == "the old bag"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial left
    assert signal.getsignal(signal.SIGTERM) == before


def test_held_stops_raise_a_stop_at_once_until_held_and_the_first_held_at_release() -> None:
    """``HeldStops``: a new one holds nothing (a stop is raised as it comes, a release raises
    nothing); held, the first stop waits for ``release`` (a later one is dropped: the first
    is what the process ends by), and after it stops are raised at once again."""
    stops = HeldStops()
    with pytest.raises(SystemExit):
        stops.deliver(SystemExit(143))
    stops.release()  # nothing held, nothing due: no exception
    stops.hold()
    stops.deliver(SystemExit(143))
    stops.deliver(KeyboardInterrupt())
    with pytest.raises(SystemExit) as first:
        stops.release()
    assert first.value.code == 143
    stops.release()  # raised once
    with pytest.raises(KeyboardInterrupt):
        stops.deliver(KeyboardInterrupt())


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_while_the_bag_is_written_ends_the_repair_at_once(
    stop: signal.Signals,
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SIGTERM or Ctrl-C while the bag is written (no rename under way, nothing held): the
    repair ends there, 143 or 130, no OUT, no partial folder, nothing said; with ``--force``
    the old bag stays as it was. The rest of the recording is not written first."""
    old = an_old_bag(rec, tmp_path, capsys)
    real = writer.BagOutput.write
    writes = 0

    def stopped_at_the_first(output: writer.BagOutput, *message: object) -> None:
        nonlocal writes
        writes += 1
        if writes == 1:
            os.kill(os.getpid(), stop)
        real(output, *message)  # type: ignore[arg-type]

    monkeypatch.setattr(writer.BagOutput, "write", stopped_at_the_first)
    for out, force in ((tmp_path / "new", []), (old, ["--force"])):
        writes = 0
        assert stopped_repair(["bag", "repair", str(rec), "-o", str(out), *force], stop) == (
            128 + stop
        )
        assert writes == 1 and capsys.readouterr().err == ""
        assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial
    assert not (tmp_path / "new").exists()
    assert (old / "stale").read_text() == "x"  # the old bag, as it was


@pytest.mark.parametrize("second", [signal.SIGTERM, signal.SIGINT])
def test_a_second_stop_during_the_clean_up_of_a_sigterm_waits_for_it(
    second: signal.Signals,
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """SIGTERM with ``--force``'s old bag aside, then a second SIGTERM (``kill`` twice, a
    process group's stop reaching the process twice) or a Ctrl-C while the old bag goes
    back: the clean-up ends all the same, exit 143. (The second stop was raised inside the
    clean-up: exit 130 or 143 with the old bag left in the partial folder.)"""
    old = tmp_path / "old"
    assert main(["bag", "repair", str(rec), "-o", str(old)]) == 0
    (old / "mark").write_text("the old bag")
    capsys.readouterr()

    def terminated_meanwhile(path: Path, call: int) -> None:
        if path.name == "replaced-old":
            os.kill(os.getpid(), signal.SIGTERM)

    on_each_check(monkeypatch, terminated_meanwhile)
    real_put_back = writer.BagOutput._put_back

    def stopped_again(self: writer.BagOutput, replaced: Path) -> None:
        os.kill(os.getpid(), second)
        real_put_back(self, replaced)

    monkeypatch.setattr(writer.BagOutput, "_put_back", stopped_again)
    before = signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)
    with pytest.raises(SystemExit) as stopped:
        main(["bag", "repair", str(rec), "-o", str(old), "--force"])
    assert stopped.value.code == 128 + signal.SIGTERM
    assert (old / "mark").read_text() == "the old bag"
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no partial left
    assert (signal.getsignal(signal.SIGTERM), signal.getsignal(signal.SIGINT)) == before


def an_old_bag(rec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> Path:
    """``tmp_path/old``, a bag repaired from ``rec``, holding a file ``stale`` the new bag
    will not have (what tells the old bag from the new one); the repair's output read."""
    old = tmp_path / "old"
    assert main(["bag", "repair", str(rec), "-o", str(old)]) == 0
    (old / "stale").write_text("x")
    capsys.readouterr()
    return old


def stopped_repair(arguments: list[str], stop: signal.Signals) -> int:
    """The exit status of ``main(arguments)`` stopped by ``stop``: 130 for Ctrl-C, which
    ``main`` returns, 143 for SIGTERM, which leaves it as ``SystemExit``."""
    if stop == signal.SIGTERM:
        with pytest.raises(SystemExit) as stopped:
            main(arguments)
        assert isinstance(stopped.value.code, int)
        return stopped.value.code
    return main(arguments)


@pytest.mark.parametrize("cut", ["refused", signal.SIGTERM, signal.SIGINT])
def test_a_replaced_bag_whose_removal_is_cut_leaves_the_new_bag_and_says_where_the_rest_is(
    cut: str | signal.Signals,
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """``--force`` over a bag ``old`` whose removal, after the new bag took its name, is cut
    short: by a file the system will not delete (the repair succeeded: exit 0), or by a stop
    (SIGTERM, Ctrl-C: a large bag takes seconds; the process ends as stopped, 143, 130).
    Either way the new bag stays at ``old`` and one warning names the partial folder that
    keeps the rest of the old one. (A refusal said "cannot write the bag", exit 1, with the
    new bag in place; a stop ended the process without a word, the rest hidden in
    ``.old.partial-PID``.)"""
    old = an_old_bag(rec, tmp_path, capsys)
    real = shutil.rmtree
    partial = tmp_path / f".old.partial-{os.getpid()}"

    def cut_short(path: str | os.PathLike[str], *args: object, **kwargs: object) -> None:
        if Path(path) == partial / "replaced-old":  # the old bag's removal
            if cut == "refused":
                raise PermissionError(13, "Permission denied", str(partial / "replaced-old"))
            os.kill(os.getpid(), cut)
        real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(shutil, "rmtree", cut_short)
    command = ["bag", "repair", str(rec), "-o", str(old), "--force"]
    if cut == "refused":
        assert main(command) == 0
    else:
        assert isinstance(cut, signal.Signals)
        assert stopped_repair(command, cut) == 128 + cut
    err = capsys.readouterr().err.strip()
    assert err.count("\n") == 0 and err.startswith("warning: "), err
    reason = "Permission denied" if cut == "refused" else "(stopped)"
    assert f"{old}: written, but its partial folder was not removed entirely" in err, err
    assert reason in err and str(partial) in err, err
    assert (old / "metadata.yaml").is_file() and not (old / "stale").exists()  # the new bag
    assert (partial / "replaced-old" / "stale").read_text() == "x"  # the old one, kept


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
@pytest.mark.parametrize(
    "step", ["the old bag moved aside", "the new bag named", "before the removal"]
)
def test_a_stop_as_a_rename_of_the_force_returns_falls_after_the_step(
    step: str,
    stop: signal.Signals,
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A stop that comes during one of ``finish``'s renames is raised by Python as the
    rename returns, before the next line notes what it did; it is held until then
    (``stops.STOPS``). During the old bag's move aside: the old bag goes back, nothing else
    left, no word (it was not put back: the new bag removed, the old one hidden in the
    partial folder, neither at ``old``, without a word). During the new bag's rename: the new
    bag stays and the warning names the partial folder keeping the old one (it was put back
    over the new bag, refused as "changed while the bag was written", exit 1); so between
    that rename and the removal's start (the process ended without a word)."""
    old = an_old_bag(rec, tmp_path, capsys)
    partial = tmp_path / f".old.partial-{os.getpid()}"
    name, target = ("replace", partial / "replaced-old") if "aside" in step else ("rename", old)
    real = getattr(os, name)

    def stopped_in_the_rename(source: str | os.PathLike[str], dest: str | os.PathLike[str]) -> None:
        real(source, dest)
        if Path(dest) == target:  # the signal came in the system call: handled as it returns
            os.kill(os.getpid(), stop)

    monkeypatch.setattr(os, name, stopped_in_the_rename)
    if step == "before the removal":  # after the rename, before _remove_partial's try
        monkeypatch.undo()
        remove = writer.BagOutput._remove_partial

        def stopped_before(output: writer.BagOutput, replaced: Path | None) -> None:
            os.kill(os.getpid(), stop)
            remove(output, replaced)

        monkeypatch.setattr(writer.BagOutput, "_remove_partial", stopped_before)
    code = stopped_repair(["bag", "repair", str(rec), "-o", str(old), "--force"], stop)
    assert code == 128 + stop
    err = capsys.readouterr().err.strip()
    if "aside" in step:
        assert err == ""
        assert (old / "stale").read_text() == "x"  # the old bag, back
        assert not partial.exists()
    else:
        assert err.count("\n") == 0 and err.startswith("warning: "), err
        assert f"{old}: written" in err and "(stopped)" in err and str(partial) in err
        assert (old / "metadata.yaml").is_file() and not (old / "stale").exists()  # the new bag
        assert (partial / "replaced-old" / "stale").read_text() == "x"  # the old one, kept
    assert not STOPS.held and STOPS.due is None


@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT])
def test_a_stop_as_the_old_bags_removal_ends_says_nothing_is_left(
    stop: signal.Signals,
    rec: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    """A stop just after the last of the old bag was removed: the partial folder is removed
    too, no warning (it named the partial folder as keeping the rest, a folder removed right
    after: a warning about nothing, pointing nowhere)."""
    old = an_old_bag(rec, tmp_path, capsys)
    real = shutil.rmtree

    def stopped_as_it_ends(path: str | os.PathLike[str], *args: object, **kwargs: object) -> None:
        real(path, *args, **kwargs)  # type: ignore[arg-type]
        if Path(path).name == "replaced-old":
            os.kill(os.getpid(), stop)

    monkeypatch.setattr(shutil, "rmtree", stopped_as_it_ends)
    code = stopped_repair(["bag", "repair", str(rec), "-o", str(old), "--force"], stop)
    assert code == 128 + stop
    assert capsys.readouterr().err == ""
    assert (old / "metadata.yaml").is_file()
    assert not list(tmp_path.glob(".old.partial-*"))


def test_two_stops_that_come_in_one_step_are_no_traceback(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """SIGTERM and Ctrl-C that come within one step (one long call into C: Python runs
    handlers between steps): the first is raised, the second waits as later ones do
    (``terminate_as_exit`` set Python's SIG_IGN for it, and Python, finding the signal come
    and its handler gone, printed "OSError: Signal 15 ignored due to race condition", a
    traceback on the terminal)."""
    unraisable: list[object] = []
    monkeypatch.setattr(sys, "unraisablehook", unraisable.append)
    both = {signal.SIGINT, signal.SIGTERM}
    with pytest.raises(KeyboardInterrupt), terminate_as_exit():  # the lower number first
        signal.pthread_sigmask(signal.SIG_BLOCK, both)  # this thread's: both come at once
        try:
            signal.raise_signal(signal.SIGTERM)
            signal.raise_signal(signal.SIGINT)
        finally:
            signal.pthread_sigmask(signal.SIG_UNBLOCK, both)
    assert unraisable == []


def test_an_output_that_is_a_symlink_is_refused(
    rec: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dangling symlink as OUT had the bag written where it pointed (no --force needed: a
    link planted in a shared folder chose where the bag went); a symlink to another bag had
    --force replace that bag, though --force replaces no symlink. Refused, one line, exit 1,
    nothing written at either end, the line naming where the link points and what to give
    instead; a symlink among OUT's parents is followed as before."""
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    dangling = tmp_path / "dangling"
    dangling.symlink_to(elsewhere / "new")
    other = tmp_path / "other"
    assert main(["bag", "repair", str(rec), "-o", str(other)]) == 0
    (other / "mine.txt").write_text("mine")
    to_other = tmp_path / "to_other"
    to_other.symlink_to(other, target_is_directory=True)
    capsys.readouterr()
    for output, force in (
        (dangling, []),
        (to_other, ["--force"]),
        (Path(f"{to_other}/"), ["--force"]),
    ):
        assert main(["bag", "repair", str(rec), "-o", str(output), *force]) == 1
        err = capsys.readouterr().err.strip()
        assert "symbolic link" in err and "\n" not in err, err
        assert f"(to {os.readlink(output)})" in err, err
        assert err.endswith("give the folder itself, or another output"), err
    assert not (elsewhere / "new").exists() and (other / "mine.txt").read_text() == "mine"
    parent_link = tmp_path / "parent_link"
    parent_link.symlink_to(elsewhere, target_is_directory=True)
    assert main(["bag", "repair", str(rec), "-o", str(parent_link / "out")]) == 0
    assert (elsewhere / "out" / "metadata.yaml").is_file()
