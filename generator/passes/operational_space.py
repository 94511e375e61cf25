"""Makers of the operational space functions [KJR §4], [RJK (19)–(20)],
[CK Table 1]: Ω(0), Λ(0), c(0), g(0) and the OSC torque step (see
:mod:`soagen.passes.dynamics` for what a maker is)."""
from __future__ import annotations

import sympy as sp

from soagen.passes import symbolic as S
from soagen.passes.kinematics import jacobian_rows
from soagen.passes.ldl import ldl, ldl_inverse, ldl_solve
from soagen.passes.sweeps import (ZERO6, Sweeps, articulated, base_acceleration, flat, forces_tip_to_base, gravity_bar,
                                  mass_matrix_ltdl, project, tip_forces, velocities)
from soagen.passes.tip_rows import tip_rows, tip_starts


def psi_star(sw, art, k, v):
    """ψ*(p,k) v = (I − H*G*) φ*(p,k) v for a parent-axes motion vector v."""
    prog, fr = sw.prog, sw.frame(k)
    y = fr.phi_star(v)
    s = [prog.let(x) for x in art.K_star(k, v)]     # G*φ*v = K*v
    h = fr.along(s)
    return S.sub(prog, y[0], h[0]), S.sub(prog, y[1], h[1])


def omega_bodies(sw, art):
    """Base-to-tip pass Ω(k) = ψ*(p,k)Ω(p)ψ(p,k) + H*(k)D⁻¹(k)H(k) [KJR (58)];
    6×6 symmetric lists in body axes."""
    prog, robot = sw.prog, sw.robot
    Om = [None] * robot.nb
    sw.banner("base-to-tip Omega(k) = psi* Omega(p) psi + H* D^-1 H", "KJR (58)")
    for k in sw.base_to_tip():
        fr = sw.frame(k)
        p = sw.parent(k)
        hs = [flat(h) for h in fr.Hcols]
        if p < 0:
            X = [[sp.Integer(0)] * 6 for _ in range(6)]
        else:
            Y = S.congruence_motion(prog, S.blocks_from_full(Om[p]), fr.ell,
                                    [S.transpose(fr.R0), fr.Rq_congruence_T])   # φ*Ω(p)φ
            X = S.project_sym(prog, S.full_from_blocks(*Y), hs, [flat(g) for g in art.G[k]])  # (I−H*G*)…(I−GH)
        Dinv = art.Dinv[k]
        out = [[None] * 6 for _ in range(6)]
        for i in range(6):
            for j in range(i, 6):
                hdh = sum(ha[i] * Dinv[a][b] * hb[j] for a, ha in enumerate(hs) for b, hb in enumerate(hs))
                out[i][j] = out[j][i] = prog.let(X[i][j] + hdh)
        Om[k] = out
    return Om


def omega_tips(sw, art):
    """Ω(0) for all tips, an (r×r) symmetric list: diagonal blocks
    φ*(a,0)Ω(a)φ(a,0) [KJR (60)]; coupling blocks through the nearest common
    ancestor c, X_iᵀΩ(c)X_j with X = ψ(c, ·)φ(·, 0) [CK Table 1]; each block
    restricted to the rows its tips have (a point tip's 3 linear rows: the
    unused entries are never computed)."""
    prog, robot = sw.prog, sw.robot
    Om = omega_bodies(sw, art)
    m, starts = len(robot.tips), tip_starts(robot)
    out = [[sp.Integer(0)] * robot.tip_rows for _ in range(robot.tip_rows)]

    def place(i, j, blk):
        """Ω_ij (6×6, [angular; linear]) into the rows of tip i and the columns of tip j, and its transpose."""
        ti, tj = robot.tips[i], robot.tips[j]
        for a, r in enumerate(ti.rows):
            for b, c in enumerate(tj.rows):
                out[starts[i] + a][starts[j] + b] = blk[r][c]
                if i != j:
                    out[starts[j] + b][starts[i] + a] = blk[r][c]

    def down_path(c, tip, cols):
        """Apply ψ* from body c down to the tip's body, then φ*(a, 0), to each column."""
        path = list(reversed(robot.ancestors(tip.body)))
        path = path[path.index(c) + 1:]
        R, _ = sw.world(tip.body)
        res = []
        for v in cols:
            for k in path:
                v = psi_star(sw, art, k, v)
            res.append(S.motion_to_tip(prog, R, S.const_vector(tip.offset), v))
        return res

    for i, ti in enumerate(robot.tips):
        prog.banner(f"Omega(0) block ({i}, {i}): tip {ti.name} -- [KJR (60)]", level=0)
        R, _ = sw.world(ti.body)
        place(i, i, S.full_from_blocks(*S.congruence_motion(prog, S.blocks_from_full(Om[ti.body]),
                                                            S.const_vector(ti.offset), [R])))
        anc_i = robot.ancestors(ti.body)
        for j in range(i + 1, m):
            tj = robot.tips[j]
            common = [k for k in robot.ancestors(tj.body) if k in anc_i]
            if not common:
                continue
            c = common[0]
            prog.banner(f"Omega(0) block ({i}, {j}) through body {c} -- [CK Table 1]", level=0)
            # Ω_ij = X_iᵀ Ω(c) X_j with X_jᵀ the down-path map c → tip j
            cols = [(Om[c][r][:3], Om[c][r][3:]) for r in range(6)]    # columns of Ω(c) (symmetric)
            W = down_path(c, tj, cols)                                  # columns of W = X_jᵀ Ω(c)
            rows = [[flat(W[col])[r] for col in range(6)] for r in range(6)]
            V = down_path(c, ti, [(row[:3], row[3:]) for row in rows])  # columns of X_iᵀ Wᵀ = Ω_ij
            place(i, j, [[flat(V[col])[r] for col in range(6)] for r in range(6)])
    return out


def os_rhs(sw, art, qd, gravity):
    """r with Ω(0)x = r: η(0) − a(0) [KJR (65)–(68)], plus the gravity terms of
    (72)–(74) through ā = a + E*a_g when ``gravity``; a list (r,), the rows each tip has.  ``qd`` None:
    no velocity terms."""
    prog, robot = sw.prog, sw.robot
    n = robot.nb
    if qd is not None:
        vel = velocities(sw, qd)
        V, a, b = vel.V, list(vel.a), list(vel.b)
    else:
        V, a, b = None, [ZERO6] * n, [ZERO6] * n
    if gravity:
        a = gravity_bar(sw, a)
    # (66): y = ψ(Pa + b) tip-to-base, ξ(k) = H*D⁻¹H y(k) − a(k)
    y = [S.spatial_add(prog, S.inertia_times(prog, art.P[k], a[k]), b[k]) for k in range(n)]
    sw.banner("tip-to-base y = psi(P a + b)", "KJR (66)")
    for k in sw.tip_to_base():
        p = sw.parent(k)
        if p >= 0:
            fr = sw.frame(k)
            Ks = art.K_times(k, fr.project(y[k]))             # φ(y − GHy) = φy − K Hy
            yk = fr.phi(y[k])
            y[p] = tuple(S.vec(prog, [y[p][c][i] + yk[c][i] - Ks[c][i] for i in range(3)]) for c in (0, 1))
    eta = [None] * n
    sw.banner("base-to-tip eta(k) = psi* eta(p) + xi(k)", "KJR (67)")
    for k in sw.base_to_tip():
        fr = sw.frame(k)
        nu = art.solve(prog, k, fr.project(y[k]))
        hv = fr.along(nu)
        xi = (S.sub(prog, hv[0], a[k][0]), S.sub(prog, hv[1], a[k][1]))
        p = sw.parent(k)
        eta[k] = xi if p < 0 else S.spatial_add(prog, psi_star(sw, art, k, eta[p]), xi)
    r = []
    for tip in robot.tips:
        R, _ = sw.world(tip.body)
        off = S.const_vector(tip.offset)
        e0 = S.motion_to_tip(prog, R, off, eta[tip.body])
        lin = e0[1]
        if V is not None:                  # a(0) = [0; R ω × (ω × ℓ)]
            w = V[tip.body][0]
            lin = S.sub(prog, lin, S.matvec(prog, R, S.cross(prog, w, S.cross(prog, w, off))))
        if gravity:                        # (74): φ*(1,0)α(1), α = φ*E*a_g = base acceleration
            lin = S.add(prog, lin, base_acceleration(robot)[1])
        r += tip_rows(tip, list(e0[0]) + list(lin))
    return r


def factor_omega(sw, art, ratio):
    prog = sw.prog
    Om = omega_tips(sw, art)
    prog.banner("LDL^T of Omega(0), every pivot guarded -- [KJR (61)]", level=0)
    return ldl(prog, Om, ratio)


def os_inertia_inverse(prog, robot, q):
    """Ω(0) = Λ(0)⁻¹ [KJR (61)], [RJK (20)]: two sweeps, O(n)."""
    sw = Sweeps(prog, robot, q)
    return [[x for row in omega_tips(sw, articulated(sw)) for x in row]]


def os_inertia_recursive(prog, robot, q):
    """Λ(0) = Ω(0)⁻¹ by an unrolled LDLᵀ with guarded pivots [KJR (61)]."""
    sw = Sweeps(prog, robot, q)
    L, d, dinv = factor_omega(sw, articulated(sw), prog.options.pivot_ratio)
    return [[x for row in ldl_inverse(prog, L, dinv) for x in row]]


def os_inertia_explicit(prog, robot, q):
    """Λ(0) = (J M⁻¹ J*)⁻¹ the usual way, O(n³): J [RJK (1)], M by composite
    inertias [RK (3.20)] factored as PMP = LDLᵀ (P the reversal, so M = Lᵀ D L
    on trees without fill-in), Y = L⁻¹PJ*, Ω(0) = Y*D⁻¹Y, then the guarded
    LDLᵀ inverse of Ω(0)."""
    sw = Sweeps(prog, robot, q)
    rows = jacobian_rows(sw)                                   # J, r × n
    L, dinv = mass_matrix_ltdl(sw)                             # reversed M = L D Lᵀ
    n, N = robot.nv, len(rows)
    prog.banner("Omega(0) = (L^-1 P J*)* D^-1 (L^-1 P J*)", level=0)
    Y = []
    for r in range(N):                                         # L y = P J*[:, r]
        y, rhs = [], rows[r][::-1]
        for i in range(n):
            y.append(prog.let(rhs[i] - sum(L[i][k] * y[k] for k in range(i))))
        Y.append(y)
    Z = [[prog.let(Y[r][k] * dinv[k]) for k in range(n)] for r in range(N)]   # D⁻¹Y
    Om = [[None] * N for _ in range(N)]
    for r in range(N):
        for c in range(r, N):
            Om[r][c] = Om[c][r] = prog.let(sum(Z[r][k] * Y[c][k] for k in range(n)))
    prog.banner("LDL^T of Omega(0), every pivot guarded -- [KJR (61)]", level=0)
    L2, _, dinv2 = ldl(prog, Om, prog.options.pivot_ratio)
    return [[x for row in ldl_inverse(prog, L2, dinv2) for x in row]]


def _solved(prog, robot, q, qd, gravity, extra=None):
    """x with Ω(0)x = r (+ ``extra``) by the guarded LDLᵀ; r from :func:`os_rhs`."""
    sw = Sweeps(prog, robot, q)
    art = articulated(sw)
    r = os_rhs(sw, art, qd, gravity)
    if extra is not None:
        r = [prog.let(e + x) for e, x in zip(extra, r)]
    L, d, dinv = factor_omega(sw, art, prog.options.pivot_ratio)
    return sw, ldl_solve(prog, L, dinv, r)


def os_coriolis(prog, robot, q, qd):
    """c(0): Ω(0)c(0) = η(0) − a(0) [KJR (65)–(68)]."""
    return [_solved(prog, robot, q, qd, False)[1]]


def os_gravity(prog, robot, q):
    """g(0): Ω(0)g(0) = φ*(1,0)(α(1) − η(1)) [KJR (72)–(74)]."""
    return [_solved(prog, robot, q, None, True)[1]]


def os_bias(prog, robot, q, qd):
    """c(0) + g(0) by the shortcut a → a + E*a_g in (65) [KJR end of §4.3]."""
    return [_solved(prog, robot, q, qd, True)[1]]


def osc_torque(prog, robot, q, qd, u):
    """T = J*[Λ(0)u + c(0) + g(0)] [KJR (4), (39), Conclusions].

    Four sweeps: velocities (base-to-tip); Riccati P, D, G with y = ψ(Pā + b)
    (tip-to-base); Ω(k) with η(k) (base-to-tip); T = J*F (tip-to-base (39)).
    F solves Ω(0)F = u + η̄(0) − a(0) with an unrolled LDLᵀ, no explicit Λ(0).
    """
    sw, F = _solved(prog, robot, q, qd, True, extra=u)
    f = tip_forces(sw, F)
    forces_tip_to_base(sw, f)                                             # (39)
    return [project(sw, f)]
