"""Terms quadratic in one angular velocity ω, recording into a :class:`Program`.

The gyroscopic ω × (I ω) of a constant symmetric 3×3 I and the centripetal
ω × (ω × x) of a constant 3-vector x, the quadratic parts of the bias
acceleration a(k) [RK (2.19), (2.32)] and bias force b(k) [KJR (47)], each
evaluated either by cross products or from the six products ω_a ω_b shared by
all of them, whichever costs fewer multiplications (:class:`QuadraticTerms`);
and W = [ω̇]× + [ω]×[ω]× (3×3), the point accelerations of a rigid body, for
the regressors: the classical customization of Newton–Euler for a fixed robot.
Coefficients are lists of 3 dicts ``{(a, b): c}`` with a ≤ b, one per
component; vectors are lists of 3 sympy scalars as in :mod:`soagen.passes.symbolic`.
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from soagen.passes.symbolic import const_matrix, const_vector, cross
from soagen.program.statements import const

_EPS = np.zeros((3, 3, 3))
for _i, _j, _k in ((0, 1, 2), (1, 2, 0), (2, 0, 1)):
    _EPS[_i, _j, _k], _EPS[_i, _k, _j] = 1.0, -1.0


def gyroscopic_coefficients(X):
    """ω × (X ω) for a constant symmetric 3×3 X as coefficients of ω_a ω_b:
    a list of 3 dicts ``{(a, b): c}`` with a ≤ b."""
    C = np.einsum("iac,cb->iab", _EPS, np.asarray(X, float))
    return [_monomials(C[i]) for i in range(3)]


def centripetal_coefficients(x):
    """ω × (ω × x) = ω(ω·x) − x|ω|² for a constant 3-vector x, as in
    :func:`gyroscopic_coefficients`."""
    x = np.asarray(x, float)
    C = np.einsum("ia,b->iab", np.eye(3), x) - np.einsum("i,ab->iab", x, np.eye(3))
    return [_monomials(C[i]) for i in range(3)]


def _monomials(C):
    out = {}
    for a in range(3):
        for b in range(a, 3):
            c = C[a, b] + (C[b, a] if a != b else 0.0)
            if c != 0.0:
                out[(a, b)] = c
    return out


class QuadraticTerms:
    """Terms quadratic in one angular velocity ω (gyroscopic ω × Iω, centripetal
    ω × (ω × x)), each evaluated either directly (cross products) or from the
    products ω_a ω_b shared by all of them, whichever costs fewer multiplications
    once the products are paid for ([RK (2.19), (2.32)]; the shared-product
    form is the classical customization of Newton–Euler for a fixed robot)."""

    def __init__(self, prog, w):
        self.prog, self.w = prog, w
        self.live = [x != 0 for x in w]

    def _direct_cost(self, kind, X):
        X = np.asarray(X, float)
        live = self.live
        if kind == "gyroscopic":
            v = [any(X[i, j] != 0 and live[j] for j in range(3)) for i in range(3)]
            cost = sum(X[i, j] != 0 and abs(X[i, j]) != 1 and live[j] for i in range(3) for j in range(3))
        else:
            v = [(live[(i + 1) % 3] and X[(i + 2) % 3] != 0) or (live[(i + 2) % 3] and X[(i + 1) % 3] != 0)
                 for i in range(3)]
            cost = sum((live[(i + 1) % 3] and X[(i + 2) % 3] != 0 and abs(X[(i + 2) % 3]) != 1)
                       + (live[(i + 2) % 3] and X[(i + 1) % 3] != 0 and abs(X[(i + 1) % 3]) != 1)
                       for i in range(3))
        cost += sum((live[(i + 1) % 3] and v[(i + 2) % 3]) + (live[(i + 2) % 3] and v[(i + 1) % 3])
                    for i in range(3))
        return cost

    def _coefficients(self, kind, X):
        coeffs = gyroscopic_coefficients(X) if kind == "gyroscopic" else centripetal_coefficients(X)
        return [{ab: c for ab, c in comp.items() if self.live[ab[0]] and self.live[ab[1]]} for comp in coeffs]

    @staticmethod
    def _groups(comp):
        groups = {}
        for ab, c in sorted(comp.items()):
            groups.setdefault(abs(c), []).append((1 if c > 0 else -1, ab))
        return groups

    def _form_cost(self, coeffs):
        """(multiplications by coefficients, set of products used)."""
        muls, used = 0, set()
        for comp in coeffs:
            groups = self._groups(comp)
            muls += sum(1 for mag in groups if mag != 1.0)
            used |= set(comp)
        return muls, used

    def evaluate(self, terms):
        """Record ``terms`` = [(kind, X)] ("gyroscopic" with a symmetric 3×3,
        "centripetal" with a 3-vector); returns one 3-vector per term."""
        direct = [self._direct_cost(kind, X) for kind, X in terms]
        coeffs = [self._coefficients(kind, X) for kind, X in terms]
        forms = [self._form_cost(c) for c in coeffs]
        # pay the shared products only if the terms that then choose them save more
        chosen = [f[0] < d for f, d in zip(forms, direct)]
        used = set().union(*[f[1] for f, ch in zip(forms, chosen) if ch]) if any(chosen) else set()
        saved = sum(d - f[0] for f, d, ch in zip(forms, direct, chosen) if ch)
        if saved <= len(used):
            chosen = [False] * len(terms)
        out = []
        for (kind, X), c, use in zip(terms, coeffs, chosen):
            if not use:
                out.append(self._direct(kind, X))
            else:
                out.append([self._from_products(comp) for comp in c])
        return out

    def _direct(self, kind, X):
        prog, w = self.prog, self.w
        if kind == "gyroscopic":
            C = const_matrix(X)
            return cross(prog, w, [prog.let(sum(C[i][j] * w[j] for j in range(3))) for i in range(3)])
        return cross(prog, w, cross(prog, w, const_vector(X)))

    def _from_products(self, comp):
        prog, w = self.prog, self.w
        total = sp.Integer(0)
        for mag, items in sorted(self._groups(comp).items()):
            s = sum(sign * prog.let(w[a] * w[b]) for sign, (a, b) in items)
            if mag != 1.0 and len(items) > 1:
                s = prog.let(s)
            total += s if mag == 1.0 else const(mag) * s
        return prog.let(total)


def rigid_acceleration_matrix(prog, w, wd):
    """W = [ω̇]× + [ω]×[ω]× (3×3, entries sums of the products ω_a ω_b and ω̇):
    W x = ω̇ × x + ω × (ω × x), the acceleration of a point x of a rigid body
    relative to its origin, for any constant x: 3 multiplications per non-zero
    entry of x (the classical customized Newton–Euler form)."""
    p = [[prog.let(w[a] * w[b]) for b in range(3)] for a in range(3)]
    for a in range(3):
        for b in range(a):
            p[a][b] = p[b][a]
    W = [[None] * 3 for _ in range(3)]
    for i in range(3):
        j, k = (i + 1) % 3, (i + 2) % 3
        W[i][i] = -(p[j][j] + p[k][k])
        W[i][j] = p[i][j] - wd[k]
        W[j][i] = p[i][j] + wd[k]
    return [[prog.let(x) for x in row] for row in W]
