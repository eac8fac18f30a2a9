"""Hostile XML in a robot description: refused, or parsed without reading files or the network.

A ``robot_description`` can be set by anything on the ROS graph, so every case here runs the
real loader (``Robot.from_xml_string`` / ``Robot.load``) in a child process that measures its
own peak resident memory (``resource.getrusage``) and wall time around the call. The child
prints one JSON line; the tests assert on it. Where ``strace`` works, the file-reading cases
also run under it and assert that the secret file is never opened.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from lxml import etree
from repo_paths import REPO_ROOT

from joint_tf_publisher import ModelError
from joint_tf_publisher.description.xmlio import (
    check_entity_expansion,
    libxml2_limits_expansion,
    parse_xml,
)

#: Bounds every hostile case must respect (generous for a loaded 2-core CI machine).
MAX_SECONDS = 10.0
MAX_RSS_GROWTH_MB = 64.0
#: The 50 MB cases hold the document itself (and one encoded copy) in memory.
MAX_RSS_GROWTH_BIG_MB = 200.0

#: Child program: loads one description described by a JSON spec on stdin, prints one JSON line.
PROBE = r"""
import json, resource, sys, time

spec = json.loads(sys.stdin.read())
from joint_tf_publisher import ModelError, Robot


def peak_rss_mb():
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0


def big_urdf(size_bytes):
    links = size_bytes // 24 + 1
    body = "".join('<link name="l%09d"/>\n' % i for i in range(links))
    return '<robot name="big">\n' + body + "</robot>\n"


if "big_urdf_bytes" in spec:
    document = big_urdf(spec["big_urdf_bytes"])
    if "write_to" in spec:
        with open(spec["write_to"], "w") as out:
            out.write(document)
        del document
else:
    document = spec.get("document")
if "address_space_mb" in spec:
    with open("/proc/self/status") as status:
        vm_kb = next(int(l.split()[1]) for l in status if l.startswith("VmSize:"))
    cap = (vm_kb // 1024 + spec["address_space_mb"]) * 1024 * 1024
    resource.setrlimit(resource.RLIMIT_AS, (cap, resource.RLIM_INFINITY))

before_mb = peak_rss_mb()
start = time.perf_counter()
result = {"outcome": "ok", "message": ""}
try:
    if "path" in spec:
        robot = Robot.load(spec["path"])
    else:
        robot = Robot.from_xml_string(document)
except ModelError as exc:
    result = {"outcome": "ModelError", "message": str(exc)}
except BaseException as exc:
    result = {"outcome": type(exc).__name__, "message": repr(exc)[:500]}
else:
    joints = [(j.name, j.origin.tolist()) for j in robot.joints.values()]
    result["robot"] = repr((robot.name, list(robot.links), joints))
result["seconds"] = time.perf_counter() - start
result["rss_growth_mb"] = peak_rss_mb() - before_mb
print(json.dumps(result))
"""


def run_probe(spec: dict[str, Any], strace_log: Path | None = None) -> dict[str, Any]:
    """Run PROBE on ``spec`` (sent on stdin) in a child process, optionally under strace."""
    command = [sys.executable, "-c", PROBE]
    if strace_log is not None:
        command = [
            "strace",
            "-f",
            "-e",
            "trace=open,openat,connect",
            "-o",
            str(strace_log),
            *command,
        ]
    env = dict(os.environ, PYTHONPATH=str(REPO_ROOT))
    completed = subprocess.run(
        command,
        input=json.dumps(spec),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=REPO_ROOT,
        env=env,
    )
    assert completed.returncode == 0, completed.stderr[-2000:]
    report: dict[str, Any] = json.loads(completed.stdout.strip().splitlines()[-1])
    return report


def assert_bounded(report: dict[str, Any], max_growth_mb: float = MAX_RSS_GROWTH_MB) -> None:
    """The load finished within MAX_SECONDS and grew peak RSS by at most ``max_growth_mb``."""
    assert report["seconds"] < MAX_SECONDS, report
    assert report["rss_growth_mb"] < max_growth_mb, report


def assert_clear_model_error(
    report: dict[str, Any], source: str, *words: str | tuple[str, ...]
) -> None:
    """A ModelError whose one-line message starts with ``source`` and names the problem.

    Each of ``words`` must be in the message; a tuple gives alternatives, for the wordings of
    different libxml2 releases (2.9 on Ubuntu 22.04 and 24.04, 2.12+ in current lxml wheels).
    """
    assert report["outcome"] == "ModelError", report
    message = report["message"]
    assert message.startswith(f"{source}:"), message
    assert "\n" not in message.strip(), message
    for word in words:
        alternatives = (word,) if isinstance(word, str) else word
        assert any(option.lower() in message.lower() for option in alternatives), message


def strace_usable(tmp_path: Path) -> bool:
    """True if strace exists and can see this machine's file opens (ptrace may be forbidden)."""
    if shutil.which("strace") is None:
        return False
    marker = tmp_path / "strace-marker"
    marker.write_text("x")
    log = tmp_path / "strace-check.log"
    completed = subprocess.run(
        [
            "strace",
            "-f",
            "-e",
            "trace=open,openat",
            "-o",
            str(log),
            sys.executable,
            "-c",
            f"open({str(marker)!r}).read()",
        ],
        capture_output=True,
        timeout=60,
    )
    return completed.returncode == 0 and log.exists() and str(marker) in log.read_text()


# -- external entities (XXE) ----------------------------------------------------------------

SECRET_POSE = "7.25 8.5 9.75 0 0 0"


@pytest.fixture
def secret_file(tmp_path: Path) -> Path:
    """A local file an attacker would like to read (content doubles as a valid pose)."""
    path = tmp_path / "secret.txt"
    path.write_text(SECRET_POSE)
    return path


def xxe_documents(secret: Path) -> dict[str, str]:
    """Descriptions that try to pull ``secret`` in through an external entity."""
    decl = f'<!DOCTYPE r [<!ENTITY x SYSTEM "file://{secret}">]>'
    param = f'<!DOCTYPE r [<!ENTITY % p SYSTEM "file://{secret}"> %p;]>'
    return {
        "urdf-attribute": f'{decl}<robot name="r"><link name="&x;"/></robot>',
        "urdf-origin": (
            f'{decl}<robot name="r"><link name="a"/><link name="b"/>'
            '<joint name="j" type="fixed"><parent link="a"/><child link="b"/>'
            '<origin xyz="&x;"/></joint></robot>'
        ),
        "urdf-content": f'{decl}<robot name="r">&x;<link name="a"/></robot>',
        "urdf-parameter-entity": f'{param}<robot name="r"><link name="a"/></robot>',
        "sdf-pose-text": (
            f'{decl}<sdf version="1.9"><model name="m"><link name="a"/>'
            '<link name="b"><pose>&x;</pose></link>'
            '<joint name="j" type="fixed"><parent>a</parent><child>b</child>'
            "</joint></model></sdf>"
        ),
    }


def test_unsafe_parser_would_read_the_secret(secret_file: Path) -> None:
    """Control: the documents below really do read the file with a default lxml parser."""
    document = xxe_documents(secret_file)["sdf-pose-text"]
    unsafe = etree.XMLParser(resolve_entities=True)
    root = etree.fromstring(document.encode(), parser=unsafe)
    assert root.findtext("model/link/pose") == SECRET_POSE


@pytest.mark.parametrize(
    "case",
    ["urdf-attribute", "urdf-origin", "urdf-content", "urdf-parameter-entity", "sdf-pose-text"],
)
def test_external_entity_reads_no_file(case: str, secret_file: Path, tmp_path: Path) -> None:
    document = xxe_documents(secret_file)[case]
    strace_log = tmp_path / "strace.log" if strace_usable(tmp_path) else None
    report = run_probe({"document": document}, strace_log=strace_log)
    assert report["outcome"] in ("ok", "ModelError"), report
    assert "7.25" not in json.dumps(report), report
    if strace_log is not None:
        assert str(secret_file) not in strace_log.read_text()
    assert_bounded(report)


def test_external_entity_in_attribute_is_a_clear_model_error(secret_file: Path) -> None:
    report = run_probe({"document": xxe_documents(secret_file)["urdf-origin"]})
    assert_clear_model_error(report, "<string>", "external entity")


# -- entity expansion ---------------------------------------------------------------------------


def billion_laughs(levels: int = 10, fan_out: int = 10, where: str = "attribute") -> str:
    """The classic entity bomb: ``fan_out ** levels`` copies of "lol" if expanded."""
    entities = ['<!ENTITY lol0 "lol">']
    for level in range(1, levels):
        entities.append(f'<!ENTITY lol{level} "{f"&lol{level - 1};" * fan_out}">')
    top = f"&lol{levels - 1};"
    body = (
        f'<robot name="{top}"><link name="a"/></robot>'
        if where == "attribute"
        else f'<robot name="r"><link name="a"/>{top}</robot>'
    )
    return f'<?xml version="1.0"?><!DOCTYPE r [{"".join(entities)}]>{body}'


def quadratic_blowup(entity_bytes: int = 100_000, references: int = 2_000) -> str:
    """One large entity referenced many times (slips past naive nesting limits)."""
    return (
        f'<?xml version="1.0"?><!DOCTYPE r [<!ENTITY x "{"x" * entity_bytes}">]>'
        f'<robot name="{"&x;" * references}"><link name="a"/></robot>'
    )


def test_billion_laughs_in_attribute_is_refused() -> None:
    report = run_probe({"document": billion_laughs(where="attribute")})
    assert_clear_model_error(report, "<string>", "entity")
    assert_bounded(report)


def test_billion_laughs_in_content_is_bounded() -> None:
    report = run_probe({"document": billion_laughs(where="content")})
    assert report["outcome"] in ("ok", "ModelError"), report
    assert "lollol" not in json.dumps(report)
    assert_bounded(report)


def test_quadratic_blowup_is_refused() -> None:
    report = run_probe({"document": quadratic_blowup()})
    assert_clear_model_error(report, "<string>", "entity")
    assert_bounded(report)


# -- the network ------------------------------------------------------------------------------


@pytest.fixture
def listener() -> Any:
    """A TCP socket on loopback that records whether anything connected to it."""
    server = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    server.setblocking(False)
    yield server
    server.close()


def connection_attempted(server: socket.socket) -> bool:
    """True if a client connected (the kernel queues completed connects before accept)."""
    try:
        client, _ = server.accept()
    except BlockingIOError:
        return False
    client.close()
    return True


@pytest.mark.parametrize("form", ["doctype", "entity", "parameter-entity"])
def test_network_dtd_is_never_fetched(form: str, listener: socket.socket) -> None:
    url = f"http://127.0.0.1:{listener.getsockname()[1]}/evil.dtd"
    doctype = {
        "doctype": f'<!DOCTYPE robot SYSTEM "{url}">',
        "entity": f'<!DOCTYPE robot [<!ENTITY x SYSTEM "{url}">]>',
        "parameter-entity": f'<!DOCTYPE robot [<!ENTITY % p SYSTEM "{url}"> %p;]>',
    }[form]
    body = (
        '<robot name="r">&x;<link name="a"/></robot>'
        if form == "entity"
        else ('<robot name="r"><link name="a"/></robot>')
    )
    report = run_probe({"document": f'<?xml version="1.0"?>{doctype}{body}'})
    assert report["outcome"] in ("ok", "ModelError"), report
    assert not connection_attempted(listener)
    assert_bounded(report)


# -- size and depth -----------------------------------------------------------------------------

FIFTY_MB = 50 * 1024 * 1024


def test_fifty_megabyte_string_is_refused_by_size() -> None:
    report = run_probe({"big_urdf_bytes": FIFTY_MB})
    assert_clear_model_error(report, "<string>", "bytes", "allowed")
    assert_bounded(report, MAX_RSS_GROWTH_BIG_MB)


def test_fifty_megabyte_file_is_refused_by_size(tmp_path: Path) -> None:
    path = tmp_path / "big.urdf"
    report = run_probe({"big_urdf_bytes": FIFTY_MB, "write_to": str(path), "path": str(path)})
    assert_clear_model_error(report, str(path), "bytes", "allowed")
    assert_bounded(report, MAX_RSS_GROWTH_BIG_MB)


@pytest.mark.parametrize("kind", ["sparse-4GB-file", "dev-zero"])
def test_endless_file_is_refused_without_reading_it_all(kind: str, tmp_path: Path) -> None:
    """A huge or endless file passed by mistake: refused under a 512 MB address-space cap."""
    if kind == "dev-zero":
        path = Path("/dev/zero")
    else:
        path = tmp_path / "huge.urdf"
        with path.open("wb") as handle:
            handle.truncate(4 * 1024**3)
    report = run_probe({"path": str(path), "address_space_mb": 512})
    assert_clear_model_error(report, str(path))
    assert_bounded(report, MAX_RSS_GROWTH_BIG_MB)


@pytest.mark.parametrize("depth", [1_000, 1_000_000])
def test_deeply_nested_elements_are_refused(depth: int) -> None:
    document = '<robot name="r"><link name="a"/>' + "<a>" * depth + "</a>" * depth + "</robot>"
    report = run_probe({"document": document})
    assert_clear_model_error(report, "<string>:1", "depth")
    assert_bounded(report)


def test_one_huge_attribute_is_refused() -> None:
    """A 20 MB attribute value (beyond libxml2's per-node limit without XML_PARSE_HUGE)."""
    report = run_probe({"document": f'<robot name="{"n" * (20 * 1024 * 1024)}"/>'})
    # libxml2 2.13+: "... exceeds limit"; 2.9 to 2.12: "AttValue length too long".
    assert_clear_model_error(report, "<string>:1", ("limit", "too long"))
    assert_bounded(report, MAX_RSS_GROWTH_BIG_MB)


def test_xinclude_is_not_processed(secret_file: Path) -> None:
    document = (
        '<robot name="r" xmlns:xi="http://www.w3.org/2001/XInclude"><link name="a"/>'
        f'<xi:include href="{secret_file}" parse="text"/></robot>'
    )
    report = run_probe({"document": document})
    assert report["outcome"] in ("ok", "ModelError"), report
    assert "7.25" not in json.dumps(report)


def test_lone_surrogate_in_text_is_a_model_error() -> None:
    """A str that cannot be encoded (e.g. from surrogateescape decoding) is bad input too."""
    report = run_probe({"document": '<robot name="r\udc80"><link name="a"/></robot>'})
    assert_clear_model_error(report, "<string>")


def test_nul_byte_is_a_one_line_model_error() -> None:
    report = run_probe({"document": '<robot name="r"><link name="a\u0000"/></robot>'})
    # libxml2 2.13+: "invalid character"; 2.9 to 2.12: "Char 0x0 out of allowed range".
    assert_clear_model_error(report, "<string>:1", ("invalid", "out of allowed range"))


# -- the entity expansion guard for libxml2 before 2.11 (Ubuntu 22.04 and 24.04 ship 2.9) ----


def test_libxml2_releases_with_and_without_their_own_amplification_limit() -> None:
    assert not libxml2_limits_expansion((2, 9, 14))
    assert not libxml2_limits_expansion((2, 10, 3))
    assert libxml2_limits_expansion((2, 11, 0))
    assert libxml2_limits_expansion((2, 14, 6))


@pytest.mark.parametrize(
    "document",
    [quadratic_blowup(), billion_laughs(), billion_laughs(where="content")],
    ids=["quadratic", "billion-laughs-attribute", "billion-laughs-content"],
)
def test_entity_expansion_guard_refuses_blowups(document: str) -> None:
    with pytest.raises(ModelError, match=r"^<string>:1: malformed XML: entity expansion refused"):
        check_entity_expansion(document.encode())


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le", "utf-16-be", "utf-32", "utf-32-be"])
def test_entity_expansion_guard_reads_wide_encodings(encoding: str) -> None:
    with pytest.raises(ModelError, match="amplification"):
        check_entity_expansion(quadratic_blowup().encode(encoding))


def test_entity_expansion_guard_refuses_a_reference_loop_on_its_line() -> None:
    document = '<!DOCTYPE r [<!ENTITY a "&b;"><!ENTITY b "&a;">]>\n<robot name="&a;"/>'
    with pytest.raises(ModelError, match=r"^<string>:2: malformed XML: entity expansion"):
        check_entity_expansion(document.encode())


def test_entity_expansion_guard_refuses_internal_parameter_entities() -> None:
    document = '<!DOCTYPE r [\n<!ENTITY % p "<!ENTITY x \'y\'>"> %p;]><robot name="&x;"/>'
    with pytest.raises(ModelError, match=r"^<string>:2: .*internal parameter entities"):
        check_entity_expansion(document.encode())


def test_entity_expansion_guard_lets_small_entities_through() -> None:
    document = (
        '<!DOCTYPE r [<!ENTITY pi "3.14159"><!ENTITY two_pi "&pi;&pi;">'
        f'<!ENTITY x SYSTEM "file:///etc/hostname">]><robot name="{"&two_pi;&x;" * 1000}"/>'
    )
    check_entity_expansion(document.encode())
    check_entity_expansion(b'<robot name="r"><link name="a&amp;b"/></robot>')


def test_parse_xml_uses_the_guard_under_an_old_libxml2(monkeypatch: pytest.MonkeyPatch) -> None:
    """As on Humble or Jazzy's system lxml (libxml2 2.9): the guard refuses before libxml2."""
    monkeypatch.setattr(etree, "LIBXML_VERSION", (2, 9, 14))
    with pytest.raises(ModelError, match=r"libxml2 2\.9\.14 has no limit of its own"):
        parse_xml(quadratic_blowup())
    assert parse_xml('<!DOCTYPE r [<!ENTITY n "r">]><robot name="&n;"/>').get("name") == "r"


# -- undeclared namespace prefixes: declared and parsed again, with every protection --------


def with_undeclared_prefix(document: str) -> str:
    """``document`` with ``drake:`` markup (never declared) on and under its root element."""
    for root in ("<robot ", "<sdf "):
        if root in document:
            head, tail = document.split(root, 1)
            document = f'{head}{root}drake:units="SI" {tail}'
    closing = "</robot>" if "</robot>" in document else "</sdf>"
    return document.replace(closing, f'<drake:extra value="1"/>{closing}')


@pytest.mark.parametrize(
    "case",
    ["urdf-attribute", "urdf-origin", "urdf-content", "urdf-parameter-entity", "sdf-pose-text"],
)
def test_undeclared_prefix_and_external_entity_read_no_file(
    case: str, secret_file: Path, tmp_path: Path
) -> None:
    document = with_undeclared_prefix(xxe_documents(secret_file)[case])
    assert "drake:units" in document and "xmlns:drake" not in document
    strace_log = tmp_path / "strace.log" if strace_usable(tmp_path) else None
    report = run_probe({"document": document}, strace_log=strace_log)
    assert report["outcome"] in ("ok", "ModelError"), report
    assert "7.25" not in json.dumps(report), report
    if strace_log is not None:
        assert str(secret_file) not in strace_log.read_text()
    assert_bounded(report)


def test_undeclared_prefix_and_external_entity_is_the_same_model_error(secret_file: Path) -> None:
    report = run_probe(
        {"document": with_undeclared_prefix(xxe_documents(secret_file)["urdf-origin"])}
    )
    assert_clear_model_error(report, "<string>", "external entity")


@pytest.mark.parametrize(
    "document",
    [billion_laughs(where="attribute"), quadratic_blowup()],
    ids=["billion-laughs", "quadratic"],
)
def test_undeclared_prefix_and_entity_bomb_is_refused(document: str) -> None:
    report = run_probe({"document": with_undeclared_prefix(document)})
    assert_clear_model_error(report, "<string>", "entity")
    assert "drake" not in report["message"]
    assert_bounded(report)


def test_undeclared_prefix_and_entity_bomb_under_an_old_libxml2(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(etree, "LIBXML_VERSION", (2, 9, 14))
    with pytest.raises(ModelError, match=r"libxml2 2\.9\.14 has no limit of its own"):
        parse_xml(with_undeclared_prefix(quadratic_blowup()))


def test_undeclared_prefix_and_deep_nesting_is_refused() -> None:
    depth = 1_000_000
    document = '<robot name="r" drake:x="1"><link name="a"/>' + "<a>" * depth + "</a>" * depth
    report = run_probe({"document": document + "</robot>"})
    assert_clear_model_error(report, "<string>:1", "depth")
    assert_bounded(report)
