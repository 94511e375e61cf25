"""Command line: soagen generate, check, profile, opcount, footprint, parameters, info, functions, examples.

A command that takes a robot reads its file before it imports the symbolic stages (sympy, 0.7 s), so a
refused file, like ``--help``, is answered at once; the imports of those stages sit in the commands
(``info`` reads the robot only and never imports them)."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings

from soagen.model.errors import ModelWarning, RobotError
from soagen.options import Options, OptionsError
from soagen.targets import REGISTRY


def _tips(args):
    """The tips of ``--tip LINK`` and ``--point-tip LINK[:x,y,z]``, in that order."""
    from soagen.model.robot import point_tip

    points = []
    for item in args.point_tip or []:
        link, _, offset = item.partition(":")
        try:
            xyz = [float(x) for x in offset.split(",")] if offset else [0.0, 0.0, 0.0]
        except ValueError:
            xyz = []
        if len(xyz) != 3:
            raise RobotError(f"--point-tip {item}: expected LINK or LINK:x,y,z")
        points.append(point_tip(link, xyz))
    return list(args.tip or []) + points


def _locks(args):
    """``{joint: value}`` of ``--lock JOINT=VALUE`` (a missing value is 0)."""
    lock = {}
    for item in args.lock or []:
        joint, _, value = item.partition("=")
        try:
            lock[joint] = float(value or 0.0)
        except ValueError:
            raise RobotError(f"--lock {item}: expected JOINT=VALUE with VALUE a number") from None
    return lock


def _named(args):
    """A robot's name in place of its file, as :func:`soagen.robots.path` takes it (``soagen info xarm7``);
    a bundled robot's name is ``--example NAME`` (its tips and locks); an existing file stays a file.
    ``args`` is changed in place."""
    from soagen.model import robots

    name = args.urdf
    if not name or args.example or os.path.exists(name):
        return
    if name in robots.EXAMPLES:
        args.urdf, args.example = None, name
        return
    try:
        args.urdf = robots.path(name)
    except RobotError as exc:
        if os.path.isabs(name) or not (os.sep in name or name.endswith((".urdf", ".xml"))):
            raise
        raise RobotError(f"{name}: no such file, nor a robot's name: {exc}") from None


def _robot(args):
    """The Robot of a command line: ``--example NAME`` or a URDF or MJCF file, with every robot option
    (``--tip`` and ``--point-tip`` replace an example's tips, ``--lock`` adds to its locks)."""
    from soagen.model import robots
    from soagen.model.mjcf import is_mjcf, load_mjcf
    from soagen.model.urdf import load_urdf

    gravity = tuple(args.gravity) if args.gravity else (0.0, 0.0, -9.81)
    if args.example:
        if args.urdf:
            raise RobotError("give either a URDF or --example, not both")
        tips = _tips(args)
        return robots.example(args.example, gravity=gravity, tips=tips or None, lock=_locks(args),
                              floating_base=args.floating_base, strict=args.strict,
                              urdf_friction=args.urdf_friction)
    if not args.urdf:
        raise RobotError("give a URDF file or --example NAME")
    lock = _locks(args)
    if is_mjcf(args.urdf):   # an MJCF file (root <mujoco>): tips name bodies or sites; its free joints say floating
        if args.floating_base:
            raise RobotError(f"{args.urdf}: --floating-base is for URDF; an MJCF file has its own <freejoint>")
        robot = load_mjcf(args.urdf, tips=_tips(args), lock=lock, strict=args.strict,
                          gravity=tuple(args.gravity) if args.gravity else None, mjcf_damping=args.urdf_friction)
    else:
        robot = load_urdf(args.urdf, tips=_tips(args), lock=lock, gravity=gravity,
                          floating_base=args.floating_base, urdf_friction=args.urdf_friction, strict=args.strict)
    if args.command in ("generate", "check"):
        for note in robot.notes:
            print(f"soagen: note: {note}", file=sys.stderr)
    return robot


def _show_warning(message, category, filename, lineno, file=None, line=None, _default=warnings.showwarning):
    """A ModelWarning as one line ``soagen: warning: ...`` on stderr; others as Python shows them."""
    if issubclass(category, ModelWarning):
        print(f"soagen: warning: {message}", file=sys.stderr)
    else:
        _default(message, category, filename, lineno, file, line)


def _options(args, **fixed):
    """The :class:`Options` of a command line (``fixed`` overrides)."""
    fields = dict(precision=getattr(args, "precision", "double"), trig_inputs=getattr(args, "trig_inputs", False),
                  functions=args.function,
                  # --variants alone: every family; with names: those; absent: none
                  variants=() if args.variants is None else (args.variants or None),
                  parameters=getattr(args, "parameters", "baked"), optimize=getattr(args, "optimize", "O3"))
    fields.update(fixed)
    return Options(**fields)


def _print_and_write(text, path):
    """Print ``text``; also write it to ``path`` when given."""
    print(text, end="")
    if path:
        with open(path, "w") as fh:
            fh.write(text)
    return 0


def _progress(args):
    """The progress of a command: a line rewritten in place on a terminal, one line per stage off it
    (a pipe, a log), nothing with ``--quiet``."""
    from soagen.pipeline import terminal_progress

    return None if args.quiet else terminal_progress()


def _print_counts(programs):
    print(f"{'function':<30} {'mul':>6} {'add':>6} {'div':>4} {'sqrt':>4} {'trig':>5} {'statements':>11}")
    for p in programs:
        o = p.ops
        print(f"{p.name:<30} {o['mul']:6d} {o['add']:6d} {o['div']:4d} {o['sqrt']:4d} {o['trig']:5d} "
              f"{o['statements']:11d}")


def cmd_scaling(args):
    """Op counts against n on the generated robot families, per variant."""
    from soagen.reports import scaling

    sizes = scaling.parse_range(args.scaling)
    result = scaling.run(sizes, progress=lambda fam, n: print(f"  {fam} n={n}", file=sys.stderr))
    outputs = " ".join(f"--{flag} {path}" for flag, path in (("plot", args.plot), ("markdown", args.markdown),
                                                                ("json", args.json)) if path)
    text = scaling.markdown(result, outputs)
    print(text, end="")
    for path, content in ((args.markdown, text), (args.json, scaling.as_json(result))):
        if path:
            with open(path, "w") as fh:
                fh.write(content)
    if args.plot:
        import json
        from pathlib import Path

        measured = Path(args.plot).with_name("peer_opcounts.json")     # benchmarks/peer_opcounts.py's output
        if not measured.is_file():
            print(f"soagen opcount --scaling: no {measured}: the plot has no panel of the peers", file=sys.stderr)
        scaling.plot(result, args.plot, json.loads(measured.read_text()) if measured.is_file() else None)
    return 0


def cmd_opcount(args):
    """Op counts per function, from the programs and re-counted in the emitted C."""
    if args.scaling:
        return cmd_scaling(args)
    robot = None if args.peers else _robot(args)  # read before sympy is imported (module docstring)
    from soagen.codegen import generate
    from soagen.reports import opcount

    if args.peers:
        import json
        from pathlib import Path

        measured = Path(args.peers).with_name("peer_opcounts.json")    # benchmarks/peer_opcounts.py's output
        if not measured.exists():
            raise SystemExit(f"soagen opcount --peers: {measured} (python benchmarks/peer_opcounts.py) is missing")
        text = opcount.parameters_markdown(opcount.parameter_counts(), json.loads(measured.read_text()))
        print(text, end="")
        with open(args.peers, "w") as fh:
            fh.write(text)
        return 0
    gen = generate(robot, _options(args), args.name or robot.name)
    in_c = opcount.count_c(gen.csource.source)
    for p in gen.programs:
        c = in_c[f"{gen.csource.name}_{p.calls or p.name}"]
        if any(c[k] != p.ops[k] for k in c):
            raise RuntimeError(f"{p.name}: program counts {p.ops} differ from the C text {c}")
    _print_counts(gen.programs)
    print("(counted from the straight-line programs; the emitted C text agrees)")
    if args.json:
        with open(args.json, "w") as fh:
            fh.write(opcount.as_json(robot, gen.programs))
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(opcount.table(robot.name, gen.programs))
    return 0


def cmd_footprint(args):
    """Flash and stack per function on Cortex-M targets (float), and the instructions and estimated
    cycles of one call (counted in QEMU), as markdown tables."""
    robot = _robot(args)  # read before sympy is imported (module docstring)
    import numpy as np

    from soagen.check import random_inputs
    from soagen.codegen import generate
    from soagen.targets.mcu import qemu as mcu

    gen = generate(robot, _options(args, precision="float"), args.name or robot.name)
    dgen = (generate(robot, Options(precision="float", functions=mcu.DERIVATIVES), gen.csource.name)
            if args.derivatives else None)
    with tempfile.TemporaryDirectory() as tmp, tempfile.TemporaryDirectory() as dtmp:
        text = mcu.footprint_table(gen, robot.name, tmp, derivatives=(dgen, dtmp) if dgen is not None else None,
                                   state=random_inputs(robot, np.random.default_rng(mcu.COUNT_SEED)))
    return _print_and_write(text, args.markdown)


def cmd_generate(args):
    t0 = time.perf_counter()
    robot = _robot(args)  # read before sympy is imported (module docstring)
    t_load = time.perf_counter() - t0
    from soagen.codegen import programs
    from soagen.reports import opcount
    from soagen.targets import plugin
    from soagen.targets.common.inert import c_name

    options = _options(args)
    writer = plugin(args.target)
    if hasattr(writer, "needed"):             # what its functions' Jacobians read (--target casadi)
        from soagen.functions import select
        options = options.but(functions=tuple(writer.needed([s.name for s in select(robot, options)])))
    stem = c_name(args.name or robot.name)
    print(f"soagen: {robot.name}: {robot.joint_summary()}, {len(robot.tips)} tips -> {args.out}", file=sys.stderr)
    progs, timings = programs(robot, options, progress=_progress(args))
    t1 = time.perf_counter()
    files = []
    for pkg in ([plugin(writer.BESIDE)] if hasattr(writer, "BESIDE") else []) + [writer]:
        files += pkg.files(robot, progs, stem, options)
    timings["emit"] = time.perf_counter() - t1
    out = os.path.abspath(args.out)
    parent = os.path.dirname(out) or "."
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".soagen-", dir=parent)   # nothing half-written in out
    os.chmod(work, 0o755)
    try:
        files += [("opcounts.md", opcount.table(robot.name, progs)),
                  ("opcounts.json", opcount.as_json(robot, progs))]
        for fname, text in files:
            with open(os.path.join(work, fname), "w") as fh:
                fh.write(text)
        if os.path.isdir(out):   # replace our files one by one, keep others (footprint.md)
            for fname in sorted(os.listdir(work)):
                os.replace(os.path.join(work, fname), os.path.join(out, fname))
        else:
            os.replace(work, out)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    total = time.perf_counter() - t0
    _print_counts(progs)
    t = timings
    print(f"time: load {t_load:.2f} s, record {t['record']:.2f} s + cse {t['cse']:.2f} s "
          f"(summed over functions; {t['generate (wall)']:.2f} s wall), emit {t['emit']:.2f} s, "
          f"total {total:.2f} s")
    return 0


def cmd_profile(args):
    """Per function: record, CSE, emit and compile seconds, and the peak memory."""
    robot = _robot(args)  # read before sympy is imported (module docstring)
    from soagen.reports.profile import markdown_row, profile, text

    print(f"soagen profile: {robot.name}: {robot.joint_summary()}, {len(robot.tips)} tips", file=sys.stderr)
    result = profile(robot, _options(args), progress=_progress(args))
    print(text(result), end="")
    if args.markdown_row:
        print(markdown_row(result))
    return 0


def cmd_examples(args):
    """The robots ``--example`` names, and example-robot-data's by the names ``soagen.robots.path`` takes."""
    from soagen.model import robots

    print("bundled with soagen (soagen generate --example NAME, soagen.robots.example(NAME)):")
    for name in robots.EXAMPLES:
        print(f"  {name:<10} {robots.DESCRIPTIONS[name]}")
    root, files = robots.erd_root(), robots.erd_files()
    if root is None:
        print("example-robot-data: not installed (pip install example-robot-data: about 70 more robot files)")
        return 0
    print(f"example-robot-data, {len(files)} URDF files in {root} (soagen.robots.path(NAME) gives the file):")
    width = max((len(name) for name in files if "/" not in name), default=0)
    for name, path in files.items():
        where = os.path.relpath(path, root)
        print(f"  {name}" if where == name else f"  {name:<{width}} {where}")
    return 0


def cmd_info(args):
    """Joints, links, candidate tips and the load's warnings of one robot; nothing is generated (no sympy)."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        robot = _robot(args)
    for w in caught:             # what is not the model's is shown as Python shows it
        if not issubclass(w.category, ModelWarning):
            warnings.showwarning(w.message, w.category, w.filename, w.lineno)
    from soagen.reports.info import outline, report

    warned = [str(w.message) for w in caught if issubclass(w.category, ModelWarning)]
    print(report(robot, outline(args.urdf, args.example), warned, _locks(args)), end="")
    return 0


def cmd_functions(args):
    """The catalogue of generated functions (README's function table)."""
    from soagen.reports.functions_table import markdown_table

    print(markdown_table(), end="")
    return 0


def cmd_parameters(args):
    """Standard and base parameters of one robot, or of every bundled robot (``--all``)."""
    from soagen.model import robots

    if args.all:
        targets = [robots.example(name) for name in robots.EXAMPLES]
    else:
        targets = [_robot(args)]  # read before sympy is imported (module docstring)
    from soagen.reports.parameters import report

    text = report(targets)
    return _print_and_write(text, args.markdown)


def cmd_check(args):
    robot = _robot(args)  # read before sympy is imported (module docstring)
    from soagen.check import check_module
    from soagen.pipeline import build

    print(f"soagen check: {robot.name}: {robot.joint_summary()}, {len(robot.tips)} tips, {args.precision}",
          file=sys.stderr)
    t0 = time.perf_counter()
    mod = build(robot, _options(args), progress=_progress(args))
    t = mod.timings
    if "compile" in t:       # built now: the stages' seconds, summed over functions (they overlap)
        stages = (f"record {t.get('record', 0):.2f} s + CSE {t.get('cse', 0):.2f} s on the workers, "
                  f"print C {t.get('emit', 0):.2f} s, "
                  f"gcc {t['compile']:.2f} s summed over the units, each compiled while the next functions record")
    else:
        stages = "loaded from the cache"
    print(f"build: {time.perf_counter() - t0:.2f} s ({stages})")
    results = check_module(robot, mod, args.samples, args.seed)
    print(f"generated C vs numpy reference, {args.samples} random states (seed {args.seed}); "
          "relative error, and its bound:")
    for r in results.values():
        states = f"{r.compared} states" + (f", {r.skipped} skipped (Lambda ill-conditioned)" if r.skipped else "")
        verdict = "UNTESTED" if r.untested else "ok" if r.ok else "FAIL"
        print(f"  {r.name:<32} {r.error:9.2e}  bound {r.bound_text(args.precision):<44} {verdict}  ({states})")
    failed = [r.name for r in results.values() if not r.ok and not r.untested]
    untested = [r.name for r in results.values() if r.untested]
    worst = max((r.ratio for r in results.values()), default=0.0)
    if failed:
        print(f"FAIL: {', '.join(failed)}: worst error/bound {worst:.2e}")
        return 1
    if untested:
        print(f"UNTESTED: {', '.join(untested)} (no state where Lambda(0) is well conditioned: the tips ask for "
              "more rows than the joints behind them can move, or every sampled pose is singular); "
              f"the others pass, worst error/bound {worst:.2e}")
        return 0 if args.allow_untested else 3
    print(f"PASS: worst error/bound {worst:.2e}")
    return 0


def _robot_arguments(p):
    """The options that say which robot, on subcommand parser ``p``."""
    p.add_argument("urdf", nargs="?", metavar="ROBOT",
                   help="URDF or MJCF file, or a robot's name as soagen.robots.path takes it (soagen examples "
                        "lists them; a bundled one is --example NAME)")
    p.add_argument("--example", choices=["puma560", "panda", "ur5"], help="a robot bundled with soagen")
    p.add_argument("--tip", action="append",
                   help="operational point link, 6 rows [angular; linear] (MJCF: a body or a site) (repeatable)")
    p.add_argument("--point-tip", action="append", metavar="LINK[:x,y,z]",
                   help="point tip: 3 linear rows at an offset in the link frame, e.g. a foot (repeatable)")
    p.add_argument("--lock", action="append", metavar="JOINT=VALUE", help="hold a joint fixed")
    p.add_argument("--floating-base", action="store_true",
                   help="a 6-dof floating joint above the root link (humanoids, mobile bases)")
    p.add_argument("--gravity", nargs=3, type=float, metavar=("GX", "GY", "GZ"),
                   help="gravity in the base frame, m/s^2 (default 0 0 -9.81)")
    p.add_argument("--strict", action="store_true",
                   help="refuse what is otherwise a warning: non-physical inertia, joints with D(k) = 0")
    p.add_argument("--urdf-friction", action="store_true",
                   help="joint friction (viscous, Coulomb) from the URDF's <dynamics damping friction>")


def main(argv=None):
    from soagen._version import __version__

    parser = argparse.ArgumentParser(
        prog="soagen", description="Spatial Operator Algebra recursions unrolled into straight-line C for one robot.")
    parser.add_argument("--version", action="version", version=f"soagen {__version__}")
    sub = parser.add_subparsers(dest="command", required=True)
    for name, helptext in (("generate", "write <name>.h/.c and op counts for a robot"),
                           ("check", "build the module and compare it with the numpy reference"),
                           ("profile", "build from nothing and print each function's record, CSE, emit and "
                                       "compile time and the peak memory"),
                           ("opcount", "print the operation counts of every generated function"),
                           ("footprint", "flash, stack, instructions and estimated cycles per call on Cortex-M "
                                         "(needs arm-none-eabi-gcc and qemu-system-arm)"),
                           ("parameters", "standard and base (identifiable) parameters of a robot")):
        p = sub.add_parser(name, help=helptext)
        _robot_arguments(p)
        if name == "parameters":
            p.add_argument("--all", action="store_true", help="every bundled robot")
            p.add_argument("--markdown", help="also write the report to this file")
            continue
        p.add_argument("--precision", choices=["double", "float"], default="double",
                       help="C scalar type (float for microcontrollers)")
        p.add_argument("--optimize", choices=["O0", "O1", "O2", "O3", "Os"], default="O3",
                       help="C compiler optimization (O0 builds fastest; O3, the default, runs fastest)")
        p.add_argument("--parameters", choices=["baked", "inputs"], default="baked",
                       help="inputs: the functions that can take the parameters pi as their last input do "
                            "(soagen.functions.PARAMETRIC), the others are left out")
        p.add_argument("--quiet", action="store_true", help="no progress bar")
        p.add_argument("--function", action="append", metavar="NAME",
                       help="generate only this C function (repeatable; default: all)")
        p.add_argument("--variants", nargs="*", metavar="FAMILY",
                       help="also generate the algorithm variants of these families (none named: all of "
                            "mass_matrix, mass_matrix_inverse, forward_dynamics, os_inertia)")
        if name in ("generate", "opcount", "footprint"):
            p.add_argument("--name", help="file stem and C prefix (default: robot name)")
        if name == "generate":
            p.add_argument("--out", required=True, help="output folder")
            p.add_argument("--trig-inputs", action="store_true",
                           help="functions take cos/sin of q as inputs cq, sq (targets with their own trig)")
            p.add_argument("--target", choices=list(REGISTRY), default="c",
                           help="c: <name>.h/.c (C99); simd: also <name>_simd.h/.c, batches on several states "
                                "per instruction (GCC/Clang); cuda, cuda-host: <name>.cu (kernels, launchers) "
                                "and <name>_cuda.h; casadi: also <name>_casadi.c, CasADi external functions "
                                "with their Jacobians, and with forward_dynamics the RK4 step rk4_step "
                                "(docs/guide/casadi.md); cpp: also <name>.hpp (Eigen), a CMake package and "
                                "<name>.pc (docs/guide/cpp.md)")
        elif name == "opcount":
            p.add_argument("--json", help="also write the counts as JSON")
            p.add_argument("--markdown", help="also write the counts as a markdown table")
            p.add_argument("--scaling", metavar="LO..HI",
                           help="instead: the scaling study on generated chains and two-armed trees "
                                "(e.g. 2..48, or 4,8,16), every variant")
            p.add_argument("--plot", help="with --scaling: write the log-log plot (PNG) here")
            p.add_argument("--peers", metavar="FILE",
                           help="instead: the parameters-as-inputs comparison with SymPyBotics and OpenSYMORO "
                                "(their counts read from peer_opcounts.json beside FILE) and the regressors' "
                                "counts, written to FILE (markdown)")
        elif name == "footprint":
            p.add_argument("--markdown", help="also write the table to this file")
            p.add_argument("--derivatives", action="store_true",
                           help="also the dynamics' derivatives (Cortex-M4F -Os; generation takes a minute)")
        if name == "profile":
            p.add_argument("--markdown-row", action="store_true", help="also print a row of docs/build_profile.md")
        if name == "check":
            p.add_argument("--samples", type=int, default=100, help="random states compared (default 100)")
            p.add_argument("--seed", type=int, default=0, help="seed of the random states (default 0)")
            p.add_argument("--allow-untested", action="store_true",
                           help="exit 0 even when a function could be compared on no state (UNTESTED)")
    _robot_arguments(sub.add_parser("info", help="a robot's joints, links with masses, candidate tips and what "
                                                 "loading it warns (nothing is generated)"))
    sub.add_parser("functions", help="list every function soagen can generate (a markdown table)")
    sub.add_parser("examples", help="list the bundled robots (--example NAME) and those of example-robot-data")
    args = parser.parse_args(argv)
    try:
        if hasattr(args, "urdf"):
            _named(args)
        with warnings.catch_warnings():
            warnings.simplefilter("always", ModelWarning)
            warnings.showwarning = _show_warning
            return {"generate": cmd_generate, "check": cmd_check, "opcount": cmd_opcount,
                    "footprint": cmd_footprint, "functions": cmd_functions, "profile": cmd_profile,
                    "examples": cmd_examples, "parameters": cmd_parameters, "info": cmd_info}[args.command](args)
    except (RobotError, OptionsError) as exc:
        print(f"soagen: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
