"""soagen's functions as CasADi external functions (soagen.casadi, target "casadi"): the values
are the module's, and every block of each Jacobian equals (1) central differences of the same
CasADi function in q's own coordinates (a quaternion's four entries, its norm included) and
(2) soagen's tangent-space derivatives once mapped back through d integrate(q, ξ)/dξ, computed
here by differences of Robot.integrate (numpy, not the C).  The RK4 step (rk4_step) equals RK4
of Pinocchio's forward dynamics, and its Jacobian the chain rule of Pinocchio's derivatives,
central differences and CasADi's own chain rule.  The library also builds with casadi_int = int
(acados) and, built without its Hessians, stops an optimizer asking for second derivatives in one
line (tests/test_casadi_hessian.py: the Hessians)."""
from __future__ import annotations

import ctypes
import functools
import re
import subprocess
import sys

import numpy as np
import pytest

casadi = pytest.importorskip("casadi", reason="soagen.casadi needs CasADi (pip install '.[test]' brings it)")

import soagen  # noqa: E402
from soagen import functions as F  # noqa: E402
from soagen.model import robots  # noqa: E402
from tests.support.robots import random_robot, with_point_tips  # noqa: E402

_built = {}


def case(key):
    """(robot, {name: casadi.Function}, module) of a test robot, built once (-O0)."""
    if key not in _built:
        robot, names = {
            "panda": (lambda: robots.example("panda"), ["inverse_dynamics", "forward_dynamics"]),
            "ur5": (lambda: robots.example("ur5"), ["inverse_dynamics", "forward_dynamics"]),
            # a floating base, a spherical joint, a full tip and a point tip: contact dynamics with 9 rows
            "floating": (lambda: with_point_tips(random_robot(36, 5, tree=True, tips=2, floating_base=True,
                                                              spherical_fraction=0.4), {1}),
                         ["inverse_dynamics", "forward_dynamics", "contact_dynamics"]),
            "solo12": (lambda: soagen.load_urdf(robots.path("solo12"), floating_base=True,
                                                tips=[soagen.point_tip(f) for f in ("FL_FOOT", "FR_FOOT", "HL_FOOT",
                                                                                    "HR_FOOT")]),
                       ["contact_dynamics"]),
        }[key]
        robot = robot()
        fns = soagen.casadi.functions(robot, names, optimize="O0")
        mod = soagen.build(robot, functions=[*names, *(f"{n}_derivatives" for n in names)], optimize="O0")
        _built[key] = (robot, dict(zip(names, fns)), mod)
    return _built[key]


def inputs(robot, name, rng):
    q, qd, qdd, tau = robot.random_state(rng)
    if robot.nq > robot.nv:
        q = q.copy()
        for _, part in robot.parts:              # quaternions of any length: CasADi's q is not normalized
            for k, b in enumerate(part.bodies):
                if b.nq > 1:
                    q[part.qslice(k).stop - 4:part.qslice(k).stop] *= rng.uniform(0.5, 2.0)
    return (q, qd, qdd) if name == "inverse_dynamics" else (q, qd, tau)


def tangent_to_coordinates(robot, q, eps=1e-7):
    """d integrate(q, ξ)/dξ at ξ = 0 (nq x nv), by central differences of Robot.integrate (numpy),
    for the normalized q (integrate keeps q's rotation, not its length)."""
    cols = []
    for i in range(robot.nv):
        e = np.zeros(robot.nv)
        e[i] = eps
        cols.append((robot.integrate(q, e, 1.0) - robot.integrate(q, -e, 1.0)) / (2 * eps))
    return np.array(cols).T


def central(fn, args, index, k, eps=1e-6):
    """Central differences of output ``k`` of a casadi.Function along input ``index``."""
    x = np.array(args[index], dtype=float)
    cols = []
    for i in range(x.size):
        plus, minus = [np.array(a, dtype=float) for a in args], [np.array(a, dtype=float) for a in args]
        plus[index][i] += eps
        minus[index][i] -= eps
        cols.append((np.array(fn(*plus)[k] if fn.n_out() > 1 else fn(*plus)).ravel()
                     - np.array(fn(*minus)[k] if fn.n_out() > 1 else fn(*minus)).ravel()) / (2 * eps))
    return np.array(cols).T


def unit(robot, q):
    q = q.copy()
    for _, part in robot.parts:
        for k, b in enumerate(part.bodies):
            if b.nq > 1:
                s = part.qslice(k)
                q[s.stop - 4:s.stop] /= np.linalg.norm(q[s.stop - 4:s.stop])
    return q


@pytest.mark.parametrize("key, name", [("panda", "inverse_dynamics"), ("panda", "forward_dynamics"),
                                       ("ur5", "inverse_dynamics"), ("ur5", "forward_dynamics"),
                                       ("floating", "inverse_dynamics"), ("floating", "forward_dynamics"),
                                       ("floating", "contact_dynamics"), ("solo12", "contact_dynamics")])
def test_every_jacobian_block_is_the_derivative_in_q_coordinates(key, name):
    robot, fns, mod = case(key)
    fn = fns[name]
    jac = fn.jacobian()
    rng = np.random.default_rng(hash(key + name) % 2**32)
    for _ in range(2):
        args = inputs(robot, name, rng)
        values = fn(*args)
        values = values if isinstance(values, (list, tuple)) else [values]
        module = getattr(mod, name)(*args)
        module = module if isinstance(module, tuple) else (module,)
        for v, m in zip(values, module):                       # the values: the module's
            assert np.allclose(np.array(v).ravel(), m, rtol=1e-12, atol=1e-12)
        blocks = jac(*args, *values)
        blocks = blocks if isinstance(blocks, (list, tuple)) else [blocks]
        # at the normalized q (integrate moves along unit quaternions)
        at_unit = (unit(robot, args[0]), *args[1:])
        derivs = getattr(mod, f"{name}_derivatives")(*at_unit)
        along_q = jac(*at_unit, *fn(*at_unit)) if fn.n_out() > 1 else jac(*at_unit, fn(*at_unit))
        along_q = along_q if isinstance(along_q, (list, tuple)) else [along_q]
        T = tangent_to_coordinates(robot, at_unit[0])
        for k in range(fn.n_out()):
            for i in range(fn.n_in()):
                block = np.array(blocks[k * fn.n_in() + i])
                fd = central(fn, args, i, k)
                scale = max(1.0, np.abs(fd).max())
                assert block.shape == fd.shape and np.abs(block - fd).max() < 1e-5 * scale, (name, k, i)
                if i == 0:                                     # along q: soagen's tangent derivative
                    tangent = tangent_block(name, derivs, k)
                    mapped = np.array(along_q[k * fn.n_in()]) @ T
                    assert np.abs(mapped - tangent).max() < 1e-6 * max(1.0, np.abs(tangent).max()), (name, k)


def tangent_block(name, derivs, k):
    """soagen's derivative along q (tangent space) of output k of ``name``."""
    if name == "inverse_dynamics":
        return derivs[0]
    if name == "forward_dynamics":
        return derivs[1]
    return derivs[2] if k == 0 else derivs[5]                 # contact: dqdd_dq, df_dq


RK4_C, RK4_B = (0.0, 0.5, 0.5, 1.0), (1.0, 2.0, 2.0, 1.0)


def dense_rk4(derivatives, x, tau, dt):
    """x⁺ of one RK4 step of (q̇, q̈) and its Jacobian along z = (x, τ, dt), each stage's Jacobian
    [[0, I], [∂q̈/∂q, ∂q̈/∂q̇]] and M⁻¹ from ``derivatives(q, qd, tau) -> (qdd, dqdd_dq, dqdd_dqd,
    Minv)``, chained here as dense matrices (1-dof joints)."""
    n = x.size // 2
    nz = 3 * n + 1
    E = np.eye(2 * n, nz)                                   # d x/dz
    k, dk = np.zeros(2 * n), np.zeros((2 * n, nz))
    x_next, J = x.copy(), E.copy()
    for c, b in zip(RK4_C, RK4_B):
        xs = x + c * dt * k
        dxs = E + c * dt * dk
        dxs[:, -1] += c * k
        qdd, dq, dv, Minv = derivatives(xs[:n], xs[n:], tau)
        k = np.r_[xs[n:], qdd]
        dk = np.block([[np.zeros((n, n)), np.eye(n)], [dq, dv]]) @ dxs
        dk[n:, 2 * n:3 * n] += Minv
        x_next += dt / 6 * b * k
        J += dt / 6 * b * dk
        J[:, -1] += b / 6 * k
    return x_next, J


def pinocchio_derivatives(oracle):
    """Pinocchio's aba and computeABADerivatives as (q, qd, tau) -> (qdd, dqdd_dq, dqdd_dqd, Minv)."""
    import pinocchio as pin

    def derivatives(q, qd, tau):
        dq, dv, Minv = (np.array(a) for a in pin.computeABADerivatives(oracle.model, oracle.data, q, qd, tau))
        qdd = np.array(pin.aba(oracle.model, oracle.data, q, qd, tau))
        return qdd, dq, dv, np.triu(Minv) + np.triu(Minv, 1).T   # M⁻¹'s upper triangle is what Pinocchio fills

    return derivatives


def step_case(key):
    """(robot, rk4_step, forward_dynamics) of a 1-dof robot, built once (-O0)."""
    if f"step {key}" not in _built:
        robot = {"panda": lambda: robots.example("panda"), "ur5": lambda: robots.example("ur5"),
                 "random": lambda: random_robot(11, 5, tree=True)}[key]()   # revolute and prismatic, branching
        _built[f"step {key}"] = (robot, *soagen.casadi.functions(robot, ["rk4_step", "forward_dynamics"],
                                                                 optimize="O0"))
    return _built[f"step {key}"]


@pytest.mark.parametrize("key", ["panda", "ur5", "random"])
def test_rk4_step_is_rk4_of_the_dynamics_with_its_exact_jacobian(key):
    """rk4_step (C: four forward dynamics and the chain rule through the stages) equals RK4 of
    Pinocchio's aba and RK4 of soagen's numpy reference; its Jacobian equals (1) the chain rule of
    Pinocchio's derivatives and of the reference's, (2) central differences of the step itself, along
    x, τ and dt, and (3) CasADi's own chain rule through an RK4 written in CasADi around the
    forward_dynamics function."""
    from tests.support.oracle import Oracle

    robot, step, fd = step_case(key)
    n = robot.n
    routes = {"pinocchio": pinocchio_derivatives(Oracle(robot)),
              "reference": lambda q, qd, tau: soagen.reference.forward_dynamics_derivatives(robot, q, qd, tau)}
    x, u, dt = (casadi.MX.sym(s, m) for s, m in (("x", 2 * n), ("u", n), ("dt", 1)))
    stages = []
    for c in RK4_C:
        xs = x + c * dt * stages[-1] if stages else x
        stages.append(casadi.vertcat(xs[n:], fd(xs[:n], xs[n:], u)))
    mx = x + dt / 6 * sum(b * s for b, s in zip(RK4_B, stages))
    chained = casadi.Function("chained", [x, u, dt], [casadi.jacobian(mx, casadi.vertcat(x, u, dt))])
    jac = step.jacobian()
    out = casadi.MX.sym("out", 2 * n)
    without_dt = casadi.Function("without_dt", [x, u, dt, out], jac(x, u, dt, out)[:2])   # the dt block not asked for
    rng = np.random.default_rng(5)
    for h in (0.02, 0.1):
        q, qd, _, tau = robot.random_state(rng)
        args = (np.r_[q, qd], tau, np.array([h]))
        got = np.array(step(*args)).ravel()
        blocks = jac(*args, got)
        J = np.hstack([np.array(b) for b in blocks])
        assert np.array_equal(np.hstack([np.array(b) for b in without_dt(*args, got)]), J[:, :-1])
        for name, derivatives in routes.items():
            want, want_J = dense_rk4(derivatives, *args[:2], h)
            assert np.abs(got - want).max() < 1e-9 * max(1.0, np.abs(want).max()), name
            assert np.abs(J - want_J).max() < 1e-8 * np.abs(want_J).max(), name
        assert np.abs(J - np.array(chained(*args))).max() < 1e-9 * np.abs(J).max()
        for i, block in enumerate(blocks):
            diff = central(step, args, i, 0)
            assert np.abs(np.array(block) - diff).max() < 1e-5 * max(1.0, np.abs(diff).max()), i


def test_rk4_step_is_refused_on_a_quaternion():
    """A floating base or a spherical joint has q̇ ≠ v: the step is refused in one line, before any build."""
    robot = random_robot(36, 5, tree=True, tips=1, floating_base=True)
    with pytest.raises(soagen.OptionsError, match=r"^rk4_step steps x = \(q, qd\) of 1-dof joints.*nq = 12, nv = 11"):
        soagen.casadi.functions(robot, ["rk4_step"])


def test_the_library_builds_for_acados_with_int(tmp_path):
    """casadi_int = int (acados): the same library compiled with -Dcasadi_int=int reports its
    sizes and sparsities as ints and computes the same values."""
    robot, fns, mod = case("panda")
    out = tmp_path / "gen"
    res = subprocess.run([sys.executable, "-m", "soagen", "generate", "--example", "panda", "--target", "casadi",
                          "--function", "forward_dynamics", "--function", "forward_dynamics_derivatives",
                          "--out", str(out), "--quiet", "--optimize", "O0"], capture_output=True, text=True,
                         timeout=600)
    assert res.returncode == 0, res.stderr
    lib = tmp_path / "libpanda_int.so"
    subprocess.run(["cc", "-shared", "-fPIC", "-O1", "-std=c99", "-Dcasadi_int=int", "-I", str(out),
                    str(out / "panda_casadi.c"), str(out / "panda.c"), "-o", str(lib), "-lm"], check=True)
    c = ctypes.CDLL(str(lib))
    name = "soagen_panda_forward_dynamics"
    for fn in (name, f"jac_{name}"):
        getattr(c, f"{fn}_n_in").restype = ctypes.c_int
        getattr(c, f"{fn}_sparsity_in").restype = ctypes.POINTER(ctypes.c_int)
        getattr(c, f"{fn}_sparsity_in").argtypes = [ctypes.c_int]
    assert getattr(c, f"{name}_n_in")() == 3 and getattr(c, f"jac_{name}_n_in")() == 4
    assert list(getattr(c, f"{name}_sparsity_in")(0)[:3]) == [7, 1, 1]
    step = "soagen_panda_rk4_step"                          # beside forward_dynamics and its derivatives
    for fn in (step, f"jac_{step}"):
        getattr(c, f"{fn}_sparsity_out").restype = ctypes.POINTER(ctypes.c_int)
        getattr(c, f"{fn}_sparsity_out").argtypes = [ctypes.c_int]
    assert list(getattr(c, f"{step}_sparsity_out")(0)[:3]) == [14, 1, 1]
    assert list(getattr(c, f"jac_{step}_sparsity_out")(1)[:3]) == [14, 7, 1]
    q, qd, tau = np.linspace(-1, 1, 7), np.linspace(0.5, -0.5, 7), np.linspace(2, -1, 7)
    qdd = np.zeros(7)
    arg = (ctypes.c_void_p * 3)(*(a.ctypes.data for a in (q, qd, tau)))
    res_ = (ctypes.c_void_p * 1)(qdd.ctypes.data)
    w = np.zeros(1000)
    call = getattr(c, name)
    call.argtypes = [ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_int]
    assert call(arg, res_, None, w.ctypes.data, 0) == 0
    assert np.allclose(qdd, mod.forward_dynamics(q, qd, tau), rtol=1e-12, atol=1e-12)


def test_second_derivatives_stop_the_optimizer_in_one_line(capfd):
    """IPOPT with its exact Hessian asks for second derivatives, which a library built without
    hessians=True does not have: the solve stops, unsuccessful, with one line naming the ways out; with
    the limited-memory Hessian the same problem solves."""
    robot, fns, _ = case("panda")
    fd = fns["forward_dynamics"]
    tau = casadi.MX.sym("tau", robot.n)
    q0, qd0 = np.zeros(robot.n), np.zeros(robot.n)
    nlp = {"x": tau, "f": casadi.sumsqr(fd(q0, qd0, tau) - 1.0)}
    quiet = {"ipopt.print_level": 0, "print_time": 0, "ipopt.sb": "yes"}
    exact = casadi.nlpsol("exact", "ipopt", nlp, quiet)
    exact(x0=np.zeros(robot.n))
    assert not exact.stats()["success"]
    err = capfd.readouterr().err
    line = ("soagen: forward_dynamics has no second derivatives in this library: build it with hessians=True "
            "(soagen.casadi.functions) or use IPOPT's hessian_approximation='limited-memory'")
    assert line in err.splitlines()
    from tests.support import ROOT
    assert f"`{line}`" in " ".join((ROOT / "docs" / "guide" / "casadi.md").read_text().split())   # the guide quotes it
    lbfgs = casadi.nlpsol("lbfgs", "ipopt", nlp, {**quiet, "ipopt.hessian_approximation": "limited-memory"})
    sol = lbfgs(x0=np.zeros(robot.n))
    assert lbfgs.stats()["success"] and float(sol["f"]) < 1e-10


def test_a_function_without_derivatives_says_so():
    robot, _, _ = case("panda")
    M, = soagen.casadi.functions(robot, ["mass_matrix"], optimize="O0")
    assert np.allclose(np.array(M(np.zeros(7))), soagen.reference.mass_matrix(robot, np.zeros(7)), rtol=1e-12)
    with pytest.raises(RuntimeError, match="Derivatives cannot be calculated for soagen_panda_mass_matrix"):
        M.jacobian()


def test_the_trajectory_example_solves():
    """examples/trajopt_panda.py (built -O0 here): IPOPT converges, the torques respect the limits,
    and played on the Python module with the same RK4 steps they reach the goal at rest."""
    import importlib

    from tests.support import ROOT

    sys.path.insert(0, str(ROOT / "examples"))
    example = importlib.import_module("trajopt_panda")
    r = example.solve(optimize="O0")
    assert r["stats"]["success"] and r["objective"] > 1.0
    assert np.all(np.abs(r["U"]) <= example.TAU_MAX[:, None] + 1e-6)
    X = example.replay(r["robot"], r["U"])
    assert np.abs(X[:7, -1] - example.Q_GOAL).max() < 1e-6 and np.abs(X[7:, -1]).max() < 1e-5
    assert np.abs(X - r["X"]).max() < 1e-6                     # the NLP's states are the module's


def matrix_case():
    """(robot, {name: casadi.Function}, module, library) of a 6-joint tree, two 3-joint arms with a point
    tip each (Λ(0) 6 x 6 exists): the library of every catalogue function with a matrix output, variants included, and
    contact_dynamics (its Jacobian); the module of forward_kinematics and jacobian; built once (-O0)."""
    if "matrices" not in _built:
        robot = with_point_tips(random_robot(21, 6, tree=True, tips=2))   # two 3-joint arms: Λ(0) 6 x 6 exists
        names = [s.name for s in F.CATALOGUE if any(len(o.shape) > 1 for o in s.outputs)]
        lib = soagen.casadi.library(robot, [*names, "contact_dynamics"], optimize="O0")
        fns = {name: casadi.external(lib.exported[name], str(lib.path)) for name in [*names, "contact_dynamics"]}
        mod = soagen.build(robot, functions=["forward_kinematics", "jacobian"], optimize="O0")
        _built["matrices"] = (robot, fns, mod, lib)
    return _built["matrices"]


def catalogue_inputs(robot, spec, rng):
    """Random inputs of a catalogue function (soagen.check.random_inputs): vectors, dt and e as numbers."""
    from soagen.check import random_inputs

    pool = random_inputs(robot, rng)
    return [float(pool[name][0]) if name in ("dt", "e") else pool[name] for name in spec.inputs]


def test_every_matrix_output_is_the_catalogues_matrix_indexed_casadis_way():
    """Every catalogue function with a matrix output: each output is declared with its matrix shape
    ((m, 4, 4) poses as the 4m x 4 stack of the tips' 4x4 T) and holds, where CasADi reads them
    (``V[i, j]``, ``V @ x``), the values of the catalogue's array of that shape: the module's for
    forward_kinematics and jacobian (the same C, so to the last bit), soagen's numpy reference for
    every function (one recording of the 34 functions, not two).  The tips' poses also CasADi's
    ways: the blocks ``T[4k:4k+4, :]`` and ``casadi.vertsplit(T, 4)``, ``T @ p`` of a homogeneous p."""
    robot, fns, mod, _ = matrix_case()
    walked = [name for name, fn in fns.items() if any(len(o.shape) > 1 for o in F.BY_NAME[name].outputs)]
    assert len(walked) == len(fns) - 1 >= 30 and "forward_kinematics" in walked and len(robot.tips) == 2
    rng = np.random.default_rng(56)
    for name in walked:
        spec = F.BY_NAME[name]
        args = catalogue_inputs(robot, spec, rng)
        got = fns[name](*args)
        got = list(got) if isinstance(got, (list, tuple)) else [got]
        want = spec.reference_function()(robot, *args)
        want = list(want) if isinstance(want, (list, tuple)) else [want]
        exact = getattr(mod, name)(*args) if name in ("forward_kinematics", "jacobian") else None
        assert len(got) == len(want) == len(spec.outputs), name
        for o, V, W in zip(spec.outputs, got, want):
            W = np.asarray(W)
            assert W.shape == tuple(F.size((d,), F.sizes(robot)) for d in o.shape), (name, o.name)
            matrix = W.reshape(-1, W.shape[-1]) if W.ndim > 1 else W[:, None]
            tol = 1e-9 * max(1.0, np.abs(matrix).max())
            assert V.shape == matrix.shape, (name, o.name, V.shape, W.shape)
            rows, cols = matrix.shape
            for i, j in {(0, cols - 1), (rows - 1, 0), (rows // 2, (cols - 1) // 3), (rows - 1, cols - 1)}:
                assert abs(float(V[i, j]) - matrix[i, j]) <= tol, (name, o.name, i, j)
            x = rng.normal(size=cols)
            assert np.abs(np.array(V @ x).ravel() - matrix @ x).max() <= tol * cols, (name, o.name)
            if exact is not None:
                assert np.array_equal(np.array(V), np.asarray(exact).reshape(rows, cols)), name
    q = robot.random_configuration(rng)
    T, Tm = fns["forward_kinematics"](q), mod.forward_kinematics(q)
    p = np.array([0.1, -0.2, 0.3, 1.0])                        # a homogeneous point in the tip's frame
    for k, block in enumerate(casadi.vertsplit(T, 4)):
        assert np.array_equal(np.array(block), Tm[k])
        assert np.allclose(np.array(T[4 * k:4 * k + 4, :] @ p).ravel(), Tm[k] @ p, rtol=0, atol=1e-12)
        assert np.array_equal(np.array(T[4 * k + 3, :]).ravel(), [0, 0, 0, 1])


def fd_poses(lib, robot):
    """forward_kinematics with CasADi's own finite differences (``enable_fd``) and an MX function of
    CasADi's Jacobian of each tip's position T[4k:4k+3, 3] and of vec(R), R = T[4k:4k+3, 0:3]
    (column-major, CasADi's vec), along q."""
    fk = casadi.external(lib.exported["forward_kinematics"], str(lib.path), {"enable_fd": True})
    q = casadi.MX.sym("q", robot.nq)
    T = fk(q)
    outs = []
    for k in range(len(robot.tips)):
        outs += [casadi.jacobian(T[4 * k:4 * k + 3, 3], q), casadi.jacobian(casadi.vec(T[4 * k:4 * k + 3, 0:3]), q)]
    return casadi.Function("fd_poses", [q], [T, *outs])


@pytest.mark.parametrize("key", ["matrices", "panda"])
def test_casadis_finite_differences_of_the_poses_are_the_jacobian(key):
    """T is the reference's stack of the tips' poses read CasADi's way (``casadi.reshape``), and CasADi's
    derivatives of it (its finite differences through an MX function) follow the declared matrix:
    ∂p/∂q of each tip's position T[4k:4k+3, 3] is the linear rows of J (the module's; the Panda's:
    the reference's), and along q_j of vec(R) (column-major) dR/dq_j Rᵀ = [ω_j]× with ω_j the
    angular column of J (full tips)."""
    if key == "panda":
        robot = robots.example("panda")
        lib = soagen.casadi.library(robot, ["forward_kinematics"], optimize="O0")
        jacobian = functools.partial(soagen.reference.jacobian, robot)
    else:
        robot, _, mod, lib = matrix_case()
        jacobian = mod.jacobian
    fn = fd_poses(lib, robot)
    rng = np.random.default_rng(6)
    for _ in range(2):
        q = robot.random_configuration(rng)
        T, *blocks = fn(q)
        T = np.array(casadi.reshape(T, 4 * len(robot.tips), 4))    # CasADi's reshape (column-major): the same T
        assert np.allclose(T, soagen.reference.forward_kinematics(robot, q).reshape(-1, 4), rtol=0, atol=1e-12)
        blocks = [np.array(b) for b in blocks]
        J = jacobian(q)
        row = 0
        for k, tip in enumerate(robot.tips):
            dp, dR = blocks[2 * k], blocks[2 * k + 1]
            linear = J[row + (0 if tip.point else 3):row + (3 if tip.point else 6)]
            assert np.abs(dp - linear).max() < 1e-6 * np.abs(linear).max(), (key, k)
            if not tip.point:
                R = T[4 * k:4 * k + 3, 0:3]
                for j in range(robot.nv):
                    W = dR[:, j].reshape(3, 3, order="F") @ R.T          # [ω_j]×
                    omega = np.array([W[2, 1], W[0, 2], W[1, 0]])
                    assert np.abs(W + W.T).max() < 1e-6 and np.abs(omega - J[row:row + 3, j]).max() < 1e-6, (k, j)
            row += 3 if tip.point else 6
        assert row == J.shape[0] and (key == "matrices" or not robot.tips[0].point)


#: the line's end after "soagen: FUNCTION: Lambda(0) singular " (the guide quotes the whole line)
SINGULAR = ("(status 1) at this input: Omega(0) = J M^-1 J^T is not positive definite (a singular or "
            "redundant-axis configuration, or tips that the joints behind them cannot move)")


def test_a_singular_lambda_says_so_in_one_line_and_the_evaluation_fails(capfd):
    """UR5 with the elbow stretched (q3 = 0): Ω(0) is singular, the C function returns status 1, and
    CasADi's call prints one soagen line naming the function (or the Jacobian and the derivative
    function it called) and the cause, then fails as it must; away from it, no line and the values."""
    robot = robots.example("ur5")
    os_inertia, contact = soagen.casadi.functions(robot, ["os_inertia", "contact_dynamics"], optimize="O0")
    stretched, qd, tau = np.array([0.3, -1.0, 0.0, 0.4, 0.9, 0.2]), np.ones(6), np.linspace(-1, 1, 6)
    capfd.readouterr()
    for call, head in ((lambda: os_inertia(stretched), "os_inertia"),
                       (lambda: contact(stretched, qd, tau), "contact_dynamics"),
                       (lambda: contact.jacobian()(stretched, qd, tau, np.zeros(6), np.zeros(6)),
                        "the Jacobian of contact_dynamics (contact_dynamics_derivatives)")):
        with pytest.raises(RuntimeError, match="Evaluation failed"):
            call()
        lines = [line for line in capfd.readouterr().err.splitlines() if "soagen" in line]
        assert lines == [f"soagen: {head}: Lambda(0) singular {SINGULAR}"], lines
    q = stretched.copy()
    q[2] = 0.3
    assert np.allclose(np.array(os_inertia(q)), soagen.reference.os_inertia(robot, q), rtol=1e-9, atol=1e-9)
    assert np.array(contact(q, qd, tau)[1]).shape == (6, 1) and "soagen" not in capfd.readouterr().err


def test_the_guide_runs_as_written_and_quotes_the_library(monkeypatch, capsys):
    """docs/guide/casadi.md: its Python blocks run in order in one namespace (built -O0 here: the
    libraries the tests above build, and the Panda's forward_kinematics and jacobian), each
    ``print(x)  # text`` prints the text, its table of shapes is the library's, and it quotes the
    singular Λ(0) line as the library prints it."""
    from soagen.targets.casadi.emit import layout_table
    from tests.support import ROOT

    real = soagen.casadi.library
    monkeypatch.setattr(soagen.casadi, "library",
                        lambda robot, names, **o: real(robot, names, **{"optimize": "O0", **o}))
    text = (ROOT / "docs" / "guide" / "casadi.md").read_text()
    blocks = re.findall(r"^```python\n(.*?)^```", text, re.S | re.M)
    assert len(blocks) >= 3
    scope = {"__name__": "__guide__"}
    for i, code in enumerate(blocks):
        exec(compile(code, f"casadi.md (Python block {i + 1})", "exec"), scope)
    quoted = [line.split("# ", 1)[1].strip() for code in blocks for line in code.splitlines()
              if line.startswith("print(")]
    assert capsys.readouterr().out.splitlines() == quoted and len(quoted) >= 3
    assert layout_table() in text, "paste soagen.targets.casadi.emit.layout_table() into docs/guide/casadi.md"
    assert f"`soagen: os_inertia: Lambda(0) singular {SINGULAR}`" in " ".join(text.split())
