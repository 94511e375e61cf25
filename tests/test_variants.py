"""Algorithm variants (``--variants``): each computes the same quantity as the
default function by another algorithm; all agree with the numpy reference,
and with dense operator formulas through it."""
from __future__ import annotations

import numpy as np
import pytest
import sympy as sp

import soagen
from soagen import functions as F
from soagen import reference as ref
from soagen.model import robots
from soagen.passes import ldl as LD
from soagen.check import check_module
from soagen.codegen import generate
from soagen.program.statements import Program
from tests.support import assert_checked
from tests.support.builds import built
from tests.support.robots import random_robot
from tests.test_generated_vs_reference import CASES as GEN_CASES

VARIANT_LABELS = {"mass_matrix_ne", "mass_matrix_inverse_innovations", "mass_matrix_inverse_cholesky",
                  "forward_dynamics_fd4", "forward_dynamics_fd1", "forward_dynamics_fd2", "forward_dynamics_fd3",
                  "forward_dynamics_crba", "os_inertia_recursive", "os_inertia_explicit"}
CASES = {
    "ur5_variants": lambda: robots.example("ur5"),            # a real URDF
    # the PUMA, the random tree (three tips) and chain of tests/test_generated_vs_reference.py, built
    # there with every variant under the options below: one build (one cache entry) serves both files
    "puma560_variants": GEN_CASES["puma560"],
    "tree9_variants": GEN_CASES["tree9_3tips"],
    "chain7_variants": GEN_CASES["chain7_prismatic"],
}
#: build options per case: every variant; the UR5's build also carries the SIMD batches, which
#: tests/test_simd.py and tests/test_cuda.py check on the same module (one build, not two)
OPTIONS = {case: dict(variants=None, simd=case == "ur5_variants") for case in CASES}


@pytest.mark.parametrize("case", sorted(CASES))
def test_variants_match_reference(case):
    robot, mod = built(case, CASES[case], **OPTIONS[case])
    results = check_module(robot, mod, samples=60, seed=3)
    assert set(results) >= VARIANT_LABELS
    for name in VARIANT_LABELS:   # the Λ(0) routes where Ω(0) is well conditioned (the arms); the rest always
        if not name.startswith("os_"):
            assert results[name].compared == 60, (name, results[name])
        elif case in ("puma560_variants", "ur5_variants"):
            assert results[name].compared >= 10, (name, results[name])
    assert_checked(robot, results, 60)   # Λ(0)-based functions UNTESTED where Λ(0) cannot exist


def test_fd2_tip_accelerations_are_j_qdd_plus_jdot_qdot():
    """FD2's α(0) [RK (4.23)] = J θ̈ + J̇θ̇, θ̈ from FD4, J dense from reference."""
    robot, mod = built("puma560_variants", CASES["puma560_variants"], **OPTIONS["puma560_variants"])
    rng = np.random.default_rng(5)
    for _ in range(10):
        q, qd, _, tau = robot.random_state(rng)
        qdd, a0 = mod.call("forward_dynamics_fd2", q, qd, tau)
        np.testing.assert_allclose(qdd, mod.forward_dynamics(q, qd, tau), rtol=1e-12, atol=1e-12)
        want = ref.jacobian(robot, q) @ qdd + ref.jdot_qdot(robot, q, qd)
        np.testing.assert_allclose(a0, want, rtol=1e-10, atol=1e-10)


def test_cholesky_inverse_is_the_inverse_of_composite_m():
    robot, mod = built("tree9_variants", CASES["tree9_variants"], **OPTIONS["tree9_variants"])
    rng = np.random.default_rng(6)
    for _ in range(10):
        q = robot.random_state(rng)[0]
        M = mod.mass_matrix(q, "newton_euler")
        np.testing.assert_allclose(M, mod.mass_matrix(q), rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(mod.mass_matrix_inverse(q, "cholesky") @ M, np.eye(robot.n), atol=1e-9)


def _ltdl_ops(robot, reverse=True):
    """Op counts of the unrolled LDLᵀ (:func:`soagen.passes.ldl.ldl`) of the reversed (Featherstone's
    LTDL) or plain M, M symbolic: an independent symbol wherever the tree can make M_ij non-zero
    (i, j on one path to the base), exact zeros elsewhere; every factor entry is an output."""
    n = robot.n
    anc = [set(robot.ancestors(k)) - {k} for k in range(n)]
    M = [[sp.Symbol(f"m{min(i, j)}_{max(i, j)}") if i == j or i in anc[j] or j in anc[i] else sp.Integer(0)
          for j in range(n)] for i in range(n)]
    prog = Program("ltdl")
    L, _, dinv = LD.ldl(prog, LD.reverse(M) if reverse else M, None)
    prog.output("L", [L[i][j] for i in range(n) for j in range(i)])
    prog.output("dinv", dinv)
    prog.finish()
    return {k: prog.ops[k] for k in ("mul", "add", "div")}


@pytest.mark.parametrize("seed,n,tree", [(15, 9, True), (3, 12, True), (21, 7, False)])
def test_ltdl_costs_what_the_tree_sparsity_predicts(seed, n, tree):
    """LTDL creates no fill-in: with a(j), c(j) the numbers of proper ancestors and descendants
    of body j, LDLᵀ of the reversed M (u_ij = M_ij − Σ_k L_ik u_jk over the c(j) descendants k
    of j, L_ij = u_ij/d_j for each of the a(j) ancestors i, d_j = M_jj − Σ_k u_jk²/d_k) costs
    exactly Σ_j 2c(j) + a(j)(c(j) + 1) multiplications, Σ_j c(j)(1 + a(j)) additions and n
    divisions, the count of its non-zero pattern; in the plain order a tree fills in."""
    robot = random_robot(seed, n, tree=tree, tips=2 if tree else 1)
    anc = [len(set(robot.ancestors(k)) - {k}) for k in range(n)]
    desc = [sum(k in robot.ancestors(j) for j in range(n) if j != k) for k in range(n)]
    want = {"mul": sum(2 * c + a * (c + 1) for a, c in zip(anc, desc)),
            "add": sum(c * (1 + a) for a, c in zip(anc, desc)), "div": n}
    assert _ltdl_ops(robot) == want
    plain = _ltdl_ops(robot, reverse=False)
    if tree:    # the seeds' trees have branches: eliminating from the root fills them in
        assert plain["mul"] > want["mul"] and plain["add"] > want["add"]
    else:       # a chain's M is dense: both orders cost the same
        assert plain == want


def test_variant_selection():
    robot = robots.example("puma560")

    def names(**options):
        return [s.name for s in F.select(robot, soagen.Options(**options))]

    default = names()
    assert not VARIANT_LABELS & set(default)
    assert {"os_coriolis", "os_gravity", "os_bias"} <= set(default)
    assert set(names(variants=["mass_matrix"])) - set(default) == {"mass_matrix_ne"}
    assert set(names(variants=None)) - set(default) == VARIANT_LABELS
    with pytest.raises(soagen.OptionsError, match="unknown variant families"):
        names(variants=["nope"])
    with pytest.raises(ValueError, match="variant must be one of"):
        built("puma560_variants", CASES["puma560_variants"], **OPTIONS["puma560_variants"])[1].mass_matrix(np.zeros(6), "x")


def test_puma_inverse_dynamics_under_250_mul_and_add():
    """Issue 5's target, counted from the generated program (trig excluded)."""
    gen = generate(robots.example("puma560"), soagen.Options(functions=["inverse_dynamics"]))
    ops = gen.programs[0].ops
    assert ops["mul"] < 250 and ops["add"] < 250, ops


@pytest.mark.parametrize("case", ["puma560_variants", "tree9_variants"])
def test_family_default_is_the_cheapest_algorithm(case):
    """Each family's own function is the algorithm with the fewest operations for
    this robot; with that algorithm's function in the same file it is one call to
    it; the module says which, and its variant names reach the same numbers
    through the family function or their own."""
    robot, mod = built(case, CASES[case], **OPTIONS[case])
    text = (mod.path / f"{mod.name}.c").read_text()
    rng = np.random.default_rng(8)
    q, qd, _, tau = robot.random_state(rng)
    for family in ("mass_matrix_inverse", "forward_dynamics", "os_inertia"):
        costs = {label: F.cost(mod.ops[s.name]) for label, s in F.candidates(family)}
        label = mod.choices[family]
        assert costs[label] == min(costs.values()), (family, costs)
        assert mod.ops[family] == mod.ops[F.labels(family)[label]]
        body = text.split(f"{mod.name}_{family}(", 1)[1].split("\n}\n", 1)[0]
        call = f"{mod.name}_{F.labels(family)[label]}(q, "
        assert body.count(";") == 1 and call in body, (family, body)
        if family == "forward_dynamics":
            for other, _ in F.candidates(family):
                np.testing.assert_allclose(mod.forward_dynamics(q, qd, tau, variant=other),
                                           mod.forward_dynamics(q, qd, tau), rtol=1e-10, atol=1e-10)
    assert mod.forward_dynamics(q, qd, tau, variant="FD2").shape == (robot.n,)
    with pytest.raises(ValueError, match="variant must be one of"):
        mod.os_inertia(q, "fastest")


def test_family_function_stands_alone_without_variants():
    """Without --variants the family function holds its algorithm's statements
    (nothing to call) and says which algorithm they are."""
    robot = robots.example("ur5")
    gen = generate(robot, soagen.Options(functions=["forward_dynamics"]))
    prog = gen.programs[0]
    assert prog.calls is None and prog.algorithm in F.labels("forward_dynamics")
    assert prog.ops["mul"] > 100 and f"Algorithm: {prog.algorithm}" in gen.csource.source
