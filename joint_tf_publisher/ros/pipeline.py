"""The node's policy, without rclpy: joint states in, TFMessages to publish out.

``JointStatePipeline`` decides, for each JointState, as robot_state_publisher does and in this
order: is there a model, do names and positions match, is the message due (rate limit in
message time, keyed on the joints it names: a message it drops costs no kinematics), and only
then resolves the values (``Kinematics.apply``: mimic, clamping) and computes the transforms
of the joints the plan publishes (the common message in one call, ``PublishPlan.hot``; any
other through ``Kinematics.apply``, which reports what it clamped or rejected). It also owns
the static set (fixed joints), the default positions of joints never received, stamps (a zero
stamp becomes the node clock's now) and the reports of clamped, rejected and unknown values
(``reporting.Reporter``).

What it returns is a ``Publication``: a TFMessage layout with a stamp and the transforms,
which the node's /tf publisher serializes and sends. The node is wiring around this class;
tests drive it directly.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import NamedTuple, cast

import numpy as np
from numpy.typing import NDArray

from ..kinematics import Kinematics, Update
from ..robot import Robot
from .cdr import TFMessageLayout
from .joint_sources import JOINT_STATES_SOURCE, MULTI_DOF_SOURCE, JointSources
from .parameters import Settings
from .plans import BoolArray, IndexArray, JointIndex, PlanCache, PublishPlan
from .rate_limiter import RateLimiter
from .reporting import Reporter
from .zeros import start_positions

Array = NDArray[np.float64]


class Publication(NamedTuple):
    """One TFMessage to publish: transform i is ``layout.frames[i]`` at ``poses[i]``
    (translation x y z in metres, quaternion x y z w), all stamped ``stamp_ns``."""

    layout: TFMessageLayout
    stamp_ns: int
    poses: Array

    @property
    def translations(self) -> Array:
        """(n, 3) metres."""
        return self.poses[:, :3]

    @property
    def quaternions(self) -> Array:
        """(n, 4) x y z w."""
        return self.poses[:, 3:]

    def to_bytes(self) -> bytes:
        """The serialized TFMessage (CDR)."""
        return self.layout.write(self.stamp_ns, self.poses)


class LoadedModel:
    """One robot description with what the node keeps for it: joint values, limiter times."""

    def __init__(self, robot: Robot, text: str) -> None:
        self.robot = robot
        self.text = text
        self.kin: Kinematics = robot.kinematics
        self.positions = self.kin.new_positions()
        self.joints = JointIndex(self.kin)
        #: Per moving joint: message time of its last publication.
        self.limiter = RateLimiter(len(self.kin.moving_joints))
        #: Per moving joint: the topic of its last value (several joint-state topics).
        self.sources = JointSources(len(self.kin.moving_joints))


class Configured:
    """A model under one set of settings: frames with the prefix, which joints are
    published, their default transforms, the static set, and the publish plans."""

    def __init__(self, model: LoadedModel, settings: Settings) -> None:
        kin = model.kin
        excluded = set(settings.exclude_joints)
        prefix = settings.frame_prefix
        moving = kin.moving_joints
        #: Names in exclude_joints that are no joint of the robot.
        self.unknown_excluded = sorted(excluded - set(model.robot.joints))
        self.publish_mask = np.array([joint.name not in excluded for joint in moving], dtype=bool)
        frames = [(prefix + joint.parent, prefix + joint.child) for joint in moving]
        self.plans = PlanCache(model.joints, frames, self.publish_mask, settings.clamp_mode)
        #: The values of joints never received: ``zeros.*`` (else zero) clamped into the
        #: limits, mimic followers from their leaders.
        self.start = start_positions(kin, settings.zeros, settings.clamp_mode)
        self.default_poses = kin.joint_poses(self.start, np.arange(len(moving)))
        fixed = [i for i, joint in enumerate(kin.fixed_joints) if joint.name not in excluded]
        translations, quaternions = kin.fixed_transforms()
        self.static_layout = TFMessageLayout(
            [
                (prefix + kin.fixed_joints[i].parent, prefix + kin.fixed_joints[i].child)
                for i in fixed
            ]
        )
        self.static_poses = np.hstack((translations, quaternions))[fixed]


class JointStatePipeline:
    """Joint states to TFMessages under ``settings``; see the module docstring.

    ``clock_ns`` reads the node clock (ns), used for zero stamps and default positions.
    """

    def __init__(self, settings: Settings, reporter: Reporter, clock_ns: Callable[[], int]) -> None:
        self.settings = settings
        self.reporter = reporter
        self._clock_ns = clock_ns
        self.model: LoadedModel | None = None
        self._configured: Configured | None = None

    # -- model and settings -----------------------------------------------------------------

    def install(self, model: LoadedModel, settings: Settings | None = None) -> None:
        """Make ``model`` current (its limiter starts afresh), under ``settings`` if given."""
        self.model = model
        self.configure(settings or self.settings)

    def configure(self, settings: Settings) -> None:
        """Apply new settings (prefix, exclusions, clamp mode, rate) to the current model."""
        self.settings = settings
        if self.model is None:
            return
        self._configured = Configured(self.model, settings)
        self.model.limiter.reset()
        # Joints never received take their (new) start values.
        positions, start = self.model.positions, self._configured.start
        waiting = ~positions.received[self.model.kin.layout.slot_joint]
        positions.values[waiting] = start.values[waiting]
        if self._configured.unknown_excluded:
            self.reporter.logger.warning(
                "exclude_joints names joints not in the robot: "
                + ", ".join(self._configured.unknown_excluded)
            )

    def static_publication(self, stamp_ns: int) -> Publication | None:
        """The whole static set (fixed joints not excluded) stamped ``stamp_ns``; None
        without a model."""
        configured = self._configured
        if configured is None:
            return None
        return Publication(
            configured.static_layout,
            stamp_ns,
            configured.static_poses,
        )

    def reset_limiter(self, reason: str) -> None:
        """Publish the next message of every joint (a clock or stamp jumped backwards)."""
        if self.model is not None:
            self.model.limiter.reset()
        self.reporter.warn_throttled(
            "reset", f"{reason}: rate limiter reset (simulation reset or bag loop?)"
        )

    # -- joint states -----------------------------------------------------------------------

    def joint_state(
        self,
        stamp_ns: int,
        names: tuple[str, ...],
        positions: Array,
        source: int = JOINT_STATES_SOURCE,
    ) -> Publication | None:
        """A JointState's transforms to publish, or None (see the module docstring).

        ``names`` are joint (or MoveIt variable) names, ``positions`` radians or metres;
        ``source`` tells the topic it came from (``joint_sources``: between topics, the newer
        stamp wins).
        """
        model, configured = self.model, self._configured
        if model is None or configured is None:
            self.reporter.warn_throttled(
                "no model", "joint states ignored: no robot description yet"
            )
            return None
        if len(names) != len(positions):
            self.reporter.warn_throttled(
                "length",
                f"JointState dropped: {len(names)} names but {len(positions)} positions",
            )
            return None
        plan = configured.plans.joint_state(names)
        if plan.unknown or plan.first_value_only or plan.ambiguous:
            self._report_names(plan)
        stamp_ns = stamp_ns or self._zero_stamp_ns()
        model.sources.note(source)
        if model.sources.several and not self.settings.ignore_timestamp:
            kept = self._newer_than_other_topics(model, plan, stamp_ns, source)
            if kept is not None:  # some values are older than another topic's: left out
                if not kept.any():
                    return None
                names = tuple(name for name, keep in zip(names, kept.tolist(), strict=True) if keep)
                positions = positions[kept]
                plan = configured.plans.joint_state(names)
        if not self._due(model, plan.limited, stamp_ns, source):
            return None
        hot = plan.hot
        if hot is not None:  # the common message: values to poses in one call
            poses = hot.poses(model.positions, positions)
            if poses is not None:
                if not self.settings.ignore_timestamp:
                    model.limiter.record(plan.limited, stamp_ns)
                    model.sources.record(plan.limited, source)
                return Publication(cast(TFMessageLayout, plan.layout), stamp_ns, poses)
        values = cast(Sequence[float], positions)  # apply takes any array of floats
        update = model.kin.apply(model.positions, names, values, clamp=self.settings.clamp_mode)
        return self._published(model, configured, plan, update, stamp_ns, source)

    def multi_dof_joint_state(
        self,
        stamp_ns: int,
        names: tuple[str, ...],
        translations: Array,
        quaternions: Array,
        source: int = MULTI_DOF_SOURCE,
    ) -> Publication | None:
        """A MultiDOFJointState's transforms to publish, or None: ``translations`` (K, 3) in
        metres and ``quaternions`` (K, 4) x y z w per joint name; ``source`` as in
        ``joint_state``."""
        model, configured = self.model, self._configured
        if model is None or configured is None:
            self.reporter.warn_throttled(
                "no model", "joint states ignored: no robot description yet"
            )
            return None
        if not len(names) == len(translations) == len(quaternions):
            self.reporter.warn_throttled(
                "length",
                f"MultiDOFJointState dropped: {len(names)} joint names but "
                f"{len(translations)} transforms",
            )
            return None
        plan = configured.plans.multi_dof(names)
        if plan.unknown:
            self._report_names(plan)
        stamp_ns = stamp_ns or self._zero_stamp_ns()
        model.sources.note(source)
        if not self._due(model, plan.limited, stamp_ns, source):
            return None
        update = model.kin.apply_multi_dof(
            model.positions, names, translations, quaternions, clamp=self.settings.clamp_mode
        )
        return self._published(model, configured, plan, update, stamp_ns, source)

    def default_positions(self) -> Publication | None:
        """Joints never received (and not excluded) at their start position (``zeros.*``, else
        zero; clamped), stamped with the node clock; None when there are none."""
        model, configured = self.model, self._configured
        if model is None or configured is None:
            return None
        pending = np.flatnonzero(configured.publish_mask & ~model.positions.received)
        if pending.size == 0:
            return None
        return Publication(
            configured.plans.layout(pending),
            self._clock_ns(),
            configured.default_poses[pending],
        )

    # -- steps ------------------------------------------------------------------------------

    def _due(self, model: LoadedModel, limited: IndexArray, stamp_ns: int, source: int) -> bool:
        """The rate limiter, in message time: due when the least recently published joint of
        ``limited`` was published at least one interval before ``stamp_ns``; a stamp before
        the latest publication of one of them by the same topic resets the limiter (and is
        due); one before values of other topics only is no jump back."""
        if not limited.size:
            return False
        if self.settings.ignore_timestamp:
            return True
        earliest_ns, latest_ns = model.limiter.extremes(limited)
        if stamp_ns < latest_ns:
            sources = model.sources
            if (
                not sources.several
                or (
                    (model.limiter.times(limited) > stamp_ns)
                    & ~sources.from_others(limited, source)
                ).any()
            ):
                self.reset_limiter("joint state stamps jumped backwards")
                return True
        return stamp_ns >= earliest_ns + self.settings.interval_ns

    def _newer_than_other_topics(
        self, model: LoadedModel, plan: PublishPlan, stamp_ns: int, source: int
    ) -> BoolArray | None:
        """Which values of the message to keep: False for those of joints whose value from
        another topic has a newer stamp than ``stamp_ns`` (each counted in
        ``sources.conflicts``); None when every value is kept."""
        if stamp_ns >= model.limiter.extremes(plan.limited)[1]:
            return None  # nothing newer (the common case: no array built)
        name_plan = model.kin.joint_state_plan(plan.names)
        converted = name_plan.converted
        joints = np.concatenate((name_plan.joints, [c.joint for c in converted])).astype(np.intp)
        where = np.concatenate((name_plan.message_index, [c.message_index for c in converted]))
        older = (model.limiter.times(joints) > stamp_ns) & model.sources.from_others(joints, source)
        if not older.any():
            return None
        kept = np.ones(len(plan.names), dtype=bool)
        kept[where[older].astype(np.intp)] = False
        moving = model.kin.moving_joints
        conflicting = sorted(moving[j].name for j in set(joints[older].tolist()))
        model.sources.conflicts.update(conflicting)
        self.reporter.names_once(
            "older than another topic",
            conflicting,
            "joints given by several topics: a value older than another topic's is ignored",
        )
        return kept

    def _published(
        self,
        model: LoadedModel,
        configured: Configured,
        plan: PublishPlan,
        update: Update,
        stamp_ns: int,
        source: int,
    ) -> Publication | None:
        """Record the publication time and build what to publish after ``update``."""
        if update.clamped or update.rejected:
            self.reporter.update(update, self.settings.clamp)
        if not self.settings.ignore_timestamp:  # else never read (configure resets it)
            model.limiter.record(plan.limited, stamp_ns)
            model.sources.record(plan.limited, source)
        if update.rejected or len(update.moved) != len(plan.limited):
            # Some values were rejected, or a clamp moved other joints: publish what moved.
            moved = update.moved
            indices = moved[configured.publish_mask[moved] & model.positions.received[moved]]
            layout = configured.plans.layout(indices) if indices.size else None
        else:
            indices, layout = plan.published, plan.layout
        if layout is None:
            return None
        return Publication(layout, stamp_ns, model.kin.joint_poses(model.positions, indices))

    def _zero_stamp_ns(self) -> int:
        self.reporter.info_once(
            "zero stamp", "joint states with a zero stamp are stamped with the node clock"
        )
        return self._clock_ns()

    def _report_names(self, plan: PublishPlan) -> None:
        self.reporter.names_once(
            "unknown", plan.unknown, "ignoring names that are not moving joints of the robot"
        )
        self.reporter.names_once(
            "first value",
            plan.first_value_only,
            "bare names of multi-value joints (as Gazebo's bridge publishes them) set their "
            "first value only",
        )
        for name, candidates in plan.ambiguous:
            self.reporter.warning_once(
                f"ambiguous {name}",
                f"ignoring joint state name {name!r}: the bare name of several nested models' "
                f"joints ({', '.join(candidates)}); give the scoped name",
            )
