"""The exact Hessians of soagen.casadi (hessians=True: adj1_ and jac_adj1_ in the library): CasADi's own
``hessian`` of a weighted sum λᵀf through the externals equals (1) central differences of the weighted
Jacobian Jᵀλ assembled from jac_f's blocks, in q's nq coordinates (a quaternion's four entries, its norm
included), and (2) the module's contracted Hessian (tangent space) once mapped through Robot.integrate
(numpy: its first and second derivatives by differences); rk4_step's also CasADi's own chain rule through an
RK4 written around forward_dynamics.  IPOPT's exact Hessian then solves a small multiple-shooting problem to
the limited-memory optimum in fewer iterations."""
from __future__ import annotations

import numpy as np
import pytest

casadi = pytest.importorskip("casadi", reason="soagen.casadi needs CasADi (pip install '.[test]' brings it)")

import soagen  # noqa: E402
from tests.support.robots import random_robot, with_point_tips  # noqa: E402
from tests.test_casadi import inputs, unit  # noqa: E402

_built = {}

#: the functions with an exact Hessian, per test robot: a 1-dof chain (revolute, prismatic; the step),
#: a floating base with a spherical joint and a point tip (the quaternion terms; contact with two outputs)
CASES = {"chain": (lambda: random_robot(11, 3), ["inverse_dynamics", "forward_dynamics", "rk4_step"]),
         "floating": (lambda: with_point_tips(random_robot(31, 2, tips=1, floating_base=True, spherical_fraction=0.5)),
                      ["contact_dynamics"])}


def case(key):
    """(robot, {name: casadi.Function}, module of the contracted Hessians), built once (-O0)."""
    if key not in _built:
        make, names = CASES[key]
        robot = make()
        fns = soagen.casadi.functions(robot, names, hessians=True, optimize="O0")
        mod = soagen.build(robot, functions=[f"{n}_hessian" for n in names if n != "rk4_step"], optimize="O0")
        _built[key] = (robot, dict(zip(names, fns)), mod)
    return _built[key]


def weighted_sum(fn):
    """(input symbols xs, output expressions ys, weight symbols ws, Σ_k w_kᵀ y_k) of ``fn``, in CasADi's MX."""
    xs = [casadi.MX.sym(fn.name_in(i), fn.size1_in(i)) for i in range(fn.n_in())]
    ys = fn(*xs)
    ys = list(ys) if isinstance(ys, (list, tuple)) else [ys]
    ws = [casadi.MX.sym(f"w{k}", y.shape[0]) for k, y in enumerate(ys)]
    return xs, ys, ws, sum(casadi.dot(wk, y) for wk, y in zip(ws, ys))


def weighted(fn, rng):
    """(random weights w, a function (inputs, w) -> CasADi's Hessian of Σ_k w_kᵀ y_k along all inputs
    stacked, its gradient, and the gradient's Jacobian along w) of ``fn``."""
    xs, ys, ws, phi = weighted_sum(fn)
    H, g = casadi.hessian(phi, casadi.vertcat(*xs))
    f = casadi.Function("H", xs + ws, [H, g, casadi.jacobian(g, casadi.vertcat(*ws))])
    w = [rng.normal(size=y.shape[0]) for y in ys]
    return w, lambda *args: [np.array(v) for v in f(*args, *w)]


def weighted_jacobian(fn, w):
    """x -> Σ_k J_kᵀ w_k (all inputs stacked), J_k assembled from the blocks of jac_f (not adj1_f); its
    ``J`` attribute: x -> [J_0, J_1, ...] stacked."""
    jac = fn.jacobian()

    def jacobians(*args):
        values = fn(*args)
        values = list(values) if isinstance(values, (list, tuple)) else [values]
        blocks = jac(*args, *values)
        blocks = list(blocks) if isinstance(blocks, (list, tuple)) else [blocks]
        return np.vstack([np.hstack([np.array(blocks[k * fn.n_in() + i]) for i in range(fn.n_in())])
                          for k in range(fn.n_out())])

    def grad(*args):
        return jacobians(*args).T @ np.concatenate(w)

    grad.J = jacobians
    return grad


def stacked(args):
    return np.concatenate([np.atleast_1d(np.asarray(a, float)) for a in args])


def split(v, args):
    out, at = [], 0
    for a in args:
        size = np.atleast_1d(a).size
        out.append(v[at:at + size] if np.ndim(a) else float(v[at]))
        at += size
    return out


def differences_of(grad, args, eps=1e-6):
    """Central differences of grad(*args) (a vector) along all inputs stacked."""
    x = stacked(args)
    cols = []
    for i in range(x.size):
        p, m = x.copy(), x.copy()
        p[i] += eps
        m[i] -= eps
        cols.append((grad(*split(p, args)) - grad(*split(m, args))) / (2 * eps))
    return np.array(cols).T


def integrate_derivatives(robot, q, h=1e-4):
    """T = ∂ integrate(q, ξ)/∂ξ (nq x nv) and S[:, i, j] = ∂² integrate(q, ξ)/∂ξ_i∂ξ_j (nq x nv x nv) at ξ = 0,
    by central differences of Robot.integrate (numpy)."""
    nv = robot.nv
    Q = lambda xi: robot.integrate(q, xi, 1.0)  # noqa: E731
    E = np.eye(nv) * h
    T = np.array([(Q(E[i]) - Q(-E[i])) / (2 * h) for i in range(nv)]).T
    S = np.zeros((robot.nq, nv, nv))
    for i in range(nv):
        for j in range(nv):
            S[:, i, j] = (Q(E[i] + E[j]) - Q(E[i] - E[j]) - Q(E[j] - E[i]) + Q(-E[i] - E[j])) / (4 * h * h)
    return T, S


def to_tangent(robot, Hc, gc, T, S):
    """The coordinates' Hessian Hc ((nq + 2n) square) and gradient gc read in the tangent space along q:
    the Hessian of φ(integrate(q, ξ), ...) at ξ = 0, Tᵀ H_qq T + Σ_k (∂φ/∂q_k) S_k, and Tᵀ along the
    other inputs."""
    nq, nv = robot.nq, robot.nv
    E = np.zeros((Hc.shape[0], Hc.shape[0] - nq + nv))
    E[:nq, :nv] = T
    E[nq:, nv:] = np.eye(Hc.shape[0] - nq)
    H = E.T @ Hc @ E
    H[:nv, :nv] += np.einsum("k,kij->ij", gc[:nq], S)
    return H


@pytest.mark.parametrize("key, name", [("chain", "inverse_dynamics"), ("chain", "forward_dynamics"),
                                       ("floating", "contact_dynamics")])
def test_the_exact_hessian_is_the_second_derivative_in_q_coordinates(key, name):
    """CasADi's hessian of Σ_k w_kᵀ y_k through the library (adj1_, jac_adj1_) is symmetric and equals central
    differences of Σ_k J_kᵀ w_k (jac_f's blocks) along q's own coordinates (unnormalized quaternions) and the
    other inputs; at unit quaternions, read in the tangent space through Robot.integrate's first and second
    derivatives, it is the module's contracted Hessian (soagen's tangent-space H)."""
    robot, fns, mod = case(key)
    fn = fns[name]
    rng = np.random.default_rng(7)
    w, hess = weighted(fn, rng)
    grad = weighted_jacobian(fn, w)
    for _ in range(2):
        args = inputs(robot, name, rng)
        H, g, Jt = hess(*args)
        assert np.array_equal(H, H.T)
        assert np.allclose(g.ravel(), grad(*args), rtol=1e-12, atol=1e-12)    # adj1_ is jac_'s Jᵀw
        assert np.allclose(Jt, grad.J(*args).T, rtol=1e-12, atol=1e-12)       # jac_adj1_ along w: Jᵀ
        diff = differences_of(grad, args)
        scale = max(1.0, np.abs(diff).max())
        assert np.abs(H - diff).max() < 1e-5 * scale, np.abs(H - diff).max() / scale
        at_unit = (unit(robot, args[0]), *args[1:])
        H, g, _ = hess(*at_unit)
        T, S = integrate_derivatives(robot, at_unit[0])
        module = getattr(mod, f"{name}_hessian")(*at_unit, *w)
        tangent = to_tangent(robot, H, g.ravel(), T, S)
        err = np.abs(tangent - module).max() / max(1.0, np.abs(module).max())
        assert err < 1e-6, err
        # nothing along the base's position (its chart's second derivative is weighted by zero: hessian.py)
        assert robot.bodies[0].nq != 7 or np.abs(g.ravel()[:3]).max() < 1e-9 * np.abs(g).max()
        for h in quaternions(robot):                     # f reads q/|q|: H q̂ along each quaternion is -g there
            radial = H[:, h] @ at_unit[0][h]
            g_h = np.zeros_like(radial)
            g_h[h] = g.ravel()[h]
            assert np.abs(radial + g_h).max() < 1e-9 * max(1.0, np.abs(g_h).max()) and np.abs(g_h).max() > 1.0


@pytest.mark.parametrize("key, name, linear", [("chain", "inverse_dynamics", 2), ("chain", "forward_dynamics", 2),
                                               ("floating", "contact_dynamics", 2)])
def test_the_block_of_the_input_f_is_linear_in_is_a_structural_zero(key, name, linear):
    """τ is linear in q̈, q̈ and the contact forces in τ: CasADi's Hessian of Σ_k w_kᵀ y_k through the library has
    no entry at all along that input twice (IPOPT's KKT matrix does not carry it), and every entry of the other
    blocks, the input's rows along the others included."""
    robot, fns, _ = case(key)
    fn = fns[name]
    xs, _, _, phi = weighted_sum(fn)
    pattern = np.array(casadi.DM(casadi.hessian(phi, casadi.vertcat(*xs))[0].sparsity(), 1))
    at = np.cumsum([0] + [fn.size1_in(i) for i in range(fn.n_in())])
    own = slice(at[linear], at[linear + 1])
    assert fn.name_in(linear) in ("qdd", "tau") and not pattern[own, own].any()
    pattern[own, own] = 1
    assert pattern.all()


def quaternions(robot):
    """The slices of q holding a quaternion."""
    return [slice(part.qslice(k).stop - 4, part.qslice(k).stop) for _, part in robot.parts
            for k, b in enumerate(part.bodies) if b.nq > 1]


def test_the_rk4_steps_exact_hessian():
    """rk4_step's Hessian of wᵀ x_next along (x, τ, dt) (the second-order adjoint through the four stages, in
    C) equals central differences of its Jacobian's Jᵀw, and CasADi's own Hessian of an RK4 written in CasADi
    around forward_dynamics (whose Hessians the library also gives)."""
    robot, fns, _ = case("chain")
    step, fd = fns["rk4_step"], fns["forward_dynamics"]
    n = robot.nv
    rng = np.random.default_rng(3)
    w, hess = weighted(step, rng)
    grad = weighted_jacobian(step, w)
    x, u, dt = (casadi.MX.sym(s, k) for s, k in (("x", 2 * n), ("u", n), ("dt", 1)))
    stages = []
    for c in (0.0, 0.5, 0.5, 1.0):
        xs = x + c * dt * stages[-1] if stages else x
        stages.append(casadi.vertcat(xs[n:], fd(xs[:n], xs[n:], u)))
    x_next = x + dt / 6 * (stages[0] + 2 * stages[1] + 2 * stages[2] + stages[3])
    chained = casadi.Function("chained", [x, u, dt], [casadi.hessian(casadi.dot(w[0], x_next),
                                                                      casadi.vertcat(x, u, dt))[0]])
    for h in (0.02, 0.1):
        q, qd, _, tau = robot.random_state(rng)
        args = (np.r_[q, qd], tau, h)
        H, _, Jt = hess(*args)
        assert np.array_equal(H, H.T) and H.shape == (3 * n + 1, 3 * n + 1)
        assert np.allclose(Jt, grad.J(*args).T, rtol=1e-12, atol=1e-12)
        diff = differences_of(grad, args)
        scale = max(1.0, np.abs(diff).max())
        assert np.abs(H - diff).max() < 1e-6 * scale, np.abs(H - diff).max() / scale
        assert np.abs(H - np.array(chained(*args))).max() < 1e-9 * max(1.0, np.abs(H).max())


def test_ipopt_with_the_exact_hessian_reaches_the_same_optimum_in_fewer_iterations(capfd):
    """A 3-joint chain from rest to rest in 0.5 s, 10 intervals of rk4_step, torque limits, minimum effort:
    IPOPT converges with its exact Hessian (the library's) and with the limited-memory one, to the same
    torques and objective, in fewer iterations with the exact one.  The full tensor jac_jac_ stops in one line."""
    robot, fns, _ = case("chain")
    step = fns["rk4_step"]
    n, N, T = robot.nv, 10, 0.5
    goal = np.array([0.4, -0.1, 0.15])
    opti = {}
    for mode in ("exact", "limited-memory"):
        X, U = casadi.MX.sym("X", 2 * n, N + 1), casadi.MX.sym("U", n, N)
        g = [X[:, 0], X[:, N] - np.r_[goal, np.zeros(n)]]
        g += [X[:, k + 1] - step(X[:, k], U[:, k], T / N) for k in range(N)]
        nlp = {"x": casadi.veccat(X, U), "f": casadi.sumsqr(U) * T / N, "g": casadi.vertcat(*g)}
        options = {"ipopt.print_level": 0, "print_time": 0, "ipopt.sb": "yes", "ipopt.hessian_approximation": mode,
                   "ipopt.tol": 1e-10}
        solver = casadi.nlpsol(mode.replace("-", "_"), "ipopt", nlp, options)
        lbx = np.r_[np.full(2 * n * (N + 1), -np.inf), np.full(n * N, -20.0)]
        sol = solver(x0=np.zeros(2 * n * (N + 1) + n * N), lbx=lbx, ubx=-lbx, lbg=0, ubg=0)
        stats = solver.stats()
        assert stats["return_status"] == "Solve_Succeeded", (mode, stats["return_status"])
        opti[mode] = (float(sol["f"]), np.array(sol["x"]).ravel(), stats["iter_count"])
    (f_e, x_e, it_e), (f_l, x_l, it_l) = opti["exact"], opti["limited-memory"]
    assert abs(f_e - f_l) <= 1e-6 * abs(f_l) and np.abs(x_e - x_l).max() < 1e-4 and f_l > 1.0
    assert it_e < it_l, (it_e, it_l)
    capfd.readouterr()
    full = step.jacobian().jacobian()                     # jac_jac_: the full tensor is not exported
    with pytest.raises(RuntimeError, match="Evaluation failed"):
        full(np.zeros(2 * n), np.zeros(n), 0.1, np.zeros(2 * n), np.zeros((2 * n, 2 * n)), np.zeros((2 * n, n)),
             np.zeros(2 * n))
    assert [line for line in capfd.readouterr().err.splitlines() if "soagen" in line] == [
        "soagen: rk4_step: no full tensor of second derivatives (jac_jac_); the Hessian of a scalar (IPOPT's "
        "exact Hessian) uses adj1_ and jac_adj1_"]


def test_the_hessian_benchmarks_driver_calls_the_library_as_casadi_does(tmp_path):
    """benchmarks/casadi_hessians.py times jac_f and jac_adj1_f through benchmarks/casadi_calls.c (dlopen, the
    external API, one state a call): on a live sample (the chain's library, 60 states, 2 rounds) the driver's
    outputs on the first state are casadi.external's on the same inputs, and every round timed both."""
    import sys

    from tests.support import ROOT
    if str(ROOT / "benchmarks") not in sys.path:
        sys.path.insert(0, str(ROOT / "benchmarks"))      # the benchmark's modules import each other by name
    import casadi_hessians as ch

    robot, _, _ = case("chain")
    lib = soagen.casadi.library(robot, CASES["chain"][1], hessians=True, optimize="O0")   # the case's build, cached
    ch.compile_driver(tmp_path)
    for f in ("rk4_step", "inverse_dynamics"):
        times, worst, jac, hess = ch.timed_pair(lib, robot, f, tmp_path, np.random.default_rng(0), count=60, rounds=2)
        assert (jac, hess) == (f"jac_{lib.exported[f]}", f"jac_adj1_{lib.exported[f]}")
        assert worst <= 1e-12, worst
        assert len(times) == 2 and all(j > 0 and h > 0 for j, h in times)
