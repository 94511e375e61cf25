"""Reports over many programs: operation-count tables and the scaling study."""


from soagen._lazy import submodules as _submodules  # noqa: E402

__getattr__ = _submodules(__name__)   # soagen.reports.<submodule> without importing it first
