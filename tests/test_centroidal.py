"""Centre of mass, its Jacobian, the centroidal momentum matrix A_G and Ȧ_G q̇: three routes.

1. generated C (composite-inertia recursion, :mod:`soagen.passes.centroidal`) = numpy reference
   (from the definitions, body by body, :mod:`soagen.reference.centroidal`), by ``soagen check``'s
   comparison on random fixed and floating trees with spherical and prismatic joints;
2. reference = Pinocchio: ``centerOfMass``, ``jacobianCenterOfMass``, ``ccrba`` (its A_G has rows
   [linear; angular]) and ``dccrba`` (Ȧ_G), on the same robots and on solo12 with a floating base;
3. a property that ties A_G to the momentum it defines: A_G q̇ equals the total momentum about
   the centre of mass from Pinocchio's body velocities and inertias.

The centroidal dynamics derivatives (h_G, ḣ_G along q, q̇, q̈): generated (forward mode, and the
analytical route from the RNEA derivatives' composites) = reference (tangent Newton–Euler passes in
world axes) on a random floating tree, a random fixed tree with spherical joints and solo12; reference =
Pinocchio's ``computeCentroidalDynamicsDerivatives`` and ``computeCentroidalMomentumTimeVariation``;
the reference's A_G and ḣ_G = A_G q̈ + Ȧ_G q̇ = its own centroidal functions.
"""
from __future__ import annotations

import tempfile
from pathlib import Path

import numpy as np
import pinocchio as pin
import pytest

import soagen
from soagen import reference as ref
from soagen.check import check_module
from tests.support import assert_checked, rel
from tests.support.builds import built
from tests.support.oracle import Oracle, erd_urdf
from tests.support.robots import branching_robot, random_robot

FUNCTIONS = ["center_of_mass", "com_jacobian", "centroidal_momentum_matrix", "centroidal_bias"]
ROBOTS = {
    "chain5_prismatic": lambda: random_robot(41, 5, prismatic_fraction=0.4),
    "spherical_tree": lambda: random_robot(42, 7, tree=True, tips=2, spherical_fraction=0.5),
    "floating_tree": lambda: random_robot(43, 8, tree=True, tips=2, floating_base=True, spherical_fraction=0.3,
                                          prismatic_fraction=0.2),
}
SOLO = "solo_description/robots/solo12.urdf"


def pinocchio_centroidal(robot, oracle, q, qd):
    """(G, J_G, A_G, Ȧ_G q̇) from Pinocchio, in soagen's conventions: rows [angular; linear],
    columns in soagen's velocity order (free-flyer [ω; v])."""
    model, data = oracle.model, oracle.data
    qp, vp = oracle.q(q), oracle.v(qd)
    perm = oracle.v(np.arange(robot.nv)).astype(int)        # v_pin = v[perm]: column perm[j] of Pinocchio is j
    cols = np.argsort(perm)
    G = pin.centerOfMass(model, data, qp)
    JG = pin.jacobianCenterOfMass(model, data, qp)[:, cols]
    Ag = np.array(pin.ccrba(model, data, qp, vp))
    dAg = np.array(pin.dccrba(model, data, qp, vp))
    swap = [3, 4, 5, 0, 1, 2]
    return G, JG, Ag[swap][:, cols], (dAg @ vp)[swap]


@pytest.mark.parametrize("case", sorted(ROBOTS))
def test_generated_matches_reference(case):
    robot, mod = built(f"centroidal_{case}", ROBOTS[case], functions=FUNCTIONS)
    results = check_module(robot, mod, samples=40, seed=5)
    assert list(results) == FUNCTIONS
    assert_checked(robot, results, 40)


@pytest.mark.parametrize("case", sorted(ROBOTS) + ["solo12"])
def test_reference_matches_pinocchio(case):
    if case == "solo12":
        robot = soagen.load_urdf(erd_urdf(SOLO), floating_base=True)
        oracle = Oracle(robot, urdf=erd_urdf(SOLO))
    else:
        robot = ROBOTS[case]()
        oracle = Oracle(robot)
    rng = np.random.default_rng(8)
    for _ in range(10):
        q, qd, _, _ = robot.random_state(rng)
        G, JG, Ag, bias = pinocchio_centroidal(robot, oracle, q, qd)
        assert rel(ref.center_of_mass(robot, q), G) < 1e-12
        assert rel(ref.com_jacobian(robot, q), JG) < 1e-12
        assert rel(ref.centroidal_momentum_matrix(robot, q), Ag) < 1e-12
        assert rel(ref.centroidal_bias(robot, q, qd), bias) < 1e-11
        assert np.abs(Ag).max() > 1e-3 and np.abs(bias).max() > 1e-3       # not a pair of zeros


def test_pinocchio_convention_converts_ccrba():
    """soagen.pinocchio_convention.centroidal_from_pinocchio = this file's own conversion, on a floating base."""
    robot = ROBOTS["floating_tree"]()
    oracle = Oracle(robot)
    q, qd, _, _ = robot.random_state(np.random.default_rng(11))
    _, _, Ag, _ = pinocchio_centroidal(robot, oracle, q, qd)
    raw = np.array(pin.ccrba(oracle.model, oracle.data, oracle.q(q), oracle.v(qd)))
    assert np.array_equal(soagen.pinocchio_convention.centroidal_from_pinocchio(robot, raw), Ag)


def test_solo12_generated_matches_pinocchio():
    """The generated functions of solo12 (floating base, four legs) against Pinocchio directly."""
    robot = soagen.load_urdf(erd_urdf(SOLO), floating_base=True)
    _, mod = built("centroidal_solo12", lambda: robot, functions=FUNCTIONS)
    oracle = Oracle(robot, urdf=erd_urdf(SOLO))
    rng = np.random.default_rng(9)
    for _ in range(10):
        q, qd, _, _ = robot.random_state(rng)
        G, JG, Ag, bias = pinocchio_centroidal(robot, oracle, q, qd)
        for got, want in ((mod.center_of_mass(q), G), (mod.com_jacobian(q), JG),
                          (mod.centroidal_momentum_matrix(q), Ag), (mod.centroidal_bias(q, qd), bias)):
            assert rel(got, want) < 1e-11


def test_momentum_matrix_gives_the_momentum_about_the_centre_of_mass():
    """A_G q̇ = Σ_k [R I_k Rᵀ ω_k + m_k (c_k − G) × ċ_k; m_k ċ_k], the bodies' velocities from Pinocchio."""
    robot = ROBOTS["floating_tree"]()
    oracle = Oracle(robot)
    model, data = oracle.model, oracle.data
    rng = np.random.default_rng(10)
    q, qd, _, _ = robot.random_state(rng)
    qp, vp = oracle.q(q), oracle.v(qd)
    pin.forwardKinematics(model, data, qp, vp)
    G = pin.centerOfMass(model, data, qp)
    h = np.zeros(6)
    for i in range(1, model.njoints):
        Y = model.inertias[i]
        if Y.mass == 0.0:
            continue
        oMi = data.oMi[i]
        vel = data.v[i]                                   # local frame of joint i
        w = oMi.rotation @ vel.angular
        c = oMi.act(Y.lever)
        cdot = oMi.rotation @ (vel.linear + np.cross(vel.angular, Y.lever))
        Iw = oMi.rotation @ Y.inertia @ oMi.rotation.T
        h[:3] += Iw @ w + Y.mass * np.cross(c - G, cdot)
        h[3:] += Y.mass * cdot
    assert rel(ref.centroidal_momentum_matrix(robot, q) @ qd, h) < 1e-12
    assert np.abs(h).max() > 1e-2


def solo12():
    return soagen.load_urdf(erd_urdf(SOLO), floating_base=True)


DERIVATIVES = ["centroidal_dynamics_derivatives_forward_mode", "centroidal_dynamics_derivatives_analytic"]
#: a free body with an arm and, beside it, an arm fixed to the world: two roots, one floating (the
#: analytical member records forward mode there: its trees would be worked in different frames)
FREE_AND_FIXED = """<mujoco><worldbody>
<body pos="0 0 1"><freejoint/><geom size=".1" mass="1"/>
  <body pos="0 0 .3"><joint type="hinge" axis="0 1 0"/><geom size=".1" pos=".1 0 0" mass=".5"/></body></body>
<body pos="1 0 0"><joint type="hinge" axis="0 0 1"/><geom type="capsule" fromto="0 0 0 .3 0 0" size=".05" mass="2"/>
  <body pos=".3 0 0"><joint type="ball"/><geom type="box" size=".1 .05 .02" pos=".1 0 0" mass="1"/></body></body>
</worldbody></mujoco>"""
def free_and_fixed():
    path = Path(tempfile.mkdtemp()) / "free_and_fixed.xml"
    path.write_text(FREE_AND_FIXED)
    return soagen.load_mjcf(path)


FORWARD_MODE, ANALYTIC = DERIVATIVES
#: robot -> the members built for it: forward mode (an O(n²) compile) on two, the analytical member on all
DERIVATIVE_ROBOTS = {
    "floating_tree": (ROBOTS["floating_tree"], DERIVATIVES), "solo12": (solo12, DERIVATIVES),
    "spherical_tree": (ROBOTS["spherical_tree"], [ANALYTIC]),
    "two_fixed_roots": (lambda: branching_robot(33, trunk=0, branches=2, per_branch=3), [ANALYTIC]),
    "free_and_fixed": (free_and_fixed, [ANALYTIC]),
}


@pytest.mark.parametrize("case", sorted(DERIVATIVE_ROBOTS))
def test_generated_derivatives_match_reference(case):
    """Forward mode, and the analytical route from the RNEA derivatives' composites (its cases: a
    floating base's own directions on the floating tree and solo12, roots fixed in the world and
    multi-dof joints on the spherical tree, two roots summed, and a floating root beside a fixed
    one, where it records forward mode)."""
    make, members = DERIVATIVE_ROBOTS[case]
    robot, mod = built(f"centroidal_derivatives_{case}", make, functions=members)
    results = check_module(robot, mod, samples=20, seed=6)
    assert_checked(robot, results, 20)
    for name in members:
        assert results[name].compared == 20


def test_family_picks_the_analytical_route():
    """On a chain with prismatic joints the analytical route has well under half of forward mode's
    operations, and the family function is it (its program the analytical one, renamed)."""
    from soagen import codegen, functions as F

    robot = ROBOTS["chain5_prismatic"]()
    prog = codegen.make_program(robot, "centroidal_dynamics_derivatives")
    costs = {lab: F.cost(codegen.make_program(robot, s.name).ops)
             for lab, s in F.candidates("centroidal_dynamics_derivatives")}
    assert costs["analytic"] < 0.5 * costs["forward_mode"], costs
    assert prog.algorithm == "analytic" and F.cost(prog.ops) == costs["analytic"]


@pytest.mark.parametrize("case", sorted(ROBOTS) + ["solo12"])
def test_reference_derivatives_match_pinocchio(case):
    robot = solo12() if case == "solo12" else ROBOTS[case]()
    oracle = Oracle(robot, urdf=erd_urdf(SOLO)) if case == "solo12" else Oracle(robot)
    model, data = oracle.model, oracle.data
    rng = np.random.default_rng(12)
    for _ in range(3):
        q, qd, qdd, _ = robot.random_state(rng)
        h, hdot, *derivatives = ref.centroidal_dynamics_derivatives(robot, q, qd, qdd)
        qp, vp, ap = oracle.q(q), oracle.v(qd), oracle.v(qdd)
        want = [soagen.pinocchio_convention.centroidal_from_pinocchio(robot, x)
                for x in pin.computeCentroidalDynamicsDerivatives(model, data, qp, vp, ap)]
        pin.computeCentroidalMomentumTimeVariation(model, data, qp, vp, ap)
        assert rel(h, np.concatenate([data.hg.angular, data.hg.linear])) < 1e-12
        assert rel(hdot, np.concatenate([data.dhg.angular, data.dhg.linear])) < 1e-12
        for name, a, b in zip(("dh_dq", "dhdot_dq", "dhdot_dqd", "Ag"), derivatives, want):
            assert rel(a, b) < 1e-12, (case, name, rel(a, b))
            assert np.abs(b).max() > 1e-3, (case, name)
        Ag = ref.centroidal_momentum_matrix(robot, q)
        assert rel(derivatives[3], Ag) < 1e-13
        assert rel(hdot, Ag @ qdd + ref.centroidal_bias(robot, q, qd)) < 1e-12
