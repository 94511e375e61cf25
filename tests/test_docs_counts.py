"""The committed count pages (docs/opcounts.md, docs/scaling.*) are what the
generator produces now: they fail when stale."""
from __future__ import annotations

import json
import re

import numpy as np
import pytest

from tests.support import ROOT

from soagen.reports import opcount

from soagen.reports import scaling

DOCS = ROOT / "docs"


def test_literature_page_is_fresh():
    ours = json.loads((ROOT / "generated" / "puma560" / "opcounts.json").read_text())["functions"]
    casadi = json.loads((DOCS / "casadi_opcounts.json").read_text())
    peers = json.loads((DOCS / "peer_opcounts.json").read_text())
    page = (DOCS / "opcounts.md").read_text()
    assert page == opcount.literature_markdown(ours, casadi, peers), \
        "stale: run `python benchmarks/casadi_opcounts.py --table`"
    # every cell of the same-robot table has mul / add / div / sqrt; the general arm has all five tools
    same = page.split("## Same robot", 1)[1].split("\n\n", 3)[2].splitlines()[2:]
    fd4 = ours["forward_dynamics_fd4"]
    assert f"| {fd4['mul']} / {fd4['add']} / {fd4['div']} / {fd4['sqrt']} ({fd4['trig']}) |" in page
    assert len(same) == len(opcount.LITERATURE_FUNCTIONS) and all(r.count(" / ") >= 3 for r in same)
    casadi_arm = peers["counts"]["general6"]["CasADi-on-Pinocchio"]["inverse_dynamics"]
    assert (f"| CasADi-on-Pinocchio, parameters numeric, general arm | inverse dynamics | {casadi_arm['mul']} | "
            f"{casadi_arm['add']} | {casadi_arm['div']} | {casadi_arm['sqrt']} |") in page


def test_casadi_statements_are_counted_like_soagens():
    """CasADi's C spellings count as the same operations as soagen's (docs/opcounts.md):
    ``casadi_sq(x)`` and ``2.*x`` are multiplications, ``(-x)`` a negation, libm sin/cos trig."""
    def only(**kinds):
        return {k: kinds.get(k, 0) for k in ("mul", "add", "div", "sqrt", "trig", "neg")}

    assert opcount.count_line("casadi_sq(a2);") == only(mul=1)
    assert opcount.count_line("(2.*a1);") == only(mul=1)
    assert opcount.count_line("(a1-a2);") == only(add=1)
    assert opcount.count_line("(-a3);") == only(neg=1)
    assert opcount.count_line("sin(a4);") == opcount.count_line("soagen_cos[0];") == only(trig=1)
    stored = json.loads((DOCS / "casadi_opcounts.json").read_text())
    assert "`cse`" in stored["method"] and set(stored["without_cse"]) == set(stored["functions"])


def test_scaling_data_regenerates_for_small_sizes():
    """The study's smallest robots regenerate to the committed counts (the whole
    study takes minutes: `make scaling`)."""
    stored = scaling.from_json((DOCS / "scaling.json").read_text())
    fresh = scaling.run([2, 3, 4])
    for fam, funcs in fresh.items():
        for f, pts in funcs.items():
            for n, counts in pts.items():
                assert set(counts) == set(scaling.COUNTED)              # div, sqrt and fma with mul and add
                assert stored[fam][f][n] == counts, (fam, f, n)


def test_scaling_page_matches_its_data():
    stored = scaling.from_json((DOCS / "scaling.json").read_text())
    assert (DOCS / "scaling.md").read_text() == scaling.markdown(stored)
    # the O(n) recursion overtakes (J M⁻¹ Jᵀ)⁻¹, as [CK] claims
    for fam in ("chain", "tree"):
        assert scaling.crossover(stored[fam]["os_inertia_recursive"], stored[fam]["os_inertia_explicit"]) is not None
        rec, exp = stored[fam]["os_inertia_recursive"], stored[fam]["os_inertia_explicit"]
        assert scaling.slope(rec) < 1.2 and scaling.last_slope(rec) < 1.2
        assert scaling.last_slope(exp) > 1.8 > 1.2 > scaling.last_slope(rec)


def test_scaling_plot_is_deterministic(tmp_path):
    """The plot, with the panel of the peers' general arms, is the same bytes twice."""
    stored = scaling.from_json((DOCS / "scaling.json").read_text())
    peers = json.loads((DOCS / "peer_opcounts.json").read_text())
    a, b = tmp_path / "a.png", tmp_path / "b.png"
    scaling.plot(stored, a, peers)
    scaling.plot(stored, b, peers)
    assert a.read_bytes() == b.read_bytes()


def test_plot_draws_the_peers_measured_and_the_published_lines():
    """The general-arm panel's curves are docs/peer_opcounts.json's inverse dynamics (mul + add) of every tool
    of its table against n, and the published general formulations at the same sizes (Luh–Walker–Paul:
    150n − 48 mul + 131n − 48 add, 1590 at n = 6)."""
    from soagen.reports import peers as peer_report

    measured = json.loads((DOCS / "peer_opcounts.json").read_text())
    curves = scaling.general_arm_curves(measured)
    for tool in peer_report.SCALING_TOOLS:
        assert curves[tool] == {int(n): c["mul"] + c["add"] for n, c in measured["scaling"][tool].items()}, tool
    published = [v for k, v in curves.items() if k.endswith("(published)")]
    assert len(published) == 2 and published[0][6] == 852 + 738 and set(published[0]) == set(curves[tool])
    assert peer_report.CASADI in curves and "SymPyBotics" in curves


def test_scaling_helpers():
    assert scaling.parse_range("2..48") == [2, 3, 4, 6, 8, 12, 16, 24, 32, 48]
    assert scaling.parse_range("4,8,4") == [4, 8]
    pts = {n: {"mul": n ** 3, "add": 0} for n in (2, 4, 8, 16)}
    assert abs(scaling.slope(pts) - 3.0) < 1e-9
    lin = {n: {"mul": 100 * n, "add": 0} for n in (2, 4, 8, 16)}
    assert scaling.crossover(lin, pts) == 16 and scaling.crossover(pts, lin) is None


def test_guide_opcount_table_is_the_generated_counts():
    """docs/guide/speed.md's op-count table is rendered from generated/*/opcounts.json (`make generated`
    rewrites both); every cell has mul, add, div and sqrt."""
    page = (ROOT / "docs" / "guide" / "speed.md").read_text()
    counts = opcount.generated_counts(ROOT)
    assert page == opcount.with_guide_table(page, counts), "stale: run `make generated`"
    table = page.split(opcount.GUIDE_BEGIN, 1)[1].split(opcount.GUIDE_END, 1)[0]
    rows = table.strip().splitlines()[2:]
    assert len(rows) == len(opcount.GUIDE_FUNCTIONS)
    assert all(len(cell.split(", ")) == 4 for r in rows for cell in r.strip("|").split(" | ")[1:])


def test_guide_quotes_the_measured_casadi_counts():
    """The guide's CasADi-on-Pinocchio figures are docs/casadi_opcounts.json's (302 / 264 was quoted for M
    while the committed count is 313 / 264)."""
    page = (ROOT / "docs" / "guide" / "speed.md").read_text()
    measured = json.loads((DOCS / "casadi_opcounts.json").read_text())["functions"]
    rnea, crba = measured["rnea"], measured["crba"]
    assert (f"{rnea['mul']} mul / {rnea['add']} add for inverse dynamics, "
            f"{crba['mul']} / {crba['add']} for M)") in page


def test_scaling_header_and_exponents_of_a_two_size_run():
    """A run of two sizes names them in the header (not 2..48) and prints finite exponents (no nan)."""
    counts = dict.fromkeys(scaling.COUNTED, 0)
    two = {"chain": {f: {4: {**counts, "mul": 16}, 8: {**counts, "mul": 64}} for f in scaling.FUNCTIONS}}
    page = scaling.markdown(two, "--json x.json")
    assert "Generated by `soagen opcount --scaling 4,8 --json x.json`." in page
    row = next(line for line in page.splitlines() if line.startswith("| inverse_dynamics |"))
    assert row.endswith("| 16 | 64 | 2.00 | 2.00 |") and "nan" not in page


def test_scaling_size_spec_names_what_ran():
    assert scaling.size_spec([2, 3, 4, 6, 8, 12, 16, 24, 32, 48]) == "2..48"
    assert scaling.size_spec([2, 3]) == "2..3" and scaling.size_spec([4, 8]) == "4,8"
    two = {n: {"mul": n ** 2, "add": 0} for n in (4, 8)}
    assert abs(scaling.slope(two) - 2.0) < 1e-12
    assert scaling.slope({4: {"mul": 1, "add": 1}}) != scaling.slope({4: {"mul": 1, "add": 1}})   # NaN: one size


def test_per_joint_fit_and_its_text():
    """The per-joint polynomials are least-squares fits with the largest residual: exact data
    gives its coefficients back and residual 0; a perturbed point shows in the residual."""
    line = {n: {"mul": 152 * n - 210, "add": 3 * n * n + 2 * n + 7} for n in (2, 3, 4, 6, 8)}
    coefficients, residual = scaling.fit(line, 1, "mul")
    assert np.allclose(coefficients, [152, -210]) and residual < 1e-9
    coefficients, residual = scaling.fit(line, 2, "add")
    assert np.allclose(coefficients, [3, 2, 7]) and residual < 1e-9
    line[8]["mul"] += 10
    assert 4 < scaling.fit(line, 1, "mul")[1] < 10
    with pytest.raises(ValueError):
        scaling.fit({2: line[2], 3: line[3]}, 1, "mul")          # two sizes: nothing left to check the fit
    assert scaling.polynomial_text([152.0, -210.54]) == "152n − 210.5"
    assert scaling.polynomial_text([-0.5, 2.0, 0.04]) == "−0.5n² + 2n + 0.04"
    assert scaling.polynomial_text([1.0, -1.0]) == "n − 1" and scaling.polynomial_text([0.0, 0.0]) == "0"
    pivots = {n: {"div": 2 * n - 1} for n in (2, 3, 4, 6)}
    assert scaling.per_joint_line(pivots, "div") == "2n − 1"          # exact: no residual printed
    with pytest.raises(KeyError):
        scaling.per_joint_line(pivots, "sqrt")                           # not recorded: no figure, no "—"
    pivots[6]["div"] += 1
    assert scaling.per_joint_line(pivots, "div").endswith(")") and "(±0." in scaling.per_joint_line(pivots, "div")


def test_per_joint_table_is_the_committed_study_fitted():
    """docs/scaling.md's per-joint rows are the fits of docs/scaling.json (RNEA's chain cost: one
    slope per joint, every size within two operations of the line), beside the general formulations."""
    stored = scaling.from_json((DOCS / "scaling.json").read_text())
    page = (DOCS / "scaling.md").read_text()
    chains = page.split("### Chains", 1)[1].split("###", 1)[0]
    for f, degree in scaling.PER_JOINT:
        mul, mul_res = scaling.fit(stored["chain"][f], degree, "mul")
        add, add_res = scaling.fit(stored["chain"][f], degree, "add")
        assert (f"| {f} | {scaling.polynomial_text(mul)} | {mul_res:.1f} | {scaling.polynomial_text(add)} | "
                f"{add_res:.1f} |") in chains
        divisions, roots, trig = (scaling.per_joint_line(stored["chain"][f], k) for k in ("div", "sqrt", "trig"))
        assert f"{add_res:.1f} | {divisions} | {roots} | {trig} |" in chains, f
    rnea = stored["chain"]["inverse_dynamics"]
    assert scaling.fit(rnea, 1, "mul")[1] < 2 and scaling.fit(rnea, 1, "add")[1] < 2
    assert "150n − 48" in chains and "Table I" in chains
    # every count of the study has its divisions, square roots, sines/cosines and FMAs
    assert all(set(c) == set(scaling.COUNTED) for funcs in stored.values() for pts in funcs.values()
               for c in pts.values())
    assert "—" not in page
    # the literature missing is named, not quoted
    assert " ".join(scaling.MISSING_FORMULATIONS) in " ".join(page.split())


def _evaluate(polynomial, n):
    """``"0.5n² − 2n + 1"`` at ``n``, and the most its 4-digit coefficients can be off there."""
    value = error = 0.0
    for term in polynomial.replace(" − ", " -").replace(" + ", " +").replace("−", "-").split():
        number, x, power = term.partition("n")
        c = float(number + "1" if number in ("", "+", "-") else number)
        term = c * n ** ({"": 1, "²": 2, "³": 3}[power] if x else 0)
        value, error = value + term, error + 5e-4 * abs(term)       # half a unit of the 4th significant digit
    return value, error


def test_scaling_page_prints_fused_counts_and_per_joint_lines():
    """The rendered study's FMA-fused tables are mul + add − fma of docs/scaling.json per size, and every
    per-joint polynomial (mul, add, div, sqrt, trig; mul − fma, add − fma, fma) gives back the JSON's
    counts at every size within its printed residual."""
    stored = scaling.from_json((DOCS / "scaling.json").read_text())
    page = scaling.markdown(stored)
    sections = dict(s.split("\n", 1) for s in page.split("\n## ")[1:])
    assert all(c["fma"] > 0 for funcs in stored.values() for pts in funcs.values() for c in pts.values())
    for fam, title in (("chain", "Chains (one tip)"), ("tree", "Two-armed trees (two tips, Λ is 12 × 12)")):
        table = sections[title].split("FMA-fused (mul + add − fma):", 1)[1].split("\n\n")[1].splitlines()
        ns = [int(c[2:]) for c in table[0].strip("| ").split(" | ")[1:-2]]
        assert len(table) == 2 + len(scaling.FUNCTIONS)
        for row in table[2:]:
            f, *cells = row.strip("| ").split(" | ")
            pts = stored[fam][f]
            assert cells[:-2] == [str(pts[n]["mul"] + pts[n]["add"] - pts[n]["fma"]) if n in pts else ""
                                  for n in ns], (fam, f)
        per_joint = sections["Per-joint costs"].split(f"### {'Chains' if fam == 'chain' else 'Two-armed trees'}")[1]
        per_joint = per_joint.split("###")[0]
        separate, fused = per_joint.split("FMA-fused (the same programs):")
        for text, kinds, counts in ((separate, ("mul", "±", "add", "±", "div", "sqrt", "trig"), lambda p: p),
                                    (fused, ("mul", "±", "add", "±", "fma", "±"), lambda p: {
                                        n: {"mul": c["mul"] - c["fma"], "add": c["add"] - c["fma"], "fma": c["fma"]}
                                        for n, c in p.items()})):
            rows = [r.strip("| ").split(" | ") for r in text.split("\n\n")[1].splitlines()[2:] if r[2] != "↳"]
            assert [r[0] for r in rows] == [f for f, d in scaling.PER_JOINT if len(stored[fam][f]) > d + 1]
            for f, *cells in rows:
                pts = counts(stored[fam][f])
                for i, kind in enumerate(kinds):
                    if kind == "±":
                        continue
                    line, _, bracket = cells[i].partition(" (±")
                    residual = float(cells[i + 1]) if kinds[i + 1:i + 2] == ("±",) else float(bracket[:-1] or 0)
                    for n, c in pts.items():
                        value, error = _evaluate(line, n)
                        assert abs(value - c[kind]) <= residual + error + 0.05, (fam, f, kind, n, line)


def test_guide_quotes_the_general_formulations_and_the_general_arm():
    """speed.md's general-formulation figure is Hollerbach's formula at n = 6 and its general-arm
    figures are docs/peer_opcounts.json's (soagen with π as an input, SymPyBotics, OpenSYMORO)."""
    page = " ".join((ROOT / "docs" / "guide" / "speed.md").read_text().split())
    mul, add = opcount.PUBLISHED[0][2](6)
    assert f"(Luh–Walker–Paul Newton–Euler: {mul} / {add} at n = 6)" in page
    general = json.loads((DOCS / "peer_opcounts.json").read_text())["counts"]["general6"]
    ours, spb, sym = (general[t]["inverse_dynamics"] for t in ("soagen, π input", "SymPyBotics", "OpenSYMORO"))
    assert (f"soagen's inverse dynamics is {ours['mul']} / {ours['add']}, SymPyBotics' {spb['mul']} / {spb['add']} "
            f"and OpenSYMORO's {sym['mul']} / {sym['add']}") in page
    baked, casadi = (general[t]["inverse_dynamics"] for t in ("soagen, baked", "CasADi-on-Pinocchio"))
    assert (f"with every parameter a number, soagen's is {baked['mul']} / {baked['add']} and CasADi-on-Pinocchio's "
            f"{casadi['mul']} / {casadi['add']}") in page


def test_scaling_command_draws_the_peers_beside_the_plot(tmp_path, monkeypatch, capsys):
    """`soagen opcount --scaling … --plot DIR/x.png` hands the plot DIR/peer_opcounts.json (the peers' panel)
    and says so when it is missing (the study itself stubbed: the committed one)."""
    from soagen import cli

    stored = scaling.from_json((DOCS / "scaling.json").read_text())
    drawn = []
    monkeypatch.setattr(scaling, "run", lambda sizes, progress=None: stored)
    monkeypatch.setattr(scaling, "plot", lambda result, path, peers=None: drawn.append(peers))
    assert cli.main(["opcount", "--scaling", "2..48", "--plot", str(tmp_path / "x.png")]) == 0
    assert drawn == [None] and "no panel of the peers" in capsys.readouterr().err
    (tmp_path / "peer_opcounts.json").write_text((DOCS / "peer_opcounts.json").read_text())
    assert cli.main(["opcount", "--scaling", "2..48", "--plot", str(tmp_path / "x.png")]) == 0
    assert drawn[1] == json.loads((DOCS / "peer_opcounts.json").read_text())


def _make_recipes(target, rules):
    """The recipe lines `make target` runs, its prerequisites first (the Makefile read as text)."""
    prereqs, recipe = rules[target]
    lines = [line for p in prereqs for line in _make_recipes(p, rules)]
    for line in recipe:
        sub = re.fullmatch(r"\$\(MAKE\) (\S+)", line)
        lines += _make_recipes(sub.group(1), rules) if sub else [line]
    return lines


def test_one_command_reruns_every_opcount_page():
    """`make opcounts` (named in guide/opcounts.md) writes every page with an op-count table."""
    rules, target = {}, None
    for line in (ROOT / "Makefile").read_text().splitlines():
        head = re.match(r"^([a-z_]+):(.*)$", line)
        if head:
            target = head.group(1)
            rules[target] = (head.group(2).split(), [])
        elif line.startswith("\t") and target:
            rules[target][1].append(line.strip())
        elif not line.strip():
            target = None
    run = "\n".join(_make_recipes("opcounts", rules))
    assert "make opcounts" in (ROOT / "docs" / "guide" / "opcounts.md").read_text()
    writers = {"generated/": "soagen generate --example", "speed.md": "python -m soagen.reports.opcount .",
               "docs/scaling.md": "--markdown docs/scaling.md", "docs/opcounts.md": "benchmarks/casadi_opcounts.py",
               "docs/peer_opcounts.md": "benchmarks/peer_opcounts.py",
               "docs/parameter_opcounts.md": "--peers docs/parameter_opcounts.md"}
    for page, step in writers.items():
        assert step in run, f"make opcounts does not rerun {page}"
    # the peers' JSON is read by the literature page and the scaling plot: it runs before them
    assert run.index("peer_opcounts.py") < run.index("--scaling") < run.index("casadi_opcounts.py")
