"""numpy reference, second derivatives of the dynamics: the tensors of the inverse dynamics
(Pinocchio's ``ComputeRNEASecondOrderDerivatives`` layout) and the contracted, symmetric
Hessians of λᵀτ, λᵀq̈ and λᵀq̈ + λ_fᵀf that optimizers use; q in the tangent space (q ⊕ δq,
:meth:`~soagen.model.robot.Robot.integrate`), as the first derivatives.

Method: **complex-step differentiation** of the reference's own analytic first derivatives
(:func:`~soagen.reference.derivatives.inverse_dynamics_derivatives`, the tangent Newton–Euler
passes, and :func:`~soagen.reference.derivatives.tip_acceleration_derivatives`), run in complex
arithmetic.  Along q̇, q̈ or f the step is ``x + i h e_k``; along q it is the configuration
q ⊕ i h e_k (:func:`displaced_kinematics`: the joint's transform times the exponential of
i h e_k, a rotation about a body axis or a translation along one for a multi-dof joint). Then
∂D/∂x_k = Im D(x + i h e_k) / h + O(h²) with no difference of nearby numbers, so with h = 1e-30
the result is the derivative to rounding (about 1e-15 relative): a second derivative at machine
precision, where central differences give about 1e-8.  Along q this is the ITERATED local
derivative, ∂/∂ε [D(q ⊕ ε e_k)], with D the first derivative taken in the displaced point's own
tangent chart; for a spherical joint or the angular block of a floating base it is not symmetric,
its antisymmetric part being D·[e_k, e_j] (a Lie bracket), exactly as Pinocchio's tensors. The
symmetric Hessian of f(q ⊕ δq) at δq = 0 (the exponential chart) is its symmetric part.

The forward and contact dynamics Hessians follow by the implicit function theorem from the
conditions G(x, y) = 0 that define them (y = q̈, or (q̈, f) with the tips held still):
with K = ∂G/∂y and the multipliers m = K⁻ᵀ w of the weights w, the Hessian of wᵀy(x) is
−Zᵀ ∇²(mᵀG) Z, Z = [1; ∂y/∂x] (the first derivatives of the reference); ∇²(mᵀG) from the
complex steps above.  G is affine in q̈, f and τ, so those blocks of ∇²(mᵀG) are zero.

Shares no code with the generated side (:mod:`soagen.passes`, :mod:`soagen.program`); numpy only.
"""
from __future__ import annotations

import numpy as np

from soagen.model.frames import Kinematics, kinematics
from soagen.model.robot import SPHERICAL
from soagen.model.spatial import axis_angle, skew, spatial_inertia
from soagen.reference.articulated_bodies import forward_dynamics
from soagen.reference.contact import contact_dynamics_derivatives
from soagen.reference.derivatives import (
    forward_dynamics_derivatives,
    inverse_dynamics_derivatives_at,
    tip_acceleration_derivatives_at,
)
from soagen.reference.newton_euler_passes import mass_matrix
from soagen.reference.tip_kinematics import jacobian

STEP = 1e-30      # the complex step h: Im D(x + i h e) / h, exact to rounding for any h this small


def _phi(rotation, offset):
    """φ(p, k) (6, 6) of a real or complex rotation and offset (as :func:`soagen.model.spatial.phi`)."""
    out = np.zeros((6, 6), dtype=np.result_type(rotation, offset))
    out[:3, :3] = out[3:, 3:] = rotation
    out[:3, 3:] = skew(offset) @ rotation
    return out


def _owner(robot, col):
    """(body, index within its joint) of the velocity coordinate ``col``."""
    for k in range(robot.nb):
        s = robot.vslice(k)
        if s.start <= col < s.stop:
            return k, col - s.start
    raise IndexError(col)


def displaced_kinematics(robot, q, col, h=STEP):
    """The complex :class:`Kinematics` at q ⊕ i h e_col (tangent direction ``col`` of
    :meth:`Robot.integrate`): a 1-dof joint at q + i h; a spherical joint's rotation
    R exp(i h ê_c) (body axis c); a floating joint ``[ω; v]`` turned about its body axis c
    (c < 3) or moved by R i h e_(c−3) (c ≥ 3), the SE(3) exponential of a one-axis twist."""
    moved, c = _owner(robot, col)
    phis, Hs, Ms, rots, ells, Rw, pw = [], [], [], [], [], [], []
    for k in robot.base_to_tip():
        b = robot.bodies[k]
        jq = robot.joint_q(q, k)
        if k == moved and b.nq == 1:
            jq = jq + 1j * h
        R, ell = b.joint_transform(jq)
        if k == moved and b.nq > 1:
            if b.joint_type == SPHERICAL or c < 3:
                R = R @ axis_angle(np.eye(3)[c], 1j * h)
            else:
                ell = ell + R @ (1j * h * np.eye(3)[c - 3])
        R, ell = np.asarray(R, complex), np.asarray(ell, complex)
        phis.append(_phi(R, ell))
        rots.append(R)
        ells.append(ell)
        Hs.append(b.motion_subspace())
        Ms.append(spatial_inertia(b.mass, b.com, b.inertia))
        Rw.append(R if b.parent < 0 else Rw[b.parent] @ R)
        pw.append(ell if b.parent < 0 else pw[b.parent] + Rw[b.parent] @ ell)
    phi_tip = [_phi(Rw[t.body].T, t.offset) for t in robot.tips]
    return Kinematics(phis, Hs, Ms, rots, ells, Rw, pw, phi_tip)


def _second_tensors(robot, q, qd, qdd, first, h=STEP):
    """Complex steps of ``first(kin, qd, qdd, along_qd) -> (D_q, D_qd or None)`` (rows, n) each (a first
    derivative along q, tangent, and along q̇, at fixed q̈, of a function affine in q̈ whose q̈ coefficient
    does not depend on q̇: the inverse dynamics, the tip accelerations); -> tensors (rows, n, n), index 0
    the output's row: ``qq[i, j, k] = ∂D_q[i, j]/∂δq_k`` (iterated), ``qv[i, j, k] = ∂D_q[i, j]/∂q̇_k``,
    ``vv[i, j, k] = ∂D_qd[i, j]/∂q̇_k``, ``qa[i, j, k] = ∂D_q[i, j]/∂q̈_k`` and ``va = ∂D_qd/∂q̈ = 0``."""
    qd, qdd = np.asarray(qd, float), np.asarray(qdd, float)
    n = robot.nv
    kin = kinematics(robot, q)
    rows = first(kin, qd, qdd, False)[0].shape[0]
    qq, qv, vv, qa = (np.empty((rows, n, n)) for _ in range(4))
    for k in range(n):
        step = 1j * h * np.eye(n)[k]
        qq[:, :, k] = first(displaced_kinematics(robot, q, k, h), qd, qdd, False)[0].imag / h
        d_q, d_v = first(kin, qd + step, qdd, True)
        qv[:, :, k], vv[:, :, k] = d_q.imag / h, d_v.imag / h
        qa[:, :, k] = first(kin, qd, qdd + step, False)[0].imag / h
    return qq, qv, vv, qa, np.zeros_like(qa)


def _inverse_dynamics_first(robot, f_tip=None):
    return lambda kin, qd, qdd, along_qd: inverse_dynamics_derivatives_at(robot, kin, qd, qdd, f_tip, along_qd)


def _contract(tensors, w):
    """The symmetric Hessian (3n, 3n) over (δq, q̇, q̈) of wᵀg from :func:`_second_tensors` of g
    (g affine in q̈: its (q̈, q̈) block is zero); the (δq, δq) block is the symmetric part of the
    iterated one."""
    qq, qv, vv, qa, va = (np.einsum("i,ijk->jk", w, t) for t in tensors)
    n = qq.shape[0]
    H = np.zeros((3 * n, 3 * n))
    H[:n, :n] = 0.5 * (qq + qq.T)
    H[n:2 * n, n:2 * n] = 0.5 * (vv + vv.T)
    H[:n, n:2 * n], H[:n, 2 * n:], H[n:2 * n, 2 * n:] = qv, qa, va     # rows: the inner direction j
    H[n:2 * n, :n], H[2 * n:, :n], H[2 * n:, n:2 * n] = qv.T, qa.T, va.T
    return H


def inverse_dynamics_second_derivatives(robot, q, qd, qdd):
    """The second derivatives of τ = ID(q, q̇, q̈) in Pinocchio's ``ComputeRNEASecondOrderDerivatives``
    layout; -> ``d2tau_dq2, d2tau_dqd2, d2tau_dqdqd, dM_dq``, each (n, n, n), index 0 τ's row:

    * ``d2tau_dq2[i, j, k] = ∂/∂ε [∂τ_i/∂δq_j (q ⊕ ε e_k)]``, the iterated local derivative
      (j inner, k outer); symmetric in (j, k) except within a spherical joint or a floating
      base's angular block, where its antisymmetric part is ∂τ/∂q·[e_k, e_j];
    * ``d2tau_dqd2[i, j, k] = ∂²τ_i/∂q̇_j∂q̇_k``;
    * ``d2tau_dqdqd[i, j, k] = ∂²τ_i/∂δq_j∂q̇_k`` (j along q, k along q̇);
    * ``dM_dq[i, j, k] = ∂M_ij/∂δq_k``.

    Complex steps (h = 1e-30) of :func:`~soagen.reference.derivatives.inverse_dynamics_derivatives`
    along q ⊕ i h e_k, q̇ + i h e_k and q̈ + i h e_k (∂M e_k/∂δq = ∂²τ/∂δq∂q̈_k): 4n²
    complex tangent Newton–Euler passes of O(n) each, O(n³) in all; accurate to rounding (module docstring).
    """
    qq, qv, vv, qa, _ = _second_tensors(robot, q, qd, qdd, _inverse_dynamics_first(robot))
    return qq, vv, qv, qa.transpose(0, 2, 1)


def inverse_dynamics_hessian(robot, q, qd, qdd, lam):
    """The symmetric Hessian (3n, 3n) of φ = lamᵀ τ(q ⊕ δq, q̇, q̈) at δq = 0, variables in the order
    (δq, q̇, q̈): blocks from :func:`inverse_dynamics_second_derivatives` contracted with ``lam`` (n,),
    the (δq, δq) block symmetrized (the exponential chart's Hessian), (q̈, q̈) zero (τ is affine in q̈).
    """
    tensors = _second_tensors(robot, q, qd, qdd, _inverse_dynamics_first(robot))
    return _contract(tensors, np.asarray(lam, float))


def _implicit_hessian(hz, z):
    """−Zᵀ ∇²(mᵀG) Z: the Hessian of wᵀy(x) from G(x, y(x)) = 0 (module docstring), made exactly symmetric."""
    h = -z.T @ hz @ z
    return 0.5 * (h + h.T)


def forward_dynamics_hessian(robot, q, qd, tau, lam):
    """The symmetric Hessian (3n, 3n) of φ = lamᵀ q̈(q ⊕ δq, q̇, τ) at δq = 0, variables (δq, q̇, τ).

    Implicit function theorem on ID(δq, q̇, q̈) − τ = 0 (∂/∂q̈ = M): with μ = M⁻¹lam and
    Z = [1 0 0; 0 1 0; ∂q̈/∂δq ∂q̈/∂q̇ M⁻¹] (:func:`~soagen.reference.derivatives.forward_dynamics_derivatives`),
    H = −Zᵀ H_ID(μ) Z, H_ID the :func:`inverse_dynamics_hessian` at q̈ = FD(q, q̇, τ) with weights μ
    (ID is linear in τ and affine in q̈, so no further terms); complex steps, accurate to rounding
    times the conditioning of M.
    """
    n = robot.nv
    qdd = forward_dynamics(robot, q, qd, tau)
    _, fq, fv, minv = forward_dynamics_derivatives(robot, q, qd, tau)
    mu = minv.T @ np.asarray(lam, float)
    eye, zero = np.eye(n), np.zeros((n, n))
    z = np.block([[eye, zero, zero], [zero, eye, zero], [fq, fv, minv]])
    return _implicit_hessian(inverse_dynamics_hessian(robot, q, qd, qdd, mu), z)


def contact_dynamics_hessian(robot, q, qd, tau, lam, lam_f):
    """The symmetric Hessian (3n, 3n) of φ = lamᵀ q̈ + lam_fᵀ f of :func:`~soagen.reference.contact_dynamics`
    (every tip held still) at q ⊕ δq, δq = 0, variables (δq, q̇, τ); ``lam`` (n,), ``lam_f`` (r,).

    Implicit function theorem on G = [ID(δq, q̇, q̈, f) − τ; Jq̈ + J̇q̇] = 0, y = (q̈, f),
    K = ∂G/∂y = [M Jᵀ; J 0]: multipliers (μ, ν) = K⁻ᵀ (lam, lam_f), and H = −Zᵀ ∇²(μᵀID + νᵀ(Jq̈ + J̇q̇)) Z
    over z = (δq, q̇, q̈, f) with Z = [1 0 0; 0 1 0; ∂(q̈, f)/∂(δq, q̇, τ)]
    (:func:`~soagen.reference.contact_dynamics_derivatives`). The blocks of ∇² over (δq, q̇, q̈) come
    from complex steps of the tangent passes of the inverse dynamics with the tip forces f and of
    the tip accelerations, the (δq, f) block from complex steps of f; (q̈, q̈), (q̈, f), (f, f) are zero.
    """
    n, r = robot.nv, robot.tip_rows
    qdd, f, *first = contact_dynamics_derivatives(robot, q, qd, tau)
    J = jacobian(robot, q)
    K = np.block([[mass_matrix(robot, q), J.T], [J, np.zeros((r, r))]])
    m = np.linalg.solve(K.T, np.concatenate([np.asarray(lam, float), np.asarray(lam_f, float)]))
    mu, nu = m[:n], m[n:]

    def acc(kin, v, a, along_qd):
        return tip_acceleration_derivatives_at(robot, kin, v, a, along_qd)

    hz = np.zeros((3 * n + r, 3 * n + r))
    hz[:3 * n, :3 * n] = (_contract(_second_tensors(robot, q, qd, qdd, _inverse_dynamics_first(robot, f)), mu)
                          + _contract(_second_tensors(robot, q, qd, qdd, acc), nu))
    kin = kinematics(robot, q)
    for k in range(r):      # ∂²(μᵀ Jᵀ f)/∂δq ∂f_k
        step = 1j * STEP * np.eye(r)[k]
        hz[:n, 3 * n + k] = mu @ inverse_dynamics_derivatives_at(robot, kin, qd, qdd, f + step, False)[0].imag / STEP
    hz[3 * n:, :n] = hz[:n, 3 * n:].T
    dqdd_dq, dqdd_dqd, dqdd_dtau, df_dq, df_dqd, df_dtau = first
    eye, zero = np.eye(n), np.zeros((n, n))
    z = np.block([[eye, zero, zero], [zero, eye, zero], [dqdd_dq, dqdd_dqd, dqdd_dtau], [df_dq, df_dqd, df_dtau]])
    return _implicit_hessian(hz, z)
