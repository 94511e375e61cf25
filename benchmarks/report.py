"""Markdown of a benchmark run: the timing tables, the notes, docs/benchmarks.md."""
from __future__ import annotations

import datetime
import os
import platform
import re
import shlex
import sys
from pathlib import Path

import numpy as np

import soagen_side as sg
from backends import BATCH_ROWS, CASADI_MAP, CFLAGS, CHECK_STATES, PIN_MAP, sh
from specs import SPECS

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"


def fmt_ns(x):
    return "n/a" if x is None else (f"{x:.0f}" if x >= 100 else f"{x:.1f}")


def fmt_ratio(a, b):
    return "n/a" if a is None or b is None else f"{a / b:.2f}"


def machine_info(casadi):
    """CPU, compilers, versions and date, as a list of markdown bullet lines."""
    cpu, flags = "unknown", []
    try:
        info = Path("/proc/cpuinfo").read_text()
        cpu = re.search(r"model name\s*:\s*(.*)", info).group(1).strip()
        flags = [f for f in ("avx2", "fma", "avx512f") if f in re.search(r"flags\s*:(.*)", info).group(1).split()]
    except (OSError, AttributeError):
        pass

    def first(cmd):
        return sh(cmd).stdout.splitlines()[0]

    try:
        import pinocchio
        pin_v = pinocchio.__version__
    except ImportError:
        pin_v = "not installed"
    return [f"- CPU: {cpu} ({os.cpu_count()} logical cores; {', '.join(flags) or 'no avx2/fma/avx512f'}); "
            f"{platform.system()} {platform.release()}",
            f"- C compiler: {first(['gcc', '--version'])}; C++: {first(['g++', '--version'])}",
            f"- Python {platform.python_version()}, numpy {np.__version__}, soagen {sg.version}, "
            f"Pinocchio (pin wheel) {pin_v}, CasADi {casadi}",
            f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}"]


def main_table(soagen, pin, cas):
    """Rows of the timing table: every soagen function; Pinocchio's alternative routes
    for the same quantity on extra rows (″) under it."""
    lines = ["| function | soagen ns/call | Pinocchio call | Pinocchio ns/call | soagen/Pinocchio "
             "| CasADi ns/call | soagen/CasADi | generation s | gcc -O2 -c s |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for fn in soagen["functions"]:
        ns = soagen["timings"][fn][0]
        labels = [label for f, label, _ in PIN_MAP if f == sg.family(fn)] or [None]
        labels = labels if fn == sg.family(fn) else labels[:1]
        p = pin["timings"][labels[0]][0] if pin and labels[0] else None
        c = cas["timings"][CASADI_MAP[sg.family(fn)]][0] if cas and sg.family(fn) in CASADI_MAP else None
        cc = f"{soagen['cc_per'][fn]:.2f}" if fn in soagen["cc_per"] else "n/a"
        lines.append(f"| {fn} | {fmt_ns(ns)} | {labels[0] or '—'} | {fmt_ns(p)} | {fmt_ratio(ns, p)} "
                     f"| {fmt_ns(c)} | {fmt_ratio(ns, c)} | {soagen['gen'][fn]:.2f} | {cc} |")
        for label in labels[1:]:
            p = pin["timings"][label][0] if pin else None
            lines.append(f"| ″ | {fmt_ns(ns)} | {label} | {fmt_ns(p)} | {fmt_ratio(ns, p)} | | | | |")
    return lines


def python_table(soagen, py):
    lines = ["| function | C loop ns/call | Python single call ns (calls/s) | Python batch N=10000 ns/state "
             "| batch / C loop | batch into `out=` ns/state | `out=` / C loop |", "|---|---:|---:|---:|---:|---:|---:|"]
    for fn, (single, batch, reused) in py.items():
        if fn not in soagen["timings"]:
            continue
        c = soagen["timings"][fn][0]
        lines.append(f"| {fn} | {fmt_ns(c)} | {fmt_ns(single)} ({1e9 / single:,.0f}) | {fmt_ns(batch)} "
                     f"| {fmt_ratio(batch, c)} | {fmt_ns(reused)} | {fmt_ratio(reused, c)} |")
    return lines


def report(robot_name, spec, robot, args, soagen, pin, cas, py_build, py, why):
    """Markdown section for one robot."""
    cmd = "python benchmarks/run.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    casadi_v = cas["version"] if cas else "n/a"
    m = len(robot.tips)
    lines = [f"## {robot_name} ({sg.describe(robot)})", "",
             f"Command: `{cmd}`; N = {args.n} random states (seed {args.seed}), "
             f"{args.reps} timed passes, median pass reported, ns per call.", ""]
    lines += machine_info(casadi_v) + [""]
    lines += main_table(soagen, pin, cas) + [""]
    lines += ["Ratios are soagen ns / baseline ns (below 1: soagen is faster). ″ rows: other Pinocchio "
              "routes to the same quantity. generation s: soagen's symbolic stage for that function; "
              "gcc -O2 -c s: compiling its translation unit.", ""]
    if robot.nq != robot.nv or m > 1:
        lines += [f"Here q has nq = {robot.nq} entries (the free-flyer's position and unit quaternion "
                  f"(x, y, z, w)), velocities, accelerations and torques nv = {robot.nv}; Λ is "
                  f"{6 * m}×{6 * m} (the {m} tips stacked, coupling blocks included). "
                  + ("soagen's default functions only (no algorithm variants). " if not spec.variants else "")
                  + "Pinocchio's per-tip calls (computeFrameJacobian, updateFramePlacement, getFrameJacobian) "
                  "are made once per tip and timed together.", ""]
    total_gen = sum(soagen["gen"].values())
    unchecked = [fn for fn, err in soagen["errors"].items() if err is None]
    lines += [f"- soagen generation (sympy stage, record + CSE, summed over functions): {total_gen:.1f} s; "
              f"wall with {sg.jobs()} workers incl. emit: {soagen['gen_wall']:.1f} s",
              f"- `gcc -O2 -c {sg.c_name(robot.name)}.c` (whole file): {soagen['cc_whole']:.2f} s; "
              f"per-function units: {sum(soagen['cc_per'].values()):.2f} s summed (column above)",
              f"- timed builds: soagen and CasADi C with `gcc {' '.join(CFLAGS)}`, Pinocchio "
              f"`g++ {' '.join(CFLAGS)} -DNDEBUG` header-only; outputs of the first {CHECK_STATES} states "
              f"checked against `soagen.reference` (relative error <= {sg.TOLERANCE:g})"
              + (f"; not checked (no reference mapping or no well-conditioned state): {', '.join(unchecked)}"
                 if unchecked else "")]
    if pin:
        worst = max((v for v in pin["errors"].values() if v is not None), default=float("nan"))
        floating = sg.is_floating(robot)
        lines.append(f"- Pinocchio {pin['version']}: URDF parsed "
                     + ("with a `JointModelFreeFlyer` root " if floating else "and reduced (locked joints) ")
                     + "by Pinocchio's Python bindings, handed to `pinocchio_bench.cpp` as a text archive"
                     + ("; states handed over in Pinocchio's conventions and its outputs converted back "
                        "(`soagen.pinocchio_convention`: normalized quaternions, free-flyer [v; ω] ↔ soagen's "
                        "[ω; v] in velocities, torques, M, M⁻¹ and Jacobian columns) before the checks"
                        if floating else "")
                     + f"; crba (LOCAL convention) and computeMinverse fill only the upper triangle (not "
                     f"symmetrised in the timed call; the Λ routes do symmetrise Minv); computeFrameJacobian "
                     f"(LOCAL_WORLD_ALIGNED) includes its kinematics pass; Λ = (J M⁻¹ Jᵀ)⁻¹ with Eigen LLT "
                     f"on {6 * m}×{6 * m}; computeDelassusMatrix (Pinocchio's O(n) Delassus recursion) and "
                     f"ConstraintCholeskyDecomposition (after crba, as in its constraintDynamics) with one "
                     f"CONTACT_6D constraint per tip in the tip's LOCAL frame (Ω, Λ rotated to world-aligned "
                     f"axes outside the timed loop for the check); worst error vs reference {worst:.1e}")
    else:
        lines.append(f"- Pinocchio: n/a — {why['pinocchio']}")
    if cas:
        worst = max((v for v in cas["errors"].values() if v is not None), default=float("nan"))
        lines.append(f"- CasADi {cas['version']}: SX functions of casadi_kin_dyn, generated C compiled "
                     f"`-O3 -march=native`; `gcc -O2 -c` of rnea/crba/aba: "
                     + ", ".join(f"{k} {v:.1f} s" for k, v in cas["cc"].items())
                     + f"; generation (SX build + C codegen, in its venv) {cas['gen_s']:.2f} s"
                     + f"; worst error vs reference {worst:.1e}")
    else:
        lines.append(f"- CasADi: n/a — {why['casadi']}")
    lines += ["", f"Python module (`soagen.build`, cffi, compiled `{' '.join(sg.compile_args())}`; "
              f"build/load {py_build:.1f} s): "
              f"single calls loop over the {args.n} states, batch = one call on {BATCH_ROWS} states, median of 15 back to back "
              "(a fresh result array per call, or `out=` reusing one; large fresh arrays come from the "
              "kernel as new pages, which costs per call what streaming the rows out costs).", ""]
    lines += python_table(soagen, py)
    return "\n".join(lines) + "\n"


PREAMBLE = """# Benchmarks

soagen's generated C against Pinocchio (C++) and CasADi-generated C (via casadi_kin_dyn) on the
same random states, with every backend's outputs checked against `soagen.reference` first.
Reproduce with `python benchmarks/run.py --robot all` (or `--robot panda` / `--robot ur5` /
`--robot talos`, which rewrite only their own section below; `--help` for N, repetitions, seed).
talos is the humanoid of the multi-dof issue (example-robot-data's `talos_reduced.urdf` with a
free-flyer root, both hands as tips).

Needs gcc/g++; talos needs the `example-robot-data` wheel; Pinocchio timings need the `pin` wheel
plus `cmeel-eigen` (Eigen headers, which the wheel does not ship), CasADi timings the helper
`benchmarks/casadi_kin_dyn.py`, which makes its own venv (it supports 1-dof joints only, so talos
has no CasADi column). Whatever is missing is reported as n/a with the reason. Numbers are ns per
call, single-threaded, and depend on the machine listed in each section.
"""


def write_doc(robot_name, section):
    """Rewrite docs/benchmarks.md: the preamble, this robot's section, other robots' sections kept."""
    text = DOC.read_text() if DOC.exists() else ""
    blocks = re.findall(r"(<!-- begin (\S+) -->.*?<!-- end \2 -->\n)", text, flags=re.S)
    sections = {name: block for block, name in blocks}
    sections[robot_name] = f"<!-- begin {robot_name} -->\n{section}<!-- end {robot_name} -->\n"
    order = [name for name in SPECS if name in sections] + sorted(set(sections) - set(SPECS))
    DOC.write_text(PREAMBLE + "".join("\n" + sections[name] for name in order))


