"""Joints locked at non-zero values (``load_urdf(lock={joint: value})``) against
Pinocchio's reduced model (``pinocchio.buildReducedModel`` at a reference
configuration holding those values), read from the same URDF by Pinocchio.

Revolute joints locked at angles, prismatic joints at displacements, in the
middle of a chain (moving joints above and below each); the Panda with an arm
joint and both fingers locked away from 0. The reference
and a generated module are compared with Pinocchio on seeded states.
"""
from __future__ import annotations

import numpy as np
import pytest
import soagen
from soagen import reference as ref
from tests.support.builds import built
from tests.support.oracle import Oracle, erd_urdf
from tests.support.robots import random_spec, random_urdf

FUNCTIONS = ["forward_kinematics", "jacobian", "inverse_dynamics", "mass_matrix", "forward_dynamics_fd4"]


def rel(a, b):
    return np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(b).max()


def random_case(tmp_path):
    """An 8-joint chain (seed 31: joints r r p r r p r p, tips l08 and l04); lock the
    prismatic j03 at 0.15 m, the revolute j05 at 0.7 rad and the prismatic j06 at -0.35 m,
    each with moving joints above and below it (so M depends on the locked values)."""
    spec = random_spec(31, 8, tree=False, prismatic_fraction=0.4, tips=2)
    path = tmp_path / "chain8.urdf"
    path.write_text(random_urdf(spec))
    assert "".join(j["kind"][0] for j in spec["joints"]) == "rrprrprp"
    tips = [name for name, _ in spec["tips"]]
    assert tips == ["l08", "l04"]
    return str(path), tips, {"j03": 0.15, "j05": 0.7, "j06": -0.35}


def panda_case():
    """The Panda: joint 3 locked at 0.5 rad, the fingers at 0.02 and 0.035 m."""
    lock = {"panda_joint3": 0.5, "panda_finger_joint1": 0.02, "panda_finger_joint2": 0.035}
    return erd_urdf("panda_description/urdf/panda.urdf"), ["panda_hand", "panda_leftfinger"], lock


def assert_matches_reduced_model(robot, pin, routes, states=20, seed=0):
    assert [b.joint for b in robot.bodies] == pin.joint_names
    rng = np.random.default_rng(seed)
    for _ in range(states):
        q, qd, qdd, tau = pin.random_state(rng)
        for r in routes:
            for i in range(len(robot.tips)):
                assert rel(r.tip_pose(q, i), pin.tip_poses(q)[i]) < 1e-10
            assert rel(r.jacobian(q), pin.jacobian(q)) < 1e-10
            assert rel(r.inverse_dynamics(q, qd, qdd), pin.rnea(q, qd, qdd)) < 1e-10
            assert rel(r.mass_matrix(q), pin.mass_matrix(q)) < 1e-10
            assert rel(r.forward_dynamics(q, qd, tau), pin.aba(q, qd, tau)) < 1e-9


class Reference:
    def __init__(self, robot):
        self.robot = robot

    def tip_pose(self, q, i):
        return ref.forward_kinematics(self.robot, q)[i]

    def jacobian(self, q):
        return ref.jacobian(self.robot, q)

    def inverse_dynamics(self, q, qd, qdd):
        return ref.inverse_dynamics(self.robot, q, qd, qdd)

    def mass_matrix(self, q):
        return ref.mass_matrix(self.robot, q)

    def forward_dynamics(self, q, qd, tau):
        return ref.forward_dynamics(self.robot, q, qd, tau)


class Generated(Reference):
    def __init__(self, mod):
        self.mod = mod

    def tip_pose(self, q, i):
        return self.mod.forward_kinematics(q)[i]

    def jacobian(self, q):
        return self.mod.jacobian(q)

    def inverse_dynamics(self, q, qd, qdd):
        return self.mod.inverse_dynamics(q, qd, qdd)

    def mass_matrix(self, q):
        return self.mod.mass_matrix(q)

    def forward_dynamics(self, q, qd, tau):
        return self.mod.forward_dynamics(q, qd, tau, variant="FD4")


@pytest.mark.parametrize("case", ["random_chain", "panda"])
def test_locked_at_non_zero_values_equals_pinocchio_reduced_model(case, tmp_path):
    path, tips, lock = random_case(tmp_path) if case == "random_chain" else panda_case()
    robot = soagen.load_urdf(path, tips=tips, lock=lock)
    pin = Oracle(robot, urdf=path, lock=lock)
    assert not set(lock) & {b.joint for b in robot.bodies}
    routes = [Reference(robot)]
    if case == "random_chain":
        _, mod = built("locked_chain8", lambda: robot, functions=FUNCTIONS)
        routes.append(Generated(mod))
    assert_matches_reduced_model(robot, pin, routes)


def test_the_locked_value_matters(tmp_path):
    """Locking at the value, not at 0: the same joints locked at 0 give another robot."""
    path, tips, lock = random_case(tmp_path)
    at_zero = soagen.load_urdf(path, tips=tips, lock=dict.fromkeys(lock, 0.0))
    pin = Oracle(soagen.load_urdf(path, tips=tips, lock=lock), urdf=path, lock=lock)
    q = pin.random_state(np.random.default_rng(1))[0]
    assert rel(ref.mass_matrix(at_zero, q), pin.mass_matrix(q)) > 1e-3
    assert rel(ref.forward_kinematics(at_zero, q)[0], pin.tip_poses(q)[0]) > 1e-3
