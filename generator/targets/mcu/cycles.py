"""Instructions per call, counted in QEMU, and an estimate of the cycles they take on the core.

Counting: QEMU (7.2; no TCG plugin needed) runs an image with ``-singlestep`` (every translation
block is one guest instruction) and ``-d exec,nochain`` (a log line before every block it executes;
``nochain`` keeps blocks from being chained past the log, which 7.2 does not do to single-stepped
blocks anyway). The log streams through :func:`calls`, which counts,
per function, the instructions from its entry until the program is back in ``main``: its own and
those of everything it calls (``sinf``/``cosf``, and on the Cortex-M0 libgcc's soft-float
``__aeabi_*`` routines). Each function is called once; the state it runs on decides the paths
taken in libm and libgcc (and would decide a singular early return, which the harness reports).

Cycles: QEMU does not model time, so the executed instructions are priced from the image's
disassembly with the cores' documented timings, assuming zero-wait-state memory, no interrupts and
no stalls beyond those below (:func:`m4_cycles`, :func:`m0_cycles`). An estimate, not a
measurement: a part running from flash with wait states (an STM32F4 at 168 MHz has 5, hidden in
part by its ART accelerator) takes longer.
"""
from __future__ import annotations

import re
import subprocess
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

#: the pipeline refill P of a taken branch on the Cortex-M4 (its TRM: 1 to 3 cycles, by the
#: target's alignment and width); the estimate takes the middle
M4_REFILL = 2
#: cycles of MULS on the Cortex-M0: 1 with the fast multiplier (the option most parts take), 32
#: with the small one
M0_MULTIPLY = 1


@dataclass(frozen=True)
class Insn:
    """One instruction of the disassembly: ``size`` bytes (2 or 4), ``mnemonic`` (``vadd.f32``,
    ``ldr.w``, ``bne.n``, ``vldreq``), ``operands`` as objdump prints them."""

    size: int
    mnemonic: str
    operands: str


@dataclass(frozen=True)
class Timing:
    """One call: instructions executed (callees included) and the estimated cycles."""

    instructions: int
    cycles: int


def symbols(elf):
    """``{name: (address, size)}`` of the ELF's functions and objects (Thumb bit cleared)."""
    out = subprocess.run(["arm-none-eabi-nm", "--print-size", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    table = {}
    for line in out.splitlines():
        parts = line.split()
        if len(parts) == 4:
            table[parts[3]] = (int(parts[0], 16) & ~1, int(parts[1], 16))
    return table


_LINE = re.compile(r"^\s*([0-9a-f]+):\t([0-9a-f]{4}(?: [0-9a-f]{4})?)\s*\t(\S+)\s*([^;@]*)")


def disassemble(elf):
    """``{address: Insn}`` of the ELF's code (``arm-none-eabi-objdump -d``)."""
    out = subprocess.run(["arm-none-eabi-objdump", "-d", str(elf)], capture_output=True, text=True,
                         check=True).stdout
    code = {}
    for line in out.splitlines():
        m = _LINE.match(line)
        if m and not m.group(3).startswith("."):
            code[int(m.group(1), 16)] = Insn(2 * len(m.group(2).split()), m.group(3), m.group(4).strip())
    return code


def qemu_trace(elf, machine, timeout=600):
    """Run ``elf`` on QEMU's ``machine`` one instruction per block; yields the address of every
    instruction executed, in order; then raises if QEMU failed. The semihosting output (stderr) is
    returned by the generator (``StopIteration.value``)."""
    cmd = ["qemu-system-arm", "-M", machine, "-nographic", "-monitor", "none", "-serial", "none",
           "-semihosting-config", "enable=on,target=native", "-singlestep", "-d", "exec,nochain",
           "-D", "/dev/stdout", "-kernel", str(elf)]
    with tempfile.TemporaryFile() as err, subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err) as proc:
        try:
            for line in proc.stdout:        # "Trace 0: 0x7f.. [cs_base/pc/flags/cflags] symbol"
                if line.startswith(b"Trace "):
                    yield int(line.split(b"/", 2)[1], 16)
            proc.wait(timeout=timeout)
        finally:
            if proc.poll() is None:
                proc.kill()
        err.seek(0)
        text = err.read().decode(errors="replace")
    if proc.returncode:
        raise RuntimeError(f"{' '.join(cmd)} failed ({proc.returncode}):\n{text}")
    return text


def calls(elf, machine, functions, timeout=600):
    """``{function: Counter{(address, next address): times}}``: for each function in ``functions``
    (symbols of ``elf``, each called once from ``main``), every instruction it executed (callees
    included) paired with the one that followed it (for its last, the address it returned to in
    ``main``); the instructions of a call are the sum of its counts. Raises when a function did not
    run, ran twice, or the program printed ``singular`` or ``fault``."""
    table = symbols(elf)
    entries = {table[f][0]: f for f in functions}
    home = range(table["main"][0], sum(table["main"]))
    out, current, prev, steps = {}, None, None, None
    trace = qemu_trace(elf, machine, timeout)
    while True:
        try:
            pc = next(trace)
        except StopIteration as stop:
            printed = stop.value
            break
        if current is None:
            if pc not in entries:
                continue
            current, prev, steps = entries[pc], None, Counter()
            if current in out:
                raise RuntimeError(f"{current} was called twice")
        elif pc in home:
            steps[prev, pc] += 1
            out[current], current = steps, None
            continue
        if prev is not None:
            steps[prev, pc] += 1
        prev = pc
    if "singular" in printed or "fault" in printed:
        raise RuntimeError(f"{elf}: {printed.strip()}")
    missing = [f for f in functions if f not in out]
    if missing:
        raise RuntimeError(f"{elf}: no complete call of {', '.join(missing)}")
    return out


_COND = "(?:eq|ne|cs|cc|hs|lo|mi|pl|vs|vc|hi|ls|ge|lt|gt|le|al)"
_BRANCH = re.compile(rf"^(?:b{_COND}?|bl|blx|bx|cbn?z|tb[bh])$")


def _parts(insn):
    """(base mnemonic without width, condition or type suffix, registers in a {list})."""
    base = insn.mnemonic.split(".")[0]
    if not _BRANCH.match(base) and re.match(rf".*{_COND}$", base) and base[:-2] in _KNOWN:
        base = base[:-2]                           # in an IT block: vldreq, moveq, ...
    regs = 0
    if "{" in insn.operands:
        for item in insn.operands[insn.operands.index("{") + 1:insn.operands.index("}")].split(","):
            lo, _, hi = item.strip().partition("-")
            width = 2 if lo.startswith("d") else 1          # a d register is two words
            regs += width * ((int(hi[1:]) - int(lo[1:]) + 1) if hi else 1)
    return base, regs


_SINGLE = re.compile(r"^(?:ldr|str)(?:b|h|sb|sh|ex|t|bt|ht)?$|^v(?:ldr|str)$")
_MULTI = re.compile(r"^(?:ldm|stm|vldm|vstm)(?:ia|db|fd|ea)?$|^v?(?:push|pop)$")
_KNOWN = {"ldr", "str", "vldr", "vstr", "mov", "add", "sub", "vmov", "vadd", "vsub", "vmul", "vneg", "cmp",
          "ldrb", "strb", "ldrh", "strh", "ldrd", "strd", "it", "orr", "and", "eor", "mvn", "rsb", "lsl", "lsr",
          "asr", "vabs", "vcmp", "vcmpe", "vdiv", "vsqrt", "vcvt", "vmla", "vmls", "vfma", "vfms", "vnmul"}


def is_single_load_store(insn):
    """LDR/STR of one word, halfword or byte, or VLDR/VSTR."""
    return bool(_SINGLE.match(_parts(insn)[0]))


def m4_cycles(insn):
    """Cycles of ``insn`` on the Cortex-M4 (Cortex-M4 Technical Reference Manual, ARM DDI 0439, the
    processor's instruction timings and the FPU's instruction table), before the terms that depend on
    what runs next (:func:`estimate`: a taken branch adds the refill :data:`M4_REFILL`, a single load or
    store right after another takes 1 cycle less): 1 for data processing, compares, multiplies and
    multiply-accumulates (MUL, MLA, UMULL, ...), IT and the FPU's single-precision add, subtract,
    multiply, negate, absolute, compare, convert and move; 2 for LDR/STR and VLDR/VSTR, 3 for
    LDRD/STRD, 1 + N for LDM/STM/PUSH/POP and VLDM/VSTM/VPUSH/VPOP (N words), 2 for a VMOV of two core
    registers, 3 for VMLA/VMLS/VNMLA/VNMLS and the fused VFMA/VFMS/VFNMA/VFNMS, 14 for VDIV and VSQRT,
    12 for SDIV/UDIV (2 to 12: the worst), 1 for a branch (taken: 1 + P)."""
    base, regs = _parts(insn)
    if base in ("vdiv", "vsqrt"):
        return 14
    if base in ("vmla", "vmls", "vnmla", "vnmls", "vfma", "vfms", "vfnma", "vfnms"):
        return 3
    if _SINGLE.match(base):
        return 2
    if base in ("ldrd", "strd"):
        return 3
    if _MULTI.match(base):
        return 1 + regs
    if base == "vmov" and insn.operands.count(",") >= 2:
        return 2
    if base in ("sdiv", "udiv"):
        return 12
    if base == "tbb" or base == "tbh":
        return 2
    return 1


def m0_cycles(insn):
    """Cycles of ``insn`` on the Cortex-M0 (Cortex-M0 Technical Reference Manual, ARM DDI 0432, its
    instruction set summary), before a taken branch's 2 refill cycles (:func:`estimate`: a taken
    conditional branch 3, B 3, BL 4, BX/BLX 3, POP with PC 3 + N): 1 for data processing, compares,
    extends, reverses, ADR and MULS (:data:`M0_MULTIPLY`: the fast multiplier), 2 for every LDR/STR
    (literal loads too), 1 + N for LDM/STM/PUSH/POP (N registers), 2 for BL before its refill, 4 for
    MRS/MSR and the barriers, 1 for a branch not taken."""
    base, regs = _parts(insn)
    if _SINGLE.match(base):
        return 2
    if _MULTI.match(base):
        return 1 + regs
    if base == "muls" or base == "mul":
        return M0_MULTIPLY
    if base == "bl":
        return 2
    if base in ("mrs", "msr", "dmb", "dsb", "isb"):
        return 4
    return 1


#: per core: (cycles of an instruction, refill of a taken branch, 1 cycle off a single load/store after another)
MODELS = {"cortex-m4f": (m4_cycles, M4_REFILL, True), "cortex-m0": (m0_cycles, 2, False)}


def estimate(steps, code, core):
    """:class:`Timing` of one call: ``steps`` from :func:`calls`, ``code`` from :func:`disassemble`
    of the same image, ``core`` a key of :data:`MODELS`. Per executed instruction its cycles, plus the
    refill when the next address is not the one after it (a branch taken, a call, a return), less one
    on the Cortex-M4 for a single load or store right after another (their address and data phases
    overlap)."""
    price, refill, pipelined = MODELS[core]
    instructions = cycles = 0
    for (pc, nxt), times in steps.items():
        insn = code[pc]
        instructions += times
        cost = price(insn) + (refill if nxt != pc + insn.size else 0)
        if pipelined and nxt in code and is_single_load_store(insn) and is_single_load_store(code[nxt]) \
                and nxt == pc + insn.size:
            cost -= 1       # the next one's: it follows a single load or store
        cycles += times * cost
    return Timing(instructions, cycles)


def per_call(elf, machine, core, functions, prefix=""):
    """``{function: Timing}`` of one call of each of ``functions`` (symbols ``prefix + function``) in
    ``elf``, run on QEMU's ``machine`` (see :func:`calls`, :func:`estimate`)."""
    code = disassemble(elf)
    counted = calls(Path(elf), machine, [prefix + f for f in functions])
    return {f: estimate(counted[prefix + f], code, core) for f in functions}
