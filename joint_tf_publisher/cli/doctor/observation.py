"""``joint-tf-publisher doctor``'s data: what was heard (``Observation``), what was found
(``Finding``), and the wording both share.

Plain Python (no rclpy): ``listener`` hears, ``command`` fills an
``Observation``, tests build one by hand. Times are nanoseconds (stamps in the clock of their
publisher); durations in the options are seconds.
"""

from __future__ import annotations

import datetime
import enum
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field

from ...health.model import Level
from ...health.wording import name_list
from ...model.elements import RobotModel
from ...stamps import NS_PER_S

#: Frames named in one finding's summary before "and N more" (details hold all).
FRAMES_SHOWN = 6


class Severity(enum.Enum):
    """How serious a finding is; ERROR and WARNING make the exit status 1, NOTE does not."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"

    @property
    def rank(self) -> int:
        """0 for the most serious."""
        return list(Severity).index(self)


class Kind(enum.Enum):
    """What a finding is about (the ``kind`` field of ``--json``)."""

    NO_TF = "no_tf"
    NODE_SILENT = "node_silent"
    SIM_TIME_WITHOUT_CLOCK = "sim_time_without_clock"
    CLOCK_SILENT = "clock_silent"
    CLOCK_DOMAIN = "clock_domain"
    ROBOT_ABSENT = "robot_absent"
    MISSING_FRAMES = "missing_frames"
    TWO_PUBLISHERS = "two_publishers"
    TWO_PARENTS = "two_parents"
    SPLIT_TREE = "split_tree"
    LAGGING_FRAMES = "lagging_frames"
    DIAGNOSTICS = "diagnostics"
    LOOP_NOT_CLOSED = "loop_not_closed"
    STATIC_UNION_CONFLICT = "static_union_conflict"
    STATIC_UNION_REFUSED = "static_union_refused"
    NO_DESCRIPTION = "no_description"
    REMOVED_FRAMES = "removed_frames"
    # Recordings (``doctor --bag``: ``recording``).
    NO_TF_STATIC = "no_tf_static"
    TF_STATIC_NOT_LATCHED = "tf_static_not_latched"
    STATICS_ONLY_AT_START = "statics_only_at_start"
    NO_JOINT_STATES = "no_joint_states"
    JOINTS_NOT_RECORDED = "joints_not_recorded"
    JOINT_STATE_GAPS = "joint_state_gaps"
    STAMPS_JUMP_BACK = "stamps_jump_back"
    DESCRIPTION_DIFFERS = "description_differs"
    DESCRIPTION_REFUSED = "description_refused"


@dataclass(frozen=True)
class HeardTransform:
    """A transform heard while listening: one per (parent, child, topic, publisher), with
    the newest stamp of the messages that carried it.

    ``publisher`` is the publishing node's fully qualified name where the graph tells it,
    else "" (unknown).
    """

    parent: str
    child: str
    static: bool
    newest_stamp_ns: int
    publisher: str = ""
    count: int = 1


@dataclass(frozen=True)
class DiagnosticRecord:
    """The newest ``diagnostic_msgs/DiagnosticStatus`` heard under one name."""

    name: str
    level: int
    message: str
    hardware_id: str = ""
    values: tuple[tuple[str, str], ...] = ()

    @property
    def level_name(self) -> str:
        """The level's name (OK, WARN, ERROR, STALE), or "level N" for another value."""
        try:
            return Level(self.level).name
        except ValueError:
            return f"level {self.level}"


@dataclass
class Observation:
    """What the doctor heard in ``listened_s`` seconds, and what it knows of the setup.

    ``now_ns``: the doctor's wall clock when listening ended. ``clock_ns``: the newest /clock
    time heard (None: none). ``robot``: the description to check the frames against (None:
    none available), with the ``frame_prefix`` and ``excluded_joints`` of the node that
    publishes it. ``sim_time_nodes``: nodes whose ``use_sim_time`` is true. ``silent_node``:
    the state publisher named by the user when it did not answer. ``unasked_nodes``: nodes
    not asked for their parameters, the graph showing them without a parameter service (a
    publishers-only node, as joint_tf_publisher's global-tree node ``<name>_global_tf``).
    ``union_nodes``: nodes whose ``static_union`` is true: their ``/tf_static`` carries
    copies of other publishers' static frames, which is no second owner.
    """

    listened_s: float
    now_ns: int
    transforms: list[HeardTransform] = field(default_factory=list)
    statuses: list[DiagnosticRecord] = field(default_factory=list)
    clock_ns: int | None = None
    clock_publishers: list[str] = field(default_factory=list)
    robot: RobotModel | None = None
    description_source: str = ""
    frame_prefix: str = ""
    excluded_joints: tuple[str, ...] = ()
    joint_state_topic: str = "/joint_states"
    joint_state_publishers: list[str] = field(default_factory=list)
    sim_time_nodes: list[str] = field(default_factory=list)
    silent_node: str | None = None
    unasked_nodes: list[str] = field(default_factory=list)
    union_nodes: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class Finding:
    """One problem in plain words: what is wrong, its likely cause, what to do."""

    severity: Severity
    kind: Kind
    summary: str
    cause: str
    fix: str
    details: Mapping[str, object] = field(default_factory=dict)

    def as_json(self) -> dict[str, object]:
        return {
            "severity": self.severity.value,
            "kind": self.kind.value,
            "summary": self.summary,
            "cause": self.cause,
            "fix": self.fix,
            "details": dict(self.details),
        }


def is_healthy(findings: Iterable[Finding]) -> bool:
    """True when no finding is a problem (notes only)."""
    return all(finding.severity is Severity.NOTE for finding in findings)


def heard_frames(observation: Observation) -> set[str]:
    """Every frame named on /tf or /tf_static, as parent or child."""
    return {heard.child for heard in observation.transforms} | {
        heard.parent for heard in observation.transforms
    }


# -- wording -------------------------------------------------------------------------------


def short_list(items: Sequence[str]) -> str:
    """``items`` joined by commas, the first ``FRAMES_SHOWN`` and a count of the rest."""
    return name_list(items, FRAMES_SHOWN)


def format_time(stamp_ns: int) -> str:
    """A stamp as an ISO date (UTC) when it looks like wall time (after 2001), else seconds."""
    seconds = stamp_ns / NS_PER_S
    if seconds > 1e9:
        moment = datetime.datetime.fromtimestamp(seconds, tz=datetime.timezone.utc)
        return f"{seconds:.3f} s ({moment:%Y-%m-%d %H:%M:%S} UTC)"
    return f"{seconds:.3f} s"


def format_gap(gap_ns: int) -> str:
    """A signed duration in words: '54.2 years ahead', '3.0 h behind'."""
    seconds = abs(gap_ns) / NS_PER_S
    side = "ahead of" if gap_ns > 0 else "behind"
    for unit, size in (("years", 365.25 * 86400), ("days", 86400), ("h", 3600)):
        if seconds >= size:
            return f"{seconds / size:.1f} {unit} {side}"
    return f"{seconds:.1f} s {side}"
