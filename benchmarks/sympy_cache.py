"""Recording time and memory with sympy's default cache (1000 entries) and with soagen's (100 000).

    python benchmarks/sympy_cache.py [--rounds R] [--markdown FILE]

sympy memoises its constructors in LRU caches of ``SYMPY_CACHE_SIZE`` entries, read when sympy is
first imported; ``import soagen`` sets 100 000 unless the variable is set.  Each measurement is a
fresh process (``SYMPY_CACHE_SIZE`` given, ``SOAGEN_JOBS=1``, an empty build cache) that records and
finishes every program of one build, ``soagen.codegen.programs``, without emitting or compiling:
the CPU seconds of that call and the process's peak resident memory.  The two sizes alternate,
robot by robot and round by round, so that both meet the same machine.  Prints a Markdown table
(medians over the rounds); timings, not assertions.
"""
from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

from build_times import LEGGED_ROBOTS, erd_robots  # noqa: E402
from simd import cpu_model  # noqa: E402

SIZES = ("1000", "100000")
#: label -> what the child process builds: (robot, functions or None for the default ones)
CASES = {
    "panda (default functions)": ("panda", None),
    "solo12, four point feet (soagen.functions.LEGGED)": ("solo12_feet", "legged"),
    "panda (every variant)": ("panda", "variants"),
}


def child(case):
    """Record one build in this process (the size is already in the environment); print one JSON line."""
    import resource

    import soagen
    from soagen import codegen

    name, functions = CASES[case]
    if name == "panda":
        robot = soagen.robots.example("panda")
    else:
        rel, floating, tips = LEGGED_ROBOTS[name]
        robot = soagen.load_urdf(str(erd_robots() / rel), floating_base=floating,
                                 tips=[soagen.point_tip(t[1]) if isinstance(t, tuple) else t for t in tips])
    if functions == "legged":
        from soagen.functions import LEGGED
        options = soagen.Options(functions=tuple(LEGGED))
    elif functions == "variants":
        options = soagen.Options(variants=None)
    else:
        options = soagen.Options()
    import sympy.core.cache
    t0 = time.process_time()
    programs, _ = codegen.programs(robot, options)
    seconds = time.process_time() - t0
    print(json.dumps({"seconds": seconds, "rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
                      "size": sympy.core.cache.SYMPY_CACHE_SIZE, "programs": len(programs)}))


def measure(case, size):
    with tempfile.TemporaryDirectory(prefix="soagen-sympy-cache-") as cache:
        env = {**os.environ, "SYMPY_CACHE_SIZE": size, "SOAGEN_JOBS": "1", "SOAGEN_CACHE": cache}
        out = subprocess.run([sys.executable, __file__, "--child", case], env=env, check=True,
                             capture_output=True, text=True).stdout
    row = json.loads(out.strip().splitlines()[-1])
    if str(row["size"]) != size:
        raise SystemExit(f"the child ran with cache size {row['size']}, not {size}")
    return row


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--markdown", help="write the table to this file")
    parser.add_argument("--child", help=argparse.SUPPRESS)
    a = parser.parse_args()
    if a.child:
        return child(a.child)
    rows = {(case, size): [] for case in CASES for size in SIZES}
    for r in range(a.rounds):
        for case in CASES:
            for size in (SIZES if r % 2 == 0 else SIZES[::-1]):
                rows[case, size].append(measure(case, size))
    lines = ["# Recording with sympy's cache at 1000 and at 100 000 entries", "",
             f"Command: `python benchmarks/sympy_cache.py --rounds {a.rounds}` ({time.strftime('%Y-%m-%d %H:%M UTC', time.gmtime())}; "
             f"{cpu_model()}, {os.cpu_count()} logical cores). Each entry: a fresh process, "
             "`SOAGEN_JOBS=1`, an empty build cache, `soagen.codegen.programs` (record + CSE of every "
             "program of the build, nothing emitted or compiled); CPU seconds of that call and the process's "
             "peak resident memory, medians over the rounds, the two sizes alternating.", "",
             "| build | programs | s at 1000 | s at 100 000 | ratio | MB at 1000 | MB at 100 000 |",
             "|---|---:|---:|---:|---:|---:|---:|"]
    for case in CASES:
        old, new = rows[case, SIZES[0]], rows[case, SIZES[1]]
        t_old, t_new = (statistics.median(x["seconds"] for x in v) for v in (old, new))
        m_old, m_new = (statistics.median(x["rss_mb"] for x in v) for v in (old, new))
        ratios = sorted(n["seconds"] / o["seconds"] for o, n in zip(old, new))
        lines.append(f"| {case} | {new[0]['programs']} | {t_old:.1f} | {t_new:.1f} | {t_new / t_old:.2f} "
                     f"(rounds {ratios[0]:.2f}–{ratios[-1]:.2f}) | {m_old:.0f} | {m_new:.0f} |")
    text = "\n".join(lines) + "\n"
    print(text)
    if a.markdown:
        Path(a.markdown).write_text(text)


if __name__ == "__main__":
    main()
