"""Scaling study: operation counts against the number of joints, per algorithm variant.

The robot families are made here, deterministically, so the study regenerates
byte for byte: arm-like chains (joint axes cycling z, y, y, x, offsets along
the link, general inertias with products of inertia) and two-armed trees
(a trunk carrying two equal arms, one tip at each hand).  Counts come from
the finished straight-line programs, like every other count soagen reports.
"""
from __future__ import annotations

import json
import math

import numpy as np

from soagen.model.builder import RobotBuilder

# (family label, function) pairs compared in the study; the quantity computed
# is the same within a group
STUDY = {
    "inverse dynamics": ("inverse_dynamics",),
    "mass matrix": ("mass_matrix", "mass_matrix_ne"),
    "mass matrix inverse": ("mass_matrix_inverse_innovations", "mass_matrix_inverse_cholesky"),
    "forward dynamics": ("forward_dynamics_fd4", "forward_dynamics_fd1", "forward_dynamics_fd3",
                         "forward_dynamics_crba"),
    "operational space inertia": ("os_inertia_recursive", "os_inertia_explicit"),
    "inverse dynamics derivatives": ("inverse_dynamics_derivatives_forward_mode", "inverse_dynamics_derivatives_analytic"),
    "forward dynamics derivatives": ("forward_dynamics_derivatives_fd4", "forward_dynamics_derivatives_via_id",
                                     "forward_dynamics_derivatives_via_analytic_id"),
}
FUNCTIONS = tuple(f for group in STUDY.values() for f in group)
# forward-mode derivatives are O(n²) programs of a few hundred thousand statements at n = 48, slow to
# record: studied up to this size; the analytical recursion's to the largest size
LARGEST = {f: 24 for f in ("inverse_dynamics_derivatives_forward_mode", "forward_dynamics_derivatives_fd4",
                           "forward_dynamics_derivatives_via_id")}
_AXES = ((0, 0, 1), (0, 1, 0), (0, 1, 0), (1, 0, 0))


def _link(builder, rng, name):
    """A link of about 1–3 kg with a general (non-diagonal) inertia about its centre of mass."""
    mass = float(np.round(rng.uniform(1.0, 3.0), 3))
    com = np.round(rng.uniform(-0.05, 0.05, 3) + (0.0, 0.0, 0.12), 3)
    a, b, c = rng.uniform(0.05, 0.3, 3)                     # a box, turned by a random rotation
    box = mass / 12 * np.array([b * b + c * c, a * a + c * c, a * a + b * b])
    Q, _ = np.linalg.qr(rng.normal(size=(3, 3)))
    inertia = np.round(Q @ np.diag(box) @ Q.T, 6)
    builder.add_link(name, mass=mass, com=tuple(com), inertia=inertia)


def _arm(builder, rng, parent, prefix, joints, start=0):
    for i in range(joints):
        child = f"{prefix}{i + 1}"
        _link(builder, rng, child)
        builder.add_joint(f"{prefix}j{i + 1}", "revolute", parent, child,
                          xyz=(0.02, 0.0, 0.25), axis=_AXES[(start + i) % len(_AXES)],
                          limits=(-math.pi, math.pi))
        parent = child
    return parent


def chain(n, seed=0):
    """An n-joint arm-like chain with one tip at its last link."""
    rng = np.random.default_rng(seed)
    b = RobotBuilder(f"chain{n}")
    b.add_link("base")
    end = _arm(b, rng, "base", "l", n)
    return b.build(tips=[end])


def two_arm_tree(n, seed=0):
    """An n-joint tree: a trunk of n − 2⌊n/3⌋ joints carrying two arms of ⌊n/3⌋
    joints, one tip per hand (n ≥ 3)."""
    arm = n // 3
    rng = np.random.default_rng(seed)
    b = RobotBuilder(f"tree{n}")
    b.add_link("base")
    top = _arm(b, rng, "base", "t", n - 2 * arm)
    ends = [_arm(b, rng, top, side, arm, start=1) for side in ("a", "b")]
    return b.build(tips=ends)


FAMILIES = {"chain": (chain, 2), "tree": (two_arm_tree, 3)}
#: what the study records of each program (docs/guide/opcounts.md's kinds; trig is a sine and a cosine per
#: joint angle the program reads)
COUNTED = ("mul", "add", "div", "sqrt", "trig", "fma", "statements")


def parse_range(text):
    """``"2..48"`` -> [2, 3, 4, 6, 8, 12, 16, 24, 32, 48] (the sizes 2^k and 3·2^k
    in the range, two per octave, plus both ends); ``"4,8,12"`` -> [4, 8, 12]."""
    if ".." in text:
        lo, hi = (int(x) for x in text.split(".."))
        sizes = {m * 2 ** k for m in (1, 3) for k in range(12)} | {lo, hi}
        return sorted(s for s in sizes if lo <= s <= hi)
    return sorted({int(x) for x in text.split(",")})


def run(sizes, families=("chain", "tree"), progress=None):
    """Op counts per family, function and size: ``{family: {function: {n: counts}}}``."""
    from soagen.codegen import generate
    from soagen.options import Options
    from soagen.program.statements import with_fma

    out = {}
    for fam in families:
        make, smallest = FAMILIES[fam]
        out[fam] = {f: {} for f in FUNCTIONS}
        for n in sizes:
            if n < smallest:
                continue
            if progress:
                progress(fam, n)
            gen = generate(make(n), Options(functions=tuple(f for f in FUNCTIONS if n <= LARGEST.get(f, n))))
            for p in gen.programs:
                counts = with_fma(p)
                out[fam][p.name][n] = {k: counts[k] for k in COUNTED}
    return out


def separate(counts):
    """Operations counted apart: mul + add (docs/guide/opcounts.md's total)."""
    return counts["mul"] + counts["add"]


def fused(counts):
    """Operations with FMA contraction: (mul − fma) + (add − fma) + fma, each fused multiply-add one."""
    return counts["mul"] + counts["add"] - counts["fma"]


def fused_counts(points):
    """``{n: counts}`` -> ``{n: {"mul": mul − fma, "add": add − fma, "fma": fma}}``: the FMA-fused program's
    multiplications, additions and fused multiply-adds per size."""
    return {n: {"mul": c["mul"] - c["fma"], "add": c["add"] - c["fma"], "fma": c["fma"]} for n, c in points.items()}


def slope(points, cost=separate):
    """Least-squares slope of log(cost) (mul + add unless told) against log n over the upper half
    of the sizes, at least the two largest (the asymptotic exponent); NaN with one
    size; ``points`` is ``{n: counts}``."""
    ns = sorted(points)[min(len(points) // 2, len(points) - 2):]
    if len(ns) < 2:
        return float("nan")
    x = np.log(ns)
    y = np.log([cost(points[n]) for n in ns])
    return float(np.polyfit(x, y, 1)[0])


def last_slope(points, cost=separate):
    """Exponent of cost (mul + add unless told) between the two largest sizes (where the leading term
    shows)."""
    ns = sorted(points)[-2:]
    if len(ns) < 2:
        return float("nan")
    c = [cost(points[n]) for n in ns]
    return float(np.log(c[1] / c[0]) / np.log(ns[1] / ns[0]))


def crossover(points_a, points_b, cost=separate):
    """Smallest n from which ``a`` costs fewer operations (mul + add unless told) than ``b``
    at every larger size studied, or None."""
    ns = sorted(set(points_a) & set(points_b))
    costs = {n: (cost(points_a[n]), cost(points_b[n])) for n in ns}
    for i, n in enumerate(ns):
        if all(costs[m][0] < costs[m][1] for m in ns[i:]):
            return n
    return None


# ------------------------------------------------------------------ per-joint costs
#: functions given as polynomials in n (the degree of their leading term on a chain), in this order
PER_JOINT = (("inverse_dynamics", 1), ("forward_dynamics_fd4", 1), ("forward_dynamics_fd1", 1),
             ("forward_dynamics_fd3", 1), ("os_inertia_recursive", 1), ("mass_matrix", 2),
             ("mass_matrix_ne", 2), ("mass_matrix_inverse_innovations", 2),
             ("inverse_dynamics_derivatives_analytic", 2),
             ("mass_matrix_inverse_cholesky", 3), ("forward_dynamics_crba", 3), ("os_inertia_explicit", 3))
#: general formulations from the literature, per function: (label, mul(n), add(n), source).  Only what the
#: project could state with a table number; Featherstone's RBDA cost tables (RNEA, CRBA, ABA, LTDL) were not
#: found in the material searchable here and are not listed (:data:`MISSING_FORMULATIONS`, on the page).
#: mul(n) and add(n) are coefficients, highest power first
GENERAL_FORMULATIONS = {
    "inverse_dynamics": (("recursive Newton–Euler, 3×3 rotations (Luh, Walker & Paul 1980)", (150, -48),
                          (131, -48), "Hollerbach, IEEE Trans. SMC 10(11), 1980, Table I"),
                         ("recursive Lagrangian, 3×3 rotations (Hollerbach 1980)", (412, -277), (320, -201),
                          "Hollerbach, IEEE Trans. SMC 10(11), 1980, Table I")),
}


def fit(points, degree, kind):
    """Least-squares polynomial of ``degree`` in n through ``points[n][kind]`` ({n: counts}): the
    coefficients, highest power first, and the largest |residual| (operations).  Needs more sizes than
    coefficients."""
    ns = sorted(points)
    if len(ns) <= degree + 1:
        raise ValueError(f"{len(ns)} sizes cannot fit and check a degree-{degree} polynomial")
    y = np.array([points[n][kind] for n in ns], float)
    coefficients = np.polyfit(np.array(ns, float), y, degree)
    residual = float(np.abs(np.polyval(coefficients, ns) - y).max())
    return [float(c) for c in coefficients], residual


def polynomial_text(coefficients):
    """``[152.0, -210.54]`` -> ``"152n − 210.5"`` (four significant digits; the powers of n; a coefficient
    ±1 of a power of n unwritten, terms that print as 0 left out, ``"0"`` when all do)."""
    degree = len(coefficients) - 1
    out = ""
    for i, c in enumerate(coefficients):
        power = degree - i
        c = round(c) if abs(c - round(c)) < 1e-9 else c       # an exact fit's rounding error (2n − 1e-14)
        number = f"{abs(c):.4g}"
        if number == "0":
            continue
        if power and number == "1":
            number = ""
        term = number + ("n" if power == 1 else f"n{'²³'[power - 2]}" if power > 1 else "")
        out += (term if not out else f" {'−' if c < 0 else '+'} {term}") if out or c >= 0 else f"−{term}"
    return out or "0"


def per_joint_line(points, kind):
    """A line a·n + b through ``points[n][kind]`` as text, with the largest |residual| in brackets where
    the line misses a size (divisions, square roots and sines/cosines: a few per joint or none, so mostly
    exact)."""
    coefficients, residual = fit(points, 1, kind)
    return polynomial_text(coefficients) + (f" (±{residual:.1f})" if residual >= 0.05 else "")


#: what the per-joint page says of the general formulations it does not list
MISSING_FORMULATIONS = (
    "Featherstone's *Rigid Body Dynamics Algorithms* (Springer, 2008) tabulates per-joint costs of RNEA,",
    "CRBA, ABA and the LTDL factorization, and Featherstone & Orin's \"Dynamics\" chapter of the Springer",
    "Handbook of Robotics tabulates costs too; neither table is listed here: the material searchable for",
    "this page (stored public pages, documentation and source) holds only the chapter's abstract and",
    "reference list and no text of the book's tables, and no figure is quoted from memory.")


def _fitted(points, degree, kinds):
    """Cells of ``kinds`` fitted as polynomials of ``degree`` in n: the polynomial and its largest
    |residual| each."""
    cells = []
    for kind in kinds:
        coefficients, residual = fit(points, degree, kind)
        cells += [polynomial_text(coefficients), f"{residual:.1f}"]
    return cells


def per_joint_markdown(result):
    """The per-joint tables of every family: mul and add fitted as polynomials in n with the largest
    residual, divisions, square roots and sines/cosines as lines a·n + b, the literature's general
    formulations beside the functions that have them; then the FMA-fused program's mul − fma,
    add − fma and fma fitted the same way."""
    lines = ["## Per-joint costs", "",
             "Least-squares polynomials in n through every size studied, multiplications and additions",
             "apart (the form the literature states costs in), with the largest |residual| over the sizes",
             "(operations); divisions, square roots and sines/cosines (`trig`: a sine and a cosine per",
             "joint angle read) as lines a·n + b (± the largest residual where the line misses a size).",
             "The second table of each family is the same programs FMA-fused (docs/guide/opcounts.md):",
             "mul − fma multiplications, add − fma additions and fma fused multiply-adds, each fitted the",
             "same way (divisions, square roots and trig are the first table's). These are soagen's programs",
             "for the study's robots (numbers baked: axes",
             "along frame axes and zero offsets cost nothing); the general formulations below them count a",
             "general arm with every parameter symbolic, as published (Hollerbach's Table I as the project",
             "has quoted it; the paper was not re-read for this page).", *MISSING_FORMULATIONS,
             "On general arms (every α, a, d non-zero, the inertial parameters inputs) soagen's inverse",
             "dynamics beside SymPyBotics', OpenSYMORO's and CasADi-on-Pinocchio's, each fitted the same",
             "way: [peer_opcounts.md](peer_opcounts.md).", ""]
    for fam, funcs in result.items():
        rows = [(f, degree) for f, degree in PER_JOINT if f in funcs and len(funcs[f]) > degree + 1]
        lines += [f"### {'Chains' if fam == 'chain' else 'Two-armed trees'}", ""]
        if not rows:
            lines += ["Too few sizes to fit and check a polynomial.", ""]
            continue
        lines += ["| function | mul | max residual | add | max residual | div | sqrt | trig |",
                  "|---|---|---:|---|---:|---|---|---|"]
        for f, degree in rows:
            cells = _fitted(funcs[f], degree, ("mul", "add"))
            cells += [per_joint_line(funcs[f], kind) for kind in ("div", "sqrt", "trig")]
            lines.append(f"| {f} | " + " | ".join(cells) + " |")
            if fam == "chain":
                for label, mul, add, source in GENERAL_FORMULATIONS.get(f, ()):
                    lines.append(f"| ↳ general formulation: {label}; {source} | {polynomial_text(mul)} | | "
                                 f"{polynomial_text(add)} | | | | |")
        lines += ["", "FMA-fused (the same programs):", "",
                  "| function | mul − fma | max residual | add − fma | max residual | fma | max residual |",
                  "|---|---|---:|---|---:|---|---:|"]
        for f, degree in rows:
            lines.append(f"| {f} | " + " | ".join(_fitted(fused_counts(funcs[f]), degree, ("mul", "add", "fma")))
                         + " |")
        lines.append("")
    return "\n".join(lines)


def as_json(result):
    return json.dumps({fam: {f: {str(n): c for n, c in sorted(pts.items())} for f, pts in funcs.items()}
                       for fam, funcs in result.items()}, indent=1, sort_keys=True) + "\n"


def from_json(text):
    """The inverse of :func:`as_json`."""
    return {fam: {f: {int(n): c for n, c in pts.items()} for f, pts in funcs.items()}
            for fam, funcs in json.loads(text).items()}


#: the outputs of the committed study (``make scaling``)
DOC_OUTPUTS = "--plot docs/scaling.png --markdown docs/scaling.md --json docs/scaling.json"


def size_spec(sizes):
    """The ``--scaling`` argument that gives ``sizes``: ``"LO..HI"`` where :func:`parse_range`
    gives exactly them, else the sizes by commas."""
    sizes = sorted(sizes)
    spec = f"{sizes[0]}..{sizes[-1]}"
    return spec if parse_range(spec) == sizes else ",".join(map(str, sizes))


def _exponent(value):
    return "–" if np.isnan(value) else f"{value:.2f}"


def _size_table(funcs, ns, cost):
    """Rows of ``cost`` per function and size with the two exponents (study order)."""
    lines = ["| function | " + " | ".join(f"n={n}" for n in ns) + " | exponent | last |",
             "|---|" + "---:|" * (len(ns) + 2)]
    for f in sorted(funcs, key=lambda f: (FUNCTIONS + (f,)).index(f)):
        pts = funcs[f]
        cells = " | ".join(str(cost(pts[n])) if n in pts else "" for n in ns)
        lines.append(f"| {f} | {cells} | {_exponent(slope(pts, cost))} | {_exponent(last_slope(pts, cost))} |")
    return lines


def _crossover_sentence(funcs):
    x, y = (crossover(funcs["os_inertia_recursive"], funcs["os_inertia_explicit"], cost) for cost in (separate, fused))
    where = {x: f"from n = {x} on", None: "at no size of this range"}
    return (f"Recursive Λ(0) (`os_inertia_recursive`) costs fewer operations than (J M⁻¹ Jᵀ)⁻¹ "
            f"(`os_inertia_explicit`) {where[x]}" + ("." if x == y else
                                                  f"; FMA-fused {where.get(y, f'from n = {y} on')}."))


def markdown(result, outputs=DOC_OUTPUTS):
    """Tables of mul + add and of the FMA-fused mul + add − fma per size with the fitted exponents, the Λ
    crossover, and the per-joint tables (:func:`per_joint_markdown`); the header names the command with
    the sizes of ``result`` and ``outputs`` (its output flags)."""
    sizes = sorted({n for funcs in result.values() for pts in funcs.values() for n in pts})
    command = " ".join(["soagen opcount --scaling", size_spec(sizes), outputs]).strip()
    lines = ["# Scaling study: operation counts against joints", "",
             f"Generated by `{command}`.",
             "Cells of each family's first table are multiplications + additions of the generated",
             "straight-line program, of its second the same program FMA-fused: mul + add − fma, each fused",
             "multiply-add one operation (divisions, square roots and sin/cos: the per-joint tables; the",
             "rule: [guide/opcounts.md](guide/opcounts.md)); the exponent is the least-squares",
             "slope of log(ops) against log(n) over the upper half of the sizes, the last one",
             "between the two largest sizes (the leading term shows late: (J M⁻¹ Jᵀ)⁻¹ is",
             "n³/6 for the factorization of M but 6m·n² for the products, so its exponent climbs",
             "towards 3 only past n ≈ 36m). The derivatives by forward mode are studied up to n = "
             f"{max(LARGEST.values())} (blank cells), those by the analytical recursion to the largest size.",
             "The plot's last panel is the inverse dynamics of the general arms of",
             "[peer_opcounts.md](peer_opcounts.md) (soagen, SymPyBotics, OpenSYMORO, CasADi-on-Pinocchio, from",
             "`docs/peer_opcounts.json` beside the plot) with the published general formulations.", ""]
    for fam, funcs in result.items():
        ns = sorted({n for pts in funcs.values() for n in pts})
        title = {"chain": "Chains (one tip)", "tree": "Two-armed trees (two tips, Λ is 12 × 12)"}[fam]
        lines += [f"## {title}", "", *_size_table(funcs, ns, separate), "",
                  "FMA-fused (mul + add − fma):", "", *_size_table(funcs, ns, fused), "",
                  _crossover_sentence(funcs), ""]
    return "\n".join(lines) + "\n" + per_joint_markdown(result)


def general_arm_curves(peers):
    """The plot's general-arm panel from ``docs/peer_opcounts.json`` (``peers``): ``{tool: {n: mul + add}}``
    of the inverse dynamics of the general arms, every tool of its table, and the general formulations'
    mul(n) + add(n) at the same sizes (``"… (published)"``)."""
    curves = {t: {int(n): c["mul"] + c["add"] for n, c in points.items()} for t, points in peers["scaling"].items()}
    ns = sorted(next(iter(curves.values())))
    for label, mul, add, _ in GENERAL_FORMULATIONS["inverse_dynamics"]:
        curves[f"{label.split(',')[0]} (published)"] = {n: int(np.polyval(mul, n) + np.polyval(add, n)) for n in ns}
    return curves


def plot(result, path, peers=None):
    """Log-log plot of mul + add against n, one panel per family (needs matplotlib), and with ``peers``
    (``docs/peer_opcounts.json``) one of the general arms' inverse dynamics: soagen, the peers and the
    published general formulations (:func:`general_arm_curves`)."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fams = list(result)
    panels = len(fams) + (peers is not None)
    fig, axes = plt.subplots(1, panels, figsize=(6.5 * panels, 5.2), squeeze=False)
    styles = ["-", "--", ":", "-."]
    for ax, fam in zip(axes[0], fams):
        for ci, (group, names) in enumerate(STUDY.items()):
            for si, f in enumerate(names):
                pts = result[fam][f]
                ns = sorted(pts)
                ax.loglog(ns, [pts[n]["mul"] + pts[n]["add"] for n in ns], styles[si % 4], marker="o",
                          markersize=3, color=f"C{ci}", label=f"{f} ({slope(pts):.2f})")
        x = crossover(result[fam]["os_inertia_recursive"], result[fam]["os_inertia_explicit"])
        if x:
            ax.axvline(x, color="0.6", linewidth=0.8)
            ax.annotate(f"recursive Λ(0) cheaper from n = {x}", xy=(x, 0.98), xycoords=("data", "axes fraction"),
                        xytext=(4, 0), textcoords="offset points", va="top", fontsize=8, color="0.3")
        ns = sorted({n for pts in result[fam].values() for n in pts})
        _axes(ax, ns, {"chain": "chains, one tip", "tree": "two-armed trees, two tips"}[fam])
        ax.legend(fontsize=7, title="function (fitted exponent)", title_fontsize=7, loc="upper left",
                  bbox_to_anchor=(0.0, 0.93))
    if peers is not None:
        ax = axes[0][-1]
        curves = general_arm_curves(peers)
        for i, (label, pts) in enumerate(curves.items()):
            ns = sorted(pts)
            published = label.endswith("(published)")           # grey, dotted and dash-dotted
            ax.loglog(ns, [pts[n] for n in ns], styles[2 + i % 2] if published else "-",
                      marker=None if published else "o", markersize=3, color="0.4" if published else f"C{i}",
                      label=label)
        _axes(ax, sorted({n for pts in curves.values() for n in pts}),
              "inverse dynamics, general arms (docs/peer_opcounts.json)")
        ax.legend(fontsize=7, loc="upper left")
    fig.tight_layout()
    fig.savefig(path, dpi=110, metadata={"Software": None})
    plt.close(fig)


def _axes(ax, ns, title):
    ax.set_xticks(ns)
    ax.set_xticklabels([str(n) for n in ns])
    ax.minorticks_off()
    ax.set_title(title)
    ax.set_xlabel("joints n")
    ax.set_ylabel("multiplications + additions")
    ax.grid(True, which="major", linewidth=0.3)
