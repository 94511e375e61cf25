"""soagen_sincos (the double sin/cos of the generated C: all of a function's angles in one
vectorized loop) and soagen_sin/soagen_cos (one angle, in long functions) agree with correctly rounded values to about an ulp, in every quadrant and
near zeros, compiled as the modules are (-O3 -march=native: the vector loop) and at -O0."""
from __future__ import annotations

import ctypes
import math
import subprocess

import mpmath
import numpy as np
import pytest

from soagen.targets.common import fasttrig
from soagen.targets.c99.compile import COMPILE_ARGS


@pytest.fixture(scope="module", params=["module flags", "-O0"])
def sincos(tmp_path_factory, request):
    folder = tmp_path_factory.mktemp("fasttrig")
    src = folder / "t.c"
    src.write_text("#include <math.h>\n" + fasttrig.c_helpers()
                   + "void f(int n, const double *x, double *s, double *c) { soagen_sincos(n, x, s, c); }\n"
                     "void g(int n, const double *x, double *s, double *c)\n"
                     "{ for (int i = 0; i < n; ++i) { s[i] = soagen_sin(x[i]); c[i] = soagen_cos(x[i]); } }\n")
    flags = COMPILE_ARGS if request.param == "module flags" else ["-O0", "-std=c99"]
    so = folder / "t.so"
    subprocess.run(["cc", *flags, "-Wall", "-Wextra", "-Werror", "-shared", "-fPIC", str(src), "-o", str(so), "-lm"],
                   check=True)
    lib = ctypes.CDLL(str(so))

    def call(xs, fn="f"):
        """sin, cos of ``xs`` by soagen_sincos (``fn`` "f") or soagen_sin, soagen_cos ("g")."""
        x = np.ascontiguousarray(xs, dtype=float)
        s, c = np.empty_like(x), np.empty_like(x)
        getattr(lib, fn)(ctypes.c_int(len(x)), *(a.ctypes.data_as(ctypes.POINTER(ctypes.c_double)) for a in (x, s, c)))
        return s, c
    return call


def _exact(fn, x):
    with mpmath.workdps(40):
        return float(fn(mpmath.mpf(x)))


def test_accuracy_against_correctly_rounded(sincos):
    """Within 2 ulps of the correctly rounded value over every angle the inline code computes
    (|x| < 1e5 rad; beyond, libm), and within 2 ulps of libm's own sin and cos there."""
    rng = np.random.default_rng(0)
    xs = np.concatenate([rng.uniform(-4, 4, 3000), rng.uniform(-1e4, 1e4, 1000),
                         rng.uniform(-fasttrig.LIBM_BEYOND, fasttrig.LIBM_BEYOND, 1000),   # the whole range
                         np.arange(-64, 65) * (math.pi / 4),                        # quadrant edges
                         np.arange(-20, 21) * math.pi + rng.normal(0, 1e-9, 41),    # near zeros of sin
                         [0.0, -0.0, 1e-300, 5e-324, 99999.9, -99999.9]])
    worst = worst_libm = 0.0
    for n, fn in ((len(xs), "f"), (7, "f"), (1, "f"), (len(xs), "g")):   # the vector loop, with a remainder,
        s, c = sincos(xs[:n], fn)                                         # one angle; the one-angle helpers
        for x, got_s, got_c in zip(xs[:n], s, c):
            for got, fn, libm in ((got_s, mpmath.sin, math.sin), (got_c, mpmath.cos, math.cos)):
                want = _exact(fn, x)
                ulp = math.ulp(max(abs(want), 1e-300))
                worst = max(worst, abs(got - want) / ulp)
                worst_libm = max(worst_libm, abs(got - libm(x)) / ulp)
    assert 0.0 < worst <= 2.0 and worst_libm <= 2.0, (worst, worst_libm)


def test_far_and_non_finite_arguments_use_libm(sincos):
    near = [0.5, -2.0, 3.0]
    for x in (1e5, -3e7, 1e300):
        s, c = sincos(near + [x])                # libm for the far angle, the others as before
        assert s[-1] == math.sin(x) and c[-1] == math.cos(x)
        assert np.array_equal(s[:-1], sincos(near)[0]) and np.array_equal(c[:-1], sincos(near)[1])
        s, c = sincos([x], "g")
        assert s[0] == math.sin(x) and c[0] == math.cos(x)
    for fn in ("f", "g"):
        s, c = sincos([float("nan"), float("inf")], fn)
        assert np.isnan(s).all() and np.isnan(c).all()
