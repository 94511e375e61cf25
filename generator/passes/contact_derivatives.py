"""Makers of the derivatives of the contact dynamics (see :mod:`soagen.passes.dynamics`
for what a maker is), two members of the ``contact_dynamics_derivatives`` family:

* ``forward_mode``: forward-mode differentiation of the recorded contact dynamics
  (:mod:`soagen.passes.contact`), one tangent per direction;
* ``kkt``: differentiating the contact conditions ID(q, q̇, θ̈, f) = τ (inverse dynamics
  with the tip forces, τ = Mθ̈ + C + G + J*f) and Jθ̈ + J̇θ̇ = 0 at the solution:
  [M J*; J 0][∂θ̈; ∂f] = −[A; B], A = ∂ID/∂x and B = ∂(Jθ̈ + J̇θ̇)/∂x at fixed (θ̈, f)
  by forward mode of those two (much shorter) programs (for τ: A = −1, B = 0), then
  ∂f = Λ(0)(B − ZᵀA), Z = M⁻¹J*, and ∂θ̈ = −M⁻¹(A + J*∂f) by the LTDL factors of M
  [RK (3.20)] (sparse on trees), ZᵀA and J*∂f taken inside the two halves of that solve
  with the sparse Ĵ = J P L⁻ᵀ instead of the dense Z, and Ω(0) = ĴD⁻¹Ĵᵀ factored once.
  θ̈ and f themselves come from the same factors (the contact solve of
  :mod:`soagen.passes.contact` without its articulated-body passes, which these factors
  make redundant here).  A and B are written into the outputs and solved in place, in
  loops over the columns of each of the q, q̇ and τ directions
  (:meth:`~soagen.program.statements.Program.sparse_column_loops`: on a tree, a loop per run
  of columns, its body skipping the rows zero on all of them), which the compiler vectorizes
  across columns;
* ``kkt_analytic``: the same with ∂(Mθ̈ + C + G)/∂x by the analytical recursion of
  :mod:`soagen.passes.analytic_derivatives` and forward mode of J*f only.

The derivatives of the impulse dynamics (:func:`impulse_dynamics_derivatives`) come from the
same factors and column solves, the impact's conditions differentiated the same way.

Derivatives with respect to q are in the tangent space, as in
:mod:`soagen.passes.derivatives`.
"""
from __future__ import annotations

import sympy as sp

from soagen.passes.contact import plus_baumgarte
from soagen.passes.dynamics import bias_torques, impulse_torques
from soagen.passes.derivatives import directions, fixed_input_tangents, inner_program, tangent_seeds
from soagen.passes.kinematics import jacobian_rows
from soagen.passes.ldl import ldl, ldl_backward, ldl_forward, ldl_solve
from soagen.passes.sweeps import (ZERO6, Sweeps, accelerate, forces_tip_to_base, mass_matrix_ltdl, project, tip_accelerations,
                                  tip_forces, velocities)
from soagen.passes.tangent import jacobian, replay, velocity_seeds


def contact_dynamics_derivatives_forward(prog, robot, q, qd, tau):
    """θ̈, f and their derivatives along q, q̇, τ by forward-mode differentiation of the
    contact dynamics (FD2, the guarded LDLᵀ of Ω(0), the tip-force accelerations [RJK (18)])."""
    from soagen.passes.contact import contact_dynamics

    inner = inner_program(prog, robot, contact_dynamics, (q, qd, tau), ("q", "qd", "tau"))
    seeds = tangent_seeds(prog, robot, q, qd)
    seeds.update(velocity_seeds("tau", tau))
    T = replay(prog, inner, seeds)
    qdd, f = inner.outputs[0].symbols, inner.outputs[1].symbols
    n = robot.nv
    return ([[T.value(x) for x in qdd], [T.value(x) for x in f]]
            + [jacobian(T, out, directions(d, n)) for out in (qdd, f) for d in ("q", "qd", "tau")])


def tip_accelerations_at(prog, robot, q, qd, qdd, *baumgarte):
    """Jθ̈ + J̇θ̇: the tips' classical accelerations at θ̈, α(k) = φ*α(p) + H*θ̈ + a [RK (2.26)],
    α(0) [RK (4.23)]; ``baumgarte`` (kp, kd, x_ref), each (r,): plus kp∘(p − x_ref) + kd∘(Jθ̇)
    (:func:`~soagen.passes.contact.plus_baumgarte`); a list (r,)."""
    sw = Sweeps(prog, robot, q)
    vel = velocities(sw, qd)
    alpha = [None] * robot.nb
    for k in sw.base_to_tip():
        p = robot.bodies[k].parent
        alpha[k] = accelerate(sw, vel, k, ZERO6 if p < 0 else alpha[p], sw.part(qdd, k))
    return [plus_baumgarte(sw, vel.V, tip_accelerations(sw, vel.V, alpha), baumgarte)]


def tip_force_torques(prog, robot, q, qd, f):
    """J*f: the joint torques of the tip forces alone, B f(0) then the force pass [RK (2.29)]
    and T = Hf [RK (2.30)] (``qd`` unused: the signature of :func:`_tangent_columns`)."""
    sw = Sweeps(prog, robot, q)
    forces = tip_forces(sw, f)
    forces_tip_to_base(sw, forces)
    return [project(sw, forces)]


def _id_columns(prog, robot, q, qd, qdd, f, analytic):
    """A = ∂ID/∂q, ∂ID/∂q̇ at (θ̈, f), ID with the tip forces: forward mode of it, or (``analytic``)
    the analytical recursion of :mod:`soagen.passes.analytic_derivatives` for Mθ̈ + C + G plus
    forward mode of the short program J*f."""
    from soagen.passes.dynamics import inverse_dynamics_tip_force

    if not analytic:
        return fixed_input_tangents(prog, robot, inverse_dynamics_tip_force, q, qd, [("qdd", qdd), ("f", f)])
    from soagen.passes.analytic_derivatives import inverse_dynamics_derivatives_analytic

    n = robot.nv
    dq, dqd = inverse_dynamics_derivatives_analytic(prog, robot, q, qd, qdd)       # row-major (n, n)
    jtf = fixed_input_tangents(prog, robot, tip_force_torques, q, qd, [("f", f)])["q"]
    return {"q": [[prog.let(dq[i * n + j] + jtf[i][j]) for j in range(n)] for i in range(n)],
            "qd": [[dqd[i * n + j] for j in range(n)] for i in range(n)]}


def _solve_contact_ltdl(sw, qd, tau, L, dinv, Jh, DJh, baumgarte=()):
    """θ̈ and f of the contact dynamics through the LTDL factors of M the derivatives solve with:
    T' = T − C − G by Newton–Euler at θ̈ = 0 [RK (4.17)], w = D⁻¹L⁻¹PT' (so θ̈_f = PL⁻ᵀw), the tips'
    free accelerations α_f(0) = Ĵw + J̇θ̇ [RK (4.23)], Ω(0) = ĴD⁻¹Ĵᵀ factored with every pivot guarded
    as the contact solve does [KJR (61)], Ω(0)f = α_f(0), and θ̈ = PL⁻ᵀ(w − D⁻¹Ĵᵀf): M θ̈ = T' − J*f;
    ``baumgarte`` (kp, kd, x_ref): α_f(0) + kp∘(p − x_ref) + kd∘(Jθ̇) on the right (:func:`plus_baumgarte`).
    Returns θ̈ (n), f (r) and the LDLᵀ factors of Ω(0)."""
    prog, n, r = sw.prog, sw.robot.nv, len(Jh)
    Tp, vel, zeta = bias_torques(sw, prog, tau, qd)
    prog.banner("free accelerations through the LTDL factors: w = D^-1 L^-1 P T', alpha_f(0) = J^ w + Jdot qd",
                level=0)
    w = [prog.let(y * dk) for y, dk in zip(ldl_forward(prog, L, Tp[::-1]), dinv)]
    jdqd = tip_accelerations(sw, vel.V, zeta, gravity=True)            # J̇θ̇, r
    a_free = plus_baumgarte(sw, vel.V, [prog.let(jdqd[i] + sum(Jh[i][k] * w[k] for k in range(n)))
                                        for i in range(r)], baumgarte)
    L_om, dinv_om = _factor_omega(prog, Jh, DJh)
    prog.banner("contact forces: Omega(0) f = alpha_f(0); theta'' = P L^-T (w - D^-1 J^* f)", level=0)
    f = ldl_solve(prog, L_om, dinv_om, a_free)
    qdd = ldl_backward(prog, L, [prog.let(w[k] - sum(DJh[i][k] * f[i] for i in range(r))) for k in range(n)])[::-1]
    return qdd, f, L_om, dinv_om


def _factor_omega(prog, Jh, DJh):
    """The LDLᵀ factors (L, 1/d) of Ω(0) = ĴD⁻¹Ĵᵀ (r × r), every pivot guarded as the contact
    solve does [KJR (61)]; ``Jh`` the rows of Ĵ = J P L⁻ᵀ, ``DJh`` those of (D⁻¹Ĵᵀ)ᵀ (r × n)."""
    r, n = len(Jh), len(Jh[0]) if Jh else 0
    prog.banner("Omega(0) = J^ D^-1 J^*, guarded LDL^T -- [KJR (61)]", level=0)
    Om = [[None] * r for _ in range(r)]
    for i in range(r):
        for j in range(i, r):
            Om[i][j] = Om[j][i] = prog.let(sum(DJh[i][k] * Jh[j][k] for k in range(n)))
    L_om, _, dinv_om = ldl(prog, Om, prog.options.pivot_ratio)
    return L_om, dinv_om


def _ltdl_and_jhat(sw):
    """The LTDL factors (L, 1/d) of M [RK (3.20)] (those of the reversed M: P M P = L D Lᵀ, P the
    exchange), J's rows (r × n), and the rows of Ĵ = J P L⁻ᵀ and of (D⁻¹Ĵᵀ)ᵀ (r × n, reversed order)."""
    prog, n, r = sw.prog, sw.robot.nv, sw.robot.tip_rows
    prog.banner("J, J^ = J P L^-T and Z = M^-1 J* by the LTDL factors of M", level=0)
    L, dinv = mass_matrix_ltdl(sw)
    J = jacobian_rows(sw)
    Jh = [ldl_forward(prog, L, J[c][::-1]) for c in range(r)]
    DJh = [[prog.let(dinv[k] * Jh[c][k]) for k in range(n)] for c in range(r)]
    return L, dinv, J, Jh, DJh


def _kkt_column(L, dinv, Jh, DJh, L_om, dinv_om):
    """The body of the loops that solve [M J*; J 0][∂x; ∂f] = −[a; b] column by column: for one
    column a (n) and b (r), −∂x = M⁻¹(a + J*∂f) and ∂f = Λ(b − Zᵀa), Z = M⁻¹J*, through the halves
    of the M solve: w = D⁻¹L⁻¹Pa gives Zᵀa = Ĵw, and M⁻¹(a + J*∂f) = P L⁻ᵀ(w + D⁻¹Ĵᵀ∂f); Ĵ keeps
    J's zeros (a tip's rows reach only its ancestors), where Zᵀ is dense.  ``kernel(body, a, b)``
    -> (∂x, ∂f)."""
    n, r = len(L), len(Jh)

    def kernel(body, a, b):
        y = ldl_forward(body, L, list(a)[::-1])
        w = [body.let(y[k] * dinv[k]) for k in range(n)]
        rhs = [body.let(b[i] - sum(Jh[i][k] * w[k] for k in range(n))) for i in range(r)]
        x = ldl_solve(body, L_om, dinv_om, rhs)
        z = [body.let(w[k] + sum(DJh[i][k] * x[i] for i in range(r))) for k in range(n)]
        return [body.let(-v) for v in ldl_backward(body, L, z)[::-1]], x

    return kernel


def contact_dynamics_derivatives_kkt(prog, robot, q, qd, tau, analytic=False, baumgarte=()):
    """θ̈, f and their derivatives along q, q̇, τ from the differentiated KKT conditions,
    solved with the LTDL factors of M and the LDLᵀ factors of Ω(0) = ĴD⁻¹Ĵᵀ, θ̈ and f
    themselves included (:func:`_solve_contact_ltdl`); ``analytic``: ∂ID/∂x by the
    analytical recursion (:func:`_id_columns`); ``baumgarte`` (kp, kd, x_ref), each (r,): the
    tips held at Jθ̈ + J̇θ̇ = −kp∘(p − x_ref) − kd∘(Jθ̇), B the derivative of Jθ̈ + J̇θ̇ + kp∘(p − x_ref)
    + kd∘(Jθ̇) (gains and x_ref fixed)."""
    n, r = robot.nv, robot.tip_rows
    sw = Sweeps(prog, robot, q)
    L, dinv, _, Jh, DJh = _ltdl_and_jhat(sw)
    qdd, f, L_om, dinv_om = _solve_contact_ltdl(sw, qd, tau, L, dinv, Jh, DJh, baumgarte)
    prog.banner("A = dID/dx at (qdd, f), B = d(J qdd + Jdot qd [+ kp (p - x_ref) + kd J qd])/dx at qdd", level=0)
    A = _id_columns(prog, robot, q, qd, qdd, f, analytic)
    B = fixed_input_tangents(prog, robot, tip_accelerations_at, q, qd,
                             [("qdd", qdd), *zip(("kp", "kd", "x_ref"), baumgarte)])

    solve = _kkt_column(L, dinv, Jh, DJh, L_om, dinv_om)

    # τ: A = ∂ID/∂τ = −1, B = 0, so ∂f/∂τ = ΛZᵀ and ∂θ̈/∂τ = M⁻¹ − Z ∂f/∂τ by the same solve
    prog.banner("d f = Lambda (B - Z* A), d qdd = -M^-1 (A + J* d f): A, B written (tau: A = -1, B = 0), then "
                "solved column by column", level=0)
    minus_one = [-1 if k == j else 0 for k in range(n) for j in range(n)]
    written = {d: ([A[d][k][j] for k in range(n) for j in range(n)], [B[d][i][j] for i in range(r) for j in range(n)])
               for d in ("q", "qd")}
    written["tau"] = (minus_one, [0] * (r * n))
    # loops per direction: one body for all three ran 6-7% slower
    for (a, b), d in zip(((2, 5), (3, 6), (4, 7)), ("q", "qd", "tau")):
        prog.sparse_column_loops(n, [(a, n), (b, r)], lambda body, cols: list(solve(body, *cols)), written[d])
    return [qdd, f] + [written[d][0] for d in ("q", "qd", "tau")] + [written[d][1] for d in ("q", "qd", "tau")]


def contact_dynamics_derivatives_kkt_analytic(prog, robot, q, qd, tau):
    """:func:`contact_dynamics_derivatives_kkt` with ∂(Mθ̈ + C + G)/∂x by the analytical recursion of
    Carpentier & Mansard (RSS 2018)."""
    return contact_dynamics_derivatives_kkt(prog, robot, q, qd, tau, analytic=True)


def contact_dynamics_baumgarte_derivatives(prog, robot, q, qd, tau, kp, kd, x_ref, analytic=False):
    """θ̈, f of :func:`~soagen.passes.contact.contact_dynamics_baumgarte` and their derivatives along
    q, q̇, τ: :func:`contact_dynamics_derivatives_kkt` with the Baumgarte terms in α_f(0) and in B."""
    return contact_dynamics_derivatives_kkt(prog, robot, q, qd, tau, analytic, (kp, kd, x_ref))


def contact_dynamics_baumgarte_derivatives_analytic(prog, robot, q, qd, tau, kp, kd, x_ref):
    """:func:`contact_dynamics_baumgarte_derivatives` with ∂(Mθ̈ + C + G)/∂x by the analytical recursion of
    Carpentier & Mansard (RSS 2018)."""
    return contact_dynamics_baumgarte_derivatives(prog, robot, q, qd, tau, kp, kd, x_ref, analytic=True)


def tip_velocities_at(prog, robot, q, qd, w):
    """J w: the tips' velocities at θ̇ = ``w`` (:func:`tip_accelerations_at` at θ̇ = 0, θ̈ = w;
    ``qd`` unused)."""
    return tip_accelerations_at(prog, robot, q, [sp.Integer(0)] * robot.nv, w)


def impulse_dynamics_derivatives(prog, robot, q, qd, e):
    """θ̇⁺, p of an impact of every tip with restitution e (:func:`soagen.passes.contact.impulse_dynamics`)
    and their derivatives along q (tangent space) and θ̇⁻, from its conditions differentiated at the
    solution: M(θ̇⁺ − θ̇⁻) + J*p = 0 and J(θ̇⁺ + eθ̇⁻) = 0 give
    [M J*; J 0][∂θ̇⁺; ∂p] = −[A; B] with, along q, A = ∂(MΔθ̇ + J*p)/∂q at fixed Δθ̇ = θ̇⁺ − θ̇⁻ and p
    and B = ∂(Jw)/∂q at fixed w = θ̇⁺ + eθ̇⁻ (forward mode of those two short programs), and along
    θ̇⁻, A = −M and B = eJ, so that ∂p/∂θ̇⁻ = (1 + e)ΛJ and ∂θ̇⁺/∂θ̇⁻ = 1 − Z ∂p/∂θ̇⁻, Z = M⁻¹J*.
    θ̇⁺ and p themselves: Ω(0)p = (1 + e)Jθ̇⁻, θ̇⁺ = θ̇⁻ − M⁻¹J*p [RJK (18)].  Everything is solved
    with the LTDL factors of M and the guarded LDLᵀ of Ω(0) = ĴD⁻¹Ĵᵀ, the derivatives in loops over
    their columns (:func:`_kkt_column` along q)."""
    n, r = robot.nv, robot.tip_rows
    sw = Sweeps(prog, robot, q)
    L, dinv, J, Jh, DJh = _ltdl_and_jhat(sw)
    L_om, dinv_om = _factor_omega(prog, Jh, DJh)
    prog.banner("impulses: Omega(0) p = (1 + e) J qd; qd+ = qd - P L^-T D^-1 J^* p -- [RJK (18)]", level=0)
    gain = prog.let(1 + e[0])
    p = ldl_solve(prog, L_om, dinv_om, [prog.let(gain * sum(J[c][k] * qd[k] for k in range(n))) for c in range(r)])
    jump = ldl_backward(prog, L, [prog.let(-sum(DJh[i][k] * p[i] for i in range(r))) for k in range(n)])[::-1]
    qd_plus = [prog.let(v + d) for v, d in zip(qd, jump)]
    w = [prog.let(v + e[0] * u) for v, u in zip(qd_plus, qd)]
    prog.banner("A = d(M (qd+ - qd) + J* p)/dq, B = d(J (qd+ + e qd))/dq", level=0)
    A = fixed_input_tangents(prog, robot, impulse_torques, q, qd, [("dv", jump), ("p", p)])["q"]
    B = fixed_input_tangents(prog, robot, tip_velocities_at, q, qd, [("w", w)])["q"]
    prog.banner("d p = Lambda (B - Z* A), d qd+ = -M^-1 (A + J* d p): A, B written along q, e_j and (1 + e) J e_j "
                "along qd, then solved column by column", level=0)
    solve = _kkt_column(L, dinv, Jh, DJh, L_om, dinv_om)
    written_q = ([A[k][j] for k in range(n) for j in range(n)], [B[i][j] for i in range(r) for j in range(n)])
    prog.sparse_column_loops(n, [(2, n), (4, r)], lambda body, cols: list(solve(body, *cols)), written_q)

    def velocity_column(body, eye, b):
        """Column j along θ̇⁻, written as e_j and (1 + e)J e_j: ∂p = Λ(1 + e)J e_j, ∂θ̇⁺ = e_j − Z ∂p."""
        x = ldl_solve(body, L_om, dinv_om, b)
        z = [body.let(sum(DJh[i][k] * x[i] for i in range(r))) for k in range(n)]
        return [body.let(a - v) for a, v in zip(eye, ldl_backward(body, L, z)[::-1])], x

    eye = [sp.Integer(int(i == j)) for i in range(n) for j in range(n)]
    scaled_J = [prog.let(gain * J[i][j]) for i in range(r) for j in range(n)]
    prog.sparse_column_loops(n, [(3, n), (5, r)], lambda body, cols: list(velocity_column(body, *cols)),
                             (eye, scaled_J))
    return [qd_plus, p, written_q[0], eye, written_q[1], scaled_J]
