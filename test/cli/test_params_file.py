"""--params files read by the CLI (check, fk, bag repair, doctor --bag): hostile YAML.

Each is one line naming the file and exit 1 (bag) or 2 (usage), at once: aliases (a
"billion laughs" of aliased mappings was flattened for good; an alias of itself ended in a
RecursionError), nesting past the bound, more YAML values than the bound; and names from
the file that reach a refusal are shown escaped and cut (a key can hold a newline or an
escape sequence).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from repo_paths import REPO_ROOT

from joint_tf_publisher.cli.main import main
from joint_tf_publisher.cli.params_file import MAX_NESTING, MAX_NODES
from joint_tf_publisher.node_core.parameter_keys import counted, offline_unknown
from joint_tf_publisher.node_core.parameters import ParameterRejected, Settings

ARM = REPO_ROOT / "urdf" / "demo_arm.urdf"
HEAD = "joint_tf_publisher:\n  ros__parameters:\n"


def billion_laughs(levels: int = 30) -> str:
    """2**levels keys once its aliased mappings are flattened."""
    lines = ["    l0: &l0 {a: 1, b: 2}"]
    lines += [f"    l{i}: &l{i} {{a: *l{i - 1}, b: *l{i - 1}}}" for i in range(1, levels)]
    return HEAD + "\n".join(lines) + "\n"


HOSTILE = {
    "billion_laughs": (billion_laughs(), "line 4: alias *l0: a parameters file takes no aliases"),
    "self_alias": (HEAD + "    a: &a {b: *a}\n", "line 3: alias *a"),
    "merge_key": (HEAD + "    base: &b {x: 1}\n    c: {<<: *b}\n", "alias *b"),
    "deep_sequence": (
        HEAD + "    a: " + "[" * 100_000 + "]" * 100_000 + "\n",
        f"nested deeper than {MAX_NESTING} levels",
    ),
    "deep_mapping": (
        HEAD + "    a: " + "{a: " * 5000 + "1" + "}" * 5000 + "\n",
        f"nested deeper than {MAX_NESTING} levels",
    ),
    "too_many_values": (
        HEAD + "".join(f"    key_{i}: {i}\n" for i in range(MAX_NODES)),
        f"more than {MAX_NODES} YAML values",
    ),
}


def exit_code(command: list[str]) -> int:
    """main's exit code (argparse's usage errors exit)."""
    try:
        return main(command)
    except SystemExit as exc:
        return int(exc.code or 0)


@pytest.mark.parametrize("case", sorted(HOSTILE))
def test_hostile_yaml_is_one_line_at_once(
    case: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    text, words = HOSTILE[case]
    params = tmp_path / "params.yaml"
    params.write_text(text)
    commands = (
        (["check", str(ARM), "--params", str(params)], 2),
        (["bag", "repair", str(tmp_path / "in"), "-o", str(tmp_path / "out")], 1),
        (["doctor", "--bag", str(tmp_path / "in")], 1),
    )
    for command, code in commands[:1] if case == "too_many_values" else commands:
        if command[0] != "check":
            command += ["--params", str(params)]
        start = time.monotonic()
        assert exit_code(command) == code, command
        assert time.monotonic() - start < 30  # not a bound on speed: the bomb never ended
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"--params {params}: " in err and words in err, err


def test_names_from_a_file_are_escaped_and_cut_in_refusals() -> None:
    """Offline every key of the file reaches the settings: a zeros.* or attachments.* key
    with a newline or an escape sequence, or of a megabyte, is named escaped and cut."""
    forging = "j\n[ERROR] forged \x1b[31m"
    for values in (
        {f"zeros.{forging}": "x"},
        {f"zeros.{forging}": list(range(5000))},
        {f"attachments.{forging}.bogus": "x"},
        {f"attachments.{forging}.origin": "x"},
        {f"zeros.{'j' * 2**20}": "x"},
        {"description_args": ["x" * 2**20]},
        {"attachments.names": ["-" * 2**20]},
    ):
        with pytest.raises(ParameterRejected) as refused:
            Settings.from_values(values)
        reason = str(refused.value)
        assert reason.isprintable() and len(reason) < 600, reason[:300]


def test_unknown_keys_are_counted_escaped() -> None:
    """The health report's count names keys as printable text (its values are printed as
    lines: a key must not forge one)."""
    _, names = counted(offline_unknown(["a\nb\x1b[2J", "plain"], ()))
    assert names == ("a\\nb\\x1b[2J", "plain")


#: Plain scalars PyYAML (YAML 1.1) types otherwise than rcl, and the common ones.
SCALARS = (
    "1e3", "5e-3", "1E3", "1.", ".5", "+5", "-0", "08", "017", "0X10", "-0x10", "1_000",
    "1:30", "0b101", "0o7", "1e400", "1.0e+400", "1e-320", "2.5e-310", "0.1e-400",
    "99999999999999999999", "-99999999999999999999", "9" * 400, "nan", "inf", ".nan",
    "-.inf", "+.inf", "y", "Yes", "off", "NO", "~", "null", "2001-12-14", "1e", "0x", "..5",
)  # fmt: skip


@pytest.mark.ros
def test_scalars_are_typed_as_rcl_types_them(tmp_path: Path) -> None:
    """The bag commands' --params values are those the node is given: each plain scalar
    compared with what rcl itself reads from the same file (``publish_frequency: 1e3`` was
    refused as text offline and taken by the node; ``time_offset: 1:30`` was 90 s offline
    and text, a refused start, for the node)."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.context import Context
    from rclpy.node import Node

    from joint_tf_publisher.cli.params_file import node_parameters

    params = tmp_path / "params.yaml"
    lines = [f"    k{index:02d}: {text}" for index, text in enumerate(SCALARS)]
    params.write_text(HEAD + "\n".join(lines) + "\n    yes: 1\n    '1': on\n")
    context = Context()
    rclpy.init(args=["--ros-args", "--params-file", str(params)], context=context)
    try:
        node = Node("joint_tf_publisher", context=context)
        given = {name: value.value for name, value in node._parameter_overrides.items()}
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    offline = node_parameters(params)
    assert sorted(offline) == sorted(given)
    for name, value in given.items():
        assert type(offline[name]) is type(value) and repr(offline[name]) == repr(value), name


#: Sections of a file for several robots (each sets a key of its own), as rcl names nodes.
SECTIONS = {
    "/robot1/joint_tf_publisher": "r1",
    "/robot2/joint_tf_publisher": "r2",
    "joint_tf_publisher": "bare",
    "/joint_tf_publisher": "root",
    "/**/joint_tf_publisher": "any_ns",
    "/*/joint_tf_publisher": "one_ns",
    "robot1/joint_tf_publisher": "relative_r1",
    "/**": "all",
    "/*": "one_token",
    "/robot1/*": "r1_star",
    "/robot1/**": "r1_starstar",
    "/a/**/joint_tf_publisher": "a_any",
    "/other_node": "other",
    "/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/**/x": "many_stars",
}


@pytest.mark.ros
@pytest.mark.parametrize("namespace", ["", "robot1", "/robot2/", "a/b", "a/b/c/d"])
def test_sections_apply_as_rcl_applies_them(namespace: str, tmp_path: Path) -> None:
    """bag repair --namespace robot1 with a file for two robots took both robots' sections
    (the later one's values over the earlier's): each section applies to the node rcl
    applies it to, nested namespaces too."""
    rclpy = pytest.importorskip("rclpy")
    from rclpy.context import Context
    from rclpy.node import Node

    from joint_tf_publisher.cli.params_file import node_parameters

    params = tmp_path / "params.yaml"
    text = "".join(f"{key}:\n  ros__parameters: {{{tag}: 1}}\n" for key, tag in SECTIONS.items())
    text += "/robot1:\n  joint_tf_publisher:\n    ros__parameters: {nested_r1: 1}\n"
    text += "/a:\n  b:\n    joint_tf_publisher:\n      ros__parameters: {nested_ab: 1}\n"
    params.write_text(text)
    context = Context()
    rclpy.init(args=["--ros-args", "--params-file", str(params)], context=context)
    try:
        node = Node("joint_tf_publisher", namespace="/" + namespace.strip("/"), context=context)
        given = sorted(node._parameter_overrides)
        node.destroy_node()
    finally:
        rclpy.shutdown(context=context)
    assert sorted(node_parameters(params, namespace=namespace)) == given


def test_a_rate_whose_period_overflows_is_refused_by_name(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """publish_frequency: 1.0e-300 is > 0, but its period is an infinity: bag repair ended
    in an OverflowError traceback (the node: in every JointState callback)."""
    from bag_maker import recording

    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    params = tmp_path / "params.yaml"
    for name in ("publish_frequency", "remote.rate"):
        params.write_text(f"/**:\n  ros__parameters:\n    {name}: 1.0e-300\n")
        command = ["bag", "repair", str(bag), "-o", str(tmp_path / "out"), "--params", str(params)]
        assert exit_code(command) == 1
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and f"{name} must be at least 1e-09 Hz" in err, err
    assert Settings.from_values({"publish_frequency": 1e-9}).interval_ns == 10**18


def test_a_frame_prefix_is_bounded(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Each prefixes two frame ids of every transform: a 4 MB frame_prefix made a bag
    repair of 5 joint states write 337 MB (the node: /tf messages of 64 MB)."""
    from bag_maker import recording

    from joint_tf_publisher.node_core.parameters import MAX_PREFIX_CHARS

    bag, _ = recording(tmp_path / "in", ARM, "sqlite3", count=5)
    params = tmp_path / "params.yaml"
    for name in ("frame_prefix", "global_frame_prefix"):
        params.write_text(f"/**:\n  ros__parameters:\n    {name}: {'x' * 2**20}\n")
        command = ["bag", "repair", str(bag), "-o", str(tmp_path / "out"), "--params", str(params)]
        assert exit_code(command) == 1
        err = capsys.readouterr().err
        words = f"{name} holds {2**20} characters: at most {MAX_PREFIX_CHARS} are taken"
        assert err.count("\n") == 1 and words in err, err[:300]
        assert not (tmp_path / "out").exists()
    assert Settings.from_values({"frame_prefix": "r" * MAX_PREFIX_CHARS}).frame_prefix
