"""The one path by which text from outside reaches emitted files: names made inert.

Names come from robot files (robot, link, joint, body, site, tip names), from the
command line (``--name``, file paths) and from the Python API.  They reach the
generated C, CUDA, SIMD, MCU and linker-script texts and the cffi declarations in
two ways only:

* as **identifiers** (the robot's name, or ``--name``, becomes every function's prefix and
  every file's stem): :func:`c_name`, which keeps ``[0-9A-Za-z_]`` and refuses a name left
  with no letter or digit;
* as **text** in Markdown reports (opcounts.md, footprint.md, the parameters and profile rows):
  :func:`markdown_text`, :func:`comment_text`'s one line with Markdown's and HTML's markup escaped;
* as **text** in comments and string literals: :func:`comment_text`, which Jinja applies to
  every value a template prints (:func:`finalize`, the ``finalize`` hook of
  :func:`soagen.targets.common.c_text.environment`), so a template added later escapes what
  it prints without asking.  Identifiers and C expressions soagen composes contain none of
  the characters it changes, so they print unchanged; the one exception is :class:`Code`,
  multi-line C that soagen writes from its own constants (the sin/cos helpers).

A name in a comment keeps every character it can keep and shows the others as
``<U+XXXX>``, one to one, so the header still tells two links apart.
"""
from __future__ import annotations

import hashlib
import re

from soagen.model.errors import RobotError


class Code(str):
    """C text soagen wrote from its own constants, with no outside text in it (several lines,
    comments of its own): printed by the templates as it is."""


#: characters shown as <U+XXXX> wherever they are: the backslash (a line continuation, also at the
#: end of a ``//`` comment), the double quote (the end of a string literal) and the escape's own '<'
_ALWAYS = frozenset('\\"')
#: pairs that open or close a comment, or begin a trigraph (``??/`` is a backslash under -std=c99):
#: the second character of each is shown as <U+XXXX>
_PAIRS = frozenset({"/*", "*/", "//", "??"})
#: characters shown as <U+XXXX> at either end of a name: the template's text beside it could make a pair
_ENDS = frozenset("/*?")


def _hex(ch):
    return f"<U+{ord(ch):04X}>"


def comment_text(text):
    """``text`` made inert inside a C comment or string literal.

    Printable ASCII stays as it is, except the backslash, the double quote, the second
    character of ``/*``, ``*/``, ``//`` and ``??``, a ``/``, ``*`` or ``?`` at either end, and a
    ``<`` that begins ``<U+`` (so the mapping is one to one); each of those, every control
    character (newline, tab, ...) and every non-ASCII character is written ``<U+XXXX>``
    (its code point).

    Parameters
    ----------
    text : str

    Returns
    -------
    str   printable ASCII with none of ``*/``, ``/*``, ``//``, ``??``, ``\\``, ``"``
    """
    text = str(text)
    out = []
    last = len(text) - 1
    for i, ch in enumerate(text):
        prev = out[-1][-1] if out else ""
        escape = (not " " <= ch <= "~" or ch in _ALWAYS or prev + ch in _PAIRS
                  or ((i == 0 or i == last) and ch in _ENDS) or (ch == "<" and text.startswith("U+", i + 1)))
        out.append(_hex(ch) if escape else ch)
    return "".join(out)


#: what :func:`markdown_text` escapes after :func:`comment_text`: HTML's three as entities (a raw tag,
#: ``<img onerror=...>``, never reaches a page), Markdown's punctuation with a backslash (emphasis, code,
#: links, a table cell's end, a heading's closing ``#``); comment_text leaves no backslash of its own
_MARKDOWN = {"&": "&amp;", "<": "&lt;", ">": "&gt;", **{ch: "\\" + ch for ch in "`*_[]|#~!"}}


def markdown_text(text):
    """``text`` made inert in a Markdown page (a title, a table cell): :func:`comment_text` (one line of
    printable ASCII), then ``&``, ``<``, ``>`` as HTML entities and :data:`_MARKDOWN`'s punctuation
    backslash-escaped, so a page shows the name's characters and no markup of it.  One to one.

    Parameters
    ----------
    text : str

    Returns
    -------
    str   printable ASCII with no raw ``<``, ``>``, ``|`` and no unescaped Markdown punctuation
    """
    return "".join(_MARKDOWN.get(ch, ch) for ch in comment_text(text))


def finalize(value):
    """What a template prints for ``value``: :class:`Code` as it is, anything else through
    :func:`comment_text` (numbers, identifiers and expressions come out unchanged)."""
    if isinstance(value, Code):
        return value
    return comment_text(value)


_NOT_IDENTIFIER = re.compile(r"[^0-9A-Za-z_]")


#: the longest identifier :func:`c_name` returns: it is a file stem too, and with the cache's key and
#: Python's suffix the library's file name stays far below the 255 bytes a file system takes
LONGEST = 48


def c_name(name, what="robot name"):
    """A C identifier from a name (``ur5-arm`` → ``ur5_arm``, ``6dof`` → ``r_6dof``); a name longer
    than :data:`LONGEST` keeps its first characters and ends in 8 hex digits of its hash.

    Raises
    ------
    RobotError   when ``name`` has no ASCII letter or digit (nothing of it would be left)
    """
    name = str(name)
    if not re.search(r"[0-9A-Za-z]", name):
        raise RobotError(f"the {what} {comment_text(name)!r} gives no C identifier (it has no ASCII letter or "
                         "digit): rename it, or pass --name / name=")
    out = _NOT_IDENTIFIER.sub("_", name)
    out = out if not out[0].isdigit() else "r_" + out
    if len(out) > LONGEST:
        out = f"{out[:LONGEST - 9]}_{hashlib.sha256(name.encode()).hexdigest()[:8]}"
    return out
