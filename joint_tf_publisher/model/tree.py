"""Spanning tree of a joint graph: the rule that turns closed kinematic chains into a TF tree.

A TF tree gives every frame one parent. Real mechanisms (four-bar linkages, legged robots with
closing rods, gear trains) may give a link two or more parent joints. This module picks, by a
deterministic rule, the joints that form a tree and reports the rest:

1. Root: among the links that are the child of no joint, the one from which the most links can
   be reached along joints (parent to child); ties go to ``preferred_root`` (SDFormat's canonical
   link), then to the link listed first. If every link is some joint's child (a directed cycle),
   the root is ``preferred_root`` if given, else the first link.
2. Tree: breadth first from the root, one level at a time. At each level the joints whose parent
   was reached at the previous level are scanned in file order; a joint is kept if its child has
   not been reached yet. So every link keeps the parent joint on a shortest chain (fewest joints)
   from the root, and among equally short chains, the joint written first in the file.
3. Every other joint between reached links closes a loop and is left out (``loop_joints``).
   Links the root cannot reach, and the joints among them, are left out too.

Both parsers use it: SDFormat publishes the tree and warns about each loop-closing joint; URDF
forbids loops, so there a non-empty ``loop_joints`` is an error. Joint directions are never
reversed: a joint always publishes its child in its parent's frame.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Protocol


class Edge(Protocol):
    """What the rule needs of a joint: its name and the names of the links it connects."""

    @property
    def name(self) -> str: ...

    @property
    def parent(self) -> str: ...

    @property
    def child(self) -> str: ...


@dataclass
class SpanningTree:
    """The outcome of ``spanning_tree``: names only, each list in the input (file) order."""

    root: str
    tree_joints: list[str] = field(default_factory=list)
    loop_joints: list[str] = field(default_factory=list)
    unreachable_links: list[str] = field(default_factory=list)
    unreachable_joints: list[str] = field(default_factory=list)


def _reachable_count(start: str, children_of: dict[str, list[str]]) -> int:
    seen = {start}
    stack = [start]
    while stack:
        for child in children_of.get(stack.pop(), []):
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return len(seen)


def choose_root(
    link_names: Sequence[str], joints: Sequence[Edge], preferred_root: str | None = None
) -> str:
    """The root link by rule 1 of this module's docstring. ``link_names`` must not be empty."""
    children_of: dict[str, list[str]] = {}
    for joint in joints:
        children_of.setdefault(joint.parent, []).append(joint.child)
    has_parent = {joint.child for joint in joints}
    candidates = [name for name in link_names if name not in has_parent]
    if not candidates:
        if preferred_root is not None and preferred_root in link_names:
            return preferred_root
        return link_names[0]
    # Sort key: most reachable links first, then the preferred root, then file order.
    order = {name: index for index, name in enumerate(link_names)}
    return min(
        candidates,
        key=lambda name: (
            -_reachable_count(name, children_of),
            name != preferred_root,
            order[name],
        ),
    )


def spanning_tree(
    link_names: Sequence[str], joints: Sequence[Edge], preferred_root: str | None = None
) -> SpanningTree:
    """Split ``joints`` into a tree over ``link_names`` and the joints that close loops.

    Joints are taken in the given (file) order; links named by a joint but absent from
    ``link_names`` are the caller's business (check them first). Raises ValueError if
    ``link_names`` is empty.
    """
    if not link_names:
        raise ValueError("a spanning tree needs at least one link")
    root = choose_root(link_names, joints, preferred_root)
    # File positions of the joints leaving each link, to scan one level in file order.
    leaving: dict[str, list[int]] = {}
    for index, joint in enumerate(joints):
        leaving.setdefault(joint.parent, []).append(index)
    reached = {root}
    kept: set[str] = set()
    frontier = [root]
    while frontier:
        next_frontier: list[str] = []
        for index in sorted(i for link in frontier for i in leaving.get(link, ())):
            joint = joints[index]
            if joint.child not in reached:
                reached.add(joint.child)
                next_frontier.append(joint.child)
                kept.add(joint.name)
        frontier = next_frontier
    result = SpanningTree(root=root)
    for joint in joints:
        if joint.name in kept:
            result.tree_joints.append(joint.name)
        elif joint.parent in reached and joint.child in reached:
            result.loop_joints.append(joint.name)
        else:
            result.unreachable_joints.append(joint.name)
    result.unreachable_links = [name for name in link_names if name not in reached]
    return result


def tree_path(joints: Sequence[Edge], link1: str, link2: str) -> list[str]:
    """The tree joints on the path from ``link1`` up to the links' common ancestor and down to
    ``link2``, in that order: the tree part of the cycle a loop joint between them closes.

    ``joints`` is a tree (each link the child of one joint at most); the path is empty where
    ``link1 == link2``. Raises ValueError where the links have no common ancestor.
    """
    parent_joint = {joint.child: joint for joint in joints}

    def up(link: str) -> list[Edge]:
        chain: list[Edge] = []
        while link in parent_joint:
            chain.append(parent_joint[link])
            link = parent_joint[link].parent
        return chain

    chain1, chain2 = up(link1), up(link2)
    ancestors1 = [link1] + [joint.parent for joint in chain1]
    ancestors2 = [link2] + [joint.parent for joint in chain2]
    common = next((link for link in ancestors1 if link in set(ancestors2)), None)
    if common is None:
        raise ValueError(f"links {link1!r} and {link2!r} have no common ancestor")
    down = chain2[: ancestors2.index(common)]
    return [joint.name for joint in chain1[: ancestors1.index(common)]] + [
        joint.name for joint in reversed(down)
    ]
