"""Tests of the incident model's invariants."""

from __future__ import annotations

import dataclasses
import json
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forensics.model import (
    Clock,
    Evidence,
    Incident,
    Locator,
    LocatorKind,
    NotAvailable,
    Severity,
    StreamEvent,
    Timestamp,
    TimeWindow,
    finding_id,
)
from forensics.serialize import incident_from_dict, incident_to_dict
from tests.forensics.factories import incident_of, line_evidence, null_deref_finding, write_log


def test_severity_order_is_info_to_critical() -> None:
    order = [Severity.INFO, Severity.LOW, Severity.MEDIUM, Severity.HIGH, Severity.CRITICAL]
    assert sorted(reversed(order)) == order
    assert Severity.HIGH >= Severity.MEDIUM > Severity.LOW
    assert max(order) is Severity.CRITICAL
    assert Severity.INFO <= Severity.INFO < Severity.CRITICAL


def test_finding_without_evidence_is_refused(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="without evidence"):
        null_deref_finding(())


def test_confidence_outside_unit_interval_is_refused(tmp_path: Path) -> None:
    ev = line_evidence(write_log(tmp_path), 2, "BUG: kernel NULL pointer dereference")
    finding = null_deref_finding((ev,))
    with pytest.raises(ValueError, match=r"outside 0\.\.1"):
        type(finding)(**{**finding.__dict__, "confidence": 1.5})


def test_empty_excerpt_and_backwards_locator_are_refused() -> None:
    with pytest.raises(ValueError):
        Evidence("x", Locator(LocatorKind.LINE, 1), "")
    with pytest.raises(ValueError):
        Locator(LocatorKind.LINE, 5, 3)


@given(st.text(), st.text(alphabet=st.characters(max_codepoint=127)))
def test_finding_id_is_stable_and_ignores_spacing_and_case(kind: str, part: str) -> None:
    assert finding_id("oops", kind, part) == finding_id("oops", kind, part)
    assert finding_id("oops", f"  {part.upper()} ") == finding_id("oops", part.lower())


def test_finding_id_differs_by_kind_and_parts() -> None:
    assert finding_id("oops", "a") != finding_id("warn", "a")
    assert finding_id("oops", "a", "b") != finding_id("oops", "ab")
    assert finding_id("oops", "x").startswith("oops:")


def test_merge_dedups_by_id_and_keeps_all_evidence(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    ev1 = line_evidence(log, 2, "BUG: kernel NULL pointer dereference", 12.345678)
    ev2 = line_evidence(log, 4, "RIP: 0010:kf_null_member_read+0x1a/0x40 [kf_buggy]")
    a = incident_of((null_deref_finding((ev1,)),))
    b = incident_of((null_deref_finding((ev1, ev2), severity=Severity.CRITICAL),))
    merged = Incident.merge([a, b], tool_version="t")
    assert len(merged.findings) == 1
    only = merged.findings[0]
    assert only.evidence == (ev1, ev2)
    assert only.severity is Severity.CRITICAL
    assert merged.host == "host1"


def test_merge_reports_disagreeing_hosts_and_clocks(tmp_path: Path) -> None:
    ev = line_evidence(write_log(tmp_path), 2, "BUG")
    a = incident_of((null_deref_finding((ev,)),), host="a")
    b = incident_of((null_deref_finding((ev,)),), host="b")
    wall = Incident(
        host="a",
        kernel_release=NotAvailable("no log"),
        window=TimeWindow(Timestamp(1.0e9, Clock.WALL), Timestamp(1.1e9, Clock.WALL)),
        sources=(),
        findings=(),
    )
    merged = Incident.merge([a, b, wall], tool_version="t")
    assert isinstance(merged.host, NotAvailable)
    assert "disagree" in merged.host.reason
    assert isinstance(merged.window, NotAvailable)
    assert merged.kernel_release == "6.1.0-kf"


def test_sorted_findings_worst_first(tmp_path: Path) -> None:
    ev = line_evidence(write_log(tmp_path), 2, "BUG")
    low = null_deref_finding((ev,), severity=Severity.LOW)
    high = null_deref_finding((ev,), severity=Severity.CRITICAL)
    incident = incident_of((low, high))
    assert [f.severity for f in incident.sorted_findings()] == [Severity.CRITICAL, Severity.LOW]
    assert incident.worst_severity() is Severity.CRITICAL
    assert incident_of(()).worst_severity() is None


def test_not_available_says_why() -> None:
    assert str(NotAvailable("no vmcore given")) == "not available: no vmcore given"


def test_locator_and_citation_text(tmp_path: Path) -> None:
    ev = line_evidence(tmp_path / "kern.log", 2, "BUG", 12.5)
    assert ev.cite() == f"{tmp_path / 'kern.log'} line 2 [   12.500000] CPU 1"
    assert str(Locator(LocatorKind.LINE, 3, 7)) == "line 3-7"
    # A trace's event is named by the CPU whose buffer holds it: said once ("(CPU1) [...] CPU 1" until 2026-12-07);
    # a name that begins with another CPU (CPU10 for CPU 1) does not say this one.
    for name, said in (("CPU1", "(CPU1) [   12.500000]"), ("CPU10", "(CPU10) [   12.500000] CPU 1")):
        traced = dataclasses.replace(ev, locator=Locator(LocatorKind.EVENT, 2, name=name))
        assert traced.cite() == f"{tmp_path / 'kern.log'} line 2 {said}"
    assert str(Locator(LocatorKind.FRAME, 0)) == "frame #0"
    # The frame's number is not the register's (DWARF numbers rax 0): "register 0 (rax)" was read so (review 5).
    assert str(Locator(LocatorKind.REGISTER, 2, name="rax")) == "frame #2 register rax"
    assert str(Locator(LocatorKind.BYTE, 4096)) == "byte 0x1000"


def test_boot_times_merge_to_the_most_precise_unless_boots_differ() -> None:
    from forensics.model import BootTime, merge_boot_times

    dump = BootTime(1_000.0, 2.0, "vmcore")
    store = BootTime(1_001.0, 0.5, "store")
    assert merge_boot_times([dump, NotAvailable("x"), store]) == store
    other_boot = BootTime(5_000.0, 0.5, "later boot")
    merged = merge_boot_times([dump, other_boot])
    assert isinstance(merged, NotAvailable)
    assert "different boots" in merged.reason
    assert isinstance(merge_boot_times([]), NotAvailable)


def test_windows_convert_through_the_boot_time_and_skip_trace_clocks() -> None:
    from forensics.model import BootTime

    def incident(window: TimeWindow, boot: BootTime | None = None) -> Incident:
        return Incident("h", "r", window, (), (), boot_time=boot or NotAvailable("x"))

    log = incident(TimeWindow(Timestamp(10.0), Timestamp(20.0)), BootTime(1_000.0, 1.0, "dmesg -T"))
    samples = incident(TimeWindow(Timestamp(900.0, Clock.WALL), Timestamp(1_005.0, Clock.WALL)))
    trace = incident(TimeWindow(Timestamp(5_000.0, Clock.TRACE), Timestamp(6_000.0, Clock.TRACE)))
    merged = Incident.merge([log, samples, trace], tool_version="t")
    assert merged.window == TimeWindow(Timestamp(900.0, Clock.WALL), Timestamp(1_020.0, Clock.WALL))
    only_trace = Incident.merge([trace], tool_version="t")
    assert only_trace.window == trace.window
    with pytest.raises(ValueError, match="trace clock"):
        BootTime(1.0, 0.0, "x").to_wall(Timestamp(1.0, Clock.TRACE))


def test_finding_kinds_are_an_enum_whose_values_are_the_json_strings() -> None:
    from forensics.model import FindingKind

    assert FindingKind.KERNEL_MEMORY_LEAK == "kernel-memory-leak"
    assert FindingKind.DMESG_SOFT_LOCKUP.value == "dmesg.soft-lockup"
    assert json.dumps({"kind": FindingKind.SCHED_CPU_HOG}) == '{"kind": "sched-cpu-hog"}'
    assert len({k.value for k in FindingKind}) == len(FindingKind)


def test_every_dmesg_rule_and_event_kind_has_its_member() -> None:
    """The rule table names report kinds by member; each report kind is one finding kind and back."""
    from detectors.dmesg import rules
    from forensics.model import FindingKind
    from forensics.types.dmesg import ReportKind

    kinds = {r.kind for v in vars(rules).values() if isinstance(v, tuple) for r in v if hasattr(r, "kind")}
    assert len(kinds) > 30
    assert all(isinstance(kind, ReportKind) for kind in kinds)
    # the events make the others (detectors/dmesg/events.py: build_event's and the one-line table's)
    from detectors.dmesg.events import ONE_LINE_EVENTS

    one_line = {e.kind for e in ONE_LINE_EVENTS}
    assert one_line == {ReportKind.NET_DROP, ReportKind.RT_THROTTLING}
    assert kinds | {ReportKind.OOM, ReportKind.ALLOC_FAILURE} | one_line == set(ReportKind)
    assert {k.finding_kind for k in ReportKind} == {k for k in FindingKind if k.value.startswith("dmesg.")}
    assert ReportKind.SOFT_LOCKUP.finding_kind is FindingKind.DMESG_SOFT_LOCKUP


def test_a_kind_nobody_makes_is_refused() -> None:
    from forensics.model import Evidence, Finding, FindingKind, Locator, LocatorKind, Severity

    ev = Evidence("x.log", Locator(LocatorKind.LINE, 1), "x")
    made = Finding("a", "crash", "t", Severity.LOW, 0.5, "r", "s", (ev,))  # type: ignore[arg-type]
    assert made.kind is FindingKind.CRASH
    with pytest.raises(ValueError, match="'meminfo' is not a valid FindingKind"):
        Finding("a", "meminfo", "t", Severity.LOW, 0.5, "r", "s", (ev,))  # type: ignore[arg-type]


@pytest.mark.parametrize("wall", [253402300800.0, 1e20, -1e20, float("nan"), float("inf")])
def test_a_wall_time_no_calendar_has_is_said_as_a_number(wall: float) -> None:
    """A snapshot's `date=` of year 10000, NaN or inf: was a ValueError/OverflowError (exit 4) in every report."""
    assert str(Timestamp(wall, Clock.WALL)).endswith("s since the epoch (not a date)")
    assert str(Timestamp(1700000000.0, Clock.WALL)) == "2023-11-14T22:13:20+00:00"


def test_a_ctf_event_is_cited_by_stream_number_and_babeltrace2_time() -> None:
    """The time babeltrace2 prints: a UTC date to the nanosecond for a clock whose origin is the epoch (bug446190's
    last CPU0 event: babeltrace2 --clock-gmt --clock-date prints [2014-10-07 08:36:07.210351939]); else the
    seconds from the clock's own origin, said so.  The cite leaves the trace-clock timestamp to the locator."""
    at = StreamEvent("channel0_0", 9912, 0, 210364, 7639687635489, 1412670967210351939, "monotonic", True)
    ev = Evidence(
        "/t/bug446190", Locator(LocatorKind.EVENT, 9912, name="channel0_0", event=at), "x", Timestamp(7639.6), 0
    )
    assert ev.cite() == (
        "/t/bug446190 channel0_0 event 9912 (packet 0, byte 210364) at 2014-10-07 08:36:07.210351939 UTC"
        " (monotonic clock: 7639687635489 cycles) CPU 0"
    )
    own = StreamEvent("s", 1, 2, 3, 5_000_000_001, 5_000_000_001, "c", False)
    assert own.time_text() == "5.000000001 s from clock c's own origin"
    back = incident_from_dict(incident_to_dict(incident_of((null_deref_finding((ev,)),))), "x.json")  # (read back)
    assert back.findings[0].evidence == (ev,)
