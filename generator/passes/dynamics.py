"""Makers of the joint-space dynamics functions: inverse dynamics, the mass
matrix and its inverse, forward dynamics (FD1–FD4, CRBA), tip-force
accelerations.

A maker records one function into ``prog`` from the passes of
:mod:`soagen.passes.sweeps` and returns its outputs, one list of expressions per C
output, in the order of its :class:`~soagen.functions.Spec`.  The inputs arrive
as lists of symbols (``q``, ``qd``, ``qdd``, ``tau``, ``f``).
"""
from __future__ import annotations

import sympy as sp

from soagen.passes import symbolic as S
from soagen.passes.ldl import ldl_inverse, ldl_solve, reverse
from soagen.passes.actuators import add_actuator_torques, subtract_friction
from soagen.passes.sweeps import (Sweeps, articulated, composite_mass_matrix, fd4, forces_tip_to_base,
                     innovations_filter, innovations_smoother, innovations_solve, mass_matrix_ltdl, newton_euler,
                     project, tip_accelerations, tip_force_response, tip_forces)


def _zeros(n):
    return [sp.Integer(0)] * n


def _friction_doc(prog, robot):
    """The C comment says so when the robot's actuators add friction."""
    if robot.actuators is not None:
        prog.doc += "; with the joint friction F(qd) of the actuators"


def _torques(prog, robot, q, qd, qdd, with_gravity=True, f_tip=None):
    """Recursive Newton–Euler T = Mθ̈ + C + G + J*f(0) [RK (2.24)–(2.30), (3.21)]
    (+ armature θ̈ and, with gravity, the joint friction)."""
    sw = Sweeps(prog, robot, q)
    _, _, f = newton_euler(sw, qd, qdd, with_gravity)
    if f_tip is not None:
        f = [S.spatial_add(prog, a, b) for a, b in zip(f, tip_forces(sw, f_tip))]
    forces_tip_to_base(sw, f)
    if with_gravity and qd is not None and any(x != 0 for x in qd):
        _friction_doc(prog, robot)
    return [add_actuator_torques(sw, project(sw, f), qd, qdd, friction=with_gravity)]      # (2.30)


def inverse_dynamics(prog, robot, q, qd, qdd):
    """T = Mθ̈ + C + G by Newton–Euler [RK (2.24)–(2.30)], gravity as a base acceleration (3.21)."""
    return _torques(prog, robot, q, qd, qdd)


def inverse_dynamics_tip_force(prog, robot, q, qd, qdd, f):
    """T = Mθ̈ + C + G + J*f(0): tip forces enter the force pass [RK (2.28)–(2.29)]."""
    return _torques(prog, robot, q, qd, qdd, f_tip=f)



def impulse_torques(prog, robot, q, qd, dv, p):
    """MΔθ̇ + J*p(0): Newton–Euler at θ̇ = 0 without gravity, θ̈ = Δθ̇ = ``dv``, the tip forces ``p``
    in the force pass [RK (2.24)–(2.30)] (``qd`` unused: the signature of
    :func:`~soagen.passes.derivatives.fixed_input_tangents`)."""
    return _torques(prog, robot, q, _zeros(robot.nv), dv, with_gravity=False, f_tip=p)

def gravity(prog, robot, q):
    """G(q): Newton–Euler at θ̇ = θ̈ = 0 [KJR (44)]."""
    return _torques(prog, robot, q, _zeros(robot.nv), _zeros(robot.nv))


def bias_forces(prog, robot, q, qd):
    """C + G: Newton–Euler at θ̈ = 0 [KJR (45)]."""
    return _torques(prog, robot, q, qd, _zeros(robot.nv))


def coriolis(prog, robot, q, qd):
    """C(q, θ̇): Newton–Euler at θ̈ = 0 without gravity [KJR (45)]."""
    return _torques(prog, robot, q, qd, _zeros(robot.nv), with_gravity=False)


def _row_major(M):
    n = len(M)
    return [M[i][j] for i in range(n) for j in range(n)]


def mass_matrix(prog, robot, q):
    """M = HφMφ*H* by composite inertias R(k), tip-to-base [RK (3.20)]."""
    return [_row_major(composite_mass_matrix(Sweeps(prog, robot, q)))]


def mass_matrix_ne(prog, robot, q):
    """M [RK (3.20)] column by column: column j is Newton–Euler [RK (2.24)–(2.30)]
    with θ̈ = e_j, θ̇ = 0 and no gravity (Walker–Orin method 1)."""
    sw = Sweeps(prog, robot, q)
    n = robot.nv
    cols = []
    for j in range(n):
        prog.banner(f"column {j}", level=0)
        e = [sp.Integer(1 if i == j else 0) for i in range(n)]
        _, _, f = newton_euler(sw, _zeros(n), e, False)
        forces_tip_to_base(sw, f)
        cols.append(add_actuator_torques(sw, project(sw, f), _zeros(n), e, friction=False))
    return [[cols[j][i] for i in range(n) for j in range(n)]]


def mass_matrix_inverse_cholesky(prog, robot, q):
    """M⁻¹ from the composite-body M [RK (3.20)] and its unrolled LTDL factorization."""
    sw = Sweeps(prog, robot, q)
    return [_row_major(reverse(ldl_inverse(prog, *mass_matrix_ltdl(sw))))]


def mass_matrix_inverse_innovations(prog, robot, q):
    """M⁻¹ = (I − HψK)* D⁻¹ (I − HψK) [RK Theorem 4.1, (4.16)]: column j from the
    filter and smoother with T = e_j (zeros pruned: O(n²))."""
    sw = Sweeps(prog, robot, q)
    art = articulated(sw)
    n = robot.nv
    cols = []
    for j in range(n):
        prog.banner(f"column {j}", level=0)
        cols.append(innovations_solve(sw, art, [sp.Integer(1 if i == j else 0) for i in range(n)])[0])
    return [[cols[j][i] for i in range(n) for j in range(n)]]


def bias_torques(sw, prog, tau, qd):
    """T' = T − Hφ[Mφ*a + b] by Newton–Euler at θ̈ = 0 [RK (4.17), (5.5)];
    returns T', the velocities and ζ = α at θ̈ = 0 (with the gravity acceleration)."""
    vel, zeta, f = newton_euler(sw, qd, _zeros(sw.robot.nv))
    forces_tip_to_base(sw, f)
    _friction_doc(prog, sw.robot)
    return [prog.let(t - h) for t, h in zip(subtract_friction(sw, tau, qd), project(sw, f))], vel, zeta


def forward_dynamics_fd1(prog, robot, q, qd, tau):
    """FD1 [RK (4.17)–(4.22)]: T' by Newton–Euler, then the innovations filter (4.20)
    and smoother (4.22)."""
    sw = Sweeps(prog, robot, q)
    Tp, _, _ = bias_torques(sw, prog, tau, qd)
    return [innovations_solve(sw, articulated(sw), Tp)[0]]


def forward_dynamics_fd2(prog, robot, q, qd, tau):
    """FD2 [RK (5.5)–(5.7)]: FD1 whose smoother also yields α = λ + φ*a (4.22b)
    and the tip accelerations α(0) (4.23)."""
    sw = Sweeps(prog, robot, q)
    Tp, vel, zeta = bias_torques(sw, prog, tau, qd)
    qdd, lam = innovations_solve(sw, articulated(sw), Tp)
    # α(k) = λ(k) + ζ(k); ζ holds the fictitious gravity acceleration, removed at the tips
    alpha = [S.spatial_add(prog, lam[k], zeta[k]) for k in range(robot.nb)]
    return [qdd, tip_accelerations(sw, vel.V, alpha, gravity=True)]


def forward_dynamics_fd3(prog, robot, q, qd, tau):
    """FD3 [RK (5.8)–(5.10)]: ζ = φ*a, ε = T − Hψ[SLT + Mζ + b],
    θ̈ = (I − HΨL)*D⁻¹ε: three sweeps."""
    sw = Sweeps(prog, robot, q)
    _, _, z = newton_euler(sw, qd, _zeros(robot.nv))                      # Mζ + b, ζ = φ*a (5.8)
    art = articulated(sw)
    _friction_doc(prog, robot)
    nu = innovations_filter(sw, art, subtract_friction(sw, tau, qd), z)    # (5.9)
    return [innovations_smoother(sw, art, nu)[0]]                         # (5.10)


def forward_dynamics_fd4(prog, robot, q, qd, tau):
    """FD4 [RK (5.13)–(5.17)] (:func:`soagen.passes.sweeps.fd4`)."""
    _friction_doc(prog, robot)
    return [fd4(Sweeps(prog, robot, q), qd, tau)[0]]


def forward_dynamics_crba(prog, robot, q, qd, tau):
    """M by composite inertias [RK (3.20)], C + G by Newton–Euler, and
    M θ̈ = T − C − G by the unrolled LTDL solve."""
    sw = Sweeps(prog, robot, q)
    rhs, _, _ = bias_torques(sw, prog, tau, qd)
    L, dinv = mass_matrix_ltdl(sw)
    return [ldl_solve(prog, L, dinv, rhs[::-1])[::-1]]


def tip_force_acceleration(prog, robot, q, f):
    """Δθ̈ = −(I − HψK)* D⁻¹ H ψ B f(0) [RJK (18)]."""
    sw = Sweeps(prog, robot, q)
    return [tip_force_response(sw, articulated(sw), f)]

