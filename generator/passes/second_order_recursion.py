"""The analytical second-order partial derivatives of inverse dynamics of Singh, Russell & Wensing
("Analytical second-order partial derivatives of rigid-body inverse dynamics", IROS 2022,
arXiv:2203.01497), as Pinocchio's ``ComputeRNEASecondOrderDerivatives`` writes them
(rnea-second-order-derivatives.hxx, whose names are given in brackets), recorded on symbols for one
robot: ∂²τ/∂q², ∂²τ/∂q∂q̇ and ∂M/∂q (∂²τ/∂q̇² is left to :func:`soagen.passes.second_derivatives._hamel`,
which costs less).

Notation: that of :mod:`soagen.passes.analytic_derivatives`, whose forward pass this one follows (every
spatial quantity in one frame fixed in space).  Per column s of a joint, with λ its parent body:
ψ̇ = v_λ × s [psid] (ν there), ψ̈ = a_λ × s + v_λ × ψ̇ [psidd] (∂a/∂q there), φ̇ = v × s [dJ] (ψ̇ again for a
1-dof joint, s × s = 0).  Composites over the subtree of body i: Ĩ [oYcrb], B̃ [doYcrb] (Ĩ's variation
along the velocities), F̃ [of].

Per column S_i of body i (tip to base), these operators on spatial vectors y:

* r0 y = y ×* (Ĩ S_i)                                       [cmf_bar(IC S_i)]
* r1 y = S_i ×* (Ĩ y) − Ĩ (S_i × y)                          [IC.variation(S_i)], symmetric
* r1 + r0                                                   [Bicphii]
* r3 y = ψ̇_i ×* (Ĩ y) − Ĩ (ψ̇_i × y) + y ×* (Ĩ ψ̇_i) + S_i ×* (B̃ y) − B̃ (S_i × y)
* r4 y = y ×* (B̃ᵀ S_i), r5 y = y ×* (B̃ ψ̇_i + S_i ×* F̃ + Ĩ ψ̈_i), r7 y = y ×* (B̃ S_i + Ĩ (ψ̇_i + φ̇_i))

are applied to the columns S_j, ψ̇_j, ψ̈_j of every ancestor j of i (i itself included): the vectors
u1 … u12 of Pinocchio's loop, a pair (i, j) each; and the entries are dot products of those with
S_k, ψ̇_k, ψ̈_k of every ancestor k of j (j included), a triple (i, j, k) each.  r1 and r3, applied four and
three times per pair, are formed once per column as 6 × 6 matrices (:class:`SpatialMatrix`: their columns
the operator on the unit vectors, where the cross products mostly vanish) and applied as matrix–vector
products; on the Panda (the recursion's own ∂²τ/∂q̇² still in it) that took the program from 21,751 to
12,948 operations, measured when this module was written.  The others are applied as
cross products (a force cross y ×* f costs less than a 6 × 6 product).
"""
from __future__ import annotations

import sympy as sp

from soagen.passes.analytic_derivatives import ZERO6, _strict_ancestors, add6, dot6, force_cross, motion_cross


class SpatialMatrix:
    """A linear map of spatial vectors formed as its 6 × 6 matrix (column m: the map of the m-th unit vector,
    [angular; linear]) and applied as matrix–vector products (zeros skipped by sympy); ``transpose`` applies
    its transpose."""

    def __init__(self, prog, op):
        self.prog = prog
        units = [tuple([sp.Integer(int(3 * part + r == m)) for r in range(3)] for part in range(2)) for m in range(6)]
        self.cols = [[x for part in op(u) for x in part] for u in units]          # cols[m][r]: entry (r, m)

    def _apply(self, entry, y):
        flat = [x for part in y for x in part]
        out = [self.prog.let(sum(entry(r, m) * flat[m] for m in range(6))) for r in range(6)]
        return out[:3], out[3:]

    def __call__(self, y):
        return self._apply(lambda r, m: self.cols[m][r], y)

    def transpose(self, y):
        return self._apply(lambda r, m: self.cols[r][m], y)


def second_order_backward_pass(sw, wb):
    """Tip-to-base pass of Singh, Russell & Wensing (Pinocchio's ``ComputeRNEASecondOrderDerivativesBackwardStep``)
    over the forward pass ``wb`` (:func:`soagen.passes.analytic_derivatives.forward_pass`).

    Returns
    -------
    d2q, dqdv, dM : lists (n³,)
        ∂²τ/∂q², ∂²τ/∂q∂q̇, ∂M/∂q row-major (n, n, n), entry [i, j, k] Pinocchio's ``d2tau_dqdq(i, j, k)``,
        ``dtau_dqdv``, ``dtau_dadq``.
    M : list (n²,)
        The mass matrix row-major, S_jᵀ Ĩ_i S_i for j an ancestor of i [RK (3.20)] (the brackets of
        :func:`~soagen.passes.second_derivatives._hamel` read it).
    """
    prog, robot = sw.prog, sw.robot
    n = robot.nv
    d2q, dqdv, dM, M = ([sp.Integer(0)] * n ** 3, [sp.Integer(0)] * n ** 3, [sp.Integer(0)] * n ** 3,
                        [sp.Integer(0)] * n * n)

    def neg(x):
        return tuple([prog.let(-e) for e in part] for part in x)

    def sub(a, b):
        return add6(prog, a, neg(b))

    def at(i, j, k):
        return (i * n + j) * n + k

    psid, phid = {}, {}                                              # per column index: ψ̇, φ̇ (6,) each
    for k, cols in enumerate(wb.columns):
        for col in cols:
            psid[col.index] = col.nu or ZERO6
            phid[col.index] = psid[col.index] if len(cols) == 1 else motion_cross(prog, wb.v[k], col.s)
    I, B, F = list(wb.I), list(wb.B), list(wb.f)
    sw.banner("tip-to-base composites and the second derivatives of each column's ancestors",
              "Singh, Russell & Wensing IROS 2022, backward pass")
    for i in sw.tip_to_base():
        Ii, Bi, Fi = I[i], B[i], F[i]                                # composites of i's subtree

        def times_B(y):
            out = Bi.times(prog, y)
            return ZERO6 if out is None else out

        def variation(s, y):                                         # s ×* (Ĩ y) − Ĩ (s × y)
            return sub(force_cross(prog, s, Ii.times(prog, y)), Ii.times(prog, motion_cross(prog, s, y)))

        path = [i, *_strict_ancestors(robot, i)]
        for ci in wb.columns[i]:
            Si, psid_i, psidd_i = ci.s, psid[ci.index], ci.dadq      # S_i, ψ̇_i, ψ̈_i (6,) each
            ISi, Ipsid = Ii.times(prog, Si), Ii.times(prog, psid_i)  # Ĩ S_i, Ĩ ψ̇_i (forces)
            f5 = add6(prog, times_B(psid_i), force_cross(prog, Si, Fi), Ii.times(prog, psidd_i))
            f7 = add6(prog, times_B(Si), Ii.times(prog, add6(prog, psid_i, phid[ci.index])))
            BtSi = Bi.transpose_times(prog, Si)                      # B̃ᵀ S_i

            def r0(y):
                return force_cross(prog, y, ISi)

            r1 = SpatialMatrix(prog, lambda y: variation(Si, y))
            r3 = SpatialMatrix(prog, lambda y: add6(prog, variation(psid_i, y), force_cross(prog, y, Ipsid),
                                                    force_cross(prog, Si, times_B(y)),
                                                    neg(times_B(motion_cross(prog, Si, y)))))
            for j in path:
                for cj in wb.columns[j]:
                    Sj, psid_j, psidd_j = cj.s, psid[cj.index], cj.dadq
                    b = cj.index
                    M[b * n + ci.index] = M[ci.index * n + b] = dot6(prog, Sj, ISi)
                    u1 = r3.transpose(Sj)
                    u2 = r1(Sj)
                    r1_psid = r1(psid_j)
                    u3 = add6(prog, r3(psid_j), r1(psidd_j), force_cross(prog, Sj, f5))
                    u5 = sub(r0(psid_j), r1_psid)
                    u6 = add6(prog, r1_psid, r0(psid_j), force_cross(prog, Sj, f7))
                    r1_phid = r1_psid if len(wb.columns[j]) == 1 else r1(phid[b])
                    u7 = add6(prog, r3(Sj), r1_psid, r1_phid)        # r3 S_j + r1 (ψ̇_j + φ̇_j)
                    u8 = force_cross(prog, Sj, BtSi)                 # r4 S_j
                    u9 = r0(Sj)
                    u11 = sub(u2, force_cross(prog, Sj, ISi))        # Bicphiiᵀ S_j
                    u12 = sub(r1_psid, force_cross(prog, psid_j, ISi))   # Bicphiiᵀ ψ̇_j
                    for k in [j, *_strict_ancestors(robot, j)]:
                        for ck in wb.columns[k]:
                            a, c = ci.index, ck.index
                            Sk, psid_k, psidd_k = ck.s, psid[c], ck.dadq
                            two_v = add6(prog, psid_k, phid[c])          # ψ̇_k + φ̇_k
                            p1 = dot6(prog, u11, psid_k)
                            p2 = prog.let(dot6(prog, u9, psidd_k) + dot6(prog, sub(u8, u12), psid_k))
                            d2q[at(a, b, c)] = p2
                            dqdv[at(a, c, b)] = prog.let(-p1)
                            if j != i:
                                x = prog.let(dot6(prog, psid_k, u1) + dot6(prog, psidd_k, u2))
                                d2q[at(b, c, a)] = d2q[at(b, a, c)] = x
                                dqdv[at(b, c, a)] = p1
                                dqdv[at(b, a, c)] = prog.let(dot6(prog, Sk, u1) + dot6(prog, two_v, u2))
                                dM[at(c, b, a)] = dM[at(b, c, a)] = dot6(prog, Sk, u2)
                            if k != j:
                                d2q[at(a, c, b)] = p2
                                d2q[at(c, a, b)] = dot6(prog, Sk, u3)
                                dqdv[at(a, b, c)] = prog.let(dot6(prog, Sk, add6(prog, u5, u8)) + dot6(prog, u9, two_v))
                                dqdv[at(c, b, a)] = dot6(prog, Sk, u6)
                                dM[at(c, a, b)] = dM[at(a, c, b)] = dot6(prog, Sk, u9)
                                if j != i:
                                    d2q[at(c, b, a)] = d2q[at(c, a, b)]
                                    dqdv[at(c, a, b)] = dot6(prog, Sk, u7)
        lam = sw.parent(i)
        if lam >= 0:
            I[lam], B[lam] = I[lam].plus(prog, I[i]), B[lam].plus(prog, B[i])
            F[lam] = add6(prog, F[lam], F[i])
    return d2q, dqdv, dM, M

