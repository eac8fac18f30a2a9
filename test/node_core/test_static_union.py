"""The union of the graph's statics without DDS (``node_core.static_union``): every rule of
issue #46, hostile inputs included."""

from __future__ import annotations

import math
from typing import Any

import numpy as np
import pytest
from rclpy.serialization import deserialize_message
from test_pipeline import Rig
from tf2_msgs.msg import TFMessage

from joint_tf_publisher.health.model import GraphFacts, JointStateHealth, Key, Level
from joint_tf_publisher.health.wording import NAMES_SHOWN, union_conflict_entries
from joint_tf_publisher.node_core import static_union
from joint_tf_publisher.node_core.cdr import Publication, TFMessageLayout
from joint_tf_publisher.node_core.static_union import (
    MAX_CONTENDERS,
    MAX_GRAPH_DEPTH,
    MAX_WALK_STEPS,
    Debouncer,
    PublisherId,
    Refusal,
    StaticTransform,
    StaticUnion,
    UnionPublication,
    checked,
)
from joint_tf_publisher.stamps import MAX_STAMP_NS, MIN_STAMP_NS

P = PublisherId(b"p" * 16, "/calibration")
Q = PublisherId(b"q" * 16, "/sensors")
R = PublisherId(b"r" * 16, "/driver")
U = PublisherId(b"u" * 16, "/robot2/joint_tf_publisher")
V = PublisherId(b"v" * 16, "/robot3/joint_tf_publisher")
OWN = PublisherId(b"o" * 16, "/joint_tf_publisher")
IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def tf(parent: str, child: str, x: float = 0.0, stamp_ns: int = 5) -> StaticTransform:
    return StaticTransform(parent, child, stamp_ns, (x, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0))


class Clock:
    def __init__(self) -> None:
        self.ns = 1_000

    def __call__(self) -> int:
        return self.ns


def children(union: StaticUnion) -> dict[str, tuple[str, float]]:
    return {t.child: (t.parent, t.pose[0]) for t in union.transforms()}


# -- per child frame, as tf2 keeps statics --


def test_newer_message_adds_to_earlier_frames() -> None:
    """rclpy's StaticTransformBroadcaster latching only its last sendTransform: the earlier
    frame stays in the union."""
    union = StaticUnion()
    assert union.receive(P, [tf("base", "camera")])
    assert union.receive(P, [tf("base", "lidar")])
    assert children(union) == {"camera": ("base", 0.0), "lidar": ("base", 0.0)}


def test_unchanged_resend_is_no_change() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera"), tf("base", "lidar")])
    version = union.version
    assert not union.receive(P, [tf("base", "camera"), tf("base", "lidar")])
    assert not union.receive(P, [tf("base", "camera", stamp_ns=99)])  # only the stamp
    assert union.version == version
    assert union.transforms()[0].stamp_ns == 5  # the first stamp stays


def test_foreign_transforms_keep_their_stamps() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", stamp_ns=123), tf("base", "lidar", stamp_ns=-7)])
    assert [t.stamp_ns for t in union.transforms()] == [123, -7]


def test_recalibration_by_the_holder_wins_at_once() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    assert union.receive(P, [tf("base", "camera", 0.2)])
    assert children(union)["camera"] == ("base", 0.2)
    assert union.receive(P, [tf("mount", "camera", 0.2)])  # a new parent too
    assert children(union)["camera"] == ("mount", 0.2)
    assert union.conflicts() == []


def test_second_publisher_conflicts_first_keeps_never_flips() -> None:
    clock = Clock()
    union = StaticUnion(steady_ns=clock)
    union.receive(P, [tf("base", "camera", 0.1)])
    clock.ns = 2_000
    assert not union.receive(Q, [tf("base", "camera", 0.2)])
    for _ in range(3):  # both keep sending: no flip-flop
        assert not union.receive(P, [tf("base", "camera", 0.1)])
        assert not union.receive(Q, [tf("base", "camera", 0.2)])
    assert children(union)["camera"] == ("base", 0.1)
    (conflict,) = union.conflicts()
    assert (conflict.frame, conflict.kept, conflict.refused) == ("camera", P, Q)
    assert conflict.since_ns == 2_000
    assert union.new_conflicts() == [conflict]
    assert union.new_conflicts() == []  # warned once
    assert union.refused[Refusal.CONFLICT] == 4


def test_a_conflict_ends_when_they_agree_and_comes_back_new() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    union.receive(Q, [tf("mount", "camera", 0.1)])  # another parent
    assert len(union.new_conflicts()) == 1
    union.receive(Q, [tf("base", "camera", 0.1)])
    assert union.conflicts() == []
    union.receive(Q, [tf("base", "camera", 0.3)])
    assert len(union.new_conflicts()) == 1


def test_holder_leaving_hands_the_frame_to_the_next() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    union.receive(Q, [tf("base", "camera", 0.2)])
    union.receive(R, [tf("base", "camera", 0.3)])
    union.receive(Q, [tf("base", "camera", 0.25)])  # its latest value goes over
    assert union.publisher_left(P.gid)
    assert children(union)["camera"] == ("base", 0.25)
    assert union.holder("camera") == Q
    (conflict,) = union.conflicts()  # R against Q now
    assert (conflict.kept, conflict.refused) == (Q, R)


def test_frames_of_a_publisher_that_left_stay() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera")])
    assert not union.publisher_left(P.gid)
    assert children(union) == {"camera": ("base", 0.0)}
    assert not union.publisher_left(b"never seen")


def test_a_direct_publisher_takes_a_left_publishers_frame_without_conflict() -> None:
    """A restarted static_transform_publisher (a new writer) with a new calibration."""
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    union.publisher_left(P.gid)
    assert union.receive(Q, [tf("base", "camera", 0.2)])
    assert children(union)["camera"] == ("base", 0.2)
    assert union.conflicts() == []


def test_contender_leaving_ends_its_conflict() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    union.receive(Q, [tf("base", "camera", 0.2)])
    union.publisher_left(Q.gid)
    assert union.conflicts() == []
    union.publisher_left(P.gid)
    assert children(union)["camera"] == ("base", 0.1)


# -- own writers, own frames, other unions --


def test_own_writer_is_ignored() -> None:
    union = StaticUnion()
    union.set_own_writers([OWN.gid])
    assert not union.receive(OWN, [tf("base", "camera")])
    assert len(union) == 0


def test_a_foreign_frame_naming_an_own_frame_is_refused() -> None:
    union = StaticUnion()
    union.set_own({"link1": "base_link", "link2": "link1"})
    assert union.receive(P, [tf("base", "link1", 9.0), tf("world", "base_link")])
    assert children(union) == {"base_link": ("world", 0.0)}  # the root link may be given
    assert union.refused[Refusal.OWN_FRAME] == 1
    union.receive(U, [tf("base_link", "link1")])  # another union's echo, not known as one yet
    assert union.refused[Refusal.OWN_FRAME] == 2
    union.set_union_writers([U.gid])
    assert not union.receive(U, [tf("base_link", "link1")])
    assert union.refused[Refusal.OWN_FRAME] == 1  # echoes are not counted, then or now


def test_a_new_own_model_takes_its_frames_back() -> None:
    union = StaticUnion()
    union.receive(P, [tf("link1", "tool")])
    assert union.set_own({"tool": "link1", "link1": "base_link"})
    assert len(union) == 0
    assert union.refused[Refusal.OWN_FRAME] == 1


def test_a_union_copy_never_overrides_nor_conflicts_with_the_owner() -> None:
    union = StaticUnion()
    union.set_union_writers([U.gid])
    union.receive(P, [tf("base", "camera", 0.2)])  # recalibrated
    assert not union.receive(U, [tf("base", "camera", 0.1)])  # U's stale copy
    assert children(union)["camera"] == ("base", 0.2)
    assert union.conflicts() == []
    union.publisher_left(P.gid)  # even once the owner left
    assert not union.receive(U, [tf("base", "camera", 0.1)])
    assert children(union)["camera"] == ("base", 0.2)


def test_a_union_copy_fills_in_and_yields_to_the_direct_publisher() -> None:
    union = StaticUnion()
    union.set_union_writers([U.gid])
    assert union.receive(U, [tf("base", "camera", 0.1), tf("b2", "c2")])  # over a bridge
    assert union.receive(U, [tf("base", "camera", 0.15)])  # the union's newer copy
    assert children(union)["camera"] == ("base", 0.15)
    assert union.receive(P, [tf("base", "camera", 0.2)])
    assert union.holder("camera") == P
    assert union.conflicts() == []


def test_a_writer_learned_late_to_be_a_union_hands_over() -> None:
    union = StaticUnion()
    union.receive(U, [tf("base", "camera", 0.1)])  # its announcement not heard yet
    union.receive(P, [tf("base", "camera", 0.2)])
    assert len(union.conflicts()) == 1
    assert union.set_union_writers([U.gid])
    assert union.holder("camera") == P
    assert union.conflicts() == []


def test_two_unions_echoing_neither_grow_nor_bring_stale_values_back() -> None:
    """Two nodes with the union on, fed each other's copies: the set stays put."""
    a, b = StaticUnion(), StaticUnion()
    a.set_own_writers([U.gid])
    a.set_union_writers([V.gid])
    b.set_own_writers([V.gid])
    b.set_union_writers([U.gid])
    for union in (a, b):
        union.receive(P, [tf("base", "camera", 0.1)])
    for union in (a, b):  # the recalibration
        union.receive(P, [tf("base", "camera", 0.2)])
    stale_a = a.transforms()
    a.receive(V, [tf("base", "camera", 0.1)])  # b's copy, sent before its update
    b.receive(U, stale_a)
    for _ in range(5):
        a_copy, b_copy = a.transforms(), b.transforms()
        assert not a.receive(V, b_copy)
        assert not b.receive(U, a_copy)
    assert children(a) == children(b) == {"camera": ("base", 0.2)}
    assert a.conflicts() == b.conflicts() == []


def test_between_unions_the_first_keeps_and_a_left_one_yields() -> None:
    union = StaticUnion()
    union.set_union_writers([U.gid, V.gid])
    union.receive(U, [tf("base", "camera", 0.1)])
    assert not union.receive(V, [tf("base", "camera", 0.2)])
    assert union.conflicts() == []
    union.publisher_left(U.gid)
    assert union.receive(V, [tf("base", "camera", 0.2)])
    assert union.holder("camera") == V


# -- refused transforms --


@pytest.mark.parametrize(
    ("transform", "reason"),
    [
        (tf("", "camera"), Refusal.BAD_NAME),
        (tf("base", ""), Refusal.BAD_NAME),
        (tf("base", "c" * 257), Refusal.BAD_NAME),
        (tf("base", "cam\nera"), Refusal.BAD_NAME),
        (tf("base", "//camera"), Refusal.BAD_NAME),  # a listener would strip one more
        (tf("/", "camera"), Refusal.BAD_NAME),
        (tf("/camera", "camera"), Refusal.OWN_PARENT),  # one frame to tf2
        (tf("base", "camera", stamp_ns=MAX_STAMP_NS + 1), Refusal.BAD_STAMP),
        (tf("base", "camera", stamp_ns=MIN_STAMP_NS - 1), Refusal.BAD_STAMP),
        (tf("base", "camera", stamp_ns=10**400), Refusal.BAD_STAMP),
        (tf("camera", "camera"), Refusal.OWN_PARENT),
        (tf("base", "camera", math.nan), Refusal.NOT_FINITE),
        (tf("base", "camera", math.inf), Refusal.NOT_FINITE),
        (StaticTransform("base", "camera", 0, (0, 0, 0, 0, 0, 0, 1.006)), Refusal.NOT_UNIT),
        (StaticTransform("base", "camera", 0, (0, 0, 0, 0, 0, 0, 0.0)), Refusal.NOT_UNIT),
        (StaticTransform("base", "camera", 0, (0, 0, 0, 0, 0, 0, math.nan)), Refusal.NOT_FINITE),
    ],
)
def test_refused_on_its_own_values(transform: StaticTransform, reason: Refusal) -> None:
    union = StaticUnion()
    assert not union.receive(P, [transform])
    assert union.refused == {reason: 1}
    assert checked(transform) is reason


def test_a_leading_slash_is_one_frame_as_tf2_strips_it() -> None:
    """tf2 strips one leading '/' (``stripSlash``): "/link1" is the node's own link1, "/a"
    and "a" are one frame, to the own-frame rule, the cycle check and the conflicts alike;
    the union gives the name as a listener keeps it."""
    union = StaticUnion()
    union.set_own({"link1": "/base_link"})
    assert not union.receive(P, [tf("world", "/link1")])
    assert union.refused == {Refusal.OWN_FRAME: 1}
    assert union.receive(P, [tf("b", "/a")])
    assert not union.receive(Q, [tf("a", "/b")])  # b -> a -> b to tf2
    assert union.refused == {Refusal.OWN_FRAME: 1, Refusal.CYCLE: 1}
    assert not union.receive(Q, [tf("c", "a")])  # a second parent of one frame
    assert [(c.frame, c.refused) for c in union.conflicts()] == [("a", Q)]
    assert [(t.parent, t.child) for t in union.transforms()] == [("b", "a")]
    assert not union.receive(P, [tf("/b", "a")])  # the same transform again: no change
    # the node's own root's parent given with a slash closes the cycle too
    assert not union.receive(R, [tf("/link1", "base_link")])
    assert union.refused[Refusal.CYCLE] == 2


def test_stamps_on_the_edges_of_builtin_interfaces_time_are_kept() -> None:
    union = StaticUnion()
    union.receive(
        P, [tf("b", "early", stamp_ns=MIN_STAMP_NS), tf("b", "late", stamp_ns=MAX_STAMP_NS)]
    )
    assert [t.stamp_ns for t in union.transforms()] == [MIN_STAMP_NS, MAX_STAMP_NS]
    message = deserialize_message(
        UnionPublication().build(None, union.transforms()).to_bytes(), TFMessage
    )
    assert [(t.header.stamp.sec, t.header.stamp.nanosec) for t in message.transforms] == [
        (-(2**31), 0),
        (2**31 - 1, 999_999_999),
    ]


def test_a_rotation_with_small_drift_is_normalised() -> None:
    union = StaticUnion()
    union.receive(P, [StaticTransform("base", "camera", 0, (0, 0, 0, 0, 0, 0, 1.004))])
    (kept,) = union.transforms()
    assert kept.pose[6] == pytest.approx(1.0, abs=1e-15)


def test_a_frame_ids_longest_length_is_taken() -> None:
    union = StaticUnion()
    assert union.receive(P, [tf("b" * 256, "c" * 256)])


def test_cycles_through_the_union_are_refused() -> None:
    union = StaticUnion()
    union.receive(P, [tf("a", "b"), tf("b", "c")])
    assert not union.receive(Q, [tf("c", "a")])
    assert union.refused == {Refusal.CYCLE: 1}
    assert not union.receive(P, [tf("c", "b")])  # the holder moving b below c
    assert union.refused == {Refusal.CYCLE: 2}
    assert children(union) == {"b": ("a", 0.0), "c": ("b", 0.0)}


def test_cycles_through_the_own_tree_are_refused() -> None:
    union = StaticUnion()
    union.set_own({"link1": "base_link", "tool": "link1"})
    union.receive(P, [tf("world", "base_link")])
    assert not union.receive(P, [tf("tool", "world")])
    assert union.refused == {Refusal.CYCLE: 1}


def test_a_new_own_model_that_closes_a_cycle_drops_the_union_frame() -> None:
    union = StaticUnion()
    union.receive(P, [tf("tool", "world")])
    assert union.set_own({"base_link": "world", "tool": "base_link"})
    assert len(union) == 0
    assert union.refused == {Refusal.CYCLE: 1}


def test_a_chain_deeper_than_tf2_looks_up_is_refused() -> None:
    union = StaticUnion()
    chain = [tf(f"f{k}", f"f{k + 1}") for k in range(MAX_GRAPH_DEPTH + 5)]
    assert union.receive(P, chain)  # leaves as they come: all taken
    # a frame that has children, hung below the chain's end: walks up, too deep
    union.receive(P, [tf("x", "y")])
    assert not union.receive(P, [tf(f"f{MAX_GRAPH_DEPTH + 5}", "x")])
    assert union.refused == {Refusal.TOO_DEEP: 1}


def test_a_chain_as_deep_as_tf2_looks_up_is_taken_and_one_more_is_not() -> None:
    """tf2 walks at most ``MAX_GRAPH_DEPTH`` parents: a frame (with a child of its own, so
    it is walked) hung from a frame whose chain to the root holds that many frames is
    taken, from one a frame deeper refused; a new model of the node's own judges the same
    (its one pass over the union)."""
    chain = [tf(f"c{k}", f"c{k + 1}") for k in range(MAX_GRAPH_DEPTH + 1)]
    for parent_chain, taken in ((MAX_GRAPH_DEPTH, True), (MAX_GRAPH_DEPTH + 1, False)):
        union = StaticUnion()
        union.receive(P, [*chain, tf("x", "y")])
        # c<k>'s chain to the root c0 holds k + 1 frames
        assert union.receive(P, [tf(f"c{parent_chain - 1}", "x")]) is taken
        assert union.refused == ({} if taken else {Refusal.TOO_DEEP: 1})
        # frames taken as leaves as they came (no walk), judged by a new model's one pass
        leaves = StaticUnion()
        leaves.receive(P, chain[:parent_chain])  # c<parent_chain> hangs from c<parent_chain - 1>
        assert leaves.set_own({"link1": "base_link"}) is not taken
        assert leaves.refused == ({} if taken else {Refusal.TOO_DEEP: 1})


def test_walks_that_refuse_spend_the_messages_budget_too() -> None:
    """A message repeating a frame that closes a cycle 990 frames around, or hanging 1000
    parents below a chain deeper than tf2 looks up: each refusal's walk counts, so after
    ``MAX_WALK_STEPS`` the rest are refused unwalked (a hostile message cannot walk forever
    by being refused)."""
    cycle = StaticUnion(max_frames=20_000)
    cycle.receive(P, [tf("X", "L1"), *(tf(f"L{k}", f"L{k + 1}") for k in range(1, 990))])
    cycle.receive(P, [tf("L990", "X")] * 1000)  # X is L1's parent: each walks L990 .. L1
    walked = -(-MAX_WALK_STEPS // 990)
    assert cycle.refused == {Refusal.CYCLE: walked, Refusal.WALKS: 1000 - walked}
    deep = StaticUnion(max_frames=20_000)
    deep.receive(P, [tf(f"L{k}", f"L{k + 1}") for k in range(MAX_GRAPH_DEPTH + 1)])
    deep.receive(P, [tf(f"c{j}", f"d{j}") for j in range(1000)])
    deep.receive(P, [tf(f"L{MAX_GRAPH_DEPTH + 1}", f"c{j}") for j in range(1000)])
    walked = -(-MAX_WALK_STEPS // (MAX_GRAPH_DEPTH + 1))
    assert deep.refused == {Refusal.TOO_DEEP: walked, Refusal.WALKS: 1000 - walked}


@pytest.mark.parametrize("depth", [MAX_GRAPH_DEPTH - 10, 499])
def test_one_messages_cycle_checks_are_bounded(depth: int) -> None:
    """A hostile message whose frames each have a child and hang below a chain ``depth``
    deep: each check walks ``depth + 1`` frames, so after ``MAX_WALK_STEPS`` the rest are
    refused (499: 400 checks spend the budget exactly, the 401st is refused), and a leaf after
    them is still taken; the next message has a budget of its own."""
    union = StaticUnion(max_frames=20_000)
    message = [tf(f"L{i}", f"L{i + 1}") for i in range(depth)]
    for j in range(1000):
        message += [tf(f"c{j}", f"d{j}"), tf(f"L{depth}", f"c{j}")]
    message.append(tf("base", "leaf"))
    union.receive(P, message)
    walks = union.refused[Refusal.WALKS]
    assert walks == 1000 - -(-MAX_WALK_STEPS // (depth + 1))  # each check: depth + 1 steps
    assert union.holder("leaf") == P
    assert union.refused.keys() == {Refusal.WALKS}
    union.receive(P, [tf(f"L{depth}", "c999")])
    assert union.holder("c999") == P


def test_ten_thousand_frames_in_one_message() -> None:
    """A hostile message: 10,000 frames in a chain, given backwards (each new frame a parent
    already: its new parent's ancestors walked, none yet), then again (unchanged), then in
    order into a second union (each a leaf: no walk), then a cycle closed at the end."""
    backwards, forwards = StaticUnion(), StaticUnion()
    chain = [tf(f"f{k}", f"f{k + 1}") for k in range(10_000)]
    assert backwards.receive(P, list(reversed(chain)))
    assert not backwards.receive(P, chain)
    assert forwards.receive(P, chain)
    assert len(backwards) == len(forwards) == 10_000
    assert not forwards.receive(Q, [tf("f10000", "f0")])
    assert forwards.refused == {Refusal.TOO_DEEP: 1}  # beyond tf2's depth: no walk of 10,000


class CountingFrames(dict[str, Any]):
    """The union's frames, counting the lookups of its tree walks (``get``): the walks'
    cost, counted, not timed."""

    lookups = 0

    def get(self, *args: Any) -> Any:
        self.lookups += 1
        return super().get(*args)


def counted(union: StaticUnion) -> CountingFrames:
    union._frames = frames = CountingFrames(union._frames)
    return frames


END = MAX_GRAPH_DEPTH - 2


def deep_union(below: int) -> StaticUnion:
    """A chain c0..c998, then ``below`` frames m<k> hung from its end, each with a leaf l<k>
    (so each m<k> is a parent: moving it walks up its new parent's ancestors): the leaves as
    deep as tf2 looks up."""
    union = StaticUnion()
    chain = [tf(f"c{k}", f"c{k + 1}") for k in range(END)]
    hung = [tf(f"c{END}", f"m{k}") for k in range(below)]
    leaves = [tf(f"m{k}", f"l{k}") for k in range(below)]
    assert union.receive(P, chain + hung + leaves)
    return union


def test_moving_frames_below_a_deep_chain_is_bounded_too() -> None:
    """A hostile publisher moving 4000 parents below a chain 1000 deep: each move walked up
    the chain, 4 million steps (2.7 s) for one message, and again for each resend. A move
    walks within the message's ``MAX_WALK_STEPS`` as a new frame does: the rest is refused
    and counted, and the frames stay where they were."""
    union = deep_union(4000)
    frames = counted(union)
    moved = [tf(f"c{END - 1}", f"m{k}") for k in range(4000)]
    union.receive(P, moved)
    assert frames.lookups <= MAX_WALK_STEPS + MAX_GRAPH_DEPTH + 2 * 4000
    assert union.refused[Refusal.WALKS] >= 3700
    assert sum(t.parent == f"c{END}" for t in union.transforms()) >= 3700


def test_a_real_tree_moved_at_once_is_within_the_steps() -> None:
    """100 parents moved at once, each below 50 ancestors: all taken."""
    union = StaticUnion()
    union.receive(P, [tf(f"c{k}", f"c{k + 1}") for k in range(50)])
    union.receive(
        P, [tf("c50", f"m{k}") for k in range(100)] + [tf(f"m{k}", f"l{k}") for k in range(100)]
    )
    assert union.receive(P, [tf("c49", f"m{k}") for k in range(100)])
    assert union.refused == {}
    assert sum(t.parent == "c49" for t in union.transforms()) == 101


def test_a_new_own_model_walks_each_frame_once() -> None:
    """``set_own`` checked each union frame with a walk of its own: 10 million steps (5.4 s)
    for 9000 frames below a chain 1000 deep, at each change of the node's model. One pass
    now; the same model again costs nothing."""
    union = deep_union(4500)
    frames = counted(union)
    assert not union.set_own({"link1": "base_link"})
    assert frames.lookups <= 3 * len(union)
    assert len(union) == END + 2 * 4500
    lookups = frames.lookups
    assert not union.set_own({"link1": "base_link"})
    assert frames.lookups == lookups


def test_a_new_own_model_cuts_each_cycle_once_and_drops_what_hangs_too_deep() -> None:
    union = StaticUnion()
    # two cycles to come through the own tree: x -> tool -> base_link -> x, y -> z -> tool2 ...
    union.receive(P, [tf("tool", "x"), tf("x", "base_link"), tf("tool2", "y"), tf("y", "z")])
    union.receive(P, [tf("z", "w")])  # hangs from a cycle: stays once the cycle is cut
    assert union.set_own({"tool": "base_link", "tool2": "z"})
    assert union.refused == {Refusal.CYCLE: 2}
    assert sorted(children(union)) == ["base_link", "w", "z"]
    deep = StaticUnion()
    deep.receive(P, [tf(f"c{k}", f"c{k + 1}") for k in range(MAX_GRAPH_DEPTH + 2)])
    # taken as leaves as they came; a new model cuts the first beyond tf2's depth
    assert deep.set_own({"link1": "base_link"})
    assert deep.refused == {Refusal.TOO_DEEP: 1}
    assert "c1001" not in children(deep)
    assert len(deep) == MAX_GRAPH_DEPTH + 1


# -- the cap --


def test_frames_beyond_the_cap_are_refused_and_counted() -> None:
    union = StaticUnion(max_frames=10)
    union.receive(P, [tf("base", f"m{k}") for k in range(25)])
    assert len(union) == 10
    assert union.refused == {Refusal.OVER_CAP: 15}


def test_one_publisher_cannot_take_it_all() -> None:
    union = StaticUnion(max_frames=10)
    union.receive(P, [tf("base", f"m{k}") for k in range(10)])  # fills an empty union
    assert union.receive(Q, [tf("base", f"q{k}") for k in range(8)])
    held = {t.child for t in union.transforms()}
    assert sum(name.startswith("q") for name in held) == 5  # its fair share: 10 // 2
    assert sum(name.startswith("m") for name in held) == 5  # P's newest went
    assert union.refused == {Refusal.OVER_CAP: 8}  # 5 evicted of P, 3 beyond Q's share


def test_a_lower_cap_evicts_the_largest_holders_newest_frames() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", f"m{k}") for k in range(6)])
    union.receive(Q, [tf("base", "q0")])
    assert union.set_max_frames(4)
    assert [t.child for t in union.transforms()] == ["m0", "m1", "m2", "q0"]
    assert union.refused == {Refusal.OVER_CAP: 3}


class CountingRecords(dict[bytes, Any]):
    """The union's writers, counting the scans over them (``values``)."""

    scans = 0

    def values(self) -> Any:
        self.scans += 1
        return super().values()


def test_a_lower_cap_scans_the_holders_once() -> None:
    """Any participant may set the cap: 100,000 frames of 1000 publishers lowered to 1 scanned
    every holder for each frame evicted (115 s). The holders are scanned once now; the
    largest still yields first, its newest frames first."""
    union = StaticUnion(max_frames=3000)
    for k in range(300):
        union.receive(
            PublisherId(k.to_bytes(16, "big")), [tf("b", f"p{k}_{i}") for i in range(k % 3 + 8)]
        )
    union._records = records = CountingRecords(union._records)
    assert union.set_max_frames(300 * 8)
    assert records.scans <= 2
    assert len(union) == 300 * 8
    assert sorted(
        {len([t for t in union.transforms() if t.child.startswith(f"p{k}_")]) for k in range(300)}
    ) == [8]
    assert union.refused == {Refusal.OVER_CAP: 300}
    assert all(union.holder(f"p{k}_7") is not None for k in range(300))


def test_contenders_remembered_are_bounded() -> None:
    union = StaticUnion(max_frames=MAX_CONTENDERS + 10)
    frames = [tf("base", f"m{k}") for k in range(MAX_CONTENDERS + 5)]
    union.receive(P, frames)
    assert not union.receive(Q, [t._replace(pose=(1.0, *t.pose[1:])) for t in frames])
    assert len(union.conflicts()) == MAX_CONTENDERS
    assert union.refused[Refusal.CONFLICT] == MAX_CONTENDERS + 5


# -- the debouncer --


def test_debouncer_sends_at_once_then_at_most_once_an_interval() -> None:
    clock = Clock()
    debouncer = Debouncer(100, clock)
    assert debouncer.wait_ns() is None
    debouncer.changed()
    assert debouncer.due()
    debouncer.sent()
    clock.ns += 30
    debouncer.changed()
    assert debouncer.wait_ns() == 70
    clock.ns += 70
    assert debouncer.due()
    debouncer.sent()
    assert debouncer.wait_ns() is None


# -- the message and the report --


def test_union_publication_own_first_then_foreign_with_their_stamps() -> None:
    own_layout = TFMessageLayout([("base_link", "link1")])
    global_layout = TFMessageLayout([("g/base_link", "g/link1")])
    own = Publication(own_layout, 42, np.array([IDENTITY]), global_layout)
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.5, stamp_ns=7_000_000_001)])
    publication = UnionPublication().build(own, union.transforms())
    assert publication is not None
    message = deserialize_message(publication.to_bytes(), TFMessage)
    assert [(t.header.frame_id, t.child_frame_id) for t in message.transforms] == [
        ("base_link", "link1"),
        ("base", "camera"),
    ]
    assert (message.transforms[1].header.stamp.sec, message.transforms[1].header.stamp.nanosec) == (
        7,
        1,
    )
    assert message.transforms[0].header.stamp.nanosec == 42
    in_global = publication.in_global_tree()
    assert in_global is not None and in_global.layout.frames == (("g/base_link", "g/link1"),)
    assert UnionPublication().build(own, []) is own


def test_health_report_shows_the_union_and_warns_of_conflicts() -> None:
    clock = Clock()
    union = StaticUnion(max_frames=100, steady_ns=clock)
    union.receive(P, [tf("base", "camera", 0.1), tf("x", "x")])
    union.receive(Q, [tf("base", "camera", 0.2)])
    health = JointStateHealth(steady_ns=clock)
    health.union = union.facts()
    clock.ns += 3_000_000_000
    report = health.report(GraphFacts({}, 0))
    values = dict(report.values)
    assert values[Key.UNION_FRAMES] == "1 of 100"
    assert values[Key.UNION_PUBLISHERS] == "1, /calibration"
    assert "frame is its own parent (1x)" in values[Key.UNION_REFUSED]
    assert values[Key.UNION_CONFLICTS] == "camera (kept /calibration, refused /sensors)"
    warnings = [c.message for c in report.conditions if c.level == Level.WARN]
    assert any("'camera'" in m and "/calibration" in m and "/sensors" in m for m in warnings)
    assert any("refused by the static union" in m for m in warnings)
    second = health.report(GraphFacts({}, 0))  # no new refusals: not warned again
    assert not any("refused by the static union" in c.message for c in second.conditions)


def test_a_publisher_contending_for_every_frame_is_named_ten_times_then_counted() -> None:
    """A publisher giving 10,000 frames another holds with other values: 10,000 conflicts.
    The report names the oldest ``NAMES_SHOWN`` and counts the rest (each report listed and
    sorted them all, 77 ms after every message, a 600 KB value and 10,000 WARNs each period);
    ``new_conflicts`` gives each once, and again once it ended and came back."""
    clock = Clock()
    union = StaticUnion(steady_ns=clock)
    union.receive(P, [tf("base", f"f{k}") for k in range(10_000)])
    for k in range(10_000):
        clock.ns += 1
        union.receive(Q, [tf("base", f"f{k}", 1.0)])
    facts = union.facts()
    assert [c.frame for c in facts.conflicts] == [f"f{k}" for k in range(NAMES_SHOWN)]
    assert facts.more_conflicts == 10_000 - NAMES_SHOWN
    assert len(union.new_conflicts()) == 10_000
    assert union.new_conflicts() == []
    union.receive(Q, [tf("base", "f5")])  # agrees: over
    union.receive(Q, [tf("base", "f5", 1.0)])  # and again
    assert [c.frame for c in union.new_conflicts()] == ["f5"]
    health = JointStateHealth(steady_ns=clock)
    health.union = facts
    report = health.report(GraphFacts({}, 0))
    value = dict(report.values)[Key.UNION_CONFLICTS]
    assert value.startswith("f0 (kept /calibration, refused /sensors); f1 ")
    assert value.endswith(f" and {10_000 - NAMES_SHOWN} more")
    # 1000 more publishers holding a frame each: the first 10 named, all counted
    for k in range(1000):
        union.receive(PublisherId(k.to_bytes(16, "big"), f"/w{k:04}"), [tf("base", f"w{k}")])
    health.union = union.facts()
    publishers = dict(health.report(GraphFacts({}, 0)).values)[Key.UNION_PUBLISHERS]
    named = ", ".join(["/calibration", *(f"/w{k:04}" for k in range(9))])
    assert publishers == f"1001, {named} and 991 more"
    entries = union_conflict_entries(value)  # as doctor reads it: the last one too
    assert [frame for frame, _, _ in entries] == [f"f{k}" for k in range(NAMES_SHOWN)]
    warnings = [c.message for c in report.conditions if "given differently" in c.message]
    assert len(warnings) == NAMES_SHOWN + 1
    assert warnings[-1].startswith(f"{10_000 - NAMES_SHOWN} more static frame(s)")


def test_the_global_trees_frames_are_the_nodes_own_too() -> None:
    """With ``global_frame_prefix`` the node publishes its frames twice; where its own
    ``/tf_static`` is not remapped both go on ``/tf_static``: a foreign ``g/link_1`` went out in
    the union's message beside the global tree's own. Its global root may still be hung."""
    rig = Rig(global_frame_prefix="g/")
    static_child = rig.pipeline.static_publication(0).layout.frames[0][1]  # type: ignore[union-attr]
    union = StaticUnion()
    union.set_own(rig.pipeline.own_transforms())
    for child in ("link_1", "g/link_1", static_child, f"g/{static_child}"):
        assert not union.receive(P, [tf("world", child)]), child
    assert union.refused == {Refusal.OWN_FRAME: 4}
    assert union.receive(P, [tf("world", "g/base_link"), tf("world", "base_link")])


def test_one_rotation_given_with_either_sign_is_one_value() -> None:
    """q and -q are one rotation (tf2 takes either): a second publisher giving the other sign
    was a conflict, and the owner's resend with it a change."""
    union = StaticUnion()
    q = (0.0, 0.0, 0.6, 0.8)
    negative = tuple(-v for v in q)
    union.receive(P, [StaticTransform("base", "camera", 5, (1.0, 0.0, 0.0, *q))])
    assert not union.receive(P, [StaticTransform("base", "camera", 5, (1.0, 0.0, 0.0, *negative))])
    assert not union.receive(Q, [StaticTransform("base", "camera", 5, (1.0, 0.0, 0.0, *negative))])
    assert union.conflicts() == []
    half_turn = (0.0, 0.0, -1.0, 0.0)  # w = 0: z's sign decides
    union.receive(R, [StaticTransform("base", "lidar", 5, (0.0, 0.0, 0.0, *half_turn))])
    assert not union.receive(
        Q, [StaticTransform("base", "lidar", 5, (0.0, 0.0, 0.0, 0, 0, 1.0, 0))]
    )
    assert union.conflicts() == []
    assert [t.pose[3:] for t in union.transforms()] == [q, (-0.0, -0.0, 1.0, -0.0)]


def test_a_writer_no_longer_a_union_holds_its_frames_as_a_direct_publisher() -> None:
    """A node that turns its union off is no union any more: its own frames, taken while it
    was one, were copies that any publisher took over silently."""
    union = StaticUnion()
    union.set_union_writers([U.gid])
    union.receive(U, [tf("world", "robot2/base_link")])
    union.set_union_writers([])
    assert not union.receive(Q, [tf("world", "robot2/base_link", 5.0)])
    assert union.holder("robot2/base_link") == U
    assert [(c.kept, c.refused) for c in union.conflicts()] == [(U, Q)]


# -- what make mutate found unguarded (issue #44) --


def test_graph_names_name_the_writers_in_reports() -> None:
    """A writer first heard without its node's name (a GID only) is named in the union's
    reports once the graph gives the name; an empty name from the graph keeps the one known."""
    unnamed, named = PublisherId(b"w" * 16), PublisherId(b"x" * 16, "/x")
    union = StaticUnion()
    union.receive(unnamed, [tf("base", "camera")])
    union.receive(named, [tf("base", "lidar")])
    union.receive(PublisherId(Q.gid), [tf("base", "camera", 1.0)])  # a conflict, unnamed
    assert union.writers() == {unnamed.gid, named.gid, Q.gid}
    first = union.holder("camera")
    assert first is not None and first.shown == f"writer {'77' * 16}"  # b"w": 0x77
    union.set_names({unnamed.gid: "/calibration", named.gid: "", Q.gid: "/sensors"})
    camera, lidar = union.holder("camera"), union.holder("lidar")
    assert camera is not None and (camera.gid, camera.shown) == (unnamed.gid, "/calibration")
    assert lidar is not None and (lidar.gid, lidar.shown) == (named.gid, "/x")
    facts = union.facts()
    assert facts.publishers == ("/calibration", "/x")
    assert [(c.frame, c.kept, c.refused) for c in facts.conflicts] == [
        ("camera", "/calibration", "/sensors")
    ]


def test_a_handover_the_tree_refuses_leaves_the_frame_where_it_was() -> None:
    """The holder's only contender would close a cycle: when the holder leaves its frame stays
    with it (no change), and when it turns out to be the node's own writer its frames go."""
    for own in (False, True):
        union = StaticUnion()
        union.receive(P, [tf("a", "b"), tf("b", "c")])
        union.receive(Q, [tf("c", "b")])  # b below c: a conflict, remembered for a handover
        assert len(union.conflicts()) == 1
        if own:
            assert union.set_own_writers([P.gid]) is True
            assert children(union) == {}
        else:
            assert union.publisher_left(P.gid) is False
            assert children(union) == {"b": ("a", 0.0), "c": ("b", 0.0)}
            assert union.holder("b") == P
        assert union.refused[Refusal.CYCLE] == 1


def test_own_writers_learned_late_lose_their_frames_and_say_so() -> None:
    """``set_own_writers`` says whether the set changed, as a bool (the node's adapter ors it
    with others): False where the union held nothing of them; True where one of them held a
    frame (which goes), however many others only contended (their order is a set's)."""
    union = StaticUnion()
    union.receive(R, [tf("base", "lidar")])
    contenders = [PublisherId(bytes([k]) * 16) for k in range(30)]
    for contender in contenders:  # each remembered, in conflict with R
        union.receive(contender, [tf("base", "lidar", 1.0)])
    union.receive(P, [tf("base", "camera")])
    assert union.set_own_writers([OWN.gid]) is False
    assert union.set_own_writers([P.gid, *(c.gid for c in contenders)]) is True
    assert children(union) == {"lidar": ("base", 0.0)}
    assert union.conflicts() == []
    assert union.writers() == {R.gid}  # the own writers forgotten
    assert union.set_own_writers([P.gid]) is False  # nothing of them left


def test_a_frame_taken_from_a_union_is_no_longer_its_own() -> None:
    """A direct publisher took a union's copy; when the union leaves, the frame it no longer
    holds is not handed on (to the new holder's contender) and it is no holder in reports."""
    union = StaticUnion()
    union.set_union_writers([U.gid])
    union.receive(U, [tf("base", "camera", 0.1)])
    assert union.receive(P, [tf("base", "camera", 0.2)])
    union.receive(Q, [tf("base", "camera", 0.3)])  # in conflict with P
    assert union.facts().publishers == ("/calibration",)
    assert union.publisher_left(U.gid) is False
    assert union.holder("camera") == P
    assert [(c.kept, c.refused) for c in union.conflicts()] == [(P, Q)]


def test_a_left_publisher_is_forgotten_once_its_last_frame_is_taken() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera"), tf("base", "lidar")])
    union.publisher_left(P.gid)
    assert union.receive(Q, [tf("base", "camera", 0.5)])
    assert union.holder("lidar") == P  # still its frame, and it is still remembered
    assert union.writers() == {P.gid, Q.gid}
    assert union.receive(Q, [tf("base", "lidar", 0.5)])
    assert union.writers() == {Q.gid}
    assert union.facts().publishers == ("/sensors",)


def test_a_frame_handed_over_below_a_new_parent_keeps_the_tree_checked() -> None:
    """A handover moves the frame to its new holder's parent: that parent then has it as a
    child (a frame hung above it later closes a cycle, refused), and the new holder contends
    with itself no more (its own recalibration is no conflict)."""
    union = StaticUnion()
    union.receive(P, [tf("a", "b", 0.1), tf("c", "x1"), tf("c", "x2")])  # c: two children
    union.receive(Q, [tf("c", "b", 0.2)])  # another parent: a conflict, remembered
    version = union.version
    assert union.publisher_left(P.gid)  # b to Q, below c
    assert union.version > version
    assert children(union)["b"] == ("c", 0.2)
    assert union.receive(Q, [tf("a", "x1")])  # x1 from the left P: c keeps x2 and b
    assert not union.receive(R, [tf("b", "c")])  # c below its own child b
    assert union.refused == {Refusal.CONFLICT: 1, Refusal.CYCLE: 1}
    assert union.receive(Q, [tf("c", "b", 0.3)])  # Q recalibrates its frame
    assert union.conflicts() == []


def test_a_union_learned_late_hands_a_parent_frame_over_below_its_new_parent() -> None:
    """The handover walks the tree (the frame has a child) within a budget of its own; the
    earliest direct publisher takes it below its parent."""
    union = StaticUnion()
    union.receive(U, [tf("a", "b", 0.1), tf("b", "c")])  # its announcement not heard yet
    union.receive(P, [tf("d", "b", 0.2)])
    assert union.set_union_writers([U.gid]) is True
    assert children(union) == {"b": ("d", 0.2), "c": ("b", 0.0)}
    assert union.holder("b") == P and union.conflicts() == []


def test_union_writers_announced_or_ceasing_change_only_their_own_records() -> None:
    union = StaticUnion()
    union.set_own({"link1": "base_link"})
    union.receive(U, [tf("base_link", "link1")])  # an echo, not known as one yet: counted
    union.receive(V, [tf("base", "camera", 0.1)])
    assert union.set_union_writers([U.gid, V.gid]) is False  # no frame changed hands
    assert union.refused == {}  # the echo uncounted
    assert union.set_union_writers([V.gid, Q.gid]) is False  # U ceased, Q never seen
    assert union.receive(P, [tf("base", "camera", 0.2)])  # V still a union: a copy, taken
    assert union.holder("camera") == P and union.conflicts() == []
    union.receive(U, [tf("base_link", "link1")])  # U direct again: counted again
    assert union.refused == {Refusal.OWN_FRAME: 1}
    union.set_union_writers([U.gid, V.gid])  # and a union once more: uncounted again
    assert union.refused == {}


def test_a_writer_learned_to_be_a_union_contends_no_more() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    union.receive(U, [tf("base", "camera", 0.2)])  # a conflict, while U seems direct
    assert len(union.conflicts()) == 1
    union.set_union_writers([U.gid])
    assert union.conflicts() == []
    assert not union.publisher_left(P.gid)  # the frame stays with P: no copy takes it
    assert children(union) == {"camera": ("base", 0.1)}


def test_a_union_learned_late_says_a_change_when_any_of_its_frames_changed_hands() -> None:
    """Its frames handed over in the order they came: the first taken, the last refused."""
    union = StaticUnion()
    union.receive(U, [tf("a", "b1", 0.1), tf("a", "b2"), tf("b2", "c")])
    union.receive(P, [tf("a", "b1", 0.2)])
    union.receive(Q, [tf("c", "b2")])  # would close a cycle
    assert union.set_union_writers([U.gid]) is True
    assert union.holder("b1") == P and union.holder("b2") == U
    assert union.refused[Refusal.CYCLE] == 1


def test_union_publication_keeps_its_layout_while_the_frames_stay() -> None:
    """A recalibration costs no new layout; a new frame gets one, and the message holds it.
    Integer values (a ``Pose`` typed as floats may hold ints) go out as the doubles they are."""
    builder, union = UnionPublication(), StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    first = builder.build(None, union.transforms())
    union.receive(P, [tf("base", "camera", 0.2)])
    second = builder.build(None, union.transforms())
    assert first is not None and second is not None and second.layout is first.layout
    union.receive(Q, [StaticTransform("base", "lidar", 0, (1, 2, 3, 0, 0, 0, 1))])
    third = builder.build(None, union.transforms())
    assert third is not None
    message = deserialize_message(third.to_bytes(), TFMessage)
    assert [(t.child_frame_id, t.transform.translation.x) for t in message.transforms] == [
        ("camera", 0.2),
        ("lidar", 1.0),
    ]
    assert message.transforms[1].transform.translation.z == 3.0


def test_union_publication_with_a_global_tree_keeps_the_own_stamp_there() -> None:
    own_layout = TFMessageLayout([("base_link", "link1")])
    global_layout = TFMessageLayout([("g/base_link", "g/link1")])
    own = Publication(own_layout, 7_000_000_042, np.array([IDENTITY]), global_layout)
    publication = UnionPublication().build(own, [tf("base", "camera", stamp_ns=5)])
    in_global = publication.in_global_tree() if publication is not None else None
    assert in_global is not None
    message = deserialize_message(in_global.to_bytes(), TFMessage)
    assert [(t.header.stamp.sec, t.header.stamp.nanosec) for t in message.transforms] == [(7, 42)]


def test_a_new_cap_evicts_exactly_the_excess_and_says_so() -> None:
    union = StaticUnion(max_frames=10)
    union.receive(P, [tf("base", f"m{k}") for k in range(4)])
    assert union.set_max_frames(5) is False  # room still
    assert union.set_max_frames(4) is False  # full, nothing beyond
    assert (union.max_frames, union.facts().max_frames) == (4, 4)
    assert not union.receive(P, [tf("base", "m4")])
    assert union.set_max_frames(3) is True  # one beyond: the newest goes
    assert [t.child for t in union.transforms()] == ["m0", "m1", "m2"]
    assert union.refused == {Refusal.OVER_CAP: 2}


def test_a_frame_moved_by_its_holder_keeps_the_tree_checked_and_settles_its_conflicts() -> None:
    """The holder moving a frame below a new parent: that parent has it as a child (a frame
    hung above it later closes a cycle, refused); a contender giving the new value agrees."""
    union = StaticUnion()
    union.receive(P, [tf("a", "b", 0.1), tf("c", "x1"), tf("c", "x2")])  # c: two children
    union.receive(Q, [tf("c", "b", 0.2)])  # a conflict
    assert len(union.conflicts()) == 1
    assert union.receive(P, [tf("c", "b", 0.2)])  # P moves b below c: Q agrees now
    assert union.conflicts() == []
    assert union.receive(P, [tf("a", "x1")])  # c keeps x2 and b
    assert not union.receive(R, [tf("b", "c")])  # c below its own child b
    assert union.refused == {Refusal.CONFLICT: 1, Refusal.CYCLE: 1}


def test_a_holders_change_settles_each_contenders_conflict() -> None:
    """The holder changing its frame: a contender that disagrees now has a conflict (new:
    given once, since now), one that disagreed still has its own (since it began, not given
    again), one that agrees now has none; both the parent and the value must agree."""
    clock = Clock()
    union = StaticUnion(steady_ns=clock)
    union.receive(P, [tf("base", "camera", 0.1)])
    union.receive(Q, [tf("base", "camera", 0.1)])  # agrees
    union.receive(R, [tf("mount", "camera", 0.2)])  # another parent and value
    assert [(c.refused, c.since_ns) for c in union.new_conflicts()] == [(R, 1_000)]
    clock.ns = 2_000
    # Q: the parent, not the value; R: the value, not the parent
    assert union.receive(P, [tf("base", "camera", 0.2)])
    conflicts = union.conflicts()
    assert [(c.frame, c.kept, c.refused, c.since_ns) for c in conflicts] == [
        ("camera", P, R, 1_000),
        ("camera", P, Q, 2_000),
    ]
    assert union.new_conflicts() == [conflicts[1]]
    clock.ns = 3_000
    assert union.receive(P, [tf("mount", "camera", 0.2)])  # R agrees now, Q in neither
    assert [(c.refused, c.since_ns) for c in union.conflicts()] == [(Q, 2_000)]
    assert union.new_conflicts() == []


def test_contenders_that_go_make_room_for_others(monkeypatch: pytest.MonkeyPatch) -> None:
    """The contenders remembered are counted out as they go (a contender leaving, the frames
    they contend for leaving the union): as many others are remembered again, up to
    ``MAX_CONTENDERS`` in all, no more."""
    monkeypatch.setattr(static_union, "MAX_CONTENDERS", 3)
    union = StaticUnion()
    S = PublisherId(b"s" * 16, "/other")

    def remembered(publisher: PublisherId, frames: list[str]) -> int:
        """How many of ``frames`` (held with x 0) ``publisher``, giving x 1, contends for."""
        union.receive(publisher, [tf("base", frame, 1.0) for frame in frames])
        return sum(conflict.refused == publisher for conflict in union.conflicts())

    first = [f"m{k}" for k in range(5)]
    union.receive(P, [tf("base", frame) for frame in first])
    assert remembered(Q, first) == 3
    union.publisher_left(Q.gid)
    assert union.conflicts() == []
    assert remembered(R, first) == 3
    assert union.set_own(dict.fromkeys(first, "base"))  # the frames go with R's contention
    assert union.conflicts() == []
    second = [f"n{k}" for k in range(5)]
    union.receive(P, [tf("base", frame) for frame in second])
    assert remembered(S, second) == 3


def test_a_contender_that_took_the_frame_over_contends_for_it_no_more() -> None:
    """Once the holder left, its contender holds the frame: when that one leaves too and a
    third publisher takes the frame, the second is forgotten with its last frame."""
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    union.receive(Q, [tf("base", "camera", 0.2)])
    assert union.publisher_left(P.gid)  # camera to Q
    union.publisher_left(Q.gid)
    assert union.receive(R, [tf("base", "camera", 0.3)])
    assert union.writers() == {R.gid}


def test_frames_the_nodes_model_takes_back_leave_their_publishers_records_right() -> None:
    """``set_own`` taking union frames back: their holders hold them no more (reports), their
    contenders' conflicts end, a left holder is forgotten with its last frame only, a holder
    that still contends for a frame is remembered (it takes that frame over when its holder
    leaves), and the set's version is bumped."""
    S = PublisherId(b"s" * 16, "/left")
    union = StaticUnion()
    union.receive(R, [tf("base", "camera", 0.1)])
    union.receive(P, [tf("link1", "tool", 0.1), tf("base", "camera", 0.2)])  # holds tool
    union.receive(Q, [tf("link1", "tool", 0.2)])  # a conflict
    union.receive(S, [tf("link1", "tool2"), tf("link1", "tool3")])
    union.publisher_left(S.gid)
    version = union.version
    assert union.set_own({"tool": "link1", "tool2": "link1", "link1": "base_link"})
    assert union.version > version
    assert [(c.frame, c.refused) for c in union.conflicts()] == [("camera", P)]
    assert union.facts().publishers == ("/driver", "/left")
    assert union.holder("tool3") == S  # S still holds one frame: remembered
    assert union.set_own({"tool": "link1", "tool3": "link1", "link1": "base_link"})
    assert S.gid not in union.writers()  # forgotten with its last frame
    assert union.publisher_left(R.gid)
    assert union.holder("camera") == P


def test_a_rotation_is_normalised_on_every_axis_and_keeps_its_sign() -> None:
    """Every component counts in the length and is scaled alike; a half turn (w = 0) keeps
    the sign of its first non-zero component (x here) positive as given."""
    q = (0.36, 0.48, 0.64, 0.48)  # unit
    drifted = tuple(v * 1.003 for v in q)
    assert checked(StaticTransform("b", "c", 0, (0.0, 0.0, 0.0, *drifted))) == StaticTransform(
        "b", "c", 0, (0.0, 0.0, 0.0, *(pytest.approx(v, abs=1e-12) for v in q))
    )
    about_y = StaticTransform("b", "c", 0, (0.0, 0.0, 0.0, 0.0, 0.6, 0.0, 0.8))
    assert checked(about_y) == about_y
    for x in (1.0, 0.999):  # a half turn about x, exact and drifted
        kept = checked(StaticTransform("b", "c", 0, (0.0, 0.0, 0.0, x, 0.0, 0.0, 0.0)))
        assert isinstance(kept, StaticTransform)
        assert kept.pose[3:] == (pytest.approx(1.0, abs=1e-12), 0.0, 0.0, 0.0)


def test_a_conflict_over_before_it_was_given_is_not_given() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera", 0.1)])
    union.receive(Q, [tf("base", "camera", 0.2)])
    union.receive(Q, [tf("base", "camera", 0.1)])  # agrees before anyone asked
    assert union.new_conflicts() == []


def test_the_fair_share_counts_every_holder() -> None:
    """The cap 10, full (8, 1, 1): R adding frames may take up to its share, 10 // 3, from the
    largest holder, and no more."""
    union = StaticUnion(max_frames=10)
    union.receive(P, [tf("base", f"p{k}") for k in range(8)])
    union.receive(Q, [tf("base", "q0")])
    union.receive(R, [tf("base", "r0")])
    assert union.receive(R, [tf("base", f"r{k}") for k in range(1, 5)])
    held = [t.child[0] for t in union.transforms()]
    assert (held.count("p"), held.count("q"), held.count("r")) == (6, 1, 3)
    assert union.refused == {Refusal.OVER_CAP: 4}  # 2 of P's evicted, 2 of R's refused


def test_a_frame_not_in_the_union_has_no_holder() -> None:
    union = StaticUnion()
    union.receive(P, [tf("base", "camera")])
    assert union.holder("lidar") is None


def test_a_message_names_its_writer_when_it_knows_the_name() -> None:
    """A writer heard first without its node's name is named by a later message that has
    it; a later message without it keeps the name known."""
    union = StaticUnion()
    union.receive(PublisherId(P.gid), [tf("base", "camera")])
    union.receive(P, [tf("base", "lidar")])
    assert union.holder("camera") == P and union.facts().publishers == ("/calibration",)
    union.receive(PublisherId(P.gid), [tf("base", "radar")])
    assert union.facts().publishers == ("/calibration",)


def test_a_refused_transform_leaves_the_rest_of_its_message_taken() -> None:
    union = StaticUnion()
    union.set_own({"link1": "base_link"})
    assert union.receive(
        P, [tf("base", ""), tf("base", "camera"), tf("base_link", "link1"), tf("base", "lidar")]
    )
    assert sorted(children(union)) == ["camera", "lidar"]


def test_every_echo_of_a_union_learned_late_is_uncounted() -> None:
    union = StaticUnion()
    union.set_own({"link1": "base_link", "link2": "link1"})
    union.receive(U, [tf("base_link", "link1"), tf("link1", "link2")])
    assert union.refused == {Refusal.OWN_FRAME: 2}
    union.set_union_writers([U.gid])
    assert union.refused == {}


def test_a_message_says_a_change_wherever_in_it_the_change_is() -> None:
    """A change followed by an unchanged frame or a refused contender is still a change (the
    version bumped); a writer whose message gave nothing kept is not remembered; a model
    that takes nothing from the union says so with False."""
    union = StaticUnion()
    union.receive(P, [tf("base", "camera"), tf("base", "lidar")])
    union.receive(Q, [tf("base", "radar")])
    version = union.version
    assert union.receive(P, [tf("base", "camera", 0.5), tf("base", "lidar")]) is True
    assert union.receive(Q, [tf("base", "sonar"), tf("base", "camera", 0.7)]) is True
    assert union.version > version
    union.receive(R, [tf("base", "")])  # refused, nothing kept
    assert union.writers() == {P.gid, Q.gid}
    assert union.set_own({"link1": "base_link"}) is False


def test_a_transform_stamped_becomes_its_plain_values_field_by_field() -> None:
    """``StaticTransform.of`` reads rclpy's TransformStamped (a recording's, rosbags', has the
    same fields: test/bag): each field lands where it belongs."""
    from geometry_msgs.msg import TransformStamped

    stamped = TransformStamped()
    stamped.header.frame_id, stamped.child_frame_id = "base_link", "camera"
    stamped.header.stamp.sec, stamped.header.stamp.nanosec = 12, 345
    t, q = stamped.transform.translation, stamped.transform.rotation
    t.x, t.y, t.z, q.x, q.y, q.z, q.w = 1.0, 2.0, 3.0, 0.1, 0.2, 0.3, 0.9
    assert StaticTransform.of(stamped) == StaticTransform(
        "base_link", "camera", 12_000_000_345, (1.0, 2.0, 3.0, 0.1, 0.2, 0.3, 0.9)
    )
