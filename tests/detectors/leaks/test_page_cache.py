"""Growth beside the page cache (tests/data/pagecache, recorded by record.sh there on a real kernel).

Writing files at 40 MiB/s for 40 s grows the page cache by ~1.5 GiB and, with it, buffer_head (reclaimable),
radix_tree_node and, on ext4, kmalloc-512 in a perfect ramp: under the old rules kmalloc-512 "leaked"
at high.  It is the page cache's metadata: said as growing with the page cache, too short to call, at
info.  The same writes beside a real vm_area_struct leak must still give the leak, at high, without
the page cache's kmalloc-512 among its caches.
"""

from __future__ import annotations

import sys
from pathlib import Path

import numpy as np
import pytest

from detectors.leaks.decision import WITH_PAGE_CACHE
from detectors.leaks.pagecache import tie
from forensics.cli import main
from forensics.model import Severity
from forensics.pipelines.leaks import LeaksResult, analyse_store
from forensics.types.leaks import Grade

RECORDINGS = Path(__file__).resolve().parents[2] / "data" / "pagecache"


def _imported(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> LeaksResult:
    store = tmp_path / f"{name}.sqlite"
    monkeypatch.setattr(
        sys,
        "argv",
        ["kforensic", "slab-import", "--store", str(store), "--host", "vm", str(RECORDINGS / f"{name}.txt.xz")],
    )
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code in (0, None)
    return analyse_store(store)


def test_file_writes_are_not_a_leak_but_growth_with_the_page_cache(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _imported("file-writes", tmp_path, monkeypatch)
    a = result.analysis
    assert a.samples == 41 and a.power.judgeable  # judged with the power to see a fast leak: not "too short"
    loud = [f"{f.severity.value}: {f.title}" for f in result.incident.findings if f.severity >= Severity.MEDIUM]
    assert loud == []
    by_name = {v.name: v for v in (*a.caches, *a.meminfo)}
    kmalloc = by_name["kmalloc-512"]
    assert kmalloc.grade is Grade.UNDECIDED and kmalloc.verdict.rule == WITH_PAGE_CACHE
    # The figures it read: ~5 MB of kmalloc-512 beside ~1.6 GB of page cache, one byte per ~300.
    assert "grows 5,1" in kmalloc.verdict.reason and "which grew 1,6" in kmalloc.verdict.reason
    assert "316 times as much" in kmalloc.verdict.reason
    assert by_name["SUnreclaim"].verdict.rule == WITH_PAGE_CACHE
    assert by_name["buffer_head"].grade is Grade.RECLAIMABLE  # what it is, known by name, still said first
    titles = [f.title for f in result.incident.findings]
    assert (
        "Slab cache kmalloc-512 grows 472,320 KB/h with the page cache, too short to call (generic kmalloc)" in titles
    )
    assert a.absence().startswith("Growing, too short to call: 2 series grow")
    # The interval as read (samples 0.999995 s apart on average), not as float noise.
    [examined] = result.incident.examined
    assert "41 samples over 40 s every 1 s, 235 slab caches" in examined.what, examined.what


def test_a_real_leak_beside_the_same_writes_is_still_a_leak_without_the_page_cache_caches(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    result = _imported("leak-beside-writes", tmp_path, monkeypatch)
    a = result.analysis
    [group] = a.groups
    assert group.names == ("vm_area_struct", "maple_node") and group.grade is Grade.LEAK
    [high] = [f for f in result.incident.findings if f.severity >= Severity.MEDIUM]
    assert high.severity is Severity.HIGH and high.title.startswith("Memory mappings leak: vm_area_struct, maple_node")
    assert "kmalloc-512" not in high.title
    sunreclaim = next(f for f in result.incident.findings if f.title.startswith("SUnreclaim"))
    assert sunreclaim.title.endswith("explained by maple_node, vm_area_struct")


def _ramp(n: int, slope: float, wobble: np.ndarray | None = None) -> np.ndarray:
    y = np.arange(n, dtype=float) * slope
    return y if wobble is None else y + np.cumsum(wobble)


def test_a_tie_needs_the_same_moments_unless_the_series_is_generic() -> None:
    rng = np.random.default_rng(7)
    bursts = rng.exponential(1.0, 30)
    page_cache = 1e8 + np.cumsum(bursts) * 5e7
    in_step = 1e6 + np.cumsum(bursts) * 2e5  # grows when the page cache grows
    out_of_step = 1e6 + np.cumsum(rng.exponential(1.0, 30)) * 2e5
    steady = 1e6 + _ramp(30, 2e5)
    found = tie("vm_area_struct", in_step, page_cache)
    assert found is not None and found.in_step and found.ratio == pytest.approx(250, rel=0.01)
    assert not tie("vm_area_struct", out_of_step, page_cache).in_step  # type: ignore[union-attr]
    # Two steady ramps carry no timing: only a series any subsystem's metadata can land in is tied by level.
    smooth_cache = 1e8 + _ramp(30, 5e7)
    assert not tie("vm_area_struct", steady, smooth_cache).in_step  # type: ignore[union-attr]
    assert tie("kmalloc-512", steady, smooth_cache).in_step  # type: ignore[union-attr]
    assert tie("kmalloc-512", steady, np.full(30, 1e8)) is None  # the page cache did not grow: nothing to tie
    assert tie("kmalloc-512", steady[::-1], smooth_cache) is None  # the series shrank
