"""What a benchmark run reports: summaries as small data classes, their JSON, the markdown.

``docs/benchmarks.json`` holds one :class:`RobotReport` per robot; ``docs/benchmarks.md``
and the guide's speed block (docs/guide/speed.md) are rendered from it (:func:`markdown_page`,
:func:`readme_speed`), so a test can check that both are what the JSON says.
This module needs nothing but the standard library (the tests import it).
"""
from __future__ import annotations

import json
import statistics
from dataclasses import asdict, dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
DOC = ROOT / "docs" / "benchmarks.md"
DATA = ROOT / "docs" / "benchmarks.json"
ORDER = ("panda", "ur5", "talos", "talos_derivatives", "solo12", "talos_feet", "panda_second", "solo12_second",
         "talos_second")   # robots' order on the page and in the README


# --------------------------------------------------------------------------- summaries
def percentile(values, p):
    """Linear-interpolation percentile (numpy's default) of a list of numbers."""
    xs = sorted(values)
    k = (len(xs) - 1) * p / 100.0
    lo = int(k)
    hi = min(lo + 1, len(xs) - 1)
    return xs[lo] + (xs[hi] - xs[lo]) * (k - lo)


@dataclass
class Spread:
    """Median and interquartile range (25th, 75th percentile) of per-round values."""

    median: float
    q1: float
    q3: float

    @classmethod
    def of(cls, values):
        values = [float(v) for v in values]
        return cls(statistics.median(values), percentile(values, 25), percentile(values, 75))

    @classmethod
    def ratio(cls, num, den):
        """Of the per-round ratios num[r] / den[r]."""
        return cls.of([a / b for a, b in zip(num, den)])


@dataclass
class Baseline:
    """One baseline timed against a soagen function."""

    backend: str                 # "pinocchio" or "casadi"
    name: str                    # its entry in the driver
    calls: str                   # what one timed call runs
    ns: float                    # median over rounds, ns per call
    ratio: Spread                # soagen / baseline, per round
    ratio_libm: Spread = None    # soagen with libm sin/cos / baseline, per round


@dataclass
class Row:
    """One soagen function and the baselines computing the same quantity."""

    function: str
    family: str                  # the function a variant stands in for (itself if none)
    soagen_ns: float             # median over rounds, ns per call, inline sin/cos
    soagen_libm_ns: float        # the same with cos/sin of q by libm in the timed call
    operations: int              # mul + add + div + sqrt of its program
    generation_s: float          # soagen's symbolic stage
    compile_s: float = None      # gcc -O2 -c of its own translation unit
    pinocchio: list = field(default_factory=list)   # [Baseline], fastest first (the headline)
    casadi: Baseline = None


@dataclass
class PythonRow:
    """The Python module on one function: ns per state."""

    function: str
    c_ns: float                  # the C loop of the driver
    single_ns: float             # one call from Python per state
    batch_ns: float              # one batch call on BATCH_ROWS states
    out_ns: float                # the same into a reused out= array


@dataclass
class RobotReport:
    """Everything docs/benchmarks.md says about one robot."""

    robot: str
    title: str
    command: str
    n: int
    rounds: int
    seed: int
    machine: list                # markdown bullet lines
    rows: list                   # [Row]
    chunk: int                   # a pass's ns per call is that of its median chunk of this many states
    round_ms: Spread             # wall time of a round (every backend once)
    overhead_ms: float           # the driver process outside its rounds (start, setup, warm-up, outputs)
    backends: list               # names of the backends timed
    notes: list                  # markdown bullet lines
    python_intro: str
    python: list                 # [PythonRow]
    seconds: float = None        # the whole command, wall

    @classmethod
    def from_dict(cls, d):
        d = dict(d)

        def baseline(b):
            if b is None:
                return None
            b = dict(b)
            b["ratio"] = Spread(**b["ratio"])
            b["ratio_libm"] = Spread(**b["ratio_libm"]) if b.get("ratio_libm") else None
            return Baseline(**b)

        rows = []
        for r in d["rows"]:
            r = dict(r)
            r["pinocchio"] = [baseline(b) for b in r["pinocchio"]]
            r["casadi"] = baseline(r["casadi"])
            rows.append(Row(**r))
        d["rows"] = rows
        d["round_ms"] = Spread(**d["round_ms"])
        d["python"] = [PythonRow(**p) for p in d["python"]]
        return cls(**d)


def load(path=DATA, skip_stale=False):
    """{robot: RobotReport} of a JSON file (empty when there is none); with ``skip_stale``,
    robots written by an older version of this module are left out (with a note)."""
    if not Path(path).exists():
        return {}
    reports = {}
    for name, d in json.loads(Path(path).read_text()).items():
        try:
            reports[name] = RobotReport.from_dict(d)
        except TypeError as exc:
            if not skip_stale:
                raise
            print(f"({path}: dropping {name}, written by an older benchmark ({exc}); rerun it)")
    return reports


def dumps(reports):
    ordered = {name: asdict(reports[name]) for name in sorted(reports, key=_order)}
    return json.dumps(ordered, indent=1, ensure_ascii=False) + "\n"


def _order(name):
    return (ORDER.index(name) if name in ORDER else len(ORDER), name)


# --------------------------------------------------------------------------- markdown
def fmt_ns(x):
    return "n/a" if x is None else (f"{x:.0f}" if x >= 100 else f"{x:.1f}")


def fmt_spread(s):
    """'0.13 (0.12–0.14)': median of the per-round ratios and their interquartile range."""
    return "n/a" if s is None else f"{s.median:.2f} ({s.q1:.2f}–{s.q3:.2f})"


def main_table(rep):
    """Every soagen function; Pinocchio's other routes to the same quantity on ″ rows under it."""
    lines = ["| function | soagen ns | soagen, libm sin/cos ns | Pinocchio: calls timed | Pinocchio ns "
             "| soagen / Pinocchio | soagen libm / Pinocchio | CasADi ns | soagen / CasADi | soagen libm / CasADi |",
             "|---|---:|---:|---|---:|---:|---:|---:|---:|---:|"]
    for r in rep.rows:
        p = r.pinocchio[0] if r.pinocchio else None
        c = r.casadi
        lines.append(f"| {r.function} | {fmt_ns(r.soagen_ns)} | {fmt_ns(r.soagen_libm_ns)} "
                     f"| {p.calls if p else '—'} | {fmt_ns(p.ns if p else None)} "
                     f"| {fmt_spread(p.ratio if p else None)} | {fmt_spread(p.ratio_libm if p else None)} "
                     f"| {fmt_ns(c.ns if c else None)} | {fmt_spread(c.ratio if c else None)} "
                     f"| {fmt_spread(c.ratio_libm if c else None)} |")
        for p in r.pinocchio[1:]:
            lines.append(f"| ″ | | | {p.calls} | {fmt_ns(p.ns)} | {fmt_spread(p.ratio)} "
                         f"| {fmt_spread(p.ratio_libm)} | | | |")
    return lines


def cost_table(rep):
    lines = ["| function | operations (mul + add + div + sqrt) | generation s | gcc -O2 -c s |",
             "|---|---:|---:|---:|"]
    for r in rep.rows:
        cc = "n/a" if r.compile_s is None else f"{r.compile_s:.2f}"
        lines.append(f"| {r.function} | {r.operations} | {r.generation_s:.2f} | {cc} |")
    return lines


def python_table(rep):
    lines = ["| function | C loop ns/call | Python single call ns (calls/s) | Python batch ns/state "
             "| batch / C loop | batch into `out=` ns/state | `out=` / C loop |", "|---|---:|---:|---:|---:|---:|---:|"]

    def ratio(a, b):
        return "n/a" if a is None or b is None else f"{a / b:.2f}"

    for p in rep.python:
        lines.append(f"| {p.function} | {fmt_ns(p.c_ns)} | {fmt_ns(p.single_ns)} ({1e9 / p.single_ns:,.0f}) "
                     f"| {fmt_ns(p.batch_ns)} | {ratio(p.batch_ns, p.c_ns)} | {fmt_ns(p.out_ns)} "
                     f"| {ratio(p.out_ns, p.c_ns)} |")
    return lines


# the project's targets for the derivatives: soagen / baseline ratios (measured in one run) and, for the
# record, GRiD's published Pinocchio + CppADCodeGen times for the 7-dof iiwa on a 3.8 GHz desktop
DERIVATIVE_TARGETS = (  # (function, quantity, ≤ this × Pinocchio, ≤ this × CasADi, GRiD's ns)
    ("inverse_dynamics_derivatives", "∇ID", 0.25, 0.6, 1400.0),
    ("forward_dynamics_derivatives", "∇FD", 0.25, 0.6, 2500.0),
)
#: the humanoid's (a title with "floating base": the TALOS) target against Pinocchio
HUMANOID_PINOCCHIO_TARGET = 0.3


def _verdict(spread, target):
    if spread is None:
        return "n/a"
    if spread.q3 <= target:
        return "**met** (over the whole interquartile range)"
    if spread.median <= target:
        return "**met** at the median, not over the interquartile range"
    return "**missed**"


# the contact and centroidal rows' targets (issue item 7): soagen / Pinocchio's headline route
CONTACT_TARGETS = (  # (function, quantity, ≤ this × Pinocchio)
    ("contact_dynamics", "contact dynamics", 0.25),
    ("centroidal_momentum_matrix", "centroidal momentum matrix", 0.25),
    ("contact_dynamics_derivatives", "contact dynamics derivatives", 0.3),
)


def contact_targets(rep):
    """Lines comparing the contact and centroidal rows' ratios with the project's targets (none without them)."""
    lines = []
    for fn, quantity, target in CONTACT_TARGETS:
        r = next((r for r in rep.rows if r.function == fn), None)
        if r is None:
            continue
        p = r.pinocchio[0] if r.pinocchio else None
        lines.append(f"- `{fn}` ({quantity}): soagen / Pinocchio `{p.name if p else 'n/a'}` "
                     f"{fmt_spread(p.ratio if p else None)} against ≤ {target:g}: "
                     f"{_verdict(p.ratio if p else None, target)}")
    if not lines:
        return []
    return ["The project's targets for these rows (ratios measured in this run, against Pinocchio's fastest "
            "route; met: median ≤ target):", "", *lines, ""]


def derivative_targets(rep):
    """Lines comparing the derivatives' ratios with the project's targets (none without derivative rows)."""
    lines = []
    for fn, quantity, pin_target, cas_target, grid_ns in DERIVATIVE_TARGETS:
        pin_target = HUMANOID_PINOCCHIO_TARGET if "floating base" in rep.title else pin_target
        r = next((r for r in rep.rows if r.function == fn), None)
        if r is None:
            continue
        p, c = (r.pinocchio[0] if r.pinocchio else None), r.casadi
        lines.append(
            f"- `{fn}` ({quantity}): soagen / Pinocchio `{p.name if p else 'n/a'}` "
            f"{fmt_spread(p.ratio if p else None)} against ≤ {pin_target:g}: {_verdict(p.ratio if p else None, pin_target)}; "
            f"soagen / CasADi {fmt_spread(c.ratio if c else None)} against ≤ {cas_target:g}: "
            f"{_verdict(c.ratio if c else None, cas_target)}; soagen {fmt_ns(r.soagen_ns)} ns here against "
            f"half of GRiD's {grid_ns / 1e3:g} µs ({grid_ns / 2e3:g} µs): "
            f"{'below' if r.soagen_ns <= grid_ns / 2 else 'above'} (a different robot, the iiwa, and machine)")
    if not lines:
        return []
    intro = ("The project's targets for the derivatives (ratios measured in this run; met: median ≤ target). "
             "GRiD's figures are its published Pinocchio + CppADCodeGen times for the 7-dof iiwa on a 3.8 GHz "
             "desktop, for the record only:")
    return [intro, "", *lines, ""]


# the second derivatives' targets (issue #57 item 5): the ∂²ID tensors against Pinocchio's
# ComputeRNEASecondOrderDerivatives, and each contracted Hessian's cost in calls of its first derivative
SECOND_TARGETS = (("inverse_dynamics_second_derivatives", "∂²ID tensors", 0.25),)
HESSIAN_OF = (("inverse_dynamics_hessian", "inverse_dynamics_derivatives"),
              ("forward_dynamics_hessian", "forward_dynamics_derivatives"),
              ("contact_dynamics_hessian", "contact_dynamics_derivatives"))
HESSIAN_AIM = 3.0        # a contracted Hessian ≤ this × one first-derivative call


def second_derivative_targets(rep):
    """Lines on the second derivatives' rows (none without them): ∂²ID / Pinocchio against its target, and
    each contracted Hessian's ns as a multiple of one call of its first derivative (ratio of the medians)."""
    rows = {r.function: r for r in rep.rows}
    lines = []
    for fn, quantity, target in SECOND_TARGETS:
        if fn in rows:
            p = rows[fn].pinocchio[0] if rows[fn].pinocchio else None
            lines.append(f"- `{fn}` ({quantity}): soagen / Pinocchio `{p.name if p else 'n/a'}` "
                         f"{fmt_spread(p.ratio if p else None)} against ≤ {target:g}: "
                         f"{_verdict(p.ratio if p else None, target)}")
    for hessian, first in HESSIAN_OF:
        if hessian in rows and first in rows:
            x = rows[hessian].soagen_ns / rows[first].soagen_ns
            lines.append(f"- `{hessian}`: {fmt_ns(rows[hessian].soagen_ns)} ns, {x:.2f} × one `{first}` call "
                         f"({fmt_ns(rows[first].soagen_ns)} ns; ratio of the medians) against an aim of "
                         f"≤ {HESSIAN_AIM:g}: {'**met**' if x <= HESSIAN_AIM else '**missed**'}")
    if not lines:
        return []
    return ["The second derivatives' targets (measured in this run; met: median ≤ target):", "", *lines, ""]


def markdown_section(rep):
    """The markdown section of one robot."""
    rounds = rep.round_ms
    lines = [f"## {rep.title}", "",
             f"Command: `{rep.command}` ({'' if rep.seconds is None else f'{rep.seconds:.0f} s; '}"
             f"N = {rep.n} random states, seed {rep.seed}; {rep.rounds} rounds of "
             f"{', '.join(rep.backends)}).", ""]
    lines += rep.machine + [""]
    lines += main_table(rep) + [""]
    lines += [f"ns: median over the rounds of one pass's ns per call, a pass counting its median chunk of "
              f"{rep.chunk} consecutive states. Ratios: soagen ns / baseline ns "
              "(below 1: soagen is faster), the median of the per-round ratios with their interquartile "
              "range in parentheses. ″ rows: Pinocchio's other routes to the same quantity, fastest first "
              "(the first row is the headline). \"soagen libm\": soagen's trig-inputs form, each timed call "
              "computing cos and sin of the joint angles it reads with libm first, as Pinocchio and CasADi do.",
              "",
              f"A round (every backend once over the {rep.n} states) took {rounds.median:.0f} ms "
              f"(interquartile {rounds.q1:.0f}–{rounds.q3:.0f} ms); the one driver process spent "
              f"{rep.overhead_ms:.0f} ms outside its rounds (start, reading states, setting up the backends, "
              f"the warm-up round, the outputs for the checks), which a process per round would pay every "
              f"round.", ""]
    lines += derivative_targets(rep) + contact_targets(rep) + second_derivative_targets(rep)
    lines += rep.notes + [""]
    lines += cost_table(rep) + [""]
    lines += [rep.python_intro] + (["", *python_table(rep)] if rep.python else [])
    return "\n".join(lines) + "\n"


PREAMBLE = """# Benchmarks

soagen's generated C against Pinocchio (C++) and CasADi-generated C (via casadi_kin_dyn) on the
same random states, with every backend's outputs checked against `soagen.reference` first.
Each robot's section is the output of the command it names (`python benchmarks/run.py --robot
panda`, `ur5`, `talos`, `talos_derivatives`, `solo12`, `talos_feet`, `panda_second`,
`solo12_second`, `talos_second`; `--help` for N, rounds, seed), which rewrites that section here and in
`docs/benchmarks.json`; this page is rendered from that JSON (a test checks both, and that the
README's speed table is rendered from it too).

How the numbers are taken:

- **Every baseline at its best settings.** soagen's C, CasADi's C and Pinocchio's C++ are all
  compiled `-O3 -march=native -ffp-contract=fast` (Pinocchio header-only, `-DNDEBUG`, so every
  algorithm is inlined for this CPU); CasADi's functions are rebuilt with CasADi's own
  common-subexpression elimination (`cse`) before code generation. A long soagen file also gets
  the two gcc flags its build gives long units (`GCC_LONG_UNIT_ARGS`: a lighter register
  allocator search, which shortens the compile and changes run times by under 1%).
- **Interleaved.** One driver process (`benchmarks/bench_driver.c`) links every backend and
  runs rounds: in each round every backend makes one pass over all states for each of its
  functions, the backends in rotating order. A pass starts with one untimed call (the other
  passes have evicted its code from cache) and reports the ns per call of its median chunk of
  consecutive states, so that a chunk the scheduler interrupted does not count. This machine
  is shared (2 cores, other jobs running): a slow period lands on every backend of the rounds
  it spans instead of on whichever backend happened to be running, so the per-round ratio
  soagen / baseline stays meaningful when absolute times do not. Each ratio is the **median of
  the per-round ratios**, with the **interquartile range** (25th–75th percentile of those
  ratios) beside it: the spread says how far one round's ratio can move, and a difference
  smaller than it is noise. Interleaving protects the ratios from slow periods, not from what
  the other jobs do to the shared core and caches while a pass runs: runs at different load
  can differ by more than one run's spread, so each section lists the load average at the
  start and end of its run. One process rather than a process per round: a process pays its
  start, the states, the setup of Pinocchio's model and a warm-up pass (cold caches) before
  timing anything, an overhead each section reports, and separate processes would also be
  scheduled apart.
- **What differs is said.** soagen inlines its own sin/cos; Pinocchio and CasADi call libm.
  The "soagen libm" columns time soagen's trig-inputs form (`generate(..., trig_inputs=True)`)
  with cos and sin of the joint angles the function reads computed by libm inside each timed
  call (one glibc `sincos` per angle, as in Pinocchio's and CasADi's compiled code), so the gap
  between the two soagen columns is what the inline trig is worth. The Pinocchio column names
  the calls each row times.
- **Derivatives.** `inverse_dynamics_derivatives` (∂τ/∂q, ∂τ/∂q̇) is timed against Pinocchio's
  `computeRNEADerivatives` and CasADi's C of `jacobian(rnea, q)`, `jacobian(rnea, v)`;
  `forward_dynamics_derivatives` (q̈, ∂q̈/∂q, ∂q̈/∂q̇, M⁻¹) against `computeABADerivatives`, which
  computes the same four (M⁻¹ as its upper triangle), and CasADi's C of aba with its Jacobians
  w.r.t. q, v, τ; the CasADi functions are built from casadi_kin_dyn's SX graphs and rebuilt with
  `cse` like the others. Pinocchio's outputs are row-major and, for the fixed-base robots with
  revolute joints, already in soagen's conventions. The TALOS's derivatives have a section of
  their own, `talos_derivatives` (the `talos` run takes about 19 minutes without them); there
  Pinocchio's free-flyer columns and rows are converted to soagen's [ω; v] order.

- **Contacts and centroidal quantities.** The `solo12` (four point feet) and `talos_feet` (the
  TALOS with its two flat feet as tips) sections time `contact_dynamics` (q̈ and the contact
  forces f with a rigid contact at every foot) against Pinocchio's `constraintDynamics`, one
  `RigidConstraintModel` per foot (CONTACT_3D for a point foot, CONTACT_6D for a flat one,
  LOCAL_WORLD_ALIGNED; `initConstraintDynamics` in the setup, untimed),
  `contact_dynamics_derivatives` against `constraintDynamics` followed by
  `computeConstraintDynamicsDerivatives`, `centroidal_momentum_matrix` against `ccrba` and
  `computeCentroidalMap`, and `centroidal_dynamics_derivatives` (h_G, ḣ_G and their derivatives
  along q and q̇, with A_G) against `computeCentroidalDynamicsDerivatives`. Their numpy references are slow (about a second a state for the contact
  derivatives), so the first states of these runs are checked against `soagen.reference` and
  the others against Pinocchio's checked outputs; each section says how many.
- **Second derivatives.** The `panda_second`, `solo12_second` and `talos_second` sections time
  `inverse_dynamics_second_derivatives` (∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇, ∂M/∂q, each nv × nv × nv) against
  Pinocchio's C++ `ComputeRNEASecondOrderDerivatives` (not in its Python bindings; the call zeroes its
  four tensors first, as the algorithm requires), whose outputs are checked against `soagen.reference`
  like every other entry, and the contracted Hessians (`inverse_dynamics_hessian`,
  `forward_dynamics_hessian`, `contact_dynamics_hessian`: the symmetric Hessian of λᵀ of the outputs,
  3nv × 3nv) beside the first derivative each is reported as a multiple of; the weights λ are drawn
  with the states.

Needs gcc/g++; talos needs the `example-robot-data` wheel; Pinocchio timings need the `pin`
wheel plus `cmeel-eigen` (Eigen headers, which the wheel does not ship); CasADi timings the
helper `benchmarks/casadi_kin_dyn.py`, which makes its own venv (it supports 1-dof joints only,
so talos has no CasADi column). Whatever is missing is reported as n/a with the reason. Numbers
are ns per call, single-threaded, and depend on the machine listed in each section.
"""


def markdown_page(reports):
    """docs/benchmarks.md from {robot: RobotReport}."""
    return PREAMBLE + "".join(f"\n<!-- begin {name} -->\n{markdown_section(reports[name])}<!-- end {name} -->\n"
                              for name in sorted(reports, key=_order))


def write_docs(rep, data=DATA, doc=DOC):
    """Put ``rep`` into docs/benchmarks.json (other robots kept) and render docs/benchmarks.md."""
    reports = load(data, skip_stale=True)
    reports[rep.robot] = rep
    Path(data).write_text(dumps(reports))
    Path(doc).write_text(markdown_page(reports))


# --------------------------------------------------------------------------- the README's speed block
README_ROWS = (  # (quantity, soagen function)
    ("inverse dynamics", "inverse_dynamics"),
    ("mass matrix M", "mass_matrix"),
    ("M⁻¹ (`mass_matrix_inverse`, cheapest algorithm)", "mass_matrix_inverse"),
    ("forward dynamics (`forward_dynamics`, cheapest algorithm)", "forward_dynamics"),
    ("forward dynamics FD4 (ABA's algorithm)", "forward_dynamics_fd4"),
    ("Jacobian", "jacobian"),
    ("Λ(0) (`os_inertia`, cheapest algorithm)", "os_inertia"),
    ("Λ(0) by the O(n) recursion", "os_inertia_recursive"),
    ("Λ(0) as (J M⁻¹ Jᵀ)⁻¹", "os_inertia_explicit"),
    ("∂τ/∂q, ∂τ/∂q̇ (`inverse_dynamics_derivatives`)", "inverse_dynamics_derivatives"),
    ("q̈, ∂q̈/∂q, ∂q̈/∂q̇, M⁻¹ (`forward_dynamics_derivatives`)", "forward_dynamics_derivatives"),
    ("contact dynamics q̈, f (`contact_dynamics`, a rigid contact at every foot)", "contact_dynamics"),
    ("centroidal momentum matrix A_G", "centroidal_momentum_matrix"),
    ("q̈, f and their derivatives along q, q̇, τ (`contact_dynamics_derivatives`)", "contact_dynamics_derivatives"),
    ("h_G, ḣ_G and their derivatives along q, q̇ (`centroidal_dynamics_derivatives`)",
     "centroidal_dynamics_derivatives"),
    ("∂²τ/∂q², ∂²τ/∂q̇², ∂²τ/∂q∂q̇, ∂M/∂q (`inverse_dynamics_second_derivatives`)",
     "inverse_dynamics_second_derivatives"),
)
README_NAMES = {"panda": "Panda", "ur5": "UR5", "talos": "TALOS", "solo12": "Solo-12 (4 point feet)",
                "talos_feet": "TALOS (2 flat feet)", "talos_derivatives": "TALOS (two hands)",
                "panda_second": "Panda (second derivatives)", "solo12_second": "Solo-12 (second derivatives)",
                "talos_second": "TALOS (second derivatives)"}
#: the sections of the second derivatives: only their own row in the speed block (the first derivatives they
#: also time, as the unit of the contracted Hessians, have their rows from the other sections)
SECOND_SECTIONS = ("panda_second", "solo12_second", "talos_second")
SECOND_ROWS = ("inverse_dynamics_second_derivatives",)


def readme_speed(reports):
    """The README's speed block (between ``<!-- speed:begin -->`` and ``<!-- speed:end -->``)."""
    names = sorted(reports, key=_order)
    lines = ["| quantity | robot | soagen ns | Pinocchio: calls timed | Pinocchio ns | soagen / Pinocchio "
             "| soagen libm / Pinocchio | CasADi ns | soagen / CasADi | soagen libm / CasADi |",
             "|---|---|---:|---|---:|---:|---:|---:|---:|---:|"]
    for quantity, fn in README_ROWS:
        for name in names:
            row = next((r for r in reports[name].rows if r.function == fn), None)
            if row is None or (name in SECOND_SECTIONS) != (fn in SECOND_ROWS):
                continue
            p, c = (row.pinocchio[0] if row.pinocchio else None), row.casadi
            lines.append(f"| {quantity} | {README_NAMES.get(name, name)} | {fmt_ns(row.soagen_ns)} "
                         f"| {p.calls if p else '—'} | {fmt_ns(p.ns if p else None)} "
                         f"| {fmt_spread(p.ratio if p else None)} | {fmt_spread(p.ratio_libm if p else None)} "
                         f"| {fmt_ns(c.ns if c else None)} | {fmt_spread(c.ratio if c else None)} "
                         f"| {fmt_spread(c.ratio_libm if c else None)} |")
    lines += ["", "Ratios: median of the per-round ratios (interquartile range). "
              + "; ".join(f"{README_NAMES.get(n, n)}: N = {reports[n].n} states, {reports[n].rounds} rounds, "
                          f"`{reports[n].command}`" for n in names) + "."]
    calls = load_python_calls()
    ratios = {n: [f["ratio"]["median"] for f in calls[n]["functions"].values() if f["ratio"]]
              for n in PYTHON_CALL_ROBOTS if n in calls}
    wrapper = [f["wrapper_ns"] for f in calls["panda"]["functions"].values()] if "panda" in calls else [0.0]
    batch = {n: [p.batch_ns / p.c_ns for p in reports[n].python if p.batch_ns] for n in names}
    lines += ["", "From Python (`soagen.build`, one state per call, `python benchmarks/python_calls.py`, "
              "docs/python_calls.md): a method call takes "
              + ", ".join(f"{min(r):.2f}–{max(r):.2f}× ({README_NAMES.get(n, n)})" for n, r in ratios.items())
              + f" Pinocchio's Python call, of which the wrapper (the call less the C) is "
                f"{min(wrapper) / 1e3:.2f}–{max(wrapper) / 1e3:.2f} µs on the Panda"
              + "; a batch call costs per state "
              + ", ".join(f"{min(batch[n]):.2f}–{max(batch[n]):.2f}× ({README_NAMES.get(n, n)})"
                          for n in names if batch[n])
              + " the driver's C loop (functions and batch size in docs/benchmarks.md)."]
    return "\n".join(lines) + "\n"


PYTHON_CALLS = ROOT / "docs" / "python_calls.json"     # benchmarks/python_calls.py's output
PYTHON_CALL_ROBOTS = ("panda", "solo12", "talos")
#: the README's "from Python" table: (column, function)
PYTHON_CALL_COLUMNS = (("inverse dynamics", "inverse_dynamics"), ("M", "mass_matrix"), ("M⁻¹", "mass_matrix_inverse"),
                       ("forward dynamics", "forward_dynamics"), ("J", "jacobian"), ("Λ(0)", "os_inertia"),
                       ("∂τ", "inverse_dynamics_derivatives"), ("∂q̈", "forward_dynamics_derivatives"))
PYTHON_CALL_NAMES = {"panda": "Panda (7 joints)", "solo12": "Solo-12 (12 joints, floating base, 4 point feet)",
                     "talos": "TALOS (32 joints, floating base, 2 hands)"}


def load_python_calls(path=PYTHON_CALLS):
    """``{robot: report}`` of benchmarks/python_calls.py (its JSON as written)."""
    return json.loads(Path(path).read_text())


def python_calls_table(calls):
    """The README's "from Python" table: per robot, each method's µs per call and its ratio to
    Pinocchio's Python call (median of the per-round ratios)."""
    lines = ["| robot | " + " | ".join(c for c, _ in PYTHON_CALL_COLUMNS) + " |",
             "|---|" + "---|" * len(PYTHON_CALL_COLUMNS)]
    for name in PYTHON_CALL_ROBOTS:
        if name in calls:
            rows = calls[name]["functions"]
            lines.append(f"| {PYTHON_CALL_NAMES[name]} | " + " | ".join(
                f"{rows[f]['method_ns'] / 1e3:.2f} µs ({rows[f]['ratio']['median']:.2f}×)"
                for _, f in PYTHON_CALL_COLUMNS) + " |")
    return "\n".join(lines) + "\n"


def fmt_us(ns):
    """ns as µs with two decimals ("–" for none)."""
    return "–" if ns is None else f"{ns / 1000:.2f}"


def python_calls_page(report):
    """docs/python_calls.md from benchmarks/python_calls.py's report: a section per robot."""
    out = ["# From Python: one state per call", "",
           "Written by `python benchmarks/python_calls.py --robot NAME` (module docstring: how). Per function:",
           "soagen's method with fresh outputs and with `out=`; the bare C (the function's scalar batch,",
           "per state); the wrapper's own cost (method − C, median over rounds); the method's Python path",
           "(`mod.f.__wrapped__`, what every call took before the methods' C entry, and what calls that need",
           "a conversion take); Pinocchio's Python call on the same states; soagen / Pinocchio per round,",
           "median (interquartile range). µs per call. The bare C writes every state's outputs to memory",
           "of its own (64 states); where they are large (the TALOS's forward-dynamics derivatives, 46 kB a",
           "state) that costs more than a single call writing into memory the cache holds, and the wrapper",
           "column goes below zero.", "",
           "The Panda's section times every method of the catalogue (`soagen functions`, the algorithm",
           "variants aside), the Solo-12's and the TALOS's the eight of the README's table. Pinocchio's call",
           "is named beside its time, a composition of its calls where it has no single one (as a Python",
           "user writes it); \"–\" where Pinocchio has no counterpart. Before timing, soagen's outputs",
           "are checked equal to Pinocchio's on every state: inverse and forward dynamics and M on every",
           "robot, and on the Panda G, C + G, C, the com and its Jacobian, T, J, J̇q̇, the tip-force rows,",
           "Ω(0), Y π, A_G, its bias, ∂h_G/∂q and the impulse dynamics (not the contact dynamics, whose",
           "6-D contact Pinocchio holds as soagen does only with the tip at rest, for the same work).",
           "Number inputs (`e`, `dt`) are given as Python floats. Every method of a module takes the C",
           "entry (`soagen.targets.c99.fastcall`), whatever the rank of its outputs; two build options",
           "keep the Python path for the methods they change: `trig_inputs=True` (the method computes",
           "cos q and sin q in numpy first) and `parameters=\"inputs\"` (the parameters come as the",
           "keyword `pi=`, one row for every state of a batch or one row each). A call that needs a",
           "conversion (a list, another dtype, a strided, Fortran-order or misaligned array) takes the",
           "Python path: the Python path column.", ""]
    for name in PYTHON_CALL_ROBOTS:
        rep = report.get(name)
        if rep is None:
            continue
        out += [f"## {name}", "",
                f"{rep['describe']}; {rep['states']} states, {rep['rounds']} rounds; {rep['machine']}, Python {rep['python']}, "
                f"Pinocchio {rep['pinocchio']}, numpy {rep['numpy']}; module built in {rep['build_s']:.0f} s "
                f"(`{rep['command']}`).", "",
                "| function | soagen method | with out= | bare C | wrapper | Python path | Pinocchio (call) | ratio |",
                "|---|---|---|---|---|---|---|---|"]
        for fn, row in rep["functions"].items():
            r = row["ratio"]
            pin = f"{fmt_us(row['pinocchio_ns'])} (`{row['pinocchio']}`)" if row["pinocchio"] else "–"
            out.append(f"| {fn} | {fmt_us(row['method_ns'])} | {fmt_us(row['out_ns'])} | {fmt_us(row['c_ns'])} | "
                       f"{fmt_us(row['wrapper_ns'])} | {fmt_us(row['python_ns'])} | {pin} | "
                       + (f"{r['median']:.2f}× ({r['q1']:.2f}–{r['q3']:.2f}) |" if r else "– |"))
        out.append("")
    return "\n".join(out)



README = ROOT / "docs" / "guide" / "speed.md"   # the guide page with the speed block
BEGIN, END = "<!-- speed:begin -->\n", "<!-- speed:end -->"


def readme_block(text):
    """The text between the README's speed markers."""
    return text.split(BEGIN, 1)[1].split(END, 1)[0]


def update_readme(reports, path=README):
    """Rewrite the README's speed block from ``reports``."""
    text = Path(path).read_text()
    Path(path).write_text(text.replace(BEGIN + readme_block(text) + END, BEGIN + readme_speed(reports) + END))


if __name__ == "__main__":
    # python benchmarks/report.py: docs/benchmarks.md and the guide's speed block from docs/benchmarks.json
    committed = load()
    DOC.write_text(markdown_page(committed))
    update_readme(committed)
    print(f"rendered {DOC.relative_to(ROOT)} and the speed block of {README.relative_to(ROOT)} from docs/benchmarks.json")
