"""The timed backends and the one driver process that times them interleaved.

Backends (each a table of timed functions, see ``bench.h``):

* ``soagen``: soagen's generated C, its own inline sin/cos;
* ``soagen_libm``: soagen's trig-inputs C (``generate(..., trig_inputs=True)``), each
  timed call first computing cos/sin of the revolute joints' q with libm;
* ``pinocchio``: ``pinocchio_bench.cpp``, header-only Pinocchio from the ``pin`` wheel;
* ``casadi``: CasADi-generated C of rnea/crba/aba and of the Jacobians of rnea and aba
  (``casadi_kin_dyn.py``, with ``cse``).

All are compiled with :data:`CFLAGS` and linked into one executable built from
``bench_driver.c``, which runs them round-robin on the same states
(:func:`run_interleaved`).  Each backend's outputs on every state are
checked against ``soagen.reference``; the Python module is timed on its own
(:func:`bench_python`).
"""
from __future__ import annotations

import concurrent.futures
import hashlib
import json
import shutil
import statistics
import subprocess
import sys
import sysconfig
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

import soagen_side as sg
from states import pinocchio_states

HERE = Path(__file__).resolve().parent
WORK = HERE / ".work"
CASADI_SCRIPT = HERE / "casadi_kin_dyn.py"
# every timed build: soagen's C, CasADi's C, Pinocchio's C++ (+ -DNDEBUG); -ffp-contract=fast
# is gcc's default outside ISO C modes, spelled out so that all three surely get fused multiply-adds
CFLAGS = ["-O3", "-march=native", "-ffp-contract=fast"]
CHECK_STATES = 20         # the fewest states a run may have (every state's outputs are checked)
BATCH_ROWS = 10000


class Unavailable(Exception):
    """A baseline that cannot be measured; the message says why (shown as n/a)."""


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


def c_string(text):
    return json.dumps(text, ensure_ascii=False)   # a valid C string literal for our texts


# --------------------------------------------------------------------------- results
@dataclass
class Backend:
    """A backend ready to link: its objects, states file, init argument and facts for the report."""

    name: str                 # soagen, soagen_libm, pinocchio, casadi
    objects: list             # compiled objects (and libraries) to link
    states: Path              # rows in this backend's conventions
    arg: str = ""             # init argument (Pinocchio: "MODEL.txt|TIP,TIP")
    link: list = field(default_factory=list)    # extra linker arguments
    cxx: bool = False         # needs the C++ runtime
    info: dict = field(default_factory=dict)    # version, compile seconds, ...

    @property
    def symbol(self):
        return f"bench_{self.name}"


@dataclass
class Timed:
    """One timed function of one backend."""

    backend: str
    name: str
    calls: str                # what one timed call runs
    size: int                 # output doubles per call
    ns: np.ndarray            # (rounds,) ns per call, one pass over the states per round
    outputs: np.ndarray = None   # (states, size): every state's outputs

    @property
    def median(self):
        return float(np.median(self.ns))


@dataclass
class DriverRun:
    """What the interleaved driver measured."""

    timed: dict               # {(backend, function): Timed}
    round_ms: np.ndarray      # (rounds,) wall time of each round
    setup_s: dict             # {backend: init seconds}
    chunk: int                # a pass reports its median chunk of this many consecutive states
    wall_s: float             # the driver process, start to exit
    link_s: float             # compiling bench_driver.c and linking

    def of(self, backend):
        """{function: Timed} of one backend, in driver order."""
        return {name: t for (b, name), t in self.timed.items() if b == backend}


# --------------------------------------------------------------------------- C objects
def compile_object(source, obj, include=(), defines=(), cxx=False, flags=None):
    """gcc (g++ with ``cxx``) ``flags`` (default :data:`CFLAGS` and the language standard) -c."""
    flags = flags or [*CFLAGS, "-std=c++17" if cxx else "-std=gnu11"]
    cmd = ["g++" if cxx else "gcc", *flags, "-c", source, "-o", obj, *[x for d in include for x in ("-I", d)],
           *defines]
    return timed(cmd)


def cached_object(source, obj, include=()):
    """``compile_object`` of a generated C unit with the flags ``soagen.build`` gives it (the module's,
    and those it adds for a long unit), reusing an earlier object of the same text, header and flags
    (WORK/objects; a large generated function takes minutes at -O3 on this shared machine)."""
    source = Path(source)
    flags = sg.compile_args() + sg.long_unit_args(source.read_text())
    header = source.with_suffix(".h")
    key = hashlib.sha256(source.read_bytes() + (header.read_bytes() if header.exists() else b"")
                         + " ".join(flags).encode()
                         + sh(["gcc", "--version"]).stdout.encode()).hexdigest()[:20]
    cached = WORK / "objects" / f"{key}.o"
    if not cached.exists():
        cached.parent.mkdir(parents=True, exist_ok=True)
        tmp = cached.with_suffix(".tmp.o")
        compile_object(source, tmp, include, flags=flags)
        tmp.rename(cached)
    shutil.copyfile(cached, obj)
    return obj


def unit_objects(gen, out):
    """soagen's C compiled as ``soagen.build`` compiles it: each function (or part of a cut one) its
    own translation unit, a long unit with the flags the build gives it; -> the objects."""
    folder = out / "units"
    folder.mkdir(parents=True, exist_ok=True)
    sources = []
    for unit, text in gen.units:
        sources.append(folder / f"{unit}.c")
        sources[-1].write_text(text)
    with concurrent.futures.ThreadPoolExecutor(sg.jobs()) as pool:
        return list(pool.map(lambda source: cached_object(source, source.with_suffix(".o"), [out]), sources))


def c_backend_object(build, name, calls_header, include=()):
    """``c_backend.c`` compiled for one backend whose calls header text is ``calls_header``."""
    (build / f"{name}_calls.h").write_text(calls_header)
    obj = build / f"{name}_backend.o"
    compile_object(HERE / "c_backend.c", obj, [build, HERE, *include],
                   [f'-DBENCH_CALLS="{name}_calls.h"', f"-DBENCH_SYMBOL=bench_{name}",
                    f'-DBENCH_NAME="{name}"'])
    return obj


def calls_header_lines(nq, nv, ntip, nr, biggest, entries):
    return [f"#define NQ {nq}", f"#define NV {nv}", f"#define NTIP {ntip}", f"#define NR {nr}",
            f"#define MAX_OUT {max(1, biggest)}",
            "#define BENCH_LIST(X) \\", " \\\n".join(entries), ""]


# --------------------------------------------------------------------------- soagen
INPUTS = {"q": "Q", "qd": "QD", "qdd": "QDD", "tau": "TAU", "f": "F", "u": "U", "lam": "LAM", "lam_f": "LAM_F",
          "cq": "CQ_", "sq": "SQ_"}


def soagen_calls_header(gen, robot):
    """The calls header of soagen's C: direct calls to ``<prefix>_<function>``; for the
    trig-inputs form, cos/sin of the revolute joints' q by libm first (``bench_trig``)."""
    entries, biggest, trig = [], 1, []
    for f in gen.functions:
        args = [INPUTS[a] for a in f.inputs]
        offsets = np.cumsum([0, *f.outputs])
        args += [f"OUT + {o}" for o in offsets[:-1]]
        biggest = max(biggest, int(offsets[-1]))
        call = f"{gen.prefix}_{f.name}({', '.join(args)})"
        calls = f"{gen.prefix}_{f.name}"
        if "cq" in f.inputs:
            # cos and sin of the angles it reads, one local each: gcc makes one sincos call of each
            trig += [f"static inline void trig_{f.name}(const double *q)", "{"]
            trig += [f"    {{ const double x = q[{k}]; CQ_[{k}] = cos(x); SQ_[{k}] = sin(x); }}" for k in f.trig]
            trig += ["}"]
            call = f"(trig_{f.name}(Q), {call})"
            calls = f"libm sincos of q[{', '.join(map(str, f.trig))}], then {calls}"
        entries.append(f"    X({f.name}, {int(offsets[-1])}, {c_string(calls)}, {call})")
    lines = [f'#include "{gen.header.name}"']
    if trig:
        lines += [f"static double CQ_[{robot.nq}], SQ_[{robot.nq}];", *trig]
    sizes = (robot.nq, robot.nv, len(robot.tips), robot.tip_rows)
    return "\n".join(lines + calls_header_lines(*sizes, biggest, entries))


def compile_times(gen, out):
    """``gcc -O2 -c`` seconds for the whole file and for each per-function unit."""
    whole = timed(["gcc", "-O2", "-std=c99", "-c", gen.source, "-o", out / "whole.o"])
    per = {}
    with tempfile.TemporaryDirectory(dir=out) as tmp:
        for fn, text in gen.units:
            src = Path(tmp) / f"{fn}.c"
            src.write_text(text)
            per[fn] = timed(["gcc", "-O2", "-std=c99", "-c", src, "-o", src.with_suffix(".o"), "-I", out])
    return whole, per


@dataclass
class SoagenBuild:
    """soagen's side of a run: the generated functions and what making them cost."""

    functions: list           # [soagen_side.Function], inline-trig form
    gen_wall: float           # generation wall seconds (inline-trig form)
    cc_whole: float           # gcc -O2 -c of the whole file
    cc_per: dict              # {function: gcc -O2 -c of its own unit}
    backends: list            # [Backend soagen, Backend soagen_libm]


def soagen_backends(spec, robot, states, work, functions=None):
    """Generate soagen's C in both forms (inline trig; trig inputs with libm) and compile them
    (every function of the spec, or exactly ``functions``)."""
    prefix = sg.c_name(robot.name)
    functions = functions or sg.benchmarked_functions(robot, spec.variants, spec.derivatives)
    backends, builds = [], {}
    for name, trig_inputs in (("soagen", False), ("soagen_libm", True)):
        out = work / name
        gen = sg.generate_c(robot, prefix + ("_ti" if trig_inputs else ""), out, spec.variants, trig_inputs,
                            functions)
        builds[name] = gen
        objects = unit_objects(gen, out)
        backends.append(Backend(name, [*objects, c_backend_object(out, name, soagen_calls_header(gen, robot), [out])],
                                states.path))
    cc_whole, cc_per = compile_times(builds["soagen"], work / "soagen")
    return SoagenBuild(builds["soagen"].functions, builds["soagen"].wall, cc_whole, cc_per, backends)


def check_soagen(robot, states, run, backend, beyond=None, upto=None):
    """Errors of a soagen backend's outputs against the reference (from state ``upto`` on against
    ``beyond``, Pinocchio's checked outputs, where given: ``soagen_side.check_outputs``); a wrong
    soagen result aborts."""
    try:
        return sg.check_outputs(robot, states, {n: t.outputs for n, t in run.of(backend).items()}, backend,
                                beyond=beyond, upto=upto)
    except ValueError as exc:
        raise SystemExit(f"ABORT: {exc}")


# --------------------------------------------------------------------------- Pinocchio
PIN_DEFINES = ["-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
               "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12"]

# soagen family <- (Pinocchio entry, how its raw output maps to soagen's layout)
PIN_MAP = [
    ("inverse_dynamics", "rnea", "vector"),
    ("mass_matrix", "crba", "upper"),
    ("forward_dynamics", "aba", "vector"),
    ("mass_matrix_inverse", "computeMinverse", "upper"),
    ("gravity", "computeGeneralizedGravity", "vector"),
    ("bias_forces", "nonLinearEffects", "vector"),
    ("jacobian", "computeFrameJacobian", "jacobian"),
    ("forward_kinematics", "framePlacements", "pose"),
    ("os_inertia_inverse", "omega_minv", "six"),
    ("os_inertia_inverse", "delassus", "six"),
    ("os_inertia", "lambda_minv", "six"),
    ("os_inertia", "lambda_minv_reuse", "six"),
    ("os_inertia", "lambda_crba_cholesky", "six"),
    ("os_inertia", "lambda_delassus", "six"),
    ("os_inertia", "lambda_constraint_cholesky", "six"),
    ("inverse_dynamics_derivatives", "computeRNEADerivatives", "rnea_derivatives"),
    ("inverse_dynamics_second_derivatives", "ComputeRNEASecondOrderDerivatives", "rnea_second_derivatives"),
    ("forward_dynamics_derivatives", "computeABADerivatives", "aba_derivatives"),
    ("centroidal_momentum_matrix", "ccrba", "centroidal"),
    ("centroidal_momentum_matrix", "computeCentroidalMap", "centroidal"),
    ("centroidal_dynamics_derivatives", "computeCentroidalDynamicsDerivatives", "centroidal_derivatives"),
    ("contact_dynamics", "constraintDynamics", "contact"),
    ("contact_dynamics_derivatives", "computeConstraintDynamicsDerivatives", "contact_derivatives"),
]


def pinocchio_entries(functions):
    """Pinocchio's entries for the families of soagen's ``functions`` (every entry for None)."""
    families = None if functions is None else {sg.family(f) for f in functions}
    return [label for fn, label, _ in PIN_MAP if families is None or fn in families]


def cmeel_include(*parts):
    """The first ``cmeel.prefix/include/<parts>`` folder on the import path (the pin wheel's
    headers and cmeel-eigen's may sit in different site-packages, e.g. a venv's and the system's)."""
    for base in dict.fromkeys([*sys.path, sysconfig.get_paths()["purelib"]]):
        path = Path(base or ".") / "cmeel.prefix" / "include"
        if path.joinpath(*parts).is_dir():
            return path
    return None


def pinocchio_prefix():
    """(include folders, lib folder, version) of the pin wheel and the Eigen headers."""
    try:
        import pinocchio
    except ImportError as exc:
        raise Unavailable(f"pinocchio (pip package pin) is not importable: {exc}")
    pin_include, eigen_include = cmeel_include("pinocchio"), cmeel_include("eigen3", "Eigen")
    if pin_include is None:
        raise Unavailable("no Pinocchio headers under any cmeel.prefix/include on the import path")
    if eigen_include is None:
        raise Unavailable("no Eigen headers under cmeel.prefix/include/eigen3: pip install cmeel-eigen")
    overlay = gcc12_overlay(pin_include, pinocchio.__version__)
    return [*overlay, pin_include, eigen_include / "eigen3"], pin_include.parent / "lib", pinocchio.__version__


# pin 4.0.0's constraints/utils.hxx holds a non-dependent ``static_assert(false, ...)`` in the
# unspecialized ComputeBlockDiagonalPatternImpl, guarded for g++ >= 12 only; g++ 12 rejects the
# header wherever it is included (g++ 13 accepts it, C++23's P2593).  The benchmark compiles an exact
# copy of that one header with the assertion made dependent (``sizeof(ConstraintModel) == 0``), ahead
# of the wheel's on the include path: it fires only if instantiated, as intended; no code changes.
ASSERT_FALSE = 'static_assert(\n          false, "ComputeBlockDiagonalPatternImpl not implemented for this constraint.");'
ASSERT_DEPENDENT = ('static_assert(\n          sizeof(ConstraintModel) == 0,'
                    ' "ComputeBlockDiagonalPatternImpl not implemented for this constraint.");')


def gcc12_overlay(pin_include, version):
    """[an include folder with the mended constraints/utils.hxx] where the wheel's has the
    non-dependent assertion, else []."""
    header = Path("pinocchio", "src", "constraints", "utils.hxx")
    text = (pin_include / header).read_text() if (pin_include / header).is_file() else ""
    if ASSERT_FALSE not in text:
        return []
    overlay = WORK / f"pinocchio-{version}-overlay"
    (overlay / header).parent.mkdir(parents=True, exist_ok=True)
    (overlay / header).write_text(text.replace(ASSERT_FALSE, ASSERT_DEPENDENT))
    return [overlay]


def build_pinocchio(include, lib):
    """Compile pinocchio_bench.cpp once per (source, flags, compiler, pin) to an object;
    -> (object, compile seconds or None when cached)."""
    source = HERE / "pinocchio_bench.cpp"
    cmd = ["g++", *CFLAGS, "-DNDEBUG", "-std=c++17", "-Wno-deprecated-declarations", *PIN_DEFINES,
           *[x for d in include for x in ("-I", d)], "-I", HERE, "-c", source, "-o", "OBJ"]
    key = hashlib.sha256(source.read_bytes() + (HERE / "bench.h").read_bytes() + " ".join(map(str, cmd)).encode()
                         + sh(["g++", "--version"]).stdout.encode()).hexdigest()[:16]
    obj = WORK / f"pinocchio-{key}" / "pinocchio_bench.o"
    if obj.exists():
        return obj, None
    obj.parent.mkdir(parents=True, exist_ok=True)
    print("  compiling pinocchio_bench.cpp (header-only Pinocchio, a few minutes, once) ...", flush=True)
    tmp = obj.with_suffix(".tmp.o")
    try:
        seconds = timed([tmp if c == "OBJ" else c for c in cmd])
    except RuntimeError as exc:
        raise Unavailable(f"pinocchio_bench.cpp did not compile: {exc}")
    tmp.rename(obj)
    return obj, seconds


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


def pinocchio_backend(spec, robot, states, work, functions=None):
    """The Pinocchio backend (object cached across runs) timing the entries of soagen's
    ``functions`` (:func:`pinocchio_entries`), or raise Unavailable."""
    include, lib, version = pinocchio_prefix()
    obj, build_s = build_pinocchio(include, lib)
    out = work / "pinocchio"
    out.mkdir(parents=True, exist_ok=True)
    model = pinocchio_model(spec, robot, out / "model.txt")
    pin_states = pinocchio_states(robot, states, out / "states_pinocchio.bin")
    arg = "|".join([str(model), ",".join(t.name for t in robot.tips), ",".join(map(str, sg.contact_dims(robot))),
                    ",".join(pinocchio_entries(functions))])
    return Backend("pinocchio", [obj], pin_states.path, arg,
                   link=["-L", lib, "-lboost_serialization", f"-Wl,-rpath,{lib}"], cxx=True,
                   info={"version": version, "build_s": build_s})


def check_pinocchio(robot, states, run, functions, upto=None):
    """{entry: error} of Pinocchio's outputs (converted to soagen's conventions) for the families of
    soagen's ``functions`` (on the first ``upto`` states, or all); raise Unavailable when wrong."""
    errors, timed_ = {}, run.of("pinocchio")
    families = {sg.family(f) for f in functions}
    for fn, label, kind in PIN_MAP:
        if fn not in families:
            continue
        rows = np.array([sg.from_pinocchio(kind, r, robot) for r in timed_[label].outputs[:upto]])
        try:
            errors[label] = sg.check_outputs(robot, states, {fn: rows}, f"Pinocchio {label}")[fn]
        except ValueError as exc:
            raise Unavailable(str(exc))
    return errors


def pinocchio_rows(robot, run, functions):
    """{soagen function: every state's output of Pinocchio's headline-family entry, in soagen's
    layout} (the first PIN_MAP entry of each function's family), for checking soagen beyond the
    states checked against the reference."""
    timed_, out = run.of("pinocchio"), {}
    for f in functions:
        entry = next(((label, kind) for fn, label, kind in PIN_MAP if fn == sg.family(f)), None)
        if entry and entry[0] in timed_:
            out[f] = np.array([sg.from_pinocchio(entry[1], r, robot) for r in timed_[entry[0]].outputs])
    return out


# --------------------------------------------------------------------------- CasADi
CASADI_MAP = {"inverse_dynamics": "rnea", "mass_matrix": "crba", "forward_dynamics": "aba",
              "inverse_dynamics_derivatives": "rnea_derivatives", "forward_dynamics_derivatives": "aba_derivatives"}
CASADI_INPUTS = {"q": "Q", "v": "QD", "qd": "QD", "a": "QDD", "qdd": "QDD", "tau": "TAU"}
CASADI_DEFAULT_INPUTS = {"rnea": ["Q", "QD", "QDD"], "crba": ["Q"], "aba": ["Q", "QD", "TAU"]}


def casadi_generate(spec, out):
    """Run the CasADi helper script; -> manifest dict (raise Unavailable with its reason)."""
    if not CASADI_SCRIPT.is_file():
        raise Unavailable(f"no {CASADI_SCRIPT.relative_to(HERE.parent)}")
    cmd = [sys.executable, CASADI_SCRIPT, "--urdf", spec.urdf, "--out", out]
    for joint, value in spec.lock.items():
        cmd += ["--lock", f"{joint}={value}"]
    if spec.floating_base:
        cmd.append("--floating-base")
    print(f"  running {CASADI_SCRIPT.name} (creates its venv on first use) ...", flush=True)
    res = subprocess.run([str(c) for c in cmd], capture_output=True, text=True, timeout=1800)
    if (out / "error.txt").exists() or res.returncode:
        why = (out / "error.txt").read_text().strip() if (out / "error.txt").exists() else res.stderr[-500:]
        raise Unavailable(f"{CASADI_SCRIPT.name} failed: {why}")
    return json.loads((out / "manifest.json").read_text())


def casadi_calls_header(manifest, n, m, r):
    """The calls header of CasADi's C: a wrapper per function with its arg/res/work arrays."""
    lines, entries, biggest = [], [], 1
    for fn in CASADI_MAP.values():
        info = manifest[fn]
        names = info.get("input_names") or []
        args = ([CASADI_INPUTS[x] for x in names] if all(x in CASADI_INPUTS for x in names) and names
                else CASADI_DEFAULT_INPUTS[fn])
        if [int(s) for s in info["inputs"]] != [n] * len(args):
            raise Unavailable(f"CasADi {fn} inputs {info['inputs']}, expected {len(args)} x {n}")
        size = sum(int(s) for s in info["outputs"])
        biggest = max(biggest, size)
        outs = [f"out + {o}" for o in np.cumsum([0, *[int(s) for s in info["outputs"]]])[:-1]]   # one per output
        params = ", ".join(f"const double *in{k}" for k in range(len(args)))
        lines += [f'#include "{info["h"]}"',
                  f"static casadi_int {fn}_iw[{max(1, info['sz_iw'])}];",
                  f"static double {fn}_w[{max(1, info['sz_w'])}];",
                  f"static inline void call_{fn}({params}, double *out) {{",
                  f"    const double *arg[{max(len(args), info['sz_arg'])}] = "
                  f"{{{', '.join(f'in{k}' for k in range(len(args)))}}};",
                  f"    double *res[{max(len(outs), info['sz_res'])}] = {{{', '.join(outs)}}};",
                  f"    {fn}(arg, res, {fn}_iw, {fn}_w, 0);", "}"]
        calls = {"crba": "CasADi C of casadi_kin_dyn's crba (full M)",
                 "rnea_derivatives": "CasADi C of the Jacobian of casadi_kin_dyn's rnea w.r.t. q, v",
                 "aba_derivatives": "CasADi C of casadi_kin_dyn's aba and its Jacobian w.r.t. q, v, tau",
                 }.get(fn, f"CasADi C of casadi_kin_dyn's {fn}")
        entries.append(f"    X({fn}, {size}, {c_string(calls)}, call_{fn}({', '.join(args)}, OUT))")
    return "\n".join(lines + calls_header_lines(n, n, m, r, biggest, entries))


def casadi_backend(spec, robot, states, work):
    """Generate (helper script, in its venv) and compile CasADi's functions (:data:`CASADI_MAP`); or raise
    Unavailable."""
    out = work / "casadi"
    manifest = casadi_generate(spec, out)
    if manifest.get("joint_names") and manifest["joint_names"] != sg.joint_names(robot):
        raise Unavailable(f"CasADi joint order {manifest['joint_names']} differs from soagen's")
    objects = []
    try:
        for fn in CASADI_MAP.values():
            objects.append(out / f"{fn}.o")
            compile_object(out / manifest[fn]["c"], objects[-1], [out])
        header = casadi_calls_header(manifest, robot.n, len(robot.tips), robot.tip_rows)
        objects.append(c_backend_object(out, "casadi", header, [out]))
    except RuntimeError as exc:
        raise Unavailable(f"CasADi C did not build: {exc}")
    cc = {fn: timed(["gcc", "-O2", "-c", out / manifest[fn]["c"], "-o", out / f"{fn}.O2.o"])
          for fn in CASADI_MAP.values()}
    return Backend("casadi", objects, states.path,
                   info={"version": manifest.get("casadi_version", "?"), "cc": cc, "manifest": manifest,
                         "options": manifest.get("function_options", {}),
                         "gen_s": float(manifest.get("inner_seconds", float("nan")))})


def check_casadi(robot, states, run, manifest):
    """{function: error} of CasADi's outputs; raise Unavailable when wrong."""
    errors, timed_ = {}, run.of("casadi")
    tri = manifest["crba"].get("crba_triangle", "full")
    for fn, cname in CASADI_MAP.items():
        shapes = manifest[cname].get("output_shapes", [[robot.n, 1]])

        def convert(_, row, shapes=shapes, symmetric=cname == "crba" and tri in ("upper", "lower")):
            parts, pos = [], 0
            for r, c in shapes:                              # CasADi buffers are column-major
                a = row[pos:pos + r * c].reshape(c, r).T
                pos += r * c
                if symmetric:
                    a = np.triu(a) + np.triu(a, 1).T if tri == "upper" else np.tril(a) + np.tril(a, -1).T
                parts.append(a.ravel())
            return np.concatenate(parts)
        try:
            errors[cname] = sg.check_outputs(robot, states, {fn: timed_[cname].outputs}, f"CasADi {cname}",
                                             convert)[fn]
        except ValueError as exc:
            raise Unavailable(str(exc))
    return errors


# --------------------------------------------------------------------------- the interleaved driver
def link_driver(backends, build):
    """bench_driver.c with ``backends`` linked in; -> (executable, seconds)."""
    build.mkdir(parents=True, exist_ok=True)
    (build / "bench_backends.h").write_text(
        "#define BENCH_BACKENDS(X) " + " ".join(f"X({b.symbol})" for b in backends) + "\n")
    t0 = time.perf_counter()
    main = build / "bench_driver.o"
    compile_object(HERE / "bench_driver.c", main, [build, HERE])
    exe = build / "bench"
    sh(["g++" if any(b.cxx for b in backends) else "gcc", *CFLAGS, main,
        *[o for b in backends for o in b.objects], "-o", exe, *[x for b in backends for x in b.link], "-lm"])
    return exe, time.perf_counter() - t0


def run_interleaved(backends, rounds, row, build, check=CHECK_STATES):
    """Time every function of every backend, round-robin (see bench_driver.c), then write the
    outputs of the first ``check`` states (run.py: all of them) for the checks; -> DriverRun."""
    exe, link_s = link_driver(backends, build)
    args = [exe, rounds, check, row, build / "outputs.bin"]
    for b in backends:
        args += [b.states, b.arg or "-"]
    t0 = time.perf_counter()
    res = sh(args)
    wall = time.perf_counter() - t0
    setup, entries, rows, chunk = {}, [], [], None
    for line in res.stdout.splitlines():
        kind, *cols = line.split("\t")
        if kind == "chunk":
            chunk = int(cols[0])
        elif kind == "backend":
            setup[cols[0]] = float(cols[1])
        elif kind == "entry":
            entries.append((cols[0], cols[1], int(cols[2]), cols[3]))
        elif kind == "round":
            rows.append([float(x) for x in cols[1:]])
    table = np.array(rows)
    if table.shape != (rounds, 1 + len(entries)):
        raise RuntimeError(f"the driver printed a {table.shape} table, expected ({rounds}, {1 + len(entries)})")
    flat, pos, result = np.fromfile(build / "outputs.bin", dtype="<f8"), 0, {}
    for k, (backend, name, size, calls) in enumerate(entries):
        outputs = flat[pos:pos + check * size].reshape(check, size)
        pos += check * size
        result[backend, name] = Timed(backend, name, calls, size, table[:, 1 + k], outputs)
    if pos != flat.size:
        raise RuntimeError(f"outputs.bin: {flat.size} doubles, expected {pos}")
    return DriverRun(result, table[:, 0], setup, chunk, wall, link_s)


# --------------------------------------------------------------------------- Python module
def bench_python(robot, functions, states, big, reps=5, batch_reps=15, only=None):
    """Per-state cost of the cffi module: a loop of single calls over ``states`` (``reps``
    times), then ``batch_reps`` back-to-back batch calls on ``big`` (BATCH_ROWS states) with a
    fresh result each, then as many into one reused ``out=`` buffer; medians.  Timed in this
    thread's CPU time (user + system, page faults included), which leaves out the time the
    scheduler gives other processes: these timings are not interleaved with a baseline.
    ``only``: build the module with these functions only (quick checks).
    -> (build seconds, {function: (single ns, batch ns, batch into out= ns)})."""
    t0 = time.perf_counter()
    mod = sg.build_module(robot, only)
    build_s = time.perf_counter() - t0
    result = {}

    def per_state(call, args, count):
        t0 = time.thread_time_ns()
        call(*args)
        return (time.thread_time_ns() - t0) / count

    for fn, names in sg.BATCH_FUNCTIONS.items():
        if fn not in functions:
            continue
        call = getattr(mod, fn)
        single_args = list(zip(*(getattr(states, a) for a in names)))
        batch_args = [getattr(big, a) for a in names]
        single = []
        for _ in range(reps):
            t0 = time.thread_time_ns()
            for args in single_args:
                try:
                    call(*args)
                except sg.SingularError:
                    pass
            single.append((time.thread_time_ns() - t0) / len(single_args))
        try:
            buf = np.empty_like(call(*batch_args))
            batch = [per_state(call, batch_args, len(big)) for _ in range(batch_reps)]
            reused = [per_state(lambda *a: call(*a, out=buf), batch_args, len(big)) for _ in range(batch_reps)]
        except sg.SingularError:
            batch = reused = []
        result[fn] = tuple(statistics.median(x) if x else None for x in (single, batch, reused))
    return build_s, result
