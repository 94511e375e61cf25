"""Symbolic operational space recursions (seed 000 §4, seed 002 (19)–(20),
seed 003 Table 1): Ω(0), Λ(0), c(0), g(0) and the OSC torque step."""
from __future__ import annotations

import sympy as sp

from . import symbolic as S
from .program import Program
from .recursion import (Articulated, Sweeps, _flat, _forces_up, _mass_matrix_ldl, _project_all,
                        jacobian_rows)

ZERO6 = (S.ZERO3, S.ZERO3)


def _psi_star(sw, art, k, v):
    """ψ*(p,k) v = (I − H*G*) φ*(p,k) v for a parent-axes motion vector v."""
    prog, fr = sw.prog, sw.frame(k)
    y = fr.phi_star(v)
    s = [prog.let(x) for x in art.phi_G_star(k, v)]     # G*φ*v = (φG)*v
    h = fr.along(s)
    return S.sub(prog, y[0], h[0]), S.sub(prog, y[1], h[1])


def omega_bodies(sw, art):
    """Ω(k) = ψ*(p,k)Ω(p)ψ(p,k) + H*(k)D⁻¹(k)H(k) (seed 000 (58)), base-to-tip;
    6×6 symmetric lists in body axes."""
    prog, robot = sw.prog, sw.robot
    Om = [None] * robot.nb
    for k in range(robot.nb):
        fr = sw.frame(k)
        p = sw.parent(k)
        hs = [_flat(h) for h in fr.Hcols]
        if p < 0:
            X = [[sp.Integer(0)] * 6 for _ in range(6)]
        else:
            Y = S.congruence_motion(prog, S.blocks_from_full(Om[p]), fr.ell,
                                    [S.transpose(fr.R0), fr.Rq_congruence_T])   # φ*Ω(p)φ
            X = S.project_sym(prog, S.full_from_blocks(*Y), hs, [_flat(g) for g in art.G[k]])  # (I−H*G*)…(I−GH)
        Dinv = art.Dinv[k]
        out = [[None] * 6 for _ in range(6)]
        for i in range(6):
            for j in range(i, 6):
                hdh = sum(ha[i] * Dinv[a][b] * hb[j] for a, ha in enumerate(hs) for b, hb in enumerate(hs))
                out[i][j] = out[j][i] = prog.let(X[i][j] + hdh)
        Om[k] = out
    return Om


def omega_tips(sw, art):
    """Ω(0) for all tips, (6m×6m) symmetric list: diagonal blocks
    φ*(a,0)Ω(a)φ(a,0) (seed 000 (60)); coupling blocks through the nearest
    common ancestor c, X_iᵀΩ(c)X_j with X = ψ(c, ·)φ(·, 0) (seed 003 Table 1)."""
    prog, robot = sw.prog, sw.robot
    Om = omega_bodies(sw, art)
    m = len(robot.tips)
    out = [[sp.Integer(0)] * (6 * m) for _ in range(6 * m)]

    def down_path(c, tip, cols):
        """Apply ψ* from body c down to the tip's body, then φ*(a, 0), to each column."""
        path = list(reversed(robot.ancestors(tip.body)))
        path = path[path.index(c) + 1:]
        R, _ = sw.world(tip.body)
        res = []
        for v in cols:
            for k in path:
                v = _psi_star(sw, art, k, v)
            res.append(S.motion_to_tip(prog, R, S.const_vector(tip.offset), v))
        return res

    for i, ti in enumerate(robot.tips):
        prog.banner(f"Omega(0) block ({i}, {i}): tip {ti.name}")
        R, _ = sw.world(ti.body)
        blk = S.full_from_blocks(*S.congruence_motion(prog, S.blocks_from_full(Om[ti.body]),
                                                      S.const_vector(ti.offset), [R]))
        for r in range(6):
            for c in range(6):
                out[6 * i + r][6 * i + c] = blk[r][c]
        anc_i = robot.ancestors(ti.body)
        for j in range(i + 1, m):
            tj = robot.tips[j]
            common = [k for k in robot.ancestors(tj.body) if k in anc_i]
            if not common:
                continue
            c = common[0]
            prog.banner(f"Omega(0) block ({i}, {j}) through body {c}")
            # Ω_ij = X_iᵀ Ω(c) X_j with X_jᵀ the down-path map c → tip j
            cols = [(Om[c][r][:3], Om[c][r][3:]) for r in range(6)]    # columns of Ω(c) (symmetric)
            W = down_path(c, tj, cols)                                  # columns of W = X_jᵀ Ω(c)
            rows = [[_flat(W[col])[r] for col in range(6)] for r in range(6)]
            V = down_path(c, ti, [(row[:3], row[3:]) for row in rows])  # columns of X_iᵀ Wᵀ = Ω_ij
            for col in range(6):
                flat = _flat(V[col])
                for r in range(6):
                    out[6 * i + r][6 * j + col] = flat[r]
                    out[6 * j + col][6 * i + r] = flat[r]
    return out


def _os_rhs(sw, art, qd, gravity):
    """r with Ω(0)x = r: η(0) − a(0) (seed 000 (65)–(68)), plus the gravity
    terms of (72)–(74) through ā = a + E*a_g when ``gravity``; list (6m,)."""
    prog, robot = sw.prog, sw.robot
    n = robot.nb
    if qd is not None:
        V, a, b = sw.velocities(qd)
        a, b = list(a), list(b)
    else:
        V, a, b = None, [ZERO6] * n, [ZERO6] * n
    if gravity:
        for k, body in enumerate(robot.bodies):
            if body.parent < 0:
                a[k] = S.spatial_add(prog, a[k], sw.frame(k).phi_star(sw.base_acceleration()))
    # (66): y = ψ(Pa + b) tip-to-base, ξ(k) = H*D⁻¹H y(k) − a(k)
    y = [S.spatial_add(prog, S.inertia_times(prog, art.P[k], a[k]), b[k]) for k in range(n)]
    for k in reversed(range(n)):
        p = sw.parent(k)
        if p >= 0:
            fr = sw.frame(k)
            Gs = art.phi_G_times(k, fr.project(y[k]))           # φ(y − GHy) = φy − (φG)Hy
            yk = fr.phi(y[k])
            y[p] = tuple(S.vec(prog, [y[p][b][i] + yk[b][i] - Gs[b][i] for i in range(3)]) for b in (0, 1))
    eta = [None] * n
    for k in range(n):                     # (67): η(k) = ψ*(p,k)η(p) + ξ(k)
        fr = sw.frame(k)
        nu = art.solve(prog, k, fr.project(y[k]))
        hv = fr.along(nu)
        xi = (S.sub(prog, hv[0], a[k][0]), S.sub(prog, hv[1], a[k][1]))
        p = sw.parent(k)
        eta[k] = xi if p < 0 else S.spatial_add(prog, _psi_star(sw, art, k, eta[p]), xi)
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
            lin = S.add(prog, lin, sw.base_acceleration()[1])
        r += list(e0[0]) + list(lin)
    return r


def _setup_plain(name, doc, robot):
    prog = Program(name, doc)
    return prog, Sweeps(prog, robot, prog.input("q", robot.nq, "joint positions"))


def _setup(name, doc, robot, with_qd=False, with_u=False):
    prog = Program(name, doc)
    q = prog.input("q", robot.nq, "joint positions")
    qd = prog.input("qd", robot.n, "joint velocities") if with_qd else None
    u = prog.input("u", 6 * len(robot.tips), "commanded tip accelerations") if with_u else None
    sw = Sweeps(prog, robot, q)
    return prog, sw, Articulated(sw), qd, u


def os_inertia_inverse(robot):
    """Ω(0) = Λ(0)⁻¹ (seed 000 (61), seed 002 (20)): two sweeps, O(n)."""
    prog, sw, art, _, _ = _setup("os_inertia_inverse", "operational space inverse inertia Omega(0), 6m x 6m",
                                 robot)
    Om = omega_tips(sw, art)
    prog.output("Omega", [x for row in Om for x in row], "Omega(0), row-major")
    return prog


def os_inertia(robot, ratio):
    """Λ(0) = Ω(0)⁻¹ by an unrolled LDLᵀ with guarded pivots (seed 000 (61))."""
    prog, sw, art, _, _ = _setup("os_inertia_recursive", "operational space inertia Lambda(0) by the O(n) "
                                 "recursion, 6m x 6m", robot)
    L, d, dinv = S.ldl(prog, omega_tips(sw, art), ratio)
    Lam = S.ldl_inverse(prog, L, dinv)
    prog.output("Lambda", [x for row in Lam for x in row], "Lambda(0), row-major")
    return prog


def os_inertia_explicit(robot, ratio):
    """Λ(0) = (J M⁻¹ J*)⁻¹ the usual way, O(n³): J (seed 002 (1)), M by composite
    inertias (seed 001 (3.20)) factored as PMP = LDLᵀ (P the reversal, so
    M = Lᵀ D L on trees without fill-in), Y = L⁻¹PJ*, Ω(0) = Y*D⁻¹Y, then
    the guarded LDLᵀ inverse of Ω(0)."""
    prog, sw = _setup_plain("os_inertia_explicit", "operational space inertia Lambda(0) = (J M^-1 J^T)^-1, "
                            "6m x 6m", robot)
    rows = jacobian_rows(sw)                                   # J, 6m × n
    L, dinv = _mass_matrix_ldl(sw)                             # reversed M = L D Lᵀ
    n, N = robot.n, len(rows)
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
    L2, _, dinv2 = S.ldl(prog, Om, ratio)
    Lam = S.ldl_inverse(prog, L2, dinv2)
    prog.output("Lambda", [x for row in Lam for x in row], "Lambda(0), row-major")
    return prog


def _os_solved(robot, ratio, name, doc, with_qd, gravity, outname):
    prog, sw, art, qd, _ = _setup(name, doc, robot, with_qd=with_qd)
    r = _os_rhs(sw, art, qd, gravity)
    L, d, dinv = S.ldl(prog, omega_tips(sw, art), ratio)
    prog.output(outname, S.ldl_solve(prog, L, dinv, r), doc)
    return prog


def os_coriolis(robot, ratio):
    """c(0): Ω(0)c(0) = η(0) − a(0) (seed 000 (65)–(68))."""
    return _os_solved(robot, ratio, "os_coriolis", "operational space Coriolis/centrifugal force c(0)",
                      True, False, "c")


def os_gravity(robot, ratio):
    """g(0): Ω(0)g(0) = φ*(1,0)(α(1) − η(1)) (seed 000 (72)–(74))."""
    return _os_solved(robot, ratio, "os_gravity", "operational space gravity force g(0)", False, True, "g")


def os_bias(robot, ratio):
    """c(0) + g(0) by the shortcut a → a + E*a_g in (65) (seed 000 end of §4.3)."""
    return _os_solved(robot, ratio, "os_bias", "operational space bias force c(0) + g(0)", True, True, "cg")


def osc_torque(robot, ratio):
    """T = J*[Λ(0)u + c(0) + g(0)] (seed 000 (4), (39), Conclusions).

    Four sweeps: velocities (base-to-tip); Riccati P, D, G with y = ψ(Pā + b)
    (tip-to-base); Ω(k) with η(k) (base-to-tip); T = J*F (tip-to-base (39)).
    F solves Ω(0)F = u + η̄(0) − a(0) with an unrolled LDLᵀ, no explicit Λ(0).
    """
    prog, sw, art, qd, u = _setup("osc_torque", "operational space control torques J^T (Lambda u + c + g)",
                                  robot, with_qd=True, with_u=True)
    r = _os_rhs(sw, art, qd, True)
    L, d, dinv = S.ldl(prog, omega_tips(sw, art), ratio)
    F = S.ldl_solve(prog, L, dinv, [prog.let(u[i] + r[i]) for i in range(len(r))])
    f = [ZERO6 for _ in range(robot.nb)]
    for i, tip in enumerate(robot.tips):
        f[tip.body] = S.spatial_add(prog, f[tip.body], sw.tip_force_in_body(tip, F[6 * i:6 * i + 6]))
    _forces_up(sw, f)                                                     # (39)
    prog.output("tau", _project_all(sw, f), "joint torques")
    return prog
