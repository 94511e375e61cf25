"""The recursions recorded on sympy symbols: spatial algebra, the passes (sweeps), the makers, forward-mode tangents."""
