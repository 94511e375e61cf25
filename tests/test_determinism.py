"""Generation is byte-identical across processes with different PYTHONHASHSEED."""
from __future__ import annotations

import hashlib
import os
import subprocess
import sys


def _digest(tmp_path, seed):
    out = tmp_path / f"seed{seed}"
    env = dict(os.environ, PYTHONHASHSEED=str(seed))
    res = subprocess.run([sys.executable, "-m", "soagen.cli", "generate", "--example", "puma560",
                          "--out", str(out), "--quiet"], env=env, capture_output=True, text=True, timeout=600)
    assert res.returncode == 0, res.stderr
    return hashlib.sha256((out / "puma560.c").read_bytes() + (out / "puma560.h").read_bytes()).hexdigest()


def test_byte_identical_across_hash_seeds(tmp_path):
    assert _digest(tmp_path, 1) == _digest(tmp_path, 12345)
