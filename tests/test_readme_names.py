"""Every name the README and the user guide (docs/guide/*.md) mention exists: each dotted
``soagen.<name>[.<name>...]`` resolves after ``import soagen`` (attributes, or submodules
imported on the way), and each ``soagen <command>`` in code names a subcommand (or an option)
that ``soagen --help`` lists.  Nothing is built."""
from __future__ import annotations

import importlib
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
    """The object ``soagen.a.b`` names: attributes first, a submodule imported where an
    attribute is missing.  Raises AttributeError / ImportError when it does not exist."""
    parts = dotted.split(".")
    obj = importlib.import_module(parts[0])
    for i, part in enumerate(parts[1:], start=2):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            obj = importlib.import_module(".".join(parts[:i]))
    return obj


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
    missing = []
    for page, name in sorted(_all(dotted_names)):
        try:
            resolve(name)
        except (AttributeError, ImportError) as exc:
            missing.append(f"{page}: {name} ({type(exc).__name__}: {exc})")
    assert not missing, "names that do not exist after `import soagen`:\n" + "\n".join(missing)


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
