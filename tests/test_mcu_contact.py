"""Solo12's contact and impulse dynamics (four point feet, a floating base: nq 19, nv 18,
r 12) in float on the Cortex-M4F (-Os) in QEMU, as tests/test_mcu.py checks the Panda and
the PUMA:

1. the MCU's outputs equal, bit for bit, the same C compiled for the host with the MCU's
   float semantics (sinf/cosf answering as the MCU's newlib did);
2. against the double-precision numpy reference (``soagen.reference.contact_dynamics``,
   ``impulse_dynamics``) at the same float-rounded inputs, every component of every output
   within SAFETY × its first-order rounding-error bound b_i (tests/test_mcu.py's check 2: the
   bound follows the program's operations, so the articulated-body inertias (M) and Ω(0) that
   both functions solve with bring their conditioning into it), 5 % of each output beyond it,
   and b/error ≤ RATIO at the component nearest its bound.

The states stand: the base near upright (tilt about 0.15 rad, any yaw), the joints within
0.3 rad of a crouched stance; random velocities (joints about 4 rad/s, the base 1 rad/s and
1 m/s) and joint torques (about 0.3 N m), so that no term is small beside the others; the
first :data:`STATES` of :data:`DRAWS` where Ω(0)'s LDLᵀ pivots are far above both guards
(fewer fails the test). Errors 3.6e-7 (impulse) and 2.6e-6 (contact) of the output's largest
component against bounds 1.2e-5 and 5.5e-5; b/error 20 and 24 at the component nearest its
bound, median 48 and 63. The bound is checked to be tight enough to see the physics: the
reference with the velocities, the joint torques, gravity or the restitution dropped is beyond
it on every state, for every output it changes (so a C function that dropped one of those
terms, returned zeros, or ran on another state would fail).

docs/footprint_solo12.md is what ``soagen footprint`` writes for these two functions (the
command is in docs/guide/microcontrollers.md); its Cortex-M4F -Os column is regenerated here
from the emulated build's own object (the other three columns are three more compiles of
70-120 KB functions, left to the command).
"""
from __future__ import annotations

import numpy as np

import soagen
from soagen import reference as ref
from soagen.codegen import generate
from soagen.options import Options
from soagen.targets.mcu import qemu as mcu
from tests.support import ROOT
from tests.test_mcu import REFERENCE_ROUNDING, SAFETY, check_components, f32, pivot_ratio, print_tightness

FEET = ["FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"]
FUNCTIONS = ("contact_dynamics", "impulse_dynamics")
STANCE = np.array([0, 0.8, -1.6, 0, 0.8, -1.6, 0, -0.8, 1.6, 0, -0.8, 1.6])
STATES = 4          # standing states, the first of DRAWS where Ω(0)'s pivots are well above the guards
DRAWS = 5
# the terms of each function that the bound must be able to see missing
TERMS = {"contact_dynamics": ("velocities", "joint torques", "gravity"),
         "impulse_dynamics": ("velocities", "restitution")}
FOOTPRINT = ROOT / "docs" / "footprint_solo12.md"
_setup = {}


def solo12(gravity=(0.0, 0.0, -9.81)):
    return soagen.load_urdf(soagen.robots.path("solo12"), tips=[soagen.point_tip(f) for f in FEET],
                            floating_base=True, gravity=gravity)


def stance(robot, rng):
    """A standing state: base position, near-upright orientation, joints near :data:`STANCE`."""
    q = robot.neutral_configuration()
    q[:3] = rng.uniform(-0.5, 0.5, 3)
    tilt, yaw = rng.normal(size=2) * 0.15, rng.uniform(-np.pi, np.pi)   # quaternion xyzw
    q[3:7] = [np.sin(tilt[0] / 2), np.sin(tilt[1] / 2), np.sin(yaw / 2), np.cos(yaw / 2)]
    q[3:7] /= np.linalg.norm(q[3:7])
    q[7:] = STANCE + rng.uniform(-0.3, 0.3, 12)
    qd = np.r_[rng.normal(size=6), rng.normal(size=12) * 4.0]           # body [ω; v], joints
    tau = np.r_[np.zeros(6), rng.normal(size=12) * 0.3]                 # the base is not actuated
    return {"q": f32(q), "qd": f32(qd), "tau": f32(tau), "e": f32([0.5])}


def reference(robot, s):
    """{function: its outputs concatenated} of the double-precision numpy reference at ``s``."""
    return {"contact_dynamics": np.concatenate(ref.contact_dynamics(robot, s["q"], s["qd"], s["tau"])),
            "impulse_dynamics": np.concatenate(ref.impulse_dynamics(robot, s["q"], s["qd"], s["e"]))}


def setup(tmp_path_factory):
    """(robot, float programs, states, inputs, harness folder, output of the M4F -Os firmware)."""
    if not _setup:
        robot = solo12()
        gen = generate(robot, Options(precision="float", functions=list(FUNCTIONS)), "solo12")
        rng = np.random.default_rng(7)
        states = [s for s in (stance(robot, rng) for _ in range(DRAWS))
                  if pivot_ratio(ref.os_inertia_inverse(robot, s["q"])) >= 1e-3][:STATES]
        inputs = {p.name: [[s[a.name] for a in p.inputs] for s in states] for p in gen.programs}
        folder = mcu.write_harness(gen, inputs, tmp_path_factory.mktemp("mcu-solo12"))
        tgt = mcu.TARGETS["cortex-m4f"]
        text = "".join(mcu.run_qemu(elf, tgt) for elf in mcu.build_images(gen, inputs, folder, tgt, "-Os", True))
        _setup.update(robot=robot, gen=gen, states=states, inputs=inputs, folder=folder, text=text)
    return _setup


def test_solo12_contact_on_mcu_equals_host_float_bit_for_bit(tmp_path_factory):
    d = setup(tmp_path_factory)
    assert "fault" not in d["text"]
    on_mcu = mcu.parse_output(d["text"], np.float32)
    on_host = mcu.parse_output(mcu.run_host(d["folder"], mcu.parse_trig(d["text"])), np.float32)
    expected = {(p.name, c, a.name) for p in d["gen"].programs for c in range(STATES) for a in p.outputs}
    assert set(on_mcu) == set(on_host) == expected
    differ = [k for k in expected if on_mcu[k][0] != on_host[k][0] or not np.all(on_mcu[k][1] == on_host[k][1])]
    assert not differ, differ[:10]


def test_solo12_contact_on_mcu_within_error_bound_of_double(tmp_path_factory):
    d = setup(tmp_path_factory)
    robot, gen, states = d["robot"], d["gen"], d["states"]
    assert len(states) == STATES, "too few regular states among the draws"
    printed = mcu.parse_output(d["text"], np.float32)
    no_gravity = solo12(gravity=(0.0, 0.0, 0.0))
    want = [reference(robot, s) for s in states]
    dropped = {"velocities": [reference(robot, dict(s, qd=np.zeros_like(s["qd"]))) for s in states],
               "joint torques": [reference(robot, dict(s, tau=np.zeros_like(s["tau"]))) for s in states],
               "gravity": [reference(no_gravity, s) for s in states],
               "restitution": [reference(robot, dict(s, e=np.zeros(1))) for s in states]}
    rows = {}
    for p in gen.programs:
        assert all(printed[p.name, c, a.name][0] == 0 for c in range(STATES) for a in p.outputs), p.name
        got = np.array([np.concatenate([printed[p.name, c, a.name][1] for a in p.outputs]) for c in range(STATES)])
        w = np.array([x[p.name] for x in want])
        rows[p.name] = _, bound, scale = check_components(p, d["inputs"][p.name], got, w)
        # the bound sees the physics: each term dropped from the reference puts every output beyond it,
        # on every state (so a C function that dropped one of those terms would fail)
        limit = SAFETY * bound + REFERENCE_ROUNDING * scale
        spans = np.cumsum([0] + [a.size for a in p.outputs])
        for term in TERMS[p.name]:
            off = np.abs(np.array([x[p.name] for x in dropped[term]]) - w) > limit
            for a, lo, hi in zip(p.outputs, spans[:-1], spans[1:]):
                assert off[:, lo:hi].any(axis=1).all(), (term, p.name, a.name)
    print_tightness(f"solo12: float on the Cortex-M4F (-Os) against double, {STATES} standing states, "
                    "per component (see tests/test_mcu.py)", rows)


def _cells(text):
    """{function: [cell per column]} of a footprint page's first table (bytes)."""
    first = text.split("\n\n## ")[0]
    return {cells[0]: cells[1:] for cells in ([c.strip() for c in line.strip().strip("|").split("|")]
                                              for line in first.splitlines() if line.startswith("| ")
                                              and not line.startswith("| function"))}


def test_solo12_footprint_is_current(tmp_path_factory):
    """docs/footprint_solo12.md's Cortex-M4F -Os column (flash / stack / firmware) is what the
    emulated build gives now; it lists these two functions, in that column first."""
    d = setup(tmp_path_factory)
    live = mcu.footprint_table(d["gen"], d["robot"].name, d["folder"], runs=[("cortex-m4f", "-Os")])
    text = FOOTPRINT.read_text()
    assert "| function | cortex-m4f -Os |" in text
    assert {f: c[0] for f, c in _cells(text).items()} == {f: c[0] for f, c in _cells(live).items()}, \
        "stale: run `soagen footprint` (docs/guide/microcontrollers.md)"
    assert list(_cells(text)) == list(FUNCTIONS)


def test_guide_quotes_the_solo12_footprint():
    """docs/guide/microcontrollers.md quotes contact_dynamics' and impulse_dynamics' Cortex-M4F -Os cells
    and their Cortex-M0 -Os firmware."""
    guide = " ".join((ROOT / "docs" / "guide" / "microcontrollers.md").read_text().split())

    def n(x):
        return f"{x // 1000} {x % 1000:03d}" if x >= 10000 else str(x)

    cells = _cells(FOOTPRINT.read_text())
    for fname, cell in cells.items():
        code, frame, image = (int(x) for x in cell[0].split(" / "))
        assert f"`{fname}` {n(code)} B / {frame} B / {n(image)} B" in guide, fname
    m0 = [n(int(cells[f][2].split(" / ")[2])) for f in FUNCTIONS]      # columns: m4f -Os, -O2, m0 -Os, -O2
    assert f"({m0[0]} B and {m0[1]} B firmware at `-Os`)" in guide
