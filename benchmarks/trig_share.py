"""How much of a generated function's time is its sines and cosines of q.

    python benchmarks/trig_share.py [FUNCTION...]                              # prints
    python benchmarks/trig_share.py --markdown docs/trig_share.md              # and writes the page

The TALOS with its two feet as tips (build_times.py's talos_feet) is built twice, as generated and
with cos/sin of q as inputs (``trig_inputs=True``); each function's ``_batch`` is timed from C on the
same 1000 states, the two builds interleaved over 101 rounds (medians); the difference is the time of
the trig.  One run on a shared machine: compare within a line.  It prints; it asserts nothing."""
import argparse
import statistics
import sys
import time
from pathlib import Path

import numpy as np

import soagen

sys.path.insert(0, str(Path(__file__).resolve().parent))
from build_times import LEGGED_ROBOTS, erd_robots  # noqa: E402

ROWS, ROUNDS = 1000, 101


def line(fn, a, b):
    """The printed line of one function: ns as generated, ns with cos/sin as inputs."""
    return f"{fn}: {a:.0f} ns as generated, {b:.0f} ns with cos/sin as inputs: trig {a - b:.0f} ns ({(a - b) / a:.0%})"


def measure(fns):
    rel, floating, tips = LEGGED_ROBOTS["talos_feet"]
    robot = soagen.load_urdf(str(erd_robots() / rel), tips=tips, floating_base=floating)
    mods = {t: soagen.build(robot, functions=fns, trig_inputs=t) for t in (False, True)}
    rng = np.random.default_rng(0)
    Q = np.array([robot.random_configuration(rng) for _ in range(ROWS)])
    QD = rng.normal(size=(ROWS, robot.nv))
    lines = []
    for fn in fns:
        res = {False: [], True: []}
        for _ in range(ROUNDS):
            for t, mod in mods.items():
                sig = mod._sig[fn]
                args = {"q": Q, "qd": QD, "cq": np.cos(Q), "sq": np.sin(Q)}
                ins = [np.ascontiguousarray(args[a]) for a, _ in sig if a in args]
                outs = [np.empty((ROWS, size)) for a, size in sig if a not in args]
                ffi, lib = mod._lib.ffi, mod._lib.lib
                f = getattr(lib, f"{mod.name}_{fn}_batch")
                ptrs = [ffi.from_buffer("double[]", a) for a in ins + outs]
                f(ROWS, *ptrs)
                t0 = time.perf_counter()
                f(ROWS, *ptrs)
                res[t].append((time.perf_counter() - t0) / ROWS * 1e9)
        lines.append(line(fn, statistics.median(res[False]), statistics.median(res[True])))
        print(lines[-1])
    return lines


def markdown(lines):
    return "\n".join([
        "# The time of the sines and cosines", "",
        "Written by `python benchmarks/trig_share.py --markdown docs/trig_share.md`. The TALOS with its two "
        "feet as tips (`talos_feet`, floating base) built twice, as generated and with cos/sin of q as inputs "
        f"(`trig_inputs=True`); each function's `_batch` timed from C on the same {ROWS} states, the two "
        f"builds interleaved over {ROUNDS} rounds (medians); the difference is the time of the trig. One run "
        "on a shared 2-core machine: compare within a line.", "",
        *[f"- {text}" for text in lines], ""])


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("functions", nargs="*", default=["centroidal_momentum_matrix"])
    parser.add_argument("--markdown", help="write the lines here as a page")
    args = parser.parse_args(argv)
    lines = measure(args.functions)
    if args.markdown:
        Path(args.markdown).write_text(markdown(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
