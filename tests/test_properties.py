"""Property tests (hypothesis): identities that need no oracle, on random robots
with 1–20 joints, chains and trees, mixed joints, random axes and origins and
link masses spread over 1e-3 … 1e3 kg; then the same on generated modules.

None holds by construction: M's symmetry is checked on M built column by column
from Newton–Euler (nothing symmetrizes it), gravity against the gradient of the
potential energy (Pinocchio's ``computePotentialEnergy`` on a model built from
the robot: Σ m g·c over the bodies' world centres of mass). Hypothesis runs
derandomized with no example database (the ``ci`` profile of ``conftest.py``).
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import soagen
from soagen import reference as ref
from soagen.model import pinocchio_convention as pc
from tests.support.oracle import Oracle
from tests.support.robots import random_spec, robot_from_spec


@st.composite
def robots(draw, max_joints=20, min_joints=1):
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(min_joints, max_joints))
    spec = random_spec(seed, n, tree=draw(st.booleans()), prismatic_fraction=draw(st.sampled_from([0.0, 0.3, 1.0])),
                       tips=draw(st.integers(1, 2)))
    scale = np.random.default_rng(seed).uniform(-3, 3, len(spec["links"]))
    for link, s in zip(spec["links"], scale):     # masses from 1e-3 to 1e3 kg, inertia with them
        link["mass"] *= 10.0 ** s
        link["inertia"] = link["inertia"] * 10.0 ** s
    return robot_from_spec(spec), seed


def _close(a, b, cond, tol=1e-12):
    """|a − b| within tol·cond of |b| (b is never all zero here: q̈, I or M)."""
    return np.abs(a - b).max() <= tol * cond * np.abs(b).max()


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


def potential_gradient(robot, q):
    """∂V/∂q of V(q) = −Σ m g·c (Pinocchio), by the 5-point central difference, h = 1e-3
    (truncation h⁴V⁽⁵⁾/30 and round-off ε V/h both below 1e-11 of the gradient here)."""
    oracle = Oracle(robot)
    model, data = oracle.model, oracle.data

    def V(x):
        return pin.computePotentialEnergy(model, data, pc.q_to_pinocchio(robot, x))

    h = 1e-3
    return np.array([(-V(q + 2 * h * e) + 8 * V(q + h * e) - 8 * V(q - h * e) + V(q - 2 * h * e)) / (12 * h)
                     for e in np.eye(robot.n)])


def potential_scale(robot):
    """Σ m |g| (1 m + the body's reach): the size of the terms the gradient is made of."""
    reach = sum(np.linalg.norm(b.translation) + np.linalg.norm(b.com) for b in robot.bodies)
    return np.linalg.norm(robot.gravity) * sum(b.mass for b in robot.bodies) * (1.0 + reach)


def assert_gravity_is_the_potential_gradient(robot, q, G):
    want = potential_gradient(robot, q)
    assert np.abs(G - want).max() <= 1e-9 * np.abs(want).max() + 1e-12 * potential_scale(robot), \
        (np.abs(G - want).max(), np.abs(want).max())


def newton_euler_columns(inverse_dynamics, q, n):
    """M column by column: ID(q, 0, e_j) − ID(q, 0, 0), nothing symmetrized; -> (n, n)"""
    z = np.zeros(n)
    G = inverse_dynamics(q, z, z)
    return np.column_stack([inverse_dynamics(q, z, e) - G for e in np.eye(n)])


def robot_and_q(case):
    """The drawn robot and the q of a random state from its seed."""
    robot, seed = case
    return robot, robot.random_state(np.random.default_rng(seed))[0]


@SETTINGS
@given(robots())
def test_mass_matrix_symmetric_positive_definite(case):
    """M from n Newton–Euler passes is symmetric (nothing makes it so but correct dynamics),
    equals the composite-inertia M, and is positive definite."""
    robot, q = robot_and_q(case)
    M = newton_euler_columns(lambda *a: ref.inverse_dynamics(robot, *a), q, robot.n)
    scale = np.abs(M).max()
    assert np.abs(M - M.T).max() <= 1e-12 * scale
    assert np.abs(M - ref.mass_matrix(robot, q)).max() <= 1e-12 * scale
    assert np.linalg.eigvalsh(0.5 * (M + M.T)).min() > 0.0


@SETTINGS
@given(robots())
def test_forward_dynamics_inverts_inverse_dynamics(case):
    robot, seed = case
    q, qd, qdd, _ = robot.random_state(np.random.default_rng(seed))
    cond = np.linalg.cond(ref.mass_matrix(robot, q))
    tau = ref.inverse_dynamics(robot, q, qd, qdd)
    for variant in ("FD1", "FD4"):
        assert _close(ref.forward_dynamics(robot, q, qd, tau, variant=variant), qdd, cond)


@SETTINGS
@given(robots())
def test_innovations_inverse_is_the_inverse(case):
    robot, q = robot_and_q(case)
    M = ref.mass_matrix(robot, q)
    Minv = ref.mass_matrix_inverse(robot, q)
    cond = np.linalg.cond(M)
    assert _close(M @ Minv, np.eye(robot.n), cond)
    assert _close(Minv, np.linalg.inv(M), cond, tol=1e-11)


@SETTINGS
@given(robots())
def test_gravity_is_the_gradient_of_the_potential_energy(case):
    # (G(2g) = 2G was dropped: the reference applies g once, as a base acceleration, so it held by construction)
    robot, q = robot_and_q(case)
    assert_gravity_is_the_potential_gradient(robot, q, ref.gravity(robot, q))


@SETTINGS
@given(robots(max_joints=12))
def test_power_balance(case):
    """q̇ᵀ(τ − G) = d/dt (½ q̇ᵀ M q̇), with Ṁ by central differences along q̇."""
    robot, seed = case
    q, qd, _, tau = robot.random_state(np.random.default_rng(seed))
    qdd = ref.forward_dynamics(robot, q, qd, tau)
    h = 1e-6
    Mdot = (ref.mass_matrix(robot, q + h * qd) - ref.mass_matrix(robot, q - h * qd)) / (2 * h)
    M = ref.mass_matrix(robot, q)
    lhs = qd @ (tau - ref.gravity(robot, q))
    rhs = qd @ M @ qdd + 0.5 * qd @ Mdot @ qd
    scale = np.abs(qd) @ (np.abs(tau) + np.abs(ref.bias_forces(robot, q, qd))) + abs(qd @ M @ qdd) + 1e-300
    assert abs(lhs - rhs) <= 1e-5 * scale


@settings(max_examples=16, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(robots(max_joints=6, min_joints=2), st.sampled_from(["FD4", "FD1", "FD3", "CRBA"]),
       st.sampled_from(["innovations", "cholesky"]))
def test_generated_module_identities(case, fd, minv):
    """The same identities on generated C: one build per example with only the functions they
    need (ID, gravity, M, one forward dynamics and one M⁻¹ algorithm, drawn), 10 states each;
    -O0, as the suite's other builds that test values, not speed (half the build time)."""
    robot, seed = case
    mod = soagen.build(robot, functions=["inverse_dynamics", "gravity", "mass_matrix",
                                         f"forward_dynamics_{fd.lower()}", f"mass_matrix_inverse_{minv}"],
                       optimize="O0")
    rng = np.random.default_rng(seed)
    for _ in range(10):
        q, qd, qdd, tau = robot.random_state(rng)
        M = mod.mass_matrix(q)
        cond = np.linalg.cond(M)
        assert np.linalg.eigvalsh(0.5 * (M + M.T)).min() > 0.0
        M_ne = newton_euler_columns(mod.inverse_dynamics, q, robot.n)      # another program's M
        assert _close(M_ne, M, 1.0) and _close(M_ne, M_ne.T, 1.0)
        assert _close(mod.forward_dynamics(q, qd, mod.inverse_dynamics(q, qd, qdd), variant=fd), qdd, cond)
        assert _close(M @ mod.mass_matrix_inverse(q, minv), np.eye(robot.n), cond)
        assert_gravity_is_the_potential_gradient(robot, q, mod.gravity(q))
        # power balance: q̇ᵀ(τ − G) = d/dt ½q̇ᵀMq̇, q̈ from the generated forward dynamics
        qdd_f = mod.forward_dynamics(q, qd, tau, variant=fd)
        h = 1e-6
        Mdot = (mod.mass_matrix(q + h * qd) - mod.mass_matrix(q - h * qd)) / (2 * h)
        lhs = qd @ (tau - mod.gravity(q))
        rhs = qd @ M @ qdd_f + 0.5 * qd @ Mdot @ qd
        scale = np.abs(qd) @ (np.abs(tau) + np.abs(mod.inverse_dynamics(q, qd, 0 * qd))) + abs(qd @ M @ qdd_f)
        assert abs(lhs - rhs) <= 1e-5 * scale
