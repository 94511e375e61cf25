"""Latency model of a straight-line program, and the operand order it implies.

C compilers keep floating-point sums and products in source order (without
``-ffast-math`` they may not reassociate), so ``a*b + c*d + e*f`` is a chain
``fma(e, f, fma(c, d, a*b))``: a term printed first waits for nothing, a term
printed last can arrive last.  Printing each sum's terms (and each product's
factors) in the order their operands become ready shortens the program's
dependency chains without changing any operation or its count.

The model: every input is ready at cycle 0; a multiply, an add and a fused
multiply-add take :data:`LATENCY` cycles each (about 4 on current x86 and
ARM cores), a division about 14, a square root 18, an inline sin/cos 40.
It only has to rank operands; the cycle numbers it reports for a whole
function are its dependency-chain length under that model.
"""
from __future__ import annotations

import sympy as sp

from soagen.program.statements import _leads_with_literal, coeff_mul, negative_term

# cycles of one operation of each kind
LATENCY = {"mul": 4, "add": 4, "fma": 4, "div": 14, "sqrt": 18, "trig": 40}


def _factors(term):
    """A product's factors as printed: the numeric coefficient (if not ±1) first."""
    coeff, factors = coeff_mul(term)
    return ([] if abs(coeff) == 1 else [abs(coeff)]) + list(factors)


class Schedule:
    """Ready times (cycles) of a program's symbols, and operands ordered by them.

    Parameters
    ----------
    statements : list of (Symbol, Expr)   in program order
    """

    def __init__(self, statements):
        self.ready = {}                  # Symbol -> cycle its value is ready
        self._times = {}                 # expression -> cycle (sub-expressions recur across statements)
        for sym, expr in statements:
            self.ready[sym] = self.time(expr)

    def time(self, expr):
        """Cycle at which ``expr``, printed in :meth:`terms` / :meth:`factors` order, is ready."""
        if expr.is_Atom:
            return self.ready.get(expr, 0)
        hit = self._times.get(expr)
        if hit is None:
            hit = self._times[expr] = self._time(expr)
        return hit

    def _time(self, expr):
        if expr.is_Add:
            acc = None
            for term in self.terms(expr.args):
                factors = _factors(-term if negative_term(term) else term)
                if acc is None:
                    acc = self.time(term)
                elif len(factors) >= 2:     # acc + x*y contracts to one fma
                    acc = max(acc, self._product(factors[:-1]), self.time(factors[-1])) + LATENCY["fma"]
                else:
                    acc = max(acc, self.time(term)) + LATENCY["add"]
            return acc
        if expr.is_Mul:
            return self._product(_factors(expr))
        if expr.is_Pow:
            base = self.time(expr.base)
            if expr.exp == -1:
                return base + LATENCY["div"]
            if expr.exp == 2:
                return base + LATENCY["mul"]
            return base + LATENCY["sqrt"]
        if isinstance(expr, (sp.sin, sp.cos)):
            return self.time(expr.args[0]) + LATENCY["trig"]
        raise ValueError(f"no latency for {expr!r}")

    def _product(self, factors):
        times = sorted(0 if f.is_Number else self.time(f) for f in factors)
        t = times[0]
        for r in times[1:]:
            t = max(t, r) + LATENCY["mul"]
        return t

    def terms(self, args):
        """A sum's terms, earliest ready first (ties keep sympy's order); a
        positive term leads whenever one exists, and when every term is
        negative one with a numeric coefficient leads if there is one (its
        minus sign goes on the literal), so the printed sum costs a negation
        exactly when :func:`soagen.program.statements.count_ops` counts one."""
        order = sorted(args, key=self.time)      # stable
        lead = next((i for i, t in enumerate(order) if not negative_term(t)), None)
        if lead is None:
            lead = next((i for i, t in enumerate(order) if _leads_with_literal(-t)), 0)
        order.insert(0, order.pop(lead))
        return order

    def factors(self, factors):
        """A product's factors, earliest ready first (numbers are ready at once)."""
        return sorted(factors, key=lambda f: 0 if f.is_Number else self.time(f))

    def length(self, symbols):
        """Cycle at which all of ``symbols`` are ready (a function's chain length)."""
        return max((self.ready.get(s, 0) for s in symbols), default=0)
