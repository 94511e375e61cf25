"""C emission: programs → ``<name>.h`` / ``<name>.c`` through the Jinja templates.

All C syntax of expressions comes from :class:`~soagen.program.printer.SoaCPrinter`;
the templates only lay out what this module hands them.
"""
from __future__ import annotations

import time
from dataclasses import dataclass, field

from soagen.program.float_facts import direct_float_facts
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
    argv: str = ""       # each function's argv entries (:func:`argv_entries`), for the module's wrapper
    parts: dict = field(default_factory=dict)   # function -> the unit names of its parts (a cut function)
    seconds: dict = field(default_factory=dict)   # function -> seconds to print its body


def batch_prototype(prefix, prog, ctype):
    args = ["long count"] + [f"const {ctype} *{a.name}" for a in prog.inputs]
    args += [f"{ctype} *{a.name}" for a in prog.outputs]
    return f"long {prefix}_{prog.name}_batch({', '.join(args)})"


def argv_entries(prefix, programs):
    """Each function (and its batch) called with its arrays from one pointer array, inputs then
    outputs: ``int soagen_argv_<f>(void *const *a)`` (the function's status, 0 without guards)
    and ``long soagen_argv_<f>_batch(long count, void *const *a)``, what the module's methods
    call (:mod:`soagen.targets.c99.fastcall`); -> (C text, cffi declarations)."""
    text, cdef = [], []
    for prog in programs:
        args = ", ".join(f"a[{i}]" for i in range(len(prog.inputs) + len(prog.outputs)))
        call = f"{prefix}_{prog.name}({args})"
        entry, batch = f"int soagen_argv_{prog.name}(void *const *a)", \
            f"long soagen_argv_{prog.name}_batch(long count, void *const *a)"
        text += [f"static {entry} {{ {f'return {call};' if prog.returns_status else f'{call}; return 0;'} }}",
                 f"static {batch} {{ return {prefix}_{prog.name}_batch(count, {args}); }}"]
        cdef += [f"{entry};", f"{batch};"]
    return "\n".join(text) + "\n", "\n".join(cdef)


def batch_call(prefix, prog):
    """The per-row call inside the batch loop (row ``i``)."""
    args = [f"{a.name} + {a.size}*i" for a in prog.inputs + prog.outputs]
    return f"{prefix}_{prog.name}({', '.join(args)})"


class Emitter:
    """Prints programs one at a time, as they come (:meth:`function`), and lays out the files
    once they are all in (:meth:`csource`).

    Each function's translation unit is complete on its own (its callees declared in it, no
    header needed), so a build compiles it while later functions are still being recorded.

    Parameters
    ----------
    robot : Robot or ClosedChain
    name : str        file stem and function prefix
    precision : str   "double" or "float"
    """

    def __init__(self, robot, name, precision="double"):
        from soagen._version import __version__

        self.robot, self.name, self.precision = robot, name, precision
        self.printer = SoaCPrinter(precision, batched_trig=True)
        self.ctype = self.printer.ctype
        self.printed, self.parts_of, self.seconds, self.units = {}, {}, {}, {}
        self.template = environment().get_template("robot.c.j2")
        self.ctx = _context(robot, name, self.ctype, __version__)

    def function(self, prog, callee=None):
        """Print ``prog`` (``callee``: the program it calls, when it is a family function that calls
        one); -> its translation units ``[(unit name, C text)]``, its parts' first."""
        with direct_float_facts():
            return self._function(prog, callee)

    def _function(self, prog, callee):
        t0 = time.perf_counter()
        name, ctype = self.name, self.ctype
        parts, slots = split(prog) if not prog.calls else ([None], 0)
        if len(parts) > 1:
            part_functions, lines = split_function(name, prog, self.printer, parts, slots)
            self.parts_of[prog.name] = [dict(f, part=True, declarations=[], definition=f["prototype"], doc=(
                f"Part {k + 1} of {len(parts)} of {name}_{prog.name}: its statements in order, the values later "
                f"parts read stored in w.")) for k, f in enumerate(part_functions)]
        else:
            lines = call_lines(name, prog) if prog.calls else function_lines(prog, self.printer, early=True)
            self.parts_of[prog.name] = []
        f = self.printed[prog.name] = dict(
            doc=prog.doc + (" Returns 0, or 1 (outputs untouched) when Omega(0) is singular."
                            if prog.returns_status else ""), opline=opline(prog),
            batch_prototype=batch_prototype(name, prog, ctype), batch_call=batch_call(name, prog),
            returns_status=prog.returns_status, prototype=prototype(name, prog, ctype),
            definition=prototype(name, prog, ctype, definition=True),
            batch_doc="The same on `count` rows of row-major arrays; " + (
                "returns the number of rows where Omega(0) is singular (their outputs untouched)."
                if prog.returns_status else "returns 0."),
            argdocs=[f"{a.name}[{a.size}]: {a.doc}" for a in prog.inputs + prog.outputs],
            part=False, declarations=[g["prototype"] for g in self.parts_of[prog.name]], lines=lines)
        ctx = dict(self.ctx, own_header=False, helpers=self._helpers([prog.name]))
        units = [(part["name"], self.template.render(**dict(ctx, functions=[part])))
                 for part in self.parts_of[prog.name]]
        own = dict(f, declarations=f["declarations"] + ([prototype(name, callee, ctype)] if callee else []))
        units.append((prog.name, self.template.render(**dict(ctx, functions=[own]))))
        self.units[prog.name] = units
        self.seconds[prog.name] = time.perf_counter() - t0
        return units

    def _helpers(self, names):
        """The fast sin/cos helpers that the printed functions ``names`` (and their parts) call."""
        code = "\n".join(line["code"] for name in names for f in [*self.parts_of[name], self.printed[name]]
                         for line in f["lines"] if line["banner"] is None)
        return fasttrig.c_helpers(fasttrig.used(code))

    def csource(self, programs):
        """The files of ``programs`` (each printed, or printed now); -> CSource."""
        by_name = {p.name: p for p in programs}
        for prog in programs:
            if prog.name not in self.printed:
                self.function(prog, by_name.get(prog.calls))
        functions = [self.printed[p.name] for p in programs]
        ctx = dict(self.ctx, own_header=True, helpers=self._helpers([p.name for p in programs]))
        header = environment().get_template("robot.h.j2").render(**dict(ctx, functions=functions))
        source = self.template.render(**dict(ctx, functions=[g for p in programs
                                                              for g in self.parts_of[p.name] + [self.printed[p.name]]]))
        argv, argv_cdef = argv_entries(self.name, programs)
        cdef = "\n".join(f"{f['prototype']};\n{f['batch_prototype']};" for f in functions) + "\n" + argv_cdef
        return CSource(self.name, header, source, cdef, [u for p in programs for u in self.units[p.name]], argv,
                       seconds={p.name: self.seconds[p.name] for p in programs},
                       parts={p.name: [f["name"] for f in self.parts_of[p.name]]
                              for p in programs if self.parts_of[p.name]})


def _context(robot, name, ctype, version):
    """What the templates show of the robot: its joints, tips, sizes and conventions."""
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
    return dict(version=version, robot_name=robot.name, guard_name=name, guard=f"SOAGEN_{name.upper()}_H",
                macro=name.upper(), ctype=ctype,
                sizes=[(f"{name.upper()}_{('N' + label.upper()) if label else 'NQ'}", part.n)
                       for label, part in robot.parts], joints=joints, tips=tips,
                gravity=", ".join(repr(float(g)) for g in robot.gravity),
                conventions_extra=[
                    f"- This robot has multi-dof joints: q has nq = {robot.nq} entries, qd, qdd, tau",
                    f"  have nv = {robot.nv}; each joint's slices are listed below. Quaternions are",
                    "  (x, y, z, w) and need not be unit (the rotation of q/|q| is used; not zero).",
                    "  Spherical: qd = body-frame angular velocity. Floating: q = (position in the",
                    "  parent frame, quaternion), qd = body-frame [omega; v], its tau the body wrench",
                    "  [n; f]; qdd the derivative of qd (as Pinocchio, whose order is [v; omega])."]
                if multi else [])


def emit(robot, programs, name, precision="double"):
    """Render the header and source of ``programs`` for ``robot``; -> CSource."""
    return Emitter(robot, name, precision).csource(programs)


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
