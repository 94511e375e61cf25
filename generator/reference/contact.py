"""numpy reference, rigid contacts at every tip: the contact with the environment
is the closed chain of [RJK §5] with an environment of infinite inertia, solved
through Ω(0) and the tip-force accelerations [RJK (18)].

Contact dynamics: the free motion θ̈_f and its tip accelerations α_f(0) = Jθ̈_f + J̇θ̇
(FD2 [RK (5.5)–(5.7)]); the tips held still, Ω(0) f = α_f(0); θ̈ = θ̈_f + Δθ̈(f),
Δθ̈ = −M⁻¹J*f [RJK (18)].  Impulse dynamics: Ω(0) p = (1 + e) Jθ̇⁻ and
θ̇⁺ = θ̇⁻ + Δθ̈(p).  ``f`` and ``p`` are what each tip exerts on the environment
(3 rows per point tip, 6 per full tip, world axes at the tip), the sign of
``f_tip`` in τ = Mθ̈ + C + G + J*f.

Baumgarte stabilization (point tips only): the tips' classical accelerations held at
Jθ̈ + J̇θ̇ = −kp∘(p − x_ref) − kd∘(Jθ̇) row by row, p the tips' world positions: Ω(0) f =
α_f(0) + kp∘(p − x_ref) + kd∘(Jθ̇)."""
from __future__ import annotations

import numpy as np

from soagen.model.frames import kinematics
from soagen.reference.articulated_bodies import articulated, forward_dynamics_fd2, tip_force_acceleration
from soagen.reference.derivatives import inverse_dynamics_derivatives, tip_acceleration_derivatives
from soagen.reference.newton_euler_passes import mass_matrix
from soagen.reference.operational_space import os_solve
from soagen.reference.tip_kinematics import forward_kinematics, jacobian, tip_velocity


def contact_dynamics(robot, q, qd, tau):
    """θ̈ (n,) and the contact forces f (r,) with every tip held still (Jθ̈ + J̇θ̇ = 0):
    Ω(0) f = α_f(0), θ̈ = θ̈_f − M⁻¹J*f [RJK (18)]; -> ((n,), (r,))."""
    kin = kinematics(robot, q)
    qdd_free, a_free = forward_dynamics_fd2(robot, q, qd, tau)      # θ̈_f, α_f(0) = Jθ̈_f + J̇θ̇
    f = os_solve(robot, kin, articulated(robot, kin), a_free)
    return qdd_free + tip_force_acceleration(robot, q, f), f


def _point_positions(robot, q):
    """The world positions of the point tips, stacked (r,); raises ValueError for a full tip (its
    orientation error is not a difference of rows)."""
    if not all(t.point for t in robot.tips):
        raise ValueError(f"{robot.name}: Baumgarte terms are defined for point tips only")
    return forward_kinematics(robot, q)[:, :3, 3].ravel()


def contact_dynamics_baumgarte(robot, q, qd, tau, kp, kd, x_ref):
    """θ̈ (n,) and f (r,) with the point tips' classical accelerations Jθ̈ + J̇θ̇ = −kp∘(p − x_ref) −
    kd∘(Jθ̇) (``kp``, ``kd``, ``x_ref`` (r,)): Ω(0) f = α_f(0) + kp∘(p − x_ref) + kd∘(Jθ̇),
    θ̈ = θ̈_f − M⁻¹J*f [RJK (18)]; -> ((n,), (r,))."""
    kin = kinematics(robot, q)
    qdd_free, a_free = forward_dynamics_fd2(robot, q, qd, tau)
    target = np.asarray(kp) * (_point_positions(robot, q) - x_ref) + np.asarray(kd) * tip_velocity(robot, q, qd)
    f = os_solve(robot, kin, articulated(robot, kin), a_free + target)
    return qdd_free + tip_force_acceleration(robot, q, f), f


def impulse_dynamics(robot, q, qd, e):
    """θ̇⁺ (n,) after an impact of every tip with restitution ``e`` (a number or (1,)),
    M(θ̇⁺ − θ̇⁻) = −J*p, Jθ̇⁺ = −e Jθ̇⁻, and the impulses p (r,); -> ((n,), (r,))."""
    kin = kinematics(robot, q)
    restitution = float(np.ravel(e)[0])
    p = os_solve(robot, kin, articulated(robot, kin), (1.0 + restitution) * tip_velocity(robot, q, qd))
    return np.asarray(qd, float) + tip_force_acceleration(robot, q, p), p


def contact_dynamics_derivatives(robot, q, qd, tau):
    """θ̈, f and ∂θ̈/∂q, ∂θ̈/∂q̇, ∂θ̈/∂τ, ∂f/∂q, ∂f/∂q̇, ∂f/∂τ (q in the tangent space).

    Differentiating the contact conditions ID(q, q̇, θ̈, f) = τ (ID with the tip forces,
    τ = Mθ̈ + C + G + J*f) and Jθ̈ + J̇θ̇ = 0 at the solution gives the KKT system
    [M J*; J 0] [∂θ̈; ∂f] = −[∂ID/∂x; ∂(Jθ̈ + J̇θ̇)/∂x] at fixed (θ̈, f), and [1; 0] for τ;
    ∂ID/∂x by :func:`~soagen.reference.derivatives.inverse_dynamics_derivatives`, the
    tip-acceleration tangents by :func:`~soagen.reference.derivatives.tip_acceleration_derivatives`,
    solved densely; -> ((n,), (r,), (n, n), (n, n), (n, n), (r, n), (r, n), (r, n)).
    """
    qdd, f = contact_dynamics(robot, q, qd, tau)
    n, r = robot.nv, robot.tip_rows
    J = jacobian(robot, q)
    K = np.block([[mass_matrix(robot, q), J.T], [J, np.zeros((r, r))]])
    id_q, id_v = inverse_dynamics_derivatives(robot, q, qd, qdd, f)
    acc_q, acc_v = tip_acceleration_derivatives(robot, q, qd, qdd)
    rhs = np.hstack([-np.vstack([id_q, acc_q]), -np.vstack([id_v, acc_v]), np.vstack([np.eye(n), np.zeros((r, n))])])
    sol = np.linalg.solve(K, rhs)
    d_qdd, d_f = sol[:n], sol[n:]
    return (qdd, f, d_qdd[:, :n], d_qdd[:, n:2 * n], d_qdd[:, 2 * n:], d_f[:, :n], d_f[:, n:2 * n], d_f[:, 2 * n:])

def contact_dynamics_baumgarte_derivatives(robot, q, qd, tau, kp, kd, x_ref):
    """θ̈, f and their derivatives (as :func:`contact_dynamics_derivatives`) of
    :func:`contact_dynamics_baumgarte`: the second condition is Jθ̈ + J̇θ̇ + kp∘(p − x_ref) + kd∘(Jθ̇) = 0,
    whose tangents add kp∘J along q (∂p = J δq), kd∘∂(Jθ̇)/∂q along q (the tip-acceleration tangents at
    θ̇ = 0, θ̈ = θ̇) and kd∘J along q̇; -> ((n,), (r,), (n, n), (n, n), (n, n), (r, n), (r, n), (r, n))."""
    qdd, f = contact_dynamics_baumgarte(robot, q, qd, tau, kp, kd, x_ref)
    n, r = robot.nv, robot.tip_rows
    kp, kd = np.asarray(kp, float)[:, None], np.asarray(kd, float)[:, None]
    J = jacobian(robot, q)
    K = np.block([[mass_matrix(robot, q), J.T], [J, np.zeros((r, r))]])
    id_q, id_v = inverse_dynamics_derivatives(robot, q, qd, qdd, f)
    acc_q, acc_v = tip_acceleration_derivatives(robot, q, qd, qdd)
    vel_q = tip_acceleration_derivatives(robot, q, np.zeros(n), qd)[0]              # ∂(Jθ̇)/∂q
    acc_q, acc_v = acc_q + kp * J + kd * vel_q, acc_v + kd * J
    rhs = np.hstack([-np.vstack([id_q, acc_q]), -np.vstack([id_v, acc_v]), np.vstack([np.eye(n), np.zeros((r, n))])])
    sol = np.linalg.solve(K, rhs)
    d_qdd, d_f = sol[:n], sol[n:]
    return (qdd, f, d_qdd[:, :n], d_qdd[:, n:2 * n], d_qdd[:, 2 * n:], d_f[:, :n], d_f[:, n:2 * n], d_f[:, 2 * n:])


def impulse_dynamics_derivatives(robot, q, qd, e):
    """θ̇⁺, p and ∂θ̇⁺/∂q, ∂θ̇⁺/∂θ̇⁻, ∂p/∂q, ∂p/∂θ̇⁻ (q in the tangent space) of :func:`impulse_dynamics`.

    Differentiating M(θ̇⁺ − θ̇⁻) + J*p = 0 and J(θ̇⁺ + eθ̇⁻) = 0 at the solution gives
    [M J*; J 0] [∂θ̇⁺; ∂p] = −[A; B]: along q, A = ∂(MΔ + J*p)/∂q at fixed Δ = θ̇⁺ − θ̇⁻ and p, the
    inverse-dynamics tangents at θ̇ = 0, θ̈ = Δ and the tip forces p less those at θ̈ = 0 without them
    (gravity's), and B = ∂(Jw)/∂q at fixed w = θ̇⁺ + eθ̇⁻, the tip-acceleration tangents at θ̇ = 0,
    θ̈ = w (:func:`~soagen.reference.derivatives.tip_acceleration_derivatives`); along θ̇⁻, A = −M,
    B = eJ; solved densely; -> ((n,), (r,), (n, n), (n, n), (r, n), (r, n)).
    """
    qd_plus, p = impulse_dynamics(robot, q, qd, e)
    restitution = float(np.ravel(e)[0])
    n, r = robot.nv, robot.tip_rows
    M, J, zero = mass_matrix(robot, q), jacobian(robot, q), np.zeros(n)
    K = np.block([[M, J.T], [J, np.zeros((r, r))]])
    a_q = inverse_dynamics_derivatives(robot, q, zero, qd_plus - qd, p)[0] - inverse_dynamics_derivatives(robot, q, zero, zero)[0]
    b_q = tip_acceleration_derivatives(robot, q, zero, qd_plus + restitution * np.asarray(qd, float))[0]
    rhs = np.hstack([-np.vstack([a_q, b_q]), np.vstack([M, -restitution * J])])
    sol = np.linalg.solve(K, rhs)
    return qd_plus, p, sol[:n, :n], sol[:n, n:], sol[n:, :n], sol[n:, n:]
