#!/usr/bin/env python3
"""Crocoddyl's action models on soagen's dynamics against Crocoddyl's own, where an FDDP user waits.

    python benchmarks/crocoddyl_models.py            # writes docs/crocoddyl.json and docs/crocoddyl.md
    python benchmarks/crocoddyl_models.py --render   # docs/crocoddyl.md again from docs/crocoddyl.json

(The script is not ``crocoddyl.py``: a script's folder comes first on ``sys.path``, and a ``crocoddyl.py``
there would be what ``import crocoddyl`` imports, here and in the tests that put ``benchmarks/`` on the path.)

**The problems.** Each is built once with Crocoddyl's own models (the baseline); soagen's problem is the
same ``ShootingProblem`` with each differential model that soagen has an equivalent of replaced by it
(:func:`soagen_models`: ``DifferentialActionModelFreeFwdDynamics`` by ``soagen.crocoddyl.free_fwd_dynamics``,
``DifferentialActionModelContactFwdDynamics`` by ``soagen.crocoddyl.contact_fwd_dynamics`` where soagen has
it, on a robot whose point tips are the node's active contacts, with the forces' derivatives as the gait
models have them), on the same state, actuation, contact and cost objects, the same integrator, control and
time step; the other nodes (impulse models) are Crocoddyl's in both; the contacts' Baumgarte gains are the gait
models' own (``ContactModel3D`` gains [0, 50]: soagen's ``contact_dynamics_baumgarte``).

* ``panda``: a reaching task, 100 nodes of 10 ms (Euler): the hand's placement (weight 1, terminal 1000),
  the state's regularisation towards the start (0.1) and the control's (1e-4); the Panda of soagen's
  bundled file, fingers locked, Pinocchio's own URDF reader for Crocoddyl's state.
* ``solo12``: trotting on four point feet, ``crocoddyl.utils.quadruped.SimpleQuadrupedalGaitProblem``'s
  ``createTrottingProblem`` with the trotting phase of Crocoddyl's ``quadrupedal_gaits_fwddyn.py`` example
  (step 0.15 m, height 0.1 m, 10 ms, 25 step knots, 2 support knots) on solo12 (example-robot-data's URDF
  with a free-flyer, its SRDF's ``standing`` pose): ``ContactModel3D`` feet, CoM, foot, friction-cone,
  state and control costs, impulse models at the foot switches; initial guess as the example's
  (the start repeated, ``quasiStatic`` controls).
* ``solo12`` with ``com=`` (the tests): ``createCoMProblem``, four feet throughout.
* The TALOS legs walking (``bipedal_gaits_fwddyn.py``) has 6-D (flat-foot) contacts, which soagen's
  Crocoddyl models do not have: not measured.

**What is measured.** ``problem.nthreads = 1`` for both (Crocoddyl's default, one thread per core, is
slower on a loaded machine; one thread is the per-node cost).  Per round, each backend in turn (the order
alternates between rounds), on the states and controls of Crocoddyl's solution: ``problem.calc(xs, us)``
and ``problem.calcDiff(xs, us)`` over all nodes (running and terminal), each the median of
:data:`PASSES` calls, divided by the number of nodes; then one FDDP solve (a fresh ``SolverFDDP``, the
same initial guess, at most :data:`MAXITER` iterations): its wall time, iterations and final cost.
Crocoddyl's own share of a solve (backward pass, line search, rollouts' state arithmetic) is the solve's
wall time less the models' time in it, ``rollouts × calc + calcDiffs × calcDiff`` of that round, where
``rollouts`` (every ``ShootingProblem::calc`` and ``SolverFDDP::forwardPass``) and ``calcDiffs``
(``ShootingProblem::calcDiff``) are counted by Crocoddyl's profiler in one more solve, not timed.  Medians
over :data:`ROUNDS` rounds; the ratios soagen / Crocoddyl are medians of per-round ratios with their
interquartile range.  Before timing, soagen's solve is checked to be Crocoddyl's: the same iterations,
cost within 1e-8 relative, states and controls within 1e-6.  soagen's models are built as
``soagen.crocoddyl`` builds them with ``optimize="O3"`` (the level ``soagen.build`` uses).
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
if str(HERE) not in sys.path:
    sys.path.insert(0, str(HERE))                   # report.py, when loaded by path (the tests)
from report import ROOT, Spread, fmt_spread  # noqa: E402

DATA, DOC = ROOT / "docs" / "crocoddyl.json", ROOT / "docs" / "crocoddyl.md"
COMMAND = "python benchmarks/crocoddyl_models.py"
ROUNDS, PASSES, MAXITER = 15, 20, 200
OPTIMIZE = "O3"
COST_RTOL, TRAJECTORY_ATOL = 1e-8, 1e-6
#: the issue's goals on solo12: soagen / Crocoddyl at most these (medians)
GOALS = {"calcdiff": 0.35, "solve": 0.5}
PANDA_LOCK = ("panda_finger_joint1", "panda_finger_joint2")
PANDA_Q0 = (0.0, -0.4, 0.0, -2.2, 0.0, 1.9, 0.8)
PANDA_GOAL = ((0.3, -0.2, 0.5), (0.45, 0.25, 0.55))          # the hand's target: roll, pitch, yaw; position (m)
SOLO_FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
#: createTrottingProblem's arguments, the trotting phase of Crocoddyl's quadrupedal_gaits_fwddyn.py
TROT = {"stepLength": 0.15, "stepHeight": 0.1, "timeStep": 1e-2, "stepKnots": 25, "supportKnots": 2}
TALOS = ("the TALOS legs walking (Crocoddyl's bipedal_gaits_fwddyn.py) stands on 6-D flat-foot contacts "
         "(ContactModel6D); soagen's Crocoddyl models have 3-D point contacts only")


# --------------------------------------------------------------------------- the problems, Crocoddyl's models
def panda(nodes=100):
    """The Panda's reaching problem on Crocoddyl's own models; -> (problem, soagen robot of the contact points:
    the Panda whatever they are)."""
    import crocoddyl
    import numpy as np
    import pinocchio as pin

    import soagen

    full = pin.buildModelFromUrdf(str(soagen.robots.path("panda")))
    model = pin.buildReducedModel(full, [full.getJointId(j) for j in PANDA_LOCK], pin.neutral(full))
    state = crocoddyl.StateMultibody(model)
    actuation = crocoddyl.ActuationModelFull(state)
    x0 = np.concatenate([PANDA_Q0, np.zeros(model.nv)])
    goal = pin.SE3(pin.utils.rpyToMatrix(*PANDA_GOAL[0]), np.array(PANDA_GOAL[1]))    # world frame

    def costs(terminal):
        nu, out = actuation.nu, crocoddyl.CostModelSum(state, actuation.nu)
        hand = crocoddyl.ResidualModelFramePlacement(state, model.getFrameId("panda_hand"), goal, nu)
        out.addCost("hand", crocoddyl.CostModelResidual(state, hand), 1e3 if terminal else 1.0)
        out.addCost("x", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelState(state, x0, nu)), 1e-1)
        if not terminal:
            out.addCost("u", crocoddyl.CostModelResidual(state, crocoddyl.ResidualModelControl(state, nu)), 1e-4)
        return out

    running, terminal = (crocoddyl.IntegratedActionModelEuler(
        crocoddyl.DifferentialActionModelFreeFwdDynamics(state, actuation, costs(t)), 0.0 if t else 1e-2)
        for t in (False, True))
    robot = soagen.robots.example("panda")
    return crocoddyl.ShootingProblem(x0, [running] * (nodes - 1), terminal), lambda tips: robot


def solo12_model():
    """solo12 as Pinocchio reads example-robot-data's URDF, with a free-flyer and the SRDF's poses."""
    import pinocchio as pin

    import soagen

    urdf = Path(soagen.robots.path("solo12"))
    model = pin.buildModelFromUrdf(str(urdf), pin.JointModelFreeFlyer())
    pin.loadReferenceConfigurations(model, str(urdf.parents[1] / "srdf" / "solo.srdf"), False)
    return model


def solo12_robot(feet):
    """soagen's solo12: floating base, a point tip at each of ``feet`` (frame names)."""
    import soagen

    return soagen.load_urdf(soagen.robots.path("solo12"), floating_base=True,
                            tips=[soagen.point_tip(f) for f in feet])


def solo12(trot=None, com=None):
    """solo12 trotting (:data:`TROT`, or ``trot``; or, given ``com``, ``createCoMProblem(x0, **com)``: four feet
    throughout) on Crocoddyl's own models, the contacts' Baumgarte gains the example's; -> (problem,
    soagen robot of the contacts' points)."""
    import numpy as np
    from crocoddyl.utils.quadruped import SimpleQuadrupedalGaitProblem

    model = solo12_model()
    x0 = np.concatenate([model.referenceConfigurations["standing"], np.zeros(model.nv)])
    gait = SimpleQuadrupedalGaitProblem(model, *SOLO_FEET)
    if com is not None:
        problem = gait.createCoMProblem(x0, **com)
    else:
        args = trot or TROT
        problem = gait.createTrottingProblem(x0, *(args[k] for k in ("stepLength", "stepHeight", "timeStep",
                                                                     "stepKnots", "supportKnots")))
    robots = {}

    def robot_for(feet):
        if feet not in robots:
            robots[feet] = solo12_robot(feet)
        return robots[feet]
    return problem, robot_for


PROBLEMS = {"panda": panda, "solo12": solo12}


# --------------------------------------------------------------------------- soagen's problem
def active_feet(d):
    """The frame names of a contact model's active contacts, in its order (its contacts' names)."""
    frames = d.state.pinocchio.frames
    return tuple(frames[item.contact.id].name for item in d.contacts.contacts.todict().values() if item.active)


def soagen_models(robot_for, optimize=OPTIMIZE):
    """{Crocoddyl's differential model class: its soagen equivalent, a function of one of its instances}:
    the free forward dynamics always, the contact forward dynamics where ``soagen.crocoddyl`` has it, on
    ``robot_for(the active contacts' frame names)`` (a robot whose tips are those points) and computing the
    forces' derivatives (``enable_force``, as the gait problems' models)."""
    import crocoddyl

    import soagen.crocoddyl as sc

    out = {crocoddyl.DifferentialActionModelFreeFwdDynamics:
           lambda d: sc.free_fwd_dynamics(robot_for(None), d.state, d.actuation, d.costs, optimize=optimize)}
    if hasattr(sc, "contact_fwd_dynamics"):
        out[crocoddyl.DifferentialActionModelContactFwdDynamics] = \
            lambda d: sc.contact_fwd_dynamics(robot_for(active_feet(d)), d.state, d.actuation, d.contacts, d.costs,
                                              inv_damping=d.JMinvJt_damping, enable_force=True, optimize=optimize)
    return out


def differentials(problem):
    """{class name: how many nodes} of the problem's differential models (the node's own class where it
    has none: impulse models)."""
    counts = {}
    for m in [*problem.runningModels, problem.terminalModel]:
        inner = getattr(m, "differential", m)
        name = f"{type(inner).__module__}.{type(inner).__name__}"
        counts[name] = counts.get(name, 0) + 1
    return counts


def swapped(problem, factories):
    """``problem`` with each Euler node's differential model of a class of ``factories`` replaced by
    ``factories[class](model)`` (one replacement per model object, so shared nodes stay shared); -> (the
    new problem, the Crocoddyl classes without a factory that the problem has)."""
    import crocoddyl

    done, missing = {}, set()

    def node(m):
        inner = getattr(m, "differential", None)
        if inner is None:
            return m
        if type(inner) not in factories:
            missing.add(type(inner).__name__)
            return m
        if id(m) not in done:
            assert type(m) is crocoddyl.IntegratedActionModelEuler, type(m)
            done[id(m)] = crocoddyl.IntegratedActionModelEuler(factories[type(inner)](inner), m.control, m.dt)
        return done[id(m)]

    out = crocoddyl.ShootingProblem(problem.x0, [node(m) for m in problem.runningModels], node(problem.terminalModel))
    return out, sorted(missing)


# --------------------------------------------------------------------------- timing
def initial_guess(problem):
    """The start repeated, ``quasiStatic`` controls (Crocoddyl's gait examples)."""
    xs = [problem.x0] * (problem.T + 1)
    return xs, problem.quasiStatic(xs[:-1])


def solve(problem, xs, us, maxiter=MAXITER):
    """One FDDP solve from (xs, us); -> (wall seconds, solver)."""
    import crocoddyl

    solver = crocoddyl.SolverFDDP(problem)
    t0 = time.perf_counter()
    solver.solve(xs, us, maxiter, False)
    return time.perf_counter() - t0, solver


def calls_in_solve(problem, xs, us, maxiter=MAXITER):
    """How many whole-problem calc (rollouts) and calcDiff one solve makes, by Crocoddyl's profiler."""
    import crocoddyl

    crocoddyl.stop_watch_reset_all()
    crocoddyl.enable_profiler()
    try:
        solve(problem, xs, us, maxiter)
    finally:
        crocoddyl.disable_profiler()

    def samples(name):
        try:
            return round(crocoddyl.stop_watch_get_total_time(name) / crocoddyl.stop_watch_get_average_time(name))
        except RuntimeError:                          # never started
            return 0
    return {"rollouts": samples("ShootingProblem::calc") + samples("SolverFDDP::forwardPass"),
            "calcdiffs": samples("ShootingProblem::calcDiff")}


def cost_calls(problem, xs, us):
    """Two functions: every node's cost model's ``calc`` and ``calcDiff`` in a Python loop over the nodes, on
    the node's data (what its own calc and calcDiff left); the cost models are the same objects in both
    backends."""
    nodes = [*zip(problem.runningModels, problem.runningDatas, xs, us),
             (problem.terminalModel, problem.terminalData, xs[-1], None)]
    pairs = []
    for m, d, x, u in nodes:
        model, data = (m.differential, d.differential) if hasattr(m, "differential") else (m, d)
        pairs.append((model.costs, data.costs, x, u))

    def calc():
        for c, d, x, u in pairs:
            c.calc(d, x) if u is None else c.calc(d, x, u)

    def calc_diff():
        for c, d, x, u in pairs:
            c.calcDiff(d, x) if u is None else c.calcDiff(d, x, u)
    return calc, calc_diff


def replaced_calls(problem, xs, us):
    """Two functions: the ``calcDiff`` of each differential model of the nodes that have one (those soagen's
    models replace; impulse nodes are Crocoddyl's in both backends), and of its cost model alone, in Python loops
    over those nodes (one call per node each, so the loops' call overheads cancel in their difference)."""
    nodes = [*zip(problem.runningModels, problem.runningDatas, xs, us),
             (problem.terminalModel, problem.terminalData, xs[-1], None)]
    pairs = [(m.differential, d.differential, x, u) for m, d, x, u in nodes if hasattr(m, "differential")]

    def differentials():
        for m, d, x, u in pairs:
            m.calcDiff(d, x) if u is None else m.calcDiff(d, x, u)

    def costs():
        for m, d, x, u in pairs:
            m.costs.calcDiff(d.costs, x) if u is None else m.costs.calcDiff(d.costs, x, u)
    return differentials, costs


def median_call(f, passes):
    """Median wall seconds of ``passes`` calls of ``f()``."""
    times = []
    for _ in range(passes):
        t0 = time.perf_counter()
        f()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def agreement(ours, theirs):
    """soagen's solver against Crocoddyl's: iterations, cost and trajectories."""
    import numpy as np

    def apart(mine, yours):                        # max abs over the nodes (an impulse node's u is empty)
        return max(float(np.max(np.abs(np.array(a) - np.array(b)), initial=0.0)) for a, b in zip(mine, yours))
    xs, us = apart(ours.xs, theirs.xs), apart(ours.us, theirs.us)
    cost = abs(ours.cost - theirs.cost) / abs(theirs.cost)
    same = ours.iter == theirs.iter and cost <= COST_RTOL and xs <= TRAJECTORY_ATOL and us <= TRAJECTORY_ATOL
    return {"iterations": [ours.iter, theirs.iter], "cost_rel": cost, "xs_max_abs": xs, "us_max_abs": us,
            "same": bool(same)}


def measure(name, rounds=ROUNDS, passes=PASSES, optimize=OPTIMIZE, maxiter=MAXITER, **problem_args):
    """Both backends on one problem of :data:`PROBLEMS` (Crocoddyl's alone, with the reason, where soagen has
    no model for one of its differential models); -> its JSON record.  Raises RuntimeError where soagen's
    solve is not Crocoddyl's."""
    theirs, robot_for = PROBLEMS[name](**problem_args)
    t0 = time.perf_counter()
    ours, missing = swapped(theirs, soagen_models(robot_for, optimize))
    build_s = time.perf_counter() - t0
    problems = {"crocoddyl": theirs} if missing else {"soagen": ours, "crocoddyl": theirs}
    for p in problems.values():
        p.nthreads = 1
    xs0, us0 = initial_guess(theirs)
    solvers = {b: solve(p, xs0, us0, maxiter)[1] for b, p in problems.items()}
    check = agreement(solvers["soagen"], solvers["crocoddyl"]) if "soagen" in problems else None
    if check is not None and not check["same"]:
        raise RuntimeError(f"{name}: soagen's solve is not Crocoddyl's: {check}")
    xs, us = list(solvers["crocoddyl"].xs), list(solvers["crocoddyl"].us)     # the states every call is timed on
    samples = {b: {"calc_s": [], "calcdiff_s": [], "solve_s": []} for b in problems}
    costs = cost_calls(theirs, xs, us)
    replaced = replaced_calls(theirs, xs, us)
    for r in range(rounds):
        for b in (list(problems) if r % 2 == 0 else list(problems)[::-1]):
            p, s = problems[b], samples[b]
            s["calc_s"].append(median_call(lambda: p.calc(xs, us), passes))
            s["calcdiff_s"].append(median_call(lambda: p.calcDiff(xs, us), passes))
            if b == "crocoddyl":                  # after its calc and calcDiff: the costs' data are of (xs, us)
                s.setdefault("costs_calc_s", []).append(median_call(costs[0], passes))
                s.setdefault("costs_calcdiff_s", []).append(median_call(costs[1], passes))
                s.setdefault("replaced_calcdiff_s", []).append(median_call(replaced[0], passes))
                s.setdefault("replaced_costs_calcdiff_s", []).append(median_call(replaced[1], passes))
            s["solve_s"].append(solve(p, xs0, us0, maxiter)[0])
    backends = {b: {**samples[b], **calls_in_solve(p, xs0, us0, maxiter), "iterations": solvers[b].iter,
                    "cost": solvers[b].cost, "differentials": differentials(p)} for b, p in problems.items()}
    return {"problem": describe(name, theirs, problem_args), "nodes": theirs.T + 1,
            "not_measured": None if not missing else
            f"soagen has no Crocoddyl model for {', '.join(missing)} in this checkout",
            "soagen_setup_s": None if missing else build_s, "agreement": check, "rounds": rounds, "passes": passes,
            "backends": backends}


def describe(name, problem, args):
    """One line on the problem."""
    if name == "panda":
        return (f"Panda reaching the hand's placement, {problem.T + 1} nodes of 10 ms (Euler): frame placement, "
                "state and control regularisation")
    gains = sorted({f"[{c.contact.gains[0]:g}, {c.contact.gains[1]:g}]" for m in problem.runningModels
                    if hasattr(m, "differential") for c in m.differential.contacts.contacts.todict().values()})
    gains = f", the contacts' Baumgarte gains {', '.join(gains)} (the example's)"
    if args.get("com") is not None:
        return (f"solo12 on four point feet moving its centre of mass, Crocoddyl's SimpleQuadrupedalGaitProblem."
                f"createCoMProblem({', '.join(f'{k}={v:g}' for k, v in args['com'].items())}): {problem.T + 1} nodes"
                f"{gains}")
    trot = args.get("trot") or TROT
    return (f"solo12 trotting on four point feet, Crocoddyl's SimpleQuadrupedalGaitProblem.createTrottingProblem("
            f"{', '.join(f'{k}={v:g}' for k, v in trot.items())}): {problem.T + 1} nodes{gains}")


def environment():
    """The machine, the releases and the compiler flags of soagen's models."""
    import crocoddyl
    import numpy as np
    import pinocchio

    import soagen.crocoddyl as sc
    from soagen._version import __version__
    from soagen.targets.cache import cpu_identity

    compiles, _, _, _ = sc.compile_commands("@", "name", OPTIMIZE)
    cxx = subprocess.run([compiles[0][0], "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    return {"machine": cpu_identity(), "cores": os.cpu_count(), "load_average": list(os.getloadavg()),
            "python": platform.python_version(), "soagen": __version__, "crocoddyl": crocoddyl.__version__,
            "pinocchio": pinocchio.__version__, "numpy": np.__version__, "compiler": cxx,
            "flags": flags(compiles[0]), "model_flags": flags(compiles[1])}


def flags(command):
    """The code-generation flags of a compiler command."""
    return " ".join(a for a in command[1:] if a.startswith(("-O", "-std", "-f", "-m", "-D")))


# --------------------------------------------------------------------------- the page
def summary(rec):
    """Per backend: medians (µs per node, ms per solve) and the share of the solve that is Crocoddyl's own;
    the ratios soagen / Crocoddyl (:class:`Spread` of per-round ratios) where both were measured."""
    nodes, out = rec["nodes"], {}
    for b, s in rec["backends"].items():
        models = [s["rollouts"] * c + s["calcdiffs"] * d for c, d in zip(s["calc_s"], s["calcdiff_s"])]
        out[b] = {"calc_us": 1e6 * statistics.median(s["calc_s"]) / nodes,
                  "calcdiff_us": 1e6 * statistics.median(s["calcdiff_s"]) / nodes,
                  "solve_ms": 1e3 * statistics.median(s["solve_s"]),
                  "own": Spread.of([1 - m / t for m, t in zip(models, s["solve_s"])])}
        if "costs_calcdiff_s" in s:
            out[b].update(costs_calc_us=1e6 * statistics.median(s["costs_calc_s"]) / nodes,
                          costs_calcdiff_us=1e6 * statistics.median(s["costs_calcdiff_s"]) / nodes,
                          costs_share=Spread.ratio(s["costs_calcdiff_s"], s["calcdiff_s"]))
        if "replaced_calcdiff_s" in s:              # what soagen's models replace: the models less their costs
            replaced = [d - c for d, c in zip(s["replaced_calcdiff_s"], s["replaced_costs_calcdiff_s"])]
            out[b].update(replaced_us=1e6 * statistics.median(replaced) / nodes,
                          replaced_share=Spread.of([r / t for r, t in zip(replaced, s["calcdiff_s"])]))
    if "soagen" in rec["backends"]:
        ours, theirs = rec["backends"]["soagen"], rec["backends"]["crocoddyl"]
        out["ratio"] = {k: Spread.ratio(ours[f"{k}_s"], theirs[f"{k}_s"]) for k in ("calc", "calcdiff", "solve")}
    return out


def classes(differentials):
    """{("soagen's " or "", class name): (nodes, modules)} of a record's differential models (soagen's modules,
    one per robot built, carry the build's key in their names)."""
    out = {}
    for qualified, n in differentials.items():
        module, cls = qualified.rsplit(".", 1)
        key = ("soagen's " if module.startswith("soagen_crocoddyl_") else "", cls)
        nodes, modules = out.get(key, (0, 0))
        out[key] = (nodes + n, modules + 1)
    return out


def table(rec):
    """One problem's rows."""
    sm = summary(rec)
    lines = ["| backend | differential models (nodes) | calc µs / node | calcDiff µs / node | solve ms | iterations "
             "| final cost | calc, calcDiff in the solve | Crocoddyl's own share |", "|---" * 9 + "|"]
    for b, s in rec["backends"].items():
        m = sm[b]
        models = ", ".join(f"{who}`{cls}` {n}" + (f" ({m} modules)" if m > 1 else "")
                           for (who, cls), (n, m) in classes(s["differentials"]).items())
        lines.append(f"| {b} | {models} | {m['calc_us']:.2f} | {m['calcdiff_us']:.2f} | {m['solve_ms']:.1f} | "
                     f"{s['iterations']} | {s['cost']:.10g} | {s['rollouts']}, {s['calcdiffs']} | "
                     f"{100 * m['own'].median:.0f} % ({100 * m['own'].q1:.0f}–{100 * m['own'].q3:.0f}) |")
    return "\n".join(lines)


def costs_line(rec):
    """What the cost models alone take: a bound on what replacing the dynamics can save."""
    c = summary(rec)["crocoddyl"]
    return (f"Crocoddyl's cost models alone (the same objects in both backends; a Python loop over the nodes, "
            f"its call overhead included): calc {c['costs_calc_us']:.2f} µs and calcDiff {c['costs_calcdiff_us']:.2f} "
            f"µs per node, {fmt_spread(c['costs_share'])} of Crocoddyl's calcDiff: soagen / Crocoddyl for calcDiff "
            f"could not be below that were soagen's dynamics free.")


def replaced_line(rec):
    """What soagen's models replace, measured on Crocoddyl's: the lower bound of soagen / Crocoddyl for calcDiff."""
    c = summary(rec)["crocoddyl"]
    if "replaced_share" not in c:
        return ""
    share = c["replaced_share"]
    return (f"\n\nWhat soagen's models replace, timed on Crocoddyl's own: its differential models' calcDiff less their "
            f"cost models' (the dynamics, the contacts and their derivatives; Python loops over the nodes that have "
            f"one, one call per node in each, so the call overheads cancel) is {c['replaced_us']:.2f} µs per node, "
            f"{fmt_spread(share)} of Crocoddyl's calcDiff. The rest (costs, integrator, impulse nodes, Crocoddyl's "
            f"bookkeeping) is the same code in both backends: soagen / Crocoddyl for calcDiff could not be below "
            f"{1 - share.median:.2f} were soagen's models free.")


def ratio_lines(rec, goals=None):
    """soagen / Crocoddyl per round, against the goals where there are."""
    sm = summary(rec)
    if "ratio" not in sm:
        return f"**soagen's models: not measured.** {rec['not_measured']}; Crocoddyl's own models alone above."
    names = {"calc": "calc per node", "calcdiff": "calcDiff per node", "solve": "whole FDDP solve"}
    out = []
    for k, s in sm["ratio"].items():
        goal = "" if not goals or k not in goals else \
            f", goal ≤ {goals[k]}: **{'met' if s.median <= goals[k] else 'not met'}**"
        out.append(f"- {names[k]}: soagen / Crocoddyl {fmt_spread(s)}{goal}")
    a = rec["agreement"]
    out.append(f"- the same solve: {a['iterations'][0]} iterations each, cost {a['cost_rel']:.1e} relative, states "
               f"{a['xs_max_abs']:.1e} and controls {a['us_max_abs']:.1e} max abs apart")
    return "\n".join(out)


def headline(data):
    """The lines the guide quotes: per problem, soagen's medians against Crocoddyl's, or why not."""
    out = []
    for name, rec in data["problems"].items():
        sm = summary(rec)
        costs = (f"Crocoddyl's cost models alone take {100 * sm['crocoddyl']['costs_share'].median:.0f} % of "
                 f"its calcDiff")
        if "replaced_share" in sm["crocoddyl"]:
            costs += (f", and what soagen's models replace (the differential models less their costs) "
                      f"{100 * sm['crocoddyl']['replaced_share'].median:.0f} %")
        if "ratio" not in sm:
            out.append(f"{name}: soagen's models not measured ({rec['not_measured']}); {costs}.")
            continue
        o, t, r, it = sm["soagen"], sm["crocoddyl"], sm["ratio"], rec["agreement"]["iterations"][0]
        out.append(f"{name}, {rec['nodes']} nodes: calc {o['calc_us']:.2f} µs and calcDiff {o['calcdiff_us']:.2f} µs "
                   f"per node with soagen's models against {t['calc_us']:.2f} and {t['calcdiff_us']:.2f} µs with "
                   f"Crocoddyl's ({r['calc'].median:.2f}x, {r['calcdiff'].median:.2f}x); the FDDP solve "
                   f"{o['solve_ms']:.1f} ms against {t['solve_ms']:.1f} ms ({r['solve'].median:.2f}x, {it} "
                   f"iterations each), of which Crocoddyl's own work is {100 * o['own'].median:.0f} % with "
                   f"soagen's models and {100 * t['own'].median:.0f} % with its own; {costs}.")
    return f"`{data['command']}`, medians of {data['problems']['panda']['rounds']} interleaved rounds: " + " ".join(out)


def render(data):
    """docs/crocoddyl.md from the JSON record."""
    env, probs = data["environment"], data["problems"]
    sections = []
    for name, goals in (("panda", None), ("solo12", GOALS)):
        rec = probs[name]
        setup = "" if rec["soagen_setup_s"] is None else \
            f" soagen's models made (built or loaded from the cache) in {rec['soagen_setup_s']:.1f} s."
        sections.append(f"## {name}\n\n{rec['problem']}; {rec['rounds']} rounds, {rec['passes']} calls per "
                        f"calc and calcDiff timing.{setup}\n\n{table(rec)}\n\n{costs_line(rec)}{replaced_line(rec)}\n\n"
                        f"{ratio_lines(rec, goals)}\n")
    return f"""# Crocoddyl: soagen's action models against Crocoddyl's own

`{data['command']}` ({env['machine']}; {env['cores']} cores, load averages {env['load_average'][0]:.2f} at the
start and {env['load_average_end'][0]:.2f} at the end; Python {env['python']}, Crocoddyl {env['crocoddyl']},
Pinocchio {env['pinocchio']}, numpy {env['numpy']}, soagen {env['soagen']}; soagen's models compiled by
{env['compiler']} with `{env['flags']}` (the generated functions) and `{env['model_flags']}` (the models' C++),
Crocoddyl's and Pinocchio's from their wheels).
`python benchmarks/crocoddyl_models.py --render` writes this page again from `docs/crocoddyl.json`.

One problem, two backends: Crocoddyl's own differential action models (Pinocchio's ABA and its
derivatives), and the same `ShootingProblem` with soagen's models in their place (the same costs,
contacts, actuation, integrator and solver). One thread (`problem.nthreads = 1`). The backends alternate
within each round; times are medians over the rounds, ratios the medians of per-round ratios with their
interquartile range. calc and calcDiff are `problem.calc(xs, us)` and `problem.calcDiff(xs, us)` over
every node (running and terminal) on Crocoddyl's solution, divided by the nodes. "calc, calcDiff in the
solve" counts the whole-problem rollouts and calcDiffs one solve makes (Crocoddyl's profiler); Crocoddyl's
own share is the solve less that many calc and calcDiff (its backward pass, line search and state
arithmetic), with its interquartile range. The docstring of `benchmarks/crocoddyl_models.py` says what
each problem is.

{chr(10).join(sections)}
## TALOS

Not measured: {data['talos']}.
"""


def run(args):
    """Measure, write the JSON and the page (or print only)."""
    env = environment()
    probs = {}
    for name in PROBLEMS:
        print(f"{name}: {args.rounds} rounds", flush=True)
        probs[name] = measure(name, rounds=args.rounds)
    env["load_average_end"] = list(os.getloadavg())
    data = {"command": COMMAND + (f" --rounds {args.rounds}" if args.rounds != ROUNDS else ""),
            "environment": env, "problems": probs, "talos": TALOS}
    if not args.no_doc:
        DATA.write_text(json.dumps(data, indent=1) + "\n")
        DOC.write_text(render(data))
    print(render(data))
    return 0


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render", action="store_true", help="docs/crocoddyl.md again from docs/crocoddyl.json")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--no-doc", action="store_true", help="print only")
    args = parser.parse_args(argv)
    if args.render:
        DOC.write_text(render(json.loads(DATA.read_text())))
        return 0
    return run(args)


if __name__ == "__main__":
    sys.exit(main())
