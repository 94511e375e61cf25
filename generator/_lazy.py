"""Submodules as attributes of their package, imported when first asked for."""
from __future__ import annotations


def submodules(package):
    """A module ``__getattr__`` for ``package`` that imports its submodules on first access.

    ``soagen.functions`` then resolves after ``import soagen`` alone, as the guide writes it,
    while ``import soagen`` itself stays cheap (no sympy until a submodule that needs it is asked for).

    Parameters
    ----------
    package : str
        The package's ``__name__``.

    Returns
    -------
    callable
        ``__getattr__(name)``: the submodule ``package.name``; AttributeError where there is none.
    """
    def __getattr__(name):
        import importlib.util  # here, not at import: 3 ms of `import soagen`

        if not name.startswith("__") and importlib.util.find_spec(f"{package}.{name}") is not None:
            return importlib.import_module(f"{package}.{name}")
        raise AttributeError(f"module {package!r} has no attribute {name!r}")

    return __getattr__
