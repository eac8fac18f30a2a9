"""``joint-tf-publisher doctor``'s output: the findings in plain words or as JSON.

The text is what ros2doctor's report is to a person (each problem, then a summary line);
every finding also says its likely cause and what to do. The JSON document is for scripts
and CI: ``healthy``, the counts, what was heard, and the findings with the same fields.
"""

from __future__ import annotations

import json
import textwrap
from collections.abc import Sequence

from .observation import Finding, Observation, Severity, heard_frames, is_healthy

#: Width the text report wraps to, characters.
TEXT_WIDTH = 100


def heard_summary(observation: Observation) -> dict[str, object]:
    """What was heard, in numbers: frames per topic, publishers, statuses, the clock, and
    the nodes not asked for their parameters (no parameter service)."""
    dynamic = {heard.child for heard in observation.transforms if not heard.static}
    static = {heard.child for heard in observation.transforms if heard.static}
    publishers = sorted({heard.publisher for heard in observation.transforms if heard.publisher})
    robot = observation.robot
    return {
        "listened_s": observation.listened_s,
        "frames": len(heard_frames(observation)) if observation.transforms else 0,
        "tf_frames": len(dynamic),
        "tf_static_frames": len(static),
        "tf_publishers": publishers,
        "diagnostic_statuses": len(observation.statuses),
        "clock": "/clock" if observation.clock_ns is not None else "wall",
        "robot": robot.name if robot is not None else None,
        "description_source": observation.description_source or None,
        "not_asked": observation.unasked_nodes,
    }


def counts(findings: Sequence[Finding]) -> dict[str, int]:
    """Number of findings of each severity, by the severity's name."""
    return {
        severity.value: sum(finding.severity is severity for finding in findings)
        for severity in Severity
    }


def json_report(observation: Observation, findings: Sequence[Finding]) -> str:
    document = {
        "healthy": is_healthy(findings),
        "counts": counts(findings),
        "heard": heard_summary(observation),
        "findings": [finding.as_json() for finding in findings],
    }
    return json.dumps(document, indent=2)


def text_report(observation: Observation, findings: Sequence[Finding]) -> str:
    """The findings, most serious first, each with ``cause:`` and ``fix:``, then a summary."""
    heard = heard_summary(observation)
    robot = observation.robot
    described = f"robot {robot.name!r} from {observation.description_source}; " if robot else ""
    publishers = {heard.publisher for heard in observation.transforms if heard.publisher}
    lines = [
        f"listened {observation.listened_s:.1f} s: {described}{heard['tf_frames']} frames on "
        f"/tf, {heard['tf_static_frames']} on /tf_static, from {len(publishers)} named "
        f"publisher(s); {len(observation.statuses)} /diagnostics status(es)",
    ]
    if observation.unasked_nodes:
        lines += wrapped("not asked (no parameter service): ", ", ".join(observation.unasked_nodes))
    lines.append("")
    return "\n".join(lines + findings_lines(findings)) + "\n"


def findings_lines(findings: Sequence[Finding]) -> list[str]:
    """Each finding (severity and summary, cause, fix) and the closing tally: the body of a
    report, live or over a recording."""
    lines: list[str] = []
    for finding in findings:
        lines += wrapped(f"{finding.severity.name}: ", finding.summary)
        lines += wrapped("  cause: ", finding.cause)
        lines += wrapped("  fix:   ", finding.fix)
        lines.append("")
    tally = counts(findings)
    if is_healthy(findings):
        notes = f" ({tally['note']} note(s))" if tally["note"] else ""
        lines.append(f"all checks passed{notes}")
    else:
        lines.append(
            f"{tally['error']} error(s), {tally['warning']} warning(s), {tally['note']} note(s)"
        )
    return lines


def wrapped(head: str, text: str) -> list[str]:
    """``head`` and ``text`` wrapped to ``TEXT_WIDTH``, continuation lines indented under it."""
    return textwrap.wrap(
        text,
        TEXT_WIDTH,
        initial_indent=head,
        subsequent_indent=" " * len(head),
        break_on_hyphens=False,
    )
