#!/usr/bin/env python3
"""Time each function as a Python user calls it: soagen's module method against Pinocchio's
Python call, one state per call.

    python benchmarks/python_calls.py --robot panda        # or solo12, talos, all

Per robot: 64 seeded random states (``states.py``), the module built as ``soagen.build`` builds
it (-O3 -march=native), Pinocchio's model from the same file (``backends.pinocchio_model``).
A round times, function by function, each backend on every state in turn (a loop of calls;
the backends' order alternates between rounds): soagen's method (``mod.f(q, ...)``, fresh
outputs), the same with ``out=`` (one-output functions), the bare C (the function's scalar
batch over the 64 states in one call, per state: what the C costs without any wrapper), the
method's Python path (``mod.f.__wrapped__``: every call before the methods' C entry, and the
calls that need a conversion now) and Pinocchio's Python call on the same states (its
velocities converted to its convention beforehand).  15 rounds; per function the median per-call time of each, the wrapper's own
cost (method − bare C, per round) and the ratio soagen / Pinocchio of each round (median and
interquartile range).  Before timing, soagen's outputs are checked against Pinocchio's on
every state.  Printed, and written to ``docs/python_calls.json`` and ``docs/python_calls.md``
(this robot's section; the others' are kept); ``benchmarks/run.py`` runs it for its robots.

Pinocchio's calls: ``rnea``, ``crba``, ``computeMinverse``, ``aba``, the tips' Jacobians
(``computeFrameJacobian`` for one tip, else ``computeJointJacobians`` and ``getFrameJacobian``
per tip, stacked), Λ(0) as a Python user writes it from those (``inv(J M⁻¹ Jᵀ)``),
``computeRNEADerivatives`` and ``computeABADerivatives``: each as it returns (``crba`` and
``computeMinverse`` are not symmetrized here).
"""
from __future__ import annotations

import argparse
import json
import platform
import statistics
import sys
import time

import backends as bk
import numpy as np
import soagen_side as sg
from report import PYTHON_CALL_ROBOTS, ROOT, Spread, fmt_us, python_calls_page
from specs import SPECS
from states import draw_states

DATA, DOC = ROOT / "docs" / "python_calls.json", ROOT / "docs" / "python_calls.md"
ROBOTS = PYTHON_CALL_ROBOTS
FUNCTIONS = ("inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "jacobian", "os_inertia",
             "inverse_dynamics_derivatives", "forward_dynamics_derivatives")
STATES, ROUNDS, PASSES = 64, 15, 5           # states; rounds; loops over the states per timing


def pinocchio_calls(model, robot):
    """{function: (the Python a user writes for it, of q, v, a (or tau), its name)} and the names it
    reads (:func:`loop`)."""
    import pinocchio as pin

    data = model.createData()
    frames = [model.getFrameId(t.name) for t in robot.tips]
    rows = [slice(0, 3) if t.point else slice(0, 6) for t in robot.tips]   # point tips: the linear rows
    lwa = pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    if len(frames) == 1 and not robot.tips[0].point:
        def jacobian(q):
            return pin.computeFrameJacobian(model, data, q, frames[0], lwa)
        jac_name = "computeFrameJacobian"
    else:
        def jacobian(q):
            pin.computeJointJacobians(model, data, q)
            return np.vstack([pin.getFrameJacobian(model, data, f, lwa)[r] for f, r in zip(frames, rows)])
        jac_name = "computeJointJacobians + getFrameJacobian per tip"

    def os_inertia(q):
        J = jacobian(q)
        return np.linalg.inv(J @ pin.computeMinverse(model, data, q) @ J.T)

    calls = {"inverse_dynamics": ("pin.rnea(model, data, q, v, a)", "rnea"),
             "mass_matrix": ("pin.crba(model, data, q)", "crba"),
             "mass_matrix_inverse": ("pin.computeMinverse(model, data, q)", "computeMinverse"),
             "forward_dynamics": ("pin.aba(model, data, q, v, a)", "aba"),
             "jacobian": ("jacobian(q)", jac_name),
             "os_inertia": ("os_inertia(q)", f"inv(J Minv J^T): {jac_name}, computeMinverse"),
             "inverse_dynamics_derivatives": ("pin.computeRNEADerivatives(model, data, q, v, a)",
                                              "computeRNEADerivatives"),
             "forward_dynamics_derivatives": ("pin.computeABADerivatives(model, data, q, v, a)",
                                              "computeABADerivatives")}
    return calls, dict(pin=pin, model=model, data=data, jacobian=jacobian, os_inertia=os_inertia)


def loop(statement, names, env):
    """A function of a list of states (tuples of ``names``) that runs ``statement`` on each, as a
    user's loop would (no wrapper around the call), and returns the loop's nanoseconds."""
    target = ", ".join(names) + ("," if len(names) == 1 else "") if names else "_"
    source = (f"def timed(states):\n    t0 = perf_counter_ns()\n    for {target} in states:\n"
              f"        {statement}\n    return perf_counter_ns() - t0\n")
    scope = dict(env, perf_counter_ns=time.perf_counter_ns)
    exec(source, scope)
    return scope["timed"]


def soagen_args(name, q, qd, qdd, tau):
    return {"inverse_dynamics": (q, qd, qdd), "inverse_dynamics_derivatives": (q, qd, qdd),
            "forward_dynamics": (q, qd, tau), "forward_dynamics_derivatives": (q, qd, tau)}.get(name, (q,))


def check(robot, mod, pin_env, states, pin_states):
    """soagen's outputs against Pinocchio's on every state (inverse and forward dynamics, M, in
    soagen's conventions); a difference aborts the run."""
    from soagen import pinocchio_convention as pc

    pin, model, data = pin_env["pin"], pin_env["model"], pin_env["data"]
    worst = 0.0
    for (q, qd, qdd, tau), (pq, pv, pa, ptau) in zip(states, pin_states):
        upper = np.triu(pin.crba(model, data, pq))
        pairs = [(mod.inverse_dynamics(q, qd, qdd), pc.v_from_pinocchio(robot, pin.rnea(model, data, pq, pv, pa))),
                 (mod.forward_dynamics(q, qd, tau), pc.v_from_pinocchio(robot, pin.aba(model, data, pq, pv, ptau))),
                 (mod.mass_matrix(q), pc.matrix_from_pinocchio(robot, upper + np.triu(upper, 1).T))]
        for got, want in pairs:
            worst = max(worst, np.abs(got - want).max() / max(1.0, np.abs(want).max()))
    if worst > 1e-8:
        raise SystemExit(f"soagen and Pinocchio differ by {worst:.2e} (relative): not timed")
    return worst


def per_call_ns(timed, states, passes=PASSES):
    """Median over ``passes`` runs of ``timed(states)`` (:func:`loop`), per state."""
    return statistics.median(timed(states) / len(states) for _ in range(passes))


def bare_c(mod, name, args_list):
    """The function's scalar batch over every state in one call: (call, its arguments) timing
    the C alone (per state, dividing by the states)."""
    rows = [np.ascontiguousarray(np.array(col)) for col in zip(*args_list)]
    sig = mod._sig[name]
    outs = [np.empty((len(args_list), size)) for _, size in sig[len(rows):]]
    ffi, fn = mod._ffi, getattr(mod._lib.lib, f"{mod.name}_{name}_batch")
    pointers = [ffi.from_buffer("double[]", a) for a in rows + outs]
    count = len(args_list)
    return lambda: fn(count, *pointers)


def time_robot(robot_name, rounds=ROUNDS, seed=0):
    spec = SPECS[robot_name]
    robot = spec.robot()
    import pinocchio as pin

    work = bk.WORK / robot_name
    work.mkdir(parents=True, exist_ok=True)
    model = pin.Model()
    model.loadFromText(str(bk.pinocchio_model(spec, robot, work / "python_calls_model.txt")))
    t0 = time.perf_counter()
    mod = soagen.build(robot, functions=list(FUNCTIONS))
    build_s = time.perf_counter() - t0
    print(f"== {robot_name}: {sg.describe(robot)}; module built in {build_s:.1f} s", flush=True)
    drawn = draw_states(robot, STATES, seed, spec.tips_at_rest)
    states = [(drawn.q[i], drawn.qd[i], drawn.qdd[i], drawn.tau[i]) for i in range(STATES)]
    pin_states = [(sg.q_to_pinocchio(robot, q), sg.v_to_pinocchio(robot, qd), sg.v_to_pinocchio(robot, qdd),
                   sg.v_to_pinocchio(robot, tau)) for q, qd, qdd, tau in states]
    pin_calls, pin_env = pinocchio_calls(model, robot)
    worst = check(robot, mod, pin_env, states, pin_states)
    print(f"  soagen = Pinocchio on {STATES} states (inverse and forward dynamics, M): worst {worst:.1e}", flush=True)
    rows = {}
    for name in FUNCTIONS:
        names = F.BY_NAME[name].inputs                      # q, qd, qdd or tau, ...: as the method reads them
        args = [soagen_args(name, *s) for s in states]
        single_out = len(mod._sig[name]) - len(args[0]) == 1
        env = dict(mod=mod, out=getattr(mod, name)(*args[0]), c_call=bare_c(mod, name, args))
        call = f"mod.{name}({', '.join(names)}"
        pin_statement, pin_name = pin_calls[name]
        pin_args = [(p[0], p[1], p[3] if "forward" in name else p[2]) for p in pin_states]
        env["python"] = getattr(mod, name).__wrapped__
        timers = {"method": (loop(call + ")", names, env), args),
                  "python": (loop(f"python({', '.join(names)})", names, env), args),
                  "out": (loop(call + ", out=out)", names, env), args) if single_out else None,
                  "c": (loop("c_call()", [], env), [None]),
                  "pinocchio": (loop(pin_statement, ["q", "v", "a"], pin_env), pin_args)}
        samples = {what: [] for what in timers}
        for r in range(rounds):
            for what in (list(timers) if r % 2 == 0 else list(timers)[::-1]):
                if timers[what] is not None:
                    timed, states_of = timers[what]
                    samples[what].append(per_call_ns(timed, states_of) / (STATES if what == "c" else 1))
        rows[name] = dict(
            method_ns=statistics.median(samples["method"]),
            out_ns=statistics.median(samples["out"]) if samples["out"] else None,
            c_ns=statistics.median(samples["c"]), python_ns=statistics.median(samples["python"]),
            wrapper_ns=statistics.median(m - c for m, c in zip(samples["method"], samples["c"])),
            pinocchio_ns=statistics.median(samples["pinocchio"]), pinocchio=pin_name,
            ratio=Spread.ratio(samples["method"], samples["pinocchio"]).__dict__)
        print("  " + line(name, rows[name]), flush=True)
    return dict(robot=robot_name, describe=sg.describe(robot), states=STATES, rounds=rounds, passes=PASSES,
                command=f"python benchmarks/python_calls.py --robot {robot_name}", build_s=build_s,
                machine=cpu_identity(),
                python=platform.python_version(), pinocchio=pin.__version__, numpy=np.__version__, functions=rows)


def line(name, row):
    r = row["ratio"]
    return (f"{name:<30} {fmt_us(row['method_ns']):>7} µs  out= {fmt_us(row['out_ns']):>6}  "
            f"C {fmt_us(row['c_ns']):>6}  "
            f"wrapper {fmt_us(row['wrapper_ns']):>5}  Python path {fmt_us(row['python_ns']):>6}  "
            f"Pinocchio {fmt_us(row['pinocchio_ns']):>6} µs  "
            f"{r['median']:.2f}x ({r['q1']:.2f}-{r['q3']:.2f})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", choices=[*ROBOTS, "all"], default="panda")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/python_calls.md, .json")
    args = parser.parse_args(argv)
    report = json.loads(DATA.read_text()) if DATA.exists() else {}
    for name in ROBOTS if args.robot == "all" else (args.robot,):
        rep = time_robot(name, args.rounds)
        if args.rounds != ROUNDS:
            rep["command"] += f" --rounds {args.rounds}"
        report[name] = rep
        if not args.no_doc:
            DATA.write_text(json.dumps({k: report[k] for k in ROBOTS if k in report}, indent=1) + "\n")
            DOC.write_text(python_calls_page(report))
    print(python_calls_page(report))
    return 0


import soagen  # noqa: E402  (after the benchmark's own modules, as run.py)
from soagen import functions as F  # noqa: E402
from soagen.targets.cache import cpu_identity  # noqa: E402

if __name__ == "__main__":
    sys.exit(main())
