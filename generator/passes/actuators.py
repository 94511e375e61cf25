"""The actuators' joint torques in the straight-line programs: rotor inertia (armature), viscous and
Coulomb friction per actuated joint (:attr:`Robot.actuators`), the smooth sign for Coulomb."""
from __future__ import annotations

import sympy as sp

from soagen.program.statements import const


def per_actuator(sw, term):
    """A joint-space list (nv): ``term(i, eps)`` (let-bound) on each actuated joint i, 0 elsewhere
    and everywhere without actuators; ε (``eps``) is the Coulomb smoothing velocity."""
    out = [sp.Integer(0)] * sw.robot.nv
    if sw.robot.actuators is None:
        return out
    eps = const(sw.robot.actuators.coulomb_velocity)
    for i in sw.robot.actuated:
        out[i] = sw.prog.let(term(i, eps))
    return out


def actuator_torques(sw, qd, qdd, friction=True):
    """armature·q̈ + viscous·q̇ + Coulomb·q̇/√(q̇² + ε²) per actuated joint (the smooth
    sign, differentiable), else 0: a joint-space list (nv); ``friction`` False: the
    armature term only."""
    from soagen.passes.linear_in_parameters import _smooth_sign

    def torque(i, eps):
        terms = [sw.actuator(i, 0) * qdd[i]]
        if friction:
            terms += [sw.actuator(i, 1) * qd[i], sw.actuator(i, 2) * _smooth_sign(sw.prog, qd[i], eps)]
        return sum(terms)

    return per_actuator(sw, torque)


def add_actuator_torques(sw, T, qd, qdd, friction=True):
    """T + :func:`actuator_torques` (T itself without actuators)."""
    if sw.robot.actuators is None:
        return T
    return [sw.prog.let(t + a) for t, a in zip(T, actuator_torques(sw, qd, qdd, friction))]


def subtract_friction(sw, tau, qd):
    """τ − friction(q̇): the torque left for the rigid bodies and rotors (τ without actuators)."""
    if sw.robot.actuators is None:
        return tau
    zero = [sp.Integer(0)] * sw.robot.nv
    return [sw.prog.let(t - a) for t, a in zip(tau, actuator_torques(sw, qd, zero))]
