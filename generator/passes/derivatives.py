"""Makers of the derivatives of the dynamics (see :mod:`soagen.passes.dynamics` for
what a maker is): ∂τ/∂q, ∂τ/∂q̇ of inverse dynamics; θ̈ and ∂θ̈/∂q, ∂θ̈/∂q̇,
∂θ̈/∂τ = M⁻¹ of forward dynamics; the A, B matrices of one semi-implicit Euler
step for model-predictive control.

Derivatives with respect to q are taken in the tangent space, as
:meth:`~soagen.model.robot.Robot.integrate` moves a configuration (and as
Pinocchio's): direction i of a quaternion joint is the body-frame rotation
about axis i.  Each maker records the program of the function it
differentiates as an inner program and replays it with forward-mode tangents
(:mod:`soagen.passes.tangent`).  The solves with M's factors, one per direction,
are one body in a loop over the columns of the outputs
(:meth:`~soagen.program.statements.Program.column_loop`), a loop per output.
"""
from __future__ import annotations

import sympy as sp

from soagen.model.robot import FLOATING
from soagen.passes import symbolic as S
from soagen.passes.ldl import ldl_inverse, ldl_solve, reverse
from soagen.program.statements import Program
from soagen.passes.tangent import configuration_seeds, jacobian, replay, velocity_seeds


def inner_program(prog, robot, maker, inputs, names):
    """Record ``maker(inner, robot, *inputs)`` as a finished inner program over
    the same input symbols (declared under ``names``); the outer program gets
    the inner's extra inputs (cos/sin of q with ``trig_inputs``).  With the parameters π
    as inputs (``prog.parameters``) the inner program reads the same π, with no tangent."""
    inner = Program(f"{prog.name}__inner", "", prog.options, prefix="u")
    for name, values in zip(names, inputs):
        inner.input(name, len(values))
    if getattr(prog, "parameters", None) is not None:
        inner.parameters = inner.input("pi", len(prog.parameters))
    outputs = maker(inner, robot, *inputs)
    for i, exprs in enumerate(outputs):
        inner.output(f"out{i}", exprs)
    inner.finish()
    have = {a.name for a in prog.inputs} | set(names)
    prog.inputs += [a for a in inner.inputs if a.name not in have]
    return inner


def tangent_seeds(prog, robot, q, qd=None):
    """Tangent seeds of q (the nv tangent directions ``("q", i)``), of the
    cos/sin inputs when the program reads them, and of q̇ (``("qd", i)``)."""
    seeds = configuration_seeds(prog, robot, q)
    names = {a.name: a.symbols for a in prog.inputs}
    if "cq" in names:                          # trig inputs: d cos q = −sin q dq, d sin q = cos q dq
        for k, b in enumerate(robot.bodies):
            if b.nq == 1:
                i, j = robot.qslice(k).start, robot.vslice(k).start
                seeds[names["cq"][i]] = {("q", j): -names["sq"][i]}
                seeds[names["sq"][i]] = {("q", j): names["cq"][i]}
    if qd is not None:
        seeds.update(velocity_seeds("qd", qd))
    return seeds


def directions(name, n):
    return [(name, i) for i in range(n)]


def fixed_input_tangents(prog, robot, maker, q, qd, named):
    """Forward-mode ∂out/∂q, ∂out/∂q̇ of ``maker(inner, robot, q, qd, *named values)`` with the
    ``named`` inputs ``[(name, values)]`` held fixed (expressions of ``prog``, no tangent):
    ``{"q": rows, "qd": rows}``, rows (len(out), n)."""
    symbols = [[sp.Symbol(f"{name}[{i}]") for i in range(len(values))] for name, values in named]
    inner = inner_program(prog, robot, maker, (q, qd, *symbols), ("q", "qd", *(name for name, _ in named)))
    fixed = {s: v for syms, (_, values) in zip(symbols, named) for s, v in zip(syms, values)}
    T = replay(prog, inner, tangent_seeds(prog, robot, q, qd), inputs=fixed)
    out, n = inner.outputs[0].symbols, robot.nv
    return {d: [[T.tangent(o, (d, j)) for j in range(n)] for o in out] for d in ("q", "qd")}


def inverse_dynamics_derivatives(prog, robot, q, qd, qdd):
    """∂τ/∂q, ∂τ/∂q̇ of Newton–Euler [RK (2.24)–(2.30)] by forward-mode
    differentiation of its straight-line program (∂τ/∂q̈ is M)."""
    from soagen.passes.dynamics import inverse_dynamics

    inner = inner_program(prog, robot, inverse_dynamics, (q, qd, qdd), ("q", "qd", "qdd"))
    T = replay(prog, inner, tangent_seeds(prog, robot, q, qd))
    tau = inner.outputs[0].symbols
    return [jacobian(T, tau, directions("q", robot.nv)), jacobian(T, tau, directions("qd", robot.nv))]


def forward_dynamics_derivatives_fd4(prog, robot, q, qd, tau):
    """θ̈, ∂θ̈/∂q, ∂θ̈/∂q̇ and ∂θ̈/∂τ = M⁻¹ by forward-mode differentiation of
    FD4 [RK (5.13)–(5.17)] along q, q̇ and τ."""
    from soagen.passes.dynamics import forward_dynamics_fd4

    inner = inner_program(prog, robot, forward_dynamics_fd4, (q, qd, tau), ("q", "qd", "tau"))
    seeds = tangent_seeds(prog, robot, q, qd)
    seeds.update(velocity_seeds("tau", tau))
    T = replay(prog, inner, seeds)
    qdd = inner.outputs[0].symbols
    n = robot.nv
    return [[T.value(x) for x in qdd]] + [jacobian(T, qdd, directions(d, n)) for d in ("q", "qd", "tau")]


def forward_dynamics_derivatives_via_id(prog, robot, q, qd, tau, analytic=False):
    """θ̈ = M⁻¹(τ − C − G − F(q̇)) with M by composite inertias [RK (3.20)] and its LTDL,
    and M ∂θ̈/∂x = −∂τ/∂x|θ̈, M M⁻¹ = 1 solved column by column with those factors (no
    fill-in on trees), ∂τ/∂x the forward-mode derivatives of Newton–Euler at that θ̈
    [RK (2.24)–(2.30)] (``analytic``: the analytical recursion of
    :mod:`soagen.passes.analytic_derivatives`).

    The outputs ∂θ̈/∂q, ∂θ̈/∂q̇ and M⁻¹ are written as −∂τ/∂x and the identity and solved in
    place, each in loops over its columns
    (:meth:`~soagen.program.statements.Program.sparse_column_loops`: on a tree, a loop per run
    of columns, its body skipping the rows zero on all of them): the lists returned for them are
    the loops' inputs.  On the TALOS (nv = 38) solving M⁻¹'s columns in loops, vectorized across
    columns, ran 0.95× as long as the straight-line inverse from the factors, the sparse bodies
    another 0.95× (``benchmarks/ab.py``, one run each)."""
    n = robot.nv
    qdd, L, dinv, minus = _minus_dtau_at_qdd(prog, robot, q, qd, tau, analytic)
    eye = [sp.Integer(int(i == j)) for i in range(n) for j in range(n)]
    start = 0
    base = free_base_columns(prog, robot, q)
    if base is not None:                      # the base's six columns are known: solve the others
        for i in range(n):
            minus["q"][i * n:i * n + 6] = base[i]
        start = 6
    prog.banner("d qdd = -M^-1 d tau: -d tau written, then solved column by column with the LTDL factors", level=0)
    # loops per output: one body doing all ran no faster
    for out, first, written in ((1, start, minus["q"]), (2, 0, minus["qd"]), (3, 0, eye)):
        prog.sparse_column_loops(n, [(out, n)], lambda body, cols: [m_solve(body, L, dinv, cols[0])], [written],
                                 start=first)
    return [qdd, minus["q"], minus["qd"], eye]


def free_base_columns(prog, robot, q):
    """∂θ̈/∂q along the six tangent directions of a floating base (rows of 6, one per velocity
    coordinate), or None when the root joint is not floating.

    Seen from the base, a free tree's dynamics depends on where its base is only through gravity:
    moving the base (the last three directions, [ω; v] order) changes nothing, and turning it by δ
    (the first three, body axes) turns the gravity g_b = Rᵀg the base feels into g_b + g_b × δ.
    A uniform field changed by Δ accelerates every point of a free system by Δ alike, so only the
    base's linear acceleration changes, by Δ: ∂θ̈/∂δ is [g_b]× in the rows of v̇ and 0 elsewhere,
    R = R0 Rq the base's rotation, g the world's gravity."""
    if robot.bodies[0].joint_type != FLOATING:
        return None
    frame = S.JointFrame(prog, robot.bodies[0], q[robot.qslice(0)])
    g_base = S.matTvec(prog, frame.Rq, S.matTvec(prog, frame.R0, S.const_vector(robot.gravity)))
    skew = S.skew(g_base)
    rows = [[sp.Integer(0)] * 6 for _ in range(robot.nv)]
    for r in range(3):
        rows[3 + r][:3] = [sp.sympify(x) for x in skew[r]]
    return rows


def _minus_dtau_at_qdd(prog, robot, q, qd, tau, analytic):
    """θ̈, the LTDL factors (L, 1/d) of M and −∂τ/∂q, −∂τ/∂q̇ at θ̈ (row-major n × n lists, by
    ``"q"``, ``"qd"``): forward mode of Newton–Euler or (``analytic``) the analytical recursion."""
    from soagen.passes.dynamics import inverse_dynamics
    from soagen.passes.actuators import subtract_friction
    from soagen.passes.sweeps import Sweeps, forces_tip_to_base, mass_matrix_ltdl, newton_euler, project

    n = robot.nv
    sw = Sweeps(prog, robot, q)
    _, _, f = newton_euler(sw, qd, [sp.Integer(0)] * n)
    forces_tip_to_base(sw, f)
    rhs = [prog.let(t - h) for t, h in zip(subtract_friction(sw, tau, qd), project(sw, f))]
    L, dinv = mass_matrix_ltdl(sw)
    qdd = m_solve(prog, L, dinv, rhs)
    if analytic:
        from soagen.passes.analytic_derivatives import inverse_dynamics_derivatives_analytic

        prog.banner("derivatives of Newton-Euler at qdd, analytical recursion", level=0)
        dtau = inverse_dynamics_derivatives_analytic(prog, robot, q, qd, qdd)        # row-major dq, dqd
        column = {"q": lambda i, j: dtau[0][i * n + j], "qd": lambda i, j: dtau[1][i * n + j]}
    else:
        prog.banner("derivatives of Newton-Euler at qdd, forward mode", level=0)
        dtau = fixed_input_tangents(prog, robot, inverse_dynamics, q, qd, [("qdd", qdd)])
        column = {d: (lambda i, j, d=d: dtau[d][i][j]) for d in ("q", "qd")}
    minus = {d: [prog.let(-column[d](i, j)) for i in range(n) for j in range(n)] for d in ("q", "qd")}
    return qdd, L, dinv, minus


def m_solve(prog, L, dinv, g):
    """M⁻¹g by the LTDL factors of M (those of the reversed M: sparse on trees)."""
    return ldl_solve(prog, L, dinv, list(g)[::-1])[::-1]


def forward_dynamics_derivatives_via_analytic_id(prog, robot, q, qd, tau):
    """θ̈, M⁻¹ and ∂θ̈/∂x = −M⁻¹ ∂τ/∂x|θ̈ as :func:`forward_dynamics_derivatives_via_id`
    (M by composite inertias [RK (3.20)] and its LTDL), ∂τ/∂x by the analytical
    recursion of Carpentier & Mansard (RSS 2018) at that θ̈."""
    return forward_dynamics_derivatives_via_id(prog, robot, q, qd, tau, analytic=True)


def linearized_step(prog, robot, q, qd, tau, dt, analytic=False):
    """A, B of one semi-implicit Euler step x⁺ = f(x, τ), x = (q, q̇):
    q̇⁺ = q̇ + dt θ̈(q, q̇, τ), q⁺ = q + dt q̇⁺ (1-dof joints), from the derivatives of
    :func:`forward_dynamics_derivatives_via_id`: with F_q, F_v, M⁻¹ those,
    A = [[I + dt² F_q, dt (I + dt F_v)], [dt F_q, I + dt F_v]], B = [[dt² M⁻¹], [dt M⁻¹]]
    (row-major 2n × 2n and 2n × n).

    A is written as [[I, I], [−∂τ/∂q, −∂τ/∂q̇]] and finished in a loop over its n columns
    j (column j of both halves): F_q e_j and F_v e_j solved with M's LTDL factors, then
    the four blocks' entries, the identity's read from the top rows."""
    n = robot.nv
    _, L, dinv, minus = _minus_dtau_at_qdd(prog, robot, q, qd, tau, analytic)
    Minv = reverse(ldl_inverse(prog, L, dinv))
    h = dt[0]
    prog.banner("B of the semi-implicit Euler step", level=0)
    dv_dt = [[prog.let(h * Minv[i][j]) for j in range(n)] for i in range(n)]
    B = [prog.let(h * x) for row in dv_dt for x in row] + [x for row in dv_dt for x in row]
    prog.banner("A of the semi-implicit Euler step: [[I, I], [-d tau/dq, -d tau/dqd]] written, then solved and "
                "completed column by column", level=0)
    eye = [sp.Integer(int(i == j)) for i in range(n) for j in range(n)]
    A = []
    for i in range(n):                                   # rows of A, each its left and right half
        A += eye[i * n:(i + 1) * n] * 2
    for i in range(n):
        A += minus["q"][i * n:(i + 1) * n] + minus["qd"][i * n:(i + 1) * n]

    def kernel(body, cols):
        """Column j of A viewed as 4n half-rows of n entries, half-row 2i + s being row i's left
        (s = 0: the q columns) or right (s = 1: the q̇ columns) half."""
        col = cols[0]
        e = [col[2 * i] for i in range(n)]                                       # e_j, from the top left
        Fq = m_solve(body, L, dinv, [col[2 * (n + i)] for i in range(n)])
        Fv = m_solve(body, L, dinv, [col[2 * (n + i) + 1] for i in range(n)])
        out = [None] * (4 * n)
        for i in range(n):
            dv_dq, dv_dv = body.let(h * Fq[i]), body.let(e[i] + h * Fv[i])
            out[2 * i], out[2 * i + 1] = body.let(e[i] + h * dv_dq), body.let(h * dv_dv)
            out[2 * (n + i)], out[2 * (n + i) + 1] = dv_dq, dv_dv
        return [out]

    prog.column_loop(n, [(0, 4 * n)], kernel)
    return [A, B]


def linearized_step_analytic(prog, robot, q, qd, tau, dt):
    """:func:`linearized_step` from :func:`forward_dynamics_derivatives_via_analytic_id` (∂τ/∂x by the
    analytical recursion of Carpentier & Mansard, RSS 2018)."""
    return linearized_step(prog, robot, q, qd, tau, dt, analytic=True)

