"""numpy reference: the spatial operator recursions, one sweep per loop.

Every function takes the :class:`~soagen.model.Robot` first.  Notation
follows Rodriguez, Jain & Kreutz-Delgado (seeds 000, 001, 002): the paper's
``k+1`` (towards the base) is ``parent[k]`` here and its ``k-1`` (towards the
tip) are the children of ``k``; tips play the role of the paper's frame 0.

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

from .model import Robot
from .spatial import phi, spatial_inertia


@dataclass
class Kinematics:
    """Configuration-dependent operators of one robot at one ``q``.

    Attributes
    ----------
    phi : list of (6, 6)   φ(p(k), k), force transform body k → parent (base for roots)
    H : list of (6, nv_k)  joint map H*(k) in body k
    M : list of (6, 6)     spatial inertia M(k) about body-k origin
    rot, ell : lists       joint rotation (3, 3) / offset ℓ (3,) of body k in its parent
    R, p : lists           body orientation (3, 3) / position (3,) in the world
    phi_tip : list of (6, 6)  φ(k, 0) from each tip frame (world axes) into its body
    """

    phi: list
    H: list
    M: list
    rot: list
    ell: list
    R: list
    p: list
    phi_tip: list


def kinematics(robot: Robot, q) -> Kinematics:
    """Build φ, H, M and world poses at ``q`` (seed 001 (2.14)–(2.16))."""
    phis, Hs, Ms, rots, ells, Rw, pw = [], [], [], [], [], [], []
    for k, b in enumerate(robot.bodies):
        R, ell = b.joint_transform(robot.joint_q(q, k))
        phis.append(phi(R, ell))
        rots.append(R)
        ells.append(ell)
        Hs.append(b.motion_subspace())
        Ms.append(spatial_inertia(b.mass, b.com, b.inertia))
        if b.parent < 0:
            Rw.append(R)
            pw.append(ell)
        else:
            Rw.append(Rw[b.parent] @ R)
            pw.append(pw[b.parent] + Rw[b.parent] @ ell)
    phi_tip = [phi(Rw[t.body].T, t.offset) for t in robot.tips]
    return Kinematics(phis, Hs, Ms, rots, ells, Rw, pw, phi_tip)


def forward_kinematics(robot, q):
    """World pose of each tip frame; -> (m, 4, 4)."""
    kin = kinematics(robot, q)
    out = np.zeros((len(robot.tips), 4, 4))
    for i, t in enumerate(robot.tips):
        out[i, :3, :3] = kin.R[t.body] @ t.rotation
        out[i, :3, 3] = kin.p[t.body] + kin.R[t.body] @ t.offset
        out[i, 3, 3] = 1.0
    return out


def _base_acceleration(robot):
    """α(n+1) = [0; −g]: gravity as a base acceleration (seed 001 (3.21))."""
    return np.concatenate([np.zeros(3), -robot.gravity])


def bias_terms(robot, kin, qd):
    """Velocity sweep V = φ*H*θ̇ (seed 000 (41)) with the bias acceleration
    a(k) (seed 001 (2.19), (2.32)) and bias force b(k) (seed 000 (47)).

    a(k) is derived for link-local frames: with ω_p the parent's angular
    velocity, ℓ the joint offset and [ω_r; v_r] = H*(k)θ̇(k) the joint's
    relative velocity, all in body-k axes,
    ``a = [ω_p × ω_r; ω_p × (ω_p × ℓ) + 2 ω_p × v_r + ω_r × v_r]``: revolute and
    spherical joints have v_r = 0, prismatic ω_r = 0 (the Coriolis term of a
    sliding joint; the seed's (2.32) lost its factor 2 in conversion), and a
    floating base (ω_p = 0) keeps ω_r × v_r, because its generalized
    acceleration is the derivative of the body-frame velocity (Pinocchio's).

    Returns
    -------
    V, a, b : lists of (6,), one per body
    a0 : list of (6,)   a(0) for each tip (world axes)
    """
    qd = np.asarray(qd, float)
    V, a, b = [], [], []
    for k, body in enumerate(robot.bodies):
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


def _tip_forces(robot, kin, f_tip):
    """B f(0): each tip's force (6,) moved into its body; list of (6,) per body."""
    out = [np.zeros(6) for _ in robot.bodies]
    if f_tip is not None:
        f_tip = np.asarray(f_tip, float).reshape(len(robot.tips), 6)
        for i, t in enumerate(robot.tips):
            out[t.body] += kin.phi_tip[i] @ f_tip[i]
    return out


def _causal(robot, kin, y):
    """Tip-to-base sweep z = φ y (seed 000, text after (36)); lists of (6,)."""
    z = [v.copy() for v in y]
    for k in reversed(range(robot.nb)):
        p = robot.bodies[k].parent
        if p >= 0:
            z[p] += kin.phi[k] @ z[k]
    return z


def inverse_dynamics(robot, q, qd, qdd, f_tip=None):
    """Newton–Euler: T = Mθ̈ + C + G + J*f(0) (seed 001 (2.24)–(2.30), gravity (3.21)).

    ``f_tip`` (6m,) is the force each tip exerts on the environment.  -> (n,)
    """
    kin = kinematics(robot, q)
    V, a, b, _ = bias_terms(robot, kin, qd)
    qdd = np.asarray(qdd, float)
    alpha = []
    for k, body in enumerate(robot.bodies):   # anticausal: α = φ*α + H*θ̈ + a  (2.26)
        ap = _base_acceleration(robot) if body.parent < 0 else alpha[body.parent]
        alpha.append(kin.phi[k].T @ ap + kin.H[k] @ qdd[robot.vslice(k)] + a[k])
    fb = _tip_forces(robot, kin, f_tip)
    f = _causal(robot, kin, [kin.M[k] @ alpha[k] + b[k] + fb[k] for k in range(robot.nb)])  # (2.29)
    return _project(robot, kin, f)  # (2.30)


def _project(robot, kin, f):
    """T = H f: the joint-space components of per-body spatial forces; -> (nv,)"""
    return np.concatenate([kin.H[k].T @ f[k] for k in range(robot.nb)])


def gravity(robot, q):
    """Gravity torques G(q) = HφMφ*E*a_g (seed 000 (44)); -> (n,)"""
    z = np.zeros(robot.n)
    return inverse_dynamics(robot, q, z, z)


def bias_forces(robot, q, qd):
    """C(q, θ̇) + G(q) = Hφ(Mφ*ā + b) (seed 000 (45)); -> (n,)"""
    return inverse_dynamics(robot, q, qd, np.zeros(robot.n))


def coriolis(robot, q, qd):
    """Coriolis and centrifugal torques C(q, θ̇) alone: Hφ(Mφ*a + b) with no
    gravity (seed 000 (45) without E*a_g); -> (n,)"""
    import dataclasses

    still = dataclasses.replace(robot, gravity=np.zeros(3))
    return inverse_dynamics(still, q, qd, np.zeros(robot.n))


def composite_inertias(robot, kin):
    """R(k) = M(k) + Σ_c φ(k,c) R(c) φ*(k,c): the tip-to-base sweep of φMφ*; list of (6, 6)."""
    R = [m.copy() for m in kin.M]
    for k in reversed(range(robot.nb)):
        p = robot.bodies[k].parent
        if p >= 0:
            R[p] += kin.phi[k] @ R[k] @ kin.phi[k].T
    return R


def mass_matrix(robot, q):
    """M = HφMφ*H* (seed 001 (3.20), seed 000 (42)); -> (n, n)

    Column k: X = R(k)H*(k) is carried to each ancestor i by φ(i, k) and
    projected, M(i, k) = H(i) φ(i, k) R(k) H*(k).
    """
    kin = kinematics(robot, q)
    R = composite_inertias(robot, kin)
    out = np.zeros((robot.nv, robot.nv))
    for k in range(robot.nb):
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
    return out


@dataclass
class Articulated:
    """Riccati sweep results (seed 000 (37)), one entry per body.

    P : (6, 6)          articulated body inertia P(k)
    D : (nv_k, nv_k)    D(k) = H P H*
    Dinv : (nv_k, nv_k) D(k)⁻¹, computed once (NaN where D(k) is singular)
    G : (6, nv_k)       G(k) = P H* D⁻¹
    K : (6, nv_k)       K(p(k), k) = φ(p, k) G(k)
    psi : (6, 6)        ψ(p(k), k) = φ(p, k) [I − G(k)H(k)]
    """

    P: list
    D: list
    Dinv: list
    G: list
    K: list
    psi: list


def articulated(robot, kin):
    """Tip-to-base Riccati sweep (seed 000 (37); seed 001 (4.4)–(4.7)):
    P(k) = M(k) + Σ_c ψ(k,c) P(c) ψ*(k,c) — equivalently φ P⁺ φ* with
    P⁺(c) = [I − G(c)H(c)] P(c)."""
    n = robot.nb
    P = [m.copy() for m in kin.M]
    D, Dinv, G, K, psi = [None] * n, [None] * n, [None] * n, [None] * n, [None] * n
    for k in reversed(range(n)):
        h = kin.H[k]
        D[k] = h.T @ P[k] @ h
        Dinv[k] = _inverse(D[k])
        G[k] = P[k] @ h @ Dinv[k]
        K[k] = kin.phi[k] @ G[k]
        psi[k] = kin.phi[k] @ (np.eye(6) - G[k] @ h.T)
        p = robot.bodies[k].parent
        if p >= 0:
            P[p] += psi[k] @ P[k] @ psi[k].T
    return Articulated(P, D, Dinv, G, K, psi)


def _inverse(D):
    """D(k)⁻¹; NaN entries where D(k) is singular (the model check reports it)."""
    try:
        return np.linalg.inv(D)
    except np.linalg.LinAlgError:
        return np.full_like(D, np.nan)


def _innovations_solve(robot, kin, art, T, z0=None):
    """θ̈ = (I − HψK)* D⁻¹ (I − HψK) T (seed 001 (4.19)–(4.22), seed 002 (15)).

    Causal filtering ẑ(k) = Σ_c [ψ(k,c) ẑ(c) + K(k,c) T(c)], ε = T − Hẑ, ν = D⁻¹ε;
    anticausal smoothing λ(k) = ψ*(p,k)λ(p) + H*ν(k), θ̈(k) = ν(k) − K*(p,k)λ(p).
    ``z0`` adds a force per body to ẑ before projection (used for H ψ B f(0)).
    Returns θ̈ (nv,) and λ (list of (6,)).
    """
    n = robot.nb
    T = np.asarray(T, float)
    z = [np.zeros(6) if z0 is None else z0[k].copy() for k in range(n)]
    nu = [None] * n
    for k in reversed(range(n)):
        sk = robot.vslice(k)
        nu[k] = art.Dinv[k] @ (T[sk] - kin.H[k].T @ z[k])
        p = robot.bodies[k].parent
        if p >= 0:
            z[p] += art.psi[k] @ z[k] + art.K[k] @ T[sk]
    lam, qdd = [None] * n, np.zeros(robot.nv)
    for k in range(n):
        p = robot.bodies[k].parent
        lp = np.zeros(6) if p < 0 else lam[p]
        qdd[robot.vslice(k)] = nu[k] - art.K[k].T @ lp
        lam[k] = art.psi[k].T @ lp + kin.H[k] @ nu[k]
    return qdd, lam


def mass_matrix_inverse(robot, q):
    """M⁻¹ = (I − HψK)* D⁻¹ (I − HψK) (seed 001 Theorem 4.1, (4.16)); -> (n, n)"""
    kin = kinematics(robot, q)
    art = articulated(robot, kin)
    eye = np.eye(robot.n)
    return np.column_stack([_innovations_solve(robot, kin, art, eye[:, j])[0] for j in range(robot.n)])


def forward_dynamics(robot, q, qd, tau, f_tip=None, variant="FD4"):
    """Joint accelerations θ̈ from torques ``tau``; -> (n,)

    ``variant="FD1"``: T' = T − Hφ[Mφ*a + b + Bf(0)] by Newton–Euler, then
    (I−HψK)*D⁻¹(I−HψK)T' (seed 001 (4.17)–(4.22)).
    ``variant="FD4"``: the three-sweep algorithm (seed 001 (5.13)–(5.17)),
    gravity folded into a(k) of the root bodies (seed 000, end of §4.3).
    """
    kin = kinematics(robot, q)
    art = articulated(robot, kin)
    if variant == "FD1":
        Tp = np.asarray(tau, float) - inverse_dynamics(robot, q, qd, np.zeros(robot.n), f_tip)
        return _innovations_solve(robot, kin, art, Tp)[0]
    if variant != "FD4":
        raise ValueError(f"unknown forward dynamics variant {variant!r}")
    return _fd4(robot, kin, art, qd, tau, f_tip)[0]


def _fd4(robot, kin, art, qd, tau, f_tip):
    """FD4 (seed 001 (5.16)–(5.17)); returns θ̈ (nv,) and α (list of (6,))."""
    n = robot.nb
    tau = np.asarray(tau, float)
    _, a, b, _ = bias_terms(robot, kin, qd)
    a = [ak.copy() for ak in a]
    for k, body in enumerate(robot.bodies):
        if body.parent < 0:  # ā(k) = a(k) + φ*(n+1, k) a_g
            a[k] += kin.phi[k].T @ _base_acceleration(robot)
    fb = _tip_forces(robot, kin, f_tip)
    z = [b[k] + fb[k] for k in range(n)]
    nu = [None] * n
    for k in reversed(range(n)):  # (5.16)
        sk = robot.vslice(k)
        nu[k] = art.Dinv[k] @ (tau[sk] - kin.H[k].T @ z[k])
        p = robot.bodies[k].parent
        if p >= 0:
            z[p] += art.psi[k] @ (z[k] + art.P[k] @ a[k]) + art.K[k] @ tau[sk]
    lam, qdd = [None] * n, np.zeros(robot.nv)
    for k in range(n):  # (5.17); λ(k) is the link acceleration α(k)
        p = robot.bodies[k].parent
        lp = np.zeros(6) if p < 0 else lam[p]
        ga = art.G[k].T @ a[k]
        qdd[robot.vslice(k)] = nu[k] - art.K[k].T @ lp - ga
        lam[k] = art.psi[k].T @ lp + kin.H[k] @ nu[k] + a[k] - kin.H[k] @ ga
    return qdd, lam


def tip_force_acceleration(robot, q, f_tip):
    """Δθ̈ = −(I − HψK)* D⁻¹ H ψ B f(0) caused by tip forces alone (seed 002 (18)); -> (n,)"""
    kin = kinematics(robot, q)
    art = articulated(robot, kin)
    fb = _tip_forces(robot, kin, f_tip)
    return _innovations_solve(robot, kin, art, np.zeros(robot.n), z0=fb)[0]


def jacobian(robot, q):
    """J = B*φ*H* (seed 002 (1), seed 000 (38)–(40)), tips stacked; -> (6m, n)

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
    """J̇θ̇ = B*φ*a + a(0) (seed 000 (46)): tip classical accelerations at θ̈ = 0,
    no gravity; -> (6m,)"""
    kin = kinematics(robot, q)
    _, a, _, a0 = bias_terms(robot, kin, qd)
    alpha = []
    for k, body in enumerate(robot.bodies):
        ap = np.zeros(6) if body.parent < 0 else alpha[body.parent]
        alpha.append(kin.phi[k].T @ ap + a[k])
    return np.concatenate([kin.phi_tip[i].T @ alpha[t.body] + a0[i] for i, t in enumerate(robot.tips)])


def tip_velocity(robot, q, qd):
    """β(0) = φ*(1,0)V(1) (seed 000 (41)) for each tip; -> (6m,)"""
    kin = kinematics(robot, q)
    V, _, _, _ = bias_terms(robot, kin, qd)
    return np.concatenate([kin.phi_tip[i].T @ V[t.body] for i, t in enumerate(robot.tips)])


# ====================================================== operational space
class SingularError(ArithmeticError):
    """Ω(0) is not positive definite enough to invert (singular configuration)."""


#: a pivot d_j of the LDLᵀ factorization of Ω(0) must exceed this fraction of Ω_jj
PIVOT_RATIO = {"double": 1e-10, "float": 1e-5}


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


def _tip_blocks(robot, kin, art):
    """Ω(k) for every body (seed 000 (58)) and the tip-pair blocks
    Ω_ij = φ*(a,0)ψ*(c,a) Ω(c) ψ(c,b)φ(b,0), c the nearest common ancestor of
    the tip bodies a, b (seed 003 Table 1 in the JPL notation); -> (6m, 6m)."""
    n = robot.nb
    Om = [None] * n
    for k in range(n):  # base-to-tip (58)
        p = robot.bodies[k].parent
        h = kin.H[k]
        Om[k] = h @ art.Dinv[k] @ h.T
        if p >= 0:
            Om[k] += art.psi[k].T @ Om[p] @ art.psi[k]
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
    """Ω(0) = Λ(0)⁻¹ = B*ψ*H*D⁻¹HψB (seed 000 (57)–(61), seed 002 (20)); -> (6m, 6m)"""
    kin = kinematics(robot, q)
    return _tip_blocks(robot, kin, articulated(robot, kin))


def os_inertia(robot, q):
    """Λ(0) = Ω(0)⁻¹ through LDLᵀ of Ω(0) (seed 000 (61)); raises
    :class:`SingularError` at singular configurations; -> (6m, 6m)"""
    L, d = ldl(os_inertia_inverse(robot, q))
    X = np.linalg.inv(L)
    return X.T @ (X / d[:, None])


def _eta(robot, kin, art, a, b):
    """η(k) of (seed 000 (66)–(67)): the tip-to-base sweep y = ψ(Pa + b),
    ξ(k) = H*(k)D⁻¹(k)H(k)y(k) − a(k), then η(k) = ψ*(p,k)η(p) + ξ(k).

    (66) is missing from the seed's text; it follows from (65):
    Ω(0)c(0) = B*ψ*[H*D⁻¹Hψ(Pa + b) − a] − a(0).
    """
    n = robot.nb
    y = [art.P[k] @ a[k] + b[k] for k in range(n)]
    for k in reversed(range(n)):
        p = robot.bodies[k].parent
        if p >= 0:
            y[p] += art.psi[k] @ y[k]
    eta = [None] * n
    for k in range(n):
        h = kin.H[k]
        xi = h @ (art.Dinv[k] @ (h.T @ y[k])) - a[k]
        p = robot.bodies[k].parent
        eta[k] = xi if p < 0 else art.psi[k].T @ eta[p] + xi
    return eta


def _gravity_bar(robot, kin, a):
    """ā = a + E*a_g: gravity folded into the root bodies (seed 000 end of §4.3)."""
    a = [ak.copy() for ak in a]
    for k, body in enumerate(robot.bodies):
        if body.parent < 0:
            a[k] += kin.phi[k].T @ _base_acceleration(robot)
    return a


def _os_rhs(robot, q, qd, coriolis=True, gravity=True):
    """Right-hand side r of Ω(0)x = r for x = c(0) (65)–(68), g(0) (72)–(74) or
    c(0)+g(0) (shortcut); returns (kin, art, r (6m,))."""
    kin = kinematics(robot, q)
    art = articulated(robot, kin)
    _, a, b, a0 = bias_terms(robot, kin, qd if coriolis else np.zeros(robot.n))
    if not coriolis:
        a, b, a0 = [np.zeros(6)] * robot.nb, [np.zeros(6)] * robot.nb, [np.zeros(6)] * len(robot.tips)
    if gravity:
        a = _gravity_bar(robot, kin, a)
    eta = _eta(robot, kin, art, a, b)
    r = np.concatenate([kin.phi_tip[i].T @ eta[t.body] - a0[i] for i, t in enumerate(robot.tips)])
    if gravity:   # (74): φ*(1,0)α(1) with α = φ*E*a_g, the base acceleration at the tip
        r += np.tile(_base_acceleration(robot), len(robot.tips))
    return kin, art, r


def _os_solve(robot, kin, art, r):
    L, d = ldl(_tip_blocks(robot, kin, art))
    z = np.linalg.solve(L, r) / d
    return np.linalg.solve(L.T, z)


def os_coriolis(robot, q, qd):
    """c(0): Ω(0)c(0) = η(0) − a(0) (seed 000 (65)–(68)); -> (6m,)"""
    return _os_solve(robot, *_os_rhs(robot, q, qd, coriolis=True, gravity=False))


def os_gravity(robot, q):
    """g(0): Ω(0)g(0) = φ*(1,0)(α(1) − η(1)) (seed 000 (72)–(74)); -> (6m,)"""
    return _os_solve(robot, *_os_rhs(robot, q, np.zeros(robot.n), coriolis=False, gravity=True))


def os_bias(robot, q, qd):
    """c(0) + g(0) by the shortcut a → ā = a + E*a_g in (65) (seed 000 end of §4.3); -> (6m,)"""
    return _os_solve(robot, *_os_rhs(robot, q, qd, coriolis=True, gravity=True))


def osc_torque(robot, q, qd, u):
    """Operational space control step T = J*[Λ(0)u + c(0) + g(0)] (seed 000 (4), (39)).

    ``u`` (6m,) is the commanded tip acceleration; -> (n,)
    """
    kin, art, r = _os_rhs(robot, q, qd, coriolis=True, gravity=True)
    F = _os_solve(robot, kin, art, np.asarray(u, float) + r)
    fb = _tip_forces(robot, kin, F)
    f = _causal(robot, kin, fb)                       # (39)
    return _project(robot, kin, f)
