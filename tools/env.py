#!/usr/bin/env python3
"""Create or check the project environment ``.venv`` (``make env``), and build any venv of the
project: ``ensure_venv`` (tools/compat.py's environments too).

Two worlds:

* A ROS 2 is sourced (the interpreter running this script, or the one under it when it is
  run from a venv this script made, imports ``rclpy`` and ``tf2_msgs``): a distro
  (/opt/ros/<distro>/setup.bash) or the ROS 2 client kit that ``make`` builds and sources
  where no distro is (tools/ros_env.sh). ``.venv`` is layered on that interpreter
  (``create_venv``) and only the non-ROS Python dependencies (requirements/dev.txt) that the
  ROS interpreter lacks go into it; like the ROS Python itself, ``.venv`` then works where
  that ROS is sourced.
* No ROS 2 (plain Python 3.11, CI, a laptop): ``.venv`` gets ROS 2 Kilted from PyPI wheels
  (requirements/ros.txt); where ``tf2_msgs`` is still not importable, the one-message
  interface package in interfaces/tf2_msgs is generated with ament_cmake and installed into
  the venv prefix; then requirements/dev.txt.

Both end with ``pip install -e .``. A venv is built from its inputs (for ``.venv``: the
requirements, interfaces/, setup.py, setup.cfg, package.xml, this script, the mode, the Python
version and the ROS interpreter it is layered on) and stamped with their hash in
``.jtp-env-ok``, written LAST. A run that finds the stamp current and the venv's check passing
does nothing else (about a second); any other venv is removed and built again, never updated in
place, so it never keeps a package its inputs no longer name.

``--extra FILE`` then pip installs the requirements FILE into the ready venv under the same
numpy constraints (``make bench``: requirements/bench.txt).

Exit status 0 when the environment is ready (or, with ``--check``, already current), non-zero
otherwise.
"""

from __future__ import annotations

import argparse
import contextlib
import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
MARKER_NAME = ".jtp-env-ok"
#: Every setup step's command and output, appended; removed after a successful build.
LOG_FILE = Path(tempfile.gettempdir()) / f"jtp-env-{os.getpid()}.log"
#: In a venv layered on a ROS interpreter that is itself a venv: names that one's site-packages.
ROS_BASE_PTH = "_jtp_ros_base.pth"
MODE_ROS = "sourced-ros"
MODE_PIP = "pip-wheels"
#: The Jazzy world (``--world jazzy``, ``.venv-jazzy``): ROS 2 Jazzy's PyPI wheels in a venv of
#: their own, beside whichever ROS ``.venv`` uses, for the node's DDS tests under Jazzy's rclpy.
MODE_JAZZY = "pip-jazzy"
WORLD_VENVS = {"ros": ".venv", "jazzy": ".venv-jazzy"}
JAZZY_PYTHON = (3, 11)
READY_PROBE = (
    "import rclpy, tf2_msgs.msg, sensor_msgs.msg, geometry_msgs.msg, std_msgs.msg, "
    "diagnostic_msgs.msg, joint_tf_publisher"
)
TF2_MSGS_SOURCE = ROOT / "interfaces" / "tf2_msgs"
# The requirement files this script installs per mode (others, e.g. bench.txt, belong to
# other targets): the ROS wheels, what generating tf2_msgs needs, the development tools.
REQUIREMENT_FILES = {
    MODE_ROS: ("dev.txt",),
    MODE_PIP: ("ros.txt", "tf2_msgs-build.txt", "dev.txt"),
    MODE_JAZZY: ("jazzy.txt", "tf2_msgs-build-jazzy.txt"),
}
#: Packages built against numpy's C API that a ROS Python may have: over a sourced ROS 2,
#: pip is held to its versions of them (``ros_constraints``), never installing others over them.
NUMPY_ABI_PACKAGES = ("numpy", "scipy")
#: What sourcing a ROS 2 (a distro's setup.bash, the kit's env.sh, a colcon workspace, and
#: tools/ros_env.sh's own JTP_ROS_WORLD and JTP_PYTHON) or entering a venv sets for Python,
#: libraries and CMake: the Jazzy world must see none of it.
SOURCED_VARIABLES = (
    "JTP_ROS_WORLD",
    "JTP_PYTHON",
    "PYTHONPATH",
    "LD_LIBRARY_PATH",
    "AMENT_PREFIX_PATH",
    "CMAKE_PREFIX_PATH",
    "COLCON_PREFIX_PATH",
    "ROS_DISTRO",
    "ROS_VERSION",
    "ROS_PYTHON_VERSION",
)
#: The console scripts ``pip install -e .`` puts in the venv (``make run`` starts one).
CONSOLE_SCRIPTS = ("joint-tf-publisher", "joint_tf_publisher")


class EnvError(RuntimeError):
    """A setup step failed; the message says which and how to look further."""


def log(message: str) -> None:
    """One progress line on stderr, prefixed so it stands out in ``make`` output."""
    print(f"[env] {message}", file=sys.stderr, flush=True)


def base_python() -> str:
    """The interpreter that builds the venv: the base one even if run from inside a venv."""
    base = getattr(sys, "_base_executable", None) or sys.executable
    return str(base)


def venv_python(venv: Path) -> Path:
    """The venv's own interpreter (the ROS wheels' bootstrap needs exactly this one)."""
    return venv / "bin" / "python"


def clean_env() -> dict[str, str]:
    """The caller's environment without variables that would leak an outer venv's state."""
    env = dict(os.environ)
    for name in ("VIRTUAL_ENV", "PYTHONHOME", "_ROS_WHEELS_BOOTSTRAP_COMPLETE"):
        env.pop(name, None)
    return env


def unsourced_env() -> dict[str, str]:
    """``clean_env()`` without any sourced ROS 2: no SOURCED_VARIABLES, and no PATH entry
    inside a sourced prefix or venv (the environment the Jazzy world builds and runs in)."""
    env = clean_env()
    prefixes = [
        entry
        for name in ("AMENT_PREFIX_PATH", "COLCON_PREFIX_PATH", "VIRTUAL_ENV")
        for entry in os.environ.get(name, "").split(os.pathsep)
        if entry
    ]
    for name in SOURCED_VARIABLES:
        env.pop(name, None)
    path = env.get("PATH", "").split(os.pathsep)
    env["PATH"] = os.pathsep.join(
        entry for entry in path if not any(entry.startswith(prefix) for prefix in prefixes)
    )
    return env


def python_output(python: str | Path, code: str) -> str:
    """What ``python -c code`` prints (CalledProcessError when it fails)."""
    return subprocess.run(
        [str(python), "-c", code], env=clean_env(), capture_output=True, text=True, check=True
    ).stdout


def python_imports(python: str | Path, code: str) -> bool:
    """True when ``python -c code`` exits 0."""
    try:
        python_output(python, code)
    except subprocess.CalledProcessError:
        return False
    return True


def ros_python_candidate() -> str:
    """The interpreter that would carry a sourced ROS 2: this one, unless it is a project venv.

    ``make`` runs this script with the first ``python3`` on PATH: a distro's system Python or
    the kit's venv Python. From inside a venv this script made (an activated ``.venv``, which
    holds the ready marker) the interpreter under it is the candidate instead, so a venv is
    never layered on itself.
    """
    if (Path(sys.prefix) / MARKER_NAME).is_file():
        return base_python()
    return sys.executable


def detect_mode() -> str:
    """``sourced-ros`` when the candidate ROS interpreter imports rclpy and tf2_msgs."""
    if python_imports(ros_python_candidate(), "import rclpy, tf2_msgs.msg"):
        return MODE_ROS
    return MODE_PIP


def site_packages_of(python: str) -> list[str]:
    """``python``'s prefix, base prefix and site-packages folders (``site.getsitepackages()``)."""
    code = (
        "import site, sys; print(sys.prefix); print(sys.base_prefix); "
        "print('\\n'.join(site.getsitepackages()))"
    )
    return python_output(python, code).splitlines()


def ros_base(mode: str) -> str:
    """What the venv is layered on: the ROS interpreter's prefix, or "" without a sourced ROS."""
    if mode != MODE_ROS:
        return ""
    return site_packages_of(ros_python_candidate())[0]


def input_files() -> list[Path]:
    """Every file whose content decides what a venv holds, in a stable order."""
    files = [ROOT / "setup.py", ROOT / "setup.cfg", ROOT / "package.xml", Path(__file__)]
    # Every mode's (a sourced ROS's install reads a wheel's line in ros.txt, too).
    files.extend(
        ROOT / "requirements" / name for names in REQUIREMENT_FILES.values() for name in names
    )
    if TF2_MSGS_SOURCE.is_dir():
        files.extend(path for path in TF2_MSGS_SOURCE.rglob("*") if path.is_file())
    return sorted({path.resolve() for path in files if path.is_file()})


def inputs_stamp(mode: str) -> str:
    """sha256 over the inputs' paths (relative to the repository) and contents, the mode, the
    Python version and the ROS interpreter the venv is layered on (``ros_base``)."""
    header = f"mode={mode}\npython={sys.version_info[:2]}\nbase={ros_base(mode)}\n"
    digest = hashlib.sha256(header.encode())
    for path in input_files():
        digest.update(str(path.relative_to(ROOT)).encode() + b"\0")
        digest.update(path.read_bytes() + b"\0")
    return digest.hexdigest()


def venv_ready(venv: Path) -> bool:
    """The quick check: the package's console scripts exist (its editable install is there;
    an import alone could find the checkout through the working directory or a sourced colcon
    workspace) and the venv's interpreter imports ROS 2 and the package."""
    python = venv_python(venv)
    scripts = all((venv / "bin" / name).is_file() for name in CONSOLE_SCRIPTS)
    return python.exists() and scripts and python_imports(python, READY_PROBE)


def stale_reason(venv: Path, stamp: str, ready: Callable[[Path], bool]) -> str | None:
    """Why ``venv`` is not the one built from the inputs whose hash is ``stamp`` and passing
    ``ready``; None when it is."""
    marker = venv / MARKER_NAME
    if not marker.is_file():
        return "no ready marker (half-built or never built)"
    if marker.read_text(encoding="utf-8").strip() != stamp:
        return "its inputs changed"
    if not ready(venv):
        return "its check failed"
    return None


@contextlib.contextmanager
def exclusive_lock(venv: Path) -> Iterator[None]:
    """Serialise concurrent builds of the same venv (teammates, parallel tests)."""
    key = hashlib.sha256(str(venv.resolve()).encode()).hexdigest()[:16]
    lock_path = Path(tempfile.gettempdir()) / f"jtp-env-{key}.lock"
    with lock_path.open("w") as handle:
        try:
            fcntl.flock(handle, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            log(f"another build of {venv} is running; waiting for it")
            fcntl.flock(handle, fcntl.LOCK_EX)
        yield


def ensure_venv(
    venv: Path,
    stamp: str,
    build: Callable[[Path], None],
    ready: Callable[[Path], bool],
    *,
    rebuild: bool = False,
) -> str | None:
    """Make ``venv`` the one built from the inputs whose hash is ``stamp``: kept while its
    marker holds ``stamp`` and ``ready(venv)``; else (or with ``rebuild``) removed and made
    anew by ``build(venv)``, the marker written last (an interrupted build leaves none). Why it
    was built, or None when kept."""

    def reason() -> str | None:
        return "asked to" if rebuild else stale_reason(venv, stamp, ready)

    if reason() is None:
        return None
    with exclusive_lock(venv):
        why = reason()  # a concurrent run may have built it meanwhile
        if why is None:
            return None
        log(f"building {venv}: {why}; full log in {LOG_FILE}")
        shutil.rmtree(venv, ignore_errors=True)
        build(venv)
        if not ready(venv):
            raise EnvError(f"{venv} was built but its check still fails; see {LOG_FILE}")
        (venv / MARKER_NAME).write_text(stamp, encoding="utf-8")
        LOG_FILE.unlink(missing_ok=True)
    return why


def run(
    command: Sequence[str | Path], *, cwd: Path = ROOT, env: dict[str, str] | None = None
) -> str:
    """Run a setup step, its output appended to LOG_FILE; its output, or EnvError with the
    command and its output's tail."""
    argv = [str(part) for part in command]
    started = time.monotonic()
    result = subprocess.run(
        argv,
        cwd=cwd,
        env=env if env is not None else clean_env(),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        check=False,
    )
    with LOG_FILE.open("a", encoding="utf-8") as handle:
        handle.write(f"$ {' '.join(argv)}\n{result.stdout}\n")
    if result.returncode != 0:
        tail = "\n".join(result.stdout.splitlines()[-40:])
        raise EnvError(f"command failed ({result.returncode}): {' '.join(argv)}\n{tail}")
    log(f"  done in {time.monotonic() - started:.1f} s: {' '.join(argv[:6])}...")
    return result.stdout


def pip_install(venv: Path, *args: str | Path) -> None:
    """``pip install`` into the venv, quietly and without the version self-check."""
    pip: list[str | Path] = [venv_python(venv), "-m", "pip", "install"]
    pip += ["--disable-pip-version-check", "--progress-bar", "off"]
    run([*pip, *args])


def create_venv(venv: Path, mode: str) -> None:
    """A fresh venv; with a sourced ROS 2 it sees the ROS interpreter's site-packages.

    Over a system Python (a distro) that is ``--system-site-packages``. Over a ROS
    interpreter that is itself a venv (the kit) the new venv is made from the Python under
    it, and a ``.pth`` file appends the ROS venv's site-packages to ``sys.path`` after the
    new venv's own, as ``--system-site-packages`` would; the ``.pth`` files in those folders
    are not run (the wheels' bootstrapper would re-execute every start; the sourced ROS
    environment already sets what it would).
    """
    command: list[str | Path] = [base_python(), "-m", "venv"]
    if mode != MODE_ROS:
        run([*command, venv])
        return
    ros_prefix, ros_base_prefix, *ros_sites = site_packages_of(ros_python_candidate())
    if ros_prefix == ros_base_prefix:  # a system Python
        run([*command, "--system-site-packages", venv])
        return
    run([*command, venv])
    pth = venv_site_packages(venv) / ROS_BASE_PTH
    pth.write_text("".join(f"{site}\n" for site in ros_sites), encoding="utf-8")
    log(f"  layered on the ROS venv {ros_prefix} ({pth})")


def venv_site_packages(venv: Path) -> Path:
    """The venv's own site-packages folder."""
    version = f"python{sys.version_info[0]}.{sys.version_info[1]}"
    return venv / "lib" / version / "site-packages"


def build_tf2_msgs(venv: Path, requirements: str) -> None:
    """Generate the tf2_msgs interface package and install it into the venv prefix, after
    installing what generating it needs (``requirements``, a file in requirements/)."""
    if shutil.which("cmake") is None:
        raise EnvError("cmake is needed to generate tf2_msgs (apt-get install cmake)")
    pip_install(venv, "-r", ROOT / "requirements" / requirements)
    cache = {
        "CMAKE_PREFIX_PATH": venv,
        "CMAKE_INSTALL_PREFIX": venv,
        "Python3_EXECUTABLE": venv_python(venv),
        "BUILD_TESTING": "OFF",
        "CMAKE_BUILD_TYPE": "Release",
    }
    definitions = [f"-D{name}={value}" for name, value in cache.items()]
    with tempfile.TemporaryDirectory(prefix="jtp-tf2_msgs-") as build_dir:
        run(["cmake", "-S", TF2_MSGS_SOURCE, "-B", build_dir, *definitions])
        run(["cmake", "--build", build_dir, "--parallel", str(os.cpu_count() or 2)])
        run(["cmake", "--install", build_dir])


def ros_constraints(mode: str) -> str:
    """pip constraints (``name==version`` lines) holding NUMPY_ABI_PACKAGES to the versions
    the sourced ROS interpreter has (its message packages are built against its numpy);
    nothing without a sourced ROS."""
    if mode != MODE_ROS:
        return ""
    probe = (
        "import importlib.metadata as m\n"
        f"for name in {NUMPY_ABI_PACKAGES!r}:\n"
        "    try: print(f'{name}=={m.version(name)}')\n"
        "    except m.PackageNotFoundError: pass\n"
    )
    return python_output(ros_python_candidate(), probe)


def build(venv: Path, mode: str) -> None:
    """Create the venv of ``mode`` and install everything the project needs into it."""
    create_venv(venv, mode)
    tools = list(REQUIREMENT_FILES[mode])
    if mode != MODE_ROS:  # the ROS wheels, then tf2_msgs, then the tools
        ros_wheels, tf2_msgs_build, *tools = tools
        log(f"installing ROS 2 wheels (requirements/{ros_wheels})")
        pip_install(venv, "-r", ROOT / "requirements" / ros_wheels)
        if not python_imports(venv_python(venv), "import tf2_msgs.msg"):
            log("tf2_msgs is not importable: generating it from interfaces/tf2_msgs")
            build_tf2_msgs(venv, tf2_msgs_build)
    elif not python_imports(ros_python_candidate(), "import diagnostic_msgs.msg"):
        # Every distro (ros_core) and the client kit have it; package.xml declares it for rosdep.
        raise EnvError(
            "diagnostic_msgs is not importable from the sourced ROS 2: install it "
            "(rosdep install --from-paths . --ignore-src -y, or ros-$ROS_DISTRO-diagnostic-msgs)"
        )
    install_requirements(venv, mode, [ROOT / "requirements" / name for name in tools])
    log("installing joint_tf_publisher in editable mode")
    pip_install(venv, "--no-build-isolation", "--no-deps", "-e", ROOT)


def install_requirements(venv: Path, mode: str, files: Sequence[Path]) -> None:
    """pip install each requirements file of ``files``, held to ``ros_constraints``."""
    with tempfile.TemporaryDirectory(prefix="jtp-env-") as scratch:
        constraints = Path(scratch) / "constraints.txt"
        constraints.write_text(ros_constraints(mode), encoding="utf-8")
        for requirements in files:
            log(f"installing {requirements.name}")
            pip_install(venv, "-r", requirements, "-c", constraints)


def main(argv: Sequence[str] | None = None) -> int:
    """Command line entry point; see the module docstring."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0] if __doc__ else None)
    parser.add_argument(
        "--world",
        choices=sorted(WORLD_VENVS),
        default="ros",
        help="ros: .venv on the sourced ROS 2 (or Kilted wheels); jazzy: .venv-jazzy",
    )
    parser.add_argument("--venv", type=Path, help="venv directory (default: the world's)")
    parser.add_argument("--check", action="store_true", help="only check; exit 1 if not ready")
    parser.add_argument("--rebuild", action="store_true", help="remove and rebuild the venv")
    parser.add_argument(
        "--extra",
        metavar="FILE",
        type=Path,
        help="then pip install requirements FILE into the ready venv, held to the ROS numpy, scipy",
    )
    args = parser.parse_args(argv)
    venv: Path = (args.venv or ROOT / WORLD_VENVS[args.world]).absolute()
    mode = detect_mode() if args.world == "ros" else MODE_JAZZY
    if mode == MODE_JAZZY:
        if sys.version_info[:2] != JAZZY_PYTHON:
            log("FAILED: the Jazzy wheels are CPython 3.11 only; run this with Python 3.11")
            return 1
        # Built, checked and later run without any sourced ROS 2 (the kit's or a distro's).
        unsourced = unsourced_env()
        os.environ.clear()
        os.environ.update(unsourced)
    started, stamp = time.monotonic(), inputs_stamp(mode)
    if args.check:
        stale = stale_reason(venv, stamp, venv_ready)
        log(f"{venv} is {f'NOT ready: {stale}' if stale else 'ready'} ({mode})")
        return 1 if stale else 0
    try:
        built = ensure_venv(
            venv, stamp, lambda path: build(path, mode), venv_ready, rebuild=args.rebuild
        )
        if args.extra:
            install_requirements(venv, mode, [args.extra.absolute()])
    except EnvError as error:
        log(f"FAILED: {error}")
        return 1
    done = "built" if built else "is ready"
    log(f"{venv} {done} ({mode}) in {time.monotonic() - started:.1f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
