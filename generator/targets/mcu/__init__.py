"""Microcontrollers: cross-compiled for Cortex-M, run in QEMU, flash and stack per function."""


from soagen._lazy import submodules as _submodules  # noqa: E402

__getattr__ = _submodules(__name__)   # soagen.targets.mcu.<submodule> without importing it first
