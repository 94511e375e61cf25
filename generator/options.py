"""What to generate and how: one :class:`Options` object handed from the CLI or
:func:`soagen.build` through :func:`soagen.codegen.generate` to every maker."""
from __future__ import annotations

from dataclasses import dataclass, replace

class OptionsError(ValueError):
    """Options that name nothing soagen has (an unknown function, family or precision)."""


#: a pivot d_j of the guarded LDLᵀ of Ω(0) must exceed this fraction of Ω_jj
PIVOT_RATIO = {"double": 1e-10, "float": 1e-5}


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
    parameters : {"baked", "inputs"}  the robot's parameters as constants, or π (and the
                          actuator parameters) as the last input ``pi`` of the functions that
                          can take it (:data:`soagen.functions.PARAMETRIC`)
    """

    precision: str = "double"
    trig_inputs: bool = False
    functions: tuple | None = None
    variants: tuple | None = ()
    parameters: str = "baked"

    def __post_init__(self):
        if self.precision not in PIVOT_RATIO:
            raise OptionsError(f"precision must be 'double' or 'float', got {self.precision!r}")
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
