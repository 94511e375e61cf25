#!/usr/bin/env python3
"""Benchmark soagen's generated C against Pinocchio (C++) and CasADi-generated C.

    python benchmarks/run.py --robot panda        # or ur5, talos, or all

One run, per robot:

1. draws N seeded random states and writes them, float64 little-endian, to
   ``benchmarks/.work/<robot>/states.bin`` (rows: q (nq), qd, qdd, tau (nv each),
   f, u (6 per tip each)), and the same states in Pinocchio's conventions
   (normalized quaternions, free-flyer velocities [v; ω]) to ``states_pinocchio.bin``;
2. generates soagen's C (timing the symbolic stage per function and
   ``gcc -O2 -c`` per file and per function), compiles it with
   ``bench_driver.c`` at ``-O3 -march=native`` and times every function;
3. builds ``pinocchio_bench.cpp`` header-only against the ``pin`` wheel
   (once, cached) and times the matching Pinocchio algorithms on the same states
   (outputs converted back with ``soagen.pinocchio_convention`` for the checks);
4. runs the CasADi helper (``casadi_kin_dyn.py``) if present and times its
   generated ``rnea``/``crba``/``aba`` with the same C driver;
5. times the Python module (``soagen.build``): single calls and one batch call;
6. checks every backend's outputs on the first states against
   ``soagen.reference`` (a wrong soagen result aborts; a wrong baseline is
   reported n/a, never shown), prints the tables and writes them to
   ``docs/benchmarks.md`` (this robot's section; other robots' are kept).
"""
from __future__ import annotations

import argparse
import datetime
import hashlib
import importlib.metadata
import json
import os
import platform
import re
import shlex
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import soagen
from soagen import pinocchio_convention as pc
from soagen import reference as ref
from soagen import robots
from soagen.codegen import c_name, generate, jobs
from soagen.recursion import VARIANTS
from soagen.urdf import load_urdf

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
WORK = HERE / ".work"
DOC = ROOT / "docs" / "benchmarks.md"
CASADI_SCRIPTS = ("casadi_kin_dyn.py", "casadi_kindyn.py")
CFLAGS = ["-O3", "-march=native"]
CHECK_STATES = 20         # leading states whose outputs are checked against the reference
TOLERANCE = 1e-8          # max |got - want| / max(1, max |want|)
ILL_CONDITIONED = 1e6     # Λ-based outputs are compared only where cond(Ω) is below this
BATCH_ROWS = 10000


def erd_robots_dir():
    """The ``robots`` folder of the installed example-robot-data wheel
    (``<site-packages>/cmeel.prefix/share/example-robot-data/robots``, found through the
    distribution's file list; ``$EXAMPLE_ROBOT_DATA_MODEL_DIR`` overrides), as tests/pin_oracle.py."""
    env = os.environ.get("EXAMPLE_ROBOT_DATA_MODEL_DIR")
    if env and Path(env).is_dir():
        return Path(env)
    marker = "share/example-robot-data/robots/"
    try:
        dist = importlib.metadata.distribution("example-robot-data")
    except importlib.metadata.PackageNotFoundError:
        raise SystemExit("example-robot-data is not installed (pip install example-robot-data)") from None
    for f in dist.files or ():
        path = str(f).replace("\\", "/")
        if marker in path:
            return Path(dist.locate_file(path[:path.index(marker) + len(marker)])).resolve()
    raise SystemExit("example-robot-data: no robots folder in its file list")


@dataclass
class Spec:
    """A benchmarked robot: a bundled URDF (checked against ``soagen.robots.example``) or
    one of example-robot-data (``erd``: path under its robots folder), locked joints, tips."""

    name: str
    tips: list
    lock: dict = field(default_factory=dict)
    erd: str = None                 # example-robot-data URDF, relative to its robots folder
    floating_base: bool = False     # a free-flyer root joint (soagen's root_joint)
    variants: bool = True           # benchmark every algorithm variant too (else the default functions)

    @property
    def urdf(self):
        return erd_robots_dir() / self.erd if self.erd else robots.urdf_path(self.name)

    def robot(self):
        """The soagen Robot; a bundled one is checked to be the example (same numbers, same code)."""
        if self.erd and not Path(self.urdf).is_file():
            raise SystemExit(f"{self.name}: no {self.urdf}")
        robot = load_urdf(self.urdf, tips=list(self.tips), lock=self.lock, floating_base=self.floating_base)
        if not self.erd and robot.fingerprint() != robots.example(self.name).fingerprint():
            raise SystemExit(f"{self.name}: locks/tip here differ from soagen.robots.example({self.name!r})")
        return robot


SPECS = {
    "panda": Spec("panda", ["panda_hand"], {"panda_finger_joint1": 0.0, "panda_finger_joint2": 0.0}),
    "ur5": Spec("ur5", ["tool0"]),
    # the humanoid of the multi-dof issue: free-flyer root (nq = 39, nv = 38), both hands (Λ is 12 x 12);
    # the default functions only (every algorithm variant would multiply the ~1 min generation)
    "talos": Spec("talos", ["gripper_left_base_link", "gripper_right_base_link"],
                  erd="talos_data/robots/talos_reduced.urdf", floating_base=True, variants=False),
}


class Unavailable(Exception):
    """A baseline that cannot be measured; the message says why (shown as n/a)."""


# --------------------------------------------------------------------------- helpers
def sh(cmd, **kw):
    """Run ``cmd`` (a list); return the CompletedProcess, raising with stderr on failure."""
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, **kw)
    if res.returncode:
        lines = (res.stderr or res.stdout).strip().splitlines()
        tail = "\n".join(([x for x in lines if "error" in x.lower()] or lines)[-15:])
        raise RuntimeError(f"{' '.join(map(str, cmd[:3]))} ... failed ({res.returncode}):\n{tail}")
    return res


def timed(cmd, **kw):
    """Seconds taken by ``sh(cmd)``."""
    t0 = time.perf_counter()
    sh(cmd, **kw)
    return time.perf_counter() - t0


def rel_error(got, want):
    got, want = np.ravel(got), np.ravel(want)
    return float(np.abs(got - want).max() / max(1.0, float(np.abs(want).max())))


def parse_timings(stdout):
    """``name median min size`` lines of a timing driver -> {name: (median_ns, min_ns, size)}."""
    rows = {}
    for line in stdout.splitlines():
        name, med, low, size = line.rsplit(" ", 3)
        rows[name] = (float(med), float(low), int(size))
    return rows


def read_outputs(path, timings, count):
    """Split a driver's OUT.bin into {name: (count, size) array}, in the drivers' order."""
    flat = np.fromfile(path, dtype="<f8")
    out, pos = {}, 0
    for name, (_, _, size) in timings.items():
        out[name] = flat[pos:pos + count * size].reshape(count, size)
        pos += count * size
    if pos != flat.size:
        raise RuntimeError(f"{path}: {flat.size} doubles, expected {pos}")
    return out


# --------------------------------------------------------------------------- states
@dataclass
class States:
    """N random states: q (N, nq), qd, qdd, tau (N, nv), f, u (N, 6m) and the row-major file holding them."""

    q: np.ndarray
    qd: np.ndarray
    qdd: np.ndarray
    tau: np.ndarray
    f: np.ndarray
    u: np.ndarray
    path: Path = None

    @property
    def row(self):
        """Doubles per row of the file."""
        return sum(a.shape[1] for a in (self.q, self.qd, self.qdd, self.tau, self.f, self.u))

    def __len__(self):
        return len(self.q)


def draw_states(robot, count, seed):
    """``count`` states: q uniform in the joint limits (else [-pi, pi]), qd, qdd normal,
    tau normal x 10 (``Robot.random_state``), tip forces f normal x 10, u normal."""
    rng = np.random.default_rng(seed)
    m = len(robot.tips)
    rows = [robot.random_state(rng) + (rng.normal(size=6 * m) * 10.0, rng.normal(size=6 * m))
            for _ in range(count)]
    return States(*(np.array(col) for col in zip(*rows)))


def write_states(states, path):
    np.hstack([states.q, states.qd, states.qdd, states.tau, states.f, states.u]).astype("<f8").tofile(path)
    states.path = path
    return states


def pinocchio_states(robot, states, path):
    """The same states in Pinocchio's conventions (``soagen.pinocchio_convention``): quaternions
    normalized, free-flyer velocity, acceleration and torque blocks swapped ([v; ω], [f; n]);
    f and u unchanged (not used by the Pinocchio driver). Same row size, written to ``path``."""
    def rows(fn, a):
        return np.array([fn(robot, x) for x in a])
    converted = States(rows(pc.q_to_pinocchio, states.q), rows(pc.v_to_pinocchio, states.qd),
                       rows(pc.v_to_pinocchio, states.qdd), rows(pc.v_to_pinocchio, states.tau),
                       states.f, states.u)
    return write_states(converted, path)


# --------------------------------------------------------------------------- reference
_COND = {}


def _cond_ok(robot, q):
    key = (robot.fingerprint(), np.asarray(q, float).tobytes())
    if key not in _COND:
        _COND[key] = np.linalg.cond(ref.os_inertia_inverse(robot, q)) < ILL_CONDITIONED
    return _COND[key]


# soagen function -> reference value at state i; "needs_lambda": compared only where cond(Ω) is fine
REFERENCE = {
    "forward_kinematics": lambda r, s, i: ref.forward_kinematics(r, s.q[i]),
    "jacobian": lambda r, s, i: ref.jacobian(r, s.q[i]),
    "jdot_qdot": lambda r, s, i: ref.jdot_qdot(r, s.q[i], s.qd[i]),
    "inverse_dynamics": lambda r, s, i: ref.inverse_dynamics(r, s.q[i], s.qd[i], s.qdd[i]),
    "inverse_dynamics_tip_force": lambda r, s, i: ref.inverse_dynamics(r, s.q[i], s.qd[i], s.qdd[i], s.f[i]),
    "gravity": lambda r, s, i: ref.gravity(r, s.q[i]),
    "bias_forces": lambda r, s, i: ref.bias_forces(r, s.q[i], s.qd[i]),
    "mass_matrix": lambda r, s, i: ref.mass_matrix(r, s.q[i]),
    "mass_matrix_inverse": lambda r, s, i: ref.mass_matrix_inverse(r, s.q[i]),
    "forward_dynamics": lambda r, s, i: ref.forward_dynamics(r, s.q[i], s.qd[i], s.tau[i], variant="FD4"),
    "forward_dynamics_fd1": lambda r, s, i: ref.forward_dynamics(r, s.q[i], s.qd[i], s.tau[i], variant="FD1"),
    "tip_force_acceleration": lambda r, s, i: ref.tip_force_acceleration(r, s.q[i], s.f[i]),
    "os_inertia_inverse": lambda r, s, i: ref.os_inertia_inverse(r, s.q[i]),
    "os_inertia": lambda r, s, i: ref.os_inertia(r, s.q[i]),
    "os_coriolis": lambda r, s, i: ref.os_coriolis(r, s.q[i], s.qd[i]),
    "os_gravity": lambda r, s, i: ref.os_gravity(r, s.q[i]),
    "os_bias": lambda r, s, i: ref.os_bias(r, s.q[i], s.qd[i]),
    "osc_torque": lambda r, s, i: ref.osc_torque(r, s.q[i], s.qd[i], s.u[i]),
    "coriolis": lambda r, s, i: ref.coriolis(r, s.q[i], s.qd[i]),
    # algorithm variants (--variants): the same quantity by another algorithm
    "mass_matrix_ne": lambda r, s, i: ref.mass_matrix(r, s.q[i]),
    "mass_matrix_inverse_innovations": lambda r, s, i: ref.mass_matrix_inverse(r, s.q[i]),
    "mass_matrix_inverse_cholesky": lambda r, s, i: ref.mass_matrix_inverse(r, s.q[i]),
    "forward_dynamics_fd4": lambda r, s, i: ref.forward_dynamics(r, s.q[i], s.qd[i], s.tau[i]),
    "forward_dynamics_fd2": lambda r, s, i: np.concatenate([
        qdd := ref.forward_dynamics(r, s.q[i], s.qd[i], s.tau[i]),
        ref.jacobian(r, s.q[i]) @ qdd + ref.jdot_qdot(r, s.q[i], s.qd[i])]),
    "forward_dynamics_fd3": lambda r, s, i: ref.forward_dynamics(r, s.q[i], s.qd[i], s.tau[i]),
    "forward_dynamics_crba": lambda r, s, i: ref.forward_dynamics(r, s.q[i], s.qd[i], s.tau[i]),
    "os_inertia_recursive": lambda r, s, i: ref.os_inertia(r, s.q[i]),
    "os_inertia_explicit": lambda r, s, i: ref.os_inertia(r, s.q[i]),
}
NEEDS_LAMBDA = {"os_inertia", "os_coriolis", "os_gravity", "os_bias", "osc_torque", "os_inertia_recursive",
                "os_inertia_explicit"}


def family(fn):
    """The family a variant function belongs to (``forward_dynamics_fd4`` -> ``forward_dynamics``):
    its rows are compared with the family's baselines."""
    return next((fam for fam, names in VARIANTS.items() if fn in names), fn)


def check_outputs(robot, states, outputs, what, convert=lambda name, x: x):
    """Worst relative error of ``outputs`` {soagen function: (count, size)} against the reference.

    ``convert(name, row)`` maps one backend output row to soagen's layout.
    Returns {function: error}; functions without a reference get None.
    """
    errors = {}
    for name, rows in outputs.items():
        if name not in REFERENCE:
            errors[name] = None
            continue
        worst, checked = 0.0, 0
        for i, got in enumerate(rows):
            if name in NEEDS_LAMBDA and not _cond_ok(robot, states.q[i]):
                continue
            worst = max(worst, rel_error(convert(name, got), REFERENCE[name](robot, states, i)))
            checked += 1
        errors[name] = worst if checked else None
    bad = {k: v for k, v in errors.items() if v is not None and not v <= TOLERANCE}
    if bad:
        raise ValueError(f"{what}: outputs differ from soagen.reference: "
                         + ", ".join(f"{k} {v:.2e}" for k, v in bad.items()))
    return errors


# --------------------------------------------------------------------------- soagen
def generate_soagen(robot, name, out, variants=True):
    """soagen's C for every function (with ``variants``, every algorithm variant too),
    one worker per function (``soagen.codegen.generate``, as ``soagen generate``).

    Returns (csource, programs, {function: symbolic seconds}, wall seconds).
    """
    t0 = time.perf_counter()
    gen = generate(robot, name, variants=None if variants else ())
    wall = time.perf_counter() - t0
    out.mkdir(parents=True, exist_ok=True)
    (out / f"{name}.h").write_text(gen.csource.header)
    (out / f"{name}.c").write_text(gen.csource.source)
    return gen.csource, gen.programs, {p.name: p.seconds for p in gen.programs}, wall


def compile_times(csource, out):
    """``gcc -O2 -c`` seconds for the whole file and for each per-function unit."""
    whole = timed(["gcc", "-O2", "-std=c99", "-c", out / f"{csource.name}.c", "-o", out / "whole.o"])
    per = {}
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        for fn, text in csource.units or []:
            src = Path(tmp) / f"{fn}.c"
            src.write_text(text)
            per[fn] = timed(["gcc", "-O2", "-std=c99", "-c", src, "-o", src.with_suffix(".o"), "-I", out])
    return whole, per


def soagen_calls_header(name, programs, robot):
    """bench_calls.h for soagen: direct calls to ``<name>_<function>``."""
    inputs = {"q": "Q", "qd": "QD", "qdd": "QDD", "tau": "TAU", "f": "F", "u": "U"}
    entries, biggest = [], 1
    for p in programs:
        args = [inputs[a.name] for a in p.inputs]
        offset = 0
        for a in p.outputs:
            args.append(f"OUT + {offset}")
            offset += a.size
        biggest = max(biggest, offset)
        entries.append(f"    X({p.name}, {offset}, {name}_{p.name}({', '.join(args)}))")
    return "\n".join([f'#include "{name}.h"', f"#define NQ {robot.nq}", f"#define NV {robot.nv}",
                      f"#define NTIP {len(robot.tips)}", f"#define MAX_OUT {biggest}",
                      "#define BENCH_LIST(X) \\", " \\\n".join(entries), ""])


def run_c_driver(build, sources, states, reps, include):
    """Compile bench_driver.c with ``sources`` at -O3 -march=native and run it.

    Returns ({name: (median_ns, min_ns, size)}, {name: (CHECK, size) outputs}).
    """
    exe = build / "bench"
    sh(["gcc", *CFLAGS, "-std=gnu11", "-I", build, *[x for d in include for x in ("-I", d)],
        HERE / "bench_driver.c", *sources, "-o", exe, "-lm"])
    res = sh([exe, states.path, reps, CHECK_STATES, build / "outputs.bin"])
    timings = parse_timings(res.stdout)
    return timings, read_outputs(build / "outputs.bin", timings, CHECK_STATES)


def bench_soagen(spec, robot, states, reps, work):
    """Generate, compile and time soagen's C; check its outputs (abort when wrong)."""
    name = c_name(robot.name)
    src = work / "soagen"
    csource, programs, gen_s, gen_wall = generate_soagen(robot, name, src, spec.variants)
    cc_whole, cc_per = compile_times(csource, src)
    (src / "bench_calls.h").write_text(soagen_calls_header(name, programs, robot))
    timings, outputs = run_c_driver(src, [src / f"{name}.c"], states, reps, [src])
    try:
        errors = check_outputs(robot, states, outputs, "soagen")
    except ValueError as exc:
        raise SystemExit(f"ABORT: {exc}")
    return dict(timings=timings, errors=errors, gen=gen_s, gen_wall=gen_wall, cc_whole=cc_whole,
                cc_per=cc_per, functions=[p.name for p in programs])


# --------------------------------------------------------------------------- Pinocchio
PIN_DEFINES = ["-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
               "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12"]

# soagen function <- (Pinocchio driver label, how its raw output maps to soagen's layout)
PIN_MAP = [
    ("inverse_dynamics", "rnea", "vector"),
    ("mass_matrix", "crba", "upper"),
    ("forward_dynamics", "aba", "vector"),
    ("mass_matrix_inverse", "computeMinverse", "upper"),
    ("gravity", "computeGeneralizedGravity", "vector"),
    ("bias_forces", "nonLinearEffects", "vector"),
    ("jacobian", "computeFrameJacobian", "jacobian"),
    ("forward_kinematics", "forwardKinematics+updateFramePlacement", "pose"),
    ("os_inertia_inverse", "J*Minv*J^T", "six"),
    ("os_inertia_inverse", "computeDelassusMatrix", "six"),
    ("os_inertia", "(J*Minv*J^T)^-1", "six"),
    ("os_inertia", "(J*Minv*J^T)^-1 reusing kinematics", "six"),
    ("os_inertia", "(J*M^-1*J^T)^-1 by crba+cholesky", "six"),
    ("os_inertia", "computeDelassusMatrix + LLT inverse", "six"),
    ("os_inertia", "crba + ConstraintCholeskyDecomposition", "six"),
]


def from_pinocchio(kind, row, robot):
    """One raw Pinocchio output row in soagen's layout and conventions ([angular; linear],
    full matrices, free-flyer velocities [ω; v] by ``soagen.pinocchio_convention``)."""
    nv, m = robot.nv, len(robot.tips)
    if kind == "vector":                      # tau, qdd, g, nle (nv,)
        return pc.v_from_pinocchio(robot, row)
    if kind == "upper":                       # M, Minv: upper triangle of (nv, nv)
        a = row.reshape(nv, nv)
        return pc.matrix_from_pinocchio(robot, np.triu(a) + np.triu(a, 1).T)
    if kind == "jacobian":                    # m stacked LOCAL_WORLD_ALIGNED (6, nv), rows [v; ω]
        return pc.jacobian_from_pinocchio(robot, list(row.reshape(m, 6, nv)))
    if kind == "six":                         # Ω, Λ (6m, 6m) in tip space: [v; ω] -> [ω; v] per tip
        p = np.concatenate([[6 * k + 3, 6 * k + 4, 6 * k + 5, 6 * k, 6 * k + 1, 6 * k + 2] for k in range(m)])
        return row.reshape(6 * m, 6 * m)[np.ix_(p, p)]
    return row                                # "pose": m homogeneous 4x4 (convention independent)


def pinocchio_prefix():
    """The cmeel prefix of the pin wheel (headers, Eigen, Boost)."""
    try:
        import cmeel
        import pinocchio
    except ImportError as exc:
        raise Unavailable(f"pinocchio (pip package pin) is not importable: {exc}")
    prefix = Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix"
    if not (prefix / "include" / "pinocchio").is_dir():
        raise Unavailable(f"no Pinocchio headers under {prefix}/include")
    if not (prefix / "include" / "eigen3" / "Eigen").is_dir():
        raise Unavailable(f"no Eigen headers under {prefix}/include/eigen3: pip install cmeel-eigen")
    return prefix, pinocchio.__version__


def build_pinocchio(prefix):
    """Compile pinocchio_bench.cpp once per (source, flags, compiler, pin); -> (exe, seconds or None if cached)."""
    source = HERE / "pinocchio_bench.cpp"
    cmd = ["g++", *CFLAGS, "-DNDEBUG", "-std=c++17", "-Wno-deprecated-declarations", *PIN_DEFINES,
           "-I", prefix / "include", "-I", prefix / "include" / "eigen3", source, "-o", "EXE",
           "-L", prefix / "lib", "-lboost_serialization", f"-Wl,-rpath,{prefix / 'lib'}"]
    key = hashlib.sha256(source.read_bytes() + " ".join(map(str, cmd)).encode()
                         + sh(["g++", "--version"]).stdout.encode()).hexdigest()[:16]
    exe = WORK / f"pinocchio-{key}" / "pinocchio_bench"
    if exe.exists():
        return exe, None
    exe.parent.mkdir(parents=True, exist_ok=True)
    print("  compiling pinocchio_bench.cpp (header-only Pinocchio, a few minutes, once) ...", flush=True)
    try:
        seconds = timed([exe if c == "EXE" else c for c in cmd])
    except RuntimeError as exc:
        raise Unavailable(f"pinocchio_bench.cpp did not compile: {exc}")
    return exe, seconds


def pinocchio_model(spec, robot, path):
    """Parse the URDF with Pinocchio (free-flyer root for a floating base), lock the same
    joints at the same values, check sizes, joint order and gravity, save as text."""
    import pinocchio as pin

    model = (pin.buildModelFromUrdf(str(spec.urdf), pin.JointModelFreeFlyer()) if spec.floating_base
             else pin.buildModelFromUrdf(str(spec.urdf)))
    q_ref = pin.neutral(model)
    locked = []
    for joint, value in spec.lock.items():
        jid = model.getJointId(joint)
        if jid >= model.njoints or model.joints[jid].nq != 1:
            raise Unavailable(f"cannot lock {joint} in the Pinocchio model")
        q_ref[model.joints[jid].idx_q] = value
        locked.append(jid)
    if locked:
        model = pin.buildReducedModel(model, locked, q_ref)
    if (model.nq, model.nv) != (robot.nq, robot.nv):
        raise Unavailable(f"Pinocchio model has nq={model.nq}, nv={model.nv}; soagen nq={robot.nq}, nv={robot.nv}")
    names = list(model.names)[1:]
    if names != [b.joint for b in robot.bodies]:
        raise Unavailable(f"joint order differs: Pinocchio {names}, soagen {[b.joint for b in robot.bodies]}")
    if not np.allclose(model.gravity.linear, robot.gravity):
        raise Unavailable("gravity differs")
    for tip in robot.tips:
        if not model.existFrame(tip.name):
            raise Unavailable(f"no frame {tip.name} in the Pinocchio model")
    model.saveToText(str(path))
    return path


def bench_pinocchio(spec, robot, states, reps, work):
    """Time the Pinocchio driver; -> dict(timings, errors, build_s) or raise Unavailable."""
    prefix, version = pinocchio_prefix()
    exe, build_s = build_pinocchio(prefix)
    out = work / "pinocchio"
    out.mkdir(parents=True, exist_ok=True)
    model = pinocchio_model(spec, robot, out / "model.txt")
    pin_states = pinocchio_states(robot, states, out / "states_pinocchio.bin")
    tips = ",".join(t.name for t in robot.tips)
    try:
        res = sh([exe, model, tips, pin_states.path, pin_states.row, reps, CHECK_STATES, out / "outputs.bin"])
    except RuntimeError as exc:
        raise Unavailable(f"pinocchio_bench failed: {exc}")
    timings = parse_timings(res.stdout)
    raw = read_outputs(out / "outputs.bin", timings, CHECK_STATES)
    errors = {}
    for fn, label, kind in PIN_MAP:
        rows = np.array([from_pinocchio(kind, r, robot) for r in raw[label]])
        try:
            errors[label] = check_outputs(robot, states, {fn: rows}, f"Pinocchio {label}")[fn]
        except ValueError as exc:
            raise Unavailable(str(exc))
    return dict(timings=timings, errors=errors, build_s=build_s, version=version)


# --------------------------------------------------------------------------- CasADi
CASADI_MAP = {"inverse_dynamics": "rnea", "mass_matrix": "crba", "forward_dynamics": "aba"}
CASADI_INPUTS = {"q": "Q", "v": "QD", "qd": "QD", "a": "QDD", "qdd": "QDD", "tau": "TAU"}
CASADI_DEFAULT_INPUTS = {"rnea": ["Q", "QD", "QDD"], "crba": ["Q"], "aba": ["Q", "QD", "TAU"]}


def casadi_script():
    for name in CASADI_SCRIPTS:
        if (HERE / name).is_file():
            return HERE / name
    raise Unavailable(f"no benchmarks/{CASADI_SCRIPTS[0]}")


def casadi_generate(spec, out):
    """Run the CasADi helper script; -> manifest dict (raise Unavailable with its reason)."""
    script = casadi_script()
    cmd = [sys.executable, script, "--urdf", spec.urdf, "--out", out]
    for joint, value in spec.lock.items():
        cmd += ["--lock", f"{joint}={value}"]
    if spec.floating_base:
        cmd.append("--floating-base")
    print(f"  running {script.name} (creates its venv on first use) ...", flush=True)
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=1800)
    if (out / "error.txt").exists() or res.returncode:
        why = (out / "error.txt").read_text().strip() if (out / "error.txt").exists() else res.stderr[-500:]
        raise Unavailable(f"{script.name} failed: {why}")
    return json.loads((out / "manifest.json").read_text())


def casadi_calls_header(manifest, n, m):
    """bench_calls.h for CasADi: a wrapper per function with its arg/res/work arrays."""
    lines = []
    entries, biggest = [], 1
    for fn in CASADI_MAP.values():
        info = manifest[fn]
        names = info.get("input_names") or []
        args = ([CASADI_INPUTS[x] for x in names] if all(x in CASADI_INPUTS for x in names) and names
                else CASADI_DEFAULT_INPUTS[fn])
        if [int(s) for s in info["inputs"]] != [n] * len(args):
            raise Unavailable(f"CasADi {fn} inputs {info['inputs']}, expected {len(args)} x {n}")
        size = sum(int(s) for s in info["outputs"])
        biggest = max(biggest, size)
        params = ", ".join(f"const double *in{k}" for k in range(len(args)))
        lines += [f'#include "{info["h"]}"',
                  f"static casadi_int {fn}_iw[{max(1, info['sz_iw'])}];",
                  f"static double {fn}_w[{max(1, info['sz_w'])}];",
                  f"static inline void call_{fn}({params}, double *out) {{",
                  f"    const double *arg[{max(len(args), info['sz_arg'])}] = "
                  f"{{{', '.join(f'in{k}' for k in range(len(args)))}}};",
                  f"    double *res[{max(1, info['sz_res'])}] = {{out}};",
                  f"    {fn}(arg, res, {fn}_iw, {fn}_w, 0);", "}"]
        entries.append(f"    X({fn}, {size}, call_{fn}({', '.join(args)}, OUT))")
    lines += [f"#define NQ {n}", f"#define NV {n}", f"#define NTIP {m}", f"#define MAX_OUT {biggest}",
              "#define BENCH_LIST(X) \\", " \\\n".join(entries), ""]
    return "\n".join(lines)


def bench_casadi(spec, robot, states, reps, work):
    """Generate (helper script), compile and time CasADi's rnea/crba/aba; -> dict or raise Unavailable."""
    out = work / "casadi"
    manifest = casadi_generate(spec, out)
    if manifest.get("joint_names") and manifest["joint_names"] != [b.joint for b in robot.bodies]:
        raise Unavailable(f"CasADi joint order {manifest['joint_names']} differs from soagen's")
    (out / "bench_calls.h").write_text(casadi_calls_header(manifest, robot.n, len(robot.tips)))
    sources = [out / manifest[fn]["c"] for fn in CASADI_MAP.values()]
    cc = {fn: timed(["gcc", "-O2", "-c", out / manifest[fn]["c"], "-o", out / f"{fn}.O2.o"])
          for fn in CASADI_MAP.values()}
    try:
        timings, raw = run_c_driver(out, sources, states, reps, [out])
    except RuntimeError as exc:
        raise Unavailable(f"CasADi C did not build or run: {exc}")
    errors = {}
    tri = manifest["crba"].get("crba_triangle", "full")
    for fn, cname in CASADI_MAP.items():
        shape = manifest[cname].get("output_shapes", [[robot.n, 1]])[0]

        def convert(_, row, shape=shape):
            a = row.reshape(shape[1], shape[0]).T          # CasADi buffers are column-major
            if a.shape == (robot.n, robot.n) and tri in ("upper", "lower"):
                a = np.triu(a) + np.triu(a, 1).T if tri == "upper" else np.tril(a) + np.tril(a, -1).T
            return a
        try:
            errors[cname] = check_outputs(robot, states, {fn: raw[cname]}, f"CasADi {cname}", convert)[fn]
        except ValueError as exc:
            raise Unavailable(str(exc))
    return dict(timings=timings, errors=errors, cc=cc, version=manifest.get("casadi_version", "?"),
                gen_s=float(manifest.get("inner_seconds", float("nan"))))


# --------------------------------------------------------------------------- Python module
BATCH_FUNCTIONS = {
    "inverse_dynamics": ("q", "qd", "qdd"), "mass_matrix": ("q",), "forward_dynamics": ("q", "qd", "tau"),
    "mass_matrix_inverse": ("q",), "jacobian": ("q",), "forward_kinematics": ("q",), "os_inertia": ("q",),
}


def bench_python(robot, functions, states, big, reps=5, batch_reps=15):
    """Per-state cost of the cffi module: a loop of single calls over ``states`` (``reps``
    times), then ``batch_reps`` back-to-back batch calls on ``big`` (BATCH_ROWS states) with a
    fresh result each, then as many into one reused ``out=`` buffer; medians.
    -> (build seconds, {function: (single ns, batch ns, batch into out= ns)})."""
    t0 = time.perf_counter()
    mod = soagen.build(robot)
    build_s = time.perf_counter() - t0
    result = {}

    def per_state(call, args, count):
        t0 = time.perf_counter()
        call(*args)
        return (time.perf_counter() - t0) / count * 1e9

    for fn, names in BATCH_FUNCTIONS.items():
        if fn not in functions:
            continue
        call = getattr(mod, fn)
        single_args = list(zip(*(getattr(states, a) for a in names)))
        batch_args = [getattr(big, a) for a in names]
        single = []
        for _ in range(reps):
            t0 = time.perf_counter()
            for args in single_args:
                try:
                    call(*args)
                except soagen.SingularError:
                    pass
            single.append((time.perf_counter() - t0) / len(single_args) * 1e9)
        try:
            buf = np.empty_like(call(*batch_args))
            batch = [per_state(call, batch_args, len(big)) for _ in range(batch_reps)]
            reused = [per_state(lambda *a: call(*a, out=buf), batch_args, len(big)) for _ in range(batch_reps)]
        except soagen.SingularError:
            batch = reused = []
        result[fn] = tuple(statistics.median(x) if x else None for x in (single, batch, reused))
    return build_s, result


# --------------------------------------------------------------------------- report
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
            f"- Python {platform.python_version()}, numpy {np.__version__}, soagen {soagen.__version__}, "
            f"Pinocchio (pin wheel) {pin_v}, CasADi {casadi}",
            f"- date: {datetime.datetime.now(datetime.timezone.utc).strftime('%Y-%m-%d %H:%M UTC')}"]


def main_table(sg, pin, cas):
    """Rows of the timing table: every soagen function; Pinocchio's alternative routes
    for the same quantity on extra rows (″) under it."""
    lines = ["| function | soagen ns/call | Pinocchio call | Pinocchio ns/call | soagen/Pinocchio "
             "| CasADi ns/call | soagen/CasADi | generation s | gcc -O2 -c s |",
             "|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for fn in sg["functions"]:
        ns = sg["timings"][fn][0]
        labels = [label for f, label, _ in PIN_MAP if f == family(fn)] or [None]
        labels = labels if fn == family(fn) else labels[:1]
        p = pin["timings"][labels[0]][0] if pin and labels[0] else None
        c = cas["timings"][CASADI_MAP[family(fn)]][0] if cas and family(fn) in CASADI_MAP else None
        cc = f"{sg['cc_per'][fn]:.2f}" if fn in sg["cc_per"] else "n/a"
        lines.append(f"| {fn} | {fmt_ns(ns)} | {labels[0] or '—'} | {fmt_ns(p)} | {fmt_ratio(ns, p)} "
                     f"| {fmt_ns(c)} | {fmt_ratio(ns, c)} | {sg['gen'][fn]:.2f} | {cc} |")
        for label in labels[1:]:
            p = pin["timings"][label][0] if pin else None
            lines.append(f"| ″ | {fmt_ns(ns)} | {label} | {fmt_ns(p)} | {fmt_ratio(ns, p)} | | | | |")
    return lines


def python_table(sg, py):
    lines = ["| function | C loop ns/call | Python single call ns (calls/s) | Python batch N=10000 ns/state "
             "| batch / C loop | batch into `out=` ns/state | `out=` / C loop |", "|---|---:|---:|---:|---:|---:|---:|"]
    for fn, (single, batch, reused) in py.items():
        if fn not in sg["timings"]:
            continue
        c = sg["timings"][fn][0]
        lines.append(f"| {fn} | {fmt_ns(c)} | {fmt_ns(single)} ({1e9 / single:,.0f}) | {fmt_ns(batch)} "
                     f"| {fmt_ratio(batch, c)} | {fmt_ns(reused)} | {fmt_ratio(reused, c)} |")
    return lines


def describe(robot):
    """'7 joints, tip panda_hand' or, for a floating base / several tips, sizes and tips."""
    tips = ", ".join(t.name for t in robot.tips)
    if robot.nq == robot.nv and len(robot.tips) == 1:
        return f"{robot.n} joints, tip {tips}"
    base = "floating base, " if robot.bodies[0].joint_type == "floating" else ""
    return f"{base}nq = {robot.nq}, nv = {robot.nv}, {len(robot.tips)} tips {tips}"


def report(robot_name, spec, robot, args, sg, pin, cas, py_build, py, why):
    """Markdown section for one robot."""
    cmd = "python benchmarks/run.py " + " ".join(shlex.quote(a) for a in sys.argv[1:])
    casadi_v = cas["version"] if cas else "n/a"
    m = len(robot.tips)
    lines = [f"## {robot_name} ({describe(robot)})", "",
             f"Command: `{cmd}`; N = {args.n} random states (seed {args.seed}), "
             f"{args.reps} timed passes, median pass reported, ns per call.", ""]
    lines += machine_info(casadi_v) + [""]
    lines += main_table(sg, pin, cas) + [""]
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
    total_gen = sum(sg["gen"].values())
    unchecked = [fn for fn, err in sg["errors"].items() if err is None]
    lines += [f"- soagen generation (sympy stage, record + CSE, summed over functions): {total_gen:.1f} s; "
              f"wall with {jobs()} workers incl. emit: {sg['gen_wall']:.1f} s",
              f"- `gcc -O2 -c {c_name(robot.name)}.c` (whole file): {sg['cc_whole']:.2f} s; "
              f"per-function units: {sum(sg['cc_per'].values()):.2f} s summed (column above)",
              f"- timed builds: soagen and CasADi C with `gcc {' '.join(CFLAGS)}`, Pinocchio "
              f"`g++ {' '.join(CFLAGS)} -DNDEBUG` header-only; outputs of the first {CHECK_STATES} states "
              f"checked against `soagen.reference` (relative error <= {TOLERANCE:g})"
              + (f"; not checked (no reference mapping or no well-conditioned state): {', '.join(unchecked)}"
                 if unchecked else "")]
    if pin:
        worst = max((v for v in pin["errors"].values() if v is not None), default=float("nan"))
        floating = robot.bodies[0].joint_type == "floating"
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
    from soagen.cffi_build import COMPILE_ARGS

    lines += ["", f"Python module (`soagen.build`, cffi, compiled `{' '.join(COMPILE_ARGS)}`; "
              f"build/load {py_build:.1f} s): "
              f"single calls loop over the {args.n} states, batch = one call on {BATCH_ROWS} states, median of 15 back to back "
              "(a fresh result array per call, or `out=` reusing one; large fresh arrays come from the "
              "kernel as new pages, which costs per call what streaming the rows out costs).", ""]
    lines += python_table(sg, py)
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


# --------------------------------------------------------------------------- main
def run_robot(robot_name, args):
    """States, every backend, the Python module, then the report (printed and written)."""
    spec = SPECS[robot_name]
    robot = spec.robot()
    work = WORK / robot_name
    work.mkdir(parents=True, exist_ok=True)
    print(f"== {robot_name}: {describe(robot)}, N={args.n}, reps={args.reps}", flush=True)
    states = write_states(draw_states(robot, args.n, args.seed), work / "states.bin")

    sg = bench_soagen(spec, robot, states, args.reps, work)
    print(f"  soagen: generated in {sg['gen_wall']:.1f} s, outputs checked", flush=True)
    why = {}
    results = {}
    for label, fn in (("pinocchio", bench_pinocchio), ("casadi", bench_casadi)):
        if getattr(args, f"no_{label}"):
            why[label], results[label] = f"skipped (--no-{label})", None
            continue
        try:
            results[label] = fn(spec, robot, states, args.reps, work)
            print(f"  {label}: timed, outputs checked", flush=True)
        except (Unavailable, RuntimeError, OSError, ValueError, KeyError, subprocess.TimeoutExpired) as exc:
            why[label], results[label] = str(exc), None
            print(f"  {label}: n/a — {exc}", flush=True)
    big = draw_states(robot, BATCH_ROWS, args.seed + 1)
    py_build, py = bench_python(robot, sg["functions"], states, big)
    section = report(robot_name, spec, robot, args, sg, results["pinocchio"], results["casadi"], py_build, py,
                     why)
    print()
    print(section)
    if not args.no_doc:
        write_doc(robot_name, section)
        print(f"(written to {DOC.relative_to(ROOT)})")


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--robot", choices=[*SPECS, "all"], default="panda")
    parser.add_argument("-n", "--n", type=int, default=1000, help="random states (default 1000)")
    parser.add_argument("--reps", type=int, default=21, help="timed passes over the states (default 21)")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--no-casadi", action="store_true", help="skip the CasADi baseline")
    parser.add_argument("--no-pinocchio", action="store_true", help="skip the Pinocchio baseline")
    parser.add_argument("--no-doc", action="store_true", help="do not write docs/benchmarks.md")
    args = parser.parse_args(argv)
    if args.n < CHECK_STATES:
        parser.error(f"--n must be at least {CHECK_STATES}")
    for name in SPECS if args.robot == "all" else [args.robot]:
        run_robot(name, args)
    return 0


if __name__ == "__main__":
    sys.exit(main())
