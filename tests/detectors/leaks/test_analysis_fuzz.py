"""The whole analysis on arbitrary sample tables: it never fails, and its evidence always resolves."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.leaks.analysis import LeakInput, analyse
from detectors.leaks.evidence import frame_text, sample_resolver
from forensics.evidence import check_findings
from forensics.model import LocatorKind

NAMES = ("vm_area_struct", "dentry", "kmalloc-64", "UDP", "sock_inode_cache", "foo_cache")


@st.composite
def tables(draw: st.DrawFn) -> pd.DataFrame:
    samples = draw(st.integers(1, 60))
    interval = draw(st.sampled_from([0.5, 10.0, 60.0, 600.0]))
    seed = draw(st.integers(0, 2**16))
    rng = np.random.default_rng(seed)
    reboot = draw(st.integers(0, samples))
    rows = []
    for i in range(samples):
        for j, name in enumerate(NAMES):
            if draw(st.booleans()) and rng.random() < 0.1:
                continue  # a cache missing from this sample
            num = int(abs(rng.normal(1000 + j * 100 + i * draw(st.integers(0, 500)), 50)))
            rows.append(
                {
                    "sample_id": i + 1,
                    "wall": 1_780_000_000.0 + i * interval,
                    "boot_id": "a" if i < reboot else "b",
                    "cache": name,
                    "active_objs": max(num - int(rng.integers(0, 10)), 0),
                    "num_objs": num,
                    "objsize": 64 * (j + 1),
                }
            )
    return pd.DataFrame(rows, columns=["sample_id", "wall", "boot_id", "cache", "active_objs", "num_objs", "objsize"])


@settings(max_examples=25, deadline=None)
@given(frame=tables())
def test_any_table_is_analysed_and_its_evidence_resolves(frame: pd.DataFrame) -> None:
    result = analyse(LeakInput(frame, reclaim_account={"dentry": True}))
    assert result.samples == frame["sample_id"].nunique()
    resolver = sample_resolver(frame_text(frame))
    assert check_findings(result.findings, resolvers={LocatorKind.SAMPLE: resolver}) == []
    for finding in result.findings:
        assert finding.evidence
