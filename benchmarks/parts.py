"""Compile time, compiler memory and run time of long functions, whole and cut into parts.

    python benchmarks/parts.py                          # prints, writes nothing
    python benchmarks/parts.py --markdown docs/parts.md

gcc's time on one straight-line function grows faster than its length (most of it in the
register allocator's hard-register assignment); :mod:`soagen.program.parts` cuts a function
longer than ``SPLIT_ABOVE`` statements into parts of ``PART_STATEMENTS``, each its own
translation unit.  Here the same recorded programs are emitted whole and cut at several part
sizes, compiled with the module's flags (-O3), and timed from C on the same states, the
variants interleaved round after round (``<function>_batch`` on N rows).  Compile: gcc's
seconds summed over the function's units (CPU; the build runs ``$SOAGEN_JOBS`` at once) and
the largest resident memory of one gcc.  The benchmark prints; it asserts nothing.
"""
from __future__ import annotations

import argparse
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import soagen  # noqa: E402
from soagen import codegen  # noqa: E402
from soagen.options import Options  # noqa: E402
from soagen.program import parts  # noqa: E402
from soagen.targets.c99.compile import COMPILE_ARGS, compile_module, load_extension  # noqa: E402
from soagen.targets.c99.emit import emit  # noqa: E402
from soagen.targets.common.compiler import GCC_LONG_UNIT_ARGS, LONG_UNIT_STATEMENTS  # noqa: E402
from soagen.targets.common.inert import c_name  # noqa: E402

FEET = ("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT")
HANDS = ["gripper_left_base_link", "gripper_right_base_link"]
#: robot -> (loader, functions)
CASES = {
    "solo12_feet": (lambda: soagen.load_urdf(soagen.robots.path("solo12"), floating_base=True,
                                             tips=[soagen.point_tip(f) for f in FEET]),
                    ["contact_dynamics_derivatives"]),
    "talos_reduced": (lambda: soagen.load_urdf(soagen.robots.path("talos_reduced"), floating_base=True, tips=HANDS),
                      ["mass_matrix_inverse", "os_inertia", "inverse_dynamics_derivatives",
                       "forward_dynamics_derivatives"]),
}
WHOLE = 10**9
SIZES = (WHOLE, 2000, 1000, 500)     # statements per part; WHOLE: no cut


def peak_wrapper(folder):
    """A ``$CC`` that runs cc under /usr/bin/time and appends each gcc's peak kB to ``folder/peak``."""
    timer = shutil.which("time") or "/usr/bin/time"
    path = Path(folder) / "cc"
    path.write_text(f'#!/bin/sh\nexec {timer} -a -o {folder}/peak -f %M cc "$@"\n')
    path.chmod(0o755)
    return path


def states(robot, rows, seed=0):
    rng = np.random.default_rng(seed)
    drawn = [robot.random_state(rng) for _ in range(rows)]
    return {name: np.array([s[k] for s in drawn]) for k, name in enumerate(("q", "qd", "qdd", "tau"))}


def time_batches(mods, programs, prefix, args, rows, rounds=7):
    """ns per state of each (part size, function) module, the sizes interleaved, median over rounds."""
    out = {key: [] for key in mods}
    for _ in range(rounds):
        for p in programs:
            ins = [np.ascontiguousarray(args[a.name]) for a in p.inputs]
            for size in SIZES:
                mod = mods[size, p.name]
                fn = getattr(mod.lib, f"{prefix}_{p.name}_batch")
                outs = [np.empty((rows, a.size)) for a in p.outputs]
                ptrs = [mod.ffi.from_buffer("double[]", a) for a in ins + outs]
                fn(rows, *ptrs)                                   # warm
                t0 = time.perf_counter()
                fn(rows, *ptrs)
                out[size, p.name].append((time.perf_counter() - t0) / rows * 1e9)
    return {k: statistics.median(v) for k, v in out.items()}


def study(key, rows=256):
    make, functions = CASES[key]
    robot = make()
    print(f"{key}: nv = {robot.nv}; recording {', '.join(functions)}", file=sys.stderr)
    programs, _ = codegen.programs(robot, Options(functions=functions))
    programs = [p for p in programs if not p.calls]
    prefix = c_name(robot.name)
    saved = parts.PART_STATEMENTS, parts.SPLIT_ABOVE
    mods, compile_s, peak_mb, cut = {}, {}, {}, {}
    with tempfile.TemporaryDirectory(prefix="soagen-parts-") as tmp:
        os.environ["CC"] = str(peak_wrapper(tmp))
        try:
            for p in programs:              # one function per module: its units' seconds, one gcc's peak memory
                for size in SIZES:
                    parts.PART_STATEMENTS, parts.SPLIT_ABOVE = size, size
                    csource = emit(robot, [p], prefix)
                    cut[size, p.name] = len(csource.parts.get(p.name, [])) + 1
                    folder = Path(tmp) / f"{size}_{p.name}"
                    folder.mkdir()
                    (Path(tmp) / "peak").write_text("")
                    seconds, modname = {}, f"_soagen_parts_{size}_{p.name}"
                    lib = compile_module(csource, folder, modname, COMPILE_ARGS, seconds)
                    mods[size, p.name] = load_extension(lib, modname)
                    compile_s[size, p.name] = seconds[p.name]
                    peak_mb[size, p.name] = max(int(x) for x in (Path(tmp) / "peak").read_text().split()) / 1024
                    print(f"  {p.name}: {cut[size, p.name]} part(s), {seconds[p.name]:.1f} s, "
                          f"{peak_mb[size, p.name]:.0f} MB", file=sys.stderr)
            ns = time_batches(mods, programs, prefix, states(robot, rows), rows)
        finally:
            parts.PART_STATEMENTS, parts.SPLIT_ABOVE = saved
            os.environ.pop("CC", None)
    return robot, [dict(function=p.name, statements=p.ops["statements"],
                        sizes=[dict(part=size, parts=cut[size, p.name], compile_s=compile_s[size, p.name],
                                    peak_mb=peak_mb[size, p.name], ns=ns[size, p.name]) for size in SIZES])
                   for p in programs]


def markdown(results):
    lines = ["# Long functions cut into parts", "",
             "Written by `python benchmarks/parts.py --markdown docs/parts.md`. The same recorded program emitted "
             "whole and cut into parts of at most 2000, 1000 and 500 statements (`soagen.program.parts`), "
             "compiled with the module's flags (`" + " ".join(COMPILE_ARGS) + "`, and `" + " ".join(GCC_LONG_UNIT_ARGS)
             + f"` for a unit of over {LONG_UNIT_STATEMENTS} statements): compile is gcc's seconds summed "
             "over the function's units (a build runs two at once on this 2-core machine), peak the largest "
             "resident memory of one gcc; run: ns per state of `<function>_batch` (256 states, median of 7 "
             "rounds, the variants interleaved). One run on a shared 2-core machine: compare within a row.", ""]
    for key, robot, rows in results:
        lines += [f"## {key} (nv = {robot.nv})", "",
                  "| function | statements | part size | parts | compile s | peak MB | ns per call | run / whole |",
                  "|---|---:|---:|---:|---:|---:|---:|---:|"]
        for r in rows:
            whole = r["sizes"][0]["ns"]
            for s in r["sizes"]:
                size = "whole" if s["part"] == WHOLE else s["part"]
                lines.append(f"| {r['function']} | {r['statements']} | {size} | {s['parts']} | {s['compile_s']:.1f} "
                             f"| {s['peak_mb']:.0f} | {s['ns']:.0f} | {s['ns'] / whole:.2f} |")
        lines.append("")
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", nargs="+", choices=sorted(CASES), default=sorted(CASES))
    parser.add_argument("--markdown", help="write the tables here")
    args = parser.parse_args(argv)
    results = [(key, *study(key)) for key in args.robot]
    text = markdown(results)
    print(text)
    if args.markdown:
        Path(args.markdown).write_text(text + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
