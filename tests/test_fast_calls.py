"""The module methods' C entry (soagen.targets.c99.fastcall): arrays that need no conversion
go straight to the C function, everything else and every error to the Python method, and
the two give the same results and raise the same errors.

Each check the C entry makes before the call (shape, dtype, contiguity, finite entries, no zero
quaternion, ``out=`` apart from the inputs, Ω(0) not singular) is exercised here with inputs
that reach it, so a check dropped from fastcall.c fails a test."""
from __future__ import annotations

import numpy as np
import pytest

import soagen
from soagen.model import robots
from tests.support.builds import built
from tests.support.robots import random_robot

FUNCTIONS = ["inverse_dynamics", "mass_matrix", "mass_matrix_inverse", "forward_dynamics", "jacobian",
             "os_inertia", "inverse_dynamics_derivatives", "forward_dynamics_derivatives"]


def floating():
    """A floating base carrying a 3-joint chain, one tip (quaternions in q: nq = n + 1)."""
    return built("fast_floating", lambda: random_robot(41, 3, floating_base=True), functions=FUNCTIONS)


def ur5():
    return built("fast_ur5", lambda: robots.example("ur5"), functions=FUNCTIONS)


def state(robot, rng):
    q, qd, qdd, tau = robot.random_state(rng)
    return q, qd, qdd, tau


def args_of(name, q, qd, qdd, tau):
    return {"inverse_dynamics": (q, qd, qdd), "inverse_dynamics_derivatives": (q, qd, qdd),
            "forward_dynamics": (q, qd, tau), "forward_dynamics_derivatives": (q, qd, tau)}.get(name, (q,))


@pytest.mark.parametrize("case", [ur5, floating], ids=["ur5", "floating"])
def test_the_c_entry_gives_the_python_methods_results(case):
    """Every method is a Caller whose answer, single and batched, equals its Python method's
    (bit for bit: the same C function) and the reference's."""
    robot, mod = case()
    rng = np.random.default_rng(3)
    states = [state(robot, rng) for _ in range(4)]
    for name in FUNCTIONS:
        method = getattr(mod, name)
        assert type(method).__name__ == "Caller", name
        python = method.__wrapped__
        for s in states:
            fast, slow = method(*args_of(name, *s)), python(*args_of(name, *s))
            for a, b in zip(*(r if isinstance(r, tuple) else (r,) for r in (fast, slow))):
                assert a.shape == b.shape and np.array_equal(a, b), name
        batch = method(*(np.array(col) for col in zip(*(args_of(name, *s) for s in states))))
        rows = [method(*args_of(name, *s)) for s in states]
        for k, part in enumerate(batch if isinstance(batch, tuple) else (batch,)):
            row = np.array([r[k] if isinstance(r, tuple) else r for r in rows])
            assert part.shape == row.shape and np.array_equal(part, row), name
    q, qd, qdd, tau = states[0]
    ref = soagen.reference.inverse_dynamics(robot, q, qd, qdd)
    assert np.allclose(mod.inverse_dynamics(q, qd, qdd), ref, rtol=1e-10, atol=1e-10) and np.abs(ref).max() > 1e-3


def test_out_is_written_in_place_and_returned():
    robot, mod = ur5()
    q, qd, qdd, _ = state(robot, np.random.default_rng(4))
    buf = np.empty((robot.n, robot.n))
    assert mod.mass_matrix(q, out=buf) is buf and np.array_equal(buf, mod.mass_matrix.__wrapped__(q))
    flat = np.empty(robot.n * robot.n)                   # another shape of the right size: the Python path
    assert np.array_equal(mod.mass_matrix(q, out=flat), buf)
    tau = np.empty(robot.n)
    assert mod.inverse_dynamics(q, qd, qdd, out=tau) is tau
    assert np.array_equal(tau, mod.inverse_dynamics.__wrapped__(q, qd, qdd))
    batch = np.empty((3, robot.n))
    Q = np.array([q, q, q])
    assert mod.inverse_dynamics(Q, Q, Q, out=batch) is batch and np.array_equal(batch[1], mod.inverse_dynamics(q, q, q))


def test_inputs_that_need_a_conversion_are_converted():
    """Lists, integers, float32, strided and non-native byte order: the Python path, same values."""
    robot, mod = ur5()
    q, qd, qdd, _ = state(robot, np.random.default_rng(5))
    want = mod.inverse_dynamics(q, qd, qdd)
    wide = np.zeros(2 * robot.n)
    wide[::2] = q
    for q_as in (list(q), wide[::2], q.astype(">f8"), q.astype(np.float32).astype(np.float64)):
        got = mod.inverse_dynamics(q_as, qd, qdd)
        assert np.allclose(got, want, rtol=1e-6) and got.dtype == np.float64
    assert np.array_equal(mod.mass_matrix(np.zeros(robot.n, dtype=int)), mod.mass_matrix(np.zeros(robot.n)))


@pytest.mark.parametrize("bad, error, words", [
    (lambda q: np.r_[q[:-1], np.nan], ValueError, "q contains NaN or inf"),
    (lambda q: np.r_[q[:-1], -np.inf], ValueError, "q contains NaN or inf"),
    (lambda q: q[:-1].copy(), ValueError, r"q must have shape"),
    (lambda q: np.array([q, q])[:, :-1].copy(), ValueError, r"q must have shape"),
])
def test_bad_inputs_that_reach_the_c_entry_raise_the_python_error(bad, error, words):
    """Contiguous float64 arrays (what the C entry looks at first) with a NaN, an inf or the
    wrong size: the same one-line error as ever, single and batched."""
    robot, mod = ur5()
    q, qd, qdd, _ = state(robot, np.random.default_rng(6))
    with pytest.raises(error, match=words):
        mod.mass_matrix(bad(q))
    with pytest.raises(error, match=words):
        mod.inverse_dynamics(bad(q), *(np.array([x, x]) if bad(q).ndim == 2 else x for x in (qd, qdd)))
    nan_batch = np.array([q, q, q])
    nan_batch[2, 1] = np.nan
    with pytest.raises(ValueError, match="q contains NaN or inf"):
        mod.mass_matrix(nan_batch)


def test_a_zero_quaternion_is_refused_single_and_batched():
    robot, mod = floating()
    q, qd, qdd, _ = state(robot, np.random.default_rng(7))
    zero = q.copy()
    zero[3:7] = 0.0
    with pytest.raises(ValueError, match=r"q\[3:7\] is a zero quaternion"):
        mod.inverse_dynamics(zero, qd, qdd)
    with pytest.raises(ValueError, match=r"zero quaternion"):
        mod.mass_matrix(np.array([q, zero]))
    scaled = q.copy()
    scaled[3:7] *= 3.0                                   # any non-zero length: the rotation of q/|q|
    assert np.allclose(mod.mass_matrix(scaled), mod.mass_matrix(q), rtol=1e-12, atol=1e-12)


def test_out_sharing_memory_with_an_input_is_refused():
    robot, mod = ur5()
    q, qd, qdd, _ = state(robot, np.random.default_rng(8))
    with pytest.raises(ValueError, match="shares memory with an input"):
        mod.inverse_dynamics(q, qd, qdd, out=qd)
    both = np.empty(2 * robot.n)
    both[:robot.n] = q
    with pytest.raises(ValueError, match="shares memory with an input"):
        mod.inverse_dynamics(both[:robot.n], qd, qdd, out=both[robot.n - 1:2 * robot.n - 1])
    with pytest.raises(TypeError, match="writeable"):
        locked = np.empty(robot.n)
        locked.flags.writeable = False
        mod.inverse_dynamics(q, qd, qdd, out=locked)


def test_a_singular_omega_raises_single_and_batched():
    """The C function's status (Ω(0) not positive definite) goes to the Python method, which
    raises SingularError; other rows of a batch keep their values out of it."""
    robot, mod = ur5()
    stretched = np.array([0.3, -1.0, 0.0, 0.4, 0.9, 0.2])     # elbow stretched: Λ does not exist
    with pytest.raises(soagen.SingularError, match="Omega"):
        mod.os_inertia(stretched)
    rng = np.random.default_rng(9)
    Q = np.array([state(robot, rng)[0] for _ in range(3)] + [stretched])
    with pytest.raises(soagen.SingularError, match="1 of 4 rows"):
        mod.os_inertia(Q)


def test_keywords_and_extra_arguments_take_the_python_method():
    """variant=, f_tip and unknown keywords are the Python method's: same answers, same errors."""
    robot, mod = ur5()
    q, qd, qdd, tau = state(robot, np.random.default_rng(10))
    assert np.array_equal(mod.forward_dynamics(q, qd, tau, variant="auto"), mod.forward_dynamics(q, qd, tau))
    with pytest.raises(ValueError, match="variant"):
        mod.forward_dynamics(q, qd, tau, variant="FD9")
    with pytest.raises(TypeError, match="unexpected keyword"):
        mod.mass_matrix(q, nope=1)
    with pytest.raises(TypeError):
        mod.mass_matrix()
    with pytest.raises(NotImplementedError, match="inverse_dynamics_tip_force was not generated"):
        mod.inverse_dynamics(q, qd, qdd, np.arange(1.0, 7.0))      # a fourth input: the tip-force function


def test_the_methods_say_what_they_are():
    robot, mod = ur5()
    assert mod.mass_matrix.__name__ == "mass_matrix" and mod.mass_matrix.__doc__ == mod.mass_matrix.__wrapped__.__doc__
    import inspect
    assert list(inspect.signature(mod.inverse_dynamics).parameters)[:3] == ["q", "qd", "qdd"]
    assert "mass_matrix" in dir(mod)
