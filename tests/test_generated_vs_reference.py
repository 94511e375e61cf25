"""Route 1 = route 2: the generated C (through cffi) equals the numpy reference
on 100 seeded random states, for every generated function, within the bounds
of :mod:`soagen.check` (1e-10 relative, plus 1e-13·κ where a function solves
with M or Ω(0))."""
from __future__ import annotations

import numpy as np
import pytest

import soagen
from soagen import functions
from soagen.model import robots
from soagen.check import check_module
from tests.support import assert_checked
from tests.support.builds import built
from tests.support.robots import planar_2link, random_robot

CASES = {
    "puma560": lambda: robots.example("puma560"),
    "panda": lambda: robots.example("panda"),
    "ur5": lambda: robots.example("ur5"),
    "planar_2link": lambda: planar_2link(),
    "chain3": lambda: random_robot(11, 3),
    "chain7_prismatic": lambda: random_robot(12, 7, prismatic_fraction=0.5),
    "tree6_2tips": lambda: random_robot(14, 6, tree=True, tips=2),
    "tree9_3tips": lambda: random_robot(15, 9, tree=True, tips=3),
    "tree12_2tips": lambda: random_robot(16, 12, tree=True, tips=2, prismatic_fraction=0.2),
}
#: build options per case: the PUMA, the 7-joint chain and the 9-joint tree are built with every
#: algorithm variant, and tests/test_variants.py checks its variants on these very builds (one build
#: each, not two: a default build records most variants anyway, as the candidates of its family
#: functions); the PUMA's other tests (tests/test_dh.py, test_mcu.py, test_sanitizers.py) take it too
OPTIONS = {case: {} for case in CASES} | {case: {"variants": None} for case in ("puma560", "chain7_prismatic",
                                                                               "tree9_3tips")}
#: the Panda in float, with its SIMD batches (tests/test_simd.py checks them on this build)
PANDA_FLOAT_OPTIONS = dict(precision="float", simd=True)


@pytest.mark.parametrize("case", sorted(CASES))
def test_generated_matches_reference(case):
    robot, mod = built(case, CASES[case], **OPTIONS[case])
    results = check_module(robot, mod, samples=100, seed=7)
    assert list(results) == [s.name for s in functions.select(robot, soagen.Options(**OPTIONS[case]))]
    assert_checked(robot, results, 100)   # Λ(0)-based functions UNTESTED where Λ(0) cannot exist
    if case in ("puma560", "panda", "ur5"):      # arms with 6+ joints: Λ(0) often exists
        # PUMA: cond(Ω(0)) < 1e6 on 51% of 1000 random states (median 9.7e5),
        # so 30 of 100 is 4 standard deviations below the expected count
        assert all(r.compared >= 30 for r in results.values()), results


def test_float_build_is_close():
    """precision='float' emits float C (sinf/cosf, f literals) that agrees to float accuracy."""
    robot, mod = built("panda", CASES["panda"], **PANDA_FLOAT_OPTIONS)
    src = (mod.path / "panda.c").read_text()
    assert "cosf(" in src and "double" not in src
    rng = np.random.default_rng(3)
    from soagen import reference as ref
    for _ in range(20):
        q, qd, qdd, _ = robot.random_state(rng)
        got = mod.inverse_dynamics(q, qd, qdd)
        assert got.dtype == np.float32
        want = ref.inverse_dynamics(robot, q, qd, qdd)
        assert np.abs(got - want).max() <= 1e-4 * max(1.0, np.abs(want).max())


def test_wrapper_rejects_bad_arguments():
    robot, mod = built("panda", CASES["panda"])
    q = np.zeros(robot.n)
    with pytest.raises(ValueError, match=r"q must have shape \(7,\)"):
        mod.gravity(np.zeros(6))
    with pytest.raises(TypeError, match="real numeric"):
        mod.gravity(np.array(["a"] * 7))
    with pytest.raises(ValueError, match="NaN"):
        mod.gravity(np.full(7, np.nan))
    with pytest.raises(ValueError, match="NaN or inf"):
        mod.inverse_dynamics(q, q, np.r_[q[:6], -np.inf])
    big = np.full(7, 1e308)                      # finite, though their sum overflows
    assert mod.inverse_dynamics(q, q, big).shape == (7,)
    with pytest.raises(ValueError, match="variant"):
        mod.forward_dynamics(q, q, q, variant="FD9")
    # non-contiguous and integer input are converted, not misread
    qq = np.zeros(2 * robot.n)[::2]
    assert np.array_equal(mod.gravity(qq), mod.gravity(np.zeros(robot.n, dtype=int)))


def test_a_wrong_shape_says_what_to_pass():
    """A (n, 1) q is neither one state nor a batch; a batch input with other rows says so."""
    _, mod = built("planar_2link", CASES["planar_2link"], functions=["inverse_dynamics"])
    with pytest.raises(ValueError, match=r"^q must have shape \(2,\) or \(N, 2\), got \(2, 1\)$"):
        mod.inverse_dynamics(np.zeros((2, 1)), np.zeros(2), np.zeros(2))
    with pytest.raises(ValueError, match=r"^qd has shape \(4, 2\) where the first input has 3 rows: .*\(3, 2\)"):
        mod.inverse_dynamics(np.zeros((3, 2)), np.zeros((4, 2)), np.zeros((3, 2)))


def test_a_function_not_built_says_how_to_build_it():
    """It names functions=[...], and variants=None only for an algorithm variant."""
    _, mod = built("planar_2link", CASES["planar_2link"], functions=["inverse_dynamics"])
    with pytest.raises(NotImplementedError, match=r"^contact_dynamics was not generated .*functions=\[\.\.\., "
                                                  r"'contact_dynamics'\]$"):
        mod.contact_dynamics(np.zeros(2), np.zeros(2), np.zeros(2))
    with pytest.raises(NotImplementedError, match=r"mass_matrix_ne was not generated .*'mass_matrix_ne'\], or "
                                                  r"variants=None"):
        mod.mass_matrix(np.zeros(2), variant="newton_euler")


def test_batch_calls_equal_row_calls():
    """Inputs with a leading N go through one C call per function (<name>_batch)."""
    import soagen

    robot, mod = built("ur5", CASES["ur5"])
    rng = np.random.default_rng(5)
    states = [robot.random_state(rng) for _ in range(7)]
    Q, QD, QDD, TAU = (np.array([s[i] for s in states]) for i in range(4))
    for name, args in (("inverse_dynamics", (Q, QD, QDD)), ("mass_matrix", (Q,)), ("jacobian", (Q,)),
                       ("forward_dynamics", (Q, QD, TAU)), ("os_inertia", (Q,)),
                       ("forward_kinematics", (Q,))):
        batch = getattr(mod, name)(*args)
        rows = np.array([getattr(mod, name)(*(a[i] for a in args)) for i in range(len(Q))])
        assert batch.shape == rows.shape and np.array_equal(batch, rows), name
    with pytest.raises(ValueError, match=r"\(7, 6\)"):
        mod.inverse_dynamics(Q, QD[:3], QDD)
    Q[2] = [0.3, -1.0, 0.0, 0.4, 0.9, 0.2]          # elbow stretched: Λ does not exist
    with pytest.raises(soagen.SingularError, match="1 of 7 rows"):
        mod.os_inertia(Q)


def test_out_buffers_are_filled_in_place():
    """out= (single and batch calls) gets the same numbers as a fresh result, in place."""
    robot, mod = built("ur5", CASES["ur5"])
    rng = np.random.default_rng(9)
    states = [robot.random_state(rng) for _ in range(5)]
    Q, QD, _, TAU = (np.array([s[i] for s in states]) for i in range(4))
    for name, args, shape in (("mass_matrix", (Q,), (robot.n, robot.n)), ("jacobian", (Q,), (6, robot.n)),
                              ("forward_dynamics", (Q, QD, TAU), (robot.n,)), ("os_inertia", (Q,), (6, 6))):
        call = getattr(mod, name)
        buf = np.full((len(Q), *shape), np.nan)
        got = call(*args, out=buf)
        assert np.shares_memory(got, buf) and np.array_equal(buf, call(*args)), name
        one = np.full(shape, np.nan)
        call(*(a[0] for a in args), out=one)
        assert np.array_equal(one, call(*(a[0] for a in args))), name
    flat = np.empty(len(Q) * robot.n * robot.n)                       # right size, no batch axis
    with pytest.raises(ValueError, match="leading dimension"):
        mod.mass_matrix(Q, out=flat)
    with pytest.raises(TypeError, match="C-contiguous float64"):
        mod.mass_matrix(Q[0], out=np.empty((robot.n, robot.n), dtype=np.float32))
    with pytest.raises(TypeError, match="C-contiguous"):
        mod.gravity(Q[0], out=np.empty(2 * robot.n)[::2])
