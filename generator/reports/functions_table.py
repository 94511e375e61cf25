"""The function table of the guide (docs/guide/functions.md) and of ``soagen functions``: one row per
generated function of :data:`soagen.functions.CATALOGUE`."""
from __future__ import annotations

from soagen.functions import CATALOGUE, citations, python_call


def markdown_table(specs=CATALOGUE):
    """The function table: one row per generated function."""
    def shape(o):
        return "(" + ", ".join(str(d) for d in o.shape) + (",)" if len(o.shape) == 1 else ")")

    rows = ["| Python (`mod.` …) | C (`<name>_` …) | outputs | what | equations |", "|---|---|---|---|---|"]
    for s in specs:
        outs = ", ".join(f"`{o.name}` {shape(o)}" for o in s.outputs)
        what = s.doc
        if not s.default:
            what += "; with `--variants`" if s.family and not s.is_family_function else "; when named"
        if s.tips:
            what += "; needs point tips only" if s.point_tips else "; needs tips"
        if s.parametric:
            what += "; π may be an input"
        rows.append(f"| `{python_call(s)}` | `{s.name}` | {outs} | {what} | {citations(s)} |")
    return "\n".join(rows) + "\n"
