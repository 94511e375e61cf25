"""C printer: sympy's C99 printer with soagen's number and power rules.

Floats print with ``repr`` (17 significant digits, exact round trip), or as
the shortest float32 literal with an ``f`` suffix in single precision;
``x**2`` prints as ``x*x`` and ``x**-1`` as ``1.0/x`` (never ``pow``).
"""
from __future__ import annotations

import numpy as np
import sympy as sp
from sympy.printing.c import C99CodePrinter


class SoaCPrinter(C99CodePrinter):
    """Prints one statement's right-hand side in C."""

    def __init__(self, precision="double"):
        if precision not in ("double", "float"):
            raise ValueError(f"precision must be 'double' or 'float', got {precision!r}")
        super().__init__({"strict": False})
        self.precision = precision

    @property
    def ctype(self):
        return self.precision

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

    def _print_sin(self, expr):
        return f"{self._fn('sin')}({self._print(expr.args[0])})"

    def _print_cos(self, expr):
        return f"{self._fn('cos')}({self._print(expr.args[0])})"

    def _print_Symbol(self, expr):
        return expr.name
