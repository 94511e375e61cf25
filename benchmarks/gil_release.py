#!/usr/bin/env python3
"""How long other Python threads wait while a module method runs a batch, and what releasing
the GIL costs the call: the figures behind the C entry's rule (fastcall.c: a batch releases the
GIL once it has held it for one switch interval, ``sys.getswitchinterval()``).

    python benchmarks/gil_release.py --robot panda --function inverse_dynamics

Per batch size (rows of seeded random states): the call alone through the C entry and through
the method's Python path (cffi's batch call, which releases the GIL for the whole call), median
of 5; then the call with another thread spinning in Python beside it: the call's time and the
longest the spinning thread went without running (a thread held off for the whole call waits
as long as the call).  Last, the C entry's batch against the cffi batch, bit for bit.
"""
from __future__ import annotations

import argparse
import statistics
import sys
import threading
import time

import numpy as np
from specs import SPECS

import soagen
from soagen import functions as F

ROWS = (1_000, 10_000, 30_000, 100_000, 400_000)


def arguments(mod, name, rows, rng):
    """(N, size) random inputs of ``name`` (q drawn as uniform angles: the benchmarked robots have 1-dof joints)."""
    return [rng.uniform(-2.0, 2.0, (rows, size)) for _, size in mod._sig[name][:len(F.BY_NAME[name].inputs)]]


def alone(call, args, reps=5):
    """Median seconds of ``call(*args)``."""
    times = []
    for _ in range(reps):
        t0 = time.perf_counter()
        call(*args)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def beside_a_busy_thread(call, args):
    """(seconds of ``call(*args)``, the longest seconds a thread spinning in Python meanwhile did not run)."""
    ticks, done = [], threading.Event()

    def spin():
        while not done.is_set():
            ticks.append(time.perf_counter())

    thread = threading.Thread(target=spin)
    thread.start()
    time.sleep(0.02)
    t0 = time.perf_counter()
    call(*args)
    t1 = time.perf_counter()
    done.set()
    thread.join()
    inside = [t for t in ticks if t0 <= t <= t1]
    return t1 - t0, float(np.diff([t0, *inside, t1]).max())


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", choices=sorted(SPECS), default="panda")
    parser.add_argument("--function", default="inverse_dynamics")
    args = parser.parse_args(argv)
    robot = SPECS[args.robot].robot()
    mod = soagen.build(robot, functions=[args.function])
    method = getattr(mod, args.function)
    rng = np.random.default_rng(0)
    print(f"{args.robot}, {args.function}; switch interval {sys.getswitchinterval() * 1e3:.1f} ms")
    for rows in ROWS:
        inputs = arguments(mod, args.function, rows, rng)
        fast, cffi = alone(method, inputs), alone(method.__wrapped__, inputs)
        busy, wait = beside_a_busy_thread(method, inputs)
        print(f"{rows:>7} rows: alone {fast * 1e3:8.2f} ms (cffi batch {cffi * 1e3:8.2f} ms); beside a busy thread "
              f"{busy * 1e3:8.2f} ms, the thread's longest wait {wait * 1e3:6.2f} ms")
    inputs = arguments(mod, args.function, ROWS[-1], rng)
    same = all(np.array_equal(a, b) for a, b in zip(*(r if isinstance(r, tuple) else (r,)
                                                       for r in (method(*inputs), method.__wrapped__(*inputs)))))
    print(f"the C entry's batch is the cffi batch bit for bit: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
