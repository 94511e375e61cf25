"""Actuators: rotor inertia (armature) and joint friction in every function
that uses M or the dynamics, three routes: generated C = numpy reference
(``soagen check``'s comparison) = Pinocchio with ``model.armature`` (crba, aba,
rnea, computeMinverse honour it) plus the friction torque written out."""
from __future__ import annotations

import numpy as np
import pytest

import soagen
from soagen import reference as ref
from soagen.check import check_module
from soagen.model.actuators import COULOMB_VELOCITY
from tests.support import assert_close
from tests.support.builds import built
from tests.support.oracle import Oracle
from tests.support.robots import make_realistic, random_robot, random_spec, robot_from_spec


def _with_actuators(robot):
    """Armature on all but the third and last joints, friction on all but the first
    (the articulated pass mixes joints with and without rotor inertia)."""
    joints = [b.joint for b in robot.bodies if b.nv == 1]
    armature = {j: 0.05 * (i + 1) for i, j in enumerate(joints) if i not in (2, len(joints) - 1)}
    friction = {j: (0.2 + 0.1 * i, 0.5 + 0.2 * i) for i, j in enumerate(joints) if i != 0}
    return robot.with_actuators(armature, friction)


CASES = {
    # r r p r r p with coordinate axes, a tip; random axes are the identification tests' business
    "chain": lambda: _with_actuators(robot_from_spec(make_realistic(random_spec(14, 6, prismatic_fraction=0.5), 14))),
    "floating": lambda: _with_actuators(random_robot(13, 4, floating_base=True, spherical_fraction=0.5)),
}
CHAIN = ["inverse_dynamics", "bias_forces", "gravity", "coriolis", "mass_matrix", "mass_matrix_ne",
         "mass_matrix_inverse_innovations", "mass_matrix_inverse_cholesky", "forward_dynamics_fd4",
         "forward_dynamics_fd1", "forward_dynamics_fd2", "forward_dynamics_fd3", "forward_dynamics_crba",
         "tip_force_acceleration", "os_inertia_inverse", "os_inertia_recursive", "os_inertia_explicit", "os_bias",
         "osc_torque", "regressor"]
FLOATING = ["inverse_dynamics", "bias_forces", "mass_matrix", "forward_dynamics_fd4", "forward_dynamics_crba",
            "regressor"]


def _build(case):
    if case == "chain":
        return built("actuated_chain", CASES[case], functions=CHAIN)
    return built("actuated_floating", CASES[case], functions=FLOATING)


def friction(robot, qd):
    """viscous q̇ + Coulomb q̇/√(q̇² + ε²), written out from the robot's numbers."""
    a = robot.actuators
    return a.viscous * qd + a.coulomb * qd / np.sqrt(qd ** 2 + a.coulomb_velocity ** 2)


@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_matches_reference_with_actuators(case):
    robot, mod = _build(case)
    results = check_module(robot, mod, samples=30, seed=4)
    failed = {name: r.error for name, r in results.items() if not r.ok}
    assert not failed, failed
    assert all(r.compared > 0 for name, r in results.items() if not name.startswith("os_")), results


@pytest.mark.parametrize("case", sorted(CASES))
def test_actuators_against_pinocchio(case):
    """M = crba (armature on the diagonal), τ = rnea + friction, every forward
    dynamics = aba(τ − friction), M⁻¹ = computeMinverse, the regressor's actuator
    columns; and the armature really changes M (Pinocchio without it differs)."""
    robot, mod = _build(case)
    oracle = Oracle(robot)
    rigid = Oracle(soagen.Robot(robot.name, robot.bodies, robot.tips, robot.gravity))
    pi = robot.parameters()
    n = robot.nv
    rng = np.random.default_rng(8)
    fd = ["FD4", "CRBA"] + (["FD1", "FD2", "FD3"] if case == "chain" else [])
    for _ in range(8):
        q, qd, qdd, tau = robot.random_state(rng)
        M = oracle.mass_matrix(q)
        assert np.abs(M - rigid.mass_matrix(q)).max() > 0.04          # the rotor inertias are there
        assert_close(mod.mass_matrix(q), M, 1e-12, "M")
        tau_id = oracle.rnea(q, qd, qdd) + friction(robot, qd)
        assert_close(mod.inverse_dynamics(q, qd, qdd), tau_id, 1e-12, "inverse dynamics")
        assert_close(mod.bias_forces(q, qd), oracle.rnea(q, qd, np.zeros(n)) + friction(robot, qd), 1e-12, "bias")
        qdd_pin = oracle.aba(q, qd, tau - friction(robot, qd))
        for variant in fd:
            assert_close(mod.forward_dynamics(q, qd, tau, variant=variant), qdd_pin, 1e-9, variant)
        Y = mod.regressor(q, qd, qdd)
        assert_close(Y @ pi, tau_id, 1e-11, "Y pi")
        assert_close(Y[:, :10 * robot.nb], oracle.regressor(q, qd, qdd), 1e-11, "body columns")
        act = Y[:, 10 * robot.nb:]
        for c, i in enumerate(robot.actuated):
            s = qd[i] / np.sqrt(qd[i] ** 2 + COULOMB_VELOCITY ** 2)
            assert_close(act[:, 3 * c:3 * c + 3], np.outer(np.eye(n)[i], [qdd[i], qd[i], s]), 1e-14, "actuator cols")
    if case == "chain":
        q = robot.random_configuration(rng)
        assert_close(mod.mass_matrix(q, "newton_euler"), oracle.mass_matrix(q), 1e-12, "M by Newton-Euler")
        assert_close(mod.mass_matrix_inverse(q, "innovations"), oracle.mass_matrix_inverse(q), 1e-10, "M^-1")
        assert_close(mod.mass_matrix_inverse(q, "cholesky"), oracle.mass_matrix_inverse(q), 1e-10, "M^-1 Cholesky")


def test_operational_space_with_armature():
    """Λ(0), Ω(0), c(0) + g(0), OSC torques and tip-force accelerations against
    dense formulas from Pinocchio's J, J̇q̇ and M (with armature): the
    articulated-body recursions carry D(k) = H P H* + armature."""
    robot, mod = _build("chain")
    oracle = Oracle(robot)
    rng = np.random.default_rng(2)
    compared = 0
    for _ in range(20):
        q, qd, _, _ = robot.random_state(rng)
        J, M = oracle.jacobian(q), oracle.mass_matrix(q)
        Omega = J @ np.linalg.solve(M, J.T)
        if np.linalg.cond(Omega) > 1e5:
            continue
        compared += 1
        Lam = np.linalg.inv(Omega)
        h = oracle.rnea(q, qd, np.zeros(robot.nv))                   # C + G (armature·0, no friction)
        cg = Lam @ (J @ np.linalg.solve(M, h) - oracle.jdot_qdot(q, qd))
        u, f = rng.normal(size=6), rng.normal(size=6)
        assert_close(mod.os_inertia_inverse(q), Omega, 1e-10, "Omega")
        for variant in ("recursive", "explicit"):
            assert_close(mod.os_inertia(q, variant), Lam, 1e-8, f"Lambda {variant}")
        assert_close(mod.os_bias(q, qd), cg, 1e-8, "c + g")
        assert_close(mod.osc_torque(q, qd, u), J.T @ (Lam @ u + cg), 1e-8, "OSC torque")
        assert_close(mod.tip_force_acceleration(q, f), -np.linalg.solve(M, J.T @ f), 1e-10, "tip force")
    assert compared >= 10


def test_actuator_arguments_are_checked():
    robot = random_robot(14, 6, prismatic_fraction=0.5)
    with pytest.raises(soagen.RobotError, match="unknown joint"):
        robot.with_actuators(armature={"nope": 1.0})
    with pytest.raises(soagen.RobotError, match=">= 0"):
        robot.with_actuators(armature={"j01": -1.0})
    with pytest.raises(soagen.RobotError, match="viscous, coulomb"):
        robot.with_actuators(friction={"j01": 1.0})
    floating = random_robot(13, 4, floating_base=True)
    with pytest.raises(soagen.RobotError, match="only 1-dof joints"):
        floating.with_actuators(armature={"root_joint": 1.0})
    with pytest.raises(soagen.RobotError, match="coulomb_velocity"):
        robot.with_actuators(friction={"j01": (1, 1)}, coulomb_velocity=0.0)
    actuated = _with_actuators(robot)
    assert actuated.n_parameters == 10 * robot.nb + 3 * robot.nv
    assert actuated.fingerprint() != robot.fingerprint()
    assert actuated.with_gravity((0, 0, -1)).actuators is actuated.actuators      # copies keep them
    assert_close(ref.actuator_torques(actuated, np.ones(6), np.ones(6)),
                 actuated.actuators.armature + friction(actuated, np.ones(6)), 1e-15, "actuator torques")


def test_urdf_friction(tmp_path):
    """``urdf_friction`` reads <dynamics damping friction> of the moving joints;
    ``friction`` entries take precedence; locked joints have none."""
    from soagen.model.robots import urdf_path

    lock = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
    panda = soagen.load_urdf(urdf_path("panda"), tips=["panda_hand"], lock=lock, urdf_friction=True,
                             friction={"panda_joint2": (1.5, 2.5)}, armature={"panda_joint7": 0.1})
    a = panda.actuators
    assert_close(a.viscous, [0.003, 1.5, 0.003, 0.003, 0.003, 0.003, 0.003], 0, "viscous")
    assert_close(a.coulomb, [0, 2.5, 0, 0, 0, 0, 0], 0, "coulomb")
    assert_close(a.armature, [0, 0, 0, 0, 0, 0, 0.1], 0, "armature")
    plain = soagen.load_urdf(urdf_path("panda"), tips=["panda_hand"], lock=lock)
    assert plain.actuators is None and plain.n_parameters == 70
    bad = tmp_path / "bad.urdf"
    bad.write_text('<robot name="r"><link name="a"/><link name="b"><inertial><mass value="1"/>'
                   '<inertia ixx="1" iyy="1" izz="1" ixy="0" ixz="0" iyz="0"/></inertial></link>'
                   '<joint name="j" type="revolute"><parent link="a"/><child link="b"/><axis xyz="0 0 1"/>'
                   '<limit lower="-1" upper="1" effort="1" velocity="1"/><dynamics damping="x"/></joint></robot>')
    with pytest.raises(soagen.RobotError):
        soagen.load_urdf(bad, urdf_friction=True)
