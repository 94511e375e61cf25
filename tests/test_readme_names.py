"""Every name the README and the user guide (docs/guide/*.md) mention exists: each dotted
``soagen.<name>[.<name>...]`` resolves as attributes after a bare ``import soagen``, in a fresh
interpreter (a submodule imported earlier in the session would hide a missing one), and each ``soagen <command>`` in code names a subcommand (or an option)
that ``soagen --help`` lists.  Nothing is built."""
from __future__ import annotations

import importlib
import json
import re
import subprocess
import sys

import pytest

from tests.support import ROOT

PAGES = [ROOT / "README.md", *sorted((ROOT / "docs" / "guide").glob("*.md"))]

# soagen.a.b.c, not inside a longer word or path (``my_soagen.x``, ``/soagen.x``)
DOTTED = re.compile(r"(?<![\w./-])soagen(?:\.[A-Za-z_][A-Za-z0-9_]*)+")
# in code: ``soagen generate``, ``python -m soagen check``, ``soagen --version``
COMMAND = re.compile(r"(?<![\w./$-])soagen[ \t]+(--?[a-z][\w-]*|[a-z][\w-]*)")
FENCE = re.compile(r"^[ \t]*```([^\n]*)\n(.*?)^[ \t]*```", re.S | re.M)
SHELL = {"sh", "bash", "shell", "console"}
COMMENT = re.compile(r"(?:^|\s)#.*$", re.M)     # a shell comment, to the end of its line
SPAN = re.compile(r"`([^`\n]+)`")


def _commands_text(text):
    """Where commands are written: the shell blocks of a markdown text (comments dropped)
    and its inline code spans outside fenced blocks."""
    blocks = [COMMENT.sub("", body) for lang, body in FENCE.findall(text) if lang.strip() in SHELL]
    return blocks + SPAN.findall(FENCE.sub("", text))


def dotted_names(text):
    return sorted(set(DOTTED.findall(text)))


def commands(text):
    return sorted({cmd for code in _commands_text(text) for cmd in COMMAND.findall(code)})


def resolve(dotted):
    """The object ``soagen.a.b`` names, as attributes from ``import soagen`` only (what a user
    writes after ``import soagen``).  Raises AttributeError when it does not exist."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for part in parts[1:]:
        obj = getattr(obj, part)
    return obj


def unresolved(names):
    """The names of ``names`` that do not resolve after ``import soagen`` in a fresh interpreter,
    each with the error it raised."""
    code = ("import json, sys\nfrom tests.test_readme_names import resolve\nmissing = []\n"
            "for name in json.loads(sys.argv[1]):\n"
            "    try:\n        resolve(name)\n"
            "    except (AttributeError, ImportError) as exc:\n        missing.append(f'{name} ({exc!r})')\n"
            "print(json.dumps(missing))\n")
    res = subprocess.run([sys.executable, "-c", code, json.dumps(sorted(names))], capture_output=True, text=True,
                         cwd=ROOT)
    assert res.returncode == 0, res.stderr
    return json.loads(res.stdout)


def _help():
    res = subprocess.run([sys.executable, "-m", "soagen.cli", "--help"], capture_output=True, text=True)
    assert res.returncode == 0, res.stderr
    choices = re.search(r"\{([\w,-]+)\}", res.stdout)
    assert choices, res.stdout
    options = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", res.stdout))
    return set(choices.group(1).split(",")), options


def _all(extract):
    return {(page.relative_to(ROOT).as_posix(), name) for page in PAGES for name in extract(page.read_text())}


def test_pages_are_found():
    names = [p.name for p in PAGES]
    assert "README.md" in names and len(PAGES) >= 10, names
    assert _all(dotted_names) and _all(commands)


def test_the_extractors_find_what_they_should():
    text = ("`soagen.robots.path(\"x\")`, soagen.build(robot), a ~/.cache/soagen folder, my_soagen.x\n"
            "```sh\nsoagen generate --example panda --out /tmp/p   # then soagen check\npython -m soagen check x\n"
            "soagen --version\n```\nsoagen turns prose into nothing, `soagen opcount --example ur5`\n")
    assert dotted_names(text) == ["soagen.build", "soagen.robots.path"]
    assert commands(text) == ["--version", "check", "generate", "opcount"]


def test_every_dotted_name_resolves():
    found = _all(dotted_names)
    assert any(page.startswith("docs/guide/") for page, _ in found)
    missing = unresolved({name for _, name in found})
    pages = {name: sorted(page for page, n in found if n == name) for _, name in found}
    assert not missing, "names that do not exist after `import soagen`:\n" + "\n".join(
        f"{', '.join(pages[m.split(' ')[0]])}: {m}" for m in missing)


def test_a_submodule_imported_earlier_does_not_hide_a_missing_name():
    """``soagen.reports.info`` is a submodule no package imports at ``import soagen``: resolved
    in the fresh interpreter it exists, and a name that is not there is reported."""
    assert unresolved(["soagen.reports.info", "soagen.functions.LEGGED"]) == []
    assert len(unresolved(["soagen.reports.nonexistent"])) == 1


def test_every_cli_command_exists():
    subcommands, options = _help()
    assert {"generate", "check", "examples", "profile"} <= subcommands, subcommands
    unknown = [f"{page}: soagen {cmd}" for page, cmd in sorted(_all(commands))
               if cmd not in (options if cmd.startswith("-") else subcommands)]
    assert not unknown, f"commands `soagen --help` does not list ({sorted(subcommands)}):\n" + "\n".join(unknown)


@pytest.mark.parametrize("name", ["soagen.nonexistent", "soagen.robots.nonexistent", "soagen.targets.nonexistent"])
def test_a_missing_name_fails(name):
    with pytest.raises((AttributeError, ImportError)):
        resolve(name)
