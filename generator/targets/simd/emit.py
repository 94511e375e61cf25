"""SIMD batches: every generated function on SOAGEN_LANES states per instruction.

The straight-line body of a function is printed a second time with every
``double`` a GCC/Clang vector (``__attribute__((vector_size))``) holding one
state per lane: the same statements, in the same order, with the same
operands, so each lane performs the scalar function's operations
(``tests/test_simd.py`` checks the results bit for bit at -O0).  At -O3 with
``-ffp-contract=fast`` gcc chooses which multiply-adds to fuse separately in the
vector and the scalar code, so a row may differ from its single call in the last
bits (the test bounds it).  A batch function transposes W rows of the row-major
inputs into vectors, calls the vector body and transposes the outputs back; the
last vector, when part full, repeats its last row in the lanes after it, so
every row goes through the same instructions: a row's result does not depend on
the batch it is in or its place there.

Ω(0) pivot checks (:class:`soagen.program.statements.Guard`) cannot return early for one
lane: every lane is computed, a failing check clears that lane in a mask, and
only the lanes still set are written; the batch returns the number of rows
that failed, their outputs untouched (the scalar batch's contract).

Outputs that are symmetric matrices by construction (entry (i, j) and (j, i)
are the same statement of the program: M, M⁻¹, Ω, Λ) can also be written as
their upper triangle, row by row (``<function>_batch_simd_upper``): half the
bytes to stream for large batches.

The lane count (``SOAGEN_LANES``, a macro of the emitted file) defaults to one
register of the target: :data:`LANES_AVX512` where the compiler targets AVX-512
(``__AVX512F__``), :data:`LANES` (256 bits) elsewhere; ``<name>_simd_lanes()`` returns
the count compiled.  Measured (``python benchmarks/simd.py``): on an AVX-512 Xeon
(``docs/simd_avx512.md``) 8 doubles a vector ran faster than 4; on an AVX2 EPYC
(``docs/simd.md``), where 8 doubles take two registers an operation, they ran
slower than 4 and took gcc many times as long to compile.  Vector extensions
are not C99: the SIMD file needs GCC or Clang; ``<name>.c`` stays plain C99.
"""
from __future__ import annotations

from dataclasses import dataclass

from soagen.program.printer import SoaCPrinter
from soagen.targets.common import fasttrig
from soagen.targets.common.c_text import environment, function_lines, symmetric_outputs
from soagen.targets.common.inert import Code

#: default lanes per vector without AVX-512: one 256-bit register
LANES = {"double": 4, "float": 8}
#: default lanes per vector where the compiler targets AVX-512: one 512-bit register
LANES_AVX512 = {"double": 8, "float": 16}
#: compiler flags of a SIMD unit after the scalar ones (the same -O3: at -O2, gcc 12 fused other
#: multiply-adds than the scalar -O3 code in float); sqrt without errno is one vector instruction
SIMD_FLAGS = ["-fno-math-errno"]


class SimdPrinter(SoaCPrinter):
    """Prints a statement on vectors of states: type ``soagen_v``, vector sin/cos/sqrt."""

    @property
    def ctype(self):
        return "soagen_v"

    def _trig(self, name, expr):
        return f"soagen_v{name}({self._print(expr.args[0])})"

    def _fn(self, name):
        return "soagen_vsqrt" if name == "sqrt" else super()._fn(name)


@dataclass
class SimdSource:
    """The emitted SIMD batch files of one robot.

    name : str          stem of the scalar files; the SIMD ones are ``<name>_simd.h/.c``
    header, source : str
    cdef : str          prototypes for ``cffi.FFI.cdef``
    units : list        [(function name, C text of a translation unit with only that function)]
    upper : dict        function -> names of its outputs written as upper triangles by ``_batch_simd_upper``
    """

    name: str
    header: str
    source: str
    cdef: str
    units: list
    upper: dict


def vector_helpers(precision, trig, sqrt):
    """C text of the vector sin/cos (``trig``) and sqrt (``sqrt``) used by the SIMD bodies.

    Double: the operations of :func:`soagen.targets.common.fasttrig.c_helpers` on every lane (same
    reduction, same polynomials, the quadrant's value picked by a bit mask instead of
    an index), libm for the lanes with |x| >= 1e5 -- equal to the scalar bit for bit.
    Float: libm's sinf/cosf lane by lane, as the scalar float code.
    """
    parts = []
    if trig and precision == "double":
        sin_poly, cos_poly = fasttrig._horner(fasttrig.SIN, "z"), fasttrig._horner(fasttrig.COS, "z")
        p1, p2, p3 = (repr(x) for x in fasttrig.PIO2)
        parts.append(f"""/* sin (shift 0) or cos (shift 1) on every lane: the scalar soagen_sincos */
static inline soagen_v soagen_vtrig(soagen_v x, long long shift)
{{
    const soagen_v k = (x*{fasttrig.TWO_OVER_PI!r} + {fasttrig.ROUND!r}) - {fasttrig.ROUND!r};
    const soagen_v r = ((x - k*{p1}) - k*{p2}) - k*{p3};
    const soagen_v z = r*r;
    const soagen_v s = r + r*z*({sin_poly});
    const soagen_v c = 1.0 - 0.5*z + z*z*({cos_poly});
    const soagen_m q = __builtin_convertvector(k, soagen_m) + shift;
    const soagen_m odd = -(q & 1);
    soagen_v y = __builtin_convertvector(1 - (q & 2), soagen_v)*(soagen_v)(((soagen_m)s & ~odd) | ((soagen_m)c & odd));
    for (int l = 0; l < SOAGEN_LANES; ++l)
        if (!(fabs(x[l]) < {fasttrig.LIBM_BEYOND!r})) y[l] = shift ? cos(x[l]) : sin(x[l]);
    return y;
}}

static inline soagen_v soagen_vsin(soagen_v x) {{ return soagen_vtrig(x, 0); }}
static inline soagen_v soagen_vcos(soagen_v x) {{ return soagen_vtrig(x, 1); }}""")
    elif trig:
        for fn in ("sin", "cos"):
            parts.append(f"static inline soagen_v soagen_v{fn}(soagen_v x)\n{{\n    soagen_v y;\n"
                         f"    for (int l = 0; l < SOAGEN_LANES; ++l) y[l] = {fn}f(x[l]);\n    return y;\n}}")
    if sqrt:
        fn = "sqrtf" if precision == "float" else "sqrt"
        parts.append(f"static inline soagen_v soagen_vsqrt(soagen_v x)\n{{\n    soagen_v y;\n"
                     f"    for (int l = 0; l < SOAGEN_LANES; ++l) y[l] = {fn}(x[l]);\n    return y;\n}}")
    return Code("\n\n".join(parts))


def _arrays(prog, upper):
    """Per argument: name, size, row size as stored, triangle order n (0: full), input or not."""
    sym = symmetric_outputs(prog) if upper else {}
    out = [dict(name=a.name, size=a.size, row=a.size, n=0, input=True) for a in prog.inputs]
    for a in prog.outputs:
        n = sym.get(a.name, 0)
        out.append(dict(name=a.name, size=a.size, row=n * (n + 1) // 2 if n else a.size, n=n, input=False))
    return out


def batch_prototype(prefix, prog, ctype, upper=False):
    args = ["long count"] + [f"const {ctype} *{a.name}" for a in prog.inputs]
    args += [f"{ctype} *{a.name}" for a in prog.outputs]
    return f"long {prefix}_{prog.name}_batch_simd{'_upper' if upper else ''}({', '.join(args)})"


def emit_simd(robot, programs, name, precision="double"):
    """Render ``<name>_simd.h`` and ``<name>_simd.c`` for ``programs``; -> SimdSource."""
    from soagen._version import __version__

    printer = SimdPrinter(precision)
    ctype = SoaCPrinter(precision).ctype
    by_name = {p.name: p for p in programs}
    functions = []
    for prog in programs:
        target = by_name.get(prog.calls, prog)
        formats = []
        for upper in (False, True) if symmetric_outputs(prog) else (False,):
            arrays = _arrays(prog, upper)
            formats.append(dict(
                upper=upper, arrays=arrays, prototype=batch_prototype(name, prog, ctype, upper),
                forward=(f"{name}_{prog.calls}_batch_simd{'_upper' if upper else ''}("
                         + ", ".join(["count"] + [a["name"] for a in arrays]) + ")") if prog.calls else None,
                lanes_call=f"{name}_{prog.name}_lanes(" + ", ".join(f"v_{a['name']}" for a in arrays) + ")"))
        functions.append(dict(
            name=prog.name, returns_status=prog.returns_status, calls=prog.calls, formats=formats,
            lanes_prototype=(f"static {'soagen_m' if prog.returns_status else 'void'} {name}_{prog.name}_lanes("
                             + ", ".join([f"const soagen_v {a.name}[{a.size}]" for a in prog.inputs]
                                         + [f"soagen_v {a.name}[{a.size}]" for a in prog.outputs]) + ")"),
            lines=None if prog.calls else function_lines(prog, printer, lanes=True),
            doc=("The same on `count` rows of row-major arrays, SOAGEN_LANES rows per instruction; "
                 + ("returns the number of rows where Omega(0) is singular (their outputs untouched)."
                    if target.returns_status else "returns 0.")),
            upper_doc="The same with " + ", ".join(symmetric_outputs(prog)) + " as upper triangles "
                      "(row by row, n(n+1)/2 values a row)."))
    real = [p for p in programs if not p.calls]
    ctx = dict(version=__version__, robot_name=robot.name, name=name, ctype=ctype,
               mtype="int" if precision == "float" else "long long", lanes=LANES[precision],
               lanes_avx512=LANES_AVX512[precision],
               guard=f"SOAGEN_{name.upper()}_SIMD_H", functions=functions,
               helpers=vector_helpers(precision, any(p.ops["trig"] for p in real),
                                      any(p.ops["sqrt"] for p in real)))
    env = environment()
    header = env.get_template("simd.h.j2").render(**ctx)
    template = env.get_template("simd.c.j2")
    source = template.render(**dict(ctx, lanes_function=True))
    units = [(f["name"], template.render(**dict(ctx, functions=[f], lanes_function=i == 0)))
             for i, f in enumerate(functions)]
    cdef = "\n".join([f"long {name}_simd_lanes(void);"]
                     + [fmt["prototype"] + ";" for f in functions for fmt in f["formats"]])
    upper = {p.name: list(symmetric_outputs(p)) for p in programs if symmetric_outputs(p)}
    return SimdSource(name, header, source, cdef, units, upper)
