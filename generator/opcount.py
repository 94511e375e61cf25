"""Operation counts: from the straight-line programs, cross-checked in the C text.

:func:`count_c` re-counts the arithmetic of every function in emitted C by
tokenizing it, so the numbers in reports are what the compiler is handed.
"""
from __future__ import annotations

import json
import re

from .program import OP_KINDS

COLUMNS = ("mul", "add", "div", "sqrt", "trig", "statements")
_TOKEN = re.compile(r"\s*(?:(?P<num>(?:\d+\.\d*|\.\d+|\d+)(?:[eE][+-]?\d+)?f?)|(?P<name>[A-Za-z_]\w*)"
                    r"|(?P<op>[-+*/=(),;\[\]{}<>!]))")
_FUNCTION = re.compile(r"^(?:int|void) (\w+)\(.*?\)\n\{\n(.*?)^\}", re.S | re.M)


def _strip_comments(text):
    return re.sub(r"/\*.*?\*/", " ", text, flags=re.S)


def count_line(line):
    """Arithmetic in one C statement; a minus in front of a literal is part of it."""
    counts = dict.fromkeys(OP_KINDS, 0)
    prev = None
    tokens = [m for m in _TOKEN.finditer(line)]
    for i, m in enumerate(tokens):
        kind = m.lastgroup
        tok = m.group(kind)
        if kind == "name" and tok in ("sin", "cos", "sinf", "cosf"):
            counts["trig"] += 1
        elif kind == "name" and tok in ("sqrt", "sqrtf"):
            counts["sqrt"] += 1
        elif kind == "op" and tok == "*":
            counts["mul"] += 1
        elif kind == "op" and tok == "/":
            counts["div"] += 1
        elif kind == "op" and tok == "+":
            counts["add"] += 1
        elif kind == "op" and tok == "-":
            unary = prev is None or (prev[0] == "op" and prev[1] in "=(,-+*/<>!")
            if not unary:
                counts["add"] += 1
            elif not (i + 1 < len(tokens) and tokens[i + 1].lastgroup == "num"):
                counts["neg"] += 1
        prev = (kind, tok)
    return counts


def count_c(source):
    """``{function name: counts}`` for every function defined in C ``source``."""
    out = {}
    for name, body in _FUNCTION.findall(_strip_comments(source)):
        counts = dict.fromkeys(OP_KINDS, 0)
        statements = 0
        for line in body.splitlines():
            line = line.strip()
            if not line or line.startswith("return 0"):
                continue
            if line.startswith(("const double t", "const float t", "const double c", "const float c")):
                statements += 1
            for k, v in count_line(line.split("=", 1)[1] if "=" in line and not line.startswith("if")
                                   else line).items():
                counts[k] += v
        counts["statements"] = statements
        out[name] = counts
    return out


def table(robot_name, programs):
    """Terminal/markdown table of the op counts of ``programs``."""
    head = "| function | " + " | ".join(COLUMNS) + " |"
    rows = [head, "|" + "---|" * (len(COLUMNS) + 1)]
    for p in programs:
        rows.append(f"| {p.name} | " + " | ".join(str(p.ops[c]) for c in COLUMNS) + " |")
    return f"# Operation counts: {robot_name}\n\n" + "\n".join(rows) + "\n"


def as_json(robot, programs):
    return json.dumps({"robot": robot.name, "functions": {p.name: {c: p.ops[c] for c in (*COLUMNS, "neg")}
                                                         for p in programs}}, indent=1, sort_keys=True) + "\n"
