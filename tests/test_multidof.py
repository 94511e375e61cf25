"""Multi-degree-of-freedom joints (issue: spherical joints, a floating base,
humanoids): generated C = numpy reference = Pinocchio, with the convention
conversions of :mod:`soagen.model.pinocchio_convention`.

Random robots get a Pinocchio model built joint by joint from the Robot
(spherical joints have no URDF form); the humanoids are parsed by Pinocchio's
own URDF reader with a free-flyer root, independently of soagen's parser.
"""
from __future__ import annotations

import numpy as np
import pytest

import soagen
from soagen import functions as F
from soagen import reference as ref
from soagen.check import check_module
from tests.support import assert_checked, rel
from tests.support.builds import built
from tests.support.dense import dense_operators
from tests.support.oracle import Oracle, erd_urdf
from tests.support.robots import branching_robot, random_robot, with_point_tips

TALOS = "talos_data/robots/talos_reduced.urdf"
G1 = "g1_description/urdf/g1_29dof_rev_1_0.urdf"
TALOS_HANDS = ["gripper_left_base_link", "gripper_right_base_link"]
G1_HANDS_FEET = ["left_rubber_hand", "right_rubber_hand", "left_ankle_roll_link", "right_ankle_roll_link"]
HUMANOID_FUNCTIONS = ["inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "jacobian",
                      "os_inertia"]


def _second_tip_a_point(robot):
    """``robot`` with its second tip a point tip: 6 + 3 rows of Λ(0) from the 11 joint velocities behind
    the two tips (two full tips ask for 12, and Λ(0) would never exist), so the Λ(0) functions of this
    floating multi-dof tree, and their SIMD batches (tests/test_simd.py), are compared on states."""
    return with_point_tips(robot, {1})


RANDOM = {
    "spherical_chain": lambda: random_robot(31, 5, spherical_fraction=0.6, prismatic_fraction=0.2),
    "spherical_tree": lambda: random_robot(32, 8, tree=True, tips=2, spherical_fraction=0.5),
    "floating_chain": lambda: random_robot(33, 6, floating_base=True, prismatic_fraction=0.2),
    "floating_tree": lambda: _second_tip_a_point(random_robot(34, 6, tree=True, tips=2, floating_base=True,
                                                              spherical_fraction=0.3, prismatic_fraction=0.2)),
}
#: build options per case: every algorithm variant on the spherical chain; the floating tree's build
#: carries its SIMD batches (tests/test_simd.py checks them on this build)
OPTIONS = {case: {} for case in RANDOM} | {"spherical_chain": {"variants": None}, "floating_tree": {"simd": True}}
#: the G1 with hands and feet (four tips, nv = 35; 80 s) ran here too until the suite outgrew
#: its 30 minutes; `python benchmarks/sweep.py` still checks its ID, M, J and FD against
#: Pinocchio, and this line brings back its four-tip Λ_e:
#: HUMANOIDS["g1_hands_feet"] = (G1, G1_HANDS_FEET)
HUMANOIDS = {
    "talos_hands": (TALOS, TALOS_HANDS),
}


def humanoid(key):
    path, tips = HUMANOIDS[key]
    return soagen.load_urdf(erd_urdf(path), tips=tips, floating_base=True), erd_urdf(path)


def _compare_with_pinocchio(robot, oracle, states, rng):
    """Worst error of each reference function against Pinocchio, or a dense
    formula of Pinocchio's M, C, G, J, J̇q̇ ([KJR] (12), (14), (15) for the
    operational space terms); Λ(0)-based errors are divided by
    max(1, 1e-4·cond(Ω(0))) and compared only where cond(Ω(0)) < 1e6."""
    worst = {}

    def record(name, a, b, scale=1.0):
        worst[name] = max(worst.get(name, 0.0), rel(a, b) / scale)

    r = robot.tip_rows
    for q, qd, qdd, tau in states:
        f, u = rng.normal(size=r) * 10.0, rng.normal(size=r)
        M, Minv = oracle.mass_matrix(q), oracle.mass_matrix_inverse(q)
        record("inverse_dynamics", ref.inverse_dynamics(robot, q, qd, qdd), oracle.rnea(q, qd, qdd))
        record("mass_matrix", ref.mass_matrix(robot, q), M)
        record("mass_matrix_inverse", ref.mass_matrix_inverse(robot, q), Minv)
        record("forward_dynamics", ref.forward_dynamics(robot, q, qd, tau), oracle.aba(q, qd, tau))
        record("forward_dynamics_fd1", ref.forward_dynamics(robot, q, qd, tau, variant="FD1"), oracle.aba(q, qd, tau))
        if not robot.tips:
            continue
        J = oracle.jacobian(q)
        record("jacobian", ref.jacobian(robot, q), J)
        record("forward_kinematics", ref.forward_kinematics(robot, q), oracle.tip_poses(q))
        jdqd = oracle.jdot_qdot(q, qd)
        record("jdot_qdot", ref.jdot_qdot(robot, q, qd), jdqd)
        record("inverse_dynamics_tip_force", ref.inverse_dynamics(robot, q, qd, qdd, f), oracle.rnea(q, qd, qdd, f))
        record("tip_force_acceleration", ref.tip_force_acceleration(robot, q, f), -Minv @ J.T @ f)
        record("forward_dynamics_tip_force", ref.forward_dynamics(robot, q, qd, tau, f),
               oracle.aba(q, qd, tau, f))
        record("os_inertia_inverse", ref.os_inertia_inverse(robot, q), J @ Minv @ J.T)
        kappa = np.linalg.cond(J @ Minv @ J.T)
        if kappa < 1e6:
            scale = max(1.0, 1e-4 * kappa)
            G = oracle.gravity(q)
            C = oracle.bias(q, qd) - G
            Lam = np.linalg.inv(J @ Minv @ J.T)
            c, g = Lam @ (J @ Minv @ C - jdqd), Lam @ J @ Minv @ G
            record("os_inertia", ref.os_inertia(robot, q), oracle.os_inertia(q), scale)
            record("os_coriolis", ref.os_coriolis(robot, q, qd), c, scale)
            record("os_gravity", ref.os_gravity(robot, q), g, scale)
            record("os_bias", ref.os_bias(robot, q, qd), c + g, scale)
            record("osc_torque", ref.osc_torque(robot, q, qd, u), J.T @ (Lam @ u + c + g), scale)
    return worst


# a floating base carrying two 4-joint arms: 11 dof behind each hand, 14 in all, so Λ(0) (12 × 12) exists
TWO_ARMS = {"floating_two_arms": lambda: branching_robot(35, trunk=1, branches=2, per_branch=4, floating_base=True)}


@pytest.mark.parametrize("case", sorted(RANDOM) + sorted(TWO_ARMS))
def test_reference_matches_pinocchio_random(case):
    robot = {**RANDOM, **TWO_ARMS}[case]()
    assert robot.multi_dof
    rng = np.random.default_rng(1)
    states = [robot.random_state(rng) for _ in range(100)]
    worst = _compare_with_pinocchio(robot, Oracle(robot), states, rng)
    expected = {"inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "forward_dynamics_fd1"}
    if robot.tips:
        expected |= {"jacobian", "forward_kinematics", "jdot_qdot", "inverse_dynamics_tip_force",
                     "tip_force_acceleration", "forward_dynamics_tip_force", "os_inertia_inverse"}
    if case in TWO_ARMS or case == "floating_tree":
        expected |= {"os_inertia", "os_coriolis", "os_gravity", "os_bias", "osc_torque"}
    assert set(worst) >= expected, sorted(expected - set(worst))
    bad = {k: v for k, v in worst.items() if not v <= 1e-9}
    assert not bad, bad


@pytest.mark.parametrize("case", sorted(RANDOM))
def test_generated_matches_reference_random(case):
    robot, mod = built(f"multidof_{case}", RANDOM[case], **OPTIONS[case])
    results = check_module(robot, mod, samples=100, seed=2)
    assert list(results) == [s.name for s in F.select(robot, soagen.Options(**OPTIONS[case]))]
    assert_checked(robot, results, 100)   # Λ(0)-based functions UNTESTED where Λ(0) cannot exist


@pytest.mark.parametrize("key", sorted(HUMANOIDS))
def test_humanoid_three_routes(key):
    """Generated = reference = Pinocchio (URDF parsed by Pinocchio, free-flyer) on
    100 seeded states: ID, M, M⁻¹, FD, J and Λ_e."""
    robot, path = humanoid(key)
    assert robot.bodies[0].joint_type == "floating" and robot.nv == robot.nq - 1 >= 35
    _, mod = built(f"humanoid_{key}", lambda: robot, functions=HUMANOID_FUNCTIONS)
    oracle = Oracle(robot, urdf=path)
    rng = np.random.default_rng(3)
    worst, lam_checked = {}, 0
    for _ in range(100):
        q, qd, qdd, tau = robot.random_state(rng)
        routes = {
            "inverse_dynamics": (mod.inverse_dynamics(q, qd, qdd), ref.inverse_dynamics(robot, q, qd, qdd),
                                 oracle.rnea(q, qd, qdd)),
            "mass_matrix": (mod.mass_matrix(q), ref.mass_matrix(robot, q), oracle.mass_matrix(q)),
            "mass_matrix_inverse": (mod.mass_matrix_inverse(q), ref.mass_matrix_inverse(robot, q),
                                    oracle.mass_matrix_inverse(q)),
            "forward_dynamics": (mod.forward_dynamics(q, qd, tau), ref.forward_dynamics(robot, q, qd, tau),
                                 oracle.aba(q, qd, tau)),
            "jacobian": (mod.jacobian(q), ref.jacobian(robot, q), oracle.jacobian(q)),
        }
        if np.linalg.cond(ref.os_inertia_inverse(robot, q)) < 1e6:
            lam_checked += 1
            routes["os_inertia"] = (mod.os_inertia(q), ref.os_inertia(robot, q), oracle.os_inertia(q))
        for name, (gen, reference, pin) in routes.items():
            worst[name] = max(worst.get(name, 0.0), rel(gen, reference), rel(reference, pin))
    assert lam_checked >= 50
    bad = {k: v for k, v in worst.items() if not v <= 1e-9}
    assert not bad, bad


def test_humanoid_lambda_coupling_blocks():
    """Λ_e for two hands is 12 × 12 with non-zero coupling blocks (the hands share
    the torso); Ω(0)'s coupling block equals J_1 M⁻¹ J_2ᵀ."""
    robot, _ = humanoid("talos_hands")
    _, mod = built("humanoid_talos_hands", lambda: robot, functions=HUMANOID_FUNCTIONS)
    q = robot.random_state(np.random.default_rng(4))[0]
    Lam = mod.os_inertia(q)
    assert Lam.shape == (12, 12) and np.abs(Lam[:6, 6:]).max() > 1e-3
    J, Minv = ref.jacobian(robot, q), ref.mass_matrix_inverse(robot, q)
    np.testing.assert_allclose(np.linalg.inv(Lam)[:6, 6:], J[:6] @ Minv @ J[6:].T, rtol=1e-9, atol=1e-9)


def test_quaternions_need_not_be_unit():
    """The rotation of q/|q| is used: scaling a quaternion changes nothing, in the
    generated code and the reference; a zero quaternion is rejected."""
    robot, mod = built("multidof_floating_tree", RANDOM["floating_tree"], **OPTIONS["floating_tree"])
    rng = np.random.default_rng(5)
    q, qd, qdd, tau = robot.random_state(rng)
    scaled = q.copy()
    for k, b in enumerate(robot.bodies):
        if b.nq > 1:
            s = robot.qslice(k)
            scaled[s.stop - 4:s.stop] *= rng.uniform(0.2, 5.0)
    for fn in ("inverse_dynamics", "forward_dynamics"):
        args = (qd, qdd) if fn == "inverse_dynamics" else (qd, tau)
        np.testing.assert_allclose(getattr(mod, fn)(scaled, *args), getattr(mod, fn)(q, *args), rtol=1e-12,
                                   atol=1e-12)
        np.testing.assert_allclose(getattr(ref, fn)(robot, scaled, *args), getattr(ref, fn)(robot, q, *args),
                                   rtol=1e-12, atol=1e-12)
    zero = q.copy()
    s = robot.qslice(0)
    zero[s.stop - 4:s.stop] = 0.0
    with pytest.raises(ValueError, match="quaternion"):
        mod.inverse_dynamics(zero, qd, qdd)


@pytest.mark.parametrize("case", ["spherical_tree", "floating_tree"])
def test_integrate_matches_pinocchio(case):
    robot = RANDOM[case]()
    oracle = Oracle(robot)
    rng = np.random.default_rng(6)
    for _ in range(20):
        q, v, _, _ = robot.random_state(rng)
        dt = rng.uniform(0.01, 0.5)
        got = robot.integrate(q, v, dt)
        want = oracle.integrate(q, v, dt)
        # the same rotation (q and −q are one) and position
        for k, b in enumerate(robot.bodies):
            s = robot.qslice(k)
            if b.nq > 1:
                qa, qb = got[s][-4:], want[s][-4:]
                assert abs(abs(qa @ qb) - 1.0) < 1e-12 and abs(np.linalg.norm(qa) - 1.0) < 1e-12
                np.testing.assert_allclose(got[s][:-4], want[s][:-4], atol=1e-12)
            else:
                np.testing.assert_allclose(got[s], want[s], atol=1e-12)


def test_random_configuration_and_sizes():
    robot = RANDOM["floating_tree"]()
    rng = np.random.default_rng(7)
    q = robot.random_configuration(rng)
    assert q.shape == (robot.nq,) and robot.nq > robot.nv
    for k, b in enumerate(robot.bodies):
        if b.nq > 1:
            assert abs(np.linalg.norm(q[robot.qslice(k)][-4:]) - 1.0) < 1e-12
    neutral = robot.neutral_configuration()
    assert neutral.shape == (robot.nq,)
    np.testing.assert_allclose(robot.integrate(neutral, np.zeros(robot.nv), 1.0), neutral, atol=1e-15)


@pytest.mark.parametrize("case", sorted(RANDOM))
def test_dense_operator_identities(case):
    """The papers' operator identities with n_k-dof joints, on dense block
    operators (H is nv × 6nb, D block diagonal): M = HφMφ*H*,
    M⁻¹ = (I − HψK)*D⁻¹(I − HψK), J = B*φ*H*, Λ⁻¹ = JM⁻¹J* = B*ψ*H*D⁻¹HψB."""
    from tests.support import assert_close

    robot = RANDOM[case]()
    rng = np.random.default_rng(8)
    eye = np.eye(robot.nv)
    for _ in range(3):
        q, qd, _, tau = robot.random_state(rng)
        op = dense_operators(robot, q)
        H, phi, psi, K, D, B = op["H"], op["phi"], op["psi"], op["K"], op["D"], op["B"]
        assert_close(H @ op["P"] @ H.T, D, what="D = HPH*")
        M = ref.mass_matrix(robot, q)
        assert_close(M, H @ phi @ op["M"] @ phi.T @ H.T, what="M")
        Linv = eye - H @ psi @ K
        Minv = Linv.T @ np.linalg.inv(D) @ Linv
        assert_close(ref.mass_matrix_inverse(robot, q), Minv, what="M^-1")
        assert_close(Minv @ M, eye, rtol=1e-9, what="M^-1 M")
        bias = ref.bias_forces(robot, q, qd)
        assert_close(ref.forward_dynamics(robot, q, qd, tau), Minv @ (tau - bias), rtol=1e-9, what="FD")
        if robot.tips:
            J = B.T @ phi.T @ H.T
            assert_close(ref.jacobian(robot, q), J, what="J")
            assert_close(ref.os_inertia_inverse(robot, q), J @ Minv @ J.T, rtol=1e-9, what="Omega = J M^-1 J*")
            assert_close(B.T @ psi.T @ H.T @ np.linalg.inv(D) @ H @ psi @ B, J @ Minv @ J.T, rtol=1e-9,
                         what="B*psi*H*D^-1 H psi B")
