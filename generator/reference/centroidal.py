"""numpy reference of the centroidal quantities, from their definitions rather than the
composite-inertia recursion: the centre of mass Σ m c / m, and the total momentum about it,
body by body, h_G = Σ_k [I_k ω_k + m_k (c_k − G) × ċ_k; m_k ċ_k] (world axes, I_k about the
body's centre of mass), whose q̇-columns are A_G; Ȧ_G q̇ is the rate of that momentum at
q̈ = 0 without gravity, the Newton–Euler body forces [RK (2.26), (2.29)] carried to the
centre of mass and summed.  Rows [angular about the centre of mass; linear]."""
from __future__ import annotations

import numpy as np

from soagen.model.frames import kinematics
from soagen.model.spatial import cross, skew
from soagen.reference.newton_euler_passes import newton_euler


def _mass(robot):
    return float(sum(b.mass for b in robot.bodies))


def _centre(robot, kin):
    return sum(b.mass * (kin.p[k] + kin.R[k] @ b.com) for k, b in enumerate(robot.bodies)) / _mass(robot)


def center_of_mass(robot, q):
    """G (3,), world."""
    return _centre(robot, kinematics(robot, q))


def _body_jacobian(robot, kin, k):
    """(6, nv): body k's [ω; velocity of its origin] in world axes, column by column from the
    joint maps of its ancestors."""
    J = np.zeros((6, robot.nv))
    for i in robot.ancestors(k):
        for c, h in zip(range(robot.vslice(i).start, robot.vslice(i).stop), kin.H[i].T):
            w, v = kin.R[i] @ h[:3], kin.R[i] @ h[3:]
            J[:3, c] = w
            J[3:, c] = v + cross(w, kin.p[k] - kin.p[i])
    return J


def centroidal_momentum_matrix(robot, q):
    """A_G (6, nv): h_G = A_G q̇ (module doc)."""
    kin = kinematics(robot, q)
    G = _centre(robot, kin)
    A = np.zeros((6, robot.nv))
    for k, b in enumerate(robot.bodies):
        J = _body_jacobian(robot, kin, k)
        c = kin.p[k] + kin.R[k] @ b.com
        w, vc = J[:3], J[3:] - skew(c - kin.p[k]) @ J[:3]        # ċ = v + ω × (c − p) = v − [c − p]× ω
        I = kin.R[k] @ b.inertia @ kin.R[k].T
        A[:3] += I @ w + b.mass * skew(c - G) @ vc
        A[3:] += b.mass * vc
    return A


def com_jacobian(robot, q):
    """J_G (3, nv) = the linear rows of A_G / m."""
    return centroidal_momentum_matrix(robot, q)[3:] / _mass(robot)


def centroidal_bias(robot, q, qd):
    """Ȧ_G q̇ (6,) (module doc)."""
    still = robot.with_gravity((0.0, 0.0, 0.0))
    kin = kinematics(still, q)
    G = _centre(robot, kin)
    _, _, f = newton_euler(still, kin, qd, np.zeros(robot.nv), with_gravity=False)
    out = np.zeros(6)
    for k in range(robot.nb):
        lin = kin.R[k] @ f[k][3:]
        out[3:] += lin
        out[:3] += kin.R[k] @ f[k][:3] + cross(kin.p[k] - G, lin)
    return out
