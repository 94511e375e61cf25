"""Symbolic recursions: the spatial operator algorithms run on sympy scalars,
each recording one straight-line :class:`~soagen.program.Program`.

The sweeps mirror :mod:`soagen.reference` (same equations, same names) but
work on 3-vectors in link-local frames, with sin/cos of each joint once.
Tree form: the paper's ``k+1`` is ``parent[k]``, its ``k-1`` the children.
"""
from __future__ import annotations

import copy
import warnings

import numpy as np
import sympy as sp

from . import symbolic as S
from .model import ModelWarning, Robot, RobotError
from .program import Program, const


class Sweeps:
    """Per-program helpers: joint frames, velocities, bias terms, world poses.

    Everything is computed on first use and cached, so a program only records
    what its algorithm needs.
    """

    def __init__(self, prog: Program, robot: Robot, q, label=""):
        self.prog, self.robot, self.q, self.label = prog, robot, q, label
        self.frames = [None] * robot.nb
        self._V = None
        self._world = {}
        self.vslices = [robot.vslice(k) for k in range(robot.nb)]

    def frame(self, k) -> S.JointFrame:
        if self.frames[k] is None:
            b = self.robot.bodies[k]
            self.prog.banner(f"{self.label}body {k}: {b.name} (joint {b.joint}, {b.joint_type})")
            qs = self.robot.qslice(k)
            self.frames[k] = S.JointFrame(self.prog, b, self.q[qs.start] if b.nq == 1 else list(self.q[qs]))
        return self.frames[k]

    def parent(self, k):
        return self.robot.bodies[k].parent

    def part(self, values, k):
        """Body ``k``'s entries (nv_k) of a joint-space list (qd, qdd, tau)."""
        return list(values[self.vslices[k]])

    # ------------------------------------------------------------ velocities
    def velocities(self, qd):
        """V(k) = φ*(p,k)V(p) + H*(k)θ̇(k) (seed 000 (41)); also a(k) (seed 001
        (2.19), (2.32)) and b(k) (seed 000 (47)), body axes."""
        prog, robot = self.prog, self.robot
        n = robot.nb
        V, hqs = [], []
        for k in range(n):
            fr = self.frame(k)
            p = self.parent(k)
            hq = fr.along(self.part(qd, k))
            hqs.append(hq)
            if p < 0:
                V.append((S.vec(prog, hq[0]), S.vec(prog, hq[1])))
            else:
                wpb, vpb = fr.phi_star(V[p])
                V.append((S.add(prog, wpb, hq[0]), S.add(prog, vpb, hq[1])))
        # terms quadratic in ω(k): gyroscopic ω × I_oω and ω × (ω × m p) of body k, and
        # the centripetal ω × (ω × ℓ) of each child's origin (a(child), in k's axes)
        b, self.centripetal = [None] * n, [S.ZERO3] * n
        children = [[c for c in range(n) if self.parent(c) == k] for k in range(n)]
        for k, body in enumerate(robot.bodies):
            fixed_ell = [c for c in children[k] if self.frame(c).fixed_offset]
            terms = [("gyroscopic", S.origin_inertia(body)),
                     ("centripetal", body.mass * np.asarray(body.com, float))]
            terms += [("centripetal", self.robot.bodies[c].translation) for c in fixed_ell]
            values = S.QuadraticTerms(prog, V[k][0]).evaluate(terms)
            b[k] = (values[0], values[1])                                  # seed 000 (47)
            for c, v in zip(fixed_ell, values[2:]):
                self.centripetal[c] = v
            for c in children[k]:
                if c not in fixed_ell:     # prismatic, floating: ℓ depends on q
                    wp = V[k][0]
                    self.centripetal[c] = S.cross(prog, wp, S.cross(prog, wp, self.frame(c).ell))
        # a(k) split for accelerate(): centripetal part in parent axes, joint part in body
        # axes, a_joint = [ω_p × ω_r; 2 ω_p × v_r + ω_r × v_r] with [ω_r; v_r] = H*θ̇
        # (reference.bias_terms; the zero parts of each joint type vanish as recorded)
        a, self.a_joint = [], []
        for k in range(n):
            fr = self.frame(k)
            p = self.parent(k)
            wr, vr = hqs[k]
            spin = S.cross(prog, wr, vr)          # a floating joint's ω_r × v_r
            if p < 0:
                self.a_joint.append((S.ZERO3, spin))
                a.append(self.a_joint[k])
                continue
            wpb = fr.down(V[p][0])
            lin = fr.down(self.centripetal[k])
            self.a_joint.append((S.cross(prog, wpb, wr),
                                 S.add(prog, S.scale(prog, 2, S.cross(prog, wpb, vr)), spin)))
            a.append((self.a_joint[k][0], S.add(prog, lin, self.a_joint[k][1])))
        return V, a, b

    def accelerate(self, k, alpha_parent, qdd_k=(0,), U_parent=None):
        """α(k) = φ*(p,k)α(p) + H*(k)θ̈(k) + a(k) (seed 001 (2.26)) after
        :meth:`velocities`, with the centripetal part of a(k) added in parent
        axes before the rotation: one rotation per body instead of two.  With
        ``U_parent`` = [ω̇]× + [ω]×² of the parent, ω̇ × ℓ + ω × (ω × ℓ) = U ℓ."""
        prog, fr = self.prog, self.frame(k)
        w, v = alpha_parent
        if U_parent is not None and fr.fixed_offset:
            lin = S.add(prog, v, S.matvec(prog, U_parent, fr.ell))
        else:
            lin = S.add(prog, v, S.cross(prog, w, fr.ell), self.centripetal[k])
        hq = fr.along(qdd_k)
        aj = self.a_joint[k]
        return S.add(prog, fr.down(w), hq[0], aj[0]), S.add(prog, fr.down(lin), hq[1], aj[1])

    def base_acceleration(self):
        """α(n+1) = [0; −g]: gravity as a base acceleration (seed 001 (3.21))."""
        return S.ZERO3, [const(-g) for g in self.robot.gravity]

    # ------------------------------------------------------------ world poses
    def world(self, k):
        """World orientation (3×3) and position (3,) of body k's frame."""
        if k not in self._world:
            fr = self.frame(k)
            p = self.parent(k)
            if p < 0:
                R, pos = fr.rotation(), S.vec(self.prog, fr.ell)
            else:
                Rp, pp = self.world(p)
                R = S.matmul(self.prog, Rp, fr.rotation())
                pos = S.add(self.prog, pp, S.matvec(self.prog, Rp, fr.ell))
            self._world[k] = (R, pos)
        return self._world[k]

    def tip_force_in_body(self, tip, f):
        """φ(k, 0) f(0): a tip force (world axes at the tip) in body axes."""
        R, _ = self.world(tip.body)
        F = S.matTvec(self.prog, R, f[3:])
        n = S.add(self.prog, S.matTvec(self.prog, R, f[:3]),
                  S.cross(self.prog, S.const_vector(tip.offset), F))
        return n, F


# ================================================================ algorithms
def _forces_up(sw, f):
    """Tip-to-base sweep f(p) += φ(p, k) f(k) (seed 001 (2.29)) in place."""
    for k in reversed(range(sw.robot.nb)):
        p = sw.parent(k)
        if p >= 0:
            f[p] = S.spatial_add(sw.prog, f[p], sw.frame(k).phi(f[k]))


def _joint_space(sw, per_body):
    """Concatenate per-body lists (nv_k each) into one joint-space list (nv)."""
    return [x for k in range(sw.robot.nb) for x in per_body[k]]


def _project_all(sw, f):
    """T = H f for per-body spatial forces; joint-space list (nv)."""
    return _joint_space(sw, [sw.frame(k).project(f[k]) for k in range(sw.robot.nb)])


def _newton_euler(sw, qd, qdd, with_gravity=True):
    """Newton–Euler before the force sum: V, α(k) base-to-tip (seed 001 (2.26))
    and f(k) = M(k)α(k) + b(k) (2.29); returns (V, α, f), body axes."""
    prog = sw.prog
    V, a, b = sw.velocities(qd)
    alpha, f, U = [], [], []
    for k, body in enumerate(sw.robot.bodies):
        p = body.parent
        if p < 0:
            ap = sw.base_acceleration() if with_gravity else (S.ZERO3, S.ZERO3)
        else:
            ap = alpha[p]
        alpha.append(sw.accelerate(k, ap, sw.part(qdd, k), None if p < 0 else U[p]))   # (2.26)
        U.append(S.transport_matrix(prog, V[k][0], alpha[k][0]))
        M = S.spatial_inertia(body)
        top = [prog.let(sum(M[0][i][j] * alpha[k][0][j] + M[1][i][j] * alpha[k][1][j] for j in range(3)) + b[k][0][i])
               for i in range(3)]
        mc = S.const_vector(body.mass * np.asarray(body.com, float))
        Umc = S.matvec(prog, U[k], mc)          # ω̇ × mc + ω × (ω × mc)
        bot = [prog.let(M[2][i][i] * alpha[k][1][i] + Umc[i]) for i in range(3)]
        f.append((top, bot))
    return V, alpha, f


def inverse_dynamics(robot, with_gravity=True, with_qdd=True, with_qd=True, tip_force=False,
                     name="inverse_dynamics"):
    """Recursive Newton–Euler T = Mθ̈ + C + G + J*f(0) (seed 001 (2.24)–(2.30), (3.21))."""
    docs = {"inverse_dynamics": "joint torques T = M(q) qdd + C(q, qd) + G(q) (+ J^T f)",
            "gravity": "gravity torques G(q)", "bias_forces": "bias torques C(q, qd) + G(q)",
            "coriolis": "Coriolis and centrifugal torques C(q, qd), no gravity"}
    prog = Program(name, docs.get(name.replace("_tip_force", ""), name))
    n = robot.n
    q = prog.input("q", robot.nq, "joint positions")
    qd = prog.input("qd", n, "joint velocities") if with_qd else [sp.Integer(0)] * n
    qdd = prog.input("qdd", n, "joint accelerations") if with_qdd else [sp.Integer(0)] * n
    ftip = prog.input("f", 6 * len(robot.tips), "tip forces on the environment") if tip_force else None
    sw = Sweeps(prog, robot, q)
    _, _, f = _newton_euler(sw, qd, qdd, with_gravity)
    if tip_force:
        for i, tip in enumerate(robot.tips):
            f[tip.body] = S.spatial_add(prog, f[tip.body], sw.tip_force_in_body(tip, ftip[6 * i:6 * i + 6]))
    _forces_up(sw, f)
    prog.output("tau", _project_all(sw, f), "joint torques")  # (2.30)
    return prog


def _composite_mass_matrix(sw):
    """M = HφMφ*H* (seed 001 (3.20)) by composite inertias R(k) (tip-to-base);
    nested nv×nv list (blocks nv_i × nv_k)."""
    prog, robot = sw.prog, sw.robot
    nb, nv = robot.nb, robot.nv
    R = [S.spatial_inertia(b) for b in robot.bodies]
    for k in reversed(range(nb)):
        p = sw.parent(k)
        if p >= 0:
            R[p] = S.inertia_add(prog, R[p], sw.frame(k).phi_inertia(R[k]))
    M = [[sp.Integer(0)] * nv for _ in range(nv)]
    for k in range(nb):
        fr = sw.frame(k)
        sk = sw.vslices[k]
        X = [S.inertia_times(prog, R[k], h) for h in fr.Hcols]          # R(k) H*(k), column by column
        for c, x in zip(range(sk.start, sk.stop), X):
            for r, value in zip(range(sk.start, sk.stop), fr.project(x)):
                M[r][c] = M[c][r] = value
        i = k
        while sw.parent(i) >= 0:
            X = [sw.frame(i).phi(x) for x in X]                          # φ(p(i), k) R(k) H*(k)
            i = sw.parent(i)
            si = sw.vslices[i]
            for c, x in zip(range(sk.start, sk.stop), X):
                for r, value in zip(range(si.start, si.stop), sw.frame(i).project(x)):
                    M[r][c] = M[c][r] = value
    return M


def mass_matrix(robot):
    """M = HφMφ*H* (seed 001 (3.20)) by composite inertias R(k) (tip-to-base)."""
    prog = Program("mass_matrix", "joint-space mass matrix M(q), row-major n x n")
    n = robot.n
    sw = Sweeps(prog, robot, prog.input("q", robot.nq, "joint positions"))
    M = _composite_mass_matrix(sw)
    prog.output("M", [M[i][j] for i in range(n) for j in range(n)], "mass matrix, row-major")
    return prog


def mass_matrix_ne(robot):
    """M = HφMφ*H* (seed 001 (3.20)) column by column: column j is Newton–Euler
    (2.24)–(2.30) with θ̈ = e_j, θ̇ = 0 and no gravity (Walker–Orin method 1)."""
    prog = Program("mass_matrix_ne", "joint-space mass matrix M(q) by n Newton-Euler passes, row-major n x n")
    n = robot.n
    sw = Sweeps(prog, robot, prog.input("q", robot.nq, "joint positions"))
    zero = [sp.Integer(0)] * n
    cols = []
    for j in range(n):
        prog.banner(f"column {j}")
        _, _, f = _newton_euler(sw, zero, [sp.Integer(1 if i == j else 0) for i in range(n)], False)
        _forces_up(sw, f)
        cols.append(_project_all(sw, f))
    prog.output("M", [cols[j][i] for i in range(n) for j in range(n)], "mass matrix, row-major")
    return prog


def _mass_matrix_ldl(sw):
    """M = Lᵀ D L (Featherstone's LTDL: LDLᵀ of the reversed M, no fill-in on
    trees); returns the factors of the reversed matrix."""
    L, _, dinv = S.ldl(sw.prog, S.reverse(_composite_mass_matrix(sw)), None)
    return L, dinv


def mass_matrix_inverse_cholesky(robot):
    """M⁻¹ from the composite-body M (seed 001 (3.20)) and its unrolled LTDL factorization."""
    prog = Program("mass_matrix_inverse_cholesky", "inverse mass matrix by composite-body M and LDL^T, "
                   "row-major n x n")
    n = robot.n
    sw = Sweeps(prog, robot, prog.input("q", robot.nq, "joint positions"))
    Minv = S.reverse(S.ldl_inverse(prog, *_mass_matrix_ldl(sw)))
    prog.output("Minv", [Minv[i][j] for i in range(n) for j in range(n)], "inverse mass matrix, row-major")
    return prog


class Articulated:
    """Riccati sweep (seed 000 (37)) recorded symbolically: P(k), D⁻¹(k), G(k).

    Per body: U(k) = P(k)H*(k) and G(k) = U(k)D⁻¹(k) as lists of nv_k spatial
    columns, D⁻¹(k) as an nv_k × nv_k nested list (1/D for one dof, else the
    inverse of an unrolled LDLᵀ of D(k)), and φG(k) = φ(p,k)G(k) (parent axes).

    The rows and columns of P⁺(k) = [I − G(k)H(k)] P(k) along coordinate joint
    axes are exactly zero; with Q, ũ, g̃ = P(k), U, G without them,
    P⁺ = Q − Σ ũ_i g̃_iᵀ and φP⁺φ* = φQφ* − Σ (φũ_i)(φg̃_i)ᵀ.  The congruence
    then does not wait for the division by D(k): the rank-nv downdate is applied
    in the parent's axes, which shortens the tip-to-base dependency chain.  The
    removed entries of G are known: H G = I gives G_j = g̃_j + H*_j for a unit
    column j, so φG_j = φg̃_j + φH*_j, used by the sweeps that transfer
    ψ(p,k) = φ(p,k)(I − G H) (:meth:`phi_G_times`, :meth:`phi_G_star`).
    """

    def __init__(self, sw):
        prog, robot = sw.prog, sw.robot
        n = robot.nb
        self.P = [S.spatial_inertia(b) for b in robot.bodies]
        self.U, self.Dinv, self.G, self.phiG = [None] * n, [None] * n, [None] * n, [None] * n
        for k in reversed(range(n)):
            fr = sw.frame(k)
            P = self.P[k]
            U = [S.inertia_times(prog, P, h) for h in fr.Hcols]           # P(k) H*(k)
            D = [fr.project(u) for u in U]                                # (30), D[j][i] = H_i U_j
            if fr.nv == 1:
                Dinv = [[prog.let(1 / D[0][0])]]
            else:
                L, _, dinv = S.ldl(prog, [[D[j][i] for j in range(fr.nv)] for i in range(fr.nv)], None)
                Dinv = S.ldl_inverse(prog, L, dinv)
            G = [_columns_times(prog, U, Dinv, j) for j in range(fr.nv)]   # (31)
            self.U[k], self.Dinv[k], self.G[k] = U, Dinv, G
            p = robot.bodies[k].parent
            if p < 0:
                continue
            zero = fr.unit_indices()
            # φ ũ_i, φ g̃_j and φ G_j = φ g̃_j + φ H*_j (unit columns), parent axes
            a = [fr.phi(_cut(u, zero)) for u in U]
            b = [_columns_times(prog, a, Dinv, j) for j in range(fr.nv)]
            self.phiG[k] = [_plus_axis(prog, fr, b[j], h) for j, h in enumerate(fr.Hcols)]
            C = fr.phi_inertia(_cut_inertia(P, zero))                     # φ Q φ*
            old = self.P[p]
            fa, fb = [_flat(x) for x in a], [_flat(x) for x in b]

            def parent(blk, i, j, old=old, C=C, fa=fa, fb=fb):
                r, c = _flat_index(blk, i, j)
                return prog.let(old[blk][i][j] + C[blk][i][j] - sum(x[r] * y[c] for x, y in zip(fa, fb)))

            self.P[p] = (S.sym_from_upper(lambda i, j: parent(0, i, j)),
                         [[parent(1, i, j) for j in range(3)] for i in range(3)],
                         S.sym_from_upper(lambda i, j: parent(2, i, j)))   # (37)

    def solve(self, prog, k, eps):
        """ν = D⁻¹(k) ε for a joint-space list ε (nv_k)."""
        Dinv = self.Dinv[k]
        return [prog.let(sum(Dinv[i][j] * eps[j] for j in range(len(eps)))) for i in range(len(eps))]

    def G_star(self, k, y):
        """G*(k) y for a spatial vector y: nv_k (unrecorded) sums."""
        return [_dot(g, y) for g in self.G[k]]

    def phi_G_times(self, k, values):
        """φ(p,k)G(k) x for nv_k values, parent axes: a spatial vector of (unrecorded) sums."""
        return _combine(self.phiG[k], values)

    def phi_G_star(self, k, v):
        """(φ(p,k)G(k))* v = G*(k)φ*(p,k) v for a parent-axes motion vector v: nv_k sums."""
        return [_dot(g, v) for g in self.phiG[k]]


def _flat(v):
    return list(v[0]) + list(v[1])


def _dot(f, v):
    return sum(f[0][r] * v[0][r] + f[1][r] * v[1][r] for r in range(3))


def _combine(cols, values):
    return ([sum(c[0][r] * x for c, x in zip(cols, values)) for r in range(3)],
            [sum(c[1][r] * x for c, x in zip(cols, values)) for r in range(3)])


def _columns_times(prog, cols, mat, j):
    """Σ_i cols[i] mat[i][j]: column j of (spatial columns) × (nv × nv matrix), recorded."""
    return (S.vec(prog, [sum(c[0][r] * mat[i][j] for i, c in enumerate(cols)) for r in range(3)]),
            S.vec(prog, [sum(c[1][r] * mat[i][j] for i, c in enumerate(cols)) for r in range(3)]))


def _cut(x, zero):
    """Spatial vector ``x`` without the entries at the flat indices ``zero``."""
    return ([0 if i in zero else x[0][i] for i in range(3)],
            [0 if 3 + i in zero else x[1][i] for i in range(3)])


def _flat_index(blk, i, j):
    """(row, column) in the 6×6 of entry (i, j) of block ``blk`` of (A, B, C) = [[A, B], [Bᵀ, C]]."""
    return (3 if blk == 2 else 0) + i, (0 if blk == 0 else 3) + j


def _cut_inertia(P, zero):
    """Symmetric spatial matrix (A, B, C) without the rows and columns ``zero``."""
    def entry(blk, i, j):
        r, c = _flat_index(blk, i, j)
        return sp.Integer(0) if r in zero or c in zero else P[blk][i][j]
    return (S.sym_from_upper(lambda i, j: entry(0, i, j)), [[entry(1, i, j) for j in range(3)] for i in range(3)],
            S.sym_from_upper(lambda i, j: entry(2, i, j)))


def _plus_axis(prog, fr, b, h):
    """φG_j = φg̃_j + φH*_j when column h of H* is a ± unit vector (whose row was
    cut), else φg̃_j: H G = I makes G_j exactly H*_j on the cut rows."""
    nonzero = [x for x in _flat(h) if x != 0]
    if not (len(nonzero) == 1 and abs(nonzero[0]) == 1):
        return b
    ph = fr.phi(h)
    return S.add(prog, b[0], ph[0]), S.add(prog, b[1], ph[1])


def _smooth(sw, art, nu, a=None):
    """Anticausal sweep of FD1/FD4 (seed 001 (4.22), (5.17)):
    θ̈(k) = ν(k) − G*(k)[φ*(p,k)λ(p) + a(k)], λ(k) = φ*(p,k)λ(p) + a(k) + H*(k)θ̈(k).
    G*φ*λ(p) is taken as (φG)*λ(p), which does not wait for φ*λ(p).
    ``nu`` holds per-body lists; returns θ̈ (joint-space list) and λ."""
    prog = sw.prog
    lam, qdd = [None] * sw.robot.nb, [None] * sw.robot.nb
    for k in range(sw.robot.nb):
        fr = sw.frame(k)
        p = sw.parent(k)
        known = [0] * fr.nv if a is None else art.G_star(k, a[k])
        if p >= 0:
            known = [x + y for x, y in zip(known, art.phi_G_star(k, lam[p]))]
        qdd[k] = [prog.let(v - g) for v, g in zip(nu[k], known)]
        y = [(S.ZERO3, S.ZERO3) if p < 0 else fr.phi_star(lam[p])]
        if a is not None:
            y.append(a[k])
        lam[k] = S.spatial_add(prog, *y, fr.along(qdd[k]))
    return _joint_space(sw, qdd), lam


def _filter(sw, art, T, z):
    """Causal sweep (seed 001 (4.20), (5.16)): ε = T − Hz, ν = D⁻¹ε,
    z(p) += ψ(p,k)z(k) + K(p,k)T(k) = φ(p,k)z(k) + φG(k)ε(k).  ``z`` is
    updated in place (it holds the per-body injected forces on entry); ``T`` is
    a joint-space list; returns ν per body."""
    prog = sw.prog
    nu = [None] * sw.robot.nb
    for k in reversed(range(sw.robot.nb)):
        fr = sw.frame(k)
        eps = [prog.let(t - h) for t, h in zip(sw.part(T, k), fr.project(z[k]))]
        nu[k] = art.solve(prog, k, eps)
        p = sw.parent(k)
        if p >= 0:
            z[p] = S.spatial_add(prog, z[p], fr.phi(z[k]), art.phi_G_times(k, eps))
    return nu


FD_DOCS = {"FD1": "algorithm FD1 (seed 001 (4.17)-(4.22))",
           "FD2": "algorithm FD2 (seed 001 (5.5)-(5.7)), with the tip accelerations",
           "FD3": "algorithm FD3 (seed 001 (5.8)-(5.10))",
           "FD4": "algorithm FD4 (seed 001 (5.13)-(5.17))",
           "CRBA": "composite-body M, Newton-Euler bias and an unrolled LDL^T solve"}


def forward_dynamics(robot, variant="FD4"):
    """θ̈ = M⁻¹(T − C − G) by one of the :data:`FD_DOCS` algorithms.

    FD1 (seed 001 (4.17)–(4.22)): T' = T − Hφ[Mφ*a + b] by Newton–Euler, then
    the filter (4.20) and smoother (4.22).  FD2 ((5.5)–(5.7)): FD1 whose
    smoother also yields α = λ + φ*a and the tip accelerations α(0) (4.22b),
    (4.23).  FD3 ((5.8)–(5.10)): ζ = φ*a, ε = T − Hψ[SLT + Mζ + b],
    θ̈ = (I − HΨL)*D⁻¹ε: three sweeps.  FD4 ((5.13)–(5.17)).  CRBA: M by
    composite inertias (3.20), C + G by Newton–Euler, M θ̈ = T − C − G by LTDL.
    """
    if variant not in FD_DOCS:
        raise ValueError(f"unknown forward dynamics variant {variant!r}")
    name = f"forward_dynamics_{variant.lower()}"
    prog = Program(name, f"joint accelerations from torques, {FD_DOCS[variant]}")
    n = robot.n
    q, qd = prog.input("q", robot.nq, "joint positions"), prog.input("qd", n, "joint velocities")
    tau = prog.input("tau", n, "joint torques")
    sw = Sweeps(prog, robot, q)
    zero = [sp.Integer(0)] * n
    if variant in ("FD1", "FD2"):
        V, zeta, f = _newton_euler(sw, qd, zero)                             # Mφ*a + b, φ*a (ζ)
        _forces_up(sw, f)
        Tp = [prog.let(t - h) for t, h in zip(tau, _project_all(sw, f))]      # (4.17), (5.5)
        art = Articulated(sw)
        nu = _filter(sw, art, Tp, [(S.ZERO3, S.ZERO3) for _ in range(robot.nb)])   # (4.20)
        qdd, lam = _smooth(sw, art, nu)                                      # (4.22), (4.22b)
    elif variant == "FD3":
        _, _, z = _newton_euler(sw, qd, zero)                                # Mζ + b, ζ = φ*a (5.8)
        art = Articulated(sw)
        nu = _filter(sw, art, tau, z)                                        # (5.9)
        qdd, _ = _smooth(sw, art, nu)                                        # (5.10)
    elif variant == "FD4":
        qdd = fd4(sw, qd, tau)[0]
    else:
        _, _, f = _newton_euler(sw, qd, zero)
        _forces_up(sw, f)
        rhs = [prog.let(t - h) for t, h in zip(tau, _project_all(sw, f))]
        L, dinv = _mass_matrix_ldl(sw)
        qdd = S.ldl_solve(prog, L, dinv, rhs[::-1])[::-1]
    prog.output("qdd", qdd, "joint accelerations")
    if variant == "FD2":     # α(k) = λ(k) + ζ(k) (4.22b); ζ holds the fictitious gravity acceleration
        alpha = [S.spatial_add(prog, lam[k], zeta[k]) for k in range(robot.nb)]
        prog.output("a0", _tip_accelerations(sw, V, alpha, gravity=True),
                    "tip accelerations J qdd + Jdot qd, [angular; linear], world axes")
    return prog


def _tip_accelerations(sw, V, alpha, gravity=False):
    """α(0) = φ*(1,0)α(1) + a(0) (seed 001 (4.23)) per tip, as the classical
    acceleration of the tip point in world axes; ``gravity``: α holds the base
    acceleration −a_g, removed here."""
    prog, out = sw.prog, []
    for tip in sw.robot.tips:
        R, _ = sw.world(tip.body)
        w, wd, vd = V[tip.body][0], alpha[tip.body][0], alpha[tip.body][1]
        off = S.const_vector(tip.offset)
        lin = S.matvec(prog, R, S.add(prog, vd, S.cross(prog, wd, off), S.cross(prog, w, S.cross(prog, w, off))))
        if gravity:
            lin = S.sub(prog, lin, sw.base_acceleration()[1])
        out += S.matvec(prog, R, wd) + lin
    return out


def fd4(sw, qd, tau):
    """FD4 (seed 001 (5.13)–(5.17)) recorded into ``sw.prog``.

    Returns θ̈ (list), λ (per body; λ(k) = α(k) + φ*(base, k)a_g, the link
    acceleration plus the fictitious gravity acceleration), V and the articulated
    quantities, for callers that continue from it.
    """
    prog, robot = sw.prog, sw.robot
    n = robot.nb
    V, a, b = sw.velocities(qd)                                          # (5.13)
    a = list(a)
    for k, body in enumerate(robot.bodies):
        if body.parent < 0:   # ā = a + E*a_g (seed 000 end of §4.3)
            a[k] = S.spatial_add(prog, a[k], sw.frame(k).phi_star(sw.base_acceleration()))
    art = Articulated(sw)
    # (5.16): z(k) starts at b(k); Pa enters before the ψ transfer
    z = list(b)
    nu = [None] * n
    for k in reversed(range(n)):
        fr = sw.frame(k)
        zk = z[k]
        eps = [prog.let(t - h) for t, h in zip(sw.part(tau, k), fr.project(zk))]
        nu[k] = art.solve(prog, k, eps)
        p = sw.parent(k)
        if p >= 0:
            Pa = S.inertia_times(prog, art.P[k], a[k])
            zPa = S.spatial_add(prog, zk, Pa)
            e2 = [prog.let(e - h) for e, h in zip(eps, fr.project(Pa))]    # T − H(z + Pa)
            z[p] = S.spatial_add(prog, z[p], fr.phi(zPa), art.phi_G_times(k, e2))
    qdd, lam = _smooth(sw, art, nu, a)                                   # (5.17)
    return qdd, lam, V, art


def tip_force_response(sw, art, f):
    """Δθ̈ = −(I − HψK)*D⁻¹HψB f(0) (seed 002 (18)) for tip forces ``f`` (6m, world axes)."""
    z = [(S.ZERO3, S.ZERO3) for _ in range(sw.robot.nb)]
    for i, tip in enumerate(sw.robot.tips):
        z[tip.body] = S.spatial_add(sw.prog, z[tip.body], sw.tip_force_in_body(tip, f[6 * i:6 * i + 6]))
    nu = _filter(sw, art, [sp.Integer(0)] * sw.robot.nv, z)
    return _smooth(sw, art, nu)[0]


def mass_matrix_inverse(robot):
    """M⁻¹ = (I − HψK)* D⁻¹ (I − HψK) (seed 001 Theorem 4.1 (4.16)), column j
    from the filter/smoother sweeps with T = e_j (zeros pruned: O(n²))."""
    prog = Program("mass_matrix_inverse_innovations", "inverse mass matrix by the innovations factorization, "
                   "row-major n x n")
    n = robot.n
    q = prog.input("q", robot.nq, "joint positions")
    sw = Sweeps(prog, robot, q)
    art = Articulated(sw)
    cols = []
    for j in range(n):
        prog.banner(f"column {j}")
        T = [sp.Integer(1 if i == j else 0) for i in range(n)]
        nu = _filter(sw, art, T, [(S.ZERO3, S.ZERO3) for _ in range(robot.nb)])
        cols.append(_smooth(sw, art, nu)[0])
    prog.output("Minv", [cols[j][i] for i in range(n) for j in range(n)], "inverse mass matrix, row-major")
    return prog


def tip_force_acceleration(robot):
    """Δθ̈ = −(I − HψK)* D⁻¹ H ψ B f(0) (seed 002 (18))."""
    prog = Program("tip_force_acceleration", "joint accelerations caused by tip forces alone")
    q = prog.input("q", robot.nq, "joint positions")
    f = prog.input("f", 6 * len(robot.tips), "tip forces on the environment")
    sw = Sweeps(prog, robot, q)
    prog.output("qdd", tip_force_response(sw, Articulated(sw), f), "joint accelerations")
    return prog


def forward_kinematics(robot):
    """Tip poses from the world poses of the bodies, row-major 4×4 per tip."""
    prog = Program("forward_kinematics", "world pose of each tip, row-major 4x4")
    q = prog.input("q", robot.nq, "joint positions")
    sw = Sweeps(prog, robot, q)
    out = []
    for tip in robot.tips:
        R, p = sw.world(tip.body)
        Rt = S.matmul(prog, R, S.const_matrix(tip.rotation))
        pt = S.add(prog, p, S.matvec(prog, R, S.const_vector(tip.offset)))
        for i in range(3):
            out += Rt[i] + [pt[i]]
        out += [0, 0, 0, 1]
    prog.output("T", out, "tip poses, row-major 4x4 each")
    return prog


def jacobian_rows(sw):
    """J = B*φ*H* (seed 002 (1)) as 6m rows of nv scalars: the columns of body k
    for a tip are φ*(k, 0)H*(k), i.e. [z; z × (p_tip − p_k)] for an angular
    column (revolute, spherical, floating) and [0; z] for a linear one
    (prismatic, floating), z the world direction of the column."""
    prog, n = sw.prog, sw.robot.nv
    rows = []
    for tip in sw.robot.tips:
        R, p = sw.world(tip.body)
        pt = S.add(prog, p, S.matvec(prog, R, S.const_vector(tip.offset)))
        cols = [[sp.Integer(0)] * 6 for _ in range(n)]
        for k in sw.robot.ancestors(tip.body):
            Rk, pk = sw.world(k)
            fr = sw.frame(k)
            arm = None
            for c, (ha, hl) in zip(range(sw.vslices[k].start, sw.vslices[k].stop), fr.Hcols):
                za, zl = S.matvec(prog, Rk, ha), S.matvec(prog, Rk, hl)     # world axes
                if any(x != 0 for x in ha):
                    arm = arm or S.sub(prog, pt, pk)
                    zl = S.add(prog, zl, S.cross(prog, za, arm))
                cols[c] = za + zl
        rows += [[cols[k][r] for k in range(n)] for r in range(6)]
    return rows


def jacobian(robot):
    """J = B*φ*H* (seed 002 (1)), tips stacked: see :func:`jacobian_rows`."""
    prog = Program("jacobian", "tip Jacobians, [angular; linear] rows, world axes at the tip, row-major 6m x n")
    sw = Sweeps(prog, robot, prog.input("q", robot.nq, "joint positions"))
    prog.output("J", [x for row in jacobian_rows(sw) for x in row], "Jacobian, row-major")
    return prog


def jdot_qdot(robot):
    """J̇θ̇ = B*φ*a + a(0) (seed 000 (46)): tip classical accelerations at θ̈ = 0."""
    prog = Program("jdot_qdot", "tip bias accelerations Jdot qd, [angular; linear], world axes")
    n = robot.n
    q, qd = prog.input("q", robot.nq, "joint positions"), prog.input("qd", n, "joint velocities")
    sw = Sweeps(prog, robot, q)
    V, _, _ = sw.velocities(qd)
    alpha = []
    for k, body in enumerate(robot.bodies):
        ap = (S.ZERO3, S.ZERO3) if body.parent < 0 else alpha[body.parent]
        alpha.append(sw.accelerate(k, ap))
    prog.output("a0", _tip_accelerations(sw, V, alpha), "tip accelerations")
    return prog


# Families computed by several algorithms.  The family's own C function is the
# algorithm with the fewest operations (mul + add + div + sqrt) for the robot
# at hand, the SOA recursion (listed first) on ties; each algorithm also has a
# C function of its own name, generated with ``--variants``.
# family -> ((label, C function), ...)
CHOICES = {
    "mass_matrix_inverse": (("innovations", "mass_matrix_inverse_innovations"),
                            ("cholesky", "mass_matrix_inverse_cholesky")),
    "forward_dynamics": (("FD4", "forward_dynamics_fd4"), ("FD1", "forward_dynamics_fd1"),
                         ("FD3", "forward_dynamics_fd3"), ("CRBA", "forward_dynamics_crba")),
    "os_inertia": (("recursive", "os_inertia_recursive"), ("explicit", "os_inertia_explicit")),
}

# Algorithm variants (``--variants``): family -> the functions computing the same
# quantity another way, generated beside the default ones.  (c(0), g(0) beside
# the c+g shortcut os_bias are always generated.)  FD2 also returns α(0), so it
# is a variant but not a candidate of the forward dynamics choice.
VARIANTS = {
    "mass_matrix": ("mass_matrix_ne",),
    "mass_matrix_inverse": tuple(f for _, f in CHOICES["mass_matrix_inverse"]),
    "forward_dynamics": tuple(f for _, f in CHOICES["forward_dynamics"]) + ("forward_dynamics_fd2",),
    "os_inertia": tuple(f for _, f in CHOICES["os_inertia"]),
}


def cost(ops):
    """The operation count a family's choice minimizes."""
    return ops["mul"] + ops["add"] + ops["div"] + ops["sqrt"]


def cheapest(robot, family, ratio):
    """Record and finish every algorithm of ``family`` (:data:`CHOICES`); the
    cheapest, as the family's program (:func:`as_family`).  (``generate`` runs
    the algorithms as jobs of their own and calls :func:`as_family` itself.)"""
    table = registry()
    return as_family(family, {fname: table[fname][1](robot, ratio).finish() for _, fname in CHOICES[family]})


def as_family(family, programs):
    """The program of ``family`` from the finished programs of its algorithms
    (``{C name: Program}``): a copy of the one with the lowest :func:`cost`
    (the first on ties), named ``family``, its ``algorithm`` the label."""
    best_label, best = None, None
    for label, fname in CHOICES[family]:
        if best is None or cost(programs[fname].ops) < cost(best.ops):
            best_label, best = label, programs[fname]
    prog = copy.copy(best)
    labels = ", ".join(label for label, _ in CHOICES[family])
    prog.name, prog.algorithm = family, best_label
    prog.doc = best.doc + f". Algorithm: {best_label}, the cheapest of {labels} for this robot."
    return prog


def registry():
    """``{C function name: (needs tips, maker(robot, pivot ratio) -> Program)}`` in header order."""
    from . import recursion_os as os_

    return {
        "forward_kinematics": (True, lambda r, _: forward_kinematics(r)),
        "jacobian": (True, lambda r, _: jacobian(r)),
        "jdot_qdot": (True, lambda r, _: jdot_qdot(r)),
        "inverse_dynamics": (False, lambda r, _: inverse_dynamics(r)),
        "inverse_dynamics_tip_force": (True, lambda r, _: inverse_dynamics(
            r, tip_force=True, name="inverse_dynamics_tip_force")),
        "gravity": (False, lambda r, _: inverse_dynamics(r, with_qdd=False, with_qd=False, name="gravity")),
        "bias_forces": (False, lambda r, _: inverse_dynamics(r, with_qdd=False, name="bias_forces")),
        "coriolis": (False, lambda r, _: inverse_dynamics(r, with_gravity=False, with_qdd=False, name="coriolis")),
        "mass_matrix": (False, lambda r, _: mass_matrix(r)),
        "mass_matrix_ne": (False, lambda r, _: mass_matrix_ne(r)),
        "mass_matrix_inverse": (False, lambda r, x: cheapest(r, "mass_matrix_inverse", x)),
        "mass_matrix_inverse_innovations": (False, lambda r, _: mass_matrix_inverse(r)),
        "mass_matrix_inverse_cholesky": (False, lambda r, _: mass_matrix_inverse_cholesky(r)),
        "forward_dynamics": (False, lambda r, x: cheapest(r, "forward_dynamics", x)),
        "forward_dynamics_fd4": (False, lambda r, _: forward_dynamics(r, "FD4")),
        "forward_dynamics_fd1": (False, lambda r, _: forward_dynamics(r, "FD1")),
        "forward_dynamics_fd2": (True, lambda r, _: forward_dynamics(r, "FD2")),
        "forward_dynamics_fd3": (False, lambda r, _: forward_dynamics(r, "FD3")),
        "forward_dynamics_crba": (False, lambda r, _: forward_dynamics(r, "CRBA")),
        "tip_force_acceleration": (True, lambda r, _: tip_force_acceleration(r)),
        "os_inertia_inverse": (True, lambda r, _: os_.os_inertia_inverse(r)),
        "os_inertia": (True, lambda r, x: cheapest(r, "os_inertia", x)),
        "os_inertia_recursive": (True, os_.os_inertia),
        "os_inertia_explicit": (True, os_.os_inertia_explicit),
        "os_coriolis": (True, os_.os_coriolis),
        "os_gravity": (True, os_.os_gravity),
        "os_bias": (True, os_.os_bias),
        "osc_torque": (True, os_.osc_torque),
    }


def variant_names(families=None):
    """The variant functions of ``families`` (keys of :data:`VARIANTS`; None: all)."""
    if families is not None:
        unknown = sorted(set(families) - set(VARIANTS))
        if unknown:
            raise ValueError(f"unknown variant families {unknown}; choose from {', '.join(VARIANTS)}")
    return {f for fam, names in VARIANTS.items() if families is None or fam in families for f in names}


def function_names(robot, functions=None, variants=()):
    """Names of the functions generated for ``robot`` in header order: the
    default ones (those needing tips only when there are tips) plus the
    variants of the families in ``variants`` (None: every family), or exactly
    ``functions``."""
    table = registry()
    if functions is not None:
        unknown = sorted(set(functions) - set(table))
        if unknown:
            raise ValueError(f"unknown functions {unknown}; choose from {', '.join(table)}")
        chosen = set(functions)
    else:
        extra = variant_names(variants) if variants != () else set()
        chosen = (set(table) - variant_names()) | extra
    names = [name for name, (tips, _) in table.items() if name in chosen and (robot.tips or not tips)]
    singular = getattr(robot, "singular_joints", ())
    undefined = [name for name in names if name in NEEDS_INVERSE] if singular else []
    if undefined and functions is not None:
        raise RobotError(f"{robot.name}: cannot generate {', '.join(undefined)} (they need M^-1 or Lambda): "
                         f"{robot.singular_reason}")
    if undefined:
        warnings.warn(f"{robot.name}: left out {', '.join(undefined)} (they need M^-1 or Lambda): "
                      f"{robot.singular_reason}", ModelWarning, stacklevel=3)
    return [name for name in names if name not in undefined]


# The functions that need M⁻¹ or Λ (a solve with D(k)): not defined when the robot
# has joints with D(k) = 0 (``Robot.singular_joints``).
NEEDS_INVERSE = frozenset({
    "mass_matrix_inverse", "mass_matrix_inverse_innovations", "mass_matrix_inverse_cholesky",
    "forward_dynamics", "forward_dynamics_fd1", "forward_dynamics_fd2", "forward_dynamics_fd3",
    "forward_dynamics_fd4", "forward_dynamics_crba", "tip_force_acceleration", "os_inertia_inverse",
    "os_inertia", "os_inertia_recursive", "os_inertia_explicit", "os_coriolis", "os_gravity", "os_bias",
    "osc_torque"})


def make_program(robot, name, precision="double", trig_inputs=False):
    """Record the program of one function (not yet finished); with
    ``trig_inputs`` the cos/sin of revolute joint angles are inputs ``cq``, ``sq``."""
    from .program import TRIG_INPUTS
    from .reference import PIVOT_RATIO

    token = TRIG_INPUTS.set(trig_inputs)
    try:
        return registry()[name][1](robot, PIVOT_RATIO[precision])
    finally:
        TRIG_INPUTS.reset(token)


def all_programs(robot, precision="double", functions=None, variants=()):
    """The recorded programs of :func:`function_names`."""
    return [make_program(robot, name, precision) for name in function_names(robot, functions, variants)]
