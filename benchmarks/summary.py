"""From measurements to the report: ratios per round, Pinocchio's routes ordered, the notes."""
from __future__ import annotations

import datetime
import os
import platform
import re
from pathlib import Path

import numpy as np

import soagen_side as sg
from backends import BATCH_ROWS, CASADI_MAP, CFLAGS, PIN_MAP, sh
from casadi_opcounts import count_instructions
from soagen.targets.common.compiler import GCC_LONG_UNIT_ARGS, LONG_UNIT_STATEMENTS
from report import Baseline, PythonRow, RobotReport, Row, Spread


def load_average():
    """The 1-minute load average (None where /proc/loadavg is missing)."""
    try:
        return float(Path("/proc/loadavg").read_text().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def machine_info(casadi, load_start):
    """CPU, compilers, versions, date and load, as markdown bullet lines."""
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
            f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}; load "
            f"average (1 min, {os.cpu_count()} logical cores) {load_start} at the start of the run, "
            f"{load_average()} at its end"]


def baselines(fn, run, available, libm):
    """(Pinocchio baselines fastest first, CasADi baseline or None) of soagen function ``fn``."""
    own = run.timed["soagen", fn].ns
    family = sg.family(fn)

    def baseline(backend, name):
        t = run.timed[backend, name]
        return Baseline(backend, name, t.calls, t.median, Spread.ratio(own, t.ns),
                        Spread.ratio(libm, t.ns) if libm is not None else None)

    pins = []
    if "pinocchio" in available:
        pins = sorted((baseline("pinocchio", label) for f, label, _ in PIN_MAP if f == family),
                      key=lambda b: b.ns)
        if fn != family:
            pins = pins[:1]            # a variant row: against the headline route only
    cas = baseline("casadi", CASADI_MAP[family]) if "casadi" in available and family in CASADI_MAP else None
    return pins, cas


def summarize(robot_name, command, args, robot, spec, soagen, run, errors, infos, why, python, seconds,
              load_start=None, reference_upto=None):
    """The :class:`RobotReport` of one run.

    soagen : backends.SoagenBuild; run : backends.DriverRun; errors : {backend: {entry: error}}
    (backends whose outputs were wrong are absent); infos : {backend: Backend.info};
    why : {backend: reason it is n/a}; python : (build seconds or None, {function: ns triple});
    reference_upto : the states checked against the reference (the others against Pinocchio), None: all.
    """
    available = set(errors)
    rows = []
    for f in soagen.functions:
        libm = run.timed["soagen_libm", f.name].ns if "soagen_libm" in available else None
        pins, cas = baselines(f.name, run, available, libm)
        rows.append(Row(f.name, sg.family(f.name), run.timed["soagen", f.name].median,
                        float(np.median(libm)) if libm is not None else None, f.operations, f.seconds,
                        soagen.cc_per.get(f.name), pins, cas))
    m = len(robot.tips)
    notes = [f"- soagen generation (sympy stage, record + CSE, summed over functions): "
             f"{sum(f.seconds for f in soagen.functions):.1f} s; wall with {sg.jobs()} workers incl. emit: "
             f"{soagen.gen_wall:.1f} s (the trig-inputs form is generated again for the libm columns)",
             f"- `gcc -O2 -c {sg.c_name(robot.name)}.c` (whole file): {soagen.cc_whole:.2f} s; per-function "
             f"units: {sum(soagen.cc_per.values()):.2f} s summed (table below)",
             f"- timed builds: soagen's C as `soagen.build` compiles it, `gcc {' '.join(sg.compile_args())}`, a "
             f"translation unit per function (or per part of a cut one), a unit of over {LONG_UNIT_STATEMENTS} "
             f"statements with `{' '.join(GCC_LONG_UNIT_ARGS)}`; CasADi's C with `gcc {' '.join(CFLAGS)}`, Pinocchio "
             f"`g++ {' '.join(CFLAGS)} -DNDEBUG` header-only, linked into one driver; outputs of all "
             f"{args.n} states of every timed function checked "
             + (f"against `soagen.reference` (relative error <= {sg.TOLERANCE:g}) after the rounds"
                if reference_upto is None else
                f"after the rounds (relative error <= {sg.TOLERANCE:g}): soagen's and Pinocchio's on the first "
                f"{reference_upto} states against `soagen.reference`, soagen's on the other "
                f"{args.n - reference_upto} against Pinocchio's (the numpy references of the contact "
                f"functions take 0.1–2 s a state)")
             + ("" if not spec.tips_at_rest else
                "; the states' q̇ are projected onto J q̇ = 0 (the tips at rest, as in a rigid contact: "
                "Pinocchio's CONTACT_6D in LOCAL_WORLD_ALIGNED holds a foot's spatial acceleration at zero, "
                "soagen its classical acceleration, the same at rest)")]
    unchecked = sorted({fn for b in ("soagen", "soagen_libm") for fn, e in errors.get(b, {}).items() if e is None})
    if unchecked:
        notes.append(f"- not checked (no reference mapping or no well-conditioned state): {', '.join(unchecked)}")
    if robot.nq != robot.nv or m > 1:
        notes.append(f"- here q has nq = {robot.nq} entries (the free-flyer's position and unit quaternion "
                     f"(x, y, z, w)), velocities, accelerations and torques nv = {robot.nv}; "
                     + (f"Λ is {robot.tip_rows}×{robot.tip_rows} (the {m} tips stacked, coupling blocks included)"
                        if spec.functions is None else
                        f"the {m} tips' rows stacked ({robot.tip_rows}: "
                        + ", ".join(f"{t.name} {len(t.rows)}" for t in robot.tips) + ")")
                     + ("" if spec.functions is None else
                        f"; only the functions {', '.join(f'`{f}`' for f in spec.functions)}")
                     + ("" if spec.variants is None or spec.functions is not None else
                        f"; soagen's default functions, plus the algorithm variants of "
                        f"{', '.join(spec.variants) or 'no family'}")
                     + ("; Pinocchio's per-tip calls are made once per tip and timed together"
                        if spec.functions is None else ""))
    notes += [f"- {line}" for line in spec.left_out]
    if "pinocchio" in available:
        worst = max((v for v in errors["pinocchio"].values() if v is not None), default=float("nan"))
        floating = sg.is_floating(robot)
        notes.append(f"- Pinocchio {infos['pinocchio']['version']}: URDF parsed "
                     + ("with a `JointModelFreeFlyer` root " if floating else "and reduced (locked joints) ")
                     + "by Pinocchio's Python bindings, handed to `pinocchio_bench.cpp` as a text archive"
                     + ("; states handed over in Pinocchio's conventions and its outputs converted back "
                        "(`soagen.pinocchio_convention`: normalized quaternions, free-flyer [v; ω] ↔ soagen's "
                        "[ω; v] in velocities, torques, M, M⁻¹ and Jacobian columns) before the checks"
                        if floating else "")
                     + ("; crba and computeMinverse are timed as they leave M, M⁻¹ (upper triangle, not "
                        "symmetrised); the Λ routes copy the lower triangle of M⁻¹ or Ω inside the timed call; "
                        "Delassus and constraint-Cholesky routes use one CONTACT_6D constraint per tip in the "
                        "tip's LOCAL frame (Ω, Λ rotated to world-aligned axes outside the timed loop for the "
                        "check)" if spec.functions is None else "")
                     + f"; worst error vs reference {worst:.1e}")
        families = {r.family for r in rows}
        if families & {"contact_dynamics", "contact_dynamics_derivatives"}:
            notes.append("- contact rows: Pinocchio's `constraintDynamics` with one `RigidConstraintModel` per tip "
                         "(" + ", ".join(f"{t.name} CONTACT_{len(t.rows)}D" for t in robot.tips) + "), "
                         "LOCAL_WORLD_ALIGNED, default `ProximalSettings` (μ = 0, one iteration: the exact KKT "
                         "solve), `initConstraintDynamics` once in the setup (untimed); its `lambda_c` (forces on "
                         "the robot, [linear; angular] per 6-D contact) converted to soagen's f (forces on the "
                         "environment, [angular; linear]) for the check"
                         + ("; the derivatives row times `constraintDynamics` then "
                            "`computeConstraintDynamicsDerivatives` (soagen's function returns q̈ and f too; "
                            "Pinocchio's derivatives along q are in its tangent space, as soagen's, and are "
                            "converted like M)" if "contact_dynamics_derivatives" in families else ""))
        if "centroidal_momentum_matrix" in families:
            notes.append("- centroidal rows: Pinocchio's A_G is [linear; angular], soagen's [angular about the "
                         "centre of mass; linear] (`soagen.pinocchio_convention.centroidal_from_pinocchio` "
                         "converts for the check); `ccrba` also computes the centroidal momentum and inertia, "
                         "`computeCentroidalMap` A_G alone"
                         + ("; the centroidal derivatives row: `computeCentroidalDynamicsDerivatives` at the "
                            "state's (q, v, a), its h_G, ḣ_G (`data.hg`, `data.dhg`) and four 6 × nv matrices "
                            "(along q in its tangent space, v, a) converted like A_G"
                            if "centroidal_dynamics_derivatives" in families else ""))
    else:
        notes.append(f"- Pinocchio: n/a — {why.get('pinocchio', 'not run')}")
    if "casadi" in available:
        info = infos["casadi"]
        worst = max((v for v in errors["casadi"].values() if v is not None), default=float("nan"))
        manifest = info["manifest"]
        notes.append(f"- CasADi {info['version']}: SX functions of casadi_kin_dyn "
                     f"{manifest.get('casadi_kin_dyn_version', '?')} rebuilt with Function options "
                     f"`{info['options']}` (instructions {'/'.join(CASADI_MAP.values())} with cse: "
                     + ", ".join(f"{manifest[k]['n_instructions']}" for k in CASADI_MAP.values())
                     + "; without: "
                     + ", ".join(f"{manifest[k].get('n_instructions_without_cse', '?')}" for k in CASADI_MAP.values())
                     + f"), generated C compiled `{' '.join(CFLAGS)}`; `gcc -O2 -c`: "
                     + ", ".join(f"{k} {v:.1f} s" for k, v in info["cc"].items())
                     + "; arithmetic (mul + add + div + sqrt of CasADi's instruction list, counted as "
                     "`benchmarks/casadi_opcounts.py` does; soagen's are in the operations column below): "
                     + ", ".join(f"{k} {sg.cost(count_instructions(manifest[k]['instructions'], k))}"
                                 for k in CASADI_MAP.values())
                     + f"; generation (SX build + C codegen, in its venv) {info['gen_s']:.2f} s"
                     + f"; worst error vs reference {worst:.1e}")
    else:
        notes.append(f"- CasADi: n/a — {why.get('casadi', 'not run')}")
    if "soagen_libm" in available:
        notes.append("- soagen libm: inside each timed call, cos and sin (one glibc `sincos` per angle, as in "
                     "Pinocchio's and CasADi's compiled code) of the joint angles that function reads, then the "
                     "trig-inputs function (`cq`, `sq` after the other inputs); its outputs are checked like "
                     "soagen's")
    build_s, py = python
    py_rows = [PythonRow(fn, run.timed["soagen", fn].median, *vals) for fn, vals in py.items()
               if ("soagen", fn) in run.timed]
    python_intro = ("Python module: not timed for this robot (none of its functions is among the ones the "
                    "benchmark times from Python).") if build_s is None else (f"Python module (`soagen.build`, cffi, compiled `{' '.join(sg.compile_args())}`; build/load "
                    f"{build_s:.1f} s), timed after the driver, on its own and in thread CPU time (time the scheduler "
                    f"gives other processes left out): single calls loop over the {args.n} "
                    f"states, batch = one call on {BATCH_ROWS} states, median of 15 back to back (a fresh result "
                    f"array per call, or `out=` reusing one; large fresh arrays come from the kernel as new pages, "
                    f"which costs per call what streaming the rows out costs).")
    round_ms = Spread.of(run.round_ms)
    return RobotReport(
        robot=robot_name, title=f"{robot_name} ({sg.describe(robot)})", command=command, n=args.n,
        rounds=args.rounds, seed=args.seed, machine=machine_info(infos.get("casadi", {}).get("version", "n/a"), load_start),
        rows=rows, chunk=run.chunk, round_ms=round_ms, overhead_ms=1e3 * run.wall_s - float(np.sum(run.round_ms)),
        backends=[b for b in ("soagen", "soagen_libm", "pinocchio", "casadi") if b in available],
        notes=notes, python_intro=python_intro, python=py_rows, seconds=seconds)
