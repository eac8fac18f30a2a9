"""Parameters given for the node that it does not declare: which, and what was meant (no rclpy).

rclpy drops a value given for a parameter the node never declares (a params file's section
for the node or its ``/**`` wildcard, a ``-p`` override), and robot_state_publisher says
nothing about it. This node warns once per such key, naming the close matches
(``attachments`` -> ``attachments.names``), and never refuses to start for it: a ``/**``
section holds every node's parameters, so a key there may well be another node's. The node
(``ros.node``) compares its parameter overrides with what it declared; the bag commands
(``bag repair --params``, ``doctor --bag --params``) compare a file's keys with what a node
would declare (``offline_declared``); the fleet's robots are nodes, and check their own.

Also here: ``did_you_mean``, the close-match search under a bound (of names looked up, of
their length and of candidates), for every "no such name" a parameter change can meet.
"""

from __future__ import annotations

import difflib
from collections.abc import Collection, Iterable
from dataclasses import dataclass

from ..description.compose import ATTACHMENT_FIELDS
from .parameters import PARAMETERS, ZEROS_PREFIX, parameter_name, shown, shown_text

#: Parameters every rclpy node declares itself (Jazzy and later: the type description
#: service's too).
ROS_PARAMETERS = ("use_sim_time", "start_type_description_service")
#: Prefixes of parameters rclpy declares for a publisher or subscription made with QoS
#: overriding options (``qos_overrides./topic.subscription.depth``); offline, any is taken.
ROS_PREFIXES = ("qos_overrides.",)
#: Most unknown keys warned about one by one (and looked up for close matches); the others
#: are named in one further warning.
MAX_WARNED = 20
#: Most close matches named per name.
MAX_CLOSE = 3
#: Longest name looked up for close matches (difflib's time grows with its square).
MAX_LOOKED_UP_CHARS = 256
#: Most candidates one lookup compares with (a robot's links or joints, the parameters).
MAX_CANDIDATES = 20_000
#: Most work of one lookup's difflib comparison, in units of about 4 ns: per candidate, the
#: name's length times the candidate's plus ``COMPARISON_WORK``; candidates past the budget
#: are not compared. difflib's time grows with the candidates and their lengths: one name of
#: 256 characters took 6 s among 20,000 links of 256, one of 27 characters 1.8 s among
#: 20,000 near-duplicates, and a remote.frames refusal looks up 10 inside the parameter
#: callback. Some 0.1 s: 1,000 names of 20 characters, 300 of 256.
MAX_LOOKUP_WORK = 25_000_000
#: The fixed work of comparing one candidate (some 90 us), in the units above.
COMPARISON_WORK = 20_000


@dataclass(frozen=True)
class UnknownParameter:
    """A key given for the node that it does not declare, with the declared names close to it."""

    name: str
    close: tuple[str, ...]

    def warning(self) -> str:
        """The one line the node logs for it."""
        hint = f"; did you mean {', '.join(self.close)}?" if self.close else ""
        return (
            f"parameter {shown(self.name)} is given for this node but is none of its "
            f"parameters: ignored{hint} (a /** section is read by every node: if the key "
            "is another node's, this is no problem)"
        )


def close_matches(name: str, candidates: Iterable[str]) -> tuple[str, ...]:
    """At most ``MAX_CLOSE`` of ``candidates`` close to ``name``: those that start with
    ``name.`` (``attachments`` -> ``attachments.names``), then difflib's, best first. None
    for a name longer than ``MAX_LOOKED_UP_CHARS``; at most ``MAX_CANDIDATES`` looked at,
    difflib on those ``compared`` (``MAX_LOOKUP_WORK``)."""
    if len(name) > MAX_LOOKED_UP_CHARS:
        return ()
    pool = [candidate for _, candidate in zip(range(MAX_CANDIDATES), candidates, strict=False)]
    nested = [candidate for candidate in pool if candidate.startswith(name + ".")]
    similar = difflib.get_close_matches(name, compared(name, pool), n=MAX_CLOSE)
    return tuple(dict.fromkeys([*sorted(nested), *similar]))[:MAX_CLOSE]


def compared(name: str, pool: list[str]) -> list[str]:
    """The first of ``pool`` that difflib compares ``name`` with: while their work (the
    name's length times each one's, plus ``COMPARISON_WORK`` each) stays within
    ``MAX_LOOKUP_WORK``."""
    work = 0
    for count, candidate in enumerate(pool):
        work += len(name) * len(candidate) + COMPARISON_WORK
        if work > MAX_LOOKUP_WORK:
            return pool[:count]
    return pool


def did_you_mean(name: str, candidates: Iterable[str]) -> str:
    """``; did you mean a, b?`` naming ``close_matches``, or "" for none."""
    close = close_matches(name, candidates)
    return f"; did you mean {', '.join(close)}?" if close else ""


def unknown_parameters(
    given: Iterable[str],
    declared: Collection[str],
    *,
    known_prefixes: tuple[str, ...] = (),
) -> tuple[UnknownParameter, ...]:
    """The keys of ``given`` (in order, once each) that are not in ``declared`` and start
    with none of ``known_prefixes``; the first ``MAX_WARNED`` with their close matches in
    ``declared``, the others without (a file of thousands of keys stays fast)."""
    unknown = [
        name
        for name in dict.fromkeys(given)
        if name not in declared and not name.startswith(known_prefixes)
    ]
    candidates = sorted(declared)
    return tuple(
        UnknownParameter(name, close_matches(name, candidates) if index < MAX_WARNED else ())
        for index, name in enumerate(unknown)
    )


def counted(unknown: Collection[UnknownParameter]) -> tuple[int, tuple[str, ...]]:
    """How many keys ``unknown`` holds and the first ``MAX_WARNED`` (each as ``shown_text``
    shows a name: cut, a newline or an escape sequence escaped, since rcl takes any key of a
    params file and the report's values are printed as lines), as the health report counts
    them."""
    names = tuple(shown_text(parameter.name) for parameter in list(unknown)[:MAX_WARNED])
    return len(unknown), names


def warnings(unknown: Collection[UnknownParameter]) -> list[str]:
    """The lines to log for ``unknown``: one per key for the first ``MAX_WARNED``, then one
    naming how many more."""
    lines = [parameter.warning() for parameter in list(unknown)[:MAX_WARNED]]
    if len(unknown) > MAX_WARNED:
        more = len(unknown) - MAX_WARNED
        lines.append(
            f"{more} further parameter(s) given for this node are none of its parameters: ignored"
        )
    return lines


def offline_declared(attachments: Iterable[str]) -> frozenset[str]:
    """What a node declares at start besides its ``zeros.<joint>`` and rclpy's QoS
    overrides: the table, rclpy's own, and the fields of the ``attachments`` listed."""
    fields = (parameter_name(name, field) for name in attachments for field in ATTACHMENT_FIELDS)
    return frozenset([*(spec.name for spec in PARAMETERS), *ROS_PARAMETERS, *fields])


def offline_unknown(
    values: Iterable[str], attachments: Iterable[str]
) -> tuple[UnknownParameter, ...]:
    """The unknown keys of a parameters file read offline (the bag commands' ``--params``,
    a fleet's file): against ``offline_declared``, ``zeros.*`` and QoS overrides taken (what
    they name is known only to a node with its model and topics)."""
    return unknown_parameters(
        values, offline_declared(attachments), known_prefixes=(ZEROS_PREFIX, *ROS_PREFIXES)
    )
