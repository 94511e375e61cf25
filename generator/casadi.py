"""soagen's functions as CasADi Functions, with their exact Jacobians.

    import soagen
    fd, = soagen.casadi.functions(robot, ["forward_dynamics"])
    qdd = fd(q, qd, tau)                          # a casadi.Function: DM, SX or MX in, the same out
    J = fd.jacobian()                             # soagen's analytical derivatives, not CasADi's AD

Each function is the generated C compiled into a shared library (``target="casadi"``,
:mod:`soagen.targets.casadi`, cached as the modules are) and loaded by ``casadi.external``.
Inverse dynamics, forward dynamics and contact dynamics come with their Jacobian, along q in
q's own coordinates (a quaternion's four entries; :mod:`soagen.targets.casadi.emit`); other
functions have none (CasADi's own derivatives of them fail).  With ``hessians=True`` these and
``rk4_step`` also have their exact second derivatives (the contracted Hessian that IPOPT's exact
Hessian of the Lagrangian asks for, :mod:`soagen.targets.casadi.hessian`); without, use IPOPT's
``hessian_approximation="limited-memory"``.  Where Λ(0) does not exist at the
input, a function that inverts Ω(0) prints one line (``soagen: os_inertia: Lambda(0) singular
...``) and its evaluation fails.

For multiple shooting, ``"rk4_step"`` (robots of 1-dof joints) is one classical Runge–Kutta step
``x_next = rk4_step(x, tau, dt)`` of x = (q, q̇) with its Jacobian along (x, τ, dt), both in C:

    step, = soagen.casadi.functions(robot, ["rk4_step"])
    opti.subject_to(X[:, k + 1] == step(X[:, k], U[:, k], dt))
"""
from __future__ import annotations

from soagen.options import OptionsError


def library(robot, names, hessians=False, **options):
    """The compiled :class:`~soagen.targets.casadi.CasadiLibrary` of ``names`` (and of what their
    Jacobians read, and with ``hessians`` their second derivatives); ``options``: :class:`soagen.Options`
    fields (``optimize``, ...)."""
    from soagen.pipeline import build
    from soagen.targets.casadi import check_steps, needed

    if "target" in options:
        raise OptionsError("soagen.casadi.functions builds the casadi target: drop target=")
    check_steps(robot, names)
    return build(robot, functions=tuple(needed(names, hessians)), target="casadi", **options)


def functions(robot, names, hessians=False, **options):
    """``casadi.Function`` of each of ``names`` (soagen function names, as ``soagen functions`` lists
    them), in that order.

    Parameters
    ----------
    robot : Robot
    names : list of str   soagen functions, or ``"rk4_step"``
    hessians : bool       also the exact second derivatives of those that have them (inverse, forward and
                          contact dynamics, ``rk4_step``), for IPOPT's exact Hessian; they lengthen the build
    options : fields of :class:`soagen.Options` (``optimize="O3"`` by default, ``name=`` the C prefix)

    Returns
    -------
    list of casadi.Function   inputs and outputs as the catalogue names them, column vectors and
                              matrices of its shapes, column-major; the tips' poses T (m, 4, 4) as
                              the (4m x 4) stack of the 4x4 poses, tip k's in rows 4k to 4k + 3
                              (:func:`soagen.targets.casadi.emit.declared`)
    """
    try:
        import casadi
    except ImportError:
        raise ImportError("soagen.casadi needs CasADi: pip install casadi (or pip install '.[casadi]')") from None
    lib = library(robot, list(names), hessians=hessians, **options)
    return [casadi.external(lib.exported[name], str(lib.path)) for name in names]
