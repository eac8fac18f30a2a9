"""Errors to users: a bad description gives ONE clear line and exit status 1, never a traceback.

Both executables run as subprocesses, as a user would start them: the command line tool
``joint-tf-publisher`` (check, fk, graph, plot, demo, run) on bad files, and the node
``joint_tf_publisher --ros-args -p robot_description:=...`` on bad text. The line names the
source and, where the problem has one, its line: ``source:line: message``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO_ROOT = Path(__file__).resolve().parent.parent
RUN_TIMEOUT_S = 60.0


@dataclass(frozen=True)
class BadDescription:
    """A broken robot description: file suffix, text, the line to blame and words to expect."""

    name: str
    suffix: str
    text: str
    line: int | None
    words: tuple[str, ...]


BAD_DESCRIPTIONS = [
    BadDescription(
        "malformed-xml",
        ".urdf",
        '<robot name="r">\n  <link name="a">\n</robot>\n',
        3,
        ("malformed",),
    ),
    BadDescription(
        "missing-link",
        ".urdf",
        '<robot name="r">\n  <link name="a"/>\n  <joint name="j" type="fixed">\n'
        '    <parent link="a"/><child link="ghost"/>\n  </joint>\n</robot>\n',
        3,
        ("ghost",),
    ),
    BadDescription(
        "unknown-joint-type",
        ".urdf",
        '<robot name="r">\n  <link name="a"/>\n  <link name="b"/>\n'
        '  <joint name="j" type="hinge"><parent link="a"/><child link="b"/></joint>\n</robot>\n',
        4,
        ("hinge",),
    ),
    BadDescription(
        "nan-origin",
        ".urdf",
        '<robot name="r">\n  <link name="a"/>\n  <link name="b"/>\n'
        '  <joint name="j" type="fixed"><parent link="a"/><child link="b"/>\n'
        '    <origin xyz="0 nan 0"/>\n  </joint>\n</robot>\n',
        5,
        ("origin",),
    ),
    BadDescription(
        "revolute-without-limit",
        ".urdf",
        '<robot name="r">\n  <link name="a"/>\n  <link name="b"/>\n'
        '  <joint name="j" type="revolute"><parent link="a"/><child link="b"/></joint>\n'
        "</robot>\n",
        4,
        ("limit",),
    ),
    BadDescription(
        "mimic-cycle",
        ".urdf",
        '<robot name="r">\n  <link name="a"/><link name="b"/><link name="c"/>\n'
        '  <joint name="j1" type="continuous"><parent link="a"/><child link="b"/>\n'
        '    <mimic joint="j2"/></joint>\n'
        '  <joint name="j2" type="continuous"><parent link="b"/><child link="c"/>\n'
        '    <mimic joint="j1"/></joint>\n</robot>\n',
        None,
        ("mimic",),
    ),
    BadDescription(
        "two-roots",
        ".urdf",
        '<robot name="r">\n  <link name="a"/>\n  <link name="b"/>\n</robot>\n',
        None,
        ("root",),
    ),
    BadDescription("empty", ".urdf", "", None, ("empty",)),
    BadDescription("binary", ".urdf", "\x89PNG\r\n\x1a\n\x00\x00garbage", 1, ("malformed",)),
    BadDescription("wrong-root", ".urdf", "<html><body/></html>\n", 1, ("<robot>",)),
    BadDescription(
        "external-entity",
        ".urdf",
        '<?xml version="1.0"?>\n<!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]>\n'
        '<robot name="&x;"><link name="a"/></robot>\n',
        3,
        ("entity",),
    ),
    BadDescription(
        "sdf-version",
        ".sdf",
        '<sdf version="2.0">\n  <model name="m"><link name="a"/></model>\n</sdf>\n',
        1,
        ("version",),
    ),
    BadDescription(
        "sdf-missing-parent",
        ".sdf",
        '<sdf version="1.9">\n  <model name="m">\n    <link name="a"/>\n'
        '    <joint name="j" type="revolute"><child>a</child></joint>\n  </model>\n</sdf>\n',
        4,
        ("parent",),
    ),
]


def console_script(name: str, module: str) -> list[str]:
    """The console script ``name`` beside this interpreter, or ``module`` run with it."""
    script = Path(sys.executable).with_name(name)
    if script.exists():
        return [str(script)]
    return [sys.executable, "-c", f"import sys; from {module} import main; sys.exit(main())"]


def child_env(base: dict[str, str] | None = None) -> dict[str, str]:
    """``base`` (default: this environment) with the package importable from any directory."""
    env = dict(os.environ if base is None else base)
    env["PYTHONPATH"] = os.pathsep.join(filter(None, [str(REPO_ROOT), env.get("PYTHONPATH")]))
    return env


def run(
    command: list[str], cwd: Path | None = None, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    """Run ``command`` with a timeout; stdin closed (nothing may wait for input)."""
    return subprocess.run(
        command,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        cwd=cwd,
        env=child_env(env),
        stdin=subprocess.DEVNULL,
    )


#: rcl logs this itself, inside rclpy.init, before the node can say anything (not the node's).
RCL_OWN_LINE = re.compile(r"^\[ERROR\] \[[\d.]+\] \[rcl\]: ")


def assert_one_clear_line(
    completed: subprocess.CompletedProcess[str],
    prefix: str,
    words: tuple[str, ...],
    ignore: re.Pattern[str] | None = None,
) -> str:
    """Exit 1, no traceback anywhere, and exactly one stderr line starting with ``prefix``.

    Lines matching ``ignore`` (another library's own log line) are not counted.
    """
    output = completed.stdout + completed.stderr
    assert "Traceback" not in output, output
    assert completed.returncode == 1, (completed.returncode, output)
    lines = [line for line in completed.stderr.splitlines() if line.strip()]
    if ignore is not None:
        lines = [line for line in lines if not ignore.match(line)]
    assert len(lines) == 1, completed.stderr
    line = lines[0]
    assert line.startswith(prefix), (prefix, line)
    for word in words:
        assert word.lower() in line.lower(), (word, line)
    return line


def where(source: str, line: int | None) -> str:
    """The expected start of the error line: ``source:line: `` or ``source:``."""
    return f"{source}:{line}: " if line is not None else f"{source}:"


# -- the command line tool -----------------------------------------------------------------

CLI = console_script("joint-tf-publisher", "joint_tf_publisher.cli.main")


@pytest.mark.parametrize("bad", BAD_DESCRIPTIONS, ids=lambda bad: bad.name)
def test_cli_check_bad_description_one_line_exit_1(bad: BadDescription, tmp_path: Path) -> None:
    path = tmp_path / f"{bad.name}{bad.suffix}"
    path.write_text(bad.text)
    completed = run([*CLI, "check", str(path)], cwd=tmp_path)
    assert_one_clear_line(completed, where(str(path), bad.line), bad.words)


@pytest.mark.parametrize("command", ["fk", "graph", "plot", "demo", "run"])
def test_cli_other_commands_bad_description_one_line_exit_1(command: str, tmp_path: Path) -> None:
    """Every command that loads a model reports it the same way (one case each: time)."""
    bad = BAD_DESCRIPTIONS[1]  # missing link
    path = tmp_path / "robot.urdf"
    path.write_text(bad.text)
    completed = run([*CLI, command, str(path)], cwd=tmp_path)
    assert_one_clear_line(completed, where(str(path), bad.line), bad.words)


def test_cli_bad_description_on_stdin(tmp_path: Path) -> None:
    bad = BAD_DESCRIPTIONS[0]
    completed = subprocess.run(
        [*CLI, "check", "-"],
        input=bad.text,
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        cwd=tmp_path,
        env=child_env(),
    )
    assert_one_clear_line(completed, where("<stdin>", bad.line), bad.words)


def limit_address_space() -> None:
    """In the child: at most 2 GiB of address space, so an unbounded read fails fast."""
    import resource

    resource.setrlimit(resource.RLIMIT_AS, (2 * 1024**3, resource.RLIM_INFINITY))


def test_cli_endless_stdin_one_line_exit_1(tmp_path: Path) -> None:
    """``joint-tf-publisher check -`` fed an endless stream: refused after the size cap."""
    with open("/dev/zero", "rb") as endless:
        completed = subprocess.run(
            [*CLI, "check", "-"],
            stdin=endless,
            capture_output=True,
            text=True,
            timeout=RUN_TIMEOUT_S,
            cwd=tmp_path,
            env=child_env(),
            preexec_fn=limit_address_space,
        )
    assert_one_clear_line(completed, "<stdin>:", ("bytes",))


@pytest.mark.parametrize("kind", ["missing", "directory", "unreadable-suffix"])
def test_cli_unreadable_file_one_line_exit_1(kind: str, tmp_path: Path) -> None:
    path = {
        "missing": tmp_path / "no_such_robot.urdf",
        "directory": tmp_path,
        "unreadable-suffix": tmp_path / "robot.stl",
    }[kind]
    if kind == "unreadable-suffix":
        path.write_bytes(b"solid cube\nendsolid cube\n")
    completed = run([*CLI, "check", str(path)], cwd=tmp_path)
    assert_one_clear_line(completed, f"{path}:", ())


def test_cli_bad_xacro_one_line_exit_1(tmp_path: Path) -> None:
    probe = subprocess.run(
        [sys.executable, "-c", "import xacro"], capture_output=True, timeout=RUN_TIMEOUT_S
    )
    if probe.returncode != 0 or importlib.util.find_spec("xacro") is None:
        pytest.skip("xacro is not installed in this interpreter (make env installs it)")
    path = tmp_path / "robot.urdf.xacro"
    path.write_text(
        '<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">\n'
        '  <link name="${undefined_property}"/>\n</robot>\n'
    )
    completed = run([*CLI, "check", str(path)], cwd=tmp_path)
    assert_one_clear_line(completed, f"{path}:", ("xacro",))


def test_cli_good_description_exit_0(tmp_path: Path) -> None:
    """Control: the same runs succeed on a valid description (so the failures above are real)."""
    path = REPO_ROOT / "test" / "urdf" / "all_joint_types.urdf"
    completed = run([*CLI, "check", str(path)], cwd=tmp_path)
    assert completed.returncode == 0, completed.stderr
    assert "Traceback" not in completed.stderr


# -- the node -------------------------------------------------------------------------------

NODE = console_script("joint_tf_publisher", "joint_tf_publisher.ros.runtime")
NODE_PREFIX = "joint_tf_publisher: "


def node_available() -> bool:
    """True if the node's interpreter has rclpy (the project venv, or a sourced ROS 2)."""
    probe = subprocess.run(
        [sys.executable, "-c", "import rclpy, tf2_msgs.msg"],
        capture_output=True,
        timeout=RUN_TIMEOUT_S,
    )
    return probe.returncode == 0


needs_ros = pytest.mark.skipif(not node_available(), reason="needs rclpy (make test uses .venv)")


def params_file(path: Path, **params: object) -> Path:
    """A ROS 2 parameters file for every node (JSON values are valid YAML)."""
    lines = ["/**:", "  ros__parameters:"]
    lines += [f"    {name}: {json.dumps(value)}" for name, value in params.items()]
    path.write_text("\n".join(lines) + "\n")
    return path


@needs_ros
@pytest.mark.ros
@pytest.mark.parametrize(
    "bad",
    [bad for bad in BAD_DESCRIPTIONS if bad.name in ("malformed-xml", "missing-link", "nan-origin")]
    + [bad for bad in BAD_DESCRIPTIONS if bad.name in ("sdf-missing-parent", "external-entity")],
    ids=lambda bad: bad.name,
)
def test_node_bad_description_one_line_exit_1(
    bad: BadDescription, tmp_path: Path, ros_subprocess_env: dict[str, str]
) -> None:
    params = params_file(tmp_path / "params.yaml", robot_description=bad.text)
    completed = run([*NODE, "--ros-args", "--params-file", str(params)], env=ros_subprocess_env)
    line = assert_one_clear_line(completed, NODE_PREFIX, bad.words)
    assert re.match(re.escape(NODE_PREFIX + where("robot_description", bad.line)), line), line


@needs_ros
@pytest.mark.ros
def test_node_bad_description_on_command_line_one_line_exit_1(
    ros_subprocess_env: dict[str, str],
) -> None:
    text = '<robot name="r"><link name="a"/><joint name="j" type="fixed"/></robot>'
    completed = run(
        [*NODE, "--ros-args", "-p", f"robot_description:={text}"], env=ros_subprocess_env
    )
    assert_one_clear_line(completed, NODE_PREFIX + "robot_description:1: ", ())


#: A robot of one link, ``base``.
ONE_LINK = '<robot name="r"><link name="base"/></robot>'


@needs_ros
@pytest.mark.ros
@pytest.mark.parametrize(
    "arguments, words",
    [
        ([], ("robot_description", "empty")),
        (["-p", "robot_description:= "], ("robot_description", "empty")),
        (["-p", "publish_frequency:=-5.0", "-p", "robot_description:=<robot/>"], ("frequency",)),
        (["-p", "clamp:=tight", "-p", "robot_description:=<robot/>"], ("clamp",)),
        (["-p", "robot_description"], ("ros",)),
        (
            ["-p", f"robot_description:={ONE_LINK}", "-p", "remote.frames:=[bse]"],
            ("remote.frames", "'bse'", "did you mean base"),
        ),
        (
            ["-p", f"robot_description:={ONE_LINK}", "-p", "remote.frames:=[base]"]
            + ["-p", "remote.topic:=/tf"],
            ("remote.topic", "topic of its own"),
        ),
        (
            ["-p", f"robot_description:={ONE_LINK}", "-p", "remote.frames:=[base]"]
            + ["-p", "remote.topic:=joint_states"],
            ("remote.topic", "/joint_states", "sensor_msgs/msg/JointState", "topic of its own"),
        ),
        # Hostile numbers (issue 43): rclpy's range refuses some first, rcl reads others as
        # text; each is one line in the table's words, naming the parameter.
        (
            ["-p", f"robot_description:={ONE_LINK}", "-p", "publish_frequency:=nan"],
            ("publish_frequency must be >= 0.001 and <= 1000 Hz, got nan",),
        ),
        (
            ["-p", f"robot_description:={ONE_LINK}", "-p", "time_offset:=-inf"],
            ("time_offset must be finite and within",),
        ),
        (
            ["-p", f"robot_description:={ONE_LINK}", "-p", f"diagnostic_period:={'9' * 400}"],
            ("diagnostic_period must be a number of seconds, got '999", "(402 chars)"),
        ),
    ],
    ids=[
        "no-description",
        "blank-description",
        "bad-frequency",
        "bad-clamp",
        "bad-ros-args",
        "unknown-remote-frame",
        "remote-topic-on-tf",
        "remote-topic-of-another-type",
        "nan-frequency",
        "infinite-offset",
        "400-digit-period",
    ],
)
def test_node_bad_parameters_one_line_exit_1(
    arguments: list[str], words: tuple[str, ...], ros_subprocess_env: dict[str, str]
) -> None:
    completed = run([*NODE, "--ros-args", *arguments], env=ros_subprocess_env)
    assert_one_clear_line(completed, NODE_PREFIX, words, ignore=RCL_OWN_LINE)


@pytest.mark.parametrize("signal_name", ["SIGINT", "SIGTERM"])
def test_stopped_while_importing_exits_0_without_traceback(
    signal_name: str, tmp_path: Path
) -> None:
    """The console scripts (``entry``) import the node or CLI with SIGINT/SIGTERM ending the
    process quietly: a Ctrl-C during the half second of imports exits 0, no traceback."""
    import signal

    (tmp_path / "slow_module.py").write_text(
        "import sys, time\nprint('importing', flush=True)\ntime.sleep(60)\n"
    )
    env = child_env()
    env["PYTHONPATH"] = os.pathsep.join([str(tmp_path), env["PYTHONPATH"]])
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "from joint_tf_publisher.entry import _import_quietly; _import_quietly('slow_module')",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
    assert process.stdout is not None
    assert process.stdout.readline().strip() == "importing"
    process.send_signal(getattr(signal, signal_name))
    _, stderr = process.communicate(timeout=RUN_TIMEOUT_S)
    assert process.returncode == 0, (process.returncode, stderr[-2000:])
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr[-2000:]


#: ``hang`` for ``hung_console_script``: the ROS session of ``demo`` or ``run`` ends and its
#: teardown (the executor's shutdown, the middleware's part of it) never returns.
HUNG_SESSION_END = (
    "import rclpy.executors\nrclpy.executors.SingleThreadedExecutor.shutdown = never_returns"
)


def hung_console_script(
    main: str, hang: str, *argv: str, deadline_s: float | None = 1.0
) -> list[str]:
    """The console script ``entry.<main>`` with argv, its end deadline ``deadline_s`` (None:
    the console script's own) and ``hang`` (statements run first) making a step of its end
    never return: a function ``never_returns`` is defined for it."""
    deadline = "" if deadline_s is None else f"entry.END_DEADLINE_S = {deadline_s}\n"
    code = (
        "import sys, time\n"
        "def never_returns(*args, **kwargs):\n"
        "    time.sleep(600)\n"
        f"{hang}\n"
        "import joint_tf_publisher.entry as entry\n"
        f"{deadline}"
        f"sys.argv[1:] = {list(argv)!r}\n"
        f"sys.exit(entry.{main}())\n"
    )
    return [sys.executable, "-c", code]


def test_a_console_script_that_hangs_on_its_way_out_ends_by_its_deadline(tmp_path: Path) -> None:
    """The command has returned and the interpreter ends (atexit, finalization): a step that
    never returns there ends by the deadline, its stack on stderr, exit 1."""
    model = REPO_ROOT / "test" / "urdf" / "all_joint_types.urdf"
    command = hung_console_script(
        "cli_main", "import atexit; atexit.register(never_returns)", "check", str(model)
    )
    completed = run(command, cwd=tmp_path, env=child_env())
    assert completed.returncode == 1, completed.stderr[-2000:]
    assert "all_joint_types" in completed.stdout  # the command's work was done
    assert "Timeout (0:00:01)!" in completed.stderr, completed.stderr[-2000:]
    assert "never_returns" in completed.stderr, completed.stderr[-2000:]


@pytest.mark.parametrize(
    ("hang", "argv"),
    [
        ("", ["no-such-command"]),  # argparse's exit (SystemExit 2)
        (  # an error out of the command: a traceback
            "import joint_tf_publisher.cli.main as cli\n"
            "def fails(args):\n"
            "    raise TypeError('a bug')\n"
            "cli.cmd_check = fails",
            ["check", "model.urdf"],
        ),
    ],
    ids=["usage-error", "exception"],
)
def test_a_console_script_ending_by_an_exception_ends_by_its_deadline(
    tmp_path: Path, hang: str, argv: list[str]
) -> None:
    """The command ends by an exception (argparse's SystemExit, a bug's traceback), not a
    return, and a step of the interpreter's end never returns: ended by the deadline too. It
    was started only after a return: such a process hung until a signal ended it (after
    ``demo`` or ``run``, whose handlers make SIGINT and SIGTERM a flag, until SIGKILL)."""
    command = hung_console_script(
        "cli_main", f"import atexit; atexit.register(never_returns)\n{hang}", *argv
    )
    completed = run(command, cwd=tmp_path, env=child_env())
    assert completed.returncode == 1, completed.stderr[-2000:]
    assert "Timeout (0:00:01)!" in completed.stderr, completed.stderr[-2000:]
    assert "never_returns" in completed.stderr, completed.stderr[-2000:]


def test_a_command_with_stderr_closed_exits_0() -> None:
    """Started with stderr closed (``2>&-``, a daemon's), ``sys.stderr`` is None: the
    command's deadline is armed all the same (its stacks would go nowhere) and a command that
    did its work exits 0; faulthandler refused None with a RuntimeError, exit 1."""
    model = REPO_ROOT / "test" / "urdf" / "all_joint_types.urdf"
    command = hung_console_script("cli_main", "pass", "check", str(model), deadline_s=None)
    completed = subprocess.run(
        ["sh", "-c", 'exec "$@" 2>&-', "sh", *command],
        capture_output=True,
        text=True,
        timeout=RUN_TIMEOUT_S,
        env=child_env(),
        stdin=subprocess.DEVNULL,
    )
    assert completed.returncode == 0, completed.stdout[-2000:]
    assert "all_joint_types" in completed.stdout
