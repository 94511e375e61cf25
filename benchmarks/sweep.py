"""The example-robot-data sweep as a table: every URDF Pinocchio parses, loaded
by soagen, four functions generated, compiled and compared with Pinocchio.

    python benchmarks/sweep.py                 # writes docs/sweep.md and docs/sweep.json
    python benchmarks/sweep.py --only romeo    # these files only, printed, nothing written
    python benchmarks/sweep.py --render        # docs/sweep.md again from docs/sweep.json, no run

The cases, functions, states and bounds are those of ``tests/test_real_robots.py``
(both use ``tests/support/real_robots.py``; the test runs a sample of the cases);
the guide's table (docs/guide/real-robots.md) is docs/sweep.md's.  Seconds are one run's, wall clock,
``$SOAGEN_JOBS`` workers (default: one per CPU); a shared machine swings 1.5-2x.
"""
from __future__ import annotations

import argparse
import importlib.metadata
import json
import os
import platform
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from soagen.options import jobs  # noqa: E402
from soagen.targets.c99.compile import COMPILE_ARGS  # noqa: E402
from tests.support import real_robots as rr  # noqa: E402


def _version(dist):
    try:
        return importlib.metadata.version(dist)
    except importlib.metadata.PackageNotFoundError:
        return "?"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", help="run the files whose path contains one of these; write nothing")
    parser.add_argument("--out", default=str(ROOT / "docs"), help="folder of sweep.md and sweep.json")
    parser.add_argument("--render", action="store_true", help="rewrite sweep.md from sweep.json; run nothing")
    args = parser.parse_args(argv)
    if args.render:
        run = json.loads((Path(args.out) / "sweep.json").read_text())
        (Path(args.out) / "sweep.md").write_text(report(run, [rr.Result.from_json(row) for row in run["cases"]]))
        return 0

    # a fresh module cache: the seconds are generation and compilation, not cache hits
    # (files with the same robot inside, e.g. talos_reduced_box.urdf, do hit the cache)
    os.environ["SOAGEN_CACHE"] = tempfile.mkdtemp(prefix="soagen-sweep-")
    commit = _commit()   # the code the cases run on (before the run: the tree may move meanwhile)
    results, t0 = [], time.perf_counter()
    for rel, floating in rr.cases():
        if args.only and not any(s in rel for s in args.only):
            continue
        t = time.perf_counter()
        res = rr.run_case(rel, floating)
        bad = rr.failures(res)
        print(f"{res.id:<42} nv {res.nv:3d}  generate {res.generate_s:6.1f} s  compile {res.compile_s:6.1f} s  "
              f"case {time.perf_counter() - t:6.1f} s  warnings {len(res.warnings)}  "
              f"{'FAIL ' + str(bad) if bad else 'ok'}", flush=True)
        results.append(res)
    total = time.perf_counter() - t0
    failed = [r.id for r in results if rr.failures(r)]
    print(f"{len(results)} cases in {total:.0f} s; {len(failed)} beyond their bounds {failed}")
    if args.only:
        return 1 if failed else 0

    run = dict(total_s=round(total, 1), jobs=jobs(), example_robot_data=_version("example-robot-data"),
               pinocchio=_version("pin"), machine=f"{platform.machine()} {os.cpu_count()} CPUs",
               compile_args=" ".join(COMPILE_ARGS), commit=commit,
               cases=[r.as_json() for r in results])
    Path(args.out).mkdir(parents=True, exist_ok=True)
    (Path(args.out) / "sweep.json").write_text(json.dumps(run, indent=1) + "\n")
    # the table from the JSON's rows (rounded seconds), as --render makes it
    (Path(args.out) / "sweep.md").write_text(report(run, [rr.Result.from_json(row) for row in run["cases"]]))
    return 1 if failed else 0


def _commit():
    """The commit the sweep ran on (``+`` when the work tree had changes), or ``?``."""
    import subprocess

    try:
        head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True, text=True,
                              check=True).stdout.strip()
        dirty = subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                               capture_output=True, text=True, check=True).stdout.strip()
        return head + ("+" if dirty else "")
    except (OSError, subprocess.CalledProcessError):
        return "?"


def report(run, results):
    """docs/sweep.md: how the sweep was run, then the table."""
    return (f"# example-robot-data sweep\n\n"
            f"Written by `python benchmarks/sweep.py` (the cases of `tests/test_real_robots.py`) at commit "
            f"{run.get('commit', '?')}: example-robot-data {run.get('example_robot_data', '?')}, Pinocchio "
            f"{run.get('pinocchio', '?')}, {run.get('machine', '?')}, SOAGEN_JOBS={run['jobs']}, modules compiled "
            f"`{run.get('compile_args', '?')}`; {len(results)} cases in {run['total_s']:.0f} s.\n\n"
            f"Each URDF is loaded as a user would (`soagen.load_urdf(path, tips=[deepest link])`, "
            f"`floating_base=True` for the second row of a robot that moves freely); inverse dynamics, "
            f"M, the Jacobian of the deepest link and forward dynamics (FD4) are generated and compiled "
            f"as one module (seconds: the build's wall clock until every program is recorded, the finished "
            f"ones printed and compiled meanwhile, then the compiles left; *cached*: the "
            f"file's model is the same as an earlier row's, e.g. a variant differing only in collision "
            f"geometry, so the module came from soagen's cache), and compared "
            f"with Pinocchio's model of the same file on {rr.SAMPLES} random states.  Errors are "
            f"max |soagen − Pinocchio| / max |Pinocchio|, the worst state; the forward-dynamics bound is "
            f"{rr.FD_EPS:g} · cond(M) · nv (at least {rr.FD_FLOOR:g}); M is bounded by "
            f"{rr.BOUND['mass_matrix']:g}, inverse dynamics and the Jacobian by "
            f"{rr.BOUND['inverse_dynamics']:g}.  *left out*: joints with D(k) = 0 make M singular, so "
            f"forward dynamics is not generated.  Warnings: the non-physical rigid bodies "
            f"(after lumping) and singular joints that soagen names when loading.\n\n" + rr.table(results))


if __name__ == "__main__":
    sys.exit(main())
