"""Body quantities linear in the ten standard parameters π_k = (m, h = m c, I_o) of a body,
recorded on symbols: the columns of the body regressor Y_k (f(k) = Y_k π_k), the body force and
bias force and the spatial inertia with π as program inputs (``parameters="inputs"``), and the
smooth sign of Coulomb friction.  The passes (:mod:`soagen.passes.sweeps`) and the regressor
makers (:mod:`soagen.passes.identification`) read them; the formulas are in the latter's doc.
"""
from __future__ import annotations

import sympy as sp

from soagen.passes import symbolic as S
from soagen.passes.quadratic import rigid_acceleration_matrix

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


def _smooth_sign(prog, x, eps):
    """x/√(x² + ε²): the smooth sign of Coulomb friction."""
    if x == 0:
        return ZERO
    return prog.let(x / prog.let(sp.sqrt(prog.let(x * x + eps * eps))))


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
    return body_force(prog, params, w, S.ZERO3, S.ZERO3, rigid_acceleration_matrix(prog, w, S.ZERO3))


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
