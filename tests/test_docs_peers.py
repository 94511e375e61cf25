"""The measured peers (docs/peer_opcounts.json, written by ``python benchmarks/peer_opcounts.py``
from SymPyBotics' and OpenSYMORO's sources): the page is the JSON's rendering, the closing table
follows from the counts, the general arm is general, and the script counts by soagen's rule.
None of this needs the peers' sources."""
from __future__ import annotations

import json

import numpy as np
import sympy as sp

from soagen.reports import peers
from tests.support import ROOT, benchmark_script

DOCS = ROOT / "docs"
STORED = json.loads((DOCS / "peer_opcounts.json").read_text())


def test_peer_page_is_the_rendering_of_its_json():
    assert (DOCS / "peer_opcounts.md").read_text() == peers.markdown(STORED), \
        "stale: run `python benchmarks/peer_opcounts.py --sympybotics DIR --symoro DIR`"
    assert STORED["quoted"] == peers.quoted_against(STORED)
    # every tool names its source and commit, every robot its tools' counts of every quantity it has
    for tool in peers.TOOLS:
        assert len(STORED["tools"][tool]["commit"]) == 40 and STORED["tools"][tool]["setting"]
    for robot in peers.ROBOTS:
        by_tool = STORED["counts"][robot]
        assert set(by_tool["SymPyBotics"]) == {"inverse_dynamics", "mass_matrix", "gravity"}
        assert {"inverse_dynamics", "mass_matrix", "bias_forces"} <= set(by_tool["OpenSYMORO"])


def test_quoted_figures_are_judged_by_the_measurement():
    """A quoted figure is reproduced only where a measured count equals it (the closing table's verdict)."""
    data = json.loads(json.dumps(STORED))
    rows = {q["quoted"]: q for q in peers.quoted_against(data)}
    assert rows["SymPyBotics, puma560, inverse dynamics"]["reproduced"] is (
        (data["counts"]["puma560"]["SymPyBotics"]["inverse_dynamics"]["mul"],
         data["counts"]["puma560"]["SymPyBotics"]["inverse_dynamics"]["add"]) == (378, 319))
    data["counts"]["puma560"]["SymPyBotics"]["inverse_dynamics"]["mul"] += 1
    rows = {q["quoted"]: q for q in peers.quoted_against(data)}
    assert rows["SymPyBotics, puma560, inverse dynamics"]["reproduced"] is False
    assert "(+1 / +0)" in rows["SymPyBotics, puma560, inverse dynamics"]["same_robot"]


def test_general_arm_has_every_parameter_nonzero():
    """The general arm's zeros cannot flatter anyone: every α (none a multiple of π/2), a, d,
    mass, centre-of-mass coordinate and inertia component (products included) is non-zero."""
    links = peers.general_links()
    assert len(links) == 6
    for link in links:
        assert min(abs(link.a), abs(link.d), link.mass) > 0.01
        half = link.alpha / (np.pi / 2)
        assert abs(half - round(half)) > 0.05
        assert min(abs(c) for c in link.com) > 0.005
        assert np.abs(np.asarray(link.inertia)).min() > 0
    assert all(r["pi_half"] is None for r in peers.dh_rows("general6"))
    puma = peers.dh_rows("puma560")                   # the peers get the PUMA's right angles exactly
    assert [r["pi_half"] for r in puma] == [0, -1, 0, 1, -1, 1]
    assert [r["d"] for r in puma][1:4] == [0.2435, -0.0934, 0.4331]


def test_script_counts_what_outputs_need_by_soagens_rule():
    """The script's counter: soagen's count_ops over the statements the outputs reach (a dead
    statement costs nothing), sign() apart."""
    bench = benchmark_script("peer_opcounts")
    a, b, c, d, e, f, q, x0, x1, x2 = sp.symbols("a b c d e f q x0 x1 x2")
    statements = [(x0, a * b), (x1, x0 + c), (x2, d * e)]          # x2: no output reads it
    counts = bench._count(statements, [2 * x1 + f * sp.sign(q)])
    assert {k: counts[k] for k in ("mul", "add", "sign", "statements")} == {"mul": 3, "add": 2, "sign": 1,
                                                                          "statements": 3}
    assert bench._count(statements, [x2])["mul"] == 1


def test_general_arms_against_n_are_consistent_and_regenerate():
    """The table against n holds the general arm's row at n = 6 (one arm, two runs of each tool), and
    soagen's smallest general arms regenerate to the committed counts."""
    from soagen.codegen import make_program
    from soagen.options import Options

    for tool in peers.SCALING_TOOLS:
        assert set(STORED["scaling"][tool]) == {str(n) for n in peers.SCALING_SIZES}
        at6, row = STORED["scaling"][tool]["6"], STORED["counts"]["general6"][tool]["inverse_dynamics"]
        assert (at6["mul"], at6["add"]) == (row["mul"], row["add"]), tool
    for mode, label in (("inputs", "soagen, π input"), ("baked", "soagen, baked")):
        options = Options(functions=("inverse_dynamics",), parameters=mode)
        for n in (2, 3):
            ops = make_program(peers.general_arm(n=n), "inverse_dynamics", options).ops
            stored = STORED["scaling"][label][str(n)]
            assert (ops["mul"], ops["add"]) == (stored["mul"], stored["add"]), (label, n)


def test_casadi_on_pinocchio_has_every_robot_and_agrees_with_its_puma_run():
    """CasADi-on-Pinocchio (numeric parameters) is measured on every robot and general arm of the page; its
    PUMA 560 counts are those of docs/casadi_opcounts.json (benchmarks/casadi_opcounts.py, the same counter
    run separately), and its version is that run's."""
    casadi = json.loads((DOCS / "casadi_opcounts.json").read_text())
    assert STORED["tools"][peers.CASADI]["version"] == casadi["tool"]
    for robot in peers.ROBOTS:
        assert set(STORED["counts"][robot][peers.CASADI]) == {fn for _, fn in peers.FUNCTIONS}, robot
    bench = benchmark_script("peer_opcounts")
    for fn, name in bench.CASADI_FUNCTIONS:
        ours = {k: v for k, v in STORED["counts"]["puma560"][peers.CASADI][fn].items() if k != "sign"}
        assert ours == casadi["functions"][name], fn
    against_n = peers.markdown(STORED).split("## Inverse dynamics against n", 1)[1].splitlines()
    assert peers.CASADI in next(line for line in against_n if line.startswith("| n |"))
