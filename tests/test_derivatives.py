"""Derivatives of the dynamics (issue: MPC needs them): three routes.

generated C (forward-mode differentiation of the recorded straight-line
programs, soagen.passes.tangent) = numpy reference (a tangent Newton–Euler pass in
world axes, soagen.reference.inverse_dynamics_derivatives) = Pinocchio's
computeRNEADerivatives / computeABADerivatives; plus central finite
differences along Robot.integrate as a sanity check, and the linearized
Euler step against finite differences of a step simulated with Pinocchio's aba.
"""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import soagen
from soagen import functions
from soagen.model import pinocchio_convention as pc
from soagen import reference as ref
from soagen.model import robots
from soagen.check import check_module
from tests.support import rel
from tests.support.builds import built
from tests.support.oracle import Oracle, erd_urdf
from tests.support.robots import random_robot

DERIVATIVES = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearized_step"]
MULTI_DOF = ["inverse_dynamics_derivatives", "forward_dynamics_derivatives"]
GENERATED = {
    "puma560": (lambda: robots.example("puma560"), DERIVATIVES),
    "ur5": (lambda: robots.example("ur5"), DERIVATIVES),
    "chain5_prismatic": (lambda: random_robot(41, 5, prismatic_fraction=0.5), DERIVATIVES),
    "tree6_2tips": (lambda: random_robot(42, 6, tree=True, tips=2, prismatic_fraction=0.3), DERIVATIVES),
    "floating_spherical": (lambda: random_robot(43, 5, floating_base=True, spherical_fraction=0.4), MULTI_DOF),
    # a real free-flyer (its reference is checked against Pinocchio below): the base's closed-form columns
    "solo12_floating": (lambda: soagen.load_urdf(erd_urdf("solo_description/robots/solo12.urdf"), floating_base=True),
                        ["forward_dynamics_derivatives"]),
    # rotor inertia and smooth Coulomb + viscous friction: both FD-derivative algorithms
    "actuated_chain": (lambda: _actuated(random_robot(44, 5, prismatic_fraction=0.4)),
                       ["inverse_dynamics_derivatives", "forward_dynamics_derivatives_fd4",
                        "forward_dynamics_derivatives_via_id"]),
}


def _actuated(robot):
    """Armature on joints 0, 2, 3; friction (viscous, Coulomb) on joints 1-4."""
    joints = [b.joint for b in robot.bodies]
    return robot.with_actuators({joints[i]: 0.1 * (i + 1) for i in (0, 2, 3)},
                                {joints[i]: (0.3 * i, 0.8) for i in (1, 2, 3, 4)})


@pytest.mark.parametrize("case", sorted(GENERATED))
def test_generated_matches_reference(case):
    make, functions = GENERATED[case]
    robot, mod = built(f"derivatives_{case}", make, functions=functions)
    results = check_module(robot, mod, samples=30, seed=11)
    assert list(results) == functions
    assert all(r.compared == 30 for r in results.values()), results
    bad = {k: (r.error, r.ratio) for k, r in results.items() if not r.ok}
    assert not bad, bad


def _pinocchio_derivatives(robot, oracle, q, qd, qdd, tau):
    """Pinocchio's RNEA and ABA derivatives in soagen's conventions."""
    args = (oracle.model, oracle.data, oracle.q(q), oracle.v(qd))
    dq, dv, _ = (np.array(x) for x in pin.computeRNEADerivatives(*args, oracle.v(qdd)))   # copies: data's
    fq, fv, fminv = (np.array(x) for x in pin.computeABADerivatives(*args, oracle.v(tau)))   # buffers are reused
    conv = lambda X: pc.matrix_from_pinocchio(robot, np.asarray(X))   # noqa: E731
    fminv = np.triu(fminv) + np.triu(fminv, 1).T
    return conv(dq), conv(dv), conv(fq), conv(fv), conv(fminv)


PINOCCHIO = {
    "panda": lambda: (robots.example("panda"), robots.urdf_path("panda"),
                      {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
    "ur5": lambda: (robots.example("ur5"), robots.urdf_path("ur5"), None),
    "puma560": lambda: (robots.example("puma560"), None, None),
    "tree8_prismatic": lambda: (random_robot(44, 8, tree=True, tips=2, prismatic_fraction=0.4), None, None),
    "spherical_tree": lambda: (random_robot(32, 8, tree=True, tips=2, spherical_fraction=0.5), None, None),
    "talos_floating": lambda: (soagen.load_urdf(erd_urdf("talos_data/robots/talos_reduced.urdf"), floating_base=True),
                               erd_urdf("talos_data/robots/talos_reduced.urdf"), None),
    "solo12_floating": lambda: (soagen.load_urdf(erd_urdf("solo_description/robots/solo12.urdf"),
                                                 floating_base=True),
                                erd_urdf("solo_description/robots/solo12.urdf"), None),
}


@pytest.mark.parametrize("case", sorted(PINOCCHIO))
def test_reference_matches_pinocchio(case):
    robot, urdf, lock = PINOCCHIO[case]()
    oracle = Oracle(robot, urdf=urdf, lock=lock)
    rng = np.random.default_rng(12)
    worst = {}
    for _ in range(10):
        q, qd, qdd, tau = robot.random_state(rng)
        want = _pinocchio_derivatives(robot, oracle, q, qd, qdd, tau)
        got = ref.inverse_dynamics_derivatives(robot, q, qd, qdd) + ref.forward_dynamics_derivatives(
            robot, q, qd, tau)[1:]
        kappa = np.linalg.cond(oracle.mass_matrix(q))
        for name, g, w, scale in zip(("dtau_dq", "dtau_dqd", "dqdd_dq", "dqdd_dqd", "Minv"), got, want,
                                     (1, 1, kappa, kappa, kappa)):
            worst[name] = max(worst.get(name, 0.0), rel(g, w) / (1e-12 * scale))
    assert max(worst.values()) <= 1.0, worst      # within 1e-12 (times cond(M) for forward dynamics)


@pytest.mark.parametrize("case", ["ur5", "floating_spherical", "actuated_chain"])
def test_generated_against_finite_differences(case):
    """Central differences of the generated inverse and forward dynamics along
    Robot.integrate (the tangent space) and q̇: a check that needs no model of
    the derivative at all."""
    make, functions = GENERATED[case]
    robot, mod = built(f"derivatives_{case}", make, functions=functions)
    _, plain = built(f"plain_{case}", make, functions=["inverse_dynamics", "forward_dynamics"])
    rng = np.random.default_rng(13)
    h = 1e-6
    for _ in range(3):
        q, qd, qdd, tau = robot.random_state(rng)
        dq, dv = mod.inverse_dynamics_derivatives(q, qd, qdd)
        fd = "forward_dynamics_derivatives" + ("_via_id" if case.startswith("actuated") else "")
        qdd0, fq, fv, minv = (x.reshape(-1, robot.nv) if x.size > robot.nv else x
                              for x in mod.call(fd, q, qd, tau))
        n = robot.nv
        for j in range(n):
            e = np.zeros(n)
            e[j] = h
            qp, qm = robot.integrate(q, e, 1.0), robot.integrate(q, -e, 1.0)
            num_q = (plain.inverse_dynamics(qp, qd, qdd) - plain.inverse_dynamics(qm, qd, qdd)) / (2 * h)
            num_v = (plain.inverse_dynamics(q, qd + e, qdd) - plain.inverse_dynamics(q, qd - e, qdd)) / (2 * h)
            num_fq = (plain.forward_dynamics(qp, qd, tau) - plain.forward_dynamics(qm, qd, tau)) / (2 * h)
            num_fv = (plain.forward_dynamics(q, qd + e, tau) - plain.forward_dynamics(q, qd - e, tau)) / (2 * h)
            num_ft = (plain.forward_dynamics(q, qd, tau + e) - plain.forward_dynamics(q, qd, tau - e)) / (2 * h)
            assert rel(dq[:, j], num_q) < 1e-6 and rel(dv[:, j], num_v) < 1e-6, j
            assert rel(fq[:, j], num_fq) < 1e-6 and rel(fv[:, j], num_fv) < 1e-6, j
            assert rel(minv[:, j], num_ft) < 1e-6, j
        np.testing.assert_allclose(qdd0, plain.forward_dynamics(q, qd, tau), rtol=1e-10, atol=1e-10)


def _step(model, data, q, v, tau, dt):
    """One semi-implicit Euler step with Pinocchio's aba (1-dof joints: q ⊕ dt v = q + dt v)."""
    v1 = v + dt * pin.aba(model, data, q, v, tau)
    return q + dt * v1, v1


def test_linearized_step_against_finite_differences_of_pinocchio():
    """A, B of x⁺ = f(x, τ) against central differences of the step simulated
    with Pinocchio's aba: independent of both soagen's derivative routes."""
    robot, mod = built("derivatives_ur5", GENERATED["ur5"][0], functions=DERIVATIVES)
    model = pin.buildModelFromUrdf(robots.urdf_path("ur5"))
    data = model.createData()
    rng = np.random.default_rng(14)
    n, h, dt = robot.nv, 1e-6, 0.01
    for _ in range(3):
        q, qd, _, tau = robot.random_state(rng)
        A, B = mod.linearized_step(q, qd, tau, [dt])
        x = np.concatenate([q, qd])
        num_A, num_B = np.zeros((2 * n, 2 * n)), np.zeros((2 * n, n))
        for j in range(2 * n):
            e = np.zeros(2 * n)
            e[j] = h
            xp, xm = x + e, x - e
            num_A[:, j] = (np.concatenate(_step(model, data, xp[:n], xp[n:], tau, dt))
                           - np.concatenate(_step(model, data, xm[:n], xm[n:], tau, dt))) / (2 * h)
        for j in range(n):
            e = np.zeros(n)
            e[j] = h
            num_B[:, j] = (np.concatenate(_step(model, data, q, qd, tau + e, dt))
                           - np.concatenate(_step(model, data, q, qd, tau - e, dt))) / (2 * h)
        assert rel(A, num_A) < 1e-7 and rel(B, num_B) < 1e-7


def test_linearized_step_needs_one_dof_joints():
    robot = GENERATED["floating_spherical"][0]()
    with pytest.raises(soagen.OptionsError, match="1-dof joints"):
        soagen.build(robot, functions=["linearized_step"])
    assert "linearized_step" not in [s.name for s in functions.select(robot, soagen.Options(variants=None))]


def test_trig_inputs_derivatives():
    """cos/sin of q as inputs: their tangents are seeded too (d cos = −sin dq)."""
    robot = robots.example("puma560")
    mod = soagen.build(robot, functions=["inverse_dynamics_derivatives"], trig_inputs=True, optimize="O0")
    rng = np.random.default_rng(15)
    for _ in range(5):
        q, qd, qdd, _ = robot.random_state(rng)
        for got, want in zip(mod.inverse_dynamics_derivatives(q, qd, qdd),
                             ref.inverse_dynamics_derivatives(robot, q, qd, qdd)):
            assert rel(got, want) < 1e-10
