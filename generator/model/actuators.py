"""Joint-space actuator terms: rotor inertia and smooth friction."""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

#: ε of the smooth Coulomb sign q̇/√(q̇² + ε²) (rad/s or m/s)
COULOMB_VELOCITY = 1e-2


@dataclass(frozen=True)
class Actuators:
    """Joint-space actuator terms, one entry per velocity coordinate (zero for
    multi-dof joints): τ gains ``armature·q̈ + viscous·q̇ + coulomb·s(q̇)`` with
    the smooth sign s(q̇) = q̇/√(q̇² + ε²), ε = ``coulomb_velocity``, and M gains
    ``diag(armature)``.

    Attributes
    ----------
    armature : (nv,) ndarray   rotor inertia reflected through the gear (k_r² I_m)
    viscous : (nv,) ndarray    viscous friction coefficient
    coulomb : (nv,) ndarray    Coulomb friction torque (force)
    coulomb_velocity : float   ε
    """

    armature: np.ndarray
    viscous: np.ndarray
    coulomb: np.ndarray
    coulomb_velocity: float = COULOMB_VELOCITY

    def torques(self, qd, qdd):
        """armature·q̈ + viscous·q̇ + coulomb·s(q̇); (nv,)."""
        qd = np.asarray(qd, float)
        return (self.armature * np.asarray(qdd, float) + self.viscous * qd
                + self.coulomb * qd / np.sqrt(qd * qd + self.coulomb_velocity ** 2))
