"""benchmarks/crocoddyl_models.py: its code path end to end on small problems (soagen's models are in soagen's
problem, and its FDDP solve is Crocoddyl's), and docs/crocoddyl.md is the rendering of the committed
docs/crocoddyl.json, which the Crocoddyl guide quotes. No timing is asserted. The Panda's module is the one
tests/test_crocoddyl.py builds (-O0, the same key: shared through the build cache)."""
from __future__ import annotations

import json
import math

import soagen.crocoddyl as sc
from tests.support import ROOT, benchmark_script

#: a short trot: 2 × (1 support + 4 step knots + the switch) + 1 nodes
TINY_TROT = {"stepLength": 0.15, "stepHeight": 0.1, "timeStep": 1e-2, "stepKnots": 4, "supportKnots": 1}
#: createCoMProblem's arguments: 14 nodes on four feet
COM = {"comGoTo": 0.05, "timeStep": 1e-2, "numKnots": 6}


def _bench():
    return benchmark_script("crocoddyl_models")


def _measured_the_same_solve(bench, rec, soagen_class, nodes):
    """Both backends timed, soagen's nodes soagen's class, the solve checked to be Crocoddyl's."""
    ours, theirs = rec["backends"]["soagen"], rec["backends"]["crocoddyl"]
    assert rec["not_measured"] is None and rec["nodes"] == nodes
    mine, yours = (bench.classes(side["differentials"]) for side in (ours, theirs))
    assert {cls: n for (_, cls), (n, _) in mine.items()} == {cls: n for (_, cls), (n, _) in yours.items()}
    assert [cls for who, cls in mine if who] == [soagen_class] and not any(who for who, _ in yours)
    a = rec["agreement"]
    assert a["same"] and a["iterations"][0] == a["iterations"][1] == ours["iterations"] == theirs["iterations"] > 2
    assert a["cost_rel"] <= 1e-8 and a["xs_max_abs"] <= 1e-6 and a["us_max_abs"] <= 1e-6
    for side in (ours, theirs):
        assert side["calcdiffs"] >= side["iterations"] and side["rollouts"] > side["iterations"]
        assert all(len(side[k]) == rec["rounds"] and min(side[k]) > 0 for k in ("calc_s", "calcdiff_s", "solve_s"))
    assert min(theirs["costs_calc_s"]) > 0 and min(theirs["costs_calcdiff_s"]) > 0 and "costs_calc_s" not in ours
    # what soagen's models replace is measured on Crocoddyl's side (its formula: the test below; one round of
    # one pass here, on a loaded machine, can put it anywhere, so no bound on its value)
    share = bench.summary(rec)["crocoddyl"]["replaced_share"]
    assert math.isfinite(share.median) and share.median != 0 and "replaced_calcdiff_s" not in ours
    assert "could not be below" in bench.replaced_line(rec)


def test_the_replaced_share_is_the_models_less_their_costs_over_the_problems_calcdiff():
    """summary's share of Crocoddyl's calcDiff that soagen's models replace, per round: (the differential models'
    calcDiff − their costs' calcDiff) / the problem's calcDiff.  Made-up timings, 3 rounds: (3 − 1) / 4, (5 − 2)
    / 6, (2 − 1) / 8 → median 0.5 (the subtraction reversed gives −0.5, a ratio to the models' 2/3)."""
    side = {"calc_s": [1.0] * 3, "calcdiff_s": [4.0, 6.0, 8.0], "solve_s": [10.0] * 3, "rollouts": 1, "calcdiffs": 1,
            "replaced_calcdiff_s": [3.0, 5.0, 2.0], "replaced_costs_calcdiff_s": [1.0, 2.0, 1.0]}
    share = _bench().summary({"nodes": 1, "backends": {"crocoddyl": side}})["crocoddyl"]["replaced_share"]
    assert (share.median, min(share.q1, share.q3) >= 0.125, max(share.q1, share.q3) <= 0.5) == (0.5, True, True)


def test_panda_times_soagens_models_on_crocoddyls_solve():
    bench = _bench()
    rec = bench.measure("panda", rounds=1, passes=1, optimize="O0", nodes=12)
    _measured_the_same_solve(bench, rec, "DifferentialActionModelFreeFwdDynamics", 12)
    assert set(bench.summary(rec)["ratio"]) == {"calc", "calcdiff", "solve"}
    assert "soagen's `DifferentialActionModelFreeFwdDynamics` 12" in bench.table(rec)


def test_solo12_is_measured_or_says_why_not():
    """With soagen's contact model, solo12 is timed as the Panda is; without it, the record (and the page) says
    soagen's side was not measured, and Crocoddyl's alone was. The problem: the gait problems' centre-of-mass
    move, four feet throughout (the trot's two-feet phases are two more modules to build: their tip sets are
    checked below without a build), with the gait models' Baumgarte gains."""
    bench = _bench()
    rec = bench.measure("solo12", rounds=1, passes=1, optimize="O0", com=COM)
    if hasattr(sc, "contact_fwd_dynamics"):
        _measured_the_same_solve(bench, rec, "DifferentialActionModelContactFwdDynamics", 14)
    else:
        assert list(rec["backends"]) == ["crocoddyl"] and rec["agreement"] is None
        assert rec["not_measured"] == ("soagen has no Crocoddyl model for DifferentialActionModelContactFwdDynamics "
                                       "in this checkout")
        assert "**soagen's models: not measured.**" in bench.ratio_lines(rec)
    assert min(rec["backends"]["crocoddyl"]["costs_calcdiff_s"]) > 0
    assert rec["backends"]["crocoddyl"]["differentials"] == {
        "crocoddyl.libcrocoddyl_pywrap_float64.DifferentialActionModelContactFwdDynamics": 14}


def test_trot_gives_soagen_the_active_feet_and_keeps_crocoddyls_gains():
    """Each trot node's soagen robot has the node's active feet as tips (three sets: the stance, the two
    diagonal pairs), in the contacts' order; the contacts keep the example's Baumgarte gains (no build)."""
    bench = _bench()
    problem, robot_for = bench.solo12(trot=TINY_TROT)
    nodes = [m.differential for m in [*problem.runningModels, problem.terminalModel] if hasattr(m, "differential")]
    assert {bench.active_feet(d) for d in nodes} == {("FL_FOOT", "FR_FOOT", "HL_FOOT", "HR_FOOT"),
                                                    ("FL_FOOT", "HR_FOOT"), ("FR_FOOT", "HL_FOOT")}
    robot = robot_for(("FR_FOOT", "HL_FOOT"))
    assert [t.name for t in robot.tips] == ["FR_FOOT", "HL_FOOT"] and all(t.point for t in robot.tips)
    assert robot_for(("FR_FOOT", "HL_FOOT")) is robot
    gains = {tuple(i.contact.gains) for d in nodes for i in d.contacts.contacts.todict().values()}
    assert gains == {(0.0, 50.0)}                       # quadrupedal_gaits_fwddyn.py's, soagen's models take them
    three = {"soagen_crocoddyl_solo12_0a.DifferentialActionModelContactFwdDynamics": 5,        # the table's column
             "soagen_crocoddyl_solo12_1b.DifferentialActionModelContactFwdDynamics": 25,
             "crocoddyl.libcrocoddyl_pywrap_float64.ActionModelImpulseFwdDynamics": 2,
             "soagen_crocoddyl_solo12_2c.DifferentialActionModelContactFwdDynamics": 25}
    assert bench.classes(three) == {("soagen's ", "DifferentialActionModelContactFwdDynamics"): (55, 3),
                                    ("", "ActionModelImpulseFwdDynamics"): (2, 1)}


def test_page_is_rendered_from_the_committed_json_and_quoted():
    bench = _bench()
    data = json.loads((ROOT / "docs" / "crocoddyl.json").read_text())
    assert data["command"] == bench.COMMAND == "python benchmarks/crocoddyl_models.py"
    assert (ROOT / "docs" / "crocoddyl.md").read_text() == bench.render(data), \
        "python benchmarks/crocoddyl_models.py --render"
    panda = data["problems"]["panda"]
    assert panda["agreement"]["same"] and panda["rounds"] == bench.ROUNDS and panda["nodes"] == 100
    solo = data["problems"]["solo12"]
    for rec in (panda, solo):          # the run measured what soagen's models replace
        assert 0 < bench.summary(rec)["crocoddyl"]["replaced_share"].median < 1
    assert (solo["not_measured"] is None) == ("soagen" in solo["backends"]) == (solo["agreement"] is not None)
    text = (ROOT / "docs" / "guide" / "crocoddyl.md").read_text()
    guide = " ".join(text.split())
    paragraphs = [" ".join(p.split()) for p in text.split("\n\n")]
    assert bench.headline(data) in paragraphs, \
        "paste benchmarks/crocoddyl_models.py's headline(data) into the guide, as a paragraph of its own"
    assert f"within each of {bench.ROUNDS} rounds" in guide and f"({panda['nodes']} nodes:" in guide


def test_agreement_compares_every_node_and_reads_impulse_nodes():
    """The solves' comparison: a trot's impulse nodes have empty controls; a state 1e-3 apart or a control
    2e-6 apart is not the same solve."""
    import numpy as np

    bench = _bench()

    class Solved:
        def __init__(self, xs, us, iters=3, cost=1.0):
            self.xs, self.us, self.iter, self.cost = xs, us, iters, cost
    same = Solved([np.ones(2), np.zeros(2)], [np.ones(1), np.zeros(0)])
    assert bench.agreement(same, same)["same"]
    a = bench.agreement(Solved([np.ones(2), np.full(2, 1e-3)], [np.ones(1), np.zeros(0)]), same)
    assert not a["same"] and a["xs_max_abs"] == 1e-3 and a["us_max_abs"] == 0.0
    a = bench.agreement(Solved([np.ones(2), np.zeros(2)], [np.ones(1) + 2e-6, np.zeros(0)]), same)
    assert not a["same"] and abs(a["us_max_abs"] - 2e-6) < 1e-12
    assert not bench.agreement(Solved(same.xs, same.us, iters=4), same)["same"]
