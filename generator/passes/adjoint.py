"""Reverse-mode differentiation of a recorded straight-line program.

The counterpart of :mod:`soagen.passes.tangent`: where forward mode carries one tangent per
direction forward through every statement, reverse mode carries one adjoint per statement
backward, for one weighting of the outputs.  The inner program's statements are first recorded
into the outer one (its values, and its guards as guards); then, walking them backwards, each
statement ``t = e(s₁, s₂, …)`` whose adjoint t̄ is not structurally zero adds t̄ ∂e/∂sᵢ to the
adjoint of each operand.  The gradient of wᵀout along a direction d is Σₛ s̄ ṡ_d over the inputs
s, ṡ_d their seeds (:func:`soagen.passes.tangent.configuration_seeds`: along q in the tangent
space): one sweep gives all directions, at a few times the cost of the program itself
[Griewank & Walther, *Evaluating Derivatives*, 2nd ed. 2008, §3.2].

:mod:`soagen.passes.second_derivatives` records such a gradient as an inner program and replays
it in forward mode: a Hessian–vector product per direction (forward over reverse).
"""
from __future__ import annotations

import sympy as sp

from soagen.passes.tangent import _partial
from soagen.program.statements import Guard


class Adjoints:
    """Adjoints of the inner program's symbols after a reverse sweep (expressions of the outer program)."""

    def __init__(self, prog, values, adjoints):
        self.prog, self._values, self._adjoints = prog, values, adjoints

    def value(self, expr):
        """An inner expression's value in the outer program."""
        return sp.sympify(expr).xreplace(self._values)

    def adjoint(self, sym):
        """∂(wᵀout)/∂sym, 0 when the weighted outputs do not depend on ``sym``."""
        return self._adjoints.get(sym, sp.Integer(0))

    def gradient(self, seeds, directions):
        """[∂(wᵀout)/∂d for d in ``directions``]: Σₛ s̄ ṡ_d over the seeded inputs s
        (``seeds``: ``{input symbol: {direction: expression of the outer program}}``)."""
        return [self.prog.let(sum((self.adjoint(s) * t[d] for s, t in sorted(seeds.items(), key=lambda x: str(x[0]))
                                   if d in t and s in self._adjoints), sp.Integer(0)))
                for d in directions]


def reverse(prog, inner, weights, inputs=None):
    """Record the finished straight-line program ``inner`` into ``prog`` (its guards as guards)
    and the reverse sweep of wᵀout.

    Parameters
    ----------
    prog : Program      the outer program
    inner : Program     a finished program over the same input symbols, without column loops
    weights : list      ``[(inner output expression, weight expression of prog)]``: w and out
    inputs : dict, optional   ``{inner input symbol: outer expression}`` for inputs the outer
                        program computes (they get adjoints like the others)

    Returns
    -------
    Adjoints
    """
    if inner.loops:
        raise ValueError(f"{inner.name}: reverse mode needs a straight-line program (it has column loops)")
    values = dict(inputs or {})
    statements = []
    for item in inner.body:
        if isinstance(item, Guard):
            prog.guard(sp.sympify(item.value).xreplace(values), sp.sympify(item.bound).xreplace(values), item.text)
        elif isinstance(item, tuple):
            sym, expr = item
            values[sym] = prog.let(expr.xreplace(values))
            statements.append(item)
    terms: dict = {}                 # symbol -> contributions to its adjoint

    def add(expr, bar):
        expr = sp.sympify(expr)
        for s in sorted(expr.free_symbols, key=str):
            terms.setdefault(s, []).append(prog.let(bar * _partial(prog, expr, s, values)))

    for out, w in weights:
        if sp.sympify(w) != 0:
            add(out, w)
    adjoints = {}
    for sym, expr in reversed(statements):
        if sym not in terms:
            continue
        bar = adjoints[sym] = prog.let(sp.Add(*terms.pop(sym)))
        if bar != 0:
            add(expr, bar)
    for s, contributions in terms.items():          # the inputs
        adjoints[s] = prog.let(sp.Add(*contributions))
    return Adjoints(prog, values, adjoints)
