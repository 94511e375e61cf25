"""benchmarks/run.py end to end on a few states and functions, soagen alone (inline and
libm trig, both backends of the interleaved driver): the driver compiles and links, runs
its rounds, every timed function's outputs match the reference (run.py aborts otherwise)
and the report renders. It asserts no timing. The Pinocchio and CasADi baselines are
built by the full benchmark only (minutes: a header-only Pinocchio build, a venv)."""
from __future__ import annotations

import subprocess
import sys

import numpy as np

from tests.support import ROOT, benchmark_report


def test_benchmark_runs_and_checks_soagen():
    functions = "inverse_dynamics,mass_matrix,os_inertia,inverse_dynamics_derivatives"
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--robot", "ur5", "--n", "40",
                          "--rounds", "3", "--functions", functions,
                          "--no-casadi", "--no-pinocchio", "--no-doc"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    out = res.stdout
    assert "timed 3 rounds" in out and "soagen: outputs checked" in out
    assert "3 rounds of soagen, soagen_libm" in out and "skipped (--no-pinocchio)" in out
    assert "outputs of all 40 states of every timed function checked" in out         # not a leading sample
    for fn in ("inverse_dynamics", "mass_matrix", "os_inertia", "inverse_dynamics_derivatives"):
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
