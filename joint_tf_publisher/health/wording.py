"""The words of every joint-state health fact, once (no rclpy).

The node's throttled log lines (``reporting.Reporter`` and the pipeline), its /diagnostics
report (``model.JointStateHealth``) and ``joint-tf-publisher doctor`` say each fact with the
phrases and sentences here, so an operator reads one wording wherever the fact shows up.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from ..kinematics import MAX_JOINT_VALUE

#: Names shown in one sentence before "and N more" (the values of the report hold all).
NAMES_SHOWN = 10
#: Stamps further than this from the clock they are compared with (beyond the timeout) are
#: of another clock domain: wall time against simulation time are decades apart, a slow
#: simulation is not an hour off; seconds.
CLOCK_DOMAIN_GAP_S = 3600.0

#: What usually publishes joint states.
JOINT_STATE_PUBLISHERS = (
    "joint_state_publisher (fixed or GUI positions), ros2_control's joint_state_broadcaster "
    "(a real or simulated robot), or the Gazebo bridge (ros_gz_bridge, a joint_states topic)"
)
#: What ``publish_default_positions`` does, as advice for joints never received.
DEFAULT_POSITIONS_ADVICE = (
    "set publish_default_positions:=true to publish never-received joints at their start "
    "value (zeros.<joint>, else 0, clamped into the limits)"
)
#: Values rejected (which, and what the joint does then), before the joints.
REJECTED = (
    f"joint values rejected (NaN, infinite, beyond +-1e{round(math.log10(MAX_JOINT_VALUE))} "
    "or a zero quaternion), the joints keep their last good value"
)
#: A description is awaited (``description_from_topic``).
NO_DESCRIPTION = "no robot description loaded yet"
#: use_sim_time without /clock.
SIM_TIME_WITHOUT_CLOCK = (
    "use_sim_time is true but no /clock has been received: the node clock stands at 0 "
    "(start the simulator or a clock publisher)"
)
#: The likely cause of stamps in another clock domain.
CLOCKS_MIXED = "a sim clock and a wall clock mixed (use_sim_time)?"


def name_list(names: Sequence[str], shown: int = NAMES_SHOWN) -> str:
    """``names`` joined by commas, the first ``shown`` and "and N more"."""
    listed = ", ".join(names[:shown])
    more = len(names) - shown
    return f"{listed} and {more} more" if more > 0 else listed


def clamped(clamp: str) -> str:
    """Values clamped to the ``clamp`` ("hard" or "soft") limits, before the joints."""
    return f"joint values clamped to their {clamp} limits"


def dropped_lengths(count: int) -> str:
    """``count`` messages dropped for their lengths."""
    return f"{count} joint state(s) dropped: names and values differ in length"


def dropped_message(message_type: str, names: int, values: int, of: str) -> str:
    """One ``message_type`` dropped: ``names`` names but ``values`` ``of`` (positions...)."""
    return f"{message_type} dropped: {names} names but {values} {of}"


def never_received(joints: Sequence[str], frames: Sequence[str]) -> str:
    """Moving ``joints`` never received and the ``frames`` absent from /tf therefore."""
    return (
        f"{len(joints)} joint(s) never received: {name_list(joints)}; frames missing from /tf: "
        f"{name_list(frames)}"
    )


def never_received_log(sentence: str) -> str:
    """The log line of ``never_received``'s sentence: what usually publishes joint states."""
    return f"{sentence}. Joint states usually come from {JOINT_STATE_PUBLISHERS}"


def stream_stopped(age_s: float) -> str:
    """No joint state for ``age_s`` seconds after some arrived."""
    return f"no joint state for {age_s:.1f} s: the joint-state stream stopped"


def nothing_received(waited_s: float, publishers: int) -> str:
    """No joint state at all in ``waited_s`` seconds, with ``publishers`` on the topic."""
    if publishers == 0:
        said = "nothing publishes joint_states"
    else:
        said = f"{publishers} publisher(s) on joint_states sent nothing"
    return f"no joint state received in {waited_s:.1f} s: {said}"


def joints_stopped(count: int, listed: str) -> str:
    """``count`` joints (``listed`` with their ages) silent while others arrive."""
    return f"{count} joint(s) stopped updating while others go on: {listed}"


def stamps_off_clock(stamp_s: str, offset_s: float, clock_s: str) -> str:
    """Joint-state stamps (``stamp_s``) ``offset_s`` seconds from the node clock."""
    return (
        f"joint state stamps ({stamp_s} s) are {offset_s:+.0f} s from the node clock "
        f"({clock_s} s): {CLOCKS_MIXED}"
    )


def two_publishers(listed: str) -> str:
    """Joints (``listed`` with their publishers) given by two publishers."""
    return f"joints given by two publishers: {listed}"


#: What happens to frames that left a robot, in every listener that heard them.
LISTENERS_KEEP_THEM = (
    "tf2 listeners (RViz, MoveIt, Nav2) that heard them keep them, static ones at their last "
    "pose, until they restart"
)


def frames_left_warning(frames: Sequence[str]) -> str:
    """The one log line of a description or prefix change that took ``frames`` away."""
    return (
        f"{len(frames)} frame(s) left the robot with this change: {', '.join(frames)}; "
        f"no node publishes them now, and {LISTENERS_KEEP_THEM}"
    )


#: The range of a stamp (``builtin_interfaces/Time``: int32 seconds, never negative in
#: rclpy and rclcpp).
STAMP_RANGE = "0 to 2147483647 s"


def stamps_out_of_range(count: int) -> str:
    """``count`` joint states dropped: their stamp plus the time offset is no stamp."""
    return (
        f"{count} joint state(s) dropped: stamp + time offset outside what a stamp holds "
        f"({STAMP_RANGE}): check time_offset and source_time_offsets"
    )


def stamp_out_of_range(stamp_s: float, offset_s: float) -> str:
    """One joint state stamped ``stamp_s`` dropped: shifted by ``offset_s`` it is no stamp."""
    return (
        f"joint state dropped: its stamp {stamp_s:.9f} s plus the time offset {offset_s:g} s "
        f"is outside what a stamp holds ({STAMP_RANGE})"
    )


def remote_frames_left_out(frames: Sequence[str]) -> str:
    """Chosen ``frames`` (each with why) the remote output leaves out."""
    return f"{len(frames)} remote.frames left out of the remote output: {name_list(frames)}"


#: Where ``callback_failures`` stops naming new causes (a flood of distinct ones).
OTHER_CAUSES = "other causes"


#: Why a message whose bytes the RMW could not decode is dropped.
UNDECODABLE_BYTES = "its bytes do not decode as the topic's type (a broken or hostile publisher)"


def undecodable(count: int, entries: Sequence[str]) -> str:
    """``count`` messages dropped (``entries``: type and count) whose bytes do not decode."""
    return f"{count} message(s) dropped: {UNDECODABLE_BYTES}: {name_list(entries)}"


def callback_failures(count: int, causes: Sequence[str]) -> str:
    """``count`` callbacks raised since the last report (``causes``: every cause since
    start); the node served on."""
    return (
        f"{count} callback failure(s), the node serves on (a bug: please report it with the "
        f"log line of its first failure): {name_list(causes)}"
    )


#: What the node does with a loop that does not close (docs/loops.md, "Solving").
LOOP_HELD = (
    "its passive joints are held at their last closed values (given joints go on moving); "
    "the given joint values are out of the linkage's reach, or pass a singularity"
)


def loop_not_closed(joint: str, position_m: float, angle_rad: float, for_s: float) -> str:
    """Loop joint ``joint`` has not closed for ``for_s`` seconds: its frames ``position_m``
    metres and ``angle_rad`` radians apart at the closest the solver found."""
    return (
        f"loop joint {joint!r} not closed for {for_s:.1f} s: its frames stay "
        f"{position_m:.3g} m and {angle_rad:.3g} rad apart; {LOOP_HELD}"
    )


def loop_over_determined(joint: str, position_m: float, angle_rad: float) -> str:
    """The given joints over-determine the loop of ``joint``, whose least-squares fit leaves
    its frames ``position_m`` m and ``angle_rad`` rad apart (beyond the tolerance)."""
    return (
        f"loop joint {joint!r} over-determined by the given joints: the passive joints' "
        f"least-squares fit leaves its frames {position_m:.3g} m and {angle_rad:.3g} rad "
        "apart (the given values disagree with the model: calibrate them, or give fewer)"
    )


#: What the union of the graph's statics does with a frame two publishers give differently.
UNION_FIRST_KEEPS = (
    "the union keeps the first publisher's value until it leaves the graph: stop one of them, "
    "or give them one value"
)


def union_conflict_entry(frame: str, kept: str, refused: str) -> str:
    """A conflict in the report's values: ``frame``, the publisher ``kept`` and the one
    ``refused``."""
    return f"{frame} (kept {kept}, refused {refused})"


def union_conflicts_value(entries: Sequence[str], more: int) -> str:
    """The report's value of the conflicts: ``entries`` (``union_conflict_entry``, the
    oldest), "; "-separated, and "and N more" for ``more`` beyond them."""
    listed = "; ".join(entries)
    return f"{listed} and {more} more" if more > 0 else listed


def union_more_conflicts(count: int) -> str:
    """``count`` conflicts beyond those the report names (and the log: beyond the first of
    a message)."""
    return f"{count} more static frame(s) given differently by two publishers: {UNION_FIRST_KEEPS}"


def union_conflict_entries(text: str) -> list[tuple[str, str, str]]:
    """(frame, kept, refused) of each entry of the report's ``static union conflicts``
    value (``union_conflicts_value``'s: ``union_conflict_entry``'s, ``; ``-separated, then
    "and N more"), for ``doctor``; what is no entry is left out. Linear in the text (a status
    is anyone's to publish)."""
    head, more_at, more = text.rpartition(" and ")
    if more_at and more.endswith(" more") and more[: -len(" more")].isdigit():
        text = head  # the count beyond the entries named
    entries = []
    for entry in text.split("; "):
        head, kept_at, rest = entry.rpartition(" (kept ")
        kept, refused_at, refused = rest.rpartition(", refused ")
        if kept_at and refused_at and refused.endswith(")"):
            entries.append((head, kept, refused[:-1]))
    return entries


def union_conflict(frame: str, kept: str, refused: str, for_s: float) -> str:
    """Publishers ``kept`` and ``refused`` (nodes) give static frame ``frame`` with other
    parents or values, for ``for_s`` seconds."""
    return (
        f"static frame {frame!r} given differently by {kept} and {refused} for {for_s:.1f} s: "
        f"{UNION_FIRST_KEEPS}"
    )


def union_conflict_log(frame: str, kept: str, refused: str) -> str:
    """The one log line of a new conflict over static frame ``frame``."""
    return f"static frame {frame!r} given differently by {kept} and {refused}: {UNION_FIRST_KEEPS}"


def union_refused(count: int, entries: Sequence[str]) -> str:
    """``count`` foreign static transforms refused since the last report (``entries``: every
    reason since start with its count)."""
    return f"{count} foreign static transform(s) refused by the static union: {name_list(entries)}"
