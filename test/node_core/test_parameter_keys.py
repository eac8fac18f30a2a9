"""parameter_keys: the keys given for the node that it does not declare, and close matches.

No rclpy: the node's check over DDS (a params file, ``-p``) is in test/ros/test_node_parameters.py,
the bag commands' in test/bag/test_bag_repair.py.
"""

from __future__ import annotations

from joint_tf_publisher.node_core.parameter_keys import (
    COMPARISON_WORK,
    MAX_CANDIDATES,
    MAX_LOOKED_UP_CHARS,
    MAX_LOOKUP_WORK,
    MAX_WARNED,
    close_matches,
    compared,
    counted,
    did_you_mean,
    offline_declared,
    offline_unknown,
    unknown_parameters,
    warnings,
)
from joint_tf_publisher.node_core.parameters import PARAMETERS


def test_a_guessed_name_is_named_with_what_was_meant() -> None:
    """``attachments`` (the spelling a user guesses) -> ``attachments.names``; a misspelt
    name -> the name; a key of a later version or another node: no match, still warned."""
    given = ["attachments", "publish_frequency", "publish_frequncy", "robots", "attachments"]
    unknown = unknown_parameters(given, offline_declared(()))
    assert [(u.name, u.close) for u in unknown] == [
        ("attachments", ("attachments.names",)),
        ("publish_frequncy", ("publish_frequency",)),
        ("robots", ()),
    ]
    line = unknown[0].warning()
    assert "'attachments'" in line and "did you mean attachments.names?" in line
    assert "/**" in line and "another node" in line  # never a reason to refuse


def test_declared_names_and_known_prefixes_are_no_unknown_keys() -> None:
    declared = offline_declared(["tool"])
    assert {spec.name for spec in PARAMETERS} | {"use_sim_time"} <= declared
    assert "attachments.tool.origin" in declared
    keys = ["attachments.tool.file", "zeros.elbow", "qos_overrides./tf.publisher.depth"]
    assert offline_unknown(keys, ["tool"]) == ()
    (unlisted,) = offline_unknown(["attachments.tol.file"], ["tool"])
    assert unlisted.close[0] == "attachments.tool.file"
    # A node with its model knows its zeros: one for a joint it does not have is unknown.
    (zero,) = unknown_parameters(["zeros.elbw"], {"zeros.elbow", "zeros.wrist"})
    assert zero.close[0] == "zeros.elbow"


def test_hostile_numbers_of_keys_stay_bounded() -> None:
    """50,000 unknown keys: each counted, the first ``MAX_WARNED`` warned with their close
    matches, the others in one line; a name too long to compare is not compared."""
    given = [f"parameter_{index}" for index in range(50_000)]
    unknown = unknown_parameters(given, offline_declared(()))
    assert len(unknown) == 50_000
    assert all(not u.close for u in unknown[MAX_WARNED:])
    lines = warnings(unknown)
    assert len(lines) == MAX_WARNED + 1
    assert lines[-1].startswith(f"{50_000 - MAX_WARNED} further parameter(s)")
    long_name = "publish_frequency" + "y" * MAX_LOOKED_UP_CHARS
    assert close_matches(long_name, ["publish_frequency"]) == ()
    # A name of a megabyte: its warning and its count are cut, not a megabyte each.
    (huge,) = unknown_parameters(["x" * 2**20], offline_declared(()))
    assert len(huge.warning()) < 500
    count, (name,) = counted([huge])
    assert count == 1 and name.startswith("xxx") and len(name) < 200
    assert did_you_mean("link_33", ["link_3", "base"]) == "; did you mean link_3?"
    assert did_you_mean("zzz", ["link_3"]) == ""


def test_the_close_match_search_is_bounded_by_its_work() -> None:
    """difflib's time grows with the candidates and their lengths: a name of 256 characters
    among 20,000 links of 256 took 6 s, one of 27 among 20,000 near-duplicates 1.8 s (and a
    remote.frames refusal looks up 10 in the parameter callback). Candidates past the work
    budget are not compared; a real robot's few hundred links all are."""
    name = "\u6f22" * MAX_LOOKED_UP_CHARS
    links = [f"{index:05d}" + "\u5b57" * (MAX_LOOKED_UP_CHARS - 5) for index in range(20_000)]
    pool = compared(name, links)
    work = sum(len(name) * len(link) + COMPARISON_WORK for link in pool)
    assert work <= MAX_LOOKUP_WORK and len(pool) < 400
    near = [f"link_{index}_" + "x" * 15 for index in range(MAX_CANDIDATES)]
    assert len(compared("link_19999_xxxxxxxxxxxxxxy", near)) < 1500
    robot = [f"link_{index}" for index in range(500)]
    assert compared("link_29", robot) == robot
    assert close_matches("link_29", robot)[0] == "link_29"


def test_the_warning_users_read_word_for_word() -> None:
    """The WARN line as node.md quotes it: the close matches joined by ", ", best first; a
    key with none says no "did you mean" at all; every line says why it is no problem."""
    declared = {"link_3", "link_333", "publish_frequency"}
    typo, stranger = unknown_parameters(["link_33", "robots"], declared)
    assert typo.warning() == (
        "parameter 'link_33' is given for this node but is none of its parameters: ignored; "
        "did you mean link_333, link_3? (a /** section is read by every node: if the key is "
        "another node's, this is no problem)"
    )
    assert stranger.warning() == (
        "parameter 'robots' is given for this node but is none of its parameters: ignored "
        "(a /** section is read by every node: if the key is another node's, this is no "
        "problem)"
    )
    assert did_you_mean("link_33", ["link_3", "link_333", "base"]) == (
        "; did you mean link_333, link_3?"
    )


def test_a_name_the_given_key_heads_is_offered_however_unlike_it_is() -> None:
    """``zeros: [0.1, 0.2]`` (a list for the whole robot) is no parameter: the node's
    ``zeros.<joint>`` are offered, though difflib finds them too unlike ``zeros``; several
    are sorted, before difflib's matches."""
    declared = {"zeros.shoulder_pan_joint", "zeros.elbow_joint", "publish_frequency"}
    (zeros,) = unknown_parameters(["zeros"], declared)
    assert zeros.close == ("zeros.elbow_joint", "zeros.shoulder_pan_joint")
    assert close_matches("remote", sorted(offline_declared(()))) == (
        "remote.frames",
        "remote.rate",
        "remote.topic",
    )


def test_exactly_as_many_unknown_keys_as_are_warned_need_no_count_line() -> None:
    """20 unknown keys: 20 warnings, no "0 further" line; the 21st key, a typo, is neither
    warned nor looked up for close matches (a file of thousands of keys stays fast)."""
    given = [f"unknown_key_{index}" for index in range(MAX_WARNED)]
    lines = warnings(unknown_parameters(given, offline_declared(())))
    assert len(lines) == MAX_WARNED
    assert not any("further parameter" in line for line in lines)
    unknown = unknown_parameters([*given, "publish_frequncy"], offline_declared(()))
    assert unknown[MAX_WARNED].name == "publish_frequncy" and unknown[MAX_WARNED].close == ()
    assert warnings(unknown)[-1].startswith("1 further parameter(s)")


def test_a_name_of_the_longest_length_looked_up_is_looked_up() -> None:
    """Names of up to ``MAX_LOOKED_UP_CHARS`` characters get their close matches; one
    character more, none."""
    name = "publish_frequency".ljust(MAX_LOOKED_UP_CHARS, "y")
    assert close_matches(name, [name[:-1]]) == (name[:-1],)
    assert close_matches(name + "y", [name]) == ()


def test_a_candidate_is_compared_while_the_work_reaches_the_budget_exactly() -> None:
    """The budget bounds what a user can be offered: the candidate whose work brings the
    total to ``MAX_LOOKUP_WORK`` exactly is still compared (and suggested), one past it
    never is, however close."""
    name = "camera_optical_frame_".ljust(50, "x")
    match = name + "_link".ljust(50, "k")
    per_candidate = len(name) * len(match) + COMPARISON_WORK
    assert MAX_LOOKUP_WORK % per_candidate == 0, "pick lengths whose work meets the budget"
    within = MAX_LOOKUP_WORK // per_candidate
    others = [f"link_{index:05d}".ljust(len(match), "z") for index in range(within)]
    assert compared(name, [*others[: within - 1], match])[-1] == match
    assert close_matches(name, [*others[: within - 1], match]) == (match,)
    assert close_matches(name, [*others, match]) == ()
