"""The build cache shared by the targets: one folder per content hash, made once.

A key hashes everything a build depends on (the robot's numbers and names, the
options, the functions, soagen's own sources and templates, the compiler and
its flags, the CPU), so a change to any of them rebuilds.  Builds happen in a
private temporary folder moved into place atomically under a file lock: two
processes building the same key at once both end with a complete folder.

An entry records the sha256 and size of its meta.json and of each library a
target loads (``digest.json``), and they are verified before the entry is used:
a file that is missing, cut short, unreadable or changed, or a meta.json that
does not parse, makes the entry be rebuilt (with a line on stderr saying why),
never loaded.  Nothing else in an entry is loaded (the build's objects under
``objects/``, its C sources).

An entry is also bound to its key: its meta.json (so, its digest) records the key it was built
for and what it was built from (``made_from``: the target, the robot's name and fingerprint, the
options), and an entry is used only from the folder of that key.  An entry copied, moved or
swapped under another key, or a folder that is a symbolic link (to another robot's entry, say: one
of the same name and other masses), is rebuilt with a line on stderr saying why, never loaded.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import shutil
import sys
import tempfile
from importlib import resources
from pathlib import Path

#: an entry's meta dict, written by the build
META = "meta.json"
#: the size and sha256 of meta.json and of each file a target loads, written with the entry
DIGESTS = "digest.json"


def cpu_identity():
    """Machine and CPU model (Linux), so a shared cache never loads -march=native
    code built for another CPU."""
    model = ""
    try:
        with open("/proc/cpuinfo") as fh:
            model = next((line.split(":", 1)[1].strip() for line in fh if line.startswith(("model name", "flags"))),
                         "")
    except OSError:
        pass
    return f"{platform.machine()} {model}"


def cache_root():
    """``$SOAGEN_CACHE`` or ``~/.cache/soagen``."""
    return Path(os.environ.get("SOAGEN_CACHE") or Path.home() / ".cache" / "soagen")


def generator_digest():
    """Hash of soagen's own sources (every subpackage: Python and C) and templates."""
    h = hashlib.sha256()
    for pkg in ("soagen", "soagen.templates"):
        root = resources.files(pkg)
        stack = [(root, "")]
        while stack:
            folder, prefix = stack.pop()
            for entry in sorted(folder.iterdir(), key=lambda p: p.name):
                if entry.is_dir() and entry.name != "__pycache__" and pkg == "soagen":
                    stack.append((entry, f"{prefix}{entry.name}/"))
                elif entry.name.endswith((".py", ".j2", ".c")):
                    h.update(f"{prefix}{entry.name}".encode())
                    h.update(entry.read_bytes())
    return h.hexdigest()


def cache_key(*parts):
    """24 hex digits of the hash of ``parts`` (strings), soagen's own sources and the CPU."""
    h = hashlib.sha256()
    for part in (*parts, generator_digest(), cpu_identity()):
        h.update(part.encode())
        h.update(b"\0")
    return h.hexdigest()[:24]


def made_from(kind, target, options, name):
    """What a target's entry is built from, as :func:`cached` records it: the target ``kind``, the
    robot's (or closed chain's) name and :meth:`~soagen.model.robot.Robot.fingerprint`, the
    options and the C prefix ``name`` (strings)."""
    return dict(target=kind, robot=target.name, fingerprint=target.fingerprint(), options=repr(options), name=name)


def file_digest(path):
    """The size and sha256 (hex) of the file at ``path``; raises OSError if it cannot be read."""
    h = hashlib.sha256()
    size = 0
    with open(path, "rb") as fh:
        while chunk := fh.read(1 << 20):            # 1 MiB at a time
            h.update(chunk)
            size += len(chunk)
    return dict(size=size, sha256=h.hexdigest())


def loaded_files(meta):
    """The files of an entry that a target loads: the library named in ``meta`` and, when the
    build has SIMD batches, their library (paths relative to the entry)."""
    simd = meta.get("simd") or {}
    return [meta["library"], *([simd["library"]] if simd.get("library") else [])]


class Damaged(Exception):
    """A cache entry that may not be loaded; the message says what is wrong with it."""

    #: how the notice on stderr says it: ``soagen: cache entry KEY <state> (<message>): rebuilding``
    state = "is damaged"


class Foreign(Damaged):
    """A whole cache entry found under a key that is not its own (or reached through a link)."""

    state = "belongs to another build"


def check_file(folder, name, want):
    """Check that ``folder/name`` has the size and sha256 it had when the entry was made.

    Parameters
    ----------
    folder : path        the cache entry
    name : str           the file, relative to ``folder``
    want : dict          its recorded ``{"size", "sha256"}`` (:func:`file_digest`)

    Raises
    ------
    Damaged
        if the file is missing, unreadable, of another size or of another sha256
    """
    path = Path(folder) / name
    try:
        size = path.stat().st_size
        if size != want["size"]:          # cut short or grown: found without reading it
            what = "cut short" if size < want["size"] else "too long"
            raise Damaged(f"{name} {what}: {size} of {want['size']} bytes")
        got = file_digest(path)
    except FileNotFoundError:
        raise Damaged(f"{name} missing") from None
    except OSError as exc:
        raise Damaged(f"{name} unreadable: {exc.strerror or exc}") from None
    if got != want:
        raise Damaged(f"{name} does not match its digest")


def read_digests(folder):
    """The digests recorded in ``folder/digest.json`` (:func:`record_digests`); raises
    :class:`Damaged` if they are missing or malformed."""
    try:
        digests = json.loads((Path(folder) / DIGESTS).read_text())
    except FileNotFoundError:
        raise Damaged(f"{DIGESTS} missing") from None
    except OSError as exc:
        raise Damaged(f"{DIGESTS} unreadable: {exc.strerror or exc}") from None
    except ValueError as exc:                  # not UTF-8 or not JSON
        raise Damaged(f"{DIGESTS} not JSON: {exc}") from None
    files = digests.get("files") if isinstance(digests, dict) else None
    if not (isinstance(files, dict) and META in files and all(map(is_digest, files.values()))):
        raise Damaged(f"{DIGESTS} malformed")
    return files


def is_digest(value):
    """Whether ``value`` is a file's digest as :func:`file_digest` gives it."""
    return (isinstance(value, dict) and isinstance(value.get("size"), int)
            and isinstance(value.get("sha256"), str))


def verified(folder, key=None):
    """The meta dict of a cache entry whose files are as they were made, for ``key``.

    meta.json and every file a target loads (:func:`loaded_files`) must have the size and sha256
    recorded in ``digest.json`` when the entry was made; with ``key``, the folder must be the
    folder of ``key`` itself, not a link (:func:`unlinked`), and meta.json must record ``key``
    (:func:`bound`).  Hashing is cheap next to a build call (about 0.6 ms per MB: a library of a
    few MB costs a few ms), so it is done on every call rather than remembered.

    Parameters
    ----------
    folder : path        the cache entry
    key : str, optional  the key it is used for (its folder's name in the cache)

    Returns
    -------
    dict                 the entry's meta.json

    Raises
    ------
    Damaged
        naming the first file found missing, unreadable or changed
    Foreign
        if the entry is reached through a link, or records another key
    """
    if key is not None:
        unlinked(folder, key)
    files = read_digests(folder)
    check_file(folder, META, files[META])
    try:
        meta = json.loads((Path(folder) / META).read_text())
        names = loaded_files(meta)
    except (ValueError, AttributeError, KeyError, TypeError) as exc:   # matches its digest, yet unusable
        raise Damaged(f"{META} unusable: {exc!r}") from None
    for name in names:
        if name not in files:
            raise Damaged(f"no digest of {name}")
        check_file(folder, name, files[name])
    if key is not None:
        bound(meta, key)
    return meta


def unlinked(folder, key):
    """Check that ``folder`` is the folder of ``key`` in its cache as it is: its real path (symbolic
    links resolved) is ``<the cache's real path>/<key>``; raises :class:`Foreign` otherwise."""
    folder = Path(folder)
    real = folder.resolve()
    if real != folder.parent.resolve() / key:
        raise Foreign(f"the folder of {key} is a link to {real}")


def bound(meta, key):
    """Check that the meta dict of an entry records ``key`` (:func:`make_entry`); raises
    :class:`Foreign` naming the key it records and what it was made from otherwise."""
    recorded = meta.get("key")
    if recorded != key:
        made_from = meta.get("made_from") or {}
        origin = ", ".join(f"{k} {made_from[k]!r}" for k in ("target", "robot") if k in made_from)
        raise Foreign(f"it records {'no key' if recorded is None else f'key {recorded}'}"
                      + (f", made from {origin}" if origin else ""))


def record_digests(folder, meta):
    """Write ``folder/digest.json``: the size and sha256 of meta.json and of each file that
    ``meta`` says a target loads (:func:`loaded_files`)."""
    folder = Path(folder)
    files = {name: file_digest(folder / name) for name in [META, *loaded_files(meta)]}
    (folder / DIGESTS).write_text(json.dumps({"files": files}, indent=1, sort_keys=True))


def make_entry(root, key, make, made_from=None):
    """Build the entry ``root/key`` with ``make`` in a private temporary folder, record ``key`` and
    ``made_from`` in its meta and its digests, and move it into place (the caller holds the key's
    lock; a link in its place is removed, not what it points to); -> the meta dict."""
    final = root / key
    work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=root))
    meta = dict(make(work), key=key, made_from=made_from or {})
    text = json.dumps(meta, indent=1, sort_keys=True)
    (work / META).write_text(text)
    record_digests(work, meta)
    if final.is_symlink():
        final.unlink()
    elif final.exists():
        shutil.rmtree(final)
    os.replace(work, final)
    return json.loads(text)


def cached(root, key, make, made_from=None):
    """The folder ``root/key`` and its meta dict, made once.

    ``make`` fills a private temporary folder, which is moved into place atomically under a file
    lock (two processes building the same key at once both end with a complete folder).  An
    existing entry is used only if it passes :func:`verified` for ``key``; a damaged one, or one of
    another key (copied, swapped, linked), is rebuilt, with a line on stderr saying why.

    Parameters
    ----------
    root : path          the cache (:func:`cache_root`)
    key : str            the entry's name (:func:`cache_key`)
    make : callable      ``make(folder) -> meta dict``; the meta names the files a target loads
                         (:func:`loaded_files`)
    made_from : dict, optional   what the entry is built from (``target``, ``robot``, ...: strings),
                         recorded in its meta and named when it is found under another key

    Returns
    -------
    (Path, dict)         the entry's folder and its meta
    """
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if final.exists() or final.is_symlink():
            try:
                return final, verified(final, key)
            except Damaged as why:
                print(f"soagen: cache entry {key} {why.state} ({why}): rebuilding", file=sys.stderr)
        return final, make_entry(root, key, make, made_from)
