"""benchmarks/run.py end to end on a few states and functions, soagen alone (inline and
libm trig, both backends of the interleaved driver): the driver compiles and links, runs
its rounds, every timed function's outputs match the reference (run.py aborts otherwise)
and the report renders. It asserts no timing. The Pinocchio and CasADi baselines are
built by the full benchmark only (minutes: a header-only Pinocchio build, a venv); the
conversions of Pinocchio's contact and centroidal outputs are checked here through its
Python bindings."""
from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from tests.support import ROOT, benchmark_report


def test_benchmark_runs_and_checks_soagen():
    # the contact and centroidal functions too (the solo12 and talos_feet sections' rows, here on the UR5's tool)
    functions = ("inverse_dynamics,mass_matrix,os_inertia,inverse_dynamics_derivatives,contact_dynamics,"
                 "centroidal_momentum_matrix")
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--robot", "ur5", "--n", "40",
                          "--rounds", "3", "--functions", functions,
                          "--no-casadi", "--no-pinocchio", "--no-doc"],
                         capture_output=True, text=True, timeout=600)
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


def test_pinocchio_contact_and_centroidal_outputs_convert_to_soagen():
    """The new rows' Pinocchio side without the C++ build: the conversions the benchmark applies
    (``soagen_side.from_pinocchio``) to the outputs of ``constraintDynamics``,
    ``computeConstraintDynamicsDerivatives`` and ``ccrba`` laid out as ``pinocchio_bench.cpp`` writes
    them, here from Pinocchio's Python bindings with the same contacts (one RigidConstraintModel per
    foot, LOCAL_WORLD_ALIGNED): solo12's point feet (CONTACT_3D) and the TALOS's flat feet
    (CONTACT_6D, on a state with the feet at rest, as the benchmark draws them), against the reference."""
    pin = pytest.importorskip("pinocchio")
    sys.path.insert(0, str(ROOT / "benchmarks"))
    import soagen_side as sg
    from specs import SPECS
    from states import draw_states

    for name in ("solo12", "talos_feet"):
        spec = SPECS[name]
        robot = spec.robot()
        model = pin.buildModelFromUrdf(str(spec.urdf), pin.JointModelFreeFlyer())
        data = model.createData()
        cms, cds = pin.StdVec_RigidConstraintModel(), pin.StdVec_RigidConstraintData()
        for tip, dim in zip(robot.tips, sg.contact_dims(robot)):
            frame = model.frames[model.getFrameId(tip.name)]
            cms.append(pin.RigidConstraintModel(pin.ContactType.CONTACT_3D if dim == 3 else pin.ContactType.CONTACT_6D,
                                                model, frame.parentJoint, frame.placement,
                                                pin.ReferenceFrame.LOCAL_WORLD_ALIGNED))
            cds.append(cms[-1].createData())
        pin.initConstraintDynamics(model, data, cms, cds)
        states = draw_states(robot, 1, 0, spec.tips_at_rest)
        q, qd, tau = (sg.q_to_pinocchio(robot, states.q[0]), sg.v_to_pinocchio(robot, states.qd[0]),
                      sg.v_to_pinocchio(robot, states.tau[0]))
        settings = pin.ProximalSettings()
        pin.constraintDynamics(model, data, q, qd, tau, cms, cds, settings)
        contact = np.concatenate([data.ddq, data.lambda_c])
        pin.computeConstraintDynamicsDerivatives(model, data, cms, cds, settings)
        derivatives = np.concatenate([contact] + [np.ravel(a) for a in (
            data.ddq_dq, data.ddq_dv, data.ddq_dtau, data.dlambda_dq, data.dlambda_dv, data.dlambda_dtau)])
        centroidal = np.ravel(pin.ccrba(model, data, q, qd))
        for fn, kind, raw in (("contact_dynamics", "contact", contact),
                              ("contact_dynamics_derivatives", "contact_derivatives", derivatives),
                              ("centroidal_momentum_matrix", "centroidal", centroidal)):
            got = sg.from_pinocchio(kind, raw, robot)
            assert sg.rel_error(got, sg.reference_value(robot, states, 0, fn)) < sg.TOLERANCE, (name, fn)
