"""Straight-line programs: SSA statements with hash-consing, CSE and dead-code removal, operation
counts (:mod:`.statements`), the dependency-chain latency (:mod:`.latency`), the C printer (:mod:`.printer`)."""
from soagen.program.statements import OP_KINDS, Argument, Banner, Guard, Program, const, count_ops

__all__ = ["Argument", "Banner", "Guard", "OP_KINDS", "Program", "const", "count_ops"]


from soagen._lazy import submodules as _submodules  # noqa: E402

__getattr__ = _submodules(__name__)   # soagen.program.<submodule> without importing it first
