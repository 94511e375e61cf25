"""One function of two generated C files timed interleaved: a before/after figure for a
generator change, without Pinocchio or a build (the C of ``soagen generate``).

    git stash; soagen generate ROBOT ... --function F --name r --out /tmp/old; git stash pop
    soagen generate ROBOT ... --function F --name r --out /tmp/new
    python benchmarks/ab.py /tmp/old/r.c /tmp/new/r.c r F [--calls 200] [--floating]
    python benchmarks/ab.py /tmp/new/r.c /tmp/new/r.c r F --new-flags="-O2 -march=native"

Both files are compiled with the flags of ``soagen.build`` for a long unit (-O3 -march=native
-ffp-contract=fast and gcc's long-unit parameters) into one driver, which times ``calls`` calls of
each over 64 states (inputs uniform in [-3, 3]; ``--floating``: q[3:7], the free-flyer's
quaternion, normalized), the two in alternating order, in 61 rounds; ``--new-flags`` compiles the
"new" file with other flags instead (one C file twice: a figure for a compiler flag).  Printed: the
median ns per call of each, the median of the per-round ratios new/old with its interquartile range,
and the largest relative difference of the outputs of the last call (the two must agree).  One
machine, one run: compare only what is measured together.
"""
from __future__ import annotations

import argparse
import concurrent.futures
import os
import re
import subprocess
import tempfile

from soagen.targets.common.compiler import GCC_LONG_UNIT_ARGS

ROUNDS = 61
STATES = 64
FLAGS = ["-O3", "-std=c99", "-march=native", "-ffp-contract=fast", "-DNDEBUG", *GCC_LONG_UNIT_ARGS]


def signature(header, prefix, function):
    """(return type, [(is_input, name, size)]) of ``prefix_function`` in the header text."""
    m = re.search(rf"(void|int) {prefix}_{function}\(([^)]*)\);", header)
    if m is None:
        raise SystemExit(f"{prefix}_{function} is not in the header")
    args = []
    for a in m.group(2).split(","):
        mm = re.match(r"(const )?(?:double|float) (\w+)\[(\d+)\]", a.strip())
        args.append((bool(mm.group(1)), mm.group(2), int(mm.group(3))))
    return m.group(1), args


def renamed(source, prefix, tag, work):
    """The C file with its functions renamed ``tag_prefix_…`` and its includes dropped."""
    text = open(source).read().replace(f"{prefix}_", f"{tag}_{prefix}_")
    path = os.path.join(work, f"{tag}.c")
    with open(path, "w") as f:
        f.write(re.sub(r'#include "[^"]*"', "", text))
    return path


def driver(ret, args, prefix, function, calls, floating):
    """C source of the timing driver."""
    ins = [(n, s) for i, n, s in args if i]
    outs = [(n, s) for i, n, s in args if not i]
    proto = lambda tag: (f"{ret} {tag}_{prefix}_{function}("
                         + ", ".join(("const " if i else "") + f"double {n}[{s}]" for i, n, s in args) + ");")
    call = lambda tag: (f"{tag}_{prefix}_{function}("
                        + ", ".join([f"{n} + {s} * (c & {STATES - 1})" for n, s in ins] + [f"{tag}_{n}" for n, _ in outs])
                        + ");")
    loop = lambda tag: f"for (int c = 0; c < {calls}; ++c) {call(tag)}"
    norm = ""
    if floating:
        norm = (f"  for (int k = 0; k < {STATES}; ++k) {{ double *x = q + {dict(ins)['q']} * k + 3, r = 0;"
                " for (int i = 0; i < 4; ++i) r += x[i] * x[i]; r = sqrt(r);"
                " for (int i = 0; i < 4; ++i) x[i] /= r; }\n")
    diff = "".join(f"  for (int i = 0; i < {s}; ++i) {{ double d = fabs(old_{n}[i] - new_{n}[i]) / (1 + fabs(old_{n}[i]));"
                   f" if (d > maxdiff) maxdiff = d; }}\n" for n, s in outs)
    return f"""#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
{proto("old")}
{proto("new")}
static double now(void) {{ struct timespec t; clock_gettime(CLOCK_MONOTONIC, &t); return t.tv_sec + 1e-9 * t.tv_nsec; }}
static int cmp(const void *a, const void *b) {{ double x = *(const double *)a, y = *(const double *)b; return x < y ? -1 : x > y; }}
int main(void) {{
{"".join(f"  static double {n}[{STATES} * {s}];" + chr(10) for n, s in ins)}\
{"".join(f"  static double old_{n}[{s}], new_{n}[{s}];" + chr(10) for n, s in outs)}\
  srand(1);
{"".join(f"  for (int i = 0; i < {STATES} * {s}; ++i) {n}[i] = 6.0 * rand() / RAND_MAX - 3.0;" + chr(10) for n, s in ins)}\
{norm}\
  double ratio[{ROUNDS}], t_old[{ROUNDS}], t_new[{ROUNDS}], maxdiff = 0;
  for (int k = 0; k < {ROUNDS}; ++k) {{
    double t0 = now();
    if (k % 2) {{ {loop("old")} }} else {{ {loop("new")} }}
    double t1 = now();
    if (k % 2) {{ {loop("new")} }} else {{ {loop("old")} }}
    double t2 = now();
    t_old[k] = k % 2 ? t1 - t0 : t2 - t1;
    t_new[k] = k % 2 ? t2 - t1 : t1 - t0;
    ratio[k] = t_new[k] / t_old[k];
  }}
{diff}\
  qsort(ratio, {ROUNDS}, sizeof(double), cmp); qsort(t_old, {ROUNDS}, sizeof(double), cmp); qsort(t_new, {ROUNDS}, sizeof(double), cmp);
  printf("{function}: old %.0f ns, new %.0f ns, new/old %.3f (IQR %.3f-%.3f), max rel diff %.2g\\n",
         t_old[{ROUNDS // 2}] / {calls} * 1e9, t_new[{ROUNDS // 2}] / {calls} * 1e9, ratio[{ROUNDS // 2}],
         ratio[{ROUNDS // 4}], ratio[{3 * ROUNDS // 4}], maxdiff);
  return 0;
}}
"""


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("old", help="the generated C file before")
    parser.add_argument("new", help="the generated C file after")
    parser.add_argument("prefix", help="the C prefix (--name of soagen generate)")
    parser.add_argument("function", help="the function, without the prefix")
    parser.add_argument("--calls", type=int, default=200, help="calls of each per round")
    parser.add_argument("--floating", action="store_true", help="normalize q[3:7], a free-flyer's quaternion")
    parser.add_argument("--new-flags", help="gcc flags for the new file instead of soagen.build's (one string)")
    a = parser.parse_args()
    ret, args = signature(open(a.old[:-2] + ".h").read(), a.prefix, a.function)
    with tempfile.TemporaryDirectory() as work:
        units = [renamed(a.old, a.prefix, "old", work), renamed(a.new, a.prefix, "new", work)]
        flags = [FLAGS, FLAGS if a.new_flags is None else a.new_flags.split()]
        compile_ = lambda p, f: subprocess.run(["gcc", *f, "-c", p, "-o", p[:-2] + ".o"], check=True)
        with concurrent.futures.ThreadPoolExecutor(2) as pool:
            list(pool.map(compile_, units, flags))
        main_c = os.path.join(work, "driver.c")
        with open(main_c, "w") as f:
            f.write(driver(ret, args, a.prefix, a.function, a.calls, a.floating))
        exe = os.path.join(work, "driver")
        subprocess.run(["gcc", "-O2", main_c, *(u[:-2] + ".o" for u in units), "-o", exe, "-lm"], check=True)
        subprocess.run([exe], check=True)


if __name__ == "__main__":
    main()
