#!/usr/bin/env python3
"""What IPOPT's exact Hessian costs per call: the contracted Hessian against the Jacobian, as CasADi
calls them from soagen's CasADi library (issue #57 item 5: "the contracted Hessians' cost as a
multiple of one first-derivative call").

    python benchmarks/casadi_hessians.py          # prints, writes docs/casadi_hessians.{json,md}

The Panda's library with ``hessians=True`` (``soagen.casadi.library``, soagen's flags) for
``inverse_dynamics``, ``forward_dynamics`` and ``rk4_step``: per function f, the first derivative
IPOPT asks for (``jac_f``: the Jacobian, from the analytical first derivatives; for ``rk4_step`` the
step's Jacobian through its four stages) and the contracted Hessian (``jac_adj1_f``: the Jacobian of
λᵀf's gradient, soagen's Hessian of λᵀf plus the transposed Jacobian blocks CasADi asks for with it),
timed by ``benchmarks/casadi_calls.c`` through the library's external API (``dlopen``, one state a call,
no Python), the pair interleaved round by round on the same 1000 seeded states (x or q, q̇, q̈/τ from
``Robot.random_state``, dt 0.01, λ normal).  Before timing, each function's outputs on the first state
from the driver are compared with ``casadi.external``'s call of the same function (the driver's
argument layout).  The ratio is per round (Hessian ns / Jacobian ns), its median and interquartile
range.  The benchmark prints; it asserts nothing about speed.
"""
from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "benchmarks"))

import soagen  # noqa: E402
import soagen.casadi as sc  # noqa: E402
from report import percentile  # noqa: E402
from summary import load_average, machine_info  # noqa: E402

DATA, DOC = ROOT / "docs" / "casadi_hessians.json", ROOT / "docs" / "casadi_hessians.md"
COMMAND = "python benchmarks/casadi_hessians.py"
FUNCTIONS = ("inverse_dynamics", "forward_dynamics", "rk4_step")
STATES, ROUNDS, DT = 1000, 51, 0.01


def inputs(robot, f, state, lam):
    """The dense inputs of ``jac_adj1_f`` (those of ``jac_f`` are their prefix): f's own, its
    nominal outputs (unread: zeros), the weights λ of its outputs, the nominal adjoints (zeros)."""
    q, qd, qdd, tau = state
    own = {"inverse_dynamics": [q, qd, qdd], "forward_dynamics": [q, qd, tau],
           "rk4_step": [np.concatenate([q, qd]), tau, [DT]]}[f]
    y = np.zeros(lam.size)
    return own + [y, lam] + [np.zeros(len(a)) for a in own]


def compile_driver(work):
    """benchmarks/casadi_calls.c compiled into ``work``; its path."""
    exe = Path(work) / "casadi_calls"
    subprocess.run([os.environ.get("CC", "cc"), "-O2", "-std=c99", "-D_POSIX_C_SOURCE=200809L",
                    "-I", str(ROOT / "benchmarks"), str(ROOT / "benchmarks" / "casadi_calls.c"),
                    "-o", str(exe), "-ldl"], check=True)
    return exe


def timed_pair(lib, robot, f, work, rng, count=STATES, rounds=ROUNDS):
    """Per round (Jacobian ns, Hessian ns) of f on ``count`` states, the worst difference of the driver's
    first-state outputs from ``casadi.external``'s, and the two functions' names; the driver compiled in
    ``work`` (:func:`compile_driver`)."""
    import casadi

    name = lib.exported[f]
    jac, hess = f"jac_{name}", f"jac_adj1_{name}"
    out_size = casadi.external(name, str(lib.path)).nnz_out(0)
    rows = []
    for _ in range(count):
        lam = rng.normal(size=out_size)
        rows.append(np.concatenate([np.ravel(a) for a in inputs(robot, f, robot.random_state(rng), lam)]))
    states = np.array(rows)
    states.astype("<f8").tofile(work / "states.bin")
    res = subprocess.run([str(work / "casadi_calls"), str(lib.path), str(work / "states.bin"), str(count),
                          str(states.shape[1]), str(rounds), str(work / "out.bin"), jac, hess],
                         capture_output=True, text=True, check=True)
    times = [tuple(float(x) for x in line.split("\t")) for line in res.stdout.splitlines()]
    got, worst, at = np.fromfile(work / "out.bin"), 0.0, 0
    for sym in (jac, hess):
        g = casadi.external(sym, str(lib.path))
        args, k = [], 0
        for i in range(g.n_in()):
            args.append(states[0, k:k + g.nnz_in(i)])
            k += g.nnz_in(i)
        for out in g.call(args):
            want = np.asarray(casadi.DM(out).nonzeros())
            worst = max(worst, float(np.max(np.abs(got[at:at + want.size] - want), initial=0.0)))
            at += want.size
    return times, worst, jac, hess


def main():
    import casadi

    robot = soagen.robots.example("panda")
    rng = np.random.default_rng(0)
    load_start = load_average()
    t0 = time.perf_counter()
    lib = sc.library(robot, list(FUNCTIONS), hessians=True)
    build_s = time.perf_counter() - t0
    rows = []
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        compile_driver(work)
        for f in FUNCTIONS:
            times, worst, jac, hess = timed_pair(lib, robot, f, work, rng)
            if not worst <= 1e-9:
                raise SystemExit(f"{f}: the driver's outputs differ from casadi.external's by {worst:.2e}")
            ratios = [h / j for j, h in times]
            rows.append({"function": f, "jacobian": jac, "hessian": hess,
                         "jacobian_ns": statistics.median(j for j, _ in times),
                         "hessian_ns": statistics.median(h for _, h in times),
                         "ratio": [statistics.median(ratios), percentile(ratios, 25), percentile(ratios, 75)],
                         "checked": worst})
            print(f"{f}: {rows[-1]['jacobian_ns']:.0f} ns, Hessian {rows[-1]['hessian_ns']:.0f} ns, "
                  f"{rows[-1]['ratio'][0]:.2f}x", flush=True)
    data = {"command": COMMAND, "robot": "panda", "states": STATES, "rounds": ROUNDS, "build_s": round(build_s, 1),
            "machine": machine_info(casadi.__version__, load_start), "rows": rows}
    DATA.write_text(json.dumps(data, indent=1) + "\n")
    DOC.write_text(page(data))
    print(page(data))


def page(data):
    """docs/casadi_hessians.md from its record."""
    lines = ["# The exact Hessian as CasADi calls it", "",
             f"Written by `{data['command']}` (the Panda; {data['states']} seeded states, {data['rounds']} "
             "rounds; method: the script's docstring).", "", *data["machine"], "",
             "| function | Jacobian as CasADi calls it | ns | contracted Hessian as CasADi calls it | ns | "
             "Hessian / Jacobian (IQR) |", "|---|---|---:|---|---:|---:|"]
    for r in data["rows"]:
        m, lo, hi = r["ratio"]
        lines.append(f"| {r['function']} | `{r['jacobian']}` | {r['jacobian_ns']:.0f} | `{r['hessian']}` | "
                     f"{r['hessian_ns']:.0f} | {m:.2f} ({lo:.2f}–{hi:.2f}) |")
    lines += ["", "Each pair timed interleaved on the same states, the outputs of the first state checked against "
              "`casadi.external`'s call (worst difference "
              f"{max(r['checked'] for r in data['rows']):.1e}). The Hessian call returns, besides the "
              "Hessian of λᵀf, the transposed Jacobian blocks CasADi asks for with it (along the weights λ), "
              "so it costs at least one Jacobian. Library build (`soagen.casadi.library`, empty or warm cache): "
              f"{data['build_s']} s.", ""]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
