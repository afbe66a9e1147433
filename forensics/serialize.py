"""The ``kforensic.incident/1`` JSON document: converting incidents to and from it.

The schema is documented in docs/cli.md.  Reading is strict: a document that
does not follow the schema raises :class:`~forensics.errors.InputError` naming
the first field that is wrong, so ``kforensic report --from`` never merges
half-understood data.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from forensics.errors import InputError
from forensics.model import (
    HYPOTHESIS_FACT,
    LOG_CAUSE_FACTS,
    NEXT_COMMAND_FACT,
    PROBLEM,
    Baseline,
    BootScope,
    BootTime,
    Clock,
    Consequence,
    Evidence,
    Examined,
    Fact,
    Finding,
    FindingKind,
    Incident,
    InputKind,
    Locator,
    LocatorKind,
    LogCause,
    NotAvailable,
    Severity,
    SourceRecord,
    StatedCause,
    StreamEvent,
    Subject,
    SubjectKind,
    Timestamp,
    TimeWindow,
)

INCIDENT_SCHEMA = "kforensic.incident/1"
#: The strings ``examined[].input`` may hold (another is read as none: a later writer's kind).
_INPUT_KINDS = frozenset(k.value for k in InputKind)

JsonDict = dict[str, Any]


def json_value(value: object) -> object:
    """A value for a JSON document: missing values become ``{"not_available": reason}``."""
    if isinstance(value, NotAvailable):
        return {"not_available": value.reason}
    return value


# A member's ``_value_`` where a document is made of many: what ``.value`` returns, without its ``enum.property``
# (two Python calls in 3.11: ~0.12 us a read, ~8 ns this way; ~5,500 reads of the corpus x4's dmesg document).


def timestamp_to_dict(ts: Timestamp | None) -> JsonDict | None:
    """A timestamp as JSON, or None."""
    if ts is None:
        return None
    if ts.zone_unknown:  # the local time as printed, read as if UTC: not an epoch time
        return {"seconds": ts.seconds, "clock": ts.clock._value_, "zone_unknown": True}
    return {"seconds": ts.seconds, "clock": ts.clock._value_}


def stream_event_to_dict(se: StreamEvent) -> JsonDict:
    """A CTF event's locator as JSON: ``number`` 1-based in its stream, ``timestamp_ns`` as babeltrace2 prints it
    (since the Unix epoch when ``clock_origin`` is ``unix-epoch``)."""
    return {
        "stream": se.stream,
        "number": se.number,
        "packet": se.packet,
        "byte_offset": se.byte,
        "timestamp_ns": se.ns,
        "cycles": se.cycles,
        "clock": se.clock,
        "clock_origin": "unix-epoch" if se.epoch else "clock",
    }


def evidence_to_dict(ev: Evidence) -> JsonDict:
    """An evidence item as JSON (its timestamp as :func:`timestamp_to_dict` writes it)."""
    loc, ts = ev.locator, ev.timestamp
    return {
        "source": ev.source,
        "locator": {"kind": loc.kind._value_, "start": loc.start, "end": loc.end, "name": loc.name}
        | ({} if loc.event is None else {"event": stream_event_to_dict(loc.event)}),
        "excerpt": ev.excerpt,
        "timestamp": timestamp_to_dict(ts),  # (zone_unknown kept: d5c0f497's flag was dropped here)
        "cpu": ev.cpu,
    }


def finding_to_dict(f: Finding) -> JsonDict:
    """A finding as JSON."""
    return {
        "id": f.id,
        "kind": f.kind,
        "title": f.title,
        "severity": f.severity._value_,
        "confidence": f.confidence,
        "confidence_reason": f.confidence_reason,
        "summary": f.summary,
        "evidence": [evidence_to_dict(e) for e in f.evidence],
        "next_steps": list(f.next_steps),
        # a floor (a run or a wait still open where the input ends) says so: "lower_bound": true
        "facts": [
            {"name": x.name, "value": x.value, **({"lower_bound": True} if x.lower_bound else {})}
            for x in f.shown_facts
        ],
        "detector": f.detector,
        # Only when there are any: the documents of findings without subjects stay as they were.
        **(
            {"subjects": [{"kind": s.kind.value, "name": s.name, "pid": s.pid} for s in f.subjects]}
            if f.subjects
            else {}
        ),
        **(
            {"baseline": {"name": f.baseline.name, "value": f.baseline.value, "source": f.baseline.source}}
            if f.baseline is not None
            else {}
        ),
        # Only on a consequence: the documents of other findings stay as they were.
        **(
            {"consequence_of": {"id": c.root, "title": c.title, "how": c.how}}
            if (c := f.consequence_of) is not None
            else {}
        ),
    }


def finding_floats(f: Finding) -> list[float]:
    """Every float :func:`finding_to_dict` writes of ``f``: its confidence and its evidence's times (the records'
    other fields it writes are strings, integers and enums; tests/forensics/test_serialize.py checks both)."""
    return [f.confidence, *(e.timestamp.seconds for e in f.evidence if e.timestamp is not None)]


def stated_cause(facts: tuple[Fact, ...]) -> tuple[tuple[Fact, ...], StatedCause | None, LogCause | None]:
    """A finding's own facts, its stated cause and its log cause, from the facts as written (the causes come last)."""
    logged = None
    n = len(LOG_CAUSE_FACTS)
    if len(facts) >= n and tuple(f.name for f in facts[-n:]) == LOG_CAUSE_FACTS:
        cls, statement, confidence, command = (f.value for f in facts[-n:])
        try:
            logged = LogCause(cls, statement, float(confidence), command)
            facts = facts[:-n]
        except ValueError:  # not a number: kept as the facts it is
            pass
    if len(facts) >= 2 and (facts[-2].name, facts[-1].name) == (HYPOTHESIS_FACT, NEXT_COMMAND_FACT):
        return facts[:-2], StatedCause(facts[-2].value, facts[-1].value), logged
    return facts, None, logged


#: The values of the severities at :data:`~forensics.model.PROBLEM` or above: a finding's severity looked up by its
#: value, where ``Severity``'s comparisons are Python calls (its rank, a tuple's index) of a few us each.
_PROBLEM_VALUES = frozenset(s._value_ for s in Severity if s >= PROBLEM)


def incident_to_dict(incident: Incident, finding: Callable[[Finding], Any] = finding_to_dict) -> JsonDict:
    """The whole incident as a ``kforensic.incident/1`` document; ``finding`` writes each finding (its dict, or
    what a writer makes of it: see :func:`forensics.report.dmesg.to_document`)."""
    window = incident.window
    findings = incident.sorted_findings()
    return {
        "schema": INCIDENT_SCHEMA,
        "tool_version": incident.tool_version,
        "host": json_value(incident.host),
        "kernel_release": json_value(incident.kernel_release),
        "window": json_value(window)
        if isinstance(window, NotAvailable)
        else {
            "start": timestamp_to_dict(window.start),
            "end": timestamp_to_dict(window.end),
            **({"left_out": list(window.left_out)} if window.left_out else {}),
        },
        "sources": [
            {
                "path": s.path,
                "size": json_value(s.size),
                "sha256": json_value(s.sha256),
                "seconds": s.seconds,
                "error": s.error,
            }
            | ({"boot_lines": list(s.boot_lines)} if s.boot_lines else {})
            | ({"boot_times": [_boot_time(t) for t in s.boot_times]} if s.boot_times else {})
            for s in incident.sources
        ],
        "findings": [finding(f) for f in findings],
        # len(incident.problems()), counted among the findings sorted once (a report-dense log's ~330 findings
        # were sorted again, their severities compared: ~5 M instructions of the corpus x4's document).
        "problems": sum(1 for f in findings if f.severity._value_ in _PROBLEM_VALUES),
        "examined": [
            {"what": e.what, "could_find": list(e.could_find), "could_not": list(e.could_not)}
            | ({"standing": e.standing} if e.standing else {})
            | ({"unusable": json_value(e.unusable)} if e.unusable is not None else {})
            | ({"input": e.input.value} if e.input is not None else {})
            | ({"hint": e.hint} if e.hint else {})
            | ({"cut": list(e.cut)} if e.cut else {})
            for e in incident.examined
        ],
        "boot_time": json_value(incident.boot_time)
        if isinstance(incident.boot_time, NotAvailable)
        else _boot_time(incident.boot_time),
    }


def _boot_time(boot: BootTime) -> dict[str, Any]:
    """A boot time as a findings file holds it: the incident's, or one boot's of a log of several."""
    scope = boot.holds_for
    return {"wall": boot.wall, "uncertainty": boot.uncertainty, "basis": boot.basis} | (
        {}
        if scope is None
        else {"holds_for": {"source": scope.source, "first_line": scope.first, "end_line": scope.end}}
    )


class _Reader:
    """Typed field access with errors that name the field's path."""

    def __init__(self, origin: str) -> None:
        self.origin = origin

    def fail(self, where: str, what: str) -> InputError:
        return InputError(
            f"{self.origin}: {where}: {what}",
            hint=f"expected a {INCIDENT_SCHEMA} document as written by kforensic --format json",
        )

    def get(self, obj: object, key: str, kind: type | tuple[type, ...], where: str) -> Any:
        if not isinstance(obj, dict):
            raise self.fail(where, "is not an object")
        if key not in obj:
            raise self.fail(f"{where}.{key}", "is missing")
        value = obj[key]
        if not isinstance(value, kind) or (isinstance(value, bool) and bool not in _as_tuple(kind)):
            raise self.fail(f"{where}.{key}", f"has the wrong type ({type(value).__name__})")
        return value

    def maybe_str(self, obj: object, key: str, where: str) -> str | NotAvailable:
        value = self.get(obj, key, (str, dict), where)
        if isinstance(value, dict):
            return NotAvailable(str(self.get(value, "not_available", str, f"{where}.{key}")))
        return str(value)

    def timestamp(self, value: object, where: str) -> Timestamp | None:
        if value is None:
            return None
        seconds = self.get(value, "seconds", (int, float), where)
        clock = self.get(value, "clock", str, where)
        try:
            return Timestamp(
                float(seconds), Clock(clock), isinstance(value, dict) and value.get("zone_unknown") is True
            )
        except ValueError:
            raise self.fail(f"{where}.clock", f"unknown clock {clock!r}") from None

    def boot_time(self, obj: object, where: str = "$.boot_time") -> BootTime | NotAvailable:
        if obj is None:  # optional: documents of older writers have none
            return NotAvailable("no input records when the kernel booted")
        if isinstance(obj, dict) and "not_available" in obj:
            return NotAvailable(str(obj["not_available"]))
        scope = obj.get("holds_for") if isinstance(obj, dict) else None  # (optional: older writers have none)
        at = f"{where}.holds_for"
        end = scope.get("end_line") if isinstance(scope, dict) else None
        if end is not None and not isinstance(end, int):
            raise self.fail(f"{at}.end_line", "is not an integer")
        return BootTime(
            float(self.get(obj, "wall", (int, float), where)),
            float(self.get(obj, "uncertainty", (int, float), where)),
            str(self.get(obj, "basis", str, where)),
            None
            if scope is None
            else BootScope(self.get(scope, "source", str, at), self.get(scope, "first_line", int, at), end),
        )

    def stream_event(self, obj: object, where: str) -> StreamEvent | None:
        if obj is None:
            return None
        at = f"{where}.event"
        return StreamEvent(
            self.get(obj, "stream", str, at),
            self.get(obj, "number", int, at),
            self.get(obj, "packet", int, at),
            self.get(obj, "byte_offset", int, at),
            self.get(obj, "cycles", int, at),
            self.get(obj, "timestamp_ns", int, at),
            self.get(obj, "clock", str, at),
            self.get(obj, "clock_origin", str, at) == "unix-epoch",
        )

    def evidence(self, obj: object, where: str) -> Evidence:
        loc = self.get(obj, "locator", dict, where)
        kind = self.get(loc, "kind", str, f"{where}.locator")
        start = self.get(loc, "start", int, f"{where}.locator")
        end = loc.get("end")
        name = loc.get("name")
        cpu = obj.get("cpu") if isinstance(obj, dict) else None
        event = loc.get("event")
        try:
            locator = Locator(LocatorKind(kind), start, end, name, self.stream_event(event, f"{where}.locator"))
            return Evidence(
                source=self.get(obj, "source", str, where),
                locator=locator,
                excerpt=self.get(obj, "excerpt", str, where),
                timestamp=self.timestamp(obj.get("timestamp") if isinstance(obj, dict) else None, where),
                cpu=cpu if isinstance(cpu, int) else None,
            )
        except ValueError as exc:
            raise self.fail(where, str(exc)) from None

    def finding(self, obj: object, where: str) -> Finding:
        evidence = self.get(obj, "evidence", list, where)
        facts = self.get(obj, "facts", list, where)
        subjects = obj.get("subjects", []) if isinstance(obj, dict) else []
        if not isinstance(subjects, list):
            raise self.fail(where, "subjects is not a list")
        steps = self.get(obj, "next_steps", list, where)
        severity = self.get(obj, "severity", str, where)
        own, stated, logged = stated_cause(
            tuple(
                Fact(
                    self.get(x, "name", str, f"{where}.facts[{i}]"),
                    self.get(x, "value", str, f"{where}.facts[{i}]"),
                    isinstance(x, dict) and x.get("lower_bound") is True,
                )
                for i, x in enumerate(facts)
            )
        )
        try:
            return Finding(
                id=self.get(obj, "id", str, where),
                kind=FindingKind(self.get(obj, "kind", str, where)),
                title=self.get(obj, "title", str, where),
                severity=Severity(severity),
                confidence=float(self.get(obj, "confidence", (int, float), where)),
                confidence_reason=self.get(obj, "confidence_reason", str, where),
                summary=self.get(obj, "summary", str, where),
                evidence=tuple(self.evidence(e, f"{where}.evidence[{i}]") for i, e in enumerate(evidence)),
                next_steps=tuple(str(s) for s in steps),
                facts=own,
                stated=stated,
                log_cause=logged,
                detector=self.get(obj, "detector", str, where),
                subjects=tuple(self.subject(x, f"{where}.subjects[{i}]") for i, x in enumerate(subjects)),
                baseline=self.baseline(obj.get("baseline") if isinstance(obj, dict) else None, where),
                consequence_of=self.consequence(obj.get("consequence_of") if isinstance(obj, dict) else None, where),
            )
        except ValueError as exc:
            raise self.fail(where, str(exc)) from None

    def baseline(self, obj: object, where: str) -> Baseline | None:
        if obj is None:  # optional: only findings judged against a baseline have one
            return None
        at = f"{where}.baseline"
        return Baseline(
            self.get(obj, "name", str, at), self.get(obj, "value", str, at), self.get(obj, "source", str, at)
        )

    def consequence(self, obj: object, where: str) -> Consequence | None:
        if obj is None:  # optional: only a consequence of a root finding has one
            return None
        at = f"{where}.consequence_of"
        return Consequence(self.get(obj, "id", str, at), self.get(obj, "title", str, at), self.get(obj, "how", str, at))

    def examined(self, obj: object, where: str) -> Examined:
        could_find = self.get(obj, "could_find", list, where)
        could_not = self.get(obj, "could_not", list, where)
        standing = obj.get("standing", "") if isinstance(obj, dict) else ""  # older writers: none
        unusable = obj.get("unusable") if isinstance(obj, dict) else None  # only an input that could not be used
        why = unusable.get("not_available") if isinstance(unusable, dict) else None
        kind = obj.get("input") if isinstance(obj, dict) else None  # older writers and usable inputs: none
        hint = obj.get("hint", "") if isinstance(obj, dict) else ""
        cut = obj.get("cut", []) if isinstance(obj, dict) else []  # only an input whose file is cut short
        return Examined(
            self.get(obj, "what", str, where),
            tuple(str(x) for x in could_find),
            tuple(str(x) for x in could_not),
            standing if isinstance(standing, str) else "",
            unusable=NotAvailable(why) if isinstance(why, str) else None,
            input=InputKind(kind) if kind in _INPUT_KINDS else None,
            hint=hint if isinstance(hint, str) else "",
            cut=tuple(str(x) for x in cut) if isinstance(cut, list) else (),
        )

    def subject(self, obj: object, where: str) -> Subject:
        pid = obj.get("pid") if isinstance(obj, dict) else None
        if pid is not None and not isinstance(pid, int):
            raise self.fail(where, "pid is not an integer")
        return Subject(SubjectKind(self.get(obj, "kind", str, where)), self.get(obj, "name", str, where), pid)

    def source(self, obj: object, where: str) -> SourceRecord:
        size = self.get(obj, "size", (int, dict), where)
        error = obj.get("error") if isinstance(obj, dict) else None
        return SourceRecord(
            path=self.get(obj, "path", str, where),
            size=size if isinstance(size, int) else NotAvailable(str(size.get("not_available", "unknown"))),
            sha256=self.maybe_str(obj, "sha256", where),
            seconds=float(self.get(obj, "seconds", (int, float), where)),
            error=error if isinstance(error, str) else None,
            boot_lines=self.boot_lines(obj, where),
            boot_times=self.boot_times(obj, where),
        )

    def boot_times(self, obj: object, where: str) -> tuple[BootTime, ...]:
        """A log's boot times, one per boot its lines date (optional: older writers have none)."""
        times = obj.get("boot_times", []) if isinstance(obj, dict) else []
        if not isinstance(times, list):
            raise self.fail(f"{where}.boot_times", "is not a list of boot times")
        out = []
        for i, t in enumerate(times):
            read = self.boot_time(t, f"{where}.boot_times[{i}]") if isinstance(t, dict) else None
            if not isinstance(read, BootTime) or read.holds_for is None:  # (one boot's: its scope says which)
                raise self.fail(f"{where}.boot_times[{i}]", "is not a boot time with the lines it holds for")
            out.append(read)
        return tuple(out)

    def boot_lines(self, obj: object, where: str) -> tuple[int, ...]:
        lines = obj.get("boot_lines", []) if isinstance(obj, dict) else []  # (optional: older writers have none)
        if not isinstance(lines, list) or not all(isinstance(n, int) and not isinstance(n, bool) for n in lines):
            raise self.fail(f"{where}.boot_lines", "is not a list of line numbers")
        return tuple(sorted(lines))


def _as_tuple(kind: type | tuple[type, ...]) -> tuple[type, ...]:
    return kind if isinstance(kind, tuple) else (kind,)


def incident_from_dict(doc: object, origin: str) -> Incident:
    """Read a ``kforensic.incident/1`` document (or one that embeds it under ``"incident"``).

    ``origin`` names the file, for error messages.
    """
    r = _Reader(origin)
    if isinstance(doc, dict) and doc.get("schema") != INCIDENT_SCHEMA and isinstance(doc.get("incident"), dict):
        doc = doc["incident"]
    schema = r.get(doc, "schema", str, "$")
    if schema != INCIDENT_SCHEMA:
        raise r.fail("$.schema", f"is {schema!r}, not {INCIDENT_SCHEMA!r} and no embedded incident")
    window_obj = r.get(doc, "window", dict, "$")
    window: TimeWindow | NotAvailable
    if "not_available" in window_obj:
        window = NotAvailable(str(window_obj["not_available"]))
    else:
        start = r.timestamp(window_obj.get("start"), "$.window.start")
        end = r.timestamp(window_obj.get("end"), "$.window.end")
        if start is None or end is None:
            raise r.fail("$.window", "needs start and end")
        left_out = window_obj.get("left_out", [])  # older writers: none
        window = TimeWindow(start, end, tuple(str(n) for n in left_out) if isinstance(left_out, list) else ())
    return Incident(
        host=r.maybe_str(doc, "host", "$"),
        kernel_release=r.maybe_str(doc, "kernel_release", "$"),
        window=window,
        sources=tuple(r.source(s, f"$.sources[{i}]") for i, s in enumerate(r.get(doc, "sources", list, "$"))),
        findings=tuple(r.finding(f, f"$.findings[{i}]") for i, f in enumerate(r.get(doc, "findings", list, "$"))),
        tool_version=str(r.get(doc, "tool_version", str, "$")),
        boot_time=r.boot_time(doc.get("boot_time") if isinstance(doc, dict) else None),
        examined=tuple(
            r.examined(e, f"$.examined[{i}]")
            for i, e in enumerate(doc.get("examined", []) if isinstance(doc, dict) else [])  # older writers: none
        ),
    )
