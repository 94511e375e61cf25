"""Dense block operators of the papers ([KJR] (17)–(37), [RK] §3–§5, [RJK]),
assembled from the reference's per-body quantities, for checking identities
with plain matrix algebra.

Numbering: bodies base-first (parent < child), so the paper's lower-triangular
φ is upper-triangular here: block (i, j) = φ(i, j) when i is an ancestor-or-self of j.
"""
from __future__ import annotations

import numpy as np

from soagen import reference as ref


def _path_product(robot, per_body):
    """Dense 6n×6n block operator with block (i, j) = per_body product along the
    path from j up to ancestor i (identity on the diagonal, zero elsewhere)."""
    n = robot.nb
    out = np.zeros((6 * n, 6 * n))
    blk = lambda i, j: out[6 * i:6 * i + 6, 6 * j:6 * j + 6]  # noqa: E731
    for j in range(n):
        blk(j, j)[:] = np.eye(6)
        p = robot.bodies[j].parent
        if p >= 0:
            for i in robot.ancestors(p):   # φ(i, j) = φ(i, p(j)) φ(p(j), j)
                blk(i, j)[:] = blk(i, p) @ per_body[j]
    return out


def dense_operators(robot, q):
    """Dense block operators at ``q`` from the reference's per-body quantities."""
    kin = ref.kinematics(robot, q)
    art = ref.articulated(robot, kin)
    n, nv = robot.nb, robot.nv
    H = np.zeros((nv, 6 * n))
    Mb = np.zeros((6 * n, 6 * n))
    Gb = np.zeros((6 * n, nv))
    K = np.zeros((6 * n, nv))
    D = np.zeros((nv, nv))
    Ephi = np.zeros((6 * n, 6 * n))
    Epsi = np.zeros((6 * n, 6 * n))
    P = np.zeros((6 * n, 6 * n))
    for k, b in enumerate(robot.bodies):
        s, v = slice(6 * k, 6 * k + 6), robot.vslice(k)
        H[v, s] = kin.H[k].T
        Mb[s, s] = kin.M[k]
        Gb[s, v] = art.G[k]
        D[v, v] = art.D[k]
        P[s, s] = art.P[k]
        if b.parent >= 0:
            sp = slice(6 * b.parent, 6 * b.parent + 6)
            K[sp, v] = art.K[k]
            Ephi[sp, s] = kin.phi[k]
            Epsi[sp, s] = art.psi[k]
    B = np.zeros((6 * n, robot.tip_rows))                 # a column per tip row: 6 of a full tip, 3 of a point tip
    col = 0
    for i, t in enumerate(robot.tips):
        B[6 * t.body:6 * t.body + 6, col:col + len(t.rows)] = kin.phi_tip[i][:, list(t.rows)]
        col += len(t.rows)
    return dict(kin=kin, art=art, H=H, M=Mb, G=Gb, K=K, D=D, P=P, B=B,
                phi=_path_product(robot, kin.phi), psi=_path_product(robot, art.psi),
                Ephi=Ephi, Epsi=Epsi)
