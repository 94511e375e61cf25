"""numpy reference: the spatial operator recursions, one pass per loop.

Every public function takes the :class:`~soagen.model.robot.Robot` first and has
the name of the generated function it checks.  The passes have the names of
their symbolic twins in :mod:`soagen.passes.sweeps` (``velocities``,
``newton_euler``, ``forces_tip_to_base``, ``articulated``,
``innovations_filter``/``innovations_smoother``, ``fd4``, ``omega_bodies``,
``omega_tips``, ``os_rhs``) and walk the tree the same way
(``robot.base_to_tip()``, ``robot.tip_to_base()``), but share no code with
them: dense 6×6 blocks, numpy only.  Notation follows the papers
(docs/references.md: [RK], [KJR], [RJK], [CK]): the paper's ``k+1`` (towards
the base) is ``parent[k]`` here and its ``k-1`` (towards the tip) are the
children of ``k``; tips play the role of the paper's frame 0.

Per-body quantities, all in body-``k`` coordinates at the body-frame origin:
``φ(p, k)`` (6, 6) force transform to the parent, ``H*(k)`` (6, nv_k) joint map
(stored as ``kin.H[k]``; ``H(k)`` is its transpose), ``M(k)`` (6, 6) spatial
inertia.  Body ``k``'s joint velocities are ``qd[robot.vslice(k)]``; D(k) is an
nv_k × nv_k block.
Spatial vectors are ``[angular; linear]``; tip quantities are in world-aligned
axes at the tip (frame 0 of each tip).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from soagen.model.errors import SingularError
from soagen.model.frames import Kinematics, kinematics  # noqa: F401  (the reference's first pass)
from soagen.options import PIVOT_RATIO
from soagen.model.parameters import inertia_from_parameters
from soagen.model.spatial import phi, skew


def forward_kinematics(robot, q):
    """World pose of each tip frame; -> (m, 4, 4)."""
    kin = kinematics(robot, q)
    out = np.zeros((len(robot.tips), 4, 4))
    for i, t in enumerate(robot.tips):
        out[i, :3, :3] = kin.R[t.body] @ t.rotation
        out[i, :3, 3] = kin.p[t.body] + kin.R[t.body] @ t.offset
        out[i, 3, 3] = 1.0
    return out


def base_acceleration(robot):
    """α(n+1) = [0; −g]: gravity as a base acceleration [RK (3.21)]."""
    return np.concatenate([np.zeros(3), -robot.gravity])


def velocities(robot, kin, qd):
    """Base-to-tip velocity pass V = φ*H*θ̇ [KJR (41)], [RK (2.17)] with the
    bias acceleration a(k) [RK (2.19), (2.32)] and bias force b(k) [KJR (47)].

    a(k) is derived for link-local frames: with ω_p the parent's angular
    velocity, ℓ the joint offset and [ω_r; v_r] = H*(k)θ̇(k) the joint's
    relative velocity, all in body-k axes,
    ``a = [ω_p × ω_r; ω_p × (ω_p × ℓ) + 2 ω_p × v_r + ω_r × v_r]``: revolute and
    spherical joints have v_r = 0, prismatic ω_r = 0 (the Coriolis term of a
    sliding joint; the text of [RK (2.32)] we have lost its factor 2), and a
    floating base (ω_p = 0) keeps ω_r × v_r, because its generalized
    acceleration is the derivative of the body-frame velocity (Pinocchio's).

    Returns
    -------
    V, a, b : lists of (6,), one per body
    a0 : list of (6,)   a(0) for each tip (world axes)
    """
    qd = np.asarray(qd, float)
    V, a, b = [], [], []
    for k in robot.base_to_tip():
        body = robot.bodies[k]
        p = body.parent
        Vp = np.zeros(6) if p < 0 else V[p]
        rel = kin.H[k] @ qd[robot.vslice(k)]
        Vk = kin.phi[k].T @ Vp + rel
        R = kin.rot[k]
        ell = R.T @ kin.ell[k]
        wp = R.T @ Vp[:3]
        wr, vr = rel[:3], rel[3:]
        ak = np.concatenate([np.cross(wp, wr),
                             np.cross(wp, np.cross(wp, ell)) + 2.0 * np.cross(wp, vr) + np.cross(wr, vr)])
        w = Vk[:3]
        I_o = kin.M[k][:3, :3]
        bk = np.concatenate([np.cross(w, I_o @ w), body.mass * np.cross(w, np.cross(w, body.com))])
        V.append(Vk)
        a.append(ak)
        b.append(bk)
    a0 = []
    for t in robot.tips:
        w = kin.R[t.body] @ V[t.body][:3]
        ell = kin.R[t.body] @ t.offset
        a0.append(np.concatenate([np.zeros(3), np.cross(w, np.cross(w, ell))]))
    return V, a, b, a0


def tip_forces(robot, kin, f_tip):
    """B f(0): each tip's force (6,) moved into its body; list of (6,) per body."""
    out = [np.zeros(6) for _ in robot.bodies]
    if f_tip is not None:
        f_tip = np.asarray(f_tip, float).reshape(len(robot.tips), 6)
        for i, t in enumerate(robot.tips):
            out[t.body] += kin.phi_tip[i] @ f_tip[i]
    return out


def forces_tip_to_base(robot, kin, y):
    """Tip-to-base force pass z = φ y [RK (2.29)], [KJR text after (36)]; lists of (6,)."""
    z = [v.copy() for v in y]
    for k in robot.tip_to_base():
        p = robot.bodies[k].parent
        if p >= 0:
            z[p] += kin.phi[k] @ z[k]
    return z


def newton_euler(robot, kin, qd, qdd, with_gravity=True):
    """Newton–Euler before the force sum: the velocity pass, then base-to-tip
    α(k) = φ*α(p) + H*θ̈ + a [RK (2.26)] and f(k) = M(k)α(k) + b(k) [RK (2.29)].
    Returns (V, α, f), lists of (6,)."""
    V, a, b, _ = velocities(robot, kin, qd)
    qdd = np.asarray(qdd, float)
    alpha = [None] * robot.nb
    for k in robot.base_to_tip():
        p = robot.bodies[k].parent
        ap = (base_acceleration(robot) if with_gravity else np.zeros(6)) if p < 0 else alpha[p]
        alpha[k] = kin.phi[k].T @ ap + kin.H[k] @ qdd[robot.vslice(k)] + a[k]
    return V, alpha, [kin.M[k] @ alpha[k] + b[k] for k in range(robot.nb)]


def inverse_dynamics(robot, q, qd, qdd, f_tip=None):
    """Newton–Euler: T = Mθ̈ + C + G + J*f(0) [RK (2.24)–(2.30), gravity (3.21)].

    ``f_tip`` (6m,) is the force each tip exerts on the environment.  -> (n,)
    """
    kin = kinematics(robot, q)
    _, _, f = newton_euler(robot, kin, qd, qdd)
    fb = tip_forces(robot, kin, f_tip)
    f = forces_tip_to_base(robot, kin, [f[k] + fb[k] for k in range(robot.nb)])  # (2.29)
    return project(robot, kin, f) + actuator_torques(robot, qd, qdd)  # (2.30)


def project(robot, kin, f):
    """T = H f: the joint-space components of per-body spatial forces; -> (nv,)"""
    return np.concatenate([kin.H[k].T @ f[k] for k in range(robot.nb)])


def gravity(robot, q):
    """Gravity torques G(q) = HφMφ*E*a_g [KJR (44)]; -> (n,)"""
    z = np.zeros(robot.n)
    return inverse_dynamics(robot, q, z, z)


def bias_forces(robot, q, qd):
    """C(q, θ̇) + G(q) = Hφ(Mφ*ā + b) [KJR (45)]; -> (n,)"""
    return inverse_dynamics(robot, q, qd, np.zeros(robot.n))


def coriolis(robot, q, qd):
    """Coriolis and centrifugal torques C(q, θ̇) alone: Hφ(Mφ*a + b) with no
    gravity ([KJR (45)] without E*a_g); -> (n,)"""
    kin = kinematics(robot, q)
    _, _, f = newton_euler(robot, kin, qd, np.zeros(robot.nv), with_gravity=False)
    return project(robot, kin, forces_tip_to_base(robot, kin, f))


def composite_inertias(robot, kin):
    """Tip-to-base pass R(k) = M(k) + Σ_c φ(k,c) R(c) φ*(k,c) of φMφ* [RK (3.20)]; list of (6, 6)."""
    R = [m.copy() for m in kin.M]
    for k in robot.tip_to_base():
        p = robot.bodies[k].parent
        if p >= 0:
            R[p] += kin.phi[k] @ R[k] @ kin.phi[k].T
    return R


def mass_matrix(robot, q):
    """M = HφMφ*H* [RK (3.20)], [KJR (42)]; -> (n, n)

    Column k: X = R(k)H*(k) is carried to each ancestor i by φ(i, k) and
    projected, M(i, k) = H(i) φ(i, k) R(k) H*(k).
    """
    kin = kinematics(robot, q)
    R = composite_inertias(robot, kin)
    out = np.zeros((robot.nv, robot.nv))
    for k in robot.base_to_tip():
        X = R[k] @ kin.H[k]
        sk = robot.vslice(k)
        out[sk, sk] = kin.H[k].T @ X
        i = k
        while robot.bodies[i].parent >= 0:
            X = kin.phi[i] @ X
            i = robot.bodies[i].parent
            si = robot.vslice(i)
            out[si, sk] = kin.H[i].T @ X
            out[sk, si] = out[si, sk].T
    if robot.actuators is not None:
        out += np.diag(robot.actuators.armature)
    return out


@dataclass
class ArticulatedBodies:
    """Riccati pass results [KJR (37)], one entry per body.

    P : (6, 6)          articulated body inertia P(k)
    D : (nv_k, nv_k)    D(k) = H P H*
    Dinv : (nv_k, nv_k) D(k)⁻¹, computed once (NaN where D(k) is singular)
    G : (6, nv_k)       G(k) = P H* D⁻¹
    K : (6, nv_k)       K(p(k), k) = φ(p, k) G(k) [KJR (32)]
    psi : (6, 6)        ψ(p(k), k) = φ(p, k) [I − G(k)H(k)]
    """

    P: list
    D: list
    Dinv: list
    G: list
    K: list
    psi: list


def articulated(robot, kin):
    """Tip-to-base Riccati pass [KJR (37)], [RK (4.4)–(4.7)]:
    P(k) = M(k) + Σ_c ψ(k,c) P(c) ψ*(k,c) — equivalently φ P⁺ φ* with
    P⁺(c) = [I − G(c)H(c)] P(c)."""
    n = robot.nb
    P = [m.copy() for m in kin.M]
    D, Dinv, G, K, psi = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    for k in robot.tip_to_base():
        h = kin.H[k]
        D[k] = h.T @ P[k] @ h
        if robot.actuators is not None:          # the rotor inertia joins D(k) (Featherstone's armature)
            D[k] = D[k] + np.diag(robot.actuators.armature[robot.vslice(k)])
        Dinv[k] = _inverse(D[k])
        G[k] = P[k] @ h @ Dinv[k]
        K[k] = kin.phi[k] @ G[k]
        psi[k] = kin.phi[k] @ (np.eye(6) - G[k] @ h.T)
        p = robot.bodies[k].parent
        if p >= 0:   # φ P⁺ φ*, P⁺ = (I − G H) P (= ψPψ* when D(k) = H P H*)
            P[p] += psi[k] @ P[k] @ kin.phi[k].T
    return ArticulatedBodies(P, D, Dinv, G, K, psi)


def _inverse(D):
    """D(k)⁻¹; NaN entries where D(k) is singular (the model check reports it)."""
    try:
        return np.linalg.inv(D)
    except np.linalg.LinAlgError:
        return np.full_like(D, np.nan)


def innovations_filter(robot, kin, art, T, z=None):
    """Tip-to-base innovations filter [RK (4.19)–(4.20)]:
    ẑ(p) += ψ(p,k) ẑ(k) + K(p,k) T(k), ε = T − Hẑ, ν = D⁻¹ε.
    ``z`` adds a force per body to ẑ before projection (used for H ψ B f(0)).
    Returns ν, a list of (nv_k,)."""
    T = np.asarray(T, float)
    z = [np.zeros(6) if z is None else z[k].copy() for k in range(robot.nb)]
    nu = [None] * robot.nb
    for k in robot.tip_to_base():
        sk = robot.vslice(k)
        nu[k] = art.Dinv[k] @ (T[sk] - kin.H[k].T @ z[k])
        p = robot.bodies[k].parent
        if p >= 0:
            z[p] += art.psi[k] @ z[k] + art.K[k] @ T[sk]
    return nu


def innovations_smoother(robot, kin, art, nu):
    """Base-to-tip smoother [RK (4.21)–(4.22)]: λ(k) = ψ*(p,k)λ(p) + H*ν(k),
    θ̈(k) = ν(k) − K*(p,k)λ(p).  Returns θ̈ (nv,) and λ (list of (6,))."""
    lam, qdd = [None] * robot.nb, np.zeros(robot.nv)
    for k in robot.base_to_tip():
        p = robot.bodies[k].parent
        lp = np.zeros(6) if p < 0 else lam[p]
        qdd[robot.vslice(k)] = nu[k] - art.K[k].T @ lp
        lam[k] = art.psi[k].T @ lp + kin.H[k] @ nu[k]
    return qdd, lam


def innovations_solve(robot, kin, art, T, z=None):
    """θ̈ = (I − HψK)* D⁻¹ (I − HψK) T [RK (4.18)], [RJK (15)], with forces ``z``
    injected into the filter; returns θ̈ (nv,) and λ."""
    return innovations_smoother(robot, kin, art, innovations_filter(robot, kin, art, T, z))


def mass_matrix_inverse(robot, q):
    """M⁻¹ = (I − HψK)* D⁻¹ (I − HψK) [RK Theorem 4.1, (4.16)]; -> (n, n)"""
    kin = kinematics(robot, q)
    art = articulated(robot, kin)
    eye = np.eye(robot.n)
    return np.column_stack([innovations_solve(robot, kin, art, eye[:, j])[0] for j in range(robot.n)])


def forward_dynamics(robot, q, qd, tau, f_tip=None, variant="FD4"):
    """Joint accelerations θ̈ from torques ``tau``; -> (n,)

    ``variant="FD1"``: T' = T − Hφ[Mφ*a + b + Bf(0)] by Newton–Euler, then
    (I−HψK)*D⁻¹(I−HψK)T' [RK (4.17)–(4.22)].
    ``variant="FD4"``: the three-sweep algorithm [RK (5.13)–(5.17)], gravity
    folded into a(k) of the root bodies [KJR end of §4.3].
    """
    kin = kinematics(robot, q)
    art = articulated(robot, kin)
    if variant == "FD1":
        Tp = np.asarray(tau, float) - inverse_dynamics(robot, q, qd, np.zeros(robot.n), f_tip)
        return innovations_solve(robot, kin, art, Tp)[0]
    if variant != "FD4":
        raise ValueError(f"unknown forward dynamics variant {variant!r}")
    return fd4(robot, kin, art, qd, tau, f_tip)[0]


def forward_dynamics_fd2(robot, q, qd, tau):
    """θ̈ and the tip accelerations α(0) = Jθ̈ + J̇θ̇ (what FD2 [RK (5.5)–(5.7)]
    returns), here from FD4, the dense Jacobian and J̇θ̇; -> ((n,), (6m,))."""
    qdd = forward_dynamics(robot, q, qd, tau)
    return qdd, jacobian(robot, q) @ qdd + jdot_qdot(robot, q, qd)


def gravity_bar(robot, kin, a):
    """ā = a + E*a_g: gravity folded into the root bodies [KJR end of §4.3]."""
    a = [ak.copy() for ak in a]
    for k in robot.roots():
        a[k] += kin.phi[k].T @ base_acceleration(robot)
    return a


def fd4(robot, kin, art, qd, tau, f_tip):
    """FD4 [RK (5.13)–(5.17)]; returns θ̈ (nv,) and λ (list of (6,)), the link
    accelerations plus the fictitious gravity acceleration."""
    tau = np.asarray(tau, float) - actuator_torques(robot, qd, np.zeros(robot.nv))
    _, a, b, _ = velocities(robot, kin, qd)
    a = gravity_bar(robot, kin, a)
    fb = tip_forces(robot, kin, f_tip)
    z = [b[k] + fb[k] for k in range(robot.nb)]
    nu = [None] * robot.nb
    for k in robot.tip_to_base():  # (5.16)
        sk = robot.vslice(k)
        nu[k] = art.Dinv[k] @ (tau[sk] - kin.H[k].T @ z[k])
        p = robot.bodies[k].parent
        if p >= 0:
            z[p] += art.psi[k] @ (z[k] + art.P[k] @ a[k]) + art.K[k] @ tau[sk]
    lam, qdd = [None] * robot.nb, np.zeros(robot.nv)
    for k in robot.base_to_tip():  # (5.17)
        p = robot.bodies[k].parent
        lp = np.zeros(6) if p < 0 else lam[p]
        ga = art.G[k].T @ a[k]
        qdd[robot.vslice(k)] = nu[k] - art.K[k].T @ lp - ga
        lam[k] = art.psi[k].T @ lp + kin.H[k] @ nu[k] + a[k] - kin.H[k] @ ga
    return qdd, lam


def tip_force_acceleration(robot, q, f_tip):
    """Δθ̈ = −(I − HψK)* D⁻¹ H ψ B f(0) caused by tip forces alone [RJK (18)]; -> (n,)"""
    kin = kinematics(robot, q)
    art = articulated(robot, kin)
    return innovations_solve(robot, kin, art, np.zeros(robot.n), tip_forces(robot, kin, f_tip))[0]


def jacobian(robot, q):
    """J = B*φ*H* [RJK (1)], [KJR (38)–(40)], tips stacked; -> (6m, n)

    Column k of tip i is φ*(k, 0)H*(k), non-zero when k is an ancestor of the tip.
    """
    kin = kinematics(robot, q)
    J = np.zeros((6 * len(robot.tips), robot.n))
    for i, t in enumerate(robot.tips):
        tip_pos = kin.p[t.body] + kin.R[t.body] @ t.offset
        for k in robot.ancestors(t.body):
            # φ*(k, 0): world-aligned frame at the tip seen from body k
            X = phi(kin.R[k].T, kin.R[k].T @ (tip_pos - kin.p[k]))
            J[6 * i:6 * i + 6, robot.vslice(k)] = X.T @ kin.H[k]
    return J


def jdot_qdot(robot, q, qd):
    """J̇θ̇ = B*φ*a + a(0) [KJR (46)]: tip classical accelerations at θ̈ = 0,
    no gravity; -> (6m,)"""
    kin = kinematics(robot, q)
    _, alpha, _ = newton_euler(robot, kin, qd, np.zeros(robot.nv), with_gravity=False)
    a0 = velocities(robot, kin, qd)[3]
    return np.concatenate([kin.phi_tip[i].T @ alpha[t.body] + a0[i] for i, t in enumerate(robot.tips)])


def tip_velocity(robot, q, qd):
    """β(0) = φ*(1,0)V(1) [KJR (41)] for each tip; -> (6m,)"""
    kin = kinematics(robot, q)
    V = velocities(robot, kin, qd)[0]
    return np.concatenate([kin.phi_tip[i].T @ V[t.body] for i, t in enumerate(robot.tips)])


# ====================================================== operational space
def ldl(A, ratio=PIVOT_RATIO["double"]):
    """Unit-lower L and pivots d with A = L diag(d) Lᵀ; raises :class:`SingularError`
    when a pivot is not above ``ratio`` times its diagonal entry (A is (N, N))."""
    N = A.shape[0]
    L, d = np.eye(N), np.zeros(N)
    for j in range(N):
        w = L[j, :j] * d[:j]
        d[j] = A[j, j] - L[j, :j] @ w
        if not d[j] > ratio * A[j, j]:
            raise SingularError(f"Omega(0) is singular: pivot {j} is {d[j]:.3e} for diagonal {A[j, j]:.3e}")
        L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ w) / d[j]
    return L, d


def omega_bodies(robot, kin, art):
    """Base-to-tip pass Ω(k) = ψ*(p,k)Ω(p)ψ(p,k) + H*(k)D⁻¹(k)H(k) [KJR (58)]; list of (6, 6)."""
    Om = [None] * robot.nb
    for k in robot.base_to_tip():
        p = robot.bodies[k].parent
        h = kin.H[k]
        Om[k] = h @ art.Dinv[k] @ h.T
        if p >= 0:
            Om[k] += art.psi[k].T @ Om[p] @ art.psi[k]
    return Om


def omega_tips(robot, kin, art):
    """Ω(0) of all tips: blocks Ω_ij = φ*(a,0)ψ*(c,a) Ω(c) ψ(c,b)φ(b,0), c the
    nearest common ancestor of the tip bodies a, b ([KJR (60)] on the diagonal,
    [CK Table 1] in the JPL notation off it); -> (6m, 6m)."""
    Om = omega_bodies(robot, kin, art)
    m = len(robot.tips)
    out = np.zeros((6 * m, 6 * m))

    def psi_path(c, k):
        """ψ(c, k) for c an ancestor-or-self of k."""
        X = np.eye(6)
        while k != c:
            X = art.psi[k] @ X
            k = robot.bodies[k].parent
        return X

    for i, ti in enumerate(robot.tips):
        anc_i = robot.ancestors(ti.body)
        for j, tj in enumerate(robot.tips):
            common = [k for k in robot.ancestors(tj.body) if k in anc_i]
            if not common:
                continue
            c = common[0]
            Xi = psi_path(c, ti.body) @ kin.phi_tip[i]
            Xj = psi_path(c, tj.body) @ kin.phi_tip[j]
            out[6 * i:6 * i + 6, 6 * j:6 * j + 6] = Xi.T @ Om[c] @ Xj
    return out


def os_inertia_inverse(robot, q):
    """Ω(0) = Λ(0)⁻¹ = B*ψ*H*D⁻¹HψB [KJR (57)–(61)], [RJK (20)]; -> (6m, 6m)"""
    kin = kinematics(robot, q)
    return omega_tips(robot, kin, articulated(robot, kin))


def os_inertia(robot, q):
    """Λ(0) = Ω(0)⁻¹ through LDLᵀ of Ω(0) [KJR (61)]; raises
    :class:`SingularError` at singular configurations; -> (6m, 6m)"""
    L, d = ldl(os_inertia_inverse(robot, q))
    X = np.linalg.inv(L)
    return X.T @ (X / d[:, None])


def eta(robot, kin, art, a, b):
    """η(k) of [KJR (66)–(67)]: the tip-to-base pass y = ψ(Pa + b),
    ξ(k) = H*(k)D⁻¹(k)H(k)y(k) − a(k), then base-to-tip η(k) = ψ*(p,k)η(p) + ξ(k).

    (66) is missing from the text of [KJR] we have; it follows from (65):
    Ω(0)c(0) = B*ψ*[H*D⁻¹Hψ(Pa + b) − a] − a(0).
    """
    y = [art.P[k] @ a[k] + b[k] for k in range(robot.nb)]
    for k in robot.tip_to_base():
        p = robot.bodies[k].parent
        if p >= 0:
            y[p] += art.psi[k] @ y[k]
    out = [None] * robot.nb
    for k in robot.base_to_tip():
        h = kin.H[k]
        xi = h @ (art.Dinv[k] @ (h.T @ y[k])) - a[k]
        p = robot.bodies[k].parent
        out[k] = xi if p < 0 else art.psi[k].T @ out[p] + xi
    return out


def os_rhs(robot, kin, art, qd, gravity=True):
    """Right-hand side r of Ω(0)x = r for x = c(0) [KJR (65)–(68)] (``qd`` given,
    no gravity), g(0) (72)–(74) (``qd`` None) or c(0)+g(0) (the shortcut); (6m,)."""
    m = len(robot.tips)
    if qd is None:
        a, b, a0 = [np.zeros(6)] * robot.nb, [np.zeros(6)] * robot.nb, [np.zeros(6)] * m
    else:
        _, a, b, a0 = velocities(robot, kin, qd)
    if gravity:
        a = gravity_bar(robot, kin, a)
    e = eta(robot, kin, art, a, b)
    r = np.concatenate([kin.phi_tip[i].T @ e[t.body] - a0[i] for i, t in enumerate(robot.tips)])
    if gravity:   # (74): φ*(1,0)α(1) with α = φ*E*a_g, the base acceleration at the tip
        r += np.tile(base_acceleration(robot), m)
    return r


def os_solve(robot, kin, art, r):
    """x with Ω(0)x = r by the guarded LDLᵀ of Ω(0)."""
    L, d = ldl(omega_tips(robot, kin, art))
    z = np.linalg.solve(L, r) / d
    return np.linalg.solve(L.T, z)


def _os(robot, q, qd, gravity, u=None):
    kin = kinematics(robot, q)
    art = articulated(robot, kin)
    r = os_rhs(robot, kin, art, qd, gravity)
    return kin, os_solve(robot, kin, art, r if u is None else np.asarray(u, float) + r)


def os_coriolis(robot, q, qd):
    """c(0): Ω(0)c(0) = η(0) − a(0) [KJR (65)–(68)]; -> (6m,)"""
    return _os(robot, q, qd, gravity=False)[1]


def os_gravity(robot, q):
    """g(0): Ω(0)g(0) = φ*(1,0)(α(1) − η(1)) [KJR (72)–(74)]; -> (6m,)"""
    return _os(robot, q, None, gravity=True)[1]


def os_bias(robot, q, qd):
    """c(0) + g(0) by the shortcut a → ā = a + E*a_g in (65) [KJR end of §4.3]; -> (6m,)"""
    return _os(robot, q, qd, gravity=True)[1]


def osc_torque(robot, q, qd, u):
    """Operational space control step T = J*[Λ(0)u + c(0) + g(0)] [KJR (4), (39)].

    ``u`` (6m,) is the commanded tip acceleration; -> (n,)
    """
    kin, F = _os(robot, q, qd, gravity=True, u=u)
    return project(robot, kin, forces_tip_to_base(robot, kin, tip_forces(robot, kin, F)))   # (39)


# ============================================================== spatial cross products
def _crm(v):
    """Motion cross product v× (6, 6) for a motion vector v = [ω; v] (its transpose negated is v×*)."""
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = skew(v[:3])
    out[3:, :3] = skew(v[3:])
    return out


# ============================================================== derivatives
def _crf(v):
    """Force cross product v×* = −(v×)ᵀ (6, 6)."""
    return -_crm(v).T


def _world(robot, kin, qd, qdd):
    """World-frame Newton–Euler: per body the motion subspace S (6, nv_k), the
    spatial inertia I (6, 6) and the spatial velocity v, acceleration a (the base
    acceleration −g included) and force f = I a + v×* I v, all at the world origin
    in world axes (Featherstone's formulation; a spatial vector is the same
    whatever frame it is expressed in, so these are the body-frame quantities of
    :func:`newton_euler` moved to the world)."""
    n = robot.nb
    S, I, v, a, f = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    for k in robot.base_to_tip():
        X = np.zeros((6, 6))     # body-k motion vectors to world ones
        X[:3, :3] = X[3:, 3:] = kin.R[k]
        X[3:, :3] = skew(kin.p[k]) @ kin.R[k]
        Xinv = np.linalg.inv(X)
        S[k] = X @ kin.H[k]
        I[k] = Xinv.T @ kin.M[k] @ Xinv
        p = robot.bodies[k].parent
        sk = robot.vslice(k)
        v[k] = (np.zeros(6) if p < 0 else v[p]) + S[k] @ qd[sk]
        a[k] = (base_acceleration(robot) if p < 0 else a[p]) + S[k] @ qdd[sk] + _crm(v[k]) @ S[k] @ qd[sk]
        f[k] = I[k] @ a[k] + _crf(v[k]) @ I[k] @ v[k]
    return S, I, v, a, f


def _tip_wrenches(robot, kin, f_tip):
    """Per body: the tip wrenches moved to the world origin (world axes), and the
    tip points (3,) and forces (3,) they act with."""
    n = robot.nb
    ext, points = [np.zeros(6) for _ in range(n)], [[] for _ in range(n)]
    if f_tip is not None:
        f_tip = np.asarray(f_tip, float).reshape(len(robot.tips), 6)
        for i, t in enumerate(robot.tips):
            point = kin.p[t.body] + kin.R[t.body] @ t.offset
            ext[t.body] += np.concatenate([f_tip[i, :3] + np.cross(point, f_tip[i, 3:]), f_tip[i, 3:]])
            points[t.body].append((point, f_tip[i, 3:]))
    return ext, points


def inverse_dynamics_derivatives(robot, q, qd, qdd, f_tip=None):
    """∂τ/∂q and ∂τ/∂q̇ of T = Mq̈ + C + G (+ J*f(0)); -> ((n, n), (n, n)).

    A tangent Newton–Euler pass per direction, in world axes: moving q along
    column i of joint j's motion subspace moves the subtree of j rigidly by the
    world twist s = S_j[:, i] (for a quaternion joint this is q ⊕ ε e_i, the
    tangent space of :meth:`Robot.integrate`), so for every body k of the subtree
    δS_k = s×S_k and δI_k = s×*I_k − I_k s×, and the tip points move by
    s's velocity field (tip wrenches keep their world-aligned components).
    Differentiating v_k = v_p + S_k q̇_k, a_k = a_p + S_k q̈_k + v_k×S_k q̇_k,
    f_k = I_k a_k + v_k×*I_k v_k, F = Σ_subtree (f + f_ext) and τ_k = S_kᵀF_k
    gives each column; a q̇ direction perturbs q̇_k only.  The actuators' armature
    does not depend on (q, q̇); their friction adds its slope to ∂τ/∂q̇'s diagonal.  O(n²); shares nothing
    with the generated code (which differentiates its own straight-line program).
    """
    qd, qdd = np.asarray(qd, float), np.asarray(qdd, float)
    kin = kinematics(robot, q)
    S, I, v, a, f = _world(robot, kin, qd, qdd)
    ext, points = _tip_wrenches(robot, kin, f_tip)
    F = [f[k] + ext[k] for k in range(robot.nb)]
    for k in robot.tip_to_base():            # world-frame forces add without transforms
        p = robot.bodies[k].parent
        if p >= 0:
            F[p] = F[p] + F[k]
    subtree = [set() for _ in range(robot.nb)]
    for k in robot.tip_to_base():
        subtree[k].add(k)
        p = robot.bodies[k].parent
        if p >= 0:
            subtree[p] |= subtree[k]
    nv = robot.nv
    dq, dv = np.zeros((nv, nv)), np.zeros((nv, nv))
    for j in range(robot.nb):
        for i, col in enumerate(range(robot.vslice(j).start, robot.vslice(j).stop)):
            s = S[j][:, i]
            dq[:, col] = _tangent_torques(robot, S, I, v, a, F, points, qd, qdd, moved=subtree[j], twist=s)
            e = np.zeros(nv)
            e[col] = 1.0
            dv[:, col] = _tangent_torques(robot, S, I, v, a, F, points, qd, qdd, dqd=e)
    return dq, dv + np.diag(_friction_slope(robot, qd))


def _friction_slope(robot, qd):
    """∂/∂q̇ of the actuators' joint friction viscous·q̇ + coulomb·q̇/√(q̇² + ε²),
    a diagonal (nv,) (zeros without actuators)."""
    if robot.actuators is None:
        return np.zeros(robot.nv)
    a = robot.actuators
    return a.viscous + a.coulomb * a.coulomb_velocity ** 2 / (qd * qd + a.coulomb_velocity ** 2) ** 1.5


def _tangent_torques(robot, S, I, v, a, F, points, qd, qdd, moved=(), twist=None, dqd=None):
    """δτ of the world-frame Newton–Euler for a rigid motion ``twist`` of the
    bodies ``moved``, or a change ``dqd`` of the joint velocities."""
    n = robot.nb
    dS = [_crm(twist) @ S[k] if k in moved else np.zeros_like(S[k]) for k in range(n)]
    dv, da, dF = [None] * n, [None] * n, [None] * n
    for k in robot.base_to_tip():
        p = robot.bodies[k].parent
        sk = robot.vslice(k)
        qdk = qd[sk]
        u = np.zeros_like(qdk) if dqd is None else dqd[sk]
        dv[k] = (np.zeros(6) if p < 0 else dv[p]) + dS[k] @ qdk + S[k] @ u
        da[k] = ((np.zeros(6) if p < 0 else da[p]) + dS[k] @ qdd[sk] + _crm(dv[k]) @ S[k] @ qdk
                 + _crm(v[k]) @ (dS[k] @ qdk + S[k] @ u))
        dI = _crf(twist) @ I[k] - I[k] @ _crm(twist) if k in moved else np.zeros((6, 6))
        df = (dI @ a[k] + I[k] @ da[k] + _crf(dv[k]) @ I[k] @ v[k] + _crf(v[k]) @ dI @ v[k]
              + _crf(v[k]) @ I[k] @ dv[k])
        if k in moved:   # tip points move with the body, their forces keep their world axes
            for point, force in points[k]:
                df[:3] += np.cross(np.cross(twist[:3], point) + twist[3:], force)
        dF[k] = df
    for k in robot.tip_to_base():
        p = robot.bodies[k].parent
        if p >= 0:
            dF[p] = dF[p] + dF[k]
    return np.concatenate([dS[k].T @ F[k] + S[k].T @ dF[k] for k in range(n)])


def forward_dynamics_derivatives(robot, q, qd, tau, f_tip=None):
    """θ̈, ∂θ̈/∂q, ∂θ̈/∂q̇ and ∂θ̈/∂τ = M⁻¹ of forward dynamics: differentiating
    M(q)θ̈ + C + G (+ J*f) = τ at θ̈ = FD(q, q̇, τ) gives ∂θ̈/∂x = −M⁻¹ ∂τ/∂x|θ̈
    (:func:`inverse_dynamics_derivatives`); -> ((n,), (n, n), (n, n), (n, n))."""
    qdd = forward_dynamics(robot, q, qd, tau, f_tip)
    Minv = mass_matrix_inverse(robot, q)
    dq, dv = inverse_dynamics_derivatives(robot, q, qd, qdd, f_tip)
    return qdd, -Minv @ dq, -Minv @ dv, Minv


def linearized_step(robot, q, qd, tau, dt):
    """A, B of one semi-implicit Euler step, q̇⁺ = q̇ + dt θ̈, q⁺ = q + dt q̇⁺
    (1-dof joints), from :func:`forward_dynamics_derivatives`; ``dt`` a number
    or (1,); -> ((2n, 2n), (2n, n))."""
    h = float(np.ravel(dt)[0])
    _, Fq, Fv, Minv = forward_dynamics_derivatives(robot, q, qd, tau)
    n, eye = robot.nv, np.eye(robot.nv)
    dv = np.hstack([h * Fq, eye + h * Fv])            # dq̇⁺/d(q, q̇)
    A = np.vstack([np.hstack([eye, np.zeros((n, n))]) + h * dv, dv])   # q⁺ = q + dt q̇⁺
    B = np.vstack([h * h * Minv, h * Minv])
    return A, B
# ======================================================== identification
def actuator_torques(robot, qd, qdd):
    """armature·q̈ + viscous·q̇ + coulomb·q̇/√(q̇² + ε²) of the robot's actuators (zeros without); -> (nv,)"""
    if robot.actuators is None:
        return np.zeros(robot.nv)
    a = robot.actuators
    qd = np.asarray(qd, float)
    return a.armature * np.asarray(qdd, float) + a.viscous * qd + a.coulomb * qd / np.sqrt(qd * qd + a.coulomb_velocity ** 2)


def _unit_forces(force):
    """(6, 10): column j is ``force(e_j)``, a body force linear in the body's 10
    standard parameters, evaluated on the unit parameter vectors."""
    return np.column_stack([force(np.eye(10)[j]) for j in range(10)])


def body_regressor(V, alpha):
    """Y_k (6, 10) with f(k) = M(k)α(k) + b(k) = Y_k π_k [RK (2.29)], [KJR (47)]:
    M(k) and b(k) = [ω × I_o ω; ω × (ω × m c)] built from each unit parameter vector."""
    w = V[:3]

    def force(p10):
        M = inertia_from_parameters(p10)
        return M @ alpha + np.concatenate([np.cross(w, M[:3, :3] @ w), np.cross(w, np.cross(w, p10[1:4]))])
    return _unit_forces(force)


def _project_bodies(robot, kin, Yk):
    """Joint-space regressor (nv, 10 nb) from per-body (6, 10) force regressors:
    each body's columns carried tip-to-base by φ and projected by H on the way
    (the force pass [RK (2.29)–(2.30)] applied to 10 columns per body)."""
    Y = np.zeros((robot.nv, 10 * robot.nb))
    for k in robot.base_to_tip():
        X, i = Yk[k], k
        while i >= 0:
            Y[robot.vslice(i), 10 * k:10 * k + 10] = kin.H[i].T @ X
            X = kin.phi[i] @ X
            i = robot.bodies[i].parent
    return Y


def _actuator_columns(robot, qd, qdd):
    """(nv, 3 na): the armature, viscous and Coulomb columns of each actuated joint."""
    out = np.zeros((robot.nv, 3 * len(robot.actuated)))
    if robot.actuators is None:
        return out
    eps = robot.actuators.coulomb_velocity
    qd, qdd = np.asarray(qd, float), np.asarray(qdd, float)
    for c, i in enumerate(robot.actuated):
        out[i, 3 * c:3 * c + 3] = qdd[i], qd[i], qd[i] / np.sqrt(qd[i] ** 2 + eps ** 2)
    return out


def regressor(robot, q, qd, qdd):
    """Y (n, p) with τ = Y π (π: :meth:`soagen.Robot.parameters`): the
    Newton–Euler body forces per unit parameter, carried by the force pass; -> (n, p)"""
    kin = kinematics(robot, q)
    V, alpha, _ = newton_euler(robot, kin, qd, qdd)
    Y = _project_bodies(robot, kin, [body_regressor(V[k], alpha[k]) for k in range(robot.nb)])
    return np.hstack([Y, _actuator_columns(robot, qd, qdd)])


def base_regressor(robot, q, qd, qdd):
    """Y_b (n, b): the base columns of the regressor (:mod:`soagen.model.parameters`); -> (n, b)"""
    from soagen.reference.identifiable import identifiable

    return regressor(robot, q, qd, qdd)[:, list(identifiable(robot).columns)]


def slotine_li_regressor(robot, q, qd, qdr, qddr):
    """Y (n, p) with Y π = M(q) q̈_r + C(q, q̇) q̇_r + G(q) (+ armature q̈_r + friction(q̇)),
    C the Christoffel-consistent factorization; -> (n, p)

    Body velocities v = J q̇ and w = J q̇_r, reference accelerations
    a_r = J q̈_r + J̇ q̇_r (Featherstone's spatial accelerations in body axes, gravity
    as a base acceleration); body force, per unit parameter,
    f = I a_r + ½[v×* I w + w×* I v + I (v × w)] (Echeandia & Wensing's
    Christoffel-consistent body term, written in body axes where İ = 0).
    """
    kin = kinematics(robot, q)
    qd, qdr, qddr = (np.asarray(x, float) for x in (qd, qdr, qddr))
    v, w, a = [None] * robot.nb, [None] * robot.nb, [None] * robot.nb
    Yk = [None] * robot.nb
    for k in robot.base_to_tip():
        p = robot.bodies[k].parent
        X = kin.phi[k].T                                           # φ*(p, k): parent motion -> body k
        S, sk = kin.H[k], robot.vslice(k)
        vp, wp, ap = (np.zeros(6), np.zeros(6), base_acceleration(robot)) if p < 0 else (v[p], w[p], a[p])
        v[k] = X @ vp + S @ qd[sk]
        w[k] = X @ wp + S @ qdr[sk]
        a[k] = X @ ap + S @ qddr[sk] + _crm(X @ wp) @ (S @ qd[sk])   # J̇ q̇_r: Ẋ = −(S q̇)× X
        vx, wx = _crm(v[k]), _crm(w[k])

        def force(p10, k=k, vx=vx, wx=wx):
            inertia = inertia_from_parameters(p10)
            return inertia @ a[k] + 0.5 * (-vx.T @ inertia @ w[k] - wx.T @ inertia @ v[k] + inertia @ (vx @ w[k]))
        Yk[k] = _unit_forces(force)
    Y = _project_bodies(robot, kin, Yk)
    return np.hstack([Y, _actuator_columns(robot, qd, qddr)])
