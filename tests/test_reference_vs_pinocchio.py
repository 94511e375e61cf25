"""The numpy reference (``soagen.reference``) against Pinocchio.

Real robots from example-robot-data (Panda, UR5, the tree robot Baxter, a
double pendulum with continuous joints) plus random chains/trees with
prismatic joints written out as URDF, on seeded random states: inverse
dynamics (with and without tip forces), gravity, bias forces, mass matrix,
its inverse, forward dynamics (FD1, FD4), tip Jacobians, J̇q̇ and tip poses;
and a non-default gravity vector.
"""
from __future__ import annotations

import functools
import os

import numpy as np
import pytest

import soagen
from soagen import reference as ref
from tests import support
from tests.support.oracle import Oracle, erd_urdf
from tests.support.robots import random_spec, random_urdf, robot_from_spec

RTOL = 1e-9
assert_close = functools.partial(support.assert_close, rtol=RTOL)
N_STATES = 20

_BAXTER_FINGERS = ("l_gripper_l_finger_joint", "l_gripper_r_finger_joint",
                   "r_gripper_l_finger_joint", "r_gripper_r_finger_joint")
ROBOTS = {
    "panda": ("panda_description/urdf/panda.urdf", ["panda_hand"],
              {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", ["ee_link"], None),
    "baxter": ("baxter_description/urdf/baxter.urdf", ["left_gripper", "right_gripper"],
               {j: 0.0 for j in _BAXTER_FINGERS}),
    "double_pendulum": ("double_pendulum_description/urdf/double_pendulum_continuous.urdf",
                        ["link2"], None),
}
# random robots written as URDF: (seed, n, tree, prismatic_fraction, tips)
RANDOM = {
    "rand-chain6": (21, 6, False, 0.4, 1),
    "rand-tree8": (22, 8, True, 0.4, 3),
    "rand-tree5-allprismatic": (23, 5, True, 1.0, 2),
}


def _states(oracle, robot, seed):
    rng = np.random.default_rng(seed)
    out = []
    for _ in range(N_STATES):
        q, qd, qdd, tau = oracle.random_state(rng)
        qd, qdd, tau = 2.0 * qd, 5.0 * qdd, 20.0 * tau
        f = rng.normal(size=6 * len(robot.tips)) * 10.0
        out.append((q, qd, qdd, tau, f))
    return out


def _load(key, tmp_dir, gravity=(0.0, 0.0, -9.81)):
    if key in ROBOTS:
        rel, tips, lock = ROBOTS[key]
        path = erd_urdf(rel)
        robot = soagen.load_urdf(path, tips=tips, lock=lock, gravity=gravity)
        return robot, Oracle(robot, urdf=path, lock=lock)
    seed, n, tree, pf, ntips = RANDOM[key]
    spec = random_spec(seed, n, tree=tree, prismatic_fraction=pf, tips=ntips, gravity=gravity)
    tips = [name for name, _ in spec["tips"]]
    path = os.path.join(tmp_dir, f"{key}.urdf")
    with open(path, "w") as fh:
        fh.write(random_urdf(spec))
    robot = soagen.load_urdf(path, tips=tips, gravity=gravity)
    # the URDF round trip gives the same robot as the builder (tips without offsets)
    built = robot_from_spec(spec, tips=tips)
    assert [b.joint for b in built.bodies] == [b.joint for b in robot.bodies]
    q = np.linspace(-1.0, 1.0, n)
    assert_close(ref.mass_matrix(robot, q), ref.mass_matrix(built, q), rtol=1e-12, what="URDF vs builder")
    return robot, Oracle(robot, urdf=path)


ALL = list(ROBOTS) + list(RANDOM)


@pytest.fixture(params=ALL, scope="module")
def loaded(request, tmp_path_factory):
    key = request.param
    robot, oracle = _load(key, str(tmp_path_factory.mktemp(key)))
    return key, robot, oracle, _states(oracle, robot, seed=ALL.index(key))


def test_joint_order(loaded):
    _, robot, oracle, _ = loaded
    assert [b.joint for b in robot.bodies] == oracle.joint_names
    assert robot.n == oracle.model.nv


def _oracle_tip_torques(oracle, q, f):
    """Jᵀf summed over all tips, through Pinocchio's fext."""
    z = np.zeros(oracle.model.nv)
    return oracle.rnea(q, z, z, f) - oracle.rnea(q, z, z)


def test_inverse_dynamics_tip_force(loaded):
    _, robot, oracle, states = loaded
    m = len(robot.tips)
    for q, qd, qdd, _, f in states:
        # one tip at a time ...
        for i in range(m):
            fi = np.zeros(6 * m)
            fi[6 * i:6 * i + 6] = f[6 * i:6 * i + 6]
            assert_close(ref.inverse_dynamics(robot, q, qd, qdd, fi), oracle.rnea(q, qd, qdd, fi),
                         what=f"ID with force on tip {i}")
        # ... and all together, against the Jacobian route too
        assert_close(ref.inverse_dynamics(robot, q, qd, qdd, f), oracle.rnea(q, qd, qdd, f), what="ID with tip forces")
        assert_close(ref.inverse_dynamics(robot, q, qd, qdd, f),
                     oracle.rnea(q, qd, qdd) + oracle.jacobian(q).T @ f, what="ID + J^T f")


# One quantity of the state, reference against Pinocchio: (reference function, Oracle method,
# how many of (q, q̇, q̈) both take, what). coriolis: C(q, θ̇) without gravity against
# Pinocchio's Coriolis matrix C(q, θ̇) times θ̇ (another algorithm than rnea).
POINTWISE = [
    ("inverse_dynamics", "rnea", 3, "ID"),
    ("gravity", "gravity", 1, "gravity"),
    ("bias_forces", "bias", 2, "bias"),
    ("coriolis", "coriolis", 2, "coriolis"),
    ("mass_matrix", "mass_matrix", 1, "M"),
    ("mass_matrix_inverse", "mass_matrix_inverse", 1, "M^-1"),
    ("jacobian", "jacobian", 1, "J"),
    ("jdot_qdot", "jdot_qdot", 2, "Jdot qdot"),
    ("forward_kinematics", "tip_poses", 1, "tip poses"),
]


@pytest.mark.parametrize("function,method,nargs,what", POINTWISE, ids=[row[0] for row in POINTWISE])
def test_reference_matches_pinocchio(loaded, function, method, nargs, what):
    _, robot, oracle, states = loaded
    for state in states:
        args = state[:nargs]
        assert_close(getattr(ref, function)(robot, *args), getattr(oracle, method)(*args), what=what)


@pytest.mark.parametrize("variant", ["FD1", "FD4"])
def test_forward_dynamics(loaded, variant):
    _, robot, oracle, states = loaded
    for q, qd, _, tau, f in states:
        assert_close(ref.forward_dynamics(robot, q, qd, tau, variant=variant),
                     oracle.aba(q, qd, tau), what=variant)
        assert_close(ref.forward_dynamics(robot, q, qd, tau, f, variant=variant),
                     oracle.aba(q, qd, tau, f), what=f"{variant} with tip forces")


def test_tip_force_acceleration(loaded):
    _, robot, oracle, states = loaded
    for q, qd, _, tau, f in states:
        expect = -oracle.mass_matrix_inverse(q) @ _oracle_tip_torques(oracle, q, f)
        assert_close(ref.tip_force_acceleration(robot, q, f), expect, what="tip force acceleration")


# ------------------------------------------------------------------ gravity
GRAVITY = (1.3, -2.1, -7.4)


@pytest.mark.parametrize("key", ALL)
def test_gravity_vector(key, tmp_path):
    """A non-default gravity vector, given to load_urdf and to Pinocchio; also
    through Robot.with_gravity on the default-gravity robot."""
    robot, oracle = _load(key, str(tmp_path), gravity=GRAVITY)
    assert_close(robot.gravity, GRAVITY, rtol=0, what="robot.gravity")
    default, _ = _load(key, str(tmp_path))
    swapped = default.with_gravity(GRAVITY)
    for q, qd, qdd, tau, f in _states(oracle, robot, seed=100)[:8]:
        for r in (robot, swapped):
            assert_close(ref.gravity(r, q), oracle.gravity(q), what="gravity")
            assert_close(ref.inverse_dynamics(r, q, qd, qdd), oracle.rnea(q, qd, qdd), what="ID")
            for variant in ("FD1", "FD4"):
                assert_close(ref.forward_dynamics(r, q, qd, tau, variant=variant),
                             oracle.aba(q, qd, tau), what=variant)
