#!/usr/bin/env python3
"""The Panda's ∂²ID tensors per state in batches: soagen's scalar loop and SIMD batch against a C++ loop of
Pinocchio's ``ComputeRNEASecondOrderDerivatives`` (issue #57, what a solver that needs the tensors at many
nodes waits for).

    python benchmarks/second_batches.py          # writes docs/second_batches.{json,md} (and prints)

``inverse_dynamics_second_derivatives`` (∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇, ∂M/∂q; 4 × 7³ doubles a
state) on N seeded random states (``Robot.random_state``), built as ``soagen.build(robot,
simd=True)`` builds it: the scalar loop ``_batch`` (a C loop over the one-state function: its cost a
call), the SIMD batch ``_batch_simd`` (one register a vector: 8 states an instruction with AVX-512,
4 with AVX2), each writing every state's tensors; and Pinocchio's header-only C++ compiled here
``-O3 -march=native -ffp-contract=fast -DNDEBUG`` (soagen's flags; ``pinocchio_batch.cpp``,
``pin_rnea_second_batch``), the tensors left in its Data for the next state to overwrite (its
cheapest use, the ratios' baseline) and, as soagen's rows do, every state's tensors written out
(copied from Data, [i][j][k] row-major; its own row).  Timed the way
benchmarks/simd.py times (its ``timed_rounds``: the calling thread's CPU time, every backend once a
round, interleaved), ratios per round, median and range.  Before timing, soagen's scalar and SIMD
outputs and Pinocchio's (copied out, on every state) are compared.  The benchmark prints; it asserts
nothing about speed.  Pinocchio has no batch of its own for these tensors, and no SIMD: the SIMD
rows compare a batch across states with one state a call.
"""
from __future__ import annotations

import datetime
import json
import os
import statistics
import subprocess
import sys
import tempfile
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(HERE))

import soagen  # noqa: E402
from simd import Direct, cpu_model, pinocchio_loops, pinocchio_panda, timed_rounds  # noqa: E402

DATA, DOC = ROOT / "docs" / "second_batches.json", ROOT / "docs" / "second_batches.md"
COMMAND = "python benchmarks/second_batches.py"
FUNCTION = "inverse_dynamics_second_derivatives"
N, ROUNDS = 512, 201
PIN = "Pinocchio C++ loop, -O3 -march=native -ffp-contract=fast"


def main():
    robot = soagen.robots.example("panda")
    load = os.getloadavg()[0]
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    mod = soagen.build(robot, functions=[FUNCTION], simd=True)
    rng = np.random.default_rng(0)
    states = [robot.random_state(rng) for _ in range(N)]
    Q, QD, QDD = (np.ascontiguousarray([s[i] for s in states]) for i in range(3))
    size = 4 * robot.nv ** 3
    outs = {k: [np.full((N, robot.nv ** 3), np.nan) for _ in range(4)] for k in ("scalar", "simd")}
    direct = Direct(mod)
    loops = pinocchio_loops()
    if isinstance(loops, str):
        raise SystemExit(f"Pinocchio's loop: {loops}")
    with tempfile.TemporaryDirectory() as work:
        pinocchio_panda().saveToText(str(Path(work) / "panda.txt"))
        loops.pin_load(str(Path(work) / "panda.txt").encode())
    cols = [np.asfortranarray(a.T) for a in (Q, QD, QDD)]                  # states in columns, as Pinocchio's
    pin_out = np.zeros((N, size))
    ptrs = [a.ctypes.data for a in cols]
    loops.pin_rnea_second_batch(N, *ptrs, pin_out.ctypes.data, 1)          # every state's tensors, for the check
    backends = {"C scalar loop (_batch)": direct.caller(FUNCTION, "_batch", [Q, QD, QDD, *outs["scalar"]]),
                f"C SIMD, {mod.simd_lanes} lanes (_batch_simd)": direct.caller(FUNCTION, "_batch_simd",
                                                                               [Q, QD, QDD, *outs["simd"]]),
                PIN: lambda: loops.pin_rnea_second_batch(N, *ptrs, pin_out.ctypes.data, 0),
                f"{PIN}, every state's tensors copied out": lambda: loops.pin_rnea_second_batch(
                    N, *ptrs, pin_out.ctypes.data, 1)}
    for fn in backends.values():
        fn()
    scalar, simd = (np.hstack(outs[k]) for k in ("scalar", "simd"))
    scale = np.abs(scalar).max()
    errors = {"simd": float(np.abs(simd - scalar).max() / scale),
              "pinocchio": float(np.abs(pin_out - scalar).max() / scale)}
    if not (scale > 1.0 and max(errors.values()) < 1e-10):
        raise SystemExit(f"outputs differ: {errors} (scale {scale})")
    times = timed_rounds(backends, ROUNDS)
    rows = []
    for name, t in times.items():
        ratios = [a / b for a, b in zip(t, times[PIN])]
        rows.append({"backend": name, "ns_per_state": statistics.median(t) / N * 1e9,
                     "ratio": [statistics.median(ratios), min(ratios), max(ratios)]})
    data = {"command": COMMAND, "function": FUNCTION, "robot": "panda", "states": N, "rounds": ROUNDS,
            "lanes": mod.simd_lanes, "cpu": cpu_model(), "cores": os.cpu_count(), "load_average": load,
            "date": started, "ops": mod.ops[FUNCTION]["mul"] + mod.ops[FUNCTION]["add"],
            "checked": errors, "rows": rows,
            "gcc": subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]}
    DATA.write_text(json.dumps(data, indent=1) + "\n")
    DOC.write_text(page(data))
    print(page(data), end="")


def page(data):
    """docs/second_batches.md from its record."""
    lines = [f"# ∂²ID tensors in batches: `{data['command']}`", "",
             f"{data['date']}, {data['cpu']} ({data['cores']} cores, load average {data['load_average']:.1f} at "
             f"the start), {data['gcc']}; the Panda's `{data['function']}` ({data['ops']} operations), "
             f"N = {data['states']} states, {data['rounds']} interleaved rounds, each backend timed by its "
             "thread's CPU time; method and what differs: the script's docstring.", "",
             "| backend | ns / state (median) | time / Pinocchio's loop, median [min, max] of the rounds |",
             "|---|---:|---:|"]
    for r in data["rows"]:
        m, lo, hi = r["ratio"]
        lines.append(f"| {r['backend']} | {r['ns_per_state']:.0f} | {m:.2f} [{lo:.2f}, {hi:.2f}] |")
    e = data["checked"]
    lines += ["", f"Checked before timing, on every state: the SIMD batch against the scalar loop {e['simd']:.1e}, "
              f"Pinocchio's tensors against the scalar loop {e['pinocchio']:.1e} (max relative difference). "
              "soagen's rows write every state's tensors (11 KB a state); Pinocchio's first row leaves each "
              "state's in its Data, its second copies them out. "
              "The SIMD batch is soagen's across states, which Pinocchio has no counterpart of: a solver "
              "that needs the tensors at many nodes at once can use it, one that needs them at one state "
              "cannot (the scalar row is that call).", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
