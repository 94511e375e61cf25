"""Spatial operator identities, checked with DENSE block operators.

The numpy reference (``soagen.reference``) computes everything by O(n)
sweeps over per-body quantities.  Here the same per-body quantities are
assembled into the dense operators of the JPL papers ([KJR] (17)–(37),
[RK] §3–§5, [RJK]) and the papers' identities are checked with plain
matrix algebra, and the reference's sweeps are checked against those dense
products.  A Lagrangian finite-difference check gives an independent test
of the bias (Coriolis + gravity) torques, prismatic joints included.

Numbering: bodies base-first (parent < child), so the paper's lower-
triangular φ is upper-triangular here: block (i, j) = φ(i, j) when i is an
ancestor-or-self of j.
"""
from __future__ import annotations

import numpy as np
import pytest

from soagen import reference as ref
from tests.support import assert_close
from tests.support.dense import dense_operators
from tests.support.robots import planar_2link, random_robot, two_link_closed_form

RTOL = 1e-10

# (seed, n, tree, prismatic_fraction, tips)
CASES = [
    (0, 1, False, 0.3, 1),
    (1, 2, False, 0.3, 1),
    (2, 3, False, 0.0, 1),
    (3, 5, False, 0.3, 2),
    (4, 6, False, 0.5, 1),
    (5, 8, False, 0.3, 1),
    (6, 8, False, 1.0, 3),   # all prismatic
    (7, 4, True, 0.3, 2),
    (8, 6, True, 0.3, 3),
    (9, 7, True, 0.0, 2),
    (10, 8, True, 0.3, 3),
    (11, 8, True, 0.5, 4),
    (12, 5, True, 1.0, 2),   # all prismatic tree
]
IDS = [f"{'tree' if t else 'chain'}-n{n}-s{s}-p{p}-m{m}" for s, n, t, p, m in CASES]
STATES_PER_ROBOT = 3


@pytest.fixture(params=CASES, ids=IDS, scope="module")
def case(request):
    seed, n, tree, pf, tips = request.param
    robot = random_robot(seed, n, tree=tree, prismatic_fraction=pf, tips=tips)
    rng = np.random.default_rng(1000 + seed)
    states = []
    for _ in range(STATES_PER_ROBOT):
        q, qd, qdd, tau = robot.random_state(rng)
        f = rng.normal(size=6 * len(robot.tips))
        states.append((q, qd, qdd, tau, f, dense_operators(robot, q)))
    return robot, states


def test_robot_shape(case):
    """The factory gives base-first numbering and tips on leaf bodies first."""
    robot, _ = case
    assert all(p < k for k, p in enumerate(robot.parents))
    leaves = {k for k in range(robot.nb) if not robot.children(k)}
    assert robot.tips[0].body in leaves


def test_phi_is_inverse_of_shift(case):
    """φ = (I − E_φ)⁻¹, ψ = (I − E_ψ)⁻¹ and E_ψ = E_φ − KH [KJR (19), (35)]."""
    robot, states = case
    eye = np.eye(6 * robot.nb)
    for *_, op in states:
        assert_close(np.linalg.inv(eye - op["Ephi"]), op["phi"], what="phi")
        assert_close(np.linalg.inv(eye - op["Epsi"]), op["psi"], what="psi")
        assert_close(op["Ephi"] - op["K"] @ op["H"], op["Epsi"], what="E_psi")


def test_riccati_definitions(case):
    """D = HPH*, G = PH*D⁻¹, K = E_φ G, and the Riccati equation [KJR (37)]:
    P = M + E_ψ P E_ψ* restricted to the block diagonal."""
    robot, states = case
    n = robot.nb
    for *_, op in states:
        H, P = op["H"], op["P"]
        assert_close(H @ P @ H.T, op["D"], what="D")
        assert_close(P @ H.T @ np.linalg.inv(op["D"]), op["G"], what="G")
        assert_close(op["Ephi"] @ op["G"], op["K"], what="K")
        rhs = op["M"] + op["Epsi"] @ P @ op["Epsi"].T
        for k in range(n):
            s = slice(6 * k, 6 * k + 6)
            assert_close(P[s, s], rhs[s, s], what=f"P({k})")


def test_mass_matrix_dense(case):
    """M = HφMφ*H* [KJR (42)] equals reference.mass_matrix; symmetric, PD."""
    robot, states = case
    for q, *_, op in states:
        H, phi = op["H"], op["phi"]
        Md = H @ phi @ op["M"] @ phi.T @ H.T
        Mr = ref.mass_matrix(robot, q)
        assert_close(Mr, Md, what="M")
        assert_close(Mr, Mr.T, what="M symmetric")
        assert np.linalg.eigvalsh(Mr).min() > 0.0


def test_innovations_factorization(case):
    """M = (I+HφK)D(I+HφK)* and (I+HφK)⁻¹ = I − HψK [RK (4.4)–(4.16)]."""
    robot, states = case
    eye = np.eye(robot.n)
    for q, *_, op in states:
        H, phi, psi, K, D = op["H"], op["phi"], op["psi"], op["K"], op["D"]
        L = eye + H @ phi @ K
        Linv = eye - H @ psi @ K
        assert_close(L @ D @ L.T, ref.mass_matrix(robot, q), what="(I+HφK)D(I+HφK)*")
        assert_close(np.linalg.inv(L), Linv, what="(I+HφK)^-1")
        assert_close(L @ Linv, eye, what="(I+HφK)(I-HψK)")


def test_lemma_identities(case):
    """φKHψ = φ − ψ and (I − HψK)Hφ = Hψ ([RK] App. A, [RJK] lemmas)."""
    robot, states = case
    eye = np.eye(robot.n)
    for *_, op in states:
        H, phi, psi, K = op["H"], op["phi"], op["psi"], op["K"]
        assert_close(phi @ K @ H @ psi, phi - psi, what="φKHψ = φ − ψ")
        assert_close((eye - H @ psi @ K) @ H @ phi, H @ psi, what="(I−HψK)Hφ = Hψ")
        assert_close(psi @ K @ H @ phi, phi - psi, what="ψKHφ = φ − ψ")


def test_mass_matrix_inverse(case):
    """M⁻¹ = (I − HψK)* D⁻¹ (I − HψK) [RK (4.16)] equals
    reference.mass_matrix_inverse and numpy.linalg.inv(M)."""
    robot, states = case
    eye = np.eye(robot.n)
    for q, *_, op in states:
        H, psi, K, D = op["H"], op["psi"], op["K"], op["D"]
        Linv = eye - H @ psi @ K
        Minv_dense = Linv.T @ np.linalg.inv(D) @ Linv
        Minv_ref = ref.mass_matrix_inverse(robot, q)
        assert_close(Minv_ref, Minv_dense, what="M^-1 ref vs dense")
        cond = np.linalg.cond(ref.mass_matrix(robot, q))
        assert_close(Minv_ref, np.linalg.inv(ref.mass_matrix(robot, q)),
                     rtol=max(RTOL, 1e-15 * cond), what="M^-1 vs inv(M)")
        assert_close(Minv_ref, Minv_ref.T, what="M^-1 symmetric")


def test_jacobian_dense(case):
    """J = B*φ*H* [RJK (1)] equals reference.jacobian."""
    robot, states = case
    for q, *_, op in states:
        Jd = op["B"].T @ op["phi"].T @ op["H"].T
        assert_close(ref.jacobian(robot, q), Jd, what="J")


def test_tip_force_torques(case):
    """J*f = HφBf [KJR (38)] equals ID(q, q̇, q̈, f) − ID(q, q̇, q̈)."""
    robot, states = case
    for q, qd, qdd, _, f, op in states:
        JTf = op["H"] @ op["phi"] @ op["B"] @ f
        assert_close(ref.jacobian(robot, q).T @ f, JTf, what="J^T f")
        diff = ref.inverse_dynamics(robot, q, qd, qdd, f) - ref.inverse_dynamics(robot, q, qd, qdd)
        assert_close(diff, JTf, rtol=1e-9, what="ID(f) - ID")


def test_tip_force_acceleration(case):
    """Δθ̈ = −M⁻¹J*f = −(I−HψK)*D⁻¹HψBf [RJK (18)]."""
    robot, states = case
    eye = np.eye(robot.n)
    for q, *_, f, op in states:
        H, psi, K, D = op["H"], op["psi"], op["K"], op["D"]
        M = ref.mass_matrix(robot, q)
        expect = -np.linalg.solve(M, ref.jacobian(robot, q).T @ f)
        dense = -(eye - H @ psi @ K).T @ np.linalg.inv(D) @ H @ psi @ op["B"] @ f
        got = ref.tip_force_acceleration(robot, q, f)
        assert_close(dense, expect, rtol=1e-9, what="dense tip force acceleration")
        assert_close(got, expect, rtol=1e-9, what="tip_force_acceleration")


@pytest.mark.parametrize("variant", ["FD1", "FD4"])
def test_forward_dynamics(case, variant):
    """forward_dynamics = M⁻¹(τ − C − G − J*f), with and without tip forces."""
    robot, states = case
    for q, qd, _, tau, f, _ in states:
        M = ref.mass_matrix(robot, q)
        bias = ref.bias_forces(robot, q, qd)
        J = ref.jacobian(robot, q)
        expect = np.linalg.solve(M, tau - bias)
        assert_close(ref.forward_dynamics(robot, q, qd, tau, variant=variant), expect,
                     rtol=1e-9, what=variant)
        expect_f = np.linalg.solve(M, tau - bias - J.T @ f)
        assert_close(ref.forward_dynamics(robot, q, qd, tau, f, variant=variant), expect_f,
                     rtol=1e-9, what=f"{variant} with tip force")
        # round trip through inverse dynamics
        qdd = ref.forward_dynamics(robot, q, qd, tau, f, variant=variant)
        assert_close(ref.inverse_dynamics(robot, q, qd, qdd, f), tau, rtol=1e-9,
                     what=f"ID(FD) {variant}")


def test_inverse_dynamics_split(case):
    """ID(q, q̇, q̈) = M q̈ + bias, bias = ID(q, q̇, 0), gravity = ID(q, 0, 0)."""
    robot, states = case
    z = np.zeros(robot.n)
    for q, qd, qdd, *_ in states:
        M = ref.mass_matrix(robot, q)
        bias = ref.bias_forces(robot, q, qd)
        assert_close(ref.inverse_dynamics(robot, q, qd, qdd), M @ qdd + bias, rtol=1e-9, what="ID")
        assert_close(ref.inverse_dynamics(robot, q, z, qdd), M @ qdd + ref.gravity(robot, q),
                     rtol=1e-9, what="ID(qd=0)")
        # without gravity, ID at q̇ = 0 is exactly M q̈ (Newton-Euler against composite inertias);
        # (G = 0 at g = 0 was dropped: it held by construction)
        r0 = robot.with_gravity((0.0, 0.0, 0.0))
        assert_close(ref.inverse_dynamics(r0, q, z, qdd), M @ qdd, what="ID no gravity")


# --------------------------------------------------------- finite differences
def _potential(robot, q):
    kin = ref.kinematics(robot, q)
    return -sum(b.mass * robot.gravity @ (kin.p[k] + kin.R[k] @ b.com)
                for k, b in enumerate(robot.bodies))


def test_lagrangian_bias(case):
    """Independent check of C(q,q̇)q̇ and G(q) from the Lagrangian by central
    differences: c = Ṁq̇ − ∂(½q̇ᵀMq̇)/∂q, G = ∂V/∂q (prismatic Coriolis included)."""
    robot, states = case
    n, h = robot.n, 1e-5
    eye = np.eye(n)
    for q, qd, *_ in states:
        Mdot = (ref.mass_matrix(robot, q + h * qd) - ref.mass_matrix(robot, q - h * qd)) / (2 * h)
        dT = np.array([qd @ (ref.mass_matrix(robot, q + h * eye[i])
                             - ref.mass_matrix(robot, q - h * eye[i])) @ qd / (4 * h) for i in range(n)])
        c = Mdot @ qd - dT
        G = np.array([(_potential(robot, q + h * eye[i]) - _potential(robot, q - h * eye[i])) / (2 * h)
                      for i in range(n)])
        assert_close(ref.gravity(robot, q), G, rtol=1e-7, what="gravity vs dV/dq")
        assert_close(ref.bias_forces(robot, q, qd) - ref.gravity(robot, q), c, rtol=1e-7,
                     what="Coriolis vs Lagrangian")


def _vee_log_small(A):
    S = 0.5 * (A - A.T)
    return np.array([S[2, 1], S[0, 2], S[1, 0]])


def test_jacobian_finite_difference(case):
    """J q̇ = d/dt of the tip pose (forward_kinematics), and tip_velocity = J q̇."""
    robot, states = case
    h = 1e-6
    for q, qd, *_ in states:
        Tp, Tm = ref.forward_kinematics(robot, q + h * qd), ref.forward_kinematics(robot, q - h * qd)
        J = ref.jacobian(robot, q)
        Jqd = J @ qd
        for i in range(len(robot.tips)):
            v = (Tp[i, :3, 3] - Tm[i, :3, 3]) / (2 * h)
            w = _vee_log_small(Tp[i, :3, :3] @ Tm[i, :3, :3].T) / (2 * h)
            assert_close(Jqd[6 * i:6 * i + 6], np.concatenate([w, v]), rtol=1e-7, what=f"J qd tip {i}")
        assert_close(ref.tip_velocity(robot, q, qd), Jqd, what="tip_velocity")


def test_jdot_qdot_finite_difference(case):
    """J̇q̇ = d/dt (J(q + t q̇) q̇) at t = 0 (classical tip acceleration, q̈ = 0)."""
    robot, states = case
    h = 1e-5
    for q, qd, *_ in states:
        fd = (ref.jacobian(robot, q + h * qd) - ref.jacobian(robot, q - h * qd)) @ qd / (2 * h)
        assert_close(ref.jdot_qdot(robot, q, qd), fd, rtol=1e-7, what="Jdot qdot")


# --------------------------------------------------------------- closed form
PLANAR = dict(l1=0.9, l2=0.6, m1=2.5, m2=1.2, inertia=2e-3, g=9.81)


@pytest.mark.parametrize("seed", range(5))
def test_two_link_closed_form(seed):
    robot = planar_2link(**PLANAR)
    rng = np.random.default_rng(seed)
    for _ in range(4):
        q, qd, qdd = rng.uniform(-np.pi, np.pi, 2), rng.normal(size=2), rng.normal(size=2)
        cf = two_link_closed_form(q, qd, qdd, **PLANAR)
        assert_close(ref.mass_matrix(robot, q), cf["M"], what="2-link M")
        assert_close(ref.gravity(robot, q), cf["G"], what="2-link G")
        assert_close(ref.bias_forces(robot, q, qd) - ref.gravity(robot, q), cf["c"], what="2-link C")
        assert_close(ref.inverse_dynamics(robot, q, qd, qdd), cf["tau"], what="2-link ID")
        assert_close(ref.jacobian(robot, q), cf["J"], what="2-link J")
        assert_close(ref.forward_kinematics(robot, q)[0, :3, 3], cf["p"], what="2-link FK")
        for variant in ("FD1", "FD4"):
            assert_close(ref.forward_dynamics(robot, q, qd, cf["tau"], variant=variant), qdd,
                         rtol=1e-9, what=f"2-link {variant}")
