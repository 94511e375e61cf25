"""C text shared by the C targets: the Jinja environment of ``templates/``, a function's
body as lines (banners, guards, statements, outputs), prototypes and the C name of a robot.

All C syntax of expressions comes from :class:`~soagen.program.printer.SoaCPrinter`;
the templates only lay out what these functions hand them.
"""
from __future__ import annotations

import math
import weakref
from importlib import resources

import jinja2
import sympy as sp

from soagen.program.latency import Schedule
from soagen.program.parts import reads
from soagen.program.statements import Banner, Guard
from soagen.targets.common.compiler import is_long
from soagen.targets.common.inert import finalize


# Program -> its latency Schedule: made once, shared by the scalar C, SIMD and CUDA texts of one
# final program (made per text, it was half of emitting the 15-dof floating tree's C and SIMD texts
# under cProfile).  Keyed by the program object: a program is not changed once it is final
_SCHEDULES = weakref.WeakKeyDictionary()


def schedule_of(prog):
    """The :class:`~soagen.program.latency.Schedule` of a final program's statements, made at the
    first call for ``prog`` and kept while ``prog`` lives."""
    if prog not in _SCHEDULES:
        _SCHEDULES[prog] = Schedule(prog.statements())
    return _SCHEDULES[prog]


def environment():
    """The Jinja environment of ``templates/``: every value a template prints goes through
    :func:`soagen.targets.common.inert.finalize` (text from outside is inert in C)."""
    folder = resources.files("soagen.templates")
    return jinja2.Environment(loader=jinja2.FileSystemLoader(str(folder)),
                              trim_blocks=True, lstrip_blocks=True, keep_trailing_newline=True,
                              undefined=jinja2.StrictUndefined, finalize=finalize)


def opline(prog):
    o = prog.ops
    return (f"{prog.name:<30} {o['mul']:6d} mul {o['add']:6d} add {o['div']:4d} div "
            f"{o['sqrt']:3d} sqrt {o['trig']:3d} trig {o['statements']:6d} statements")


def prototype(prefix, prog, ctype, definition=False):
    """The C prototype; a ``definition``'s outputs are ``restrict``: a caller's output arrays overlap
    neither its inputs nor each other (docs/guide/functions.md, Conventions), so the compiler may store an
    output entry where it is computed (:func:`function_lines`) and vectorize the column loops
    without reloading the inputs; the header's declaration is compatible with it, and C++ can
    include it."""
    restrict = "restrict " if definition else ""
    args = [f"const {ctype} {a.name}[{a.size}]" for a in prog.inputs]
    args += [f"{ctype} {a.name}[{restrict}{a.size}]" for a in prog.outputs]
    ret = "int" if prog.returns_status else "void"
    return f"{ret} {prefix}_{prog.name}({', '.join(args)})"


#: comment rule of a banner by level: a section (a column, a block), a pass, a body inside a pass
BANNER_MARKS = {0: "====", 1: "----", 2: "--"}


def call_lines(prefix, prog):
    """The body of a family function that calls the generated function of its algorithm."""
    args = ", ".join(a.name for a in prog.inputs + prog.outputs)
    call = f"{prefix}_{prog.calls}({args})"
    return [{"banner": None, "code": f"return {call};" if prog.returns_status else f"{call};"}]


def function_lines(prog, printer, lanes=False, early=False):
    """The body of ``prog`` as lines: ``{"banner": text, "mark": rule}`` or ``{"banner": None, "code": C}``
    with an optional ``"comment"`` printed after the code (templates/lines.j2).  A line's code holds
    no comment of its own: every text of a comment is a value the templates escape.

    With ``early`` (a definition whose outputs are ``restrict``, :func:`prototype`) an output entry
    is stored right after the statement that computes it (:func:`_early_stores`), else every
    output is written after the last statement.

    With ``lanes`` (:mod:`soagen.targets.simd.emit`) the same statements act on vectors of
    states: ``printer.ctype`` is the vector type, a guard clears the lanes that
    fail it in the mask ``ok`` and returns only when no lane is left (the other
    lanes are computed on; the branch also keeps the scalar code's basic blocks,
    so the compiler fuses the same multiply-adds), the function returns ``ok``;
    a constant output is broadcast.
    """
    _prepare(prog, printer)
    lines = [{"banner": None, "code": f"(void){name};"} for name in prog.unused_inputs()]
    lines += trig_lines(prog, prog.body + [item for loop in prog.loops for item in loop.body.body], printer)
    early, stored = _early_stores(prog, printer) if early else ({}, frozenset())
    for item in prog.body:
        lines.append(_item_line(item, printer, lanes))
        if isinstance(item, tuple):
            lines += early.get(item[0], [])
    return lines + _output_lines(prog, printer, lanes, stored)


def _prepare(prog, printer):
    printer.names = prog.names
    printer.schedule = schedule_of(prog)


def trig_lines(prog, items, printer):
    """With ``printer.batched_trig``: the lines that compute the sines and cosines the statements
    ``items`` take, of joint angles (inputs of ``prog``), all at once before them (``soagen_sincos``,
    :mod:`soagen.targets.common.fasttrig`), each statement then reading its value; [] otherwise,
    and for a long unit (:func:`~soagen.targets.common.compiler.is_long`: a call per statement),
    judged by the same statement count as the compiler flags of the unit."""
    printer.trig_slots = {}
    statements = [item for item in items if isinstance(item, tuple)]
    calls = [e for _, e in statements if isinstance(e, (sp.sin, sp.cos))]
    if not (printer.batched_trig and calls) or is_long(len(statements)):
        return []
    slot = {sym: (k, i) for k, a in enumerate(prog.inputs) for i, sym in enumerate(a.symbols)}
    stray = [e for e in calls if e.args[0] not in slot]
    if stray:
        raise ValueError(f"{prog.name}: sin/cos of {stray[0].args[0]}, not an input: only angles read "
                         "from the inputs are computed before the statements")
    angles = sorted({e.args[0] for e in calls}, key=slot.get)
    printer.trig_slots = {a: j for j, a in enumerate(angles)}
    n = len(angles)
    return [{"banner": "sin and cos of the joint angles, all at once", "mark": BANNER_MARKS[1]},
            {"banner": None, "code": f"const {printer.ctype} soagen_angle[{n}] = "
                                     f"{{{', '.join(printer.doprint(a) for a in angles)}}};"},
            {"banner": None, "code": f"{printer.ctype} soagen_sin[{n}], soagen_cos[{n}];"},
            {"banner": None, "code": f"soagen_sincos({n}, soagen_angle, soagen_sin, soagen_cos);"}]


def _item_line(item, printer, lanes=False):
    """One body item (banner, guard or statement) as a line."""
    if isinstance(item, Banner):
        return {"banner": item.text, "mark": BANNER_MARKS[item.level]}
    if isinstance(item, Guard):
        test = f"{printer.doprint(item.value)} > {printer.doprint(item.bound)}"
        return {"banner": None, "code": (f"if (soagen_none(ok &= ({test}))) return ok;" if lanes else
                                         f"if (!({test})) return {item.status};"), "comment": item.text}
    sym, expr = item
    return {"banner": None, "code": f"const {printer.ctype} {printer.doprint(sym)} = {printer.doprint(expr)};"}


#: a run of at least this many consecutive output entries holding one constant (the zeros of a
#: sparse M or Jacobian) is written by a ``for`` over the run, which compilers turn into vector
#: stores, rather than entry by entry
CONSTANT_RUN = 4


def _constant_run(values, printed, start):
    """The end of the run of entries that print as the constant ``values[start]`` does, or
    ``start`` when that entry is not a constant."""
    stop = start
    if values[start].is_Number:
        while stop < len(values) and values[stop].is_Number and printed[stop] == printed[start]:
            stop += 1
    return stop


#: the fewest output values a function stores where they are computed (:func:`_early_stores`):
#: below it they can wait in registers for the end, where gcc schedules the stores as well or
#: better (the Panda's M, Jacobian, Λ⁻¹: 1.00-1.02x the time stored early; its derivatives, with
#: 98-294 outputs, 0.97-0.98x; the TALOS's M 0.91x; one loss, solo12's A_G with 108 outputs,
#: 1.09x; `python benchmarks/ab.py`)
EARLY_STORES = 64


def _early_stores(prog, printer):
    """The output entries stored where their value is computed: an entry that is a statement s of
    the body (or −s) after its last guard is written right after s, so that s need not stay alive
    (in a register or spilled to the stack) until the end of the function; a function that
    returns a status still writes no output before its last guard has passed.  Only in a function
    with at least :data:`EARLY_STORES` such values.

    Returns ``({statement symbol: [store lines]}, {(output name, index) stored so})``."""
    last_guard = max((k for k, item in enumerate(prog.body) if isinstance(item, Guard)), default=-1)
    after = {item[0] for item in prog.body[last_guard + 1:] if isinstance(item, tuple)}
    early, stored = {}, set()
    for arg in prog.outputs:
        for i, e in enumerate(arg.symbols):
            s = -e if e.is_Mul and e.args[0] == -1 and len(e.args) == 2 else e
            if s in after:
                early.setdefault(s, []).append(_store_line(arg.name, i, e, printer.doprint(e), False))
                stored.add((arg.name, i))
    return (early, stored) if len(early) >= EARLY_STORES else ({}, frozenset())


def _store_line(name, i, value, printed, lanes):
    """``name[i] = value;``, a constant broadcast to every lane with ``lanes``."""
    return {"banner": None, "code": f"{name}[{i}] = {f'soagen_splat({printed})' if lanes and value.is_Number else printed};"}


def _output_lines(prog, printer, lanes=False, stored=frozenset()):
    """The outputs not yet ``stored`` written (runs of one constant by a loop, :data:`CONSTANT_RUN`),
    then the column loops that work on them in place."""
    lines = [{"banner": "outputs", "mark": BANNER_MARKS[0]}]
    for arg in prog.outputs:
        values = arg.symbols
        printed = [printer.doprint(e) for e in values]
        i = 0
        while i < len(values):
            if (arg.name, i) in stored:
                i += 1
                continue
            value = f"soagen_splat({printed[i]})" if lanes and values[i].is_Number else printed[i]
            stop = _constant_run(values, printed, i)
            if stop - i >= CONSTANT_RUN:
                lines.append({"banner": None, "code": f"for (int i = {i}; i < {stop}; ++i) {arg.name}[i] = {value};"})
                i = stop
            else:
                lines.append(_store_line(arg.name, i, values[i], printed[i], lanes))
                i += 1
    for loop in prog.loops:
        lines += _loop_lines(prog, loop, printer, lanes)
    if prog.returns_status:
        lines.append({"banner": None, "code": "return ok;" if lanes else "return 0;"})
    return lines


def _loop_lines(prog, loop, printer, lanes):
    """A :class:`~soagen.program.statements.ColumnLoop` as a C ``for`` over the columns j, its body
    reading and writing entry (i, j) of output array k as ``name[i·columns + j]``."""
    names, schedule = printer.names, printer.schedule
    entry = {}
    for arg, index in zip(loop.body.inputs, loop.arrays):
        out = prog.outputs[index].name
        entry.update({sym: f"{out}[{i * loop.columns} + j]" for i, sym in enumerate(arg.symbols)})
    printer.names = {**names, **loop.body.names, **entry}
    printer.schedule = schedule_of(loop.body)
    indent = "    "
    lines = [{"banner": f"the same on every column j of {', '.join(prog.outputs[i].name for i in loop.arrays)}",
              "mark": BANNER_MARKS[0]},
             {"banner": None, "code": f"for (int j = {loop.start}; j < {loop.end}; ++j) {{"}]
    for item in loop.body.body:
        line = _item_line(item, printer, lanes)
        if line["banner"] is not None:                    # a banner inside the loop: a comment line
            lines.append({"banner": None, "code": "", "indent": indent,
                          "comment": f"{line['mark']} {line['banner']} {line['mark']}"})
        else:
            lines.append(dict(line, code=indent + line["code"]))
    for arg in loop.body.outputs:
        for sym, e in zip(loop.body.inputs[int(arg.name[3:])].symbols, arg.symbols):
            if e != sym:                                  # an entry the body changes
                value = printer.doprint(e)
                if lanes and e.is_Number:
                    value = f"soagen_splat({value})"
                lines.append({"banner": None, "code": f"{indent}{entry[sym]} = {value};"})
    lines.append({"banner": None, "code": "}"})
    printer.names, printer.schedule = names, schedule
    return lines


def split_function(prefix, prog, printer, parts, slots):
    """A program cut into parts (:func:`soagen.program.parts.split`) as C: the parts, each a
    function of the inputs and the scratch array ``w``, and the body of the function that
    calls them in order, then runs the last part and writes the outputs.

    Returns
    -------
    functions : list of dict   ``name``, ``prototype``, ``lines``, ``returns_status`` of each part but the last
    lines : list               the calling function's body
    """
    _prepare(prog, printer)
    ctype = printer.ctype
    inputs = [f"const {ctype} {a.name}[{a.size}]" for a in prog.inputs]

    def loads(part):
        return [{"banner": None, "code": f"const {ctype} {printer.doprint(sym)} = w[{slot}];"}
                for sym, slot in part.loads]

    functions, calls = [], [{"banner": None, "code": f"{ctype} w[{slots}];", "comment": "values passed between the parts"}]
    for k, part in enumerate(parts[:-1]):
        name = f"{prog.name}_part{k}"
        status = any(isinstance(item, Guard) for item in part.body)
        read = set().union(*(reads(item) for item in part.body if not isinstance(item, Banner)))
        lines = [{"banner": None, "code": f"(void){a.name};"} for a in prog.inputs if not read & set(a.symbols)]
        lines += loads(part) + trig_lines(prog, part.body, printer) + [_item_line(item, printer) for item in part.body]
        lines += [{"banner": None, "code": f"w[{slot}] = {printer.doprint(sym)};"} for sym, slot in part.stores]
        if not part.loads and not part.stores:
            lines.insert(0, {"banner": None, "code": "(void)w;"})
        if status:
            lines.append({"banner": None, "code": "return 0;"})
        args = ", ".join(a.name for a in prog.inputs)
        call = f"{prefix}_{name}({args}, w)"
        calls += ([{"banner": None, "code": f"const int status{k} = {call};"},
                   {"banner": None, "code": f"if (status{k}) return status{k};"}] if status else
                  [{"banner": None, "code": f"{call};"}])
        functions.append(dict(name=name, returns_status=status, lines=lines,
                              prototype=f"{'int' if status else 'void'} {prefix}_{name}("
                                        f"{', '.join(inputs)}, {ctype} w[{slots}])"))
    last = parts[-1]
    lines = calls + loads(last) + trig_lines(prog, last.body, printer) + [_item_line(item, printer) for item in last.body]
    return functions, lines + _output_lines(prog, printer)


def symmetric_outputs(prog):
    """``{output name: n}`` of the n x n outputs whose entries (i, j) and (j, i) are one
    and the same expression of ``prog`` (symmetric by construction, n > 1)."""
    found = {}
    looped = prog.looped_outputs()
    for arg in prog.outputs:
        if arg.name in looped:                  # its entries are a loop's inputs, not its values
            continue
        n = math.isqrt(arg.size)
        if n > 1 and n * n == arg.size and all(arg.symbols[i * n + j] == arg.symbols[j * n + i]
                                               for i in range(n) for j in range(i + 1, n)):
            found[arg.name] = n
    return found
