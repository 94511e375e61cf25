"""The timed backends: soagen's generated C, Pinocchio (C++), CasADi-generated C, the Python module.

Each ``bench_*`` builds its backend, times it on the states with a driver and
checks its outputs on the first states against ``soagen.reference``.
"""
from __future__ import annotations

import hashlib
import json
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

import soagen_side as sg
from states import pinocchio_states

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
CASADI_SCRIPTS = ("casadi_kin_dyn.py", "casadi_kindyn.py")
CFLAGS = ["-O3", "-march=native"]
CHECK_STATES = 20         # leading states whose outputs are checked against the reference
BATCH_ROWS = 10000


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
    name = sg.c_name(robot.name)
    src = work / "soagen"
    csource, programs, gen_s, gen_wall = sg.generate_soagen(robot, name, src, spec.variants)
    cc_whole, cc_per = compile_times(csource, src)
    (src / "bench_calls.h").write_text(sg.calls_header(name, programs, robot))
    timings, outputs = run_c_driver(src, [src / f"{name}.c"], states, reps, [src])
    try:
        errors = sg.check_outputs(robot, states, outputs, "soagen")
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
    if names != sg.joint_names(robot):
        raise Unavailable(f"joint order differs: Pinocchio {names}, soagen {sg.joint_names(robot)}")
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
        rows = np.array([sg.from_pinocchio(kind, r, robot) for r in raw[label]])
        try:
            errors[label] = sg.check_outputs(robot, states, {fn: rows}, f"Pinocchio {label}")[fn]
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
    if manifest.get("joint_names") and manifest["joint_names"] != sg.joint_names(robot):
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
            errors[cname] = sg.check_outputs(robot, states, {fn: raw[cname]}, f"CasADi {cname}", convert)[fn]
        except ValueError as exc:
            raise Unavailable(str(exc))
    return dict(timings=timings, errors=errors, cc=cc, version=manifest.get("casadi_version", "?"),
                gen_s=float(manifest.get("inner_seconds", float("nan"))))


# --------------------------------------------------------------------------- Python module


def bench_python(robot, functions, states, big, reps=5, batch_reps=15):
    """Per-state cost of the cffi module: a loop of single calls over ``states`` (``reps``
    times), then ``batch_reps`` back-to-back batch calls on ``big`` (BATCH_ROWS states) with a
    fresh result each, then as many into one reused ``out=`` buffer; medians.
    -> (build seconds, {function: (single ns, batch ns, batch into out= ns)})."""
    t0 = time.perf_counter()
    mod = sg.build_module(robot)
    build_s = time.perf_counter() - t0
    result = {}

    def per_state(call, args, count):
        t0 = time.perf_counter()
        call(*args)
        return (time.perf_counter() - t0) / count * 1e9

    for fn, names in sg.BATCH_FUNCTIONS.items():
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
                except sg.SingularError:
                    pass
            single.append((time.perf_counter() - t0) / len(single_args) * 1e9)
        try:
            buf = np.empty_like(call(*batch_args))
            batch = [per_state(call, batch_args, len(big)) for _ in range(batch_reps)]
            reused = [per_state(lambda *a: call(*a, out=buf), batch_args, len(big)) for _ in range(batch_reps)]
        except sg.SingularError:
            batch = reused = []
        result[fn] = tuple(statistics.median(x) if x else None for x in (single, batch, reused))
    return build_s, result


