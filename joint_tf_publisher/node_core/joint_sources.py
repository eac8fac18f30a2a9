"""Which topic gave each joint its value: the newer stamp wins between topics. No rclpy here.

With ``source_list`` (and ``multi_dof_joint_states``) several topics may name one joint. Each
message keeps its own stamp, and a joint's value is the one of the newest stamp: a message
older than the value a joint has from another topic does not set that joint (its other
joints are handled as usual), and is not a "stamps jumped backwards" reset of the rate
limiter either. An older stamp on the topic that gave the newer value is a real jump back
(a bag loop on that topic) and resets the limiter, as with one topic.

The times are the rate limiter's (a joint's value is set exactly when it is published);
``JointSources`` adds the topic of each. While one topic only has been seen, it records
nothing: a single-topic node pays one integer comparison per message.
"""

from __future__ import annotations

from collections import Counter

import numpy as np

from ..arrays import BoolArray, IndexArray

#: The topic numbers of ``joint_states`` and ``multi_dof_joint_states``; the node numbers the
#: ``source_list`` topics from ``FIRST_LISTED_SOURCE`` on, never reusing a number.
JOINT_STATES_SOURCE = 0
MULTI_DOF_SOURCE = 1
FIRST_LISTED_SOURCE = 2


class JointSources:
    """Per moving joint, the topic (a small integer the node assigns) of its last value."""

    def __init__(self, joint_count: int) -> None:
        self._source = np.zeros(joint_count, dtype=np.int32)
        #: The one topic seen so far, or None once a second one has been seen.
        self._only: int | None = None
        self._seen_any = False
        #: Per joint name: values dropped as older than one from another topic. What a health
        #: report reads to name the conflict.
        self.conflicts: Counter[str] = Counter()

    @property
    def several(self) -> bool:
        """True once messages of more than one topic have been seen."""
        return self._only is None and self._seen_any

    def note(self, source: int) -> None:
        """A message of topic ``source`` arrived (before it is checked or recorded)."""
        if not self._seen_any:
            self._seen_any, self._only = True, source
        elif self._only is not None and source != self._only:
            self._source.fill(self._only)  # every value so far came from that one
            self._only = None

    def record(self, joints: IndexArray, source: int) -> None:
        """``joints`` took values from topic ``source``."""
        if self._only is None:
            self._source[joints] = source

    def from_others(self, joints: IndexArray, source: int) -> BoolArray:
        """Per joint of ``joints``: True where its value came from another topic than
        ``source``."""
        if self._only is None:
            differs: BoolArray = self._source[joints] != source
            return differs
        return np.full(joints.shape, self._only != source, dtype=bool)
