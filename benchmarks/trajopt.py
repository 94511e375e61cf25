#!/usr/bin/env python3
"""One trajectory optimization solved with soagen's dynamics and with CasADi's own symbolic dynamics.

    python benchmarks/trajopt.py            # writes docs/trajopt.json and docs/trajopt.md
    python benchmarks/trajopt.py --render   # docs/trajopt.md again from docs/trajopt.json

**The problem (Panda).** The NLP of ``examples/trajopt_panda.py`` (its ``problem()`` and constants):
the Panda from rest to rest in 1 s, 50 intervals of multiple shooting, one RK4 step of the forward
dynamics each, torque limits, minimum effort.  Every route gets the same NLP (the same ``Opti``
construction, only the step function differs), the same initial guess, bounds and IPOPT options
(``tol`` 1e-8, the stop at IPOPT's "acceptable" level switched off, ``acceptable_iter`` 0, so that
the routes converge to ``tol``: IPOPT still ends at an acceptable point where its line search can make
no further progress, and the page gives each route's return status; MUMPS), and IPOPT is called
through ``casadi.nlpsol`` built from the ``Opti`` problem, so that the solver's construction is
timed apart from the solve.

**Two starts.** Every route is solved from the example's initial guess (the straight line in q, at
rest), where the exact-Hessian routes have reached another local minimum than the limited-memory
ones, and again from a common start, soagen's limited-memory optimum from the first start (the
variables only: IPOPT's multipliers and barrier parameter start afresh, and IPOPT pushes the
torques at their limits back inside them), to compare the routes at one optimum.

**The routes.** Two ways to write the step, each with soagen's dynamics and with CasADi's own:
the step as one compiled function with its Jacobian (one call per interval), or the RK4 stages
written in CasADi around a compiled forward dynamics (four calls per interval, CasADi chaining
their Jacobians in its MX virtual machine).

* ``soagen``: ``soagen.casadi.functions(robot, ["rk4_step"])`` (-O3): the RK4 step in soagen's C, its
  Jacobian soagen's analytical derivatives of the forward dynamics chained through the stages in
  C; IPOPT with the limited-memory Hessian.
* ``soagen_exact``: the same step from a library built with ``hessians=True``, IPOPT with its exact
  Hessian: CasADi calls the library's ``adj1_`` and ``jac_adj1_`` of the step, whose Hessian of
  μᵀ x_next is the second-order adjoint through the four stages in C, each stage's the generated
  ``forward_dynamics_hessian`` (:mod:`soagen.targets.casadi.hessian`).
* ``soagen_fd``: ``soagen.casadi.functions(robot, ["forward_dynamics"])`` (-O3), the RK4 stages in
  CasADi around it (``rk4_of`` of the example); limited-memory Hessian.
* ``casadi_vm``: casadi_kin_dyn's ``aba(q, v, tau)`` (Pinocchio 2.6.20 on ``casadi::SX``), rebuilt
  with CasADi's ``cse`` option, the RK4 stages around it; the NLP expanded into one SX graph
  (``expand``) and evaluated by CasADi's SX virtual machine, derivatives by CasADi's AD (the
  expansion inlines ``aba``'s graph into the NLP's; ``cse`` applies to the Function, not to the
  expanded NLP); limited-memory Hessian.
* ``casadi_compiled``: the same ``aba`` and its Jacobian ``jac_aba`` (CasADi's AD), each an SX
  Function with ``cse``, written by ``casadi.CodeGenerator``, compiled with soagen's own compiler
  and flags (``cc -O3 -std=c99 -march=native -ffp-contract=fast``, :func:`cc_command`) and
  ``-shared``, and loaded by ``casadi.external`` (the Jacobian found as ``jac_aba``, as soagen's
  is), the RK4 stages in CasADi around it; limited-memory Hessian.
* ``casadi_compiled_step``: CasADi's counterpart of ``rk4_step``: the RK4 step written in CasADi
  around the compiled ``aba``, it and its Jacobian (CasADi's AD through the stages, calling
  ``jac_aba``) written by ``casadi.CodeGenerator``, compiled with the same flags against the
  ``aba`` library and loaded by ``casadi.external``; limited-memory Hessian.  (The step expanded
  into SX instead, with its SX Jacobian, is about 260 000 instructions: gcc -O3 takes minutes, and
  it evaluated slower than this route when tried.)
* ``casadi_vm_exact``: as ``casadi_vm``, with IPOPT's exact Hessian (CasADi's second derivatives).
  The compiled routes have no exact-Hessian variant: ``jac_jac_aba`` is about 250 000 SX
  instructions, and gcc -O3 had not compiled its 6 MB of C after eight minutes.

Before this record the compiled routes were built with ``gcc -O3`` alone; soagen's library has
always had its flags.  The URDF is the one soagen reads (fingers locked at 0), rewritten by
``casadi_kin_dyn.py``.

**What is measured.** Per route: the set-up (soagen: the build from an empty cache, a fresh
``SOAGEN_CACHE``, and the cached load; soagen and soagen_fd load the same library, soagen_exact
its own, built with ``hessians=True``; CasADi:
casadi_kin_dyn's graph, the ``cse`` Functions,
code generation and compilation; every route: ``nlpsol``'s construction, which includes the
expansion), IPOPT's wall time, its iterations, and from ``solver.stats()`` the time spent
evaluating the constraints and their Jacobian (``t_wall_nlp_g + t_wall_nlp_jac_g``), the
Lagrangian's Hessian where used (``t_wall_nlp_hess_l``; their sum is the page's "evaluations") and
the rest (IPOPT's own work, MUMPS, the objective).  Each solve is repeated 3 times, the routes
interleaved (A, B, C, D, A, ...): medians, and the range over the repeats; the 1-minute load average
before each round is recorded (the machine may be shared).  The optimum is compared with the soagen
route's, and the routes are grouped by the optimum they reached: objective within 1e-6 relative and
states and torques within 1e-4 (max abs).  The issue's goal (:func:`wall_goal`): from each start,
soagen's fastest route against the fastest CasADi route under either Hessian, by IPOPT wall time,
at most 0.25x and at the same optimum.

**Solo12.** A small standing problem on ``contact_dynamics`` (four point feet, floating base): from
rest in a standing pose, raise the base by 3 cm in 0.5 s and end at rest, minimum torque, 20
semi-implicit Euler steps (the quaternion by its first-order derivative), the base unactuated,
the feet's vertical forces pushing down (``f_z <= 0``); IPOPT's options as the Panda's (converged
to ``tol``), and 30 correction pairs for the limited-memory Hessian (:data:`SOLO_IPOPT`: with the
default 6 it stops at the acceptable level).  soagen's routes only, with the limited-memory
Hessian and with the exact one (``contact_dynamics`` built with ``hessians=True``: CasADi's Hessian
of the Lagrangian through the Euler step calls its ``jac_adj1_``): casadi_kin_dyn has no contact
dynamics and ``casadi_kin_dyn.py`` refuses a free-flyer (nq = 19 != nv = 18).  Then each route is
solved once more from the other's solution (:func:`crossed`): where the two stopped apart, whether
one stays at the other's optimum (one minimum, loosely determined by IPOPT's stopping test) or
leaves it (two local minima).

**Where it runs.** casadi_kin_dyn.py's venv (``benchmarks/.work/casadi-venv``, created once), with
soagen installed into it (``pip install --no-deps -e``, and sympy, jinja2, cffi).  Its CasADi
(cmeel's 3.6.3) builds casadi_kin_dyn's graph in a child process, which hands it on serialized;
cmeel's CasADi ships an IPOPT plugin whose libraries (libgfortran, METIS) are missing, so every
solve, of every route, runs on PyPI's ``casadi==3.6.3`` (IPOPT and MUMPS included), installed into
``<venv>/solver-casadi`` and first on the path of the benchmark's process.
"""
from __future__ import annotations

import argparse
import importlib.util
import json
import os
import platform
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DATA, DOC = ROOT / "docs" / "trajopt.json", ROOT / "docs" / "trajopt.md"
COMMAND = "python benchmarks/trajopt.py"
SOLVER_CASADI = "casadi==3.6.3"
SOAGEN_DEPENDENCIES = ["sympy>=1.12", "jinja2>=3.1", "cffi>=1.16"]
REPEATS = 3
IPOPT = {"print_time": False, "ipopt.tol": 1e-8, "ipopt.print_level": 0, "ipopt.sb": "yes"}
#: the Panda's routes converge to tol, with no stop at IPOPT's "acceptable" level, to compare optima
CONVERGED = {"ipopt.acceptable_iter": 0}
PANDA_LOCK = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
OBJECTIVE_RTOL, TRAJECTORY_ATOL = 1e-6, 1e-4
ROUTES = {   # name: (what evaluates the step, Hessian)
    "soagen": ("soagen's rk4_step: the step and its Jacobian in soagen's C, external", "limited-memory"),
    "soagen_exact": ("soagen's rk4_step with its exact Hessian (hessians=True): the step, its Jacobian and "
                     "its contracted Hessian in soagen's C, external", "exact"),
    "soagen_fd": ("soagen's forward_dynamics in C, external, analytical Jacobian; RK4 stages in CasADi",
                  "limited-memory"),
    "casadi_vm": ("casadi_kin_dyn SX (cse), RK4 stages, expanded, SX virtual machine", "limited-memory"),
    "casadi_compiled": ("casadi_kin_dyn SX (cse), CodeGenerator + soagen's gcc flags, external; RK4 stages "
                        "in CasADi", "limited-memory"),
    "casadi_compiled_step": ("the RK4 step in CasADi around the compiled aba, it and its Jacobian by "
                             "CodeGenerator + soagen's gcc flags, external", "limited-memory"),
    "casadi_vm_exact": ("casadi_kin_dyn SX (cse), RK4 stages, expanded, SX virtual machine", "exact"),
}
SOAGEN_ROUTES = ("soagen", "soagen_exact", "soagen_fd")
#: the issue's goal: soagen's fastest IPOPT wall time at most this multiple of the fastest CasADi route's
WALL_TARGET = 0.25
SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
SOLO_STAND = [0.0, 0.8, -1.6, 0.0, 0.8, -1.6, 0.0, -0.8, 1.6, 0.0, -0.8, 1.6]
SOLO_HEIGHT, SOLO_RISE, SOLO_DURATION, SOLO_INTERVALS = 0.25, 0.03, 0.5, 20
#: solo12's IPOPT options besides the Panda's: with IPOPT's default 6 correction pairs the limited-memory
#: Hessian stops at the acceptable level (813 iterations, its line search making no further progress);
#: with 30 it converges to tol (the exact Hessian ignores the option)
SOLO_IPOPT = {"ipopt.limited_memory_max_history": 30}


def _script(name, path):
    """A module of ``benchmarks/`` loaded from its file under ``name`` (``casadi_kin_dyn.py`` is named
    like the package it drives)."""
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def kin_dyn_script():
    """``benchmarks/casadi_kin_dyn.py``: its venv and its URDF rewriting."""
    return _script("casadi_kin_dyn_script", HERE / "casadi_kin_dyn.py")


# --------------------------------------------------------------------------- outer: the venv
def _pip(vpy, *args):
    """``pip install`` into the venv of ``vpy``; raises on failure."""
    cmd = [str(vpy), "-m", "pip", "install", "--no-input", "--disable-pip-version-check", "-q", *args]
    subprocess.run(cmd, check=True)


def ensure_soagen(venv):
    """soagen (editable, this checkout), its light dependencies and PyPI's CasADi 3.6.3 (a target
    folder ``solver-casadi``) in ``venv``, once; -> that folder.

    Parameters
    ----------
    venv : Path   casadi_kin_dyn.py's venv

    Returns
    -------
    Path   the folder holding the solver's ``casadi`` package
    """
    vpy, target = venv / "bin" / "python", venv / "solver-casadi"
    marker = venv / "soagen-trajopt.json"
    want = {"checkout": str(ROOT), "solver": SOLVER_CASADI, "dependencies": SOAGEN_DEPENDENCIES}
    if marker.is_file() and json.loads(marker.read_text()) == want:
        return target
    _pip(vpy, *SOAGEN_DEPENDENCIES)
    _pip(vpy, "--no-deps", "-e", str(ROOT))
    _pip(vpy, "--no-deps", "--upgrade", "--target", str(target), SOLVER_CASADI)
    marker.write_text(json.dumps(want, indent=1) + "\n")
    return target


def outer(args):
    """Make the venv, then run the benchmark inside it (``--inner``); -> exit status."""
    ckd = kin_dyn_script()
    venv = Path(args.venv).resolve()
    ckd.ensure_venv(venv, args.python)
    target = ensure_soagen(venv)
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "SOAGEN_CACHE")}
    env["SOAGEN_TRAJOPT_CMEEL_LIB"] = os.pathsep.join(ckd._cmeel_lib_dirs(venv))
    from soagen.model.robots import erd_root  # solo12's URDF, from this interpreter's example-robot-data
    if erd_root() is not None:
        env.setdefault("EXAMPLE_ROBOT_DATA_MODEL_DIR", str(erd_root()))
    cmd = [str(venv / "bin" / "python"), str(Path(__file__).resolve()), "--inner", "--solver-casadi", str(target)]
    return subprocess.run(cmd + (["--quick"] if args.quick else []), env=env, check=False).returncode


# --------------------------------------------------------------------------- child: casadi_kin_dyn's graph
def graph(out):
    """casadi_kin_dyn's ``aba`` of the Panda, serialized to ``out``/aba.casadi; its times to
    ``out``/graph.json (run with cmeel's CasADi, in a child process)."""
    ckd = kin_dyn_script()
    sys.path[:] = [p for p in sys.path if Path(p or ".").resolve() != HERE]
    import casadi_kin_dyn  # noqa: F401, I001 (loads cmeel's libcasadi before casadi)
    from casadi_kin_dyn import casadi_kin_dyn as kd_module
    import casadi

    from soagen.model.robots import urdf_path
    text, _ = ckd.rewrite_urdf(Path(urdf_path("panda")).read_text(), PANDA_LOCK)
    t0 = time.perf_counter()
    kd = kd_module.CasadiKinDyn(text)
    aba = kd.aba()
    seconds = time.perf_counter() - t0
    (Path(out) / "aba.casadi").write_text(aba.serialize())
    info = {"seconds": seconds, "casadi": casadi.__version__, "joints": list(kd.joint_names())[1:],
            "instructions": aba.n_instructions()}
    (Path(out) / "graph.json").write_text(json.dumps(info))


def kin_dyn_graph(work):
    """Run :func:`graph` in a child process of this venv; -> (its record, casadi_kin_dyn's aba)."""
    import casadi

    env = dict(os.environ, LD_LIBRARY_PATH=os.pathsep.join(
        [os.environ["SOAGEN_TRAJOPT_CMEEL_LIB"], os.environ.get("LD_LIBRARY_PATH", "")]))
    t0 = time.perf_counter()
    subprocess.run([sys.executable, str(Path(__file__).resolve()), "--graph", str(work)], env=env, check=True)
    info = json.loads((work / "graph.json").read_text())
    info["process_seconds"] = time.perf_counter() - t0
    return info, casadi.Function.deserialize((work / "aba.casadi").read_text())


# --------------------------------------------------------------------------- inner: the routes' dynamics
def cse_functions(aba, n):
    """``aba`` and its Jacobian ``jac_aba`` (CasADi's AD) as SX Functions with ``cse``, the Jacobian with
    the signature ``casadi.external`` looks for; -> (aba, jac_aba)."""
    import casadi

    q, v, tau, out = (casadi.SX.sym(s, n) for s in ("q", "v", "tau", "out_a"))
    a = aba(q, v, tau)
    fd = casadi.Function("aba", [q, v, tau], [a], ["q", "v", "tau"], ["a"], {"cse": True})
    jac = casadi.Function("jac_aba", [q, v, tau, out], [casadi.jacobian(a, x) for x in (q, v, tau)],
                          ["q", "v", "tau", "out_a"], ["jac_a_q", "jac_a_v", "jac_a_tau"], {"cse": True})
    return fd, jac


def cc_command():
    """The compiler and flags soagen's builds use (``$CC``, default ``cc``, with
    ``soagen.targets.c99.compile.COMPILE_ARGS``: -O3 -std=c99 -march=native -ffp-contract=fast),
    and ``-shared -fPIC`` for one library; CasADi's C has none of soagen's long units, whose extra
    gcc parameters therefore do not apply (:func:`soagen.targets.common.compiler.unit_args`)."""
    from soagen.targets.c99.compile import COMPILE_ARGS

    return [os.environ.get("CC", "cc"), *COMPILE_ARGS, "-shared", "-fPIC"]


def compiled(functions, work, stem="aba_codegen", link=()):
    """``functions`` in one C file ``stem``.c by ``casadi.CodeGenerator``, compiled by :func:`cc_command`
    (``link``: the libraries it calls), loaded by ``casadi.external`` (the first by name);
    -> (Function, seconds to generate, seconds to compile)."""
    import casadi

    t0 = time.perf_counter()
    gen = casadi.CodeGenerator(f"{stem}.c")
    for f in functions:
        gen.add(f)
    gen.generate(str(work) + os.sep)
    t1 = time.perf_counter()
    lib = work / f"{stem}.so"
    subprocess.run([*cc_command(), str(work / f"{stem}.c"), "-o", str(lib), *link, "-lm"], check=True)
    t2 = time.perf_counter()
    return casadi.external(functions[0].name(), str(lib)), t1 - t0, t2 - t1


def compiled_step(fd, n, work, link):
    """The RK4 step of the example in CasADi around ``fd`` and its Jacobian (CasADi's AD), with
    the signature ``casadi.external`` looks for, compiled by :func:`compiled` (``link``: ``fd``'s
    library); -> (Function, seconds to generate, seconds to compile)."""
    import casadi
    import trajopt_panda as example

    x, u, dt, out = (casadi.MX.sym(s, m) for s, m in (("x", 2 * n), ("tau", n), ("dt", 1), ("out_x_next", 2 * n)))
    x_next = example.rk4_of(fd, n)(x, u, dt)
    step = casadi.Function("aba_rk4_step", [x, u, dt], [x_next], ["x", "tau", "dt"], ["x_next"])
    jac = casadi.Function("jac_aba_rk4_step", [x, u, dt, out], [casadi.jacobian(x_next, a) for a in (x, u, dt)],
                          ["x", "tau", "dt", "out_x_next"], ["jac_x_next_x", "jac_x_next_tau", "jac_x_next_dt"])
    return compiled([step, jac], work, "aba_rk4_step", link)


def soagen_function(robot, name, cache, hessians=False):
    """soagen's ``name`` of ``robot`` (with ``hessians``, its exact second derivatives), built into the
    cache folder ``cache`` (empty the first time) and loaded again; -> (Function, seconds of the first
    call, seconds of the cached load)."""
    import soagen

    os.environ["SOAGEN_CACHE"] = str(cache)
    t0 = time.perf_counter()
    soagen.casadi.functions(robot, [name], hessians=hessians)
    t1 = time.perf_counter()
    f, = soagen.casadi.functions(robot, [name], hessians=hessians)
    return f, t1 - t0, time.perf_counter() - t1


# --------------------------------------------------------------------------- solving
def nlp(opti, hessian, expand=False, options=None):
    """IPOPT on ``opti``'s NLP through ``casadi.nlpsol`` (:data:`IPOPT` and ``options``); -> (solver,
    its arguments, seconds to build it)."""
    import casadi

    options = dict(IPOPT, **(options or {}), expand=expand, **{"ipopt.hessian_approximation": hessian})
    t0 = time.perf_counter()
    solver = casadi.nlpsol("trajopt", "ipopt", {"x": opti.x, "f": opti.f, "g": opti.g}, options)
    seconds = time.perf_counter() - t0
    args = {"x0": opti.value(opti.x, opti.initial()), "lbg": casadi.evalf(opti.lbg), "ubg": casadi.evalf(opti.ubg)}
    return solver, args, seconds


def solve(solver, args, before):
    """One solve; -> (record of the statistics and times, solution x).  ``before``: the solver's
    ``t_wall_*`` statistics after its previous solves (CasADi adds each solve's to them), updated."""
    import numpy as np

    t0 = time.perf_counter()
    sol = solver(**args)
    wall = time.perf_counter() - t0
    s = solver.stats()
    timers = {k: v for k, v in s.items() if k.startswith("t_wall_nlp")}
    spent = {k: v - before.get(k, 0.0) for k, v in timers.items()}
    before.update(timers)
    evals = spent["t_wall_nlp_g"] + spent["t_wall_nlp_jac_g"]
    hess = spent.get("t_wall_nlp_hess_l", 0.0)
    rec = {"status": s["return_status"], "success": bool(s["success"]), "iterations": int(s["iter_count"]),
           "wall": wall, "g_jac_g": evals, "hess_l": hess, "evaluations": evals + hess, "rest": wall - evals - hess,
           "objective": float(sol["f"])}
    return rec, np.array(sol["x"]).ravel()


def summary(records):
    """Medians and ranges of the repeats' records."""
    out = {"status": sorted({r["status"] for r in records}), "repeats": len(records)}
    for key in ("wall", "g_jac_g", "hess_l", "evaluations", "rest", "iterations", "objective"):
        values = [r[key] for r in records]
        out[key] = {"median": statistics.median(values), "min": min(values), "max": max(values)}
    out["ms_per_iteration"] = statistics.median(1e3 * r["wall"] / max(r["iterations"], 1) for r in records)
    out["g_jac_g_ms_per_iteration"] = statistics.median(1e3 * r["g_jac_g"] / max(r["iterations"], 1)
                                                         for r in records)
    return out


def interleaved(solvers, repeats, timers, load):
    """Each of ``solvers`` ({route: (solver, args)}) ``repeats`` times, routes interleaved;
    -> ({route: [records]}, {route: last solution}).  ``timers``: {route: the solver's ``t_wall_*``
    after its previous solves} (:func:`solve`), updated; ``load``: a list that gets the 1-minute load
    average before each round."""
    records, xs = {k: [] for k in solvers}, {}
    for r in range(repeats):
        load.append(os.getloadavg()[0])
        for route, (solver, args) in solvers.items():
            rec, xs[route] = solve(solver, args, timers[route])
            records[route].append(rec)
            print(f"  round {r + 1}: {route:16s} {rec['status']:26s} {rec['iterations']:4d} it  {rec['wall']:7.2f} s  "
                  f"g+jac_g {rec['g_jac_g']:6.2f} s  f {rec['objective']:.10g}", flush=True)
    return records, xs


def compare(xs, objective, reference):
    """The optimum of each route against ``reference``'s: {route: {objective_rel, x_max_abs, same}}."""
    import numpy as np

    out = {}
    for route, x in xs.items():
        rel = abs(objective[route] - objective[reference]) / abs(objective[reference])
        dx = float(np.abs(x - xs[reference]).max())
        out[route] = {"objective_rel": rel, "x_max_abs": dx, "same": within(rel, dx)}
    return out


def same(xs, objective, a, b):
    """Whether routes ``a`` and ``b`` reached the same optimum: objective within :data:`OBJECTIVE_RTOL`
    relative, states and torques within :data:`TRAJECTORY_ATOL` (max abs)."""
    import numpy as np

    return within(abs(objective[a] - objective[b]) / abs(objective[b]), float(np.abs(xs[a] - xs[b]).max()))


def within(objective_rel, x_max_abs):
    """Whether two solutions this far apart are one optimum: :data:`OBJECTIVE_RTOL`, :data:`TRAJECTORY_ATOL`."""
    return bool(objective_rel <= OBJECTIVE_RTOL and x_max_abs <= TRAJECTORY_ATOL)


def minima(xs, objective):
    """The optima the routes reached, numbered in the routes' order: {route: k}, two routes the same
    k where :func:`same` (against the first route of each optimum)."""
    first, out = [], {}
    for route in xs:
        k = next((i for i, r in enumerate(first) if same(xs, objective, route, r)), len(first))
        if k == len(first):
            first.append(route)
        out[route] = k
    return out


def solved(solvers, repeats, timers, load, reference):
    """:func:`interleaved` solves and their summary; -> ({routes: {route: summary}, optimum: against
    ``reference``'s, minima: :func:`minima`}, {route: last solution})."""
    records, xs = interleaved(solvers, repeats, timers, load)
    objective = {k: statistics.median(r["objective"] for r in v) for k, v in records.items()}
    return ({"routes": {k: summary(v) for k, v in records.items()}, "optimum": compare(xs, objective, reference),
             "minima": minima(xs, objective)}, xs)


# --------------------------------------------------------------------------- the problems
def panda(work, repeats, load):
    """The Panda's routes: set-up, solves from both starts, the optima compared; -> its JSON record.
    ``load``: a list that gets the load average before each round."""
    import trajopt_panda as example

    import soagen

    robot = soagen.robots.example("panda")
    n = robot.n
    step_soagen, cold, cached = soagen_function(robot, "rk4_step", work / "soagen-cache")
    fd_soagen, _, cached_fd = soagen_function(robot, "forward_dynamics", work / "soagen-cache")
    step_exact, cold_exact, cached_exact = soagen_function(robot, "rk4_step", work / "soagen-cache-exact", True)
    info, aba = kin_dyn_graph(work)
    t0 = time.perf_counter()
    fd_sx, jac_sx = cse_functions(aba, n)
    cse_seconds = time.perf_counter() - t0
    fd_c, gen_seconds, cc_seconds = compiled([fd_sx, jac_sx], work)
    step_c, step_gen, step_cc = compiled_step(fd_c, n, work, [str(work / "aba_codegen.so"), f"-Wl,-rpath,{work}"])
    steps = {"soagen": step_soagen, "soagen_exact": step_exact, "soagen_fd": example.rk4_of(fd_soagen, n),
             "casadi_vm": example.rk4_of(fd_sx, n), "casadi_compiled": example.rk4_of(fd_c, n),
             "casadi_compiled_step": step_c, "casadi_vm_exact": example.rk4_of(fd_sx, n)}
    kin_dyn = {"graph": info["seconds"], "cse": cse_seconds}
    compiled_aba = {**kin_dyn, "codegen": gen_seconds, "compile": cc_seconds}
    setup = {"soagen": {"build_cold": cold, "load_cached": cached},
             "soagen_exact": {"build_cold": cold_exact, "load_cached": cached_exact},
             "soagen_fd": {"build_cold": cold, "load_cached": cached_fd},
             "casadi_vm": dict(kin_dyn), "casadi_compiled": dict(compiled_aba),
             "casadi_compiled_step": {**compiled_aba, "step_codegen": step_gen, "step_compile": step_cc},
             "casadi_vm_exact": dict(kin_dyn)}
    solvers = {}
    for route, step in steps.items():
        opti, _, _ = example.problem(step, n)
        solver, args, seconds = nlp(opti, ROUTES[route][1], expand=route in ("casadi_vm", "casadi_vm_exact"),
                                    options=CONVERGED)
        setup[route]["nlpsol"] = seconds
        solvers[route] = (solver, args)
    print(f"panda: set-up {json.dumps(setup)}", flush=True)
    print(f"panda: {len(solvers)} routes x {repeats} solves, interleaved", flush=True)
    timers = {k: {} for k in solvers}
    guess, xs = solved(solvers, repeats, timers, load, "soagen")
    # the common start: every route again from soagen's limited-memory optimum (x only, no multipliers)
    warm_solvers = {k: (solver, dict(args, x0=xs["soagen"])) for k, (solver, args) in solvers.items()}
    print(f"panda: {len(solvers)} routes x {repeats} solves from soagen's limited-memory optimum", flush=True)
    warm, _ = solved(warm_solvers, repeats, timers, load, "soagen")
    for k, r in warm["routes"].items():
        r["hessian"] = ROUTES[k][1]
    return {"problem": f"examples/trajopt_panda.py: {example.INTERVALS} intervals of RK4 multiple shooting, "
                       f"{example.DURATION:g} s",
            "variables": int(opti.nx), "constraints": int(opti.ng),
            "sx_instructions": {"aba": fd_sx.n_instructions(), "jac_aba": jac_sx.n_instructions(),
                                "casadi_kin_dyn_aba": info["instructions"]},
            "graph_casadi": info["casadi"],
            "routes": {k: {"dynamics": ROUTES[k][0], "hessian": ROUTES[k][1], "setup": setup[k], **r}
                       for k, r in guess["routes"].items()},
            "optimum": guess["optimum"], "minima": guess["minima"],
            "warm": {"start": "soagen's limited-memory optimum from the example's guess (the variables x; "
                              "IPOPT's multipliers and barrier parameter start afresh)", **warm}}


def solo_problem(cd, nq, nv):
    """The solo12 standing problem on contact dynamics ``cd``; -> casadi.Opti."""
    import casadi
    import numpy as np

    dt = SOLO_DURATION / SOLO_INTERVALS
    q0 = np.r_[0.0, 0.0, SOLO_HEIGHT, 0.0, 0.0, 0.0, 1.0, SOLO_STAND]
    opti = casadi.Opti()
    Q, V, U = opti.variable(nq, SOLO_INTERVALS + 1), opti.variable(nv, SOLO_INTERVALS + 1), opti.variable(nv - 6,
                                                                                                         SOLO_INTERVALS)
    for k in range(SOLO_INTERVALS):
        qdd, f = cd(Q[:, k], V[:, k], casadi.vertcat(casadi.DM.zeros(6), U[:, k]))
        v1 = V[:, k] + dt * qdd
        opti.subject_to(V[:, k + 1] == v1)
        opti.subject_to(Q[:, k + 1] == euler_configuration(Q[:, k], v1, dt))
        opti.subject_to(f[2::3] <= 0)                      # the feet push down on the ground
    end = q0[:7].copy()
    end[2] += SOLO_RISE
    opti.subject_to(Q[:, 0] == q0)
    opti.subject_to(V[:, 0] == 0)
    opti.subject_to(Q[:7, -1] == end)
    opti.subject_to(V[:, -1] == 0)
    opti.minimize(casadi.sumsqr(U) * dt)
    for k in range(SOLO_INTERVALS + 1):
        opti.set_initial(Q[:, k], np.r_[q0[:2], SOLO_HEIGHT + SOLO_RISE * k / SOLO_INTERVALS, q0[3:]])
    return opti


def euler_configuration(q, v, dt):
    """q + dt q̇(q, v) for a floating base (position, quaternion x y z w; v = body ω, body linear
    velocity, joint rates) and 1-dof joints."""
    import casadi

    x, y, z, w = q[3], q[4], q[5], q[6]
    R = casadi.vertcat(casadi.horzcat(1 - 2 * (y * y + z * z), 2 * (x * y - z * w), 2 * (x * z + y * w)),
                       casadi.horzcat(2 * (x * y + z * w), 1 - 2 * (x * x + z * z), 2 * (y * z - x * w)),
                       casadi.horzcat(2 * (x * z - y * w), 2 * (y * z + x * w), 1 - 2 * (x * x + y * y)))
    omega, vec = v[0:3], q[3:6]
    dquat = 0.5 * casadi.vertcat(w * omega + casadi.cross(vec, omega), -casadi.dot(vec, omega))
    return casadi.vertcat(q[0:3] + dt * (R @ v[3:6]), q[3:7] + dt * dquat, q[7:] + dt * v[6:])


SOLO_ROUTES = {"soagen": ("soagen's C (contact_dynamics), external, analytical Jacobian", "limited-memory"),
               "soagen_exact": ("soagen's C (contact_dynamics built with hessians=True), external, analytical "
                                "Jacobian and contracted Hessian", "exact")}


def solo12(work, repeats, load):
    """solo12 standing on four point feet, soagen's routes (both Hessians); -> its JSON record."""
    import soagen

    robot = soagen.load_urdf(soagen.robots.path("solo12"), floating_base=True,
                             tips=[soagen.point_tip(f) for f in SOLO_FEET])
    solvers, setup = {}, {}
    for route, (_, hessian) in SOLO_ROUTES.items():
        exact = hessian == "exact"
        cd, cold, cached = soagen_function(robot, "contact_dynamics", work / f"soagen-cache-solo12-{route}", exact)
        opti = solo_problem(cd, robot.nq, robot.nv)
        solver, args, seconds = nlp(opti, hessian, options={**CONVERGED, **SOLO_IPOPT})
        solvers[route] = (solver, args)
        setup[route] = {"build_cold": cold, "load_cached": cached, "nlpsol": seconds}
    print(f"solo12: {len(solvers)} routes x {repeats} solves, interleaved", flush=True)
    rec, xs = solved(solvers, repeats, {k: {} for k in solvers}, load, "soagen")
    objective = {k: r["objective"]["median"] for k, r in rec["routes"].items()}
    return {"problem": f"Standing on four point feet: raise the base {SOLO_RISE * 100:g} cm in {SOLO_DURATION:g} s, "
                       f"rest to rest, minimum torque, {SOLO_INTERVALS} semi-implicit Euler steps",
            "variables": int(opti.nx), "constraints": int(opti.ng), "ipopt": SOLO_IPOPT,
            "routes": {k: {"dynamics": SOLO_ROUTES[k][0], "hessian": SOLO_ROUTES[k][1], "setup": setup[k], **r}
                       for k, r in rec["routes"].items()},
            "optimum": rec["optimum"], "minima": rec["minima"], "crossed": crossed(solvers, xs, objective),
            "symbolic": "not available: casadi_kin_dyn has no contact dynamics, and casadi_kin_dyn.py refuses "
                        f"a free-flyer (nq = {robot.nq} != nv = {robot.nv})"}


def crossed(solvers, xs, objective):
    """Each route solved once more, started at the other route's solution (the variables x; multipliers
    and barrier parameter afresh): whether an optimum the two did not share is another local minimum, or
    one flat minimum that IPOPT's stopping test (tol on the KKT error) leaves loosely determined.
    -> {route: {start, iterations, status, moved (max abs from the start), objective_rel (against the
    start's), stays (:func:`within`)}}."""
    import numpy as np

    out = {}
    for route, (solver, args) in solvers.items():
        start = next(k for k in solvers if k != route)
        rec, x = solve(solver, {**args, "x0": xs[start]}, {})
        moved = float(np.abs(x - xs[start]).max())
        rel = abs(rec["objective"] - objective[start]) / abs(objective[start])
        out[route] = {"start": start, "iterations": rec["iterations"], "status": rec["status"], "moved": moved,
                      "objective_rel": rel, "stays": within(rel, moved)}
    return out


def crossed_lines(rep):
    """The page's lines of :func:`crossed`."""
    return "\n".join(
        f"- {route}, started at {c['start']}'s solution: {c['iterations']} iterations, {c['status']}, moved "
        f"{c['moved']:.1e} max abs, objective {c['objective_rel']:.1e} relative to {c['start']}'s: "
        + ("stays at that optimum" if c["stays"] else "leaves it") for route, c in rep["crossed"].items())


def inner(args):
    """The benchmark inside the venv: both problems, docs/trajopt.json and docs/trajopt.md."""
    sys.path.insert(0, args.solver_casadi)
    sys.path.insert(0, str(ROOT / "examples"))
    import casadi

    if not casadi.has_nlpsol("ipopt"):
        raise SystemExit(f"the CasADi at {casadi.__file__} has no IPOPT")
    repeats = 1 if args.quick else REPEATS
    load = []
    with tempfile.TemporaryDirectory(prefix="soagen-trajopt-") as tmp:
        work = Path(tmp)
        data = {"command": COMMAND, "casadi": casadi.__version__, "ipopt": ipopt_version(casadi),
                "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores",
                "cc": cc_command(), "repeats": repeats, "panda": panda(work, repeats, load)}
        print(f"panda: {json.dumps(data['panda'])}", flush=True)     # in the log, should solo12's fail
        data["solo12"] = solo12(work, repeats, load)
    data["load"] = {"min": min(load), "max": max(load)}
    data["goal"] = goal(data["panda"])
    data["wall_goal"] = wall_goal(data["panda"])
    if args.quick:
        print(render(data))
        return 0
    DATA.write_text(json.dumps(data, indent=1) + "\n")
    DOC.write_text(render(data))
    print(render(data))
    return 0


def ipopt_version(casadi):
    """IPOPT's version, from the library beside the CasADi in use."""
    libs = sorted(Path(casadi.__file__).parent.glob("libipopt.so.*.*.*"))
    return libs[0].name.removeprefix("libipopt.so.") if libs else "unknown"


#: each soagen route and the symbolic route that evaluates the step the same way
COUNTERPARTS = {"soagen": "casadi_compiled_step", "soagen_fd": "casadi_compiled"}


def goal(rep):
    """The example's route (``soagen``): its constraint-and-Jacobian time against the fastest
    symbolic route's (median seconds per solve and per iteration), and each soagen route against
    its counterpart (:data:`COUNTERPARTS`)."""
    routes = rep["routes"]

    def ratio(a, b, key="g_jac_g"):
        return routes[a][key]["median"] / routes[b][key]["median"]

    fastest = min((k for k in routes if k not in SOAGEN_ROUTES), key=lambda k: routes[k]["g_jac_g"]["median"])
    setup = routes["soagen"]["setup"]["build_cold"]
    casadi_build = sum(routes[fastest]["setup"].get(k, 0.0) for k in ("codegen", "compile", "step_codegen",
                                                                       "step_compile"))
    return {"fastest_symbolic": fastest, "target": 0.3, "ratio": ratio("soagen", fastest),
            "ratio_per_iteration": (routes["soagen"]["g_jac_g_ms_per_iteration"]
                                    / routes[fastest]["g_jac_g_ms_per_iteration"]),
            "counterparts": {a: {"route": b, "ratio": ratio(a, b)} for a, b in COUNTERPARTS.items()},
            "setup": {"soagen_build": setup, "casadi_codegen_and_compile": casadi_build}}


def wall_goal(rep):
    """The issue's goal on the Panda, from each start (the example's guess, ``rep``'s routes, and the
    common start, ``rep["warm"]``'s): soagen's fastest route against the fastest CasADi route, under
    any Hessian, by median IPOPT wall time, and whether the two reached the same optimum (the goal is
    met where the ratio is at most :data:`WALL_TARGET` and they did)."""
    out = {"target": WALL_TARGET}
    for start, r in (("guess", rep), ("warm", rep["warm"])):
        routes = r["routes"]

        def wall(k):
            return routes[k]["wall"]["median"]

        s = min(SOAGEN_ROUTES, key=wall)
        casadi = [k for k in routes if k not in SOAGEN_ROUTES]
        c = min(casadi, key=wall)
        ratio, at_same = wall(s) / wall(c), r["minima"][s] == r["minima"][c]
        out[start] = {"soagen": s, "casadi": c, "ratio": ratio, "same_optimum": at_same,
                      "met": ratio <= WALL_TARGET and at_same}
        there = [k for k in casadi if r["minima"][k] == r["minima"][s]]     # CasADi's routes at s's optimum
        if not at_same and there:
            c = min(there, key=wall)
            out[start]["at_soagens_optimum"] = {"casadi": c, "ratio": wall(s) / wall(c)}
    return out


# --------------------------------------------------------------------------- the page
def _s(stat, digits=2):
    """A median with its range over the repeats."""
    if stat["min"] == stat["max"]:
        return f"{stat['median']:.{digits}f}"
    return f"{stat['median']:.{digits}f} ({stat['min']:.{digits}f}–{stat['max']:.{digits}f})"


def _setup(setup):
    """One route's set-up times as text."""
    names = {"build_cold": "build, empty cache", "load_cached": "cached load", "graph": "casadi_kin_dyn graph",
             "cse": "cse Functions", "codegen": "code generation", "compile": "gcc",
             "step_codegen": "step code generation", "step_compile": "step gcc", "nlpsol": "nlpsol"}
    return ", ".join(f"{names[k]} {v:.2f}" for k, v in setup.items())


def route_table(rep):
    """The solve table of one problem from one start (``rep``: its routes and minima); the optimum
    column names each optimum by a letter, A the first route's."""
    head = ("| route | Hessian | iterations | IPOPT wall (s) | evaluations (s) | of which the Hessian (s) "
            "| rest (s) | ms / iteration | objective | optimum | status |")
    lines = [head, "|---|---|---|---|---|---|---|---|---|---|---|"]
    for name, r in rep["routes"].items():
        hess = _s(r["hess_l"]) if r["hessian"] == "exact" else "–"
        lines.append(f"| {name} | {r['hessian']} | {_s(r['iterations'], 0)} | {_s(r['wall'])} | "
                     f"{_s(r['evaluations'])} | {hess} | {_s(r['rest'])} | {r['ms_per_iteration']:.1f} | "
                     f"{r['objective']['median']:.8g} | {'ABCDEFGH'[rep['minima'][name]]} | "
                     f"{', '.join(r['status'])} |")
    return "\n".join(lines)


def setup_table(rep):
    """The set-up table of one problem."""
    lines = ["| route | evaluates the dynamics | set-up (s) |", "|---|---|---|"]
    lines += [f"| {name} | {r['dynamics']} | {_setup(r['setup'])} |" for name, r in rep["routes"].items()]
    return "\n".join(lines)


def optimum_lines(rep):
    """Each route's optimum against the soagen route's; where one of the two stopped at IPOPT's acceptable
    level, the line says which."""
    out = []
    for name, c in rep["optimum"].items():
        if name == "soagen":
            continue
        verdict = "the same optimum" if c["same"] else "not the same optimum"
        short = [k for k in ("soagen", name) if "Solved_To_Acceptable_Level" in rep["routes"][k]["status"]]
        stopped = f"; {' and '.join(short)} stopped at IPOPT's acceptable level" if short else ""
        out.append(f"- {name}: {verdict} (objective {c['objective_rel']:.1e} relative, states and torques "
                   f"{c['x_max_abs']:.1e} max abs{stopped})")
    return "\n".join(out)


def headline(data):
    """The lines the guide quotes."""
    g, routes = data["goal"], data["panda"]["routes"]
    s, f = routes["soagen"], routes[g["fastest_symbolic"]]
    return (f"Panda, `{data['command']}`, CasADi {data['casadi']}, IPOPT {data['ipopt']}, medians of "
            f"{data['repeats']} solves: with soagen, constraints and their Jacobian take "
            f"{s['g_jac_g']['median']:.2f} s of a {s['wall']['median']:.2f} s solve ({s['iterations']['median']:.0f} "
            f"iterations); with CasADi's own dynamics, fastest as {g['fastest_symbolic']}, "
            f"{f['g_jac_g']['median']:.2f} s of {f['wall']['median']:.2f} s ({f['iterations']['median']:.0f} "
            f"iterations): {g['ratio']:.2f}x per solve, {g['ratio_per_iteration']:.2f}x per iteration. "
            f"The rest of soagen's solve, IPOPT's own work, is {s['rest']['median']:.2f} s "
            f"({100 * s['rest']['median'] / s['wall']['median']:.0f} %). soagen's set-up (its build from an empty "
            f"cache) {g['setup']['soagen_build']:.1f} s, "
            f"{g['fastest_symbolic']}'s code generation and compilation "
            f"{g['setup']['casadi_codegen_and_compile']:.1f} s.")


def counterpart_lines(data):
    """Each soagen route's constraint-and-Jacobian time against the symbolic route that evaluates the
    step the same way."""
    g, routes = data["goal"], data["panda"]["routes"]
    return "\n".join(f"- {a} against {c['route']}: {routes[a]['g_jac_g']['median']:.2f} s against "
                     f"{routes[c['route']]['g_jac_g']['median']:.2f} s, {c['ratio']:.2f}x"
                     for a, c in g["counterparts"].items())


def exact_pays(data):
    """When soagen's exact Hessian pays, in numbers (the guide quotes it): the Panda from the example's
    guess and from the common start, solo12."""
    p, w, s = data["panda"]["routes"], data["panda"]["warm"]["routes"], data["solo12"]["routes"]

    def pair(routes):
        e, lm = routes["soagen_exact"], routes["soagen"]
        short = ", stopped at IPOPT's acceptable level" if "Solved_To_Acceptable_Level" in lm["status"] else ""
        return (f"{e['iterations']['median']:.0f} iterations and {e['wall']['median']:.2f} s with the exact "
                f"Hessian (of which its evaluations {e['hess_l']['median']:.2f} s) against "
                f"{lm['iterations']['median']:.0f} and {lm['wall']['median']:.2f} s limited-memory{short}")

    return (f"`{data['command']}`, medians of {data['repeats']} solves: the Panda's trajectory (RK4 multiple "
            f"shooting, rk4_step) takes {pair(p)} from the example's guess, and {pair(w)} from soagen's "
            f"limited-memory optimum; solo12 on four point feet (contact_dynamics) {pair(s)}.")


def exact_lines(data):
    """soagen's exact Hessian against its limited-memory solve and CasADi's exact Hessian."""
    e, c = data["panda"]["routes"]["soagen_exact"], data["panda"]["routes"]["casadi_vm_exact"]
    return (f"{exact_pays(data)} CasADi's symbolic exact Hessian (casadi_vm_exact) from the example's guess: "
            f"{c['iterations']['median']:.0f} iterations, {c['wall']['median']:.2f} s, of which the Hessian "
            f"{c['hess_l']['median']:.2f} s (soagen's: {e['hess_l']['median']:.2f} s).")


def wall_goal_lines(data):
    """The issue's goal from each start, computed from the record (:func:`wall_goal`)."""
    g, p = data["wall_goal"], data["panda"]
    out = []
    for start, what, rep in (("guess", "from the example's guess", p), ("warm", "from the common start", p["warm"])):
        r = g[start]
        ws, wc = rep["routes"][r["soagen"]]["wall"]["median"], rep["routes"][r["casadi"]]["wall"]["median"]
        where = "the same optimum" if r["same_optimum"] else "different local optima"
        line = (f"- {what}: soagen's fastest, {r['soagen']}, {ws:.2f} s; CasADi's fastest, {r['casadi']}, "
                f"{wc:.2f} s: {r['ratio']:.2f}x, at {where}: {'met' if r['met'] else 'not met'}")
        if "at_soagens_optimum" in r:
            o = r["at_soagens_optimum"]
            line += (f" (CasADi's fastest at {r['soagen']}'s optimum, {o['casadi']}, "
                     f"{rep['routes'][o['casadi']]['wall']['median']:.2f} s: {o['ratio']:.2f}x)")
        out.append(line)
    return "\n".join(out)


def solo_options(rep):
    """solo12's IPOPT options besides the Panda's, as a sentence (none in a record from before them)."""
    if "ipopt" not in rep:
        return ""
    return (" IPOPT's options as the Panda's, and " + ", ".join(f"`{k.removeprefix('ipopt.')}` {v}"
                                                               for k, v in rep["ipopt"].items())
            + " (with IPOPT's default 6 the limited-memory Hessian stops at the acceptable level).")


def render(data):
    """docs/trajopt.md from the JSON record."""
    p, s = data["panda"], data["solo12"]
    g = data["goal"]
    met = ", ".join(f"{'met' if r <= g['target'] else 'not met'} per {what} ({r:.2f}x)"
                    for what, r in (("solve", g["ratio"]), ("iteration", g["ratio_per_iteration"])))
    load = data["load"]
    return f"""# Trajectory optimization: soagen's dynamics against CasADi's symbolic dynamics

`{data['command']}` ({data['machine']}; CasADi {data['casadi']}, IPOPT {data['ipopt']} with MUMPS, the same
for every route; CasADi's generated C compiled as soagen's, `{' '.join(data['cc'])}`). The machine was
shared with other jobs: its 1-minute load average, read before each round of solves, was between
{load['min']:.1f} and {load['max']:.1f}. Times in seconds: medians of {data['repeats']} solves per route,
the routes interleaved, the range over the solves in brackets. "evaluations" is CasADi's
`t_wall_nlp_g + t_wall_nlp_jac_g + t_wall_nlp_hess_l`, the time spent evaluating the constraints,
their Jacobian and, with the exact Hessian, the Lagrangian's Hessian (its own column); "rest" is the
rest of IPOPT's wall time (its own linear algebra and MUMPS, the objective). Every solve is asked to
converge to `tol` 1e-8, the stop at IPOPT's "acceptable" level switched off (`acceptable_iter` 0);
"status" is IPOPT's return status in the repeats (`Solved_To_Acceptable_Level` there: IPOPT still
ends at an acceptable point where its line search can make no further progress); "optimum" names the
local optimum a route reached (the same letter: objective within 1e-6 relative, states and torques
within 1e-4).
What is measured and what differs between the routes: the docstring of `benchmarks/trajopt.py`.

## Panda

{p['problem']}; {p['variables']} variables, {p['constraints']} constraints. CasADi's `aba` from
casadi_kin_dyn (CasADi {p['graph_casadi']}): {p['sx_instructions']['aba']} SX instructions with `cse`,
its Jacobian {p['sx_instructions']['jac_aba']}.

From the example's initial guess (the straight line in q, at rest):

{route_table(p)}

From a common start, {p['warm']['start']}:

{route_table(p['warm'])}

The goal, soagen's whole IPOPT wall time at most {data['wall_goal']['target']}x the fastest CasADi
route's under any Hessian, at the same optimum:

{wall_goal_lines(data)}

{exact_lines(data)}

{headline(data)}
At most {g['target']}x of the fastest symbolic route's constraint-and-Jacobian time: {met}.

Each soagen route against the symbolic route that writes the step the same way (g + jac_g, medians,
from the example's guess):

{counterpart_lines(data)}

Optimum, against the soagen route's, from the example's guess:

{optimum_lines(p)}

From the common start:

{optimum_lines(p['warm'])}

Set-up:

{setup_table(p)}

## solo12

{s['problem']}; {s['variables']} variables, {s['constraints']} constraints. The symbolic route is
{s['symbolic']}.{solo_options(s)}

{route_table(s)}

Optimum, against the soagen route's:

{optimum_lines(s)}

Each route started at the other's solution (one solve each, not timed):

{crossed_lines(s)}

Set-up:

{setup_table(s)}
"""


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render", action="store_true", help="docs/trajopt.md again from docs/trajopt.json")
    parser.add_argument("--quick", action="store_true", help="one solve per route, print only")
    parser.add_argument("--venv", default=str(HERE / ".work" / "casadi-venv"), help="casadi_kin_dyn.py's venv")
    parser.add_argument("--python", default=os.environ.get("SOAGEN_CASADI_PYTHON", sys.executable),
                        help="interpreter that creates the venv")
    parser.add_argument("--inner", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--solver-casadi", help=argparse.SUPPRESS)
    parser.add_argument("--graph", help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.render:
        DOC.write_text(render(json.loads(DATA.read_text())))
        return 0
    if args.graph:
        graph(args.graph)
        return 0
    return inner(args) if args.inner else outer(args)


if __name__ == "__main__":
    sys.exit(main())
