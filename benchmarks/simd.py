#!/usr/bin/env python3
"""SIMD batches against the scalar loop and Pinocchio's parallel batch; upper-triangle outputs.

    python benchmarks/simd.py --robot panda           # writes docs/simd.md (and prints it)

One run, N = 10 000 seeded random states, every backend timed once per round,
rounds interleaved (R rounds), medians and the spread of the per-round ratios:

* the generated C called directly (cffi, arrays prepared once: the call
  overhead is < 1 µs of a batch's hundreds): the scalar loop ``<f>_batch``,
  the SIMD batch ``<f>_batch_simd`` (one register a vector, the default: 8
  doubles with AVX-512, 4 without), and the same SIMD source compiled with the
  other of the two (``-DSOAGEN_LANES=4`` or ``8``);
* from Python: the module's batch call (``mod.inverse_dynamics(Q, QD, QDD)``,
  which checks its arguments, allocates the output and takes the SIMD path),
  and the SIMD batch split over the machine's cores (Python threads: cffi
  releases the GIL during the call);
* Pinocchio's own parallel batch from its wheel (``pin.rneaInParallel`` /
  ``pin.abaInParallel``: a ModelPool, states in columns, output preallocated)
  on one thread and on as many threads as the machine has cores, and a C++
  loop of ``pinocchio::rnea`` / ``aba`` (both conventions) over the same
  states, header-only Pinocchio compiled here with -O3 -march=native -ffp-contract=fast -DNDEBUG
  (``pinocchio_batch.cpp``; needs the Eigen headers: ``pip install cmeel-eigen``;
  built once into benchmarks/.work, several minutes);

then the TALOS humanoid's mass matrix (floating base, nv = 38: 1444 doubles,
11.5 KB a state) as full matrices and as upper triangles (741 doubles), C and
Python.  Outputs are checked against each other before anything is timed (the
SIMD batch on threads and through the wrapper = the SIMD batch bit for bit; its
difference from the scalar loop, where gcc fuses other multiply-adds, and
Pinocchio's, printed).  A benchmark prints; it
asserts nothing about timings.  On a shared machine single timings swing;
only the ratios of one round mean much, hence the interleaving.
"""
from __future__ import annotations

import argparse
import datetime
import os
import platform
import statistics
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

import soagen  # noqa: E402
from soagen.model import robots  # noqa: E402
from soagen.targets.c99.compile import COMPILE_ARGS  # noqa: E402
from soagen.targets.simd.emit import SIMD_FLAGS  # noqa: E402

N = 10_000
ROUNDS = 21
FUNCTIONS = ["inverse_dynamics", "forward_dynamics", "mass_matrix"]
TALOS = dict(urdf="talos_data/robots/talos_reduced.urdf", tips=["gripper_left_base_link", "gripper_right_base_link"])


def cpu_model():
    try:
        return next(line.split(":", 1)[1].strip() for line in open("/proc/cpuinfo") if line.startswith("model name"))
    except (OSError, StopIteration):
        return platform.processor()


def timed_rounds(backends, rounds):
    """{name: [seconds per round]}: every backend once per round, in order, ``rounds`` times (after one warm-up).

    A backend on one thread is timed by the CPU time of the calling thread (``time.thread_time``:
    the time the machine's other jobs take the core away is not counted, their cache and memory
    traffic is); one whose name says "threads" by the wall clock (all its threads' work)."""
    for fn in backends.values():
        fn()
    times = {name: [] for name in backends}
    for _ in range(rounds):
        for name, fn in backends.items():
            clock = time.perf_counter if "threads" in name else time.thread_time
            t0 = clock()
            fn()
            times[name].append(clock() - t0)
    return times


def ratio_text(times, num, den):
    """Median of the per-round ratios num/den (time of den / time of num: how much faster num is) and their range."""
    r = [d / n for n, d in zip(times[num], times[den])]
    return f"{statistics.median(r):.2f}x [{min(r):.2f}, {max(r):.2f}]"


class Direct:
    """The batch C functions of a module, called through cffi with prepared arrays."""

    def __init__(self, mod, lib=None, ffi=None):
        self.mod, self.lib, self.ffi = mod, lib or mod._lib.lib, ffi or mod._lib.ffi

    def caller(self, fname, suffix, arrays):
        if self.lib is self.mod._lib.lib and suffix != "_batch":      # the module's SIMD library
            ffi, fn = self.mod._batch_function(fname, suffix.endswith("_upper"))
        else:
            ffi, fn = self.ffi, getattr(self.lib, f"{self.mod.name}_{fname}{suffix}")
        ptrs = [ffi.cast("double *", a.ctypes.data) for a in arrays]
        rows = len(arrays[0])
        return lambda keep=arrays: fn(rows, *ptrs)      # keep: the arrays live as long as the call


def lanes_library(mod, lanes, folder):
    """The module's C (scalar + SIMD) compiled again with -DSOAGEN_LANES=``lanes``, loaded by cffi (ABI mode)."""
    import cffi

    so = Path(folder) / f"lib{mod.name}_lanes{lanes}.so"
    src = Path(mod.path)
    cmd = ["gcc", *COMPILE_ARGS, *SIMD_FLAGS, f"-DSOAGEN_LANES={lanes}", "-shared", "-fPIC", "-I", str(src),
           str(src / f"{mod.name}.c"), str(src / f"{mod.name}_simd.c"), "-o", str(so), "-lm"]
    subprocess.run(cmd, check=True)
    ffi = cffi.FFI()
    ffi.cdef("\n".join(f"long {mod.name}_{f}_batch_simd(long count, {', '.join(['double *'] * len(mod._sig[f]))});"
                       for f in mod._sig))
    return ffi.dlopen(str(so)), ffi


def pinocchio_loops():
    """ctypes library of pinocchio_batch.cpp (built once per source, flags and pin version), or the reason not."""
    import ctypes
    import hashlib
    import site

    import cmeel
    import pinocchio as pin

    prefix = Path(cmeel.__file__).resolve().parent.parent / "cmeel.prefix"
    eigen = next((Path(d) / "cmeel.prefix" / "include" / "eigen3"
                  for d in [*site.getsitepackages(), str(prefix.parent)]
                  if (Path(d) / "cmeel.prefix" / "include" / "eigen3" / "Eigen" / "Core").exists()), None)
    if eigen is None:
        return "n/a: no Eigen headers (pip install cmeel-eigen)"
    from backends import gcc12_overlay          # pin 4.0.0's headers and g++ 12 (see there)

    source = HERE / "pinocchio_batch.cpp"
    overlay = [a for d in gcc12_overlay(prefix / "include", pin.__version__) for a in ("-I", str(d))]
    cmd = ["g++", "-O3", "-march=native", "-ffp-contract=fast", "-DNDEBUG", "-std=c++17",
           "-Wno-deprecated-declarations",
           "-DBOOST_MPL_LIMIT_LIST_SIZE=30", "-DBOOST_MPL_LIMIT_VECTOR_SIZE=30",
           "-DBOOST_MPL_CFG_NO_PREPROCESSED_HEADERS", "-DBOOST_FUSION_INVOKE_MAX_ARITY=12", *overlay,
           "-I", str(prefix / "include"), "-I", str(eigen), "-shared", "-fPIC", str(source), "-o", "LIB",
           "-L", str(prefix / "lib"), "-lboost_serialization", f"-Wl,-rpath,{prefix / 'lib'}"]
    key = hashlib.sha256(source.read_bytes() + " ".join(cmd).encode() + pin.__version__.encode()).hexdigest()[:16]
    lib = HERE / ".work" / f"pinocchio-batch-{key}" / "libpinocchio_batch.so"
    if not lib.exists():
        lib.parent.mkdir(parents=True, exist_ok=True)
        print("compiling pinocchio_batch.cpp (header-only Pinocchio, minutes, once) ...", file=sys.stderr, flush=True)
        res = subprocess.run([str(lib) if c == "LIB" else c for c in cmd], capture_output=True, text=True)
        if res.returncode:
            return f"n/a: pinocchio_batch.cpp did not compile: {res.stderr.strip()[-300:]}"
    dll = ctypes.CDLL(str(lib))
    p = ctypes.c_void_p
    dll.pin_load.argtypes = [ctypes.c_char_p]
    dll.pin_rnea_batch.argtypes = [ctypes.c_long, p, p, p, p]
    dll.pin_aba_batch.argtypes = [ctypes.c_long, p, p, p, p, ctypes.c_int]
    dll.pin_rnea_second_batch.argtypes = [ctypes.c_long, p, p, p, p, ctypes.c_int]
    return dll


def pinocchio_panda():
    """Pinocchio's model of soagen's Panda: its URDF read by Pinocchio, the fingers locked at 0."""
    import pinocchio as pin

    model = pin.buildModelFromUrdf(str(robots.urdf_path("panda")))
    lock = [model.getJointId(j) for j in ("panda_finger_joint1", "panda_finger_joint2")]
    return pin.buildReducedModel(model, lock, pin.neutral(model))


def panda_section(rounds, workdir):
    import pinocchio as pin

    robot = robots.example("panda")
    t0 = time.perf_counter()
    mod = soagen.build(robot, functions=FUNCTIONS, simd=True)
    built = time.perf_counter() - t0
    rng = np.random.default_rng(0)
    states = [robot.random_state(rng) for _ in range(N)]
    Q, QD, QDD, TAU = (np.ascontiguousarray([s[i] for s in states]) for i in range(4))
    cores = os.cpu_count()
    direct = Direct(mod)
    lanes = mod.simd_lanes
    other = 8 if lanes == 4 else 4
    lib_other, ffi_other = lanes_library(mod, other, workdir)
    other_lanes = Direct(mod, lib_other, ffi_other)
    model = pinocchio_panda()
    pool = pin.ModelPool(model, cores)
    loops = pinocchio_loops()
    if not isinstance(loops, str):
        model.saveToText(str(Path(workdir) / "panda.txt"))
        loops.pin_load(str(Path(workdir) / "panda.txt").encode())
    Qc, QDc, QDDc, TAUc = (np.asfortranarray(a.T) for a in (Q, QD, QDD, TAU))   # states in columns
    pool_threads = ThreadPoolExecutor(cores)
    lines, checks = [], []
    rows = []
    for fname, pin_fn, ins in (("inverse_dynamics", pin.rneaInParallel, (Q, QD, QDD)),
                               ("forward_dynamics", pin.abaInParallel, (Q, QD, TAU))):
        size = robot.n
        outs = {k: np.full((N, size), np.nan) for k in ("scalar", "simd", "other", "threads")}
        pin_out = np.asfortranarray(np.zeros((size, N)))
        cols = (Qc, QDc, QDDc if fname == "inverse_dynamics" else TAUc)
        chunks = [slice(N * k // cores, N * (k + 1) // cores) for k in range(cores)]
        thread_calls = [direct.caller(fname, "_batch_simd", [a[c] for a in ins] + [outs["threads"][c]])
                        for c in chunks]
        loop_out = np.asfortranarray(np.zeros((size, N)))
        loop_calls = {}
        if not isinstance(loops, str):
            ptrs = [a.ctypes.data for a in (*cols, loop_out)]
            if fname == "inverse_dynamics":
                loop_calls["Pinocchio C++ loop, -march=native"] = lambda p=ptrs: loops.pin_rnea_batch(N, *p)
            else:
                loop_calls["Pinocchio C++ loop, -march=native, LOCAL"] = lambda p=ptrs: loops.pin_aba_batch(N, *p, 0)
                loop_calls["Pinocchio C++ loop, -march=native, WORLD"] = lambda p=ptrs: loops.pin_aba_batch(N, *p, 1)
        backends = {
            "C scalar loop (_batch)": direct.caller(fname, "_batch", [*ins, outs["scalar"]]),
            f"C SIMD, {lanes} lanes (_batch_simd)": direct.caller(fname, "_batch_simd",
                                                                          [*ins, outs["simd"]]),
            f"C SIMD, {other} lanes": other_lanes.caller(fname, "_batch_simd", [*ins, outs["other"]]),
            "Python wrapper (SIMD path)": lambda fname=fname, ins=ins: getattr(mod, fname)(*ins),
            f"SIMD on {cores} threads (Python threads)": lambda calls=thread_calls: list(
                pool_threads.map(lambda c: c(), calls)),
            "Pinocchio *InParallel, 1 thread": lambda f=pin_fn, c=cols, o=pin_out: f(1, pool, *c, o),
            f"Pinocchio *InParallel, {cores} threads": lambda f=pin_fn, c=cols, o=pin_out: f(cores, pool, *c, o),
            **loop_calls,
        }
        for fn in backends.values():
            fn()
        scale = max(1.0, np.abs(outs["scalar"]).max())
        same = np.array_equal(outs["threads"], outs["simd"]) and np.array_equal(getattr(mod, fname)(*ins), outs["simd"])
        simd_err = {k: float(np.abs(outs[k] - outs["scalar"]).max() / scale) for k in ("simd", "other")}
        pin_err = float(np.abs(pin_out.T - outs["scalar"]).max() / scale)
        loop_err = float(np.abs(loop_out.T - outs["scalar"]).max() / scale) if loop_calls else float("nan")
        checks.append(f"{fname}: SIMD on threads and through the wrapper = SIMD batch bit for bit: {same}; "
                      f"SIMD {lanes} lanes, {other} lanes vs the scalar loop max relative difference "
                      f"{simd_err['simd']:.1e}, {simd_err['other']:.1e} (fused multiply-adds chosen apart); "
                      f"Pinocchio vs soagen max relative difference {pin_err:.1e} "
                      f"(*InParallel), {loop_err:.1e} (C++ loop)")
        times = timed_rounds(backends, rounds)
        base = "C scalar loop (_batch)"
        for name in backends:
            med = statistics.median(times[name])
            rows.append(f"| {fname} | {name} | {med / N * 1e9:.1f} | {N / med / 1e6:.2f} | "
                        f"{ratio_text(times, name, base) if name != base else '1'} |")
        simd = f"C SIMD, {lanes} lanes (_batch_simd)"
        best_loop = min(loop_calls, key=lambda k: statistics.median(times[k])) if loop_calls else None
        threaded = f"SIMD on {cores} threads (Python threads)"
        lines.append(f"- {fname}: SIMD batch / scalar loop, one core: **{ratio_text(times, simd, base)}**; "
                     f"SIMD one core / Pinocchio *InParallel one thread: "
                     f"{ratio_text(times, simd, 'Pinocchio *InParallel, 1 thread')}; SIMD on {cores} threads / "
                     f"Pinocchio *InParallel on {cores} threads: "
                     f"{ratio_text(times, threaded, f'Pinocchio *InParallel, {cores} threads')}"
                     + (f"; SIMD one core / {best_loop} (its faster): {ratio_text(times, simd, best_loop)}"
                        if best_loop else f"; Pinocchio C++ loop {loops}"))
    pool_threads.shutdown()
    head = ["| function | backend | ns / state (median) | M states/s | speed-up over the scalar loop, "
            "median [range] of the rounds |", "|---|---|---:|---:|---:|"]
    return dict(build_s=built, table=head + rows, summary=lines, checks=checks, mod=mod)


def talos_section(rounds):
    """M of TALOS (floating base, both hands): full matrices against upper triangles."""
    from soagen.model.urdf import load_urdf

    sys.path.insert(0, str(ROOT / "tests"))
    from support.oracle import erd_urdf

    robot = load_urdf(erd_urdf(TALOS["urdf"]), tips=TALOS["tips"], floating_base=True)
    t0 = time.perf_counter()
    mod = soagen.build(robot, functions=["mass_matrix"], simd=True)
    built = time.perf_counter() - t0
    rng = np.random.default_rng(1)
    Q = np.ascontiguousarray([robot.random_configuration(rng) for _ in range(N)])
    n = robot.nv
    full, upper = np.empty((N, n * n)), np.empty((N, n * (n + 1) // 2))
    direct = Direct(mod)
    backends = {
        "C scalar loop, full": direct.caller("mass_matrix", "_batch", [Q, np.empty((N, n * n))]),
        "C SIMD, full": direct.caller("mass_matrix", "_batch_simd", [Q, full]),
        "C SIMD, upper": direct.caller("mass_matrix", "_batch_simd_upper", [Q, upper]),
        "Python, full": lambda: mod.mass_matrix(Q),
        "Python, upper": lambda: mod.mass_matrix(Q, out_format="upper"),
    }
    for fn in backends.values():
        fn()
    rows_i, cols_i = np.triu_indices(n)
    same = np.array_equal(full.reshape(N, n, n)[:, rows_i, cols_i], upper)
    times = timed_rounds(backends, rounds)
    rows = []
    for name in backends:
        med = statistics.median(times[name])
        size = n * (n + 1) // 2 if "upper" in name else n * n
        rows.append(f"| {name} | {size * 8} | {size * 8 * N / 1e6:.0f} | {med / N * 1e9:.0f} | {N / med / 1e6:.3f} |")
    head = ["| TALOS M, N = 10 000 | output bytes / state | output MB / batch | ns / state (median) | M states/s |",
            "|---|---:|---:|---:|---:|"]
    summary = [f"- C SIMD, upper triangle over full matrix: {ratio_text(times, 'C SIMD, upper', 'C SIMD, full')} "
               f"faster; from Python (allocating the result): {ratio_text(times, 'Python, upper', 'Python, full')}; "
               f"SIMD full over the scalar loop: {ratio_text(times, 'C SIMD, full', 'C scalar loop, full')}"]
    return dict(build_s=built, table=head + rows, summary=summary, nv=n, ops=mod.ops["mass_matrix"],
                checks=[f"TALOS M: upper triangles = the full matrices' (bit for bit): {same}"])


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--robot", choices=["panda"], default="panda")
    parser.add_argument("--rounds", type=int, default=ROUNDS)
    parser.add_argument("--no-talos", action="store_true", help="skip the TALOS mass matrix (full vs upper)")
    parser.add_argument("--out", default=str(ROOT / "docs" / "simd.md"), help="markdown file ('' for none)")
    args = parser.parse_args()
    import tempfile

    import pinocchio as pin

    started = datetime.datetime.now().strftime("%Y-%m-%d %H:%M")
    load = os.getloadavg()[0]
    with tempfile.TemporaryDirectory() as work:
        panda = panda_section(args.rounds, work)
    talos = None if args.no_talos else talos_section(args.rounds)
    cc = subprocess.run(["gcc", "--version"], capture_output=True, text=True).stdout.splitlines()[0]
    text = [f"# SIMD batches: `python benchmarks/simd.py --robot {args.robot}`", "",
            f"Run {started} on {cpu_model()}, {os.cpu_count()} cores (a shared machine: other jobs ran beside it, "
            f"load average {load:.1f} at the start; one-thread backends are timed by their thread's CPU time, the "
            "multi-threaded ones by the wall clock, which the other jobs distort most), "
            f"{cc}, soagen's flags {' '.join(COMPILE_ARGS)} (+ {' '.join(SIMD_FLAGS)} for the SIMD units), "
            f"Pinocchio {pin.__version__} (its wheel's build), N = {N} states, {args.rounds} interleaved rounds "
            "(every backend once per round); a ratio is the median of the rounds' ratios, [min, max] of them.", "",
            "## Panda: inverse and forward dynamics", "", *panda["summary"], "", *panda["table"], "",
            "Checks before timing: " + "; ".join(panda["checks"]) + "."]
    if talos:
        o = talos["ops"]
        text += ["", f"## TALOS mass matrix: full or upper triangle (nv = {talos['nv']}, {o['mul']} mul "
                     f"{o['add']} add)", "", *talos["summary"], "", *talos["table"], "",
                 "Checks: " + "; ".join(talos["checks"]) + "."]
    text = "\n".join(text) + "\n"
    print(text, end="")
    if args.out:
        Path(args.out).write_text(text)


if __name__ == "__main__":
    main()
