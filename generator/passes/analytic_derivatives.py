"""Analytical derivatives of inverse dynamics, ∂τ/∂q and ∂τ/∂q̇, by the
world-frame recursion of Carpentier & Mansard, "Analytical derivatives of
rigid body dynamics algorithms", RSS 2018 (Pinocchio's
``computeRNEADerivatives``), recorded on symbols for one robot.

Notation (the paper's, Pinocchio's names in brackets).  Every spatial
quantity is expressed in one frame fixed in space (Pinocchio's "o" frame, world
axes at the world origin; for a tree on a floating base, the frame that
coincides with the base at this instant, :func:`fixed_frames`), so a spatial
vector of body k keeps its value when carried to any other body:

* S_k  6 × nv_k motion subspace [J_cols], v_k, a_k the body velocity and
  acceleration (a_k holds the gravity acceleration −g of the base) [ov, oa_gf],
* I_k  the spatial inertia [oinertias], h_k = I_k v_k the momentum [oh],
  f_k = I_k a_k + v_k ×* h_k the body force [of],
* per joint column s of S_j, with λ = λ(j) the parent body:
  ν = v_λ × s [dVdq], ∂a/∂q = a_λ × s + v_λ × ν [dAdq],
  ∂a/∂q̇ = v_j × s + ν [dAdv]; for a one-dof joint S_j × S_j = 0, so
  v_j × s = ν, ∂a/∂q̇ = 2ν and v_j × S_j q̇_j = ν q̇_j,
* the inertia's variation along v_k: B_k x = v_k ×* I_k x − I_k (v_k × x) + x ×* h_k
  [doYcrb], stored as its symmetric part Σ_k = −(D + Dᵀ),
  D = I_k v_k×, plus the momentum h_k,
* composites over the subtree of k, written with a tilde: Ĩ_k [oYcrb],
  B̃_k [doYcrb], F̃_k = Σ f [of after the backward pass].

Moving q along column s of joint j moves the subtree of j rigidly by the world
twist s (the tangent space of :meth:`~soagen.model.robot.Robot.integrate`, Pinocchio's
for quaternion joints), which carries every world quantity of the subtree by
s× (motions) or s×* (forces) and leaves their projections unchanged; what is
left is ν, ∂a/∂q, ∂a/∂q̇.  With F̃ the composite force and Ĩ, B̃ the composite
inertia and its variation (the backward pass):

* rows i ⪯ j (ancestors of j and j itself), column s of j:
  ∂τ_i/∂q_s = S_iᵀ (Ĩ_j ∂a/∂q + B̃_j ν + [i ≠ j] s ×* F̃_j),
  ∂τ_i/∂q̇_s = S_iᵀ (Ĩ_j ∂a/∂q̇ + B̃_j s);
* rows k ≻ j (strict descendants of j):
  ∂τ_k/∂q_s = (Ĩ_k S_k)ᵀ ∂a/∂q + (B̃_kᵀ S_k)ᵀ ν,  ∂τ_k/∂q̇_s = (Ĩ_k S_k)ᵀ ∂a/∂q̇ + (B̃_kᵀ S_k)ᵀ s.

The per-body quantities (S, v, a, I, h, f, B, the composites and the
products by them) are recorded once, O(n); only the dot products of 6-vectors
of two bodies on one root path are per pair, O(n²).  The actuators' armature
multiplies q̈ and adds nothing here; their friction adds its slope to
∂τ/∂q̇'s diagonal.

The paper's equation numbers are not quoted: the passes follow Pinocchio's
``ComputeRNEADerivativesForwardStep`` and ``ComputeRNEADerivativesBackwardStep``
(rnea-derivatives.hxx), whose names are given in brackets.
"""
from __future__ import annotations

import sympy as sp

from soagen.model.robot import FLOATING
from soagen.passes import symbolic as S
from soagen.passes.actuators import per_actuator
from soagen.passes.sweeps import Sweeps
from soagen.program.statements import const

ZERO6 = (S.ZERO3, S.ZERO3)


# ============================================================ spatial algebra in world axes
def motion_cross(prog, v, x):
    """v × x for motion vectors v = (ω, v), x = (ω', v'):
    (ω × ω', ω × v' + v × ω'); a spatial vector."""
    w, u = v
    return S.cross(prog, w, x[0]), S.add(prog, S.cross(prog, w, x[1]), S.cross(prog, u, x[0]))


def force_cross(prog, v, f):
    """v ×* f for a motion v = (ω, v) and a force f = (n, F):
    (ω × n + v × F, ω × F); a spatial force."""
    w, u = v
    return S.add(prog, S.cross(prog, w, f[0]), S.cross(prog, u, f[1])), S.cross(prog, w, f[1])


def dot6(prog, a, b):
    """aᵀ b of two spatial vectors (a motion and a force); one scalar."""
    if a is None or b is None:
        return sp.Integer(0)
    return prog.let(sum(a[0][i] * b[0][i] + a[1][i] * b[1][i] for i in range(3)))


def add6(prog, *xs):
    """Sum of spatial vectors (None entries skipped)."""
    xs = [x for x in xs if x is not None]
    return S.spatial_add(prog, *xs) if xs else ZERO6


def to_world(prog, R, p, x):
    """A body-axes motion vector x = (ω, v) at the body origin in world axes at
    the world origin: (R ω, R v + p × R ω); R (3, 3), p (3,) the body's world pose."""
    w = S.matvec(prog, R, x[0])
    return w, S.add(prog, S.matvec(prog, R, x[1]), S.cross(prog, p, w))


def world_inertia(sw, k, R, p):
    """I_k of body k at world pose (R, p) [Pinocchio ``oMi.act(inertia)``], a
    :class:`~soagen.passes.symbolic.RigidInertia`: c = R c_k + p, h = m c,
    Ī = R I_c Rᵀ + m (|c|² 1 − c cᵀ) from the robot's numbers; with the parameters π as inputs,
    from the body's m, h_o = m c_k and Ī_o about its origin (:meth:`Sweeps.spatial_inertia`):
    h = R h_o + m p, Ī = R Ī_o Rᵀ − p (R h_o)ᵀ − (R h_o) pᵀ − m p pᵀ + (2 p·R h_o + m p·p) 1."""
    prog = sw.prog
    if sw.pi is not None:
        inertia = S.RigidInertia.from_blocks(sw.spatial_inertia(k))
        m = inertia.m
        Rh, RJ = S.matvec(prog, R, inertia.h), S.rotate_sym(prog, R, inertia.J)
        diagonal = prog.let(2 * sum(p[i] * Rh[i] for i in range(3)) + m * sum(x * x for x in p))
        return S.RigidInertia(m, S.add(prog, Rh, [m * x for x in p]), S.sym_from_upper(lambda i, j: prog.let(
            RJ[i][j] - p[i] * Rh[j] - Rh[i] * p[j] - m * p[i] * p[j] + (diagonal if i == j else 0))))
    body = sw.robot.bodies[k]
    m = const(body.mass)
    c = S.add(prog, S.matvec(prog, R, S.const_vector(body.com)), p)                  # world com (3,)
    h = S.scale(prog, m, c)                                                          # m c (3,)
    Ic = S.rotate_sym(prog, R, S.sym_from_upper(lambda i, j: const(body.inertia[i][j])))  # R I_c Rᵀ
    cc = [[prog.let(h[i] * c[j]) for j in range(3)] for i in range(3)]               # m c cᵀ
    trace = cc[0][0] + cc[1][1] + cc[2][2]
    return S.RigidInertia(m, h, S.sym_from_upper(lambda i, j: prog.let(
        Ic[i][j] + (trace if i == j else 0) - cc[i][j])))


class Variation:
    """B x = v×* I x − I (v × x) + x ×* h, the variation of a (composite) inertia along
    the body velocities [doYcrb], with I = [[Ī, h×], [−h×, m]] and
    v = (ω, u): its symmetric part v×* I − I v× is [[Σ, (h_F)×], [−(h_F)×, 0]] with
    h_F = m u − h × ω the linear momentum and Σ = −(Īω× + (Īω×)ᵀ) − (u hᵀ + h uᵀ)
    + 2 (h·u) 1, so for x = (α, β): B x = (Σ α + α × h_n, 2 α × h_F) and
    Bᵀ x = (Σ α − α × h_n + 2 h_F × β, 0).  Stored as Σ (symmetric 3 × 3) and the
    momentum h = (h_n, h_F); both add over a subtree."""

    def __init__(self, sigma, h):
        self.sigma, self.h = sigma, h

    def times(self, prog, x):
        """B x (a spatial force); 0 for a motion without angular part."""
        alpha = x[0]
        if all(e == 0 for e in alpha):
            return None
        sa = S.matvec(prog, self.sigma, alpha)
        return S.add(prog, sa, S.cross(prog, alpha, self.h[0])), S.scale(prog, 2, S.cross(prog, alpha, self.h[1]))

    def transpose_times(self, prog, x):
        """Bᵀ x (a spatial force whose linear part is 0)."""
        alpha, beta = x
        top = S.scale(prog, 2, S.cross(prog, self.h[1], beta))
        if any(e != 0 for e in alpha):
            top = S.add(prog, top, S.sub(prog, S.matvec(prog, self.sigma, alpha), S.cross(prog, alpha, self.h[0])))
        return top, S.ZERO3

    def plus(self, prog, other):
        """B̃ + B over a subtree (6 + 6 additions)."""
        return Variation(S.sym_from_upper(lambda i, j: prog.let(self.sigma[i][j] + other.sigma[i][j])),
                         add6(prog, self.h, other.h))


def variation(prog, I, v, h):
    """B_k for the body velocity v = (ω, u) and momentum h = I v
    [Pinocchio ``Inertia::variation`` and ``addForceCrossMatrix``]: Σ of :class:`Variation`."""
    w, u = v
    P = [[prog.let(I.J[i][(c + 1) % 3] * w[(c + 2) % 3] - I.J[i][(c + 2) % 3] * w[(c + 1) % 3])
          for c in range(3)] for i in range(3)]                                  # Īω×: (Īω×)[i][c] = Ī_i · (ω × e_c)
    hu = prog.let(sum(I.h[i] * u[i] for i in range(3)))                          # h·u
    return Variation(S.sym_from_upper(lambda i, j: prog.let(
        -(P[i][j] + P[j][i]) - (u[i] * I.h[j] + I.h[i] * u[j]) + (2 * hu if i == j else 0))), h)


# ============================================================ the passes
class Column:
    """One column s of S_j (world axes) and what the forward pass derives from it:
    ν = v_λ × s [dVdq] (None at a root), ∂a/∂q [dAdq], ∂a/∂q̇ [dAdv]; ``index``
    its velocity index, ``body`` j."""

    def __init__(self, index, body, s, nu, dadq, dadv):
        self.index, self.body, self.s, self.nu, self.dadq, self.dadv = index, body, s, nu, dadq, dadv
        self.gq = self.gv = None                                            # set by backward_pass


class WorldBodies:
    """Result of :func:`forward_pass`, per body k (world axes at the world origin):
    ``columns[k]`` the :class:`Column` of S_k, ``v``, ``f`` spatial velocity and
    force, ``I`` a :class:`~soagen.passes.symbolic.RigidInertia`, ``B`` a :class:`Variation`."""

    def __init__(self, n):
        self.columns, self.v, self.f, self.I, self.B = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n


def fixed_frames(sw, at=None):
    """The fixed frame each tree is worked in, and the bodies' poses in it.

    The recursion holds in any frame fixed in space.  A tree on a floating
    joint is worked in the frame that coincides with its base at this instant:
    the base's pose there is the identity, so its six columns S are unit
    vectors and every product with them is a pick; the world's acceleration
    −g becomes −Rᵀg (R the base's world orientation).  A tree fixed to the world
    is worked in world axes.  With ``at`` ({root: body}), each tree named there is worked in the
    frame that coincides with that body at this instant (:func:`body_frames`; ``at`` names every root).

    Returns
    -------
    pose : list of (R (3, 3), p (3,))
        Body k's orientation and origin in its tree's fixed frame, per body.
    gravity : dict
        The world's spatial acceleration (0, −g) in the fixed frame, per root.
    """
    if at:
        return body_frames(sw, at)
    prog, robot = sw.prog, sw.robot
    pose, gravity = [None] * robot.nb, {}
    minus_g = [const(-x) for x in robot.gravity]
    root = [None] * robot.nb                                                 # the root of body k's tree
    for k in sw.base_to_tip():
        fr, lam = sw.frame(k), sw.parent(k)
        root[k] = k if lam < 0 else root[lam]
        if robot.bodies[root[k]].joint_type != FLOATING:
            pose[k] = sw.world(k)                                            # world axes
            if lam < 0:
                gravity[k] = (S.ZERO3, minus_g)                              # −g (RK (3.21))
        elif lam < 0:
            pose[k] = (S.IDENTITY3, S.ZERO3)
            gravity[k] = (S.ZERO3, S.matTvec(prog, fr.rotation(), minus_g))   # −Rᵀg, base axes
        else:
            Rp, pp = pose[lam]
            pose[k] = (S.matmul(prog, Rp, fr.rotation()), S.add(prog, pp, S.matvec(prog, Rp, fr.ell)))
    return pose, gravity


def body_frames(sw, at):
    """:func:`fixed_frames` with each tree worked in the frame that coincides with one of its bodies m
    at this instant, ``at`` = {root: m} for every root: m's pose
    is the identity, its subtree's poses compose down from it, its ancestors' go up the joints'
    inverses (R_λ = R R_kᵀ, p_λ = p − R_λ ℓ_k, (R_k, ℓ_k) body k in its parent), their other
    children's down again; the world above the root gives the gravity (0, −R_w g).  Every output is a
    frame-invariant scalar, so q moves a body's pose only through the joints between it and m."""
    prog, robot = sw.prog, sw.robot
    pose, gravity = [None] * robot.nb, {}
    children = [[] for _ in range(robot.nb)]
    for k in range(robot.nb):
        if robot.bodies[k].parent >= 0:
            children[robot.bodies[k].parent].append(k)
    minus_g = [const(-x) for x in robot.gravity]
    for root, m in at.items():
        seen = set()

        def down(k):
            """Poses of k's subtree not yet set, from k's."""
            for c in children[k]:
                if c not in seen:
                    fr, (R, p) = sw.frame(c), pose[k]
                    pose[c] = (S.matmul(prog, R, fr.rotation()), S.add(prog, p, S.matvec(prog, R, fr.ell)))
                    seen.add(c)
                    down(c)

        pose[m], k = (S.IDENTITY3, S.ZERO3), m
        seen.add(m)
        while True:                                                          # up the path from m to the world
            down(k)
            fr, (R, p) = sw.frame(k), pose[k]
            R_up = S.matmul(prog, R, S.transpose(fr.rotation()))             # k's parent (or the world)
            lam = robot.bodies[k].parent
            if lam < 0:
                gravity[root] = (S.ZERO3, S.matvec(prog, R_up, minus_g))
                break
            pose[lam] = (R_up, S.sub(prog, p, S.matvec(prog, R_up, fr.ell)))
            seen.add(lam)
            k = lam
    return pose, gravity


def forward_pass(sw, qd, qdd, at=None):
    """Base-to-tip pass of the RNEA derivatives of Carpentier & Mansard (RSS 2018) (Pinocchio's ``ComputeRNEADerivativesForwardStep``):
    world poses, S_k, v_k = v_λ + S_k q̇_k, a_k = a_λ + S_k q̈_k + v_k × S_k q̇_k,
    I_k, h_k = I_k v_k, f_k = I_k a_k + v_k ×* h_k, the column derivatives
    ν, ∂a/∂q, ∂a/∂q̇ and B_k; a :class:`WorldBodies`.  ``at``: the frames, as :func:`fixed_frames`."""
    prog, robot = sw.prog, sw.robot
    wb = WorldBodies(robot.nb)
    a = [None] * robot.nb
    pose, gravity = fixed_frames(sw, at)
    sw.banner("base-to-tip world-frame velocities, accelerations, forces and their q, qd derivatives",
              "Carpentier & Mansard RSS 2018, forward pass")
    for k in sw.base_to_tip():
        fr, lam = sw.frame(k), sw.parent(k)
        R, p = pose[k]                                                      # body k -> its fixed frame: R (3, 3), p (3,)
        cols = [to_world(prog, R, p, h) for h in fr.Hcols]                  # S_k, nv_k columns
        vJ = _combine(prog, cols, sw.part(qd, k))                           # S_k qd_k (6,)
        v_lam = None if lam < 0 else wb.v[lam]
        a_lam = gravity[k] if lam < 0 else a[lam]
        v = vJ if v_lam is None else add6(prog, v_lam, vJ)                  # v_k
        nus = [None if v_lam is None else motion_cross(prog, v_lam, s) for s in cols]   # dv/dq = v_λ × s
        one_dof = len(cols) == 1                                            # S_k × S_k = 0: v_k × s = v_λ × s = ν
        if one_dof:
            vxvJ = None if nus[0] is None else _scale6(prog, nus[0], sw.part(qd, k)[0])  # v_k × S_k q̇_k = ν q̇_k
        else:
            vxvJ = motion_cross(prog, v, vJ)
        a[k] = add6(prog, a_lam, _combine(prog, cols, sw.part(qdd, k)), vxvJ)   # a_k
        I = world_inertia(sw, k, R, p)
        h = I.times(prog, v)                                                # momentum h_k (6,)
        wb.f[k] = add6(prog, I.times(prog, a[k]), force_cross(prog, v, h))  # f_k
        wb.v[k], wb.I[k], wb.B[k] = v, I, variation(prog, I, v, h)
        wb.columns[k] = []
        for index, s, nu in zip(range(sw.vslices[k].start, sw.vslices[k].stop), cols, nus):
            dadq = motion_cross(prog, a_lam, s)                             # da/dq = a_λ × s + v_λ × ν
            if nu is not None:
                dadq = add6(prog, dadq, motion_cross(prog, v_lam, nu))
            if one_dof:                                                     # da/dqd = v_k × s + ν = 2ν
                dadv = add6(prog, nu, nu)
            else:
                dadv = add6(prog, motion_cross(prog, v, s), nu)             # da/dqd = v_k × s + ν
            wb.columns[k].append(Column(index, k, s, nu, dadq, dadv))
    return wb


def backward_pass(sw, wb, dq, dv):
    """Tip-to-base pass of the RNEA derivatives of Carpentier & Mansard (RSS 2018) (Pinocchio's ``ComputeRNEADerivativesBackwardStep``):
    the composites Ĩ, B̃, F̃ of each subtree, and with them the columns of body k
    (rows of k and its ancestors) and the rows of k (columns of its strict
    ancestors); fills the nested nv × nv lists ``dq``, ``dv`` in place.  Each :class:`Column`
    keeps ``gq`` = Ĩ_j ∂a/∂q + B̃_j ν and ``gv`` = Ĩ_j ∂a/∂q̇ + B̃_j s, the derivatives of the
    composite force F̃_j of its body's subtree (``gq`` as seen from that subtree, without the
    s ×* F̃_j of the fixed frame).  Returns the composites Ĩ, B̃, F̃ of every body's subtree
    (lists by body)."""
    prog, robot = sw.prog, sw.robot
    I, B, F = list(wb.I), list(wb.B), list(wb.f)
    sw.banner("tip-to-base composite inertias, variations, forces; dtau/dq, dtau/dqd",
              "Carpentier & Mansard RSS 2018, backward pass")
    for k in sw.tip_to_base():
        ancestors = [c for j in _strict_ancestors(robot, k) for c in wb.columns[j]]
        own = wb.columns[k]
        for col in own:                                                     # column s of S_k
            gq = add6(prog, I[k].times(prog, col.dadq), None if col.nu is None else B[k].times(prog, col.nu))
            gv = add6(prog, I[k].times(prog, col.dadv), B[k].times(prog, col.s))   # dF̃/dqd (6,)
            col.gq, col.gv = gq, gv
            for row in own:                                                 # rows of k: S_kᵀ dF̃
                dq[row.index][col.index] = dot6(prog, row.s, gq)
                dv[row.index][col.index] = dot6(prog, row.s, gv)
            if ancestors:
                gq = add6(prog, gq, force_cross(prog, col.s, F[k]))         # + s ×* F̃_k above k
            for row in ancestors:                                           # rows i ≺ k: S_iᵀ dF̃
                dq[row.index][col.index] = dot6(prog, row.s, gq)
                dv[row.index][col.index] = dot6(prog, row.s, gv)
        for row in own:                                                     # rows of k, columns j ≺ k
            y = I[k].times(prog, row.s)                                     # Ĩ_k S_k (6,)
            z = B[k].transpose_times(prog, row.s)                           # B̃_kᵀ S_k (6,)
            for col in ancestors:
                dq[row.index][col.index] = prog.let(dot6(prog, y, col.dadq) + dot6(prog, z, col.nu))
                dv[row.index][col.index] = prog.let(dot6(prog, y, col.dadv) + dot6(prog, z, col.s))
        lam = sw.parent(k)
        if lam >= 0:
            I[lam], B[lam] = I[lam].plus(prog, I[k]), B[lam].plus(prog, B[k])
            F[lam] = add6(prog, F[lam], F[k])
    return I, B, F


def friction_slope(sw, qd):
    """∂/∂q̇ of the actuators' friction viscous·q̇ + Coulomb·q̇/√(q̇² + ε²):
    viscous + Coulomb ε²/(q̇² + ε²)^{3/2} per actuated joint (nv,), zeros without actuators."""
    prog = sw.prog

    def slope(i, eps):
        coulomb = sw.actuator(i, 2)
        out = sw.actuator(i, 1)
        if coulomb != 0:
            r = prog.let(1 / prog.let(sp.sqrt(prog.let(qd[i] * qd[i] + eps * eps))))   # 1/√(q̇² + ε²)
            out = out + coulomb * eps * eps * prog.let(r * r) * r
        return out

    return per_actuator(sw, slope)


def inverse_dynamics_derivatives_analytic(prog, robot, q, qd, qdd, at=None):
    """∂τ/∂q (tangent space), ∂τ/∂q̇ of T = Mθ̈ + C + G by the analytical
    recursion of Carpentier & Mansard (RSS 2018; Pinocchio's
    ``computeRNEADerivatives``), world axes; per-body quantities once, a 6-vector dot product per
    (ancestor, descendant) pair of velocity coordinates; the actuators'
    friction slope on ∂τ/∂q̇'s diagonal.  Row-major n × n each.  ``at``: the fixed frames, as
    :func:`fixed_frames` (default: world axes, a floating tree's base)."""
    n = robot.nv
    sw = Sweeps(prog, robot, q)
    wb = forward_pass(sw, qd, qdd, at)
    dq = [[sp.Integer(0)] * n for _ in range(n)]
    dv = [[sp.Integer(0)] * n for _ in range(n)]
    backward_pass(sw, wb, dq, dv)
    slope = friction_slope(sw, qd)
    for i in robot.actuated:
        dv[i][i] = prog.let(dv[i][i] + slope[i])
    return [[x for row in dq for x in row], [x for row in dv for x in row]]


def _combine(prog, cols, values):
    """Σ_i cols[i] values[i] for spatial columns; a spatial vector."""
    return (S.vec(prog, [sum((c[0][r] * x for c, x in zip(cols, values)), sp.Integer(0)) for r in range(3)]),
            S.vec(prog, [sum((c[1][r] * x for c, x in zip(cols, values)), sp.Integer(0)) for r in range(3)]))


def _scale6(prog, x, c):
    """c x for a spatial vector x and a scalar c."""
    return S.scale(prog, c, x[0]), S.scale(prog, c, x[1])


def _strict_ancestors(robot, k):
    """Bodies on the path from k's parent to its root."""
    out, j = [], robot.bodies[k].parent
    while j >= 0:
        out.append(j)
        j = robot.bodies[j].parent
    return out
