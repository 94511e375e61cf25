"""The MJCF corpus: every MuJoCo model of gymnasium's wheel, read by soagen.load_mjcf and
checked against MuJoCo itself (and against Pinocchio's MJCF reader where it reads the file).

    python benchmarks/mjcf_corpus.py            # writes docs/mjcf_corpus.json, renders docs/mjcf_corpus.md
    python benchmarks/mjcf_corpus.py --render   # renders the md from the committed JSON only

For each model: M against ``mj_fullM``, C + G and inverse dynamics against ``mj_inverse``,
forward dynamics against ``mj_forward``'s ``qacc`` (``qfrc_applied`` = τ), and the Jacobian
of every moving body and site against ``mj_jacBody``/``mj_jacSite``, on :data:`STATES`
random states (seed 0), in soagen's conventions (:mod:`soagen.mujoco_convention`).  MuJoCo
runs with constraints, actuation, springs and dampers disabled and without gravity
compensation or fluid forces: the rigid bodies and the armature, what soagen's robot
holds.  Each entry is the largest relative error ``max|soagen - MuJoCo| / max|MuJoCo|``
over the states (forward dynamics: divided by cond(M)).  tests/test_mjcf.py reruns a
sample of rows and compares them with the committed JSON.

Pinocchio's MJCF reader (``pinocchio.buildModelFromMJCF``, measured with Pinocchio 4.1) differs
from MuJoCo on these files in two ways besides ``settotalmass`` and ``<option gravity>``:

- it keeps only the first body tree under ``<worldbody>`` and drops the others: on
  ``reacher.xml`` it keeps ``body0`` (itself on a hinge to the world, nv = 2) and drops
  ``target`` (two slides), on ``pusher.xml`` it keeps the arm and drops ``object`` and
  ``goal`` (nv = 7 of 11);
- it leaves out of the inertia the geoms whose ``contype`` and ``conaffinity`` are both 0
  (it takes them for visual geoms): every geom of ``swimmer.xml`` is such (its
  ``<default>``), so its bodies have zero mass in Pinocchio's model (35.6 kg each in
  MuJoCo's); with either attribute 1 the masses are MuJoCo's.
"""
from __future__ import annotations

import argparse
import json
import os
import sys
import warnings
from pathlib import Path

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
JSON_PATH = ROOT / "docs" / "mjcf_corpus.json"
MD_PATH = ROOT / "docs" / "mjcf_corpus.md"
#: random states per model
STATES = 10
#: a check passes at this relative error (forward dynamics: relative error / cond(M))
TOLERANCE = 1e-12
CHECKS = ("mass_matrix", "bias_forces", "inverse_dynamics", "forward_dynamics", "jacobian")


def corpus():
    """``[(name, path)]`` of gymnasium's MuJoCo assets, by name."""
    import gymnasium

    folder = Path(gymnasium.__file__).parent / "envs" / "mujoco" / "assets"
    return [(p.name, p) for p in sorted(folder.glob("*.xml"))]


def rel(a, b):
    """max|a - b| / max|b| (b the oracle's); 1 when a is all zero and b is not."""
    a, b = np.asarray(a, float), np.asarray(b, float)
    return float(np.max(np.abs(a - b)) / max(float(np.max(np.abs(b))), np.finfo(float).tiny))


class MujocoOracle:
    """MuJoCo's answers for a robot of :func:`soagen.load_mjcf`, in soagen's conventions.

    Parameters
    ----------
    robot : Robot
        Loaded from ``path``; its tips name bodies or sites of the model.
    path : str or path-like
        The MJCF file, compiled again by MuJoCo.
    damping : bool
        Keep MuJoCo's joint damping (a robot loaded with ``mjcf_damping=True``).
    """

    def __init__(self, robot, path, damping=False):
        import mujoco

        from soagen import mujoco_convention as mc

        self.mj, self.mc, self.robot = mujoco, mc, robot
        self.model = mujoco.MjModel.from_xml_path(str(path))
        bit = mujoco.mjtDisableBit
        flags = bit.mjDSBL_CONSTRAINT | bit.mjDSBL_ACTUATION | bit.mjDSBL_SPRING
        self.model.opt.disableflags |= flags | (0 if damping else bit.mjDSBL_DAMPER)
        self.model.opt.density, self.model.opt.viscosity = 0.0, 0.0
        self.model.opt.wind[:] = 0.0
        self.model.body_gravcomp[:] = 0.0
        self.data = mujoco.MjData(self.model)

    def _state(self, q, qd):
        self.data.qpos[:] = self.mc.q_to_mujoco(self.robot, q)
        self.data.qvel[:] = self.mc.v_to_mujoco(self.robot, q, qd)
        self.data.qfrc_applied[:] = 0.0

    def mass_matrix(self, q):
        """M (nv, nv) from ``mj_fullM`` after ``mj_forward`` (:func:`soagen.mujoco_convention.full_mass_matrix`)."""
        self._state(q, np.zeros(self.robot.nv))
        self.mj.mj_forward(self.model, self.data)
        return self.mc.matrix_from_mujoco(self.robot, q, self.mc.full_mass_matrix(self.model, self.data))

    def inverse_dynamics(self, q, qd, qdd):
        """τ (nv,) from ``mj_inverse``."""
        self._state(q, qd)
        self.data.qacc[:] = self.mc.a_to_mujoco(self.robot, q, qd, qdd)
        self.mj.mj_inverse(self.model, self.data)
        return self.mc.tau_from_mujoco(self.robot, q, self.data.qfrc_inverse)

    def bias_forces(self, q, qd):
        """C + G (nv,): ``mj_inverse`` at q̈ = 0."""
        return self.inverse_dynamics(q, qd, np.zeros(self.robot.nv))

    def forward_dynamics(self, q, qd, tau):
        """q̈ (nv,) from ``mj_forward`` with ``qfrc_applied`` = τ."""
        self._state(q, qd)
        self.data.qfrc_applied[:] = self.mc.tau_to_mujoco(self.robot, q, tau)
        self.mj.mj_forward(self.model, self.data)
        return self.mc.a_from_mujoco(self.robot, q, qd, self.data.qacc)

    def jacobian(self, q):
        """J (6m, nv) of the robot's tips from ``mj_jacBody`` / ``mj_jacSite``."""
        self._state(q, np.zeros(self.robot.nv))
        self.mj.mj_kinematics(self.model, self.data)
        self.mj.mj_comPos(self.model, self.data)
        out = []
        for tip in self.robot.tips:
            jacp, jacr = np.zeros((3, self.model.nv)), np.zeros((3, self.model.nv))
            body = self.mj.mj_name2id(self.model, self.mj.mjtObj.mjOBJ_BODY, tip.name)
            if body >= 0:
                self.mj.mj_jacBody(self.model, self.data, jacp, jacr, body)
            else:
                site = self.mj.mj_name2id(self.model, self.mj.mjtObj.mjOBJ_SITE, tip.name)
                self.mj.mj_jacSite(self.model, self.data, jacp, jacr, site)
            out.append((jacp, jacr))
        return self.mc.jacobian_from_mujoco(self.robot, q, out)


def compare(robot, oracle, route, states=STATES, seed=0):
    """Largest relative error of each check (:data:`CHECKS`) of ``route`` (the numpy reference,
    or a generated module through :func:`module_route`) against ``oracle``; -> dict."""
    rng = np.random.default_rng(seed)
    err = dict.fromkeys(CHECKS, 0.0)
    for _ in range(states):
        q, qd, qdd, tau = robot.random_state(rng)
        M = oracle.mass_matrix(q)
        pairs = {"mass_matrix": (route.mass_matrix(robot, q), M),
                 "bias_forces": (route.bias_forces(robot, q, qd), oracle.bias_forces(q, qd)),
                 "inverse_dynamics": (route.inverse_dynamics(robot, q, qd, qdd), oracle.inverse_dynamics(q, qd, qdd)),
                 "forward_dynamics": (route.forward_dynamics(robot, q, qd, tau), oracle.forward_dynamics(q, qd, tau))}
        if robot.tips:
            pairs["jacobian"] = (route.jacobian(robot, q), oracle.jacobian(q))
        for check, (mine, theirs) in pairs.items():
            e = rel(mine, theirs) / (np.linalg.cond(M) if check == "forward_dynamics" else 1.0)
            err[check] = max(err[check], e)
    return err


class module_route:
    """A generated module in the reference's calling convention (robot first)."""

    def __init__(self, module):
        self.module = module

    def __getattr__(self, name):
        fn = getattr(self.module, name)
        return lambda robot, *args: fn(*args)


def pinocchio_errors(robot, path, states=STATES, seed=0):
    """Largest relative error of M and inverse dynamics against Pinocchio's MJCF reader;
    -> (error, None), or (None, why not compared)."""
    import pinocchio as pin

    from soagen import pinocchio_convention as pc
    from soagen import reference

    try:
        model = pin.buildModelFromMJCF(str(path))
    except Exception as exc:   # Pinocchio raises std exceptions of many kinds for what it cannot read
        return None, f"Pinocchio cannot read it: {str(exc).splitlines()[0][:80]}"
    if model.nv != robot.nv:
        return None, f"Pinocchio's reader has nv = {model.nv} (keeps only the first body tree under `<worldbody>`)"
    data, rng, err = model.createData(), np.random.default_rng(seed), 0.0
    for _ in range(states):
        q, qd, qdd, _ = robot.random_state(rng)
        qp = pc.q_to_pinocchio(robot, q)
        M = pin.crba(model, data, qp)
        M = np.triu(M) + np.triu(M, 1).T
        tau = pin.rnea(model, data, qp, pc.v_to_pinocchio(robot, qd), pc.v_to_pinocchio(robot, qdd))
        err = max(err, rel(reference.mass_matrix(robot, q), pc.matrix_from_pinocchio(robot, M)),
                  rel(reference.inverse_dynamics(robot, q, qd, qdd), pc.v_from_pinocchio(robot, tau)))
    return err, None


def check_tips(path):
    """Names of every moving body and every site on one: the Jacobians checked."""
    import mujoco

    model = mujoco.MjModel.from_xml_path(str(path))
    bodies = [model.body(b).name for b in range(1, model.nbody) if model.body_weldid[b] != 0 and model.body(b).name]
    sites = [model.site(s).name for s in range(model.nsite)
             if model.body_weldid[model.site_bodyid[s]] != 0 and model.site(s).name not in bodies]
    return bodies + [s for s in sites if s]


def row(name, path, states=STATES):
    """One row of the JSON: the model's sizes and errors, or why it is refused."""
    import mujoco

    from soagen import RobotError, load_mjcf, reference

    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            robot = load_mjcf(path, tips=check_tips(path))
    except RobotError as exc:
        return {"model": name, "refused": str(exc).replace(str(path), name)}
    model = mujoco.MjModel.from_xml_path(str(path))
    errors = compare(robot, MujocoOracle(robot, path), reference, states)
    pin_err, pin_why = pinocchio_errors(robot, path, states)
    return {"model": name, "nq": robot.nq, "nv": robot.nv, "bodies": int(model.nbody) - 1, "tips": len(robot.tips),
            "errors": {k: fmt(v) for k, v in errors.items()},
            "pinocchio": fmt(pin_err) if pin_why is None else None, "pinocchio_note": pin_why}


def fmt(x):
    """The printed precision of the JSON and the table: one significant digit."""
    return f"{x:.0e}"


# ------------------------------------------------------------------------ the table
HEAD = """# The MJCF corpus

Every MuJoCo model that gymnasium's wheel ships (`gymnasium/envs/mujoco/assets/*.xml`),
read by `soagen.load_mjcf` and compared with MuJoCo {mujoco} on {states} random states each
(seed 0). Rendered by `python benchmarks/mjcf_corpus.py` from
[mjcf_corpus.json](mjcf_corpus.json); `tests/test_mjcf.py` reruns a sample of rows and
compares them with the JSON, and this page with the JSON.

Why gymnasium: its wheel is 0.5 MB (5 MB installed, no compiled code; with it come
cloudpickle and farama-notifications) and holds its 14 MJCF files as they are; dm_control's
suite would need a 56 MB wheel and its pinned dependencies (labmaze, lxml, dm-tree, ...).

Each entry is the largest relative error max|soagen − MuJoCo| / max|MuJoCo| of the numpy
reference over the states: M against `mj_fullM`, C + G and inverse dynamics against
`mj_inverse` (constraints, actuation, springs and dampers disabled; the armature stays),
forward dynamics against `mj_forward`'s `qacc` with `qfrc_applied` = τ (divided by
cond(M)), the Jacobians of every moving body and site against `mj_jacBody`/`mj_jacSite`
(tips: how many). A check passes at {tol:.0e}. The last column compares M and inverse
dynamics with Pinocchio's own MJCF reader (`pinocchio.buildModelFromMJCF`).

| model | nq | nv | bodies | tips | M | C + G | inverse dynamics | forward dynamics | Jacobians | Pinocchio's reader |
|---|---|---|---|---|---|---|---|---|---|---|
"""

PIN_NOTES = """
Where Pinocchio's reader disagrees, MuJoCo agrees with soagen: `half_cheetah.xml`'s
`<compiler settotalmass="14">` scales the masses (Pinocchio's reader does not),
`swimmer.xml` has zero mass in Pinocchio's reader, which leaves out of the inertia the geoms
whose `contype` and `conaffinity` are both 0 (every geom of swimmer.xml, by its `<default>`;
MuJoCo gives each of its three bodies 35.6 kg), and Pinocchio's reader
takes gravity (0, 0, −9.81), not `inverted_double_pendulum.xml`'s `<option gravity="1e-5 0 -9.81">`.
Where it has fewer velocities, Pinocchio's reader keeps only the first body tree under
`<worldbody>` and drops the others: `reacher.xml`'s `body0` (itself on a hinge to the world)
and not its `target` (two slides), `pusher.xml`'s arm and not its `object` and `goal`.
Measured with Pinocchio 4.1.
"""


def render(rows, meta):
    """docs/mjcf_corpus.md from the JSON's rows and meta."""
    lines = [HEAD.format(mujoco=meta["mujoco"], states=meta["states"], tol=meta["tolerance"])]
    for r in rows:
        if "refused" in r:
            lines.append(f"| {r['model']} | refused: {r['refused']} |||||||||||\n")
            continue
        e = r["errors"]
        pin = r["pinocchio"] if r["pinocchio"] is not None else r["pinocchio_note"]
        lines.append(f"| {r['model']} | {r['nq']} | {r['nv']} | {r['bodies']} | {r['tips']} | "
                     + " | ".join(e[c] for c in CHECKS) + f" | {pin} |\n")
    return "".join(lines) + PIN_NOTES


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--render", action="store_true", help="only render the md from the committed JSON")
    args = parser.parse_args(argv)
    if not args.render:
        import mujoco

        rows = []
        for name, path in corpus():
            rows.append(row(name, path))
            print(json.dumps(rows[-1]), file=sys.stderr)
        doc = {"meta": {"mujoco": mujoco.__version__, "states": STATES, "tolerance": TOLERANCE}, "rows": rows}
        JSON_PATH.write_text(json.dumps(doc, indent=1) + "\n")
    doc = json.loads(JSON_PATH.read_text())
    MD_PATH.write_text(render(doc["rows"], doc["meta"]))
    print(f"wrote {os.path.relpath(MD_PATH, ROOT)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
