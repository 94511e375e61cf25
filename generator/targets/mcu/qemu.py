"""Microcontroller builds: cross-compile the emitted C for Cortex-M, run it in
QEMU (semihosting output), run the same C on the host, and measure flash and
stack per function.

Targets: a Cortex-M4F (hard float) on QEMU's ``mps2-an386`` and a Cortex-M0
(soft float) on QEMU's ``microbit`` (an nRF51822: 256 KB flash, 16 KB RAM,
and a CPU model that faults on ARMv7-M instructions).  Programs too large for
a target's flash together run as several images.

Toolchain: Debian's ``gcc-arm-none-eabi`` with ``libnewlib-arm-none-eabi``
(libm) and ``qemu-system-arm``; the host build needs ``gcc``.
"""
from __future__ import annotations

import platform
import re
import subprocess
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from soagen.targets.c99.emit import driver, render_plain
from soagen.targets.common.inert import markdown_text

CC = "arm-none-eabi-gcc"
# the generated C's float semantics on the host: every operation rounded to float, no
# contraction into FMA (as arm-none-eabi-gcc -std=c99), sinf/cosf left as calls, the C
# evaluated as written (-O0)
HOST_FLAGS = ("-std=c99", "-O0", "-ffp-contract=off", "-fno-builtin-sinf", "-fno-builtin-cosf") + (
    ("-msse2", "-mfpmath=sse") if platform.machine() in ("x86_64", "AMD64", "i686") else ())
RUNS = [("cortex-m4f", "-Os"), ("cortex-m4f", "-O2"), ("cortex-m0", "-Os"), ("cortex-m0", "-O2")]


@dataclass(frozen=True)
class Target:
    """A Cortex-M core: compiler flags, the QEMU machine that runs its code, its memory map.

    linker_script : str   file written by :func:`write_harness` (from templates/)
    flash, ram : int      bytes the machine has (the linker script's regions)
    """

    name: str
    flags: tuple
    machine: str
    linker_script: str
    flash: int
    ram: int


TARGETS = {
    "cortex-m4f": Target("cortex-m4f", ("-mcpu=cortex-m4", "-mthumb", "-mfpu=fpv4-sp-d16", "-mfloat-abi=hard"),
                         "mps2-an386", "mps2.ld", 4 << 20, 4 << 20),
    "cortex-m0": Target("cortex-m0", ("-mcpu=cortex-m0", "-mthumb", "-mfloat-abi=soft"),
                        "microbit", "microbit.ld", 256 << 10, 16 << 10),
}
COMMON = ("-std=c99", "-ffp-contract=off", "-ffunction-sections", "-fdata-sections", "-fstack-usage")


def _run(cmd, **kw):
    res = subprocess.run(cmd, capture_output=True, text=True, **kw)
    if res.returncode:
        raise RuntimeError(f"{' '.join(map(str, cmd))} failed ({res.returncode}):\n{res.stderr}{res.stdout}")
    return res


def _name(folder):
    """The robot's file stem in a harness folder (the one ``<name>.h``)."""
    (header,) = Path(folder).glob("*.h")
    return header.stem


def write_sources(gen, folder):
    """Write ``<name>.h/.c``, ``mcu_runtime.c``, ``mcu_trig_log.c`` and the linker
    scripts ``mps2.ld`` and ``microbit.ld`` into ``folder`` (files whose text is
    unchanged are left alone, so their compiled objects stay valid)."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    name = gen.csource.name
    files = {f"{name}.h": gen.csource.header, f"{name}.c": gen.csource.source,
             "mcu_runtime.c": render_plain("mcu_runtime.c.j2"), "mcu_trig_log.c": render_plain("mcu_trig_log.c.j2"),
             "mps2.ld": render_plain("mps2.ld.j2"), "microbit.ld": render_plain("microbit.ld.j2")}
    for fname, text in files.items():
        _write(folder / fname, text)
    return folder


def write_harness(gen, inputs, folder):
    """:func:`write_sources` and ``harness.c``: every program of ``gen`` on its ``inputs``
    (``{function: [case, ...]}``, a case one array per input), printing every output."""
    folder = write_sources(gen, folder)
    _write(folder / "harness.c", driver(gen.csource.name, gen.programs, inputs, _precision(gen),
                                        template="mcu_harness.c.j2"))
    return folder


def _write(path, text):
    if not path.exists() or path.read_text() != text:
        path.write_text(text)


def _precision(gen):
    return "float" if "float" in gen.csource.header.split("Scalar type:")[1][:10] else "double"


def compile_object(folder, source, target, opt):
    """Compile ``folder/source`` for ``target`` (once per target and level); -> .o path."""
    folder = Path(folder)
    obj = folder / f"{Path(source).stem}_{target.name}{opt}.o"
    if not obj.exists() or obj.stat().st_mtime_ns < (folder / source).stat().st_mtime_ns:
        _run([CC, *target.flags, opt, *COMMON, "-I", str(folder), "-c", str(folder / source),
              "-o", str(obj)])
    return obj


def link_image(folder, objects, target, opt, elf, wrap_trig=False):
    wrap = ["-Wl,--wrap=sinf,--wrap=cosf"] if wrap_trig else []
    _run([CC, *target.flags, opt, "-nostartfiles", "-Wl,--gc-sections", *wrap, "-T",
          str(Path(folder) / target.linker_script), *map(str, objects), "-o", str(elf), "-lm", "-lc", "-lnosys"])
    return elf


def build_elf(folder, name, target, opt="-Os", harness="harness.c", log_trig=False):
    """Cross-compile ``harness`` with the start-up code and ``<name>.c``; returns the ELF path.
    ``log_trig``: every sinf/cosf call also prints its argument and result (see :func:`parse_trig`)."""
    folder = Path(folder)
    objects = [compile_object(folder, "mcu_runtime.c", target, opt), compile_object(folder, harness, target, opt),
               compile_object(folder, f"{name}.c", target, opt)]
    if log_trig:
        objects.append(compile_object(folder, "mcu_trig_log.c", target, opt))
    elf = folder / f"{Path(harness).stem}_{target.name}{opt}{'_log' if log_trig else ''}.elf"
    return link_image(folder, objects, target, opt, elf, wrap_trig=log_trig)


def build_images(gen, inputs, folder, target, opt="-Os", log_trig=False):
    """ELFs that together run every program of ``gen`` on its ``inputs``: one
    where all programs' code fits half the target's flash (the rest is left to
    libm, libgcc and the harness's constants), else consecutive groups that do."""
    folder = Path(folder)
    name = gen.csource.name
    groups = _groups(gen, folder, target, opt)
    if len(groups) == 1:
        return [build_elf(folder, name, target, opt, log_trig=log_trig)]
    elves = []
    for i, group in enumerate(groups):
        harness = f"harness{i}_{target.name}{opt}.c"
        _write(folder / harness, driver(name, group, {p.name: inputs[p.name] for p in group},
                                        _precision(gen), template="mcu_harness.c.j2"))
        elves.append(build_elf(folder, name, target, opt, harness=harness, log_trig=log_trig))
    return elves


def _groups(gen, folder, target, opt):
    """The programs of ``gen`` in consecutive groups whose code fits half the target's flash."""
    sizes = {f: text for f, (text, _) in function_sizes(folder, gen.csource.name, target, opt).items()}
    groups, size = [[]], 0
    for p in gen.programs:
        if groups[-1] and size + sizes[p.name] > target.flash // 2:
            groups.append([])
            size = 0
        groups[-1].append(p)
        size += sizes[p.name]
    return groups


def run_qemu(elf, target, timeout=300):
    """Run an ELF on the target's QEMU machine; returns what it printed.  A fault
    prints ``fault`` and exits; a hang ends at ``timeout``."""
    res = _run(["qemu-system-arm", "-M", target.machine, "-nographic", "-monitor", "none", "-serial", "none",
                "-semihosting-config", "enable=on,target=native", "-kernel", str(elf)], timeout=timeout)
    return res.stderr + res.stdout   # QEMU writes semihosting output to stderr


def run_host(folder, trig, harness="harness.c"):
    """Compile ``harness`` and the robot's C for this machine in float with the
    MCU's semantics (:data:`HOST_FLAGS`), sinf/cosf answering from ``trig``
    (:func:`parse_trig` of an MCU run), run it; returns what it printed."""
    folder = Path(folder)
    name = _name(folder)
    table = {f: [(f"{x:08x}", f"{y:08x}") for x, y in sorted(trig.get(f, {}).items())] for f in ("sinf", "cosf")}
    text = render_plain("mcu_host.c.j2", sin_table=table["sinf"], cos_table=table["cosf"])
    _write(folder / "mcu_host.c", text)
    exe = folder / "host_harness"
    _run(["gcc", *HOST_FLAGS, "-I", str(folder), str(folder / "mcu_host.c"), str(folder / harness),
          str(folder / f"{name}.c"), "-o", str(exe), "-lm"])
    return _run([str(exe)], timeout=300).stdout


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


def parse_trig(text):
    """``{"sinf": {argument bits: result bits}, "cosf": {...}}`` from the lines of a
    firmware built with ``log_trig``."""
    out = {"sinf": {}, "cosf": {}}
    for line in text.splitlines():
        parts = line.split()
        if len(parts) == 4 and parts[0] in out:
            x, y = int(parts[1], 16), int(parts[3], 16)
            if out[parts[0]].setdefault(x, y) != y:
                raise RuntimeError(f"{parts[0]}({x:08x}) gave two results")
    return out


def function_sizes(folder, name, target, opt="-Os"):
    """``{function: (.text bytes, stack bytes)}`` of every generated function: its
    own code (libm and libgcc routines it calls are not included) and its own frame
    as ``-fstack-usage`` reports it (callees such as ``sinf`` not included)."""
    folder = Path(folder)
    obj = compile_object(folder, f"{name}.c", target, opt)
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


def image_size(elf):
    """Flash bytes of a linked image: ``.text`` (code, constants, vectors) + ``.data``."""
    text, data = _run(["arm-none-eabi-size", str(elf)]).stdout.splitlines()[1].split()[:2]
    return int(text) + int(data)


def minimal_images(gen, folder, target, opt="-Os"):
    """``{function: flash bytes}`` of the smallest firmware calling each function once
    (``templates/mcu_minimal.c.j2``: start-up, constant inputs, the call, libm and
    libgcc as linked)."""
    folder = Path(folder)
    name = gen.csource.name
    runtime = compile_object(folder, "mcu_runtime.c", target, opt)
    robot_obj = compile_object(folder, f"{name}.c", target, opt)
    sizes = {}
    for p in gen.programs:
        src = f"minimal_{p.name}.c"
        zeros = [np.zeros(a.size) for a in p.inputs]
        _write(folder / src, driver(name, [p], {p.name: [zeros]}, _precision(gen), template="mcu_minimal.c.j2"))
        elf = link_image(folder, [runtime, compile_object(folder, src, target, opt), robot_obj], target, opt,
                    folder / f"minimal_{p.name}_{target.name}{opt}.elf")
        sizes[p.name] = image_size(elf)
    return sizes


# the dynamics' derivatives (generated on request): footprint on the Cortex-M4F at -Os only, the
# size that decides whether they fit (compiling them for every run would take minutes)
DERIVATIVES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives", "linearized_step")
DERIVATIVE_RUNS = [("cortex-m4f", "-Os")]


def _cells_table(gen, folder, runs):
    """The table rows of :func:`footprint_table` for the programs of ``gen``."""
    write_sources(gen, folder)
    cells = {}
    for t, o in runs:
        own = function_sizes(folder, gen.csource.name, TARGETS[t], o)
        image = minimal_images(gen, folder, TARGETS[t], o)
        cells[t, o] = {f: f"{own[f][0]} / {own[f][1]} / {image[f]}" for f in image}
    head = " | ".join(f"{t} {o}" for t, o in runs)
    lines = [f"| function | {head} |", "|---|" + "---|" * len(runs)]
    for p in gen.programs:
        lines.append(f"| {p.name} | " + " | ".join(cells[r][p.name] for r in runs) + " |")
    return lines


def footprint_table(gen, robot_name, folder, runs=RUNS, derivatives=None, state=None):
    """Markdown: per function and run, its own flash (.text) and stack frame, and the
    flash of a minimal firmware calling it (:func:`minimal_images`); ``derivatives``:
    (float programs of :data:`DERIVATIVES`, a folder of their own), a second table
    with :data:`DERIVATIVE_RUNS`; ``state`` (``{input name: values}``,
    :data:`COUNT_SEED`): also the instructions
    and estimated cycles of one call on it (:func:`timings`) and, where the programs have
    them, the :data:`OSC_STEPS` against a 1 kHz tick at :data:`CLOCK_HZ`."""
    lines = [f"# Footprint: {markdown_text(robot_name)} (float, arm-none-eabi-gcc)", "",
             "Per cell, in bytes: the function's own code (`.text`; libm's `sinf`/`cosf` and, on the "
             "Cortex-M0, libgcc's soft-float routines excluded) / its own stack frame (`-fstack-usage`; "
             "the frames of the functions it calls, such as `sinf`, excluded) / the flash of a minimal "
             "firmware that calls it once (`text + data` of the linked image: vector table, start-up, "
             "constant inputs, the function, and the libm and libgcc routines it pulls in).", "",
             *_cells_table(gen, folder, runs)]
    timed = [r for r in runs if r in TIMING_RUNS]
    if state is not None and timed:
        counted = {r: timings(gen, state, folder, TARGETS[r[0]], r[1]) for r in timed}
        lines += ["", "## Instructions and cycles per call", "", TIMING_INTRO, "",
                  *_timing_table(gen, counted, timed), *_osc_budget(gen, counted, timed)]
    if derivatives is not None:
        dgen, dfolder = derivatives
        intro = ("Generated on request (`--function`), unrolled but for the column loops of forward_dynamics_derivatives "
                 "and linearized_step (their solves with M's factors); the same three numbers per cell, "
                 "Cortex-M4F at `-Os` only (`soagen footprint --derivatives`):")
        lines += ["", "## The dynamics' derivatives", "", intro, "", *_cells_table(dgen, dfolder, DERIVATIVE_RUNS)]
        if state is not None:
            counted = {r: timings(dgen, state, dfolder, TARGETS[r[0]], r[1]) for r in DERIVATIVE_RUNS}
            lines += ["", "Instructions / estimated cycles of one call, as above:", "",
                      *_timing_table(dgen, counted, DERIVATIVE_RUNS)]
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------- instructions and cycles
#: the core clock of the 1 kHz budget (an STM32F4's Cortex-M4F) and the control period (s)
CLOCK_HZ, PERIOD_S = 168e6, 1e-3
#: the runs whose calls are counted: not the Cortex-M0 at -O2, whose counts differ little from -Os (libgcc's
#: soft-float routines, the same code in both, execute nearly all of its instructions; the Panda's within 0.2 %)
#: and whose single-stepped run would take as long again as the rest
TIMING_RUNS = [("cortex-m4f", "-Os"), ("cortex-m4f", "-O2"), ("cortex-m0", "-Os")]
#: one operational space control tick: the issue's step (Jacobian, Λ(0), bias, OSC torque) and what
#: examples/osc_panda.py's controller calls each millisecond (its plant's forward dynamics excluded)
OSC_STEPS = {"J, Λ, bias, OSC torque": ("jacobian", "os_inertia", "os_bias", "osc_torque"),
             "examples/osc_panda.py's controller": ("forward_kinematics", "jacobian", "osc_torque",
                                                    "mass_matrix_inverse", "os_inertia")}


#: the seed of the one state every function is counted on: ``soagen.check.random_inputs(robot,
#: numpy.random.default_rng(COUNT_SEED))`` (``soagen footprint``'s; joint angles of a few radians, so
#: that sinf and cosf reduce their argument as at most states; a regular state, so that no function
#: returns early)
COUNT_SEED = 0


def timings(gen, state, folder, target, opt="-Os"):
    """``{function: cycles.Timing}``: one call of every program of ``gen`` on ``state``
    (``{input name: values}``, rounded to float; :data:`COUNT_SEED`), counted in QEMU and priced
    for the target's core (:mod:`soagen.targets.mcu.cycles`); the programs run in the images of :func:`build_images`'
    grouping, each called once from ``templates/mcu_count.c.j2``."""
    from soagen.targets.mcu import cycles

    folder = Path(folder)
    name = gen.csource.name
    out = {}
    for i, group in enumerate(_groups(gen, folder, target, opt)):
        src = f"count{i}_{target.name}{opt}.c"
        cases = {p.name: [[np.asarray(state[a.name], dtype=np.float32).ravel() for a in p.inputs]] for p in group}
        _write(folder / src, driver(name, group, cases, _precision(gen), template="mcu_count.c.j2"))
        elf = build_elf(folder, name, target, opt, harness=src)
        out.update(cycles.per_call(elf, target.machine, target.name, [p.name for p in group], prefix=name + "_"))
    return out


TIMING_INTRO = (
    "Per cell: the instructions one call executes, counted in QEMU (`-singlestep -d exec,nochain`: the "
    "function's own and those of the libm and libgcc routines it calls, `sinf`/`cosf` and on the Cortex-M0 "
    "the soft-float `__aeabi_*`) / the cycles they take, an estimate (QEMU does not model time): each "
    "executed instruction priced by the core's documented timings, zero-wait-state memory, no interrupts "
    "(`soagen.targets.mcu.cycles`). Cortex-M4 (its TRM's instruction and FPU tables): 1 cycle for data "
    "processing, multiplies and single-precision add, multiply, compare, convert and move; 3 for VMLA/VMLS "
    "and the fused forms; 14 for VDIV and VSQRT; 2 for a single load or store, 1 right after another; 1 + N "
    "for LDM/STM/PUSH/POP and their FPU forms; a taken branch, call or return 1 + 2 (the refill, 1 to 3 on the "
    "core). Cortex-M0 (its TRM's table): 1 for data processing and MULS (the fast multiplier; 32 with the "
    "small one), 2 for every load and store, 1 + N for LDM/STM/PUSH/POP, 3 for a taken branch, 4 for BL. "
    "Each function runs once, on one state (`soagen footprint`'s: seed 0 of `soagen.check.random_inputs`, "
    "rounded to float), so the paths of `sinf`/`cosf` and of the soft-float "
    "routines are those of typical arguments. Not counted: the Cortex-M0 at `-O2` (close to `-Os`: the "
    "soft-float routines, the same in both, execute nearly all of its instructions).")


def _timing_table(gen, counted, runs):
    """Markdown rows: per function, ``instructions / cycles`` per run (``counted[run][function]``)."""
    head = " | ".join(f"{t} {o}" for t, o in runs)
    lines = [f"| function | {head} |", "|---|" + "---|" * len(runs)]
    for p in gen.programs:
        cells = (f"{counted[r][p.name].instructions} / {counted[r][p.name].cycles}" for r in runs)
        lines.append(f"| {p.name} | " + " | ".join(cells) + " |")
    return lines


def osc_step(counted, functions):
    """(cycles, µs at :data:`CLOCK_HZ`, % of the :data:`PERIOD_S` tick) of one call of each of
    ``functions`` (``counted``: ``{function: Timing}`` of one run)."""
    cycles = sum(counted[f].cycles for f in functions)
    us = cycles / CLOCK_HZ * 1e6
    return cycles, us, 100 * us * 1e-6 / PERIOD_S


def _osc_budget(gen, counted, runs):
    """Markdown: the :data:`OSC_STEPS` the programs have, on the Cortex-M4F runs, against the tick."""
    names = {p.name for p in gen.programs}
    steps = {label: fs for label, fs in OSC_STEPS.items() if set(fs) <= names}
    m4 = [r for r in runs if r[0] == "cortex-m4f"]
    if not steps or not m4:
        return []
    lines = ["", f"## One operational space control step at {CLOCK_HZ / 1e6:g} MHz", "",
             f"The estimated cycles above of the functions one {1 / PERIOD_S / 1e3:g} kHz control tick calls, "
             f"one call each, on the Cortex-M4F at {CLOCK_HZ / 1e6:g} MHz (an STM32F4's clock; its flash wait "
             "states not counted): cycles, µs per tick, share of the tick.", "",
             "| step | functions | " + " | ".join(f"{t} {o}" for t, o in m4) + " |", "|---|---|" + "---|" * len(m4)]
    for label, fs in steps.items():
        cells = ("{} cycles, {:.1f} µs, {:.1f} %".format(*osc_step(counted[r], fs)) for r in m4)
        lines.append(f"| {label} | {', '.join(fs)} | " + " | ".join(cells) + " |")
    return lines
