"""Compile time against run time per optimization level, per generated function.

    python benchmarks/opt_levels.py --robot panda               # prints, writes nothing
    python benchmarks/opt_levels.py --robot panda talos --markdown docs/opt_levels.md

Each robot's default functions are recorded once; the same C is compiled at -O1, -O2 and
-O3 (the module's other flags unchanged), each function's compile timed on its own, and each
module's functions timed from C on the same states, levels interleaved round after round
(``<function>_batch`` on N rows: a C loop over the scalar function, so Python's call cost is
spread over N).  Single runs on this kind of machine swing 1.5-2x: compare levels within a
row, which were measured together.  The benchmark prints; it asserts nothing.
"""
from __future__ import annotations

import argparse
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
from soagen.options import Options, jobs  # noqa: E402
from soagen.targets.c99.compile import compile_args, compile_module, load_extension  # noqa: E402
from soagen.targets.c99.emit import emit  # noqa: E402

LEVELS = ("O1", "O2", "O3")
ROBOTS = {
    "panda": lambda: soagen.robots.example("panda"),
    "talos": lambda: soagen.load_urdf(soagen.robots.path("talos_reduced"), floating_base=True,
                                      tips=["gripper_left_base_link", "gripper_right_base_link"]),
}


def time_batches(mods, programs, robot, rows=256, rounds=7):
    """ns per state of each function in each module, levels interleaved, median over rounds."""
    rng = np.random.default_rng(0)
    states = [robot.random_state(rng) for _ in range(rows)]
    args = {"q": np.array([s[0] for s in states]), "qd": np.array([s[1] for s in states]),
            "qdd": np.array([s[2] for s in states]), "tau": np.array([s[3] for s in states])}
    m = len(robot.tips)
    args["f"], args["u"] = rng.normal(size=(rows, 6 * m)), rng.normal(size=(rows, 6 * m))
    out = {(p.name, lv): [] for p in programs for lv in mods}
    for _ in range(rounds):
        for p in programs:
            ins = [np.ascontiguousarray(args[a.name]) for a in p.inputs]
            for lv, mod in mods.items():
                ffi, lib = mod.ffi, mod.lib
                fn = getattr(lib, f"{robot_name(robot)}_{p.name}_batch")
                outs = [np.empty((rows, a.size)) for a in p.outputs]
                ptrs = [ffi.from_buffer("double[]", a) for a in ins + outs]
                fn(rows, *ptrs)                                   # warm
                t0 = time.perf_counter()
                fn(rows, *ptrs)
                out[p.name, lv].append((time.perf_counter() - t0) / rows * 1e9)
    return {k: statistics.median(v) for k, v in out.items()}


def robot_name(robot):
    from soagen.targets.common.inert import c_name

    return c_name(robot.name)


def study(key):
    robot = ROBOTS[key]()
    print(f"{robot.name}: nv = {robot.nv}; recording the default functions ({jobs()} workers)", file=sys.stderr)
    programs, _ = codegen.programs(robot, Options())
    name = robot_name(robot)
    csource = emit(robot, programs, name)
    mods, compile_s = {}, {}
    with tempfile.TemporaryDirectory(prefix="soagen-opt-") as tmp:
        for lv in LEVELS:
            seconds = {}
            folder = Path(tmp) / lv
            folder.mkdir()
            lib = compile_module(csource, folder, f"_soagen_opt_{name}_{lv}", compile_args(Options(optimize=lv)),
                                 seconds)
            compile_s[lv] = seconds
            mods[lv] = load_extension(lib, f"_soagen_opt_{name}_{lv}")
            print(f"  -{lv}: compiled, {sum(seconds.values()):.1f} s summed", file=sys.stderr)
        ns = time_batches(mods, programs, robot)
    rows = []
    for p in programs:
        rows.append(dict(function=p.name, statements=p.ops["statements"],
                         compile={lv: compile_s[lv][p.name] for lv in LEVELS},
                         ns={lv: ns[p.name, lv] for lv in LEVELS}))
    return robot, rows


def markdown(results):
    lines = ["# Compile time and run time per optimization level", "",
             "Written by `python benchmarks/opt_levels.py --robot " + " ".join(k for k, _, _ in results)
             + " --markdown docs/opt_levels.md`. Compile: seconds of gcc on the function's own translation unit "
             "(the module's flags, `-O` level replaced); run: ns per state of `<function>_batch` (a C loop over the "
             "scalar function, 256 states, median of 7 interleaved rounds). One run on a shared 2-core machine; "
             "compare the levels within a row.", ""]
    for key, robot, rows in results:
        lines += [f"## {robot.name} (nv = {robot.nv})", "",
                  "| function | statements | compile s -O1 / -O2 / -O3 | ns -O1 / -O2 / -O3 | -O1 run / -O3 run |",
                  "|---|---:|---|---|---:|"]
        for r in rows:
            c, n = r["compile"], r["ns"]
            lines.append(f"| {r['function']} | {r['statements']} | {c['O1']:.2f} / {c['O2']:.2f} / {c['O3']:.2f} | "
                         f"{n['O1']:.0f} / {n['O2']:.0f} / {n['O3']:.0f} | {n['O1'] / n['O3']:.2f} |")
        tot = {lv: sum(r["compile"][lv] for r in rows) for lv in LEVELS}
        lines += ["", f"Compile time summed: -O1 {tot['O1']:.1f} s, -O2 {tot['O2']:.1f} s, -O3 {tot['O3']:.1f} s.",
                  ""]
    return "\n".join(lines)


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--robot", nargs="+", choices=sorted(ROBOTS), default=["panda"])
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
