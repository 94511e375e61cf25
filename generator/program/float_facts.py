"""Quicker sympy Floats while a program is recorded.

sympy asks every new Float it builds (a product or sum of two robot constants) whether it
is zero or of a sign (``Mul.flatten``, ``Mul.as_coeff_mul``) and, on each answer, deduces
and stores every fact that follows from it.  On the recordings of a 15-dof floating tree
that deduction took a third of the time.  Inside :func:`direct_float_facts` those three
questions are answered by Float's own tests, the answers sympy would give (its ``_ask``
returns what these tests say), without the deduction; on leaving, sympy is as it was.
"""
from __future__ import annotations

import contextlib

import sympy as sp

#: the facts sympy asks of new Floats while a program is recorded
FACTS = ("zero", "extended_negative", "extended_positive")


@contextlib.contextmanager
def direct_float_facts():
    """A context in which ``Float.is_zero``, ``is_extended_negative`` and
    ``is_extended_positive`` call ``Float._eval_is_*`` directly."""
    saved = {fact: sp.Float.__dict__.get(f"is_{fact}") for fact in FACTS}
    try:
        for fact in FACTS:
            setattr(sp.Float, f"is_{fact}", property(getattr(sp.Float, f"_eval_is_{fact}")))
        yield
    finally:
        for fact, prop in saved.items():
            if prop is None:
                delattr(sp.Float, f"is_{fact}")
            else:
                setattr(sp.Float, f"is_{fact}", prop)
