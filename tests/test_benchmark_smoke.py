"""benchmarks/run.py end to end on a few states, soagen alone: the timing driver
compiles, runs every generated function and its outputs match the reference
(run.py aborts otherwise). The Pinocchio and CasADi baselines are built by the
full benchmark only (minutes: a header-only Pinocchio build, a venv)."""
from __future__ import annotations

import subprocess
import sys

from tests.support import ROOT


def test_benchmark_runs_and_checks_soagen():
    res = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "run.py"), "--robot", "ur5", "--n", "40",
                          "--reps", "3", "--no-casadi", "--no-pinocchio", "--no-doc"],
                         capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stdout[-2000:] + res.stderr[-2000:]
    assert "soagen: generated" in res.stdout and "outputs checked" in res.stdout
    assert "| inverse_dynamics |" in res.stdout and "skipped (--no-pinocchio)" in res.stdout
