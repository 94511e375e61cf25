"""numpy reference, the regressors linear in the standard parameters π
(:meth:`soagen.Robot.parameters`): the body regressor Y_k with
f(k) = M(k)α(k) + b(k) = Y_k π_k [RK (2.29)], [KJR (47)] from the Newton–Euler
pass, carried tip-to-base and projected by the force pass [RK (2.29)–(2.30)] into
τ = Y π, with the actuators' armature and friction columns; and the Slotine–Li
regressor of the Christoffel-consistent factorization (Echeandia & Wensing) from
base-to-tip passes of v = Jq̇, w = Jq̇_r and a_r = Jq̈_r + J̇q̇_r.  The base regressor
Y_b is in :mod:`soagen.reference.identifiable`."""
from __future__ import annotations

import numpy as np

from soagen.model.frames import kinematics
from soagen.model.parameters import inertia_from_parameters
from soagen.model.spatial import cross
from soagen.reference.derivatives import _crm
from soagen.reference.newton_euler_passes import base_acceleration, newton_euler


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
        return M @ alpha + np.concatenate([cross(w, M[:3, :3] @ w), cross(w, cross(w, p10[1:4]))])
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

