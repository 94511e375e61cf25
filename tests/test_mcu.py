"""The emitted float C on emulated microcontrollers: cross-compiled with
arm-none-eabi-gcc for a Cortex-M4F (hard float, QEMU ``mps2-an386``) and a
Cortex-M0 (soft float, QEMU ``microbit``, an nRF51822 Cortex-M0 with 256 KB of
flash and 16 KB of RAM), run bare-metal with semihosting output.

Two checks per function:

1. **The MCU computes what the C says, bit for bit.** The same harness and C
   are compiled for this machine in float with the MCU's semantics (every
   operation rounded to float, no FMA contraction: :data:`soagen.targets.mcu.qemu.HOST_FLAGS`),
   sinf/cosf answering with the values the MCU's libm returned for the same
   arguments (the firmware logs them). Every output of every function, state,
   core and optimisation level must equal the host's exactly, and so must the
   singular status.

2. **The float C is as accurate as float allows.** The MCU's outputs against the
   double-precision module (= the numpy reference, ``test_generated_vs_reference``)
   at the same (float-rounded) inputs. Quantities are made dimensionless by the
   robot's own inertia at that state, so that rad, m, kg m² and kg are never
   mixed: with D = diag(M)^½ (joint space) and W = diag(Ω(0))^-½ (task space),
   torques are compared as D⁻¹τ, accelerations as Dq̈, M as D⁻¹MD⁻¹, M⁻¹ as
   DM⁻¹D, twists as Wa, wrenches as W⁻¹f, Ω as WΩW, Λ as W⁻¹ΛW⁻¹, Jacobians as
   WJD⁻¹, poses by their rotation and position blocks. The error is the largest
   error of a component over the largest component (1 for an all-zero output),
   and the bound is ``10·L·u·κ``: L the function's critical path
   (:func:`soagen.targets.mcu.qemu.critical_path`), u = 2⁻²⁴, κ = 1 for products and sums
   (kinematics, inverse dynamics, M), κ(M̃) with M̃ = D⁻¹MD⁻¹ for the functions
   that invert M (M⁻¹, forward dynamics, tip-force accelerations, and
   Ω(0) = JM⁻¹Jᵀ, which inverts nothing else), κ(M̃)·κ(Ω̃) with Ω̃ = WΩW for those
   that also invert Ω(0) (Λ, c, g, c+g, the OSC torque). The factor 10 covers
   what L·u·κ leaves out (cancellation in sums: the PUMA's Jacobian and Ω reach
   0.9·L·u·κ). The states are drawn from a fixed seed and kept where Ω(0)'s LDLᵀ
   pivots are above 1e-3 of their diagonal (100× the float guard 1e-5, 1e7× the
   double guard 1e-10, so both precisions return status 0) and every bound is at
   most :data:`MAX_BOUND` (so an all-zero output, or one more than 5 % off, fails); one more
   state, q = 0, is singular for both robots with an exact zero pivot (Ω_00 = 0
   from exact cos 0, sin 0), so float and double both report it, independent of
   their thresholds (there only the statuses are compared with double; the values
   are in check 1).

The Panda's derivatives (∂τ, ∂q̈ with q̈ and M⁻¹, the linearized step; generated
on request) get check 2 on the Cortex-M4F at -Os, after a cross-compile with
warnings as errors (the end of this file).
"""
from __future__ import annotations

import subprocess

import numpy as np
import pytest

from soagen import SingularError

from soagen.targets.mcu import qemu as mcu

from soagen.model import robots
from soagen import reference as ref
from soagen.codegen import generate
from soagen.options import Options
from tests.support import ROOT
from tests.support.builds import built

U = 2.0 ** -24
MAX_BOUND = 0.05
CASES = {"panda": lambda: robots.example("panda"), "puma560": lambda: robots.example("puma560")}
# function -> (how its output is made dimensionless, which κ bounds its error)
KIND = {"forward_kinematics": ("pose", "1"), "jacobian": ("J", "1"), "jdot_qdot": ("twist", "1"),
        "inverse_dynamics": ("tau", "1"), "inverse_dynamics_tip_force": ("tau", "1"), "gravity": ("tau", "1"),
        "bias_forces": ("tau", "1"), "coriolis": ("tau", "1"), "mass_matrix": ("M", "1"),
        "mass_matrix_inverse": ("Minv", "M"), "forward_dynamics": ("qdd", "M"),
        "tip_force_acceleration": ("qdd", "M"), "os_inertia_inverse": ("Omega", "M"),
        "os_inertia": ("Lambda", "M*Omega"), "os_coriolis": ("wrench", "M*Omega"),
        "os_gravity": ("wrench", "M*Omega"), "os_bias": ("wrench", "M*Omega"), "osc_torque": ("tau", "M*Omega")}
_setup = {}


def f32(x):
    """Round to float, as the harness's float literals do; back in float64."""
    return np.asarray(x, dtype=np.float32).astype(float)


def pivot_ratio(A):
    """min_j d_j / A_jj of A = L diag(d) Lᵀ (the generated guard's quantity)."""
    N = A.shape[0]
    L, d = np.eye(N), np.zeros(N)
    for j in range(N):
        w = L[j, :j] * d[:j]
        d[j] = A[j, j] - L[j, :j] @ w
        L[j + 1:, j] = (A[j + 1:, j] - L[j + 1:, :j] @ w) / d[j]
    return (d / np.diag(A)).min()


def scaling(robot, q):
    """Per-kind weights making each output dimensionless, and the two condition numbers."""
    M, Om = ref.mass_matrix(robot, q), ref.os_inertia_inverse(robot, q)
    D, W = np.sqrt(np.diag(M)), 1.0 / np.sqrt(np.diag(Om))
    weights = {"tau": 1 / D, "qdd": D, "M": 1 / np.outer(D, D), "Minv": np.outer(D, D), "J": np.outer(W, 1 / D),
               "twist": W, "wrench": 1 / W, "Omega": np.outer(W, W), "Lambda": 1 / np.outer(W, W)}
    kappa = {"1": 1.0, "M": np.linalg.cond(M / np.outer(D, D))}
    kappa["M*Omega"] = kappa["M"] * np.linalg.cond(Om * np.outer(W, W))
    return {k: np.ravel(v) for k, v in weights.items()}, kappa


def relative_error(kind, weights, got, want):
    if kind == "pose":      # rotation and position blocks of each 4x4 pose
        blocks = [np.r_[0, 1, 2, 4, 5, 6, 8, 9, 10], np.r_[3, 7, 11]]
        blocks = [b + 16 * t for t in range(len(want) // 16) for b in blocks]
        return max(np.abs(got[b] - want[b]).max() / np.abs(want[b]).max() for b in blocks)
    w = weights[kind]
    return np.abs(w * (got - want)).max() / np.abs(w * want).max()


def draw_states(robot, gen, rng, count=3):
    """``count`` well-conditioned states (see the module docstring), then the singular q = 0."""
    states = []
    while len(states) < count:
        q, qd, qdd, tau = robot.random_state(rng)
        m = len(robot.tips)
        s = dict(q=f32(q), qd=f32(qd), qdd=f32(qdd), tau=f32(tau), f=f32(10 * rng.normal(size=6 * m)),
                 u=f32(rng.normal(size=6 * m)))
        if pivot_ratio(ref.os_inertia_inverse(robot, s["q"])) < 1e-3:
            continue
        _, kappa = scaling(robot, s["q"])
        if max(10 * mcu.critical_path(p) * U * kappa[KIND[p.name][1]] for p in gen.programs) <= MAX_BOUND:
            states.append(s)
    states.append(dict(states[0], q=np.zeros(robot.nq)))
    return states


def setup(case, tmp_path_factory):
    """(robot, float programs, states, harness folder, output of the M4F -Os firmware, sinf/cosf log)."""
    if case not in _setup:
        robot = CASES[case]()
        gen = generate(robot, Options(precision="float"), case)
        states = draw_states(robot, gen, np.random.default_rng(11))
        inputs = {p.name: [[s[a.name] for a in p.inputs] for s in states] for p in gen.programs}
        folder = mcu.write_harness(gen, inputs, tmp_path_factory.mktemp(f"mcu-{case}"))
        tgt = mcu.TARGETS["cortex-m4f"]
        text = "".join(mcu.run_qemu(elf, tgt) for elf in mcu.build_images(gen, inputs, folder, tgt, "-Os", True))
        _setup[case] = (robot, gen, states, inputs, folder, text, mcu.parse_trig(text))
    return _setup[case]


def host_output(folder, trig, _done={}):
    """The host build's output with sinf/cosf answering from ``trig`` (once per table)."""
    key = (str(folder), *(tuple(sorted(trig[f].items())) for f in ("sinf", "cosf")))
    if key not in _done:
        _done[key] = mcu.parse_output(mcu.run_host(folder, trig), np.float32)
    return _done[key]


@pytest.mark.parametrize("target,opt", mcu.RUNS)
@pytest.mark.parametrize("case", sorted(CASES))
def test_mcu_equals_host_float_bit_for_bit(case, target, opt, tmp_path_factory):
    robot, gen, states, inputs, folder, text, trig = setup(case, tmp_path_factory)
    tgt = mcu.TARGETS[target]
    if (target, opt) != ("cortex-m4f", "-Os"):
        text = "".join(mcu.run_qemu(elf, tgt) for elf in mcu.build_images(gen, inputs, folder, tgt, opt, True))
        trig = mcu.parse_trig(text)   # newlib's soft-float sinf/cosf may differ from the FPU build's by an ulp
    assert "fault" not in text
    # libm was called for every joint angle, and answered within 1 ulp of the rounded exact value
    assert len(trig["sinf"]) >= robot.n and len(trig["cosf"]) >= robot.n
    for fname, exact in (("sinf", np.sin), ("cosf", np.cos)):
        x = np.array(list(trig[fname]), dtype=np.uint32).view(np.float32)
        y = np.array(list(trig[fname].values()), dtype=np.uint32).view(np.float32)
        assert np.all(np.abs(y - exact(x.astype(float)).astype(np.float32)) <= np.spacing(np.abs(y))), fname
    on_mcu, on_host = mcu.parse_output(text, np.float32), host_output(folder, trig)
    expected = {(p.name, c, a.name) for p in gen.programs for c in range(len(states)) for a in p.outputs}
    assert set(on_mcu) == set(on_host) == expected
    differ = [k for k in expected if on_mcu[k][0] != on_host[k][0] or not np.all(on_mcu[k][1] == on_host[k][1])]
    assert not differ, differ[:10]


@pytest.mark.parametrize("case", sorted(CASES))
def test_float_on_mcu_within_conditioning_bound_of_double(case, tmp_path_factory):
    robot, gen, states, inputs, folder, text, _ = setup(case, tmp_path_factory)
    _, mod = built(case, CASES[case])
    printed = mcu.parse_output(text, np.float32)
    *regular, singular = range(len(states))
    for p in gen.programs:          # q = 0: singular in both precisions, whatever their thresholds
        assert printed[p.name, singular, p.outputs[0].name][0] == int(p.returns_status), p.name
        if p.returns_status:
            with pytest.raises(SingularError):
                mod._call(p.name, *inputs[p.name][singular])
    rows = {}
    for c in regular:
        weights, kappa = scaling(robot, states[c]["q"])
        for p in gen.programs:
            assert printed[p.name, c, p.outputs[0].name][0] == 0, p.name
            got = np.concatenate([printed[p.name, c, a.name][1] for a in p.outputs])
            want = mod._call(p.name, *inputs[p.name][c])
            want = np.concatenate([np.ravel(w) for w in (want if isinstance(want, list) else [want])])
            kind, which = KIND[p.name]
            err = relative_error(kind, weights, got, want)
            bound = 10 * mcu.critical_path(p) * U * kappa[which]
            assert bound <= MAX_BOUND, (p.name, bound)
            assert err <= bound, (p.name, c, err, bound)
            old = rows.get(p.name, (0.0, 0.0))
            rows[p.name] = (max(old[0], err), max(old[1], bound))
    print(f"\n{case}: float on the Cortex-M4F against double, max over {len(regular)} states "
          "(dimensionless, see the module docstring)")
    print(f"  {'function':<28} {'L':>4} {'kappa':>9} {'error':>9} {'bound':>9}")
    for p in gen.programs:
        print(f"  {p.name:<28} {mcu.critical_path(p):4d} {KIND[p.name][1]:>9} {rows[p.name][0]:9.1e} "
              f"{rows[p.name][1]:9.1e}")


def test_panda_inverse_dynamics_fits_a_small_mcu(tmp_path_factory):
    """Panda inverse dynamics in float, Cortex-M4F, -Os: ≤ 16 KB flash, ≤ 1 KB stack."""
    folder = setup("panda", tmp_path_factory)[4]
    flash, stack = mcu.function_sizes(folder, "panda", mcu.TARGETS["cortex-m4f"], "-Os")["inverse_dynamics"]
    assert flash <= 16 * 1024 and stack <= 1024, (flash, stack)


@pytest.mark.parametrize("case", sorted(CASES))
def test_footprint_reports_are_current(case, tmp_path_factory):
    """generated/<robot>/footprint.md is what ``soagen footprint --example <robot>`` writes
    (the same programs as the emulated runs: every default function, float, and for the Panda
    the derivatives (``--derivatives``); the CLI itself is run in tests/test_cli_flags.py)."""

    _, gen, _, _, folder, _, _ = setup(case, tmp_path_factory)
    d = derivative_setup(tmp_path_factory) if case in DERIVATIVE_CASES else None
    text = mcu.footprint_table(gen, case, folder, derivatives=d and (d["gen"], d["folder"]))
    assert text == (ROOT / "generated" / case / "footprint.md").read_text(), "run `make footprint`"


@pytest.mark.parametrize("cpu,faults", [("cortex-m0", False), ("cortex-m3", True)])
def test_the_m0_machine_runs_armv6m_and_faults_on_armv7m(cpu, faults, tmp_path):
    """QEMU's microbit is a Cortex-M0: a division compiled for the M0 (a libgcc call) runs,
    the same compiled for the M3 (an ``sdiv``, ARMv7-M only) faults, so code for a larger
    core cannot pass as M0 code."""
    from soagen.targets.c99.emit import render_plain

    (tmp_path / "mcu_runtime.c").write_text(render_plain("mcu_runtime.c.j2"))
    (tmp_path / "microbit.ld").write_text(render_plain("microbit.ld.j2"))
    (tmp_path / "main.c").write_text("void soa_puts(const char *s);\n"
                                     "int main(void) { volatile int a = 7, b = 2; int c = a / b;\n"
                                     "    soa_puts(c == 3 ? \"divided\\n\" : \"wrong\\n\"); return 0; }\n")
    target = mcu.Target("m", ("-mcpu=" + cpu, "-mthumb", "-mfloat-abi=soft"), "microbit", "microbit.ld", 0, 0)
    objects = [mcu.compile_object(tmp_path, src, target, "-O2") for src in ("mcu_runtime.c", "main.c")]
    text = mcu.run_qemu(mcu.link_image(tmp_path, objects, target, "-O2", tmp_path / "main.elf"), target, timeout=60)
    assert ("fault" in text) == faults and ("divided" in text) != faults, text


def test_readme_quotes_the_panda_footprint():
    """The guide's MCU page (docs/guide/microcontrollers.md) quotes generated/panda/footprint.md
    (M4F -Os and M0 -Os)."""

    rows = {}
    for line in (ROOT / "generated" / "panda" / "footprint.md").read_text().splitlines():
        cells = [c.strip() for c in line.strip("|").split("|")]
        if cells[0] in ("inverse_dynamics", "forward_dynamics"):
            rows[cells[0]] = [[int(x) for x in c.split(" / ")] for c in cells[1:]]
    readme = " ".join((ROOT / "docs" / "guide" / "microcontrollers.md").read_text().split())

    def n(x):     # the guide writes 13 716 for 13716
        return f"{x // 1000} {x % 1000:03d}" if x >= 10000 else str(x)

    m4, m0 = 0, 2     # columns: cortex-m4f -Os, cortex-m4f -O2, cortex-m0 -Os, cortex-m0 -O2
    code, frame, image = rows["inverse_dynamics"][m4]
    assert f"{code} bytes of code, a {frame}-byte frame, a {image}-byte firmware" in readme
    code, frame, image = rows["forward_dynamics"][m4]
    assert f"{code} B / {frame} B / {n(image)} B" in readme
    want = " and ".join(" / ".join(n(x) for x in rows[f][m0]) for f in ("inverse_dynamics", "forward_dynamics"))
    assert f"on the Cortex-M0 (`-Os`) {want}" in readme
    for f in mcu.DERIVATIVES:       # the second table: Cortex-M4F -Os only
        line = next(x for x in (ROOT / "generated" / "panda" / "footprint.md").read_text().splitlines()
                    if x.startswith(f"| {f} |"))
        code, frame, image = (int(x) for x in line.split("|")[2].split(" / "))
        assert f"`{f}` {n(code)} B / {frame} B / {n(image)} B" in readme, f


# --------------------------------------------------------------------------- the dynamics' derivatives
# Panda only (7 dof, the size MPC on an MCU meets), Cortex-M4F at -Os: each function is 50-80 KB of
# code, so one compile of the three is the cost; the M0 and -O2 runs of the functions above cover the
# emitter's float C, which the derivatives share.  Made dimensionless as above, in the coordinates
# q̃ = Dq, q̃̇ = Dq̇, τ̃ = D⁻¹τ (so M̃ = D⁻¹MD⁻¹): ∂τ̃/∂q̃ = D⁻¹(∂τ/∂q)D⁻¹, ∂q̈̃/∂q̃ = D(∂q̈/∂q)D⁻¹,
# M̃⁻¹ = DM⁻¹D, A's blocks D(A_ij − δ_ij I)D⁻¹ (A − I: the identity would hide the dynamics' part),
# B = D₂BD with D₂ = diag(D, D).  Each output is compared on its own, against its own largest component.
# κ = 1 for ∂τ (products and sums), κ(M̃) for those that solve with M (q̈ = M⁻¹(τ − c), ∂q̈ = −M⁻¹∂τ|q̈).
DERIVATIVE_CASES = ("panda",)
DERIVATIVE_KAPPA = {"inverse_dynamics_derivatives": "1", "forward_dynamics_derivatives": "M",
                    "linearized_step": "M"}
DT = 0.01
_derivatives = {}


def derivative_weights(robot, q):
    """{function: [(weights, subtract) per output]}: dimensionless weights (see above), and what to
    subtract from both sides first (A's identity); and κ of :func:`scaling`."""
    n, (_, kappa) = robot.nv, scaling(robot, q)
    D = np.sqrt(np.diag(ref.mass_matrix(robot, q)))
    D2 = np.r_[D, D]
    per = {"inverse_dynamics_derivatives": [(np.outer(1 / D, 1 / D), 0.0)] * 2,
           "forward_dynamics_derivatives": [(D, 0.0), (np.outer(D, 1 / D), 0.0), (np.outer(D, 1 / D), 0.0),
                                            (np.outer(D, D), 0.0)],
           "linearized_step": [(np.outer(D2, 1 / D2), np.eye(2 * n)), (np.outer(D2, D), 0.0)]}
    return {f: [(np.ravel(w), np.ravel(sub)) for w, sub in v] for f, v in per.items()}, kappa


def derivative_setup(tmp_path_factory):
    """(robot, float programs, states, inputs, folder, output of the M4F -Os firmware) of the Panda's
    derivatives; the C is first cross-compiled with tests/test_strict_c.py's warnings as errors."""
    if not _derivatives:
        from tests.test_strict_c import STRICT

        robot = robots.example("panda")
        gen = generate(robot, Options(precision="float", functions=mcu.DERIVATIVES), "panda")
        rng, states = np.random.default_rng(12), []
        while len(states) < 3:
            q, qd, _, tau = robot.random_state(rng)
            s = {"q": f32(q), "qd": f32(qd), "tau": f32(tau), "qdd": f32(rng.uniform(-1, 1, robot.nv)),
                 "dt": f32([DT])}
            _, kappa = derivative_weights(robot, s["q"])
            if max(10 * mcu.critical_path(p) * U * kappa[DERIVATIVE_KAPPA[p.name]] for p in gen.programs) \
                    <= MAX_BOUND:
                states.append(s)
        inputs = {p.name: [[s[a.name] for a in p.inputs] for s in states] for p in gen.programs}
        folder = mcu.write_harness(gen, inputs, tmp_path_factory.mktemp("mcu-derivatives"))
        tgt = mcu.TARGETS["cortex-m4f"]
        # the object build_images links (same flags and path: compile_object keeps it), with warnings as errors
        strict = [x for x in STRICT if x not in ("-std=c99", "-O1", "-c")]
        res = subprocess.run([mcu.CC, *tgt.flags, "-Os", *mcu.COMMON, *strict, "-I", str(folder), "-c",
                              str(folder / "panda.c"), "-o", str(folder / "panda_cortex-m4f-Os.o")],
                             capture_output=True, text=True, check=False)
        assert res.returncode == 0 and not res.stderr, res.stderr
        text = "".join(mcu.run_qemu(elf, tgt) for elf in mcu.build_images(gen, inputs, folder, tgt, "-Os", True))
        _derivatives.update(robot=robot, gen=gen, states=states, inputs=inputs, folder=folder, text=text)
    return _derivatives


def derivative_errors(robot, gen, states, inputs, printed):
    """{function: [(error, bound) per state]} of the MCU's float outputs against double (the reference)."""
    rows = {}
    for c, s in enumerate(states):
        weights, kappa = derivative_weights(robot, s["q"])
        for p in gen.programs:
            assert printed[p.name, c, p.outputs[0].name][0] == 0, p.name
            want = getattr(ref, p.name)(robot, *inputs[p.name][c])
            err = 0.0
            for a, w, (weight, sub) in zip(p.outputs, want, weights[p.name]):
                got, w = printed[p.name, c, a.name][1] - sub, np.ravel(w) - sub
                err = max(err, np.abs(weight * (got - w)).max() / np.abs(weight * w).max())
            rows.setdefault(p.name, []).append((err, 10 * mcu.critical_path(p) * U * kappa[DERIVATIVE_KAPPA[p.name]]))
    return rows


def test_panda_derivatives_on_mcu_within_conditioning_bound_of_double(tmp_path_factory):
    """The Panda's ∂τ, ∂q̈ (with q̈, M⁻¹) and linearized step in float on the Cortex-M4F (-Os) against
    double within 10·L·u·κ (see above), each ≤ MAX_BOUND, and they fit the M4F at -Os."""
    d = derivative_setup(tmp_path_factory)
    assert "fault" not in d["text"]
    printed = mcu.parse_output(d["text"], np.float32)
    rows = derivative_errors(d["robot"], d["gen"], d["states"], d["inputs"], printed)
    print("\npanda derivatives: float on the Cortex-M4F against double (dimensionless, see above)")
    for p in d["gen"].programs:
        L = mcu.critical_path(p)
        print(f"  {p.name:<30} L {L:4d}  error {max(e for e, _ in rows[p.name]):9.1e}  "
              f"bound {max(b for _, b in rows[p.name]):9.1e}")
        for c, (err, bound) in enumerate(rows[p.name]):
            assert bound <= MAX_BOUND, (p.name, bound)
            assert err <= bound, (p.name, c, err, bound)
    sizes = mcu.function_sizes(d["folder"], "panda", mcu.TARGETS["cortex-m4f"], "-Os")
    assert all(sizes[f][0] <= 256 * 1024 for f in mcu.DERIVATIVES), sizes
