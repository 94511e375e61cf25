"""The recursions' passes, recorded on sympy scalars: one function per pass.

Each pass walks the tree in one direction (:meth:`~soagen.model.robot.Robot.base_to_tip`
or :meth:`~soagen.model.robot.Robot.tip_to_base`) and records its statements into the
program of a :class:`Sweeps`; the makers in :mod:`soagen.passes.dynamics`,
:mod:`soagen.passes.kinematics` and :mod:`soagen.passes.operational_space` chain the passes.
The numpy reference (:mod:`soagen.reference`) has a pass of the same name for
each of them, written independently with dense 6×6 blocks.

Notation is the papers' (docs/references.md): [RK] Rodriguez & Kreutz (JPL
88-11), [KJR] Kreutz-Delgado, Jain & Rodriguez (IJRR 1992), [RJK] Rodriguez,
Jain & Kreutz-Delgado (IJRR 1991), [CK] Chang & Khatib (Adv. Robotics 2000).
The paper's ``k+1`` (towards the base) is ``parent(k)``, its ``k-1`` the
children.  Per body, in body-k axes unless said: V(k) spatial velocity, α(k)
acceleration, a(k) bias acceleration, b(k) bias force, f(k) force, all as
``(angular 3-list, linear 3-list)``; P(k) articulated inertia as ``(A, B, C)``
blocks; D(k) nv_k × nv_k; G(k), K(p,k) lists of nv_k spatial columns.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from soagen.passes import symbolic as S
from soagen.passes.actuators import subtract_friction
from soagen.passes.ldl import ldl, ldl_inverse, reverse
from soagen.passes.quadratic import QuadraticTerms, rigid_acceleration_matrix
from soagen.passes.tip_rows import tip_rows, tip_starts, tip_wrench
from soagen.model.robot import Robot
from soagen.program.statements import Program, const

ZERO6 = (S.ZERO3, S.ZERO3)


class Sweeps:
    """One program's view of the robot: joint frames (sin/cos once), and the
    velocity pass and world poses, each computed on first use and cached so a
    program records only what its algorithm needs."""

    def __init__(self, prog: Program, robot: Robot, q, label=""):
        self.prog, self.robot, self.q, self.label = prog, robot, q, label
        self.frames = [None] * robot.nb
        self._world = {}
        self.vslices = [robot.vslice(k) for k in range(robot.nb)]
        self.pi = getattr(prog, "parameters", None)   # the input π, or None: the robot's numbers

    def frame(self, k) -> S.JointFrame:
        """Body k's :class:`~soagen.passes.symbolic.JointFrame` (recorded on first use)."""
        if self.frames[k] is None:
            b = self.robot.bodies[k]
            qs = self.robot.qslice(k)
            self.frames[k] = S.JointFrame(self.prog, b, self.q[qs.start] if b.nq == 1 else list(self.q[qs]))
        return self.frames[k]

    def parent(self, k):
        return self.robot.bodies[k].parent

    def part(self, values, k):
        """Body ``k``'s entries (nv_k) of a joint-space list (qd, qdd, tau)."""
        return list(values[self.vslices[k]])

    def banner(self, text, equations=""):
        """Start of a pass: its name and the equations it records (``"RK (2.17)"``)."""
        self.prog.banner(f"{self.label}{text}" + (f" -- [{equations}]" if equations else ""), level=1)

    def body(self, k):
        """Start of body k's statements inside the current pass."""
        b = self.robot.bodies[k]
        self.prog.banner(f"{self.label}body {k}: {b.name} (joint {b.joint}, {b.joint_type})", level=2)

    def base_to_tip(self):
        """Body indices, parents first, each announced by a body banner."""
        for k in self.robot.base_to_tip():
            self.body(k)
            yield k

    def tip_to_base(self):
        """Body indices, children first, each announced by a body banner."""
        for k in self.robot.tip_to_base():
            self.body(k)
            yield k

    # ------------------------------------------------------------ parameters
    def spatial_inertia(self, k):
        """M(k) as (A, B, C) [RK (2.15)]: the robot's numbers, or from the input π."""
        if self.pi is None:
            return S.spatial_inertia(self.robot.bodies[k])
        from soagen.passes.linear_in_parameters import spatial_inertia
        return spatial_inertia(self.pi[10 * k:10 * k + 10])

    def actuator(self, i, which):
        """Actuator parameter ``which`` (0 armature, 1 viscous, 2 Coulomb) of velocity
        index i: a number, a symbol of π, or None (not actuated)."""
        robot = self.robot
        if robot.actuators is None or i not in robot.actuated:
            return None
        if self.pi is not None:
            return self.pi[10 * robot.nb + 3 * robot.actuated.index(i) + which]
        return const((robot.actuators.armature, robot.actuators.viscous, robot.actuators.coulomb)[which][i])

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
        n = S.add(self.prog, S.matTvec(self.prog, R, f[:3]), S.cross(self.prog, S.const_vector(tip.offset), F))
        return n, F


# ================================================================ velocities
class Velocities:
    """Result of :func:`velocities`: V(k), a(k), b(k) per body, and the parts of
    a(k) that :func:`accelerate` adds at different places.

    ``centripetal[k]`` = ω_p × (ω_p × ℓ) in the parent's axes; ``a_joint[k]`` =
    [ω_p × ω_r; 2 ω_p × v_r + ω_r × v_r] in body axes, [ω_r; v_r] = H*θ̇ the
    joint's relative velocity; a(k) = [a_joint_ang; Rᵀ centripetal + a_joint_lin].
    """

    def __init__(self, V, a, b, centripetal, a_joint):
        self.V, self.a, self.b, self.centripetal, self.a_joint = V, a, b, centripetal, a_joint


def velocities(sw, qd):
    """Base-to-tip velocity pass: V(k) = φ*(p,k)V(p) + H*(k)θ̇(k) [RK (2.17)],
    the bias acceleration a(k) [RK (2.19), (2.32)] and the bias force b(k)
    [KJR (47)], body axes.  Terms quadratic in ω(k) (gyroscopic ω × I_oω,
    ω × (ω × m p) and each child's centripetal ω × (ω × ℓ)) share the products
    ω_a ω_b where that is cheaper (:class:`~soagen.passes.quadratic.QuadraticTerms`)."""
    prog, robot = sw.prog, sw.robot
    n = robot.nb
    sw.banner("base-to-tip velocities V, bias accelerations a, bias forces b", "RK (2.17)-(2.19), (2.32); KJR (47)")
    V, hqs = [None] * n, [None] * n
    b, centripetal, a_joint, a = [None] * n, [S.ZERO3] * n, [None] * n, [None] * n
    children = [robot.children(k) for k in range(n)]
    for k in sw.base_to_tip():
        fr = sw.frame(k)
        p = sw.parent(k)
        hq = fr.along(sw.part(qd, k))
        hqs[k] = hq
        if p < 0:
            V[k] = (S.vec(prog, hq[0]), S.vec(prog, hq[1]))
        else:
            wpb, vpb = fr.phi_star(V[p])
            V[k] = (S.add(prog, wpb, hq[0]), S.add(prog, vpb, hq[1]))
        body = robot.bodies[k]
        fixed_ell = [c for c in children[k] if sw.frame(c).fixed_offset]
        own = [] if sw.pi is not None else [("gyroscopic", S.origin_inertia(body)),
                                            ("centripetal", body.mass * np.asarray(body.com, float))]
        terms = own + [("centripetal", robot.bodies[c].translation) for c in fixed_ell]
        values = QuadraticTerms(prog, V[k][0]).evaluate(terms)
        if own:
            b[k] = (values[0], values[1])                                  # [KJR (47)]
        else:                                                              # π an input
            from soagen.passes.linear_in_parameters import bias_force
            b[k] = bias_force(prog, sw.pi[10 * k:10 * k + 10], V[k][0])
        for c, v in zip(fixed_ell, values[len(own):]):
            centripetal[c] = v
        for c in children[k]:
            if c not in fixed_ell:     # prismatic, floating: ℓ depends on q
                w = V[k][0]
                centripetal[c] = S.cross(prog, w, S.cross(prog, w, sw.frame(c).ell))
        # a(k), reference.velocities: [ω_p × ω_r; ω_p × (ω_p × ℓ) + 2 ω_p × v_r + ω_r × v_r]
        wr, vr = hq
        spin = S.cross(prog, wr, vr)          # a floating joint's ω_r × v_r
        if p < 0:
            a_joint[k] = (S.ZERO3, spin)
            a[k] = a_joint[k]
            continue
        wpb = fr.down(V[p][0])
        lin = fr.down(centripetal[k])
        a_joint[k] = (S.cross(prog, wpb, wr), S.add(prog, S.scale(prog, 2, S.cross(prog, wpb, vr)), spin))
        a[k] = (a_joint[k][0], S.add(prog, lin, a_joint[k][1]))
    return Velocities(V, a, b, centripetal, a_joint)


def accelerate(sw, vel, k, alpha_parent, qdd_k=(0,), W_parent=None):
    """α(k) = φ*(p,k)α(p) + H*(k)θ̈(k) + a(k) [RK (2.26)], with the centripetal
    part of a(k) added in parent axes before the rotation (one rotation per
    body instead of two).  With ``W_parent`` = [ω̇]× + [ω]×² of the parent,
    ω̇ × ℓ + ω × (ω × ℓ) = W ℓ."""
    prog, fr = sw.prog, sw.frame(k)
    w, v = alpha_parent
    if W_parent is not None and fr.fixed_offset:
        lin = S.add(prog, v, S.matvec(prog, W_parent, fr.ell))
    else:
        lin = S.add(prog, v, S.cross(prog, w, fr.ell), vel.centripetal[k])
    hq = fr.along(qdd_k)
    aj = vel.a_joint[k]
    return S.add(prog, fr.down(w), hq[0], aj[0]), S.add(prog, fr.down(lin), hq[1], aj[1])


def base_acceleration(robot):
    """α(n+1) = [0; −g]: gravity as an acceleration of the base [RK (3.21)]."""
    return S.ZERO3, [const(-g) for g in robot.gravity]


def gravity_bar(sw, a):
    """ā = a + E*a_g: the gravity acceleration folded into the root bodies'
    bias accelerations [KJR end of §4.3]; a new per-body list."""
    a = list(a)
    for k in sw.robot.roots():
        a[k] = S.spatial_add(sw.prog, a[k], sw.frame(k).phi_star(base_acceleration(sw.robot)))
    return a


def tip_accelerations(sw, V, alpha, gravity=False):
    """α(0) = φ*(1,0)α(1) + a(0) [RK (4.23)] per tip, as the classical
    acceleration of the tip point in world axes; ``gravity``: α holds the base
    acceleration −a_g, removed here.  A list (r,): the rows each tip has."""
    prog, out = sw.prog, []
    for tip in sw.robot.tips:
        R, _ = sw.world(tip.body)
        w, wd, vd = V[tip.body][0], alpha[tip.body][0], alpha[tip.body][1]
        off = S.const_vector(tip.offset)
        lin = S.matvec(prog, R, S.add(prog, vd, S.cross(prog, wd, off), S.cross(prog, w, S.cross(prog, w, off))))
        if gravity:
            lin = S.sub(prog, lin, base_acceleration(sw.robot)[1])
        out += tip_rows(tip, S.matvec(prog, R, wd) + lin)
    return out


# ============================================================== Newton–Euler
def newton_euler(sw, qd, qdd, with_gravity=True):
    """Newton–Euler before the force sum: the velocity pass, then base-to-tip
    α(k) [RK (2.26)] and f(k) = M(k)α(k) + b(k) [RK (2.29)], body axes.
    Returns (velocities, α, f)."""
    prog = sw.prog
    vel = velocities(sw, qd)
    sw.banner("base-to-tip accelerations alpha and body forces M alpha + b", "RK (2.26), (2.29)")
    alpha, f, W = [None] * sw.robot.nb, [None] * sw.robot.nb, [None] * sw.robot.nb
    for k in sw.base_to_tip():
        body = sw.robot.bodies[k]
        p = body.parent
        if p < 0:
            ap = base_acceleration(sw.robot) if with_gravity else ZERO6
        else:
            ap = alpha[p]
        alpha[k] = accelerate(sw, vel, k, ap, sw.part(qdd, k), None if p < 0 else W[p])     # (2.26)
        W[k] = rigid_acceleration_matrix(prog, vel.V[k][0], alpha[k][0])
        if sw.pi is not None:                                              # π an input: f = Y_k π_k
            from soagen.passes.linear_in_parameters import body_force
            f[k] = body_force(prog, sw.pi[10 * k:10 * k + 10], vel.V[k][0], alpha[k][0], alpha[k][1], W[k])
            continue
        M = S.spatial_inertia(body)
        top = [prog.let(sum(M[0][i][j] * alpha[k][0][j] + M[1][i][j] * alpha[k][1][j] for j in range(3))
                        + vel.b[k][0][i]) for i in range(3)]
        mc = S.const_vector(body.mass * np.asarray(body.com, float))
        Wmc = S.matvec(prog, W[k], mc)          # ω̇ × mc + ω × (ω × mc)
        bot = [prog.let(M[2][i][i] * alpha[k][1][i] + Wmc[i]) for i in range(3)]
        f[k] = (top, bot)
    return vel, alpha, f


def tip_forces(sw, f_tip):
    """B f(0): each tip's force (world axes at the tip; 6 rows per full tip, 3 per
    point tip, stacked (r,)) in its body's axes; a per-body list of spatial forces."""
    out = [ZERO6 for _ in range(sw.robot.nb)]
    for tip, r in zip(sw.robot.tips, tip_starts(sw.robot)):
        six = tip_wrench(tip, f_tip[r:r + len(tip.rows)])
        out[tip.body] = S.spatial_add(sw.prog, out[tip.body], sw.tip_force_in_body(tip, six))
    return out


def forces_tip_to_base(sw, f):
    """Tip-to-base force pass f(p) += φ(p, k) f(k) [RK (2.29)], in place."""
    sw.banner("tip-to-base forces f(p) += phi(p, k) f(k)", "RK (2.29)")
    for k in sw.tip_to_base():
        p = sw.parent(k)
        if p >= 0:
            f[p] = S.spatial_add(sw.prog, f[p], sw.frame(k).phi(f[k]))


def joint_space(sw, per_body):
    """Concatenate per-body lists (nv_k each) into one joint-space list (nv)."""
    return [x for k in range(sw.robot.nb) for x in per_body[k]]


def project(sw, f):
    """T = H f [RK (2.30)]: the joint-space components of per-body spatial forces (nv)."""
    return joint_space(sw, [sw.frame(k).project(f[k]) for k in range(sw.robot.nb)])


# ========================================================= composite inertias
def composite_inertias(sw):
    """Tip-to-base composite inertias R(k) = M(k) + Σ_c φ(k,c)R(c)φ*(k,c)
    [RK (3.20)], carried as their ten numbers (a composite of rigid bodies is one:
    :class:`~soagen.passes.symbolic.RigidInertia`), one per body."""
    prog, robot = sw.prog, sw.robot
    sw.banner("tip-to-base composite inertias R(k)", "RK (3.20)")
    R = [S.RigidInertia.from_blocks(sw.spatial_inertia(k)) for k in range(robot.nb)]
    for k in sw.tip_to_base():
        p = sw.parent(k)
        if p >= 0:
            R[p] = R[p].plus(prog, sw.frame(k).phi_rigid_inertia(R[k]))
    return R


def composite_mass_matrix(sw):
    """M = HφMφ*H* [RK (3.20)] from the composite inertias: column block k is
    R(k)H*(k) carried to each ancestor i by φ(i, k) and projected; a nested
    nv×nv list."""
    prog, robot = sw.prog, sw.robot
    R = composite_inertias(sw)
    nv = robot.nv
    sw.banner("mass matrix columns H(i) phi(i, k) R(k) H*(k), base-to-tip over k", "RK (3.20)")
    M = [[sp.Integer(0)] * nv for _ in range(nv)]
    for k in sw.base_to_tip():
        fr = sw.frame(k)
        sk = sw.vslices[k]
        X = [R[k].times(prog, h) for h in fr.Hcols]                     # R(k) H*(k), column by column
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
    for i in robot.actuated:                                             # the rotor inertias
        M[i][i] = prog.let(M[i][i] + sw.actuator(i, 0))
    return M


def mass_matrix_ltdl(sw):
    """M = Lᵀ D L (Featherstone's LTDL: the LDLᵀ of the reversed M, no fill-in
    on trees); returns the unit-lower factor and 1/d of the reversed matrix."""
    M = composite_mass_matrix(sw)
    sw.banner("LDL^T of the reversed mass matrix (M = L^T D L, no fill-in on trees)")
    L, _, dinv = ldl(sw.prog, reverse(M), None)
    return L, dinv


# ======================================================= articulated bodies
class ArticulatedBodies:
    """Result of :func:`articulated`, per body: P(k) (A, B, C blocks), PH(k) =
    P(k)H*(k) and G(k) = PH(k)D⁻¹(k) as lists of nv_k spatial columns, D⁻¹(k)
    an nv_k × nv_k nested list, and K(p,k) = φ(p,k)G(k) [KJR (32)] in the
    parent's axes (None at roots)."""

    def __init__(self, n):
        self.P, self.PH, self.Dinv, self.G, self.K = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n

    def solve(self, prog, k, eps):
        """ν = D⁻¹(k) ε for a joint-space list ε (nv_k)."""
        Dinv = self.Dinv[k]
        return [prog.let(sum(Dinv[i][j] * eps[j] for j in range(len(eps)))) for i in range(len(eps))]

    def G_star(self, k, y):
        """G*(k) y for a spatial vector y: nv_k (unrecorded) sums."""
        return [_dot(g, y) for g in self.G[k]]

    def K_times(self, k, values):
        """K(p,k) x for nv_k values: a parent-axes spatial vector of (unrecorded) sums."""
        return _combine(self.K[k], values)

    def K_star(self, k, v):
        """K*(p,k) v = G*(k)φ*(p,k) v for a parent-axes motion vector v: nv_k sums."""
        return [_dot(g, v) for g in self.K[k]]


def articulated(sw):
    """Tip-to-base Riccati pass [KJR (37)], [RK (4.4)–(4.7)]: P(k), D(k) =
    H P H*, G(k) = P H* D⁻¹, K(p,k) = φ(p,k)G(k) and
    P(p) += ψ(p,k)P(k)ψ*(p,k), ψ = φ(I − G H).

    D⁻¹(k) is 1/D for one dof, else the inverse of an unrolled LDLᵀ of D(k).
    The rows and columns of P⁺(k) = [I − G(k)H(k)] P(k) along coordinate joint
    axes are exactly zero; with Q, ũ, g̃ = P(k), PH, G without them,
    P⁺ = Q − Σ ũ_i g̃_iᵀ and φP⁺φ* = φQφ* − Σ (φũ_i)(φg̃_i)ᵀ: the congruence
    does not wait for the division by D(k), and the rank-nv downdate is applied
    in the parent's axes (a shorter tip-to-base dependency chain).  The removed
    entries of G are known: H G = I gives G_j = g̃_j + H*_j for a unit column j,
    so K_j = φg̃_j + φH*_j.
    """
    prog, robot = sw.prog, sw.robot
    art = ArticulatedBodies(robot.nb)
    art.P = [sw.spatial_inertia(k) for k in range(robot.nb)]
    sw.banner("tip-to-base articulated-body Riccati pass P, D, G, K", "KJR (30)-(32), (37); RK (4.4)-(4.7)")
    for k in sw.tip_to_base():
        fr = sw.frame(k)
        P = art.P[k]
        PH = [S.inertia_times(prog, P, h) for h in fr.Hcols]               # P(k) H*(k)
        D = [fr.project(u) for u in PH]                                    # (30), D[j][i] = H_i (PH)_j
        rotor = [sw.actuator(i, 0) for i in range(sw.vslices[k].start, sw.vslices[k].stop)]
        if any(x is not None and x != 0 for x in rotor):   # D(k) = H P H* + armature: H P⁺ is no longer 0
            D = [[prog.let(x + rotor[j]) if i == j else x for i, x in enumerate(col)] for j, col in enumerate(D)]
        if fr.nv == 1:
            Dinv = [[prog.let(1 / D[0][0])]]
        else:
            L, _, dinv = ldl(prog, [[D[j][i] for j in range(fr.nv)] for i in range(fr.nv)], None)
            Dinv = ldl_inverse(prog, L, dinv)
        art.PH[k], art.Dinv[k] = PH, Dinv
        art.G[k] = [_columns_times(prog, PH, Dinv, j) for j in range(fr.nv)]   # (31)
        p = sw.parent(k)
        if p < 0:
            continue
        armature = any(x is not None and x != 0 for x in rotor)
        zero = set() if armature else fr.unit_indices()
        phi_PH = [fr.phi(_cut(u, zero)) for u in PH]                       # φ ũ_i, parent axes
        phi_g = [_columns_times(prog, phi_PH, Dinv, j) for j in range(fr.nv)]   # φ g̃_j
        art.K[k] = phi_g if armature else [_plus_axis(prog, fr, phi_g[j], h) for j, h in enumerate(fr.Hcols)]  # (32)
        C = fr.phi_inertia(_cut_inertia(P, zero))                          # φ Q φ*
        old = art.P[p]
        fu, fg = [flat(x) for x in phi_PH], [flat(x) for x in phi_g]

        def parent(blk, i, j, old=old, C=C, fu=fu, fg=fg):
            r, c = _flat_index(blk, i, j)
            return prog.let(old[blk][i][j] + C[blk][i][j] - sum(x[r] * y[c] for x, y in zip(fu, fg)))

        art.P[p] = (S.sym_from_upper(lambda i, j: parent(0, i, j)),
                    [[parent(1, i, j) for j in range(3)] for i in range(3)],
                    S.sym_from_upper(lambda i, j: parent(2, i, j)))          # (37)
    return art


def flat(v):
    """A spatial vector (angular, linear) as one 6-list."""
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


def _plus_axis(prog, fr, phi_g, h):
    """K_j = φg̃_j + φH*_j when column h of H* is a ± unit vector (whose row was
    cut), else φg̃_j: H G = I makes G_j exactly H*_j on the cut rows."""
    nonzero = [x for x in flat(h) if x != 0]
    if not (len(nonzero) == 1 and abs(nonzero[0]) == 1):
        return phi_g
    ph = fr.phi(h)
    return S.add(prog, phi_g[0], ph[0]), S.add(prog, phi_g[1], ph[1])


# ==================================================== innovations sweeps
def innovations_filter(sw, art, T, z):
    """Tip-to-base innovations filter [RK (4.20), (5.16)]: ε = T − Hz,
    ν = D⁻¹ε, z(p) += ψ(p,k)z(k) + K(p,k)T(k) = φ(p,k)z(k) + K(p,k)ε(k).
    ``z`` holds the per-body injected forces on entry and is updated in place;
    ``T`` is a joint-space list; returns ν per body."""
    prog = sw.prog
    nu = [None] * sw.robot.nb
    sw.banner("tip-to-base innovations filter z, epsilon, nu = D^-1 epsilon", "RK (4.19)-(4.20)")
    for k in sw.tip_to_base():
        fr = sw.frame(k)
        eps = [prog.let(t - h) for t, h in zip(sw.part(T, k), fr.project(z[k]))]
        nu[k] = art.solve(prog, k, eps)
        p = sw.parent(k)
        if p >= 0:
            z[p] = S.spatial_add(prog, z[p], fr.phi(z[k]), art.K_times(k, eps))
    return nu


def innovations_smoother(sw, art, nu, a=None):
    """Base-to-tip smoother [RK (4.22), (5.17)]:
    θ̈(k) = ν(k) − G*(k)[φ*(p,k)λ(p) + a(k)], λ(k) = φ*(p,k)λ(p) + a(k) + H*(k)θ̈(k).
    G*φ*λ(p) is taken as K*λ(p), which does not wait for φ*λ(p).  Returns θ̈
    (joint-space list) and λ per body."""
    prog = sw.prog
    lam, qdd = [None] * sw.robot.nb, [None] * sw.robot.nb
    sw.banner("base-to-tip innovations smoother lambda, qdd", "RK (4.21)-(4.22), (5.17)")
    for k in sw.base_to_tip():
        fr = sw.frame(k)
        p = sw.parent(k)
        known = [0] * fr.nv if a is None else art.G_star(k, a[k])
        if p >= 0:
            known = [x + y for x, y in zip(known, art.K_star(k, lam[p]))]
        qdd[k] = [prog.let(v - g) for v, g in zip(nu[k], known)]
        y = [ZERO6 if p < 0 else fr.phi_star(lam[p])]
        if a is not None:
            y.append(a[k])
        lam[k] = S.spatial_add(prog, *y, fr.along(qdd[k]))
    return joint_space(sw, qdd), lam


def innovations_solve(sw, art, T, z=None):
    """θ̈ = (I − HψK)* D⁻¹ (I − HψK) T [RK (4.18)] (with forces ``z`` per body
    injected into the filter: −(I − HψK)*D⁻¹Hψ z added, [RJK (18)]); returns θ̈
    and λ."""
    z = [ZERO6 for _ in range(sw.robot.nb)] if z is None else z
    return innovations_smoother(sw, art, innovations_filter(sw, art, T, z))


def fd4(sw, qd, tau):
    """FD4 [RK (5.13)–(5.17)]: velocities, the Riccati pass, the filter with
    Pa entering before the ψ transfer, and the smoother.

    Returns θ̈ (list), λ (per body; λ(k) = α(k) + φ*(base, k)a_g, the link
    acceleration plus the fictitious gravity acceleration), the velocities and
    the articulated quantities, for callers that continue from it.
    """
    prog, robot = sw.prog, sw.robot
    tau = subtract_friction(sw, tau, qd)
    vel = velocities(sw, qd)                                            # (5.13)
    a = gravity_bar(sw, vel.a)
    art = articulated(sw)
    z = list(vel.b)                                                     # (5.16): z(k) starts at b(k)
    nu = [None] * robot.nb
    sw.banner("tip-to-base FD4 filter z, epsilon, nu", "RK (5.14), (5.16)")
    for k in sw.tip_to_base():
        fr = sw.frame(k)
        zk = z[k]
        eps = [prog.let(t - h) for t, h in zip(sw.part(tau, k), fr.project(zk))]
        nu[k] = art.solve(prog, k, eps)
        p = sw.parent(k)
        if p >= 0:
            Pa = S.inertia_times(prog, art.P[k], a[k])
            zPa = S.spatial_add(prog, zk, Pa)
            e2 = [prog.let(e - h) for e, h in zip(eps, fr.project(Pa))]    # T − H(z + Pa)
            z[p] = S.spatial_add(prog, z[p], fr.phi(zPa), art.K_times(k, e2))
    qdd, lam = innovations_smoother(sw, art, nu, a)                     # (5.15), (5.17)
    return qdd, lam, vel, art


def tip_force_response(sw, art, f):
    """Δθ̈ = −(I − HψK)*D⁻¹HψB f(0) [RJK (18)] for tip forces ``f`` (r,), world axes."""
    return innovations_solve(sw, art, [sp.Integer(0)] * sw.robot.nv, tip_forces(sw, f))[0]
