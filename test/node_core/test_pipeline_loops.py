"""The pipeline closes a robot's loops per JointState (issue #45), without DDS."""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from scipy.spatial.transform import Rotation

from bench.loop_models import CRANK_DRAWN, FOUR_BAR, four_bar, four_bar_end, rssr, slider_crank
from joint_tf_publisher import Robot
from joint_tf_publisher.health.model import GraphFacts, JointStateHealth, Key, Level
from joint_tf_publisher.health.reporting import Reporter, Throttle
from joint_tf_publisher.model.clamp_mode import ClampMode
from joint_tf_publisher.model.loops import LoopJointType
from joint_tf_publisher.node_core.cdr import Publication
from joint_tf_publisher.node_core.parameters import (
    MIN_LOOP_TOLERANCE,
    ParameterRejected,
    Settings,
    parse_loop_tolerance,
)
from joint_tf_publisher.node_core.pipeline import JointStatePipeline, LoadedModel

MS = 1_000_000
T0 = 1_700_000_000 * 1_000_000_000


class _Logger:
    def __init__(self) -> None:
        self.lines: list[str] = []

    def info(self, message: str) -> None:
        self.lines.append(message)

    warning = error = info


class _Rig:
    def __init__(self, robot: Robot | None = None, **settings: object) -> None:
        self.robot = four_bar() if robot is None else robot
        self.steady_ns = 0
        reporter = Reporter(_Logger(), Throttle(10.0, lambda: 0.0))
        health = JointStateHealth(steady_ns=lambda: self.steady_ns)
        self.pipeline = JointStatePipeline(
            Settings(**settings),  # type: ignore[arg-type]
            reporter,
            lambda: T0,
            health,
        )
        self.pipeline.install(LoadedModel(self.robot, ""))
        #: child frame -> latest published pose in its parent's frame.
        self.tree: dict[str, np.ndarray] = {}
        self.stamp_ns = T0

    def send(self, names: Sequence[str], values: Sequence[float]) -> Publication | None:
        self.stamp_ns += 100 * MS  # beyond the rate limit's interval
        self.steady_ns += 100 * MS
        publication = self.pipeline.joint_state(
            self.stamp_ns, tuple(names), np.array(values, dtype=float)
        )
        if publication is not None:
            for (_, child), row in zip(publication.layout.frames, publication.poses, strict=True):
                pose = np.eye(4)
                pose[:3, :3] = Rotation.from_quat(row[3:]).as_matrix()
                pose[:3, 3] = row[:3]
                self.tree[child] = pose
        return publication

    def in_ground(self, link: str) -> np.ndarray:
        """A link's pose composed from the published transforms (the four-bar's links hang
        straight from the ground or the crank)."""
        if link == "coupler":
            return self.tree["crank"] @ self.tree["coupler"]
        return self.tree[link]


def _end(pose: np.ndarray, length: float) -> np.ndarray:
    return (pose @ np.array([length, 0.0, 0.0, 1.0]))[:2]


def test_every_joint_state_publishes_the_passive_joints_with_the_loop_closed() -> None:
    rig = _Rig()
    previous = None
    for crank in np.linspace(0.0, 3 * math.tau, 3 * 72 + 1):
        publication = rig.send(["crank_joint"], [crank])
        assert publication is not None
        children = {child for _, child in publication.layout.frames}
        assert children == {"crank", "coupler", "rocker"}
        expected = four_bar_end(CRANK_DRAWN + crank)
        coupler_end = _end(rig.in_ground("coupler"), FOUR_BAR["b"])
        rocker_end = _end(rig.in_ground("rocker"), FOUR_BAR["c"])
        assert np.allclose(coupler_end, expected, atol=1e-12)
        assert np.allclose(rocker_end, expected, atol=1e-12)
        if previous is not None:  # no jump between two messages 5 degrees apart
            assert np.linalg.norm(rocker_end - previous) < 0.3
        previous = rocker_end
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    values = dict(report.values)
    assert values[Key.LOOPS].startswith("closing: ")
    assert values[Key.LOOPS_NOT_CLOSED] == ""
    assert not [c for c in report.conditions if "loop joint" in c.message]


def test_an_unclosable_loop_holds_its_passive_joints_and_is_reported() -> None:
    """The rocker given beyond its swing: the crank and coupler stay where the loop last
    closed, the rocker goes on moving, the report names the loop joint, its residual and
    since when; back in reach the loop closes again and the report clears."""
    rig = _Rig()
    rig.send(["rocker_joint"], [0.0])
    held = {link: rig.in_ground(link).copy() for link in ("crank", "coupler")}
    rig.send(["rocker_joint"], [-2.0])
    for link, pose in held.items():
        assert np.array_equal(rig.in_ground(link), pose)
    assert np.all(np.isfinite(rig.tree["rocker"]))
    assert not np.allclose(rig.tree["rocker"], np.eye(4))
    rig.steady_ns += 2_500 * MS
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    (condition,) = [c for c in report.conditions if "loop joint" in c.message]
    assert condition.level == Level.WARN
    assert "loop joint 'closing' not closed for 2.5 s" in condition.message
    assert "last closed values" in condition.message
    assert dict(report.values)[Key.LOOPS_NOT_CLOSED] == "closing"
    rig.send(["rocker_joint"], [0.05])
    expected = _end(rig.in_ground("rocker"), FOUR_BAR["c"])
    assert np.allclose(_end(rig.in_ground("coupler"), FOUR_BAR["b"]), expected, atol=1e-12)
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    assert dict(report.values)[Key.LOOPS_NOT_CLOSED] == ""
    assert not [c for c in report.conditions if "loop joint" in c.message]


def test_loop_tolerance_decides_what_is_reported() -> None:
    for tolerance, reported in ((1e-6, "closing"), (1.0, "")):
        rig = _Rig(loop_tolerance=tolerance)
        rig.send(["rocker_joint"], [-0.8])
        report = rig.pipeline.health.report(GraphFacts({}, T0))
        position = float(dict(report.values)[Key.LOOPS].split(": ")[1].split(",")[0])
        assert 0.1 < position < 1.0  # open by this much
        assert dict(report.values)[Key.LOOPS_NOT_CLOSED] == reported


# -- hostile parameters (review of #45) -------------------------------------------------------


@pytest.mark.parametrize("value", [1e-300, 1e-13, 5e-324, 0.0, -0.0, -1e-6, 1.5, "nan", True])
def test_loop_tolerance_below_round_off_is_refused(value: object) -> None:
    """A tolerance below what a closing solve leaves (round-off) made every solve "not
    closed": the node held the passive joints at their drawing while the crank turned (an
    RSSR's rocker 0.26 m off its coupler on /tf with 1e-300)."""
    with pytest.raises(ParameterRejected, match="loop_tolerance"):
        parse_loop_tolerance(float(value) if value == "nan" else value)


@pytest.mark.parametrize("model", [rssr, slider_crank, four_bar])
def test_at_the_smallest_loop_tolerance_a_closing_loop_counts_as_closed(
    model: Callable[[], Robot],
) -> None:
    rig = _Rig(loop_tolerance=MIN_LOOP_TOLERANCE)
    rig.robot = model()
    rig.pipeline.install(LoadedModel(rig.robot, ""))
    for crank in np.linspace(0.0, 0.8, 17):
        rig.send(["crank_joint"], [float(crank)])
        facts = rig.pipeline.health.loops
        assert facts is not None
        assert not facts.not_closed_since_ns, (crank, facts.position_error_m)
    assert parse_loop_tolerance(MIN_LOOP_TOLERANCE) == MIN_LOOP_TOLERANCE


def _closing_value(robot: Robot, crank: float) -> float:
    """The four-bar's loop joint value (rad) where the crank is at ``crank``: the angle about
    z from its frame on the coupler to its frame on the rocker, the loop solved in closed form
    (link_fk)."""
    poses = robot.link_fk({"crank_joint": crank})
    (closing,) = robot.loop_joints
    frame1 = poses[closing.link1] @ closing.link1_to_joint
    frame2 = poses[closing.link2] @ closing.link2_to_joint
    relative = np.linalg.inv(frame1) @ frame2
    return math.atan2(relative[1, 0], relative[0, 0])


def _passive_of(robot: Robot, crank: float) -> dict[str, float]:
    """The coupler's and rocker's values the closed form gives for ``crank`` (stateless)."""
    kinematics = robot.kinematics
    solver = kinematics.loops
    assert solver is not None
    values = kinematics.cfg.single({"crank_joint": crank}, ClampMode.NONE)
    solved = solver.solve_from_drawing(values, kinematics.cfg.given_slots(["crank_joint"]))
    lookup = kinematics.layout.variable_lookup
    return {
        name: float(solved.values[lookup[name][1]]) for name in ("coupler_joint", "rocker_joint")
    }


def test_a_value_given_for_the_loop_joint_itself_is_held() -> None:
    """An encoder on the four-bar's closing pin (#45: "a value given for a loop joint itself
    is held"): given with the crank and consistent with it, the loop closes to round-off and
    the coupler and rocker take the closed form's values; the name is no unknown one, and
    ``loop_joint_states`` keeps its value beside the solved joints. Inconsistent, the given
    joints over-determine the loop: the least-squares fit, reported."""
    rig = _Rig()
    robot = rig.robot
    for crank in (0.0, 0.3, 0.6, 1.2):
        closing = _closing_value(robot, crank)
        assert rig.send(["crank_joint", "closing"], [crank, closing]) is not None
        facts = rig.pipeline.health.loops
        assert facts is not None
        assert float(facts.position_error_m[0]) < 1e-12
        assert float(facts.angle_error_rad[0]) < 1e-12
        solved = rig.pipeline.loop_joint_state()
        assert solved is not None
        values = dict(zip(*solved, strict=True))
        assert values["closing"] == closing
        for name, expected in _passive_of(robot, crank).items():
            assert math.isclose(values[name], expected, abs_tol=1e-12), name
        expected_end = four_bar_end(CRANK_DRAWN + crank)
        assert np.allclose(_end(rig.in_ground("rocker"), FOUR_BAR["c"]), expected_end, atol=1e-12)
        assert "closing" not in rig.tree  # no tree edge: not on /tf
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    assert dict(report.values)[Key.UNKNOWN] == ""
    assert not [c for c in report.conditions if "loop joint" in c.message]
    # The encoder 0.1 rad off the model: over-determined, the least-squares fit, reported.
    crank = 1.2
    rig.send(["crank_joint", "closing"], [crank, _closing_value(robot, crank) + 0.1])
    facts = rig.pipeline.health.loops
    assert facts is not None and facts.over_determined
    assert float(facts.position_error_m[0]) > 1e-6 or float(facts.angle_error_rad[0]) > 1e-6
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    (condition,) = [c for c in report.conditions if "loop joint" in c.message]
    assert condition.level == Level.WARN
    assert "'closing' over-determined by the given joints" in condition.message
    solved = rig.pipeline.loop_joint_state()
    assert solved is not None and np.all(np.isfinite(solved[1]))


def test_the_loop_joint_alone_pins_the_loop_and_counts_as_received() -> None:
    """Only the closing pin's value given: the crank is passive too and the loop, one
    freedom, is pinned by it: the crank solved to where that value puts it. The message moves
    (publishes) the loop's tree joints, and no joint is reported never received."""
    rig = _Rig(joint_state_timeout=1.0)
    robot = rig.robot
    crank = 0.4
    publication = rig.send(["closing"], [_closing_value(robot, crank)])
    assert publication is not None
    assert {child for _, child in publication.layout.frames} == {"crank", "coupler", "rocker"}
    assert math.isclose(
        math.atan2(rig.tree["crank"][1, 0], rig.tree["crank"][0, 0]),
        CRANK_DRAWN + crank,
        abs_tol=1e-12,
    )
    facts = rig.pipeline.health.loops
    assert facts is not None and not facts.over_determined
    assert float(facts.position_error_m[0]) < 1e-12
    rig.steady_ns += 2_000 * MS
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    values = dict(report.values)
    assert values[Key.NEVER_RECEIVED] == "" and values[Key.UNKNOWN] == ""
    # A value that is not a number is rejected, named in the report: the loop joint keeps
    # its last good value, the loop stays where it was (solved again: to round-off).
    before = rig.tree["crank"].copy()
    rig.send(["closing"], [math.nan])
    assert np.allclose(rig.tree["crank"], before, atol=1e-12)
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    assert "closing" in dict(report.values)[Key.REJECTED]


@pytest.mark.parametrize("loop_type", [LoopJointType.BALL, LoopJointType.FIXED])
def test_a_loop_joint_that_takes_no_value_named_is_no_unknown_name(
    loop_type: LoopJointType,
) -> None:
    """A ball or fixed loop joint named in a JointState (Gazebo's joint states name every
    joint of an SDFormat model, a legged robot's rod ends too) gives no value (a ball joint
    has no single position, a fixed one none) but is a joint of the description: not an
    unknown name. The message's other values are taken as without it; other names that are
    no joint's still are unknown ones."""
    rig, without = _Rig(four_bar(loop_type)), _Rig(four_bar(loop_type))
    for crank in (0.3, 0.5):
        assert without.send(["crank_joint"], [crank]) is not None
        assert rig.send(["crank_joint", "closing", "elsewhere"], [crank, 0.7, 0.2]) is not None
    assert rig.tree.keys() == without.tree.keys()
    for child, pose in without.tree.items():
        assert np.array_equal(rig.tree[child], pose), child
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    assert dict(report.values)[Key.UNKNOWN] == "elsewhere"
    assert "closing" not in dict(report.values)[Key.REJECTED]


@pytest.mark.parametrize("order", ["good first", "bad first"])
def test_a_loop_joint_named_twice_with_one_unusable_value_keeps_its_last_good_value(
    order: str,
) -> None:
    """#45 review: a JointState naming the closing pin twice, one value NaN, reported the
    pin rejected yet held it at the message's other value (a tree joint named so is
    rejected whole). Now as a tree joint: rejected, its last good value kept; named twice
    with two usable values, the last one is taken."""
    rig = _Rig()
    robot = rig.robot
    kept = _closing_value(robot, 0.3)
    assert rig.send(["crank_joint", "closing"], [0.3, kept]) is not None
    other = _closing_value(robot, 0.6)
    values = [other, math.nan] if order == "good first" else [math.nan, other]
    assert rig.send(["crank_joint", "closing", "closing"], [0.3, *values]) is not None
    solved = rig.pipeline.loop_joint_state()
    assert solved is not None
    assert dict(zip(*solved, strict=True))["closing"] == kept
    report = rig.pipeline.health.report(GraphFacts({}, T0))
    assert "closing" in dict(report.values)[Key.REJECTED]
    facts = rig.pipeline.health.loops
    assert facts is not None and float(facts.position_error_m[0]) < 1e-12
    rig.send(["crank_joint", "closing", "closing"], [0.6, kept, other])
    solved = rig.pipeline.loop_joint_state()
    assert solved is not None and dict(zip(*solved, strict=True))["closing"] == other


#: A slider-crank whose slider is the loop joint itself (prismatic, along the ground's x):
#: the crank gc, the rod cr and the block rb turn; given the crank and the slider's travel,
#: the loop is over-determined (the least-squares fit).
PRISMATIC_LOOP = """<robot name="prismatic_loop">
  <link name="g"/><link name="crank"/><link name="rod"/><link name="block"/>
  <joint name="gc" type="continuous">
    <parent link="g"/><child link="crank"/><axis xyz="0 1 0"/>
  </joint>
  <joint name="cr" type="continuous">
    <parent link="crank"/><child link="rod"/><origin xyz="0 0 0.1"/><axis xyz="0 1 0"/>
  </joint>
  <joint name="rb" type="continuous">
    <parent link="rod"/><child link="block"/><origin xyz="0.3 0 -0.1"/><axis xyz="0 1 0"/>
  </joint>
  <loop_joint name="slide" type="prismatic">
    <link1 link="g" xyz="0.3 0 0"/><link2 link="block"/><axis xyz="1 0 0"/>
  </loop_joint>
</robot>"""


@pytest.mark.parametrize("travel", [0.5, 5.0, 1000.0])
def test_an_over_determined_fit_only_improves_on_identical_messages(travel: float) -> None:
    """#45 review: the same JointState again and again (the crank and a slider's travel the
    0.3 m rod cannot reach): the passive joints' start was extrapolated from the last
    message's least-squares correction, so the fit went back and forth (its cost rose) and,
    1000 m away, turned the rod by 12.5 rad between two identical messages. Over-determined,
    each message starts where the last fit ended: its cost never rises."""
    rig = _Rig()
    robot = Robot.from_xml_string(PRISMATIC_LOOP)
    rig.pipeline.install(LoadedModel(robot, ""))
    solver = robot.kinematics.loops
    assert solver is not None
    held = solver.holding(np.array([True]))
    costs = []
    for _ in range(30):
        assert rig.send(["gc", "slide"], [0.1, travel]) is not None
        facts = rig.pipeline.health.loops
        assert facts is not None and facts.over_determined
        model = rig.pipeline.model
        assert model is not None
        held.hold_values(model.positions.loop_values)
        residual, _ = held._residual(held.single_fk.link_poses(model.positions.values))
        costs.append(float(np.sum(residual**2)))
    assert all(later <= earlier * (1 + 1e-12) for earlier, later in itertools.pairwise(costs))


@pytest.mark.parametrize(
    ("model", "path"),
    [
        (rssr, [0.0, 0.1, 0.2, 0.3, 0.5, 0.8, 0.7]),
        # A four-bar whose crank cannot turn round (crank 2.5, rocker 1): 0.5 rad is beyond
        # its reach (held open, the general way's errors), then it closes again.
        (four_bar, [0.0, -0.2, 0.5, -0.2, -0.4]),
    ],
    ids=["rssr", "four-bar"],
)
def test_the_health_facts_hold_each_messages_loop_errors(
    model: Callable[[], Robot], path: list[float], monkeypatch: pytest.MonkeyPatch
) -> None:
    """The loop errors the health report reads are the last message's closed forms' errors,
    message by message (the rod loop's round-off differs from one to the next; the four-bar's
    trace returns the one same tuple of constants, which the loop step does not store again),
    and the general way's where a loop is held open."""
    monkeypatch.setitem(FOUR_BAR, "a", 2.5)
    monkeypatch.setitem(FOUR_BAR, "c", 1.0)
    rig = _Rig()
    rig.robot = model()
    solver = rig.robot.kinematics.loops
    assert solver is not None
    form_errors: list[object] = []
    close_by_forms = solver.close_by_forms

    def recorded(values: np.ndarray, plan: object) -> object:
        errors = close_by_forms(values, plan)  # type: ignore[arg-type]
        form_errors.append(errors)
        return errors

    monkeypatch.setattr(solver, "close_by_forms", recorded)
    rig.pipeline.install(LoadedModel(rig.robot, ""))
    varied = set()
    held = 0
    for value in path:
        form_errors.clear()
        rig.send(["crank_joint"], [value])
        facts = rig.pipeline.health.loops
        assert facts is not None
        if facts.not_closed_since_ns:  # the general way's errors (the forms did not close)
            assert float(facts.position_error_m[0]) > 1e-6
            held += 1
            continue
        (errors,) = form_errors
        assert errors is not None
        positions_m, angles_rad = errors  # type: ignore[misc]
        assert facts.position_error_m.tolist() == list(positions_m)
        assert facts.angle_error_rad.tolist() == list(angles_rad)
        varied.add(float(positions_m[0]))
    assert len(varied) > 1 if model is rssr else held == 1
