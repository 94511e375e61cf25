"""SIMD batches (:mod:`soagen.targets.simd.emit`) equal the scalar C row by row.

Every lane performs the scalar function's operations in its order, and the
vector body keeps the scalar code's branches at the Ω(0) pivot checks.  The
modules of most tests here are built at -O0, where nothing is fused: there the
outputs are compared as bit patterns, not within a tolerance (the modules are
the ones other tests build anyway: same keys and options, no extra compile).
At -O3 with -ffp-contract=fast gcc picks the multiply-adds to fuse separately in
vector and scalar code, so one test builds at -O3 and bounds the difference, and
checks that a row's result does not depend on where it stands in a batch.
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

import soagen
from soagen import functions as F
from soagen.targets.c99.module import unpack_upper
from tests.support.builds import built
from tests.test_generated_vs_reference import CASES as GEN_CASES, PANDA_FLOAT_OPTIONS
from tests.test_multidof import OPTIONS as MULTIDOF_OPTIONS, RANDOM
from tests.test_variants import CASES as VARIANT_CASES, OPTIONS as VARIANT_OPTIONS

#: the UR5 with its elbow stretched: Ω(0) is singular, Λ(0) does not exist
UR5_SINGULAR = [0.3, -1.0, 0.0, 0.4, 0.9, 0.2]

BUILDS = {   # key -> (make target, options): builds of other test modules, made with their SIMD batches
    "ur5_variants": (VARIANT_CASES["ur5_variants"], VARIANT_OPTIONS["ur5_variants"]),  # every function, Ω(0) checks
    "multidof_floating_tree": (RANDOM["floating_tree"], MULTIDOF_OPTIONS["floating_tree"]),  # quaternions, a point tip
    "panda": (GEN_CASES["panda"], PANDA_FLOAT_OPTIONS),                                # floats
}


def rows_of(robot, count, seed, singular=()):
    """``count`` states {argument name: (count, size)}; the rows in ``singular`` get q = UR5_SINGULAR."""
    rng = np.random.default_rng(seed)
    states = [robot.random_state(rng) for _ in range(count)]
    rows = robot.tip_rows                                 # 6 per full tip, 3 per point tip
    args = {name: np.array([s[i] for s in states]) for i, name in enumerate(("q", "qd", "qdd", "tau"))}
    args["f"], args["u"] = rng.normal(size=(count, rows)) * 10.0, rng.normal(size=(count, rows))
    for r in singular:
        args["q"][r] = UR5_SINGULAR
    return args


def run_batch(mod, fname, suffix, args, fill=7.0):
    """The C function ``<fname><suffix>`` (``_batch``: the module's scalar loop; ``_batch_simd[_upper]``:
    the SIMD library's) on ``args``; -> (return value, [outputs (rows, size)])."""
    if suffix == "_batch":
        ffi, fn = mod._lib.ffi, getattr(mod._lib.lib, f"{mod.name}_{fname}_batch")
    else:
        ffi, fn = mod._batch_function(fname, upper=suffix.endswith("_upper"))
    spec = F.BY_NAME[fname]
    sig = mod._sig[fname]
    ins = [np.ascontiguousarray(args[name], dtype=mod._dtype) for name in spec.inputs]
    rows = len(ins[0])
    outs = [np.full((rows, size), fill, dtype=mod._dtype) for _, size in sig[len(ins):]]
    if suffix.endswith("_upper"):
        outs = [np.full((rows, (o.shape[1] + int(np.sqrt(o.shape[1]))) // 2), fill, dtype=mod._dtype)
                if name in mod._upper[fname] else o for (name, _), o in zip(sig[len(ins):], outs)]
    ctype = mod._ctype
    ret = fn(rows, *[ffi.from_buffer(ctype, a) for a in ins + outs])
    return ret, outs


def avx512():
    """Whether the compiler, with the build's -march=native, targets AVX-512."""
    macros = subprocess.run(["cc", "-march=native", "-dM", "-E", "-"], input="", capture_output=True, text=True,
                            check=True).stdout
    return "__AVX512F__" in macros


def bits(a):
    return np.ascontiguousarray(a).view(np.uint32 if a.dtype == np.float32 else np.uint64)


@pytest.mark.parametrize("key", sorted(BUILDS))
def test_simd_batch_equals_scalar_batch_bit_for_bit(key):
    """Every function: three full vectors and a scalar tail of rows; the UR5 has singular rows
    in two vectors and in the tail (counted, left untouched)."""
    make, options = BUILDS[key]
    robot, mod = built(key, make, **options)
    lanes = mod.simd_lanes
    register_bytes = 64 if avx512() else 32                                    # one register of this machine
    assert lanes * np.dtype(mod._dtype).itemsize == register_bytes, (lanes, mod.precision)
    count = 3 * lanes + lanes // 2 + 1
    singular = (2, lanes + 5, count - 1) if key == "ur5_variants" else ()
    args = rows_of(robot, count, seed=11, singular=singular)
    statuses = 0
    for fname in mod._sig:
        want_ret, want = run_batch(mod, fname, "_batch", args)
        got_ret, got = run_batch(mod, fname, "_batch_simd", args)
        assert got_ret == want_ret, fname
        for g, w in zip(got, want):
            assert np.array_equal(bits(g), bits(w)), (fname, np.abs(g - w).max())
        if F.BY_NAME[fname].solves == "Omega" and singular:
            assert want_ret == len(singular), fname          # the singular rows were found ...
            assert all(np.all(w[list(singular)] == 7.0) for w in want), fname   # ... and left untouched
            statuses += 1
        elif F.BY_NAME[fname].solves == "Omega":
            assert want_ret == 0, fname                      # Ω(0) solved on every row: Λ(0)'s path ran
    assert not singular or statuses >= 5


def test_upper_triangle_outputs():
    """out_format="upper": the symmetric outputs (M, M⁻¹, Ω, Λ, found from the program) packed row by
    row; the same numbers as the full matrices, singular rows still counted and untouched."""
    robot, mod = built("ur5_variants", VARIANT_CASES["ur5_variants"], **VARIANT_OPTIONS["ur5_variants"])
    assert {"mass_matrix", "mass_matrix_inverse", "os_inertia_inverse", "os_inertia", "os_inertia_recursive",
            "mass_matrix_inverse_cholesky"} <= set(mod._upper)
    # M by n Newton-Euler passes computes (i, j) and (j, i) separately: not symmetric by construction
    assert not {"jacobian", "forward_kinematics", "inverse_dynamics", "forward_dynamics_fd2",
                "mass_matrix_ne"} & set(mod._upper)
    count = 2 * mod.simd_lanes + 3
    args = rows_of(robot, count, seed=12, singular=(1, count - 2))
    Q = args["q"]
    for name in ("mass_matrix", "mass_matrix_inverse", "os_inertia_inverse"):
        full = getattr(mod, name)(Q)
        packed = getattr(mod, name)(Q, out_format="upper")
        n = full.shape[-1]
        assert packed.shape == (count, n * (n + 1) // 2)
        assert np.array_equal(unpack_upper(packed, n), full) and np.array_equal(full, full.transpose(0, 2, 1))
        assert np.array_equal(getattr(mod, name)(Q[3], out_format="upper"), packed[3])
    ret, (lam,) = run_batch(mod, "os_inertia", "_batch_simd_upper", args)
    _, (lam_full,) = run_batch(mod, "os_inertia", "_batch", args)
    ok = np.ones(count, bool)
    ok[[1, count - 2]] = False
    assert ret == 2 and np.all(lam[~ok] == 7.0)
    assert np.array_equal(unpack_upper(lam[ok], 6), lam_full[ok].reshape(-1, 6, 6))
    with pytest.raises(soagen.SingularError, match="2 of"):
        mod.os_inertia(Q, out_format="upper")
    with pytest.raises(ValueError, match="no symmetric matrix output"):
        mod.jacobian(Q, out_format="upper")


def test_wrappers_batch_through_simd():
    """The module's batch calls go through the SIMD library, compiled at the first batch call into the
    build's folder (and linked with its scalar objects); single calls stay scalar."""
    robot, mod = built("ur5_variants", VARIANT_CASES["ur5_variants"], **VARIANT_OPTIONS["ur5_variants"])
    args = rows_of(robot, 13, seed=13)
    batch = mod.forward_dynamics(args["q"], args["qd"], args["tau"])
    _, (direct,) = run_batch(mod, "forward_dynamics", "_batch_simd", args)
    assert np.array_equal(batch, direct)
    assert np.array_equal(batch, [mod.forward_dynamics(args["q"][i], args["qd"][i], args["tau"][i])
                                  for i in range(13)])
    assert mod._simd is not None and (mod.path / mod._meta["simd"]["library"]).is_file()


def test_rows_at_O3_do_not_depend_on_their_place_and_stay_near_the_single_call():
    """At the default -O3: every row of a batch equals, bit for bit, the same state's row in the
    batch reversed and in a batch of its own (one part-full vector); and it is within round-off
    of the single call, whose fused multiply-adds gcc may choose otherwise."""
    robot = GEN_CASES["panda"]()
    names = ["inverse_dynamics", "mass_matrix", "os_inertia"]
    mod = soagen.build(robot, functions=names, simd=True)
    assert sorted(mod._sig) == sorted(names)
    count = 2 * mod.simd_lanes + 3
    args = rows_of(robot, count, seed=14)
    for fname in mod._sig:
        _, (in_order,) = run_batch(mod, fname, "_batch_simd", args)
        _, (reverse,) = run_batch(mod, fname, "_batch_simd", {k: v[::-1].copy() for k, v in args.items()})
        alone = np.vstack([run_batch(mod, fname, "_batch_simd", {k: v[i:i + 1] for k, v in args.items()})[1][0]
                           for i in range(count)])
        assert np.array_equal(bits(in_order), bits(reverse[::-1])), fname
        assert np.array_equal(bits(in_order), bits(alone)), fname
        spec = F.BY_NAME[fname]
        single = np.array([getattr(mod, fname)(*(args[name][i] for name in spec.inputs)) for i in range(count)])
        single = single.reshape(count, -1)
        scale = np.abs(single).max(axis=1, keepdims=True)
        assert scale.min() > 0.1, fname
        assert np.all(np.abs(in_order - single) <= 1e-14 * scale), (fname, np.abs(in_order - single).max())
