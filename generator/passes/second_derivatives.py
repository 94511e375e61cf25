"""Makers of the second derivatives of the dynamics (see :mod:`soagen.passes.dynamics` for what a
maker is): the tensors of inverse dynamics in the layout of Pinocchio's
``ComputeRNEASecondOrderDerivatives``, and the contracted Hessians an optimizer asks for, of
λᵀID, λᵀFD and λᵀq̈ + λ_fᵀf of the contact dynamics.

Directions along q are tangent directions, as in :mod:`soagen.passes.derivatives`
(:meth:`~soagen.model.robot.Robot.integrate`, q ⊕ δq).  A second derivative along q is the
*iterated local* one, Pinocchio's: entry (j, k) differentiates along direction k at q the first
derivative along j, ∂/∂ε_k [∂/∂δ_j f((q ⊕ ε_k e_k) ⊕ δ_j e_j)].  For directions of two different
joints, or of one 1-dof joint, it is symmetric; within one spherical or floating joint it is not
(the left-invariant fields of SO(3), SE(3) do not commute), and the Hessian of δq ↦ f(q ⊕ δq)
at 0 is its symmetric part (the antisymmetric ½[X_j, X_k] term of the exponential chart
cancels).

Two programs that differentiate themselves:

* forward over forward, for the tensors: the forward-mode first derivatives of Newton–Euler
  [RK (2.24)–(2.30)] (:func:`soagen.passes.derivatives.inverse_dynamics_derivatives`, and M as
  the tangent along q̈) recorded as an inner program and replayed with tangents along q and q̇
  (:mod:`soagen.passes.tangent`);
* forward over reverse, for the contracted Hessians: the gradient of wᵀout by one reverse sweep
  of the function's own program (:mod:`soagen.passes.adjoint`), recorded as an inner program and
  replayed with tangents along q and q̇, one Hessian–vector product per direction
  [Griewank & Walther, *Evaluating Derivatives*, 2nd ed. 2008, §5.4].  The third block (q̈ or τ)
  enters linearly: its rows come from the tangents of its gradient along q and q̇, its own block
  is 0.
"""
from __future__ import annotations

import sympy as sp

from soagen.passes.adjoint import reverse
from soagen.passes.derivatives import directions, inner_program, tangent_seeds
from soagen.passes.tangent import jacobian, replay, velocity_seeds


# ============================================================ the tensors of inverse dynamics
def _id_first_derivatives(prog, robot, q, qd, qdd):
    """∂τ/∂q (tangent space), ∂τ/∂q̇ and M = ∂τ/∂q̈ by forward mode of Newton–Euler [RK (2.24)–(2.30)];
    row-major (n, n) each."""
    from soagen.passes.dynamics import inverse_dynamics

    inner = inner_program(prog, robot, inverse_dynamics, (q, qd, qdd), ("q", "qd", "qdd"))
    seeds = tangent_seeds(prog, robot, q, qd)
    seeds.update(velocity_seeds("qdd", qdd))
    T = replay(prog, inner, seeds)
    tau = inner.outputs[0].symbols
    return [jacobian(T, tau, directions(d, robot.nv)) for d in ("q", "qd", "qdd")]


def inverse_dynamics_second_derivatives(prog, robot, q, qd, qdd):
    """∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇ and ∂M/∂q, (n, n, n) row-major each, entry [i, j, k] Pinocchio's
    ``d2tau_dqdq(i, j, k)``, ``d2tau_dvdv``, ``dtau_dqdv``, ``dtau_dadq``: output i, first direction j
    (that of the first derivative), second direction k, along q iterated as this module says; by
    forward mode over the forward-mode derivatives of Newton–Euler [RK (2.24)–(2.30)].

    ∂²τ/∂q̇² is symmetric in (j, k) and ∂M/∂q in (i, j): the lower half is the upper's."""
    n = robot.nv
    inner = inner_program(prog, robot, _id_first_derivatives, (q, qd, qdd), ("q", "qd", "qdd"))
    T = replay(prog, inner, tangent_seeds(prog, robot, q, qd))
    dq, dqd, M = (inner.outputs[i].symbols for i in range(3))
    prog.banner("second derivatives: tangents of dtau/dq, dtau/dqd and M along q and qd", level=0)

    def tensor(first, d, mirror=None):
        out = [None] * (n * n * n)
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    if mirror == "jk" and k < j:
                        continue
                    if mirror == "ij" and j < i:
                        continue
                    out[(i * n + j) * n + k] = T.tangent(first[i * n + j], (d, k))
        for i in range(n):
            for j in range(n):
                for k in range(n):
                    if out[(i * n + j) * n + k] is None:
                        a = (i, k, j) if mirror == "jk" else (j, i, k)
                        out[(i * n + j) * n + k] = out[(a[0] * n + a[1]) * n + a[2]]
        return out

    return [tensor(dq, "q"), tensor(dqd, "qd", "jk"), tensor(dq, "qd"), tensor(M, "q", "ij")]


# ============================================================ contracted Hessians, forward over reverse
def _weighted_gradient(maker, names, n_args, seeded):
    """A maker of the gradient of Σ wᵀout of ``maker(prog, robot, *args)`` along the tangent
    directions of q, q̇ and the third argument (``seeded``: its name): three lists (n,); the
    weights, one list per output of ``maker``, follow its ``n_args`` arguments."""

    def gradient(prog, robot, *values):
        args, weights = values[:n_args], values[n_args:]
        inner = inner_program(prog, robot, maker, args, names)
        pairs = [(o, w) for out, ws in zip(inner.outputs, weights) for o, w in zip(out.symbols, ws)]
        A = reverse(prog, inner, pairs)
        seeds = tangent_seeds(prog, robot, args[0], args[1])
        seeds.update(velocity_seeds(seeded, args[2]))
        return [A.gradient(seeds, directions(d, robot.nv)) for d in ("q", "qd", seeded)]

    return gradient


def _multi_dof_joint(robot):
    """Velocity index -> the index of its joint's first direction, for joints with several directions."""
    joint = {}
    for k, b in enumerate(robot.bodies):
        vs = robot.vslice(k)
        if b.nv > 1:
            joint.update({i: vs.start for i in range(vs.start, vs.stop)})
    return joint


def contracted_hessian(prog, robot, maker, args, names, weights, weight_names):
    """The symmetric Hessian (3n, 3n) row-major of φ = Σ wᵀout of ``maker`` along (δq, q̇, x),
    x its third argument, entering linearly (its own block is 0): the gradient of φ by a reverse
    sweep, its tangents along q and q̇ by forward mode.  The q block is the symmetric part of the
    iterated local second derivative; the other blocks are mirrored from one triangle."""
    n = robot.nv
    gradient = _weighted_gradient(maker, names, len(args), names[2])
    inner = inner_program(prog, robot, gradient, (*args, *weights), (*names, *weight_names))
    T = replay(prog, inner, tangent_seeds(prog, robot, args[0], args[1]))
    g_q, g_v, g_x = (inner.outputs[i].symbols for i in range(3))
    prog.banner("Hessian: tangents of the gradient along q and qd", level=0)
    joint = _multi_dof_joint(robot)
    H = [[sp.Integer(0)] * (3 * n) for _ in range(3 * n)]
    for j in range(n):
        for k in range(j, n):
            if j != k and j in joint and joint.get(k) == joint[j]:   # one multi-dof joint: the symmetric part
                H[j][k] = prog.let((T.tangent(g_q[j], ("q", k)) + T.tangent(g_q[k], ("q", j))) / 2)
            else:
                H[j][k] = T.tangent(g_q[j], ("q", k))
            H[n + j][n + k] = T.tangent(g_v[j], ("qd", k))
        for k in range(n):
            H[j][n + k] = T.tangent(g_q[j], ("qd", k))
            H[2 * n + k][j] = T.tangent(g_x[k], ("q", j))
            H[2 * n + k][n + j] = T.tangent(g_x[k], ("qd", j))
    for a in range(3 * n):                      # the other triangle of each block
        for b in range(a):
            if a >= 2 * n > b:                  # the x rows were computed
                H[b][a] = H[a][b]
            else:
                H[a][b] = H[b][a]
    return [x for row in H for x in row]


def inverse_dynamics_hessian(prog, robot, q, qd, qdd, lam):
    """The symmetric Hessian (3n, 3n) of λᵀτ(q ⊕ δq, q̇, q̈) along (δq, q̇, q̈), τ by Newton–Euler
    [RK (2.24)–(2.30)]: forward over reverse of its program.  τ is linear in q̈: the q̈ rows are
    ∂(Mλ)/∂x, the q̈–q̈ block 0."""
    from soagen.passes.dynamics import inverse_dynamics

    return [contracted_hessian(prog, robot, inverse_dynamics, (q, qd, qdd), ("q", "qd", "qdd"), (lam,), ("lam",))]


def forward_dynamics_hessian(prog, robot, q, qd, tau, lam):
    """The symmetric Hessian (3n, 3n) of λᵀθ̈(q ⊕ δq, q̇, τ) along (δq, q̇, τ), θ̈ by the articulated-body
    algorithm FD4 [RK (5.13)–(5.17)]: forward over reverse of its program.  θ̈ is linear in τ: the τ rows
    are ∂(M⁻¹λ)/∂x, the τ–τ block 0."""
    from soagen.passes.dynamics import forward_dynamics_fd4

    return [contracted_hessian(prog, robot, forward_dynamics_fd4, (q, qd, tau), ("q", "qd", "tau"), (lam,),
                               ("lam",))]


def contact_dynamics_hessian(prog, robot, q, qd, tau, lam, lam_f):
    """The symmetric Hessian (3n, 3n) of λᵀθ̈ + λ_fᵀf of the contact dynamics (FD2, the guarded LDLᵀ of
    Ω(0) and the tip-force accelerations [RJK (18)]) along (δq, q̇, τ): forward over reverse of its
    program.  θ̈ and f are linear in τ: the τ–τ block is 0."""
    from soagen.passes.contact import contact_dynamics

    return [contracted_hessian(prog, robot, contact_dynamics, (q, qd, tau), ("q", "qd", "tau"), (lam, lam_f),
                               ("lam", "lam_f"))]
