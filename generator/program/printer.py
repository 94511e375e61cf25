"""C printer: sympy's C99 printer with soagen's number and power rules.

Floats print with ``repr`` (17 significant digits, exact round trip), or as
the shortest float32 literal with an ``f`` suffix in single precision;
``x**2`` prints as ``x*x`` and ``x**-1`` as ``1.0/x`` (never ``pow``).
"""
from __future__ import annotations

import re

import numpy as np
import sympy as sp
from sympy.printing.c import C99CodePrinter

from soagen.program.latency import Schedule
from soagen.program.statements import coeff_mul, negative_term

_STORED_ORDER = Schedule(())   # no ready times: sympy's order, with the sign rules of Schedule.terms
#: a printed statement of a generated function: a ``const`` value named t, c or v (a load from an
#: earlier part's ``w``, :mod:`soagen.program.parts`, is none)
STATEMENT_LINE = re.compile(r"^[ \t]*const (?:double|float) [tcv]\d+ = (?!w\[)", re.M)


def statement_count(text):
    """The program statements printed in C ``text``, those of column loops' bodies once each."""
    return len(STATEMENT_LINE.findall(text))


class SoaCPrinter(C99CodePrinter):
    """Prints one statement's right-hand side in C."""

    def __init__(self, precision="double", batched_trig=False):
        if precision not in ("double", "float"):
            raise ValueError(f"precision must be 'double' or 'float', got {precision!r}")
        super().__init__({"strict": False})
        self.precision = precision
        self.names = {}   # Symbol -> printed name (a program's renumbering)
        self.schedule = None   # soagen.program.latency.Schedule of the program: operand order
        # double: the sines and cosines of a function computed at once before its statements
        # (soagen.targets.common.c_text.trig_lines); trig_slots maps an angle to its slot there,
        # empty where each statement calls soagen_sin/soagen_cos
        self.batched_trig = batched_trig and precision == "double"
        self.trig_slots = {}

    @property
    def ctype(self):
        return self.precision

    def doprint(self, expr, assign_to=None):
        """The C text of one statement's right-hand side.  Statements hold only symbols,
        numbers, sums, products, powers of -1, 2 and 1/2, sin and cos, all printed by the
        methods below; sympy's own ``doprint`` adds a tree walk for assignments, unevaluated
        expressions and unsupported functions, none of which occur, at a third of the cost."""
        if assign_to is not None:
            return super().doprint(expr, assign_to)
        return self._print(expr)

    def literal(self, value):
        value = float(value)
        if self.precision == "float":
            text = repr(float(np.float32(value)))
            text = text if ("." in text or "e" in text or "inf" in text) else text + ".0"
            return text + "f"
        text = repr(value)
        return text if ("." in text or "e" in text) else text + ".0"

    def _print_Float(self, expr):
        return self.literal(expr)

    def _print_Integer(self, expr):
        return self.literal(int(expr))

    def _print_Rational(self, expr):
        return self.literal(float(expr))

    def _print_Pow(self, expr):
        base, exp = expr.base, expr.exp
        if exp == 2:
            b = self.parenthesize(base, sp.printing.precedence.PRECEDENCE["Mul"])
            return f"{b}*{b}"
        if exp == -1:
            return f"{self.literal(1)}/{self.parenthesize(base, sp.printing.precedence.PRECEDENCE['Mul'] + 1)}"
        if exp == sp.Rational(1, 2):
            return f"{self._fn('sqrt')}({self._print(base)})"
        raise ValueError(f"soagen prints no general powers: {expr}")

    def _fn(self, name):
        return name + ("f" if self.precision == "float" else "")

    def _trig(self, name, expr):
        """libm's sinf/cosf in float; in double the value computed by soagen's ``soagen_sincos``
        (:mod:`soagen.targets.common.fasttrig`, :attr:`trig_slots`) or a call of an inline
        ``soagen_sin``/``soagen_cos`` that the target defines."""
        if self.precision == "float":
            return f"{name}f({self._print(expr.args[0])})"
        if expr.args[0] in self.trig_slots:
            return f"soagen_{name}[{self.trig_slots[expr.args[0]]}]"
        return f"soagen_{name}({self._print(expr.args[0])})"

    def _print_sin(self, expr):
        return self._trig("sin", expr)

    def _print_cos(self, expr):
        return self._trig("cos", expr)

    def _print_Symbol(self, expr):
        return self.names.get(expr, expr.name)

    # Statements are sums of products of symbols and numbers; these two
    # methods print them directly, operands in the order the program's
    # :class:`~soagen.program.latency.Schedule` gives (earliest ready first, so that a
    # compiler that keeps source order builds short dependency chains; without
    # a schedule, sympy's stored order), and a sum starts with a unary minus only
    # when every term is negative -- as :func:`soagen.program.statements.count_ops` counts it.
    # sympy's generic versions sort terms and cost 5x more.
    def _print_Add(self, expr):
        terms = (self.schedule or _STORED_ORDER).terms(expr.args)
        text = ""
        for t in terms:
            if negative_term(t):
                text += (" - " if text else "-") + self._factor(-t)
            else:
                text += (" + " if text else "") + self._print(t)
        return text

    def _factor(self, term):
        return f"({self._print(term)})" if term.is_Add else self._print(term)

    def _print_Mul(self, expr):
        coeff, factors = coeff_mul(expr)
        num = [f for f in factors if not (f.is_Pow and f.exp == -1)]
        den = [f.base for f in factors if f.is_Pow and f.exp == -1]
        sign = ""
        if coeff == -1:
            sign = "-"
        items = [] if abs(coeff) == 1 else [self.literal(coeff)]
        if self.schedule is not None:
            num = self.schedule.factors(num)
        items += [self._factor(f) for f in num]
        text = "*".join(items) if items else self.literal(1)
        for d in den:
            text += "/" + (f"({self._print(d)})" if not d.is_Atom else self._print(d))
        return sign + text
