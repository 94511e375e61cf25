"""Instructions per call counted in QEMU and the cycles estimated from them
(:mod:`soagen.targets.mcu.cycles`): the counter on a hand-written function whose instructions
and cycles are known on both cores, the pricing of instruction classes by the cores' tables, and
the guide quoting the committed footprint page's counts and the Panda's OSC step (the page
itself is held current by tests/test_mcu.py::test_footprint_reports_are_current)."""
from __future__ import annotations

import re

import pytest

from soagen.targets.c99.emit import render_plain
from soagen.targets.mcu import cycles
from soagen.targets.mcu import qemu as mcu
from tests.support import ROOT

# [r0] = [r0] * [r0 + 4] after a loop of five passes: movs; 5 × (subs, bne), the last bne not taken;
# ldr, ldr, muls, str, bx = 16 instructions. Cortex-M4 cycles: movs 1, subs 5, bne 5 + 4 refills of 2,
# ldr 2, ldr 1 (right after a load), muls 1, str 2, bx 1 + 2 = 28. Cortex-M0: movs 1, subs 5, bne 4 × 3 + 1,
# ldr 2 + 2, muls 1, str 2, bx 3 = 29.
TINY = """    .syntax unified
    .thumb
    .text
    .global tiny
    .type tiny, %function
    .thumb_func
tiny:
    movs r1, #5
1:  subs r1, r1, #1
    bne 1b
    ldr r2, [r0]
    ldr r3, [r0, #4]
    muls r2, r3, r2
    str r2, [r0]
    bx lr
    .size tiny, . - tiny
"""
TINY_MAIN = r"""#include <stdint.h>
void tiny(uint32_t *p);
void soa_puts(const char *s);
int main(void)
{
    static uint32_t v[2] = {3u, 4u};
    tiny(v);
    soa_puts(v[0] == 12u ? "12\n" : "wrong\n");
    return 0;
}
"""
TINY_CYCLES = {"cortex-m4f": 28, "cortex-m0": 29}


@pytest.mark.mcu
@pytest.mark.parametrize("target", sorted(mcu.TARGETS))
def test_counts_a_known_function(target, tmp_path):
    """One call of a hand-written function of known length (a loop, loads, a multiply), called from
    ``main`` between a store and a print: 16 instructions on either core (every pass of the loop
    counted, none of main's), the cycles of the comment above TINY."""
    tgt = mcu.TARGETS[target]
    (tmp_path / "mcu_runtime.c").write_text(render_plain("mcu_runtime.c.j2"))
    (tmp_path / tgt.linker_script).write_text(render_plain(f"{tgt.linker_script}.j2"))
    (tmp_path / "main.c").write_text(TINY_MAIN)
    (tmp_path / "tiny.S").write_text(TINY)
    objects = [mcu.compile_object(tmp_path, src, tgt, "-Os") for src in ("mcu_runtime.c", "main.c", "tiny.S")]
    elf = mcu.link_image(tmp_path, objects, tgt, "-Os", tmp_path / "tiny.elf")
    assert mcu.run_qemu(elf, tgt, timeout=60) == "12\n"
    assert cycles.per_call(elf, tgt.machine, target, ["tiny"]) == {"tiny": cycles.Timing(16, TINY_CYCLES[target])}


@pytest.mark.parametrize("core,mnemonic,operands,price", [
    ("cortex-m4f", "vdiv.f32", "s0, s1, s2", 14), ("cortex-m4f", "vsqrt.f32", "s0, s1", 14),
    ("cortex-m4f", "vmul.f32", "s0, s1, s2", 1), ("cortex-m4f", "vfma.f32", "s0, s1, s2", 3),
    ("cortex-m4f", "vnmls.f32", "s0, s1, s2", 3), ("cortex-m4f", "vpush", "{d8-d15}", 17),
    ("cortex-m4f", "vldmia", "r0!, {s16-s19}", 5), ("cortex-m4f", "vldreq", "s16, [r0, #4]", 2),
    ("cortex-m4f", "ldr.w", "r3, [r0, #400]", 2), ("cortex-m4f", "ldrd", "r2, r3, [r0]", 3),
    ("cortex-m4f", "push", "{r4, r5, r6, lr}", 5), ("cortex-m4f", "vmov", "r0, r1, d0", 2),
    ("cortex-m4f", "bne.n", "1a4 <x>", 1), ("cortex-m4f", "moveq", "r2, #1", 1),
    ("cortex-m0", "muls", "r2, r3, r2", 1), ("cortex-m0", "ldr", "r3, [pc, #8]", 2),
    ("cortex-m0", "pop", "{r4, r5, r6, pc}", 5), ("cortex-m0", "bl", "1a4 <x>", 2),
    ("cortex-m0", "lsls", "r0, r1, #2", 1)])
def test_prices_instruction_classes(core, mnemonic, operands, price):
    """Each class at the cores' table price before a taken branch's refill (a taken branch, call or
    return adds 2; see test_counts_a_known_function)."""
    assert cycles.MODELS[core][0](cycles.Insn(4, mnemonic, operands)) == price


def timing_table(text):
    """{function: {run: (instructions, cycles)}} of a footprint page's 'Instructions and cycles' table."""
    part = text.split("## Instructions and cycles per call")[1].split("\n## ")[0]
    rows = [[c.strip() for c in line.strip().strip("|").split("|")] for line in part.splitlines()
            if line.startswith("| ")]
    runs = rows[0][1:]
    return {r[0]: {run: tuple(int(x) for x in c.split(" / ")) for run, c in zip(runs, r[1:])} for r in rows[1:]}


def test_guide_quotes_the_panda_counts_and_osc_step():
    """docs/guide/microcontrollers.md quotes generated/panda/footprint.md: instructions and cycles of
    gravity, inverse dynamics and osc_torque on the Cortex-M4F and the Cortex-M0 at -Os, and the OSC
    step's cycles, µs at 168 MHz and share of the 1 ms tick; the step's µs is its cycles over 168 MHz."""
    page = (ROOT / "generated" / "panda" / "footprint.md").read_text()
    guide = " ".join((ROOT / "docs" / "guide" / "microcontrollers.md").read_text().split())
    counts = timing_table(page)
    def n(x):     # the guide writes 13 716 for 13716
        return f"{x // 1000} {x % 1000:03d}" if x >= 10000 else str(x)

    for f in ("gravity", "inverse_dynamics", "osc_torque"):
        m4, m0 = counts[f]["cortex-m4f -Os"], counts[f]["cortex-m0 -Os"]
        assert f"`{f}` {n(m4[0])} instructions, {n(m4[1])} cycles (Cortex-M0: {n(m0[0])}, {n(m0[1])})" in guide, f
    step = next(line for line in page.splitlines() if line.startswith("| J, Λ, bias, OSC torque |"))
    cycles_os, us, share = re.search(r"\| (\d+) cycles, ([\d.]+) µs, ([\d.]+) % \|", step).groups()
    assert abs(float(us) - int(cycles_os) / 168) < 0.05 and abs(float(share) - float(us) / 10) < 0.05
    assert f"{n(int(cycles_os))} cycles, **{us} µs** at 168 MHz, {share} % of the 1 ms tick" in guide
