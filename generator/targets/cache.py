"""The build cache shared by the targets: one folder per content hash, made once.

A key hashes everything a build depends on (the robot's numbers and names, the
options, the functions, soagen's own sources and templates, the compiler and
its flags, the CPU), so a change to any of them rebuilds.  Builds happen in a
private temporary folder moved into place atomically under a file lock: two
processes building the same key at once both end with a complete folder.
"""
from __future__ import annotations

import fcntl
import hashlib
import json
import os
import platform
import shutil
import tempfile
from importlib import resources
from pathlib import Path


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
    """Hash of soagen's own sources (every subpackage) and templates."""
    h = hashlib.sha256()
    for pkg in ("soagen", "soagen.templates"):
        root = resources.files(pkg)
        stack = [(root, "")]
        while stack:
            folder, prefix = stack.pop()
            for entry in sorted(folder.iterdir(), key=lambda p: p.name):
                if entry.is_dir() and entry.name != "__pycache__" and pkg == "soagen":
                    stack.append((entry, f"{prefix}{entry.name}/"))
                elif entry.name.endswith((".py", ".j2")):
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


def cached(root, key, make):
    """The folder ``root/key`` and its meta.json, made once: ``make(folder)`` fills a private
    temporary folder and returns the meta dict; the folder is moved into place atomically under
    a file lock (two processes building the same key at once both end with a complete folder)."""
    root = Path(root)
    root.mkdir(parents=True, exist_ok=True)
    final = root / key
    with open(root / f"{key}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (final / "meta.json").exists():
            work = Path(tempfile.mkdtemp(prefix=f"{key}.", dir=root))
            meta = make(work)
            (work / "meta.json").write_text(json.dumps(meta, indent=1, sort_keys=True))
            if final.exists():
                shutil.rmtree(final)
            os.replace(work, final)
    return final, json.loads((final / "meta.json").read_text())
