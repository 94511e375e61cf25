"""Property tests (hypothesis): identities that need no oracle, on random robots
with 1–20 joints, chains and trees, mixed joints, random axes and origins and
link masses spread over 1e-3 … 1e3 kg."""
from __future__ import annotations

import numpy as np
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import soagen
from soagen import reference as ref
from tests.support.robots import random_spec, robot_from_spec


@st.composite
def robots(draw, max_joints=20):
    seed = draw(st.integers(0, 2**31 - 1))
    n = draw(st.integers(1, max_joints))
    spec = random_spec(seed, n, tree=draw(st.booleans()), prismatic_fraction=draw(st.sampled_from([0.0, 0.3, 1.0])),
                       tips=draw(st.integers(1, 2)))
    scale = np.random.default_rng(seed).uniform(-3, 3, len(spec["links"]))
    for link, s in zip(spec["links"], scale):     # masses from 1e-3 to 1e3 kg, inertia with them
        link["mass"] *= 10.0 ** s
        link["inertia"] = link["inertia"] * 10.0 ** s
    return robot_from_spec(spec), seed


def _close(a, b, cond, tol=1e-12):
    return np.abs(a - b).max() <= tol * cond * max(1.0, np.abs(b).max())


SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])


@SETTINGS
@given(robots())
def test_mass_matrix_symmetric_positive_definite(case):
    robot, seed = case
    q = robot.random_state(np.random.default_rng(seed))[0]
    M = ref.mass_matrix(robot, q)
    assert np.array_equal(M, M.T)
    assert np.linalg.eigvalsh(M).min() > 0.0


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
    robot, seed = case
    q = robot.random_state(np.random.default_rng(seed))[0]
    M = ref.mass_matrix(robot, q)
    Minv = ref.mass_matrix_inverse(robot, q)
    cond = np.linalg.cond(M)
    assert _close(M @ Minv, np.eye(robot.n), cond)
    assert _close(Minv, np.linalg.inv(M), cond, tol=1e-11)


@SETTINGS
@given(robots())
def test_gravity_is_inverse_dynamics_at_rest_and_scales_with_g(case):
    robot, seed = case
    q = robot.random_state(np.random.default_rng(seed))[0]
    z = np.zeros(robot.n)
    G = ref.gravity(robot, q)
    assert np.array_equal(G, ref.inverse_dynamics(robot, q, z, z))
    G2 = ref.gravity(robot.with_gravity(2.0 * robot.gravity), q)
    assert np.allclose(G2, 2.0 * G, rtol=1e-12, atol=1e-12 * max(1.0, np.abs(G).max()))


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


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(robots(max_joints=6))
def test_generated_module_identities(case):
    """The same identities on generated C (one build per example)."""
    robot, seed = case
    mod = soagen.build(robot, functions=["inverse_dynamics", "forward_dynamics", "mass_matrix",
                                         "mass_matrix_inverse", "gravity"])
    rng = np.random.default_rng(seed)
    for _ in range(10):
        q, qd, qdd, _ = robot.random_state(rng)
        M = mod.mass_matrix(q)
        cond = np.linalg.cond(M)
        assert np.linalg.eigvalsh(0.5 * (M + M.T)).min() > 0.0
        assert _close(mod.forward_dynamics(q, qd, mod.inverse_dynamics(q, qd, qdd)), qdd, cond)
        assert _close(M @ mod.mass_matrix_inverse(q), np.eye(robot.n), cond)
        assert _close(mod.gravity(q), mod.inverse_dynamics(q, np.zeros(robot.n), np.zeros(robot.n)), 1.0)
