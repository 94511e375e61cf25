"""C text shared by the C targets: the Jinja environment of ``templates/``, a function's
body as lines (banners, guards, statements, outputs), prototypes and the C name of a robot.

All C syntax of expressions comes from :class:`~soagen.program.printer.SoaCPrinter`;
the templates only lay out what these functions hand them.
"""
from __future__ import annotations

import math
import re
from importlib import resources

import jinja2

from soagen.program.latency import Schedule
from soagen.program.statements import Banner, Guard


def c_name(name):
    """A C identifier from a robot name (``ur5-arm`` → ``ur5_arm``)."""
    out = re.sub(r"[^0-9A-Za-z_]", "_", name)
    return out if out and not out[0].isdigit() else "r_" + out


def environment():
    folder = resources.files("soagen.templates")
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)),
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined)


def opline(prog):
    o = prog.ops
    return (f"{prog.name:<30} {o['mul']:6d} mul {o['add']:6d} add {o['div']:4d} div "
            f"{o['sqrt']:3d} sqrt {o['trig']:3d} trig {o['statements']:6d} statements")


def prototype(prefix, prog, ctype):
    args = [f"const {ctype} {a.name}[{a.size}]" for a in prog.inputs]
    args += [f"{ctype} {a.name}[{a.size}]" for a in prog.outputs]
    ret = "int" if prog.returns_status else "void"
    return f"{ret} {prefix}_{prog.name}({', '.join(args)})"


#: comment rule of a banner by level: a section (a column, a block), a pass, a body inside a pass
BANNER_MARKS = {0: "====", 1: "----", 2: "--"}


def call_lines(prefix, prog):
    """The body of a family function that calls the generated function of its algorithm."""
    args = ", ".join(a.name for a in prog.inputs + prog.outputs)
    call = f"{prefix}_{prog.calls}({args})"
    return [{"banner": None, "code": f"return {call};" if prog.returns_status else f"{call};"}]


def function_lines(prog, printer, lanes=False):
    """The body of ``prog`` as lines: ``{"banner": text, "mark": rule}`` or ``{"banner": None, "code": C}``.

    With ``lanes`` (:mod:`soagen.targets.simd.emit`) the same statements act on vectors of
    states: ``printer.ctype`` is the vector type, a guard clears the lanes that
    fail it in the mask ``ok`` and returns only when no lane is left (the other
    lanes are computed on; the branch also keeps the scalar code's basic blocks,
    so the compiler fuses the same multiply-adds), the function returns ``ok``;
    a constant output is broadcast.
    """
    lines = []
    ctype = printer.ctype
    printer.names = prog.names
    printer.schedule = Schedule(prog.statements())
    for name in prog.unused_inputs():
        lines.append({"banner": None, "code": f"(void){name};"})
    for item in prog.body:
        if isinstance(item, Banner):
            lines.append({"banner": item.text, "mark": BANNER_MARKS[item.level]})
        elif isinstance(item, Guard):
            test = f"{printer.doprint(item.value)} > {printer.doprint(item.bound)}"
            lines.append({"banner": None, "code": (f"if (soagen_none(ok &= ({test}))) return ok;" if lanes else
                                                   f"if (!({test})) return {item.status};")
                                                  + (f"  /* {item.text} */" if item.text else "")})
        else:
            sym, expr = item
            lines.append({"banner": None, "code": f"const {ctype} {printer.doprint(sym)} = {printer.doprint(expr)};"})
    lines.append({"banner": "outputs", "mark": BANNER_MARKS[0]})
    for arg in prog.outputs:
        for i, e in enumerate(arg.symbols):
            value = printer.doprint(e)
            if lanes and e.is_Number:
                value = f"soagen_splat({value})"
            lines.append({"banner": None, "code": f"{arg.name}[{i}] = {value};"})
    if prog.returns_status:
        lines.append({"banner": None, "code": "return ok;" if lanes else "return 0;"})
    return lines


def symmetric_outputs(prog):
    """``{output name: n}`` of the n x n outputs whose entries (i, j) and (j, i) are one
    and the same expression of ``prog`` (symmetric by construction, n > 1)."""
    found = {}
    for arg in prog.outputs:
        n = math.isqrt(arg.size)
        if n > 1 and n * n == arg.size and all(arg.symbols[i * n + j] == arg.symbols[j * n + i]
                                               for i in range(n) for j in range(i + 1, n)):
            found[arg.name] = n
    return found
