"""numpy reference, the Newton–Euler passes: the base-to-tip velocity pass
V = φ*H*θ̇ with the bias acceleration a(k) and bias force b(k) [KJR (41), (47)],
[RK (2.17), (2.19), (2.32)], the accelerations α(k) = φ*α(p) + H*θ̈ + a and body
forces f = Mα + b [RK (2.26), (2.29)], the tip-to-base force pass z = φy and its
projection T = Hz [RK (2.29)–(2.30)]: the inverse dynamics T = Mθ̈ + C + G + J*f(0)
[RK (2.24)–(2.30)], [KJR (44)–(45)] with gravity as a base acceleration [RK (3.21)],
and the mass matrix M = HφMφ*H* by the tip-to-base pass of composite inertias
[RK (3.20)], [KJR (42)]; and the actuators' torques (armature, friction)."""
from __future__ import annotations

import numpy as np

from soagen.model.frames import kinematics
from soagen.model.spatial import cross


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
        ak = np.concatenate([cross(wp, wr),
                             cross(wp, cross(wp, ell)) + 2.0 * cross(wp, vr) + cross(wr, vr)])
        w = Vk[:3]
        I_o = kin.M[k][:3, :3]
        bk = np.concatenate([cross(w, I_o @ w), body.mass * cross(w, cross(w, body.com))])
        V.append(Vk)
        a.append(ak)
        b.append(bk)
    a0 = []
    for t in robot.tips:
        w = kin.R[t.body] @ V[t.body][:3]
        ell = kin.R[t.body] @ t.offset
        a0.append(np.concatenate([np.zeros(3), cross(w, cross(w, ell))]))
    return V, a, b, a0


def tip_row_index(robot):
    """Indices (r,) of the rows the tips have in the 6m rows of full tips: all six
    [angular; linear] of a full tip, the linear three of a point tip."""
    return np.array([6 * i + r for i, t in enumerate(robot.tips) for r in t.rows], dtype=int)


def tip_forces(robot, kin, f_tip):
    """B f(0): each tip's force (its rows of the stacked ``f_tip`` (r,)) moved into its
    body; list of (6,) per body."""
    out = [np.zeros(6) for _ in robot.bodies]
    if f_tip is not None:
        full = np.zeros(6 * len(robot.tips))
        full[tip_row_index(robot)] = np.asarray(f_tip, float)
        f_tip = full.reshape(len(robot.tips), 6)
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

    ``f_tip`` (r,) is the force each tip exerts on the environment (3 rows per point tip).  -> (n,)
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


def actuator_torques(robot, qd, qdd):
    """armature·q̈ + viscous·q̇ + coulomb·q̇/√(q̇² + ε²) of the robot's actuators (zeros without); -> (nv,)"""
    if robot.actuators is None:
        return np.zeros(robot.nv)
    a = robot.actuators
    qd = np.asarray(qd, float)
    return a.armature * np.asarray(qdd, float) + a.viscous * qd + a.coulomb * qd / np.sqrt(qd * qd + a.coulomb_velocity ** 2)

