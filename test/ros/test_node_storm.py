"""The node under a storm of malformed joint states, over real DDS.

The node's console script runs in a subprocess (as ``ros2 run`` would start it); the test
process publishes a few seconds of bad JointState and MultiDOFJointState messages (mismatched
lengths, NaN, inf, +-1e308, duplicate, mimic, fixed and unknown names, 10,000-name messages,
zero quaternions, zero and jumping stamps, values whose transforms overflow) with a good
message every tenth, and records /tf.
The storm runs once per module and executor the node can spin with; each test judges one
claim about it.

Held: the node stays up; every transform it publishes is finite with a unit quaternion; every
publication stamped like a good message carries exactly that message's transforms; after the
storm a good message is published correctly; its log has at most one line per second of each
kind.
"""

from __future__ import annotations

import json
import math
import os
import random
import re
import signal
import subprocess
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pytest

pytest.importorskip("rclpy", reason="needs rclpy (run in .venv: make test)")
pytest.importorskip("tf2_msgs.msg", reason="needs tf2_msgs (run in .venv: make test)")

from geometry_msgs.msg import Transform  # noqa: E402
from node_harness import EXECUTORS, executor_variable  # noqa: E402
from rclpy.qos import DurabilityPolicy, QoSProfile, ReliabilityPolicy  # noqa: E402
from repo_paths import TEST_DIR  # noqa: E402
from sensor_msgs.msg import JointState, MultiDOFJointState  # noqa: E402
from test_user_errors import NODE  # noqa: E402
from tf2_msgs.msg import TFMessage  # noqa: E402

from joint_tf_publisher import Robot  # noqa: E402
from joint_tf_publisher.kinematics import Kinematics  # noqa: E402
from joint_tf_publisher.ros import runtime  # noqa: E402
from joint_tf_publisher.stamps import ns_to_stamp, stamp_to_ns  # noqa: E402

pytestmark = [pytest.mark.ros]

URDF_PATH = TEST_DIR / "urdf" / "all_joint_types.urdf"
NAMESPACE = "/storm"
PREFIX = "storm/"
STORM_SECONDS = 2.0
WAIT_S = 30.0
TOLERANCE = 1e-9
#: Log format of the node's stderr, parsed below: severity, time (s), message.
LOG_FORMAT = "[{severity}] [{time}] [{name}]: {message}"
LOG_LINE = re.compile(r"^\[(?P<severity>\w+)\] \[(?P<time>[\d.]+)\] \[[^\]]*\]: (?P<text>.*)$")
#: The first good stamp (seconds); good message k is stamped GOOD_EPOCH + k, nanosec 0.
GOOD_EPOCH = 1000


@dataclass
class TfLog:
    """Every transform received on /tf: (stamp ns, child frame, translation, quaternion)."""

    entries: list[tuple[int, str, np.ndarray, np.ndarray]] = field(default_factory=list)
    prefix: str = PREFIX

    def __call__(self, msg: TFMessage) -> None:
        for item in msg.transforms:
            if not item.child_frame_id.startswith(self.prefix):
                continue
            stamp = stamp_to_ns(item.header.stamp.sec, item.header.stamp.nanosec)
            self.entries.append(
                (stamp, item.child_frame_id[len(self.prefix) :], *vectors_of(item.transform))
            )

    def by_stamp(self, stamp_ns: int) -> dict[str, tuple[np.ndarray, np.ndarray]]:
        """Child frame -> (translation, quaternion) of transforms stamped ``stamp_ns``."""
        return {child: (t, q) for stamp, child, t, q in self.entries if stamp == stamp_ns}


def vectors_of(transform: Transform) -> tuple[np.ndarray, np.ndarray]:
    t, r = transform.translation, transform.rotation
    return np.array([t.x, t.y, t.z]), np.array([r.x, r.y, r.z, r.w])


@dataclass
class GoodState:
    """A valid JointState for the robot and the transforms it must produce, by child link."""

    names: list[str]
    values: list[float]
    expected: dict[str, tuple[np.ndarray, np.ndarray]]


def good_state(kin: Kinematics, rng: random.Random) -> GoodState:
    """Random in-range values for every non-mimic variable; expected transforms from the core."""
    names = list(kin.variable_names)
    values: list[float] = []
    for name in names:
        joint = kin.robot.joints.get(name)
        limits = joint.hard_limits() if joint is not None else None
        if name.endswith(("/rot_x", "/rot_y", "/rot_z", "/rot_w")):
            values.append(rng.uniform(-1.0, 1.0))  # normalised by the node and by the core
        elif limits is not None:
            values.append(rng.uniform(*limits))
        else:
            values.append(rng.uniform(-2.0, 2.0))
    positions = kin.new_positions()
    kin.apply(positions, names, values, clamp="hard")
    translations, quaternions = kin.transforms.transforms(
        positions.values, np.arange(len(kin.moving_joints))
    )
    expected = {
        joint.child: (translations[i], quaternions[i]) for i, joint in enumerate(kin.moving_joints)
    }
    return GoodState(names, values, expected)


def bad_joint_states(kin: Kinematics, rng: random.Random) -> list[Callable[[], JointState]]:
    """Makers of malformed or hostile JointStates (stamps far from the good ones)."""
    known = list(kin.variable_names)
    fixed = [joint.name for joint in kin.fixed_joints]
    mimic = [joint.name for joint in kin.moving_joints if joint.mimic is not None]
    floating = next(j.name for j in kin.moving_joints if j.joint_type == "floating")
    ten_thousand = [f"unknown_{i}" for i in range(10_000)]
    extremes = [math.nan, math.inf, -math.inf, 1e308, -1e308, 5e-324]

    def stamped(names: list[str], values: list[float]) -> JointState:
        msg = JointState(name=names, position=values)
        choice = rng.random()
        if choice < 0.3:
            msg.header.stamp.sec = 0  # zero stamp: the node uses its clock
        elif choice < 0.6:
            msg.header.stamp.sec = rng.randint(1, 100)  # far in the past
        else:
            msg.header.stamp.sec = rng.randint(10**6, 2 * 10**6)  # far in the future
        msg.header.stamp.nanosec = rng.randint(1, 999_999_999)
        return msg

    def some_known(count: int) -> list[str]:
        return [rng.choice(known) for _ in range(count)]

    return [
        lambda: stamped(some_known(5), [0.1] * rng.choice([0, 2, 4, 6, 9])),
        lambda: stamped(known, [rng.choice(extremes) for _ in known]),
        lambda: stamped(some_known(8), [rng.choice(extremes + [0.2]) for _ in range(8)]),
        lambda: stamped(some_known(3) * 3, [rng.uniform(-1e3, 1e3) for _ in range(9)]),
        lambda: stamped(mimic + fixed, [7.0] * (len(mimic) + len(fixed))),
        lambda: stamped([f"{floating}/rot_{a}" for a in "xyzw"], [0.0] * 4),
        lambda: stamped([f"noise_{rng.getrandbits(48):x}" for _ in range(3)], [0.0] * 3),
        lambda: stamped(ten_thousand + known[:1], [0.0] * 10_001),
        lambda: stamped(["", "\u00e9\u6f22\U0001f916", "a" * 1000], [1.0, 2.0, 3.0]),
        lambda: stamped([], []),
    ]


def bad_multi_dof(kin: Kinematics, rng: random.Random) -> MultiDOFJointState:
    """A MultiDOFJointState with mismatched lengths or non-finite transforms."""
    floating = next(j.name for j in kin.moving_joints if j.joint_type == "floating")
    msg = MultiDOFJointState()
    msg.joint_names = [floating, "not_a_joint"]
    count = rng.choice([0, 1, 2, 3])
    for _ in range(count):
        transform = Transform()
        transform.translation.x = rng.choice([math.nan, math.inf, 1e308, 0.5])
        transform.rotation.w = rng.choice([0.0, math.nan, 1.0])
        msg.transforms.append(transform)
    msg.header.stamp.sec = rng.randint(1, 100)
    return msg


@dataclass
class StormResult:
    """What one storm run left behind, for the tests below to judge."""

    tf_log: TfLog
    good_sent: dict[int, GoodState]
    final_stamp_ns: int
    final_published: bool
    alive_after: bool
    exit_status: int | None
    log_text: str
    sent: int


def start_node(
    directory: Path, namespace: str = NAMESPACE, **params: object
) -> tuple[subprocess.Popen[bytes], Path]:
    """The node in ``namespace`` with ``params`` (default: the storm robot, prefix storm/)."""
    if not params:
        params = {"robot_description": URDF_PATH.read_text(), "frame_prefix": PREFIX}
    params_path = directory / "params.yaml"
    lines = ["/**:", "  ros__parameters:"]
    lines += [f"    {name}: {json.dumps(value)}" for name, value in params.items()]
    params_path.write_text("\n".join(lines) + "\n")
    log_path = directory / "node.log"
    env = dict(os.environ, PYTHONUNBUFFERED="1", RCUTILS_CONSOLE_OUTPUT_FORMAT=LOG_FORMAT)
    command = NODE + ["--ros-args", "-r", f"__ns:={namespace}"]
    command += ["--params-file", str(params_path)]
    with log_path.open("w") as log:
        process = subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT, env=env)
    return process, log_path


def stop_node(process: subprocess.Popen[bytes]) -> int | None:
    """SIGINT the node and wait (kill after WAIT_S); its exit status."""
    if process.poll() is None:
        process.send_signal(signal.SIGINT)
        try:
            process.wait(timeout=WAIT_S)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
    return process.returncode


@pytest.fixture(scope="module", params=EXECUTORS)
def storm(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[StormResult]:
    """Run the storm once for the module and executor: node up, storm, final good state,
    node stopped."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor

    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("storm_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    with executor_variable(request.param):
        process, log_path = start_node(tmp_path_factory.mktemp("storm"))
    try:
        result = run_storm(node, executor, process, log_path)
        assert f"spinning with {runtime.SPINNING_WITH[request.param]}" in result.log_text
        yield result
    finally:
        stop_node(process)
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)


def spin_until(executor: Any, predicate: Callable[[], bool], timeout_s: float) -> bool:
    """Spin ``executor`` until ``predicate()`` holds; False after ``timeout_s``."""
    deadline = time.monotonic() + timeout_s
    while not predicate():
        if time.monotonic() > deadline:
            return False
        executor.spin_once(timeout_sec=0.02)
    return True


def spin_for(executor: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while (remaining := deadline - time.monotonic()) > 0:
        executor.spin_once(timeout_sec=min(0.01, remaining))


def run_storm(
    node: Any, executor: Any, process: subprocess.Popen[bytes], log_path: Path
) -> StormResult:
    kin = Robot.load(URDF_PATH).kinematics
    rng = random.Random(7)
    tf_log = TfLog()
    tf_qos = QoSProfile(
        depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
    )
    node.create_subscription(TFMessage, "/tf", tf_log, tf_qos)
    joint_states = node.create_publisher(JointState, f"{NAMESPACE}/joint_states", 10)
    multi_dof = node.create_publisher(MultiDOFJointState, f"{NAMESPACE}/multi_dof_joint_states", 10)
    connected = spin_until(
        executor,
        lambda: (
            process.poll() is None
            and joint_states.get_subscription_count() > 0
            and multi_dof.get_subscription_count() > 0
            and node.count_publishers("/tf") > 0
        ),
        WAIT_S,
    )
    assert connected, log_path.read_text()[-3000:]

    # Prelude, the same in every run: fresh unknown names in quick succession (a log line each,
    # unless throttled), then the 10,000-name message a few times (one of them must arrive).
    for index in range(20):
        joint_states.publish(
            JointState(name=[f"prelude_{index}_{k}" for k in range(3)], position=[0.0] * 3)
        )
        spin_for(executor, 0.02)
    for _ in range(3):
        joint_states.publish(
            JointState(name=[f"unknown_{i}" for i in range(10_000)], position=[0.0] * 10_000)
        )
        spin_for(executor, 0.05)

    # Then every variable at +-1.7e308: finite values whose transforms would overflow (the
    # planar joint's), which must never reach /tf.
    for value in (1.7e308, -1.7e308, 1.7e308):
        huge = JointState(name=list(kin.variable_names), position=[value] * len(kin.variable_names))
        huge.header.stamp.sec = 50
        joint_states.publish(huge)
        spin_for(executor, 0.05)

    bad_makers = bad_joint_states(kin, rng)
    good_sent: dict[int, GoodState] = {}
    sent = 0
    start = time.monotonic()
    while time.monotonic() - start < STORM_SECONDS:
        if sent % 10 == 0:
            state = good_state(kin, rng)
            stamp_ns = stamp_to_ns(GOOD_EPOCH + len(good_sent), 0)
            msg = JointState(name=state.names, position=state.values)
            msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(stamp_ns)
            good_sent[stamp_ns] = state
            joint_states.publish(msg)
        elif sent % 10 == 5:
            multi_dof.publish(bad_multi_dof(kin, rng))
        else:
            joint_states.publish(rng.choice(bad_makers)())
        sent += 1
        executor.spin_once(timeout_sec=0.0)
        if sent % 50 == 0:
            spin_for(executor, 0.02)  # let /tf arrive and the node breathe

    # After the storm: one more good state, sent (with a new stamp) until it shows on /tf.
    final = good_state(kin, rng)
    final_stamp_ns = 0

    def final_published() -> bool:
        nonlocal final_stamp_ns
        if final_stamp_ns and len(tf_log.by_stamp(final_stamp_ns)) == len(final.expected):
            return True
        final_stamp_ns = stamp_to_ns(GOOD_EPOCH + 100_000 + len(good_sent), 0)
        good_sent[final_stamp_ns] = final
        msg = JointState(name=final.names, position=final.values)
        msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(final_stamp_ns)
        joint_states.publish(msg)
        spin_for(executor, 0.2)
        return len(tf_log.by_stamp(final_stamp_ns)) == len(final.expected)

    published = spin_until(executor, final_published, WAIT_S)
    alive = process.poll() is None
    exit_status = stop_node(process)
    return StormResult(
        tf_log=tf_log,
        good_sent=good_sent,
        final_stamp_ns=final_stamp_ns,
        final_published=published,
        alive_after=alive,
        exit_status=exit_status,
        log_text=log_path.read_text(),
        sent=sent,
    )


def assert_same_transform(
    got: tuple[np.ndarray, np.ndarray], want: tuple[np.ndarray, np.ndarray], what: str
) -> None:
    np.testing.assert_allclose(got[0], want[0], atol=TOLERANCE, err_msg=what)
    sign = 1.0 if float(got[1] @ want[1]) >= 0.0 else -1.0
    np.testing.assert_allclose(got[1], sign * want[1], atol=TOLERANCE, err_msg=what)


def log_lines_by_kind(text: str) -> dict[str, list[float]]:
    """Times (s) of the node's log lines, grouped by kind: the message up to its first colon."""
    kinds: dict[str, list[float]] = {}
    for line in text.splitlines():
        match = LOG_LINE.match(line)
        if match is None:
            continue
        kind = re.sub(r"\d+", "#", match["text"].split(":")[0])[:80]
        kinds.setdefault(f"{match['severity']} {kind}", []).append(float(match["time"]))
    return kinds


def test_node_survives_and_publishes_a_good_state_after_the_storm(storm: StormResult) -> None:
    assert storm.alive_after, storm.log_text[-3000:]
    assert storm.exit_status == 0, storm.log_text[-3000:]
    assert storm.final_published, "the good message after the storm was never published"
    final = storm.good_sent[storm.final_stamp_ns]
    got = storm.tf_log.by_stamp(storm.final_stamp_ns)
    assert set(got) == set(final.expected)
    for child, transform in got.items():
        assert_same_transform(transform, final.expected[child], child)


def test_every_published_transform_is_finite_and_unit(storm: StormResult) -> None:
    assert storm.tf_log.entries, "nothing published on /tf"
    for stamp, child, translation, quaternion in storm.tf_log.entries:
        assert np.all(np.isfinite(translation)), (stamp, child, translation)
        assert abs(np.linalg.norm(quaternion) - 1.0) < 1e-6, (stamp, child, quaternion)


def test_good_states_during_the_storm_are_published_exactly(storm: StormResult) -> None:
    """Every publication stamped like a good message carries exactly its transforms."""
    published = 0
    for stamp_ns, state in storm.good_sent.items():
        got = storm.tf_log.by_stamp(stamp_ns)
        for child, transform in got.items():
            assert_same_transform(transform, state.expected[child], f"{child} at {stamp_ns}")
        published += bool(got)
    assert published >= 2, f"only {published} of {len(storm.good_sent)} good states published"
    print(
        f"storm: {storm.sent} messages in {STORM_SECONDS:g} s, {len(storm.good_sent)} good, "
        f"{published} good published, {len(storm.tf_log.entries)} transforms received"
    )


def test_log_is_throttled_per_kind(storm: StormResult) -> None:
    """At most one line per second of each kind (kind: the message up to its first colon)."""
    kinds = log_lines_by_kind(storm.log_text)
    assert any(kind.startswith("WARN") for kind in kinds), storm.log_text[-3000:]
    for kind, times in kinds.items():
        gaps = np.diff(sorted(times))
        assert np.all(gaps >= 0.99), f"{kind!r}: {len(times)} lines, gaps {gaps.round(3)}"


def test_log_has_only_short_clear_node_lines(storm: StormResult) -> None:
    """No traceback, no bare Python warnings, no line longer than a terminal page."""
    assert "Traceback" not in storm.log_text, storm.log_text[-3000:]
    stray = [line for line in storm.log_text.splitlines() if not LOG_LINE.match(line)]
    stray = [line for line in stray if line.strip() and not line.startswith("robot_description:")]
    assert stray == [], stray[:10]
    longest = max(len(line) for line in storm.log_text.splitlines())
    assert longest < 2000, f"a log line of {longest} characters"


# -- hostile descriptions at run time -------------------------------------------------------

HOSTILE_DESCRIPTIONS = [
    '<robot name="r"><link name="a">',
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x SYSTEM "file:///etc/hostname">]>'
    '<robot name="&x;"><link name="a"/></robot>',
    '<?xml version="1.0"?><!DOCTYPE r [<!ENTITY a "aaaaaaaaaa">'
    + "".join(f'<!ENTITY {chr(98 + i)} "{("&" + chr(97 + i) + ";") * 10}">' for i in range(8))
    + ']><robot name="&i;"><link name="a"/></robot>',
    '<robot name="r"><link name="a"/>' + "<x>" * 1000 + "</x>" * 1000 + "</robot>",
    "",
    "<html/>",
    '<robot name="r"><link name="a"/><link name="b"/></robot>',
    '<sdf version="9.9"><model name="m"><link name="a"/></model></sdf>',
]


def reached(counter: Callable[[], int], target: int) -> bool:
    """True once ``counter()`` reaches ``target``."""
    return counter() >= target


@pytest.mark.parametrize("spinning_with", EXECUTORS)
def test_hostile_descriptions_at_run_time_are_rejected(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spinning_with: str
) -> None:
    """In topic mode, each bad description is refused with one log line; the old model stays."""
    import rclpy
    from rclpy.executors import SingleThreadedExecutor
    from std_msgs.msg import String

    namespace, prefix = "/hostile", "hostile/"
    kin = Robot.load(URDF_PATH).kinematics
    context = rclpy.Context()
    rclpy.init(context=context)
    node = rclpy.create_node("hostile_probe", context=context)
    executor = SingleThreadedExecutor(context=context)
    executor.add_node(node)
    monkeypatch.setenv(runtime.EXECUTOR_VARIABLE, spinning_with)
    process, log_path = start_node(
        tmp_path, namespace, use_robot_description_topic=True, frame_prefix=prefix
    )
    try:
        latched = QoSProfile(
            depth=1,
            reliability=ReliabilityPolicy.RELIABLE,
            durability=DurabilityPolicy.TRANSIENT_LOCAL,
        )
        descriptions = node.create_publisher(String, f"{namespace}/robot_description", latched)
        joint_states = node.create_publisher(JointState, f"{namespace}/joint_states", 10)
        tf_log = TfLog(prefix=prefix)
        tf_qos = QoSProfile(
            depth=1000, reliability=ReliabilityPolicy.RELIABLE, durability=DurabilityPolicy.VOLATILE
        )
        node.create_subscription(TFMessage, "/tf", tf_log, tf_qos)
        assert spin_until(
            executor,
            lambda: (
                descriptions.get_subscription_count() > 0
                and joint_states.get_subscription_count() > 0
            ),
            WAIT_S,
        ), log_path.read_text()
        descriptions.publish(String(data=URDF_PATH.read_text()))
        assert spin_until(
            executor, lambda: "robot 'all_joint_types'" in log_path.read_text(), WAIT_S
        )

        def rejected_count() -> int:
            return log_path.read_text().count("robot description from topic rejected")

        for done, text in enumerate(HOSTILE_DESCRIPTIONS, start=1):
            descriptions.publish(String(data=text))
            assert spin_until(executor, partial(reached, rejected_count, done), WAIT_S), text[:80]

        state = good_state(kin, random.Random(3))
        stamp_ns = stamp_to_ns(4242, 0)

        def published() -> bool:
            msg = JointState(name=state.names, position=state.values)
            msg.header.stamp.sec, msg.header.stamp.nanosec = ns_to_stamp(stamp_ns)
            joint_states.publish(msg)
            spin_for(executor, 0.1)
            return len(tf_log.by_stamp(stamp_ns)) == len(state.expected)

        assert spin_until(executor, published, WAIT_S), log_path.read_text()[-3000:]
        for child, transform in tf_log.by_stamp(stamp_ns).items():
            assert_same_transform(transform, state.expected[child], child)
        assert process.poll() is None, log_path.read_text()[-3000:]
    finally:
        exit_status = stop_node(process)
        executor.shutdown()
        node.destroy_node()
        rclpy.try_shutdown(context=context)
    log_text = log_path.read_text()
    assert exit_status == 0, log_text[-3000:]
    assert "Traceback" not in log_text, log_text[-3000:]
    rejections = [line for line in log_text.splitlines() if "rejected" in line]
    assert len(rejections) == len(HOSTILE_DESCRIPTIONS), log_text[-3000:]
    for line in rejections:
        assert LOG_LINE.match(line) and "robot_description" in line, line
