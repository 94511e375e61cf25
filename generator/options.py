"""What to generate and how: one :class:`Options` object handed from the CLI or
:func:`soagen.build` through :func:`soagen.codegen.generate` to every maker."""
from __future__ import annotations

import os
from dataclasses import dataclass, replace


class OptionsError(ValueError):
    """Options that name nothing soagen has (an unknown function, family or precision)."""


#: a pivot d_j of the guarded LDLᵀ of Ω(0) must exceed this fraction of Ω_jj
PIVOT_RATIO = {"double": 1e-10, "float": 1e-5}

#: what :func:`soagen.build` makes: "c" a cffi module (C99 functions, SIMD batches); "cuda" a ``.cu``
#: compiled by nvcc (kernels on a GPU, arrays through DLPack); "cuda-host" the same ``.cu`` compiled by
#: the host C++ compiler, its kernels run as loops on the CPU over host arrays (tests without a GPU)
TARGETS = ("c", "cuda", "cuda-host", "casadi")


@dataclass(frozen=True)
class Options:
    """Generation options.

    Attributes
    ----------
    precision : {"double", "float"}   C scalar type
    trig_inputs : bool    functions take cos/sin of the joint angles as inputs ``cq``, ``sq``
                          (after the other inputs) instead of computing them
    functions : tuple of str or None  exactly these C functions (None: the defaults)
    variants : tuple of str or None   also the variants of these families (None: every family)
    target : str          one of :data:`TARGETS`
    simd : bool           target "c": also compile the SIMD batches (:mod:`soagen.targets.simd`, several
                          states per instruction) in the build, for the module's batch calls and
                          ``out_format="upper"`` (about twice the scalar code's compile time); False
                          (default): batch calls run the scalar functions row by row in one C loop
    parameters : {"baked", "inputs"}  the robot's parameters as constants, or π (and the
                          actuator parameters) as the last input ``pi`` of the functions that
                          can take it (:data:`soagen.functions.PARAMETRIC`)
    optimize : {"O3", "O2", "O1", "O0"}   the C compiler's optimization level (O0: fastest to build,
                          for tests and exploration; O3: the speed the benchmarks measure)
    """

    precision: str = "double"
    trig_inputs: bool = False
    functions: tuple | None = None
    variants: tuple | None = ()
    target: str = "c"
    simd: bool = False
    parameters: str = "baked"
    optimize: str = "O3"

    def __post_init__(self):
        if self.precision not in PIVOT_RATIO:
            raise OptionsError(f"precision must be 'double' or 'float', got {self.precision!r}")
        if self.target not in TARGETS:
            raise OptionsError(f"target must be one of {', '.join(map(repr, TARGETS))}, got {self.target!r}")
        if self.optimize not in ("O0", "O1", "O2", "O3", "Os"):
            raise OptionsError(f"optimize must be one of O0, O1, O2, O3, Os, got {self.optimize!r}")
        if self.parameters not in ("baked", "inputs"):
            raise OptionsError(f"parameters must be 'baked' or 'inputs', got {self.parameters!r}")
        for field in ("functions", "variants"):
            value = getattr(self, field)
            if value is not None and not isinstance(value, tuple):
                object.__setattr__(self, field, tuple(value))

    @property
    def pivot_ratio(self):
        """Threshold of the guarded LDLᵀ pivots of Ω(0) (:data:`PIVOT_RATIO`)."""
        return PIVOT_RATIO[self.precision]

    def but(self, **changes):
        """A copy with ``changes``."""
        return replace(self, **changes)


def jobs():
    """Worker processes (generation) and threads (compilation): ``$SOAGEN_JOBS`` or the number of CPUs."""
    return max(1, int(os.environ.get("SOAGEN_JOBS") or os.cpu_count() or 1))
