"""Two arms holding one point ([RJK] §5.3): generated = reference = a dense
constrained (KKT) solve with Pinocchio's M, h, J, J̇q̇ of both arms."""
from __future__ import annotations

import numpy as np
import pytest

import soagen
from soagen import reference as ref
from soagen import robots
from soagen.closed_chain import reference_forward_dynamics
from soagen.spatial import rpy_matrix
from tests.support.builds import built
from tests.support.oracle import Oracle


def make_chain():
    """A Panda and a UR5 whose tips meet at one point, the UR5's base turned by π about z."""
    ra, rb = robots.example("panda"), robots.example("ur5")
    qa = np.array([0.1, -0.4, 0.2, -2.0, 0.1, 1.8, 0.6])
    qb = np.array([-0.3, -1.5, 1.2, -0.8, 1.3, 0.1])
    pa = ref.forward_kinematics(ra, qa)[0][:3, 3]
    pb = ref.forward_kinematics(rb, qb)[0][:3, 3]
    R = rpy_matrix([0.0, 0.0, np.pi])
    P = np.eye(4)
    P[:3, :3], P[:3, 3] = R, pa - R @ pb
    return soagen.closed_chain(ra, "panda_hand", rb, "tool0", placement=P, name="panda_ur5"), qa, qb


def R6(R):
    return np.kron(np.eye(2), R)


def states(chain, qa0, qb0, rng, count):
    """Configurations near the assembled pose with consistent tip velocities."""
    ra, rb = chain.robot_a, chain.robot_b
    for _ in range(count):
        qa, qb = qa0 + 0.05 * rng.normal(size=ra.n), qb0 + 0.05 * rng.normal(size=rb.n)
        qda = rng.normal(size=ra.n)
        Ja, Jb = ref.jacobian(ra, qa), R6(chain.rotation) @ ref.jacobian(rb, qb)
        qdb = np.linalg.lstsq(Jb, Ja @ qda, rcond=None)[0]
        yield qa, qda, rng.normal(size=ra.n) * 5, qb, qdb, rng.normal(size=rb.n) * 5


def test_reference_equals_kkt_with_pinocchio():
    chain, qa0, qb0 = make_chain()
    pa = Oracle(chain.robot_a, urdf=robots.urdf_path("panda"),
                lock={"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0})
    pb = Oracle(chain.robot_b, urdf=robots.urdf_path("ur5"))
    Rb = R6(chain.rotation)
    for qa, qda, ta, qb, qdb, tb in states(chain, qa0, qb0, np.random.default_rng(1), 30):
        qdda, qddb, f = reference_forward_dynamics(chain, qa, qda, ta, qb, qdb, tb)
        Ja, Jb = pa.jacobian(qa), Rb @ pb.jacobian(qb)
        na, nb = len(qa), len(qb)
        K = np.zeros((na + nb + 6, na + nb + 6))
        K[:na, :na], K[:na, na + nb:] = pa.mass_matrix(qa), Ja.T
        K[na:na + nb, na:na + nb], K[na:na + nb, na + nb:] = pb.mass_matrix(qb), -Jb.T
        K[na + nb:, :na], K[na + nb:, na:na + nb] = Ja, -Jb
        rhs = np.concatenate([ta - pa.bias(qa, qda), tb - pb.bias(qb, qdb),
                              Rb @ pb.jdot_qdot(qb, qdb) - pa.jdot_qdot(qa, qda)])
        x = np.linalg.solve(K, rhs)
        scale = max(1.0, np.abs(x).max())
        assert np.abs(x[:na] - qdda).max() < 1e-9 * scale
        assert np.abs(x[na:na + nb] - qddb).max() < 1e-9 * scale
        assert np.abs(x[na + nb:] - f).max() < 1e-9 * scale
        # (22): the tips accelerate together
        alpha_a = Ja @ qdda + pa.jdot_qdot(qa, qda)
        alpha_b = Jb @ qddb + Rb @ pb.jdot_qdot(qb, qdb)
        assert np.abs(alpha_a - alpha_b).max() < 1e-9 * max(1.0, np.abs(alpha_a).max())


def test_generated_equals_reference():
    chain, qa0, qb0 = make_chain()
    _, mod = built("panda_ur5_chain", lambda: chain)
    for args in states(chain, qa0, qb0, np.random.default_rng(2), 100):
        got = mod.forward_dynamics(*args)
        want = reference_forward_dynamics(chain, *args)
        for g, w in zip(got, want):
            assert np.abs(g - w).max() <= 1e-10 * max(1.0, np.abs(w).max())


def test_bad_tip_name():
    with pytest.raises(soagen.RobotError, match="no tip named"):
        soagen.closed_chain(robots.example("ur5"), "nope", robots.example("ur5"), "tool0")
