"""soagen_sin/soagen_cos (the inline double trig of the generated C) agree with
correctly rounded values to about an ulp, in every quadrant and near zeros."""
from __future__ import annotations

import ctypes
import math
import subprocess

import mpmath
import numpy as np
import pytest

from soagen.targets.common import fasttrig


@pytest.fixture(scope="module")
def lib(tmp_path_factory):
    folder = tmp_path_factory.mktemp("fasttrig")
    src = folder / "t.c"
    src.write_text("#include <math.h>\n" + fasttrig.c_helpers()
                   + "double f_sin(double x) { return soagen_sin(x); }\n"
                     "double f_cos(double x) { return soagen_cos(x); }\n")
    so = folder / "t.so"
    subprocess.run(["cc", "-O2", "-std=c99", "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", str(src),
                    "-o", str(so), "-lm"], check=True)
    out = ctypes.CDLL(str(so))
    for f in (out.f_sin, out.f_cos):
        f.restype, f.argtypes = ctypes.c_double, [ctypes.c_double]
    return out


def _exact(fn, x):
    with mpmath.workdps(40):
        return float(fn(mpmath.mpf(x)))


def test_accuracy_against_correctly_rounded(lib):
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(-4, 4, 3000), rng.uniform(-1e4, 1e4, 1000),
                         np.arange(-64, 65) * (math.pi / 4),                        # quadrant edges
                         np.arange(-20, 21) * math.pi + rng.normal(0, 1e-9, 41),    # near zeros of sin
                         [0.0, -0.0, 1e-300, 5e-324, 99999.9, -99999.9]])
    worst = 0.0
    for x in xs:
        for got, fn in ((lib.f_sin(x), mpmath.sin), (lib.f_cos(x), mpmath.cos)):
            want = _exact(fn, x)
            ulp = math.ulp(max(abs(want), 1e-300))
            worst = max(worst, abs(got - want) / ulp)
    assert worst <= 2.0, worst


def test_far_and_non_finite_arguments_use_libm(lib):
    for x in (1e5, -3e7, 1e300):
        assert lib.f_sin(x) == math.sin(x) and lib.f_cos(x) == math.cos(x)
    assert math.isnan(lib.f_sin(float("nan"))) and math.isnan(lib.f_cos(float("inf")))
