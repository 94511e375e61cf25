"""The example-robot-data sweep (issue 13): every URDF that Pinocchio parses,
loaded by soagen as a new user would, four functions generated and compared
with Pinocchio's own model of the file on seeded random states.

``tests/test_real_robots.py`` asserts on a sample of the cases (:data:`SAMPLE`)
and ``benchmarks/sweep.py`` runs every one and writes the README table
(``docs/sweep.md``) from them.

Each case is one URDF with a fixed base, and again with a floating base when
the robot moves freely in the world (:data:`FLOATING_FOLDERS`: legged robots,
humanoids, aerial robots).  The functions are inverse dynamics, M, the
Jacobian of the deepest link (most joints from the root; the first in body
order on ties) and forward dynamics by FD4 (one program: the family would
record every algorithm); FD4 is left out (and asked for in vain) where the
robot has joints with D(k) = 0.
"""
from __future__ import annotations

import warnings
from dataclasses import dataclass, field

import numpy as np

import soagen
from soagen import reference as ref
from soagen.functions import select
from tests.support.oracle import Oracle, erd_robots_dir

FUNCTIONS = ("inverse_dynamics", "mass_matrix", "jacobian", "forward_dynamics_fd4")

#: folders of robots that move freely in the world, swept with a floating base too:
#: quadrupeds, bipeds and humanoids, aerial robots (the quadrotor and the drone have
#: no moving joint: floating base only)
FLOATING_FOLDERS = (
    "a1_description", "anymal_b_simple_description", "anymal_c_simple_description", "b1_description",
    "go1_description", "go2_description", "hyq_description", "laikago_description", "quadruped_description",
    "solo_description", "centauro_description",                                                # quadrupeds
    "bolt_description", "alexander_description", "g1_description", "human_description", "icub_description",
    "romeo_description", "simple_humanoid_description", "talos_data",                           # bipeds
    "hector_description", "iris_description", "borinot_description", "hextilt_description",   # aerial
)
#: fixed-base-only files inside those folders (an arm alone)
FIXED_ONLY = ("talos_data/robots/talos_left_arm.urdf",)
#: files Pinocchio does not parse (not swept), with its reason
PINOCCHIO_REJECTS = {"ur_description/urdf/ur3.urdf": "urdfdom: no name given for the robot"}
#: files without a moving joint: swept with a floating base only
NO_MOVING_JOINT = ("hector_description/robots/quadrotor_base.urdf", "iris_description/robots/iris_simple.urdf")

SAMPLES = 5          # random states per case
SEED = 13
#: bounds (max-abs error relative to the largest Pinocchio entry) per function;
#: forward dynamics: FD_EPS · cond(M) · nv, at least FD_FLOOR
BOUND = {"mass_matrix": 1e-14, "inverse_dynamics": 1e-12, "jacobian": 1e-12}
FD_EPS, FD_FLOOR = 1e-15, 1e-12


def robots_dir():
    return erd_robots_dir()


def urdf_files():
    """Every URDF of the installed example-robot-data, relative to its robots folder."""
    root = robots_dir()
    return sorted(str(p.relative_to(root)) for p in root.rglob("*.urdf"))


def cases():
    """``(relative path, floating base)`` of every case, in a stable order."""
    out = []
    for rel in urdf_files():
        if rel in PINOCCHIO_REJECTS:
            continue
        if rel not in NO_MOVING_JOINT:
            out.append((rel, False))
        if rel.split("/")[0] in FLOATING_FOLDERS and rel not in FIXED_ONLY:
            out.append((rel, True))
    return out


def case_id(rel, floating):
    return rel.rsplit("/", 1)[-1].removesuffix(".urdf") + ("-floating" if floating else "")


def display_name(rel):
    """The file as the table shows it: folder (without ``_description``) / file name."""
    folder, *_, name = rel.split("/")
    return f"{folder.removesuffix('_description')}/{name}"


def deepest_link(robot):
    """Link of the body with the most joints between it and the root (first on ties)."""
    return robot.bodies[max(range(robot.nb), key=lambda k: len(robot.ancestors(k)))].name


@dataclass
class Result:
    """One case: the robot as loaded, timings, errors against Pinocchio."""

    rel: str
    floating: bool
    name: str = ""
    nq: int = 0
    nv: int = 0
    tip: str = ""
    functions: tuple = ()
    generate_s: float = 0.0
    compile_s: float = 0.0
    #: the module came from the cache: an earlier case had the same model (no seconds to show)
    cached: bool = False
    #: function -> (worst error over the states, its bound)
    errors: dict = field(default_factory=dict)
    #: the ModelWarnings of loading (one line each)
    warnings: list = field(default_factory=list)
    notes: tuple = ()
    singular_joints: tuple = ()
    #: the error for FD4 asked for explicitly on a robot with singular joints
    refused: str = ""

    @property
    def id(self):
        return case_id(self.rel, self.floating)

    def as_json(self):
        """A dict for docs/sweep.json (:meth:`from_json` reads it back)."""
        return dict(file=self.rel, floating=self.floating, robot=self.name, nq=self.nq, nv=self.nv, tip=self.tip,
                    functions=list(self.functions), generate_s=round(self.generate_s, 2),
                    compile_s=round(self.compile_s, 2), cached=self.cached,
                    errors={k: {"error": e, "bound": b} for k, (e, b) in self.errors.items()},
                    warnings=self.warnings, notes=list(self.notes), singular_joints=list(self.singular_joints))

    @classmethod
    def from_json(cls, row):
        return cls(row["file"], row["floating"], row["robot"], row["nq"], row["nv"], row["tip"],
                   tuple(row["functions"]), row["generate_s"], row["compile_s"], row.get("cached", False),
                   {k: (v["error"], v["bound"]) for k, v in row["errors"].items()}, list(row["warnings"]),
                   tuple(row["notes"]), tuple(row["singular_joints"]))


def load(rel, floating, tips=()):
    """soagen's Robot of the file and the text of its load warnings."""
    path = robots_dir() / rel
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always", soagen.ModelWarning)
        robot = soagen.load_urdf(path, tips=tips, floating_base=floating)
    return robot, [str(w.message).replace(str(robots_dir()) + "/", "") for w in caught
                   if issubclass(w.category, soagen.ModelWarning)]


def _rel_err(a, b):
    return float(np.abs(np.asarray(a) - np.asarray(b)).max() / np.abs(b).max())


def run_case(rel, floating, samples=SAMPLES, seed=SEED, optimize=None):
    """Load, build the four functions (one module), compare with Pinocchio.

    Errors are ``max |soagen - Pinocchio| / max |Pinocchio|`` over ``samples``
    random states; M also for the numpy reference (``mass_matrix (reference)``).
    ``optimize`` (e.g. ``"-O0"``) replaces the module's ``-O3`` (the test's
    choice: gcc -O3 is two thirds of the sweep's time, see tests/test_real_robots.py).
    """
    res = Result(rel, floating)
    robot, _ = load(rel, floating)
    res.tip = deepest_link(robot)
    robot, res.warnings = load(rel, floating, tips=[res.tip])
    res.name, res.nq, res.nv = robot.name, robot.nq, robot.nv
    res.notes, res.singular_joints = robot.notes, robot.singular_joints
    functions = [f for f in FUNCTIONS if not (robot.singular_joints and f == "forward_dynamics_fd4")]
    if robot.singular_joints:
        try:
            select(robot, soagen.Options(functions=FUNCTIONS))
        except soagen.RobotError as exc:
            res.refused = str(exc)
    res.functions = tuple(functions)
    mod = soagen.build(robot, functions=functions, optimize=(optimize or "-O3").lstrip("-"))
    t = mod.timings
    res.generate_s = t.get("generate (wall)", 0.0)          # the finished functions compile meanwhile
    res.compile_s = t.get("compile (after generate)", 0.0)
    res.cached = "compile" not in t

    oracle = Oracle(robot, urdf=robots_dir() / rel)
    rng = np.random.default_rng(seed)
    worst = {}

    def record(name, err, bound):   # the state nearest its bound
        if name not in worst or err / bound > worst[name][0] / worst[name][1]:
            worst[name] = (err, bound)

    for _ in range(samples):
        q, qd, qdd, tau = robot.random_state(rng)
        Mp = oracle.mass_matrix(q)
        record("mass_matrix", _rel_err(mod.mass_matrix(q), Mp), BOUND["mass_matrix"])
        record("mass_matrix (reference)", _rel_err(ref.mass_matrix(robot, q), Mp), BOUND["mass_matrix"])
        record("inverse_dynamics", _rel_err(mod.inverse_dynamics(q, qd, qdd), oracle.rnea(q, qd, qdd)),
               BOUND["inverse_dynamics"])
        record("jacobian", _rel_err(mod.jacobian(q), oracle.jacobian(q)), BOUND["jacobian"])
        if "forward_dynamics_fd4" in functions:
            record("forward_dynamics_fd4", _rel_err(mod.forward_dynamics(q, qd, tau, variant="FD4"),
                                                    oracle.aba(q, qd, tau)),
                   max(FD_EPS * np.linalg.cond(Mp) * robot.nv, FD_FLOOR))
    res.errors = worst
    return res


def failures(res):
    """Functions whose error exceeds its bound (empty when the case passes)."""
    return {name: (err, bound) for name, (err, bound) in res.errors.items() if not err <= bound}


# ------------------------------------------------------------------ report
def _summary(res):
    if not res.warnings:
        return ""
    kinds = []
    for text in res.warnings:
        if "D(k)" in text:
            kinds.append(f"{len(res.singular_joints)} joints with D(k) = 0 (FD left out)")
        elif "triangle" in text:
            kinds.append("triangle inequality")
        elif "semi-definite" in text:
            kinds.append("not PSD")
    counted = {k: kinds.count(k) for k in dict.fromkeys(kinds)}
    return "; ".join(f"{n} x {k}" if n > 1 else k for k, n in counted.items())


def table(results):
    """The README's markdown table of the sweep."""
    fns = ["mass_matrix", "inverse_dynamics", "jacobian", "forward_dynamics_fd4"]
    head = ["robot file", "base", "nq / nv", "generate s", "compile s", "M", "inverse dynamics", "Jacobian",
            "forward dynamics (bound)", "warnings"]
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * len(head)]
    for r in results:
        cells = [f"`{display_name(r.rel)}`", "floating" if r.floating else "fixed", f"{r.nq} / {r.nv}"]
        cells += ["cached", "cached"] if r.cached else [f"{r.generate_s:.1f}", f"{r.compile_s:.1f}"]
        for fn in fns:
            if fn not in r.errors:
                cells.append("left out")
                continue
            err, bound = r.errors[fn]
            cells.append(f"{err:.1e} ({bound:.0e})" if fn == "forward_dynamics_fd4" else f"{err:.1e}")
        cells.append(f"{len(r.warnings)}: {_summary(r)}" if r.warnings else "0")
        lines.append("| " + " | ".join(cells) + " |")
    return "\n".join(lines) + "\n"
