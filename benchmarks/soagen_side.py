"""Every use of soagen by the benchmark, in one place.

The rest of ``benchmarks/`` sees soagen only through this module: loading a robot,
generating its C (and what each generated function takes and returns), the
reference values the outputs are checked against, the Pinocchio-convention
converters and the built Python module.  When soagen's internal API changes
(function catalogue, options object), this is the file to adapt.
"""
from __future__ import annotations

import re
import time
from dataclasses import dataclass
from pathlib import Path

import numpy as np

import soagen
from soagen.model import pinocchio_convention as pc
from soagen import reference as ref
from soagen.model import robots
from soagen import functions as F
from soagen.check import ILL_CONDITIONED   # Λ-based outputs are compared only where cond(Ω) is below it
from soagen.codegen import generate
from soagen.options import jobs
from soagen.targets.common.inert import c_name
from soagen.model.urdf import load_urdf

TOLERANCE = 1e-8          # max |got - want| / max(1, max |want|)


def rel_error(got, want):
    got, want = np.ravel(got), np.ravel(want)
    return float(np.abs(got - want).max() / max(1.0, float(np.abs(want).max())))


_COND = {}


def _cond_ok(robot, q):
    key = (robot.fingerprint(), np.asarray(q, float).tobytes())
    if key not in _COND:
        _COND[key] = np.linalg.cond(ref.os_inertia_inverse(robot, q)) < ILL_CONDITIONED
    return _COND[key]


_REFERENCE = {}


def reference_value(robot, states, i, name):
    """The numpy reference of generated function ``name`` at state ``i`` (the catalogue's
    reference, its inputs taken from the states), one flat array; computed once per run
    (several backends are checked against it, and some references take a second a state)."""
    key = (robot.fingerprint(), id(states), i, name)
    if key not in _REFERENCE:
        spec = F.BY_NAME[name]
        args = [getattr(states, a)[i] for a in spec.inputs]
        want = spec.reference_function()(robot, *args)
        _REFERENCE[key] = np.concatenate([np.ravel(w) for w in (want if isinstance(want, tuple) else [want])])
    return _REFERENCE[key]


def cost(counts):
    """mul + add + div + sqrt of {operation kind: count} (what soagen's operations column counts)."""
    return F.cost(counts)


def needs_lambda(name):
    """Λ(0)-based outputs are compared only where cond(Ω) is fine."""
    return F.BY_NAME[name].solves == "Omega"


def family(fn):
    """The family a variant function belongs to (``forward_dynamics_fd4`` -> ``forward_dynamics``):
    its rows are compared with the family's baselines."""
    return F.BY_NAME[fn].family or fn


def check_outputs(robot, states, outputs, what, convert=lambda name, x: x, beyond=None, upto=None):
    """Worst relative error of ``outputs`` {soagen function: (count, size)} against the reference.

    ``convert(name, row)`` maps one backend output row to soagen's layout.  With ``beyond``
    ({function: rows in soagen's layout}, a baseline's outputs already checked against the
    reference on the first ``upto`` states), states from ``upto`` on are compared with those
    rows instead of the reference (whose numpy derivatives can take a second a state).
    Returns {function: error}; functions without a reference get None.
    """
    errors = {}
    beyond = beyond or {}
    for name, rows in outputs.items():
        if name not in F.BY_NAME:
            errors[name] = None
            continue
        worst, checked = 0.0, 0
        for i, got in enumerate(rows):
            if needs_lambda(name) and not _cond_ok(robot, states.q[i]):
                continue
            want = (beyond[name][i] if name in beyond and upto is not None and i >= upto
                    else reference_value(robot, states, i, name))
            worst = max(worst, rel_error(convert(name, got), want))
            checked += 1
        errors[name] = worst if checked else None
    bad = {k: v for k, v in errors.items() if v is not None and not v <= TOLERANCE}
    if bad:
        raise ValueError(f"{what}: outputs differ from soagen.reference: "
                         + ", ".join(f"{k} {v:.2e}" for k, v in bad.items()))
    return errors



# --------------------------------------------------------------------------- robots
def load_robot(urdf, tips, lock, floating_base):
    """soagen's Robot of a URDF file (``soagen.urdf.load_urdf``)."""
    return load_urdf(urdf, tips=list(tips), lock=lock, floating_base=floating_base)


def bundled_urdf(name):
    """Path of a URDF bundled with soagen."""
    return robots.urdf_path(name)


def is_bundled_example(name, robot):
    """Whether ``robot`` is ``soagen.robots.example(name)`` (same numbers, same code)."""
    return robot.fingerprint() == robots.example(name).fingerprint()


def random_state(robot, rng):
    """(q, qd, qdd, tau) of ``Robot.random_state``."""
    return robot.random_state(rng)


def point_tip(name):
    """A point tip (3 linear rows) at frame ``name`` (``soagen.point_tip``)."""
    return soagen.point_tip(name)


def tips_at_rest(robot, q, qd):
    """qd with the tips' velocities removed (J qd = 0, least squares; J of ``soagen.reference``):
    a state a rigid contact at every tip allows."""
    J = ref.jacobian(robot, q)
    return qd - np.linalg.pinv(J) @ (J @ qd)


def contact_dims(robot):
    """Rows of each tip's contact: 3 (point tip) or 6."""
    return [len(t.rows) for t in robot.tips]


def joint_names(robot):
    return [b.joint for b in robot.bodies]


def is_floating(robot):
    return robot.bodies[0].joint_type == "floating"


def describe(robot):
    """'7 joints, tip panda_hand' or, for a floating base / several tips, sizes and tips."""
    tips = ", ".join(t.name for t in robot.tips)
    if robot.nq == robot.nv and len(robot.tips) == 1:
        return f"{robot.n} joints, tip {tips}"
    base = "floating base, " if is_floating(robot) else ""
    return f"{base}nq = {robot.nq}, nv = {robot.nv}, {len(robot.tips)} tips {tips}"


# --------------------------------------------------------------------------- generated C
@dataclass
class Function:
    """One generated C function as the drivers call it.

    name : str           without the file prefix (``inverse_dynamics``)
    inputs : list of str argument names in C order (``q``, ``qd``, ..., ``cq``, ``sq``)
    outputs : list of int sizes of the output arrays, after the inputs
    seconds : float      symbolic stage (record + CSE) of its program
    operations : int     mul + add + div + sqrt of its program (what a family's choice minimizes)
    trig : list of int   trig-inputs form: the entries k of q whose cq[k] or sq[k] it reads
    """

    name: str
    inputs: list
    outputs: list
    seconds: float
    operations: int
    trig: list


@dataclass
class GeneratedC:
    """soagen's C for one robot: files, per-function translation units, functions."""

    prefix: str          # C file stem and function prefix
    source: Path
    header: Path
    units: list          # [(function, C text of its own translation unit)]
    functions: list      # [Function]
    wall: float          # seconds, generation (all workers) and emission


# the dynamics' derivatives (not generated by default): benchmarked beside the default functions
DERIVATIVES = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")


def benchmarked_functions(robot, variants, derivatives):
    """The default functions, the variants of ``variants`` (None: every family's, the derivatives'
    family included) and, with ``derivatives``, :data:`DERIVATIVES`."""
    chosen = [s.name for s in F.select(robot, soagen.Options(variants=variants))]
    if derivatives:
        chosen += [*DERIVATIVES, *(F.variant_names(["forward_dynamics_derivatives"]) if variants is None else ())]
    return chosen


def generate_c(robot, prefix, out, variants, trig_inputs=False, functions=None):
    """soagen's C (``soagen.codegen.generate``, as ``soagen generate``), written to ``out``.

    variants : None (every family's algorithm variants too), () or a tuple of families
    trig_inputs : the functions take cos/sin of q as inputs ``cq``, ``sq`` after the others
    functions : None (the default functions and the variants) or exactly these functions
    """
    t0 = time.perf_counter()
    gen = generate(robot, soagen.Options(functions=functions, variants=variants, trig_inputs=trig_inputs), prefix)
    wall = time.perf_counter() - t0
    out.mkdir(parents=True, exist_ok=True)
    header, source = out / f"{prefix}.h", out / f"{prefix}.c"
    header.write_text(gen.csource.header)
    source.write_text(gen.csource.source)
    units = dict(gen.csource.units or [])
    for fname, cut in gen.csource.parts.items():      # a cut function's statements are in its parts' units
        units[fname] = "\n".join(units[u] for u in cut + [fname])
    # a family function that calls its algorithm's function reads that function's angles
    functions = [Function(p.name, [a.name for a in p.inputs], [a.size for a in p.outputs], p.seconds,
                          F.cost(p.ops), trig_reads(units.get(p.calls or p.name, gen.csource.source), prefix,
                                                    p.calls or p.name))
                 for p in gen.programs]
    return GeneratedC(prefix, source, header, list(gen.csource.units or []), functions, wall)


def trig_reads(source, prefix, name):
    """Entries k of q whose ``cq[k]`` or ``sq[k]`` the C function ``<prefix>_<name>`` reads, in its
    body or in the bodies of its parts (``<prefix>_<name>_part<k>``, :mod:`soagen.program.parts`)."""
    heads = re.finditer(rf"^\w+ {prefix}_{name}(?:_part\d+)?\([^;{{]*\)\n\{{", source, re.MULTILINE)
    bodies = [source[m.end():].split("\n}", 1)[0] for m in heads]
    assert bodies, name
    return sorted({int(k) for body in bodies for k in re.findall(r"\b[cs]q\[(\d+)\]", body)})


def compile_args():
    """The flags soagen's Python module is compiled with."""
    from soagen.targets.c99.compile import COMPILE_ARGS

    return list(COMPILE_ARGS)


def long_unit_args(text):
    """The flags soagen's build adds for a long translation unit of C ``text`` (gcc's register
    allocator: ``soagen.targets.common.compiler.GCC_LONG_UNIT_ARGS``; run times within 1%)."""
    from soagen.targets.common.compiler import unit_args

    return unit_args([], text)


version = soagen.__version__
jobs = jobs
c_name = c_name


# --------------------------------------------------------------------------- Pinocchio's conventions
def q_to_pinocchio(robot, q):
    return pc.q_to_pinocchio(robot, q)


def v_to_pinocchio(robot, v):
    return pc.v_to_pinocchio(robot, v)


def from_pinocchio(kind, row, robot):
    """One raw Pinocchio output row in soagen's layout and conventions ([angular; linear],
    full matrices, free-flyer velocities [ω; v] by ``soagen.pinocchio_convention``)."""
    nv, m = robot.nv, len(robot.tips)
    if kind == "vector":                      # tau, qdd, g, nle (nv,)
        return pc.v_from_pinocchio(robot, row)
    if kind == "upper":                       # M, Minv: upper triangle of (nv, nv)
        a = row.reshape(nv, nv)
        return pc.matrix_from_pinocchio(robot, np.triu(a) + np.triu(a, 1).T)
    if kind in ("rnea_derivatives", "aba_derivatives"):   # dtau_dq, dtau_dv | ddq, ddq_dq, ddq_dv, Minv (upper)
        # rows (torques, accelerations) and columns (tangent directions, velocities) permuted as M's
        # (as tests/test_derivatives.py converts them); the identity for 1-dof joints
        head = [pc.v_from_pinocchio(robot, row[:nv])] if kind == "aba_derivatives" else []
        mats = row[len(head) * nv:].reshape(-1, nv, nv).copy()
        if kind == "aba_derivatives":
            mats[-1] = np.triu(mats[-1]) + np.triu(mats[-1], 1).T
        return np.concatenate(head + [pc.matrix_from_pinocchio(robot, a).ravel() for a in mats])
    if kind == "jacobian":                    # m stacked LOCAL_WORLD_ALIGNED (6, nv), rows [v; ω]
        return pc.jacobian_from_pinocchio(robot, list(row.reshape(m, 6, nv)))
    if kind == "six":                         # Ω, Λ (6m, 6m) in tip space: [v; ω] -> [ω; v] per tip
        p = np.concatenate([[6 * k + 3, 6 * k + 4, 6 * k + 5, 6 * k, 6 * k + 1, 6 * k + 2] for k in range(m)])
        return row.reshape(6 * m, 6 * m)[np.ix_(p, p)]
    if kind == "centroidal":                  # Ag (6, nv), rows [linear; angular]
        return pc.centroidal_from_pinocchio(robot, row.reshape(6, nv)).ravel()
    if kind == "centroidal_derivatives":      # hg, dhg (6,), dh_dq, dhdot_dq, dhdot_dv, dhdot_da (6, nv)
        swap = [3, 4, 5, 0, 1, 2]             # rows [linear; angular] -> [angular; linear]
        mats = row[12:].reshape(4, 6, nv)
        return np.concatenate([row[:6][swap], row[6:12][swap]]
                              + [pc.centroidal_from_pinocchio(robot, a).ravel() for a in mats])
    if kind == "rnea_second_derivatives":     # 4 tensors (nv, nv, nv), [i][j][k] row-major, every index a velocity
        perm = pc._velocity_permutation(robot)
        return np.concatenate([t[np.ix_(perm, perm, perm)].ravel() for t in row.reshape(4, nv, nv, nv)])
    if kind in ("contact", "contact_derivatives"):
        # ddq, lambda_c (forces on the robot, LOCAL_WORLD_ALIGNED, [linear; angular] per 6-D contact)
        # [, ddq_dq, ddq_dv, ddq_dtau (nv, nv), dlambda_dq, dlambda_dv, dlambda_dtau (r, nv)]: soagen's
        # f are the forces on the environment (−lambda_c), [angular; linear] per full tip
        dims = contact_dims(robot)
        r = sum(dims)
        rows_, start = [], 0
        for d in dims:
            rows_ += list(range(start, start + d)) if d == 3 else [start + k for k in (3, 4, 5, 0, 1, 2)]
            start += d
        perm = pc._velocity_permutation(robot)
        out = [pc.v_from_pinocchio(robot, row[:nv]), -row[nv:nv + r][rows_]]
        if kind == "contact_derivatives":
            mats = row[nv + r:]
            for k in range(3):
                out.append(pc.matrix_from_pinocchio(robot, mats[k * nv * nv:(k + 1) * nv * nv].reshape(nv, nv)).ravel())
            mats = mats[3 * nv * nv:].reshape(3, r, nv)
            out += [-a[np.ix_(rows_, perm)].ravel() for a in mats]
        return np.concatenate(out)
    return row                                # "pose": m homogeneous 4x4 (convention independent)


# --------------------------------------------------------------------------- Python module
BATCH_FUNCTIONS = {name: F.BY_NAME[name].inputs for name in (
    "inverse_dynamics", "mass_matrix", "forward_dynamics", "mass_matrix_inverse", "jacobian", "forward_kinematics",
    "os_inertia")}
SingularError = soagen.SingularError


def build_module(robot, functions=None):
    """The cffi module of ``robot`` (``soagen.build``; all default functions, or these)."""
    return soagen.build(robot, functions=functions)
