#!/usr/bin/env python3
"""Benchmark soagen's generated C against Pinocchio (C++) and CasADi-generated C.

    python benchmarks/run.py --robot panda        # or ur5, talos, or all

One run, per robot: N seeded random states (``states.py``); soagen's C in two
forms (inline sin/cos; cos/sin of q by libm, the trig-inputs form), Pinocchio's
C++ and CasADi's C built and linked into one driver that times them round-robin
on the same states (``backends.py``); every backend's outputs on the first
states checked against ``soagen.reference`` (a wrong soagen result aborts, a
wrong baseline is reported n/a); the Python module timed; the report printed
and written to ``docs/benchmarks.json`` and ``docs/benchmarks.md`` (this robot's
section; other robots' are kept; ``report.py``); for the robots of ``python_calls.py``,
its "from Python" table (each method against Pinocchio's Python call, interleaved) too,
in ``docs/python_calls.md``.
"""
from __future__ import annotations

import argparse
import shlex
import subprocess
import sys
import time

import backends as bk
import python_calls
import soagen_side as sg
from report import DOC, ROOT, dumps, markdown_section, write_docs
from specs import SPECS
from states import draw_states, write_states
from summary import load_average, summarize

BASELINES = {"pinocchio": bk.pinocchio_backend, "casadi": bk.casadi_backend}
FAILURES = (bk.Unavailable, RuntimeError, OSError, ValueError, KeyError, subprocess.TimeoutExpired)


def build_baselines(spec, robot, states, work, args, functions):
    """{name: Backend} of the baselines that build, and {name: why not} of the others."""
    built, why = {}, {}
    for name, make in BASELINES.items():
        if getattr(args, f"no_{name}"):
            why[name] = f"skipped (--no-{name})"
            continue
        if name == "casadi" and not spec.casadi:
            why[name] = "no counterpart (casadi_kin_dyn: rnea, crba, aba and their Jacobians, 1-dof joints)"
            continue
        try:
            built[name] = make(spec, robot, states, work, functions) if name == "pinocchio" else \
                make(spec, robot, states, work)
            print(f"  {name}: built", flush=True)
        except FAILURES as exc:
            why[name] = str(exc)
            print(f"  {name}: n/a — {exc}", flush=True)
    return built, why


def check_baselines(robot, states, run, built, why, functions, upto=None):
    """{name: {entry: error}} of the baselines whose outputs match the reference (for soagen's ``functions``;
    Pinocchio's on the first ``upto`` states, or all)."""
    errors = {}
    checks = {"pinocchio": lambda: bk.check_pinocchio(robot, states, run, functions, upto),
              "casadi": lambda: bk.check_casadi(robot, states, run, built["casadi"].info["manifest"])}
    for name in built:
        try:
            errors[name] = checks[name]()
        except bk.Unavailable as exc:
            why[name] = str(exc)
            print(f"  {name}: n/a — {exc}", flush=True)
    return errors


def run_robot(robot_name, args, command):
    """States, every backend interleaved, the Python module, then the report (printed and written)."""
    t_start, load_start = time.perf_counter(), load_average()
    spec = SPECS[robot_name]
    args = argparse.Namespace(**{**vars(args), "n": spec.states if args.n is None else args.n})
    robot = spec.robot()
    work = bk.WORK / robot_name
    work.mkdir(parents=True, exist_ok=True)
    print(f"== {robot_name}: {sg.describe(robot)}, N={args.n}, rounds={args.rounds}", flush=True)
    states = write_states(draw_states(robot, args.n, args.seed, spec.tips_at_rest), work / "states.bin")

    soagen = bk.soagen_backends(spec, robot, states, work, args.functions or spec.functions)
    print(f"  soagen: generated in {soagen.gen_wall:.1f} s (and the trig-inputs form), compiled", flush=True)
    names = [f.name for f in soagen.functions]
    built, why = build_baselines(spec, robot, states, work, args, names)
    try:
        run = bk.run_interleaved(soagen.backends + list(built.values()), args.rounds, states.row, work / "driver",
                                 check=args.n)
    except RuntimeError as exc:
        if not built:
            raise
        for name in built:
            why[name] = f"the driver with it failed: {exc}"
        print(f"  driver failed with the baselines, timing soagen alone: {exc}", flush=True)
        built = {}
        run = bk.run_interleaved(soagen.backends, args.rounds, states.row, work / "driver", check=args.n)
    print(f"  timed {args.rounds} rounds in {run.wall_s:.1f} s", flush=True)
    # spec.reference_states: the baselines against the reference on the first states, soagen against it there
    # and against Pinocchio's (checked) outputs on the others; else every backend against it on every state
    upto = spec.reference_states if spec.reference_states and spec.reference_states < args.n else None
    baseline_errors = check_baselines(robot, states, run, built, why, names, upto)
    beyond = bk.pinocchio_rows(robot, run, names) if upto and "pinocchio" in baseline_errors else None
    errors = {b.name: bk.check_soagen(robot, states, run, b.name, beyond, upto if beyond else None)
              for b in soagen.backends}
    print("  soagen: outputs checked", flush=True)
    errors.update(baseline_errors)
    checked_upto = upto if beyond else None
    if any(f in sg.BATCH_FUNCTIONS for f in names):
        big = draw_states(robot, bk.BATCH_ROWS, args.seed + 1)
        python = bk.bench_python(robot, names, states, big, only=args.functions)
    else:
        python = (None, {})        # no batch-timed function (soagen_side.BATCH_FUNCTIONS) among them
    rep = summarize(robot_name, command, args, robot, spec, soagen, run, errors,
                    {name: b.info for name, b in built.items()}, why, python, time.perf_counter() - t_start,
                    load_start, checked_upto)
    (work / "report.json").write_text(dumps({robot_name: rep}))   # kept even if the docs are not written
    print()
    print(markdown_section(rep))
    if not args.no_doc:
        write_docs(rep)
        print(f"(written to {DOC.relative_to(ROOT)} and docs/benchmarks.json)")
    if robot_name in python_calls.ROBOTS and not args.functions:
        print("\nFrom Python, one state per call (benchmarks/python_calls.py):", flush=True)
        python_calls.main(["--robot", robot_name] + (["--no-doc"] if args.no_doc else []))


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", choices=[*SPECS, "all"], default="panda")
    parser.add_argument("-n", "--n", type=int, default=None,
                        help="random states (default: the robot's Spec.states, 1000 but for talos_second)")
    parser.add_argument("--rounds", type=int, default=101,
                        help="timed rounds, every backend once per round (default 101)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-casadi", action="store_true", help="skip the CasADi baseline")
    parser.add_argument("--no-pinocchio", action="store_true", help="skip the Pinocchio baseline")
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md, .json")
    parser.add_argument("--functions", type=lambda s: s.split(","), metavar="NAME,...",
                        help="only these soagen functions (quick checks of the harness)")
    args = parser.parse_args(argv)
    if args.n is not None and args.n < bk.CHECK_STATES:
        parser.error(f"--n must be at least {bk.CHECK_STATES}")
    for name in SPECS if args.robot == "all" else [args.robot]:
        argv_here = [a for a in (sys.argv[1:] if argv is None else argv)]
        if args.robot == "all":
            argv_here = [a if a != "all" else name for a in argv_here]
        run_robot(name, args, "python benchmarks/run.py " + " ".join(shlex.quote(a) for a in argv_here))
    return 0


if __name__ == "__main__":
    sys.exit(main())
