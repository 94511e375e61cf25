"""The package's layout: stages as subpackages, each importing only the stages below it,
no import cycle (imports inside functions count), targets as plug-ins, no module over
600 lines."""
from __future__ import annotations

import ast

import pytest

from tests.support import ROOT

PACKAGE = ROOT / "generator"

#: stage of each module prefix, bottom first: a module imports only stages at or below its own
#: (the same stage only inside its own subpackage, or the catalogue's own module)
STAGES = [
    ("soagen._version", 0), ("soagen.options", 0), ("soagen._lazy", 0),
    ("soagen.model", 1),
    ("soagen.reference", 2),
    ("soagen.functions", 3),
    ("soagen.program", 4),
    ("soagen.passes", 5),
    ("soagen.targets", 6),
    ("soagen.codegen", 7),
    ("soagen.pipeline", 8), ("soagen.check", 8), ("soagen.reports", 8),
    ("soagen.cli", 9), ("soagen.__main__", 10), ("soagen", 11),
]
#: imports that climb, each a deprecation path kept for users (removed with the deprecated name): none
#: since Robot.base_parameters() went (soagen.base_parameters(robot) is the way)
DEPRECATED = set()
#: plug-ins that use another: the C99 module links the SIMD batches; the MCU and CasADi targets build the C99 text
PLUGIN_USES = {("c99", "simd"), ("mcu", "c99"), ("casadi", "c99")}


def module_name(path):
    parts = list(path.relative_to(PACKAGE).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(["soagen", *parts])


def modules():
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def imports(path, known):
    """The soagen modules ``path`` imports (at module level or inside functions)."""
    out = set()
    for node in ast.walk(ast.parse(path.read_text())):
        if isinstance(node, ast.ImportFrom):
            assert node.level == 0, f"{path}: relative import (soagen's imports are absolute)"
            if node.module and node.module.split(".")[0] == "soagen":
                for alias in node.names:
                    sub = f"{node.module}.{alias.name}"
                    out.add(sub if sub in known else node.module)
        elif isinstance(node, ast.Import):
            out |= {a.name for a in node.names if a.name.split(".")[0] == "soagen"}
    return out


def stage(name):
    """(rank, prefix) of the longest prefix in :data:`STAGES` naming ``name``'s stage."""
    prefix, rank = max(((p, r) for p, r in STAGES if name == p or name.startswith(p + ".")), key=lambda pr: len(pr[0]))
    return rank, prefix


def graph():
    known = modules()
    return {name: imports(path, known) for name, path in known.items()}


def test_stages_import_only_the_stages_below():
    wrong = []
    for name, deps in graph().items():
        (rank, prefix) = stage(name)
        for dep in deps:
            (dep_rank, dep_prefix) = stage(dep)
            if (name, dep) in DEPRECATED:
                continue
            if dep_rank > rank or (dep_rank == rank and dep_prefix != prefix):
                wrong.append(f"{name} -> {dep}")
    assert not wrong, "imports climbing a stage: " + ", ".join(sorted(wrong))


def test_no_import_cycle():
    g = {name: {d for d in deps if (name, d) not in DEPRECATED and d != name} for name, deps in graph().items()}
    g = {name: {d for d in deps if not name.startswith(d + ".")} for name, deps in g.items()}  # a package's own init
    index, low, on_stack, stack, cycles, counter = {}, {}, set(), [], [], [0]

    def visit(v):                                   # Tarjan's strongly connected components
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in g.get(v, ()):
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                cycles.append(sorted(comp))

    for v in sorted(g):
        if v not in index:
            visit(v)
    assert not cycles, f"import cycles: {cycles}"


def test_robot_knows_nothing_above_the_model():
    deps = graph()["soagen.model.robot"]
    assert all(d.startswith("soagen.model.") for d in deps), deps


def test_targets_are_plugins():
    """A target imports no other target (but the declared uses) and is reachable by its registry line."""
    from soagen.targets import REGISTRY, plugin

    wrong = []
    for name, deps in graph().items():
        if not name.startswith("soagen.targets.") or name.split(".")[2] in ("common", "cache"):
            continue
        own = name.split(".")[2]
        for dep in deps:
            if dep.startswith("soagen.targets.") and dep.split(".")[2] not in (own, "common", "cache") \
                    and (own, dep.split(".")[2]) not in PLUGIN_USES:
                wrong.append(f"{name} -> {dep}")
    assert not wrong, wrong
    for name in REGISTRY:
        assert callable(plugin(name).files)
    assert callable(plugin("c", need="build").build) and callable(plugin("cuda", need="build").build)
    with pytest.raises(soagen_options_error()):
        plugin("simd", need="build")


def soagen_options_error():
    from soagen import OptionsError

    return OptionsError


def test_every_package_is_shipped():
    """Each folder of the package is listed in pyproject.toml (CI installs the wheel, not the tree)."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {module_name(p) for p in PACKAGE.rglob("__init__.py")}
    assert folders <= listed, sorted(folders - listed)


def test_modules_are_small():
    big = {name: n for name, path in modules().items() if (n := len(path.read_text().splitlines())) > 600}
    assert not big, big
