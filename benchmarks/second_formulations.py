#!/usr/bin/env python3
"""Operation counts of the formulations compared for the second derivatives (issue #57 item 1), and
docs/second_formulations.md.

    python benchmarks/second_formulations.py            # record every candidate, write the json and the page
    python benchmarks/second_formulations.py --render   # the page from docs/second_formulations.json

Each candidate is a maker recorded and finished as ``soagen.build`` does (CSE, dead code removed) and
counted by soagen's rule (mul + add + div + sqrt; ``soagen.reports.opcount``), on the Panda (7 joints) and
solo12 (a free-flyer and 12 joints, four point feet).  Before its count is kept, each candidate's program is
evaluated in Python at one random state and compared with the numpy reference (``soagen.reference``):
a count of a program that computes something else would mean nothing.  The chosen formulations are those
of ``soagen.passes.second_derivatives``; the others are written here from the same pieces (an inner program
replayed with tangents, :mod:`soagen.passes.tangent`; a reverse sweep, :mod:`soagen.passes.adjoint`).

Not among them: the recursion applying its operators r1 and r3 as cross products, as Pinocchio's loop does
(21,751 operations on the Panda when it was first recorded, against 12,948 with them formed as matrices;
soagen keeps only the formed one), nor the contact Hessian's alternatives.
"""
from __future__ import annotations

import argparse
import json
import math
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
STORED = ROOT / "docs" / "second_formulations.json"
PAGE = ROOT / "docs" / "second_formulations.md"
COMMAND = "python benchmarks/second_formulations.py"
SEED = 11
FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")     # solo12's point feet


# ============================================================ the candidates
def _first_body_frame(prog, robot, q, qd, qdd):
    """(∂τ/∂q, ∂τ/∂q̇, M): the analytical first derivatives (Carpentier & Mansard) in the frame of the body
    ``frame_bodies`` picks, and M by composite inertias [RK (3.20)]; row-major (n, n) each."""
    from soagen.passes.analytic_derivatives import inverse_dynamics_derivatives_analytic
    from soagen.passes.dynamics import mass_matrix
    from soagen.passes.second_derivatives import frame_bodies

    return (inverse_dynamics_derivatives_analytic(prog, robot, q, qd, qdd, at=frame_bodies(robot))
            + mass_matrix(prog, robot, q))


def _first_world_axes(prog, robot, q, qd, qdd):
    """(∂τ/∂q, ∂τ/∂q̇, M): the analytical first derivatives in world axes (a floating tree's base)."""
    from soagen.passes.analytic_derivatives import inverse_dynamics_derivatives_analytic
    from soagen.passes.dynamics import mass_matrix

    return inverse_dynamics_derivatives_analytic(prog, robot, q, qd, qdd) + mass_matrix(prog, robot, q)


def _first_forward_mode(prog, robot, q, qd, qdd):
    """(∂τ/∂q, ∂τ/∂q̇, M): forward mode over Newton–Euler, and M."""
    from soagen.passes.derivatives import inverse_dynamics_derivatives
    from soagen.passes.dynamics import mass_matrix

    return inverse_dynamics_derivatives(prog, robot, q, qd, qdd) + mass_matrix(prog, robot, q)


def tensors_chosen(prog, robot, q, qd, qdd):
    from soagen.passes.second_derivatives import inverse_dynamics_second_derivatives

    return inverse_dynamics_second_derivatives(prog, robot, q, qd, qdd)


def tensors_recursion_world_axes(prog, robot, q, qd, qdd):
    """The chosen recursion and ∂²τ/∂q̇², worked in world axes (a floating tree: its base's frame)."""
    from soagen.passes.analytic_derivatives import forward_pass
    from soagen.passes.second_derivatives import _hamel
    from soagen.passes.second_order_recursion import second_order_backward_pass
    from soagen.passes.sweeps import Sweeps

    d2q, dqdv, dM, M = second_order_backward_pass(sw := Sweeps(prog, robot, q), forward_pass(sw, qd, qdd))
    return [d2q, _hamel(prog, robot, q, qd, dM, M), dqdv, dM]


def tensors_by_tangents(prog, robot, q, qd, qdd, first=_first_body_frame):
    """Forward mode over the first derivatives (soagen's formulation before the recursion): the program of
    ``first`` (∂τ/∂q, ∂τ/∂q̇, M) recorded as an inner program and replayed with tangents along q;
    ∂²τ/∂q² from those of ∂τ/∂q (one triangle: directions of two joints, or of one 1-dof joint, commute),
    ∂²τ/∂q∂q̇ from those of ∂τ/∂q̇, ∂M/∂q from those of M (one triangle), ∂²τ/∂q̇² by Hamel's equations."""
    from soagen.passes.derivatives import inner_program, tangent_seeds
    from soagen.passes.second_derivatives import _hamel, _multi_dof_joint, tensor
    from soagen.passes.tangent import replay

    n = robot.nv
    inner = inner_program(prog, robot, first, (q, qd, qdd), ("q", "qd", "qdd"))
    T = replay(prog, inner, tangent_seeds(prog, robot, q))
    dq, dqd, M = (inner.outputs[i].symbols for i in range(3))
    joint = _multi_dof_joint(robot)
    same = lambda j, k: j != k and j in joint and joint.get(k) == joint[j]     # noqa: E731
    dM = tensor(n, lambda i, j, k: T.tangent(M[i * n + j], ("q", k)), lambda i, j, k: (j, i, k) if j < i else None)
    return [tensor(n, lambda i, j, k: T.tangent(dq[i * n + j], ("q", k)),
                   lambda i, j, k: (i, k, j) if k < j and not same(j, k) else None),
            _hamel(prog, robot, q, qd, dM, [T.value(x) for x in M]),
            tensor(n, lambda i, j, k: T.tangent(dqd[i * n + k], ("q", j)), lambda i, j, k: None),
            dM]


def tensors_tangents_world_axes(prog, robot, q, qd, qdd):
    return tensors_by_tangents(prog, robot, q, qd, qdd, first=_first_world_axes)


def tensors_tangents_over_forward_mode(prog, robot, q, qd, qdd):
    return tensors_by_tangents(prog, robot, q, qd, qdd, first=_first_forward_mode)


def _tangents_along_both(prog, robot, q, qd, qdd):
    """The inner program of :func:`tensors_by_tangents` replayed with tangents along q and q̇:
    (replay, ∂τ/∂q, ∂τ/∂q̇, M symbols)."""
    from soagen.passes.derivatives import inner_program, tangent_seeds
    from soagen.passes.tangent import replay, velocity_seeds

    inner = inner_program(prog, robot, _first_body_frame, (q, qd, qdd), ("q", "qd", "qdd"))
    seeds = tangent_seeds(prog, robot, q)
    seeds.update(velocity_seeds("qd", qd))
    T = replay(prog, inner, seeds)
    return (T, *(inner.outputs[i].symbols for i in range(3)))


def _tensor(n, entry):
    return [entry(i, j, k) for i in range(n) for j in range(n) for k in range(n)]


def tensors_tangents_qd(prog, robot, q, qd, qdd):
    """Forward mode, with ∂²τ/∂q̇² as the tangents of ∂τ/∂q̇ along q̇ (not Hamel's algebra on ∂M/∂q).
    Only for 1-dof joints (within a multi-dof joint ∂²τ/∂q² is not symmetric; not needed here)."""
    n = robot.nv
    T, dq, dqd, M = _tangents_along_both(prog, robot, q, qd, qdd)
    return [_tensor(n, lambda i, j, k: T.tangent(dq[i * n + j], ("q", k)) if j <= k else
                    T.tangent(dq[i * n + k], ("q", j))),
            _tensor(n, lambda i, j, k: T.tangent(dqd[i * n + j], ("qd", k)) if j <= k else
                    T.tangent(dqd[i * n + k], ("qd", j))),
            _tensor(n, lambda i, j, k: T.tangent(dqd[i * n + k], ("q", j))),
            _tensor(n, lambda i, j, k: T.tangent(M[i * n + j], ("q", k)) if i <= j else
                    T.tangent(M[j * n + i], ("q", k)))]


def tensors_tangents_flipped(prog, robot, q, qd, qdd):
    """Forward mode, with ∂²τ/∂q∂q̇ as the tangents of ∂τ/∂q along q̇ (not of ∂τ/∂q̇ along q)."""
    n = robot.nv
    by_tangents = tensors_by_tangents(prog, robot, q, qd, qdd)
    T, dq, _, _ = _tangents_along_both(prog, robot, q, qd, qdd)
    return [by_tangents[0], by_tangents[1], _tensor(n, lambda i, j, k: T.tangent(dq[i * n + j], ("qd", k))),
            by_tangents[3]]


def _only(*kept):
    """The chosen tensors with all but ``kept`` (indices) replaced by zeros: what those cost alone."""

    def maker(prog, robot, q, qd, qdd):
        import sympy as sp

        out = tensors_chosen(prog, robot, q, qd, qdd)
        return [x if i in kept else [sp.Integer(0)] * len(x) for i, x in enumerate(out)]

    maker.kept = kept
    return maker


def id_hessian_chosen(prog, robot, q, qd, qdd, lam):
    from soagen.passes.second_derivatives import inverse_dynamics_hessian

    return inverse_dynamics_hessian(prog, robot, q, qd, qdd, lam)


def id_hessian_from_tensors(prog, robot, q, qd, qdd, lam):
    """Σ_i λ_i of the chosen tensors, assembled as the Hessian (q–q block symmetrized, q–q̈ block ∂(Mλ)/∂q)."""
    import sympy as sp

    n = robot.nv
    d2q, d2v, d2qv, dM = tensors_chosen(prog, robot, q, qd, qdd)
    c = lambda t, j, k: prog.let(sum((lam[i] * t[(i * n + j) * n + k] for i in range(n)), sp.Integer(0)))  # noqa: E731
    H = [[sp.Integer(0)] * (3 * n) for _ in range(3 * n)]
    for j in range(n):
        for k in range(j, n):
            H[j][k] = prog.let((c(d2q, j, k) + c(d2q, k, j)) / 2) if j != k else c(d2q, j, k)
            H[n + j][n + k] = c(d2v, j, k)
        for k in range(n):
            H[j][n + k] = c(d2qv, j, k)
            H[j][2 * n + k] = c(dM, k, j)
    for a in range(3 * n):
        for b in range(a):
            H[a][b] = H[b][a]
    return [[x for row in H for x in row]]


def fd_hessian_chosen(prog, robot, q, qd, tau, lam):
    from soagen.passes.second_derivatives import forward_dynamics_hessian

    return forward_dynamics_hessian(prog, robot, q, qd, tau, lam)


def _fd_over_reverse(fd):
    def maker(prog, robot, q, qd, tau, lam):
        from soagen.passes.second_derivatives import contracted_hessian

        return [contracted_hessian(prog, robot, fd, (q, qd, tau), ("q", "qd", "tau"), (lam,), ("lam",))]

    return maker


def _fd(name):
    def fd(prog, robot, q, qd, tau):
        from soagen.passes import dynamics

        return getattr(dynamics, name)(prog, robot, q, qd, tau)

    return fd


#: (quantity, the catalogue function the candidate computes, label, maker, chosen); every maker's outputs
#: are the catalogue function's (the ``_only`` rows: with zeros where they drop a tensor)
CANDIDATES = [
    ("∂²ID tensors", "inverse_dynamics_second_derivatives",
     "the analytical second-order recursion (Singh, Russell & Wensing; Pinocchio's) over Carpentier & Mansard's "
     "forward pass, worked in one body's frame, its operators r1 and r3 formed as 6 × 6 matrices; ∂²τ/∂q̇² by "
     "Hamel's equations on ∂M/∂q", tensors_chosen, True),
    ("∂²ID tensors", "inverse_dynamics_second_derivatives",
     "the same, worked in world axes (a floating tree: its base's frame)", tensors_recursion_world_axes, False),
    ("∂²ID tensors", "inverse_dynamics_second_derivatives",
     "forward mode over the analytical first derivatives (Carpentier & Mansard) and M, worked in one body's "
     "frame; ∂²τ/∂q̇² by Hamel", tensors_by_tangents, False),
    ("∂²ID tensors", "inverse_dynamics_second_derivatives",
     "forward mode over the analytical first derivatives, worked in world axes", tensors_tangents_world_axes, False),
    ("∂²ID tensors", "inverse_dynamics_second_derivatives",
     "forward mode over forward mode (Newton–Euler's tangents) and M; ∂²τ/∂q̇² by Hamel",
     tensors_tangents_over_forward_mode, False),
    ("∂²ID tensors", "inverse_dynamics_second_derivatives",
     "forward mode over the analytical first derivatives, ∂²τ/∂q̇² as tangents of ∂τ/∂q̇ along q̇ (1-dof joints "
     "only)", tensors_tangents_qd, False),
    ("∂²ID tensors", "inverse_dynamics_second_derivatives",
     "forward mode over the analytical first derivatives, ∂²τ/∂q∂q̇ as tangents of ∂τ/∂q along q̇",
     tensors_tangents_flipped, False),
    ("∂²ID tensors, one part", "inverse_dynamics_second_derivatives",
     "the chosen program for ∂²τ/∂q² alone", _only(0), False),
    ("∂²ID tensors, one part", "inverse_dynamics_second_derivatives",
     "the chosen program for ∂²τ/∂q∂q̇ alone", _only(2), False),
    ("∂²ID tensors, one part", "inverse_dynamics_second_derivatives",
     "the chosen program for ∂M/∂q and ∂²τ/∂q̇² alone", _only(1, 3), False),
    ("Hessian of λᵀτ", "inverse_dynamics_hessian",
     "forward over reverse of Newton–Euler", id_hessian_chosen, True),
    ("Hessian of λᵀτ", "inverse_dynamics_hessian",
     "Σ λ_i of the chosen ∂²ID tensors", id_hessian_from_tensors, False),
    ("Hessian of λᵀq̈", "forward_dynamics_hessian",
     "the implicit function: forward over reverse of Newton–Euler at q̈, M's factors", fd_hessian_chosen, True),
    ("Hessian of λᵀq̈", "forward_dynamics_hessian",
     "forward over reverse of forward dynamics' own program, composite inertias and LTDL (FD CRBA)",
     _fd_over_reverse(_fd("forward_dynamics_crba")), False),
    ("Hessian of λᵀq̈", "forward_dynamics_hessian",
     "forward over reverse of forward dynamics' own program, articulated bodies (FD4)",
     _fd_over_reverse(_fd("forward_dynamics_fd4")), False),
]


# ============================================================ recording, checking, counting
def robots():
    """{name: Robot}: the Panda (fingers locked) and solo12 (free-flyer, four point feet)."""
    import soagen

    return {"panda": soagen.robots.example("panda"),
            "solo12": soagen.load_urdf(soagen.robots.path("solo12"), floating_base=True,
                                       tips=[soagen.point_tip(f) for f in FEET])}


def record(robot, function, maker):
    """The finished program of ``maker`` under the catalogue function ``function``'s inputs and outputs."""
    from soagen import functions as F
    from soagen.options import Options
    from soagen.program.float_facts import direct_float_facts
    from soagen.program.statements import Program

    spec = {s.name: s for s in F.specs(robot)}[function]
    prog = Program(function, spec.doc, Options())
    inputs = [prog.input(a, F.size((F.ARGUMENTS[a][0],), F.sizes(robot)), F.ARGUMENTS[a][1]) for a in spec.inputs]
    with direct_float_facts():
        values = maker(prog, robot, *inputs)
    for out, exprs in zip(spec.outputs, values):
        prog.output(out.name, exprs, out.doc)
    return prog.finish()


def evaluate(prog, values):
    """The outputs of the finished straight-line ``prog`` at ``values`` ({input name: array}), in Python."""
    env = {"sin": math.sin, "cos": math.cos, "sqrt": math.sqrt, "Abs": abs, **values}
    assert not prog.loops and not prog.guards(), "a program with loops or guards"
    for symbol, expr in prog.statements():
        env[str(symbol)] = eval(compile(str(expr), "<statement>", "eval"), env)   # noqa: S307 (our own program)
    return [[float(eval(str(e), env)) for e in out.symbols] for out in prog.outputs]  # noqa: S307


def state(robot, function, seed=SEED):
    """({input name: array}, [reference outputs, flat]) at a random state."""
    import numpy as np

    from soagen import functions as F
    from soagen import reference as ref

    rng = np.random.default_rng(seed)
    q, qd, qdd, tau = robot.random_state(rng)
    lam = rng.normal(size=robot.nv)
    spec = {s.name: s for s in F.specs(robot)}[function]
    pool = {"q": q, "qd": qd, "qdd": qdd, "tau": tau, "lam": lam}
    args = [pool[a] for a in spec.inputs]
    want = getattr(ref, function)(robot, *args)
    want = list(want) if isinstance(want, (tuple, list)) else [want]
    return dict(zip(spec.inputs, args)), [np.ravel(w) for w in want]


def count(robot, function, maker, check=True):
    """{"ops": mul + add + div + sqrt, "mul", "add", "statements", "seconds", "error"}: ``maker`` recorded for
    ``robot`` and, with ``check``, its outputs' largest error relative to the reference's largest entry
    (every output but those a ``_only`` maker zeroes, each against a reference far from 0)."""
    import numpy as np

    t0 = time.perf_counter()
    prog = record(robot, function, maker)
    seconds = time.perf_counter() - t0
    ops = prog.ops
    row = {"ops": ops["mul"] + ops["add"] + ops["div"] + ops["sqrt"], "mul": ops["mul"], "add": ops["add"],
           "statements": ops["statements"], "seconds": round(seconds, 1), "error": None}
    if check:
        values, want = state(robot, function)
        got = evaluate(prog, values)
        kept = getattr(maker, "kept", range(len(want)))                 # an _only maker zeroes the others
        errors = [np.abs(np.array(got[i]) - want[i]).max() / np.abs(want[i]).max() for i in kept]
        assert errors and all(np.abs(want[i]).max() > 1e-2 for i in kept), "no output compared"
        row["error"] = float(max(errors))
    return row


def applies(robot, maker):
    """Whether the candidate is defined for ``robot`` (``tensors_tangents_qd``: 1-dof joints only)."""
    return maker is not tensors_tangents_qd or all(b.nv == 1 for b in robot.bodies)


def measure():
    """{"command", "date", "robots": {robot: [rows]}}, a row per candidate that applies."""
    out = {"command": COMMAND, "date": time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime()), "robots": {}}
    for name, robot in robots().items():
        rows = []
        for quantity, function, label, maker, chosen in CANDIDATES:
            if not applies(robot, maker):
                continue
            row = {"quantity": quantity, "function": function, "label": label, "chosen": chosen,
                   **count(robot, function, maker)}
            print(name, quantity, label[:60], row["ops"], f"{row['error']:.1e}", flush=True)
            assert row["error"] < 1e-10, f"{name}: {label} does not compute {function}"
            rows.append(row)
        out["robots"][name] = rows
    return out


# ============================================================ the page
def render(data):
    lines = ["# Second derivatives: the formulations compared by operation count", "",
             f"`{data['command']}` ({data['date']}; `--render` rewrites this page from "
             "docs/second_formulations.json; a test records a sample again and fails when the page is stale).",
             "",
             "Each candidate is recorded and finished as `soagen.build` does (CSE, dead code removed) and counted by "
             "soagen's rule (multiplications + additions + divisions + square roots; [guide/opcounts.md]"
             "(guide/opcounts.md)); before its count is kept its program is evaluated at a random state and "
             "compared with the numpy reference (the error column: the largest error relative to the largest "
             "entry). **chosen**: what `soagen.build` emits. The rows \"one part\" are the chosen program asked "
             "for some of the four tensors only (the others zero): what each costs alone; the shared part "
             "(the forward pass, the composites) is counted in each.", "",
             "Not counted here: the recursion applying its operators r1 and r3 as cross products, as "
             "Pinocchio's loop does (soagen keeps only the formed ones; `soagen.passes.second_order_recursion`), "
             "nor the contact Hessian's alternatives (forward over reverse of the contact solve itself). "
             "Pinocchio's implementation of the recursion is timed: `python benchmarks/run.py --robot "
             "panda_second` ([benchmarks.md](benchmarks.md)).", ""]
    for name, rows in data["robots"].items():
        lines += [f"## {name}", "", "| quantity | formulation | operations | mul | add | statements "
                  "| error |", "|---|---|---:|---:|---:|---:|---:|"]
        for r in rows:
            label = f"**{r['label']}** (chosen)" if r["chosen"] else r["label"]
            lines.append(f"| {r['quantity']} | {label} | {r['ops']} | {r['mul']} | {r['add']} | {r['statements']} "
                         f"| {r['error']:.0e} |")
        lines.append("")
    return "\n".join(lines)


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render", action="store_true", help="rewrite the page from the stored json")
    a = parser.parse_args()
    if not a.render:
        STORED.write_text(json.dumps(measure(), indent=1, ensure_ascii=False) + "\n")
    PAGE.write_text(render(json.loads(STORED.read_text())))


if __name__ == "__main__":
    main()
