"""Forward-mode differentiation of a recorded straight-line program.

A program is a list of one-operation statements, so the chain rule can follow
it statement by statement: each statement ``t = e(s₁, s₂, …)`` gets, for every
direction ``d`` in which some operand moves, a tangent statement
``ṫ_d = Σᵢ ∂e/∂sᵢ · ṡᵢ_d``.  Tangents that are structurally zero are never
recorded (a joint angle only moves the bodies of its subtree), and the result
goes through the same hash-consing and CSE as any program.

:func:`replay` records an inner program's statements into an outer one with
their tangents; the makers in :mod:`soagen.passes.derivatives` use it.
"""
from __future__ import annotations

import sympy as sp

from soagen.passes import symbolic as S
from soagen.program.statements import Guard


class Tangents:
    """Values and tangents of an inner program replayed into ``prog``.

    ``value(e)`` maps an inner expression to the outer program; ``tangent(e, d)``
    is its derivative in direction ``d`` (0 when it does not move).
    """

    def __init__(self, prog, values, tangents):
        self.prog, self._values, self._tangents = prog, values, tangents

    def value(self, expr):
        return sp.sympify(expr).xreplace(self._values)

    def tangent(self, expr, d):
        """d expr / d(direction d), recorded; ``expr`` is an inner output expression."""
        expr = sp.sympify(expr)
        if expr.is_Number:
            return sp.Integer(0)
        if expr in self._tangents:
            return self._tangents[expr].get(d, sp.Integer(0))
        return self.prog.let(sum((_partial(self.prog, expr, s, self._values) * self._tangents[s][d]
                                  for s in sorted(expr.free_symbols, key=str) if d in self._tangents.get(s, {})),
                                 sp.Integer(0)))


def replay(prog, inner, seeds, inputs=None):
    """Record the statements of the finished program ``inner`` into ``prog``
    with forward-mode tangents (and its guards, as guards of ``prog``).

    Parameters
    ----------
    prog : Program      the outer program (records values and tangents)
    inner : Program     a finished program over the same input symbols
    seeds : dict        ``{input symbol: {direction: expression}}``, the
                        derivatives of the inputs (expressions of ``prog``)
    inputs : dict, optional   ``{inner input symbol: outer expression}``
                        for inputs the outer program computes (no tangent)

    Returns
    -------
    Tangents
    """
    values = dict(inputs or {})
    tangents = {s: dict(t) for s, t in seeds.items()}
    for item in inner.body:
        if isinstance(item, Guard):          # the inner program's checks stay checks (a singular Ω(0))
            prog.guard(sp.sympify(item.value).xreplace(values), sp.sympify(item.bound).xreplace(values), item.text)
            continue
        if not isinstance(item, tuple):
            continue
        sym, expr = item
        values[sym] = prog.let(expr.xreplace(values))
        moving = [s for s in sorted(expr.free_symbols, key=str) if s in tangents]     # in a fixed order: the C is the same every run
        if not moving:
            continue
        partials = {s: _partial(prog, expr, s, values) for s in moving}
        out = {}
        for d in sorted(set().union(*(tangents[s] for s in moving)), key=str):
            out[d] = prog.let(sum((partials[s] * tangents[s][d] for s in moving if d in tangents[s]),
                                  sp.Integer(0)))
        tangents[sym] = {d: t for d, t in out.items() if t != 0}
    return Tangents(prog, values, tangents)


def _partial(prog, expr, s, values):
    """∂expr/∂s as an expression of ``prog`` (sin/cos of an angle are
    statements of their own: the derivative of one is the other)."""
    if isinstance(expr, (sp.sin, sp.cos)):
        arg = expr.args[0].xreplace(values)
        return prog.let(sp.cos(arg)) if isinstance(expr, sp.sin) else -prog.let(sp.sin(arg))
    return prog.let(_lower_powers(prog, _derivative(expr, s).xreplace(values)))


def _derivative(expr, s):
    """∂expr/∂s: the sums and products s enters as a factor of its own, directly (the same expression
    sympy's ``diff`` builds, in a fraction of its time: nearly every statement is one), anything
    else by ``diff``."""
    quick = _linear_derivative(expr, s)
    return sp.diff(expr, s) if quick is None else quick


def _linear_derivative(expr, s):
    """∂expr/∂s when s enters each term of ``expr`` as a plain factor (else None)."""
    if expr == s:
        return sp.Integer(1)
    if expr.is_Add:
        parts = [_linear_derivative(t, s) for t in expr.args if s in t.free_symbols]
        return None if any(p is None for p in parts) else sp.Add(*parts)
    if expr.is_Mul:
        hit = [i for i, f in enumerate(expr.args) if s in f.free_symbols]
        if len(hit) == 1 and expr.args[hit[0]] == s:
            return sp.Mul(*(expr.args[:hit[0]] + expr.args[hit[0] + 1:]))
    return None


def _lower_powers(prog, expr):
    """``expr`` with every power the printer does not know (x**2, 1/x and
    sqrt(x) it prints) written as products of recorded statements:
    u**-2 → (1/u)(1/u), u**-1/2 → 1/sqrt(u), u**3 → u·u·u."""
    def lower(p):
        base, e = p.base, p.exp
        if e in (2, -1, sp.Rational(1, 2)):
            return p
        if e.is_Integer or (e.is_Rational and e.q == 2):
            unit = base if e.is_Integer else prog.let(sp.sqrt(base))
            unit = unit if e > 0 else prog.let(1 / unit)
            acc = unit
            for _ in range(abs(int(e.p)) - 1):
                acc = prog.let(acc * unit)
            return acc
        raise ValueError(f"no derivative statements for the power {p}")

    return expr.replace(lambda x: x.is_Pow, lower)


def configuration_seeds(prog, robot, q):
    """Tangents of the joint coordinates along the nv directions ``("q", i)``
    of the tangent space, as :meth:`~soagen.model.robot.Robot.integrate` moves them:
    a 1-dof coordinate moves with its direction; a quaternion (x, y, z, w) by
    ½ q ⊗ (e_i, 0) along the body-frame angular direction i; a floating base's
    position by R(quat) e_i along the body-frame linear direction i."""
    seeds = {}
    for k, b in enumerate(robot.bodies):
        qs, vs = robot.qslice(k), robot.vslice(k)
        coords = list(q[qs])
        if b.nq == 1:
            seeds[coords[0]] = {("q", vs.start): sp.Integer(1)}
            continue
        x, y, z, w = coords[-4:]
        half = sp.Rational(1, 2)
        columns = ((w, z, -y, -x), (-z, w, x, -y), (y, -x, w, -z))   # 2 q ⊗ (e_i, 0), i = x, y, z
        for i, col in enumerate(columns):          # the angular directions come first ([ω] or [ω; v])
            for c, value in zip((x, y, z, w), col):
                seeds.setdefault(c, {})[("q", vs.start + i)] = half * value
        if b.nv == 6:                    # floating: [ω; v], position in the parent frame
            R = S.quaternion_rotation(prog, coords[-4:])
            for r, c in enumerate(coords[:3]):
                for i in range(3):
                    if R[r][i] != 0:
                        seeds.setdefault(c, {})[("q", vs.start + 3 + i)] = R[r][i]
    return seeds


def velocity_seeds(name, values):
    """Each entry of a joint-space input ``values`` (qd, tau) moves along its own direction ``(name, i)``."""
    return {v: {(name, i): sp.Integer(1)} for i, v in enumerate(values)}


def jacobian(tangents, outputs, directions):
    """Row-major (len(outputs) × len(directions)) list of d output / d direction."""
    return [tangents.tangent(o, d) for o in outputs for d in directions]
