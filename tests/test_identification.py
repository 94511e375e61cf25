"""The regressors, the standard and base parameters: generated C = numpy
reference = Pinocchio (computeJointTorqueRegressor, toDynamicParameters,
computeCoriolisMatrix), on the bundled robots, seeded random chains and trees
and a floating-base robot with spherical joints."""
from __future__ import annotations

import numpy as np
import pytest

import soagen
from soagen.model import parameters as P
from soagen import reference as ref
from soagen.model import robots
from soagen.reference.identifiable import base_parameters, identifiable
from tests.support import assert_close
from tests.support.builds import built
from tests.support.oracle import Oracle
from tests.support.robots import random_robot

FUNCTIONS = ["regressor", "base_regressor", "slotine_li_regressor", "inverse_dynamics"]
CASES = {
    "puma560": lambda: robots.example("puma560"),
    "panda": lambda: robots.example("panda"),
    "ur5": lambda: robots.example("ur5"),
    "chain": lambda: random_robot(14, 6, prismatic_fraction=0.5),     # r r p r r p
    "tree": lambda: random_robot(12, 7, tree=True),
    "floating": lambda: random_robot(13, 4, floating_base=True, spherical_fraction=0.5),
}
URDFS = {"panda": (robots.urdf_path("panda"), {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
         "ur5": (robots.urdf_path("ur5"), None)}


def _oracle(case, robot):
    urdf, lock = URDFS.get(case, (None, None))
    return Oracle(robot, urdf=urdf, lock=lock)


@pytest.mark.parametrize("case", sorted(CASES))
def test_parameters_are_pinocchios(case):
    """π in Pinocchio's order and frame: toDynamicParameters of Pinocchio's own
    model (its URDF parser for the Panda and UR5); and a robot rebuilt from π has π."""
    robot = CASES[case]()
    pi = robot.parameters()
    assert pi.shape == (10 * robot.nb,) and np.abs(pi).max() > 0.1
    assert_close(pi, _oracle(case, robot).parameters(), 1e-12, case)
    assert_close(robot.with_parameters(pi).parameters(), pi, 1e-14, case)


@pytest.mark.parametrize("case", sorted(CASES))
def test_regressors_three_routes(case):
    """Y, Y_b and the Slotine–Li Y: generated = reference = Pinocchio on 10 seeded
    states; Y π = τ (generated inverse dynamics, Pinocchio's rnea), Y_b β = τ."""
    robot, mod = built(case, CASES[case], functions=FUNCTIONS)
    oracle = _oracle(case, robot)
    pi = robot.parameters()
    beta, K = soagen.base_parameters(robot)
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, qd, qdd, _ = robot.random_state(rng)
        qdr, qddr = rng.normal(size=robot.nv), rng.normal(size=robot.nv)
        Y = mod.regressor(q, qd, qdd)
        assert Y.shape == (robot.nv, robot.n_parameters)
        assert_close(Y, ref.regressor(robot, q, qd, qdd), 1e-12, "generated vs reference")
        # 1e-11 against Pinocchio: both read the same file (soagen makes constants exact only
        # within 4 ulps), so what differs is round-off
        assert_close(Y, oracle.regressor(q, qd, qdd), 1e-11, "generated vs Pinocchio")
        tau = oracle.rnea(q, qd, qdd)
        assert_close(Y @ pi, tau, 1e-11, "Y pi vs rnea")
        assert_close(Y @ pi, mod.inverse_dynamics(q, qd, qdd), 1e-12, "Y pi vs generated inverse dynamics")
        Yb = mod.base_regressor(q, qd, qdd)
        assert Yb.shape == (robot.nv, len(beta))
        assert_close(Yb, Y[:, list(identifiable(robot).columns)], 1e-14, "Y_b is Y's base columns")
        assert_close(Yb @ beta, tau, 1e-11, "Y_b beta vs rnea")
        assert_close(Yb @ beta, Y @ pi, 1e-12, "Y_b beta vs Y pi")
        Ys = mod.slotine_li_regressor(q, qd, qdr, qddr)
        assert_close(Ys, ref.slotine_li_regressor(robot, q, qd, qdr, qddr), 1e-12, "Slotine-Li vs reference")
        assert_close(Ys @ pi, oracle.slotine_li(q, qd, qdr, qddr), 1e-10, "Slotine-Li vs Pinocchio")
    # the Slotine–Li regressor is the regressor when q̇_r = q̇, q̈_r = q̈
    assert_close(mod.slotine_li_regressor(q, qd, qd, qdd), mod.regressor(q, qd, qdd), 1e-12, "q_r = q")


def test_robot_base_parameters_is_removed():
    """``Robot.base_parameters()`` (deprecated two releases) is gone; ``soagen.base_parameters(robot)`` is the way."""
    robot = CASES["puma560"]()
    assert not hasattr(robot, "base_parameters")
    beta, K = soagen.base_parameters(robot)
    assert len(beta) == 36 and K.shape == (36, 60)


@pytest.mark.parametrize("case", sorted(CASES))
def test_base_parameters(case):
    """b is the rank of Pinocchio's regressor stacked over other states than the
    ones soagen used; Y = Y_b K there (so Y π = Y_b β for every π); deterministic."""
    robot = CASES[case]()
    base = identifiable(robot)
    oracle = _oracle(case, robot)
    rng = np.random.default_rng(99)
    Y = np.vstack([oracle.regressor(*robot.random_state(rng)[:3]) for _ in range(2 * base.states)])
    s = np.linalg.svd(Y, compute_uv=False)
    assert int(np.sum(s > 1e-9 * s[0])) == base.b
    assert 0 < base.b < robot.n_parameters
    # K is a least-squares fit: accurate to about cond(Y_b) ε (1e-11 on the random tree)
    assert_close(Y[:, list(base.columns)] @ base.K, Y, 1e-10, "Y = Y_b K")
    assert_close(base.K[:, list(base.columns)], np.eye(base.b), 0, "K is the identity on the base columns")
    again = base_parameters(robot)
    assert again.columns == base.columns and np.array_equal(again.K, base.K)
    kept, dropped = base.gap
    assert kept > 1e-3 and dropped < 1e-13, base.gap


def test_puma560_and_rx90_base_parameters_match_the_regrouping_rules():
    """The RX-90 (OpenSYMORO's sample robot, armature IA included) regroups to
    OpenSYMORO's own base parameters (symoro/symoro, Robots/RX90/RX90_regp.txt):
    36 inertial + IA3..IA6 = 40, each combination as its regrouping formula in
    D3 and RL4.  The PUMA 560 (its joint-2/3 offsets d3 = -0.0934 and a3 =
    -0.0203 aside, the RX-90's axes) has 36 as well."""
    d3, rl4 = 0.45, 0.42
    rx90 = robots.rx90(d3=d3, rl4=rl4).with_actuators(armature={f"joint{i}": 0.1 for i in range(1, 7)})
    base = identifiable(rx90)
    names = P.parameter_names(rx90)
    inertial = [c for c in base.columns if not names[c].endswith(("viscous", "coulomb"))]
    assert len(inertial) == 40 and base.b == 40 + 12            # + Coulomb and viscous per joint
    # OpenSYMORO's names: XX -> Ixx, MX -> mcx, IA -> armature; link j is body j-1
    symoro = ["ZZ1"] + ["XX2", "XY2", "XZ2", "YZ2", "ZZ2", "MX2", "MY2"] + \
        [f"{p}{j}" for j in range(3, 7) for p in ("XX", "XY", "XZ", "YZ", "ZZ", "MX", "MY", "IA")]
    ours = {"XX": "Ixx", "XY": "Ixy", "XZ": "Ixz", "YZ": "Iyz", "ZZ": "Izz", "MX": "mcx", "MY": "mcy"}
    expected = {f"link{s[2]}.{ours[s[:2]]}" if s[:2] != "IA" else f"joint{s[2]}.armature" for s in symoro}
    assert {names[c] for c in inertial} == expected

    def row(name):
        i = list(base.columns).index(names.index(name))
        return {names[j]: k for j, k in enumerate(base.K[i]) if k != 0}

    mr3 = {f"link{j}.m": 1.0 for j in (3, 4, 5, 6)}
    mr4 = {f"link{j}.m": 1.0 for j in (4, 5, 6)}

    def check(name, formula):
        got = row(name)
        assert set(got) == set(formula), (name, got, formula)
        for key, value in formula.items():
            assert abs(got[key] - value) < 1e-9, (name, key, got[key], value)

    # ZZR1 = IA1 + ZZ1 + YY2 + YY3 + D3² MR3;  XXR2 = XX2 - YY2 - D3² MR3;  XZR2 = XZ2 - D3 MZ3
    check("link1.Izz", {"link1.Izz": 1, "joint1.armature": 1, "link2.Iyy": 1, "link3.Iyy": 1,
                        **{k: d3 ** 2 for k in mr3}})
    check("link2.Ixx", {"link2.Ixx": 1, "link2.Iyy": -1, **{k: -d3 ** 2 for k in mr3}})
    check("link2.Ixz", {"link2.Ixz": 1, "link3.mcz": -d3})
    check("link2.Izz", {"link2.Izz": 1, "joint2.armature": 1, **{k: d3 ** 2 for k in mr3}})
    check("link2.mcx", {"link2.mcx": 1, **{k: d3 for k in mr3}})
    # XXR3 = XX3 - YY3 + YY4 + RL4² MR4 + 2 RL4 MZ4;  MYR3 = MY3 + MZ4 + RL4 MR4
    check("link3.Ixx", {"link3.Ixx": 1, "link3.Iyy": -1, "link4.Iyy": 1, "link4.mcz": 2 * rl4,
                        **{k: rl4 ** 2 for k in mr4}})
    check("link3.mcy", {"link3.mcy": 1, "link4.mcz": 1, **{k: rl4 for k in mr4}})
    # MYR4 = MY4 - MZ5, MYR5 = MY5 + MZ6, XXR6 = XX6 - YY6
    check("link4.mcy", {"link4.mcy": 1, "link5.mcz": -1})
    check("link5.mcy", {"link5.mcy": 1, "link6.mcz": 1})
    check("link6.Ixx", {"link6.Ixx": 1, "link6.Iyy": -1})
    assert identifiable(robots.rx90()).b == 36 and identifiable(robots.example("puma560")).b == 36


def test_base_regressor_needs_nothing_but_the_base_columns():
    """Zero and dependent columns cost nothing: the base regressor has fewer
    operations than the regressor (Panda)."""
    _, mod = built("panda", CASES["panda"], functions=FUNCTIONS)
    ops = mod.ops
    assert ops["base_regressor"]["mul"] < 0.85 * ops["regressor"]["mul"], ops


def test_slotine_li_factorization_is_christoffel():
    """C(q, q̇) from the generated Slotine–Li regressor, C e_j = Y(q, q̇, e_j, 0) π − G:
    Ṁ − 2C is skew-symmetric (Ṁ by central differences along q̇), and C is the
    Christoffel factorization, c_ij = Σ_k ½(∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) q̇_k
    (the skew property alone does not fix C)."""
    for case in ("tree", "floating"):
        robot, mod = built(case, CASES[case], functions=FUNCTIONS)
        pi = robot.parameters()
        n = robot.nv
        rng = np.random.default_rng(3)
        q, qd, _, _ = robot.random_state(rng)
        zero = np.zeros(n)
        G = mod.slotine_li_regressor(q, qd, zero, zero) @ pi
        C = np.column_stack([mod.slotine_li_regressor(q, qd, e, zero) @ pi - G for e in np.eye(n)])
        h = 1e-5
        M = lambda x: ref.mass_matrix(robot, x)   # noqa: E731
        Mdot = (M(robot.integrate(q, qd, h)) - M(robot.integrate(q, qd, -h))) / (2 * h)
        N = Mdot - 2 * C
        assert np.abs(N).max() > 1e-2                         # not trivially zero
        assert np.abs(N + N.T).max() < 1e-7 * np.abs(N).max(), case
        if case == "tree":                                     # q is a vector space: ∂M/∂q_k
            dM = [(M(q + h * e) - M(q - h * e)) / (2 * h) for e in np.eye(n)]
            assert_close(C, np.einsum("ijk,k->ij", _christoffel(dM), qd), 1e-7, "Christoffel symbols")


def _christoffel(dM):
    """Γ_ijk = ½(∂M_ij/∂q_k + ∂M_ik/∂q_j − ∂M_jk/∂q_i) from dM[k] = ∂M/∂q_k."""
    D = np.array(dM)                      # D[k, i, j] = ∂M_ij/∂q_k
    return 0.5 * (np.einsum("kij->ijk", D) + np.einsum("jik->ijk", D) - np.einsum("ijk->ijk", D))


def test_parameters_rejects_bad_vectors():
    robot = robots.example("ur5")
    with pytest.raises(soagen.RobotError):
        robot.with_parameters(np.zeros(3))
    pi = robot.parameters()
    pi[0], pi[1] = 0.0, 0.1                                   # m = 0 but m c ≠ 0
    with pytest.raises(soagen.RobotError, match="m = 0"):
        robot.with_parameters(pi)
