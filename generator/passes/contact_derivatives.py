"""Makers of the derivatives of the contact dynamics (see :mod:`soagen.passes.dynamics`
for what a maker is), two members of the ``contact_dynamics_derivatives`` family:

* ``forward_mode``: forward-mode differentiation of the recorded contact dynamics
  (:mod:`soagen.passes.contact`), one tangent per direction;
* ``kkt``: differentiating the contact conditions ID(q, q̇, θ̈, f) = τ (inverse dynamics
  with the tip forces, τ = Mθ̈ + C + G + J*f) and Jθ̈ + J̇θ̇ = 0 at the solution:
  [M J*; J 0][∂θ̈; ∂f] = −[A; B], A = ∂ID/∂x and B = ∂(Jθ̈ + J̇θ̇)/∂x at fixed (θ̈, f)
  by forward mode of those two (much shorter) programs, then
  ∂f = Λ(0)(B − ZᵀA), Z = M⁻¹J*, through the LDLᵀ factors of Ω(0) the contact solve already
  has, and ∂θ̈ = −M⁻¹(A + J*∂f) by the LTDL factors of M [RK (3.20)] (sparse on trees), ZᵀA
  and J*∂f taken inside the two halves of that solve with the sparse Ĵ = J P L⁻ᵀ instead of
  the dense Z, A and B written into the outputs and solved in place, one loop body over their columns
  (:meth:`~soagen.program.statements.Program.column_loop`);
* ``kkt_analytic``: the same with ∂(Mθ̈ + C + G)/∂x by the analytical recursion of
  :mod:`soagen.passes.analytic_derivatives` and forward mode of J*f only.

Derivatives with respect to q are in the tangent space, as in
:mod:`soagen.passes.derivatives`.
"""
from __future__ import annotations


from soagen.passes.contact import solve_contact
from soagen.passes.derivatives import directions, fixed_input_tangents, inner_program, tangent_seeds
from soagen.passes.kinematics import jacobian_rows
from soagen.passes.ldl import ldl_backward, ldl_forward, ldl_inverse, ldl_solve, reverse
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


def tip_accelerations_at(prog, robot, q, qd, qdd):
    """Jθ̈ + J̇θ̇: the tips' classical accelerations at θ̈, α(k) = φ*α(p) + H*θ̈ + a [RK (2.26)],
    α(0) [RK (4.23)]; a list (r,)."""
    sw = Sweeps(prog, robot, q)
    vel = velocities(sw, qd)
    alpha = [None] * robot.nb
    for k in sw.base_to_tip():
        p = robot.bodies[k].parent
        alpha[k] = accelerate(sw, vel, k, ZERO6 if p < 0 else alpha[p], sw.part(qdd, k))
    return [tip_accelerations(sw, vel.V, alpha)]


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


def contact_dynamics_derivatives_kkt(prog, robot, q, qd, tau, analytic=False):
    """θ̈, f and their derivatives along q, q̇, τ from the differentiated KKT conditions,
    solved with the factors of Ω(0) (contact solve) and of M (LTDL); ``analytic``: ∂ID/∂x by
    the analytical recursion (:func:`_id_columns`)."""
    n, r = robot.nv, robot.tip_rows
    sw = Sweeps(prog, robot, q)
    qdd, f, _, L_om, dinv_om = solve_contact(sw, qd, tau)
    prog.banner("A = dID/dx at (qdd, f), B = d(J qdd + Jdot qd)/dx at qdd", level=0)
    A = _id_columns(prog, robot, q, qd, qdd, f, analytic)
    B = fixed_input_tangents(prog, robot, tip_accelerations_at, q, qd, [("qdd", qdd)])
    prog.banner("J, J^ = J P L^-T and Z = M^-1 J* by the LTDL factors of M", level=0)
    L, dinv = mass_matrix_ltdl(sw)                  # of the reversed M (P M P = L D Lᵀ, P the exchange)
    J = jacobian_rows(sw)
    Jh = [ldl_forward(prog, L, J[c][::-1]) for c in range(r)]            # rows of Ĵ = J P L⁻ᵀ (r × n, reversed)
    DJh = [[prog.let(dinv[k] * Jh[c][k]) for k in range(n)] for c in range(r)]    # rows of (D⁻¹Ĵᵀ)ᵀ
    Zt = [ldl_backward(prog, L, DJh[c])[::-1] for c in range(r)]         # Zᵀ (r × n), Z = M⁻¹J* = P L⁻ᵀ D⁻¹Ĵᵀ

    def solve(body, a, b):
        """−∂θ̈ = M⁻¹(a + J*∂f) and ∂f = Λ(b − Zᵀa) for one column a of A (n) and b of B (r), through
        the halves of the M solve: w = D⁻¹L⁻¹Pa gives Zᵀa = Ĵw, and M⁻¹(a + J*∂f) = P L⁻ᵀ(w + D⁻¹Ĵᵀ∂f);
        Ĵ keeps J's zeros (a tip's rows reach only its ancestors), where Zᵀ is dense."""
        y = ldl_forward(body, L, list(a)[::-1])
        w = [body.let(y[k] * dinv[k]) for k in range(n)]
        rhs = [body.let(b[i] - sum(Jh[i][k] * w[k] for k in range(n))) for i in range(r)]
        x = ldl_solve(body, L_om, dinv_om, rhs)
        z = [body.let(w[k] + sum(DJh[i][k] * x[i] for i in range(r))) for k in range(n)]
        return [body.let(-v) for v in ldl_backward(body, L, z)[::-1]], x

    def kernel(body, cols):
        """The q and q̇ columns j: (A, B) of each in, (∂θ̈, ∂f) of each out."""
        (dqdd_q, df_q), (dqdd_qd, df_qd) = (solve(body, a, b) for a, b in zip(cols[:2], cols[2:]))
        return [dqdd_q, dqdd_qd, df_q, df_qd]

    prog.banner("d f = Lambda (B - Z* A), d qdd = -M^-1 (A + J* d f): A, B written, then solved column by column",
                level=0)
    written = {d: ([A[d][k][j] for k in range(n) for j in range(n)], [B[d][i][j] for i in range(r) for j in range(n)])
               for d in ("q", "qd")}
    prog.column_loop(n, [(2, n), (3, n), (5, r), (6, r)], kernel)
    # τ: A = −1, B = 0: ∂f/∂τ = ΛZᵀ, ∂θ̈/∂τ = M⁻¹ − Z ∂f/∂τ, with M⁻¹ from the same factors
    prog.banner("d f/d tau = Lambda Z*, d qdd/d tau = M^-1 - Z d f/d tau: M^-1 and Z* written, then solved column "
                "by column", level=0)
    Minv = reverse(ldl_inverse(prog, L, dinv))

    def kernel_tau(body, cols):
        """Column j: M⁻¹ e_j and Zᵀe_j in, ∂θ̈/∂τ_j = M⁻¹e_j − Z ∂f/∂τ_j and ∂f/∂τ_j = ΛZᵀe_j out."""
        minv, zt = cols
        x = ldl_solve(body, L_om, dinv_om, zt)
        return [[body.let(minv[k] - sum(Zt[c][k] * x[c] for c in range(r))) for k in range(n)], x]

    prog.column_loop(n, [(4, n), (7, r)], kernel_tau)
    return ([qdd, f, written["q"][0], written["qd"][0], [Minv[i][j] for i in range(n) for j in range(n)],
             written["q"][1], written["qd"][1], [Zt[i][j] for i in range(r) for j in range(n)]])


def contact_dynamics_derivatives_kkt_analytic(prog, robot, q, qd, tau):
    """:func:`contact_dynamics_derivatives_kkt` with ∂(Mθ̈ + C + G)/∂x by the analytical recursion of
    Carpentier & Mansard (RSS 2018)."""
    return contact_dynamics_derivatives_kkt(prog, robot, q, qd, tau, analytic=True)

