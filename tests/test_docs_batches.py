"""The guide's numbers on batches (docs/guide/batches.md) come from committed outputs: docs/simd.md
and docs/simd_avx512.md (``python benchmarks/simd.py --robot panda`` on an AVX2 and an AVX-512
machine) and docs/gpu.md (``benchmarks/gpu.py``, from docs/gpu.json)."""
from __future__ import annotations

import re

from tests.support import ROOT

DOCS = ROOT / "docs"


def batches_section():
    text = (DOCS / "guide" / "batches.md").read_text()
    start = text.index("# Batches: SIMD and GPU")
    end = text.find("\n## ", start + 1)
    return text[start:] if end < 0 else text[start:end]


def test_readme_batch_numbers_are_in_the_committed_outputs():
    section = batches_section()
    docs = "".join((DOCS / page).read_text() for page in ("simd.md", "simd_avx512.md", "gpu.md"))
    ratios = re.findall(r"\d+(?:\.\d+)?x\b", section)                 # as written in the outputs: "3.46x"
    rates = re.findall(r"(\d+\.\d+) G states/s", section)            # a table cell of docs/gpu.md: "14.30"
    assert len(ratios) >= 6 and len(rates) >= 3, (ratios, rates)
    missing = [n for n in ratios if n not in docs] + [n for n in rates if f"| {n} |" not in docs]
    assert not missing, f"docs/guide/batches.md numbers not in docs/simd*.md or docs/gpu.md: {missing}"


def test_gpu_page_is_the_report_of_its_run():
    """docs/gpu.md holds `gpu.py report docs/gpu.json` verbatim (between its prose)."""
    import subprocess
    import sys

    report = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "gpu.py"), "report", str(DOCS / "gpu.json")],
                            capture_output=True, text=True, check=True).stdout
    assert report.strip() in (DOCS / "gpu.md").read_text()


def test_bandwidth_shares_are_the_gpu_tables():
    """Each "N % of the memory-bandwidth bound" the guide quotes is the bound column of that
    function's row in docs/gpu.md."""
    section = " ".join(batches_section().split())
    quoted = re.findall(r"(\w[\w ]*?) (\d+\.\d+) G states/s \((\d+) % of the memory-bandwidth bound\)", section)
    assert quoted, "no bandwidth share quoted"
    rows = (DOCS / "gpu.md").read_text().splitlines()
    for what, rate, share in quoted:
        assert any(f"| {rate} |" in row and f"| {share}% |" in row for row in rows), (what, rate, share)
