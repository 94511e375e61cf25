"""Second derivatives of the dynamics: the numpy reference (:mod:`soagen.reference.second_derivatives`,
complex steps of its own tangent Newton–Euler passes) against Pinocchio.

* the inverse-dynamics tensors ∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇, ∂M/∂q = central differences of Pinocchio's
  ``computeRNEADerivatives`` along ``pin.integrate`` (q, the iterated local derivative) and along q̇;
  Pinocchio's own C++ ``ComputeRNEASecondOrderDerivatives`` is compared in the benchmark
  (``benchmarks/run.py``, its ``pinocchio`` backend: a header-only build of minutes);
* the contracted Hessians of λᵀτ, λᵀq̈ and λᵀq̈ + λ_fᵀf = the symmetric part of the central differences
  of Pinocchio's gradients built from ``computeRNEADerivatives``, ``computeABADerivatives`` and
  ``computeConstraintDynamicsDerivatives`` (four point feet, LOCAL_WORLD_ALIGNED, as ``contact_dynamics``);
* the Hessian of λᵀτ(q ⊕ δq) = second differences of λᵀ ``pin.rnea`` at ``pin.integrate(q, δq)``
  (the exponential's second-order term of a quaternion joint included; no first derivative involved).

Robots: the Panda, the UR5, solo12 (free-flyer, four point feet) and a seeded random tree with a
floating base, spherical and prismatic joints.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import soagen
from soagen import reference as ref
from soagen.model import pinocchio_convention as pc
from tests.support import rel
from tests.support.oracle import LWA, Oracle, central_differences, erd_urdf
from tests.support.robots import random_robot, with_point_tips

SOLO_FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
URDF = {
    "panda": ("panda_description/urdf/panda.urdf", ["panda_hand"], False,
              {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", ["ee_link"], False, None),
    "solo12": ("solo_description/robots/solo12.urdf", [soagen.point_tip(f) for f in SOLO_FEET], True, None),
}
H = 1e-6          # central-difference step of the first derivatives (error ~1e-9 relative)
RTOL = 1e-6       # reference (rounding) against those differences


def robot_and_oracle(case):
    """(robot, Oracle): Pinocchio parsing the same URDF, or joint by joint for the random tree
    (floating base, spherical and prismatic joints, two point tips)."""
    if case == "floating_tree":
        robot = random_robot(7, 4, tree=True, prismatic_fraction=0.4, tips=2, spherical_fraction=0.5,
                             floating_base=True)
        robot = with_point_tips(robot)
        kinds = {b.joint_type for b in robot.bodies}
        assert {"floating", "spherical", "prismatic"} <= kinds, kinds
        return robot, Oracle(robot)
    path, tips, floating, lock = URDF[case]
    robot = soagen.load_urdf(erd_urdf(path), tips=tips, floating_base=floating, lock=lock)
    return robot, Oracle(robot, urdf=erd_urdf(path), lock=lock)


def state(robot, oracle, seed):
    q, qd, qdd, tau = oracle.random_state(np.random.default_rng(seed))
    return q, 2.0 * qd, 5.0 * qdd, 20.0 * tau


def differences(robot, oracle, first, q, vectors, h=H):
    """Central differences of ``first(qp, *vectors_pin) -> [arrays (rows, n)]`` (soagen's rows and
    columns) along q (tangent space: ``pin.integrate``) and along each of ``vectors``;
    -> [[tensor (rows, n, n), index 2 the direction] per output] per direction (q first)."""
    shapes = []

    def flat(*args):
        outs = first(*args)
        shapes[:] = [np.shape(x) for x in outs]
        return np.concatenate([np.ravel(x) for x in outs])
    out = []
    for D in central_differences(robot, oracle, flat, q, vectors, h):      # (sum of sizes, n) per direction
        ends = np.cumsum([int(np.prod(s)) for s in shapes])[:-1]
        out.append([block.reshape(*s, robot.nv) for block, s in zip(np.split(D, ends), shapes)])
    return out


def rnea_derivatives(robot, oracle):
    """Pinocchio's ∂τ/∂q, ∂τ/∂q̇, M (its upper triangle mirrored) in soagen's order."""
    p = pc._velocity_permutation(robot)

    def first(qp, vp, ap):
        dq, dv, da = (np.array(x) for x in pin.computeRNEADerivatives(oracle.model, oracle.data, qp, vp, ap))
        da = np.triu(da) + np.triu(da, 1).T
        return [x[np.ix_(p, p)] for x in (dq, dv, da)]
    return first


def symmetric_part(blocks):
    """The symmetric part of the (3n, 3n) Jacobian of a gradient, ``blocks`` its columns by direction."""
    G = np.concatenate(blocks, axis=1)
    return 0.5 * (G + G.T)


@pytest.mark.parametrize("case", ["panda", "ur5", "solo12", "floating_tree"])
def test_inverse_dynamics_second_derivatives_match_pinocchio_differences(case):
    """The four tensors = the differences of computeRNEADerivatives (index 2 the direction; along q the
    iterated local derivative, Pinocchio's ComputeRNEASecondOrderDerivatives layout); d2tau_dq2 is
    asymmetric in (j, k) exactly where a floating base (a Lie bracket) makes it so."""
    robot, oracle = robot_and_oracle(case)
    q, qd, qdd, _ = state(robot, oracle, 1)
    got = ref.inverse_dynamics_second_derivatives(robot, q, qd, qdd)
    along_q, along_qd, _ = differences(robot, oracle, rnea_derivatives(robot, oracle), q, (qd, qdd))
    want = {"d2tau_dq2": along_q[0], "d2tau_dqd2": along_qd[1], "d2tau_dqdqd": along_qd[0], "dM_dq": along_q[2]}
    for (name, w), g in zip(want.items(), got):
        assert g.shape == (robot.nv,) * 3
        assert rel(g, w) < RTOL, (case, name, rel(g, w))
        assert np.abs(w).max() > 1e-2, (case, name)
    d2q = got[0]
    asym = np.abs(d2q - d2q.transpose(0, 2, 1)).max() / np.abs(d2q).max()
    if robot.bodies[0].joint_type == "floating":      # the iterated derivative: a Lie bracket term
        assert asym > 1e-3, asym
    else:
        assert asym < 1e-12, asym


@pytest.mark.parametrize("case", ["panda", "floating_tree"])    # solo12's tensors: the test above
def test_inverse_dynamics_hessian_matches_pinocchio(case):
    """H of λᵀτ = the symmetric part of the differences of Pinocchio's gradient (λᵀ∂τ/∂q, λᵀ∂τ/∂q̇, λᵀM);
    on the floating tree also = second differences of λᵀ pin.rnea at pin.integrate(q, δq)."""
    robot, oracle = robot_and_oracle(case)
    q, qd, qdd, _ = state(robot, oracle, 2)
    lam = np.random.default_rng(3).normal(size=robot.nv)
    got = ref.inverse_dynamics_hessian(robot, q, qd, qdd, lam)
    first = rnea_derivatives(robot, oracle)

    def gradient(*x):
        return [(lam @ np.hstack(first(*x)))[:, None]]
    want = symmetric_part([d[0][:, 0, :] for d in differences(robot, oracle, gradient, q, (qd, qdd))])
    assert got.shape == (3 * robot.nv, 3 * robot.nv)
    assert np.array_equal(got, got.T)
    assert rel(got, want) < RTOL, (case, rel(got, want))
    if case == "floating_tree":
        n, h = robot.nv, 1e-4
        qp, vp, ap = oracle.q(q), oracle.v(qd), oracle.v(qdd)

        def phi(x):
            dq, dv, da = (oracle.v(x[i * n:(i + 1) * n]) for i in range(3))
            return lam @ oracle._from(pin.rnea(oracle.model, oracle.data, pin.integrate(oracle.model, qp, dq),
                                               vp + dv, ap + da))
        E = np.eye(3 * n) * h
        second = np.array([[(phi(E[a] + E[b]) - phi(E[a] - E[b]) - phi(E[b] - E[a]) + phi(-E[a] - E[b])) / (4 * h * h)
                            for b in range(3 * n)] for a in range(3 * n)])
        assert rel(got, second) < 1e-5, rel(got, second)


@pytest.mark.parametrize("case", ["ur5", "floating_tree"])
def test_forward_dynamics_hessian_matches_pinocchio_differences(case):
    """H of λᵀq̈ = the symmetric part of the differences of λᵀ(∂q̈/∂q, ∂q̈/∂q̇, M⁻¹) of computeABADerivatives."""
    robot, oracle = robot_and_oracle(case)
    p = pc._velocity_permutation(robot)
    q, qd, _, tau = state(robot, oracle, 4)
    lam = np.random.default_rng(5).normal(size=robot.nv)

    def gradient(qp, vp, tp):
        dq, dv, minv = (np.array(x) for x in pin.computeABADerivatives(oracle.model, oracle.data, qp, vp, tp))
        minv = np.triu(minv) + np.triu(minv, 1).T
        return [np.concatenate([lam @ x[np.ix_(p, p)] for x in (dq, dv, minv)])[:, None]]
    want = symmetric_part([d[0][:, 0, :] for d in differences(robot, oracle, gradient, q, (qd, tau))])
    got = ref.forward_dynamics_hessian(robot, q, qd, tau, lam)
    assert np.array_equal(got, got.T)
    assert rel(got, want) < RTOL, (case, rel(got, want))
    assert np.abs(want).max() > 1e-2


@pytest.mark.parametrize("case", ["solo12", "floating_tree"])
def test_contact_dynamics_hessian_matches_pinocchio_differences(case):
    """H of λᵀq̈ + λ_fᵀf = the symmetric part of the differences of the gradient from Pinocchio's
    computeConstraintDynamicsDerivatives (CONTACT_3D per point foot, LOCAL_WORLD_ALIGNED, its
    multipliers the forces on the robot: f = −λ_c)."""
    robot, oracle = robot_and_oracle(case)
    model, data = oracle.model, oracle.data
    p = pc._velocity_permutation(robot)
    cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
    for f in oracle.frames:
        frame = model.frames[f]
        cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D, model, frame.parentJoint, frame.placement,
                                            LWA))
        cds.append(cms[-1].createData())
    pin.initConstraintDynamics(model, data, cms, cds)
    settings = pin.ProximalSettings(1e-14, 1e-14, 0.0, 1)
    q, qd, _, tau = state(robot, oracle, 6)
    rng = np.random.default_rng(7)
    lam, lam_f = rng.normal(size=robot.nv), rng.normal(size=robot.tip_rows)

    def gradient(qp, vp, tp):
        pin.constraintDynamics(model, data, qp, vp, tp, cms, cds, settings)
        d = pin.computeConstraintDynamicsDerivatives(model, data, cms, cds, settings)
        rows = [lam @ np.array(x)[np.ix_(p, p)] - lam_f @ np.array(y)[:, p] for x, y in zip(d[:3], d[3:])]
        return [np.concatenate(rows)[:, None]]

    qdd, f = ref.contact_dynamics(robot, q, qd, tau)
    assert rel(np.concatenate([oracle._from(pin.constraintDynamics(model, data, oracle.q(q), oracle.v(qd),
                                                                   oracle.v(tau), cms, cds, settings)),
                               -np.array(data.lambda_c)]), np.concatenate([qdd, f])) < 1e-9
    want = symmetric_part([d[0][:, 0, :] for d in differences(robot, oracle, gradient, q, (qd, tau))])
    got = ref.contact_dynamics_hessian(robot, q, qd, tau, lam, lam_f)
    assert np.array_equal(got, got.T)
    assert rel(got, want) < RTOL, (case, rel(got, want))
    assert np.abs(want).max() > 1e-2
