"""Tree and mimic checks on plain Link/Joint objects, independent of any parser."""

from __future__ import annotations

import logging

import pytest

from joint_tf_publisher import Joint, Link, ModelError
from joint_tf_publisher.errors import Diagnostics
from joint_tf_publisher.model import Mimic
from joint_tf_publisher.model.validate import assemble_robot


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
            [joint("j1", "a", "b", 5, mimic="ghost")],
            r"^model\.sdf:6: joint 'j1': <mimic> names joint 'ghost', which does not exist",
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
