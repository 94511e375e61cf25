"""numpy reference, the kinematics of the tips (frame 0 of each tip, world-aligned
axes): forward kinematics, the Jacobian J = B*φ*H* [RJK (1)], [KJR (38)–(40)], the
tip velocities β(0) = φ*(1,0)V(1) of the velocity pass [KJR (41)] and
J̇θ̇ = B*φ*a + a(0) [KJR (46)] from the Newton–Euler pass at θ̈ = 0
(:mod:`soagen.reference.newton_euler_passes`)."""
from __future__ import annotations

import numpy as np

from soagen.model.frames import kinematics
from soagen.model.spatial import phi
from soagen.reference.newton_euler_passes import newton_euler, tip_row_index, velocities


def forward_kinematics(robot, q):
    """World pose of each tip frame; -> (m, 4, 4)."""
    kin = kinematics(robot, q)
    out = np.zeros((len(robot.tips), 4, 4))
    for i, t in enumerate(robot.tips):
        out[i, :3, :3] = kin.R[t.body] @ t.rotation
        out[i, :3, 3] = kin.p[t.body] + kin.R[t.body] @ t.offset
        out[i, 3, 3] = 1.0
    return out


def jacobian(robot, q):
    """J = B*φ*H* [RJK (1)], [KJR (38)–(40)], tips stacked, the rows each tip has; -> (r, n)

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
    return J[tip_row_index(robot)]


def jdot_qdot(robot, q, qd):
    """J̇θ̇ = B*φ*a + a(0) [KJR (46)]: tip classical accelerations at θ̈ = 0,
    no gravity; -> (r,)"""
    kin = kinematics(robot, q)
    _, alpha, _ = newton_euler(robot, kin, qd, np.zeros(robot.nv), with_gravity=False)
    a0 = velocities(robot, kin, qd)[3]
    return np.concatenate([kin.phi_tip[i].T @ alpha[t.body] + a0[i] for i, t in enumerate(robot.tips)])[
        tip_row_index(robot)]


def tip_velocity(robot, q, qd):
    """β(0) = φ*(1,0)V(1) [KJR (41)] for each tip, its rows; -> (r,)"""
    kin = kinematics(robot, q)
    V = velocities(robot, kin, qd)[0]
    return np.concatenate([kin.phi_tip[i].T @ V[t.body] for i, t in enumerate(robot.tips)])[tip_row_index(robot)]

