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

Two routes:

* for the tensors, the analytical second-order recursion of Singh, Russell & Wensing (IROS 2022,
  arXiv:2203.01497; Pinocchio's ``ComputeRNEASecondOrderDerivatives``) over Carpentier & Mansard's
  forward pass (:mod:`soagen.passes.second_order_recursion`), worked in the frame of one body
  (:func:`frame_bodies`); ∂²τ/∂q̇² from ∂M/∂q and M (:func:`_hamel`).  Forward mode over the analytical
  first derivatives, the route before it, costs 1.7 times the operations on the Panda
  (``benchmarks/second_formulations.py``);
* forward over reverse, for the contracted Hessians (a program that differentiates itself): the
  gradient of wᵀout by one reverse sweep of the function's own program (:mod:`soagen.passes.adjoint`),
  recorded as an inner program and replayed with tangents along q and q̇, one Hessian–vector product per
  direction
  [Griewank & Walther, *Evaluating Derivatives*, 2nd ed. 2008, §5.4].  The third block (q̈ or τ)
  enters linearly: its rows come from the tangents of its gradient along q and q̇, its own block
  is 0.  Inverse dynamics is differentiated so directly; forward and contact dynamics through the
  implicit function (:func:`_implicit_hessian`): the Hessian of the weighted residual of the
  equations they solve (Newton–Euler, and the tips' accelerations), at the solution, with the
  adjoint weights K⁻ᵀw and the first derivatives, solved with the same factors.  Forward over
  reverse of the forward dynamics' own program costs 1.4 (FD CRBA) to 1.6 (FD4) times the operations on
  the Panda (``benchmarks/second_formulations.py``); over the contact solve it took minutes to record
  for a floating base with two feet.
"""
from __future__ import annotations

from dataclasses import dataclass

import sympy as sp

from soagen.passes.adjoint import reverse
from soagen.passes.derivatives import directions, inner_program, tangent_seeds
from soagen.passes.tangent import replay, velocity_seeds


# ============================================================ the tensors of inverse dynamics
def frame_bodies(robot):
    """{root: body m} the fixed frame each tree's tensors are worked in: the frame that coincides with m
    (:func:`soagen.passes.analytic_derivatives.body_frames`).

    The tensors are scalars, the same in any fixed frame; in m's frame the poses, motion subspaces and
    composites near m are sparse and cost little.  m minimizes the estimate Σ over directions of the bodies
    moved, those of a direction on m's path counted twice (their velocities move too, the subtree's with
    them), an estimate made for forward mode (``benchmarks/second_formulations.py``'s tangent routes) that
    also picks the cheapest frame for the recursion: on the Panda, of the frames of its seven bodies, the
    second body's (12,948 operations against 13,993 in the first body's, the base, and 17,323 to 23,785 in
    the others', counted before ∂²τ/∂q̇² went to :func:`_hamel`); on a floating tree, the base."""
    bodies = robot.bodies
    subtree = [1] * len(bodies)
    for k in reversed(range(len(bodies))):                 # parents come before their children
        if bodies[k].parent >= 0:
            subtree[bodies[k].parent] += subtree[k]
    path = [[k] for k in range(len(bodies))]               # k and its ancestors
    for k, b in enumerate(bodies):
        if b.parent >= 0:
            path[k] += path[b.parent]
    out = {}
    for root in (k for k, b in enumerate(bodies) if b.parent < 0):
        tree = [k for k in range(len(bodies)) if path[k][-1] == root]

        def cost(m):
            return sum(bodies[k].nv * (2 * (subtree[root] - subtree[k] + 1) if k in path[m] else subtree[k])
                       for k in tree)

        out[root] = min(tree, key=lambda m: (cost(m), m))
    return out


def tensor(n, entry, mirrored):
    """[i, j, k] row-major (n³,) from ``entry(i, j, k)``, the entries ``mirrored(i, j, k)`` names taken from
    that index triple's (computed) entry instead."""
    out = {}
    for i in range(n):
        for j in range(n):
            for k in range(n):
                m = mirrored(i, j, k)
                out[i, j, k] = out[m] if m else entry(i, j, k)
    return [out[i, j, k] for i in range(n) for j in range(n) for k in range(n)]


def inverse_dynamics_second_derivatives(prog, robot, q, qd, qdd):
    """∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇ and ∂M/∂q, (n, n, n) row-major each, entry [i, j, k] Pinocchio's
    ``d2tau_dqdq(i, j, k)``, ``d2tau_dvdv``, ``dtau_dqdv``, ``dtau_dadq``: output i, first direction j
    (that of the first derivative), second direction k, along q iterated as this module says.

    ∂²τ/∂q², ∂²τ/∂q∂q̇ and ∂M/∂q by the analytical second-order recursion of Singh, Russell & Wensing
    (IROS 2022, arXiv:2203.01497; Pinocchio's ``ComputeRNEASecondOrderDerivatives``) over Carpentier &
    Mansard's forward pass, worked in the frame of the body :func:`frame_bodies` picks
    (:mod:`soagen.passes.second_order_recursion`); ∂²τ/∂q̇² is quadratic-form algebra on ∂M/∂q and M
    (:func:`_hamel`; M from the recursion's composite inertias [RK (3.20)]), with the actuators' friction.
    On the Panda 12,121 operations against 20,521 for forward mode over the analytical first derivatives,
    the formulation before it; the others compared: ``benchmarks/second_formulations.py``."""
    from soagen.passes.analytic_derivatives import forward_pass
    from soagen.passes.second_order_recursion import second_order_backward_pass
    from soagen.passes.sweeps import Sweeps

    n = robot.nv
    sw = Sweeps(prog, robot, q)
    wb = forward_pass(sw, qd, qdd, at=frame_bodies(robot))
    d2q, dqdv, dM, M = second_order_backward_pass(sw, wb)
    prog.banner("second derivatives along qd: Hamel's equations on dM/dq", level=0)
    return [d2q, _hamel(prog, robot, q, qd, dM, M), dqdv, dM]


def _hamel(prog, robot, q, qd, dM, M):
    """∂²τ_i/∂q̇_j∂q̇_k from ∂M/∂q and M, plus the actuators' friction on [i, i, i].

    τ = Mq̈ + Q(q̇) + g with Q quadratic, from Hamel's equations for the tangent directions X_a (q ⊕ δ:
    left-invariant fields, [X_a, X_b] = Σ_l c^l_ab X_l; c ≠ 0 only within a spherical joint,
    c^l_ab = ε_abl, and a floating one, the bracket of se(3) in [ω; v] order):
    τ_i = d/dt (Mq̇)_i + Σ_jl c^l_ij q̇_j (Mq̇)_l − X_i(½ q̇ᵀMq̇) + g_i, so
    ∂²τ_i/∂q̇_j∂q̇_k = X_k M_ij + X_j M_ik − X_i M_jk + Σ_l (c^l_ij M_lk + c^l_ik M_lj)
    (for 1-dof joints twice Christoffel's symbol of the first kind).  Friction: ∂²/∂q̇² of
    Coulomb·q̇/√(q̇² + ε²) = −3 Coulomb ε² q̇ / (q̇² + ε²)^{5/2}.  ``dM`` row-major (n, n, n), [i, j, k] =
    X_k M_ij; ``M`` row-major (n, n); -> row-major (n³,) (:func:`tensor`)."""
    from soagen.passes.actuators import per_actuator
    from soagen.passes.sweeps import Sweeps

    n = robot.nv
    sw = Sweeps(prog, robot, q)

    def curvature(i, eps):
        coulomb = sw.actuator(i, 2)
        if coulomb == 0:
            return sp.Integer(0)
        r = prog.let(1 / prog.let(sp.sqrt(prog.let(qd[i] * qd[i] + eps * eps))))   # 1/√(q̇² + ε²)
        r2 = prog.let(r * r)
        return -3 * coulomb * eps * eps * qd[i] * prog.let(r2 * r2) * r

    friction = per_actuator(sw, curvature)
    c = _structure_constants(robot)
    d = lambda i, j, k: dM[(i * n + j) * n + k]       # noqa: E731

    def entry(i, j, k):
        bracket = sum((s * M[l * n + k] for l, s in c.get((i, j), ())), sp.Integer(0)) + sum(
            (s * M[l * n + j] for l, s in c.get((i, k), ())), sp.Integer(0))
        return prog.let(d(i, j, k) + d(i, k, j) - d(j, k, i) + bracket + (friction[i] if i == j == k else 0))

    return tensor(n, entry, lambda i, j, k: (i, k, j) if k < j else None)


def _structure_constants(robot):
    """{(a, b): [(l, c^l_ab)]} of the tangent directions' brackets [X_a, X_b] = Σ_l c^l_ab X_l, nonzero
    within a spherical joint ([ω_a, ω_b] = ω_{a×b}) and a floating one (se(3) in [ω; v] order:
    [ω_a, ω_b] = ω_{a×b}, [ω_a, v_b] = [v_a, ω_b] = v_{a×b})."""
    out = {}
    for k, b in enumerate(robot.bodies):
        if b.nv == 1:
            continue
        s = robot.vslice(k).start
        for x in range(3):
            for y in range(3):
                if x != y:
                    z, sign = 3 - x - y, (1 if (y - x) % 3 == 1 else -1)        # e_x × e_y = sign e_z
                    out[s + x, s + y] = [(s + z, sign)]
                    if b.nv == 6:
                        out[s + x, s + 3 + y] = out[s + 3 + x, s + y] = [(s + 3 + z, sign)]
    return out


# ============================================================ contracted Hessians, forward over reverse
def _weighted_gradient(maker, names, n_args, n_linear):
    """A maker of the gradient of Σ wᵀout of ``maker(prog, robot, *args)`` along the tangent
    directions of q, q̇ and each of the next ``n_linear`` arguments (lists (n,) or (r,)), followed
    by the outputs themselves; the weights, one list per output of ``maker``, follow its ``n_args``
    arguments."""

    def gradient(prog, robot, *values):
        args, weights = values[:n_args], values[n_args:]
        inner = inner_program(prog, robot, maker, args, names)
        pairs = [(o, w) for out, ws in zip(inner.outputs, weights) for o, w in zip(out.symbols, ws)]
        A = reverse(prog, inner, pairs)
        seeds = tangent_seeds(prog, robot, args[0], args[1])
        for name, x in zip(names[2:2 + n_linear], args[2:2 + n_linear]):
            seeds.update(velocity_seeds(name, x))
        grads = [A.gradient(seeds, directions("q", robot.nv)), A.gradient(seeds, directions("qd", robot.nv))]
        grads += [A.gradient(seeds, directions(name, len(x))) for name, x in zip(names[2:2 + n_linear],
                                                                                 args[2:2 + n_linear])]
        return grads + [[A.value(o) for o in out.symbols] for out in inner.outputs]

    return gradient


def _hessian_tangents(prog, robot, maker, args, names, weights, weight_names, fixed=(), n_linear=1):
    """Forward over reverse: the gradient of φ = Σ wᵀout of ``maker`` (:func:`_weighted_gradient`)
    recorded as an inner program and replayed with tangents along q and q̇.  ``fixed``: the
    indices of ``args`` and ``weights`` (counted on, after ``args``) that are expressions of
    ``prog`` held fixed (no tangent).  Returns the replay and the inner outputs: the gradients along
    q, q̇ and the ``n_linear`` arguments after them, then the outputs of ``maker``."""
    values = (*args, *weights)
    symbols = [[sp.Symbol(f"{name}[{i}]") for i in range(len(v))] if k in fixed else v
               for k, (name, v) in enumerate(zip((*names, *weight_names), values))]
    held = {s: x for k in fixed for s, x in zip(symbols[k], values[k])}
    gradient = _weighted_gradient(maker, names, len(args), n_linear)
    inner = inner_program(prog, robot, gradient, symbols, (*names, *weight_names))
    T = replay(prog, inner, tangent_seeds(prog, robot, args[0], args[1]), inputs=held)
    return T, [a.symbols for a in inner.outputs]


def _multi_dof_joint(robot):
    """Velocity index -> the index of its joint's first direction, for joints with several directions."""
    joint = {}
    for k, b in enumerate(robot.bodies):
        vs = robot.vslice(k)
        if b.nv > 1:
            joint.update({i: vs.start for i in range(vs.start, vs.stop)})
    return joint


def _qq_entry(prog, robot, T, g_q, j, k):
    """Entry (j, k), j ≤ k, of the q block: the iterated derivative, its symmetric part within one
    multi-dof joint (elsewhere it is symmetric)."""
    joint = _multi_dof_joint(robot)
    if j != k and j in joint and joint.get(k) == joint[j]:
        return prog.let((T.tangent(g_q[j], ("q", k)) + T.tangent(g_q[k], ("q", j))) / 2)
    return T.tangent(g_q[j], ("q", k))


@dataclass(frozen=True)
class _by_shells:
    """``Program.output_order`` for a Hessian H (m, m) row-major: its entries by max(row, column), the
    shells of a growing leading block: of recording order, plain output order and this, it left the fewest
    values live at once (on the Panda's contracted Hessians gcc's stack traffic 34 % lower than in recording
    order, the time 0.81–0.86, interleaved; :mod:`soagen.program.demand`).  A class, not a closure: programs
    travel between processes."""

    m: int

    def __call__(self, name, i):
        return max(divmod(i, self.m))


def _mirrored(H, n):
    """Row-major (3n, 3n) of the blocks ``H`` holds: the upper triangle of the (δq, q̇) rows and the
    x rows' (δq, q̇) columns; the rest mirrored, the x–x block 0."""
    for a in range(3 * n):
        for b in range(a):
            if a >= 2 * n > b:                  # the x rows were computed
                H[b][a] = H[a][b]
            else:
                H[a][b] = H[b][a]
    return [x for row in H for x in row]


def contracted_hessian(prog, robot, maker, args, names, weights, weight_names):
    """The symmetric Hessian (3n, 3n) row-major of φ = Σ wᵀout of ``maker`` along (δq, q̇, x),
    x its third argument, entering linearly (its own block is 0): the gradient of φ by a reverse
    sweep, its tangents along q and q̇ by forward mode.  The q block is the symmetric part of the
    iterated local second derivative; the other blocks are mirrored from one triangle, the q–q̇ block
    taken as the tangents of the q̇ gradient along q (along q̇ only that gradient's tangents are then
    needed: a quarter fewer operations for the Panda's λᵀτ than the q gradient's tangents along q̇)."""
    n = robot.nv
    T, (g_q, g_v, g_x, *_) = _hessian_tangents(prog, robot, maker, args, names, weights, weight_names)
    prog.output_order = _by_shells(3 * n)
    H = [[sp.Integer(0)] * (3 * n) for _ in range(3 * n)]
    for j in range(n):
        for k in range(j, n):
            H[j][k] = _qq_entry(prog, robot, T, g_q, j, k)
            H[n + j][n + k] = T.tangent(g_v[j], ("qd", k))
        for k in range(n):
            H[j][n + k] = T.tangent(g_v[k], ("q", j))
            H[2 * n + k][j] = T.tangent(g_x[k], ("q", j))
            H[2 * n + k][n + j] = T.tangent(g_x[k], ("qd", j))
    return _mirrored(H, n)


def inverse_dynamics_hessian(prog, robot, q, qd, qdd, lam):
    """The symmetric Hessian (3n, 3n) of λᵀτ(q ⊕ δq, q̇, q̈) along (δq, q̇, q̈), τ by Newton–Euler
    [RK (2.24)–(2.30)]: forward over reverse of its program.  τ is linear in q̈: the q̈ rows are
    ∂(Mλ)/∂x, the q̈–q̈ block 0."""
    from soagen.passes.dynamics import inverse_dynamics

    return [contracted_hessian(prog, robot, inverse_dynamics, (q, qd, qdd), ("q", "qd", "qdd"), (lam,), ("lam",))]


def _implicit_hessian(prog, robot, T, g_q, g_v, g_y, residual, solve):
    """The Hessian (3n, 3n) of φ = wᵀy(x), x = (δq, q̇, τ), y the m unknowns of R(δq, q̇, y) = [τ; 0]
    (R linear in y and τ entering with coefficient 1), from the Hessian of ψ = κᵀR, κ = K⁻ᵀw,
    K = ∂R/∂y (symmetric here): differentiating R(z(x)) twice, K y_ab = −∂²R[z_a, z_b], so
    H_φ = −Yᵀ H_ψ Y, Y = ∂z/∂x = [[1, 0], [G, K⁻¹E]], G = −K⁻¹D, D = ∂R/∂(δq, q̇), E = [1; 0].
    H_ψ = [[P, Cᵀ], [C, 0]] with C = ∂(∂ψ/∂y)/∂(δq, q̇) = [C_q 0] (∂ψ/∂y does not move with q̇), so with
    W = C_qᵀK⁻¹ (n, m): H_φ = −[[P − [WD; 0] − [WD; 0]ᵀ, [WE; 0]], [[WE; 0]ᵀ, 0]].

    ``T`` replays the gradient of ψ (``g_q``, ``g_v``, ``g_y`` along q, q̇, y) and R (``residual``, m)
    along q and q̇; ``solve(rhs)`` -> K⁻¹rhs (m)."""
    n, m = robot.nv, len(g_y)
    prog.output_order = _by_shells(3 * n)
    D = [[T.tangent(residual[i], d) for d in directions("q", n) + directions("qd", n)] for i in range(m)]
    prog.banner("W = C_q^T K^-1, WD; H = -[[P - WD - (WD)^T, W E], [(W E)^T, 0]]", level=0)
    W = [solve([T.tangent(g_y[i], ("q", j)) for i in range(m)]) for j in range(n)]            # rows j
    WD = [[prog.let(sum((W[j][i] * D[i][b] for i in range(m) if D[i][b] != 0), sp.Integer(0)))
           for b in range(2 * n)] for j in range(n)]
    H = [[sp.Integer(0)] * (3 * n) for _ in range(3 * n)]
    for j in range(n):
        for k in range(j, n):
            H[j][k] = prog.let(WD[j][k] + WD[k][j] - _qq_entry(prog, robot, T, g_q, j, k))
            H[n + j][n + k] = prog.let(-T.tangent(g_v[j], ("qd", k)))
        for k in range(n):
            H[j][n + k] = prog.let(WD[j][n + k] - T.tangent(g_v[k], ("q", j)))
            H[2 * n + k][j] = prog.let(-W[j][k])
    return _mirrored(H, n)


def forward_dynamics_hessian(prog, robot, q, qd, tau, lam):
    """The symmetric Hessian (3n, 3n) of φ = λᵀθ̈(q ⊕ δq, q̇, τ) along x = (δq, q̇, τ) by the implicit
    function (:func:`_implicit_hessian`): θ̈(x) solves ID(δq, q̇, θ̈) = τ, K = M, κ = μ = M⁻¹λ, so
    H_FD = −Yᵀ H_ID(μ) Y with Y = [[1, 0], [G, M⁻¹]], G = ∂θ̈/∂(δq, q̇) = −M⁻¹D, D = ∂ID/∂(δq, q̇).
    θ̈ by composite inertias [RK (3.20)], Newton–Euler [RK (2.24)–(2.30)] and M's LTDL; H_ID(μ) and D
    at θ̈ by forward over reverse of Newton–Euler (D: the tangents of τ itself, on the way)."""
    from soagen.passes.derivatives import m_solve, qdd_and_ltdl
    from soagen.passes.dynamics import inverse_dynamics

    qdd, L, dinv = qdd_and_ltdl(prog, robot, q, qd, tau)
    mu = m_solve(prog, L, dinv, lam)
    prog.banner("Hessian of mu^T ID at qdd, mu = M^-1 lam, and D = dID/d(q, qd): forward over reverse", level=0)
    T, (g_q, g_v, g_a, tau_at) = _hessian_tangents(prog, robot, inverse_dynamics, (q, qd, qdd), ("q", "qd", "qdd"),
                                                   (mu,), ("mu",), fixed=(2, 3))
    return [_implicit_hessian(prog, robot, T, g_q, g_v, g_a, tau_at, lambda rhs: m_solve(prog, L, dinv, rhs))]


def _contact_residual(prog, robot, q, qd, qdd, f):
    """The contact conditions' left sides: ID with the tip forces, Mθ̈ + C + G + J*f [RK (2.24)–(2.30)]
    (n), and the tips' accelerations Jθ̈ + J̇θ̇ [RK (2.26), (4.23)] (r)."""
    from soagen.passes.contact_derivatives import tip_accelerations_at
    from soagen.passes.dynamics import inverse_dynamics_tip_force

    return inverse_dynamics_tip_force(prog, robot, q, qd, qdd, f) + tip_accelerations_at(prog, robot, q, qd, qdd)


def contact_dynamics_hessian(prog, robot, q, qd, tau, lam, lam_f):
    """The symmetric Hessian (3n, 3n) of φ = λᵀθ̈ + λ_fᵀf of the contact dynamics along (δq, q̇, τ) by the
    implicit function (:func:`_implicit_hessian`): y = (θ̈, f) solves Mθ̈ + C + G + J*f = τ and
    Jθ̈ + J̇θ̇ = 0, K = [[M, J*], [J, 0]], (μ, ν) = K⁻¹(λ, λ_f), ψ = μᵀ(Mθ̈ + C + G + J*f) + νᵀ(Jθ̈ + J̇θ̇).
    θ̈, f and every K⁻¹ solve by the LTDL factors of M [RK (3.20)] and the guarded LDLᵀ of
    Ω(0) = ĴD⁻¹Ĵᵀ [KJR (61)] (:mod:`soagen.passes.contact_derivatives`); H_ψ and D at (θ̈, f) by forward over
    reverse of those two programs (Newton–Euler with the tip forces [RK (2.24)–(2.30)], the tips'
    accelerations)."""
    from soagen.passes.contact_derivatives import _kkt_column, _ltdl_and_jhat, _solve_contact_ltdl
    from soagen.passes.sweeps import Sweeps

    n = robot.nv
    sw = Sweeps(prog, robot, q)
    L, dinv, _, Jh, DJh = _ltdl_and_jhat(sw)
    qdd, f, L_om, dinv_om = _solve_contact_ltdl(sw, qd, tau, L, dinv, Jh, DJh)
    kernel = _kkt_column(L, dinv, Jh, DJh, L_om, dinv_om)          # K [x; y] = -[a; b]

    def solve(rhs):
        x, y = kernel(prog, [prog.let(-v) for v in rhs[:n]], [prog.let(-v) for v in rhs[n:]])
        return list(x) + list(y)

    prog.banner("(mu, nu) = K^-1 (lam, lam_f)", level=0)
    kappa = solve(list(lam) + list(lam_f))
    prog.banner("Hessian of mu^T ID_f + nu^T (J qdd + Jdot qd) at (qdd, f), and D: forward over reverse", level=0)
    T, (g_q, g_v, g_a, g_f, r_tau, r_tip) = _hessian_tangents(
        prog, robot, _contact_residual, (q, qd, qdd, f), ("q", "qd", "qdd", "f"), (kappa[:n], kappa[n:]),
        ("mu", "nu"), fixed=(2, 3, 4, 5), n_linear=2)
    return [_implicit_hessian(prog, robot, T, g_q, g_v, g_a + g_f, r_tau + r_tip, solve)]

