"""A node's /diagnostics status while its static union holds a conflict and has refused a
transform, made by the real parts (``node_core.static_union`` and ``health.model``), for the
doctor's tests, live and over a recording."""

from __future__ import annotations

from collections.abc import Sequence

from joint_tf_publisher.health.model import GraphFacts, HealthReport, JointStateHealth
from joint_tf_publisher.node_core.static_union import PublisherId, StaticTransform, StaticUnion

IDENTITY = (0.0, 0.0, 0.0, 0.0, 0.0, 0.0, 1.0)


def union_report(
    now_ns: int, conflict: bool = True, frames: Sequence[str] = ("camera",)
) -> HealthReport:
    """The health report of a node whose union holds ``frames`` from /calibration, which
    /sensors gives under another parent (with ``conflict``; else the same value) beside a
    NaN frame."""
    union = StaticUnion(steady_ns=lambda: now_ns)
    union.receive(
        PublisherId(b"c", "/calibration"),
        [StaticTransform("base_link", frame, 0, IDENTITY) for frame in frames],
    )
    parent = "world" if conflict else "base_link"
    union.receive(
        PublisherId(b"s", "/sensors"),
        [
            *(StaticTransform(parent, frame, 0, IDENTITY) for frame in frames),
            StaticTransform("base_link", "bad", 0, (float("nan"), *IDENTITY[1:])),
        ],
    )
    health = JointStateHealth(1.0)
    health.union = union.facts()
    return health.report(GraphFacts({}, now_ns))
