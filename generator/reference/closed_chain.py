"""numpy reference of two arms whose tips hold one point ([RJK §5.3, (21)–(26)];
:mod:`soagen.model.closed_chain` has the equations)."""
from __future__ import annotations

import numpy as np

from soagen.reference.articulated_bodies import forward_dynamics, tip_force_acceleration
from soagen.reference.operational_space import ldl, os_inertia_inverse
from soagen.reference.tip_kinematics import jacobian, jdot_qdot


def _rot6(R):
    out = np.zeros((6, 6))
    out[:3, :3] = out[3:, 3:] = R
    return out


def reference_forward_dynamics(chain, qa, qda, taua, qb, qdb, taub):
    """numpy reference of the closed-chain forward dynamics; -> (θ̈_a, θ̈_b, f (6,))."""
    ra, rb = chain.robot_a, chain.robot_b
    R6 = _rot6(chain.rotation)
    qdd_af = forward_dynamics(ra, qa, qda, taua)
    qdd_bf = forward_dynamics(rb, qb, qdb, taub)
    alpha_af = jacobian(ra, qa) @ qdd_af + jdot_qdot(ra, qa, qda)  # (25)
    alpha_bf = R6 @ (jacobian(rb, qb) @ qdd_bf + jdot_qdot(rb, qb, qdb))
    omega = os_inertia_inverse(ra, qa) + R6 @ os_inertia_inverse(rb, qb) @ R6.T
    L, d = ldl(omega)                                              # Λ_c⁻¹ (26)
    f = np.linalg.solve(L.T, np.linalg.solve(L, alpha_af - alpha_bf) / d)
    qdd_a = qdd_af + tip_force_acceleration(ra, qa, f)             # (18)
    qdd_b = qdd_bf + tip_force_acceleration(rb, qb, -R6.T @ f)
    return qdd_a, qdd_b, f
