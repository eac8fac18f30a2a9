"""remote_output: chosen frames composed relative to their nearest chosen ancestor, capped.

Driven without rclpy or DDS: joint states go into the pipeline as the node's callback hands
them on, the remote output's timer is ``tick`` with a settable steady time, and every composed
pose is checked against the package's FK of the same values (``Robot.link_fk``: T_parent_child
= inv(T_root_parent) @ T_root_child), which knows nothing of the frame chains.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace
from typing import Any

import numpy as np
import pytest
from repo_paths import TEST_DIR
from scipy.spatial.transform import Rotation
from test_parameter_changes import Loader, arm_model
from test_pipeline import ALL_TYPES_URDF, ARM_URDF, MS, T0, Rig

from joint_tf_publisher import Robot
from joint_tf_publisher.health.model import GraphFacts, Key, Level
from joint_tf_publisher.node_core.cdr import Publication
from joint_tf_publisher.node_core.parameter_changes import plan_change
from joint_tf_publisher.node_core.parameters import MAX_ARRAY_ITEMS, ParameterRejected, Settings
from joint_tf_publisher.node_core.pipeline import LoadedModel
from joint_tf_publisher.node_core.remote_output import (
    MAX_NAMED_FRAMES,
    RateCap,
    RemoteOutput,
    static_topic,
)

#: Chosen links of the arm: a static chain from the root (pedestal), chains through moving
#: joints (link_3 under pedestal, ee_link under link_3), a static chain under a chosen link
#: (camera_optical_frame under ee_link) and a chain through a mimic of a mimic
#: (right_inner_finger under ee_link).
ARM_FRAMES = ("pedestal", "link_3", "ee_link", "camera_optical_frame", "right_inner_finger")
ARM_JOINTS = [f"joint_{i}" for i in range(1, 8)] + ["finger_joint"]
SECOND = 1_000_000_000


class RemoteRig(Rig):
    """A pipeline with a model and a remote output, and the warnings it logs."""

    def __init__(self, path: Any = ARM_URDF, **settings: Any) -> None:
        settings.setdefault("remote_frames", ARM_FRAMES)
        super().__init__(path, **settings)
        self.remote = RemoteOutput(self.pipeline)
        self.change = self.remote.configure()
        self.steady_ns = 0

    def tick(self, after_ns: int = SECOND) -> Publication | None:
        self.steady_ns += after_ns
        return self.remote.tick(self.steady_ns)

    def reconfigure(self, **changes: Any) -> None:
        self.pipeline.configure(replace(self.pipeline.settings, **changes))
        self.change = self.remote.configure()


def frames_of(publication: Publication | None) -> dict[str, tuple[str, np.ndarray]]:
    """child -> (parent, pose (4, 4)) of a publication."""
    assert publication is not None
    result = {}
    for (parent, child), row in zip(publication.layout.frames, publication.poses, strict=True):
        pose = np.eye(4)
        pose[:3, :3] = Rotation.from_quat(row[3:]).as_matrix()
        pose[:3, 3] = row[:3]
        result[child] = (parent, pose)
    return result


def expected(
    robot: Robot, cfg: dict[str, Any], pairs: dict[str, str], clamp: str | None = "hard"
) -> dict[str, np.ndarray]:
    """child -> T_parent_child from the package's FK of ``cfg`` (inverse composition)."""
    fk = robot.link_fk(cfg, clamp=clamp)
    return {child: np.linalg.inv(fk[parent]) @ fk[child] for child, parent in pairs.items()}


def assert_frames(
    got: dict[str, tuple[str, np.ndarray]], want: dict[str, np.ndarray], prefix: str = ""
) -> None:
    assert set(got) == {prefix + child for child in want}
    for child, pose in want.items():
        np.testing.assert_allclose(got[prefix + child][1], pose, atol=1e-9, err_msg=child)


def send_arm(rig: Rig, values: Sequence[float], stamp_ns: int = T0) -> None:
    assert rig.send(ARM_JOINTS, values, stamp_ns) is not None


ARM_VALUES = [0.3, -0.7, 2.5, -1.2, 0.4, 1.1, -2.0, 0.5]


def test_chosen_frames_are_composed_from_their_nearest_chosen_ancestor() -> None:
    rig = RemoteRig()
    send_arm(rig, ARM_VALUES, T0 + 5 * MS)
    publication = rig.tick()
    assert publication is not None and publication.stamp_ns == T0 + 5 * MS
    got = frames_of(publication)
    assert {child: parent for child, (parent, _) in got.items()} == {
        "link_3": "pedestal",
        "ee_link": "link_3",
        "right_inner_finger": "ee_link",
    }
    cfg = dict(zip(ARM_JOINTS, ARM_VALUES, strict=True))
    pairs = {"link_3": "pedestal", "ee_link": "link_3", "right_inner_finger": "ee_link"}
    assert_frames(got, expected(rig.robot, cfg, pairs))
    # Only fixed joints between: the static set (pedestal under the root, the camera frame
    # under ee_link), never on the capped topic.
    statics = frames_of(rig.remote.static_publication(T0))
    assert {child: parent for child, (parent, _) in statics.items()} == {
        "pedestal": "world",
        "camera_optical_frame": "ee_link",
    }
    static_pairs = {"pedestal": "world", "camera_optical_frame": "ee_link"}
    assert_frames(statics, expected(rig.robot, cfg, static_pairs))


def test_values_are_clamped_and_mimic_followers_follow_as_on_tf() -> None:
    rig = RemoteRig()
    beyond = [0.3, -0.7, 2.5, -1.2, 0.4, 1.1, -2.0, 3.0]  # finger_joint beyond its 0.8 limit
    send_arm(rig, beyond)
    cfg = dict(zip(ARM_JOINTS, beyond, strict=True))
    pairs = {"link_3": "pedestal", "ee_link": "link_3", "right_inner_finger": "ee_link"}
    want = expected(rig.robot, cfg, pairs, clamp="hard")
    assert_frames(frames_of(rig.tick()), want)
    unclamped = expected(rig.robot, cfg, pairs, clamp=None)["right_inner_finger"]
    assert not np.allclose(unclamped, want["right_inner_finger"])


def test_the_root_chosen_or_not_gives_the_same_frames() -> None:
    with_root = RemoteRig(remote_frames=("world", *ARM_FRAMES))
    without = RemoteRig()
    for rig in (with_root, without):
        send_arm(rig, ARM_VALUES)
    assert frames_of(with_root.tick()).keys() == frames_of(without.tick()).keys()
    assert "world" not in frames_of(with_root.remote.static_publication(T0))


def test_frame_prefix_applies_to_parents_and_children() -> None:
    rig = RemoteRig(frame_prefix="r1/")
    send_arm(rig, ARM_VALUES)
    got = frames_of(rig.tick())
    cfg = dict(zip(ARM_JOINTS, ARM_VALUES, strict=True))
    pairs = {"link_3": "pedestal", "ee_link": "link_3", "right_inner_finger": "ee_link"}
    assert_frames(got, expected(rig.robot, cfg, pairs), prefix="r1/")
    assert got["r1/ee_link"][0] == "r1/link_3"
    assert frames_of(rig.remote.static_publication(T0))["r1/pedestal"][0] == "r1/world"


def test_every_joint_type_composes_as_fk_gives_it() -> None:
    robot = Robot.load(ALL_TYPES_URDF)
    leaves = [link for link in robot.links if link not in {j.parent for j in robot.joints.values()}]
    rig = RemoteRig(ALL_TYPES_URDF, remote_frames=tuple(leaves), ignore_timestamp=True)
    generator = np.random.default_rng(7)
    kin = robot.kinematics
    names = tuple(kin.variable_names)
    for step in range(5):
        values = generator.uniform(-1.0, 1.0, len(names))
        rig.send(names, values, T0 + step * MS)
        publication = rig.tick()
        cfg = kin.variable_values(rig.pipeline.model.positions)  # type: ignore[union-attr]
        fk = robot.link_fk({name: cfg[name] for name in names}, clamp="hard")
        got = frames_of(publication)
        assert got, "every leaf hangs below a moving joint"
        for child, (parent, pose) in got.items():
            np.testing.assert_allclose(pose, np.linalg.inv(fk[parent]) @ fk[child], atol=1e-9)


def test_a_burst_is_capped_at_the_rate_with_the_latest_values() -> None:
    rig = RemoteRig(remote_rate=10.0, ignore_timestamp=True)
    sent: list[Publication] = []
    sent_at: list[int] = []
    # Two seconds of joint states at 1 kHz, the timer's tick after each (worst case: a tick
    # per message), steady time in step with them.
    for k in range(2000):
        values = [0.001 * k] * 7 + [0.0]
        send_arm(rig, values, T0 + k * MS)
        publication = rig.tick(after_ns=MS)
        if publication is not None:
            sent.append(publication)
            sent_at.append(rig.steady_ns)
            cfg = dict(zip(ARM_JOINTS, values, strict=True))
            got = frames_of(publication)
            np.testing.assert_allclose(
                got["ee_link"][1],
                expected(rig.robot, cfg, {"ee_link": "link_3"})["ee_link"],
                atol=1e-9,
            )
            assert publication.stamp_ns == T0 + k * MS  # the latest, not a queued one
    # One message per 100 ms cell; the grid puts the first message mid-cell.
    assert np.diff(sent_at).tolist() == [50 * MS] + [100 * MS] * 19
    assert rig.remote.facts.sent == len(sent) == 21  # 2 s at 10 Hz, the first mid-cell


def test_nothing_goes_out_while_nothing_was_published_on_tf() -> None:
    rig = RemoteRig()
    assert rig.tick() is None  # nothing received yet
    send_arm(rig, ARM_VALUES)
    assert rig.tick() is not None
    assert rig.tick() is None  # nothing new since
    # A message the rate limiter drops changes nothing on /tf: nothing on the remote topic.
    assert rig.send(ARM_JOINTS, ARM_VALUES, T0 + 1 * MS) is None
    assert rig.tick() is None


def test_a_frame_whose_joints_tf_has_not_had_is_left_out_as_on_tf() -> None:
    rig = RemoteRig()
    assert rig.send(["joint_1", "joint_2", "joint_3"], [0.1, 0.2, 0.3]) is not None
    got = frames_of(rig.tick())
    assert set(got) == {"link_3"}  # ee_link needs joints 4-7, the finger the finger joint
    default = RemoteRig(publish_default_positions=True)
    assert default.send(["joint_1"], [0.1]) is not None
    assert set(frames_of(default.tick())) == {"link_3", "ee_link", "right_inner_finger"}


def test_the_default_positions_timer_marks_the_values_published() -> None:
    rig = RemoteRig(publish_default_positions=True)
    assert rig.pipeline.default_positions() is not None
    publication = rig.tick()
    assert publication is not None and publication.stamp_ns == rig.clock.now_ns


def test_rate_cap_keeps_its_grid_under_late_ticks() -> None:
    cap = RateCap(10.0)
    sent = []
    # Ticks every 100 ms, each read a little late or early by the callback.
    for k, jitter_ms in enumerate([0, 30, -20, 45, 0, -45, 10, 0, 20, -10] * 3):
        now = k * 100 * MS + jitter_ms * MS
        if cap.due(now):
            cap.sent(now)
            sent.append(now)
    assert len(sent) == 30


def test_runtime_changes_replan_reopen_and_restart() -> None:
    rig = RemoteRig()
    assert rig.change.topic == "remote/tf" and rig.change.reopen and rig.change.restart_timer
    rig.reconfigure(remote_rate=2.0)
    assert rig.change.restart_timer and not rig.change.reopen
    assert not rig.change.republish_statics
    assert rig.remote.cap.interval_ns == SECOND // 2
    rig.reconfigure(remote_topic="viewer/tf")
    assert rig.change.reopen and rig.change.topic == "viewer/tf" and rig.change.republish_statics
    rig.reconfigure(remote_frames=("link_7",))
    assert rig.change.republish_statics and not rig.change.reopen
    send_arm(rig, ARM_VALUES)
    assert set(frames_of(rig.tick())) == {"link_7"}
    assert frames_of(rig.remote.static_publication(T0)) == {}
    rig.reconfigure(frame_prefix="p/")
    assert rig.change.republish_statics
    send_arm(rig, ARM_VALUES, T0 + SECOND)
    assert set(frames_of(rig.tick())) == {"p/link_7"}
    rig.reconfigure(remote_frames=())
    assert rig.change.reopen and rig.change.topic is None
    send_arm(rig, ARM_VALUES, T0 + 2 * SECOND)
    assert rig.tick() is None and rig.remote.static_publication(T0) is None


def test_a_remote_change_does_not_reset_the_pipeline() -> None:
    rig = RemoteRig()
    send_arm(rig, ARM_VALUES)
    rig.reconfigure(remote_rate=5.0, remote_frames=("link_7",))
    # The rate limiter kept its memory: a message 1 ms later is not due.
    assert rig.send(ARM_JOINTS, ARM_VALUES, T0 + MS) is None


def test_unknown_frames_are_refused_with_the_close_matches() -> None:
    with pytest.raises(ParameterRejected, match=r"'link_33'.*did you mean link_3"):
        plan_change(Settings(), arm_model(), {"remote.frames": ["link_33", "ee_link"]}, Loader())
    change = plan_change(Settings(), arm_model(), {"remote.frames": ["ee_link"]}, Loader())
    assert change.settings.remote_frames == ("ee_link",)
    # A frame name with the prefix the node adds: the link is meant.
    with pytest.raises(ParameterRejected, match="'r1/ee_link': give the link, 'ee_link'"):
        plan_change(
            Settings(frame_prefix="r1/"), arm_model(), {"remote.frames": ["r1/ee_link"]}, Loader()
        )


def test_a_chain_through_an_excluded_joint_is_refused_whichever_changes() -> None:
    with pytest.raises(ParameterRejected, match=r"'ee_link'.*crosses excluded joint.*joint_5"):
        plan_change(
            Settings(exclude_joints=("joint_5",)),
            arm_model(),
            {"remote.frames": ["link_3", "ee_link"]},
            Loader(),
        )
    with pytest.raises(ParameterRejected, match="joint_5"):
        plan_change(
            Settings(remote_frames=("link_3", "ee_link")),
            arm_model(),
            {"exclude_joints": ["joint_5"]},
            Loader(),
        )
    # Frames above the excluded joint: accepted.
    plan_change(
        Settings(exclude_joints=("joint_5",)), arm_model(), {"remote.frames": ["link_4"]}, Loader()
    )


@pytest.mark.parametrize(("value", "reason"), [(0.0, "> 0"), (2000.0, "<= 1000"), ("x", "number")])
def test_a_rate_out_of_range_is_refused(value: Any, reason: str) -> None:
    with pytest.raises(ParameterRejected, match=f"remote.rate must be .*{reason}"):
        Settings.from_values({"remote.rate": value})


def test_a_description_without_a_chosen_frame_leaves_it_out_and_says_so() -> None:
    rig = RemoteRig()
    humanoid = TEST_DIR / "urdf" / "humanoid.urdf"
    rig.pipeline.install(LoadedModel(Robot.load(humanoid), humanoid.read_text()))
    rig.remote.configure()
    assert rig.logger.containing("remote output: frame 'ee_link' left out")
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    values = dict(report.values)
    assert "ee_link (no link of that name in the robot)" in values[Key.REMOTE_LEFT_OUT]
    assert any(
        c.level is Level.WARN and "remote.frames left out" in c.message for c in report.conditions
    )
    # The arm again: every frame back, nothing left out.
    rig.pipeline.install(LoadedModel(Robot.load(ARM_URDF), ARM_URDF.read_text()))
    rig.remote.configure()
    send_arm(rig, ARM_VALUES)
    assert set(frames_of(rig.tick())) == {"link_3", "ee_link", "right_inner_finger"}
    values = dict(rig.pipeline.health.report(GraphFacts({}, T0)).values)
    assert values[Key.REMOTE_LEFT_OUT] == ""


def test_the_health_report_shows_the_remote_output() -> None:
    rig = RemoteRig(remote_rate=4.0)
    send_arm(rig, ARM_VALUES)
    rig.tick()
    values = dict(rig.pipeline.health.report(GraphFacts({}, T0)).values)
    assert values[Key.REMOTE_FRAMES] == ", ".join(ARM_FRAMES)
    assert values[Key.REMOTE_RATE] == "4"
    assert values[Key.REMOTE_SENT] == "1"
    off = RemoteRig(remote_frames=())
    assert dict(off.pipeline.health.report(GraphFacts({}, T0)).values)[Key.REMOTE_FRAMES] == ""


@pytest.mark.parametrize(
    "path",
    [
        TEST_DIR / "sdf" / name
        for name in (
            "all_joint_types.sdf",
            "gearbox_demo.sdf",
            "nested_robot.sdf",
            "relative_frames.sdf",
            "walker_nested.sdf",
            "four_bar.sdf",
        )
    ]
    + [TEST_DIR / "urdf" / name for name in ("humanoid.urdf", "drake_style_arm.urdf")],
    ids=lambda path: path.name,
)
def test_any_choice_of_links_composes_as_fk_gives_it(path: Any) -> None:
    """Random choices of links (the root among them or not) on robots of every kind, SDFormat
    child offsets and nested models included: every frame sent (moving and static) is its
    parent's FK inverse times its own, its parent is the nearest chosen link above it (else the
    root), and every chosen link but the root is sent once."""
    robot = Robot.load(path)
    kin = robot.kinematics
    names = tuple(kin.variable_names)
    links = list(robot.links)
    parent_of = {joint.child: joint.parent for joint in robot.joints.values()}
    generator = np.random.default_rng(len(links))
    for trial in range(4):
        chosen = tuple(generator.choice(links, size=min(len(links), 2 + trial * 2), replace=False))
        rig = RemoteRig(path, remote_frames=chosen, ignore_timestamp=True)
        rig.send(names, generator.uniform(-0.8, 0.8, len(names)))
        model = rig.pipeline.model
        assert model is not None
        values = kin.variable_values(model.positions)
        fk = robot.link_fk({name: values[name] for name in names}, clamp="hard")
        publication = rig.tick()
        got = frames_of(publication) if publication is not None else {}
        got.update(frames_of(rig.remote.static_publication(T0)))
        assert set(got) == set(chosen) - {robot.root}
        for child, (parent, pose) in got.items():
            assert parent in chosen or parent == robot.root
            above = parent_of[child]
            while above != parent:  # lies above, no chosen link between: the nearest
                assert above not in chosen
                above = parent_of[above]
            np.testing.assert_allclose(pose, np.linalg.inv(fk[parent]) @ fk[child], atol=1e-9)


def test_hostile_sizes_of_remote_frames_are_refused_in_bounds() -> None:
    """50,000 unknown names ran a close-match search for each inside the parameter callback
    (minutes, /tf stopped): a list over ``MAX_ARRAY_ITEMS`` is refused by its count, and a
    refusal of one within it names (and looks up close matches for) at most
    ``MAX_NAMED_FRAMES`` of its names, counting the others."""
    many = [f"no_such_link_{index}" for index in range(50_000)]
    with pytest.raises(ParameterRejected, match=r"^remote\.frames holds 50000 items: at most"):
        plan_change(Settings(), arm_model(), {"remote.frames": many}, Loader())
    with pytest.raises(ParameterRejected) as refused:
        plan_change(Settings(), arm_model(), {"remote.frames": many[:MAX_ARRAY_ITEMS]}, Loader())
    reason = str(refused.value)
    assert reason.count("no_such_link_") == MAX_NAMED_FRAMES, reason
    assert reason.endswith(f"; and {MAX_ARRAY_ITEMS - MAX_NAMED_FRAMES} more"), reason
    with pytest.raises(ParameterRejected, match=r"'link_33'.*did you mean link_3"):
        plan_change(Settings(), arm_model(), {"remote.frames": ["link_33", *many[:20]]}, Loader())


# -- issue #44: runtime changes, bounds and the wording each promise rests on ------------------


def test_turned_on_at_runtime_it_opens_starts_its_timer_and_publishes_at_the_same_rate() -> None:
    """``remote.frames`` from [] to links, ``remote.rate`` unchanged: the topics open, the
    timer starts (the rate did not change, the output did), the statics go out; off again,
    the topics close and the timer stops."""
    rig = RemoteRig(remote_frames=())
    assert rig.change.topic is None and rig.remote.static_publication(T0) is None
    rig.reconfigure(remote_frames=ARM_FRAMES)
    assert rig.change == (True, "remote/tf", True, True)
    assert set(frames_of(rig.remote.static_publication(T0))) == {
        "pedestal",
        "camera_optical_frame",
    }
    send_arm(rig, ARM_VALUES)
    assert set(frames_of(rig.tick())) == {"link_3", "ee_link", "right_inner_finger"}
    rig.reconfigure(remote_frames=())
    assert rig.change == (True, None, True, True)


def test_a_remote_rate_above_publish_frequency_forwards_every_tf_publication() -> None:
    """``remote.rate`` 50 over ``publish_frequency`` 20: the cap never binds, every joint
    state published on /tf goes out on the remote topic (stamp for stamp)."""
    rig = RemoteRig(publish_frequency=20.0, remote_rate=50.0)
    on_tf, on_remote = [], []
    for k in range(1000):  # 1 s of joint states at 1 kHz; the remote timer ticks every 20 ms
        if rig.send(ARM_JOINTS, [0.001 * k] * 7 + [0.0], T0 + k * MS) is not None:
            on_tf.append(T0 + k * MS)
        if k % 20 == 19:
            publication = rig.tick(after_ns=20 * MS)
            if publication is not None:
                on_remote.append(publication.stamp_ns)
    assert len(on_tf) == 20
    assert on_remote == on_tf


def test_the_static_set_carries_the_stamp_it_is_given() -> None:
    publication = RemoteRig().remote.static_publication(T0 + 7 * MS)
    assert publication is not None and publication.stamp_ns == T0 + 7 * MS


def test_a_refusal_names_the_parameter_each_link_and_only_real_close_matches() -> None:
    """The whole reason: the parameter, each refused name with why, ``; ``-separated; the
    close matches where there are some, nothing added where there are none."""
    with pytest.raises(ParameterRejected) as refused:
        plan_change(Settings(), arm_model(), {"remote.frames": ["zzzz", "link_33"]}, Loader())
    first, second = str(refused.value).split("; ", 1)
    assert first == "remote.frames: 'zzzz': no link of that name in the robot"
    assert second.startswith("'link_33': no link of that name in the robot; did you mean link_3, ")
    assert second.endswith("?") and second.count(", ") == 2  # three matches, comma-separated


def test_the_statics_topic_is_the_topic_with_static_appended() -> None:
    assert static_topic("remote/tf") == "remote/tf_static"
    assert static_topic("/viewer/tf") == "/viewer/tf_static"


def test_the_health_facts_show_no_topic_without_a_remote_output() -> None:
    """docs/node.md: without a remote output the remote rows are empty (the topic too)."""
    assert RemoteRig(remote_frames=()).remote.facts.topic == ""
    assert RemoteRig().remote.facts.topic == "remote/tf"
