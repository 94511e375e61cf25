"""The solves of the column loops with the shorter sums (soagen.passes.ldl.AncestorSolve): a row off
the path of a right-hand side's non-zero entries summed over their common ancestors, x_i =
Σ_k (L⁻¹)_ki z_k, instead of by substitution over all of its ancestors.

Three routes on the TALOS, the solo12, a seeded random tree with branches and a floating base and a
fixed-base arm (the UR5): the solves recorded into a loop body from the factors of M at one state
(numbers, so the body is evaluated as written) = numpy's solve with the reference's M and the
reference's M⁻¹ (soagen.reference) = Pinocchio's computeMinverse.  Right-hand sides: per chain of
the tree (a run of joints each the child of the one before), its identity columns (M⁻¹'s) and random
values on the rows of its ancestors and descendants (∂τ/∂x's pattern).  No C build: the generated
function itself is checked by tests/test_derivatives.py (solo12, a fixed-base tree, the arms)."""
from __future__ import annotations

import numpy as np
import pinocchio as pin
import pytest
import sympy as sp

import soagen
from soagen import reference as ref
from soagen.model import pinocchio_convention as pc
from soagen.model import robots
from soagen.passes.ldl import AncestorSolve, ldl_solve
from soagen.program.statements import Program
from tests.support import rel
from tests.support.oracle import Oracle, erd_urdf
from tests.support.robots import random_robot

TALOS = "talos_data/robots/talos_reduced.urdf"
SOLO = "solo_description/robots/solo12.urdf"
ROBOTS = {
    "talos": lambda: (soagen.load_urdf(erd_urdf(TALOS), floating_base=True), erd_urdf(TALOS)),
    "solo12": lambda: (soagen.load_urdf(erd_urdf(SOLO), floating_base=True), erd_urdf(SOLO)),
    "floating_tree": lambda: (random_robot(34, 9, tree=True, tips=2, floating_base=True), None),
    "ur5": lambda: (robots.example("ur5"), robots.urdf_path("ur5")),
}


def _dof_bodies(robot):
    """The body of each velocity coordinate (nv)."""
    return [k for k, b in enumerate(robot.bodies) for _ in range(b.nv)]


def _related(robot):
    """related[i][j]: the joints of coordinates i and j are one the other's ancestor (or the same)."""
    chain = []
    for b in robot.bodies:
        chain.append({len(chain)} | (chain[b.parent] if b.parent >= 0 else set()))
    body = _dof_bodies(robot)
    return [[body[j] in chain[body[i]] or body[i] in chain[body[j]] for j in range(robot.nv)] for i in range(robot.nv)]


def _chains(robot):
    """Runs of coordinates whose bodies follow each other parent to child."""
    runs, body = [], _dof_bodies(robot)
    for i, k in enumerate(body):
        if runs and (k == body[i - 1] or robot.bodies[k].parent == body[i - 1]):
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs


def _factors(robot, M):
    """Symbols ``L[i][j]``, ``dinv[i]`` of the LDLᵀ of the reversed M where a tree has them (no
    fill-in), and their values (numpy, from M)."""
    related, n = _related(robot), robot.nv
    A = M[::-1, ::-1]
    values, d = np.eye(n), np.zeros(n)
    for j in range(n):
        d[j] = A[j, j] - values[j, :j] ** 2 @ d[:j]
        for i in range(j + 1, n):
            values[i, j] = (A[i, j] - values[i, :j] * values[j, :j] @ d[:j]) / d[j]
    L = [[sp.Integer(int(i == j)) if i <= j else sp.Symbol(f"L[{i}][{j}]") if related[n - 1 - i][n - 1 - j]
          else sp.Integer(0) for j in range(n)] for i in range(n)]
    return L, [sp.Symbol(f"dinv[{i}]") for i in range(n)], {"L": values, "dinv": 1 / d}


def _run(programs, rhs, env):
    """The last program's one output on the columns of ``rhs`` (n × m): the programs' statements run
    as Python on rows of values (``r`` the right-hand side, the factors in ``env``)."""
    env = {**env, "r": rhs}
    for prog in programs:
        exec("\n".join(f"{sym} = {_python(expr)}" for sym, expr in prog.statements()), env)
    return np.array([np.broadcast_to(eval(_python(e), env), rhs.shape[1:]) for e in programs[-1].outputs[0].symbols])


def _python(expr):
    """Python text of a sum of products of symbols and numbers (sympy's own printer: 5x slower)."""
    if expr.is_Add:
        return "(" + " + ".join(_python(a) for a in expr.args) + ")"
    if expr.is_Mul:
        return "(" + " * ".join(_python(a) for a in expr.args) + ")"
    if expr.is_Pow:
        return f"({_python(expr.base)} ** {expr.exp})"
    return repr(float(expr)) if expr.is_Number else str(expr)


def _body(robot, solve, rows):
    """A loop body solving M x = r for r non-zero on ``rows`` (in M's order) by ``solve``."""
    body = Program("body", prefix="v")
    r = body.input("r", robot.nv)
    body.output("x", solve(body, [x if i in rows else sp.Integer(0) for i, x in enumerate(r)][::-1])[::-1])
    return body.finish()


@pytest.mark.parametrize("case", sorted(ROBOTS))
def test_solves_match_numpy_the_reference_and_pinocchio(case):
    robot, urdf = ROBOTS[case]()
    q = robot.random_state(np.random.default_rng(5))[0]
    M, n = ref.mass_matrix(robot, q), robot.nv
    L, dinv, values = _factors(robot, M)
    outer = Program("outer")
    solver = AncestorSolve(outer, L, dinv)
    oracle = Oracle(robot, urdf=urdf)
    pin_minv = np.array(pin.computeMinverse(oracle.model, oracle.data, oracle.q(q)))
    pin_minv = pc.matrix_from_pinocchio(robot, np.triu(pin_minv) + np.triu(pin_minv, 1).T)
    minv, related, rng, shorter = np.zeros((n, n)), _related(robot), np.random.default_rng(6), 0
    for chain in _chains(robot):
        body = _body(robot, solver.solve, set(chain))                          # M⁻¹'s columns of the chain
        minv[:, chain] = _run([outer, body], np.eye(n)[:, chain], values)
        rows = {i for j in chain for i in range(n) if related[i][j]}         # ∂τ/∂x's rows on the chain
        rhs = np.where(np.array([[i in rows] for i in range(n)]), rng.standard_normal((n, 3)), 0.0)
        got = _run([outer, _body(robot, solver.solve, rows)], rhs, values)
        assert rel(got, np.linalg.solve(M, rhs)) < 1e-12 * np.linalg.cond(M)
        if len(chain) > 1 and chain[0] > 0 and not shorter:    # the first limb's: fewer multiplications
            plain = _body(robot, lambda b, g: ldl_solve(b, L, dinv, g), set(chain))
            assert body.ops["mul"] <= plain.ops["mul"]
            shorter += body.ops["mul"] < plain.ops["mul"]
    kappa = np.linalg.cond(M)
    assert rel(minv, ref.mass_matrix_inverse(robot, q)) < 1e-12 * kappa and rel(minv, pin_minv) < 1e-12 * kappa
    assert shorter > 0 or len(_chains(robot)) == 1                      # a tree's chains use the shorter sums
