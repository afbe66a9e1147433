"""kforensic report on the real fixtures: one story from dump, log, samples and trace."""

from __future__ import annotations

import contextlib
import gzip
import json
from pathlib import Path
from typing import Any

import pytest

from forensics.model import LocatorKind
from forensics.serialize import incident_from_dict
from tests.forensics.test_cli import run
from tests.helpers import assert_evidence_resolves
from tests.vmcore_cases import VmcoreCase, case_names, load_case

drgn = pytest.importorskip("drgn")

TRACE = Path(__file__).resolve().parents[1] / "data" / "traces" / "kf.ftrace.txt.gz"


def _need(name: str) -> VmcoreCase:
    if name not in case_names():
        pytest.skip(f"vmcore fixture {name} is absent (vmcore_fixtures/build.sh)")
    return load_case(name)


def _report(case: VmcoreCase, out: Path, *extra: str | Path) -> dict[str, Any]:
    result = run(
        "report", "--vmcore", case.directory, "--vmlinux", case.vmlinux,
        *(a for m in case.module_debug for a in ("--module-debug", m)),
        "--dmesg", case.console_log, *extra,
        "-o", out / "incident.md", "--json", out / "incident.json", "--html", out / "incident.html",
        "--digest", out / "digest.json",
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    doc: dict[str, Any] = json.loads((out / "incident.json").read_text())
    assert doc["schema"] == "kforensic.report/1"
    return doc


def _check_evidence(doc: dict[str, Any], case: VmcoreCase, tmp: Path, store: Path | None = None) -> None:
    from collectors.slabstore import SlabStore
    from detectors.vmcore.analysis import log_as_text
    from detectors.vmcore.findings import log_source
    from forensics.vmcore.resolve import dump_resolvers
    from forensics.vmcore.system import log_records

    incident = incident_from_dict(doc["incident"], "incident.json")
    prog = drgn.Program()
    prog.set_core_dump(str(case.vmcore))
    prog.load_debug_info([str(case.vmlinux)], main=True)
    with contextlib.suppress(drgn.MissingDebugInfoError):  # modules of the kernel without their .ko
        prog.load_debug_info([str(p) for p in case.module_debug], default=True)
    log = tmp / "dump-log.txt"
    log.write_text(log_as_text(log_records(prog)))
    sources = {log_source(str(case.vmcore)): log}
    # Evidence of a compressed trace cites the decompressed text (kforensic trace --save-text writes it).
    for gz in {e.source for f in incident.findings for e in f.evidence if e.source.endswith(" (gunzipped)")}:
        plain = tmp / (Path(gz.removesuffix(" (gunzipped)")).name + ".txt")
        plain.write_bytes(gzip.decompress(Path(gz.removesuffix(" (gunzipped)")).read_bytes()))
        sources[gz] = plain
    resolvers = dump_resolvers(prog)
    if store is not None:
        opened = SlabStore.open(store, readonly=True)
        resolvers[LocatorKind.SAMPLE] = opened.resolve_evidence
    assert_evidence_resolves(incident.findings, source_paths=sources, resolvers=resolvers)


def _leak_store(tmp: Path) -> Path:
    case = _need("08-slab-leak")
    store = tmp / "slab.db"
    result = run("slab-import", case.directory / "snapshots", "--store", store, "--no-analysis")
    assert result.returncode == 0, result.stderr
    return store


def test_leak_then_crash_is_one_story_in_order(tmp_path: Path) -> None:
    case = _need("08-slab-leak")
    store = _leak_store(tmp_path)
    doc = _report(case, tmp_path, "--store", store)
    cache = case.expected["leak"]["cache"]  # type: ignore[index]
    assert any(c["rule"] == "leak-outsized" for c in doc["correlations"]), doc["correlations"]
    assert cache in doc["hypotheses"][0]["statement"], doc["hypotheses"][0]
    timeline = doc["timeline"]
    leak_times = [e["wall"] for e in timeline if cache in e["title"]]
    panic_times = [e["wall"] for e in timeline if "sysrq" in e["title"] or "panic" in e["title"].lower()]
    assert leak_times, timeline
    assert panic_times, timeline
    assert min(leak_times) < min(panic_times)
    assert cache in doc["summary"] or "leak" in doc["summary"]
    _check_evidence(doc, case, tmp_path, store)
    assert len((tmp_path / "digest.json").read_bytes()) <= 8192
    markdown = (tmp_path / "incident.md").read_text()
    plots = [line for line in markdown.splitlines() if line.startswith("![")]
    for line in plots:
        target = line.split("](", 1)[1].rstrip(")")
        assert (tmp_path / target).is_file(), target


def test_null_member_story_names_the_field_first(tmp_path: Path) -> None:
    case = _need("01-null-member")
    doc = _report(case, tmp_path)
    first = doc["hypotheses"][0]["statement"]
    assert str(case.expected["null_expression"]) in first
    assert any(c["rule"] == "same-crash" for c in doc["correlations"])
    _check_evidence(doc, case, tmp_path)


def test_hung_task_story_names_the_lock_owner(tmp_path: Path) -> None:
    case = _need("04-hung-task")
    doc = _report(case, tmp_path, "--trace", TRACE)
    lock = case.expected["lock"]
    assert isinstance(lock, dict)
    assert lock["owner_comm"] in doc["hypotheses"][0]["statement"]
    assert {c["rule"] for c in doc["correlations"]} >= {"hung-task", "same-crash"}
    _check_evidence(doc, case, tmp_path)


def test_report_html_renders_in_chromium(tmp_path: Path) -> None:
    import re

    from tests.forensics.report.test_html_chromium import CHROMIUM, _chromium

    if CHROMIUM is None:
        pytest.skip("Debian package chromium is not installed")
    case = _need("08-slab-leak")
    _report(case, tmp_path, "--store", _leak_store(tmp_path))
    page = tmp_path / "incident.html"
    images = re.findall(r'<img src="([^"]+)"', page.read_text())
    assert images, "the leak case's plots are linked from the page"
    assert all((page.parent / src).is_file() for src in images), images
    result = _chromium(page, tmp_path, "--dump-dom")
    assert "kf_leak_obj" in result.stdout
    assert [line for line in result.stderr.splitlines() if "CONSOLE" in line] == []
