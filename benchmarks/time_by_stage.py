"""Where one generated function spends its run time: the share of CPU samples in each stage of its C.

    python benchmarks/time_by_stage.py talos_feet contact_dynamics_derivatives [--calls N] [--markdown FILE]

The function of a benchmarked robot (``benchmarks/specs.py``) is generated alone, compiled with the
flags of ``soagen.build`` for a long unit plus ``-g``, and called ``calls`` times on 64 random states
(inputs uniform in [-3, 3], a free-flyer's quaternion normalized) under ``perf record``; each sample's
source line is attributed to the banner above it in the C (``/* ==== … */``: a stage of the maker,
``/* ---- … */``: a pass inside it; a column loop is one stage).  Printed: a Markdown table of the
shares, largest first, with the statements and operations of each stage counted in the C text, so
that a stage's time can be set beside its size.  Needs ``perf`` (linux-perf) with access to the CPU's
sampling; shares, not times: they hold on a shared machine where absolute times do not.
"""
from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))

import soagen  # noqa: E402
from ab import STATES, signature  # noqa: E402
from soagen.codegen import generate  # noqa: E402
from soagen.program.statements import Banner, Guard, count_ops  # noqa: E402
from soagen.targets.common.compiler import GCC_LONG_UNIT_ARGS  # noqa: E402
from simd import cpu_model  # noqa: E402
from specs import SPECS  # noqa: E402

FLAGS = ["-O3", "-g", "-std=c99", "-march=native", "-ffp-contract=fast", "-DNDEBUG", *GCC_LONG_UNIT_ARGS]
BANNER = re.compile(r"^\s*/\* (====|----) (.*?) (====|----) \*/")


def driver(ret, args, prefix, function, calls, floating):
    """C source that calls ``prefix_function`` ``calls`` times on 64 random states."""
    ins = [(n, s) for i, n, s in args if i]
    outs = [(n, s) for i, n, s in args if not i]
    proto = f"{ret} {prefix}_{function}(" + ", ".join(("const " if i else "") + f"double {n}[{s}]" for i, n, s in args) + ");"
    call = (f"{prefix}_{function}(" + ", ".join([f"{n} + {s} * (c & {STATES - 1})" for n, s in ins] + [n for n, _ in outs])
            + ");")
    norm = ""
    if floating:
        norm = (f"  for (int k = 0; k < {STATES}; ++k) {{ double *x = q + {dict(ins)['q']} * k + 3, r = 0;"
                " for (int i = 0; i < 4; ++i) r += x[i] * x[i]; r = sqrt(r); for (int i = 0; i < 4; ++i) x[i] /= r; }\n")
    return (f"#include <math.h>\n#include <stdio.h>\n#include <stdlib.h>\n{proto}\nint main(void) {{\n"
            + "".join(f"  static double {n}[{STATES} * {s}];\n" for n, s in ins)
            + "".join(f"  static double {n}[{s}];\n" for n, s in outs)
            + "  srand(1);\n"
            + "".join(f"  for (int i = 0; i < {STATES} * {s}; ++i) {n}[i] = 6.0 * rand() / RAND_MAX - 3.0;\n" for n, s in ins)
            + norm
            + f"  double sum = 0;\n  for (long c = 0; c < {calls}; ++c) {{ {call} sum += {outs[-1][0]}[0]; }}\n"
            + '  printf("%g\\n", sum);\n  return 0;\n}\n')


def stages(source):
    """[(first line, stage, pass)] of the C text: each level-0 banner opens a stage, each level-1 a pass."""
    out, stage = [], "(start)"
    for number, line in enumerate(source.splitlines(), 1):
        m = BANNER.match(line)
        if m and m.group(1) == "====":
            stage = m.group(2)
            out.append((number, stage, ""))
        elif m:
            out.append((number, stage, m.group(2)))
    return out


def line_shares(exe, work, calls):
    """{source line of r.c: % of the samples} of ``exe``'s run under perf, from perf's sample counts
    (its printed percentages are rounded to 0.01 %: on a long function, thousands of lines of one
    sample each, 0.005 % printed as 0.01 %, added up to over 100 %)."""
    data = os.path.join(work, "perf.data")
    subprocess.run(["perf", "record", "-q", "-o", data, exe], check=True, stdout=subprocess.DEVNULL)
    report = subprocess.run(["perf", "report", "-i", data, "--sort", "srcline", "--stdio", "-q", "-n"],
                            check=True, capture_output=True, text=True).stdout
    return shares_of(report)


def shares_of(report):
    """{line of r.c: % of all samples} from ``perf report --sort srcline -n`` output (percentage,
    sample count, source line per row)."""
    counts, total = {}, 0
    for line in report.splitlines():
        m = re.match(r"\s*[\d.]+%\s+(\d+)\s+(\S+)", line)
        if not m:
            continue
        total += int(m.group(1))
        where = re.fullmatch(r"r\.c:(\d+)", m.group(2))
        if where:
            counts[int(where.group(1))] = counts.get(int(where.group(1)), 0) + int(m.group(1))
    return {line: 100.0 * n / total for line, n in counts.items()}


def operations(expr):
    """mul + add + div + sqrt of one expression (what the benchmark's operations column counts)."""
    count = count_ops(expr)
    return count["mul"] + count["add"] + count["div"] + count["sqrt"]


def stage_sizes(prog):
    """{(stage, pass): [statements, operations]} of a finished program, keyed by the banners' texts
    as the C prints them; counted as :func:`soagen.program.statements.count_program` counts (a
    column loop's body once per column, its statements once), so that the rows add up to it."""
    sizes, stage, step = {}, "(start)", ""

    def add(key, statements, ops):
        entry = sizes.setdefault(key, [0, 0])
        entry[0] += statements
        entry[1] += ops

    for item in prog.body:
        if isinstance(item, Banner) and item.level == 0:
            stage, step = item.text, ""
        elif isinstance(item, Banner) and item.level == 1:
            step = item.text
        elif isinstance(item, tuple):
            add((stage, step), 1, operations(item[1]))
        elif isinstance(item, Guard):
            add((stage, step), 0, operations(item.bound))
    add(("outputs", ""), 0, sum(operations(e) for arg in prog.outputs for e in arg.symbols))
    for loop in prog.loops:
        key = (f"the same on every column j of {', '.join(prog.outputs[i].name for i in loop.arrays)}", "")
        add(key, len(loop.body.statements()),
            len(loop.columns_run) * sum(operations(e) for _, e in loop.body.statements()))
    return sizes


def profile(name, function, calls):
    """Markdown text: the stages of ``function`` for the robot ``name`` with their share of the samples."""
    spec = SPECS[name]
    robot = spec.robot()
    gen = generate(robot, soagen.Options(functions=(function,)), name="r")
    with tempfile.TemporaryDirectory() as work:
        c_path = os.path.join(work, "r.c")
        Path(c_path).write_text(gen.csource.source)
        Path(work, "r.h").write_text(gen.csource.header)
        ret, args = signature(gen.csource.header, "r", function)
        Path(work, "driver.c").write_text(driver(ret, args, "r", function, calls, spec.floating_base))
        subprocess.run(["gcc", *FLAGS, "-c", c_path, "-o", os.path.join(work, "r.o")], check=True, cwd=work)
        exe = os.path.join(work, "driver")
        subprocess.run(["gcc", "-O2", os.path.join(work, "driver.c"), os.path.join(work, "r.o"), "-o", exe, "-lm"],
                       check=True)
        shares = line_shares(exe, work, calls)
    source = gen.csource.source.splitlines()
    marks = stages(gen.csource.source)
    bounds = [m[0] for m in marks] + [len(source) + 1]
    shares_by = {}
    for (first, stage, step), stop in zip(marks, bounds[1:]):
        shares_by[(stage, step)] = shares_by.get((stage, step), 0.0) + sum(
            v for line, v in shares.items() if first <= line < stop)
    sizes = stage_sizes(next(p for p in gen.programs if p.name == function))
    rows = {key: (shares_by.get(key, 0.0), *sizes.get(key, (0, 0))) for key in set(shares_by) | set(sizes)}
    total = sum(shares.values())
    rows[("(no banner)", "the function's entry and exit")] = (total - sum(shares_by.values()), 0, 0)
    lines = [f"## {name}: {function}", "",
             f"Command: `python benchmarks/time_by_stage.py {name} {function} --calls {calls}`; "
             f"{total:.1f}% of the samples fall in the function's source lines "
             "(the rest: the driver, libm, the kernel).", "",
             f"- CPU: {cpu_model()} ({os.cpu_count()} logical cores); gcc `{' '.join(FLAGS)}`", "",
             "| stage | pass | % of samples | statements | operations (mul + add + div + sqrt) |", "|---|---|---:|---:|---:|"]
    for key in sorted(rows, key=lambda k: (-rows[k][0], k)):
        share, st, ops = rows[key]
        lines.append(f"| {key[0]} | {key[1] or '(the stage itself)'} | {share:.1f} | {st} | {ops} |")
    return "\n".join(lines) + "\n"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("robot", choices=sorted(SPECS), help="a benchmarked robot of benchmarks/specs.py")
    parser.add_argument("function", help="a soagen function of that robot")
    parser.add_argument("--calls", type=int, default=20000, help="calls timed under perf")
    parser.add_argument("--markdown", help="append the table to this file")
    a = parser.parse_args()
    if shutil.which("perf") is None:
        raise SystemExit("perf is not installed (apt-get install linux-perf)")
    text = profile(a.robot, a.function, a.calls)
    print(text)
    if a.markdown:
        with open(a.markdown, "a") as f:
            f.write("\n" + text)


if __name__ == "__main__":
    main()
