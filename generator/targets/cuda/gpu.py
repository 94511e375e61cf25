"""GPU batches: the generated functions on one state per CUDA thread.

:func:`emit_cuda` writes ``<name>.cu``: the straight-line functions of
``<name>.c`` (the same lines) marked ``__host__ __device__``, per function a
kernel that reads one state from strided arrays, calls the function and
writes the outputs back (the symmetric ones as upper triangles in the
``_upper`` launchers, :func:`soagen.targets.common.c_text.symmetric_outputs`), and an
``extern "C"`` launcher; ``<name>_cuda.h`` declares the launchers.

:func:`build` compiles it (``Options(target="cuda")``: nvcc, a shared
library for the GPU; ``target="cuda-host"``: the host C++ compiler with the
CUDA qualifiers defined away, the kernels run as loops on the CPU) and loads
it with ctypes as a :class:`CudaModule`, whose methods take and return arrays
of any library that speaks DLPack (PyTorch, CuPy; NumPy for "cuda-host")
without copying them: the launchers take each array's pointer and strides.
Neither CuPy nor PyTorch is imported unless the arrays come from them.
"""
from __future__ import annotations

import ctypes
import math
import os
import shlex
import shutil
import subprocess
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from soagen import functions as F
from soagen.model.errors import SingularError
from soagen.program.printer import SoaCPrinter
from soagen.targets.cache import cache_key, cache_root, cached
from soagen.targets.common import fasttrig
from soagen.targets.common.c_text import (call_lines, environment, function_lines, opline, prototype,
                                          symmetric_outputs)

#: nvcc flags; ``$SOAGEN_NVCC_ARCH`` replaces ``native`` (needed where the GPU is not on the
#: building machine, e.g. ``sm_90`` for an H100/H200). Contraction into FMA is nvcc's default.
NVCC_ARGS = ["-O3", "--shared", "-Xcompiler", "-fPIC"]
#: host C++ flags of the "cuda-host" target: those of the cffi module (soagen.targets.c99.compile.COMPILE_ARGS)
HOST_ARGS = ["-O3", "-march=native", "-ffp-contract=fast", "-fno-tree-slp-vectorize", "-x", "c++", "-std=c++14",
             "-shared", "-fPIC"]


@dataclass
class CudaSource:
    """``<name>.cu`` and ``<name>_cuda.h``; ``upper``: function -> outputs its _upper launcher packs."""

    name: str
    source: str
    header: str
    upper: dict


def trig_helpers():
    """C text of ``soagen_sin``/``soagen_cos`` for host and device: the operations of
    :func:`soagen.targets.common.fasttrig.c_helpers`, the quadrant's value picked by a conditional instead of
    an indexed local array (which a GPU keeps in local memory) -- the same value."""
    sin_poly, cos_poly = fasttrig._horner(fasttrig.SIN, "z"), fasttrig._horner(fasttrig.COS, "z")
    p1, p2, p3 = (repr(x) for x in fasttrig.PIO2)
    return f"""/* sin (shift 0) or cos (shift 1) of joint angles: soagen_sin/soagen_cos of the C file */
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
__host__ __device__ static inline double soagen_cos(double x) {{ return soagen_trig(x, 1); }}"""


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


def compile_command(source, library, host):
    """The command compiling ``source`` (a .cu) into the shared ``library``."""
    if host:
        return [os.environ.get("CXX", "c++"), *HOST_ARGS, str(source), "-o", str(library), "-lm"]
    arch = os.environ.get("SOAGEN_NVCC_ARCH", "native")
    return [os.environ.get("NVCC", "nvcc"), *NVCC_ARGS, f"-arch={arch}", str(source), "-o", str(library)]


def build(target, options, name, functions, record, cache_dir=None):
    """The CUDA target's plug-in entry (:mod:`soagen.targets`): generate, compile (once per content
    hash) and load the CUDA module of ``target`` (``options.target`` "cuda" or "cuda-host");
    ``record()`` gives ``(programs, timings)``; -> CudaModule."""
    if options.trig_inputs:
        raise ValueError("trig_inputs is for the C target (the kernels compute their own sin/cos)")
    host = options.target == "cuda-host"
    command = compile_command(Path(f"{name}.cu"), Path("lib.so"), host)
    if not host and shutil.which(command[0]) is None:
        raise RuntimeError(f"target='cuda' needs nvcc ({command[0]!r} is not on PATH; $NVCC names another); "
                           "target='cuda-host' runs the same kernels on the CPU")
    key = cache_key(target.fingerprint(), repr(options), name, ",".join(functions + [shlex.join(command)]))
    timings = {}

    def make(work):
        programs, record_timings = record()
        timings.update(record_timings)
        cu = emit_cuda(target, programs, name, options.precision)
        (work / f"{name}.cu").write_text(cu.source)
        (work / f"{name}_cuda.h").write_text(cu.header)
        t0 = time.perf_counter()
        res = subprocess.run(compile_command(work / f"{name}.cu", work / f"lib{name}_cuda.so", host),
                             capture_output=True, text=True)
        if res.returncode:
            raise RuntimeError(f"compiling {name}.cu failed:\n{res.stderr[-4000:]}")
        timings["compile"] = time.perf_counter() - t0
        return dict(name=name, library=f"lib{name}_cuda.so", precision=options.precision, host=host,
                    ops={p.name: p.ops for p in programs},
                    inputs={p.name: len(p.inputs) for p in programs},
                    status={p.name: p.returns_status for p in programs},
                    signatures={p.name: [[a.name, a.size] for a in p.inputs + p.outputs] for p in programs},
                    upper=cu.upper)

    final, meta = cached(Path(cache_dir) if cache_dir else cache_root(), key, make)
    return CudaModule(target, final / meta["library"], meta, timings, final)


# ---------------------------------------------------------------------------- DLPack
class _DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class _DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class _DLTensor(ctypes.Structure):
    _fields_ = [("data", ctypes.c_void_p), ("device", _DLDevice), ("ndim", ctypes.c_int32),
                ("dtype", _DLDataType), ("shape", ctypes.POINTER(ctypes.c_int64)),
                ("strides", ctypes.POINTER(ctypes.c_int64)), ("byte_offset", ctypes.c_uint64)]


_GET_POINTER = ctypes.pythonapi.PyCapsule_GetPointer
_GET_POINTER.restype = ctypes.c_void_p
_GET_POINTER.argtypes = [ctypes.py_object, ctypes.c_char_p]

#: DLPack device types
CPU, CUDA = 1, 2


@dataclass
class View:
    """What a launcher needs of an array: address, shape, strides (elements), element type, device.
    ``capsule`` keeps the exported DLPack tensor alive while the view is used."""

    data: int
    shape: tuple
    strides: tuple
    dtype: str
    device: int
    capsule: object


def view(array, stream=None):
    """The DLPack view of ``array`` (no copy); ``stream``: the CUDA stream the consumer will use."""
    if not hasattr(array, "__dlpack__"):
        raise TypeError(f"expected an array with __dlpack__ (torch, cupy, numpy), got {type(array).__name__}")
    capsule = array.__dlpack__() if stream is None else array.__dlpack__(stream=stream)
    t = ctypes.cast(_GET_POINTER(capsule, b"dltensor"), ctypes.POINTER(_DLTensor)).contents
    shape = tuple(t.shape[i] for i in range(t.ndim))
    if t.strides:
        strides = tuple(t.strides[i] for i in range(t.ndim))
    else:   # compact row-major
        strides = tuple(int(np.prod(shape[i + 1:])) for i in range(t.ndim))
    code = (t.dtype.code, t.dtype.bits)
    kind = {(2, 64): "float64", (2, 32): "float32"}.get(code, f"code{code[0]}x{code[1]}")
    return View((t.data or 0) + t.byte_offset, shape, strides, kind, t.device.device_type, capsule)


def _library(array):
    return type(array).__module__.split(".")[0]


def _empty(like, shape, dtype):
    """An uninitialised array of ``shape`` from the library and on the device of ``like``."""
    lib = _library(like)
    if lib == "torch":
        import torch
        return torch.empty(shape, dtype=getattr(torch, dtype), device=like.device)
    if lib == "cupy":
        import cupy
        with cupy.cuda.Device(like.device.id):
            return cupy.empty(shape, dtype=dtype)
    if lib == "numpy":
        return np.empty(shape, dtype=dtype)
    raise TypeError(f"cannot allocate outputs like a {type(like).__name__}: pass out=")


def _zeros(like, dtype):
    out = _empty(like, (1,), dtype)
    out[0] = 0
    return out


def current_stream(array):
    """The current CUDA stream (a cudaStream_t as int) of ``array``'s library; 0 (the default
    stream) for other libraries."""
    lib = _library(array)
    if lib == "torch" and array.is_cuda:
        import torch
        return torch.cuda.current_stream(array.device).cuda_stream
    if lib == "cupy":
        import cupy
        return cupy.cuda.get_current_stream().ptr
    return 0


class CudaModule:
    """The kernels of one robot, called with DLPack arrays (``build(robot, target="cuda")``).

    Every generated function is a method (and ``call(fname, ...)``): inputs of
    shape (N, size) of one library (PyTorch, CuPy; NumPy for the "cuda-host"
    target), any strides -- states in columns (``x.T`` of a (size, N) array)
    let the threads read coalesced; outputs are allocated in that layout by the
    inputs' library, returned as (N, ...) views (or written into ``out=``).
    Launches go to ``stream`` (default: the library's current stream); a
    function with Ω(0) pivot checks synchronises to count the failed states and
    raises :class:`soagen.SingularError` (their outputs untouched); the others
    return without waiting for the GPU.  Inputs are not checked for NaN.
    """

    def __init__(self, target, library, meta, timings, path):
        self.robot = target
        self.name = meta["name"]
        self.precision = meta["precision"]
        self.host = meta["host"]
        self.ops = meta["ops"]
        self.timings = timings
        self.path = path
        self._meta = meta
        self._sig = meta["signatures"]
        self._upper = meta["upper"]
        self._sizes = F.sizes(target)
        self._specs = {s.name: s for s in F.specs(target)}
        self._dtype = "float32" if self.precision == "float" else "float64"
        self._lib = ctypes.CDLL(str(library))
        self._launchers = {}

    def __repr__(self):
        return f"<soagen CUDA module {self.name}: {'host' if self.host else 'GPU'}, {self.precision}>"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._sig))

    def __getattr__(self, attr):
        if attr.startswith("_") or attr not in self.__dict__.get("_sig", {}):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")

        def method(*inputs, out=None, out_format="full", stream=None):
            return self.call(attr, *inputs, out=out, out_format=out_format, stream=stream)
        method.__name__ = attr
        method.__doc__ = self._specs[attr].doc if attr in self._specs else attr
        return method

    def launcher(self, fname, upper=False):
        """The ctypes function ``<name>_<fname>[_upper]_cuda``."""
        key = (fname, upper)
        if key not in self._launchers:
            fn = getattr(self._lib, f"{self.name}_{fname}{'_upper' if upper else ''}_cuda")
            arrays = len(self._sig[fname])
            fn.argtypes = ([ctypes.c_long] + [ctypes.c_void_p, ctypes.c_long, ctypes.c_long] * arrays
                           + [ctypes.c_void_p, ctypes.c_void_p])
            fn.restype = ctypes.c_int
            self._launchers[key] = fn
        return self._launchers[key]

    def call(self, fname, *inputs, out=None, out_format="full", stream=None):
        """Run the kernel of ``fname`` on N states: ``inputs`` (N, size) arrays; -> output(s)
        (N, ...) of the inputs' library (upper triangles (N, n(n+1)/2) with ``out_format="upper"``)."""
        if fname not in self._sig:
            raise NotImplementedError(f"{fname} was not generated for this module")
        sig, n_in = self._sig[fname], self._meta["inputs"][fname]
        if len(inputs) != n_in:
            raise TypeError(f"{fname} takes {n_in} arrays ({', '.join(a for a, _ in sig[:n_in])}), got {len(inputs)}")
        if out_format not in ("full", "upper"):
            raise ValueError(f"out_format must be 'full' or 'upper', got {out_format!r}")
        upper = out_format == "upper"
        if upper and fname not in self._upper:
            raise ValueError(f"{fname} has no symmetric matrix output: out_format='upper' is for "
                             + ", ".join(sorted(self._upper)))
        packs = self._upper.get(fname, ()) if upper else ()
        outs = [(name, (size + math.isqrt(size)) // 2 if name in packs else size) for name, size in sig[n_in:]]
        if stream is None:
            stream = current_stream(inputs[0])
        stream = getattr(stream, "cuda_stream", getattr(stream, "ptr", stream))
        dl_stream = None if self.host else (stream or 1)     # DLPack: 1 is the legacy default stream
        views = [self._checked(view(x, dl_stream), size, name, None) for x, (name, size) in zip(inputs, sig)]
        count = views[0].shape[0]
        for v, (name, size) in zip(views, sig):
            self._checked(v, size, name, count)
        if out is None:
            results = [_empty(inputs[0], (size, count), self._dtype).T for _, size in outs]
        else:
            results = list(out) if isinstance(out, (list, tuple)) else [out]
            if len(results) != len(outs):
                raise ValueError(f"out= needs {len(outs)} arrays for {fname}, got {len(results)}")
        out_views = [self._checked(view(r, dl_stream), size, name, count) for r, (name, size) in zip(results, outs)]
        failed = _zeros(inputs[0], "int32") if self._meta["status"][fname] else None
        args = [count]
        for v in views + out_views:
            args += [v.data, v.strides[0], v.strides[1]]
        args += [view(failed, dl_stream).data if failed is not None else None, stream or None]
        err = self.launcher(fname, upper)(*args)
        if err:
            raise RuntimeError(f"{self.name}_{fname}: CUDA launch failed (cudaError_t {err})")
        if failed is not None and int(failed[0]):
            raise SingularError(f"{fname}: Omega(0) is not positive definite in {int(failed[0])} of {count} rows")
        shaped = [r if name in packs else self._shape(r, fname, k)
                  for k, (r, (name, _)) in enumerate(zip(results, outs))]
        return shaped[0] if len(shaped) == 1 else shaped

    def _checked(self, v, size, name, count):
        """``v`` after checking its rank, shape (count may be None: any), dtype and device."""
        want_device = CPU if self.host else CUDA
        if v.device != want_device:
            raise ValueError(f"{name} must be in {'host' if self.host else 'GPU'} memory (DLPack device "
                             f"{want_device}), got device type {v.device}")
        if v.dtype != self._dtype:
            raise TypeError(f"{name} must be {self._dtype}, got {v.dtype}")
        if len(v.shape) != 2 or v.shape[1] != size or (count is not None and v.shape[0] != count):
            raise ValueError(f"{name} must have shape ({'N' if count is None else count}, {size}), got {v.shape}")
        return v

    def _shape(self, flat, fname, k):
        """(N, size) -> (N, *shape of the catalogue's output k) (a view)."""
        spec = self._specs.get(fname)
        shape = spec.outputs[k].shape if spec is not None else (flat.shape[1],)
        if len(shape) == 1:
            return flat
        dims = tuple(self._sizes[d] if isinstance(d, str) else d for d in shape)
        return flat.reshape((flat.shape[0], *dims))
