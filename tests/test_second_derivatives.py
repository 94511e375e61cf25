"""Second derivatives (issue #57, soagen.passes.second_derivatives): the generated tensors and
contracted Hessians = central differences of the GENERATED first derivatives, along q in the
tangent space (``Robot.integrate``), q̇ and the third input; on a floating tree with a spherical and
a prismatic joint, on the Panda and (contact) on a floating tree with two point feet.

Every comparison is relative to the largest entry of the output, which is checked to be far from
0, so an all-zero output fails; the Hessians are checked to be exactly symmetric, and the
floating tree's q–q tensor NOT symmetric where the iterated derivative is not (within the
spherical joint and the base's rotation), so a symmetrized tensor fails too.
"""
from __future__ import annotations

import numpy as np
import pytest

import soagen
from soagen.check import check_module
from tests.support.builds import built
from tests.support.robots import random_robot, with_point_tips

# the first derivatives by one algorithm each (a family function would record every candidate)
FIRST = ["mass_matrix", "inverse_dynamics_derivatives_analytic", "forward_dynamics_derivatives_via_analytic_id"]
SECOND = ["inverse_dynamics_second_derivatives", "inverse_dynamics_hessian", "forward_dynamics_hessian"]
H = 1e-6          # central differences: errors ~1e-9 of the output's size
RTOL = 1e-6


def mixed_tree():
    """A floating base, a spherical and a prismatic joint (nv = 10): tangent directions of every kind."""
    return random_robot(5, 2, tree=True, prismatic_fraction=0.5, spherical_fraction=0.5, floating_base=True)


CASES = {"mixed_tree": mixed_tree, "panda": lambda: soagen.robots.example("panda")}


def two_feet():
    """A floating tree of 4 revolute joints with two point feet (6 rows of 10 velocities)."""
    return with_point_tips(random_robot(64, 4, tree=True, tips=2, floating_base=True))


def differences(robot, first, q, qd, x):
    """Central differences of ``first(q, qd, x)`` (a list of arrays) along the n tangent directions of
    q (``robot.integrate``), then q̇, then x: per array, its shape + (3n,)."""
    n = robot.nv
    columns = []
    for block in range(3):
        for k in range(n):
            e = np.zeros(n)
            e[k] = H
            if block == 0:
                plus, minus = first(robot.integrate(q, e, 1.0), qd, x), first(robot.integrate(q, -e, 1.0), qd, x)
            elif block == 1:
                plus, minus = first(q, qd + e, x), first(q, qd - e, x)
            else:
                plus, minus = first(q, qd, x + e), first(q, qd, x - e)
            columns.append([(np.asarray(a) - np.asarray(b)) / (2 * H) for a, b in zip(plus, minus)])
    return [np.stack([c[i] for c in columns], axis=-1) for i in range(len(columns[0]))]


def assert_near(got, want, what):
    """|got − want| ≤ RTOL · max |want|, with max |want| far from 0."""
    scale = np.abs(want).max()
    assert scale > 1e-2, (what, scale)
    err = np.abs(np.asarray(got) - want).max() / scale
    assert err < RTOL, f"{what}: relative error {err:.2e}"


def state(robot, seed):
    rng = np.random.default_rng(seed)
    q, qd, qdd, tau = robot.random_state(rng)
    return q, qd, qdd, tau, rng.normal(size=robot.nv)


@pytest.mark.parametrize("case", sorted(CASES))
def test_inverse_dynamics_tensors_are_differences_of_the_first_derivatives(case):
    """[i, j, k]: output i, first direction j, second direction k (Pinocchio's layout): the tangents
    along q_k, q̇_k of ∂τ/∂q (column j, at the displaced point), ∂τ/∂q̇ and M."""
    robot, mod = built(f"second_{case}", CASES[case], functions=FIRST + SECOND)
    q, qd, qdd, _, _ = state(robot, 1)
    n = robot.nv
    d2q, d2v, d2qv, dM = mod.inverse_dynamics_second_derivatives(q, qd, qdd)
    assert d2q.shape == (n, n, n)
    dtau_dq, dtau_dv, M = differences(
        robot, lambda q_, v, a: (*mod.inverse_dynamics_derivatives(q_, v, a, variant="analytic"), mod.mass_matrix(q_)),
        q, qd, qdd)
    assert_near(d2q, dtau_dq[..., :n], "d2tau_dq2")
    assert_near(d2qv, dtau_dq[..., n:2 * n], "d2tau_dqdqd")
    assert_near(d2v, dtau_dv[..., n:2 * n], "d2tau_dqd2")
    assert_near(dM, M[..., :n], "dM_dq")
    if case == "mixed_tree":     # the iterated derivative: not symmetric within the base's rotation
        assert np.abs(d2q - d2q.transpose(0, 2, 1)).max() > 1e-3 * np.abs(d2q).max()


@pytest.mark.parametrize("case", sorted(CASES))
def test_contracted_hessians_are_differences_of_the_gradients(case):
    """H of λᵀτ along (δq, q̇, q̈) and of λᵀq̈ along (δq, q̇, τ): the symmetric part of the differences of
    the gradients (∂τ/∂x)ᵀλ and (∂q̈/∂x)ᵀλ of the generated first derivatives; exactly symmetric."""
    robot, mod = built(f"second_{case}", CASES[case], functions=FIRST + SECOND)
    q, qd, qdd, tau, lam = state(robot, 2)

    def id_gradient(q_, v, a):
        dq, dv = mod.inverse_dynamics_derivatives(q_, v, a, variant="analytic")
        return dq.T @ lam, dv.T @ lam, mod.mass_matrix(q_) @ lam

    def fd_gradient(q_, v, t):
        _, dq, dv, Minv = mod.forward_dynamics_derivatives(q_, v, t, variant="via_analytic_id")
        return dq.T @ lam, dv.T @ lam, Minv.T @ lam

    for name, gradient, x in (("inverse_dynamics_hessian", id_gradient, qdd),
                              ("forward_dynamics_hessian", fd_gradient, tau)):
        got = getattr(mod, name)(q, qd, x, lam)
        want = np.concatenate(differences(robot, gradient, q, qd, x), axis=0)
        assert np.array_equal(got, got.T), name
        assert_near(got, (want + want.T) / 2, name)


def test_inverse_dynamics_hessian_contracts_the_tensors():
    """The two generated routes agree: H of λᵀτ from Σᵢ λᵢ of the tensors (q–q block symmetrized, q–q̈
    block ∂(Mλ)/∂q), on the floating tree."""
    robot, mod = built("second_mixed_tree", mixed_tree, functions=FIRST + SECOND)
    q, qd, qdd, _, lam = state(robot, 3)
    n = robot.nv
    d2q, d2v, d2qv, dM = (np.einsum("i,ijk->jk", lam, t) for t in mod.inverse_dynamics_second_derivatives(q, qd, qdd))
    want = np.zeros((3 * n, 3 * n))
    want[:n, :n], want[n:2 * n, n:2 * n] = (d2q + d2q.T) / 2, d2v
    want[:n, n:2 * n], want[:n, 2 * n:] = d2qv, dM.T
    want = np.triu(want) + np.triu(want, 1).T
    assert_near(mod.inverse_dynamics_hessian(q, qd, qdd, lam), want, "inverse_dynamics_hessian")


def test_contact_hessian_is_differences_of_the_gradient():
    """H of λᵀq̈ + λ_fᵀf of the contact dynamics along (δq, q̇, τ), two point feet on a floating base:
    the symmetric part of the differences of the generated contact derivatives' gradient."""
    robot, mod = built("second_two_feet", two_feet,
                       functions=["contact_dynamics_derivatives", "contact_dynamics_hessian"])
    q, qd, _, tau, lam = state(robot, 4)
    lam_f = np.random.default_rng(5).normal(size=robot.tip_rows)

    def gradient(q_, v, t):
        out = mod.contact_dynamics_derivatives(q_, v, t)
        return [out[2 + i].T @ lam + out[5 + i].T @ lam_f for i in range(3)]

    got = mod.contact_dynamics_hessian(q, qd, tau, lam, lam_f)
    want = np.concatenate(differences(robot, gradient, q, qd, tau), axis=0)
    assert np.array_equal(got, got.T)
    assert_near(got, (want + want.T) / 2, "contact_dynamics_hessian")


@pytest.mark.parametrize("case", [*sorted(CASES), "two_feet"])
def test_generated_equals_reference(case):
    """The third route: ``soagen check``'s comparison with the numpy reference
    (:mod:`soagen.reference.second_derivatives`, complex steps of its own tangent Newton–Euler passes,
    itself held to Pinocchio in tests/test_second_derivatives_routes.py) on a few states, every output."""
    if case == "two_feet":
        robot, mod = built("second_two_feet", two_feet,
                           functions=["contact_dynamics_derivatives", "contact_dynamics_hessian"])
        names = ["contact_dynamics_hessian"]
    else:
        robot, mod = built(f"second_{case}", CASES[case], functions=FIRST + SECOND)
        names = SECOND
    results = check_module(robot, mod, samples=3, seed=7)
    for name in names:
        assert results[name].compared == 3 and results[name].ok, (name, results[name])


def deep_frame_chain():
    """A fixed chain of 6 joints whose tensors are worked in its second body's frame (a prismatic joint:
    its offset moves with q): the poses above that body go up the joints' inverses.  Actuators with
    friction (viscous, Coulomb) on joints 1-4: its curvature is on ∂²τ/∂q̇²'s diagonal."""
    robot = random_robot(5, 6, prismatic_fraction=0.3)
    joints = [b.joint for b in robot.bodies]
    return robot.with_actuators({joints[0]: 0.1}, {joints[i]: (0.3 * i, 0.8) for i in (1, 2, 3, 4)})


def test_tensors_worked_in_a_deeper_body_frame_equal_the_reference():
    """soagen.passes.analytic_derivatives.body_frames, for a frame below the root, and ∂²τ/∂q̇² by
    Christoffel's symbols with the actuators' friction: the generated tensors = the numpy reference on a
    few states (the Panda's second body sits where its first joint is, so the Panda alone would miss an
    offset of the wrong sign; the Panda has no actuators)."""
    from soagen.passes.second_derivatives import frame_bodies

    robot, mod = built("second_deep_frame", deep_frame_chain, functions=["inverse_dynamics_second_derivatives"])
    assert frame_bodies(robot) == {0: 1}
    assert [robot.bodies[k].joint_type for k in (0, 1)] == ["revolute", "prismatic"]
    result = check_module(robot, mod, samples=3, seed=7)["inverse_dynamics_second_derivatives"]
    assert result.compared == 3 and result.ok, result


@pytest.mark.parametrize("case", ["mixed_tree", "two_feet"])
def test_float_build_agrees_with_the_reference(case):
    """precision="float" (the microcontroller build): the second derivatives emitted in float (no double in the
    C), float32 outputs, within 1e-4 of the numpy reference relative to the largest entry (observed 2e-7 to
    3e-6; float's rounding is 6e-8), that entry far from 0, every output of every function, on the floating
    tree (ID tensors, ID and FD Hessians) and the two feet (contact Hessian)."""
    from soagen import reference as ref

    if case == "two_feet":
        robot, mod = built("second_two_feet", two_feet, functions=["contact_dynamics_hessian"], precision="float")
    else:
        robot, mod = built("second_mixed_tree", mixed_tree, functions=SECOND, precision="float")
    assert "double" not in (mod.path / f"{robot.name}.c").read_text()
    q, qd, qdd, tau, lam = state(robot, 6)
    lam_f = np.random.default_rng(7).normal(size=robot.tip_rows)
    third = {"inverse_dynamics_second_derivatives": (qdd,), "inverse_dynamics_hessian": (qdd, lam),
             "forward_dynamics_hessian": (tau, lam), "contact_dynamics_hessian": (tau, lam, lam_f)}
    names = ["contact_dynamics_hessian"] if case == "two_feet" else SECOND
    for name in names:
        got, want = getattr(mod, name)(q, qd, *third[name]), getattr(ref, name)(robot, q, qd, *third[name])
        got, want = (list(x) if isinstance(x, tuple) else [x] for x in (got, want))
        assert len(got) == len(want), name
        for g, w in zip(got, want):
            assert g.dtype == np.float32, name
            scale = np.abs(w).max()
            assert scale > 1e-2, (name, scale)
            err = np.abs(g - w).max() / scale
            assert err < 1e-4, f"{name}: relative error {err:.2e}"
