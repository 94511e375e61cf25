"""Command line: ``soagen generate`` and ``soagen check``."""
from __future__ import annotations

import argparse
import os
import shutil
import sys
import tempfile
import time
import warnings

import numpy as np

from . import opcount
from .model import ModelWarning, RobotError


def _robot(args):
    from . import robots
    from .urdf import load_urdf

    gravity = tuple(args.gravity) if args.gravity else (0.0, 0.0, -9.81)
    if args.example:
        if args.urdf:
            raise RobotError("give either a URDF or --example, not both")
        return robots.example(args.example, gravity=gravity)
    if not args.urdf:
        raise RobotError("give a URDF file or --example NAME")
    lock = {}
    for item in args.lock or []:
        joint, _, value = item.partition("=")
        lock[joint] = float(value or 0.0)
    robot = load_urdf(args.urdf, tips=args.tip or [], lock=lock, gravity=gravity, floating_base=args.floating_base,
                      strict=args.strict)
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


def _variants(args):
    """``--variants`` alone: every family; with names: those; absent: none."""
    return () if args.variants is None else (args.variants or None)


def _progress(done, total, label):
    if not sys.stderr.isatty():
        return
    width = 24
    fill = int(width * done / max(total, 1))
    sys.stderr.write(f"\r  [{'#' * fill}{'.' * (width - fill)}] {done}/{total} {label:<32}")
    if done == total:
        sys.stderr.write("\n")
    sys.stderr.flush()


def _print_counts(programs):
    print(f"{'function':<30} {'mul':>6} {'add':>6} {'div':>4} {'sqrt':>4} {'trig':>5} {'statements':>11}")
    for p in programs:
        o = p.ops
        print(f"{p.name:<30} {o['mul']:6d} {o['add']:6d} {o['div']:4d} {o['sqrt']:4d} {o['trig']:5d} "
              f"{o['statements']:11d}")


def cmd_scaling(args):
    """Op counts against n on the generated robot families, per variant."""
    from . import scaling

    sizes = scaling.parse_range(args.scaling)
    result = scaling.run(sizes, progress=lambda fam, n: print(f"  {fam} n={n}", file=sys.stderr))
    text = scaling.markdown(result)
    print(text, end="")
    for path, content in ((args.markdown, text), (args.json, scaling.as_json(result))):
        if path:
            with open(path, "w") as fh:
                fh.write(content)
    if args.plot:
        scaling.plot(result, args.plot)
    return 0


def cmd_opcount(args):
    """Op counts per function, from the programs and re-counted in the emitted C."""
    from .codegen import generate

    if args.scaling:
        return cmd_scaling(args)
    robot = _robot(args)
    gen = generate(robot, args.name or robot.name, args.precision, functions=args.function,
                   variants=_variants(args))
    in_c = opcount.count_c(gen.csource.source)
    for p in gen.programs:
        c = in_c[f"{gen.csource.name}_{p.name}"]
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
    """Flash and stack per function on Cortex-M targets (float), as a markdown table."""
    from . import mcu
    from .codegen import generate

    robot = _robot(args)
    gen = generate(robot, args.name or robot.name, "float", functions=args.function,
                   variants=_variants(args))
    runs = [("cortex-m4f", "-Os"), ("cortex-m4f", "-O2"), ("cortex-m0", "-Os"), ("cortex-m0", "-O2")]
    with tempfile.TemporaryDirectory() as tmp:
        mcu.write_harness(gen, {p.name: [] for p in gen.programs}, tmp)
        sizes = {run: mcu.footprint(tmp, gen.csource.name, mcu.TARGETS[run[0]], run[1]) for run in runs}
    head = " | ".join(f"{t} {o} flash / stack (B)" for t, o in runs)
    lines = [f"# Footprint: {robot.name} (float, arm-none-eabi-gcc, .text bytes / -fstack-usage bytes)", "",
             f"| function | {head} |", "|---|" + "---|" * len(runs)]
    for p in gen.programs:
        cells = " | ".join(f"{sizes[r][p.name][0]} / {sizes[r][p.name][1]}" for r in runs)
        lines.append(f"| {p.name} | {cells} |")
    text = "\n".join(lines) + "\n"
    print(text, end="")
    if args.markdown:
        with open(args.markdown, "w") as fh:
            fh.write(text)
    return 0


def cmd_generate(args):
    from .codegen import generate

    t0 = time.perf_counter()
    robot = _robot(args)
    t_load = time.perf_counter() - t0
    name = args.name or robot.name
    print(f"soagen: {robot.name}: {robot.n} joints, {len(robot.tips)} tips -> {args.out}", file=sys.stderr)
    gen = generate(robot, name, args.precision, progress=None if args.quiet else _progress,
                   functions=args.function, trig_inputs=args.trig_inputs, variants=_variants(args))
    out = os.path.abspath(args.out)
    parent = os.path.dirname(out) or "."
    os.makedirs(parent, exist_ok=True)
    work = tempfile.mkdtemp(prefix=".soagen-", dir=parent)   # nothing half-written in out
    os.chmod(work, 0o755)
    try:
        for fname, text in ((f"{gen.csource.name}.h", gen.csource.header),
                            (f"{gen.csource.name}.c", gen.csource.source),
                            ("opcounts.md", opcount.table(robot.name, gen.programs)),
                            ("opcounts.json", opcount.as_json(robot, gen.programs))):
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
    _print_counts(gen.programs)
    t = gen.timings
    print(f"time: load {t_load:.2f} s, record {t['record']:.2f} s + cse {t['cse']:.2f} s "
          f"(summed over functions; {t['generate (wall)']:.2f} s wall), emit {t['emit']:.2f} s, "
          f"total {total:.2f} s")
    return 0


ILL_CONDITIONED = 1e6


def check_module(robot, mod, samples=100, seed=0):
    """Max relative error of each generated function against the numpy reference
    on ``samples`` random states (functions the module lacks are skipped; the
    Λ(0)-based functions at states where cond(Ω(0)) < :data:`ILL_CONDITIONED`)."""
    from . import reference as ref

    rng = np.random.default_rng(seed)
    errors = {}
    m = len(robot.tips)

    def record(label, got, want):
        try:
            value = got()
        except NotImplementedError:
            return
        err = float(np.abs(value - want()).max() / max(1.0, float(np.abs(want()).max())))
        errors[label] = max(errors.get(label, 0.0), err)

    for _ in range(samples):
        q, qd, qdd, tau = robot.random_state(rng)
        f, u = rng.normal(size=6 * m) * 10.0, rng.normal(size=6 * m)
        cases = [
            ("inverse_dynamics", lambda: mod.inverse_dynamics(q, qd, qdd),
             lambda: ref.inverse_dynamics(robot, q, qd, qdd)),
            ("gravity", lambda: mod.gravity(q), lambda: ref.gravity(robot, q)),
            ("bias_forces", lambda: mod.bias_forces(q, qd), lambda: ref.bias_forces(robot, q, qd)),
            ("coriolis", lambda: mod.coriolis(q, qd), lambda: ref.coriolis(robot, q, qd)),
            ("mass_matrix", lambda: mod.mass_matrix(q), lambda: ref.mass_matrix(robot, q)),
            ("mass_matrix_inverse", lambda: mod.mass_matrix_inverse(q), lambda: ref.mass_matrix_inverse(robot, q)),
            ("forward_dynamics", lambda: mod.forward_dynamics(q, qd, tau),
             lambda: ref.forward_dynamics(robot, q, qd, tau, variant="FD4")),
            ("forward_dynamics_fd1", lambda: mod.forward_dynamics(q, qd, tau, variant="FD1"),
             lambda: ref.forward_dynamics(robot, q, qd, tau, variant="FD1")),
            # variants: another algorithm, the same quantity as the reference's
            ("mass_matrix_ne", lambda: mod.mass_matrix(q, "newton_euler"), lambda: ref.mass_matrix(robot, q)),
            ("mass_matrix_inverse_innovations", lambda: mod.mass_matrix_inverse(q, "innovations"),
             lambda: ref.mass_matrix_inverse(robot, q)),
            ("mass_matrix_inverse_cholesky", lambda: mod.mass_matrix_inverse(q, "cholesky"),
             lambda: ref.mass_matrix_inverse(robot, q)),
            ("forward_dynamics_fd4", lambda: mod.forward_dynamics(q, qd, tau, variant="FD4"),
             lambda: ref.forward_dynamics(robot, q, qd, tau)),
            ("forward_dynamics_fd3", lambda: mod.forward_dynamics(q, qd, tau, variant="FD3"),
             lambda: ref.forward_dynamics(robot, q, qd, tau)),
            ("forward_dynamics_crba", lambda: mod.forward_dynamics(q, qd, tau, variant="CRBA"),
             lambda: ref.forward_dynamics(robot, q, qd, tau)),
        ]
        if m:
            cases += [
                ("inverse_dynamics (tip force)", lambda: mod.inverse_dynamics(q, qd, qdd, f),
                 lambda: ref.inverse_dynamics(robot, q, qd, qdd, f)),
                ("forward_kinematics", lambda: mod.forward_kinematics(q), lambda: ref.forward_kinematics(robot, q)),
                ("jacobian", lambda: mod.jacobian(q), lambda: ref.jacobian(robot, q)),
                ("jdot_qdot", lambda: mod.jdot_qdot(q, qd), lambda: ref.jdot_qdot(robot, q, qd)),
                ("tip_force_acceleration", lambda: mod.tip_force_acceleration(q, f),
                 lambda: ref.tip_force_acceleration(robot, q, f)),
                ("os_inertia_inverse", lambda: mod.os_inertia_inverse(q), lambda: ref.os_inertia_inverse(robot, q)),
                ("forward_dynamics_fd2", lambda: np.concatenate(mod.call("forward_dynamics_fd2", q, qd, tau)),
                 lambda: np.concatenate([qdd_ref := ref.forward_dynamics(robot, q, qd, tau),
                                         ref.jacobian(robot, q) @ qdd_ref + ref.jdot_qdot(robot, q, qd)])),
            ]
            # Λ(0) is compared where it exists and is well conditioned: near a singular
            # pose both routes lose cond(Ω)·eps digits and agree only to that
            # (none of them exists where D(k) = 0: robot.singular_joints)
            if not robot.singular_joints and np.linalg.cond(ref.os_inertia_inverse(robot, q)) < ILL_CONDITIONED:
                cases += [
                    ("os_inertia", lambda: mod.os_inertia(q), lambda: ref.os_inertia(robot, q)),
                    ("os_inertia_recursive", lambda: mod.os_inertia(q, "recursive"), lambda: ref.os_inertia(robot, q)),
                    ("os_inertia_explicit", lambda: mod.os_inertia(q, "explicit"), lambda: ref.os_inertia(robot, q)),
                    ("os_coriolis", lambda: mod.os_coriolis(q, qd), lambda: ref.os_coriolis(robot, q, qd)),
                    ("os_gravity", lambda: mod.os_gravity(q), lambda: ref.os_gravity(robot, q)),
                    ("os_bias", lambda: mod.os_bias(q, qd), lambda: ref.os_bias(robot, q, qd)),
                    ("osc_torque", lambda: mod.osc_torque(q, qd, u), lambda: ref.osc_torque(robot, q, qd, u)),
                ]
        for label, got, want in cases:
            record(label, got, want)
    return errors


def cmd_check(args):
    from .cffi_build import build

    robot = _robot(args)
    print(f"soagen check: {robot.name}: {robot.n} joints, {len(robot.tips)} tips, {args.precision}",
          file=sys.stderr)
    t0 = time.perf_counter()
    mod = build(robot, precision=args.precision, progress=None if args.quiet else _progress,
                functions=args.function, variants=_variants(args))
    t = mod.timings
    stages = ", ".join(f"{k} {v:.2f} s" for k, v in t.items())
    print(f"build: {time.perf_counter() - t0:.2f} s ({stages})")
    errors = check_module(robot, mod, args.samples, args.seed)
    tol = 1e-10 if args.precision == "double" else 1e-3
    print(f"generated C vs numpy reference, {args.samples} random states (max relative error):")
    worst = 0.0
    for name, err in errors.items():
        worst = max(worst, err)
        print(f"  {name:<30} {err:9.2e}  {'ok' if err <= tol else 'FAIL'}")
    print(f"{'PASS' if worst <= tol else 'FAIL'}: worst {worst:.2e} (tolerance {tol:g})")
    return 0 if worst <= tol else 1


def main(argv=None):
    parser = argparse.ArgumentParser(prog="soagen", description=__doc__)
    sub = parser.add_subparsers(dest="command", required=True)
    for name, helptext in (("generate", "write <name>.h/.c and op counts for a robot"),
                           ("check", "build the module and compare it with the numpy reference"),
                           ("opcount", "print the operation counts of every generated function"),
                           ("footprint", "flash and stack per function on Cortex-M (needs arm-none-eabi-gcc)")):
        p = sub.add_parser(name, help=helptext)
        p.add_argument("urdf", nargs="?", help="URDF file")
        p.add_argument("--example", choices=["puma560", "panda", "ur5"], help="a robot bundled with soagen")
        p.add_argument("--tip", action="append", help="operational point link (repeatable)")
        p.add_argument("--lock", action="append", metavar="JOINT=VALUE", help="hold a joint fixed")
        p.add_argument("--floating-base", action="store_true",
                       help="a 6-dof floating joint above the root link (humanoids, mobile bases)")
        p.add_argument("--gravity", nargs=3, type=float, metavar=("GX", "GY", "GZ"))
        p.add_argument("--strict", action="store_true",
                       help="refuse what is otherwise a warning: non-physical inertia, joints with D(k) = 0")
        p.add_argument("--precision", choices=["double", "float"], default="double")
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
        elif name == "opcount":
            p.add_argument("--json", help="also write the counts as JSON")
            p.add_argument("--markdown", help="also write the counts as a markdown table")
            p.add_argument("--scaling", metavar="LO..HI",
                           help="instead: the scaling study on generated chains and two-armed trees "
                                "(e.g. 2..48, or 4,8,16), every variant")
            p.add_argument("--plot", help="with --scaling: write the log-log plot (PNG) here")
        elif name == "footprint":
            p.add_argument("--markdown", help="also write the table to this file")
        else:
            p.add_argument("--samples", type=int, default=100)
            p.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("always", ModelWarning)
            warnings.showwarning = _show_warning
            return {"generate": cmd_generate, "check": cmd_check, "opcount": cmd_opcount,
                    "footprint": cmd_footprint}[args.command](args)
    except (RobotError, ValueError) as exc:
        print(f"soagen: error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
