"""numpy reference, the operational space passes: the base-to-tip pass
Ω(k) = ψ*Ω(p)ψ + H*D⁻¹H [KJR (58)] and the tips' Ω(0) = Λ(0)⁻¹ = B*ψ*H*D⁻¹HψB
[KJR (57)–(61)], [RJK (20)] (off-diagonal blocks [CK Table 1]) with its guarded
LDLᵀ factorization; the η pass, tip-to-base then base-to-tip [KJR (66)–(67)], and
the right-hand sides of Ω(0)c(0) [KJR (65)–(68)] and Ω(0)g(0) [KJR (72)–(74)] (the
shortcut ā [KJR end of §4.3]); the operational space control step
T = J*[Λ(0)u + c(0) + g(0)] [KJR (4), (39)]."""
from __future__ import annotations

import numpy as np

from soagen.model.errors import SingularError
from soagen.model.frames import kinematics
from soagen.options import PIVOT_RATIO
from soagen.reference.articulated_bodies import articulated, gravity_bar
from soagen.reference.newton_euler_passes import (base_acceleration, forces_tip_to_base, project, tip_forces, tip_row_index,
                                                  velocities)


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
    [CK Table 1] in the JPL notation off it), restricted to the rows the tips
    have; -> (r, r)."""
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
    rows = tip_row_index(robot)
    return out[np.ix_(rows, rows)]


def os_inertia_inverse(robot, q):
    """Ω(0) = Λ(0)⁻¹ = B*ψ*H*D⁻¹HψB [KJR (57)–(61)], [RJK (20)]; -> (r, r)"""
    kin = kinematics(robot, q)
    return omega_tips(robot, kin, articulated(robot, kin))


def os_inertia(robot, q):
    """Λ(0) = Ω(0)⁻¹ through LDLᵀ of Ω(0) [KJR (61)]; raises
    :class:`SingularError` at singular configurations; -> (r, r)"""
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
    no gravity), g(0) (72)–(74) (``qd`` None) or c(0)+g(0) (the shortcut); (r,)."""
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
    return r[tip_row_index(robot)]


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
    """c(0): Ω(0)c(0) = η(0) − a(0) [KJR (65)–(68)]; -> (r,)"""
    return _os(robot, q, qd, gravity=False)[1]


def os_gravity(robot, q):
    """g(0): Ω(0)g(0) = φ*(1,0)(α(1) − η(1)) [KJR (72)–(74)]; -> (r,)"""
    return _os(robot, q, None, gravity=True)[1]


def os_bias(robot, q, qd):
    """c(0) + g(0) by the shortcut a → ā = a + E*a_g in (65) [KJR end of §4.3]; -> (r,)"""
    return _os(robot, q, qd, gravity=True)[1]


def osc_torque(robot, q, qd, u):
    """Operational space control step T = J*[Λ(0)u + c(0) + g(0)] [KJR (4), (39)].

    ``u`` (r,) is the commanded tip acceleration; -> (n,)
    """
    kin, F = _os(robot, q, qd, gravity=True, u=u)
    return project(robot, kin, forces_tip_to_base(robot, kin, tip_forces(robot, kin, F)))   # (39)

