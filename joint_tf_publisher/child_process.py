"""The one way the package starts a Python process of its own, isolated from the caller.

``python_command(module, *args)`` is the command line of every Python child of the package:
the xacro runner (``description.xacro_process``), the bag writer (``cli.bag.writer_process``) and
the node that the command line's ``run`` starts (``cli.demo``). ``python -m`` and ``python
-c`` put the working folder first on ``sys.path`` (a ``queue.py`` there ran in the bag
writer, #43.2), and ``PYTHONPATH`` goes before the standard library. So the child runs
``sys.executable -I`` (isolated: neither the working folder nor a script's folder on its path;
``PYTHONPATH``, ``PYTHONSTARTUP`` and the other ``PYTHON*`` variables ignored; no user
site-packages; Python 3.10's ``-I`` does this as 3.11's does) and a short ``-c`` that sets its
path (``child_path``) and runs the module as ``-m`` would.

The child's path is the parent's, which the parent's own imports came from, vetted: without
``''``, relative folders and the working folder; the standard library first (a ``json.py``
on ``PYTHONPATH`` cannot stand in for the standard one); then the other folders in the
parent's order (a sourced ROS 2 distro and its overlays come through ``PYTHONPATH``: xacro,
rclpy), then the folder this package is imported from. A module of this package is run from
the parent's copy of it, also where another copy comes first on that path (a colcon install
beside a checkout): the parent and its child speak one protocol (the bag writer's frames).
stdlib only, so that the xacro runner stays light.

A program of another kind (Graphviz's ``dot`` for ``graph``) is found by ``program``: on
``PATH``'s absolute folders only (an empty or relative entry, such as ``.``, would name the
working folder).
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Sequence
from pathlib import Path

#: The folder this package is imported from (last on a child's path: found as here).
PACKAGE_ROOT = str(Path(__file__).resolve().parent.parent)
#: This package's name and the folder its modules are imported from as this process found
#: it (not resolved: a symlinked folder of another name, as colcon's ``--symlink-install``
#: makes, or a zip file's inside): a child runs the parent's copy of the package.
PACKAGE = __name__.partition(".")[0]
_PACKAGE_LOCATION = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

#: The child's first code: its path set (``{path}``), then ``{module}`` run as ``-m`` runs it.
_BOOTSTRAP = (
    "import sys; sys.path[:] = {path!r}; {pin}import runpy; "
    "runpy.run_module({module!r}, run_name='__main__', alter_sys=True)"
)
#: Before a module of this package is run: the package imported from the parent's copy
#: (found in ``_PACKAGE_LOCATION`` by the import system's own finders: a folder, a symlink
#: to one, a zip file), whatever other copy comes first on the path (a colcon install
#: beside a checkout, a pip install beside a workspace), so that parent and child speak the
#: same protocol; its modules then come from that copy (the package's ``__path__``). A copy
#: moved or deleted since the parent started is said in one line naming where it was.
_PIN = (
    "import importlib.machinery as f, importlib.util as u; "
    "s = f.PathFinder.find_spec({package!r}, [{location!r}]); "
    "s or sys.exit({gone!r}); m = sys.modules[s.name] = u.module_from_spec(s); "
    "s.loader.exec_module(m); "
)


def _standard_library(folder: str) -> bool:
    """Whether ``folder`` holds the interpreter's standard library (its ``lib/pythonX.Y``,
    ``lib-dynload``, ``pythonXY.zip``): under the base prefix, not a site-packages folder."""
    parts = Path(folder).parts
    if "site-packages" in parts or "dist-packages" in parts:
        return False
    return any(
        folder == prefix or folder.startswith(prefix.rstrip(os.sep) + os.sep)
        for prefix in {sys.base_prefix, sys.base_exec_prefix}
    )


def working_folder() -> str | None:
    """This process's working folder; None where it is gone (deleted, or no longer
    reachable: ``os.getcwd`` fails, and a child can still start, from ``/``)."""
    try:
        return os.getcwd()
    except OSError:
        return None


#: The working folder when this module was imported (None: gone already): ``python -m``
#: put it first on this process's path as an absolute folder, and it stays off a child's
#: path also once it is deleted (a folder made again at that name, in ``/tmp`` by anyone,
#: is not imported from).
STARTED_IN = working_folder()


def child_path(path: Sequence[str], cwd: str | None) -> list[str]:
    """The ``sys.path`` of a child of a process whose path is ``path`` and whose working
    folder is ``cwd`` (None: gone): absolute folders other than ``cwd`` and ``STARTED_IN``
    (however spelled: symlinks, ``..``), the standard library first, the others in their
    order, then ``PACKAGE_ROOT``; each once."""
    here = {os.path.realpath(folder) for folder in (cwd, STARTED_IN) if folder is not None}
    vetted = [
        folder
        for folder in dict.fromkeys(path)
        if os.path.isabs(folder) and os.path.realpath(folder) not in here
    ]
    standard = [folder for folder in vetted if _standard_library(folder)]
    others = [folder for folder in vetted if not _standard_library(folder)]
    return list(dict.fromkeys([*standard, *others, PACKAGE_ROOT]))


def python_command(
    module: str,
    *args: str,
    path: Sequence[str] | None = None,
    unbuffered: bool = False,
) -> list[str]:
    """The command that runs ``module`` (as ``python -m module args`` would: ``__main__``,
    ``sys.argv[1:]`` = ``args``) in ``sys.executable`` isolated from the caller: see the
    module docstring. ``path``: the parent's ``sys.path`` (default: this process's);
    ``unbuffered``: ``-u`` (``-I`` ignores ``PYTHONUNBUFFERED``)."""
    folders = child_path(sys.path if path is None else path, working_folder())
    flags = ["-I", "-u"] if unbuffered else ["-I"]
    pin = ""
    if module == PACKAGE or module.startswith(f"{PACKAGE}."):
        gone = (
            f"{PACKAGE}: no package {PACKAGE} in {_PACKAGE_LOCATION} (moved or deleted since "
            "the process that starts this one imported it from there)"
        )
        pin = _PIN.format(package=PACKAGE, location=_PACKAGE_LOCATION, gone=gone)
    code = _BOOTSTRAP.format(path=folders, pin=pin, module=module)
    return [sys.executable, *flags, "-c", code, *args]


def program(name: str) -> str | None:
    """The program ``name`` as ``shutil.which`` finds it, on the absolute folders of ``PATH``
    only (never the working folder); None where there is none."""
    folders = os.environ.get("PATH", os.defpath).split(os.pathsep)
    return shutil.which(name, path=os.pathsep.join(f for f in folders if os.path.isabs(f)))
