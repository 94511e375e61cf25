"""sin and cos of joint angles for double-precision C, inline.

libm's ``sincos`` costs about 12 ns a call on the benchmark machine: for a
7-joint arm that is 83 ns, more than the arithmetic of inverse dynamics. The
generated double code therefore computes its own: the angle is reduced by
k·π/2 (Cody–Waite, π/2 split in three parts so k·P1 and k·P2 are exact for
|k| < 2^20), then polynomials on [−π/4, π/4] are evaluated and the quadrant
picks sin/cos and the sign. The polynomial coefficients are least-squares fits
on Chebyshev nodes in 60-digit arithmetic (mpmath); their error before rounding
is below 4e-18 relative, so results are within an ulp or two of libm
(``tests/test_fasttrig.py`` measures it). |x| ≥ 1e5 rad goes to libm. Float
builds (microcontrollers) keep ``sinf``/``cosf``.

A function computes the sines and cosines of all the angles it reads at once,
first (``soagen_sincos``): one loop of the same operations on every angle, the
quadrant's value and sign picked by bit masks, which the compiler vectorizes
(``python benchmarks/trig_share.py`` times what the trig costs). A long function
(more than :data:`~soagen.targets.common.compiler.LONG_UNIT_STATEMENTS` statements)
calls ``soagen_sin``/``soagen_cos`` where a statement needs an angle instead, as
before: there the trig is a percent of the time, and the array made gcc's register
allocator spill more (solo12's contact derivatives: 7% more instructions, 1.07x
the time, timed interleaved in C); inlined into one function, the compiler shares
the reduction and polynomials between the sin and cos of a joint.
"""
from __future__ import annotations

from soagen.targets.common.inert import Code

TWO_OVER_PI = 0.6366197723675814
PIO2 = (1.5707963267341256, 6.077100506303966e-11, 2.0222662487959506e-21)   # π/2 = P1 + P2 + P3
ROUND = 6755399441055744.0                 # 1.5·2^52: x + ROUND − ROUND rounds to an integer
SIN = (-0.1666666666666663, 0.008333333333321907, -0.00019841269829452244, 2.755731358095979e-06,
       -2.505074222357712e-08, 1.5895943103357368e-10)    # sin r = r + r³ Σ SIN[i] r^2i
COS = (0.04166666666666659, -0.0013888888888872505, 2.480158728855358e-05, -2.755731410296429e-07,
       2.0875691483269687e-09, -1.1358093609276402e-11)   # cos r = 1 − r²/2 + r⁴ Σ COS[i] r^2i
LIBM_BEYOND = 1.0e5


def _horner(coeffs, z):
    text = repr(coeffs[-1])
    for c in reversed(coeffs[:-1]):
        text = f"{c!r} + {z}*({text})"
    return text


#: the helpers' names: all angles at once, one angle's sin, one angle's cos
NAMES = ("soagen_sincos", "soagen_sin", "soagen_cos")


def used(code):
    """The helpers of :data:`NAMES` that the C text ``code`` calls."""
    return {name for name in NAMES if name + "(" in code}


def c_helpers(names=NAMES):
    """C text of the helpers ``names`` (none: ""): ``static inline void soagen_sincos(int n,
    const double *x, double *s, double *c)`` (``s[i]``, ``c[i]`` = sin and cos of ``x[i]``, i < n:
    a function's angles at once) and ``static inline double soagen_sin(double)``, ``soagen_cos``
    (one angle where a statement needs it: long functions, :func:`soagen.targets.common.c_text.trig_lines`)."""
    if not names:
        return ""
    sin_poly, cos_poly = _horner(SIN, "z"), _horner(COS, "z")
    # k = round(x 2/pi) is in the low bits of x 2/pi + ROUND; quadrant q = k mod 4: the value is
    # the cos polynomial when q is odd, the sign flips when q & 2 (cos: q + 1)
    loop = f"""static inline void soagen_sincos(int n, const double *restrict x, double *restrict s, double *restrict c)
{{
    int far = 0;
    for (int i = 0; i < n; ++i) {{
        const double kr = x[i]*{TWO_OVER_PI!r} + {ROUND!r};
        const double k = kr - {ROUND!r};
        const double r = ((x[i] - k*{PIO2[0]!r}) - k*{PIO2[1]!r}) - k*{PIO2[2]!r};
        const double z = r*r;
        const double ps = r + r*z*({sin_poly});
        const double pc = 1.0 - 0.5*z + z*z*({cos_poly});
        uint64_t q, vs, vc;
        memcpy(&q, &kr, sizeof q);
        memcpy(&vs, (q & 1) ? &pc : &ps, sizeof vs);
        memcpy(&vc, (q & 1) ? &ps : &pc, sizeof vc);
        vs ^= (q & 2) << 62;
        vc ^= ((q + 1) & 2) << 62;
        memcpy(&s[i], &vs, sizeof vs);
        memcpy(&c[i], &vc, sizeof vc);
        far |= !(fabs(x[i]) < {LIBM_BEYOND!r});
    }}
    if (far)
        for (int i = 0; i < n; ++i)
            if (!(fabs(x[i]) < {LIBM_BEYOND!r})) {{
                s[i] = sin(x[i]);
                c[i] = cos(x[i]);
            }}
}}"""
    single = {}
    # one angle: the same operations, the quadrant's value indexed (sc[index], exact) and the sign
    # ±1.0 (exact), branch-free
    for name, libm, index, sign in (("soagen_sin", "sin", "q & 1", "q & 2"),
                                    ("soagen_cos", "cos", "(q + 1) & 1", "(q + 1) & 2")):
        single[name] = (f"""static inline double {name}(double x)
{{
    if (!(fabs(x) < {LIBM_BEYOND!r})) return {libm}(x);
    const double k = (x*{TWO_OVER_PI!r} + {ROUND!r}) - {ROUND!r};
    const double r = ((x - k*{PIO2[0]!r}) - k*{PIO2[1]!r}) - k*{PIO2[2]!r};
    const double z = r*r;
    const double sc[2] = {{r + r*z*({sin_poly}),
                          1.0 - 0.5*z + z*z*({cos_poly})}};
    const long q = (long)k;
    return (double)(1 - ({sign}))*sc[{index}];
}}""")
    head = ("/* sin/cos of joint angles: reduction by k*pi/2 (pi/2 in three parts), polynomials on\n"
            " * [-pi/4, pi/4] (fit error < 4e-18 relative), libm beyond |x| >= 1e5 (soagen.fasttrig):\n"
            " * a function's angles at once in one loop that the compiler vectorizes, or one angle. */\n"
            "#include <stdint.h>\n#include <string.h>")
    helpers = dict(single, soagen_sincos=loop)
    return Code("\n\n".join([head] + [helpers[name] for name in NAMES if name in names]) + "\n")
