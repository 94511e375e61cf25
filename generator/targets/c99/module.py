"""Python face of a compiled module: numpy in, numpy out.

Every generated function of the target is a method named as in
:mod:`soagen.functions` (a family's method takes ``variant=``); every wrapper
checks its arguments (shape, real dtype, no NaN/inf) and raises
``ValueError``/``TypeError`` with the argument's name; arrays are converted
to C-contiguous float64 (float32 for ``precision="float"``).
"""
from __future__ import annotations

import math

import numpy as np

from soagen import functions as F
from soagen.model.errors import SingularError
from soagen.targets.common import travel



def _apart(out, args, fname):
    """``out``, refused when it may share memory with an input: the C functions write an output
    entry as soon as it is computed, while inputs are still being read (their outputs are
    ``restrict``)."""
    if any(np.may_share_memory(out, a) for a in args):
        raise ValueError(f"out for {fname} shares memory with an input: give it an array of its own")
    return out


def _aligned(arr):
    """``arr``, or an aligned copy of it: the C reads its doubles (floats) as such."""
    return arr if arr.flags.aligned else arr.copy()


def _shape_message(what, shape, rows, size):
    """Why input ``what`` of ``shape`` is not one of a batch of ``rows`` states of ``size`` entries."""
    if shape[-1:] == (size,) and len(shape) <= 2:
        return (f"{what} has shape {shape} where the first input has {rows} rows: every input of a batch "
                f"has shape ({rows}, {size}), one row per state")
    return f"{what} must have shape ({size},) or (N, {size}), got {shape}"


class Module:
    """Generated functions of one robot (or closed chain).

    A module and its methods pickle by reference (the robot and the build options,
    :mod:`soagen.targets.common.travel`): unpickled in another process, the module is loaded
    from that process's cache or built there.

    Every function also takes a batch: inputs of shape (N, size) are evaluated
    in one C call (``<function>_batch``: a C loop over the rows; with ``simd=True``,
    ``<function>_batch_simd``: :attr:`simd_lanes` rows per instruction, each row the single
    call's result up to the multiply-adds gcc fuses otherwise in vector code, whatever the
    batch, :mod:`soagen.targets.simd`, compiled in the build), outputs get a leading
    N.  With ``simd=True``, symmetric matrix outputs (M, M⁻¹, Ω, Λ) can come as their upper
    triangle, ``out_format="upper"``: (N, n(n+1)/2) rows (:func:`unpack_upper`),
    half the memory to write for large batches.
    Functions with one output take ``out=``: a C-contiguous array of the
    module's dtype and of the result's size (leading N for a batch), written
    in place and returned reshaped -- reusing it avoids allocating (for large
    batches, fresh pages from the kernel) on every call.

    Attributes
    ----------
    robot : Robot or ClosedChain   the target it was built for
    n : int                degrees of freedom nv (the length of qd, qdd, tau)
    nq : int               configuration size (the length of q; nq > n with quaternions)
    m : int                number of tips
    ops : dict             op counts per C function
    choices : dict         family -> the algorithm its family function uses (the cheapest
                           for this robot, :mod:`soagen.functions`)
    timings : dict         seconds per stage of the ``build`` call that made it
    path : Path            cache folder with the .c/.h and the library
    """

    #: ``(soagen.pipeline.load, (robot, options, name))``, set by :func:`soagen.build`: what it pickles as
    _recipe = None

    def __init__(self, target, lib, meta, timings, path):
        sizes = F.sizes(target)
        self.robot = target
        self.n, self.nq, self.m = sizes.get("n"), sizes.get("nq"), sizes.get("m", 0)
        self.ops = meta["ops"]
        self.choices = meta.get("choices", {})
        self.name = meta["name"]
        self.precision = meta["precision"]
        self.parameters = meta.get("parameters", "baked")   # "inputs": the functions take pi
        self.timings = timings
        self.path = path
        self._sizes = sizes
        self._specs = {s.name: s for s in F.specs(target)}
        self._lib = lib
        self._ffi = lib.ffi
        self._dtype = np.float32 if self.precision == "float" else np.float64
        self._ctype = "float[]" if self.precision == "float" else "double[]"
        self._meta = meta
        self._sig = meta["signatures"]
        self._upper = meta.get("upper", {})   # function -> outputs that "upper" packs
        self._simd = None     # (ffi, lib) of the SIMD batches (compiled in the build), opened at the first batch call
        self._trig_inputs = {f for f, sig in self._sig.items() if any(a == "cq" for a, _ in sig)}
        self._functions = {}
        # q entries of each quaternion (spherical and floating joints)
        self._quats = [slice(part.qslice(k).stop - 4, part.qslice(k).stop) for _, part in target.parts
                       for k, b in enumerate(part.bodies) if b.nq > 1] if "nq" in sizes else []
        self._bind()

    def _bind(self):
        """Each method that can be called at the cost of its C function becomes an attribute of
        this module of its own: a :mod:`~soagen.targets.c99.fastcall` ``Caller`` of the function's
        argv entries, which takes the arrays that need no conversion and hands every other call,
        and every error, to the Python method.  Every catalogue method, whatever the rank of its
        outputs; not for a module built with ``trig_inputs`` (the method computes cos, sin of q)
        or ``parameters="inputs"`` (``pi=``, one row for every state): those keep the Python method
        (docs/python_calls.md)."""
        from soagen.targets.c99.fastcall import caller_type

        caller = caller_type()
        travel.register(caller)      # the fast methods pickle as getattr(module, name), as the others do
        if caller is None:
            return
        ffi, lib = self._ffi, self._lib.lib
        quats = tuple(s.start for s in self._quats)
        for name, spec in self._methods().items():
            sig = self._sig.get(name)
            if sig is None or name in self._trig_inputs or any(a == "pi" for a, _ in sig) or (spec.tips and not self.m):
                continue
            ins, outs = sig[:len(spec.inputs)], sig[len(spec.inputs):]
            shapes = [self._dims(o.shape) if len(o.shape) > 1 else (size,) for o, (_, size) in zip(spec.outputs, outs)]
            if len(shapes) != len(outs):
                continue
            try:
                entry, batch = (int(ffi.cast("uintptr_t", ffi.addressof(lib, f"soagen_argv_{name}{suffix}")))
                                for suffix in ("", "_batch"))
            except AttributeError:           # a library without argv entries
                return
            self.__dict__[name] = caller(entry, 0 if self._meta.get("simd") else batch, getattr(self, name), self._lib,
                                         tuple(size for _, size in ins), tuple(shapes),
                                         quats if ins[0][0] == "q" else (), self.precision == "float")

    def __reduce__(self):
        """Pickled by reference, the robot and the build options: unpickling loads the module from
        that process's cache or builds it there (:mod:`soagen.targets.common.travel`); the fast
        methods pickle as ``getattr(module, name)``."""
        return travel.reduce(self)

    def __repr__(self):
        return f"<soagen module {self.name}: n={self.n}, tips={self.m}, {self.precision}>"

    def __dir__(self):
        return sorted(set(super().__dir__()) | set(self._methods()))

    def _methods(self):
        """``{method name: spec}`` of the generated functions reachable as methods."""
        out = {}
        for s in self._specs.values():
            if s.family is None or s.is_family_function:
                out[s.name] = s
        return out

    def __getattr__(self, attr):
        spec = self.__dict__.get("_specs", {}).get(attr)
        if spec is None or (spec.family is not None and not spec.is_family_function):
            raise AttributeError(f"{type(self).__name__!r} object has no attribute {attr!r}")
        return _method(spec).__get__(self)

    # ---------------------------------------------------------------- calling
    def _arg(self, value, size, what, first=False):
        """``value`` as the C reads one state of input ``what``: (size,), C-contiguous, aligned, of
        the module's dtype (converted, or copied, where it is not); ``first``: the call's first
        input (whose shape says one state or a batch)."""
        arr = np.asarray(value)
        if arr.dtype.kind not in "fiu":
            raise TypeError(f"{what} must be a real numeric array, got dtype {arr.dtype}")
        if arr.shape == () and size == 1:     # a number where one is expected (dt, e)
            arr = arr.reshape(1)
        if arr.shape != (size,):
            raise ValueError(f"{what} must have shape ({size},){f' or (N, {size})' if first else ''}, got {arr.shape}")
        arr = _aligned(np.ascontiguousarray(arr, dtype=self._dtype))
        # a Python float sum of a few entries is finite unless one is NaN/inf (or the
        # finite entries overflow, then the exact test decides); np.all costs 2 µs
        values = arr.tolist()
        if not math.isfinite(sum(values)) and not np.isfinite(arr).all():
            raise ValueError(f"{what} contains NaN or inf")
        if what == "q":
            for s in self._quats:
                if sum(x * x for x in values[s]) < 1e-200:
                    self._check_quaternions(arr[None, :])       # raises, with the message
        return arr

    def _check_quaternions(self, Q):
        """Quaternions may have any non-zero length (the rotation of q/|q| is
        used); a zero (or denormal) one has no rotation and is rejected."""
        for s in self._quats:
            if np.any(np.einsum("ij,ij->i", Q[:, s], Q[:, s]) < 1e-200):
                raise ValueError(f"q[{s.start}:{s.stop}] is a zero quaternion: it has no rotation")

    def _function(self, fname):
        """The C function ``<name>_<fname>`` (looked up once)."""
        fn = self._functions.get(fname)
        if fn is None:
            fn = self._functions[fname] = getattr(self._lib.lib, f"{self.name}_{fname}")
        return fn

    def _dims(self, shape):
        """A catalogue shape (names of sizes, numbers) in numbers."""
        return tuple(self._sizes[d] if isinstance(d, str) else d for d in shape)

    def _out_shape(self, fname, rows=None, upper=False):
        """The shape of ``fname``'s one output as the method returns it: the catalogue's (a packed
        upper triangle: flat), with a leading ``rows`` for a batch."""
        name, size = self._sig[fname][-1]
        spec = self._specs.get(fname)
        if upper and name in self._upper.get(fname, ()):
            dims = ((size + math.isqrt(size)) // 2,)
        else:
            dims = self._dims(spec.outputs[-1].shape) if spec is not None else (size,)
        return dims if rows is None else (rows, *dims)

    def _out(self, out, shape, fname):
        """``out``, checked: an array of the result's exact ``shape`` (leading N for a batch) that the C
        can write in place."""
        if not isinstance(out, np.ndarray) or out.dtype != self._dtype or not out.flags.c_contiguous \
                or not out.flags.aligned or not out.flags.writeable:
            raise TypeError(f"out must be a writeable, aligned C-contiguous {np.dtype(self._dtype).name} array")
        if out.shape != tuple(shape):
            raise ValueError(f"out for {fname} must have the shape of its result, {tuple(shape)} (a batch: "
                             f"leading dimension N), got shape {out.shape}")
        return out

    def _call(self, fname, *inputs, out=None, out_format="full"):
        sig = self._sig.get(fname)
        if sig is None:
            spec = self._specs.get(fname)
            variant = spec is not None and spec.family is not None and not spec.is_family_function
            raise NotImplementedError(f"{fname} was not generated for this module: build with functions=[..., "
                                      f"{fname!r}]" + (", or variants=None for every algorithm variant"
                                                       if variant else ""))
        upper = self._format(fname, out_format)
        if fname in self._trig_inputs:    # cos/sin of q follow the other inputs
            q = np.asarray(inputs[0], dtype=float)
            inputs = (*inputs, np.cos(q), np.sin(q))
        ins, outs = sig[:len(inputs)], sig[len(inputs):]
        if out is not None and len(outs) != 1:
            raise ValueError(f"out= is for functions with one output; {fname} has {len(outs)}")
        first = inputs[0]
        if (first.ndim if isinstance(first, np.ndarray) else np.ndim(first)) == 2:
            return self._call_batch(fname, ins, outs, inputs, out, upper)
        if upper:       # one row of the batch function
            one = None if out is None else self._out(out, self._out_shape(fname, None, upper), fname)[None, :]
            result = self._call_batch(fname, ins, outs, [np.asarray(v)[None, :] for v in inputs], one, upper)
            return [r[0] for r in result] if isinstance(result, list) else result[0]
        args = [self._arg(v, size, name, k == 0) for k, (v, (name, size)) in enumerate(zip(inputs, ins))]
        results = ([np.empty(size, dtype=self._dtype) for _, size in outs] if out is None
                   else [_apart(self._out(out, self._out_shape(fname), fname).reshape(outs[0][1]), args, fname)])
        fb = self._ffi.from_buffer
        status = self._function(fname)(*[fb(self._ctype, a) for a in args],
                                       *[fb(self._ctype, r) for r in results])
        if status:
            raise SingularError(f"{fname}: Omega(0) is not positive definite at this configuration "
                                "(a singular or redundant-axis configuration): Lambda(0) does not exist")
        return results[0] if len(results) == 1 else results

    def _batch_arg(self, value, rows, size, what):
        arr = np.asarray(value)
        if arr.dtype.kind not in "fiu":
            raise TypeError(f"{what} must be a real numeric array, got dtype {arr.dtype}")
        if arr.shape != (rows, size):
            raise ValueError(_shape_message(what, arr.shape, rows, size))
        arr = _aligned(np.ascontiguousarray(arr, dtype=self._dtype))
        # one pass without a temporary: the sum is finite unless some entry is
        # NaN/inf (or the finite entries overflow, then the exact test decides)
        if not np.isfinite(arr.sum()) and not np.all(np.isfinite(arr)):
            raise ValueError(f"{what} contains NaN or inf")
        if what == "q":
            self._check_quaternions(arr)
        return arr

    def _format(self, fname, out_format):
        """True for ``out_format="upper"`` (checked: ``fname`` has a symmetric output), False for "full"."""
        if out_format == "full":
            return False
        if out_format != "upper":
            raise ValueError(f"out_format must be 'full' or 'upper', got {out_format!r}")
        if fname not in self._upper:
            raise ValueError(f"{fname} has no symmetric matrix output: out_format='upper' is for "
                             + (", ".join(sorted(self._upper)) or "the SIMD batches (build with simd=True)"))
        return True

    def _call_batch(self, fname, ins, outs, inputs, out=None, upper=False):
        """N rows in one C call (``<fname>_batch_simd``, or ``_batch_simd_upper`` with the symmetric
        outputs packed); inputs (N, size), outputs (N, size)."""
        rows = np.shape(inputs[0])[0]
        args = [self._batch_arg(v, rows, size, name) for v, (name, size) in zip(inputs, ins)]
        if upper:
            packs = self._upper[fname]
            outs = [(name, (size + math.isqrt(size)) // 2 if name in packs else size) for name, size in outs]
        results = ([np.empty((rows, size), dtype=self._dtype) for _, size in outs] if out is None
                   else [_apart(self._out(out, self._out_shape(fname, rows, upper), fname).reshape(rows, outs[0][1]),
                                args, fname)])
        ffi, fn = self._batch_function(fname, upper)
        fb = ffi.from_buffer
        failed = fn(
            rows, *[fb(self._ctype, a) for a in args], *[fb(self._ctype, r) for r in results])
        if failed:
            raise SingularError(f"{fname}: Omega(0) is not positive definite in {failed} of {rows} rows")
        return results[0] if len(results) == 1 else results

    @property
    def simd_lanes(self):
        """Rows per vector of the SIMD batches as compiled (one register of this machine: 8 doubles
        with AVX-512, 4 without); 1 for a build with simd=False (its batches loop row by row)."""
        if not self._meta.get("simd"):
            return 1
        _, lib = self._simd_library()
        return int(getattr(lib, f"{self.name}_simd_lanes")())

    def _batch_function(self, fname, upper=False):
        """(ffi, C function) of the batch of ``fname``: ``_batch_simd[_upper]`` (the SIMD library,
        :func:`soagen.targets.simd.library.simd_library`), or the scalar ``_batch`` of a build with simd=False."""
        if not self._meta.get("simd"):
            return self._ffi, self._function(f"{fname}_batch")
        ffi, lib = self._simd_library()
        return ffi, getattr(lib, f"{self.name}_{fname}_batch_simd{'_upper' if upper else ''}")

    def _simd_library(self):
        """(ffi, lib) of the SIMD batches, opened once (:func:`soagen.targets.simd.library.simd_library`)."""
        if self._simd is None:
            from soagen.targets.simd.library import simd_library
            self._simd = simd_library(self.path, self._meta, self._meta["compile_args"])
        return self._simd

    # ---------------------------------------------------------------- functions
    def _with_parameters(self, fname, args, pi):
        """``args`` and, for a module built with ``parameters="inputs"``, the
        parameters ``pi`` (p,) (a batch takes (N, p) or one (p,) for every row)."""
        if fname not in self._sig:             # not generated: _call says so
            return args
        takes = any(a == "pi" for a, _ in self._sig[fname])
        if not takes:
            if pi is not None:
                raise ValueError(f"{fname} has the robot's parameters built in: build with "
                                 "parameters='inputs' to pass pi")
            return args
        if pi is None:
            raise ValueError(f"{fname} takes the parameters as an input: pass pi= (robot.parameters() "
                             "gives the robot's own)")
        first = np.asarray(args[0])
        pi = np.asarray(pi)
        if first.ndim == 2 and pi.ndim == 1:
            pi = np.broadcast_to(pi, (first.shape[0], pi.shape[0]))
        return (*args, pi)

    def _invoke(self, spec, args, variant, out, out_format="full", pi=None):
        """Call the C function of ``spec`` (or of its family's ``variant``) and
        shape its outputs as the catalogue says (packed upper triangles stay flat)."""
        if spec.tips and not self.m:
            raise ValueError(f"{spec.name} needs tips: load the robot with tips=[...]")
        fname = self._chosen(spec.family, variant) if variant is not None else spec.name
        args = self._with_parameters(fname, args, pi)
        result = self._call(fname, *args, out=out, out_format=out_format)
        outs = self._specs[fname].outputs
        packed = self._upper.get(fname, ()) if out_format == "upper" else ()
        if out is not None:           # written in place, in the result's shape
            return out
        shaped = [r if o.name in packed else self._shape(r, o.shape)
                  for r, o in zip([result] if len(outs) == 1 else result, outs)]
        return shaped[0] if len(outs) == 1 else tuple(shaped)

    def _shape(self, flat, shape):
        """(size,) -> shape, or (N, size) -> (N, *shape) for a batch; 1-D outputs stay flat."""
        if len(shape) == 1:
            return flat
        dims = self._dims(shape)
        return flat.reshape(dims if flat.ndim == 1 else (flat.shape[0], *dims))

    def _chosen(self, family, variant):
        """The C function computing ``family`` by ``variant``: the family's own
        function for ``"auto"`` and for the algorithm it uses, else the variant's."""
        table = {"auto": family, **F.labels(family)}
        if variant not in table:
            raise ValueError(f"variant must be one of {', '.join(map(repr, table))}, got {variant!r}")
        return family if variant == self.choices.get(family) else table[variant]

    def call(self, fname, *inputs, out_format="full", pi=None):
        """Any generated C function by name (``module.ops`` lists them), e.g.
        ``call("forward_dynamics_fd2", q, qd, tau)`` -> ``[qdd, a0]``; outputs
        are flat arrays, one per C output argument (a single array for one);
        ``pi``: the parameters of a module built with ``parameters="inputs"``."""
        return self._call(fname, *self._with_parameters(fname, inputs, pi), out_format=out_format)

    def integrate(self, q, v, dt):
        """Configuration after velocity ``v`` for ``dt`` (:meth:`soagen.Robot.integrate`); -> (nq,)."""
        return self.robot.integrate(q, v, dt)

    def random_configuration(self, rng=None):
        """A random q (nq,) with unit quaternions (:meth:`soagen.Robot.random_configuration`)."""
        return self.robot.random_configuration(rng if rng is not None else np.random.default_rng())

    # conveniences of the robot catalogue: a tip force, FD2's first output
    def inverse_dynamics(self, q, qd, qdd, f_tip=None, out=None, pi=None):
        """T = M q̈ + C + G (+ Jᵀ f_tip, the forces (r,) the tips exert); -> (n,)."""
        if f_tip is None:
            return self._invoke(self._specs["inverse_dynamics"], (q, qd, qdd), None, out, pi=pi)
        return self._invoke(self._specs["inverse_dynamics_tip_force"], (q, qd, qdd, f_tip), None, out, pi=pi)

    def forward_dynamics(self, *args, f_tip=None, variant="auto", out=None, pi=None):
        """Robot: ``forward_dynamics(q, qd, tau, f_tip=None, variant="auto")`` -> q̈ (n,),
        q̈ = M⁻¹(τ − C − G − Jᵀ f_tip) by the family's algorithm for this robot or
        the one named (FD2 too: its tip accelerations come from ``call``); a tip
        force adds :meth:`tip_force_acceleration` (the dynamics are linear in f).
        Closed chain: ``forward_dynamics(qa, qda, taua, qb, qdb, taub)`` -> (q̈_a, q̈_b, f)."""
        spec = self._specs["forward_dynamics"]
        if spec.family is None:           # a closed chain's one function
            return self._invoke(spec, args, None, out)
        if self._chosen("forward_dynamics", variant) == "forward_dynamics_fd2":
            qdd = self._call("forward_dynamics_fd2", *self._with_parameters("forward_dynamics_fd2", args, pi))[0]
            if out is not None:
                self._out(out, qdd.shape, "forward_dynamics_fd2")[...] = qdd
                qdd = out
        else:
            qdd = self._invoke(spec, args, variant, out, pi=pi)
        if f_tip is not None:
            qdd += self.tip_force_acceleration(args[0], f_tip)
        return qdd


_METHODS = {}


def _method(spec):
    """The wrapper method of ``spec`` (made once): its inputs by name, ``variant``
    for a family function, keywords ``out`` and ``out_format``."""
    if spec not in _METHODS:
        family = spec.is_family_function
        params = (", ".join(spec.inputs) + (', variant="auto"' if family else "")
                  + ', *, out=None, out_format="full", pi=None')
        doc = (f"{spec.doc} ({', '.join(spec.inputs)}) -> "
               + ", ".join(f"{o.name} {tuple(o.shape)}" for o in spec.outputs)
               + (f"; ``variant``: 'auto' or an algorithm of soagen.functions.labels({spec.family!r})"
                  if family else "")
               + "; ``out_format='upper'``: symmetric matrix outputs as upper triangles (n(n+1)/2,)"
               + ("; ``pi``: the parameters (p,), for a module built with parameters='inputs'"
                  if spec.parametric else ""))
        source = (f"def {spec.name}(self, {params}):\n    {doc!r}\n"
                  f"    return self._invoke(SPEC, ({', '.join(spec.inputs)},), {'variant' if family else 'None'}, out, "
                  "out_format, pi)\n")
        namespace = {"SPEC": spec}
        exec(source, namespace)   # a real signature (names, defaults) at no per-call cost
        _METHODS[spec] = namespace[spec.name]
    return _METHODS[spec]


def unpack_upper(packed, n):
    """Full symmetric matrices from upper triangles stored row by row (``out_format="upper"``).

    Parameters
    ----------
    packed : (n(n+1)/2,) or (N, n(n+1)/2) array
    n : int   matrix order

    Returns
    -------
    (n, n) or (N, n, n) array
    """
    packed = np.asarray(packed)
    rows, cols = np.triu_indices(n)
    full = np.empty(packed.shape[:-1] + (n, n), dtype=packed.dtype)
    full[..., rows, cols] = packed
    full[..., cols, rows] = packed
    return full
