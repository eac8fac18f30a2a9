"""Tree and mimic checks on plain Link/Joint objects, independent of any parser."""

from __future__ import annotations

import logging
import math

import numpy as np
import pytest

from joint_tf_publisher import Joint, Link, ModelError
from joint_tf_publisher.errors import Diagnostics
from joint_tf_publisher.model import Limit, Mimic
from joint_tf_publisher.model.validate import (
    assemble_robot,
    check_mimics,
    drop_unusable_mimics,
    follower_range,
)


def link(name: str, line: int) -> Link:
    return Link(name=name, line=line)


def joint(
    name: str, parent: str, child: str, line: int, mimic: str | None = None, kind: str = "revolute"
) -> Joint:
    return Joint(
        name=name,
        joint_type=kind,
        parent=parent,
        child=child,
        line=line,
        mimic=None if mimic is None else Mimic(mimic, line=line + 1),
    )


def assemble(links: list[Link], joints: list[Joint]) -> None:
    assemble_robot("r", links, joints, Diagnostics("model.sdf"), robot_line=1)


def test_assembles_in_given_order_with_source_and_warnings() -> None:
    diag = Diagnostics("model.sdf")
    diag.warn("something odd", 7, "link 'b'")
    robot = assemble_robot("r", [link("b", 3), link("a", 2)], [joint("j", "a", "b", 5)], diag)
    assert robot.root == "a"
    assert list(robot.links) == ["b", "a"]
    assert robot.source == "model.sdf"
    assert robot.warnings == ["model.sdf:7: link 'b': something odd"]


def test_warning_is_logged(caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="joint_tf_publisher"):
        Diagnostics("x.urdf").warn("odd", 3, "joint 'j'")
    assert [r.getMessage() for r in caplog.records] == ["x.urdf:3: joint 'j': odd"]


@pytest.mark.parametrize(
    ("links", "joints", "message"),
    [
        ([link("a", 2), link("a", 9)], [], r"^model\.sdf:9: link 'a': duplicate link name"),
        (
            [link("a", 2), link("b", 3), link("c", 4)],
            [joint("j", "a", "b", 5), joint("j", "b", "c", 8)],
            r"^model\.sdf:8: joint 'j': duplicate joint name \(first defined at line 5\)",
        ),
        (
            [link("a", 2)],
            [joint("j", "a", "zz", 5)],
            r"^model\.sdf:5: joint 'j': child link 'zz' does not exist",
        ),
        (
            [link("a", 2), link("b", 3), link("c", 4)],
            [joint("j1", "a", "b", 5), joint("j2", "c", "b", 8)],
            r"^model\.sdf:8: joint 'j2': link 'b' already has parent joint 'j1' \(line 5\)",
        ),
        (
            [link("a", 2), link("b", 3)],
            [joint("j1", "a", "b", 5), joint("j2", "b", "a", 8)],
            r"^model\.sdf:5: joint 'j1': joints form a cycle through links",
        ),
        ([link("a", 2), link("b", 3)], [], r"^model\.sdf:3: link 'b': several root links"),
        ([], [], r"^model\.sdf:1: robot has no links"),
        (
            [link("a", 2), link("b", 3), link("c", 4)],
            [joint("j1", "a", "b", 5, mimic="j2"), joint("j2", "b", "c", 8, mimic="j1")],
            r"^model\.sdf:6: joint 'j1': mimic cycle: j1 -> j2 -> j1",
        ),
        (
            [link("a", 2), link("b", 3)],
            [joint("j1", "a", "b", 5, mimic="j1")],
            r"^model\.sdf:6: joint 'j1': <mimic> names the joint itself",
        ),
    ],
)
def test_invalid_trees_are_refused(links: list[Link], joints: list[Joint], message: str) -> None:
    with pytest.raises(ModelError, match=message):
        assemble(links, joints)


def test_cycle_hanging_below_a_valid_root_is_found() -> None:
    links = [link(n, i) for i, n in enumerate("rabcd", start=2)]
    joints = [
        joint("ra", "r", "a", 10),
        joint("bc", "b", "c", 20),
        joint("cd", "c", "d", 30),
        joint("db", "d", "b", 40),
    ]
    message = (
        r"^model\.sdf:20: joint 'bc': joints form a cycle through links b -> c -> d -> b "
        r"\(joints 'bc', 'cd', 'db'\)"
    )
    with pytest.raises(ModelError, match=message):
        assemble(links, joints)


def test_long_mimic_chain_is_accepted() -> None:
    names = [f"l{i}" for i in range(51)]
    links = [link(n, i) for i, n in enumerate(names)]
    joints = [
        joint(f"j{i}", names[i], names[i + 1], 100 + i, mimic=None if i == 0 else f"j{i - 1}")
        for i in range(50)
    ]
    robot = assemble_robot("r", links, joints, Diagnostics("chain.urdf"))
    assert robot.root == "l0"
    assert robot.joints["j49"].mimic is not None


def test_mimic_cycle_reached_from_outside_is_reported_on_its_members() -> None:
    links = [link(n, i) for i, n in enumerate("abcd", start=2)]
    joints = [
        joint("j0", "a", "b", 10, mimic="j1"),
        joint("j1", "b", "c", 20, mimic="j2"),
        joint("j2", "c", "d", 30, mimic="j1"),
    ]
    with pytest.raises(
        ModelError, match=r"^model\.sdf:21: joint 'j1': mimic cycle: j1 -> j2 -> j1"
    ):
        assemble(links, joints)


def test_find_root_without_any_root() -> None:
    from joint_tf_publisher.model.validate import find_root

    links = {"a": link("a", 2), "b": link("b", 3)}
    parent_of = {"a": joint("ba", "b", "a", 5), "b": joint("ab", "a", "b", 6)}
    with pytest.raises(ModelError, match=r"^model\.sdf:1: no root link: every link has a parent"):
        find_root(links, parent_of, Diagnostics("model.sdf"), robot_line=1)


def test_mimic_of_a_missing_joint_is_dropped_with_a_warning() -> None:
    joints = [joint("j1", "a", "b", 5, mimic="ghost"), joint("j2", "b", "c", 8, mimic="j1")]
    robot = assemble_robot("r", [link(n, 1) for n in "abc"], joints, Diagnostics("x.urdf"))
    assert robot.joints["j1"].mimic is None
    assert robot.joints["j2"].mimic is not None
    assert robot.warnings == [
        "x.urdf:6: joint 'j1': <mimic> names joint 'ghost', which does not exist; the mimic is "
        "ignored and the joint moves on its own"
    ]


def test_check_mimics_alone_still_refuses_a_missing_leader() -> None:
    # The SDF reader calls check_mimics directly: there a missing leader stays an error.
    joints = {"j1": joint("j1", "a", "b", 5, mimic="ghost")}
    with pytest.raises(ModelError, match=r"^m\.sdf:6: joint 'j1': <mimic> names joint 'ghost'"):
        check_mimics(joints, Diagnostics("m.sdf"))


def test_drop_unusable_mimics_leaves_self_mimic_for_check_mimics() -> None:
    joints = {"j1": joint("j1", "a", "b", 5, mimic="j1")}
    drop_unusable_mimics(joints, Diagnostics("x.urdf"))
    assert joints["j1"].mimic is not None


def limited(name: str, lower: float, upper: float, mimic: Mimic | None = None) -> Joint:
    return Joint(
        name=name,
        joint_type="revolute",
        parent="a",
        child=name,
        limit=Limit(effort=1.0, velocity=1.0, lower=lower, upper=upper),
        mimic=mimic,
    )


@pytest.mark.parametrize(
    ("multiplier", "offset", "expected"),
    [
        (-1.0, 0.0, (-0.548, 0.0)),
        (2.0, 0.1, (0.1, 1.196)),
        (0.0, 0.25, (0.25, 0.25)),
    ],
)
def test_follower_range(multiplier: float, offset: float, expected: tuple[float, float]) -> None:
    joints = {
        "lead": limited("lead", 0.0, 0.548),
        "follow": limited("follow", 0.0, 0.548, Mimic("lead", multiplier, offset)),
    }
    found = follower_range(joints["follow"], joints)
    assert found is not None
    np.testing.assert_allclose(found, expected, rtol=0, atol=1e-15)
    assert follower_range(joints["lead"], joints) is None


def test_follower_range_of_an_infinite_leader_range() -> None:
    joints = {
        "lead": limited("lead", -math.inf, 1.0),
        "follow": limited("follow", 0.0, 1.0, Mimic("lead", -2.0, 0.5)),
    }
    assert follower_range(joints["follow"], joints) == (-1.5, math.inf)


class _CountedJoints(dict[str, Joint]):
    """Joints by name that count the lookups of a joint by its name."""

    lookups = 0

    def __getitem__(self, name: str) -> Joint:
        self.lookups += 1
        return super().__getitem__(name)

    def get(self, name: str, default: Joint | None = None) -> Joint | None:  # type: ignore[override]
        self.lookups += 1
        return super().get(name, default)


def test_a_long_mimic_chain_is_walked_once() -> None:
    """Each joint of a chain of 400 mimics (each following the one before; a description of
    400 KB) is looked up a few times by the mimic checks, not once for every follower after
    it: each follower walked the chain to its start again, in ``check_mimics`` (with a
    list's membership at each step: 2000 mimics took 35 s to load, from a topic too) and in
    ``follower_range`` (2.4 s); the ranges found are those of the chain walked whole."""
    count = 400
    chain = [limited("j0", -1.0, 1.0)]
    chain += [limited(f"j{n}", -1.0, 1.0, Mimic(f"j{n - 1}", 1.0, 0.01)) for n in range(1, count)]
    joints = _CountedJoints((j.name, j) for j in chain)
    check_mimics(joints, Diagnostics("chain.urdf"))
    assert joints.lookups <= 3 * count
    joints.lookups = 0
    known: dict[str, tuple[float, float] | None] = {}
    ranges = [follower_range(j, joints, known) for j in chain]
    assert joints.lookups <= 2 * count
    assert ranges == [None, *(follower_range(j, dict(joints)) for j in chain[1:])]
    assert ranges[-1] == pytest.approx((-1.0 + 3.99, 1.0 + 3.99))
