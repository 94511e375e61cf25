"""The guards of a CasADi function: what the one line printed on a nonzero status names."""
from __future__ import annotations

from soagen.program.statements import Guard


def failure(prog, what=None):
    """The name ``soagen_failed`` prints when ``prog`` (a program with guards) returns a nonzero
    status: ``what`` (the CasADi function, default ``prog``'s name).  soagen's guards on a tree are
    the pivots of Ω(0) = J M⁻¹ Jᵀ (:func:`soagen.passes.ldl.ldl`), which the line names as the
    cause: Λ(0) = Ω(0)⁻¹ does not exist there."""
    checked = sorted({g.text.partition(" of ")[2] for g in prog.body if isinstance(g, Guard)})
    if checked != ["Omega(0)"]:      # a new kind of guard: say in templates/casadi.c.j2 what its failure means
        raise AssertionError(f"{prog.name} guards {checked}: the CasADi file says nothing of them")
    return what or prog.name
