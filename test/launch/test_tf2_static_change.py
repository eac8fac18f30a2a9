"""A description change as real tf2 Buffers see it: a moved fixed joint reaches a Buffer that
was running before the change and a new one; a removed frame stays in the running Buffer (tf2
has no way to forget a static frame: listeners keep it until they restart, as docs/node.md
says) and is absent from the new one.

The node (its console script) runs with a frame prefix; ``tf2_watch.py`` is a tf2 consumer in a
process of its own (``tf2_ros.Buffer`` + ``TransformListener``, as RViz), asked one lookup at
a time. tf2_ros_py's own ``StaticTransformBroadcaster`` skips a child frame it has sent
before (geometry2#704): with it the running Buffer would keep the old origin. The node's log
and health report naming the removed frame are checked in test/ros/test_node_statics.py.

Needs tf2_ros (a sourced distro, or the kit that ``make test`` builds).
"""

from __future__ import annotations

import json
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

REASON = "needs ROS 2's launch tools and tf2_ros: a sourced distro or the kit (make test)"
pytest.importorskip("launch_testing", reason=REASON)
pytest.importorskip("tf2_ros", reason=REASON)

from launch_harness import START_S, kit_python  # noqa: E402
from node_harness import NodeUnderTest, Probe, started  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402

pytestmark = pytest.mark.ros

ARM_URDF = TEST_DIR / "urdf" / "arm_mimic_gripper.urdf"
WATCH = Path(__file__).resolve().parent / "tf2_watch.py"
PREFIX = "change/"
EE, CAMERA, OPTICAL = (PREFIX + name for name in ("ee_link", "camera_link", "camera_optical_frame"))
OLD_ORIGIN = (0.06, 0.0, -0.02)
NEW_ORIGIN = (0.16, 0.0, -0.02)


def changed_arm(text: str) -> str:
    """The arm with its camera moved 0.1 m along x and its optical frame removed."""
    moved = text.replace(
        '<origin xyz="0.06 0 -0.02" rpy="0 -1.5708 0"/>',
        '<origin xyz="0.16 0 -0.02" rpy="0 -1.5708 0"/>',
    )
    start = moved.index('<joint name="camera_optical_joint"')
    end = moved.index("</joint>", start) + len("</joint>")
    return (moved[:start] + moved[end:]).replace('<link name="camera_optical_frame"/>', "")


class Watcher:
    """A running tf2 Buffer in its own process (``tf2_watch.py``)."""

    def __init__(self) -> None:
        self.process = subprocess.Popen(
            [kit_python(), str(WATCH)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        assert self._line() == "ready", self.process.stderr

    def _line(self) -> str:
        assert self.process.stdout is not None
        line = self.process.stdout.readline().strip()
        if not line:
            pytest.fail(f"tf2_watch.py ended: {self.close()}")
        return line

    def lookup(self, target: str, source: str, timeout_s: float) -> Any:
        """The pose of ``source`` in ``target`` ([x, y, z, qx, qy, qz, qw]) or
        ``{"error": ...}``."""
        assert self.process.stdin is not None
        self.process.stdin.write(f"{target} {source} {timeout_s}\n")
        self.process.stdin.flush()
        return json.loads(self._line())

    def close(self) -> str:
        """End the process (end of its input); its standard error."""
        try:
            _, stderr = self.process.communicate(timeout=30.0)
        except subprocess.TimeoutExpired:
            self.process.kill()
            _, stderr = self.process.communicate()
        return str(stderr)


@pytest.fixture
def watcher() -> Iterator[Any]:
    """Watchers made with ``watcher()``, all closed after the test."""
    made: list[Watcher] = []

    def make() -> Watcher:
        made.append(Watcher())
        return made[-1]

    yield make
    for one in made:
        one.close()


@pytest.fixture(scope="module")
def node(probe: Probe, tmp_path_factory: pytest.TempPathFactory) -> Iterator[NodeUnderTest]:
    under_test = started(
        probe,
        tmp_path_factory,
        "/change",
        {"robot_description": ARM_URDF.read_text(), "frame_prefix": PREFIX},
        handshake=None,
    )
    yield under_test
    assert under_test.stop() == 0, under_test.stderr()


def origin(pose: Any) -> tuple[float, float, float]:
    assert isinstance(pose, list), pose
    return (pose[0], pose[1], pose[2])


def test_a_moved_fixed_joint_reaches_a_running_and_a_new_tf2_buffer(
    node: NodeUnderTest, watcher: Any
) -> None:
    running = watcher()
    assert origin(running.lookup(EE, CAMERA, START_S)) == pytest.approx(OLD_ORIGIN, abs=1e-9)
    assert isinstance(running.lookup(EE, OPTICAL, START_S), list)

    changed = changed_arm(ARM_URDF.read_text())
    assert [r.successful for r in node.set_parameters(robot_description=changed)] == [True]
    deadline = time.monotonic() + START_S
    while origin(running.lookup(EE, CAMERA, 1.0)) != pytest.approx(NEW_ORIGIN, abs=1e-9):
        assert time.monotonic() < deadline, "the running tf2 Buffer kept the old origin"
        time.sleep(0.2)

    fresh = watcher()
    assert origin(fresh.lookup(EE, CAMERA, START_S)) == pytest.approx(NEW_ORIGIN, abs=1e-9)
    # The removed frame: gone for a new listener, kept by the running one until it restarts.
    assert "error" in fresh.lookup(EE, OPTICAL, 3.0)
    assert isinstance(running.lookup(EE, OPTICAL, 1.0), list)
