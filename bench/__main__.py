"""``python -m bench``: the benchmark tables of docs/benchmarks.md, and results.json.

Sections: fk (bench/fk.py: FK against pinocchio, yourdfpy and urchin), vs_rsp (bench/vs_rsp.py:
the node against robot_state_publisher, and a baseline revision, over DDS), remote
(bench/remote.py: the remote output's cost per JointState and its bytes against /tf), bag
(bench/bag.py: bag repair end to end), fleet (bench/fleet.py: N robots in one joint_tf_fleet
process against N processes) and loops (bench/loops.py: closed loops solved per JointState
against the same joints given directly, in-process). Options may also come from the environment
(``make bench QUICK=1 BENCH_SECTIONS=vs_rsp BENCH_BASELINE=<rev>``).
``--profile`` (bench/profile.py) profiles the node's work per JointState in-process instead.
OPENBLAS_CORETYPE and OPENBLAS_L2_SIZE (set on some machines for old OpenBLAS builds, they slow
a current numpy) are removed before numpy loads, unless ``--keep-openblas-env``.
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
import re  # noqa: E402
import time  # noqa: E402
import traceback  # noqa: E402
from collections.abc import Callable  # noqa: E402
from importlib import metadata  # noqa: E402
from pathlib import Path  # noqa: E402
from typing import Any  # noqa: E402

import numpy as np  # noqa: E402

from . import bag, dds, fk, fleet, loops, remote, vs_rsp  # noqa: E402
from .profile import profile_callback  # noqa: E402
from .report import Table  # noqa: E402

#: The sections in their order: each measures, on the parsed options, its tables and record.
SECTIONS: dict[str, Callable[[argparse.Namespace], tuple[list[Table], dict[str, Any]]]] = {
    "fk": lambda args: fk.run_fk(args.quick),
    "vs_rsp": lambda args: vs_rsp.run_vs_rsp(
        args.quick,
        args.rates,
        args.robots,
        baseline=args.baseline,
        executors=args.executors,
        global_tree=args.global_tree,
    ),
    "bag": lambda args: bag.run_bag(args.quick),
    "remote": lambda args: remote.run_remote(args.quick),
    "fleet": lambda args: fleet.run_fleet(args.quick),
    "loops": lambda args: loops.run_loops(args.quick),
}
DEFAULT_JSON = Path(__file__).resolve().parent / "results.json"


def _split(text: str) -> list[str]:
    return [item.strip() for item in text.split(",") if item.strip()]


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    """Command line, with defaults from QUICK / BENCH_QUICK, BENCH_SECTIONS, BENCH_JSON,
    BENCH_ROBOTS, BENCH_BASELINE and BENCH_GLOBAL_TREE."""
    env = os.environ.get
    truthy = ("1", "true", "yes", "on")
    quick = any(env(name, "").lower() in truthy for name in ("QUICK", "BENCH_QUICK"))
    parser = argparse.ArgumentParser(
        prog="python -m bench",
        description=__doc__,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    add = parser.add_argument
    add("--quick", action="store_true", default=quick, help="fewer repetitions, shorter windows")
    add(
        "--sections",
        default=env("BENCH_SECTIONS", ",".join(SECTIONS)),
        help=f"subset of {','.join(SECTIONS)}",
    )
    add("--json", type=Path, default=Path(env("BENCH_JSON", DEFAULT_JSON)), help="results file")
    add("--profile", action="store_true", help="profile the node's work per JointState and exit")
    add("--profile-messages", type=int, default=5000, help="JointStates for --profile")
    add("--rates", default="100,500,1000", help="JointState rates of vs_rsp, Hz")
    add("--robots", default=env("BENCH_ROBOTS", ",".join(vs_rsp.ROBOTS)), help="robots of vs_rsp")
    add(
        "--baseline",
        default=env("BENCH_BASELINE") or None,
        metavar="REV",
        help="vs_rsp: also the node at REV",
    )
    add(
        "--executors",
        default=env("BENCH_EXECUTORS", ""),
        help="vs_rsp: executors of the floor and the node (events,rclpy,waitset; "
        "default: every one this rclpy offers)",
    )
    add(
        "--global-tree",
        action="store_true",
        default=env("BENCH_GLOBAL_TREE", "").lower() in truthy,
        help="vs_rsp: also this node with global_frame_prefix (the global tree's cost)",
    )
    add(
        "--keep-openblas-env", action="store_true", help="keep OPENBLAS_CORETYPE / OPENBLAS_L2_SIZE"
    )
    args = parser.parse_args(argv)
    args.sections, args.robots = _split(args.sections), _split(args.robots)
    args.executors = _split(args.executors) or None
    args.rates = [float(rate) for rate in _split(args.rates)]
    for given, known in ((args.sections, tuple(SECTIONS)), (args.robots, tuple(vs_rsp.ROBOTS))):
        if unknown := sorted(set(given) - set(known)):
            parser.error(f"unknown {unknown}; choose from {','.join(known)}")
    return args


def machine() -> dict[str, Any]:
    """What the numbers were measured on: date, CPU, versions."""
    model = re.search(r"^model name\s*:\s*(.+)$", Path("/proc/cpuinfo").read_text(), re.M)
    versions = {}
    for dist in ("pin", "yourdfpy", "urchin", "ros-rclpy"):
        try:
            versions[dist] = metadata.version(dist)
        except metadata.PackageNotFoundError:
            versions[dist] = "not installed"
    return {
        "date_utc": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()),
        "cpu": model.group(1) if model else "unknown",
        "cores": os.cpu_count(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "versions": versions,
        "openblas_variables_unset": _UNSET_OPENBLAS,
    }


def run(args: argparse.Namespace) -> dict[str, Any]:
    """Run the chosen sections, printing each table as soon as it is measured."""
    info = machine()
    print(f"# joint_tf_publisher benchmarks ({'quick' if args.quick else 'full'} mode)\n")
    print(
        f"{info['date_utc']}; {info['cpu']}, {info['cores']} cores; Python {info['python']}, "
        f"numpy {info['numpy']}; " + ", ".join(f"{k} {v}" for k, v in info["versions"].items())
    )
    if _UNSET_OPENBLAS:
        print(f"(unset for this run: {', '.join(_UNSET_OPENBLAS)})")
    if {"vs_rsp", "remote"} & set(args.sections):
        dds.byte_compile()  # the node starts as an installed package does, .pyc files written
    print()
    results: dict[str, Any] = {"machine": info, "quick": args.quick, "sections": {}}
    for section in args.sections:
        started = time.perf_counter()
        try:
            tables, record = SECTIONS[section](args)
        except Exception as exc:  # one broken section must not lose the others' numbers
            traceback.print_exc()
            print(f"### section {section} FAILED: {type(exc).__name__}: {exc}\n", flush=True)
            results["sections"][section] = {"error": f"{type(exc).__name__}: {exc}"}
            continue
        for table in tables:
            print(table.render(), flush=True)
        results["sections"][section] = {
            "tables": [table.as_json() for table in tables],
            "data": record,
            "wall_seconds": round(time.perf_counter() - started, 1),
        }
    return results


def main(argv: list[str] | None = None) -> int:
    """Entry point: run, print, write JSON. Exit status 1 when a section failed."""
    args = parse_args(argv)
    if args.profile:
        return profile_callback(args.profile_messages)
    results = run(args)
    args.json.parent.mkdir(parents=True, exist_ok=True)
    args.json.write_text(json.dumps(results, indent=1, default=float) + "\n")
    print(f"results written to {args.json}")
    failed = [name for name, section in results["sections"].items() if "error" in section]
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
