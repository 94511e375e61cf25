"""numpy reference, the derivatives of the dynamics: ∂τ/∂q and ∂τ/∂q̇ of the inverse
dynamics T = Mθ̈ + C + G + J*f(0) [RK (2.24)–(2.30)] by one tangent Newton–Euler
pass per direction (base-to-tip velocities and accelerations, tip-to-base forces),
in world axes with the spatial cross products v× and v×* (Featherstone's
formulation); the forward dynamics derivatives ∂θ̈/∂x = −M⁻¹ ∂τ/∂x with M⁻¹ of
[RK Theorem 4.1]; the linearized semi-implicit Euler step built from them; and the
centroidal momentum and its rate with their derivatives, from the same tangent passes."""
from __future__ import annotations

import numpy as np

from soagen.model.frames import kinematics
from soagen.model.spatial import cross, skew
from soagen.reference.articulated_bodies import forward_dynamics, mass_matrix_inverse
from soagen.reference.newton_euler_passes import base_acceleration, tip_row_index


def _numbers(x):
    """``x`` as a float array, or a complex one when it is complex (the complex-step second
    derivatives of :mod:`~soagen.reference.second_derivatives` run these passes in complex
    arithmetic; real inputs give the real passes unchanged)."""
    x = np.asarray(x)
    return x if np.iscomplexobj(x) else np.asarray(x, float)


def _dtype(kin, *xs):
    """float, or complex when the configuration ``kin`` or any of ``xs`` is complex."""
    return np.result_type(float, kin.R[0], kin.p[0], *[np.asarray(x) for x in xs if x is not None])


def _crm(v):
    """Motion cross product v× (6, 6) for a motion vector v = [ω; v] (its transpose negated is v×*)."""
    a, b, c, x, y, z = v
    return np.array([[0.0, -c, b, 0.0, 0.0, 0.0], [c, 0.0, -a, 0.0, 0.0, 0.0], [-b, a, 0.0, 0.0, 0.0, 0.0],
                     [0.0, -z, y, 0.0, -c, b], [z, 0.0, -x, c, 0.0, -a], [-y, x, 0.0, -b, a, 0.0]])


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
        X = np.zeros((6, 6), dtype=_dtype(kin))     # body-k motion vectors to world ones
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
    ext, points = [np.zeros(6, dtype=_dtype(kin, f_tip)) for _ in range(n)], [[] for _ in range(n)]
    if f_tip is not None:
        full = np.zeros(6 * len(robot.tips), dtype=_dtype(kin, f_tip))    # point tips: their rows, zero moments
        full[tip_row_index(robot)] = _numbers(f_tip)
        f_tip = full.reshape(len(robot.tips), 6)
        for i, t in enumerate(robot.tips):
            point = kin.p[t.body] + kin.R[t.body] @ t.offset
            ext[t.body] += np.concatenate([f_tip[i, :3] + cross(point, f_tip[i, 3:]), f_tip[i, 3:]])
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
    return inverse_dynamics_derivatives_at(robot, kinematics(robot, q), qd, qdd, f_tip)


def inverse_dynamics_derivatives_at(robot, kin, qd, qdd, f_tip=None, along_qd=True):
    """:func:`inverse_dynamics_derivatives` at the configuration ``kin`` (a :class:`Kinematics`,
    real or complex); complex ``kin``, ``qd``, ``qdd`` or ``f_tip`` run it in complex arithmetic;
    ``along_qd`` False: ∂τ/∂q alone, (∂τ/∂q, None)."""
    qd, qdd = _numbers(qd), _numbers(qdd)
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
    dq, dv = (np.zeros((nv, nv), dtype=_dtype(kin, qd, qdd, f_tip)) for _ in range(2))
    for j in range(robot.nb):
        for i, col in enumerate(range(robot.vslice(j).start, robot.vslice(j).stop)):
            s = S[j][:, i]
            dq[:, col] = _tangent_torques(robot, S, I, v, a, F, points, qd, qdd, moved=subtree[j], twist=s)
            if not along_qd:
                continue
            e = np.zeros(nv)
            e[col] = 1.0
            dv[:, col] = _tangent_torques(robot, S, I, v, a, F, points, qd, qdd, dqd=e)
    return (dq, dv + np.diag(_friction_slope(robot, qd))) if along_qd else (dq, None)


def _friction_slope(robot, qd):
    """∂/∂q̇ of the actuators' joint friction viscous·q̇ + coulomb·q̇/√(q̇² + ε²),
    a diagonal (nv,) (zeros without actuators)."""
    if robot.actuators is None:
        return np.zeros(robot.nv)
    a = robot.actuators
    return a.viscous + a.coulomb * a.coulomb_velocity ** 2 / (qd * qd + a.coulomb_velocity ** 2) ** 1.5


def _tangent_motion(robot, S, v, qd, qdd, moved=(), twist=None, dqd=None):
    """δS, δv, δa per body (world axes at the world origin) for a rigid motion ``twist``
    of the bodies ``moved``, or a change ``dqd`` of the joint velocities, at fixed q̈."""
    n = robot.nb
    twist_x = _crm(twist) if moved else None      # s× (6, 6), once per direction
    dS = [twist_x @ S[k] if k in moved else np.zeros_like(S[k]) for k in range(n)]
    dv, da = [None] * n, [None] * n
    for k in robot.base_to_tip():
        p = robot.bodies[k].parent
        sk = robot.vslice(k)
        qdk = qd[sk]
        u = np.zeros_like(qdk) if dqd is None else dqd[sk]
        dv[k] = (np.zeros(6) if p < 0 else dv[p]) + dS[k] @ qdk + S[k] @ u
        da[k] = ((np.zeros(6) if p < 0 else da[p]) + dS[k] @ qdd[sk] + _crm(dv[k]) @ S[k] @ qdk
                 + _crm(v[k]) @ (dS[k] @ qdk + S[k] @ u))
    return dS, dv, da


def _tangent_torques(robot, S, I, v, a, F, points, qd, qdd, moved=(), twist=None, dqd=None):
    """δτ of the world-frame Newton–Euler for a rigid motion ``twist`` of the
    bodies ``moved``, or a change ``dqd`` of the joint velocities."""
    n = robot.nb
    dS, dv, da = _tangent_motion(robot, S, v, qd, qdd, moved, twist, dqd)
    dF = [None] * n
    twist_x, twist_xf = (_crm(twist), _crf(twist)) if moved else (None, None)    # s×, s×* (6, 6)
    for k in robot.base_to_tip():
        dI = twist_xf @ I[k] - I[k] @ twist_x if k in moved else np.zeros((6, 6))
        v_xf = _crf(v[k])
        df = (dI @ a[k] + I[k] @ da[k] + _crf(dv[k]) @ I[k] @ v[k] + v_xf @ dI @ v[k]
              + v_xf @ I[k] @ dv[k])
        if k in moved:   # tip points move with the body, their forces keep their world axes
            for point, force in points[k]:
                df = df + np.concatenate([cross(cross(twist[:3], point) + twist[3:], force), np.zeros(3)])
        dF[k] = df
    for k in robot.tip_to_base():
        p = robot.bodies[k].parent
        if p >= 0:
            dF[p] = dF[p] + dF[k]
    return np.concatenate([dS[k].T @ F[k] + S[k].T @ dF[k] for k in range(n)])



def _subtrees(robot):
    """Per body j, the set of bodies its joint moves (j and its descendants)."""
    return [set(k for k in range(robot.nb) if j in robot.ancestors(k)) for j in range(robot.nb)]

def tip_acceleration_derivatives(robot, q, qd, qdd):
    """∂/∂q and ∂/∂q̇ of the tip accelerations Jθ̈ + J̇θ̇ (classical, world axes at the tip,
    the rows each tip has) at fixed θ̈; -> ((r, n), (r, n)).

    With the world-frame body velocity [ω; v_O] and acceleration [ω̇; a_O] (at the world
    origin) of the tip's body and p the tip point, the tip's rows are ω̇ and
    a_O + ω̇ × p + ω × (v_O + ω × p); their tangents follow from δv, δa of the tangent
    Newton–Euler pass (:func:`inverse_dynamics_derivatives`) and δp = s_ω × p + s_v
    when the direction's twist s moves the tip's body.
    """
    return tip_acceleration_derivatives_at(robot, kinematics(robot, q), qd, qdd)


def tip_acceleration_derivatives_at(robot, kin, qd, qdd, along_qd=True):
    """:func:`tip_acceleration_derivatives` at the configuration ``kin`` (a :class:`Kinematics`,
    real or complex); complex ``kin``, ``qd`` or ``qdd`` run it in complex arithmetic; ``along_qd``
    False: the derivatives along q alone, (∂/∂q, None)."""
    qd, qdd = _numbers(qd), _numbers(qdd)
    S, _, v, a, _ = _world(robot, kin, qd, qdd)
    subtree = _subtrees(robot)
    points = [kin.p[t.body] + kin.R[t.body] @ t.offset for t in robot.tips]
    rows = tip_row_index(robot)

    def column(moved=(), twist=None, dqd=None):
        _, dv, da = _tangent_motion(robot, S, v, qd, qdd, moved, twist, dqd)
        out = []
        for t, p in zip(robot.tips, points):
            b = t.body
            w, vo, wd = v[b][:3], v[b][3:], a[b][:3]
            dw, dvo, dwd, dao = dv[b][:3], dv[b][3:], da[b][:3], da[b][3:]
            dp = cross(twist[:3], p) + twist[3:] if b in moved else np.zeros(3)
            vp = vo + cross(w, p)
            dvp = dvo + cross(dw, p) + cross(w, dp)
            out += [dwd, dao + cross(dwd, p) + cross(wd, dp) + cross(dw, vp) + cross(w, dvp)]
        return np.concatenate(out)[rows]

    nv = robot.nv
    dq, dv = (np.zeros((len(rows), nv), dtype=_dtype(kin, qd, qdd)) for _ in range(2))
    for j in range(robot.nb):
        for i, col in enumerate(range(robot.vslice(j).start, robot.vslice(j).stop)):
            dq[:, col] = column(moved=subtree[j], twist=S[j][:, i])
            if not along_qd:
                continue
            e = np.zeros(nv)
            e[col] = 1.0
            dv[:, col] = column(dqd=e)
    return (dq, dv) if along_qd else (dq, None)


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


def centroidal_dynamics_derivatives(robot, q, qd, qdd):
    """h_G, ḣ_G and ∂h_G/∂q, ∂ḣ_G/∂q (tangent space), ∂ḣ_G/∂q̇, A_G (= ∂h_G/∂q̇ = ∂ḣ_G/∂q̈); rows
    [angular about the centre of mass; linear], world axes; -> ((6,), (6,), (6, n) × 4).

    From the world-frame Newton–Euler quantities at the world origin: the total momentum
    h_O = Σ I_k v_k and its rate ḣ_O = Σ (I_k a_k + v_k ×* I_k v_k), a_k without gravity (the
    uniform −g every a_k holds taken off), then about the centre of mass G:
    h_G = [n_O − G × l; l], ḣ_G = [ṅ_O − G × l̇; l̇] (Ġ × l = 0, l = m Ġ).  Each direction's
    tangent follows from δv, δa of the tangent pass (:func:`_tangent_motion`), δI_k = s×*I_k − I_k s×
    and δG = Σ m_k (s_ω × c_k + s_v) / m over the bodies the twist s moves.
    """
    qd, qdd = np.asarray(qd, float), np.asarray(qdd, float)
    kin = kinematics(robot, q)
    S, I, v, a, _ = _world(robot, kin, qd, qdd)
    a = [x - base_acceleration(robot) for x in a]
    mass = np.array([b.mass for b in robot.bodies])
    coms = [kin.p[k] + kin.R[k] @ b.com for k, b in enumerate(robot.bodies)]
    G = sum(m * c for m, c in zip(mass, coms)) / mass.sum()
    h = sum(I[k] @ v[k] for k in range(robot.nb))
    hdot = sum(I[k] @ a[k] + _crf(v[k]) @ I[k] @ v[k] for k in range(robot.nb))

    def about_centre(x, dx=None, dG=np.zeros(3)):
        """x = [n_O; l] about G, or (with ``dx``) its tangent."""
        if dx is None:
            return np.concatenate([x[:3] - cross(G, x[3:]), x[3:]])
        return np.concatenate([dx[:3] - cross(dG, x[3:]) - cross(G, dx[3:]), dx[3:]])

    subtree = _subtrees(robot)
    n = robot.nv
    dh_dq, dhdot_dq, dhdot_dqd, Ag = (np.zeros((6, n)) for _ in range(4))
    for j in range(robot.nb):
        for i, col in enumerate(range(robot.vslice(j).start, robot.vslice(j).stop)):
            s, moved = S[j][:, i], subtree[j]
            _, dv, da = _tangent_motion(robot, S, v, qd, qdd, moved, s)
            dI = [_crf(s) @ I[k] - I[k] @ _crm(s) if k in moved else np.zeros((6, 6)) for k in range(robot.nb)]
            dG = sum(mass[k] * (cross(s[:3], coms[k]) + s[3:]) for k in moved) / mass.sum()
            dh = sum(dI[k] @ v[k] + I[k] @ dv[k] for k in range(robot.nb))
            dhd = sum(dI[k] @ a[k] + I[k] @ da[k] + _crf(dv[k]) @ I[k] @ v[k] + _crf(v[k]) @ dI[k] @ v[k]
                      + _crf(v[k]) @ I[k] @ dv[k] for k in range(robot.nb))
            dh_dq[:, col], dhdot_dq[:, col] = about_centre(h, dh, dG), about_centre(hdot, dhd, dG)
            e = np.zeros(n)
            e[col] = 1.0
            _, dv, da = _tangent_motion(robot, S, v, qd, qdd, dqd=e)
            Ag[:, col] = about_centre(sum(I[k] @ dv[k] for k in range(robot.nb)))
            dhdot_dqd[:, col] = about_centre(sum(I[k] @ da[k] + _crf(dv[k]) @ I[k] @ v[k] + _crf(v[k]) @ I[k] @ dv[k]
                                                 for k in range(robot.nb)))
    return about_centre(h), about_centre(hdot), dh_dq, dhdot_dq, dhdot_dqd, Ag
