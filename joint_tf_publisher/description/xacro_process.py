"""A xacro expansion in a child process, with a time and a memory limit (``xacro_runner``).

xacro's arguments given at runtime (a request from the graph, not the start) are checked
first (``check_arguments``): xacro pastes ``$(arg NAME)`` into the text of a ``${...}``
expression before it evaluates it as Python, so a value holding a quote or a bracket could
close ``'$(arg mode)'`` and run code. A value given at runtime holds only letters, digits and
``_ . , : / + -`` (never ``__``): inside quotes it stays a string, outside it can name and
combine, but never call anything. The start's values (launch file, command line, parameters
file) are the operator's own and passed as they are, also when a runtime request reuses them.

``XacroRun`` starts ``joint_tf_publisher.description.xacro_runner`` (``child_process``:
isolated from the node's working folder and ``PYTHONPATH``; the request on its stdin, not its
command line, whose one argument holds at most 128 KiB on Linux) for one file (after reading the
file itself with ``files.read_regular_file``, so a FIFO, a device, an oversize file or one
outside the allowed folders is refused at once, without a child). The child's answer goes
to an anonymous temporary file (no pipe to drain), so the parent may either
``wait`` for it (a parameter change must answer synchronously: it waits up to the deadline,
and gives up within ``POLL_S`` once ``FileRules.stopped`` says the process is stopping) or
look on later (``done``, then ``result``: the node's file watch never blocks). A child past
``XACRO_TIME_LIMIT_S`` is killed and the expansion refused; one over ``XACRO_MEMORY_LIMIT_BYTES``
of address space fails with "out of memory". Nothing is left of an expansion in the parent
(xacro's module-wide lists live and die with the child).
"""

from __future__ import annotations

import json
import re
import subprocess
import tempfile
import time
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import IO, Any

from ..child_process import python_command, working_folder
from ..errors import ModelError
from .files import FileRules, current_rules, read_regular_file, reading_under

#: Longest a xacro expansion may take, seconds (wall clock, the child's start included; a
#: UR5 or PR2 xacro takes well under a second).
XACRO_TIME_LIMIT_S = 5.0
#: Most address space the xacro child may map, bytes (``RLIMIT_AS``; Python and xacro take
#: about 40 MiB of it).
XACRO_MEMORY_LIMIT_BYTES = 512 * 1024 * 1024
#: How often a waiting parent looks at the child and the stop flag, seconds.
POLL_S = 0.02
#: The runner's module.
RUNNER_MODULE = "joint_tf_publisher.description.xacro_runner"
#: The parameter that gives xacro's arguments (named in a refusal).
ARGUMENTS_PARAMETER = "description_args"
#: What a xacro argument's value given at runtime may hold (the whole value).
PLAIN_VALUE = re.compile(r"[A-Za-z0-9_.,:/+-]*")
#: ``PLAIN_VALUE`` in words.
PLAIN_VALUE_WORDS = "letters, digits and _ . , : / + - (never two underscores in a row)"


class XacroFailed(ModelError):
    """xacro failed on a file: ``files`` are those it read up to the failure (the file that
    failed included), so a watch of them sees the save that fixes it."""

    def __init__(self, reason: str, *, source: str, line: int | None, files: tuple[Path, ...]):
        super().__init__(f"xacro failed: {reason}", source=source, line=line)
        self.files = files


def check_arguments(mappings: Mapping[str, str], rules: FileRules) -> None:
    """ModelError naming ``description_args`` and the argument when ``rules`` are a running
    node's and a value of ``mappings`` that the start did not give is not plain
    (``PLAIN_VALUE``, no ``__``); see the module docstring."""
    if not rules.at_runtime:
        return
    for name, value in mappings.items():
        if (name, value) in rules.start_arguments:
            continue
        flaw = _flaw(value)
        if flaw is not None:
            raise ModelError(
                f"the value of {name!r} given at runtime holds {flaw}; a value from the graph "
                f"may hold only {PLAIN_VALUE_WORDS}, so that it cannot change an expression "
                "xacro evaluates: give other values at start (launch file, command line, "
                "parameters file)",
                source=ARGUMENTS_PARAMETER,
            )


def _flaw(value: str) -> str | None:
    """What makes ``value`` not plain (the first character not allowed, or ``__``)."""
    if PLAIN_VALUE.fullmatch(value) is None:
        offset = next(i for i, char in enumerate(value) if not PLAIN_VALUE.fullmatch(char))
        return f"{value[offset]!r} at offset {offset}"
    if "__" in value:
        return f"'__' at offset {value.index('__')}"
    return None


class XacroRun:
    """One expansion of ``path`` with xacro arguments ``mappings``, running in a child under
    ``rules`` (default: the current ones) from construction on; ModelError at construction
    when the file itself or a runtime argument (``check_arguments``) is refused."""

    def __init__(
        self,
        path: Path,
        mappings: Mapping[str, str],
        rules: FileRules | None = None,
        *,
        limit_bytes: int,
        time_limit_s: float = XACRO_TIME_LIMIT_S,
        memory_limit_bytes: int = XACRO_MEMORY_LIMIT_BYTES,
    ) -> None:
        self.path = path
        self.rules = rules or current_rules()
        self.time_limit_s = time_limit_s
        check_arguments(mappings, self.rules)
        with reading_under(self.rules):  # a FIFO, a device, outside the folders: refused here
            read_regular_file(path, limit_bytes)
        request = {
            "path": str(path),
            "mappings": dict(mappings),
            "allowed": None
            if self.rules.allowed is None
            else [str(folder) for folder in self.rules.allowed],
            "parameter": self.rules.parameter,
            "limit_bytes": limit_bytes,
            "memory_bytes": memory_limit_bytes,
            "cwd": working_folder(),
            "cpu_s": time_limit_s,
        }
        self._output: IO[bytes] = tempfile.TemporaryFile()
        self._limit_bytes = limit_bytes
        self._deadline = time.monotonic() + time_limit_s
        with tempfile.TemporaryFile() as sent:  # on stdin: a command line holds ~128 KiB
            sent.write(json.dumps(request).encode())
            sent.seek(0)
            self._process = subprocess.Popen(
                python_command(RUNNER_MODULE),
                stdin=sent,
                stdout=self._output,
                cwd="/",  # the runner goes to the node's folder (request's cwd) once started
            )
        self._answer: tuple[str, tuple[Path, ...]] | ModelError | None = None

    def done(self) -> bool:
        """Whether the answer is there (the child ended, or it was killed at the deadline)."""
        if self._answer is None:
            if self._process.poll() is not None:
                self._answer = self._collect()
            elif time.monotonic() >= self._deadline:
                self._answer = self._stop(
                    f"xacro took more than the {self.time_limit_s:g} s allowed: stopped"
                )
        return self._answer is not None

    def result(self) -> tuple[str, tuple[Path, ...]]:
        """xacro's output and the files it read (``done()`` first); ModelError naming the file,
        line and reason where it failed."""
        if not self.done():
            raise RuntimeError("XacroRun.result() before done()")
        if isinstance(self._answer, ModelError):
            raise self._answer
        assert self._answer is not None
        return self._answer

    def wait(self, stopped: Callable[[], bool] | None = None) -> tuple[str, tuple[Path, ...]]:
        """``result`` once there (at most the time limit); ModelError at once when
        ``stopped()`` (default: the rules') turns true, the child killed."""
        stopped = stopped or self.rules.stopped
        while not self.done():
            if stopped():
                self._answer = self._stop("the node is stopping: xacro stopped")
                break
            time.sleep(POLL_S)
        return self.result()

    def cancel(self) -> None:
        """Kill the child if it still runs (its answer no longer wanted)."""
        if self._answer is None:
            self._answer = self._stop("cancelled")

    def _stop(self, reason: str) -> ModelError:
        self._process.kill()
        self._process.wait()
        self._output.close()
        return ModelError(reason, source=str(self.path))

    def _collect(self) -> tuple[str, tuple[Path, ...]] | ModelError:
        """The child's answer, read from its output file."""
        self._output.seek(0)
        data = self._output.read(2 * self._limit_bytes + 65536)  # JSON escapes add some
        self._output.close()
        try:
            answer: dict[str, Any] = json.loads(data)
        except ValueError:
            code = self._process.returncode
            return ModelError(
                f"xacro ended without an answer (exit status {code})", source=str(self.path)
            )
        files = tuple(dict.fromkeys([self.path, *(Path(name) for name in answer["files"])]))
        error = answer.get("error")
        if error is not None:
            line = error.get("line")
            return XacroFailed(
                str(error["reason"]),
                source=str(error.get("file") or self.path),
                line=int(line) if line is not None else None,
                files=files,
            )
        return str(answer["text"]), files
