"""Spatial algebra on sympy scalars, recording into a :class:`Program`.

3-vectors and 3×3 matrices (vec, add, cross, matvec, ...), joint rotations
(:class:`AxisRotation`, :func:`quaternion_rotation`), spatial inertias M(k)
[RK (2.15)] and their congruences, the motion and force transforms of a
:class:`JointFrame` [RK (2.17), (2.20)], and symmetric 6×6 motion-space
matrices; the LDLᵀ factorization is in :mod:`soagen.passes.ldl`, terms
quadratic in an angular velocity in :mod:`soagen.passes.quadratic`.

Every operation returns new scalars made by ``prog.let`` — one statement per
component — so expressions stay one operation deep.  Exact zeros and ones
of the robot's constants vanish as the expressions are built (sympy folds
``0*x`` and ``1*x``), which is where most of the savings of a fixed robot
come from.

Shapes: a 3-vector is a list of 3 scalars; a 3×3 matrix a list of 3 rows;
a spatial vector a pair ``(angular, linear)`` of 3-vectors; a symmetric
spatial inertia a triple ``(A, B, C)`` of 3×3 blocks ``[[A, B], [Bᵀ, C]]``
(``A`` and ``C`` symmetric, their entries shared between ``[i][j]`` and ``[j][i]``).
"""
from __future__ import annotations

import numpy as np
import sympy as sp

from soagen.model.robot import PRISMATIC, REVOLUTE, SPHERICAL
from soagen.program.statements import const

ZERO3 = [sp.Integer(0)] * 3
IDENTITY3 = [[sp.Integer(int(i == j)) for j in range(3)] for i in range(3)]


def vec(prog, exprs):
    return [prog.let(e) for e in exprs]


def add(prog, *vs):
    return [prog.let(sum(v[i] for v in vs)) for i in range(3)]


def sub(prog, a, b):
    return [prog.let(a[i] - b[i]) for i in range(3)]


def scale(prog, s, v):
    return [prog.let(s * x) for x in v]


def dot(prog, a, b):
    return prog.let(sum(a[i] * b[i] for i in range(3)))


def cross(prog, a, b):
    return [prog.let(a[1] * b[2] - a[2] * b[1]),
            prog.let(a[2] * b[0] - a[0] * b[2]),
            prog.let(a[0] * b[1] - a[1] * b[0])]


def matvec(prog, R, x):
    """R x; R (3, 3), x (3,)."""
    return [prog.let(sum(R[i][j] * x[j] for j in range(3))) for i in range(3)]


def matTvec(prog, R, x):
    """Rᵀ x; R (3, 3), x (3,)."""
    return [prog.let(sum(R[j][i] * x[j] for j in range(3))) for i in range(3)]


def matmul(prog, A, B):
    """A B; (3, 3) × (3, 3)."""
    return [[prog.let(sum(A[i][m] * B[m][j] for m in range(3))) for j in range(3)] for i in range(3)]


def transpose(A):
    return [[A[j][i] for j in range(3)] for i in range(3)]


def sym_from_upper(upper):
    """Symmetric 3×3 from a function of (i, j), i <= j."""
    out = [[None] * 3 for _ in range(3)]
    for i in range(3):
        for j in range(i, 3):
            out[i][j] = out[j][i] = upper(i, j)
    return out


def rotate_sym(prog, R, S):
    """R S Rᵀ for symmetric S; upper triangle only."""
    SR = [[prog.let(sum(S[i][m] * R[j][m] for m in range(3))) for j in range(3)] for i in range(3)]
    return sym_from_upper(lambda i, j: prog.let(sum(R[i][m] * SR[m][j] for m in range(3))))


def rotate_gen(prog, R, B):
    """R B Rᵀ for a general 3×3 B."""
    return matmul(prog, matmul(prog, R, B), transpose(R))


class AxisRotation:
    """A joint rotation about coordinate axis i by θ (R[j][j] = R[k][k] = c,
    R[k][j] = σ = ±sin θ, R[j][k] = −σ): congruences R X Rᵀ by the double-angle
    form, 4 multiplications for the 2×2 block plus 4 per rotated 2-vector,
    with t = σ² and cσ shared by every congruence of the joint."""

    def __init__(self, prog, i, c, sigma, shared=None):
        self.prog, self.i, self.c, self.sigma = prog, i, c, sigma
        self.j, self.k = (i + 1) % 3, (i + 2) % 3
        self._shared = shared if shared is not None else {}

    def transposed(self):
        """Rᵀ: the rotation by −θ (same t, cσ negated)."""
        return AxisRotation(self.prog, self.i, self.c, -self.sigma, self._shared)

    def _t(self):
        if "t" not in self._shared:
            self._shared["t"] = self.prog.let(self.sigma * self.sigma)
        return self._shared["t"]

    def _cs(self):
        key = ("cs", self.sigma)
        if key not in self._shared:
            self._shared[key] = self.prog.let(self.c * self.sigma)
        return self._shared[key]

    def _pair(self, x, y):
        """(c x − σ y, σ x + c y): a 2-vector in the rotated plane."""
        let, c, s = self.prog.let, self.c, self.sigma
        return let(c * x - s * y), let(s * x + c * y)

    def sym(self, S):
        """R S Rᵀ for symmetric S."""
        let, i, j, k = self.prog.let, self.i, self.j, self.k
        a, b, d = S[j][j], S[j][k], S[k][k]
        e = let(a - d)
        w, z = let(self._t() * e), let(2 * self._cs() * b)
        out = [[None] * 3 for _ in range(3)]
        out[i][i] = S[i][i]
        out[j][j] = let(a - w - z)
        out[k][k] = let(d + w + z)
        out[j][k] = out[k][j] = let(self._cs() * e + b - 2 * self._t() * b)
        out[i][j], out[i][k] = self._pair(S[i][j], S[i][k])
        out[j][i], out[k][i] = out[i][j], out[i][k]
        return out

    def vec(self, x):
        """R x for a 3-vector x."""
        out = [None] * 3
        out[self.i] = x[self.i]
        out[self.j], out[self.k] = self._pair(x[self.j], x[self.k])
        return out

    def gen(self, B):
        """R B Rᵀ for a general 3×3 B."""
        let, i, j, k = self.prog.let, self.i, self.j, self.k
        a, b, e, d = B[j][j], B[j][k], B[k][j], B[k][k]
        amd, bpe = let(a - d), let(b + e)
        w, z = let(self._t() * amd), let(self._cs() * bpe)
        u, v = let(self._cs() * amd), let(self._t() * bpe)
        out = [[None] * 3 for _ in range(3)]
        out[i][i] = B[i][i]
        out[j][j] = let(a - w - z)
        out[k][k] = let(d + w + z)
        out[j][k] = let(u + b - v)
        out[k][j] = let(u + e - v)
        out[i][j], out[i][k] = self._pair(B[i][j], B[i][k])
        out[j][i], out[k][i] = self._pair(B[j][i], B[k][i])
        return out


def rotate_blocks(prog, R, A, B, C):
    """R applied by congruence to the blocks of a symmetric 6×6 (A, B, C); ``R``
    a 3×3 list or an :class:`AxisRotation`."""
    if isinstance(R, AxisRotation):
        return R.sym(A), R.gen(B), R.sym(C)
    return rotate_sym(prog, R, A), rotate_gen(prog, R, B), rotate_sym(prog, R, C)


def skew(v):
    return [[0, -v[2], v[1]], [v[2], 0, -v[0]], [-v[1], v[0], 0]]


def const_matrix(a):
    return [[const(x) for x in row] for row in np.asarray(a)]


def const_vector(v):
    return [const(x) for x in np.asarray(v)]


def origin_inertia(body):
    """Rotational inertia about the body frame's origin, body axes; (3, 3) numbers."""
    m, c = body.mass, body.com
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    I_o = body.inertia - m * cx @ cx
    return 0.5 * (I_o + I_o.T)


def spatial_inertia(body):
    """Constant M(k) = [[I_o, m p̃], [−m p̃, m I]] [RK (2.15)] as (A, B, C)."""
    m, c = body.mass, body.com
    cx = np.array([[0, -c[2], c[1]], [c[2], 0, -c[0]], [-c[1], c[0], 0]])
    A = const_matrix(origin_inertia(body))
    return (sym_from_upper(lambda i, j: A[i][j]), const_matrix(m * cx),
            sym_from_upper(lambda i, j: const(m) if i == j else sp.Integer(0)))


class RigidInertia:
    """A rigid-body (or composite) spatial inertia by its ten numbers [RK (2.15)]: mass m,
    first moment h = m c (3,) and rotational inertia Ī about the frame's origin (symmetric
    3 × 3), all in the frame's axes; as blocks, [[Ī, h̃], [−h̃, m 1]]."""

    def __init__(self, m, h, J):
        self.m, self.h, self.J = m, h, J

    @classmethod
    def from_blocks(cls, P):
        """The ten numbers of (A, B, C) = (Ī, h̃, m 1)."""
        A, B, C = P
        return cls(C[0][0], [B[2][1], B[0][2], B[1][0]], A)

    def blocks(self):
        """(A, B, C) = (Ī, h̃, m 1)."""
        h, zero = self.h, sp.Integer(0)
        return (self.J, [[zero, -h[2], h[1]], [h[2], zero, -h[0]], [-h[1], h[0], zero]],
                [[self.m if i == j else zero for j in range(3)] for i in range(3)])

    def times(self, prog, x):
        """I x for a spatial vector x = (ω, v): (Ī ω + h × v, m v − h × ω), a spatial force."""
        return inertia_times(prog, self.blocks(), x)

    def plus(self, prog, other):
        """The composite of two inertias in the same frame: ten additions."""
        return RigidInertia(prog.let(self.m + other.m), add(prog, self.h, other.h),
                            sym_from_upper(lambda i, j: prog.let(self.J[i][j] + other.J[i][j])))


def inertia_times(prog, P, x):
    """P x for a spatial inertia (A, B, C) and spatial vector x = (w, v)."""
    A, B, C = P
    w, v = x
    top = [prog.let(sum(A[i][j] * w[j] + B[i][j] * v[j] for j in range(3))) for i in range(3)]
    bot = [prog.let(sum(B[j][i] * w[j] + C[i][j] * v[j] for j in range(3))) for i in range(3)]
    return top, bot


def spatial_add(prog, *xs):
    return add(prog, *[x[0] for x in xs]), add(prog, *[x[1] for x in xs])


class JointFrame:
    """Body k seen from its parent: ``R = R0 Rq(q)``, offset ℓ, joint map H.

    ``R0`` (constant) and ``Rq`` (the joint rotation: sin/cos of q computed once
    for a revolute joint, the rotation of a quaternion for spherical and
    floating joints) are applied one after the other, which keeps the sparsity
    of both.  ``q`` is the joint's coordinate symbol, or the list of its
    coordinates for a multi-dof joint.  ``Hcols`` holds the nv columns of H*(k)
    as spatial vectors ``(angular, linear)``.
    """

    def __init__(self, prog, body, q):
        self.prog = prog
        self.body = body
        self.R0 = const_matrix(body.rotation)
        self.axis = const_vector(body.axis)
        t0 = const_vector(body.translation)
        self.Rq_congruence = None
        kind = body.joint_type
        if kind == REVOLUTE:
            c, s = prog.trig(q)
            self.Rq = _axis_rotation(prog, body.axis, c, s)
            hot = [i for i in range(3) if self.Rq[i][i] == 1]
            if len(hot) == 1:               # about a coordinate axis: double-angle congruences
                i = hot[0]
                self.Rq_congruence = AxisRotation(prog, i, c, self.Rq[(i + 2) % 3][(i + 1) % 3])
            self.ell = t0                                   # ℓ(p, k), parent axes
            self.Hcols = [(self.axis, ZERO3)]               # H*(k) = [h; 0]
        elif kind == PRISMATIC:
            self.Rq = const_matrix(np.eye(3))
            self.ell = add(prog, t0, [x * q for x in matvec(prog, self.R0, self.axis)])
            self.Hcols = [(ZERO3, self.axis)]               # H*(k) = [0; h]
        else:                                               # spherical, floating: q ends with (x, y, z, w)
            self.Rq = quaternion_rotation(prog, q[-4:])
            self.Hcols = [(IDENTITY3[i], ZERO3) for i in range(3)]   # H*(k) = [1; 0] (ω)
            if kind == SPHERICAL:
                self.ell = t0
            else:                                           # floating: ℓ = t0 + R0 p, H* = 1 ([ω; v])
                self.ell = add(prog, t0, matvec(prog, self.R0, q[:3]))
                self.Hcols += [(ZERO3, IDENTITY3[i]) for i in range(3)]
        if self.Rq_congruence is None:
            self.Rq_congruence = self.Rq

    @property
    def nv(self):
        return len(self.Hcols)

    @property
    def Rq_congruence_T(self):
        """Rqᵀ for congruences (an :class:`AxisRotation` when Rq is one)."""
        R = self.Rq_congruence
        return R.transposed() if isinstance(R, AxisRotation) else transpose(R)

    @property
    def revolute(self):
        return self.body.joint_type == REVOLUTE

    @property
    def fixed_offset(self):
        """ℓ is a constant (revolute and spherical joints)."""
        return self.body.joint_type in (REVOLUTE, SPHERICAL)

    def down(self, x):
        """Parent axes → body axes: Rᵀ x = Rqᵀ (R0ᵀ x)."""
        return matTvec(self.prog, self.Rq, matTvec(self.prog, self.R0, x))

    def up(self, x):
        """Body axes → parent axes: R x = R0 (Rq x)."""
        return matvec(self.prog, self.R0, matvec(self.prog, self.Rq, x))

    def rotation(self):
        """R = R0 Rq as a 3×3 of scalars."""
        return matmul(self.prog, self.R0, self.Rq)

    def phi_star(self, V):
        """Motion transform V(k) = φ*(p, k) V(p): [Rᵀω; Rᵀ(v + ω × ℓ)] [RK (2.17)]."""
        w, v = V
        return self.down(w), self.down(add(self.prog, v, cross(self.prog, w, self.ell)))

    def phi(self, f):
        """Force transform f(p) = φ(p, k) f(k): [R n + ℓ × R F; R F] [RK (2.20)]."""
        n, F = f
        Fp = self.up(F)
        return add(self.prog, self.up(n), cross(self.prog, self.ell, Fp)), Fp

    def phi_inertia(self, P):
        """φ(p, k) P φ*(p, k) for a symmetric spatial inertia P in body axes."""
        prog = self.prog
        A, B, C = P
        for R in (self.Rq_congruence, self.R0):
            A, B, C = rotate_blocks(prog, R, A, B, C)
        L = skew(self.ell)
        B2 = [[prog.let(B[i][j] + sum(L[i][m] * C[m][j] for m in range(3))) for j in range(3)]
              for i in range(3)]
        A2 = sym_from_upper(lambda i, j: prog.let(
            A[i][j] - sum(B[i][m] * L[m][j] for m in range(3)) + sum(L[i][m] * B2[j][m] for m in range(3))))
        return A2, B2, C

    def phi_rigid_inertia(self, inertia):
        """φ(p, k) I φ*(p, k) for a rigid-body or composite inertia (a :class:`RigidInertia` in
        body axes): Ī and h rotated by R = R0 Rq, then carried by ℓ (the parallel-axis theorem),
        h' = Rh + mℓ, Ī' = RĪRᵀ − ℓ(Rh)ᵀ − (Rh)ℓᵀ − mℓℓᵀ + (2 ℓ·Rh + m ℓ·ℓ) 1: what
        :meth:`phi_inertia` gives for such an inertia, on its ten numbers instead of 21."""
        prog, m, h, J = self.prog, inertia.m, inertia.h, inertia.J
        for R in (self.Rq_congruence, self.R0):
            if isinstance(R, AxisRotation):
                J, h = R.sym(J), R.vec(h)
            else:
                J, h = rotate_sym(prog, R, J), matvec(prog, R, h)
        ell = self.ell
        moment = prog.let(sum(ell[i] * h[i] for i in range(3)))                 # ℓ·Rh
        diagonal = prog.let(2 * moment + m * sum(x * x for x in ell))           # 2 ℓ·Rh + m ℓ·ℓ
        J = sym_from_upper(lambda i, j: prog.let(J[i][j] - ell[i] * h[j] - h[i] * ell[j] - m * ell[i] * ell[j]
                                                 + (diagonal if i == j else 0)))
        return RigidInertia(m, add(prog, h, [m * x for x in ell]), J)

    def project(self, f):
        """H(k) f: the joint-space components (nv scalars) of a spatial force."""
        return [self.prog.let(sum(h[0][i] * f[0][i] + h[1][i] * f[1][i] for i in range(3)))
                for h in self.Hcols]

    def along(self, s):
        """H*(k) s for joint-space values ``s`` (nv scalars): a spatial vector."""
        return ([sum((h[0][i] * x for h, x in zip(self.Hcols, s)), sp.Integer(0)) for i in range(3)],
                [sum((h[1][i] * x for h, x in zip(self.Hcols, s)), sp.Integer(0)) for i in range(3)])

    def unit_indices(self):
        """Indices 0..5 of the columns of H* that are ± unit vectors: the rows and
        columns of P⁺(k) = [I − G H] P that are structurally zero."""
        out = set()
        for h in self.Hcols:
            flat = list(h[0]) + list(h[1])
            nz = [i for i, x in enumerate(flat) if x != 0]
            if len(nz) == 1 and abs(flat[nz[0]]) == 1:
                out.add(nz[0])
        return out


def quaternion_rotation(prog, quat):
    """Rotation of the quaternion (x, y, z, w) after normalization, exact for any
    non-zero quaternion: with s = 2/|q|², R = 1 + s w[v]× + s[v]×² (one division)."""
    x, y, z, w = quat
    s = prog.let(2 / (x * x + y * y + z * z + w * w))
    sx, sy, sz = prog.let(s * x), prog.let(s * y), prog.let(s * z)
    xx, yy, zz = prog.let(sx * x), prog.let(sy * y), prog.let(sz * z)
    xy, xz, yz = prog.let(sx * y), prog.let(sx * z), prog.let(sy * z)
    wx, wy, wz = prog.let(sx * w), prog.let(sy * w), prog.let(sz * w)
    return [[prog.let(1 - yy - zz), prog.let(xy - wz), prog.let(xz + wy)],
            [prog.let(xy + wz), prog.let(1 - xx - zz), prog.let(yz - wx)],
            [prog.let(xz - wy), prog.let(yz + wx), prog.let(1 - xx - yy)]]


def _axis_rotation(prog, axis, c, s):
    """Rotation about a constant unit axis by the angle with cosine c, sine s."""
    axis = np.asarray(axis, dtype=float)
    hot = np.flatnonzero(axis)
    if len(hot) == 1 and abs(axis[hot[0]]) == 1.0:  # exactly ±x, ±y or ±z (not 4e-8 off it)
        i = int(hot[0])
        j, k = (i + 1) % 3, (i + 2) % 3
        sg = s if axis[i] > 0 else -s
        R = [[sp.Integer(0)] * 3 for _ in range(3)]
        R[i][i] = sp.Integer(1)
        R[j][j] = R[k][k] = c
        R[k][j], R[j][k] = sg, -sg
        return R
    a = skew(const_vector(axis))
    a2 = [[sum(a[r][m] * a[m][col] for m in range(3)) for col in range(3)] for r in range(3)]
    omc = prog.let(1 - c)
    return [[prog.let((1 if r == col else 0) + s * a[r][col] + omc * const(a2[r][col]))
             for col in range(3)] for r in range(3)]


# ------------------------------------------------- symmetric 6×6 (motion space)
def full_from_blocks(A, B, C):
    """[[A, B], [Bᵀ, C]] as a 6×6 list of lists."""
    return [[(A[i][j] if j < 3 else B[i][j - 3]) if i < 3 else (B[j][i - 3] if j < 3 else C[i - 3][j - 3])
             for j in range(6)] for i in range(6)]


def blocks_from_full(X):
    A = [[X[i][j] for j in range(3)] for i in range(3)]
    B = [[X[i][j + 3] for j in range(3)] for i in range(3)]
    C = [[X[i + 3][j + 3] for j in range(3)] for i in range(3)]
    return A, B, C


def shift_motion_sym(prog, X, ell):
    """[[I, 0], [−ℓ̃, I]] X [[I, ℓ̃], [0, I]] for symmetric X = (A, B, C) (no rotation)."""
    A, B, C = X
    L = skew(ell)
    B2 = [[prog.let(B[i][j] + sum(A[i][m] * L[m][j] for m in range(3))) for j in range(3)] for i in range(3)]
    C2 = sym_from_upper(lambda i, j: prog.let(
        C[i][j] + sum(B[m][i] * L[m][j] for m in range(3)) - sum(L[i][m] * B2[m][j] for m in range(3))))
    return A, B2, C2


def congruence_motion(prog, X, ell, rotations):
    """φ* X φ for symmetric X: shift by ℓ, then R X Rᵀ for each R in ``rotations``."""
    A, B, C = shift_motion_sym(prog, X, ell)
    for R in rotations:
        A, B, C = rotate_blocks(prog, R, A, B, C)
    return A, B, C


def project_sym(prog, X, hs, gs):
    """(I − Σ h_j g_jᵀ) X (I − Σ g_j h_jᵀ) for a symmetric 6×6 list X and the
    6-vectors h_j (columns of H*) and g_j (columns of G)."""
    w = [[prog.let(sum(X[i][c] * g[c] for c in range(6))) for i in range(6)] for g in gs]   # X g_j
    s = [[prog.let(sum(gi[r] * wj[r] for r in range(6))) for wj in w] for gi in gs]       # g_iᵀ X g_j
    out = [[None] * 6 for _ in range(6)]
    for i in range(6):
        for j in range(i, 6):
            val = X[i][j]
            for a, h in enumerate(hs):
                val = val - h[i] * w[a][j] - w[a][i] * h[j]
                for b, h2 in enumerate(hs):
                    val = val + s[a][b] * h[i] * h2[j]
            out[i][j] = out[j][i] = prog.let(val)
    return out


def motion_to_tip(prog, R, offset, v):
    """φ*(k, 0) v: a body-k motion vector at the tip, world-aligned axes (R: body → world)."""
    w, u = v
    return matvec(prog, R, w), matvec(prog, R, add(prog, u, cross(prog, w, offset)))
