"""Statements ordered by demand (:mod:`soagen.program.demand`): a maker's ``output_order`` reorders the
statements of a finished program (only their order: the same statements, the same op counts), each output's
statements right before the first output that needs them; programs with guards keep their order; the
contracted Hessians ask for it (their values are checked against references in test_second_derivatives.py
and test_casadi_hessian.py)."""
from __future__ import annotations

import sympy as sp

from soagen import codegen
from soagen.program.statements import Program
from tests.support.robots import random_robot


def _two_chains(order=None, guard=False):
    """Outputs a (from x) and b (from y), each a chain of three products; a's chain recorded first."""
    prog = Program("chains")
    x, y = prog.input("x", 1)[0], prog.input("y", 1)[0]
    a = prog.let(prog.let(prog.let(x * x) * x) * x)
    b = prog.let(prog.let(prog.let(y * y) * y) * y)
    if guard:
        prog.guard(prog.let(x * y), sp.Float(0.5), "a check")
    prog.output("a", [a])
    prog.output("b", [b])
    prog.output_order = order
    return prog.finish()


def _reads(prog):
    """For each statement in order, the inputs it reads (transitively): 'x', 'y' or both."""
    seen = {}
    for sym, expr in prog.statements():
        names = set()
        for s in expr.free_symbols:
            names |= seen.get(s, {str(s)[0]} if str(s)[0] in "xy" else set())
        seen[sym] = names
    return ["".join(sorted(seen[sym])) for sym, _ in prog.statements()]


def test_the_outputs_order_sets_the_statements_order():
    recorded = _two_chains()
    b_first = _two_chains(order=lambda name, i: 0 if name == "b" else 1)
    assert _reads(recorded) == ["x"] * 3 + ["y"] * 3
    assert _reads(b_first) == ["y"] * 3 + ["x"] * 3                 # b's chain before a's
    assert b_first.ops == recorded.ops and len(b_first.statements()) == len(recorded.statements())
    assert _reads(_two_chains(order=lambda name, i: 0, guard=True))[:3] == ["x"] * 3      # a guard: as recorded


def test_the_contracted_hessians_statements_follow_their_outputs_shells():
    """inverse_dynamics_hessian of a 2-joint chain: H (6, 6) computed shell by shell, max(row, column) = 0,
    1, ...: the first statement that H[0][0] does not read comes after every statement it does read."""
    robot = random_robot(3, 2)
    prog = codegen.make_program(robot, "inverse_dynamics_hessian")
    statements = prog.statements()
    position = {sym: i for i, (sym, _) in enumerate(statements)}
    expr_of = dict(statements)

    def cone(expr):
        out, stack = set(), [d for d in sp.sympify(expr).free_symbols if d in position]
        while stack:
            s = stack.pop()
            if s not in out:
                out.add(s)
                stack += [d for d in expr_of[s].free_symbols if d in position]
        return out

    H = prog.outputs[0].symbols
    first = cone(H[0])
    assert first and max(position[s] for s in first) == len(first) - 1     # H[0][0]'s statements lead
    shell1 = cone(H[1]) | cone(H[6]) | cone(H[7]) | first
    assert max(position[s] for s in shell1) == len(shell1) - 1           # then the rest of shell 1's
