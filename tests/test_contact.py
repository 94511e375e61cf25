"""Point tips, contact dynamics and impulse dynamics: three routes.

1. generated C (FD2, Ω(0) and the tip-force accelerations [RJK (18)], :mod:`soagen.passes.contact`)
   = numpy reference (:mod:`soagen.reference.contact`, dense Jacobian and FD4) by ``soagen check``'s
   comparison, on solo12's four point feet and on random trees mixing point and full tips;
2. reference = Pinocchio: its ``forwardDynamics`` / ``impulseDynamics`` (KKT solves with its own M,
   nonlinear effects, frame Jacobians and classical accelerations; the TALOS's two flat feet as 6-D
   contacts, solo12's and ANYmal C's point feet, a Panda with a point tip) and, for the point tips
   themselves, ``getFrameJacobian``/``getFrameClassicalAcceleration`` (the linear rows of
   LOCAL_WORLD_ALIGNED) with the dense operational-space formulas;
3. the defining properties: J q̈ + J̇q̇ = 0 and τ = M q̈ + C + G + Jᵀ f (contact);
   J q̇⁺ = −e J q̇⁻ and M (q̇⁺ − q̇⁻) = −Jᵀ p (impulse), from Pinocchio's M, C + G and J.

The derivatives of the contact dynamics: both generated members (forward mode, KKT) = the
reference (the KKT conditions differentiated with its own tangent Newton–Euler pass) = central
differences of Pinocchio's ``forwardDynamics`` along its tangent space (``pin.integrate``); those
of the impulse dynamics likewise, against central differences of ``impulseDynamics`` and the
closed forms along q̇⁻ from Pinocchio's M and J.
"""
from __future__ import annotations

import warnings

import numpy as np
import pinocchio as pin
import pytest

import soagen
from soagen import reference as ref
from soagen.check import check_module
from soagen.functions import select
from soagen.model import pinocchio_convention as pc
from soagen.model.errors import ModelWarning
from tests.support import assert_checked, rel
from tests.support.builds import built
from tests.support.oracle import LWA, Oracle, central_differences, erd_urdf
from tests.support.robots import random_robot, with_point_tips

SOLO = "solo_description/robots/solo12.urdf"
SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
ANYMAL = "anymal_c_simple_description/urdf/anymal.urdf"
ANYMAL_FEET = ["LF_FOOT", "RF_FOOT", "LH_FOOT", "RH_FOOT"]
TALOS = "talos_data/robots/talos_reduced.urdf"
TALOS_FEET = ["left_sole_link", "right_sole_link"]
PANDA = "panda_description/urdf/panda.urdf"
PANDA_LOCK = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
FUNCTIONS = ["jacobian", "jdot_qdot", "inverse_dynamics_tip_force", "tip_force_acceleration", "os_inertia_inverse",
             "os_inertia", "os_bias", "osc_torque", "contact_dynamics", "impulse_dynamics"]


def solo12():
    return soagen.load_urdf(erd_urdf(SOLO), tips=[soagen.point_tip(f) for f in SOLO_FEET], floating_base=True)


def mixed_tree():
    """A random floating tree with spherical joints: tip 0 a full tip, the others point tips with offsets."""
    robot = random_robot(61, 6, tree=True, tips=3, floating_base=True, spherical_fraction=0.3)
    return with_point_tips(robot, range(1, len(robot.tips)))


# ------------------------------------------------------------ route 1: generated = reference
GENERATED = {"solo12": solo12, "mixed_tree": mixed_tree}


@pytest.mark.parametrize("case", sorted(GENERATED))
def test_generated_matches_reference(case):
    robot, mod = built(f"contact_{case}", GENERATED[case], functions=FUNCTIONS)
    results = check_module(robot, mod, samples=30, seed=3)
    assert sorted(results) == sorted(FUNCTIONS)
    assert_checked(robot, results, 30)
    assert all(results[f].compared == 30 for f in ("contact_dynamics", "impulse_dynamics"))


def test_point_tips_have_three_rows():
    robot, mod = built("contact_solo12", solo12, functions=FUNCTIONS)
    q = robot.random_configuration(np.random.default_rng(0))
    assert robot.tip_rows == 12 and mod.jacobian(q).shape == (12, 18) and mod.os_inertia(q).shape == (12, 12)
    full = with_point_tips(robot, point=False)
    # the point tip's rows are the linear rows of the full tip, and its Ω(0) the matching block
    lin = [6 * i + r for i in range(4) for r in (3, 4, 5)]
    assert rel(ref.jacobian(robot, q), ref.jacobian(full, q)[lin]) < 1e-15
    assert rel(mod.os_inertia_inverse(q), ref.os_inertia_inverse(full, q)[np.ix_(lin, lin)]) < 1e-12
    qd = np.random.default_rng(1).normal(size=robot.nv)
    # a number where the restitution (1,) is expected, as dt elsewhere
    assert np.array_equal(mod.impulse_dynamics(q, qd, 0.3)[1], mod.impulse_dynamics(q, qd, [0.3])[1])


def test_lambda_of_four_point_feet_exists_and_six_row_feet_warn():
    """Four point feet ask 12 rows of a robot with 18 degrees of freedom: no warning, Λ(0) exists
    (compared on every state above); as 6-D feet they ask 24 rows: warned at once, naming point tips."""
    feet = solo12()
    with warnings.catch_warnings():
        warnings.simplefilter("error", ModelWarning)
        select(feet, soagen.Options(functions=["os_inertia", "contact_dynamics"]))
    full = with_point_tips(feet, point=False)
    with pytest.warns(ModelWarning, match=r"24 rows of Lambda\(0\) but only 18 .*point tips"):
        select(full, soagen.Options(functions=["os_inertia", "contact_dynamics"]))


# ------------------------------------------------------------ route 2: reference = Pinocchio
def pinocchio_contact(robot, oracle, q, qd, tau, e):
    """(q̈, f) of ``forwardDynamics`` and (q̇⁺, p) of ``impulseDynamics``, in soagen's conventions:
    Pinocchio's multipliers are the forces on the robot, soagen's f and p those on the environment."""
    perm = oracle.v(np.arange(robot.nv)).astype(int)      # v_pin = v[perm]
    J = oracle.jacobian(q)[:, perm]                        # constraint rows in soagen's order, Pinocchio's columns
    gamma = oracle.jdot_qdot(q, qd)
    qp, vp = oracle.q(q), oracle.v(qd)
    model, data = oracle.model, oracle.data
    qdd = pin.forwardDynamics(model, data, qp, vp, oracle.v(tau), J, gamma)
    f = -np.array(data.lambda_c)
    qd_plus = pin.impulseDynamics(model, data, qp, vp, J, e)
    p = -np.array(data.impulse_c)
    return oracle._from(qdd), f, oracle._from(qd_plus), p


PINOCCHIO = {
    "solo12_point_feet": (SOLO, [soagen.point_tip(f) for f in SOLO_FEET], True, None),
    "anymal_c_point_feet": (ANYMAL, [soagen.point_tip(f) for f in ANYMAL_FEET], True, None),
    "talos_flat_feet": (TALOS, TALOS_FEET, True, None),
    "panda_point_tip": (PANDA, [soagen.point_tip("panda_hand")], False, PANDA_LOCK),
}


def pinocchio_case(case):
    """(robot, Oracle) of a :data:`PINOCCHIO` case, Pinocchio parsing the same URDF."""
    path, tips, floating, lock = PINOCCHIO[case]
    robot = soagen.load_urdf(erd_urdf(path), tips=tips, floating_base=floating, lock=lock)
    return robot, Oracle(robot, urdf=erd_urdf(path), lock=lock)


@pytest.mark.parametrize("case", sorted(PINOCCHIO))
def test_reference_matches_pinocchio(case):
    robot, oracle = pinocchio_case(case)
    rng = np.random.default_rng(7)
    for _ in range(4):
        q, qd, _, tau = oracle.random_state(rng)
        tau = 10.0 * tau
        e = rng.uniform(0.0, 1.0)
        qdd_p, f_p, qdp_p, p_p = pinocchio_contact(robot, oracle, q, qd, tau, e)
        J = oracle.jacobian(q)
        # bounds scaled by the conditioning of what is solved (Ω(0) = J M⁻¹ Jᵀ)
        tol = 1e-10 * max(1.0, np.linalg.cond(J @ np.linalg.solve(oracle.mass_matrix(q), J.T)) * 1e-4)
        qdd, f = ref.contact_dynamics(robot, q, qd, tau)
        assert rel(qdd, qdd_p) < tol and rel(f, f_p) < tol, case
        qd_plus, p = ref.impulse_dynamics(robot, q, qd, e)
        assert rel(qd_plus, qdp_p) < tol and rel(p, p_p) < tol, case
        # route 3, from Pinocchio's M, C + G, J, J̇q̇: the defining equations
        M, b = oracle.mass_matrix(q), oracle.bias(q, qd)
        assert rel(M @ qdd + b + J.T @ f, tau) < tol
        assert np.abs(J @ qdd + oracle.jdot_qdot(q, qd)).max() < tol * max(1.0, np.abs(J @ qdd).max())
        assert rel(M @ (qd_plus - qd), -J.T @ p) < tol
        assert np.abs(J @ qd_plus + e * (J @ qd)).max() < tol * max(1.0, np.abs(J @ qd).max())
        assert np.abs(f).max() > 1.0 and np.abs(p).max() > 1e-2        # not a vacuous zero


def test_point_tip_kinematics_and_os_match_pinocchio():
    """A floating tree mixing a full tip and point tips with offsets (Pinocchio OP_FRAMEs built from the
    Robot): J, J̇q̇, Ω(0), Λ(0), c(0) + g(0) and the OSC torque against dense formulas of Pinocchio's."""
    robot = mixed_tree()
    oracle = Oracle(robot)
    assert any(np.any(t.offset != 0) for t in robot.tips if t.point)
    rng = np.random.default_rng(2)
    for _ in range(5):
        q, qd, _, _ = robot.random_state(rng)
        J, jdqd = oracle.jacobian(q), oracle.jdot_qdot(q, qd)
        assert J.shape == (6 + 3 + 3, robot.nv)
        assert rel(ref.jacobian(robot, q), J) < 1e-12 and rel(ref.jdot_qdot(robot, q, qd), jdqd) < 1e-12
        M, b = oracle.mass_matrix(q), oracle.bias(q, qd)
        Om = J @ np.linalg.solve(M, J.T)
        tol = 1e-10 * max(1.0, np.linalg.cond(Om) * 1e-4)
        assert rel(ref.os_inertia_inverse(robot, q), Om) < 1e-10
        Lam = np.linalg.inv(Om)
        assert rel(ref.os_inertia(robot, q), Lam) < tol
        assert rel(ref.os_bias(robot, q, qd), Lam @ (J @ np.linalg.solve(M, b) - jdqd)) < tol
        u = rng.normal(size=robot.tip_rows)
        assert rel(ref.osc_torque(robot, q, qd, u), J.T @ (Lam @ u + Lam @ (J @ np.linalg.solve(M, b) - jdqd))) < tol


# ------------------------------------------------------------ derivatives of the contact dynamics
def small_tree():
    """4 joints, two of them spherical, two point tips: the smallest robot with tangent-space
    directions, coupled tips and a free direction left (6 rows of 8 velocities)."""
    robot = random_robot(63, 4, tree=True, tips=2, spherical_fraction=0.5, prismatic_fraction=0.3)
    return with_point_tips(robot)


DERIVATIVES = ["contact_dynamics_derivatives", "contact_dynamics_derivatives_forward", "contact_dynamics_derivatives_kkt",
               "contact_dynamics_derivatives_kkt_analytic", "impulse_dynamics_derivatives"]


def test_generated_contact_derivatives_match_reference():
    robot, mod = built("contact_derivatives_small_tree", small_tree, functions=DERIVATIVES)
    muls = {label: mod.ops[f"contact_dynamics_derivatives_{label}"]["mul"] for label in ("forward", "kkt", "kkt_analytic")}
    assert muls["kkt"] < muls["forward"] / 2                               # the KKT route is much shorter
    assert mod.choices["contact_dynamics_derivatives"] in ("kkt", "kkt_analytic")
    results = check_module(robot, mod, samples=20, seed=4)
    assert_checked(robot, results, 20)
    assert all(results[f].compared == 20 for f in DERIVATIVES)


#: solo12's derivatives build, shared by the tests of the Baumgarte-stabilized contact dynamics (the member the
#: family picks on solo12 alone: both are compared on the floating tree)
SOLO12_DERIVATIVES = ["contact_dynamics_derivatives", "impulse_dynamics_derivatives", "contact_dynamics_baumgarte",
                      "contact_dynamics_baumgarte_derivatives_kkt_analytic"]


def test_generated_contact_derivatives_match_reference_on_solo12():
    """The family function (the KKT solve through the halves of the M solve, with Ĵ = J P L⁻ᵀ) and
    the impulse dynamics derivatives on a real URDF: solo12's four point feet, against the
    reference, which the tests below hold to Pinocchio's differences; all eight (six) outputs
    compared, none near zero."""
    robot, mod = built("contact_derivatives_solo12", solo12, functions=SOLO12_DERIVATIVES)
    rng = np.random.default_rng(5)
    for _ in range(3):
        q, qd, _, tau = robot.random_state(rng)
        e = rng.uniform(0.0, 1.0)
        J = ref.jacobian(robot, q)
        cond = np.linalg.cond(J @ np.linalg.solve(ref.mass_matrix(robot, q), J.T))
        for got, want in ((mod.contact_dynamics_derivatives(q, qd, 10.0 * tau),
                           ref.contact_dynamics_derivatives(robot, q, qd, 10.0 * tau)),
                          (mod.impulse_dynamics_derivatives(q, qd, e), ref.impulse_dynamics_derivatives(robot, q, qd, e))):
            for a, b in zip(got, want):
                assert np.abs(b).max() > 1e-3
                assert rel(np.asarray(a), b) < 1e-10 * max(1.0, cond * 1e-3)


def test_generated_impulse_derivatives_match_reference_with_a_full_tip():
    """The impulse derivatives where a full (6-row) tip and point tips with offsets mix, on a
    floating tree with spherical joints (tangent-space directions of two kinds)."""
    robot, mod = built("impulse_derivatives_mixed_tree", mixed_tree, functions=["impulse_dynamics_derivatives"])
    assert not robot.tips[0].point and all(t.point for t in robot.tips[1:])
    results = check_module(robot, mod, samples=20, seed=6)
    assert_checked(robot, results, 20)
    assert results["impulse_dynamics_derivatives"].compared == 20


def floating_full_and_point():
    """A floating tree of 4 joints in two branches: tip 0 a full tip (6 rows), tip 1 a point tip."""
    return with_point_tips(random_robot(64, 4, tree=True, tips=2, floating_base=True), [1])


def test_generated_contact_derivatives_match_reference_with_a_full_tip():
    """The contact dynamics derivatives (the family function) on a floating base where a full tip's
    moment rows and a point tip mix, against the reference on every state."""
    robot, mod = built("contact_derivatives_full_and_point", floating_full_and_point,
                       functions=["contact_dynamics_derivatives"])
    assert robot.bodies[0].joint_type == "floating"
    assert [len(t.rows) for t in robot.tips] == [6, 3]
    results = check_module(robot, mod, samples=10, seed=3)
    assert_checked(robot, results, 10)
    assert results["contact_dynamics_derivatives"].compared == 10


def pinocchio_jacobian(robot, oracle, qp):
    """The tips' J (soagen's rows and column order) at Pinocchio's configuration ``qp``."""
    model, data = oracle.model, oracle.data
    pin.computeJointJacobians(model, data, qp)
    pin.updateFramePlacements(model, data)
    return pc.jacobian_from_pinocchio(robot, [pin.getFrameJacobian(model, data, f, LWA) for f in oracle.frames])


def pinocchio_differences(robot, oracle, q, qd, tau, h=1e-6):
    """Central differences of Pinocchio's forwardDynamics (q̈, f) along q (tangent space: pin.integrate),
    q̇ and τ; -> six arrays in the order of ``contact_dynamics_derivatives``."""
    perm = oracle.v(np.arange(robot.nv)).astype(int)
    model, data = oracle.model, oracle.data

    def solve(qp, vp, taup):
        J = pinocchio_jacobian(robot, oracle, qp)
        pin.forwardKinematics(model, data, qp, vp, np.zeros(model.nv))
        gamma = np.concatenate([np.concatenate([a.angular, a.linear]) for a in
                                (pin.getFrameClassicalAcceleration(model, data, f, LWA) for f in oracle.frames)])
        gamma = gamma[[6 * i + r for i, t in enumerate(robot.tips) for r in t.rows]]
        qdd = pin.forwardDynamics(model, data, qp, vp, taup, J[:, perm], gamma)
        return np.concatenate([oracle._from(qdd), -np.array(data.lambda_c)])

    out = central_differences(robot, oracle, solve, q, (qd, tau), h)
    n = robot.nv
    return [d[:n] for d in out] + [d[n:] for d in out]


def pinocchio_impulse_differences(robot, oracle, q, qd, e, h=1e-6):
    """Central differences of Pinocchio's impulseDynamics (q̇⁺, p) along q (tangent space) and q̇⁻;
    -> four arrays in the order of ``impulse_dynamics_derivatives``'s derivatives."""
    perm = oracle.v(np.arange(robot.nv)).astype(int)

    def solve(qp, vp):
        qd_plus = pin.impulseDynamics(oracle.model, oracle.data, qp, vp, pinocchio_jacobian(robot, oracle, qp)[:, perm], e)
        return np.concatenate([oracle._from(qd_plus), -np.array(oracle.data.impulse_c)])

    out = central_differences(robot, oracle, solve, q, (qd,), h)
    n = robot.nv
    return [d[:n] for d in out] + [d[n:] for d in out]


@pytest.mark.parametrize("case", ["solo12_point_feet", "talos_flat_feet"])
def test_contact_derivatives_reference_matches_pinocchio_differences(case):
    robot, oracle = pinocchio_case(case)
    rng = np.random.default_rng(8)
    for _ in range(2):
        q, qd, _, tau = oracle.random_state(rng)
        derivatives = ref.contact_dynamics_derivatives(robot, q, qd, 10.0 * tau)[2:]
        differences = pinocchio_differences(robot, oracle, q, qd, 10.0 * tau)
        J = oracle.jacobian(q)
        cond = np.linalg.cond(J @ np.linalg.solve(oracle.mass_matrix(q), J.T))
        for name, a, b in zip(("dqdd_dq", "dqdd_dqd", "dqdd_dtau", "df_dq", "df_dqd", "df_dtau"), derivatives,
                              differences):
            assert rel(a, b) < 1e-6 * max(1.0, cond * 1e-3), (case, name, rel(a, b))
            assert np.abs(b).max() > 1e-3, (case, name)



@pytest.mark.parametrize("case", ["solo12_point_feet", "talos_flat_feet"])
def test_impulse_derivatives_reference_matches_pinocchio_differences(case):
    """The reference's impulse derivatives (the differentiated conditions, dense) against central
    differences of Pinocchio's impulseDynamics; route 3, from Pinocchio's M and J: along q̇⁻ the
    closed forms ∂p/∂q̇⁻ = (1 + e)ΛJ and ∂q̇⁺/∂q̇⁻ = 1 − M⁻¹Jᵀ∂p/∂q̇⁻."""
    robot, oracle = pinocchio_case(case)
    rng = np.random.default_rng(9)
    for _ in range(2):
        q, qd, _, _ = oracle.random_state(rng)
        e = rng.uniform(0.0, 1.0)
        derivatives = ref.impulse_dynamics_derivatives(robot, q, qd, e)[2:]
        differences = pinocchio_impulse_differences(robot, oracle, q, qd, e)
        J, M = oracle.jacobian(q), oracle.mass_matrix(q)
        Om = J @ np.linalg.solve(M, J.T)
        cond = np.linalg.cond(Om)
        for name, a, b in zip(("dqdplus_dq", "dqdplus_dqd", "dp_dq", "dp_dqd"), derivatives, differences):
            assert rel(a, b) < 1e-6 * max(1.0, cond * 1e-3), (case, name, rel(a, b))
            assert np.abs(b).max() > 1e-3, (case, name)
        dp_dqd = (1.0 + e) * np.linalg.solve(Om, J)
        tol = 1e-10 * max(1.0, cond * 1e-4)
        assert rel(derivatives[3], dp_dqd) < tol
        assert rel(derivatives[1], np.eye(robot.nv) - np.linalg.solve(M, J.T @ dp_dqd)) < tol


# ------------------------------------------------------------ Baumgarte stabilization (point tips)
def baumgarte_inputs(robot, rng, per_tip=False):
    """Gains kp (1/s²), kd (1/s) and reference positions x_ref (m) per tip row, (r,) each, none zero;
    ``per_tip``: one kp and kd per tip (Pinocchio's corrector has one per contact)."""
    m = len(robot.tips)
    if per_tip:
        return np.repeat(rng.uniform(5.0, 50.0, m), 3), np.repeat(rng.uniform(1.0, 20.0, m), 3), rng.normal(size=3 * m)
    return rng.uniform(5.0, 50.0, 3 * m), rng.uniform(1.0, 20.0, 3 * m), rng.normal(size=3 * m)


def floating_point_tree():
    """A floating tree of 4 joints in two branches, both tips point tips with offsets."""
    return with_point_tips(random_robot(64, 4, tree=True, tips=2, floating_base=True))


BAUMGARTE = ["contact_dynamics_baumgarte", "contact_dynamics_baumgarte_derivatives_kkt",
             "contact_dynamics_baumgarte_derivatives_kkt_analytic"]


def test_generated_baumgarte_matches_reference():
    """Both members of the Baumgarte derivatives and the dynamics on a floating tree with point tips, kp, kd
    and x_ref drawn per row (soagen check's inputs), against the reference on every state."""
    robot, mod = built("baumgarte_floating_tree", floating_point_tree, functions=BAUMGARTE)
    assert robot.bodies[0].joint_type == "floating" and all(t.point and np.any(t.offset) for t in robot.tips)
    results = check_module(robot, mod, samples=10, seed=3)
    assert_checked(robot, results, 10)
    assert all(results[f].compared == 10 for f in BAUMGARTE)


def test_generated_baumgarte_matches_reference_on_solo12():
    """The derivatives (the member picked on solo12) and the dynamics on solo12's four point feet, gains and x_ref
    different on every row, all outputs compared, none near zero; the gains change the answer (not a vacuous
    Baumgarte term)."""
    robot, mod = built("contact_derivatives_solo12", solo12, functions=SOLO12_DERIVATIVES)
    rng = np.random.default_rng(11)
    for _ in range(2):
        q, qd, _, tau = robot.random_state(rng)
        gains = baumgarte_inputs(robot, rng)
        J = ref.jacobian(robot, q)
        tol = 1e-10 * max(1.0, np.linalg.cond(J @ np.linalg.solve(ref.mass_matrix(robot, q), J.T)) * 1e-3)
        got = mod.contact_dynamics_baumgarte(q, qd, 10.0 * tau, *gains)
        want = ref.contact_dynamics_baumgarte(robot, q, qd, 10.0 * tau, *gains)
        assert rel(got[0], want[0]) < tol and rel(got[1], want[1]) < tol
        for a, b in zip(mod.contact_dynamics_baumgarte_derivatives(q, qd, 10.0 * tau, *gains, variant="kkt_analytic"),
                        ref.contact_dynamics_baumgarte_derivatives(robot, q, qd, 10.0 * tau, *gains)):
            assert np.abs(b).max() > 1e-3 and rel(np.asarray(a), b) < tol
        assert rel(want[1], ref.contact_dynamics(robot, q, qd, 10.0 * tau)[1]) > 1e-2


def test_baumgarte_needs_point_tips():
    """A full tip's orientation error is not a difference of rows: asking for the Baumgarte functions of a
    robot with one is refused, naming them; left out of every variant otherwise."""
    with pytest.raises(soagen.OptionsError, match="contact_dynamics_baumgarte need point tips only"):
        select(floating_full_and_point(), soagen.Options(functions=["contact_dynamics_baumgarte", "jacobian"]))
    everything = soagen.Options(variants=["contact_dynamics_baumgarte_derivatives"])
    assert not {s.name for s in select(floating_full_and_point(), everything)} & set(BAUMGARTE)
    assert set(BAUMGARTE[1:]) <= {s.name for s in select(floating_point_tree(), everything)}


def pinocchio_baumgarte(robot, oracle, qp, vp, taup, kp, kd, x_ref):
    """q̈ (Pinocchio's order) and f (soagen's) of Pinocchio's constraintDynamics at Pinocchio's q, v, τ: per
    tip a CONTACT_3D RigidConstraintModel of its frame against the world (joint 0) at x_ref, LOCAL_WORLD_ALIGNED,
    Baumgarte corrector (kp, kd) of its first row; its error is −Kp (p − x_ref) − Kd v, world axes."""
    model, data = oracle.model, oracle.data
    models, datas = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for i, fid in enumerate(oracle.frames):
        frame = model.frames[fid]
        c = pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, frame.parentJoint, frame.placement, 0,
                                     pin.SE3(np.eye(3), x_ref[3 * i:3 * i + 3]), LWA)
        c.setBaumgarteCorrectorParameters(pin.BaumgarteCorrectorParameters(kp[3 * i], kd[3 * i]))
        models.append(c)
        datas.append(c.createData())
    pin.initConstraintDynamics(model, data, models, datas)
    qdd = pin.constraintDynamics(model, data, qp, vp, taup, models, datas)
    return qdd, -np.array(data.lambda_c)


def test_baumgarte_reference_matches_pinocchio():
    """solo12's point feet: the reference's q̈, f = Pinocchio's constraintDynamics with each contact's Baumgarte
    corrector and anchor; the defining equations from Pinocchio's M, C + G, J, J̇q̇ and the feet's positions;
    the reference's derivatives = central differences of constraintDynamics along pin.integrate's tangent
    space, q̇ and τ."""
    robot, oracle = pinocchio_case("solo12_point_feet")
    rng = np.random.default_rng(12)
    q, qd, _, tau = oracle.random_state(rng)
    tau = 10.0 * tau
    kp, kd, x_ref = baumgarte_inputs(robot, rng, per_tip=True)
    J, M = oracle.jacobian(q), oracle.mass_matrix(q)
    cond = np.linalg.cond(J @ np.linalg.solve(M, J.T))
    tol = 1e-10 * max(1.0, cond * 1e-4)
    qdd_p, f_p = pinocchio_baumgarte(robot, oracle, oracle.q(q), oracle.v(qd), oracle.v(tau), kp, kd, x_ref)
    qdd, f = ref.contact_dynamics_baumgarte(robot, q, qd, tau, kp, kd, x_ref)
    assert rel(qdd, oracle._from(qdd_p)) < tol and rel(f, f_p) < tol
    p = oracle.tip_poses(q)[:, :3, 3].ravel()
    assert rel(M @ qdd + oracle.bias(q, qd) + J.T @ f, tau) < tol
    assert rel(J @ qdd + oracle.jdot_qdot(q, qd), -kp * (p - x_ref) - kd * (J @ qd)) < tol
    assert rel(f, ref.contact_dynamics(robot, q, qd, tau)[1]) > 1e-2          # the gains change f

    def solve(qp, vp, taup):
        qdd_p, f_p = pinocchio_baumgarte(robot, oracle, qp, vp, taup, kp, kd, x_ref)
        return np.concatenate([oracle._from(qdd_p), f_p])

    differences = central_differences(robot, oracle, solve, q, (qd, tau))
    n = robot.nv
    derivatives = ref.contact_dynamics_baumgarte_derivatives(robot, q, qd, tau, kp, kd, x_ref)[2:]
    for name, a, b in zip(("dqdd_dq", "dqdd_dqd", "dqdd_dtau", "df_dq", "df_dqd", "df_dtau"), derivatives,
                          [d[:n] for d in differences] + [d[n:] for d in differences]):
        assert rel(a, b) < 1e-6 * max(1.0, cond * 1e-3), (name, rel(a, b))
        assert np.abs(b).max() > 1e-3, name
