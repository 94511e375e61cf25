"""The generated ``.cu`` without a GPU: compiled by the host C++ compiler (target "cuda-host",
the CUDA qualifiers defined away, each launcher runs its kernel's body on every state in a loop),
its kernels equal the C functions bit for bit at -O0 (the suite's builds), through the same DLPack
path a GPU call takes (NumPy arrays standing in for CuPy/PyTorch ones); where nvcc is installed, it
compiles for a GPU.  At -O3 g++ and gcc may fuse other multiply-adds: the UR5's forward dynamics
then differs from the C module's in the last bits (5.7e-14 at most over 50 states, one ad hoc run).
"""
from __future__ import annotations

import shutil
import subprocess

import numpy as np
import pytest

import soagen
from soagen.model import robots
from soagen.targets.cuda.emit import emit_cuda
from soagen.targets.cuda.module import view
from tests.support.builds import built
from tests.test_generated_vs_reference import CASES
from tests.test_variants import CASES as VARIANT_CASES, OPTIONS as VARIANT_OPTIONS

FUNCTIONS = ["forward_kinematics", "jacobian", "inverse_dynamics", "mass_matrix", "forward_dynamics",
             "os_inertia", "os_coriolis"]
UR5_SINGULAR = [0.3, -1.0, 0.0, 0.4, 0.9, 0.2]


def states(robot, count, seed):
    rng = np.random.default_rng(seed)
    rows = [robot.random_state(rng) for _ in range(count)]
    return [np.array([r[i] for r in rows]) for i in range(4)]


def columns(a):
    """The same (N, size) values stored states-in-columns (strides (1, N)): the coalesced layout."""
    return np.ascontiguousarray(a.T).T


@pytest.fixture(scope="module")
def modules():
    robot, c_mod = built("ur5_variants", VARIANT_CASES["ur5_variants"], **VARIANT_OPTIONS["ur5_variants"])
    return robot, c_mod, built("ur5_cuda_host", CASES["ur5"], functions=FUNCTIONS, target="cuda-host")[1]


def test_kernels_on_the_cpu_equal_the_c(modules):
    """Every kernel, row-major and states-in-columns inputs, full and upper outputs."""
    robot, c_mod, cu = modules
    Q, QD, QDD, TAU = states(robot, 21, seed=4)
    cases = {"forward_kinematics": (Q,), "jacobian": (Q,), "inverse_dynamics": (Q, QD, QDD), "mass_matrix": (Q,),
             "forward_dynamics": (Q, QD, TAU), "os_inertia": (Q,), "os_coriolis": (Q, QD)}
    assert sorted(cases) == sorted(cu._sig)
    for fname, args in cases.items():
        want = getattr(c_mod, fname)(*args)
        for layout in (lambda a: a, columns):
            got = getattr(cu, fname)(*[layout(a) for a in args])
            assert got.shape == want.shape and np.array_equal(got, want), fname
    assert set(cu._upper) == {"mass_matrix", "os_inertia"}
    for fname in cu._upper:
        assert np.array_equal(cu.call(fname, columns(Q), out_format="upper"),
                              c_mod.call(fname, Q, out_format="upper")), fname
    got = cu.mass_matrix(Q)               # outputs come states-in-columns: the (N, n, n) view of a (n*n, N) array
    assert got.base is not None and got.strides[0] == got.itemsize


def test_failed_states_are_counted_and_untouched(modules):
    robot, c_mod, cu = modules
    Q, QD, _, _ = states(robot, 9, seed=5)
    Q[[2, 7]] = UR5_SINGULAR
    out = np.full((36, 9), 7.0).T
    with pytest.raises(soagen.SingularError, match="2 of 9 rows"):
        cu.os_inertia(Q, out=out)
    ok = np.ones(9, bool)
    ok[[2, 7]] = False
    assert np.all(out[~ok] == 7.0)
    assert np.array_equal(out[ok].reshape(-1, 6, 6), np.array([c_mod.os_inertia(q) for q in Q[ok]]))


def test_arguments_are_checked(modules):
    robot, _, cu = modules
    Q, QD, QDD, _ = states(robot, 4, seed=6)
    with pytest.raises(ValueError, match=r"qd must have shape \(4, 6\)"):
        cu.inverse_dynamics(Q, QD[:3], QDD)
    with pytest.raises(TypeError, match="float64"):
        cu.mass_matrix(Q.astype(np.float32))
    with pytest.raises(TypeError, match="__dlpack__"):
        cu.mass_matrix(Q.tolist())
    with pytest.raises(ValueError, match="no symmetric matrix output"):
        cu.jacobian(Q, out_format="upper")
    v = view(columns(Q))
    assert v.shape == (4, 6) and v.strides == (1, 4) and v.device == 1


def test_gpu_module_says_which_arrays_it_takes(modules):
    """A GPU module called with NumPy arrays: one line naming what it takes (no DLPack traceback).
    Checked on the host build made to answer as a GPU one, before anything reaches the library."""
    import copy

    robot, _, cu = modules
    gpu = copy.copy(cu)
    gpu.host = False
    Q = states(robot, 2, seed=1)[0]
    with pytest.raises(TypeError, match=r"takes GPU arrays .* got NumPy arrays: .* target='cuda-host'"):
        gpu.mass_matrix(Q)


def test_cli_writes_cu_and_simd_files(tmp_path):
    from soagen.cli import main

    for target, files in (("cuda", ["ur5.cu", "ur5_cuda.h"]), ("simd", ["ur5.c", "ur5.h", "ur5_simd.c", "ur5_simd.h"])):
        out = tmp_path / target
        assert main(["generate", "--example", "ur5", "--function", "mass_matrix", "--out", str(out), "--quiet",
                     "--target", target]) == 0
        assert all((out / f).is_file() for f in files), target
    text = (tmp_path / "cuda" / "ur5.cu").read_text()
    assert "__host__ __device__ static void ur5_mass_matrix(" in text and "ur5_mass_matrix_upper_cuda(" in text


@pytest.mark.skipif(shutil.which("nvcc") is None, reason="nvcc is not installed (the host build above still runs)")
def test_cu_compiles_with_nvcc(tmp_path):
    robot = robots.example("ur5")
    from soagen.codegen import generate
    gen = generate(robot, soagen.Options(functions=["inverse_dynamics", "os_inertia"]), "ur5")
    cu = emit_cuda(robot, gen.programs, "ur5")
    (tmp_path / "ur5.cu").write_text(cu.source)
    (tmp_path / "ur5_cuda.h").write_text(cu.header)
    res = subprocess.run(["nvcc", "-O1", "-arch=sm_80", "-c", "ur5.cu", "-o", "ur5.o"], cwd=tmp_path,
                         capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
