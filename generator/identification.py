"""Makers and passes linear in the inertial parameters: the joint-torque
regressor, the base regressor, the Slotine–Li regressor, and the body forces
of the functions that take the parameters π as inputs (``parameters="inputs"``).

Body regressors.  A body's force is linear in its ten standard parameters
π_k = (m, h = m c, I_o) (:mod:`soagen.parameters`): f(k) = Y_k π_k with, in body
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

import sympy as sp

from . import symbolic as S
from .sweeps import Sweeps, newton_euler, velocities

ZERO = sp.Integer(0)


# ------------------------------------------------------------ body regressors
def _L(x):
    """L(x) (3×6): I_o x = L(x) ι, ι = (I_xx, I_xy, I_yy, I_xz, I_yz, I_zz)."""
    return [[x[0], x[1], ZERO, x[2], ZERO, ZERO],
            [ZERO, x[0], x[1], ZERO, x[2], ZERO],
            [ZERO, ZERO, ZERO, x[0], x[1], x[2]]]


def _cross_columns(w, L):
    """[w]× L for a 3×6 expression matrix, unrecorded."""
    return [[w[(i + 1) % 3] * L[(i + 2) % 3][c] - w[(i + 2) % 3] * L[(i + 1) % 3][c] for c in range(6)]
            for i in range(3)]


def _cross(a, b):
    return [a[1] * b[2] - a[2] * b[1], a[2] * b[0] - a[0] * b[2], a[0] * b[1] - a[1] * b[0]]


def body_columns(prog, w, aw, av, U, rho=None):
    """The 10 columns of Y_k as (n, F) pairs of unrecorded expressions (module doc).

    w : ω (3), aw, av : the angular and linear parts of α (Newton–Euler) or of
    (a_r,ω, ã) (Slotine–Li), U : 3×3 with F_h = U h, rho : ρ (Slotine–Li) or None.
    """
    if rho is None:   # [ω]× L(ω) from the products ω_a ω_b that U shares: I_xy's coefficient is an entry of U
        p = [[prog.let(w[min(a, b)] * w[max(a, b)]) for b in range(3)] for a in range(3)]
        index = {x: m for m, x in enumerate(w) if x != 0}
        Lw = [[ZERO if x == 0 else p[j][index[x]] for x in _L(w)[k]] for j in range(3) for k in range(3)]
        wxL = [[Lw[3 * ((i + 1) % 3) + (i + 2) % 3][c] - Lw[3 * ((i + 2) % 3) + (i + 1) % 3][c] for c in range(6)]
               for i in range(3)]
        G = [[a + b for a, b in zip(ra, rb)] for ra, rb in zip(_L(aw), wxL)]
    else:
        half = S.scale(prog, sp.Rational(1, 2), w)
        parts = (_L(aw), _cross_columns(half, _L(rho)), _cross_columns(rho, _L(half)), _L(_cross(half, rho)))
        G = [[sum(p[i][c] for p in parts) for c in range(6)] for i in range(3)]
    cols = [([ZERO] * 3, list(av))]                                           # m
    for j in range(3):                                                         # h_j: e_j × a, U e_j
        e = [ZERO] * 3
        e[j] = sp.Integer(1)
        cols.append((_cross(e, av), [U[i][j] for i in range(3)]))
    cols += [([G[i][c] for i in range(3)], [ZERO] * 3) for c in range(6)]      # ι
    return cols


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


def _smooth_sign(prog, x, eps):
    """x/√(x² + ε²): the smooth sign of Coulomb friction."""
    if x == 0:
        return ZERO
    return prog.let(x / prog.let(sp.sqrt(prog.let(x * x + eps * eps))))


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
        columns.append(body_columns(prog, w, aw, av, S.rigid_acceleration_matrix(prog, w, aw)))
    Y = project_columns(sw, axes, columns)
    act = actuator_columns(sw, qd, qdd)
    return [row + extra for row, extra in zip(Y, act)]


def regressor(prog, robot, q, qd, qdd):
    """Y with T = Y π: the Newton–Euler body regressors [RK (2.26), (2.29)] projected on
    φ*(i, k)H*(i) [RK (2.30)], and the actuator columns."""
    return [_row_major(_regressor(prog, robot, q, qd, qdd))]


def base_regressor(prog, robot, q, qd, qdd):
    """Y_b: the base columns of the regressor [RK (2.26), (2.29)–(2.30)] (Gautier's QR, soagen.parameters)."""
    return [_row_major(_regressor(prog, robot, q, qd, qdd), robot.identifiable.columns)]


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


# ------------------------------------------------- parameters as inputs
def combine(prog, columns, params):
    """Σ_c column_c π_c for columns (n, F) and parameters ``params`` (10 expressions),
    each component grouped by coefficient: parameters whose coefficients are equal
    or opposite share one multiplication ((I_zz − I_yy) ω_y ω_z)."""
    out = []
    for part in (0, 1):
        comp = []
        for i in range(3):
            groups = {}
            for col, par in zip(columns, params):
                coeff = sp.expand(col[part][i])
                if coeff == 0 or par == 0:
                    continue
                # the coefficient or its negative may be a statement already (an entry of U):
                # look it up in the program's hash-consing table to take that sign
                sign = -1 if (-coeff in prog._table or coeff.could_extract_minus_sign()) \
                    and coeff not in prog._table else 1
                key = sign * coeff
                groups.setdefault(key, []).append(sign * par)
            comp.append(prog.let(sum(prog.let(key) * prog.let(sum(pars)) for key, pars in groups.items())))
        out.append(comp)
    return tuple(out)


def body_force(prog, params, w, aw, av, U):
    """f(k) = M(k)α(k) + b(k) [RK (2.29)] with the parameters ``params`` (10 symbols)."""
    return combine(prog, body_columns(prog, w, aw, av, U), params)


def bias_force(prog, params, w):
    """b(k) = [ω × I_o ω; ω × (ω × h)] [KJR (47)] with the parameters ``params``."""
    return body_force(prog, params, w, S.ZERO3, S.ZERO3, S.rigid_acceleration_matrix(prog, w, S.ZERO3))


def spatial_inertia(params):
    """M(k) = [[I_o, h̃], [−h̃, m 1]] [RK (2.15)] as (A, B, C) from 10 parameter expressions."""
    m, hx, hy, hz, xx, xy, yy, xz, yz, zz = params
    A = [[xx, xy, xz], [xy, yy, yz], [xz, yz, zz]]
    B = [[ZERO, -hz, hy], [hz, ZERO, -hx], [-hy, hx, ZERO]]
    C = [[m if i == j else ZERO for j in range(3)] for i in range(3)]
    return A, B, C


def parameter_inputs(prog, robot):
    """Declare the input π (p) of a function taking the parameters as inputs; the
    sweeps read it from ``prog.parameters``."""
    prog.parameters = prog.input("pi", robot.n_parameters, "parameters: 10 per body (m, m c, I about the body "
                                 "origin: xx xy yy xz yz zz), 3 per actuated joint (armature, viscous, Coulomb)")
    return prog.parameters


