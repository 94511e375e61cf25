"""Microcontroller builds: cross-compile the emitted C for Cortex-M and run it
in QEMU (MPS2 boards, semihosting), and measure flash and stack per function.

Toolchain: Debian's ``gcc-arm-none-eabi`` with ``libnewlib-arm-none-eabi``
(libm) and ``qemu-system-arm``.
"""
from __future__ import annotations

import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from .emit import driver, render_plain

CC = "arm-none-eabi-gcc"


@dataclass(frozen=True)
class Target:
    """A Cortex-M core: compiler flags and the QEMU board that runs its code."""

    name: str
    flags: tuple
    machine: str


TARGETS = {
    "cortex-m4f": Target("cortex-m4f", ("-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"),
                         "mps2-an386"),
    # ARMv6-M code runs unchanged on the Cortex-M3 of the AN385 image (QEMU has no M0 board)
    "cortex-m0": Target("cortex-m0", ("-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"), "mps2-an385"),
}


def _run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({res.returncode}):\n{res.stderr}{res.stdout}")
    return res


def write_harness(gen, inputs, folder):
    """Write ``<name>.h/.c``, ``harness.c``, ``mcu_runtime.c`` and ``mps2.ld`` into ``folder``."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = gen.csource.name
    precision = "float" if "float" in gen.csource.header.split("Scalar type:")[1][:10] else "double"
    files = {f"{name}.h": gen.csource.header, f"{name}.c": gen.csource.source,
             "harness.c": driver(name, gen.programs, inputs, precision, template="mcu_harness.c.j2"),
             "mcu_runtime.c": render_plain("mcu_runtime.c.j2"), "mps2.ld": render_plain("mps2.ld.j2")}
    for fname, text in files.items():
        (folder / fname).write_text(text)
    return folder


def build_elf(folder, name, target, opt="-Os"):
    """Cross-compile the harness in ``folder``; returns the ELF path."""
    folder = Path(folder)
    elf = folder / f"{name}_{target.name}{opt}.elf"
    _run([CC, *target.flags, opt, "-std=c99", "-ffunction-sections", "-fdata-sections", "-nostartfiles",
          "-Wl,--gc-sections", "-T", str(folder / "mps2.ld"), "-I", str(folder),
          str(folder / "mcu_runtime.c"), str(folder / "harness.c"), str(folder / f"{name}.c"),
          "-o", str(elf), "-lm", "-lc", "-lnosys"])
    return elf


def run_qemu(elf, target, timeout=300):
    """Run an ELF on the target's QEMU board; returns what it printed.  A fault
    prints ``fault`` and exits; a hang ends at ``timeout``."""
    res = _run(["qemu-system-arm", "-M", target.machine, "-nographic", "-monitor", "none", "-serial", "none",
                "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)], timeout=timeout)
    return res.stderr + res.stdout   # QEMU writes semihosting output to stderr


def parse_output(text, dtype):
    """``{(function, case, output): (status, values)}`` from the harness's lines."""
    out = {}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) != 4 or ":" not in parts[0]:
            continue
        fname, case, arg = parts[0].split(":")
        bits = int(parts[3], 16)
        value = (np.array([bits], dtype=np.uint32).view(np.float32)[0] if dtype == np.float32
                 else np.array([bits], dtype=np.uint64).view(np.float64)[0])
        entry = out.setdefault((fname, int(case), arg), [int(parts[2]), []])
        entry[1].append(float(value))
    return {k: (s, np.array(v)) for k, (s, v) in out.items()}


def critical_path(prog):
    """Longest chain of dependent floating-point operations in a program
    (each statement adds its own operation count to its deepest operand)."""
    from .program import count_ops

    depth = {}
    for sym, expr in prog.statements():
        ops = sum(v for k, v in count_ops(expr).items() if k != "neg")
        depth[sym] = max((depth.get(s, 0) for s in expr.free_symbols), default=0) + max(ops, 1)
    outs = [s for a in prog.outputs for e in a.symbols for s in e.free_symbols]
    return max((depth.get(s, 0) for s in outs), default=1)


def footprint(folder, name, target, opt="-Os"):
    """Flash (.text bytes) and stack (bytes, -fstack-usage) of every generated function."""
    folder = Path(folder)
    obj = folder / f"{name}_{target.name}{opt}.o"
    _run([CC, *target.flags, opt, "-std=c99", "-ffunction-sections", "-fstack-usage", "-c",
          str(folder / f"{name}.c"), "-I", str(folder), "-o", str(obj)])
    sizes = {}
    nm = _run(["arm-none-eabi-nm", "--print-size", "--size-sort", str(obj)]).stdout
    for line in nm.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[2].lower() == "t" and parts[3].startswith(name + "_"):
            sizes[parts[3][len(name) + 1:]] = int(parts[1], 16)
    stacks = {}
    for line in obj.with_suffix(".su").read_text().splitlines():
        m = re.match(r".*:(\w+)\t(\d+)\t(\w+)", line)
        if m and m.group(1).startswith(name + "_"):
            stacks[m.group(1)[len(name) + 1:]] = int(m.group(2))
    return {f: (sizes[f], stacks.get(f)) for f in sizes if not f.endswith("_batch")}
