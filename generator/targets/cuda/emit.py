"""GPU batches: the generated functions on one state per CUDA thread.

:func:`emit_cuda` writes ``<name>.cu``: the straight-line functions of
``<name>.c`` (the same lines) marked ``__host__ __device__``, per function a
kernel that reads one state from strided arrays, calls the function and
writes the outputs back (the symmetric ones as upper triangles in the
``_upper`` launchers, :func:`soagen.targets.common.c_text.symmetric_outputs`), and an
``extern "C"`` launcher; ``<name>_cuda.h`` declares the launchers.

:func:`soagen.targets.cuda.compile.build` compiles it (``Options(target="cuda")``: nvcc, a shared
library for the GPU; ``target="cuda-host"``: the host C++ compiler with the
CUDA qualifiers defined away, the kernels run as loops on the CPU) and loads
it with ctypes as a :class:`~soagen.targets.cuda.module.CudaModule`, whose methods take and return arrays
of any library that speaks DLPack (PyTorch, CuPy; NumPy for "cuda-host")
without copying them: the launchers take each array's pointer and strides.
Neither CuPy nor PyTorch is imported unless the arrays come from them.
"""
from __future__ import annotations

from dataclasses import dataclass

from soagen.program.printer import SoaCPrinter
from soagen.targets.common import fasttrig
from soagen.targets.common.c_text import call_lines, environment, function_lines, opline, prototype, symmetric_outputs
from soagen.targets.common.inert import Code


@dataclass
class CudaSource:
    """``<name>.cu`` and ``<name>_cuda.h``; ``upper``: function -> outputs its _upper launcher packs."""

    name: str
    source: str
    header: str
    upper: dict


def trig_helpers():
    """C text of ``soagen_sin``/``soagen_cos`` for host and device: the operations of
    :func:`soagen.targets.common.fasttrig.c_helpers` on one angle (a thread computes its own, as it
    needs them: no local array, which a GPU keeps in local memory) -- the same value."""
    sin_poly, cos_poly = fasttrig._horner(fasttrig.SIN, "z"), fasttrig._horner(fasttrig.COS, "z")
    p1, p2, p3 = (repr(x) for x in fasttrig.PIO2)
    return Code(f"""/* sin (shift 0) or cos (shift 1) of joint angles: soagen_sincos of the C file, one angle */
__host__ __device__ static inline double soagen_trig(double x, long shift)
{{
    if (!(fabs(x) < {fasttrig.LIBM_BEYOND!r})) return shift ? cos(x) : sin(x);
    const double k = (x*{fasttrig.TWO_OVER_PI!r} + {fasttrig.ROUND!r}) - {fasttrig.ROUND!r};
    const double r = ((x - k*{p1}) - k*{p2}) - k*{p3};
    const double z = r*r;
    const double s = r + r*z*({sin_poly});
    const double c = 1.0 - 0.5*z + z*z*({cos_poly});
    const long q = (long)k + shift;
    return (double)(1 - (q & 2))*((q & 1) ? c : s);
}}

__host__ __device__ static inline double soagen_sin(double x) {{ return soagen_trig(x, 0); }}
__host__ __device__ static inline double soagen_cos(double x) {{ return soagen_trig(x, 1); }}""")


def _strided(arrays, ctype):
    params = ", ".join(f"{'const ' if a['input'] else ''}{ctype} *{a['name']}, long {a['name']}_s, long {a['name']}_c"
                       for a in arrays)
    args = ", ".join(f"{a['name']}, {a['name']}_s, {a['name']}_c" for a in arrays)
    return params, args


def launcher_prototype(prefix, prog, ctype, upper=False):
    params, _ = _strided([dict(name=a.name, input=True) for a in prog.inputs]
                         + [dict(name=a.name, input=False) for a in prog.outputs], ctype)
    return (f"int {prefix}_{prog.name}{'_upper' if upper else ''}_cuda(long count, {params}, unsigned *failed, "
            "void *stream)")


def emit_cuda(robot, programs, name, precision="double"):
    """Render ``<name>.cu`` and ``<name>_cuda.h`` for ``programs``; -> CudaSource."""
    from soagen._version import __version__

    printer = SoaCPrinter(precision)
    ctype = printer.ctype
    functions = []
    for prog in programs:
        sym = symmetric_outputs(prog)
        arrays = ([dict(name=a.name, size=a.size, n=0, input=True) for a in prog.inputs]
                  + [dict(name=a.name, size=a.size, n=sym.get(a.name, 0), input=False) for a in prog.outputs])
        params, args = _strided(arrays, ctype)
        functions.append(dict(
            name=prog.name, doc=prog.doc, opline=opline(prog), prototype=prototype(name, prog, ctype),
            returns_status=prog.returns_status, arrays=arrays, strided_params=params, strided_args=args,
            local_call=f"{name}_{prog.name}(" + ", ".join(f"{a['name']}_" for a in arrays) + ")",
            lines=call_lines(name, prog) if prog.calls else function_lines(prog, printer),
            formats=[dict(suffix="_upper" if upper else "", upper="true" if upper else "false",
                          prototype=launcher_prototype(name, prog, ctype, upper))
                     for upper in ((False, True) if sym else (False,))]))
    helpers = trig_helpers() if precision == "double" and any(p.ops["trig"] for p in programs if not p.calls) else ""
    ctx = dict(version=__version__, robot_name=robot.name, name=name, ctype=ctype, functions=functions,
               helpers=helpers, guard=f"SOAGEN_{name.upper()}_CUDA_H")
    env = environment()
    return CudaSource(name, env.get_template("robot.cu.j2").render(**ctx),
                      env.get_template("robot_cuda.h.j2").render(**ctx),
                      {p.name: list(symmetric_outputs(p)) for p in programs if symmetric_outputs(p)})
