"""Files a request names, over DDS: the console script never blocks on one, never expands a
xacro from outside the folders allowed at start, and stops on SIGINT while it waits for one.

One node serves the module (its tests run in order; the last one stops it): started with a
description file and an attachment file in one folder, which is therefore allowed at runtime.
What the reader, the rules and the xacro child do in detail is test/description/test_files.py
and test/node_core/test_allowed_folders.py (no DDS).
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

rclpy = pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("xacro", reason="needs xacro (run in .venv: make test)")

from node_harness import (  # noqa: E402
    NodeUnderTest,
    Probe,
    fresh_stamp,
    parameter_value,
    started,
    wait_until,
)
from rcl_interfaces.msg import Parameter as ParameterMsg  # noqa: E402
from rcl_interfaces.srv import SetParameters  # noqa: E402
from test_user_errors import NODE, params_file  # noqa: E402
from xacro_payloads import MODE_ARGUMENT, quote_breaking_value  # noqa: E402

from joint_tf_publisher.description.xacro_process import RUNNER_MODULE  # noqa: E402

pytestmark = [pytest.mark.ros, pytest.mark.slow]

NAMESPACE = "/files"
#: The issue's bound: SIGINT stops the node, also while a request waits, within this (s).
STOP_S = 2.0

ROBOT = """<robot name="filed">
  <link name="base"/>
  <link name="arm"/>
  <joint name="shoulder" type="revolute">
    <parent link="base"/>
    <child link="arm"/>
    <axis xyz="0 0 1"/>
    <limit lower="-1" upper="1" effort="1" velocity="1"/>
  </joint>
</robot>
"""
GRIPPER = '<robot name="gripper"><link name="palm"/></robot>\n'
#: Expands for far longer than the xacro time limit.
SLOW_XACRO = (
    '<robot name="${python.sum(python.range(10**12))}" '
    'xmlns:xacro="http://www.ros.org/wiki/xacro"/>\n'
)
#: The issue's payload (see test_files.py): expanding it runs ``touch {marker}``.
CODE_XACRO = """<robot name="x" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:property name="w" value="${{[c for c in python.vars(python.type)['__subclasses__'](python.type.mro(python.type)[-1]) if 'wrap_close' in python.repr(c)][0]}}"/>
  <xacro:property name="f" value="${{python.vars(w)['__init__']}}"/>
  <link name="${{python.vars(python.type(python.vars(python.type(f))['__globals__']))['__get__'](python.vars(python.type(f))['__globals__'], f)['system']('touch {marker}')}}"/>
</robot>
"""  # noqa: E501
#: The start folder's .xacro that uses its argument inside an expression.
MODE_XACRO = ROBOT.replace(
    '<robot name="filed">',
    '<robot name="filed" xmlns:xacro="http://www.ros.org/wiki/xacro">\n' + MODE_ARGUMENT,
)


@pytest.fixture(scope="module")
def folder(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("robot")
    (path / "robot.urdf").write_text(ROBOT)
    (path / "gripper.urdf").write_text(GRIPPER)
    return path


@pytest.fixture(scope="module")
def node(
    probe: Probe, tmp_path_factory: pytest.TempPathFactory, folder: Path
) -> Iterator[NodeUnderTest]:
    params = {
        "description_file": str(folder / "robot.urdf"),
        "attachments.names": ["gripper"],
        "attachments.gripper.file": str(folder / "gripper.urdf"),
        "attachments.gripper.parent": "arm",
    }
    node = started(probe, tmp_path_factory, NAMESPACE, params, handshake=("shoulder", "arm"))
    yield node
    node.stop()


def still_publishes(node: NodeUnderTest) -> None:
    """/tf still carries a joint state sent now."""
    node.publish_and_wait(["shoulder"], [0.25], fresh_stamp(), "arm")


def test_a_fifo_as_description_file_is_refused_at_once(node: NodeUnderTest, folder: Path) -> None:
    fifo = folder / "fifo.urdf"
    os.mkfifo(fifo)
    (result,) = node.set_parameters(description_file=str(fifo))
    assert not result.successful
    assert result.reason == f"{fifo}: cannot read file: not a regular file (a FIFO (named pipe))"
    still_publishes(node)


def test_a_fifo_as_attachment_file_is_refused_at_once(node: NodeUnderTest, folder: Path) -> None:
    fifo = folder / "fifo_gripper.urdf"
    os.mkfifo(fifo)
    (result,) = node.set_parameters(**{"attachments.gripper.file": str(fifo)})
    assert not result.successful
    assert result.reason == (
        f"attachments.gripper.file: cannot read {fifo}: not a regular file (a FIFO (named pipe))"
    )
    still_publishes(node)


def test_a_xacro_outside_the_allowed_folders_is_refused_and_never_runs(
    node: NodeUnderTest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    elsewhere = tmp_path_factory.mktemp("elsewhere")
    marker = elsewhere / "created"
    evil = elsewhere / "evil.urdf.xacro"
    evil.write_text(CODE_XACRO.format(marker=marker))
    (result,) = node.set_parameters(description_file=str(evil))
    assert not result.successful
    assert "is outside the folders allowed" in result.reason, result.reason
    assert "read-only parameter allowed_description_folders" in result.reason
    assert not marker.exists()
    still_publishes(node)


def test_another_file_of_the_start_folder_loads(node: NodeUnderTest, folder: Path) -> None:
    swapped = folder / "swapped.urdf.xacro"
    swapped.write_text(ROBOT.replace('name="filed"', 'name="swapped"'))
    (result,) = node.set_parameters(description_file=str(swapped))
    assert result.successful, result.reason
    still_publishes(node)


def test_description_args_from_the_graph_cannot_change_what_xacro_evaluates(
    node: NodeUnderTest, folder: Path, tmp_path: Path
) -> None:
    """#43.1: a runtime value that would close the quote is refused naming the parameter and
    never reaches xacro; a plain value loads."""
    moded = folder / "mode.urdf.xacro"
    moded.write_text(MODE_XACRO)
    marker = tmp_path / "created"
    (result,) = node.set_parameters(description_file=str(moded))
    assert result.successful, result.reason
    (result,) = node.set_parameters(description_args=[f"mode:={quote_breaking_value(marker)}"])
    assert not result.successful
    assert result.reason.startswith("description_args: the value of 'mode' given at runtime"), (
        result.reason
    )
    assert not marker.exists()
    still_publishes(node)
    (result,) = node.set_parameters(description_args=["mode:=sim"])
    assert result.successful, result.reason
    still_publishes(node)


def test_sigint_while_a_request_waits_for_xacro_stops_the_node(
    node: NodeUnderTest, folder: Path
) -> None:
    slow = folder / "slow.urdf.xacro"
    slow.write_text(SLOW_XACRO)
    client = node.probe.node.create_client(
        SetParameters, f"{NAMESPACE}/joint_tf_publisher/set_parameters"
    )
    assert client.wait_for_service(timeout_sec=10.0)
    request = SetParameters.Request()
    request.parameters = [ParameterMsg(name="description_file", value=parameter_value(str(slow)))]
    client.call_async(request)
    # The request is in flight once the node runs its xacro child (a process of its own).
    wait_until(
        lambda: any(RUNNER_MODULE in _command_line(pid) for pid in _children(node.process.pid)),
        what="the node's xacro child",
    )
    sent = time.monotonic()
    node.process.send_signal(signal.SIGINT)
    code = node.process.wait(timeout=10.0)
    stopped_after = time.monotonic() - sent
    assert code == 0, node.stderr()[-2000:]
    assert stopped_after < STOP_S
    assert not _children(node.process.pid)


def test_sigint_while_the_start_waits_for_xacro_ends_with_exit_0(tmp_path: Path) -> None:
    """A stop while the node's start expands a slow xacro: the child is killed, exit 0."""
    slow = tmp_path / "slow.urdf.xacro"
    slow.write_text(SLOW_XACRO)
    params = params_file(tmp_path / "params.yaml", description_file=str(slow))
    command = [*NODE, "--ros-args", "-r", "__ns:=/files_start", "--params-file", str(params)]
    with open(tmp_path / "stderr.txt", "w") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_until(
            lambda: any(RUNNER_MODULE in _command_line(pid) for pid in _children(process.pid)),
            what="the node's xacro child at start",
        )
        sent = time.monotonic()
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=10.0)
        stopped_after = time.monotonic() - sent
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    assert code == 0, (tmp_path / "stderr.txt").read_text()[-2000:]
    assert stopped_after < STOP_S
    assert not _children(process.pid)


def _children(pid: int) -> list[int]:
    """The processes whose parent is ``pid`` (from /proc)."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                fields = (entry / "stat").read_text().rsplit(")", 1)[1].split()
            except OSError:
                continue
            if int(fields[1]) == pid:
                found.append(int(entry.name))
    return found


def _command_line(pid: int) -> str:
    try:
        return (Path("/proc") / str(pid) / "cmdline").read_bytes().replace(b"\0", b" ").decode()
    except OSError:
        return ""


def test_a_xacro_including_a_file_whose_name_is_not_utf8_starts(tmp_path: Path) -> None:
    """xacro's ``<xacro:include filename="inc/*.xacro"/>`` took a file named with a byte that
    is not UTF-8 (``\\xff``): the node said "watching ..." with that name and rclpy's logger
    refused it (a TypeError, exit 1 at start). It starts, the name written ``\\xff``."""
    (tmp_path / "inc").mkdir()
    with open(os.fsencode(tmp_path / "inc") + b"/\xff.xacro", "w") as extra:
        extra.write(
            '<robot xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="extra"/>'
            '<joint name="j" type="fixed"><parent link="base"/><child link="extra"/></joint>'
            "</robot>"
        )
    top = tmp_path / "top.urdf.xacro"
    top.write_text(
        '<robot name="g" xmlns:xacro="http://www.ros.org/wiki/xacro"><link name="base"/>'
        '<xacro:include filename="inc/*.xacro"/></robot>'
    )
    params = params_file(tmp_path / "params.yaml", description_file=str(top))
    command = [*NODE, "--ros-args", "-r", "__ns:=/files_bytes", "--params-file", str(params)]
    with open(tmp_path / "stderr.txt", "w") as err:
        process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=err)
    try:
        wait_until(
            lambda: process.poll() is not None or "for saves" in _read(tmp_path / "stderr.txt"),
            what="the node to say what it watches",
        )
        assert process.poll() is None, _read(tmp_path / "stderr.txt")[-2000:]
        process.send_signal(signal.SIGINT)
        code = process.wait(timeout=10.0)
    finally:
        if process.poll() is None:
            process.kill()
            process.wait()
    said = _read(tmp_path / "stderr.txt")
    assert code == 0, said[-2000:]
    assert f"watching {top}, {tmp_path}/inc/\\xff.xacro for saves" in said


def _read(path: Path) -> str:
    return path.read_text(errors="replace") if path.exists() else ""
