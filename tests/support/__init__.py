"""Test support: the Pinocchio oracle (:mod:`.oracle`), robots for tests
(:mod:`.robots`), dense operators (:mod:`.dense`), shared module builds
(:mod:`.builds`) and the comparison helpers below."""
from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[2]


def rel(a, b):
    """max |a − b| / max(1, max |b|): the error measure of ``soagen check``."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.abs(a - b).max() / max(1.0, float(np.abs(b).max())))


def assert_close(actual, expected, rtol=1e-10, what=""):
    """max |a − e| <= rtol · max(|e|, |a|) (a matrix-level relative error)."""
    actual, expected = np.asarray(actual, float), np.asarray(expected, float)
    assert actual.shape == expected.shape, (what, actual.shape, expected.shape)
    err = np.abs(actual - expected).max() if actual.size else 0.0
    scale = max(np.abs(expected).max(initial=0.0), np.abs(actual).max(initial=0.0), 1e-300)
    assert err <= rtol * scale + 1e-14, f"{what}: max abs error {err:.3e}, scale {scale:.3e}, rel {err / scale:.3e}"


def benchmark_script(name):
    """``benchmarks/<name>.py`` as a module (the benchmark folder is not a package), registered as
    ``bench_<name>`` (dataclasses look their module up in sys.modules)."""
    spec = importlib.util.spec_from_file_location(f"bench_{name}", ROOT / "benchmarks" / f"{name}.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module
    spec.loader.exec_module(module)
    return module


def benchmark_report():
    """``benchmarks/report.py`` as a module."""
    return benchmark_script("report")


def lambda_can_exist(robot, states=3, seed=0):
    """Whether Λ(0) = (J M⁻¹ Jᵀ)⁻¹ can exist: the dense reference Jacobian of the tips has full row
    rank r (6 per full tip, 3 per point tip) at some of ``states`` seeded random configurations
    (3 joints cannot move a 6-row tip)."""
    from soagen import reference as ref

    rng = np.random.default_rng(seed)
    rows = robot.tip_rows
    return rows > 0 and any(np.linalg.matrix_rank(ref.jacobian(robot, robot.random_configuration(rng))) == rows
                            for _ in range(states))


def assert_checked(robot, results, states):
    """``soagen.check`` results of ``states`` states: every function within its bound on the states
    it was compared on and compared on some; the functions that invert Ω(0) skip only states where
    Λ(0) is ill-conditioned, and are UNTESTED (compared on none, never a pass) exactly when Λ(0)
    cannot exist (:func:`lambda_can_exist`)."""
    exists = lambda_can_exist(robot)
    for name, r in results.items():
        assert r.compared + r.skipped == states and (r.skipped == 0 or r.solves == "Omega"), (name, r)
        if r.solves == "Omega" and not exists:
            assert r.untested, (name, r)
        else:
            assert r.compared > 0, (name, r)
            assert r.ok, (name, r.error, r.ratio)
