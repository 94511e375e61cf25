"""numpy reference: the spatial operator recursions, one pass per loop.

Every public function takes the :class:`~soagen.model.robot.Robot` first and has
the name of the generated function it checks.  The passes have the names of
their symbolic twins in :mod:`soagen.passes.sweeps` (``velocities``,
``newton_euler``, ``forces_tip_to_base``, ``articulated``,
``innovations_filter``/``innovations_smoother``, ``fd4``, ``omega_bodies``,
``omega_tips``, ``os_rhs``) and walk the tree the same way
(``robot.base_to_tip()``, ``robot.tip_to_base()``), but share no code with
them: dense 6×6 blocks, numpy only.  Notation follows the papers
(docs/references.md: [RK], [KJR], [RJK], [CK]): the paper's ``k+1`` (towards
the base) is ``parent[k]`` here and its ``k-1`` (towards the tip) are the
children of ``k``; tips play the role of the paper's frame 0.

Per-body quantities, all in body-``k`` coordinates at the body-frame origin:
``φ(p, k)`` (6, 6) force transform to the parent, ``H*(k)`` (6, nv_k) joint map
(stored as ``kin.H[k]``; ``H(k)`` is its transpose), ``M(k)`` (6, 6) spatial
inertia.  Body ``k``'s joint velocities are ``qd[robot.vslice(k)]``; D(k) is an
nv_k × nv_k block.
Spatial vectors are ``[angular; linear]``; tip quantities are in world-aligned
axes at the tip (frame 0 of each tip).

The passes live in modules of this package, each re-exported here:
:mod:`~soagen.reference.newton_euler_passes` (velocities, Newton–Euler, force pass,
projection, inverse dynamics, composite inertias and the mass matrix),
:mod:`~soagen.reference.tip_kinematics` (forward kinematics, Jacobian, J̇θ̇),
:mod:`~soagen.reference.articulated_bodies` (Riccati sweep, innovations filter and
smoother, M⁻¹, forward dynamics), :mod:`~soagen.reference.operational_space`
(Ω, Λ, c(0), g(0), OSC), :mod:`~soagen.reference.derivatives` (dynamics
derivatives), :mod:`~soagen.reference.second_derivatives` (their second derivatives, by complex
steps), :mod:`~soagen.reference.regressors` (regressors) and
:mod:`~soagen.reference.identifiable` (base parameters, base regressor),
:mod:`~soagen.reference.centroidal` (centre of mass, centroidal momentum);
:mod:`~soagen.reference.closed_chain` is imported on its own.  No module has the
name of a function re-exported here (that name would hide the module).
"""
from __future__ import annotations

from soagen.model.errors import SingularError
from soagen.model.frames import Kinematics, kinematics  # the reference's first pass
from soagen.reference.articulated_bodies import (
    ArticulatedBodies, articulated, fd4, forward_dynamics, forward_dynamics_fd2, gravity_bar, innovations_filter,
    innovations_smoother, innovations_solve, mass_matrix_inverse, tip_force_acceleration,
)
from soagen.reference.contact import (contact_dynamics, contact_dynamics_baumgarte,
                                     contact_dynamics_baumgarte_derivatives, contact_dynamics_derivatives,
                                     impulse_dynamics, impulse_dynamics_derivatives)
from soagen.reference.centroidal import (
    center_of_mass, centroidal_bias, centroidal_momentum_matrix, com_jacobian)
from soagen.reference.derivatives import (centroidal_dynamics_derivatives, forward_dynamics_derivatives,
                                         inverse_dynamics_derivatives, linearized_step)
from soagen.reference.identifiable import base_regressor
from soagen.reference.newton_euler_passes import (
    actuator_torques, base_acceleration, bias_forces, composite_inertias, coriolis, forces_tip_to_base, gravity,
    inverse_dynamics, mass_matrix, newton_euler, project, tip_forces, velocities,
)
from soagen.reference.operational_space import (
    eta, ldl, omega_bodies, omega_tips, os_bias, os_coriolis, os_gravity, os_inertia, os_inertia_inverse, os_rhs,
    os_solve, osc_torque,
)
from soagen.reference.regressors import body_regressor, regressor, slotine_li_regressor
from soagen.reference.second_derivatives import (contact_dynamics_hessian, forward_dynamics_hessian,
                                                 inverse_dynamics_hessian, inverse_dynamics_second_derivatives)
from soagen.reference.tip_kinematics import forward_kinematics, jacobian, jdot_qdot, tip_velocity

__all__ = [
    "SingularError", "Kinematics", "kinematics",
    # newton_euler
    "base_acceleration", "velocities", "tip_forces", "forces_tip_to_base", "newton_euler", "inverse_dynamics",
    "project", "gravity", "bias_forces", "coriolis", "composite_inertias", "mass_matrix", "actuator_torques",
    # tip_kinematics
    "forward_kinematics", "jacobian", "jdot_qdot", "tip_velocity",
    # articulated
    "ArticulatedBodies", "articulated", "innovations_filter", "innovations_smoother", "innovations_solve",
    "mass_matrix_inverse", "forward_dynamics", "forward_dynamics_fd2", "gravity_bar", "fd4", "tip_force_acceleration",
    # operational_space
    "ldl", "omega_bodies", "omega_tips", "os_inertia_inverse", "os_inertia", "eta", "os_rhs", "os_solve",
    "os_coriolis", "os_gravity", "os_bias", "osc_torque",
    # derivatives
    "inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearized_step",
    # second_derivatives
    "inverse_dynamics_second_derivatives", "inverse_dynamics_hessian", "forward_dynamics_hessian",
    "contact_dynamics_hessian",
    # regressors, identifiable
    "body_regressor", "regressor", "base_regressor", "slotine_li_regressor",
    # contact
    "contact_dynamics", "contact_dynamics_derivatives", "contact_dynamics_baumgarte",
    "contact_dynamics_baumgarte_derivatives", "impulse_dynamics", "impulse_dynamics_derivatives",
    # centroidal
    "center_of_mass", "com_jacobian", "centroidal_momentum_matrix", "centroidal_bias", "centroidal_dynamics_derivatives",
]


from soagen._lazy import submodules as _submodules  # noqa: E402

__getattr__ = _submodules(__name__)   # soagen.reference.<submodule> without importing it first
