"""The ``kforensic.dmesg/1`` bytes written by orjson are the ones the standard library's encoder writes."""

from __future__ import annotations

import json
import re
import typing
from dataclasses import replace
from pathlib import Path
from typing import Any

import orjson
import pytest

from forensics.delivery import deliver
from forensics.output import encode_text
from forensics.pipelines.dmesg import analyse_logs
from forensics.report.dmesg import DmesgRenderer, _indented, document_bytes, to_document, write_document
from forensics.report.dmesg_json import report_to_dict
from forensics.report.formats import OutputFormat, Streamed, render, render_encoded, render_streamed
from forensics.types.dmesg import Frame

CASES = Path(__file__).resolve().parents[3] / "vmcore_fixtures" / "cases"


def stdlib_text(doc: dict[str, Any], depth: int = 4) -> bytes:
    """The document as the standard library's encoder writes each item, encoded as kforensic writes text."""
    encode = json.JSONEncoder(ensure_ascii=False, separators=(",", ":")).encode
    return _indented(doc, depth, lambda obj: encode_text(encode(obj)))


def test_fixture_consoles_document_is_byte_identical() -> None:
    logs = sorted(str(p) for p in CASES.glob("*/console.log"))
    assert len(logs) >= 10
    result = analyse_logs(logs, live=False)
    doc = to_document(list(result.sources), result.incident, result.hypotheses)
    text = document_bytes(doc)
    assert sum(len(s["reports"]) for s in doc["sources"]) >= 10
    assert text == stdlib_text(doc)
    assert json.loads(text) == doc


@pytest.mark.parametrize(
    "value",
    [1e-05, 8.271569839591098e-06, -3e-07, 0.0001, 0.5, 1e16, 1e-300, 2**70, 772.918915],
    ids=repr,
)
def test_numbers_orjson_writes_otherwise_take_the_stdlib_path(value: float) -> None:
    # A float under 1e-4 is written 0.00001 / 1e-6 by orjson, 1e-05 / 1e-06 by json; an int past 64 bits
    # is refused by orjson.  Stamps inside strings that look like numbers must not change the text.  Under "d", a
    # dict whose values are all items (a finding's: written together, the hints looked for in all at once).
    doc = {
        "a": [{"t": value, "s": "[0.00001] 1e-5, 0.0000"}],
        "b": value,
        "c": [value, "x"],
        "d": {"e": [{"s": "0.00001 e-5", "t": value, "u": 0.5}, {"u": 0.25, "t": value}]},
    }
    assert document_bytes(doc) == stdlib_text(doc)


def test_number_like_text_in_strings_is_left_as_it_is() -> None:
    doc = {"reports": [{"excerpt": "[    0.000010] x,0.00001,\n1e-5]", "time": 0.5}]}
    assert document_bytes(doc) == stdlib_text(doc)
    assert json.loads(document_bytes(doc)) == doc


def test_text_orjson_refuses_takes_the_stdlib_path() -> None:
    # A surrogate escape (an undecodable byte of a path name) is refused by orjson; the standard library writes
    # it and kforensic's text encoding shows it as \udcXX, as for every other output.
    doc = {"sources": [{"path": "/logs/k\udcffern.log", "lines": 3}]}
    assert document_bytes(doc) == stdlib_text(doc)
    assert b'"/logs/k\\udcffern.log"' in document_bytes(doc)


def test_the_command_writes_the_document_as_bytes_equal_to_its_text() -> None:
    result = analyse_logs(sorted(str(p) for p in CASES.glob("*/console.log"))[:3], live=False)
    data = render_encoded(DmesgRenderer(), result, OutputFormat.JSON)
    assert isinstance(data, bytes)
    assert data == encode_text(render(DmesgRenderer(), result, OutputFormat.JSON))
    assert render_encoded(DmesgRenderer(), result, OutputFormat.TEXT) == render(
        DmesgRenderer(), result, OutputFormat.TEXT
    )


def test_each_call_trace_entry_is_its_frame_by_field_name() -> None:
    result = analyse_logs(sorted(str(p) for p in CASES.glob("*/console.log")), live=False)
    doc = to_document(list(result.sources), result.incident, result.hypotheses)
    listed = [
        (r, x)
        for s, d in zip(result.sources, doc["sources"], strict=True)
        for r, x in zip(s.reports, d["reports"], strict=True)
    ]
    assert sum(len(r.trace) for r, _ in listed) >= 100
    for report, item in listed:
        assert item["call_trace"] == [dict(zip(Frame._fields, frame, strict=True)) for frame in report.trace]
        assert all(list(entry) == list(Frame._fields) for entry in item["call_trace"])


def _repeated_log(tmp_path: Path, text: str, copies: int) -> str:
    path = tmp_path / "repeated.log"
    path.write_text(text * copies)
    return str(path)


def _listed_repeats(doc: dict[str, Any]) -> int:
    from forensics.report.dmesg_json import ListedRepeat

    return sum(isinstance(x, ListedRepeat) for s in doc["sources"] for x in [*s["reports"], *s["events"]])


def test_listed_repeats_written_from_the_report_they_repeat_are_the_same_bytes(tmp_path: Path) -> None:
    # Fixture consoles repeated byte for byte: every copy after the first is the memo's repeats, listed (first,
    # sample, last) without a reading of their own, each written from its first occurrence's JSON.
    text = "".join(p.read_text() for p in sorted(CASES.glob("*/console.log"))[:4])
    result = analyse_logs([_repeated_log(tmp_path, text, 4)], live=False)
    plain = to_document(list(result.sources), result.incident, result.hypotheses)
    moved = to_document(list(result.sources), result.incident, result.hypotheses, moved_repeats=True)
    assert _listed_repeats(moved) >= 8
    assert _listed_repeats(plain) == 0
    assert document_bytes(moved) == document_bytes(plain) == stdlib_text(plain)
    assert render_encoded(DmesgRenderer(), result, OutputFormat.JSON) == document_bytes(plain)


def test_listed_repeats_take_the_stdlib_path_with_the_rest(tmp_path: Path) -> None:
    # Times under 1e-4 s, which orjson writes otherwise (1.2e-5 for 1.2e-05): the whole document, the repeats
    # written from another report's JSON too, is written by the standard library, as their dicts would be.
    golden = Path(__file__).resolve().parents[2] / "detectors" / "dmesg" / "golden" / "null_deref_x86.log"
    text = re.sub(r"^\[\s*\d+\.\d+\]", "[    0.000012]", golden.read_text(), flags=re.MULTILINE)
    result = analyse_logs([_repeated_log(tmp_path, text, 4)], live=False)
    plain = to_document(list(result.sources), result.incident, result.hypotheses)
    moved = to_document(list(result.sources), result.incident, result.hypotheses, moved_repeats=True)
    assert _listed_repeats(moved) >= 2
    from forensics.report.dmesg_json import ListedRepeat

    listed = [x for s in moved["sources"] for x in s["reports"] if isinstance(x, ListedRepeat)]
    assert listed and not any(x.floats_alike() for x in listed)  # their template's times are not alike
    assert b'"start_time":1.2e-05' in document_bytes(plain)
    assert document_bytes(moved) == document_bytes(plain) == stdlib_text(plain)
    # The command's own document, its findings written as FloatsAlike where their times allow (here none does).
    assert b'"seconds":1.2e-05' in DmesgRenderer().json_bytes(result)
    assert DmesgRenderer().json_bytes(result) == document_bytes(plain)


def test_listed_repeats_of_a_report_with_percent_signs_are_its_bytes(tmp_path: Path) -> None:
    # A listed repeat is its template formatted with %: the report's own % signs (a comm, a module list) stay
    # as they are, next to the moved line numbers.
    golden = Path(__file__).resolve().parents[2] / "detectors" / "dmesg" / "golden" / "null_deref_x86.log"
    text = golden.read_text().replace("Comm: sh", "Comm: 50%d%%s").replace("kf_buggy(O)", "kf_buggy(O) %s 100%")
    result = analyse_logs([_repeated_log(tmp_path, text, 4)], live=False)
    plain = to_document(list(result.sources), result.incident, result.hypotheses)
    moved = to_document(list(result.sources), result.incident, result.hypotheses, moved_repeats=True)
    assert _listed_repeats(moved) >= 2
    written = document_bytes(moved)
    assert written.count(b'"comm":"50%d%%s"') >= 4
    assert written == document_bytes(plain) == stdlib_text(plain)


def test_a_report_whose_text_holds_nul_and_format_marks_is_written_from_its_template(tmp_path: Path) -> None:
    # The byte a template's line numbers are marked with (NUL), a ``%d``, a ``%%`` and twenty digits in a report's
    # texts: orjson writes a NUL of a string as \u0000, so the template marks its line numbers alone, and each listed
    # report is its dict's bytes.  A template stands only where orjson can write the item.
    from forensics.report.dmesg_json import _LINE_MARK, ListedRepeat, RepeatItems, _template

    assert _LINE_MARK == b"\x00"
    golden = Path(__file__).resolve().parents[2] / "detectors" / "dmesg" / "golden" / "null_deref_x86.log"
    text = golden.read_text().replace("Comm: sh", "Comm: sh%d%%18446744073709551557")
    result = analyse_logs([_repeated_log(tmp_path, text, 4)], live=False)
    reports = [x for s in result.sources for x in (*s.reports, *s.events)]
    repeated = [found[0] for x in reports if (found := x.repeats()) is not None]
    assert repeated and "sh%d%%18446744073709551557" in repeated[0].excerpt()
    items = RepeatItems(reports)
    assert all(isinstance(items.item(x, None), ListedRepeat) for x in reports if x.repeats() is not None)
    plain = to_document(list(result.sources), result.incident, result.hypotheses)
    moved = to_document(list(result.sources), result.incident, result.hypotheses, moved_repeats=True)
    assert document_bytes(moved) == document_bytes(plain) == stdlib_text(plain)
    # NUL in its texts (the memo keeps no such report: made here), its title, its command and a frame's name.
    trace = tuple(f._replace(function=f.function + "\x00%d") for f in repeated[0].trace)
    odd = replace(repeated[0], title="s\x00h%d%%", comm="x\x00", trace=trace)
    made = _template(odd)
    assert made is not None
    numbers, form = made.numbers, made.form
    assert numbers == (odd.start_line, odd.end_line, *(f.line for f in trace)) and len(trace) >= 3
    assert form % numbers == orjson.dumps(report_to_dict(odd))
    assert made.times_alike
    assert b'"title":"s\\u0000h%%d%%%%"' in form and _LINE_MARK not in form
    assert _template(replace(odd, pid=2**70)) is None  # orjson cannot write it


def test_the_document_is_written_in_pieces_of_the_bytes_the_standard_library_writes() -> None:
    # ~3 MB of items: handed to the writer in pieces of ~256 KiB (a buffer it reuses), each item whole; an item
    # with a float under 1e-4 and one with a surrogate escape in the middle are written by the standard library,
    # every other by orjson: the same bytes as the whole document written by the standard library.
    items: list[Any] = [{"n": n, "text": f"line {n} " + "x" * 1000, "t": 12.5 + n} for n in range(3000)]
    items[1500]["t"] = 1.2e-05
    items[2200]["text"] = "k\udcffern"
    doc = {"schema": "s", "sources": [{"reports": items, "lines": 3}], "b": 3e-07, "c": [8e-06, "x"]}
    pieces: list[bytes] = []
    write_document(doc, lambda piece: pieces.append(bytes(piece)))
    assert len(pieces) >= 3
    assert all(p.endswith(b"}") for p in pieces[:-1])  # cut after an item, never inside one
    whole = b"".join(pieces)
    assert whole == document_bytes(doc) == stdlib_text(doc)
    assert b'"t":1.2e-05' in whole and b'"b": 3e-07' in whole and b"k\\udcffern" in whole
    # Each piece is a view of one buffer reused for the next, released once the writer returns: not to be kept.
    kept: list[memoryview] = []
    write_document(doc, kept.append)
    assert len(kept) == len(pieces)
    with pytest.raises(ValueError, match="released"):
        kept[0].tobytes()


def test_the_command_streams_the_document_it_would_render(
    tmp_path: Path, capsysbinary: pytest.CaptureFixture[bytes]
) -> None:
    result = analyse_logs(sorted(str(p) for p in CASES.glob("*/console.log"))[:3], live=False)
    streamed = render_streamed(DmesgRenderer(), result, OutputFormat.JSON)
    assert isinstance(streamed, Streamed)
    expected = DmesgRenderer().json_bytes(result)
    out = tmp_path / "doc.json"
    deliver(streamed, out)
    assert out.read_bytes() == expected
    deliver(streamed, None)
    assert capsysbinary.readouterr().out == expected
    assert render_streamed(DmesgRenderer(), result, OutputFormat.TEXT) == render(
        DmesgRenderer(), result, OutputFormat.TEXT
    )


def test_a_report_repeated_later_and_its_repeats_are_written_from_one_template(tmp_path: Path) -> None:
    # A report a later listed one repeats is written from its template as its repeats are (its own reading, where
    # it has one, after it); a report no other repeats is written from its dict.  One template a repeated report.
    from forensics.report.dmesg_json import ListedRepeat, RepeatItems, ReportItem

    golden = Path(__file__).resolve().parents[2] / "detectors" / "dmesg" / "golden" / "null_deref_x86.log"
    text = "".join(p.read_text() for p in sorted(CASES.glob("*/console.log"))[:4])
    path = Path(_repeated_log(tmp_path, text, 3))
    path.write_text(path.read_text() + golden.read_text())  # a report no other one repeats, listed last
    result = analyse_logs([str(path)], live=False)
    reports = [x for s in result.sources for x in (*s.reports, *s.events)]
    repeated = {id(found[0]) for x in reports if (found := x.repeats()) is not None}
    assert len(repeated) >= 3
    assert any(x.repeats() is None and id(x) not in repeated for x in reports)
    items = RepeatItems(reports)
    made = [items.item(x, None) for x in reports]
    for x, item in zip(reports, made, strict=True):
        assert isinstance(item, ListedRepeat) == (x.repeats() is not None or id(x) in repeated)
        assert item.as_dict() == report_to_dict(x)
        assert item.json_bytes() == orjson.dumps(report_to_dict(x))
        # A listed repeat's times are its template's: it answers as the item of its own record would.
        assert item.floats_alike() == ReportItem(x).floats_alike()
    assert set(items._templates) == repeated
    forms = {id(item.form) for item in made if isinstance(item, ListedRepeat)}
    assert len(forms) == len(repeated)
    # With a reading: the template's JSON, then the reading's, as orjson writes the dict.
    first = next(x for x in reports if id(x) in repeated)
    last = reports[-1]
    assert id(last) not in repeated and last.repeats() is None
    why = result.sources[0].whys.get(first.start_line)
    assert why is not None
    listed = RepeatItems(reports).item(first, why)
    assert isinstance(listed, ListedRepeat)
    assert listed.json_bytes() == orjson.dumps(report_to_dict(first, why)) == orjson.dumps(listed.as_dict())
    # A reading orjson cannot write (an integer past 64 bits), a cause with a float under 1e-4 (which orjson writes
    # otherwise), a time under 1e-4: the item is written by the standard library, as its dict is.
    from forensics.types.causes import Cause
    from forensics.types.dmesg import WhyFact

    odd_whys = [why._replace(facts=(*why.facts, WhyFact("odd", 2**70, 0)))]
    odd_whys.append(why._replace(cause=Cause("x", (("statement", "s"), ("n", (1, {"f": 3e-07}))), 0.5, "c")))
    odd_whys.append(why._replace(cause=Cause("x", (("statement", "s"),), 3e-07, "c")))
    for x in (first, last):
        for odd in odd_whys:
            doc = {"reports": [RepeatItems(reports).item(x, odd), report_to_dict(x, why)]}
            plain = {"reports": [report_to_dict(x, odd), report_to_dict(x, why)]}
            assert document_bytes(doc, 2) == document_bytes(plain, 2) == stdlib_text(plain, 2)
    early = {"reports": [RepeatItems(reports).item(x, why) for x in (replace(last, start_time=2e-05), last)]}
    assert b'"start_time":2e-05' in document_bytes(early, 2)
    plain = {"reports": [report_to_dict(replace(last, start_time=2e-05), why), report_to_dict(last, why)]}
    assert document_bytes(early, 2) == document_bytes(plain, 2) == stdlib_text(plain, 2)


def _admits_float(hint: object) -> bool:
    """Whether a field of this annotation may hold a float (or anything: ``Any``)."""
    if hint is float or hint is Any:
        return True
    return any(_admits_float(arg) for arg in typing.get_args(hint))


def test_a_report_item_holds_floats_only_where_its_floats_are_looked_at() -> None:
    # ReportItem.floats_alike looks at the floats of a report's item where the records' annotations allow one: a
    # float field added to a record report_to_dict or why_to_dict writes fails here until it is looked at there.
    from forensics.model import NotAvailable
    from forensics.types import dmesg as types
    from forensics.types.causes import Cause

    records = [types.KernelReport, types.Frame, types.ReportWhy, types.WhyFact, types.StackSection, types.StackFrame,
               types.LockInfo, types.StalledCpu, types.StalledTask, types.MemoryConsumer, types.ZoneFree,
               types.CodeListing, types.CodeInstruction, Cause, NotAvailable]  # fmt: skip
    floats = {
        (record.__name__, name)
        for record in records
        for name, hint in typing.get_type_hints(record).items()
        if _admits_float(hint)
    }
    # boot_time is not written; the others are what floats_alike reads.
    assert floats == {
        ("KernelReport", "start_time"),
        ("KernelReport", "end_time"),
        ("KernelReport", "boot_time"),
        ("KernelReport", "start_wall"),
        ("Cause", "confidence"),
        ("Cause", "fields"),
    }


def test_the_items_missing_values_are_written_as_the_incident_writes_them() -> None:
    # dmesg_json._value is serialize.json_value compiled with the items (the same answer for every kind of value).
    from forensics.model import NotAvailable
    from forensics.report.dmesg_json import _value
    from forensics.serialize import json_value

    for value in (NotAvailable("no stamp"), 1.5, 0, "x", None, {"not_available": "y"}, (1, 2)):
        assert _value(value) == json_value(value)
    assert _value(NotAvailable("no stamp")) == {"not_available": "no stamp"}


def test_the_items_and_findings_made_as_written_are_the_documents_bytes(tmp_path: Path) -> None:
    # The command's document makes each report's item and each finding's dict when it comes to it (ItemsAsWritten,
    # dropped once written): the same bytes as the document of dicts made at once; an incident without findings
    # writes its empty list as before.
    from forensics.report.dmesg import ItemsAsWritten

    result = analyse_logs(sorted(str(p) for p in CASES.glob("*/console.log"))[:4], live=False)
    made = to_document(list(result.sources), result.incident, result.hypotheses, moved_repeats=True, as_written=True)
    findings = made["incident"]["findings"]
    assert isinstance(findings, ItemsAsWritten) and len(findings) == len(result.incident.findings) >= 4
    assert all(isinstance(s["reports"], ItemsAsWritten) for s in made["sources"])
    plain = to_document(list(result.sources), result.incident, result.hypotheses)
    assert document_bytes(made) == document_bytes(plain) == stdlib_text(plain)
    assert DmesgRenderer().json_bytes(result) == document_bytes(plain)
    empty = analyse_logs([_repeated_log(tmp_path, "[    1.000000] nothing to see\n", 3)], live=False)
    assert not empty.incident.findings
    made = to_document(list(empty.sources), empty.incident, empty.hypotheses, moved_repeats=True, as_written=True)
    assert made["incident"]["findings"] == []
    plain = to_document(list(empty.sources), empty.incident, empty.hypotheses)
    assert document_bytes(made) == document_bytes(plain) == stdlib_text(plain)
