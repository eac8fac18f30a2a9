"""description_source: which parameter gives the description, and the description file watch.

No rclpy: real files in a temporary folder, read by the package's loader (xacro for .xacro
files), loaded by the package's parser. That the node polls the watch twice a second and
republishes over DDS is test/ros/test_node_description_file.py.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import TypeVar

import pytest

from joint_tf_publisher import Robot
from joint_tf_publisher.description.loader import FileDescription
from joint_tf_publisher.errors import ModelError
from joint_tf_publisher.node_core.description_source import (
    DescriptionFileWatch,
    DescriptionSource,
    Refused,
    Reloaded,
    description_source,
    loads_again,
    refusal,
)
from joint_tf_publisher.node_core.parameter_changes import file_model, load_description
from joint_tf_publisher.node_core.parameters import ParameterRejected, Settings

T = TypeVar("T")

URDF = """<robot name="r">
  <link name="base"/>
  <link name="tool"/>
  <joint name="mount" type="fixed">
    <parent link="base"/>
    <child link="tool"/>
    <origin xyz="{x} 0 0"/>
  </joint>
</robot>
"""
#: Line 4 names a child link that does not exist.
BROKEN_URDF = URDF.replace('<child link="tool"/>', '<child link="nowhere"/>')

MAIN_XACRO = """<robot name="r" xmlns:xacro="http://www.ros.org/wiki/xacro">
  <xacro:arg name="tool" default="tool"/>
  <link name="base"/>
  <xacro:include filename="mount.xacro"/>
</robot>
"""
MOUNT_XACRO = """<robot xmlns:xacro="http://www.ros.org/wiki/xacro">
  <link name="$(arg tool)"/>
  <joint name="mount" type="fixed">
    <parent link="base"/>
    <child link="$(arg tool)"/>
    <origin xyz="{x} 0 0"/>
  </joint>
</robot>
"""


def save(path: Path, text: str) -> None:
    """Save ``text`` as an editor does: a new file renamed over the old one."""
    temporary = path.with_name(path.name + ".swp")
    temporary.write_text(text)
    os.replace(temporary, path)


def mount_x(read: FileDescription) -> tuple[str, float]:
    """The ``load`` the node passes: the description's tool link and its x offset."""
    robot = Robot.from_xml_string(read.text(), source=read.source)
    joint = robot.joints["mount"]
    return joint.child, float(joint.origin[0, 3])


def settled(
    watch: DescriptionFileWatch, load: Callable[[FileDescription], T]
) -> Reloaded[T] | Refused | None:
    """What the watch's polls give (as the node's timer polls it) until one gives something,
    or until three polls in a row give nothing with no xacro expansion under way: a save is
    read once it has settled (two polls), a xacro expansion collected by a later poll."""
    quiet = 0
    deadline = time.monotonic() + 20.0
    while time.monotonic() < deadline:
        outcome = watch.poll(load)
        if outcome is not None:
            return outcome
        quiet = 0 if watch.expanding else quiet + 1
        if quiet >= 3:
            return None
        time.sleep(0.01)
    raise AssertionError("the watch gave nothing within 20 s")


# -- which parameter gives the description --------------------------------------------------


@pytest.mark.parametrize(
    ("text", "path", "topic", "source"),
    [
        ("<robot/>", "", False, DescriptionSource.PARAMETER),
        ("", "robot.urdf", False, DescriptionSource.FILE),
        ("  ", "", True, DescriptionSource.TOPIC),
    ],
)
def test_one_parameter_gives_the_description(
    text: str, path: str, topic: bool, source: DescriptionSource
) -> None:
    assert description_source(text, path, topic) is source


@pytest.mark.parametrize(
    ("text", "path", "topic", "named"),
    [
        ("<robot/>", "robot.urdf", False, "robot_description and description_file"),
        ("<robot/>", "", True, "robot_description and description_from_topic"),
        ("", "robot.urdf", True, "description_file and description_from_topic"),
        (
            "<robot/>",
            "robot.urdf",
            True,
            "robot_description and description_file and description_from_topic",
        ),
    ],
)
def test_two_sources_are_refused_naming_them(text: str, path: str, topic: bool, named: str) -> None:
    with pytest.raises(ParameterRejected, match=f"^{named} both give the robot description"):
        description_source(text, path, topic)


def test_no_source_is_refused_naming_the_three() -> None:
    with pytest.raises(ParameterRejected) as refused:
        description_source(" ", "", False)
    assert str(refused.value) == (
        "parameter robot_description is empty: give the URDF or SDFormat text, a file in "
        "description_file, or set description_from_topic:=true"
    )


@pytest.mark.parametrize(
    ("old_source", "source", "new", "text_set", "loads"),
    [
        # the text parameter: a new text loads, another setting does not
        (DescriptionSource.PARAMETER, DescriptionSource.PARAMETER, {}, True, True),
        (DescriptionSource.PARAMETER, DescriptionSource.PARAMETER, {"clamp": "soft"}, False, False),
        # the file: a new path or new xacro arguments load it, the same ones do not
        (
            DescriptionSource.FILE,
            DescriptionSource.FILE,
            {"description_file": "b.urdf"},
            False,
            True,
        ),
        (
            DescriptionSource.FILE,
            DescriptionSource.FILE,
            {"description_args": ("tool:=gripper",)},
            False,
            True,
        ),
        (
            DescriptionSource.FILE,
            DescriptionSource.FILE,
            {"description_file": "a.urdf"},
            False,
            False,
        ),
        # a new model_name loads every source again, a switch of source loads the new one
        (DescriptionSource.FILE, DescriptionSource.FILE, {"model_name": "arm"}, False, True),
        (DescriptionSource.TOPIC, DescriptionSource.TOPIC, {"model_name": "arm"}, False, True),
        (DescriptionSource.TOPIC, DescriptionSource.TOPIC, {}, False, False),
        (DescriptionSource.PARAMETER, DescriptionSource.FILE, {}, True, True),
        (DescriptionSource.FILE, DescriptionSource.PARAMETER, {}, True, True),
    ],
)
def test_which_changes_load_the_description_again(
    old_source: DescriptionSource,
    source: DescriptionSource,
    new: dict[str, object],
    text_set: bool,
    loads: bool,
) -> None:
    old = Settings(description_file="a.urdf")
    assert loads_again(old_source, source, old, old.changed(new), text_set) is loads


def test_the_refusal_names_the_source_and_whether_a_model_stays() -> None:
    err = ModelError("child link 'nowhere' does not exist", source="r.urdf", line=4)
    assert refusal(DescriptionSource.FILE, err) == (
        "description_file not reloaded, the running model stays: r.urdf:4: child link "
        "'nowhere' does not exist"
    )
    assert refusal(DescriptionSource.TOPIC, err, running=False) == (
        "robot description from topic rejected: r.urdf:4: child link 'nowhere' does not exist"
    )


@pytest.mark.parametrize("args", [["tool"], ["=x"], [":=x"], [" :=x"]])
def test_description_args_are_name_value_pairs(args: list[str]) -> None:
    with pytest.raises(ParameterRejected, match=r"description_args: .* is not name:=value"):
        Settings.from_values({"description_args": args})
    settings = Settings.from_values({"description_args": ["tool:=gripper", "size:=a:=b"]})
    assert settings.description_args == ("tool:=gripper", "size:=a:=b")
    assert DescriptionFileWatch("r.xacro", settings.description_args).mappings == {
        "tool": "gripper",
        "size": "a:=b",
    }


# -- the watch ----------------------------------------------------------------------------------


def test_nothing_saved_loads_nothing(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    save(path, URDF.format(x=0.1))
    watch = DescriptionFileWatch(str(path))
    assert watch.load(mount_x) == ("tool", 0.1)

    def must_not_load(read: FileDescription) -> None:
        raise AssertionError("loaded without a save")

    assert settled(watch, must_not_load) is None
    os.utime(path)  # touched: read again, the same text, nothing loaded
    assert settled(watch, must_not_load) is None
    save(path, URDF.format(x=0.1))  # saved unchanged
    assert settled(watch, must_not_load) is None


def test_a_save_loads_the_new_text(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    save(path, URDF.format(x=0.1))
    watch = DescriptionFileWatch(str(path))
    watch.load(mount_x)
    save(path, URDF.format(x=0.25))
    assert settled(watch, mount_x) == Reloaded(("tool", 0.25))
    # written in place (no new inode): a new size or time is seen too
    path.write_text(URDF.format(x=0.5))
    assert settled(watch, mount_x) == Reloaded(("tool", 0.5))
    assert settled(watch, mount_x) is None


def test_a_broken_save_is_refused_with_file_and_line_once_and_a_good_one_loads(
    tmp_path: Path,
) -> None:
    path = tmp_path / "robot.urdf"
    save(path, URDF.format(x=0.1))
    watch = DescriptionFileWatch(str(path))
    watch.load(mount_x)
    save(path, BROKEN_URDF.format(x=0.1))
    refused = settled(watch, mount_x)
    assert refused == Refused(
        f"description_file not reloaded, the running model stays: {path}:4: joint 'mount': "
        "child link 'nowhere' does not exist"
    )
    assert settled(watch, mount_x) is None  # said once
    # The text loaded before, saved again: loaded again (the refusal is over).
    save(path, URDF.format(x=0.1))
    assert settled(watch, mount_x) == Reloaded(("tool", 0.1))


def test_malformed_xml_names_its_line(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    save(path, URDF.format(x=0.1))
    watch = DescriptionFileWatch(str(path))
    watch.load(mount_x)
    save(path, URDF.format(x=0.1).replace("</joint>", "</jont>"))
    refused = settled(watch, mount_x)
    assert isinstance(refused, Refused)
    assert refused.reason.startswith(
        f"description_file not reloaded, the running model stays: {path}:8: "
    )


def test_a_missing_file_is_refused_once_and_loads_when_it_is_back(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    save(path, URDF.format(x=0.1))
    watch = DescriptionFileWatch(str(path))
    watch.load(mount_x)
    path.unlink()
    assert settled(watch, mount_x) == Refused(
        "description_file not reloaded, the running model stays: "
        f"{path}: cannot read file: No such file or directory"
    )
    assert settled(watch, mount_x) is None
    save(path, URDF.format(x=0.3))
    assert settled(watch, mount_x) == Reloaded(("tool", 0.3))


def test_what_load_refuses_is_refused(tmp_path: Path) -> None:
    """The node's ``load`` also checks its zeros.<joint> against the new model."""
    path = tmp_path / "robot.urdf"
    save(path, URDF.format(x=0.1))
    watch = DescriptionFileWatch(str(path))

    def refuse(read: FileDescription) -> None:
        raise ParameterRejected("zeros.mount: joint 'mount' is fixed")

    save(path, URDF.format(x=0.2))
    watch.load(mount_x)
    save(path, URDF.format(x=0.3))
    assert settled(watch, refuse) == Refused(
        "description_file not reloaded, the running model stays: "
        "zeros.mount: joint 'mount' is fixed"
    )


def test_a_file_that_does_not_load_at_start_raises(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    save(path, BROKEN_URDF.format(x=0.1))
    with pytest.raises(Exception, match=rf"^{path}:4: joint 'mount'"):
        DescriptionFileWatch(str(path)).load(mount_x)


def test_home_folder_is_expanded() -> None:
    assert DescriptionFileWatch("~/robot.urdf").path == Path.home() / "robot.urdf"


# -- xacro: its arguments and the files it includes ---------------------------------------------


@pytest.fixture
def xacro_robot(tmp_path: Path) -> Path:
    pytest.importorskip("xacro")
    save(tmp_path / "mount.xacro", MOUNT_XACRO.format(x=0.1))
    save(tmp_path / "robot.urdf.xacro", MAIN_XACRO)
    return tmp_path / "robot.urdf.xacro"


def test_xacro_arguments_and_an_edited_include_reload(xacro_robot: Path) -> None:
    watch = DescriptionFileWatch(str(xacro_robot), ("tool:=gripper",))
    assert watch.load(mount_x) == ("gripper", 0.1)
    assert set(watch.files) == {xacro_robot, xacro_robot.parent / "mount.xacro"}
    save(xacro_robot.parent / "mount.xacro", MOUNT_XACRO.format(x=0.4))
    assert settled(watch, mount_x) == Reloaded(("gripper", 0.4))


def test_a_broken_include_names_the_include_and_its_line(xacro_robot: Path) -> None:
    mount = xacro_robot.parent / "mount.xacro"
    watch = DescriptionFileWatch(str(xacro_robot))
    watch.load(mount_x)
    save(mount, MOUNT_XACRO.format(x=0.1).replace("</joint>", "</jont>"))
    refused = settled(watch, mount_x)
    assert isinstance(refused, Refused)
    assert refused.reason.startswith(
        f"description_file not reloaded, the running model stays: {mount}:7: xacro failed: "
    )
    save(mount, MOUNT_XACRO.format(x=0.2))
    assert settled(watch, mount_x) == Reloaded(("tool", 0.2))


def test_an_include_added_by_a_save_is_watched_from_then_on(xacro_robot: Path) -> None:
    folder = xacro_robot.parent
    watch = DescriptionFileWatch(str(xacro_robot))
    watch.load(mount_x)
    save(folder / "mount2.xacro", MOUNT_XACRO.format(x=0.7))
    save(xacro_robot, MAIN_XACRO.replace("mount.xacro", "mount2.xacro"))
    assert settled(watch, mount_x) == Reloaded(("tool", 0.7))
    assert set(watch.files) == {xacro_robot, folder / "mount2.xacro"}
    save(folder / "mount2.xacro", MOUNT_XACRO.format(x=0.8))
    assert settled(watch, mount_x) == Reloaded(("tool", 0.8))


# -- the model the node makes of a read file (parameter_changes.file_model) ---------------------

SDF_TOP = """<sdf version="1.9"><model name="top">
  <link name="base"/>
  <include><uri>tool.sdf</uri><name>tool</name></include>
  <joint name="mount" type="fixed"><parent>base</parent><child>tool::tip</child></joint>
</model></sdf>
"""
SDF_TOOL = """<sdf version="1.9"><model name="tool">
  <link name="tip"><pose>{x} 0 0 0 0 0</pose></link>
</model></sdf>
"""


def test_an_sdformat_file_includes_from_its_own_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Relative ``<include>``s start from the file's folder, not the node's working one."""
    monkeypatch.chdir(tmp_path.parent)
    save(tmp_path / "tool.sdf", SDF_TOOL.format(x=0.2))
    save(tmp_path / "top.sdf", SDF_TOP)
    watch = DescriptionFileWatch(str(tmp_path / "top.sdf"))
    model, _ = watch.load(partial(file_model, load_description, Settings()))
    assert "tool::tip" in model.robot.links
    assert model.text == (tmp_path / "top.sdf").read_text()


def test_zeros_are_kept_for_joints_the_new_model_takes_and_checked(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    save(
        path,
        URDF.format(x=0.1)
        .replace('type="fixed"', 'type="revolute"')
        .replace("</joint>", '<limit lower="-1" upper="1" effort="1" velocity="1"/></joint>'),
    )
    settings = Settings(zeros=(("gone", (0.0,)), ("mount", (0.5,))))
    model, kept = DescriptionFileWatch(str(path)).load(
        partial(file_model, load_description, settings)
    )
    assert kept.zeros == (("mount", (0.5,)),)
    assert model.robot.name == "r"
    too_far = Settings(zeros=(("mount", (2.0,)),))
    with pytest.raises(ParameterRejected, match=r"zeros\.mount"):
        DescriptionFileWatch(str(path)).load(partial(file_model, load_description, too_far))


# -- a save read once settled, a failed read tried again, xacro never waited for ----------------


def test_a_save_still_being_written_is_not_read_until_it_settles(tmp_path: Path) -> None:
    path = tmp_path / "robot.urdf"
    save(path, URDF.format(x=0.1))
    watch = DescriptionFileWatch(str(path))
    watch.load(mount_x)
    text = URDF.format(x=0.6)
    with path.open("w") as stream:  # an editor or a copy writing in place, half way
        stream.write(text[: len(text) // 2])
        stream.flush()
        assert watch.poll(mount_x) is None  # seen, not read: no error for half a file
        stream.write(text[len(text) // 2 :])
        stream.flush()
        assert watch.poll(mount_x) is None  # changed again since: still not read
    assert settled(watch, mount_x) == Reloaded(("tool", 0.6))


def test_a_xacro_save_is_expanded_without_waiting_in_poll(xacro_robot: Path) -> None:
    watch = DescriptionFileWatch(str(xacro_robot))
    watch.load(mount_x)
    save(xacro_robot.parent / "mount.xacro", MOUNT_XACRO.format(x=0.9))
    assert watch.poll(mount_x) is None  # seen
    assert watch.poll(mount_x) is None  # settled: the expansion started, not waited for
    assert watch.expanding
    assert settled(watch, mount_x) == Reloaded(("tool", 0.9))
    assert not watch.expanding


#: Run as an unprivileged user (root reads any file): the watch refuses a save it may not
#: read, and loads it once a chmod makes it readable, without a new save. Prints outcomes.
CHMOD_SCENARIO = """
import os, sys, tempfile, time
from pathlib import Path
from joint_tf_publisher import Robot
from joint_tf_publisher.node_core.description_source import DescriptionFileWatch
URDF = sys.argv[1]
def load(read):
    return Robot.from_xml_string(read.text(), source=read.source).joints["mount"].origin[0, 3]
folder = Path(tempfile.mkdtemp())
path = folder / "robot.urdf"
path.write_text(URDF.format(x=0.1))
watch = DescriptionFileWatch(str(path))
watch.load(load)  # every module the watch needs is imported before privileges go
if os.getuid() == 0:
    os.chown(folder, 65534, 65534)
    os.chown(path, 65534, 65534)
    os.setgid(65534)
    os.setuid(65534)
path.write_text(URDF.format(x=0.2))
os.chmod(path, 0)
outcomes = []
for _ in range(4):
    outcomes.append(watch.poll(load))
os.chmod(path, 0o644)
for _ in range(4):
    outcomes.append(watch.poll(load))
print(repr([o for o in outcomes if o is not None]))
"""


def test_a_save_refused_for_its_permissions_loads_after_a_chmod() -> None:
    import subprocess
    import sys

    out = subprocess.run(
        [sys.executable, "-c", CHMOD_SCENARIO, URDF],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert out.returncode == 0, out.stderr
    said = out.stdout.strip()
    assert said.startswith("[Refused(reason='description_file not reloaded"), said
    assert "robot.urdf: cannot read file: Permission denied')" in said
    assert said.endswith("Reloaded(loaded=np.float64(0.2))]") or said.endswith(
        "Reloaded(loaded=0.2)]"
    ), said
    assert said.count("Refused") == 1  # said once while it stays unreadable
