"""Operation counts of SymPyBotics and OpenSYMORO, run from their sources and counted by soagen's rule.

    git clone https://github.com/cdsousa/SymPyBotics /tmp/SymPyBotics          # commit 5d4613a
    git clone https://github.com/xu-yang16/symoro-python3 /tmp/symoro          # commit bb86bca
    python benchmarks/peer_opcounts.py --sympybotics /tmp/SymPyBotics --symoro /tmp/symoro

(or SOAGEN_SYMPYBOTICS / SOAGEN_SYMORO in the environment) writes docs/peer_opcounts.json and
docs/peer_opcounts.md: every tool on the PUMA 560, the RX-90 and a general 6-dof arm, the peers' own
sample robots, and the inverse dynamics of general arms of n = 2 … 16 joints (SymPyBotics took over a
quarter of an hour at n = 24).  CasADi-on-Pinocchio (numeric parameters) is counted on the same robots by
``benchmarks/casadi_opcounts.py``'s counter (``benchmarks/casadi_kin_dyn.py`` builds its venv once).  OpenSYMORO
(github.com/symoro/symoro) is Python 2; the symoro-python3 fork runs it on Python 3 with its
algorithms unchanged.  Each tool runs in a child process with
PYTHONHASHSEED=0 on soagen's sympy; nothing is vendored and nothing is fetched.

Every output of a tool is counted with ``soagen.program.statements.count_ops`` over the tool's own
sympy statements (its common subexpressions as it names them; statements no output needs
dropped), the counter of soagen's programs (docs/guide/opcounts.md).  SymPyBotics' printed C is
counted too, with ``soagen.reports.opcount.count_c``, and must agree.  ``sign(x)`` (OpenSYMORO's
Coulomb friction) is counted apart, as ``sign``.
"""
from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
HASH_SEED = "0"
FUNCTIONS = ("inverse_dynamics", "mass_matrix", "gravity", "bias_forces")


# ------------------------------------------------------------------ counting (in the child)
def _count(statements, outputs):
    """soagen's counts of the statements ``[(symbol, expr)]`` that ``outputs`` (exprs) need."""
    import sympy as sp

    from soagen.program.statements import OP_KINDS, count_ops

    defined = dict(statements)
    needed, stack = set(), [s for e in outputs for s in sp.sympify(e).free_symbols]
    while stack:                                     # dead code out: what the outputs reach
        s = stack.pop()
        if s in defined and s not in needed:
            needed.add(s)
            stack.extend(sp.sympify(defined[s]).free_symbols)
    counts = dict.fromkeys((*OP_KINDS, "sign"), 0)
    kept = [e for s, e in statements if s in needed] + [e for e in outputs if not sp.sympify(e).is_Atom]
    for e in kept:
        e = sp.sympify(e)
        counts["sign"] += sum(1 for _ in sp.preorder_traversal(e) if isinstance(_, sp.sign))
        count_ops(e.replace(sp.sign, lambda x: sp.Symbol(f"sign_{x}")), counts)
    counts["statements"] = len(kept)
    return counts


def _alpha(row):
    import sympy as sp

    return sp.pi * sp.Rational(row["pi_half"], 2) if row["pi_half"] is not None else sp.Float(row["alpha"])


def _num(x):
    import sympy as sp

    return sp.Integer(0) if x == 0 else sp.Float(x)


def _scaling_only(robot):
    """``generalN`` other than the general arm itself: a size of the scaling rows, inverse dynamics only."""
    return robot.startswith("general") and robot != "general6"


# ------------------------------------------------------------------ SymPyBotics (in the child)
def _sympybotics_code(rbtdef, which):
    """(statements, outputs) of SymPyBotics' ``which`` code, made as ``RobotDynCode`` makes it."""
    import sympybotics
    from sympybotics.dynamics.dynamics import Dynamics
    from sympybotics.symcode import Subexprs

    geo = sympybotics.geometry.Geometry(rbtdef)
    dyn = Dynamics(rbtdef, geo)
    out = {}
    for name, gen, attr in which:
        se = Subexprs()
        getattr(dyn, gen)(se.collect)
        out[name] = se.get(getattr(dyn, attr))
    return out


def _sympybotics(robot, rows):
    import sympy as sp
    import sympybotics

    from soagen.reports.opcount import count_c

    q = sympybotics.robotdef.q
    if robot == "sympybotics_puma":      # its own PUMA 560 (sympybotics/tests/test_results.py), standard DH
        pi = sp.pi
        table = [(pi / 2, 0, 0, q), (0, 0.4318, 0, q), ('-pi/2', '0.0203', '0.15005', 'q'),
                 (pi / 2, 0, 0.4318, q), (-pi / 2, 0, 0, q), (0, 0, 0, q)]
        rbtdef = sympybotics.RobotDef("Puma 560 Robot", table, dh_convention="standard")
    else:
        table = [(_alpha(r), _num(r["a"]), _num(r["d"]), q) for r in rows]
        rbtdef = sympybotics.RobotDef(robot, table, dh_convention="modified")
    rbtdef.frictionmodel = None
    rbtdef.gravityacc = sp.Matrix([0.0, 0.0, -9.81])
    which = [("inverse_dynamics", "gen_invdyn", "invdyn"), ("mass_matrix", "gen_inertiamatrix", "M"),
             ("gravity", "gen_gravityterm", "g")][:1 if _scaling_only(robot) else 3]   # no c + g of its own
    codes = _sympybotics_code(rbtdef, which)
    out = {}
    for name, code in codes.items():
        counts = _count(code[0], list(code[1]))
        c_text = sympybotics.robotcodegen.robot_code_to_func("C", code, "out", name, rbtdef)
        in_c = count_c("\n".join(line.split("//")[0] for line in c_text.splitlines()))[name]   # its // banners
        assert all(in_c[k] == counts[k] for k in ("mul", "add", "div", "sqrt")), (name, in_c, counts)
        out[name] = counts
    return out


# ------------------------------------------------------------------ OpenSYMORO (in the child)
def _symoro_robot(robot, rows, actuators=False):
    from sympy import Matrix, var, zeros
    from pysymoro.robot import Robot
    from symoroutils import tools

    n = len(rows)
    robo = Robot(robot, n, n, n, False)
    robo.sigma = [2] + [0] * n
    robo.mu = [0] + [1] * n
    robo.gamma = [0] * (n + 1)
    robo.b = [0] * (n + 1)
    robo.alpha = [0] + [_alpha(r) for r in rows]
    robo.d = [0] + [_num(r["a"]) for r in rows]
    robo.r = [0] + [_num(r["d"]) for r in rows]
    robo.theta = [0] + list(var(f"th1:{n + 1}"))
    robo.structure = tools.SIMPLE
    robo.w0, robo.wdot0, robo.v0, robo.vdot0 = (zeros(3, 1) for _ in range(4))
    num = range(n + 1)
    robo.qdot = [var(f"QP{i}") for i in num]
    robo.qddot = [var(f"QDP{i}") for i in num]
    robo.Nex = [zeros(3, 1) for _ in num]
    robo.Fex = [zeros(3, 1) for _ in num]
    robo.FS = [var(f"FS{i}") if actuators and i else 0 for i in num]
    robo.IA = [var(f"IA{i}") if actuators and i else 0 for i in num]
    robo.FV = [var(f"FV{i}") if actuators and i else 0 for i in num]
    robo.MS = [Matrix(var(f"MX{i}, MY{i}, MZ{i}")) for i in num]
    robo.M = [var(f"M{i}") for i in num]
    robo.GAM = [var(f"GAM{i}") for i in num]
    robo.J = [Matrix(3, 3, var(f"XX{i}, XY{i}, XZ{i}, XY{i}, YY{i}, YZ{i}, XZ{i}, YZ{i}, ZZ{i}")) for i in num]
    robo.G = Matrix([0, 0, -9.81])
    return robo


def _symoro_counts(symo, outputs):
    """Counts of the statements OpenSYMORO wrote that ``outputs`` (names) need, and of all it wrote."""
    statements = [(s, symo.sydi[s]) for s in symo.order_list]
    names = {str(s): s for s, _ in statements}
    return (_count(statements, [names[o] for o in outputs]),
            _count(statements, [s for s, _ in statements]))


def _symoro(robot, rows):
    from symoroutils import samplerobots, symbolmgr

    symbolmgr.SymbolManager.file_open = lambda self, robo, ext: setattr(self, "file_out", None)   # no files
    torques = [f"GAM{j}" for j in range(1, len(rows or range(6)) + 1)]
    if robot == "symoro_rx90":            # its own sample RX-90, as shipped
        needed, everything = _symoro_counts(samplerobots.rx90().compute_idym(), torques)
        return {"inverse_dynamics": needed, "inverse_dynamics, all statements": everything}
    out = {}
    robo = _symoro_robot(robot, rows)
    out["inverse_dynamics"] = _symoro_counts(robo.compute_idym(), torques)[0]
    if _scaling_only(robot):
        return out
    out["bias_forces"] = _symoro_counts(robo.compute_pseudotorques(), torques)[0]
    entries = [f"A{i}{j}" for i in range(1, len(rows) + 1) for j in range(1, len(rows) + 1)]
    symo = robo.compute_inertiamatrix()
    out["mass_matrix"] = _symoro_counts(symo, [e for e in entries if e in {str(s) for s in symo.sydi}])[0]
    actuated = _symoro_robot(robot, rows, actuators=True)
    out["inverse_dynamics, actuators"] = _symoro_counts(actuated.compute_idym(), torques)[0]
    return out


def worker(tool, source, robot):
    sys.path.insert(0, source)
    from soagen.reports import peers

    rows = None if robot in ("sympybotics_puma", "symoro_rx90") else peers.dh_rows(robot)
    result = (_sympybotics if tool == "SymPyBotics" else _symoro)(robot, rows)
    print(json.dumps(result, sort_keys=True))


# ------------------------------------------------------------------ CasADi-on-Pinocchio (numeric parameters)
#: soagen's functions and the CasADi functions of benchmarks/casadi_kin_dyn.py that compute them
CASADI_FUNCTIONS = (("inverse_dynamics", "rnea"), ("mass_matrix", "crba"), ("gravity", "gravity"),
                    ("bias_forces", "bias"))


def _casadi(robot, functions=FUNCTIONS):
    """CasADi-on-Pinocchio's counts of ``robot`` for soagen's ``functions`` (every parameter numeric) and
    the versions it ran with, counted as ``benchmarks/casadi_opcounts.py`` counts the PUMA."""
    sys.path.insert(0, str(ROOT / "benchmarks"))
    from casadi_opcounts import casadi_counts, tool_text

    names = dict(CASADI_FUNCTIONS)
    counts, _, manifest = casadi_counts(robot, tuple(names[f] for f in functions))
    return {f: {**counts[names[f]], "sign": 0} for f in functions}, tool_text(manifest)


# ------------------------------------------------------------------ the parent
def _run(tool, source, robot):
    env = {**os.environ, "PYTHONHASHSEED": HASH_SEED}
    res = subprocess.run([sys.executable, __file__, "--worker", tool, source, robot], capture_output=True,
                         text=True, env=env)
    if res.returncode:
        raise SystemExit(f"{tool} on {robot} failed:\n{res.stderr[-3000:]}")
    return json.loads(res.stdout.strip().splitlines()[-1])


def _commit(source):
    return subprocess.run(["git", "-C", source, "rev-parse", "HEAD"], capture_output=True, text=True,
                          check=True).stdout.strip()


def _soagen(robot):
    """soagen's counts of ``robot`` with the inertial parameters as inputs and baked."""
    from soagen.codegen import make_program
    from soagen.options import Options

    out = {}
    for mode, label in (("inputs", "soagen, π input"), ("baked", "soagen, baked")):
        options = Options(functions=FUNCTIONS, parameters=mode)
        out[label] = {f: {**make_program(robot, f, options).ops, "sign": 0} for f in FUNCTIONS}
    return out


TOOLS = {
    "SymPyBotics": dict(repository="https://github.com/cdsousa/SymPyBotics",
                        setting="its `RobotDynCode` path (`Subexprs` collection, its CSE, always on; only "
                                "subexpressions an output uses are printed), the 10 barycentric parameters "
                                "of every link symbolic, geometry numeric, friction off"),
    "OpenSYMORO": dict(repository="https://github.com/xu-yang16/symoro-python3 (Python 3 fork of "
                                  "https://github.com/symoro/symoro)",
                       setting="its Newton–Euler inverse dynamic model, composite-link inertia matrix and "
                               "pseudo-torques (bias), as the GUI writes them; its own symbol replacement (its "
                               "CSE); statements no output needs dropped; the 10 inertial parameters of every "
                               "link symbolic, geometry and gravity numeric, no friction, rotor inertia or "
                               "external wrench"),
}
CASADI = dict(repository="PyPI: cmeel-casadi-kin-dyn (`benchmarks/casadi_kin_dyn.py` builds its venv)",
              setting="every parameter numeric (the robot's URDF as `soagen.urdf.to_urdf` writes it); rnea, crba "
                      "(full M), gravity = rnea(q, 0, 0) and bias = rnea(q, v, 0) from rnea's SX graph, each "
                      "rebuilt with CasADi's common-subexpression elimination (`cse`) before code generation; "
                      "counted in its C text with `soagen.reports.opcount.count_line`, equal to CasADi's own "
                      "instruction list. Its column sits beside soagen's baked build")
ROBOT_TEXT = {
    "puma560": "the PUMA 560 of soagen (`soagen.robots.example('puma560')`, Armstrong–Khatib–Burdick, "
               "modified DH), the same DH rows for every tool",
    "general6": "a general 6-dof arm, `soagen.reports.peers.general_arm()`: seeded modified DH with every α, a "
                "and d non-zero and, for the baked build, every inertial parameter non-zero",
    "rx90": "the Stäubli RX-90 of OpenSYMORO's sample (`soagen.robots.rx90()`: D3 = 0.45, RL4 = 0.42 "
            "numeric)",
}


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--sympybotics", default=os.environ.get("SOAGEN_SYMPYBOTICS"),
                    help="a git checkout of github.com/cdsousa/SymPyBotics")
    ap.add_argument("--symoro", default=os.environ.get("SOAGEN_SYMORO"),
                    help="a git checkout of github.com/xu-yang16/symoro-python3")
    ap.add_argument("--json", default=str(ROOT / "docs" / "peer_opcounts.json"))
    ap.add_argument("--markdown", default=str(ROOT / "docs" / "peer_opcounts.md"))
    ap.add_argument("--worker", nargs=3, help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        return worker(*args.worker)
    if not (args.sympybotics and args.symoro):
        ap.error("give --sympybotics and --symoro (see the module docstring for the repositories)")
    import sympy

    from soagen.codegen import make_program
    from soagen.model import robots
    from soagen.options import Options
    from soagen.reports import peers

    sources = {"SymPyBotics": args.sympybotics, "OpenSYMORO": args.symoro}
    make = {"puma560": lambda: robots.example("puma560"), "general6": peers.general_arm, "rx90": robots.rx90}
    counts = {}
    for robot in peers.ROBOTS:
        print(f"{robot} ...", file=sys.stderr)
        counts[robot] = {**_soagen(make[robot]()),
                         **{tool: _run(tool, src, robot) for tool, src in sources.items()}}
        counts[robot][peers.CASADI], casadi_version = _casadi(make[robot]())
    scaling = {tool: {} for tool in peers.SCALING_TOOLS}
    for n in peers.SCALING_SIZES:                    # inverse dynamics of the general arms against n
        print(f"general{n} ...", file=sys.stderr)
        arm = peers.general_arm(n=n)
        for mode, label in (("inputs", "soagen, π input"), ("baked", "soagen, baked")):
            program = make_program(arm, "inverse_dynamics", Options(functions=("inverse_dynamics",), parameters=mode))
            scaling[label][str(n)] = {**program.ops, "sign": 0}
        for tool, src in sources.items():
            scaling[tool][str(n)] = _run(tool, src, f"general{n}")["inverse_dynamics"]
        scaling[peers.CASADI][str(n)] = _casadi(arm, ("inverse_dynamics",))[0]["inverse_dynamics"]
    samples = [
        dict(tool="SymPyBotics", robot="its PUMA 560 (standard DH, sympybotics/tests/test_results.py)",
             quantity=q, counts=c)
        for q, c in _run("SymPyBotics", args.sympybotics, "sympybotics_puma").items()] + [
        dict(tool="OpenSYMORO", robot="its sample RX-90 (symoroutils/samplerobots.py: symbolic D3, RL4, G3, "
             "friction, rotor inertia, end-effector wrench)", quantity=q, counts=c)
        for q, c in sorted(_run("OpenSYMORO", args.symoro, "symoro_rx90").items())]
    data = {"command": "python benchmarks/peer_opcounts.py --sympybotics DIR --symoro DIR",
            "counter": "`soagen.program.statements.count_ops` over every statement a tool keeps (its "
                       "sympy expressions; statements no output needs dropped), the counter of soagen's "
                       "programs (docs/guide/opcounts.md); SymPyBotics' printed C re-counted with "
                       "`soagen.reports.opcount.count_c` agrees; `sign()` counted apart. CasADi-on-Pinocchio's "
                       "generated C counted with `soagen.reports.opcount.count_line`, equal to CasADi's own "
                       "instruction list.",
            "python": platform.python_version(), "sympy": sympy.__version__, "hash_seed": int(HASH_SEED),
            "tools": {**{t: {**TOOLS[t], "commit": _commit(src)} for t, src in sources.items()},
                      peers.CASADI: {**CASADI, "version": casadi_version}},
            "robots": ROBOT_TEXT, "counts": counts, "samples": samples, "scaling": scaling}
    data["quoted"] = peers.quoted_against(data)
    Path(args.json).write_text(json.dumps(data, indent=1, sort_keys=True, ensure_ascii=False) + "\n")
    Path(args.markdown).write_text(peers.markdown(data))
    return 0


if __name__ == "__main__":
    sys.exit(main())
