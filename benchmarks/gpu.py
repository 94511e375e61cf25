#!/usr/bin/env python3
"""GPU batches: soagen's kernels against the C, the memory-bandwidth bound and a JAX peer.

A GPU machine here has no network and few minutes, so the work is split:

    python benchmarks/gpu.py prepare DIR     # here: generate the Panda's functions, emit
                                             # panda.cu and compile it with nvcc for sm_90, emit the
                                             # C (scalar + SIMD), fetch the frax wheel, copy soagen
    python3 DIR/gpu.py run DIR --out OUT     # on the GPU machine (from DIR): compile the C there,
                                             # time, check, print; OUT/gpu.json holds the numbers
    python benchmarks/gpu.py report OUT/gpu.json > docs/gpu.md    # the tables of one run

``run`` times, for each function and N (states in columns, fp64), the kernel
alone (CUDA events around back-to-back launches of the raw launcher), checks
its outputs against the C on the same machine, compares the states per second
with the bandwidth bound (bytes a state reads and writes / the device-to-device
copy bandwidth measured in the same run) and with the generated C on all CPU
cores (OpenMP threads, each running the SIMD batch on its share), calls the
kernels once through soagen's CudaModule with PyTorch and CuPy tensors
(DLPack, no copies), and times frax (JAX, arXiv 2604.04310) on the same robot
(soagen's Panda URDF with the finger joints fixed, as soagen locks them),
``jit(vmap(...))`` in fp64, in a subprocess.  Without a GPU, ``run --host``
runs the same script on the host-compiled .cu (kernels as CPU loops) on small
N: a dry run.  A benchmark prints; it asserts nothing about timings.
"""
from __future__ import annotations

import argparse
import json
import os
import pickle
import platform
import shutil
import subprocess
import sys
import time
from pathlib import Path

import numpy as np

HERE = Path(__file__).resolve().parent
ROBOT = "panda"
FUNCTIONS = ["inverse_dynamics", "forward_dynamics", "mass_matrix", "mass_matrix_inverse", "os_inertia"]
ARCH = "sm_90"          # H100 and H200
FRAX = "frax==0.1.0"
SIZES = [1 << 14, 1 << 20, 1 << 24]
HOST_SIZES = [1 << 8, 1 << 11]
CHECK = 1 << 16         # states whose GPU outputs are compared with the C
CPU_N = 1 << 22         # states per CPU timing


# --------------------------------------------------------------------------- prepare (here)
def prepare(folder):
    """Everything ``run`` needs, into ``folder`` (it travels to the GPU machine)."""
    root = HERE.parent
    sys.path.insert(0, str(root))
    from soagen.model import robots
    from soagen.codegen import generate
    from soagen.targets.cuda.compile import HOST_ARGS
    from soagen.targets.cuda.emit import emit_cuda
    from soagen.options import Options
    from soagen.targets.simd.emit import emit_simd

    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    robot = robots.example(ROBOT)
    t0 = time.perf_counter()
    gen = generate(robot, Options(functions=FUNCTIONS), ROBOT)
    print(f"generated {len(gen.programs)} functions in {time.perf_counter() - t0:.1f} s")
    cu = emit_cuda(robot, gen.programs, ROBOT)
    simd = emit_simd(robot, gen.programs, ROBOT)
    files = {f"{ROBOT}.cu": cu.source, f"{ROBOT}_cuda.h": cu.header, f"{ROBOT}.c": gen.csource.source,
             f"{ROBOT}.h": gen.csource.header, f"{ROBOT}_simd.c": simd.source, f"{ROBOT}_simd.h": simd.header,
             "gpu_cpu_calls.h": cpu_calls(gen.programs)}
    for name, text in files.items():
        (folder / name).write_text(text)
    shutil.copy(HERE / "gpu_cpu.c", folder / "gpu_cpu.c")
    shutil.copy(Path(__file__), folder / "gpu.py")
    meta = dict(name=ROBOT, precision="double", ops={p.name: p.ops for p in gen.programs},
                inputs={p.name: len(p.inputs) for p in gen.programs},
                status={p.name: p.returns_status for p in gen.programs},
                signatures={p.name: [[a.name, a.size] for a in p.inputs + p.outputs] for p in gen.programs},
                upper=cu.upper, functions=[p.name for p in gen.programs], arch=ARCH)
    (folder / "meta.json").write_text(json.dumps(meta, indent=1))
    with open(folder / "robot.pickle", "wb") as fh:
        pickle.dump(robot, fh)
    # soagen itself (CudaModule, DLPack views), importable there as DIR/pkg/soagen
    pkg = folder / "pkg" / "soagen"
    shutil.rmtree(pkg, ignore_errors=True)
    shutil.copytree(root / "generator", pkg, ignore=shutil.ignore_patterns("__pycache__"))
    shutil.copytree(root / "templates", pkg / "templates", ignore=shutil.ignore_patterns("__pycache__"))
    # the frax robot: soagen's Panda URDF with the fingers fixed (soagen locks them at 0)
    urdf = (root / "generator" / "robots" / "panda.urdf").read_text()
    (folder / "panda_fixed_fingers.urdf").write_text(urdf.replace('type="prismatic"', 'type="fixed"'))
    wheels = folder / "wheels"
    wheels.mkdir(exist_ok=True)
    res = subprocess.run([sys.executable, "-m", "pip", "download", "-q", "--no-deps", "--only-binary=:all:",
                          FRAX, "-d", str(wheels)], capture_output=True, text=True)
    print("frax wheel:", sorted(p.name for p in wheels.glob("*.whl")) or res.stderr.strip()[-300:])
    t0 = time.perf_counter()
    subprocess.run(["nvcc", "-O3", "--shared", "-Xcompiler", "-fPIC", f"-arch={ARCH}", f"{ROBOT}.cu", "-o",
                    f"lib{ROBOT}_cuda.so"], cwd=folder, check=True)
    print(f"nvcc -arch={ARCH}: {time.perf_counter() - t0:.1f} s")
    subprocess.run([os.environ.get("CXX", "c++"), *HOST_ARGS, f"{ROBOT}.cu", "-o", f"lib{ROBOT}_cuda_host.so", "-lm"],
                   cwd=folder, check=True)
    print(f"ready: {folder} ({sum(f.stat().st_size for f in folder.rglob('*') if f.is_file()) / 1e6:.1f} MB)")


def cpu_calls(programs):
    """gpu_cpu_calls.h: BENCH_CALL(which, simd, n, lo, a, b, c, out) dispatching to the batch functions."""
    lines = [f'#include "{ROBOT}_simd.h"', "#define BENCH_CALL(which, simd, n, lo, a, b, c, out) do { \\",
             "    switch (which) { \\"]
    for k, p in enumerate(programs):
        args = [f"{src} + {a.size}*(lo)" for src, a in zip("abc", p.inputs)]
        args.append(f"out + {p.outputs[0].size}*(lo)")
        call = ", ".join(["(n)"] + args)
        lines.append(f"    case {k}: if (simd) {ROBOT}_{p.name}_batch_simd({call}); "
                     f"else {ROBOT}_{p.name}_batch({call}); break; \\")
    lines += ["    } \\", "} while (0)", ""]
    return "\n".join(lines)


# --------------------------------------------------------------------------- run (GPU machine)
def log(*args):
    print(*args, flush=True)


def compile_cpu(folder, openmp=True):
    """The C (scalar + SIMD) and gpu_cpu.c as one shared library, -O3 -march=native on this machine."""
    flags = ["-O3", "-march=native", "-ffp-contract=fast", "-fno-tree-slp-vectorize", "-fPIC"]
    flags += ["-fopenmp"] if openmp else []
    objs = []
    for src, extra in ((f"{ROBOT}.c", ["-std=c99"]), (f"{ROBOT}_simd.c", ["-std=c99", "-fno-math-errno"]),
                       ("gpu_cpu.c", [])):
        obj = src.replace(".c", ".o")
        subprocess.run(["gcc", *flags, *extra, "-c", src, "-o", obj], cwd=folder, check=True)
        objs.append(obj)
    subprocess.run(["gcc", "-shared", *(["-fopenmp"] if openmp else []), *objs, "-o", "libgpu_cpu.so", "-lm"],
                   cwd=folder, check=True)
    import ctypes
    lib = ctypes.CDLL(str(Path(folder) / "libgpu_cpu.so"))
    p = ctypes.c_void_p
    lib.gpu_cpu_time.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, p, p, p, p, ctypes.c_int, ctypes.c_int]
    lib.gpu_cpu_time.restype = ctypes.c_double
    lib.gpu_cpu_run.argtypes = [ctypes.c_int, ctypes.c_int, ctypes.c_long, p, p, p, p]
    lib.gpu_cpu_run.restype = ctypes.c_long
    return lib


def draw(count, sizes, seed=0):
    """Random inputs: q uniform in [-3, 3], the others normal; {name: (count, size)} row-major."""
    rng = np.random.default_rng(seed)
    return {name: (rng.uniform(-3.0, 3.0, (count, size)) if name == "q" else rng.normal(size=(count, size)))
            for name, size in sizes.items()}


def bytes_per_state(meta, fname, upper):
    sig = meta["signatures"][fname]
    n_in = meta["inputs"][fname]
    packs = meta["upper"].get(fname, ()) if upper else ()
    total = sum(s for _, s in sig[:n_in])
    total += sum((s + int(round(s ** 0.5))) // 2 if name in packs else s for name, s in sig[n_in:])
    return 8 * total


class Backend:
    """Arrays and timing on the GPU (torch) or, for the dry run, on the host (numpy, wall clock)."""

    def __init__(self, host):
        self.host = host
        if not host:
            import torch
            self.torch = torch
            self.device = torch.device("cuda")
            self.name = torch.cuda.get_device_name(0)
        else:
            self.name = f"host CPU ({platform.processor() or platform.machine()}), kernels as loops"

    def to_columns(self, a):
        """(N, size) row-major numpy -> the same values on the device, states in columns, as an (N, size) view."""
        if self.host:
            return np.ascontiguousarray(a.T).T
        return self.torch.from_numpy(np.ascontiguousarray(a.T)).to(self.device).T

    def to_rows(self, a):
        if self.host:
            return np.ascontiguousarray(a)
        return self.torch.from_numpy(np.ascontiguousarray(a)).to(self.device)

    def empty_columns(self, count, size):
        if self.host:
            return np.empty((size, count)).T
        return self.torch.empty((size, count), dtype=self.torch.float64, device=self.device).T

    def ptr(self, x):
        return x.__array_interface__["data"][0] if self.host else x.data_ptr()

    def numpy(self, x):
        return np.asarray(x) if self.host else x.cpu().numpy()

    def stream(self):
        return None if self.host else self.torch.cuda.current_stream().cuda_stream

    def time(self, launch, reps):
        """Seconds per launch: ``reps`` launches back to back, after one warm-up."""
        launch()
        if self.host:
            t0 = time.perf_counter()
            for _ in range(reps):
                launch()
            return (time.perf_counter() - t0) / reps
        torch = self.torch
        start, stop = torch.cuda.Event(enable_timing=True), torch.cuda.Event(enable_timing=True)
        torch.cuda.synchronize()
        start.record()
        for _ in range(reps):
            launch()
        stop.record()
        torch.cuda.synchronize()
        return start.elapsed_time(stop) / 1e3 / reps

    def copy_bandwidth(self):
        """Bytes read + written per second by a device-to-device copy of 2 GiB (the usual STREAM-copy figure)."""
        if self.host:
            a = np.ones(1 << 24)
            b = np.empty_like(a)
            return 2 * a.nbytes / self.time(lambda: np.copyto(b, a), 5)
        torch = self.torch
        a = torch.ones(1 << 28, dtype=torch.float64, device=self.device)
        b = torch.empty_like(a)
        return 2 * (1 << 28) * 8 / self.time(lambda: b.copy_(a), 20)


def run(folder, out, host):
    folder = Path(folder).resolve()
    sys.path.insert(0, str(folder / "pkg"))
    from soagen.targets.cuda.module import CudaModule

    meta = json.loads((folder / "meta.json").read_text())
    with open(folder / "robot.pickle", "rb") as fh:
        robot = pickle.load(fh)
    result = dict(started=time.strftime("%Y-%m-%d %H:%M:%S"), host=host, machine=platform.node(),
                  cpu_count=os.cpu_count(), functions=meta["functions"])
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)

    def save():
        (out / "gpu.json").write_text(json.dumps(result, indent=1))

    be = Backend(host)
    result["device"] = be.name
    log(f"device: {be.name}")
    if not host:
        smi = subprocess.run(["nvidia-smi", "--query-gpu=name,memory.total,driver_version,clocks.max.sm,"
                              "clocks.max.memory", "--format=csv,noheader"], capture_output=True, text=True)
        result["nvidia_smi"] = smi.stdout.strip()
        log(smi.stdout.strip())
    cm = CudaModule(robot, folder / f"lib{ROBOT}_cuda{'_host' if host else ''}.so",
                    dict(meta, host=host), {}, folder)
    t0 = time.perf_counter()
    try:
        cpu = compile_cpu(folder)
    except Exception as exc:   # noqa: BLE001 - then without OpenMP (one thread)
        log(f"C with OpenMP failed ({exc!r}); without")
        cpu = compile_cpu(folder, openmp=False)
        result["cpu_openmp"] = False
    log(f"C compiled here in {time.perf_counter() - t0:.1f} s")
    result["bandwidth"] = be.copy_bandwidth()
    log(f"device-to-device copy: {result['bandwidth'] / 1e12:.2f} TB/s (read + write)")
    save()

    sizes = HOST_SIZES if host else SIZES
    nmax = max(sizes)
    inputs_sizes = {"q": robot.nq, "qd": robot.nv, "tau": robot.nv}
    t0 = time.perf_counter()
    states = draw(nmax, inputs_sizes)
    cols = {k: be.to_columns(v) for k, v in states.items()}
    log(f"{nmax} states drawn and copied in {time.perf_counter() - t0:.1f} s")
    arg_of = {"q": "q", "qd": "qd", "qdd": "tau", "tau": "tau"}   # qdd draws from the tau column (same law)

    # C reference outputs of the first states (scalar batch on this machine)
    check = min(CHECK, nmax)
    reference = {}
    for k, fname in enumerate(meta["functions"]):
        sig = meta["signatures"][fname]
        n_in = meta["inputs"][fname]
        ins = [np.ascontiguousarray(states[arg_of[name]][:check]) for name, _ in sig[:n_in]]
        outs = np.full((check, sig[n_in][1]), np.nan)
        ptrs = [i.ctypes.data for i in ins] + [None] * (3 - len(ins))
        cpu.gpu_cpu_run(k, 0, check, *ptrs, outs.ctypes.data)
        reference[fname] = outs

    # kernels: raw launcher, states in columns
    rows = []
    for fname in meta["functions"]:
        sig = meta["signatures"][fname]
        n_in = meta["inputs"][fname]
        for upper in (False, True) if fname in meta["upper"] else (False,):
            launcher = cm.launcher(fname, upper)
            packs = meta["upper"].get(fname, ()) if upper else ()
            out_sizes = [(s + int(round(s ** 0.5))) // 2 if name in packs else s for name, s in sig[n_in:]]
            for n in sizes:
                ins = [cols[arg_of[name]][:n] for name, _ in sig[:n_in]]
                outs = [be.empty_columns(n, s) for s in out_sizes]
                args = [n]
                for x in ins:      # a (N, size) column view of a (size, NMAX) array: strides (1, NMAX)
                    args += [be.ptr(x), 1, nmax]
                for x in outs:
                    args += [be.ptr(x), 1, n]
                args += [None, be.stream()]

                def launch(args=args):
                    err = launcher(*args)
                    if err:
                        raise RuntimeError(f"{fname}: cudaError_t {err}")
                reps = 3 if host else (200 if n <= 1 << 14 else (20 if n <= 1 << 20 else 5))
                try:
                    t = be.time(launch, reps)
                except Exception as exc:   # noqa: BLE001 - reported, the other kernels still run
                    rows.append(dict(function=fname, format="upper" if upper else "full", n=n, error=repr(exc)))
                    log(f"  {fname} N={n}: {exc!r}")
                    continue
                bps = bytes_per_state(meta, fname, upper)
                row = dict(function=fname, format="upper" if upper else "full", n=n, seconds=t, states_per_s=n / t,
                           bytes_per_state=bps, bound_states_per_s=result["bandwidth"] / bps)
                if n >= check and not upper:
                    got = be.numpy(outs[0][:check])
                    want = reference[fname]
                    ok = np.all(np.isfinite(want), axis=1)
                    row["max_rel_error_vs_c"] = float(np.abs(got[ok] - want[ok]).max()
                                                      / max(1.0, np.abs(want[ok]).max()))
                rows.append(row)
                log(f"  {fname:<22} {row['format']:<5} N={n:>9}  {t * 1e6:10.1f} us  "
                    f"{n / t / 1e9:7.3f} G states/s  bound {row['bound_states_per_s'] / 1e9:6.2f} G "
                    f"({n / t / row['bound_states_per_s']:.0%})"
                    + (f"  err vs C {row['max_rel_error_vs_c']:.1e}" if "max_rel_error_vs_c" in row else ""))
                del outs
        result["kernels"] = rows
        save()

    # one layout point: row-major inputs and outputs (each thread reads its own row: uncoalesced)
    try:
        n = nmax
        rowq = {k: be.to_rows(v) for k, v in states.items()}
        launcher = cm.launcher("inverse_dynamics")
        out_rows = be.to_rows(np.empty((n, robot.nv)))
        args = [n]
        for name in ("q", "qd", "tau"):
            args += [be.ptr(rowq[name]), rowq[name].shape[1], 1]
        args += [be.ptr(out_rows), robot.nv, 1, None, be.stream()]
        t = be.time(lambda: launcher(*args), 3 if host else 5)
        result["row_major_inverse_dynamics"] = dict(n=n, seconds=t, states_per_s=n / t)
        log(f"  inverse_dynamics row-major N={n}: {n / t / 1e9:.3f} G states/s")
        del rowq, out_rows
    except Exception as exc:   # noqa: BLE001 - a benchmark section that fails is reported, the rest runs
        result["row_major_inverse_dynamics"] = f"failed: {exc!r}"
    save()

    # through soagen's CudaModule: PyTorch and CuPy tensors via DLPack
    result["dlpack"] = {}
    for lib in (("numpy",) if host else ("torch", "cupy")):
        try:
            result["dlpack"][lib] = dlpack_check(cm, be, lib, states, reference, robot)
            log(f"  CudaModule with {lib}: {result['dlpack'][lib]}")
        except Exception as exc:   # noqa: BLE001
            result["dlpack"][lib] = f"failed: {exc!r}"
            log(f"  CudaModule with {lib}: failed: {exc!r}")
    save()

    # the same functions in C on this machine's CPU cores
    threads = os.cpu_count()
    n = min(CPU_N, nmax)
    cpu_rows = []
    for k, fname in enumerate(meta["functions"]):
        sig = meta["signatures"][fname]
        n_in = meta["inputs"][fname]
        ins = [np.ascontiguousarray(states[arg_of[name]][:n]) for name, _ in sig[:n_in]]
        outs = np.empty((n, sig[n_in][1]))
        ptrs = [i.ctypes.data for i in ins] + [None] * (3 - len(ins))
        one = min(n, 1 << 16)
        t_scalar = cpu.gpu_cpu_time(k, 0, one, *ptrs, outs.ctypes.data, 1, 3) / one
        t_simd1 = cpu.gpu_cpu_time(k, 1, one, *ptrs, outs.ctypes.data, 1, 3) / one
        t_all = cpu.gpu_cpu_time(k, 1, n, *ptrs, outs.ctypes.data, threads, 3) / n
        cpu_rows.append(dict(function=fname, scalar_1core=1 / t_scalar, simd_1core=1 / t_simd1,
                             simd_all_cores=1 / t_all, threads=threads, n=n))
        log(f"  CPU {fname:<22} scalar 1 core {1 / t_scalar / 1e6:7.1f} M/s  SIMD 1 core {1 / t_simd1 / 1e6:7.1f} M/s"
            f"  SIMD {threads} threads {1 / t_all / 1e6:8.1f} M/s")
    result["cpu"] = cpu_rows
    save()

    # frax (JAX) on the same robot, in its own process (JAX takes GPU memory its own way)
    np.savez(folder / "frax_states.npz", **{k: v[:4096] for k, v in states.items()})
    del cols
    if not host:
        be.torch.cuda.empty_cache()
    try:
        env = dict(os.environ, JAX_ENABLE_X64="1", XLA_PYTHON_CLIENT_PREALLOCATE="false")
        if host:
            env["JAX_PLATFORMS"] = "cpu"
        res = subprocess.run([sys.executable, str(folder / "gpu.py"), "frax", str(folder)]
                             + (["--host"] if host else []), capture_output=True, text=True, env=env,
                             timeout=170)
        line = [x for x in res.stdout.splitlines() if x.startswith("{")]
        result["frax"] = json.loads(line[-1]) if line else f"failed: {res.stderr.strip()[-800:]}"
        for fname in ("inverse_dynamics", "forward_dynamics") if isinstance(result["frax"], dict) else ():
            got, want = np.load(folder / f"frax_{fname}.npy"), reference[fname][:4096]
            result["frax"][f"{fname}_max_rel_error_vs_c"] = float(np.abs(got - want).max()
                                                                  / max(1.0, np.abs(want).max()))
    except Exception as exc:   # noqa: BLE001
        result["frax"] = f"failed: {exc!r}"
    log(f"  frax: {result['frax']}")
    result["finished"] = time.strftime("%Y-%m-%d %H:%M:%S")
    save()
    log(f"wrote {out / 'gpu.json'}")


def dlpack_check(cm, be, lib, states, reference, robot):
    """Inverse dynamics and the upper M through ``CudaModule`` with ``lib`` arrays: equal to the
    raw launches' C check, outputs allocated by ``lib``, ``out=`` written in place (same pointer)."""
    n = 1 << 16 if not be.host else 1 << 8
    if lib == "cupy":
        import cupy as xp
        cols = {k: xp.asarray(np.ascontiguousarray(v[:n].T)).T for k, v in states.items()}
        ptr = lambda x: x.data.ptr           # noqa: E731
        host = lambda x: xp.asnumpy(x)       # noqa: E731
    elif lib == "torch":
        import torch
        cols = {k: torch.from_numpy(np.ascontiguousarray(v[:n].T)).cuda().T for k, v in states.items()}
        ptr = lambda x: x.data_ptr()         # noqa: E731
        host = lambda x: x.cpu().numpy()     # noqa: E731
    else:
        cols = {k: np.ascontiguousarray(v[:n].T).T for k, v in states.items()}
        ptr = lambda x: x.__array_interface__["data"][0]   # noqa: E731
        host = np.asarray
    tau = cm.inverse_dynamics(cols["q"], cols["qd"], cols["tau"])
    check = min(n, len(reference["inverse_dynamics"]))
    want = reference["inverse_dynamics"][:check]
    err = float(np.abs(host(tau)[:check] - want).max() / max(1.0, np.abs(want).max()))
    out = cm.mass_matrix(cols["q"], out_format="upper")
    buf = out * 0.0
    again = cm.mass_matrix(cols["q"], out=buf, out_format="upper")
    t0 = time.perf_counter()
    for _ in range(10):
        cm.inverse_dynamics(cols["q"], cols["qd"], cols["tau"])
    if lib == "torch":
        import torch
        torch.cuda.synchronize()
    elif lib == "cupy":
        import cupy
        cupy.cuda.get_current_stream().synchronize()
    per_call = (time.perf_counter() - t0) / 10
    return dict(type=type(tau).__module__, shape=list(tau.shape), err_vs_c=err,
                out_in_place=bool(ptr(again) == ptr(buf)), upper_equal=bool(np.array_equal(host(again), host(out))),
                call_us_at_n=[per_call * 1e6, n])


def frax_bench(folder, host):
    """frax's rnea and forward_dynamics, jit(vmap) fp64, on the Panda; prints one JSON line."""
    import jax
    import jax.numpy as jnp

    import frax

    folder = Path(folder)
    robot = frax.Manipulator(str(folder / "panda_fixed_fingers.urdf"), ee_offset=np.eye(4))
    g = jnp.array([0.0, 0.0, 9.81, 0.0, 0.0, 0.0])
    rnea = jax.jit(jax.vmap(lambda q, v, a: robot.rnea(q, v, a, g, None)))
    fd = jax.jit(jax.vmap(lambda q, v, t: robot.forward_dynamics(q, v, t, None)))
    out = dict(device=str(jax.devices()[0]), jax=jax.__version__, frax=FRAX)
    states = np.load(folder / "frax_states.npz")
    for name, fn in (("inverse_dynamics", rnea), ("forward_dynamics", fd)):
        for n in ([1 << 10] if host else [1 << 14, 1 << 20, 1 << 22]):
            try:
                rng = np.random.default_rng(1)
                q, v, a = (jnp.asarray(rng.uniform(-3, 3, (n, 7)) if i == 0 else rng.normal(size=(n, 7)))
                           for i in range(3))
                t0 = time.perf_counter()
                fn(q, v, a).block_until_ready()
                first = time.perf_counter() - t0
                reps = 3 if host else 10
                t0 = time.perf_counter()
                for _ in range(reps):
                    r = fn(q, v, a)
                r.block_until_ready()
                t = (time.perf_counter() - t0) / reps
                out[f"{name}_{n}"] = dict(seconds=t, states_per_s=n / t, first_call_s=first)
            except Exception as exc:   # noqa: BLE001 - e.g. out of memory at the largest N
                out[f"{name}_{n}"] = f"failed: {exc!r}"[:300]
                break
            print(json.dumps({f"{name}_{n}": out[f"{name}_{n}"]}), file=sys.stderr, flush=True)
        # outputs on the run's first states, compared with the C by the run
        np.save(folder / f"frax_{name}.npy", np.asarray(fn(*(jnp.asarray(states[k]) for k in ("q", "qd", "tau")))))
    print(json.dumps(out))


def report(path):
    """Markdown tables of one run's gpu.json (docs/gpu.md)."""
    d = json.loads(Path(path).read_text())
    bw = d["bandwidth"]
    lines = [f"Card: **{d['device']}** (`nvidia-smi`: {d.get('nvidia_smi', '')}), {d['cpu_count']} CPU cores; "
             f"run {d['started']} to {d['finished']}.", "",
             f"Device-to-device copy in the same run: {bw / 1e12:.2f} TB/s (bytes read + written). The bound of a "
             "function is this bandwidth / the bytes one state reads and writes (fp64).", "",
             "| function | output | N | kernel time | G states/s | bytes/state | bound G states/s | of bound | "
             "max rel. error vs C |", "|---|---|---:|---:|---:|---:|---:|---:|---:|"]
    for r in d["kernels"]:
        if "error" in r:
            lines.append(f"| {r['function']} | {r['format']} | {r['n']} | {r['error']} | | | | | |")
            continue
        err = f"{r['max_rel_error_vs_c']:.1e}" if "max_rel_error_vs_c" in r else ""
        lines.append(f"| {r['function']} | {r['format']} | {r['n']:,} | {r['seconds'] * 1e6:.1f} µs | "
                     f"{r['states_per_s'] / 1e9:.2f} | {r['bytes_per_state']} | {r['bound_states_per_s'] / 1e9:.2f} | "
                     f"{r['states_per_s'] / r['bound_states_per_s']:.0%} | {err} |")
    rm = d.get("row_major_inverse_dynamics")
    if isinstance(rm, dict):
        lines += ["", f"Row-major inputs and output instead (each thread reads its own rows, uncoalesced): inverse "
                      f"dynamics at N = {rm['n']:,}: {rm['states_per_s'] / 1e9:.2f} G states/s."]
    big = {r["function"]: r for r in d["kernels"] if r.get("format") == "full" and r["n"] == max(x["n"] for x in
                                                                                                  d["kernels"])}
    lines += ["", f"The same functions in C on the machine's {d['cpu_count']} CPU cores (gcc -O3 -march=native "
                  "there; the SIMD batch on each OpenMP thread's share of the states), against the kernels at the "
                  "largest N:", "",
              "| function | C scalar, 1 core (M/s) | C SIMD, 1 core (M/s) | C SIMD, all cores (M/s) | GPU (M/s) | "
              "GPU / all cores |", "|---|---:|---:|---:|---:|---:|"]
    for c in d["cpu"]:
        g = big.get(c["function"])
        lines.append(f"| {c['function']} | {c['scalar_1core'] / 1e6:.1f} | {c['simd_1core'] / 1e6:.1f} | "
                     f"{c['simd_all_cores'] / 1e6:.0f} | {g['states_per_s'] / 1e6:.0f} | "
                     f"{g['states_per_s'] / c['simd_all_cores']:.0f}x |" if g else "")
    fx = d.get("frax")
    if isinstance(fx, dict):
        lines += ["", f"frax ({fx['frax']}, JAX {fx['jax']}, {fx['device']}, fp64, `jit(vmap(...))`, the same "
                      "robot: soagen's Panda URDF with the fingers fixed), outputs equal to the C within "
                      f"{fx['inverse_dynamics_max_rel_error_vs_c']:.1e} (rnea) and "
                      f"{fx['forward_dynamics_max_rel_error_vs_c']:.1e} (forward dynamics):", "",
                  "| function | N | frax time | frax M states/s | soagen kernel M states/s (same N or nearest) | ratio |",
                  "|---|---:|---:|---:|---:|---:|"]
        for key, val in fx.items():
            if not isinstance(val, dict):
                continue
            fname, n = key.rsplit("_", 1)
            n = int(n)
            ours = min((r for r in d["kernels"] if r["function"] == fname and r.get("format") == "full"
                        and "seconds" in r), key=lambda r: abs(np.log(r["n"] / n)))
            lines.append(f"| {fname} | {n:,} | {val['seconds'] * 1e3:.2f} ms | {val['states_per_s'] / 1e6:.1f} | "
                         f"{ours['states_per_s'] / 1e6:.0f} (N = {ours['n']:,}) | "
                         f"{ours['states_per_s'] / val['states_per_s']:.0f}x |")
    dl = d.get("dlpack", {})
    if dl:
        lines += ["", "Through `soagen.targets.cuda.CudaModule` (DLPack, no copies): "
                  + "; ".join(f"{lib}: outputs of type {v['type']}, error vs C {v['err_vs_c']:.1e}, out= in place "
                              f"{v['out_in_place']}, upper = full's triangle {v['upper_equal']}, "
                              f"{v['call_us_at_n'][0]:.0f} µs a call at N = {v['call_us_at_n'][1]:,} (Python "
                              "included)" if isinstance(v, dict) else f"{lib}: {v}" for lib, v in dl.items()) + "."]
    print("\n".join(lines))


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("step", choices=["prepare", "run", "frax", "report"])
    parser.add_argument("folder", help="the prepared folder (report: the gpu.json)")
    parser.add_argument("--out", default=None, help="run: where gpu.json goes (default: the folder)")
    parser.add_argument("--host", action="store_true", help="run: the host-compiled kernels, small N (dry run)")
    args = parser.parse_args()
    if args.step == "prepare":
        prepare(args.folder)
    elif args.step == "run":
        run(args.folder, args.out or args.folder, args.host)
    elif args.step == "report":
        report(args.folder)
    else:
        frax_bench(args.folder, args.host)


if __name__ == "__main__":
    main()
