"""``soagen check``: every generated function against the numpy reference, on
random states, each within a bound that follows its conditioning.

A function that solves a linear system loses about κ·ε digits however it is
computed, so its bound is ``BASE + SLOPE·κ`` with κ the condition number of
what it inverts at that state: M (forward dynamics, M⁻¹, tip-force
accelerations) or Ω(0) (the Λ(0)-based functions, compared only where
κ(Ω) < :data:`ILL_CONDITIONED`: near a singular pose Λ(0) barely exists).
Everything else (kinematics, inverse dynamics, M, Ω(0) itself, which
inverts only the D(k) blocks) is held to ``BASE``.  The error is
``max|generated − reference| / max(1, max|reference|)``; an all-zero output
fails every bound as soon as the reference has an entry above ``BASE``.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from soagen import functions as F
from soagen import reference as ref

#: Λ(0)-based functions are compared only where cond(Ω(0)) is below this
ILL_CONDITIONED = 1e6
#: error bound BASE + SLOPE·κ per precision
BASE = {"double": 1e-10, "float": 1e-3}
SLOPE = {"double": 1e-13, "float": 1e-6}
KAPPA_NAMES = {"M": "cond(M)", "Omega": "cond(Omega(0))"}


@dataclass
class Result:
    """One function's comparison over the states.

    error : float    worst relative error
    ratio : float    worst error / bound over the states (≤ 1 passes)
    kappa : float    largest condition number among the compared states (1 if none applies)
    compared, skipped : int   states compared; states skipped (Λ(0) singular or ill-conditioned)
    solves : str or None      what κ is the condition number of
    """

    name: str
    error: float = 0.0
    ratio: float = 0.0
    kappa: float = 1.0
    compared: int = 0
    skipped: int = 0
    solves: str | None = None

    @property
    def ok(self):
        """Within its bound on every compared state (a function compared on no state is not ok:
        :attr:`untested`)."""
        return self.ratio <= 1.0 and self.compared > 0

    @property
    def untested(self):
        """Compared on no state (every state skipped: Λ(0) never well conditioned)."""
        return self.compared == 0

    def bound_text(self, precision="double"):
        """The bound rule, as ``check`` prints it."""
        if self.solves in KAPPA_NAMES:
            return (f"{BASE[precision]:g} + {SLOPE[precision]:g}*{KAPPA_NAMES[self.solves]} "
                    f"(max {self.kappa:.1e})")
        return f"{BASE[precision]:g}"


def random_inputs(target, rng, extra=None):
    """One random value of every input name the target's functions take: per
    part (label ``a``/``b`` for a closed chain) q, qd, qdd, tau from its
    ``random_state``, tip forces ``f`` and accelerations ``u``, a time step ``dt``;
    for a robot, from the generator ``extra`` (default ``rng``: a separate one leaves the
    other draws as they were), the reference velocities and accelerations
    ``qdr``, ``qddr`` and parameters ``pi`` (a physically consistent perturbation); the weights ``lam``,
    ``lam_f`` of the contracted second derivatives and the Baumgarte gains ``kp``, ``kd`` and reference
    positions ``x_ref`` from a generator seeded by q."""
    pool = {}
    for label, part in target.parts:
        q, qd, qdd, tau = part.random_state(rng)
        pool.update({"q" + label: q, "qd" + label: qd, "qdd" + label: qdd, "tau" + label: tau})
        r = part.tip_rows
        pool.update({"f" + label: rng.normal(size=r) * 10.0, "u" + label: rng.normal(size=r)})
    pool["dt"] = rng.uniform(1e-3, 1e-2, 1)
    # a restitution in [0, 1] that varies with the state but takes no draw (the other draws stay as they were)
    pool["e"] = np.array([abs(np.sin(1e3 * float(np.sum(pool["q" + target.parts[0][0]]))))])
    if len(target.parts) == 1:
        from soagen.model.parameters import perturbed_parameters
        extra = rng if extra is None else extra
        pool.update(qdr=extra.normal(size=target.nv), qddr=extra.normal(size=target.nv),
                    pi=perturbed_parameters(target, extra))
        # the weights of the contracted second derivatives, drawn from a generator seeded by q's bits (no draw
        # taken from the others)
        own = np.random.default_rng(np.frombuffer(np.ascontiguousarray(pool["q"], float).tobytes(), np.uint32))
        pool.update(lam=own.normal(size=target.nv), lam_f=own.normal(size=target.tip_rows))
        # Baumgarte gains and reference positions per tip row, after those (lam, lam_f stay as they were)
        r = target.tip_rows
        pool.update(kp=own.uniform(0.0, 50.0, r), kd=own.uniform(0.0, 20.0, r), x_ref=own.normal(size=r))
    return pool


def _kappa(solves, target, values):
    """Condition number of what a function inverts, None where Λ(0) is not to be
    compared; 1 for functions that solve nothing."""
    if solves == "M":
        return float(np.linalg.cond(ref.mass_matrix(target, values["q"])))
    if solves == "Omega" and "q" in values:
        kappa = float(np.linalg.cond(ref.os_inertia_inverse(target, values["q"])))
        return kappa if kappa < ILL_CONDITIONED else None
    return 1.0


def check_module(target, mod, samples=100, seed=0):
    """Compare every function ``mod`` has with its reference on ``samples``
    random states; ``{C name: Result}`` in catalogue order."""
    rng = np.random.default_rng(seed)
    extra = np.random.default_rng([seed, 17])     # qdr, qddr, pi: the states of the other inputs unchanged
    precision = mod.precision
    specs = [s for s in F.specs(target) if s.name in mod.ops]
    results = {s.name: Result(s.name, solves=s.solves if s.solves in KAPPA_NAMES else None) for s in specs}
    for _ in range(samples):
        values = random_inputs(target, rng, extra)
        # with the parameters as inputs: π drawn per state, the reference on a robot with it
        model = target.with_parameters(values["pi"]) if mod.parameters == "inputs" else target
        kappas = {}
        for spec in specs:
            res = results[spec.name]
            if spec.solves not in kappas:
                kappas[spec.solves] = _kappa(spec.solves, model, values)
            kappa = kappas[spec.solves] if res.solves else 1.0
            if kappa is None:
                res.skipped += 1
                continue
            args = [values[a] for a in spec.inputs]
            got = mod.call(spec.name, *args, pi=values["pi"] if mod.parameters == "inputs" else None)
            want = spec.reference_function()(model, *args)
            got = np.concatenate([np.ravel(x) for x in (got if isinstance(got, list) else [got])])
            want = np.concatenate([np.ravel(x) for x in (want if isinstance(want, tuple) else [want])])
            err = float(np.abs(got - want).max() / max(1.0, float(np.abs(want).max())))
            bound = BASE[precision] + SLOPE[precision] * kappa
            res.error = max(res.error, err)
            res.ratio = max(res.ratio, err / bound)
            res.kappa = max(res.kappa, kappa)
            res.compared += 1
    return results
