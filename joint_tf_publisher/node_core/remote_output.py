"""The remote output: the frames a remote viewer needs, at the rate its link can carry.

A second view of the state the pipeline keeps (no rclpy here). ``remote.frames`` chooses links;
each is published relative to its nearest chosen ancestor, else the root link
(``kinematics.frame_chains``), composed through every joint between them from the joint
values the pipeline holds (mimic and clamping applied, as on /tf), frames with
``frame_prefix``:

- a chosen link that only fixed joints separate from its parent goes out on the remote
  statics topic (``<remote.topic>_static``, latched: the complete set, republished with
  ``static_republish_period``);
- the others go out together in one TFMessage on ``remote.topic``, at most ``remote.rate``
  per second (``RateCap``, steady clock), stamped with the stamp of the latest joint state
  published on /tf, always with the latest values: a cap, never a queue. Nothing goes out
  while nothing was published on /tf since the last remote message (the pipeline's
  ``unsent_stamp_ns``: the one write per JointState the remote output costs), and a frame
  whose chain holds a joint never published on /tf (never received, no
  ``publish_default_positions``) is left out, as it is missing from /tf.

Rules of the choice (``check_choice``, run by ``parameter_changes.plan_change`` when
``remote.frames`` or ``exclude_joints`` changes): a name that is no link of the robot is
refused with the close matches, as an attachment's parent is; so is a link whose chain to its
parent crosses an excluded joint (another publisher owns that joint: composing through it
would mix the node's value with theirs). A new description that lacks a chosen link, or puts an
excluded joint in its chain, is not refused: the link is left out while that lasts, said once in
the log and in the health report (``remote frames left out``), and comes back with a
description that has it again.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..arrays import BoolArray
from ..bounded_cache import bounded_cache
from ..health.model import RemoteFacts
from ..kinematics.frame_chains import Chain, FrameChains, nearest_chosen_ancestors
from ..stamps import NS_PER_S
from .cdr import Publication, TFMessageLayout
from .parameter_keys import did_you_mean
from .parameters import ParameterRejected, Settings
from .pipeline import JointStatePipeline, LoadedModel

#: Most chosen links a refusal of ``remote.frames`` names (and looks up close matches for);
#: the others are counted.
MAX_NAMED_FRAMES = 10

#: The remote statics topic is the remote topic's name with this appended.
STATIC_SUFFIX = "_static"


def remote_on(settings: Settings) -> bool:
    """True if ``settings`` ask for a remote output (``remote.frames`` not empty)."""
    return bool(settings.remote_frames)


def static_topic(topic: str) -> str:
    """The remote statics topic of remote topic ``topic``."""
    return topic + STATIC_SUFFIX


class Choice(NamedTuple):
    """The chains of the chosen links a model has, and the chosen links left out, each with
    why (``left_out``: link name -> reason)."""

    chains: list[Chain]
    left_out: dict[str, str]


def choose(model: LoadedModel, settings: Settings) -> Choice:
    """The chains of ``settings.remote_frames`` in ``model`` (see the module docstring)."""
    robot = model.robot
    present = [name for name in settings.remote_frames if name in robot.links]
    left_out = {
        name: "no link of that name in the robot"
        for name in settings.remote_frames
        if name not in robot.links
    }
    excluded = set(settings.exclude_joints)
    chains = []
    for chain in nearest_chosen_ancestors(model.kin.layout, present):
        crossed = [joint for joint in chain.joints if joint in excluded]
        if crossed:
            left_out[chain.child] = (
                f"its chain from {chain.parent!r} crosses excluded joint(s) {', '.join(crossed)} "
                "(exclude_joints: another publisher owns them)"
            )
        else:
            chains.append(chain)
    return Choice(chains, left_out)


def check_choice(model: LoadedModel, settings: Settings) -> None:
    """ParameterRejected naming every chosen link ``model`` cannot publish (with the close
    matches of a name that is no link)."""
    reasons = []
    links = sorted(model.robot.links)
    left_out = choose(model, settings).left_out
    for name, reason in itertools.islice(left_out.items(), MAX_NAMED_FRAMES):
        prefix = settings.frame_prefix
        if prefix and name.startswith(prefix) and name[len(prefix) :] in model.robot.links:
            link = name[len(prefix) :]
            reasons.append(f"{name!r}: give the link, {link!r}: the node adds frame_prefix")
        elif name not in model.robot.links:
            reasons.append(f"{name!r}: {reason}{did_you_mean(name, links)}")
        else:
            reasons.append(f"{name!r}: {reason}")
    if len(left_out) > MAX_NAMED_FRAMES:
        reasons.append(f"and {len(left_out) - MAX_NAMED_FRAMES} more")
    if reasons:
        raise ParameterRejected("remote.frames: " + "; ".join(reasons))


class RateCap:
    """At most one message per cell of a grid of ``1 / rate`` s of the steady clock.

    The grid is laid at the first message so that it falls in the middle of its cell: the
    node's timer at the same rate, whose callbacks read the clock up to half an interval
    later or earlier than the first one did, puts each tick in a cell of its own (no tick
    skipped for jitter), while ticks that come faster (or a burst of them) still send one
    message per cell: at most ``rate`` per second, the first two half an interval apart at
    the least.
    """

    def __init__(self, rate_hz: float) -> None:
        self.interval_ns = max(2, round(NS_PER_S / rate_hz))
        self._origin_ns: int | None = None
        self._last_cell = 0

    def due(self, now_ns: int) -> bool:
        """True if a message may go out at ``now_ns`` (steady clock, ns)."""
        origin = self._origin_ns
        return origin is None or (now_ns - origin) // self.interval_ns > self._last_cell

    def sent(self, now_ns: int) -> None:
        """A message went out at ``now_ns``: its cell is used."""
        if self._origin_ns is None:
            self._origin_ns = now_ns - self.interval_ns // 2
        self._last_cell = (now_ns - self._origin_ns) // self.interval_ns


@dataclass(frozen=True)
class RemotePlan:
    """The remote output of one model under one set of settings: the chains compiled, the
    static set's layout and poses, the dynamic frames' (parent, child) with the prefix."""

    model: LoadedModel
    chains: FrameChains
    left_out: dict[str, str]
    static_layout: TFMessageLayout
    dynamic_frames: tuple[tuple[str, str], ...]
    #: The TFMessage layout of the dynamic frames where a mask (bytes of a (K,) bool array)
    #: is True.
    layouts_of: Callable[[bytes], TFMessageLayout]


def compile_plan(model: LoadedModel, settings: Settings) -> RemotePlan:
    """The ``RemotePlan`` of ``model`` under ``settings``."""
    choice = choose(model, settings)
    chains = FrameChains(model.kin.layout, model.kin.transforms, choice.chains)
    prefix = settings.frame_prefix
    dynamic = tuple((prefix + c.parent, prefix + c.child) for c in chains.dynamic)

    def layout(mask: bytes) -> TFMessageLayout:
        chosen = np.frombuffer(mask, dtype=bool)
        return TFMessageLayout([frames for frames, on in zip(dynamic, chosen, strict=True) if on])

    return RemotePlan(
        model=model,
        chains=chains,
        left_out=choice.left_out,
        static_layout=TFMessageLayout(
            [(prefix + c.parent, prefix + c.child) for c in chains.static]
        ),
        dynamic_frames=dynamic,
        layouts_of=bounded_cache(layout),
    )


class RemoteChange(NamedTuple):
    """What a new model or settings ask of the node's remote output: (re)make its publishers
    (``reopen``) on ``topic`` (None: none, the output is off), publish its static set again,
    restart its timer (at ``remote.rate``)."""

    reopen: bool
    topic: str | None
    republish_statics: bool
    restart_timer: bool


class RemoteOutput:
    """The remote output of the node whose pipeline is ``pipeline`` (module docstring); its
    warnings go to the pipeline's logger.

    ``configure`` after every model or settings change; ``tick`` at the remote rate;
    ``static_publication`` for the remote statics topic. ``facts`` is what the health report
    shows (``health.model.RemoteFacts``), kept in ``pipeline.health.remote``.
    """

    def __init__(self, pipeline: JointStatePipeline) -> None:
        self._pipeline = pipeline
        self.plan: RemotePlan | None = None
        self._settings: Settings | None = None
        self.cap = RateCap(pipeline.settings.remote_rate)
        self.facts = RemoteFacts()
        pipeline.health.remote = self.facts

    def configure(self) -> RemoteChange:
        """Compile the plan for the pipeline's current model and settings, where they changed;
        what the node's publishers and timer then have to do."""
        pipeline = self._pipeline
        settings, model = pipeline.settings, pipeline.model
        old = self._settings
        old_model = self.plan.model if self.plan is not None else None
        on = remote_on(settings)
        was_on = old is not None and remote_on(old)
        topic = settings.remote_topic if on else None
        old_topic = old.remote_topic if was_on and old is not None else None
        self._settings = settings
        replan = (
            old is None
            or model is not old_model
            or (settings.remote_frames, settings.frame_prefix, settings.exclude_joints)
            != (old.remote_frames, old.frame_prefix, old.exclude_joints)
        )
        if replan:
            old_left = set(self.plan.left_out) if self.plan is not None else set()
            self.plan = compile_plan(model, settings) if on and model is not None else None
            left = self.plan.left_out if self.plan is not None else {}
            new_left = {name: why for name, why in left.items() if name not in old_left}
            for name, why in new_left.items():
                pipeline.reporter.logger.warning(f"remote output: frame {name!r} left out: {why}")
        rate_changed = old is None or settings.remote_rate != old.remote_rate
        if rate_changed:
            self.cap = RateCap(settings.remote_rate)
        self._update_facts(settings)
        return RemoteChange(
            reopen=topic != old_topic,
            topic=topic,
            republish_statics=replan or topic != old_topic,
            restart_timer=rate_changed or on != was_on,
        )

    def _update_facts(self, settings: Settings) -> None:
        facts, plan = self.facts, self.plan
        facts.frames = settings.remote_frames
        facts.rate_hz = settings.remote_rate
        facts.topic = settings.remote_topic if remote_on(settings) else ""
        facts.left_out = tuple(
            f"{name} ({why})" for name, why in (plan.left_out if plan else {}).items()
        )

    def static_publication(self, stamp_ns: int) -> Publication | None:
        """The complete remote static set stamped ``stamp_ns``; None without a plan."""
        plan = self.plan
        if plan is None:
            return None
        return Publication(plan.static_layout, stamp_ns, plan.chains.static_poses)

    def tick(self, now_ns: int) -> Publication | None:
        """The remote message to send at ``now_ns`` (steady clock, ns), or None: none when
        there is no plan, nothing was published on /tf since the last one, the rate cap is
        not due, or no dynamic frame is ready (its joints all published on /tf)."""
        pipeline, plan = self._pipeline, self.plan
        stamp_ns = pipeline.unsent_stamp_ns
        if plan is None or stamp_ns is None or not plan.dynamic_frames or not self.cap.due(now_ns):
            return None
        model = plan.model
        ready = plan.chains.ready(self._published_joints(model))
        if not ready.any():
            return None
        poses = plan.chains.poses(model.positions.values)[ready]
        pipeline.unsent_stamp_ns = None
        self.cap.sent(now_ns)
        self.facts.sent += 1
        return Publication(plan.layouts_of(ready.tobytes()), stamp_ns, poses)

    def _published_joints(self, model: LoadedModel) -> BoolArray:
        """(M,) True for the moving joints whose transform /tf has had: received, or all with
        ``publish_default_positions``."""
        received = model.positions.received
        if self._pipeline.settings.publish_default_positions:
            return np.ones_like(received)
        return received
