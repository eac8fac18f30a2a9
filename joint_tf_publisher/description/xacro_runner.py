"""The xacro expansion, run in a process of its own (``...xacro_runner < REQUEST``, started
isolated by ``child_process.python_command``).

As ``ros2 launch`` runs the ``xacro`` command, the package runs xacro out of process
(``xacro_process.XacroRun``): xacro evaluates ``${...}`` as Python and may read any file, so it
must not run where it can hold or change the node. The request (one JSON object on stdin: the file,
xacro's arguments, the folders allowed or null, the parameter naming them, the size limit of
a file and of the output, the memory limit) is answered with one JSON object on stdout:
``{"text": ..., "files": [...]}`` (the expanded text, and every file xacro read, as
``xacro --deps`` lists them) or ``{"error": {"reason", "file", "line"}, "files": [...]}``.

The memory limit is the process's address space (``RLIMIT_AS``), set before xacro is imported.
Every file xacro opens (the file, ``<xacro:include>``s, ``load_yaml``) is read by
``files.read_regular_file`` under the same rules as in the node: a regular file within the
size limit, inside the allowed folders.
"""

from __future__ import annotations

import io
import json
import os
import resource
import sys
from pathlib import Path
from typing import Any

from ..errors import ModelError
from .files import FileRules, allowed_folders, read_regular_file, reading_under

#: What an expansion over the memory limit fails with.
OUT_OF_MEMORY = "out of memory (more than the xacro memory limit)"


def _limit_memory(limit_bytes: int) -> None:
    """Cap this process's address space at ``limit_bytes`` (where the system lets it)."""
    try:
        resource.setrlimit(resource.RLIMIT_AS, (limit_bytes, limit_bytes))
    except (ValueError, OSError):
        pass


def _limit_time(cpu_s: float) -> None:
    """Cap this process's CPU time at ``cpu_s`` (0: none), should its parent be gone."""
    if cpu_s > 0:
        try:
            limit = int(cpu_s) + 1
            resource.setrlimit(resource.RLIMIT_CPU, (limit, limit))
        except (ValueError, OSError):
            pass


def _guarded_open(limit_bytes: int) -> Any:
    """An ``open`` for xacro's module: every file read by ``read_regular_file`` (a refusal
    is an OSError to xacro, which names the file that included it)."""

    def open_for_xacro(name: str, mode: str = "r", *args: Any, **kwargs: Any) -> io.StringIO:
        if "r" not in mode or any(flag in mode for flag in "wax+"):
            raise OSError(1, "xacro may not write files here", name)
        try:
            data = read_regular_file(Path(name), limit_bytes)
            return io.StringIO(data.decode("utf-8"))
        except ModelError as err:
            raise OSError(1, err.reason, name) from None
        except UnicodeDecodeError as err:
            raise OSError(1, f"not UTF-8 text (byte offset {err.start})", name) from None

    return open_for_xacro


def expand(request: dict[str, Any]) -> dict[str, Any]:
    """What the runner prints for ``request`` (see the module docstring)."""
    path = str(request["path"])
    limit = int(request["limit_bytes"])
    folders = request.get("allowed")
    rules = FileRules(
        None if folders is None else allowed_folders(folders), str(request["parameter"])
    )
    import xacro

    xacro.open = _guarded_open(limit)  # found before the builtin by xacro.parse, load_yaml
    with reading_under(rules):
        try:
            document = xacro.process_file(path, mappings=dict(request["mappings"]))
            text = str(document.toprettyxml(indent="  "))
        except MemoryError:
            return _error(OUT_OF_MEMORY, path, None, _files(path, xacro))
        except Exception as exc:  # xacro raises many types; report them all
            if _out_of_memory(exc):
                return _error(OUT_OF_MEMORY, path, None, _files(path, xacro))
            stack = xacro.filestack or [None]
            where = stack[-1] or path  # the file xacro was reading when it failed
            reason = " ".join(str(exc).split())  # xacro's messages span lines; keep one
            return _error(reason, str(where), getattr(exc, "lineno", None), _files(path, xacro))
    if len(text.encode()) > limit:
        return _error(f"output is more than the {limit} bytes allowed", path, None, [path])
    return {"text": text, "files": _files(path, xacro)}


def _out_of_memory(exc: BaseException | None) -> bool:
    """Whether ``exc`` is a MemoryError or wraps one (xacro wraps what an expression raises)."""
    seen = 0
    while exc is not None and seen < 100:
        if isinstance(exc, MemoryError):
            return True
        exc = getattr(exc, "exc", None) or exc.__cause__ or exc.__context__
        seen += 1
    return False


def _files(path: str, xacro: Any) -> list[str]:
    return list(dict.fromkeys([path, *(str(name) for name in xacro.all_includes)]))


def _error(reason: str, where: str, line: int | None, files: list[str]) -> dict[str, Any]:
    return {"error": {"reason": reason, "file": where, "line": line}, "files": files}


def main(argv: list[str] | None = None) -> int:
    """Expand the request in ``argv[0]`` (JSON), else on stdin (as ``XacroRun`` sends it),
    print the answer (JSON); exit 0."""
    args = argv if argv is not None else sys.argv[1:]
    request = json.loads(args[0] if args else sys.stdin.buffer.read())
    _limit_memory(int(request["memory_bytes"]))
    _limit_time(float(request.get("cpu_s", 0)))
    if request.get("cwd") is not None:  # None: the node's folder is gone (relative: refused)
        os.chdir(request["cwd"])  # relative paths as the node sees them (not on sys.path)
    try:
        answer = expand(request)
    except MemoryError:
        answer = _error(OUT_OF_MEMORY, request["path"], None, [])
    except ImportError:
        reason = "reading .xacro files needs the 'xacro' package (pip install xacro)"
        answer = _error(reason, request["path"], None, [])
    json.dump(answer, sys.stdout)
    return 0


if __name__ == "__main__":
    sys.exit(main())
