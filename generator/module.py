"""Python face of a compiled robot module: numpy in, numpy out.

Every wrapper checks its arguments (shape, real dtype, no NaN/inf) and
raises ``ValueError``/``TypeError`` with the argument's name; arrays are
converted to C-contiguous float64 (float32 for ``precision="float"``).
"""
from __future__ import annotations

import math

import numpy as np

from .recursion import CHOICES
from .reference import SingularError


class Module:
    """Generated dynamics of one robot.

    Every function also takes a batch: inputs of shape (N, size) are evaluated
    row by row in one C call (``<function>_batch``), outputs get a leading N.
    Functions with one output take ``out=``: a C-contiguous array of the
    module's dtype and of the result's size (leading N for a batch), written
    in place and returned reshaped -- reusing it avoids allocating (for large
    batches, fresh pages from the kernel) on every call.

    Attributes
    ----------
    robot : Robot
    n : int                degrees of freedom nv (the length of qd, qdd, tau)
    nq : int               configuration size (the length of q; nq > n with quaternions)
    ops : dict             op counts per C function
    choices : dict         family -> the algorithm its default function uses (the cheapest
                           for this robot, :data:`soagen.recursion.CHOICES`)
    timings : dict         seconds per stage of the ``build`` call that made it
    path : Path            cache folder with the .c/.h and the library
    """

    def __init__(self, robot, lib, meta, dtype, timings, path):
        self.robot = robot
        self.n = getattr(robot, "n", None)
        self.m = len(getattr(robot, "tips", ()))
        self.ops = meta["ops"]
        self.choices = meta.get("choices", {})
        self.name = meta["name"]
        self.precision = meta["precision"]
        self.timings = timings
        self.path = path
        self._lib = lib
        self._ffi = lib.ffi
        self._dtype = dtype
        self._ctype = "float[]" if dtype == np.float32 else "double[]"
        self._sig = meta["signatures"]
        self._trig_inputs = {f for f, sig in self._sig.items() if any(a == "cq" for a, _ in sig)}
        self._functions = {}
        # q entries of each quaternion (spherical and floating joints)
        self._quats = [slice(robot.qslice(k).stop - 4, robot.qslice(k).stop)
                       for k, b in enumerate(getattr(robot, "bodies", ())) if b.nq > 1]
        self.nq = getattr(robot, "nq", None)

    def __repr__(self):
        return f"<soagen module {self.name}: n={self.n}, tips={self.m}, {self.precision}>"

    # ---------------------------------------------------------------- calling
    def _arg(self, value, size, what):
        arr = np.asarray(value)
        if arr.dtype.kind not in "fiu":
            raise TypeError(f"{what} must be a real numeric array, got dtype {arr.dtype}")
        if arr.shape != (size,):
            raise ValueError(f"{what} must have shape ({size},), got {arr.shape}")
        arr = np.ascontiguousarray(arr, dtype=self._dtype)
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

    def _out(self, out, shape, fname):
        """``out`` as the flat (size,) or (N, size) result buffer, written in place."""
        if not isinstance(out, np.ndarray) or out.dtype != self._dtype or not out.flags.c_contiguous \
                or not out.flags.writeable:
            raise TypeError(f"out must be a writeable C-contiguous {np.dtype(self._dtype).name} array")
        if out.size != int(np.prod(shape)) or (len(shape) == 2 and (out.ndim < 2 or out.shape[0] != shape[0])):
            raise ValueError(f"out for {fname} must hold {' x '.join(map(str, shape))} values "
                             f"(leading dimension the batch), got shape {out.shape}")
        return out.reshape(shape)

    def _call(self, fname, *inputs, out=None):
        sig = self._sig.get(fname)
        if sig is None:
            raise NotImplementedError(f"{fname} was not generated for this module "
                                      "(build with functions=None for all of them)")
        if fname in self._trig_inputs:    # cos/sin of q follow the other inputs
            q = np.asarray(inputs[0], dtype=float)
            inputs = (*inputs, np.cos(q), np.sin(q))
        ins, outs = sig[:len(inputs)], sig[len(inputs):]
        if out is not None and len(outs) != 1:
            raise ValueError(f"out= is for functions with one output; {fname} has {len(outs)}")
        first = inputs[0]
        if (first.ndim if isinstance(first, np.ndarray) else np.ndim(first)) == 2:
            return self._call_batch(fname, ins, outs, inputs, out)
        args = [self._arg(v, size, name) for v, (name, size) in zip(inputs, ins)]
        results = ([np.empty(size, dtype=self._dtype) for _, size in outs] if out is None
                   else [self._out(out, (outs[0][1],), fname)])
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
            raise ValueError(f"{what} must have shape ({rows}, {size}), got {arr.shape}")
        arr = np.ascontiguousarray(arr, dtype=self._dtype)
        # one pass without a temporary: the sum is finite unless some entry is
        # NaN/inf (or the finite entries overflow, then the exact test decides)
        if not np.isfinite(arr.sum()) and not np.all(np.isfinite(arr)):
            raise ValueError(f"{what} contains NaN or inf")
        if what == "q":
            self._check_quaternions(arr)
        return arr

    def _call_batch(self, fname, ins, outs, inputs, out=None):
        """N rows in one C call (``<fname>_batch``); inputs (N, size), outputs (N, size)."""
        rows = np.shape(inputs[0])[0]
        args = [self._batch_arg(v, rows, size, name) for v, (name, size) in zip(inputs, ins)]
        results = ([np.empty((rows, size), dtype=self._dtype) for _, size in outs] if out is None
                   else [self._out(out, (rows, outs[0][1]), fname)])
        fb = self._ffi.from_buffer
        failed = self._function(f"{fname}_batch")(
            rows, *[fb(self._ctype, a) for a in args], *[fb(self._ctype, r) for r in results])
        if failed:
            raise SingularError(f"{fname}: Omega(0) is not positive definite in {failed} of {rows} rows")
        return results[0] if len(results) == 1 else results

    @staticmethod
    def _shape(flat, shape):
        """(size,) -> shape, or (N, size) -> (N, *shape) for a batch."""
        return flat.reshape(shape if flat.ndim == 1 else (flat.shape[0], *shape))

    def _need_tips(self, what):
        if not self.m:
            raise ValueError(f"{what} needs tips: load the robot with tips=[...]")

    # ---------------------------------------------------------------- functions
    def forward_kinematics(self, q, out=None):
        """World pose of each tip; -> (m, 4, 4)."""
        self._need_tips("forward_kinematics")
        return self._shape(self._call("forward_kinematics", q, out=out), (self.m, 4, 4))

    def jacobian(self, q, out=None):
        """Tip Jacobians J = B*φ*H*, rows [angular; linear] per tip; -> (6m, n)."""
        self._need_tips("jacobian")
        return self._shape(self._call("jacobian", q, out=out), (6 * self.m, self.n))

    def jdot_qdot(self, q, qd, out=None):
        """J̇q̇, tip classical accelerations at q̈ = 0 without gravity; -> (6m,)."""
        self._need_tips("jdot_qdot")
        return self._call("jdot_qdot", q, qd, out=out)

    def inverse_dynamics(self, q, qd, qdd, f_tip=None, out=None):
        """T = M q̈ + C + G (+ Jᵀ f_tip, the wrench (6m,) the tips exert); -> (n,)."""
        if f_tip is None:
            return self._call("inverse_dynamics", q, qd, qdd, out=out)
        self._need_tips("a tip force")
        return self._call("inverse_dynamics_tip_force", q, qd, qdd, f_tip, out=out)

    def gravity(self, q, out=None):
        """Gravity torques G(q); -> (n,)."""
        return self._call("gravity", q, out=out)

    def bias_forces(self, q, qd, out=None):
        """C(q, q̇) + G(q); -> (n,)."""
        return self._call("bias_forces", q, qd, out=out)

    def integrate(self, q, v, dt):
        """Configuration after velocity ``v`` for ``dt`` (:meth:`soagen.Robot.integrate`); -> (nq,)."""
        return self.robot.integrate(q, v, dt)

    def random_configuration(self, rng=None):
        """A random q (nq,) with unit quaternions (:meth:`soagen.Robot.random_configuration`)."""
        return self.robot.random_configuration(rng if rng is not None else np.random.default_rng())

    def call(self, fname, *inputs):
        """Any generated C function by name (``module.ops`` lists them), e.g.
        ``call("forward_dynamics_fd2", q, qd, tau)`` -> ``(qdd, a0)``; outputs
        are flat arrays, one per C output argument."""
        return self._call(fname, *inputs)

    @staticmethod
    def _variant(table, variant):
        if variant not in table:
            raise ValueError(f"variant must be one of {', '.join(map(repr, table))}, got {variant!r}")
        return table[variant]

    def _chosen(self, family, variant, extra=None):
        """The C function computing ``family`` by ``variant``: the family's own
        function for ``"auto"`` and for the algorithm it chose, else the variant's."""
        table = {"auto": family, **{label: f for label, f in CHOICES[family]}, **(extra or {})}
        fname = self._variant(table, variant)
        return family if variant == self.choices.get(family) else fname

    def coriolis(self, q, qd, out=None):
        """C(q, q̇) alone (no gravity); -> (n,)."""
        return self._call("coriolis", q, qd, out=out)

    def mass_matrix(self, q, variant="composite", out=None):
        """M(q) by composite inertias (default) or ``"newton_euler"`` (n passes); -> (n, n)."""
        fname = self._variant({"composite": "mass_matrix", "newton_euler": "mass_matrix_ne"}, variant)
        return self._shape(self._call(fname, q, out=out), (self.n, self.n))

    def mass_matrix_inverse(self, q, variant="auto", out=None):
        """M(q)⁻¹ by the cheaper, for this robot, of the innovations factorization
        and ``"cholesky"`` (composite-body M and LDLᵀ), or by the one named
        (:attr:`choices` tells which ``"auto"`` is); -> (n, n)."""
        fname = self._chosen("mass_matrix_inverse", variant)
        return self._shape(self._call(fname, q, out=out), (self.n, self.n))

    def forward_dynamics(self, q, qd, tau, f_tip=None, variant="auto", out=None):
        """q̈ = M⁻¹(τ − C − G − Jᵀ f_tip) by the cheapest, for this robot, of FD4,
        FD1, FD3 and CRBA, or by the one named (also FD2); -> (n,).

        A tip force adds :meth:`tip_force_acceleration` (the dynamics are linear in f).
        FD2 also yields the tip accelerations: ``call("forward_dynamics_fd2", ...)``.
        """
        fname = self._chosen("forward_dynamics", variant, {"FD2": "forward_dynamics_fd2"})
        if variant == "FD2":
            qdd = self._call(fname, q, qd, tau)[0]
            if out is not None:
                self._out(out, qdd.shape, fname)[...] = qdd
                qdd = out
        else:
            qdd = self._call(fname, q, qd, tau, out=out)
        if f_tip is not None:
            qdd += self.tip_force_acceleration(q, f_tip)
        return qdd

    def tip_force_acceleration(self, q, f_tip, out=None):
        """Δq̈ = −M⁻¹Jᵀ f caused by tip forces alone (seed 002 (18)); -> (n,)."""
        self._need_tips("tip_force_acceleration")
        return self._call("tip_force_acceleration", q, f_tip, out=out)

    # ------------------------------------------------------ operational space
    def os_inertia_inverse(self, q, out=None):
        """Ω(0) = Λ(0)⁻¹ = J M⁻¹ Jᵀ by the O(n) recursion (seed 000 (58)–(61)); -> (6m, 6m)."""
        self._need_tips("os_inertia_inverse")
        return self._shape(self._call("os_inertia_inverse", q, out=out), (6 * self.m, 6 * self.m))

    def os_inertia(self, q, variant="auto", out=None):
        """Λ(0) by the cheaper, for this robot, of the O(n) recursion and
        ``"explicit"`` (J M⁻¹ Jᵀ)⁻¹, or by the one named; raises
        :class:`SingularError` where Ω(0) is singular; -> (6m, 6m)."""
        self._need_tips("os_inertia")
        fname = self._chosen("os_inertia", variant)
        return self._shape(self._call(fname, q, out=out), (6 * self.m, 6 * self.m))

    def os_coriolis(self, q, qd, out=None):
        """c(0) = Λ(J M⁻¹ C − J̇q̇) (seed 000 (65)–(68)); -> (6m,)."""
        self._need_tips("os_coriolis")
        return self._call("os_coriolis", q, qd, out=out)

    def os_gravity(self, q, out=None):
        """g(0) = Λ J M⁻¹ G (seed 000 (72)–(74)); -> (6m,)."""
        self._need_tips("os_gravity")
        return self._call("os_gravity", q, out=out)

    def os_bias(self, q, qd, out=None):
        """c(0) + g(0) in one pass (seed 000 end of §4.3); -> (6m,)."""
        self._need_tips("os_bias")
        return self._call("os_bias", q, qd, out=out)

    def osc_torque(self, q, qd, u, out=None):
        """T = Jᵀ[Λ(0)u + c(0) + g(0)] for commanded tip accelerations u (6m,); -> (n,)."""
        self._need_tips("osc_torque")
        return self._call("osc_torque", q, qd, u, out=out)


class ClosedChainModule(Module):
    """Generated forward dynamics of two arms holding one point (seed 002 §5.3)."""

    def __repr__(self):
        return f"<soagen closed chain {self.name}: {self.robot.robot_a.n} + {self.robot.robot_b.n} joints>"

    def forward_dynamics(self, qa, qda, taua, qb, qdb, taub):
        """Joint accelerations of both arms and the wrench f (6,) arm a exerts on
        arm b, world axes at the held point; -> (θ̈_a, θ̈_b, f)."""
        return tuple(self._call("forward_dynamics", qa, qda, taua, qb, qdb, taub))


def module_class(target):
    from .closed_chain import ClosedChain

    return ClosedChainModule if isinstance(target, ClosedChain) else Module
