#!/usr/bin/env python3
"""Benchmark soagen's generated C against Pinocchio (C++) and CasADi-generated C.

    python benchmarks/run.py --robot panda        # or ur5, talos, or all

One run, per robot:

1. draws N seeded random states and writes them, float64 little-endian, to
   ``benchmarks/.work/<robot>/states.bin`` (rows: q (nq), qd, qdd, tau (nv each),
   f, u (6 per tip each)), and the same states in Pinocchio's conventions
   (normalized quaternions, free-flyer velocities [v; ω]) to ``states_pinocchio.bin``;
2. generates soagen's C (timing the symbolic stage per function and
   ``gcc -O2 -c`` per file and per function), compiles it with
   ``bench_driver.c`` at ``-O3 -march=native`` and times every function;
3. builds ``pinocchio_bench.cpp`` header-only against the ``pin`` wheel
   (once, cached) and times the matching Pinocchio algorithms on the same states
   (outputs converted back with ``soagen.pinocchio_convention`` for the checks);
4. runs the CasADi helper (``casadi_kin_dyn.py``) if present and times its
   generated ``rnea``/``crba``/``aba`` with the same C driver;
5. times the Python module (``soagen.build``): single calls and one batch call;
6. checks every backend's outputs on the first states against
   ``soagen.reference`` (a wrong soagen result aborts; a wrong baseline is
   reported n/a, never shown), prints the tables and writes them to
   ``docs/benchmarks.md`` (this robot's section; other robots' are kept).
"""
from __future__ import annotations

import argparse
import subprocess
import sys

import soagen_side as sg
from backends import BATCH_ROWS, CHECK_STATES, Unavailable, WORK, bench_casadi, bench_pinocchio, bench_python, bench_soagen
from report import DOC, ROOT, report, write_doc
from specs import SPECS
from states import draw_states, write_states


# --------------------------------------------------------------------------- main
def run_robot(robot_name, args):
    """States, every backend, the Python module, then the report (printed and written)."""
    spec = SPECS[robot_name]
    robot = spec.robot()
    work = WORK / robot_name
    work.mkdir(parents=True, exist_ok=True)
    print(f"== {robot_name}: {sg.describe(robot)}, N={args.n}, reps={args.reps}", flush=True)
    states = write_states(draw_states(robot, args.n, args.seed), work / "states.bin")

    soagen = bench_soagen(spec, robot, states, args.reps, work)
    print(f"  soagen: generated in {soagen['gen_wall']:.1f} s, outputs checked", flush=True)
    why = {}
    results = {}
    for label, fn in (("pinocchio", bench_pinocchio), ("casadi", bench_casadi)):
        if getattr(args, f"no_{label}"):
            why[label], results[label] = f"skipped (--no-{label})", None
            continue
        try:
            results[label] = fn(spec, robot, states, args.reps, work)
            print(f"  {label}: timed, outputs checked", flush=True)
        except (Unavailable, RuntimeError, OSError, ValueError, KeyError, subprocess.TimeoutExpired) as exc:
            why[label], results[label] = str(exc), None
            print(f"  {label}: n/a — {exc}", flush=True)
    big = draw_states(robot, BATCH_ROWS, args.seed + 1)
    py_build, py = bench_python(robot, soagen["functions"], states, big)
    section = report(robot_name, spec, robot, args, soagen, results["pinocchio"], results["casadi"], py_build, py,
                     why)
    print()
    print(section)
    if not args.no_doc:
        write_doc(robot_name, section)
        print(f"(written to {DOC.relative_to(ROOT)})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", choices=[*SPECS, "all"], default="panda")
    parser.add_argument("-n", "--n", type=int, default=1000, help="random states (default 1000)")
    parser.add_argument("--reps", type=int, default=21, help="timed passes over the states (default 21)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-casadi", action="store_true", help="skip the CasADi baseline")
    parser.add_argument("--no-pinocchio", action="store_true", help="skip the Pinocchio baseline")
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    if args.n < CHECK_STATES:
        parser.error(f"--n must be at least {CHECK_STATES}")
    for name in SPECS if args.robot == "all" else [args.robot]:
        run_robot(name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
