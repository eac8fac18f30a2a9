"""``python -m bench``: the benchmark tables of docs/benchmarks.md, and results.json.

Sections: fk and batch (bench/fk.py: FK against pinocchio, yourdfpy and urchin), vs_rsp
(bench/vs_rsp.py: the node against robot_state_publisher and a baseline revision, over DDS).
Options may also come from the environment, so ``make bench QUICK=1``,
``make bench BENCH_SECTIONS=fk,vs_rsp`` or ``make bench BENCH_BASELINE=<git rev>`` work with the
Makefile's plain ``python -m bench``. ``--profile`` (bench/profile.py) profiles the node's work
per JointState in-process instead.

OpenBLAS: OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE, set on some machines for old OpenBLAS
builds, slow a current numpy. This command removes both from its own environment (and the
node subprocess's) before numpy loads, and says so; ``--keep-openblas-env`` keeps them.

Bytecode: before vs_rsp starts the node the package's .pyc files are written
(``dds.byte_compile``), as pip and colcon write them at install; where PYTHONDONTWRITEBYTECODE
is set the node would otherwise compile itself at every start.
"""

from __future__ import annotations

import os
import sys

OPENBLAS_VARIABLES = ("OPENBLAS_CORETYPE", "OPENBLAS_L2_SIZE")


def _drop_openblas_variables() -> list[str]:
    """Unset the OpenBLAS tuning variables (before numpy is imported); return the ones set."""
    if "--keep-openblas-env" in sys.argv:
        return []
    return [f"{name}={os.environ.pop(name)}" for name in OPENBLAS_VARIABLES if name in os.environ]


_UNSET_OPENBLAS = _drop_openblas_variables()

# The imports below load numpy: they must follow the line above.
import argparse  # noqa: E402
import json  # noqa: E402
import platform  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

from .report import Table  # noqa: E402

SECTIONS = ("fk", "batch", "vs_rsp")
DEFAULT_JSON = Path(__file__).resolve().parent / "results.json"


def _truthy(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes", "on")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command line, with defaults from QUICK / BENCH_QUICK, BENCH_SECTIONS, BENCH_JSON."""
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.add_argument(
        "--quick",
        action="store_true",
        default=_truthy(os.environ.get("QUICK")) or _truthy(os.environ.get("BENCH_QUICK")),
        help="fewer repetitions and shorter vs_rsp windows, for iteration",
    )
    parser.add_argument(
        "--sections",
        default=os.environ.get("BENCH_SECTIONS", ",".join(SECTIONS)),
        help=f"comma-separated subset of {','.join(SECTIONS)} (default: all)",
    )
    parser.add_argument(
        "--json",
        type=Path,
        default=Path(os.environ.get("BENCH_JSON", DEFAULT_JSON)),
        help=f"where to write the results (default: {DEFAULT_JSON})",
    )
    parser.add_argument(
        "--profile",
        action="store_true",
        help="profile the node's work per JointState in-process and exit",
    )
    parser.add_argument(
        "--profile-messages",
        type=int,
        default=5000,
        help="synthetic JointStates for --profile (default 5000)",
    )
    parser.add_argument(
        "--rates",
        default="100,500,1000",
        help="JointState rates of the vs_rsp section, Hz (default 100,500,1000)",
    )
    parser.add_argument(
        "--robots",
        default=os.environ.get("BENCH_ROBOTS", "humanoid,arm"),
        help="robots of the vs_rsp section (default humanoid,arm)",
    )
    parser.add_argument(
        "--baseline",
        default=os.environ.get("BENCH_BASELINE") or None,
        metavar="REV",
        help="vs_rsp: also run the node as of git revision REV, interleaved (before/after)",
    )
    parser.add_argument(
        "--keep-openblas-env",
        action="store_true",
        help="keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE if set",
    )
    args = parser.parse_args(argv)
    sections = [s.strip() for s in args.sections.split(",") if s.strip()]
    unknown = sorted(set(sections) - set(SECTIONS))
    if unknown:
        parser.error(f"unknown sections {unknown}; choose from {','.join(SECTIONS)}")
    args.sections = sections
    args.rates = [float(rate) for rate in args.rates.split(",") if rate.strip()]
    args.robots = [robot.strip() for robot in args.robots.split(",") if robot.strip()]
    unknown = sorted(set(args.robots) - {"humanoid", "arm"})
    if unknown:
        parser.error(f"unknown robots {unknown}; choose from humanoid,arm")
    return args


def machine() -> dict[str, Any]:
    """What the numbers were measured on."""
    import numpy as np

    cpu = "unknown"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    return {
        "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": cpu,
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "platform": platform.platform(),
        "openblas_variables_unset": _UNSET_OPENBLAS,
    }


def _versions() -> dict[str, str]:
    from importlib import metadata

    versions = {}
    for dist in ("pin", "yourdfpy", "urchin", "numpy", "ros-rclpy"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return versions


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the chosen sections, printing each table as soon as it is measured."""
    from . import dds, fk, vs_rsp

    info = machine()
    info["versions"] = _versions()
    print(f"# joint_tf_publisher benchmarks ({'quick' if args.quick else 'full'} mode)\n")
    print(
        f"{info['date_utc']}; {info['cpu']}, {info['cores']} cores; Python {info['python']}, "
        f"numpy {info['numpy']}; " + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    )
    if _UNSET_OPENBLAS:
        print(f"(unset for this run: {', '.join(_UNSET_OPENBLAS)})")
    if "vs_rsp" in args.sections:
        dds.byte_compile()  # the node starts as an installed package does, .pyc files written
    print()
    ctx = fk.make_context(args.quick)
    runners: dict[str, Callable[[], tuple[Table | list[Table], dict[str, Any]]]] = {
        "fk": lambda: fk.run_fk(ctx),
        "batch": lambda: fk.run_batch(ctx),
        "vs_rsp": lambda: vs_rsp.run_vs_rsp(
            args.quick, args.rates, args.robots, baseline=args.baseline
        ),
    }
    results: dict[str, Any] = {"machine": info, "quick": args.quick, "sections": {}}
    for section in args.sections:
        started = time.perf_counter()
        try:
            tables, record = runners[section]()
        except Exception as exc:  # one broken section must not lose the others' numbers
            traceback.print_exc()
            print(f"### section {section} FAILED: {type(exc).__name__}: {exc}\n", flush=True)
            results["sections"][section] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        tables = tables if isinstance(tables, list) else [tables]
        for table in tables:
            print(table.render(), flush=True)
        results["sections"][section] = {
            "table": tables[0].as_json(),
            "tables": [table.as_json() for table in tables],
            "data": record,
            "wall_seconds": round(time.perf_counter() - started, 1),
        }
    return results


def main(argv: list[str] | None = None) -> int:
    """Entry point: run, print, write JSON. Exit status 1 when a section failed."""
    args = parse_args(argv)
    if args.profile:
        from .profile import profile_callback

        return profile_callback(args.profile_messages)
    results = run(args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1, default=float) + "\n")
    print(f"results written to {args.json}")
    failed = [name for name, section in results["sections"].items() if "error" in section]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
