"""The spanning-tree rule for closed kinematic chains (tree.py), on bare joint graphs."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from joint_tf_publisher.model.tree import choose_root, spanning_tree


@dataclass
class Edge:
    name: str
    parent: str
    child: str


def edges(*specs: str) -> list[Edge]:
    """Edges from 'name:parent>child' strings, in the given (file) order."""
    result = []
    for spec in specs:
        name, link_pair = spec.split(":")
        parent, child = link_pair.split(">")
        result.append(Edge(name, parent, child))
    return result


def test_a_tree_is_kept_whole() -> None:
    joints = edges("j1:a>b", "j2:b>c", "j3:a>d")
    tree = spanning_tree(["a", "b", "c", "d"], joints)
    assert tree.root == "a"
    assert tree.tree_joints == ["j1", "j2", "j3"]
    assert tree.loop_joints == [] and tree.unreachable_links == []


def test_shortest_chain_wins_over_file_order() -> None:
    # d is two joints from a through b, three through c1/c2: the longer chain is written first
    joints = edges("long3:c2>d", "j1:a>c1", "j2:c1>c2", "jb:a>b", "short:b>d")
    tree = spanning_tree(["a", "b", "c1", "c2", "d"], joints)
    assert "short" in tree.tree_joints
    assert tree.loop_joints == ["long3"]


def test_equal_chains_keep_the_joint_written_first() -> None:
    four_bar = edges("crank:g>c", "rocker:g>r", "closing:r>k", "coupler:c>k")
    tree = spanning_tree(["g", "c", "r", "k"], four_bar)
    assert tree.tree_joints == ["crank", "rocker", "closing"]
    assert tree.loop_joints == ["coupler"]
    swapped = edges("crank:g>c", "rocker:g>r", "coupler:c>k", "closing:r>k")
    assert spanning_tree(["g", "c", "r", "k"], swapped).loop_joints == ["closing"]


def test_root_is_the_parentless_link_reaching_most_links() -> None:
    joints = edges("j1:base>arm", "j2:arm>hand")
    # 'lonely' comes first and is preferred, but reaches only itself
    assert choose_root(["lonely", "base", "arm", "hand"], joints, "lonely") == "base"
    tree = spanning_tree(["lonely", "base", "arm", "hand"], joints, "lonely")
    assert tree.unreachable_links == ["lonely"]


def test_preferred_root_breaks_ties_then_file_order() -> None:
    assert choose_root(["a", "b"], [], preferred_root="b") == "b"
    assert choose_root(["a", "b"], []) == "a"
    # a preferred root with a parent joint cannot be the root
    assert choose_root(["a", "b"], edges("j:a>b"), preferred_root="b") == "a"


def test_directed_cycle_without_a_parentless_link() -> None:
    joints = edges("j1:a>b", "j2:b>c", "j3:c>a")
    tree = spanning_tree(["a", "b", "c"], joints, preferred_root="b")
    assert tree.root == "b"
    assert tree.tree_joints == ["j2", "j3"]
    assert tree.loop_joints == ["j1"]
    assert spanning_tree(["a", "b", "c"], joints).root == "a"


def test_joints_among_unreachable_links_are_reported() -> None:
    joints = edges("j1:a>b", "j2:x>y")
    tree = spanning_tree(["a", "b", "x", "y"], joints, preferred_root="a")
    assert tree.root == "a"
    assert tree.unreachable_links == ["x", "y"]
    assert tree.unreachable_joints == ["j2"]


def test_no_links_is_an_error() -> None:
    with pytest.raises(ValueError, match="at least one link"):
        spanning_tree([], [])
