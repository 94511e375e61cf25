"""C text shared by the C targets: the Jinja environment, function bodies, inline trig."""


from soagen._lazy import submodules as _submodules  # noqa: E402

__getattr__ = _submodules(__name__)   # soagen.targets.common.<submodule> without importing it first
