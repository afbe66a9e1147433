"""Tests of the kforensic.incident/1 JSON document."""

from __future__ import annotations

import json
import typing
from pathlib import Path
from typing import Any

import pytest

from forensics import model
from forensics.errors import InputError
from forensics.model import Clock, Incident, NotAvailable, Timestamp, TimeWindow
from forensics.serialize import INCIDENT_SCHEMA, finding_floats, finding_to_dict, incident_from_dict, incident_to_dict
from tests.forensics.factories import incident_of, line_evidence, null_deref_finding, write_log


def _incident(tmp_path: Path) -> Incident:
    log = write_log(tmp_path)
    ev = line_evidence(log, 2, "BUG: kernel NULL pointer dereference", 12.345678)
    return incident_of((null_deref_finding((ev,)),))


def test_round_trip_is_lossless(tmp_path: Path) -> None:
    incident = _incident(tmp_path)
    doc = json.loads(json.dumps(incident_to_dict(incident)))
    assert doc["schema"] == INCIDENT_SCHEMA
    assert incident_from_dict(doc, "x.json") == incident


def test_not_available_values_round_trip() -> None:
    incident = Incident(
        host=NotAvailable("no log names it"),
        kernel_release=NotAvailable("no banner"),
        window=NotAvailable("no timestamps"),
        sources=(),
        findings=(),
    )
    doc = incident_to_dict(incident)
    assert doc["host"] == {"not_available": "no log names it"}
    assert incident_from_dict(doc, "x.json") == incident


def test_wall_clock_window_round_trips() -> None:
    window = TimeWindow(Timestamp(1.7e9, Clock.WALL), Timestamp(1.8e9, Clock.WALL))
    incident = Incident("h", "r", window, (), ())
    assert incident_from_dict(incident_to_dict(incident), "x").window == window


def test_embedded_incident_is_accepted(tmp_path: Path) -> None:
    doc = {"schema": "kforensic.dmesg/1", "sources": [], "incident": incident_to_dict(_incident(tmp_path))}
    assert len(incident_from_dict(doc, "d.json").findings) == 1


def _broken(doc: dict[str, Any], *path: str | int) -> dict[str, Any]:
    copy = json.loads(json.dumps(doc))
    target: Any = copy
    for key in path[:-1]:
        target = target[key]
    del target[path[-1]]
    return copy


@pytest.mark.parametrize(
    ("path", "message"),
    [
        (("schema",), r"\$\.schema: is missing"),
        (("findings", 0, "evidence", 0, "locator", "kind"), r"evidence\[0\]\.locator\.kind: is missing"),
        (("findings", 0, "title"), r"findings\[0\]\.title: is missing"),
        (("sources",), r"\$\.sources: is missing"),
    ],
)
def test_invalid_documents_name_the_field(tmp_path: Path, path: tuple[str | int, ...], message: str) -> None:
    doc = _broken(incident_to_dict(_incident(tmp_path)), *path)
    with pytest.raises(InputError, match=message):
        incident_from_dict(doc, "bad.json")


def test_wrong_values_are_refused(tmp_path: Path) -> None:
    doc = incident_to_dict(_incident(tmp_path))
    doc["findings"][0]["severity"] = "apocalyptic"
    with pytest.raises(InputError, match="apocalyptic"):
        incident_from_dict(doc, "bad.json")
    doc = incident_to_dict(_incident(tmp_path))
    doc["findings"][0]["evidence"] = []
    with pytest.raises(InputError, match="without evidence"):
        incident_from_dict(doc, "bad.json")
    with pytest.raises(InputError, match="not an object"):
        incident_from_dict([1, 2], "list.json")
    with pytest.raises(InputError, match=r"kforensic\.trace/1"):
        incident_from_dict({"schema": "kforensic.trace/1"}, "t.json")


def test_boot_time_round_trips_and_is_optional(tmp_path: Path) -> None:
    from dataclasses import replace

    from forensics.model import BootTime

    incident = replace(_incident(tmp_path), boot_time=BootTime(1.7e9, 2.0, "vmcore CRASHTIME"))
    doc = incident_to_dict(incident)
    assert incident_from_dict(doc, "x") == incident
    del doc["boot_time"]  # documents of older writers
    assert isinstance(incident_from_dict(doc, "x").boot_time, NotAvailable)


def test_subjects_round_trip_and_are_left_out_when_there_are_none(tmp_path: Path) -> None:
    from dataclasses import replace

    from forensics.model import Subject, SubjectKind

    log = write_log(tmp_path)
    plain = null_deref_finding(
        (line_evidence(log, 2, "BUG: kernel NULL pointer dereference, address: 0000000000000018"),)
    )
    assert "subjects" not in incident_to_dict(incident_of((plain,)))["findings"][0]
    about = (Subject(SubjectKind.FUNCTION, "kf_null_member_read"), Subject(SubjectKind.TASK, "cat", 517))
    incident = incident_of((replace(plain, subjects=about),))
    doc = incident_to_dict(incident)
    assert doc["findings"][0]["subjects"][1] == {"kind": "task", "name": "cat", "pid": 517}
    assert incident_from_dict(json.loads(json.dumps(doc)), "x.json").findings[0].subjects == about
    doc["findings"][0]["subjects"][0]["kind"] = "planet"
    with pytest.raises(InputError, match="findings"):
        incident_from_dict(doc, "x.json")


def test_a_stated_cause_is_written_as_the_last_two_facts_and_read_back_typed(tmp_path: Path) -> None:
    from dataclasses import replace

    from forensics.model import Fact, StatedCause

    incident = _incident(tmp_path)
    stated = StatedCause("dev->sensor was NULL: a missing NULL check", "crash> dis -rl kf_read")
    finding = replace(incident.findings[0], facts=(Fact("frame", "#0"),), stated=stated)
    doc = json.loads(json.dumps(incident_to_dict(replace(incident, findings=(finding,)))))
    assert doc["findings"][0]["facts"] == [
        {"name": "frame", "value": "#0"},
        {"name": "hypothesis", "value": stated.statement},
        {"name": "next command", "value": stated.next_command},
    ]
    [back] = incident_from_dict(doc, "x.json").findings
    assert back.stated == stated and back.facts == (Fact("frame", "#0"),) and back == finding
    assert back.fact("hypothesis") == stated.statement  # read like any fact


def test_a_log_cause_is_written_as_the_last_four_facts_and_read_back_typed(tmp_path: Path) -> None:
    from dataclasses import replace

    from forensics.model import Fact, LogCause

    incident = _incident(tmp_path)
    cause = LogCause("use_after_free", "use-after-free: kf_read uses a kf_obj object after it was freed", 0.9, "bt")
    finding = replace(incident.findings[0], facts=(Fact("type", "kasan"),), log_cause=cause)
    doc = json.loads(json.dumps(incident_to_dict(replace(incident, findings=(finding,)))))
    assert [(x["name"], x["value"]) for x in doc["findings"][0]["facts"]] == [
        ("type", "kasan"),
        ("root cause class", "use_after_free"),
        ("root cause", cause.statement),
        ("root cause confidence", "0.90"),
        ("root cause next command", "bt"),
    ]
    [back] = incident_from_dict(doc, "x.json").findings
    assert back.log_cause == cause and back == finding


def _floats(value: object) -> list[float]:
    """Every float in a JSON value, in order."""
    if isinstance(value, dict):
        return [x for v in value.values() for x in _floats(v)]
    if isinstance(value, list):
        return [x for v in value for x in _floats(v)]
    return [value] if type(value) is float else []


def _admits_float(hint: object) -> bool:
    return hint is float or hint is Any or any(_admits_float(arg) for arg in typing.get_args(hint))


def test_finding_floats_are_every_float_a_finding_is_written_with() -> None:
    # What a writer reads to know a finding's floats without searching its JSON (kforensic dmesg's document): every
    # float finding_to_dict writes, and the records' only float fields are those it reads.
    from forensics.pipelines.dmesg import analyse_logs
    from tests.vmcore_cases import console_logs

    result = analyse_logs([str(p) for p in console_logs()], live=False)
    early = line_evidence(Path("k.log"), 3, "x", 1.5e-05)  # a time orjson writes otherwise (0.000015)
    findings = [*result.incident.findings, null_deref_finding((early, line_evidence(Path("k.log"), 9, "y")))]
    assert len(findings) >= 10 and any(e.timestamp is not None for f in findings for e in f.evidence)
    for f in findings:
        assert _floats(finding_to_dict(f)) == finding_floats(f)
    records = [model.Finding, model.Evidence, model.Locator, model.Timestamp, model.Fact, model.Subject,
               model.Baseline, model.StatedCause, model.LogCause]  # fmt: skip
    floats = {(r.__name__, n) for r in records for n, hint in typing.get_type_hints(r).items() if _admits_float(hint)}
    # LogCause's confidence is written as a fact's text (as_facts); the others are what finding_floats reads.
    assert floats == {("Finding", "confidence"), ("Timestamp", "seconds"), ("LogCause", "confidence")}


def test_problems_counts_the_findings_at_problem_or_above(tmp_path: Path) -> None:
    # "problems" is len(incident.problems()), counted among the sorted findings by their severities' values.
    from dataclasses import replace

    from forensics.model import PROBLEM, Severity

    log = write_log(tmp_path)
    ev = line_evidence(log, 2, "BUG: kernel NULL pointer dereference", 12.345678)
    levels = list(Severity)
    for n in range(len(levels) + 1):
        found = tuple(
            replace(null_deref_finding((ev,), severity), id=f"f{i}", title=f"t{i}")
            for i, severity in enumerate(levels[:n] * 2)
        )
        incident = incident_of(found)
        expected = sum(1 for f in found if f.severity >= PROBLEM)
        assert incident_to_dict(incident)["problems"] == len(incident.problems()) == expected
    assert sum(1 for s in Severity if s >= PROBLEM) == 3  # medium, high and critical


def test_a_logs_boot_times_round_trip_and_a_boot_time_of_no_lines_is_refused(tmp_path: Path) -> None:
    """Each boot's reading of a log of several (``sources[].boot_times``): what ``report --from`` dates each boot's
    lane with; one that says no lines it holds for dates no boot, and is refused by its path."""
    from dataclasses import replace

    from forensics.model import BootScope, BootTime

    incident = _incident(tmp_path)
    log = incident.sources[0].path
    times = (
        BootTime(1.7e9, 1.0, "RTC", BootScope(log, 1, 40)),
        BootTime(1.7e9 + 900, 1.0, "RTC", BootScope(log, 40, None)),
    )
    incident = replace(incident, sources=(replace(incident.sources[0], boot_lines=(1, 40), boot_times=times),))
    doc = json.loads(json.dumps(incident_to_dict(incident)))
    assert incident_from_dict(doc, "x.json") == incident
    del doc["sources"][0]["boot_times"][1]["holds_for"]
    with pytest.raises(InputError, match=r"\$\.sources\[0\]\.boot_times\[1\]: is not a boot time with the lines"):
        incident_from_dict(doc, "x.json")
    doc["sources"][0]["boot_times"] = [{"wall": 1.7e9, "basis": "RTC"}]
    with pytest.raises(InputError, match=r"\$\.sources\[0\]\.boot_times\[0\]\.uncertainty: is missing"):
        incident_from_dict(doc, "x.json")
