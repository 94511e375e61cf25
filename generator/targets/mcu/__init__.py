"""Microcontrollers: cross-compiled for Cortex-M, run in QEMU, flash and stack per function."""
