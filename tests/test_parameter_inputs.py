"""``parameters="inputs"``: the joint-space functions and their derivatives take π (and the
actuator parameters) as their last input.  Three routes with π drawn per state:
generated C = numpy reference on ``robot.with_parameters(π)`` = Pinocchio on
that robot; with π = robot.parameters() the baked build's numbers."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest

import soagen
from soagen import functions as F
from soagen.model import pinocchio_convention as pc
from soagen.model import robots
from soagen.check import check_module
from soagen.model.parameters import perturbed_parameters
from tests.support import assert_close
from tests.support.builds import built
from tests.support.oracle import Oracle
from tests.support.robots import random_robot


def _floating():
    robot = random_robot(13, 4, floating_base=True, spherical_fraction=0.5)
    joints = [b.joint for b in robot.bodies if b.nv == 1]
    return robot.with_actuators({j: 0.1 for j in joints}, {j: (0.3, 0.4) for j in joints})


CASES = {
    "puma560": (lambda: robots.example("puma560"), None),          # every parametric default function
    "floating": (_floating, ["inverse_dynamics", "gravity", "mass_matrix", "forward_dynamics_fd4",
                             "forward_dynamics_crba"]),
}


def _build(case):
    make, functions = CASES[case]
    return built(case, make, functions=functions, parameters="inputs")


@pytest.mark.parametrize("case", sorted(CASES))
def test_inputs_match_reference(case):
    robot, mod = _build(case)
    assert mod.parameters == "inputs"
    names = set(mod.ops)
    assert names <= F.PARAMETRIC and "inverse_dynamics" in names
    results = check_module(robot, mod, samples=20, seed=6)
    failed = {name: r.error for name, r in results.items() if not r.ok or r.compared == 0}
    assert not failed, failed


@pytest.mark.parametrize("case", sorted(CASES))
def test_inputs_against_pinocchio(case):
    """Pinocchio on the robot rebuilt from π: rnea (+ friction), crba, aba."""
    robot, mod = _build(case)
    rng = np.random.default_rng(12)
    for _ in range(5):
        pi = perturbed_parameters(robot, rng)
        model = robot.with_parameters(pi)
        oracle = Oracle(model)
        assert np.abs(pi - robot.parameters()).max() > 1e-3
        q, qd, qdd, tau = robot.random_state(rng)
        fr = 0.0 if model.actuators is None else \
            model.actuators.viscous * qd + model.actuators.coulomb * qd / np.sqrt(qd ** 2 + 1e-4)
        assert_close(mod.inverse_dynamics(q, qd, qdd, pi=pi), oracle.rnea(q, qd, qdd) + fr, 1e-11, "ID")
        assert_close(mod.mass_matrix(q, pi=pi), oracle.mass_matrix(q), 1e-12, "M")
        assert_close(mod.gravity(q, pi=pi), oracle.gravity(q), 1e-12, "gravity")
        qdd_pin = oracle.aba(q, qd, tau - fr)
        for variant in (["FD4", "CRBA"] if case == "floating" else ["auto"]):
            assert_close(mod.forward_dynamics(q, qd, tau, variant=variant, pi=pi), qdd_pin, 1e-9, variant)


def test_inputs_with_the_robots_parameters_are_the_baked_build():
    robot, mod = _build("puma560")
    _, baked = built("puma560", CASES["puma560"][0], functions=["regressor", "base_regressor",
                                                                 "slotine_li_regressor", "inverse_dynamics"])
    pi = robot.parameters()
    rng = np.random.default_rng(1)
    Q = np.array([robot.random_state(rng)[0] for _ in range(4)])
    QD, QDD = rng.normal(size=Q.shape), rng.normal(size=Q.shape)
    # a batch with one pi (broadcast) equals the baked module
    assert_close(mod.inverse_dynamics(Q, QD, QDD, pi=pi), baked.inverse_dynamics(Q, QD, QDD), 1e-12, "batch")
    # a batch with one pi per row: the regressor's prediction, row by row
    pis = np.array([perturbed_parameters(robot, rng) for _ in range(4)])
    got = mod.inverse_dynamics(Q, QD, QDD, pi=pis)
    want = [baked.regressor(q, qd, qdd) @ p for q, qd, qdd, p in zip(Q, QD, QDD, pis)]
    assert_close(got, want, 1e-11, "batch, pi per row")


def test_inputs_options_and_arguments():
    robot, mod = _build("puma560")
    q = np.zeros(6)
    with pytest.raises(ValueError, match="pass pi="):
        mod.gravity(q)
    with pytest.raises(soagen.OptionsError, match="cannot take the parameters"):
        F.select(robot, soagen.Options(functions=("jacobian",), parameters="inputs"))
    with pytest.raises(soagen.OptionsError, match="'baked' or 'inputs'"):
        soagen.Options(parameters="symbolic")
    assert "jacobian" not in {s.name for s in F.select(robot, soagen.Options(parameters="inputs"))}
    _, baked = built("puma560", CASES["puma560"][0], functions=["regressor", "base_regressor",
                                                                 "slotine_li_regressor", "inverse_dynamics"])
    with pytest.raises(ValueError, match="parameters='inputs'"):
        baked.inverse_dynamics(q, q, q, pi=robot.parameters())


# ---------------------------------------------------------------- the derivatives
DERIVATIVES = ["inverse_dynamics_derivatives", "inverse_dynamics_derivatives_forward_mode",
               "inverse_dynamics_derivatives_analytic", "forward_dynamics_derivatives",
               "forward_dynamics_derivatives_via_id", "forward_dynamics_derivatives_via_analytic_id"]


def _derivative_builds():
    """The floating tree with actuators (∂τ, ∂θ̈, by forward mode and by the analytical recursion)
    and the PUMA 560 (the linearized step, one-dof joints only, both routes), π as inputs."""
    return (built("floating_derivatives", _floating, functions=DERIVATIVES, parameters="inputs"),
            built("puma560_step", CASES["puma560"][0], parameters="inputs",
                  functions=["linearized_step_via_id", "linearized_step_via_analytic_id"]))


def test_a_parametric_family_picks_among_parametric_algorithms():
    """A family function that takes π is picked from algorithms that all take it: one that read the
    robot's numbers would answer for the wrong robot, silently."""
    for family in F.families():
        if family in F.PARAMETRIC:
            assert all(s.name in F.PARAMETRIC for _, s in F.candidates(family)), family
    assert {"inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearized_step"} <= F.PARAMETRIC

def test_derivative_inputs_match_reference():
    """Generated = the reference on ``robot.with_parameters(π)``, π drawn per state, every member."""
    for robot, mod in _derivative_builds():
        results = check_module(robot, mod, samples=20, seed=7)
        assert all(r.ok and r.compared == 20 for r in results.values()), results
        assert len(results) == len(mod.ops)


def test_derivative_inputs_against_pinocchio():
    """∂τ/∂q, ∂τ/∂q̇ (+ the friction slope) = Pinocchio's computeRNEADerivatives on the robot
    rebuilt from π; ∂θ̈/∂x = −M⁻¹ ∂τ/∂x at θ̈ with Pinocchio's M⁻¹ and derivatives; with π the
    robot's own parameters, the baked build (the analytical recursion) gives the same."""
    (robot, mod), _ = _derivative_builds()
    _, baked = built("floating_derivatives", _floating, functions=["forward_dynamics_derivatives"])
    rng = np.random.default_rng(14)
    eps2 = robot.actuators.coulomb_velocity ** 2
    for _ in range(3):
        pi = perturbed_parameters(robot, rng)
        model = robot.with_parameters(pi)
        oracle = Oracle(model)
        q, qd, qdd, tau = robot.random_state(rng)
        a = model.actuators
        slope = np.diag(a.viscous + a.coulomb * eps2 / (qd ** 2 + eps2) ** 1.5)
        friction = a.viscous * qd + a.coulomb * qd / np.sqrt(qd ** 2 + eps2)

        def pinocchio_dtau(acc):
            dq, dv, _ = (np.array(x) for x in pin.computeRNEADerivatives(
                oracle.model, oracle.data, oracle.q(q), oracle.v(qd), oracle.v(acc)))
            return pc.matrix_from_pinocchio(model, dq), pc.matrix_from_pinocchio(model, dv) + slope

        dq, dv = pinocchio_dtau(qdd)
        assert np.abs(dq).max() > 1e-2 and np.abs(slope).max() > 1e-2
        for variant in ("forward_mode", "analytic"):
            got = mod.inverse_dynamics_derivatives(q, qd, qdd, variant=variant, pi=pi)
            assert_close(got[0], dq, 1e-10, f"dtau/dq {variant}")
            assert_close(got[1], dv, 1e-10, f"dtau/dqd {variant}")
        qdd_at = oracle.aba(q, qd, tau - friction)
        Minv = oracle.mass_matrix_inverse(q)
        dq, dv = pinocchio_dtau(qdd_at)
        for variant in ("via_id", "via_analytic_id"):
            got = mod.forward_dynamics_derivatives(q, qd, tau, variant=variant, pi=pi)
            for x, want, what in zip(got, (qdd_at, -Minv @ dq, -Minv @ dv, Minv), ("qdd", "dqdd/dq", "dqdd/dqd", "Minv")):
                assert_close(x, want, 1e-8, f"{what} {variant}")
    own = robot.parameters()
    for x, y in zip(mod.forward_dynamics_derivatives(q, qd, tau, pi=own), baked.forward_dynamics_derivatives(q, qd, tau)):
        assert_close(x, y, 1e-10, "baked")
