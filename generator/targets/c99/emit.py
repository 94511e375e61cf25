"""C emission: programs → ``<name>.h`` / ``<name>.c`` through the Jinja templates.

All C syntax of expressions comes from :class:`~soagen.program.printer.SoaCPrinter`;
the templates only lay out what this module hands them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from soagen.program.parts import split
from soagen.program.printer import SoaCPrinter
from soagen.targets.common import fasttrig
from soagen.targets.common.c_text import call_lines, environment, function_lines, opline, prototype, split_function


@dataclass
class CSource:
    """The emitted files of one robot.

    Attributes
    ----------
    name : str       file stem and function prefix
    header, source : str   text of ``<name>.h`` and ``<name>.c``
    cdef : str       prototypes for ``cffi.FFI.cdef``
    """

    name: str
    header: str
    source: str
    cdef: str
    units: list = None   # [(unit name, C text of a translation unit with one function or one part of one)]
    parts: dict = field(default_factory=dict)   # function -> the unit names of its parts (a cut function)
    seconds: dict = field(default_factory=dict)   # function -> seconds to print its body


def batch_prototype(prefix, prog, ctype):
    args = ["long count"] + [f"const {ctype} *{a.name}" for a in prog.inputs]
    args += [f"{ctype} *{a.name}" for a in prog.outputs]
    return f"long {prefix}_{prog.name}_batch({', '.join(args)})"


def batch_call(prefix, prog):
    """The per-row call inside the batch loop (row ``i``)."""
    args = [f"{a.name} + {a.size}*i" for a in prog.inputs + prog.outputs]
    return f"{prefix}_{prog.name}({', '.join(args)})"


def emit(robot, programs, name, precision="double"):
    """Render the header and source of ``programs`` for ``robot``; -> CSource."""
    from soagen._version import __version__

    printer = SoaCPrinter(precision)
    ctype = printer.ctype
    functions, seconds, parts_of = [], {}, {}
    for prog in programs:
        t0 = time.perf_counter()
        parts, slots = split(prog) if not prog.calls else ([None], 0)
        if len(parts) > 1:
            part_functions, lines = split_function(name, prog, printer, parts, slots)
            parts_of[prog.name] = [dict(f, part=True, declarations=[], doc=(
                f"Part {k + 1} of {len(parts)} of {name}_{prog.name}: its statements in order, the values later "
                f"parts read stored in w.")) for k, f in enumerate(part_functions)]
        else:
            lines = call_lines(name, prog) if prog.calls else function_lines(prog, printer)
            parts_of[prog.name] = []
        functions.append(dict(
            doc=prog.doc + (" Returns 0, or 1 (outputs untouched) when Omega(0) is singular."
                            if prog.returns_status else ""), opline=opline(prog),
            batch_prototype=batch_prototype(name, prog, ctype), batch_call=batch_call(name, prog),
            returns_status=prog.returns_status, prototype=prototype(name, prog, ctype),
            batch_doc="The same on `count` rows of row-major arrays; " + (
                "returns the number of rows where Omega(0) is singular (their outputs untouched)."
                if prog.returns_status else "returns 0."),
            argdocs=[f"{a.name}[{a.size}]: {a.doc}" for a in prog.inputs + prog.outputs],
            part=False, declarations=[f["prototype"] for f in parts_of[prog.name]], lines=lines))
        seconds[prog.name] = time.perf_counter() - t0
    joints, tips = [], []
    multi = any(part.multi_dof for _, part in robot.parts)
    for label, part in robot.parts:
        prefix = f"arm {label}: " if label else ""
        joints += [f"{prefix}{k:2d} {b.joint} ({b.joint_type}, moves link {b.name}, parent "
                   f"{'base' if b.parent < 0 else b.parent})"
                   + (f" q[{part.qslice(k).start}:{part.qslice(k).stop}] qd[{part.vslice(k).start}:"
                      f"{part.vslice(k).stop}]" if multi else "") for k, b in enumerate(part.bodies)]
        tips += [f"{prefix}{i} {t.name} on body {t.body}, offset [{', '.join(repr(float(x)) for x in t.offset)}]"
                 for i, t in enumerate(part.tips)]
    ctx = dict(version=__version__, robot_name=robot.name, guard_name=name, guard=f"SOAGEN_{name.upper()}_H",
               macro=name.upper(), ctype=ctype,
               sizes=[(f"{name.upper()}_{('N' + label.upper()) if label else 'NQ'}", part.n)
                      for label, part in robot.parts], joints=joints, tips=tips,
               gravity=", ".join(repr(float(g)) for g in robot.gravity), functions=functions,
               conventions_extra=[
                   f"- This robot has multi-dof joints: q has nq = {robot.nq} entries, qd, qdd, tau",
                   f"  have nv = {robot.nv}; each joint's slices are listed below. Quaternions are",
                   "  (x, y, z, w) and need not be unit (the rotation of q/|q| is used; not zero).",
                   "  Spherical: qd = body-frame angular velocity. Floating: q = (position in the",
                   "  parent frame, quaternion), qd = body-frame [omega; v], its tau the body wrench",
                   "  [n; f]; qdd the derivative of qd (as Pinocchio, whose order is [v; omega])."]
               if multi else [],
               helpers=fasttrig.c_helpers() if precision == "double" and any(p.ops["trig"] for p in programs)
               else "")
    env = environment()
    header = env.get_template("robot.h.j2").render(**ctx)
    template = env.get_template("robot.c.j2")
    source = template.render(**dict(ctx, functions=[g for prog, f in zip(programs, functions)
                                                    for g in parts_of[prog.name] + [f]]))
    units = []
    for prog, f in zip(programs, functions):
        t0 = time.perf_counter()
        units += [(part["name"], template.render(**dict(ctx, functions=[part]))) for part in parts_of[prog.name]]
        units.append((prog.name, template.render(**dict(ctx, functions=[f]))))
        seconds[prog.name] += time.perf_counter() - t0
    cdef = "\n".join(f"{f['prototype']};\n{f['batch_prototype']};" for f in functions)
    return CSource(name, header, source, cdef, units, seconds=seconds,
                   parts={prog: [f["name"] for f in found] for prog, found in parts_of.items() if found})


def driver(name, programs, inputs, precision="double", template="driver.c.j2"):
    """C text of a ``main`` calling each program on the given inputs.

    ``inputs`` maps a function name to a list of cases, each a list of 1-D
    arrays (one per input argument); the driver prints every output element
    of every case with 17 digits.
    """
    from soagen._version import __version__

    printer = SoaCPrinter(precision)
    ctype = printer.ctype
    calls = []
    for prog, (case, values) in ((p, c) for p in programs for c in enumerate(inputs[p.name])):
        printer.names = prog.names
        decls = [f"const {ctype} {a.name}[{a.size}] = {{{', '.join(printer.literal(x) for x in v)}}};"
                 for a, v in zip(prog.inputs, values)]
        decls += [f"{ctype} {a.name}[{a.size}] = {{0}};" for a in prog.outputs]
        args = ", ".join(a.name for a in prog.inputs + prog.outputs)
        call = f"{name}_{prog.name}({args})"
        calls.append(dict(name=prog.name, case=case, declarations=decls,
                          invocation=call if prog.returns_status else f"({call}, 0)",
                          outputs=[dict(name=a.name, size=a.size) for a in prog.outputs]))
    return environment().get_template(template).render(version=__version__, name=name, calls=calls,
                                                        ctype=ctype)


def render_plain(template, **data):
    """A template that takes no program, only ``data`` (MCU start-up code, linker scripts, host stand-ins)."""
    return environment().get_template(template).render(**data)
