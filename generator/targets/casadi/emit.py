"""The CasADi external-function API over the C99 functions: ``<name>_casadi.c``.

For each generated function ``f`` the file exports what ``casadi.external`` loads
(``f``, ``f_n_in``, ``f_n_out``, ``f_name_in``, ``f_name_out``, ``f_sparsity_in``,
``f_sparsity_out``, ``f_work``), under the name ``soagen_<name>_<f>``, and where soagen has
the derivatives of ``f`` (:data:`DERIVATIVES`), its Jacobian ``jac_soagen_<name>_<f>``.  Every
output is declared with its catalogue shape (:func:`declared`: the tips' poses T (m, 4, 4) as the
4m x 4 stack of the 4x4 poses) and stored column-major.  A function with guards (Ω(0)'s pivots)
that returns a nonzero status prints one line naming it (:func:`failure`) and the cause, and
returns 1: CasADi's evaluation fails.  The Jacobian of ``f``: inputs
``f``'s inputs then its outputs (``out_<output>``), outputs one block ``jac_<output>_<input>``
per output and input, in CasADi's order (outputs outer), each (size of the output) x (size of
the input), column-major as CasADi stores every matrix.

Along q the blocks are the derivatives in q's own coordinates, as CasADi differentiates:
soagen's derivatives are taken in the tangent space (a quaternion joint has 3 columns, a
floating base 6: body [ω; v]), so a block is ∂f/∂ξ · ∂ξ/∂q with ∂ξ/∂q (nv x nq) the map of
:func:`tangent_map_lines`; it includes how f depends on a quaternion's norm (f reads the
rotation of q/|q|).  Where the library has f's contracted Hessian (built with the Hessians), it
exports ``adj1_`` and ``jac_adj1_`` of f and of the step (:mod:`soagen.targets.casadi.hessian`),
what CasADi calls for a Hessian of a scalar; ``jac_jac_...`` (the full tensor) fails with one line.

Beside the functions, a library with ``forward_dynamics`` and its derivatives exports the
steps of :data:`STEPS` for a robot of 1-dof joints: ``soagen_<name>_rk4_step(x, tau, dt) ->
x_next``, one classical Runge–Kutta step of x = (q, q̇), and its Jacobian along (x, τ, dt),
composed in C (``rk4_step.c``) from the forward dynamics and soagen's derivatives of it, so
that a multiple-shooting NLP makes one call per interval and CasADi chains no derivatives.
"""
from __future__ import annotations

import math
from dataclasses import dataclass
from importlib import resources

from soagen import functions as F
from soagen.options import OptionsError
from soagen.targets.common.c_text import environment
from soagen.targets.common.inert import Code
from soagen.targets.casadi.guards import failure  # noqa: F401  (also read from here)
from soagen.targets.casadi.hessian import HESSIANS, adjoint, step_adjoint

#: f -> {(output, input): (soagen function, its output)}: the blocks of f's Jacobian
DERIVATIVES = {
    "inverse_dynamics": {("tau", "q"): ("inverse_dynamics_derivatives", "dtau_dq"),
                         ("tau", "qd"): ("inverse_dynamics_derivatives", "dtau_dqd"),
                         ("tau", "qdd"): ("mass_matrix", "M")},
    "forward_dynamics": {("qdd", "q"): ("forward_dynamics_derivatives", "dqdd_dq"),
                         ("qdd", "qd"): ("forward_dynamics_derivatives", "dqdd_dqd"),
                         ("qdd", "tau"): ("forward_dynamics_derivatives", "Minv")},
    "contact_dynamics": {(out, inp): ("contact_dynamics_derivatives", f"d{out}_d{inp}")
                         for out in ("qdd", "f") for inp in ("q", "qd", "tau")},
}


#: step -> (the function it steps, that function's derivatives): exported for 1-dof robots
STEPS = {"rk4_step": ("forward_dynamics", "forward_dynamics_derivatives")}


def needed(functions, hessians=False):
    """The soagen functions that ``functions`` (soagen functions and :data:`STEPS`) and their
    Jacobians read, in order, each once; with ``hessians`` also their contracted Hessians
    (:data:`soagen.targets.casadi.hessian.HESSIANS`; a Hessian among ``functions`` is there anyway)."""
    out = []
    for f in functions:
        for g in STEPS.get(f, (f,)):
            hessian = [HESSIANS[g]] if hessians and g in HESSIANS else []
            for h in [g, *(source for source, _ in DERIVATIVES.get(g, {}).values()), *hessian]:
                if h not in out:
                    out.append(h)
    return out


def steps_available(robot):
    """Whether the steps of :data:`STEPS` exist for ``robot``: x = (q, q̇) with q̇ = dq/dt, that is
    1-dof joints only (a quaternion's RK4 step is not a step in q's coordinates)."""
    return robot.nq == robot.nv


def check_steps(robot, names):
    """Refuse, in one line, a step of :data:`STEPS` asked for on a robot without it."""
    asked = [f for f in names if f in STEPS]
    if asked and not steps_available(robot):
        raise OptionsError(f"{asked[0]} steps x = (q, qd) of 1-dof joints, and {robot.name} has a floating base or "
                           f"a spherical joint (nq = {robot.nq}, nv = {robot.nv}): write the step in CasADi around "
                           f"forward_dynamics (its Jacobian is along the quaternion's entries)")


@dataclass
class CasadiSource:
    """``<name>_casadi.c`` and the CasADi names it exports.

    Attributes
    ----------
    name : str        file stem (the C99 files' prefix)
    source : str      the C text
    exported : dict   soagen function -> its CasADi name (``jac_`` + it: its Jacobian, where there is one)
    jacobians : list  the functions exported with a Jacobian
    """

    name: str
    source: str
    exported: dict
    jacobians: list


def declared(shape):
    """(rows, columns) CasADi declares for an array of catalogue ``shape`` (size keys or integers),
    each a tuple of the dimensions whose product it is: a vector (k,) the column ((k,), (1,)), a
    matrix (rows, cols) itself, a stack of k matrices (k, rows, cols) (the tips' poses T, (m, 4, 4))
    the (k·rows) x cols matrix of them one below the other, ((k, rows), (cols,)).  The C array is
    row-major in each case, and a row-major (k, rows, cols) is the row-major (k·rows) x cols, so one
    transpose stores any of them column-major, as CasADi stores every matrix."""
    if len(shape) == 1:
        return tuple(shape), (1,)
    return tuple(shape[:-1]), (shape[-1],)


def _shape(arg, sizes):
    """(rows, columns) of a program argument as CasADi declares it (:func:`declared`), in numbers."""
    if len(arg["shape"]) == 1:
        return arg["size"], 1
    return tuple(F.size(dims, sizes) for dims in declared(arg["shape"]))


def shape_text(shape):
    """``declared(shape)`` as the guide writes it: ``"4m x 4"``, ``"r x n"``, ``"n"`` (a column)."""
    rows, cols = declared(shape)
    ints, keys = [d for d in rows if not isinstance(d, str)], [d for d in rows if isinstance(d, str)]
    # a product of size keys: "4m", "2n"; of one key repeated (a stack of n x n matrices): "n·n"
    text = (str(math.prod(ints)) if ints else "") + ("".join(keys) if len(set(keys)) == len(keys) else "·".join(keys))
    return text if cols == (1,) else f"{text} x {cols[0]}"


def layout_table():
    """The guide's table of the CasADi shapes (docs/guide/casadi.md): one row per catalogue function
    with a matrix output, the members of a family with the same outputs in the family's row."""
    rows, seen = ["| function | outputs in CasADi (rows x columns; a vector is a column) |", "|---|---|"], {}
    for spec in F.CATALOGUE:
        if all(len(o.shape) == 1 for o in spec.outputs):
            continue
        outs = ", ".join(f"`{o.name}` {shape_text(o.shape)}" for o in spec.outputs)
        group = (spec.family or spec.name, outs)
        if group in seen:
            rows[seen[group]] = rows[seen[group]].replace("` |", f"`, `{spec.name}` |", 1)
            continue
        seen[group] = len(rows)
        rows.append(f"| `{spec.name}` | {outs} |")
    return "\n".join(rows) + "\n"


def tangent_map_lines(robot, q="q", K="K"):
    """C lines that write ``K`` (nv x nq, row-major, zeroed first) = ∂ξ/∂q at ``q``: 1 on the
    diagonal of a 1-dof joint; for a quaternion (x, y, z, w) of norm s, the body rotation
    δθ = 2 vec(q̂* ⊗ δq̂) with q̂ = q/s: the rows (2/s) [w I − [v]×, −v] (v = (x, y, z)/s,
    w/s); for a floating base also its body velocity δv = Rᵀ δp (R of q̂), the rows of v
    below those of ω, its position's columns before the quaternion's."""
    nq = robot.nq
    lines = [f"for (int i = 0; i < {robot.nv * nq}; ++i) {K}[i] = 0.0;"]
    for _, part in robot.parts:
        for k, body in enumerate(part.bodies):
            qs, vs = part.qslice(k), part.vslice(k)
            if body.nq == 1:
                lines.append(f"{K}[{vs.start * nq + qs.start}] = 1.0;")
                continue
            h = qs.stop - 4                       # the quaternion's first entry in q
            w_row = vs.start                      # the rotation's rows: first in [ω; v] and alone in a ball
            lines += ["{",
                      f"    const casadi_real s = sqrt({q}[{h}]*{q}[{h}] + {q}[{h + 1}]*{q}[{h + 1}] + "
                      f"{q}[{h + 2}]*{q}[{h + 2}] + {q}[{h + 3}]*{q}[{h + 3}]);",
                      f"    const casadi_real qx = {q}[{h}]/s, qy = {q}[{h + 1}]/s, qz = {q}[{h + 2}]/s, "
                      f"qw = {q}[{h + 3}]/s, c = 2.0/s;"]
            rows = (("qw", "qz", "-qy", "-qx"), ("-qz", "qw", "qx", "-qy"), ("qy", "-qx", "qw", "-qz"))
            for i, row in enumerate(rows):
                for j, entry in enumerate(row):
                    lines.append(f"    {K}[{(w_row + i) * nq + h + j}] = c*({entry});")
            if body.nq == 7:                      # floating: δv = Rᵀ δp, R of the unit quaternion
                R = (("1 - 2*(qy*qy + qz*qz)", "2*(qx*qy - qz*qw)", "2*(qx*qz + qy*qw)"),
                     ("2*(qx*qy + qz*qw)", "1 - 2*(qx*qx + qz*qz)", "2*(qy*qz - qx*qw)"),
                     ("2*(qx*qz - qy*qw)", "2*(qy*qz + qx*qw)", "1 - 2*(qx*qx + qy*qy)"))
                for i in range(3):
                    for j in range(3):
                        lines.append(f"    {K}[{(vs.start + 3 + i) * nq + qs.start + j}] = {R[j][i]};")
            lines.append("}")
    return lines


def emit_casadi(robot, programs, name):
    """``<name>_casadi.c`` for ``programs`` (the derivative functions of :data:`DERIVATIVES` among
    them give the Jacobians); -> :class:`CasadiSource`."""
    from soagen._version import __version__

    sizes = F.sizes(robot)
    by_name = {p.name: p for p in programs}

    def args(prog, which):
        spec = F.BY_NAME[prog.name]
        shapes = {o.name: o.shape for o in spec.outputs}
        return [dict(name=a.name, size=a.size,
                     shape=shapes.get(a.name, (a.size,)) if which == "out" else (a.size,))
                for a in (prog.inputs if which == "in" else prog.outputs)]

    sparsities, functions, jacobians, adjoints = {}, [], [], []

    def sparsity(rows, cols, zero=False):
        """The name of CasADi's pattern of a dense (rows x cols) matrix, or with ``zero`` of an all-zero one."""
        return sparsities.setdefault((rows, cols, zero), f"soagen_sp{'0' if zero else ''}_{rows}_{cols}")

    for prog in programs:
        ins, outs = args(prog, "in"), args(prog, "out")
        for a in ins + outs:
            a["rows"], a["cols"] = _shape(a, sizes)
            a["sparsity"] = sparsity(a["rows"], a["cols"])
        fname = f"soagen_{name}_{prog.name}"
        scratch = sum(a["size"] for a in outs)
        functions.append(dict(name=fname, call=f"{name}_{prog.name}", status=prog.returns_status, inputs=ins,
                              failure=failure(prog) if prog.returns_status else None,
                              outputs=outs, zeros_at=scratch, work=scratch + max(a["size"] for a in ins),
                              out_at=[sum(a["size"] for a in outs[:j]) for j in range(len(outs))],
                              program=prog.name))
        blocks = DERIVATIVES.get(prog.name)
        if blocks and all(src in by_name for src, _ in blocks.values()):
            jac = _jacobian(robot, name, prog, ins, outs, blocks, by_name, sparsity)
            jacobians.append(jac)
            if HESSIANS.get(prog.name) in by_name:
                adjoints.append(adjoint(robot, name, prog, ins, outs, jac, by_name[HESSIANS[prog.name]], sparsity))
    steps = [_step(robot, name, step, by_name, sparsity) for step, (fd, fdd) in STEPS.items()
             if fd in by_name and fdd in by_name and steps_available(robot)]
    for step in steps:
        if step["fdh"]:
            step["adjoint"] = step_adjoint(step, sparsity)
    # rk4_step_hessian.c only where called: -Wall warns of an unused static function
    parts = ["rk4_step.c"] + (["rk4_step_hessian.c"] if any(s["adjoint"] for s in steps) else [])
    runtime = Code("\n\n".join((resources.files("soagen.targets.casadi") / p).read_text().rstrip("\n") for p in parts))
    ctx = dict(version=__version__, name=name, robot_name=robot.name, functions=functions, jacobians=jacobians,
               steps=steps, rk4_runtime=runtime,
               # the helpers only where called: -Wall warns of an unused static function
               times_map=any(b["tangent"] for j in jacobians for b in j["blocks"]),
               fails=any(f["status"] for f in functions) or any(c["status"] for j in jacobians for c in j["calls"]),
               adjoints=adjoints, nv=robot.nv, nq=robot.nq, quaternion=robot.nq != robot.nv,
               second=bool(adjoints) or any(s["adjoint"] for s in steps),
               sparsities=[dict(name=v, values=[r, c, *([0] * (c + 1) if zero else [1])])
                           for (r, c, zero), v in sparsities.items()])
    source = environment().get_template("casadi.c.j2").render(**ctx)
    exported = {f["program"]: f["name"] for f in functions} | {s["program"]: s["name"] for s in steps}
    return CasadiSource(name, source, exported, [j["program"] for j in jacobians] + [s["program"] for s in steps])


def _step(robot, name, step, by_name, sparsity):
    """What templates/casadi.c.j2 lays out for ``step`` of :data:`STEPS` (its C in ``rk4_step.c``):
    the functions it calls, its inputs x (2n), tau (n), dt (1) and output x_next (2n), its
    Jacobian's three blocks (column-major pieces of one 2n x (3n + 1) matrix), the work vectors."""
    n = robot.nv
    m, nz = 2 * n, 3 * n + 1
    fd, fdd = (by_name[f] for f in STEPS[step])
    fdh = by_name.get(HESSIANS[fd.name])
    outs = [a.name for a in fdd.outputs]
    if outs != ["qdd", "dqdd_dq", "dqdd_dqd", "Minv"] or [a.name for a in fd.outputs] != ["qdd"]:
        raise AssertionError(f"rk4_step.c reads qdd, dqdd_dq, dqdd_dqd, Minv; {fdd.name} writes {outs}")

    def arg(label, rows, cols=1):
        return dict(name=label, rows=rows, cols=cols, size=rows * cols, sparsity=sparsity(rows, cols))

    inputs = [arg("x", m), arg("tau", n), arg("dt", 1)]
    outputs = [arg("x_next", m)]
    blocks = [dict(arg(f"jac_x_next_{a['name']}", m, a["rows"]), at=m * at)
              for a, at in zip(inputs, (0, m, m + n))]
    jac_inputs = inputs + [arg("out_x_next", m)]
    rk4_work, jac_rk4_work = 4 * n, 4 * m + m * nz + 3 * n * n + 4 * m
    fname = f"soagen_{name}_{step}"
    return dict(name=fname, program=step, n=n, m=m, inputs=inputs, outputs=outputs,
                fd=dict(call=f"{name}_{fd.name}", status=fd.returns_status),
                fdd=dict(call=f"{name}_{fdd.name}", status=fdd.returns_status),
                result_at=rk4_work, zeros_at=rk4_work + m, work=rk4_work + 2 * m,
                jac=f"jac_{fname}", jac_inputs=jac_inputs, blocks=blocks,
                jac_result_at=jac_rk4_work, jac_zeros_at=jac_rk4_work + m * nz, jac_work=jac_rk4_work + m * nz + m,
                second=_second(fname, jac_inputs, blocks, sparsity),
                fdh=dict(call=f"{name}_{fdh.name}", status=fdh.returns_status) if fdh else None,
                adjoint=None)


def _jacobian(robot, name, prog, ins, outs, blocks, by_name, sparsity):
    """What templates/casadi.c.j2 lays out for the Jacobian of ``prog``: the derivative functions
    called (each once, into the work vector), the tangent map when a block is along q, and per
    block where its values are."""
    sources = []
    for src, _ in blocks.values():
        if src not in sources:
            sources.append(src)
    offset, calls, where = 0, [], {}
    for src in sources:
        d = by_name[src]
        outs_at = {}
        for a in d.outputs:
            outs_at[a.name] = offset
            offset += a.size
        calls.append(dict(call=f"{name}_{src}", status=d.returns_status,
                          failure=failure(d, f"the Jacobian of {prog.name} ({src})") if d.returns_status else None,
                          args=[f"x[{[i['name'] for i in ins].index(a.name)}]" for a in d.inputs]
                          + [f"w + {outs_at[a.name]}" for a in d.outputs]))
        where[src] = outs_at
    # ∂ξ/∂q is the identity without a quaternion: the blocks along q are then copied, not multiplied
    along_q = robot.nq != robot.nv and any(inp == "q" for _, inp in blocks)
    K = offset if along_q else None
    offset += robot.nv * robot.nq if along_q else 0
    jblocks = []
    for o in outs:
        if o["cols"] != 1:     # a matrix's block is along its column-major entries: soagen's are row-major
            raise AssertionError(f"{prog.name}: the Jacobian of the matrix {o['name']} is not laid out")
        for i in ins:
            src, out = blocks[(o["name"], i["name"])]
            jblocks.append(dict(name=f"jac_{o['name']}_{i['name']}", rows=o["size"], cols=i["size"],
                                at=where[src][out], tangent=along_q and i["name"] == "q", nv=robot.nv,
                                sparsity=sparsity(o["size"], i["size"])))
    jins = ins + [dict(a, name=f"out_{a['name']}") for a in outs]
    zeros = max(a["size"] for a in jins)
    return dict(name=f"jac_soagen_{name}_{prog.name}", program=prog.name, inputs=jins, n_x=len(ins), calls=calls,
                blocks=jblocks, K=K, K_lines=tangent_map_lines(robot, q="x[0]", K="K") if along_q else [],
                work=offset + zeros, zeros_at=offset, zeros=zeros,
                second=_second(f"soagen_{name}_{prog.name}", jins, jblocks, sparsity))


def _second(fname, jac_inputs, blocks, sparsity):
    """The Jacobian of ``fname``'s Jacobian: its signature only (what CasADi checks when it builds a
    Hessian; its body stops with one line): inputs the Jacobian's inputs and then its blocks
    (``out_`` + block), outputs one block per Jacobian block and input."""
    inputs = jac_inputs + [dict(name=f"out_{b['name']}", sparsity=sparsity(b["rows"], b["cols"]),
                                size=b["rows"] * b["cols"]) for b in blocks]
    outputs = [dict(name=f"jac_{b['name']}_{a['name']}", sparsity=sparsity(b["rows"] * b["cols"], a["size"]))
               for b in blocks for a in jac_inputs]
    return dict(name=f"jac_jac_{fname}", inputs=inputs, outputs=outputs)
