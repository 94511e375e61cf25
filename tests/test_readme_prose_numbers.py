"""The numbers the user guide's prose quotes (docs/guide/*.md, outside the rendered tables) are
the committed outputs they come from: docs/benchmarks.md (`python benchmarks/run.py`), docs/scaling.md
(`soagen opcount --scaling ...`), docs/sweep.md (`python benchmarks/sweep.py`) and docs/trig_share.md
(`python benchmarks/trig_share.py --markdown docs/trig_share.md`), docs/casadi_hessians.json
(`python benchmarks/casadi_hessians.py`) and docs/second_batches.json (`python benchmarks/second_batches.py`)."""
from __future__ import annotations

import json
import re

from tests.support import ROOT

GUIDE = ROOT / "docs" / "guide"


def _page(name):
    """A guide page with its line breaks folded."""
    return " ".join((GUIDE / name).read_text().split())


def _rows(path, section=None):
    """{first cell: [cells]} of the markdown tables in ``path`` (or in its ``## section``);
    a name seen twice keeps both rows, in order."""
    text = path.read_text()
    if section is not None:
        text = re.split(r"^## ", text, flags=re.M)
        text = next(part for part in text if part.startswith(section))
    rows = {}
    for line in text.splitlines():
        if line.startswith("| ") and not line.startswith("|---"):
            cells = [c.strip() for c in line.strip("|").split("|")]
            rows.setdefault(cells[0].strip("`"), []).append(cells)
    return rows


def _bench(robot):
    """(ratio vs Pinocchio, operations) per function of one robot's benchmark section."""
    rows = _rows(ROOT / "docs" / "benchmarks.md", robot)
    ratio = {k: v[0][5].split()[0] for k, v in rows.items() if len(v[0]) >= 10}
    ops = {k: r[1] for k, v in rows.items() for r in v if len(r) == 4}
    ns = {k: v[0][1] for k, v in rows.items() if len(v[0]) >= 10}
    return ratio, ops, ns


def _quoted(page, *phrases):
    text = _page(page)
    for phrase in phrases:
        assert phrase in text, f"docs/guide/{page} should say: {phrase!r} (regenerate or edit the prose)"


def test_derivative_prose():
    p_ratio, p_ops, _ = _bench("panda")
    u_ratio, u_ops, _ = _bench("ur5")
    d = ("inverse_dynamics_derivatives", "forward_dynamics_derivatives")
    _quoted("derivatives-and-mpc.md",
            f"they take {u_ratio[d[0]]}× and {u_ratio[d[1]]}× the time",
            f"but {p_ratio[d[0]]}× and {p_ratio[d[1]]}× on the Panda",
            f"({p_ops[d[0]]} and {p_ops[d[1]]} operations against {u_ops[d[0]]} and {u_ops[d[1]]})")
    s_ratio, s_ops, s_ns = _bench("panda_second")
    q_ratio, q_ops, q_ns = _bench("solo12_second")
    h_ratio, h_ops, _ = _bench("talos_second")
    second = "inverse_dynamics_second_derivatives"
    _quoted("derivatives-and-mpc.md",
            f"Panda's tensors take {s_ratio[second]}× its time ({s_ops[second]} operations), solo12's "
            f"{q_ratio[second]}× ({q_ops[second]} operations), the TALOS's {h_ratio[second]}× "
            f"({h_ops[second]} operations)",
            f"the contracted Hessians cost {float(s_ns['inverse_dynamics_hessian']) / float(s_ns[d[0]]):.2f}× "
            f"(`inverse_dynamics_hessian`) and "
            f"{float(s_ns['forward_dynamics_hessian']) / float(s_ns[d[1]]):.2f}× (`forward_dynamics_hessian`)",
            f"on solo12 `contact_dynamics_hessian` "
            f"{float(q_ns['contact_dynamics_hessian']) / float(q_ns['contact_dynamics_derivatives']):.2f}× one")
    calls = {r["function"]: r for r in json.loads((ROOT / "docs" / "casadi_hessians.json").read_text())["rows"]}
    _quoted("derivatives-and-mpc.md",
            f"the Panda's cost {calls['inverse_dynamics']['ratio'][0]:.2f}× (`inverse_dynamics`), "
            f"{calls['forward_dynamics']['ratio'][0]:.2f}× (`forward_dynamics`) and "
            f"{calls['rk4_step']['ratio'][0]:.2f}× (`rk4_step`")
    batches = json.loads((ROOT / "docs" / "second_batches.json").read_text())
    ratio = {r["backend"].split(",")[0]: r["ratio"] for r in batches["rows"]}
    _quoted("derivatives-and-mpc.md",
            f"{batches['lanes']} states an instruction here) takes {ratio['C SIMD'][0]:.2f}× the time per state of a "
            f"C++ loop of Pinocchio's call, its scalar loop {ratio['C scalar loop (_batch)'][0]:.2f}×")
    rows = (ROOT / "docs" / "second_batches.md").read_text()
    for r in batches["rows"]:
        m, lo, hi = r["ratio"]
        assert f"| {r['backend']} | {r['ns_per_state']:.0f} | {m:.2f} [{lo:.2f}, {hi:.2f}] |" in rows, r["backend"]
    page = (ROOT / "docs" / "casadi_hessians.md").read_text()        # the page is its record's rendering
    for r in calls.values():
        m, lo, hi = r["ratio"]
        assert f"| {r['hessian_ns']:.0f} | {m:.2f} ({lo:.2f}–{hi:.2f}) |" in page, r["function"]
    t_ratio, t_ops, _ = _bench("talos_derivatives")
    _quoted("derivatives-and-mpc.md",
            f"they take {t_ratio[d[0]]}× and {t_ratio[d[1]]}×: ∂q̈ is {t_ops[d[1]]} operations")


def test_targets_not_met_prose():
    t_ratio, t_ops, t_ns = _bench("talos")
    p_ratio, p_ops, p_ns = _bench("panda")
    _quoted("speed.md",
            f"the table gives {t_ratio['os_inertia']}×, {t_ratio['mass_matrix_inverse']}× and "
            f"{t_ratio['mass_matrix']}×",
            f"the TALOS M is {t_ops['mass_matrix']} operations in {t_ns['mass_matrix']} ns, the Panda's "
            f"{p_ops['mass_matrix']} in {p_ns['mass_matrix']} ns",
            f"Cholesky route ({t_ops['mass_matrix_inverse']} operations",
            f"Λ(0) is {t_ops['os_inertia']} operations",
            f"The Panda's M against Pinocchio ({p_ratio['mass_matrix']}×")


def test_sweep_prose():
    rows = _rows(ROOT / "docs" / "sweep.md")
    tiago = rows["tiago/tiago_dual.urdf"][0]
    centauro = next(r for r in rows["centauro/centauro.urdf"] if r[1] == "floating")
    _quoted("real-robots.md",
            f"{tiago[3]} s to generate, {tiago[4]} s to compile",
            f"centauro with a floating base: {centauro[3]} s and {centauro[4]} s")


def test_scaling_prose():
    chains = _rows(ROOT / "docs" / "scaling.md", "Chains")
    fit = {k: float(v[0][-2]) for k, v in chains.items() if k != "function"}
    last = {k: float(v[0][-1]) for k, v in chains.items() if k != "function"}

    def span(values):
        return f"{min(values):.2f}–{max(values):.2f}"

    linear = ["inverse_dynamics", "forward_dynamics_fd1", "forward_dynamics_fd3", "forward_dynamics_fd4",
              "os_inertia_recursive"]
    quadratic = ["mass_matrix", "mass_matrix_ne", "mass_matrix_inverse_innovations"]
    cubic = ["mass_matrix_inverse_cholesky", "forward_dynamics_crba", "os_inertia_explicit"]
    _quoted("speed.md",
            f"exponents of {span([fit[k] for k in linear])}",
            f"({'n² outputs; ' + span([fit[k] for k in quadratic])})",
            f"({span([last[k] for k in cubic])} between n = 32 and 48)",
            f"({fit['inverse_dynamics_derivatives_forward_mode']:.2f} for inverse dynamics, "
            f"{fit['forward_dynamics_derivatives_fd4']:.2f} and {fit['forward_dynamics_derivatives_via_id']:.2f}",
            f"counted to n = 48, fits {fit['inverse_dynamics_derivatives_analytic']:.2f}",
            f"and the forward dynamics derivatives built on it, {fit['forward_dynamics_derivatives_via_analytic_id']:.2f}")


def test_trig_share_prose():
    """speed.md's time of the sines and cosines in the TALOS's A_G is docs/trig_share.md's line."""
    text = (ROOT / "docs" / "trig_share.md").read_text()
    m = re.search(r"^- centroidal_momentum_matrix: (\d+) ns as generated, (\d+) ns with cos/sin as inputs: "
                  r"trig (\d+) ns", text, flags=re.M)
    assert m, "docs/trig_share.md has no line for centroidal_momentum_matrix"
    generated, _, trig = m.groups()
    _quoted("speed.md", f"times the TALOS's A_G (32 angles) as generated and with cos/sin as inputs "
                        f"([docs/trig_share.md](../trig_share.md)): the trig takes {trig} of {generated} ns.")


def test_loop_operations_prose():
    """speed.md's operation count of the TALOS's forward-dynamics derivatives is docs/benchmarks.md's."""
    _, t_ops, _ = _bench("talos_derivatives")
    _quoted("speed.md", f"(`talos_derivatives` in docs/benchmarks.md, {t_ops['forward_dynamics_derivatives']} "
                        "operations)")


def test_scaling_crossover_prose():
    """The sizes from which one variant of the scaling study is the shorter, as speed.md states them, are
    docs/scaling.json's (soagen.reports.scaling.crossover: from that size on at every larger size)."""
    from soagen.reports import scaling

    stored = scaling.from_json((ROOT / "docs" / "scaling.json").read_text())
    chain, tree = stored["chain"], stored["tree"]

    def cross(fam, a, b):
        return scaling.crossover(fam[a], fam[b])

    inverse, cholesky = chain["mass_matrix_inverse_innovations"], chain["mass_matrix_inverse_cholesky"]
    shorter = 1 - sum(cholesky[32][k] for k in ("mul", "add")) / sum(inverse[32][k] for k in ("mul", "add"))
    _quoted("speed.md",
            "is the shorter from n = "
            f"{cross(chain, 'inverse_dynamics_derivatives_analytic', 'inverse_dynamics_derivatives_forward_mode')}"
            " on chains",
            f"from n = {cross(chain, 'os_inertia_recursive', 'os_inertia_explicit')} on chains and "
            f"n = {cross(tree, 'os_inertia_recursive', 'os_inertia_explicit')} on two-armed trees",
            f"FD4 beats CRBA+Cholesky from n = {cross(chain, 'forward_dynamics_fd4', 'forward_dynamics_crba')};",
            f"only at n = {cross(chain, 'mass_matrix_inverse_innovations', 'mass_matrix_inverse_cholesky')} of the "
            f"sizes counted (at n = 32 Cholesky's is {100 * shorter:.0f}% shorter")
