"""The loaded CUDA library: :class:`CudaModule`, whose methods take and return arrays of any
library that speaks DLPack (PyTorch, CuPy; NumPy for "cuda-host") without copying them."""
from __future__ import annotations

import ctypes
import math
from dataclasses import dataclass

import numpy as np

from soagen import functions as F
from soagen.model.errors import SingularError
from soagen.targets.common import travel

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


class Method:
    """``module.<function>`` of a :class:`CudaModule`: ``(*inputs, out=None, out_format="full",
    stream=None)`` -> :meth:`CudaModule.call`; pickles as ``getattr(module, name)``."""

    def __init__(self, module, name, doc):
        self.__self__, self.__name__, self.__doc__ = module, name, doc

    def __call__(self, *inputs, out=None, out_format="full", stream=None):
        return self.__self__.call(self.__name__, *inputs, out=out, out_format=out_format, stream=stream)

    def __reduce__(self):
        return getattr, (self.__self__, self.__name__)

    def __repr__(self):
        return f"<method {self.__name__} of {self.__self__!r}>"


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
    return without waiting for the GPU.  Inputs are not checked for NaN.  A module and its
    methods pickle by reference (the robot and the build options,
    :mod:`soagen.targets.common.travel`).
    """

    #: ``(soagen.pipeline.load, (robot, options, name))``, set by :func:`soagen.build`: what it pickles as
    _recipe = None

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
        return Method(self, attr, self._specs[attr].doc if attr in self._specs else attr)

    def __reduce__(self):
        """Pickled by reference, the robot and the build options: unpickling loads the module from
        that process's cache or builds it there (:mod:`soagen.targets.common.travel`)."""
        return travel.reduce(self)

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
        if not self.host and any(_library(x) == "numpy" for x in inputs):
            raise TypeError(f"{fname}: target='cuda' takes GPU arrays (PyTorch or CuPy tensors on a CUDA device), "
                            "got NumPy arrays: move them with torch.as_tensor(x, device='cuda') or cupy.asarray(x), "
                            "or build with target='cuda-host' for NumPy")
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
