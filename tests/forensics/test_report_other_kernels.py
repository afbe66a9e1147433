"""``report`` over inputs of different kernel releases (so different boots, maybe machines): each input is said with
the kernel and host it names, the one of another kernel is set apart on its own lane, with or without findings.

A clean kernel log of this VM (6.18, no host named) beside a real LTTng trace of host "lager" (3.10) opened with
"kforensic found no problem in the inputs from lager", its Kernel row "inputs disagree on the kernel release": the log
was not set apart (an input without findings was skipped, as it was cited by its first finding), and the trace's host
was given to both (review ue22 #3).  Made here with the project's LTTng session (a Debian 6.1 kernel) renamed to
"lager" (tests/collectors/ctf_check.py with_env) and the healthy 6.18 log.
"""

from __future__ import annotations

import gzip
import json
import os
from dataclasses import replace
from pathlib import Path
from typing import Any

import pytest

from collectors.trace_input import OPTIONS_LINE
from forensics.serialize import incident_from_dict
from tests.collectors.ctf_check import extract_session, with_env
from tests.collectors.test_trace_input import _needs_tracefs, _record_trace_dat
from tests.evidence_audit import Inputs, add_trace_dat, audit_findings
from tests.helpers import Ran, assert_evidence_resolves, cli_run
from tests.vmcore_cases import VmcoreCase, case_names, load_case

pytestmark = pytest.mark.xdist_group("incident-trust")

DATA = Path(__file__).resolve().parents[1] / "data"
#: The release the healthy log's boot banner names (tests/data/healthy/dmesg.txt.gz line 1), and the session's.
LOG_KERNEL = "6.18.44-fc-v1252"
TRACE_KERNEL = "6.1.0-57-amd64"


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    def invoke(*args: str | Path) -> Ran:
        return cli_run(monkeypatch, capsys, *args)

    return invoke


def _report(kf: Any, tmp: Path, *inputs: str | Path) -> dict[str, Any]:
    ran = kf("report", *inputs, "-o", tmp / "r.md", "--json", tmp / "r.json")
    assert ran.returncode == 0, ran.stderr
    doc: dict[str, Any] = json.loads((tmp / "r.json").read_text())
    return doc


def _lager(tmp: Path) -> Path:
    """The project's LTTng kernel trace, its metadata naming host "lager"."""
    return with_env(extract_session(tmp / "session"), tmp / "lager", hostname="lager") / "kernel"


def _healthy(tmp: Path) -> Path:
    log = tmp / "healthy.log"
    log.write_bytes(gzip.decompress((DATA / "healthy" / "dmesg.txt.gz").read_bytes()))
    return log


def _contradiction(doc: dict[str, Any], source: Path) -> dict[str, Any]:
    (found,) = [
        f
        for f in doc["incident"]["findings"]
        if f["kind"] == "contradiction" and {"name": "other boot", "value": str(source)} in f["facts"]
    ]
    return found


def test_a_clean_log_of_another_kernel_beside_a_trace_is_set_apart_and_not_the_traces_host(
    tmp_path: Path, kf: Any
) -> None:
    trace, log = _lager(tmp_path), _healthy(tmp_path)
    doc = _report(kf, tmp_path, "--dmesg", log, "--trace", trace)
    summary = doc["summary"]
    assert (
        f"The inputs come from different boots or machines: {log} names kernel {LOG_KERNEL} and no host (set apart); "
        f"{trace} names kernel {TRACE_KERNEL} and host lager." in summary
    ), summary
    incident = doc["incident"]
    assert (incident["host"], incident["kernel_release"]) == ("lager", TRACE_KERNEL), incident["kernel_release"]
    # The log is cited by its boot banner, on a lane of its own ("It has no finding"), not "Its 0 finding(s)".
    found = _contradiction(doc, log)
    assert any(e["source"] == str(log) and "Linux version " + LOG_KERNEL in e["excerpt"] for e in found["evidence"])
    # (the banner's line resolves in the log; the trace's events are babeltrace2's, resolved by tests/collectors)
    (said,) = [f for f in incident_from_dict(incident, "r.json").findings if f.id == found["id"]]
    assert_evidence_resolves([replace(said, evidence=tuple(e for e in said.evidence if e.source == str(log)))])
    narrative = doc["narrative"]
    assert f"the story above is of the boot of {trace}; {log} of another, told apart below" in narrative, narrative
    assert f"The input {log} cannot come from the boot this report tells" in narrative, narrative
    assert "It has no finding." in narrative, narrative
    (examined,) = [e for e in incident["examined"] if str(log) in e["what"]]
    assert examined["standing"].startswith(f"set apart: it names kernel {LOG_KERNEL}"), examined


def test_two_traces_of_different_kernels_each_say_their_kernel_and_host(tmp_path: Path, kf: Any) -> None:
    session = extract_session(tmp_path / "session")
    other = with_env(
        session, tmp_path / "other", "5e8a9d2c-0000-4000-8000-00000000abcd", hostname="kfother", kernel_release="6.2.9"
    )
    doc = _report(kf, tmp_path, "--trace", session / "kernel", "--trace", other / "kernel")
    summary = doc["summary"]
    assert (
        f"The inputs come from different boots or machines: {session / 'kernel'} names kernel {TRACE_KERNEL} and "
        f"no host; {other / 'kernel'} names kernel 6.2.9 and host kfother (set apart)." in summary
    ), summary
    _contradiction(doc, other / "kernel")
    assert doc["incident"]["kernel_release"] == TRACE_KERNEL


def _need(name: str) -> VmcoreCase:
    if name not in case_names():
        pytest.skip(f"vmcore fixture {name} is absent (vmcore_fixtures/build.sh)")
    return load_case(name)


def test_a_crash_log_and_a_dump_beside_a_trace_of_another_kernel_say_each_kernel(tmp_path: Path, kf: Any) -> None:
    """The fixture's console log (6.1.192, a crash) and its dump, each beside the 6.1.0-57 trace of "lager"."""
    pytest.importorskip("drgn")
    case, trace = _need("10-use-after-free"), _lager(tmp_path)
    (tmp_path / "log").mkdir()
    doc = _report(kf, tmp_path / "log", "--dmesg", case.console_log, "--trace", trace)
    assert (
        f"{case.console_log} names kernel 6.1.192 and no host; {trace} names kernel {TRACE_KERNEL} and host lager "
        "(set apart)." in doc["summary"]
    ), doc["summary"]
    assert doc["incident"]["kernel_release"] == "6.1.192"
    (tmp_path / "dump").mkdir()
    doc = _report(kf, tmp_path / "dump", "--vmcore", case.directory, "--vmlinux", case.vmlinux, "--trace", trace)
    assert (
        f"names kernel 6.1.192 and no host; {trace} names kernel {TRACE_KERNEL} and host lager (set apart)."
        in (doc["summary"])
    ), doc["summary"]
    assert doc["incident"]["kernel_release"] == "6.1.192"
    # The dump and its own console log, one boot: said together, not as if each were a boot of its own (ue23 #12).
    (tmp_path / "both").mkdir()
    doc = _report(kf, tmp_path / "both", "--vmcore", case.directory, "--vmlinux", case.vmlinux, "--dmesg",
                  case.console_log, "--trace", trace)  # fmt: skip
    said = doc["summary"]
    assert f" and {case.console_log} name kernel 6.1.192 and no host; {trace} names kernel {TRACE_KERNEL}" in said, said
    assert said.count("6.1.192 and no host") == 1, said
    # The trace is set apart once, by its release (it was set apart again by its times since boot, past the crash's:
    # two findings, and the story said the weaker why; ue23 #12).
    apart = [
        f["title"] for f in doc["incident"]["findings"] if f["kind"] == "contradiction" and str(trace) in f["title"]
    ]
    assert apart == [f"{trace} cannot come from the crashed boot: it names kernel {TRACE_KERNEL}, the dump 6.1.192"], (
        apart
    )
    assert f"The trace {trace} cannot come from the crashed boot: it names kernel {TRACE_KERNEL}, " in doc["narrative"]


@_needs_tracefs
def test_a_trace_dat_of_another_kernel_without_findings_is_set_apart(tmp_path: Path, kf: Any) -> None:
    """A trace.dat recorded here (timer events only: no finding) beside the fixture guest's crash log (6.1.192): its
    UNAME option named this machine's kernel in "Examined" only, uncited, so it was not set apart ("Kernel: inputs
    disagree on the kernel release: 6.1.192, 6.18...").  Now cited by its line of ``trace-cmd dump --options``."""
    release, case = os.uname().release, _need("02-bug-on")
    if release == "6.1.192":
        pytest.skip("this machine runs the log's kernel: no contradiction to make")
    dat = _record_trace_dat(tmp_path, "timer/hrtimer_start")
    trace = f"{dat} (trace-cmd report)"
    doc = _report(kf, tmp_path, "--dmesg", case.console_log, "--trace", dat)
    incident = doc["incident"]
    assert incident["kernel_release"] == "6.1.192", incident["kernel_release"]
    assert not [f for f in incident["findings"] if f["kind"] != "contradiction" and str(dat) in str(f["evidence"])]
    found = _contradiction(doc, Path(trace))
    uname = os.uname()
    text = f"{uname.sysname} {uname.nodename} {release} {uname.machine}"
    read_at = next(x["value"] for x in found["facts"] if x["name"] == "kernel read from")
    assert read_at.startswith(f"{trace} line ") and read_at.endswith(f"({OPTIONS_LINE}): {text!r}"), read_at
    assert f"{trace} names kernel {release} and host {uname.nodename} (set apart)" in doc["summary"], doc["summary"]
    (examined,) = [e for e in incident["examined"] if trace in e["what"]]
    assert examined["standing"].startswith(f"set apart: it names kernel {release}"), examined
    # The cited UNAME line is trace-cmd's own.
    (said,) = [f for f in incident_from_dict(incident, "r.json").findings if f.id == found["id"]]
    inputs = Inputs(tmp_path)
    add_trace_dat(inputs, dat)
    inputs.texts[str(case.console_log)] = case.console_log
    assert [e.excerpt for e in said.evidence if e.source == trace] == [text], said.evidence
    assert not audit_findings([said], inputs)


def test_inputs_of_one_boot_are_not_said_of_different_boots(tmp_path: Path, kf: Any) -> None:
    """The fixture's dump and its console log (both 6.1.192, no host): one boot, no such sentence, nothing apart."""
    pytest.importorskip("drgn")
    case = _need("02-bug-on")
    doc = _report(kf, tmp_path, "--vmcore", case.directory, "--vmlinux", case.vmlinux, "--dmesg", case.console_log)
    assert "different boots" not in doc["summary"], doc["summary"]
    assert "set apart" not in json.dumps(doc["incident"]["examined"])
    assert doc["incident"]["kernel_release"] == "6.1.192"


def test_a_trace_without_findings_of_another_kernel_than_a_crash_log_is_set_apart_by_its_metadata(
    tmp_path: Path,
) -> None:
    """The fixture's console log (6.1.192, a crash) beside lager's 6.1.0-57 trace had it no finding: cited by its
    metadata's ``kernel_release = "..."`` line, set apart, neither its host nor its release the report's."""
    from forensics.pipelines.report import build_story
    from forensics.pipelines.sources import analyse_dmesg, analyse_trace

    case, trace = _need("10-use-after-free"), _lager(tmp_path)
    traced = analyse_trace(trace, None)
    bare = replace(traced, incident=replace(traced.incident, findings=()))
    story = build_story([analyse_dmesg((case.console_log,)), bare], [], "kforensic report")
    metadata = str(trace / "metadata")
    (found,) = [f for f in story.incident.findings if f.fact("other boot") == metadata]
    cited = [e for e in found.evidence if e.source == metadata]
    assert [e.excerpt for e in cited] == [f'kernel_release = "{TRACE_KERNEL}";'], found.evidence
    assert_evidence_resolves([replace(found, evidence=tuple(cited))])
    assert story.incident.host != "lager", story.incident.host
    assert story.incident.kernel_release == "6.1.192"
    assert f"{metadata} names kernel {TRACE_KERNEL} and host lager (set apart)" in story.summary, story.summary
    (examined,) = [e for e in story.incident.examined if e.what.startswith(f"trace {trace}")]
    assert examined.standing.startswith("set apart: it names kernel " + TRACE_KERNEL), examined.standing
