"""Unrolled LDLᵀ of a symmetric N×N list, recording into a :class:`Program`.

The factorization behind every solve of the generated code: Ω(0) = Λ(0)⁻¹ of
the operational space, each pivot guarded [KJR (61)], [CK Table 1]; the
closed-chain Λ_c⁻¹ = Ω_a + R Ω_b Rᵀ [RJK (26)]; the mass matrix M [RK (3.20)],
reversed by :func:`reverse` so that its LDLᵀ is Featherstone's LTDL with no
fill-in on trees; and the joint-space D(k) of a multi-axis joint.  Shapes: a
matrix is an N×N list of rows of sympy scalars, a vector a list of N; the
factors are the unit-lower ``L`` (N×N), the pivots ``d`` and their inverses
``dinv`` (lists of N), from which :func:`ldl_inverse` and :func:`ldl_solve`
work without a further division.
"""
from __future__ import annotations

import sympy as sp


def ldl(prog, A, ratio, what="Omega(0)"):
    """Unit-lower L and pivots d (with 1/d) of a symmetric N×N list A, guarding
    every pivot: d_j > ratio · A_jj, else the function returns status 1
    (``ratio=None``: no guard, for a matrix known to be positive definite).

    With u_ij = L_ij d_j = A_ij − Σ_{k<j} L_ik u_jk (not waiting for 1/d_j),
    d_j = A_jj − Σ_{k<j} u_jk² / d_k: pivot j waits for 1/d_{j−1} through one
    multiply-add only, so the chain of divisions is as short as it gets.
    """
    N = len(A)
    L = [[sp.Integer(1) if i == j else sp.Integer(0) for j in range(N)] for i in range(N)]
    u = [[None] * N for _ in range(N)]        # u[i][j] = L_ij d_j, i > j
    d, dinv = [None] * N, [None] * N
    for j in range(N):
        d[j] = prog.let(A[j][j] - sum(prog.let(u[j][k] * u[j][k]) * dinv[k] for k in range(j)))
        if ratio is not None:
            prog.guard(d[j], ratio * A[j][j], f"pivot {j} of {what}")
        # a pivot that is exactly zero (a direction no joint moves) always fails the
        # guard above; 0 keeps the unreachable code after it finite
        dinv[j] = sp.Integer(0) if d[j] == 0 else prog.let(1 / d[j])
        for i in range(j + 1, N):
            u[i][j] = prog.let(A[i][j] - sum(L[i][k] * u[j][k] for k in range(j)))
            L[i][j] = prog.let(u[i][j] * dinv[j])
    return L, d, dinv


def ldl_inverse(prog, L, dinv):
    """A⁻¹ = L⁻ᵀ D⁻¹ L⁻¹ from the factors; symmetric N×N list.  D⁻¹L⁻¹ is formed once, so
    each term of an entry, (L⁻¹)_ki (D⁻¹L⁻¹)_kj, is one multiply-add."""
    N = len(L)
    X = [[sp.Integer(1) if i == j else sp.Integer(0) for j in range(N)] for i in range(N)]  # L⁻¹
    for i in range(N):
        for j in range(i):
            X[i][j] = prog.let(-sum(L[i][k] * X[k][j] for k in range(j, i)))
    Y = [[prog.let(dinv[k] * X[k][j]) for j in range(N)] for k in range(N)]                  # D⁻¹L⁻¹
    out = [[None] * N for _ in range(N)]
    for i in range(N):
        for j in range(i, N):
            out[i][j] = out[j][i] = prog.let(sum(X[k][i] * Y[k][j] for k in range(j, N)))
    return out


def reverse(A):
    """P A P for the exchange matrix P (rows and columns in reverse order).

    An LDLᵀ of the reversed mass matrix of a tree is Featherstone's LTDL
    factorization M = Lᵀ D L: eliminating from the leaves creates no fill-in
    (the zeros between branches stay zero and sympy drops them).
    """
    return [row[::-1] for row in A[::-1]]


def ldl_forward(prog, L, r):
    """y = L⁻¹ r, forward substitution with the unit-lower factor."""
    y = [None] * len(L)
    for i in range(len(L)):
        y[i] = prog.let(r[i] - sum(L[i][k] * y[k] for k in range(i)))
    return y


def ldl_backward(prog, L, z):
    """x = L⁻ᵀ z, back substitution with the unit-lower factor."""
    N = len(L)
    x = [None] * N
    for i in reversed(range(N)):
        x[i] = prog.let(z[i] - sum(L[k][i] * x[k] for k in range(i + 1, N)))
    return x


def ldl_solve(prog, L, dinv, r):
    """x with A x = r from the factors: L⁻ᵀ D⁻¹ L⁻¹ r."""
    y = ldl_forward(prog, L, r)
    return ldl_backward(prog, L, [prog.let(y[i] * dinv[i]) for i in range(len(L))])
