"""How much of a generated function's time is its sines and cosines of q.

    python benchmarks/trig_share.py [FUNCTION...]     # default: centroidal_momentum_matrix

The TALOS with its two feet as tips (build_times.py's talos_feet) is built twice, as generated and
with cos/sin of q as inputs (``trig_inputs=True``); each function's ``_batch`` is timed from C on the
same 1000 states, the two builds interleaved over 31 rounds (medians); the difference is the time of
the trig.  One run on a shared machine: compare within a line.  It prints; it asserts nothing."""
import statistics, sys, time
import numpy as np
import soagen
sys.path.insert(0, str(__import__("pathlib").Path(__file__).resolve().parent))
from build_times import LEGGED_ROBOTS, erd_robots
rel, floating, tips = LEGGED_ROBOTS["talos_feet"]
robot = soagen.load_urdf(str(erd_robots() / rel), tips=tips, floating_base=floating)
fns = sys.argv[1:] or ["centroidal_momentum_matrix"]
mods = {t: soagen.build(robot, functions=fns, trig_inputs=t) for t in (False, True)}
rng = np.random.default_rng(0)
Q = np.array([robot.random_configuration(rng) for _ in range(1000)])
QD = rng.normal(size=(1000, robot.nv))
for fn in fns:
    res = {False: [], True: []}
    for _ in range(31):
        for t, mod in mods.items():
            sig = mod._sig[fn]
            args = {"q": Q, "qd": QD, "cq": np.cos(Q), "sq": np.sin(Q)}
            ins = [np.ascontiguousarray(args[a]) for a, _ in sig if a in args]
            outs = [np.empty((1000, size)) for a, size in sig if a not in args]
            ffi, lib = mod._lib.ffi, mod._lib.lib
            f = getattr(lib, f"{mod.name}_{fn}_batch")
            ptrs = [ffi.from_buffer("double[]", a) for a in ins + outs]
            f(1000, *ptrs)
            t0 = time.perf_counter(); f(1000, *ptrs); res[t].append((time.perf_counter() - t0) / 1000 * 1e9)
    a, b = statistics.median(res[False]), statistics.median(res[True])
    print(f"{fn}: {a:.0f} ns as generated, {b:.0f} ns with cos/sin as inputs: trig {a - b:.0f} ns ({(a - b) / a:.0%})")
