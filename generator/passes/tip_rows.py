"""The rows of the tips: a full tip has the 6 rows [angular; linear] of its
spatial vectors, a point tip the 3 linear ones (:attr:`soagen.model.robot.Tip.rows`).
Tip quantities (J, f, Ω(0), Λ(0)) stack the rows each tip has: (r,) in all."""
from __future__ import annotations

import sympy as sp


def tip_rows(tip, six):
    """The rows of a 6-vector [angular; linear] that ``tip`` has (3 linear for a point tip)."""
    return [six[r] for r in tip.rows]


def tip_starts(robot):
    """Start of each tip's rows in the stacked tip vectors (r,): a list (m,)."""
    starts, r = [], 0
    for tip in robot.tips:
        starts.append(r)
        r += len(tip.rows)
    return starts


def tip_wrench(tip, f):
    """A tip's rows ``f`` (3 or 6) as a 6-vector [moment; force], zeros where a point tip has no rows."""
    six = [sp.Integer(0)] * 6
    for r, x in zip(tip.rows, f):
        six[r] = x
    return six
