"""The closed-chain forward dynamics of two arms holding one point, recorded on symbols:
the maker of :data:`soagen.functions.FORWARD_DYNAMICS` for a
:class:`~soagen.model.closed_chain.ClosedChain` (its module doc has the equations,
[RJK §5.3, (21)–(26)])."""
from __future__ import annotations

def _free_tip_acceleration(sw, result):
    """α_f(0) = φ*(k,0)λ(k) + a(0) − a_g: the true tip acceleration after FD4."""
    from soagen.passes import symbolic as S
    from soagen.passes.sweeps import base_acceleration

    prog = sw.prog
    _, lam, vel, _ = result
    tip = sw.robot.tips[0]
    R, _ = sw.world(tip.body)
    off = S.const_vector(tip.offset)
    w, lin = S.motion_to_tip(prog, R, off, lam[tip.body])
    w_body = vel.V[tip.body][0]
    a0 = S.matvec(prog, R, S.cross(prog, w_body, S.cross(prog, w_body, off)))
    ag = base_acceleration(sw.robot)[1]
    return list(w) + [prog.let(lin[i] + a0[i] - ag[i]) for i in range(3)]


def forward_dynamics(prog, chain, qa, qda, taua, qb, qdb, taub):
    """Maker of the closed-chain forward dynamics (guarded Λ_c) [RJK (21)–(26)]."""
    from soagen.passes import symbolic as S
    from soagen.passes.ldl import ldl, ldl_solve
    from soagen.passes.operational_space import omega_tips
    from soagen.passes.sweeps import Sweeps, fd4, tip_force_response

    ra, rb = chain.robot_a, chain.robot_b
    swa, swb = Sweeps(prog, ra, qa, "arm a: "), Sweeps(prog, rb, qb, "arm b: ")
    fa, fb = fd4(swa, qda, taua), fd4(swb, qdb, taub)
    alpha_a, alpha_b = _free_tip_acceleration(swa, fa), _free_tip_acceleration(swb, fb)
    Rb = S.const_matrix(chain.rotation)
    alpha_bw = S.matvec(prog, Rb, alpha_b[:3]) + S.matvec(prog, Rb, alpha_b[3:])
    Om_a, Om_b = omega_tips(swa, fa[3]), omega_tips(swb, fb[3])
    prog.banner("Lambda_c^-1 = Omega_a + R Omega_b R^T -- [RJK (26)]", level=0)
    A, B, C = S.blocks_from_full(Om_b)
    Om_bw = S.full_from_blocks(S.rotate_sym(prog, Rb, A), S.rotate_gen(prog, Rb, B), S.rotate_sym(prog, Rb, C))
    Lc_inv = [[prog.let(Om_a[i][j] + Om_bw[i][j]) for j in range(6)] for i in range(6)]
    L, d, dinv = ldl(prog, Lc_inv, prog.options.pivot_ratio)
    f = ldl_solve(prog, L, dinv, [prog.let(alpha_a[i] - alpha_bw[i]) for i in range(6)])
    prog.banner("tip-force corrections -- [RJK (18)]", level=0)
    dqa = tip_force_response(swa, fa[3], f)
    RbT = S.transpose(Rb)
    fb_local = [-x for x in S.matvec(prog, RbT, f[:3]) + S.matvec(prog, RbT, f[3:])]
    dqb = tip_force_response(swb, fb[3], fb_local)
    return [[prog.let(fa[0][k] + dqa[k]) for k in range(ra.n)], [prog.let(fb[0][k] + dqb[k]) for k in range(rb.n)], f]
