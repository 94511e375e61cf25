"""∂τ/∂q, ∂τ/∂q̇ by the analytical recursion of Carpentier & Mansard (RSS 2018),
soagen.passes.analytic_derivatives: four routes agree.

the analytical recursion (its recorded program evaluated in Python, and its
generated C) = forward-mode differentiation of Newton–Euler (soagen.passes.tangent,
the other member of the family) = the numpy reference (one tangent Newton–Euler
pass per direction, soagen.reference) = Pinocchio's computeRNEADerivatives; on
seeded random chains and trees (prismatic joints, a floating base, spherical
joints, actuators) and on the Panda and Solo-12.  Each major term of the
recursion, changed, fails the comparison (:func:`test_a_mutated_term_fails`).
"""
from __future__ import annotations

import functools
import math

import numpy as np
import pinocchio as pin
import pytest
from sympy.printing.pycode import PythonCodePrinter

import soagen
from soagen import codegen
from soagen import functions as F
from soagen import reference as ref
from soagen.check import check_module
from soagen.model import pinocchio_convention as pc
from soagen.model import robots
from soagen.passes import analytic_derivatives as A
from soagen.passes.symbolic import matvec
from tests.support.builds import built
from tests.support.oracle import Oracle, erd_urdf
from tests.support.robots import random_robot

ANALYTIC = "inverse_dynamics_derivatives_analytic"
FORWARD_MODE = "inverse_dynamics_derivatives_forward_mode"
TOL = 1e-11                     # max |a − b| / max |b|: relative to the matrix, never to 1


def _actuated(robot):
    """Armature on joints 0, 2, 3; friction (viscous, Coulomb) on joints 1-4."""
    joints = [b.joint for b in robot.bodies]
    return robot.with_actuators({joints[i]: 0.1 * (i + 1) for i in (0, 2, 3)},
                                {joints[i]: (0.3 * i, 0.8) for i in (1, 2, 3, 4)})


ROBOTS = {
    "chain6_prismatic": lambda: random_robot(41, 6, prismatic_fraction=0.5),
    "tree7_2tips": lambda: random_robot(42, 7, tree=True, tips=2, prismatic_fraction=0.3),
    "floating_spherical": lambda: random_robot(43, 5, floating_base=True, spherical_fraction=0.4),
    "spherical_tree": lambda: random_robot(32, 6, tree=True, tips=2, spherical_fraction=0.5),
    "actuated_chain": lambda: _actuated(random_robot(44, 5, prismatic_fraction=0.4)),
    "puma560": lambda: robots.example("puma560"),
}


class _Printer(PythonCodePrinter):
    def _print_Symbol(self, s):
        return s.name.replace("[", "_[")          # input q[3] -> q_[3]; statements t12 as they are


def evaluate(prog):
    """A Python function of the finished program ``prog``'s inputs returning its outputs
    (lists): the recorded statements themselves, no C compiler."""
    pr = _Printer({"fully_qualified_modules": False, "standard": "python3"})
    lines = [f"def f({', '.join(a.name + '_' for a in prog.inputs)}):"]
    lines += [f"    {sym.name} = {pr.doprint(expr)}" for sym, expr in prog.statements()]
    lines.append("    return [" + ", ".join("[" + ", ".join(pr.doprint(e) for e in o.symbols) + "]"
                                           for o in prog.outputs) + "]")
    namespace = {name: getattr(math, name) for name in ("sin", "cos", "sqrt")}
    exec("\n".join(lines), namespace)
    return namespace["f"]


def program(robot, name):
    """The finished program of catalogue function ``name``, recorded in this process."""
    return codegen.record(F.BY_NAME[name], robot, soagen.Options()).finish()


def rel(got, want):
    """max |got − want| / max |want|, want non-trivial (an all-zero answer fails)."""
    want = np.asarray(want, float)
    got = np.reshape(np.asarray(got, float), want.shape)
    scale = float(np.abs(want).max())
    assert scale > 1e-3, "the comparison needs a non-zero reference"
    return float(np.abs(got - want).max() / scale)


def _errors(robot, fn, samples=4, seed=7):
    """Worst relative error of ``fn(q, qd, qdd) -> (dq, dqd)`` row-major against the reference."""
    rng = np.random.default_rng(seed)
    worst = 0.0
    for _ in range(samples):
        q, qd, qdd, _ = robot.random_state(rng)
        got = fn(q, qd, qdd)
        for g, w in zip(got, ref.inverse_dynamics_derivatives(robot, q, qd, qdd)):
            worst = max(worst, rel(g, w))
    return worst


@pytest.mark.parametrize("case", sorted(ROBOTS))
def test_recorded_program_matches_forward_mode_and_reference(case):
    robot = ROBOTS[case]()
    analytic, forward = evaluate(program(robot, ANALYTIC)), evaluate(program(robot, FORWARD_MODE))
    assert _errors(robot, analytic) < TOL
    assert _errors(robot, forward) < TOL
    rng = np.random.default_rng(8)
    for _ in range(3):
        q, qd, qdd, _ = robot.random_state(rng)
        for a, b in zip(analytic(q, qd, qdd), forward(q, qd, qdd)):
            assert rel(a, b) < TOL


def _pinocchio(robot, oracle, q, qd, qdd):
    """Pinocchio's ∂τ/∂q, ∂τ/∂q̇ in soagen's conventions (without the actuators' friction slope)."""
    dq, dv, _ = (np.array(x) for x in pin.computeRNEADerivatives(oracle.model, oracle.data, oracle.q(q),
                                                                   oracle.v(qd), oracle.v(qdd)))
    return pc.matrix_from_pinocchio(robot, dq), pc.matrix_from_pinocchio(robot, dv)


PINOCCHIO = {
    "panda": lambda: (robots.example("panda"), robots.urdf_path("panda"),
                      {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
    "solo12_floating": lambda: (soagen.load_urdf(erd_urdf("solo_description/robots/solo12.urdf"),
                                                 floating_base=True),
                                erd_urdf("solo_description/robots/solo12.urdf"), None),
    "floating_spherical": lambda: (ROBOTS["floating_spherical"](), None, None),
    "spherical_tree": lambda: (ROBOTS["spherical_tree"](), None, None),
}


@pytest.mark.parametrize("case", sorted(PINOCCHIO))
def test_recorded_program_matches_pinocchio(case):
    robot, urdf, lock = PINOCCHIO[case]()
    oracle = Oracle(robot, urdf=urdf, lock=lock)
    analytic = evaluate(program(robot, ANALYTIC))
    rng = np.random.default_rng(12)
    for _ in range(4):
        q, qd, qdd, _ = robot.random_state(rng)
        for got, want in zip(analytic(q, qd, qdd), _pinocchio(robot, oracle, q, qd, qdd)):
            assert rel(got, want) < TOL


GENERATED = {
    "panda": (lambda: robots.example("panda"), None),
    "floating_spherical": (ROBOTS["floating_spherical"], None),
    "actuated_chain": (ROBOTS["actuated_chain"], None),
}


@pytest.mark.parametrize("case", sorted(GENERATED))
def test_generated_c_matches_reference_forward_mode_and_pinocchio(case):
    """The C of both candidates and of ∂θ̈/∂x through the analytical ∂τ/∂x (item 2) against
    the reference (soagen check), each other and, without actuators, Pinocchio."""
    make, _ = GENERATED[case]
    names = [ANALYTIC, FORWARD_MODE, "forward_dynamics_derivatives_via_analytic_id"]
    robot, mod = built(f"analytic_derivatives_{case}", make, functions=names)
    results = check_module(robot, mod, samples=20, seed=11)
    assert sorted(results) == sorted(names) and all(r.compared == 20 for r in results.values())
    assert not {k: r.error for k, r in results.items() if not r.ok}
    oracle = None if robot.actuators is not None else Oracle(robot, *(
        (robots.urdf_path("panda"), {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0})
        if case == "panda" else (None, None)))
    rng = np.random.default_rng(13)
    for _ in range(5):
        q, qd, qdd, tau = robot.random_state(rng)
        got = mod.call(ANALYTIC, q, qd, qdd)
        for a, b in zip(got, mod.call(FORWARD_MODE, q, qd, qdd)):
            assert rel(a, b) < TOL
        if oracle is not None:
            for a, b in zip(got, _pinocchio(robot, oracle, q, qd, qdd)):
                assert rel(a, b) < TOL
        _, fq, fv, _ = ref.forward_dynamics_derivatives(robot, q, qd, tau)
        _, gq, gv, _ = mod.call("forward_dynamics_derivatives_via_analytic_id", q, qd, tau)
        kappa = np.linalg.cond(ref.mass_matrix(robot, q))
        assert rel(gq, fq) < 1e-13 * kappa and rel(gv, fv) < 1e-13 * kappa


def test_family_picks_by_operation_count():
    """The family function is the cheaper candidate: forward mode on the PUMA 560
    (a short chain whose body frames are sparse), the analytical recursion on the
    Panda; the family's C is then the picked candidate's."""
    picks = {}
    for name in ("puma560", "panda"):
        robot = robots.example(name)
        prog = codegen.make_program(robot, "inverse_dynamics_derivatives")
        costs = {lab: F.cost(program(robot, s.name).ops) for lab, s in F.candidates("inverse_dynamics_derivatives")}
        assert prog.algorithm == min(costs, key=costs.get) and F.cost(prog.ops) == min(costs.values())
        picks[name] = prog.algorithm
    assert picks == {"puma560": "forward_mode", "panda": "analytic"}
    assert [lab for lab, _ in F.candidates("forward_dynamics_derivatives")] == ["via_id", "via_analytic_id"]


def _negated(fn):
    def mutated(*args):
        out = fn(*args)
        return None if out is None else tuple([-x for x in part] for part in out)
    return mutated


def _without_shift(prog, R, p, x):           # S_k without p × Rω
    return matvec(prog, R, x[0]), matvec(prog, R, x[1])


def _sigma_dropped(prog, I, v, h):           # B without its symmetric part Σ
    B = ORIGINAL["variation"](prog, I, v, h)
    return A.Variation([[0] * 3 for _ in range(3)], B.h)


def _inertia_without_first_moment(self, prog, x):   # I x without h × v, h × ω
    w, v = x
    n = [prog.let(sum(self.J[i][j] * w[j] for j in range(3))) for i in range(3)]
    return n, [prog.let(self.m * e) for e in v]


def _no_carry(prog, v, f):                   # v ×* f lost everywhere: f_k, s ×* F̃ above k
    return [0, 0, 0], [0, 0, 0]


def _gravity_unrotated(sw, at=None):       # the world's −g left in world axes in a floating base's frame
    pose, gravity = ORIGINAL["fixed_frames"](sw, at)
    return pose, {k: (A.S.ZERO3, [-x for x in sw.robot.gravity]) for k in gravity}


ORIGINAL = {"variation": A.variation, "fixed_frames": A.fixed_frames}
#: one major term of the recursion each, changed
MUTATIONS = {
    "motion_cross_sign": ("motion_cross", lambda prog, v, x: ORIGINAL_MC(prog, x, v)),   # x × v = −v × x
    "force_cross_zero": ("force_cross", _no_carry),
    "variation_times_sign": ("Variation.times", _negated(A.Variation.times)),
    "variation_transpose_sign": ("Variation.transpose_times", _negated(A.Variation.transpose_times)),
    "sigma_dropped": ("variation", _sigma_dropped),
    "inertia_first_moment": ("S.RigidInertia.times", _inertia_without_first_moment),
    "motion_subspace_shift": ("to_world", _without_shift),
    "friction_slope": ("friction_slope", lambda sw, qd: [0] * sw.robot.nv),
    "base_frame_gravity": ("fixed_frames", _gravity_unrotated),
    "one_dof_bias_sign": ("_scale6", lambda prog, x, c: ORIGINAL_SCALE6(prog, x, -c)),   # v_k × S_k q̇_k = ν q̇_k
}
ORIGINAL_SCALE6 = A._scale6
ORIGINAL_MC = A.motion_cross


@pytest.mark.parametrize("mutation", sorted(MUTATIONS))
def test_a_mutated_term_fails(mutation, monkeypatch):
    """Each major term changed (a sign, a dropped product) gives answers the reference
    rejects on a robot that exercises it: the tests above would catch it."""
    where, replacement = MUTATIONS[mutation]
    owner, _, attr = where.rpartition(".")
    monkeypatch.setattr(functools.reduce(getattr, owner.split("."), A) if owner else A, attr, replacement)
    robot = ROBOTS["actuated_chain" if mutation == "friction_slope" else "floating_spherical"]()
    assert _errors(robot, evaluate(program(robot, ANALYTIC)), samples=2) > 1e-3
