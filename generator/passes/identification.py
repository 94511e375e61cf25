"""Makers and passes linear in the inertial parameters: the joint-torque
regressor, the base regressor, the Slotine–Li regressor, and the body forces
of the functions that take the parameters π as inputs (``parameters="inputs"``).

Body regressors.  A body's force is linear in its ten standard parameters
π_k = (m, h = m c, I_o) (:mod:`soagen.model.parameters`): f(k) = Y_k π_k with, in body
axes, ι = (I_xx, I_xy, I_yy, I_xz, I_yz, I_zz) and L(x) the 3×6 matrix with
I_o x = L(x) ι,

* Newton–Euler [RK (2.29)], [KJR (47)]: n = (L(ω̇) + [ω]× L(ω)) ι + h × α_v,
  F = m α_v + U h with U = [ω̇]× + [ω]×² (the α(k), ω(k) of the
  Newton–Euler pass; α_v the linear part, gravity included);
* Slotine–Li, Christoffel-consistent: with v = (ω, ·) = J q̇, w = (ρ, s) = J q̇_r
  and a_r = J q̈_r + J̇ q̇_r (derivative of the body-axes twist), the body term
  f = I a_r + ½[v×* I w + w×* I v + I (v × w)] (Echeandia & Wensing's
  factorization, in body axes) expands to
  n = (L(a_ω) + [ω]× L(ρ/2) + [ρ]× L(ω/2) + L(ω/2 × ρ)) ι + h × ã,
  F = m ã + (ã_ω... ) i.e. F = m ã + ([a_ω]× + [ω]×[ρ]×) h, ã = a_v + ω × s;
  with q̇_r = q̇ it is the Newton–Euler one.

The joint-space regressor has, for every body k and every ancestor-or-self i,
the block Y[i, k] = H(i) φ(i, k) Y_k = (φ*(i, k) H*(i))ᵀ Y_k [RK (2.29)–(2.30)]:
the joint map of i carried base-to-tip into body k's axes (one motion
transform per pair), dotted with each of the 10 columns.  That is cheaper than
the force pass on 10 columns per body (a force transform per column) and
equal to it; the numpy reference (:func:`soagen.reference.regressor`) uses
the force pass.
"""
from __future__ import annotations


from soagen.passes import symbolic as S
from soagen.passes.linear_in_parameters import ZERO, _smooth_sign, body_columns
from soagen.passes.quadratic import rigid_acceleration_matrix
from soagen.passes.sweeps import Sweeps, newton_euler, velocities
from soagen.reference.identifiable import identifiable



def slotine_li_matrix(prog, w, rho, aw):
    """U_r = [a_ω]× + [ω]×[ρ]× = [a_ω]× + ρωᵀ − (ω·ρ)1, recorded (3×3)."""
    dot = sum(w[i] * rho[i] for i in range(3))
    out = [[rho[i] * w[j] - (dot if i == j else 0) for j in range(3)] for i in range(3)]
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        out[j][k] -= aw[i]
        out[k][j] += aw[i]
    return [[prog.let(x) for x in row] for row in out]


# ---------------------------------------------------------------- projection
def joint_axes_in_bodies(sw):
    """S[k] = {i: [φ*(i, k) H*(i) column, ...]} for every ancestor-or-self i of
    body k: the joint maps carried base-to-tip into body axes."""
    robot = sw.robot
    out = [None] * robot.nb
    sw.banner("base-to-tip joint maps phi*(i, k) H*(i) in body axes", "RK (2.17)")
    for k in sw.base_to_tip():
        fr = sw.frame(k)
        p = sw.parent(k)
        out[k] = {} if p < 0 else {i: [fr.phi_star(h) for h in cols] for i, cols in out[p].items()}
        out[k][k] = list(fr.Hcols)
    return out


def project_columns(sw, axes, columns):
    """Joint-space regressor of per-body columns (lists of (n, F)): row r of
    joint i, column c of body k is (φ*(i, k)H*(i))ᵀ column; zeros off the
    ancestors.  A nested nv × (10 nb) list."""
    prog, robot = sw.prog, sw.robot
    Y = [[ZERO] * (10 * robot.nb) for _ in range(robot.nv)]
    sw.banner("regressor columns (phi*(i, k) H*(i))^T Y_k", "RK (2.29)-(2.30)")
    for k in sw.base_to_tip():
        cols = [(S.vec(prog, n), S.vec(prog, F)) for n, F in columns[k]]
        for i, hs in axes[k].items():
            for r, h in zip(range(sw.vslices[i].start, sw.vslices[i].stop), hs):
                for c, (n, F) in enumerate(cols):
                    Y[r][10 * k + c] = prog.let(sum(h[0][a] * n[a] + h[1][a] * F[a] for a in range(3)))
    return Y


def actuator_columns(sw, qd, qdd):
    """Per actuated joint the (armature, viscous, Coulomb) columns: nv rows of 3 na values."""
    robot, prog = sw.robot, sw.prog
    out = [[ZERO] * (3 * len(robot.actuated)) for _ in range(robot.nv)]
    if robot.actuators is None:
        return out
    eps = S.const_vector([robot.actuators.coulomb_velocity])[0]
    for c, i in enumerate(robot.actuated):
        out[i][3 * c:3 * c + 3] = [qdd[i], qd[i], _smooth_sign(prog, qd[i], eps)]
    return out


def _row_major(Y, columns=None):
    columns = range(len(Y[0])) if columns is None else columns
    return [row[c] for row in Y for c in columns]


def _regressor(prog, robot, q, qd, qdd):
    sw = Sweeps(prog, robot, q)
    vel, alpha, _ = newton_euler(sw, qd, qdd)
    axes = joint_axes_in_bodies(sw)
    columns = []
    for k in range(robot.nb):
        w, (aw, av) = vel.V[k][0], alpha[k]
        columns.append(body_columns(prog, w, aw, av, rigid_acceleration_matrix(prog, w, aw)))
    Y = project_columns(sw, axes, columns)
    act = actuator_columns(sw, qd, qdd)
    return [row + extra for row, extra in zip(Y, act)]


def regressor(prog, robot, q, qd, qdd):
    """Y with T = Y π: the Newton–Euler body regressors [RK (2.26), (2.29)] projected on
    φ*(i, k)H*(i) [RK (2.30)], and the actuator columns."""
    return [_row_major(_regressor(prog, robot, q, qd, qdd))]


def base_regressor(prog, robot, q, qd, qdd):
    """Y_b: the base columns of the regressor [RK (2.26), (2.29)–(2.30)] (Gautier's QR, soagen.model.parameters)."""
    return [_row_major(_regressor(prog, robot, q, qd, qdd), identifiable(robot).columns)]


def slotine_li_regressor(prog, robot, q, qd, qdr, qddr):
    """Y with Y π = M q̈_r + C(q, q̇) q̇_r + G, C Christoffel-consistent: reference
    velocities and accelerations base-to-tip (J q̇_r, J q̈_r + J̇ q̇_r) [RK (2.17), (2.26)],
    the Slotine–Li body regressors, projected as the regressor's [RK (2.30)]."""
    sw = Sweeps(prog, robot, q)
    vel = velocities(sw, qd)
    sw.banner("base-to-tip reference velocities J qd_r, accelerations J qdd_r + Jdot qd_r", "RK (2.17), (2.26)")
    w, a = [None] * robot.nb, [None] * robot.nb
    columns = [None] * robot.nb
    for k in sw.base_to_tip():
        fr = sw.frame(k)
        p = sw.parent(k)
        hq, hr, hrr = fr.along(sw.part(qd, k)), fr.along(sw.part(qdr, k)), fr.along(sw.part(qddr, k))
        if p < 0:
            xw = S.ZERO3, S.ZERO3
            xa = fr.phi_star((S.ZERO3, [S.const_vector([-g])[0] for g in robot.gravity]))
        else:
            xw, xa = fr.phi_star(w[p]), fr.phi_star(a[p])
        w[k] = S.spatial_add(prog, xw, hr)
        # (φ*w_p) × (H q̇): the motion cross product [a; b] × [c; d] = [a × c; a × d + b × c]
        cw = S.cross(prog, xw[0], hq[0]) if any(x != 0 for x in xw[0]) else S.ZERO3
        cv = S.add(prog, S.cross(prog, xw[0], hq[1]), S.cross(prog, xw[1], hq[0]))
        a[k] = S.spatial_add(prog, xa, hrr, (cw, cv))
        omega, rho, s = vel.V[k][0], w[k][0], w[k][1]
        at = S.add(prog, a[k][1], S.cross(prog, omega, s))                          # ã = a_v + ω × s
        U = slotine_li_matrix(prog, omega, rho, a[k][0])
        columns[k] = body_columns(prog, omega, a[k][0], at, U, rho)
    Y = project_columns(sw, joint_axes_in_bodies(sw), columns)
    act = actuator_columns(sw, qd, qddr)
    return [_row_major([row + extra for row, extra in zip(Y, act)])]


