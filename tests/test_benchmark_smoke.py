"""benchmarks/run.py end to end on a few states and functions, soagen alone (inline and
libm trig, both backends of the interleaved driver): the driver compiles and links, runs
its rounds, every timed function's outputs match the reference (run.py aborts otherwise)
and the report renders. It asserts no timing.

The Pinocchio and CasADi baselines are built by the full benchmark only (minutes: a
header-only Pinocchio build, a venv). The conversions of their outputs to soagen's
conventions are checked here without those builds:

* Pinocchio: every entry of ``backends.PIN_MAP`` (one test id each: rnea, crba, aba,
  computeMinverse, computeGeneralizedGravity, nonLinearEffects, computeFrameJacobian,
  framePlacements, the seven Ω / Λ routes, computeRNEADerivatives, computeABADerivatives,
  ccrba, computeCentroidalMap, constraintDynamics and its derivatives) is computed with
  Pinocchio's Python bindings as pinocchio_bench.cpp computes it, on the model file and the
  states file the benchmark writes (``backends.pinocchio_model``, ``states.pinocchio_states``),
  laid out as the C++ writes it (row-major; junk below the upper triangles Pinocchio fills),
  converted by ``soagen_side.from_pinocchio`` and compared with ``soagen.reference``: on the
  Panda (fixed base) and on solo12's free-flyer (two 6-D feet; for the contact entries its
  point feet, and the TALOS's flat feet at rest). pinocchio_bench.cpp itself is not run: the
  Python counterparts of its calls, its row-major copies and its LOCAL to LOCAL_WORLD_ALIGNED
  rotation are.
* CasADi: its outputs are not produced in the suite (casadi is not importable in this venv;
  casadi_kin_dyn.py makes its own venv with pin 2.6.20). Its values are in soagen's
  conventions already (1-dof joints only, same joint order), and ``backends.check_casadi``
  only reshapes its column-major buffers and fills M from a triangle: that is checked on
  ``soagen.reference``'s values laid out as CasADi's buffers, not on CasADi's own values."""
from __future__ import annotations

import dataclasses
import subprocess
import sys

import numpy as np
import pytest

from soagen.model.robots import erd_root
from tests.support import ROOT, benchmark_report

if str(ROOT / "benchmarks") not in sys.path:
    sys.path.insert(0, str(ROOT / "benchmarks"))      # the benchmark's modules import each other by name
import backends as bk
import soagen_side as sg
from specs import SPECS
from states import draw_states, pinocchio_states


def test_benchmark_runs_and_checks_soagen():
    # the contact and centroidal functions too (the solo12 and talos_feet sections' rows, here on the UR5's tool)
    functions = ("inverse_dynamics,mass_matrix,os_inertia,inverse_dynamics_derivatives,contact_dynamics,"
                 "centroidal_momentum_matrix")
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--robot", "ur5", "--n", "40",
                          "--rounds", "3", "--functions", functions,
                          "--no-casadi", "--no-pinocchio", "--no-doc"],
                         check=False, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    out = res.stdout
    assert "timed 3 rounds" in out and "soagen: outputs checked" in out
    assert "3 rounds of soagen, soagen_libm" in out and "skipped (--no-pinocchio)" in out
    assert "outputs of all 40 states of every timed function checked" in out         # not a leading sample
    assert "not checked" not in out
    for fn in ("inverse_dynamics", "mass_matrix", "os_inertia", "inverse_dynamics_derivatives", "contact_dynamics",
               "centroidal_momentum_matrix"):
        row = next(line for line in out.splitlines() if line.startswith(f"| {fn} |"))
        soagen_ns, libm_ns = row.split("|")[2:4]
        assert float(soagen_ns) > 0 and float(libm_ns) > 0, row     # both forms were timed
    assert "| forward_dynamics |" not in out                           # --functions was honoured


def test_ratios_are_medians_of_per_round_ratios():
    report = benchmark_report()
    num, den = [1.0, 2.0, 3.0, 40.0], [2.0, 2.0, 2.0, 2.0]
    s = report.Spread.ratio(num, den)
    ratios = np.array(num) / np.array(den)
    assert (s.median, s.q1, s.q3) == (np.median(ratios), np.percentile(ratios, 25), np.percentile(ratios, 75))
    assert report.fmt_spread(s) == "1.25 (0.88–6.12)"


def test_second_derivative_targets_report_the_ratio_and_the_multiples():
    """The second derivatives' lines of a section: ∂²ID / Pinocchio's headline route against ≤ 0.25 (the
    spread's median, its verdict), each contracted Hessian's ns over its first derivative's, against ≤ 3."""
    report = benchmark_report()

    def row(fn, ns, pin=None):
        pins = [report.Baseline("pinocchio", "ComputeRNEASecondOrderDerivatives", "", 8000.0,
                                report.Spread(*pin))] if pin else []
        return report.Row(fn, fn, ns, None, 0, 0.0, pinocchio=pins)
    rows = [row("inverse_dynamics_derivatives", 400.0), row("inverse_dynamics_hessian", 1000.0),
            row("forward_dynamics_derivatives", 500.0), row("forward_dynamics_hessian", 2000.0),
            row("inverse_dynamics_second_derivatives", 1600.0, (0.2, 0.18, 0.3))]
    lines = report.second_derivative_targets(dataclasses.replace(benchmark_rep(report), rows=rows))
    text = "\n".join(lines)
    assert "`inverse_dynamics_second_derivatives` (∂²ID tensors): soagen / Pinocchio " \
           "`ComputeRNEASecondOrderDerivatives` 0.20 (0.18–0.30) against ≤ 0.25: **met** at the median" in text
    assert "`inverse_dynamics_hessian`: 1000 ns, 2.50 × one `inverse_dynamics_derivatives` call (400 ns" in text
    assert "`forward_dynamics_hessian`: 2000 ns, 4.00 × one `forward_dynamics_derivatives` call" in text
    assert text.count("**met**") == 2 and text.count("**missed**") == 1
    assert report.second_derivative_targets(dataclasses.replace(benchmark_rep(report), rows=rows[:1])) == []


def benchmark_rep(report):
    """A RobotReport with no rows (the fields second_derivative_targets does not read are placeholders)."""
    spread = report.Spread(1.0, 1.0, 1.0)
    return report.RobotReport("r", "r", "", 1, 1, 0, [], [], 1, spread, 0.0, [], [], "", [])


# --------------------------------------------------------------------------- the baselines' conversions
#: the robots: the Panda (fixed base, locked fingers, one 6-D tip) and, for the floating base, solo12 with
#: two feet as 6-D tips (the talos section's shape, a free-flyer and two 6-D tips, at nv = 18 instead of 38)
#: or, for the contact entries, the benchmark's own contact robots: solo12's four point feet (CONTACT_3D)
#: and the TALOS's flat feet (CONTACT_6D) on states with the feet at rest
PIN_ROBOTS = {"panda": SPECS["panda"],
              "solo12_feet6": dataclasses.replace(SPECS["solo12"], name="solo12_feet6", tips=["FL_FOOT", "HR_FOOT"],
                                                  functions=None),
              "solo12": SPECS["solo12"], "talos_feet": SPECS["talos_feet"]}
PIN_STATES = 4
PIN_RTOL = 1e-9           # max |got - want| / max |want|


def pin_robots(kind):
    if kind in ("contact", "contact_derivatives"):
        return ("solo12", "talos_feet")
    if kind == "jacobian":
        return ("panda", "solo12_feet6", "solo12")      # point tips too: each foot's linear rows only
    return ("panda", "solo12_feet6")


class PinocchioSide:
    """One robot as pinocchio_bench.cpp sees it: the model file backends.pinocchio_model writes, loaded
    back; the states file of states.pinocchio_states (run.py's seed), read back as the C++ reads it (q,
    qd, qdd, tau in Pinocchio's conventions); one Data for every entry; the tips' frames; one CONTACT_6D
    LOCAL constraint per tip (its Workspace: the Delassus and constraint-Cholesky routes) and the
    contacts of the constrained-dynamics entries (its ContactWorkspace)."""

    def __init__(self, pin, spec, work):
        self.pin, self.robot = pin, spec.robot()
        self.states = draw_states(self.robot, PIN_STATES, 0, spec.tips_at_rest)
        model = self.model = pin.Model()
        model.loadFromText(str(bk.pinocchio_model(spec, self.robot, work / "model.txt")))
        self.data = model.createData()
        rows = np.fromfile(pinocchio_states(self.robot, self.states, work / "states.bin").path, "<f8")
        rows = rows.reshape(len(self.states), self.states.row)
        nq, nv = model.nq, model.nv
        self.q = rows[:, :nq]
        self.qd, self.qdd, self.tau = (rows[:, nq + k * nv:nq + (k + 1) * nv] for k in range(3))
        self.tips = [model.getFrameId(t.name) for t in self.robot.tips]
        six, lwa = pin.ContactType.CONTACT_6D, pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
        self.local = self.constraints([six] * len(self.tips), pin.ReferenceFrame.LOCAL)
        self.chol = pin.ConstraintCholeskyDecomposition(model, self.data, *self.local)
        self.contacts = self.constraints(
            [pin.ContactType.CONTACT_3D if d == 3 else six for d in sg.contact_dims(self.robot)], lwa)
        pin.initConstraintDynamics(model, self.data, *self.contacts)
        self.settings = pin.ProximalSettings()

    def constraints(self, types, reference):
        pin, model = self.pin, self.model
        cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
        for f, kind in zip(self.tips, types):
            frame = model.frames[f]
            cms.append(pin.RigidConstraintModel(kind, model, frame.parentJoint, frame.placement, reference))
            cds.append(cms[-1].createData())
        return cms, cds


#: {PIN_MAP entry: (PinocchioSide, state) -> the entry's output row as pinocchio_bench.cpp writes it}
PIN_OUTPUTS = {}


def pin_output(label):
    def register(fn):
        PIN_OUTPUTS[label] = fn
        return fn
    return register


def row_major(*parts):
    return np.concatenate([np.ravel(np.asarray(p, float)) for p in parts])


def upper_only(a, i):
    """``a`` as the C++ writes it where Pinocchio fills the upper triangle only (crba, computeMinverse,
    computeABADerivatives' M⁻¹): the strict lower triangle is whatever Data held (the bindings return
    it symmetrized; here junk, which the conversion must not read)."""
    a = np.array(a, float)
    low = np.tril_indices(len(a), -1)
    a[low] = np.random.default_rng(i).normal(size=len(low[0])) * 1e3
    return a


def symmetrised(a):
    """symmetrise_minv / the Delassus routes: the strict lower triangle copied from the upper."""
    return np.triu(a) + np.triu(a, 1).T


def world_aligned(s, a):
    """local_to_world_aligned: B a Bᵀ, B = blockdiag(R_1, R_1, ..., R_m, R_m) of the LOCAL constraints."""
    B = np.zeros_like(a)
    for k, cd in enumerate(s.local[1]):
        for h in (6 * k, 6 * k + 3):
            B[h:h + 3, h:h + 3] = cd.oMc1.rotation
    return B @ a @ B.T


def frame_jacobians(s, i, reuse=False):
    """computeFrameJacobian (LOCAL_WORLD_ALIGNED) per tip, stacked; getFrameJacobian with ``reuse``."""
    pin, lwa = s.pin, s.pin.ReferenceFrame.LOCAL_WORLD_ALIGNED
    return np.vstack([pin.getFrameJacobian(s.model, s.data, f, lwa) if reuse
                      else pin.computeFrameJacobian(s.model, s.data, s.q[i], f, lwa) for f in s.tips])


def minv_symmetrised(s, i):
    return symmetrised(upper_only(s.pin.computeMinverse(s.model, s.data, s.q[i]), i))


def omega(s, i, reuse=False):
    minv = minv_symmetrised(s, i)
    J = frame_jacobians(s, i, reuse)
    return J @ (minv @ J.T)


def delassus_local(s, i):
    m, d = s.model, s.data
    return symmetrised(upper_only(s.pin.computeDelassusMatrix(m, d, s.q[i], *s.local, 0.0), i))


def _flat(call):
    return lambda s, i: row_major(call(s, i))


PIN_OUTPUTS.update({label: _flat(call) for label, call in {
    "rnea": lambda s, i: s.pin.rnea(s.model, s.data, s.q[i], s.qd[i], s.qdd[i]),
    "aba": lambda s, i: s.pin.aba(s.model, s.data, s.q[i], s.qd[i], s.tau[i]),
    "computeGeneralizedGravity": lambda s, i: s.pin.computeGeneralizedGravity(s.model, s.data, s.q[i]),
    "nonLinearEffects": lambda s, i: s.pin.nonLinearEffects(s.model, s.data, s.q[i], s.qd[i]),
    "crba": lambda s, i: upper_only(s.pin.crba(s.model, s.data, s.q[i]), i),
    "computeMinverse": lambda s, i: upper_only(s.pin.computeMinverse(s.model, s.data, s.q[i]), i),
    "computeFrameJacobian": frame_jacobians,
    "omega_minv": omega,
    "lambda_minv": lambda s, i: np.linalg.inv(omega(s, i)),
    "lambda_minv_reuse": lambda s, i: np.linalg.inv(omega(s, i, reuse=True)),   # computeMinverse's kinematics
    "delassus": lambda s, i: world_aligned(s, delassus_local(s, i)),
    "lambda_delassus": lambda s, i: world_aligned(s, np.linalg.inv(delassus_local(s, i))),
    "ccrba": lambda s, i: s.pin.ccrba(s.model, s.data, s.q[i], s.qd[i]),
    "computeCentroidalMap": lambda s, i: s.pin.computeCentroidalMap(s.model, s.data, s.q[i]),
}.items()})


@pin_output("framePlacements")
def _frame_placements(s, i):
    s.pin.forwardKinematics(s.model, s.data, s.q[i])
    return row_major(*[s.pin.updateFramePlacement(s.model, s.data, f).homogeneous for f in s.tips])


@pin_output("lambda_crba_cholesky")
def _lambda_crba_cholesky(s, i):
    pin, m, d = s.pin, s.model, s.data
    pin.crba(m, d, s.q[i], pin.Convention.WORLD)
    pin.cholesky.decompose(m, d)
    J = frame_jacobians(s, i, reuse=True)
    minv_jt = np.column_stack([pin.cholesky.solve(m, d, row.copy()) for row in J])   # the binding solves vectors
    return row_major(np.linalg.inv(J @ minv_jt))


@pin_output("lambda_constraint_cholesky")
def _lambda_constraint_cholesky(s, i):
    pin, m, d = s.pin, s.model, s.data
    pin.computeDelassusMatrix(m, d, s.q[i], *s.local, 0.0)    # the constraints' kinematics (no binding of calc)
    pin.crba(m, d, s.q[i], pin.Convention.WORLD)
    s.chol.compute(m, d, *s.local, 0.0)
    return row_major(world_aligned(s, s.chol.getOperationalSpaceInertiaMatrix()))


@pin_output("computeRNEADerivatives")
def _rnea_derivatives(s, i):
    s.pin.computeRNEADerivatives(s.model, s.data, s.q[i], s.qd[i], s.qdd[i])
    return row_major(s.data.dtau_dq, s.data.dtau_dv)


@pin_output("computeABADerivatives")
def _aba_derivatives(s, i):
    d = s.data
    s.pin.computeABADerivatives(s.model, d, s.q[i], s.qd[i], s.tau[i])
    return row_major(d.ddq, d.ddq_dq, d.ddq_dv, upper_only(d.Minv, i))


@pin_output("constraintDynamics")
def _constraint_dynamics(s, i):
    s.pin.constraintDynamics(s.model, s.data, s.q[i], s.qd[i], s.tau[i], *s.contacts, s.settings)
    return row_major(s.data.ddq, s.data.lambda_c)


@pin_output("computeConstraintDynamicsDerivatives")
def _constraint_dynamics_derivatives(s, i):
    d = s.data
    contact = _constraint_dynamics(s, i)
    s.pin.computeConstraintDynamicsDerivatives(s.model, d, *s.contacts, s.settings)
    return row_major(contact, d.ddq_dq, d.ddq_dv, d.ddq_dtau, d.dlambda_dq, d.dlambda_dv, d.dlambda_dtau)


@pin_output("ComputeRNEASecondOrderDerivatives")
def _rnea_second_order(s, i, h=1e-3):
    """Not in Pinocchio's Python bindings: its meaning from Pinocchio's first derivatives instead, in
    Pinocchio's conventions and laid out as pinocchio_bench.cpp writes the tensors ([i][j][k] row-major):
    d2tau_dqdq[:, :, k] = d/dε dtau_dq(integrate(q, ε e_k)), d2tau_dvdv[:, :, k] = d/dε dtau_dv(v + ε e_k),
    d2tau_dqdv[:, :, k] = d/dε dtau_dq(v + ε e_k), d2tau_dadq[:, :, k] = d/dε M(integrate(q, ε e_k)), each
    by the five-point stencil (error ~h⁴, rounding ~1e-13/h: ~1e-11 relative, where central differences
    would give ~1e-8)."""
    pin, m, d, nv = s.pin, s.model, s.data, s.model.nv
    q, v, a = s.q[i], s.qd[i], s.qdd[i]

    def first(qk, vk):
        dq, dv, da = (np.array(x) for x in pin.computeRNEADerivatives(m, d, qk, vk, a))
        return dq, dv, symmetrised(da)

    def derivative(at):
        return sum(w * np.array(at(t * h)) for t, w in ((-2, 1 / 12), (-1, -2 / 3), (1, 2 / 3), (2, -1 / 12))) / h
    along_q, along_v = np.zeros((2, 3, nv, nv, nv))
    for k in range(nv):
        e = np.eye(nv)[k]
        along_q[..., k] = derivative(lambda t, e=e: first(pin.integrate(m, q, t * e), v))
        along_v[..., k] = derivative(lambda t, e=e: first(q, v + t * e))
    return row_major(along_q[0], along_v[1], along_v[0], along_q[2])


@pin_output("computeCentroidalDynamicsDerivatives")
def _centroidal_dynamics_derivatives(s, i):
    d = s.data
    mats = s.pin.computeCentroidalDynamicsDerivatives(s.model, d, s.q[i], s.qd[i], s.qdd[i])
    return row_major(d.hg.vector, d.dhg.vector, *mats)      # h_G, ḣ_G [linear; angular], four (6, nv)


@pytest.fixture(scope="module")
def pinocchio_side(tmp_path_factory):
    pin = pytest.importorskip("pinocchio")
    sides = {}

    def side(name):
        spec = PIN_ROBOTS[name]
        if spec.erd and erd_root() is None:
            pytest.skip("example-robot-data is not installed")
        if name not in sides:
            sides[name] = PinocchioSide(pin, spec, tmp_path_factory.mktemp(name))
        return sides[name]
    return side


@pytest.mark.parametrize(("fn", "label", "kind"), bk.PIN_MAP, ids=[f"{k}-{lab}" for _, lab, k in bk.PIN_MAP])
def test_pinocchio_outputs_convert_to_soagen(pinocchio_side, fn, label, kind):
    """Every PIN_MAP entry: Pinocchio's output as pinocchio_bench.cpp writes it, converted by
    soagen_side.from_pinocchio, equals soagen.reference to PIN_RTOL of its size, on every state the
    benchmark checks (Λ-based outputs where cond(Ω) is fine); and the benchmark's own check passes."""
    assert label in PIN_OUTPUTS, f"PIN_MAP's {label} has no Python counterpart in this test: add one"
    for name in pin_robots(kind):
        s = pinocchio_side(name)
        rows, checked = [], 0
        for i in range(PIN_STATES):
            got = np.ravel(sg.from_pinocchio(kind, PIN_OUTPUTS[label](s, i), s.robot))   # some kinds give matrices
            rows.append(got)
            if sg.needs_lambda(fn) and not sg._cond_ok(s.robot, s.states.q[i]):
                continue
            want = sg.reference_value(s.robot, s.states, i, fn)
            scale = float(np.abs(want).max())
            assert got.shape == want.shape and scale > 1e-3, (name, i, got.shape, want.shape, scale)
            err = float(np.abs(got - want).max()) / scale
            assert err < PIN_RTOL, f"{label} ({kind}) on {name}, state {i}: relative error {err:.2e}"
            checked += 1
        assert checked >= 2, f"{label} on {name}: {checked} states checked"
        sg.check_outputs(s.robot, s.states, {fn: np.array(rows)}, f"Pinocchio {label} on {name}")


@pytest.mark.parametrize("triangle", ["full", "upper", "lower"])
def test_casadi_outputs_convert_to_soagen(triangle):
    """CasADi's side without CasADi (not importable here; casadi_kin_dyn.py runs in its own venv): its
    values are in soagen's conventions already (1-dof joints, soagen's joint order, no floating base), so
    backends.check_casadi only reshapes CasADi's dense column-major buffers (shapes from the manifest) and
    fills M from the triangle the manifest names. Here soagen.reference's values laid out as those
    buffers (the other triangle junk) go through check_casadi, which must give them back exactly."""
    robot = SPECS["panda"].robot()
    n = robot.n
    states = draw_states(robot, 3, 0)
    shapes = {"rnea": [[n, 1]], "crba": [[n, n]], "aba": [[n, 1]], "rnea_derivatives": [[n, n]] * 2,
              "aba_derivatives": [[n, 1]] + [[n, n]] * 3}
    manifest = {cname: {"output_shapes": s} for cname, s in shapes.items()}
    manifest["crba"]["crba_triangle"] = triangle
    timed = {}
    for fn, cname in bk.CASADI_MAP.items():
        rows = []
        for i in range(len(states)):
            want, parts, pos = sg.reference_value(robot, states, i, fn), [], 0
            assert np.abs(want).max() > 1e-3
            for r, c in shapes[cname]:
                a = want[pos:pos + r * c].reshape(r, c).copy()
                pos += r * c
                if cname == "crba" and triangle != "full":
                    other = np.tril_indices(n, -1) if triangle == "upper" else np.triu_indices(n, 1)
                    a[other] = 1e3 + i
                parts.append(a.ravel(order="F"))
            assert pos == want.size
            rows.append(np.concatenate(parts))
        timed["casadi", cname] = bk.Timed("casadi", cname, "", len(rows[0]), np.ones(1), np.array(rows))
    errors = bk.check_casadi(robot, states, bk.DriverRun(timed, np.ones(1), {}, 1, 0.0, 0.0), manifest)
    assert set(errors) == set(bk.CASADI_MAP.values()) and max(errors.values()) < 1e-15, errors


def test_trig_reads_of_a_cut_function_cover_its_parts():
    """The libm form computes cos/sin of the angles a function reads; a function cut into parts
    (soagen.program.parts) reads them in its parts, and the benchmark must find them there."""
    import soagen
    from soagen.codegen import generate
    from tests.test_parts import small_parts

    options = soagen.Options(functions=["inverse_dynamics"], trig_inputs=True)
    whole = generate(soagen.robots.example("panda"), options, "panda").csource
    with small_parts():
        cut = generate(soagen.robots.example("panda"), options, "panda").csource
    assert cut.parts and not whole.parts
    reads = sg.trig_reads(whole.source, "panda", "inverse_dynamics")
    assert reads == list(range(1, 7))            # q[0] turns about gravity: tau does not depend on it
    assert sg.trig_reads(cut.source, "panda", "inverse_dynamics") == reads


def test_ab_compares_two_generated_files(tmp_path):
    """benchmarks/ab.py times one function of two generated C files and compares their outputs:
    a file against itself agrees exactly, and one output entry changed shows in the difference."""
    whole = (ROOT / "generated" / "puma560" / "puma560.c").read_text()
    header = (ROOT / "generated" / "puma560" / "puma560.h").read_text()
    start = whole.index("void puma560_inverse_dynamics(")
    first = whole.index("\nvoid ")                                  # the helpers above the first function, then ID alone
    source = whole[:first] + whole[start - 1:whole.index("\n}\n", start) + 3]
    changed = source.replace("    tau[0] = ", "    tau[0] = 1.0 + ", 1)
    for name, text in (("old", source), ("new", changed)):
        (tmp_path / f"{name}.c").write_text(text)
        (tmp_path / f"{name}.h").write_text(header)

    def ab(new, *flags):
        res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "ab.py"), str(tmp_path / "old.c"),
                              str(tmp_path / new), "puma560", "inverse_dynamics", "--calls", "5", *flags],
                             capture_output=True, text=True, timeout=300)
        assert res.returncode == 0, res.stderr
        return float(res.stdout.split("max rel diff ")[1])

    assert ab("old.c") == 0
    assert ab("new.c") > 0.1
    # --new-flags: the new file compiled otherwise; flags that change no result agree within round-off
    # (-O1 fuses no multiply-adds), and a flag that defines a macro the C reads is used
    assert ab("old.c", "--new-flags=-O1 -std=c99") < 1e-12
    (tmp_path / "macro.c").write_text(source.replace("    tau[0] = ", "    tau[0] = SHIFT + ", 1))
    (tmp_path / "macro.h").write_text(header)
    assert ab("macro.c", "--new-flags=-O1 -std=c99 -DSHIFT=2.0") > 0.1
