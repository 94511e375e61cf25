"""Operational space dynamics: Λ(0), c(0), g(0), OSC torques, several tips.

Route 3 for the reference: dense formulas of [KJR] (12), (14), (15)
(Λ = (JM⁻¹Jᵀ)⁻¹, c = Λ(JM⁻¹C − J̇q̇), g = ΛJM⁻¹G) with M, C, G, J, J̇q̇ from
Pinocchio where the robot is a URDF, else from the dense reference operators.
The c(0) test is also the proof of the derived ξ(k) of (66), missing from the text.
"""
from __future__ import annotations

import numpy as np
import pytest

import soagen
from soagen import reference as ref
from soagen.model import robots
from tests.support import rel
from tests.support.builds import built
from tests.support.oracle import Oracle, erd_urdf
from tests.support.robots import branching_robot, branching_spec, random_robot, random_urdf, robot_from_spec

PANDA_LOCK = {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}
BAXTER_LOCK = {j: 0.0 for j in ("l_gripper_l_finger_joint", "l_gripper_r_finger_joint",
                                "r_gripper_l_finger_joint", "r_gripper_r_finger_joint")}
PIN_CASES = {
    "panda": ("panda_description/urdf/panda.urdf", ["panda_hand"], PANDA_LOCK),
    "ur5": ("ur_description/urdf/ur5_robot.urdf", ["tool0"], None),
    "baxter": ("baxter_description/urdf/baxter.urdf", ["left_gripper", "right_gripper"], BAXTER_LOCK),
}


def dense_os(M, C, G, J, jdqd):
    """[KJR] (12), (14), (15)."""
    Minv = np.linalg.inv(M)
    Lam = np.linalg.inv(J @ Minv @ J.T)
    return Lam, Lam @ (J @ Minv @ C - jdqd), Lam @ J @ Minv @ G


def check_against_dense(robot, q, qd, u, M, C, G, J, jdqd, tol=1e-9):
    Lam, c, g = dense_os(M, C, G, J, jdqd)
    cond = np.linalg.cond(J @ np.linalg.inv(M) @ J.T)
    tol = tol * max(1.0, cond * 1e-4)      # Λ inherits Ω(0)'s conditioning
    assert rel(ref.os_inertia_inverse(robot, q), J @ np.linalg.solve(M, J.T)) < 1e-10
    assert rel(ref.os_inertia(robot, q), Lam) < tol
    assert rel(ref.os_coriolis(robot, q, qd), c) < tol
    assert rel(ref.os_gravity(robot, q), g) < tol
    assert rel(ref.os_bias(robot, q, qd), c + g) < tol
    assert rel(ref.osc_torque(robot, q, qd, u), J.T @ (Lam @ u + c + g)) < tol


@pytest.mark.parametrize("name", sorted(PIN_CASES))
def test_reference_matches_dense_formulas_with_pinocchio(name):
    path, tips, lock = PIN_CASES[name]
    robot = soagen.load_urdf(erd_urdf(path), tips=tips, lock=lock)
    oracle = Oracle(robot, urdf=erd_urdf(path), lock=lock)
    rng = np.random.default_rng(4)
    for _ in range(20):
        q, qd, _, _ = robot.random_state(rng)
        J, jdqd = oracle.jacobian(q), oracle.jdot_qdot(q, qd)
        G = oracle.gravity(q)
        check_against_dense(robot, q, qd, rng.normal(size=6 * len(tips)), oracle.mass_matrix(q),
                            oracle.bias(q, qd) - G, G, J, jdqd)


@pytest.mark.parametrize("branches", [1, 2, 3])
def test_random_chain_and_trees_against_pinocchio(branches, tmp_path):
    """A random 8-joint chain (one arm), and m = 2 and 3 operational points on
    trees (coupling blocks Ω_ij of [CK]), written as URDF for Pinocchio."""
    spec = branching_spec(21 + branches, trunk=2, branches=branches, per_branch=6)
    tip_links = [name for name, _ in spec["tips"]]
    robot = robot_from_spec(spec, tips=tip_links)          # the URDF has no tip offsets
    urdf = tmp_path / "tree.urdf"
    urdf.write_text(random_urdf(spec))
    oracle = Oracle(robot, urdf=str(urdf))
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, qd, _, _ = robot.random_state(rng)
        J, jdqd = oracle.jacobian(q), oracle.jdot_qdot(q, qd)
        G = oracle.gravity(q)
        Om = ref.os_inertia_inverse(robot, q)
        if branches > 1:
            assert np.abs(Om[:6, 6:12]).max() > 1e-6      # arms are coupled through the trunk
        check_against_dense(robot, q, qd, rng.normal(size=6 * branches), oracle.mass_matrix(q),
                            oracle.bias(q, qd) - G, G, J, jdqd)


def test_separate_roots_give_zero_coupling():
    robot = random_robot(8, 6, tree=True, tips=2)
    roots = [k for k, b in enumerate(robot.bodies) if b.parent < 0]
    anc = [set(robot.ancestors(t.body)) for t in robot.tips]
    q = robot.random_state(np.random.default_rng(0))[0]
    Om = ref.os_inertia_inverse(robot, q)
    J = ref.jacobian(robot, q)
    assert rel(Om, J @ np.linalg.solve(ref.mass_matrix(robot, q), J.T)) < 1e-10
    if not anc[0] & anc[1]:
        assert len(roots) > 1 and np.all(Om[:6, 6:] == 0.0)


# ------------------------------------------------------------ generated code
GEN_CASES = {
    "ur5": lambda: robots.example("ur5"),
    "tree_2arms": lambda: branching_robot(31, trunk=1, branches=2, per_branch=6, realistic=True),
    "tree_3arms": lambda: branching_robot(32, trunk=1, branches=3, per_branch=6, realistic=True),
}
OS_FUNCTIONS = ["os_inertia_inverse", "os_inertia", "os_coriolis", "os_gravity", "os_bias", "osc_torque"]


@pytest.mark.parametrize("case", sorted(GEN_CASES))
def test_generated_os_functions_match_reference(case):
    robot, mod = built(case, GEN_CASES[case], functions=None if case == "ur5" else OS_FUNCTIONS)
    rng = np.random.default_rng(9)
    m = len(robot.tips)
    for _ in range(100):
        q, qd, _, _ = robot.random_state(rng)
        u = rng.normal(size=6 * m)
        assert rel(mod.os_inertia_inverse(q), ref.os_inertia_inverse(robot, q)) < 1e-10
        Lam = ref.os_inertia(robot, q)
        tol = 1e-10 * max(1.0, np.linalg.cond(Lam) * 1e-5)
        assert rel(mod.os_inertia(q), Lam) < tol
        assert rel(mod.os_coriolis(q, qd), ref.os_coriolis(robot, q, qd)) < tol
        assert rel(mod.os_gravity(q), ref.os_gravity(robot, q)) < tol
        assert rel(mod.os_bias(q, qd), ref.os_bias(robot, q, qd)) < tol
        assert rel(mod.osc_torque(q, qd, u), ref.osc_torque(robot, q, qd, u)) < tol


def test_singular_configuration_raises_never_nan():
    """UR5 with the elbow stretched (q3 = 0) has a rank-deficient Ω(0)."""
    robot, mod = built("ur5", GEN_CASES["ur5"])
    q = np.array([0.3, -1.0, 0.0, 0.4, 0.9, 0.2])
    qd = np.ones(6)
    Om = mod.os_inertia_inverse(q)
    assert np.all(np.isfinite(Om)) and np.linalg.svd(Om, compute_uv=False)[-1] < 1e-12
    for call in (lambda: mod.os_inertia(q), lambda: mod.os_coriolis(q, qd), lambda: mod.os_gravity(q),
                 lambda: mod.os_bias(q, qd), lambda: mod.osc_torque(q, qd, np.zeros(6))):
        with pytest.raises(soagen.SingularError, match="Omega"):
            call()
    with pytest.raises(soagen.SingularError):
        ref.os_inertia(robot, q)
    # the raw C function reports status 1 and leaves its output untouched
    lib, ffi = mod._lib.lib, mod._lib.ffi
    out = np.full(36, 7.0)
    status = lib.ur5_os_inertia(ffi.from_buffer("double[]", q), ffi.from_buffer("double[]", out))
    assert status == 1 and np.all(out == 7.0)
    # away from the singularity it works and is finite
    q[2] = 0.05
    assert np.all(np.isfinite(mod.os_inertia(q)))


def test_too_few_joints_for_a_tip_raises():
    robot, mod = built("chain3", lambda: random_robot(11, 3))
    with pytest.raises(soagen.SingularError):
        mod.os_inertia(np.zeros(3))


def test_os_inertia_ops_grow_linearly():
    """[KJR] §4.1: O(n) recursion plus a flat-cost 6×6 inversion."""
    from soagen.codegen import make_program

    muls = {}
    for n in (6, 12, 24):
        prog = make_program(random_robot(5, n, prismatic_fraction=0.0), "os_inertia_recursive")
        muls[n] = prog.ops["mul"]
    slope_a = (muls[12] - muls[6]) / 6
    slope_b = (muls[24] - muls[12]) / 12
    assert abs(slope_b - slope_a) < 0.1 * slope_a, muls
