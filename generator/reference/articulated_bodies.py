"""numpy reference, the articulated-body passes: the tip-to-base Riccati sweep of
P(k), D(k), G(k), K(p,k) and ψ(p,k) [KJR (32), (37)], [RK (4.4)–(4.7)]; the
tip-to-base innovations filter and base-to-tip smoother [RK (4.19)–(4.22)] that
apply M⁻¹ = (I − HψK)* D⁻¹ (I − HψK) [RK Theorem 4.1, (4.16)–(4.18)], [RJK (15)];
the forward dynamics FD1 [RK (4.17)–(4.22)], FD2's outputs [RK (5.5)–(5.7)] and the
three-sweep FD4 [RK (5.13)–(5.17)] with gravity folded into ā [KJR end of §4.3];
and the accelerations caused by tip forces alone [RJK (18)]."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from soagen.model.frames import kinematics
from soagen.reference.newton_euler_passes import (
    actuator_torques,
    base_acceleration,
    inverse_dynamics,
    tip_forces,
    velocities,
)
from soagen.reference.tip_kinematics import jacobian, jdot_qdot


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
    returns), here from FD4, the dense Jacobian and J̇θ̇; -> ((n,), (r,))."""
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

