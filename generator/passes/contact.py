"""Makers of the contact functions (see :mod:`soagen.passes.dynamics` for what a
maker is): every tip in rigid contact with an environment of infinite inertia, the
closed chain of [RJK §5] solved through Ω(0) and the tip-force accelerations
[RJK (18)], never forming M.

Contact dynamics: FD2 [RK (5.5)–(5.7)] gives the free accelerations θ̈_f and the tip
accelerations α_f(0) = Jθ̈_f + J̇θ̇; holding the tips still, Ω(0)f = α_f(0) by the
guarded LDLᵀ of Ω(0) [KJR (61)], and θ̈ = θ̈_f + Δθ̈(f), Δθ̈ = −(I − HψK)*D⁻¹HψB f
[RJK (18)].  Impulse dynamics: Ω(0)p = (1 + e) Jθ̇⁻ with Jθ̇⁻ the tip velocities of
the velocity pass [KJR (41)], θ̇⁺ = θ̇⁻ + Δθ̈(p).  ``f`` and ``p`` (r,) are what each
tip exerts on the environment, world axes at the tip: 3 rows per point tip, 6 per
full tip.

Baumgarte stabilization (``contact_dynamics_baumgarte``, point tips only): the tips' classical
accelerations held at −kp∘(p − x_ref) − kd∘(Jθ̇) instead of 0, row by row (p the tips' world
positions); for Ω(0) a change of right-hand side, Ω(0)f = α_f(0) + kp∘(p − x_ref) + kd∘(Jθ̇).
"""
from __future__ import annotations

from soagen.passes import symbolic as S
from soagen.passes.dynamics import bias_torques
from soagen.passes.ldl import ldl_solve
from soagen.passes.operational_space import factor_omega
from soagen.passes.sweeps import Sweeps, articulated, innovations_solve, tip_accelerations, tip_force_response, velocities
from soagen.passes.tip_rows import tip_rows


def baumgarte_rows(sw, V, kp, kd, x_ref):
    """kp∘(p − x_ref) + kd∘(Jθ̇), (r,): the Baumgarte terms of point tips, p (3 per tip) the tip's
    world position, Jθ̇ its velocity (world axes), from the bodies' velocities ``V`` (body axes);
    ``kp``, ``kd``, ``x_ref`` (r,) per row."""
    prog, rows = sw.prog, []
    for tip in sw.robot.tips:
        assert tip.point, "Baumgarte terms are defined for point tips only"
        R, p = sw.world(tip.body)
        off = S.const_vector(tip.offset)
        position = S.add(prog, p, S.matvec(prog, R, off))                    # world
        rows += zip(position, S.motion_to_tip(prog, R, off, V[tip.body])[1])    # (p, Jθ̇) per row
    return [prog.let(kp[i] * (x - x_ref[i]) + kd[i] * v) for i, (x, v) in enumerate(rows)]


def plus_baumgarte(sw, V, rows, baumgarte):
    """``rows`` (r,), the tips' classical accelerations, plus :func:`baumgarte_rows` where ``baumgarte``
    (kp, kd, x_ref) is given; ``rows`` unchanged where it is empty."""
    if not baumgarte:
        return rows
    return [sw.prog.let(a + b) for a, b in zip(rows, baumgarte_rows(sw, V, *baumgarte))]


def solve_contact(sw, qd, tau, baumgarte=()):
    """FD2's θ̈_f and α_f(0), then Ω(0)f = α_f(0) and θ̈ = θ̈_f + Δθ̈(f) [RJK (18)]; ``baumgarte``
    (kp, kd, x_ref), each (r,): Ω(0)f = α_f(0) + kp∘(p − x_ref) + kd∘(Jθ̇) (:func:`baumgarte_rows`);
    returns θ̈ (n), f (r), the articulated-body quantities and the LDLᵀ factors of Ω(0)."""
    prog, robot = sw.prog, sw.robot
    Tp, vel, zeta = bias_torques(sw, prog, tau, qd)                     # T' = T − C − G, FD2 (5.5)
    art = articulated(sw)
    qdd_free, lam = innovations_solve(sw, art, Tp)                       # (5.6)–(5.7)
    alpha = [S.spatial_add(prog, lam[k], zeta[k]) for k in range(robot.nb)]
    a_free = plus_baumgarte(sw, vel.V, tip_accelerations(sw, vel.V, alpha, gravity=True), baumgarte)  # α_f(0), r
    L, _, dinv = factor_omega(sw, art, prog.options.pivot_ratio)
    prog.banner("contact forces: Omega(0) f = alpha_f(0)", level=0)
    f = ldl_solve(prog, L, dinv, a_free)
    prog.banner("theta'' = theta''_f + delta theta''(f) -- [RJK (18)]", level=0)
    dq = tip_force_response(sw, art, f)
    return [prog.let(a + b) for a, b in zip(qdd_free, dq)], f, art, L, dinv


def contact_dynamics(prog, robot, q, qd, tau):
    """θ̈ and the contact forces f with J θ̈ + J̇θ̇ = 0 at every tip: FD2, then
    Ω(0)f = α_f(0) and θ̈ = θ̈_f + Δθ̈(f) [RJK (18)]."""
    qdd, f, _, _, _ = solve_contact(Sweeps(prog, robot, q), qd, tau)
    return [qdd, f]


def contact_dynamics_baumgarte(prog, robot, q, qd, tau, kp, kd, x_ref):
    """θ̈ and f with every point tip's classical acceleration held at the Baumgarte target,
    J θ̈ + J̇θ̇ = −kp∘(p − x_ref) − kd∘(Jθ̇): FD2, then Ω(0)f = α_f(0) + kp∘(p − x_ref) + kd∘(Jθ̇)
    and θ̈ = θ̈_f + Δθ̈(f) [RJK (18)]."""
    qdd, f, _, _, _ = solve_contact(Sweeps(prog, robot, q), qd, tau, (kp, kd, x_ref))
    return [qdd, f]


def impulse_dynamics(prog, robot, q, qd, e):
    """θ̇⁺ and the impulses p of an impact of every tip with restitution e:
    Ω(0)p = (1 + e)Jθ̇⁻, θ̇⁺ = θ̇⁻ + Δθ̈(p) [RJK (18)]."""
    sw = Sweeps(prog, robot, q)
    V = velocities(sw, qd).V
    sw.banner("tip velocities J qd = phi*(k, 0) V(k)", "KJR (41)")
    v_tip = []
    for tip in robot.tips:
        R, _ = sw.world(tip.body)
        w, v = S.motion_to_tip(prog, R, S.const_vector(tip.offset), V[tip.body])
        v_tip += tip_rows(tip, list(w) + list(v))
    gain = prog.let(1 + e[0])
    rhs = [prog.let(gain * x) for x in v_tip]
    art = articulated(sw)
    L, _, dinv = factor_omega(sw, art, prog.options.pivot_ratio)
    prog.banner("impulses: Omega(0) p = (1 + e) J qd", level=0)
    p = ldl_solve(prog, L, dinv, rhs)
    dq = tip_force_response(sw, art, p)
    return [[prog.let(a + b) for a, b in zip(qd, dq)], p]
