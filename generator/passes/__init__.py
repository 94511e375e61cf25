"""The recursions recorded on sympy symbols: spatial algebra, the passes (sweeps), the makers, forward-mode tangents."""


from soagen._lazy import submodules as _submodules  # noqa: E402

__getattr__ = _submodules(__name__)   # soagen.passes.<submodule> without importing it first
