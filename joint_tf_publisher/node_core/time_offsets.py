"""Delayed joint states: the time offset added to each topic's stamps (REP 138's
``time_offset``). No rclpy here.

A driver whose JointStates reach the node late (a gimbal behind a UART, a bus with a fixed
latency) stamps them late; ``time_offset`` (seconds, usually negative) is added to the stamp
of every JointState and MultiDOFJointState before the node uses it: the rate limiter and the
stamps on /tf see the shifted stamp. Each ``source_list`` topic adds its own value of
``source_time_offsets`` on top. A zero stamp is first replaced by the node clock (as without
an offset), then shifted.

A shifted stamp must still be a stamp: ``builtin_interfaces/Time`` holds int32 seconds, and
rclpy and rclcpp refuse negative times (a listener's ``Time.from_msg`` raises). ``shift``
returns None for a stamp that falls outside [0, ``MAX_STAMP_NS``]; the pipeline drops that
message and reports it.
"""

from __future__ import annotations

from collections.abc import Mapping

from ..stamps import MAX_STAMP_NS, NS_PER_S
from .joint_sources import JOINT_STATES_SOURCE, MULTI_DOF_SOURCE
from .parameters import Settings

#: The node's own joint-state topics, which take ``time_offset`` alone.
OWN_TOPICS = {JOINT_STATES_SOURCE: "joint_states", MULTI_DOF_SOURCE: "multi_dof_joint_states"}


def seconds_to_ns(seconds: float) -> int:
    """``seconds`` as whole nanoseconds (rounded)."""
    return round(seconds * NS_PER_S)


class TimeOffsets:
    """Per joint-state topic (its source number, ``joint_sources``), the nanoseconds added
    to its stamps, from ``Settings`` and the numbers the node gave the ``source_list``
    topics."""

    def __init__(self) -> None:
        self.default_ns = 0
        #: Per source number with an offset of its own: its offset, ns.
        self._by_source: dict[int, int] = {}
        #: Per topic (its name as given), its offset, seconds (the health report's view).
        self.by_topic_s: dict[str, float] = dict.fromkeys(OWN_TOPICS.values(), 0.0)
        self._numbers: dict[str, int] = {}

    def configure(self, settings: Settings, numbers: Mapping[str, int] | None = None) -> None:
        """Offsets of ``settings``; ``numbers``: the source number of each ``source_list``
        topic (kept from the last call where not given)."""
        if numbers is not None:
            self._numbers = dict(numbers)
        self.default_ns = seconds_to_ns(settings.time_offset)
        listed = settings.time_offsets_s()
        self._by_source = {
            self._numbers[topic]: seconds_to_ns(seconds)
            for topic, seconds in listed.items()
            if topic in self._numbers
        }
        own = dict.fromkeys(OWN_TOPICS.values(), settings.time_offset)
        self.by_topic_s = own | listed

    def offset_ns(self, source: int) -> int:
        """Nanoseconds added to the stamps of topic ``source``."""
        return self._by_source.get(source, self.default_ns)

    def shift(self, stamp_ns: int, source: int) -> int | None:
        """``stamp_ns`` of a message from topic ``source`` with its offset added; None when
        the result is no stamp (before 0 or after ``MAX_STAMP_NS``). Without an offset the
        stamp is passed on as it came."""
        offset_ns = self._by_source.get(source, self.default_ns)
        if not offset_ns:
            return stamp_ns
        shifted = stamp_ns + offset_ns
        if 0 <= shifted <= MAX_STAMP_NS:
            return shifted
        return None
