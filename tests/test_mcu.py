"""The emitted C on emulated microcontrollers: cross-compiled with
arm-none-eabi-gcc for a Cortex-M4F (hard float) and a Cortex-M0 (soft float),
run bare-metal under qemu-system-arm (MPS2 boards, semihosting).

Tolerance, from a float32 forward error analysis: every output is computed by
a chain of at most L dependent roundings (L = the program's critical path, see
:func:`soagen.mcu.critical_path`), each with relative error u = 2⁻²⁴, so
|ŷ − y| ≲ 2·L·u·κ·max|y|, with κ = 1 for products and sums of the inputs and κ
the condition number of M (forward dynamics, M⁻¹, tip-force accelerations) or
of Ω(0) (operational space functions) where a linear system is solved.
"""
from __future__ import annotations

import numpy as np
import pytest
from tests.support import ROOT
from tests.support.builds import built

from soagen import SingularError, mcu, robots
from soagen import reference as ref
from soagen.codegen import generate
from soagen.options import Options

pytestmark = pytest.mark.mcu
U = 2.0 ** -24
CASES = {"panda": lambda: robots.example("panda"), "puma560": lambda: robots.example("puma560")}
SOLVES_M = ("forward_dynamics", "forward_dynamics_fd1", "mass_matrix_inverse", "tip_force_acceleration")
RUNS = [("cortex-m4f", "-Os"), ("cortex-m4f", "-O2"), ("cortex-m0", "-Os"), ("cortex-m0", "-O2")]
_harness = {}


def harness(case, tmp_path_factory):
    if case not in _harness:
        robot, mod = built(case, CASES[case])
        gen = generate(robot, Options(precision="float"), case)
        rng = np.random.default_rng(11)
        inputs = {}
        for p in gen.programs:
            cases = []
            for _ in range(3):
                q, qd, qdd, tau = robot.random_state(rng)
                pool = dict(q=q, qd=qd, qdd=qdd, tau=tau)
                cases.append([pool[a.name] if a.name in pool else rng.normal(size=a.size) for a in p.inputs])
            inputs[p.name] = cases
        folder = mcu.write_harness(gen, inputs, tmp_path_factory.mktemp(f"mcu-{case}"))
        _harness[case] = (robot, mod, gen, inputs, folder)
    return _harness[case]


def kappa(robot, name, q):
    if name in SOLVES_M:
        return np.linalg.cond(ref.mass_matrix(robot, q))
    if name.startswith("os_") or name == "osc_torque":
        return np.linalg.cond(ref.os_inertia_inverse(robot, q))
    return 1.0


@pytest.mark.parametrize("target,opt", RUNS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_emulated_mcu_matches_reference(case, target, opt, tmp_path_factory):
    robot, mod, gen, inputs, folder = harness(case, tmp_path_factory)
    tgt = mcu.TARGETS[target]
    printed = mcu.parse_output(mcu.run_qemu(mcu.build_elf(folder, case, tgt, opt), tgt), np.float32)
    worst = {}
    for p in gen.programs:
        L = mcu.critical_path(p)
        for c, args in enumerate(inputs[p.name]):
            status, got = printed[p.name, c, p.outputs[0].name]
            got = np.concatenate([printed[p.name, c, a.name][1] for a in p.outputs])
            try:
                want = mod._call(p.name, *args)           # double precision, = the numpy reference
            except SingularError:
                assert status == 1, p.name
                continue
            assert status == 0, p.name
            want = np.concatenate([np.ravel(w) for w in (want if isinstance(want, list) else [want])])
            err = np.abs(got - want).max() / max(np.abs(want).max(), 1e-30)
            tol = 2 * L * U * kappa(robot, p.name, args[0])
            assert err <= tol, (p.name, err, tol)
            worst[p.name] = max(worst.get(p.name, 0.0), err)
    assert len(worst) >= len(gen.programs) - 6      # at most the OS functions may all be singular
    print(f"\n{case} {target} {opt}: max relative error per function (float32 on the target):")
    for name, err in worst.items():
        print(f"  {name:<28} {err:.2e}")


def test_panda_inverse_dynamics_fits_a_small_mcu(tmp_path_factory):
    """Issue bound: Panda inverse dynamics in float, Cortex-M4F, -Os: ≤ 16 KB flash, ≤ 1 KB stack."""
    _, _, _, _, folder = harness("panda", tmp_path_factory)
    flash, stack = mcu.footprint(folder, "panda", mcu.TARGETS["cortex-m4f"], "-Os")["inverse_dynamics"]
    assert flash <= 16 * 1024 and stack <= 1024, (flash, stack)


@pytest.mark.parametrize("case", sorted(CASES))
def test_footprint_reports_are_current(case, tmp_path):
    import subprocess
    import sys

    out = tmp_path / "footprint.md"
    res = subprocess.run([sys.executable, "-m", "soagen.cli", "footprint", "--example", case,
                          "--markdown", str(out)], capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    assert out.read_text() == (ROOT / "generated" / case / "footprint.md").read_text(), "run `make footprint`"
