"""``kforensic trace`` on the project's own lttng_ust_cyg_profile recording (tests/data/lttng/cyg): the slow call is
found among its own kind at its own nesting, and its evidence says what the events inside it carried.

serve(7) (depth 1) took 30 ms where the other 19 serve() calls took about 0.5 ms, because it called load_model()
after the message "fetch model for 7".  Until 2026-12-06 the finding explained main() (115 ms, alone of its kind)
against the median of all 62 calls (0.310 ms) and cited `lttng_ust_cyg_profile:func_entry vtid=N`, no address.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tarfile
from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[2] / "data" / "lttng" / "cyg"


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("cyg")
    with tarfile.open(DATA / "cyg.tar.gz") as tar:
        tar.extractall(out, filter="data")
    return out / "ust"


@pytest.fixture(scope="module")
def addrs() -> dict[str, str]:
    return {
        name: f"0x{int(a, 16):x}"
        for name, a in (line.split() for line in (DATA / "addrs.txt").read_text().splitlines())
    }


@pytest.fixture(scope="module")
def finding(session: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    out = tmp_path_factory.mktemp("out") / "t.json"
    cmd = [sys.executable, "-m", "forensics", "trace", str(session), "--format", "json", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    doc = json.loads(out.read_text())
    (got,) = [f for f in doc["incident"]["findings"] if f["kind"] == "span-slow"]
    assert all(f["severity"] not in ("medium", "high", "critical") for f in doc["incident"]["findings"])
    return got  # type: ignore[no-any-return]


def test_the_slow_call_is_judged_against_its_own_kind_at_its_depth(
    finding: dict[str, object], addrs: dict[str, str]
) -> None:
    facts = {f["name"]: f["value"] for f in finding["facts"]}  # type: ignore[attr-defined, index]
    assert facts["started by"].startswith(f"lttng_ust_cyg_profile:func_entry addr={addrs['serve']} call_site=0x")
    baseline = finding["baseline"]
    assert isinstance(baseline, dict)
    assert f"20 'lttng_ust_cyg_profile:func' span(s) of addr={addrs['serve']} at nesting depth 1" in baseline["name"]
    assert float(baseline["value"].split()[0]) < 2.0  # the other serve() calls: about 0.5 ms
    assert float(facts["duration"].split()[0]) >= 30.0


def test_the_percentile_facts_are_those_of_the_baseline_population(
    finding: dict[str, object], addrs: dict[str, str]
) -> None:
    """Until 2026-12-06 the facts said "P50 0.310 ms, P99 115.298 ms": every call of every function at every depth
    (main() the P99), beside a baseline of the 20 serve() calls at depth 1."""
    facts = {f["name"]: f["value"] for f in finding["facts"]}  # type: ignore[attr-defined, index]
    baseline = finding["baseline"]
    assert isinstance(baseline, dict)
    assert facts["population"].startswith(f"the 20 'lttng_ust_cyg_profile:func' span(s) of addr={addrs['serve']} ")
    assert baseline["name"] == "median of " + facts["population"]
    assert facts["population P50"] == baseline["value"]
    assert float(facts["population P90"].split()[0]) < 2.0  # 19 of the 20 serve() calls take about 0.5 ms
    assert facts["population P99"] == facts["duration"]  # serve(7) itself, the slowest of the 20
    assert "P50" not in facts and "P99" not in facts  # no unlabelled figure of another population
    every = facts["every 'lttng_ust_cyg_profile:func' span"]
    assert every.startswith("62: P50 ") and every.endswith("max 115.298 ms"), every  # main(), labelled as the name's


def test_the_evidence_cites_the_nested_call_and_the_message_inside(
    finding: dict[str, object], addrs: dict[str, str], session: Path
) -> None:
    inside = [f["value"] for f in finding["facts"] if f["name"] == "inside"]  # type: ignore[attr-defined, index]
    assert re.match(
        rf"at \d+\.\d{{6}} CPU\d+ lttng_ust_cyg_profile:func_entry addr={addrs['load_model']} call_site=0x[0-9a-f]+ "
        rf"vtid=\d+: nested lttng_ust_cyg_profile:func addr={addrs['load_model']} took 30\.\d+ ms \(9\d% of the span\)",
        inside[0],
    ), inside
    assert any("lttng_ust_tracef:event msg='fetch model for 7'" in v for v in inside), inside
    assert len(inside) <= 6
    excerpts = [e["excerpt"] for e in finding["evidence"]]  # type: ignore[attr-defined, index]
    assert any(f"addr={addrs['load_model']}" in x for x in excerpts)
    if shutil.which("babeltrace2"):  # the cited fields are those babeltrace2 reads
        text = subprocess.run(["babeltrace2", str(session)], capture_output=True, text=True, check=True).stdout
        entry = next(
            line
            for line in text.splitlines()
            if "func_entry" in line and "addr = " + addrs["load_model"].upper().replace("0X", "0x") in line
        )
        call_site = re.search(r"call_site = (0x[0-9A-F]+)", entry)
        assert call_site is not None
        assert any(f"call_site=0x{int(call_site.group(1), 16):x}" in x for x in excerpts)
