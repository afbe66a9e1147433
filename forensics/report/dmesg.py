"""``kforensic dmesg`` rendered: the reports table, why each report happened, and the ``kforensic.dmesg/1`` document."""

from __future__ import annotations

import io
import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from forensics import __version__, native
from forensics.model import Finding, Incident
from forensics.report.formats import Destination, IncidentRenderer
from forensics.types.dmesg_result import DmesgResult, SourceResult

if TYPE_CHECKING:
    from forensics.report.document import Block, Section
    from forensics.types.dmesg import KernelReport, ReportGroup, ReportWhy
    from forensics.types.incident import Hypothesis


SCHEMA = "kforensic.dmesg/1"

#: The document's items (:mod:`forensics.report.dmesg_json`) compiled to C when built (``make compile``; see
#: :mod:`forensics.native`), installed here, before any function of this module imports them: the items' dicts of the
#: corpus x4's document in ~15% fewer instructions.
NATIVE = native.DMESG_DOCUMENT
native.install(NATIVE)


def hypothesis_dict(h: Hypothesis) -> dict[str, Any]:
    """One ranked hypothesis as JSON (the same fields as ``kforensic vmcore``'s)."""
    return {
        "rank": h.rank,
        "statement": h.statement,
        "confidence": h.confidence,
        "supporting": list(h.supporting),
        "against": list(h.against),
        "next_command": h.next_command,
    } | ({"first": h.first} if h.first else {})


def _listed_whys(r: SourceResult) -> dict[int, ReportWhy]:
    """The readings the document lists: each group's first occurrence's, and a repeat's only when it differs.

    Repeats of one report read the same (the reading is cached by the report they repeat); listing it once per
    group keeps the document small for a log that repeats a crash.  Readings are compared by value (their
    lines are relative to the report's first): a repeat the memo did not hold, built and read again, is
    listed as one it held would be.
    """
    out = {}
    for g in r.groups:
        first = r.whys.get(g.first.start_line)
        for x in g.kept:
            why = r.whys.get(x.start_line)
            if why is not None and (x is g.first or (why is not first and why != first)):
                out[x.start_line] = why
    return out


class ItemsAsWritten:
    """The ``reports`` (or ``events``) items of one source, or the incident's findings, each made when
    :func:`write_document` comes to it and dropped once written: the dicts of a report-dense log's document
    (~100,000: each report's frames, stacks and reading; each finding's evidence) are then never all held at once."""

    __slots__ = ("_make", "_reports")

    def __init__(self, reports: list[Any], make: Callable[[Any], Any]) -> None:
        self._reports, self._make = reports, make

    def __len__(self) -> int:
        return len(self._reports)

    def __iter__(self) -> Iterator[Any]:
        return map(self._make, self._reports)


def _item_makers(
    r: SourceResult, whys: dict[int, ReportWhy], item: Callable[..., Any]
) -> tuple[Callable[[KernelReport], Any], Callable[[KernelReport], Any]]:
    """The makers of one source's ``reports`` and ``events`` items: each with its listed reading (and cause)."""
    causes = r.group_causes

    def report_item(x: KernelReport) -> Any:
        return item(x, whys.get(x.start_line), causes.get(x.signature))

    def event_item(x: KernelReport) -> Any:
        return item(x, whys.get(x.start_line))

    return report_item, event_item


def to_document(
    results: list[SourceResult],
    incident: Incident,
    hypotheses: tuple[Hypothesis, ...] = (),
    moved_repeats: bool = False,
    as_written: bool = False,
) -> dict[str, Any]:
    """The ``kforensic.dmesg/1`` JSON document.

    ``moved_repeats``: each report is a :class:`~forensics.report.dmesg_json.ReportItem`, a listed repeat of another
    report's bytes (and that report) a :class:`~forensics.report.dmesg_json.ListedRepeat` (the other's JSON, line
    numbers moved), which :func:`document_bytes` writes as its dict would be written; otherwise every item is a
    dict.
    ``as_written``: the ``reports`` and ``events`` of each source are :class:`ItemsAsWritten`, for
    :func:`write_document` alone (the items are made in order, as a list of them would be).
    """
    from forensics.report.dmesg_json import RepeatItems, alike, group_to_dict, report_to_dict
    from forensics.serialize import finding_floats, finding_to_dict, incident_to_dict

    def finding(f: Finding) -> dict[str, Any]:
        # A finding whose floats orjson writes as json does (its record says where they are): FloatsAlike, for
        # write_document alone (its values are not searched for the hints: ~10 M instructions of the corpus x4's).
        made = finding_to_dict(f)
        return FloatsAlike(made) if all(map(alike, finding_floats(f))) else made

    sources = []
    item = RepeatItems(x for r in results for x in (*r.reports, *r.events)).item if moved_repeats else report_to_dict
    for r in results:
        whys = _listed_whys(r)
        report_item, event_item = _item_makers(r, whys, item)
        reports: list[Any] | ItemsAsWritten
        events: list[Any] | ItemsAsWritten
        if as_written:  # (an empty list is written as [], not item by item)
            reports = ItemsAsWritten(r.reports, report_item) if r.reports else []
            events = ItemsAsWritten(r.events, event_item) if r.events else []
        else:
            reports, events = [report_item(x) for x in r.reports], [event_item(x) for x in r.events]
        sources.append(
            {
                "path": r.name,
                "lines": r.lines,
                "reports": reports,
                "events": events,
                "groups": [group_to_dict(g) for g in r.groups],
            }
        )
    return {
        "schema": SCHEMA,
        "tool_version": __version__,
        "sources": sources,
        "hypotheses": [hypothesis_dict(h) for h in hypotheses],
        "incident": _incident_as_written(incident, finding) if as_written else incident_to_dict(incident),
    }


def _as_is(f: Finding) -> Finding:
    return f


def _incident_as_written(incident: Incident, finding: Callable[[Finding], Any]) -> dict[str, Any]:
    """:func:`~forensics.serialize.incident_to_dict` with ``finding`` writing each finding, its findings
    :class:`ItemsAsWritten`: the corpus x4's ~330 findings' dicts (~2.5 MB, ~600 first touches of pages) were
    made at once, and held to the document's end."""
    from forensics.serialize import incident_to_dict

    made = incident_to_dict(incident, _as_is)  # its findings in their order, as they are
    if made["findings"]:  # (an empty list is written as [], not item by item)
        made["findings"] = ItemsAsWritten(made["findings"], finding)
    return made


class FloatsAlike(dict[str, Any]):
    """A dict whose values are items (a finding's), each float of which orjson writes as the standard library
    does, known from the record it was made of: :func:`write_document` does not search its values' JSON for the
    hints.  Equal to the dict it copies; a dict to any other writer."""


#: Where orjson and the standard library may write a number differently: a float under 1e-4 (orjson's
#: ``0.00001`` and ``1e-6`` are ``1e-05`` and ``1e-06`` to ``json``).  Two literal searches (~15 ms each over
#: 16 MB: an alternation of the two would be tried at every character); each hit is then looked at.
_SMALL_FLOAT_HINTS = (re.compile(rb"0\.0000\d"), re.compile(rb"e-\d"))
_NUMBER_CHARS = frozenset(b"0123456789.-+e")
#: ``e-\d`` found from its ``-``: a pattern that starts with one literal byte is searched byte by byte for it, one
#: that starts with two (``e-``) by a slower loop (the search of the items of the corpus x4: 7.1 -> 5.5 ms).
_E_MINUS_DIGIT = re.compile(rb"-(?<=e-)\d")
#: ``0\.0000\d`` found from its ``.0000`` (the ``0`` before it asserted behind): the engine searches a literal
#: prefix that does not start with ``0`` (a byte of most line numbers and addresses) faster.  The 10.4 MB of items
#: of the corpus x4: 4.2 ms, where ``find(b"0.0000")`` and then the pattern took 6.1.
_ZERO_DOT_0000 = re.compile(rb"\.0000(?<=0\.0000)\d")


def _small_float_hint(data: bytes) -> bool:
    """Whether ``data`` holds a hint of :data:`_SMALL_FLOAT_HINTS` (their two searches' answer, found faster)."""
    return _ZERO_DOT_0000.search(data) is not None or _E_MINUS_DIGIT.search(data) is not None


def document_bytes(doc: dict[str, Any], depth: int = 4) -> bytes:
    """The document as UTF-8 JSON (:func:`write_document`'s pieces joined)."""
    out = bytearray()
    write_document(doc, out.extend, depth)
    return bytes(out)


#: :func:`write_document` hands its pieces to ``write`` once they hold this many bytes (and at the end): 256 KiB,
#: where 1 MiB's buffer, grown to it by reallocations, was ~370 more first touches of pages of the corpus x4's
#: document (~1 ms; peak RSS 1.5 MiB more) for 48 fewer writes of its 16 MB.
_PIECE = 1 << 18


def write_document(doc: dict[str, Any], write: Callable[[memoryview], object], depth: int = 4) -> None:
    """The document as UTF-8 JSON, handed to ``write`` in pieces of ~256 KiB as they are made: containers indented
    down to ``depth``, each deeper item on one line.  ``write`` must not keep the piece it is given (a view of a
    buffer reused for the next one, released once ``write`` returns).

    A report, a group or a finding on one line each keeps it readable and greppable.  The items are
    written by orjson (~10x the standard library's C encoder: 0.03 s instead of 0.27 s for the 16 MB
    document of the shared corpus four times over, a fifth of that run), the same bytes as ``json`` with
    ``ensure_ascii=False`` and compact separators, encoded as :func:`forensics.output.encode_text` encodes
    text; an item (or key) where orjson would write a float under 1e-4 otherwise, or that it cannot write (an
    integer past 64 bits, a key that is not a string, a surrogate escape), is written by the standard library:
    the same bytes as the whole document written by it.  NaN and infinities, which no field holds (times are
    parsed from digits), would be ``null`` (the standard library writes ``NaN``, which is not JSON).  Bytes, not
    text: orjson writes UTF-8, and the text of a report-dense log's document (one replacement character makes it
    two bytes a character) was only made to be encoded again (~0.05 s of the corpus x4's 16 MB).  Pieces, not
    the document: the 16 MB of the corpus x4's, held in one buffer and then copied to ``bytes``, were ~8,000
    first touches of memory (~0.03 s of system time) and a third of the run's peak memory.
    """
    import functools

    import orjson

    from forensics.report.dmesg_json import ReportItem

    def written(obj: object) -> orjson.Fragment:
        if isinstance(obj, ReportItem):
            return orjson.Fragment(obj.json_bytes())
        raise TypeError(f"{type(obj).__name__} is not JSON")

    fast = functools.partial(orjson.dumps, default=written)
    stdlib: list[Callable[[Any], bytes]] = []

    def slow(obj: Any) -> bytes:
        if not stdlib:
            import json

            from forensics.output import encode_text

            def as_dict(obj: object) -> object:
                if isinstance(obj, ReportItem):
                    return obj.as_dict()
                # What json.JSONEncoder.default says of any other type (no field holds one).
                raise TypeError(f"Object of type {type(obj).__name__} is not JSON serializable")

            encoder = json.JSONEncoder(ensure_ascii=False, separators=(",", ":"), default=as_dict).encode
            stdlib.append(lambda obj: encode_text(encoder(obj)))
        return stdlib[0](obj)

    def encode(obj: Any) -> bytes:
        if isinstance(obj, ReportItem) and obj.floats_alike():
            # A report's item whose floats orjson writes as the standard library does (its typed fields say where
            # they are): its JSON as is (what orjson writes of the Fragment, without the trip through it), not
            # searched for the hints.
            try:
                return obj.json_bytes()
            except TypeError:  # orjson.JSONEncodeError
                return slow(obj)
        try:
            data: bytes = fast(obj)
        except TypeError:  # orjson.JSONEncodeError
            return slow(obj)
        # The item as it stands in the document, between a separator and the next (b"[" and b"]" stand so): the
        # hints first, which most items do not hold (b"e-" alone is in many texts).
        if _small_float_hint(data) and _small_float_differs(b"[" + data + b"]"):
            return slow(obj)
        return data

    def encode_all(objs: list[Any], alike: bool) -> list[bytes]:
        # Each as encode writes it, the hints looked for once in all (a finding's ~15 values: ~4,000 looks of the
        # corpus x4's document in ~330): a hint in one is a hint in the join; where the join holds one, each alone.
        # ``alike``: the floats of all are known to be written as json does (FloatsAlike): not looked for.
        try:
            # orjson itself, not ``fast``: a finding's values hold no item (what its ``default`` writes), and its
            # keyword argument was ~0.1 us of each of the corpus x4's ~4,900 calls; a value orjson cannot write
            # without it raises here, and is written by ``encode`` as before.
            datas = list(map(orjson.dumps, objs))
        except TypeError:
            return [encode(obj) for obj in objs]
        return [encode(obj) for obj in objs] if not alike and _small_float_hint(b"".join(datas)) else datas

    _write_indented(doc, depth, encode, write, _PIECE, encode_all)


def _small_float_differs(data: bytes) -> bool:
    """Whether a number of the JSON ``data`` (by its place: after a separator or an indent, before the next)
    is written otherwise by ``json``.  A number-like run inside a string that happens to stand so counts too:
    the item is then only written more slowly."""
    import json

    for hint in _SMALL_FLOAT_HINTS:
        for m in hint.finditer(data):
            a, b = m.start(), m.end()
            while a and data[a - 1] in _NUMBER_CHARS:
                a -= 1
            while b < len(data) and data[b] in _NUMBER_CHARS:
                b += 1
            c = a
            while c and data[c - 1 : c] == b" ":
                c -= 1
            after_separator = data[c - 1 : c] in (b":", b"\n") or data[a - 1 : a] in (b",", b"[")
            if after_separator and data[b : b + 1] in (b",", b"}", b"]", b"\n"):
                try:
                    if json.dumps(float(data[a:b])).encode() != data[a:b]:
                        return True
                except ValueError:
                    continue
    return False


def _indented(doc: dict[str, Any], depth: int, encode: Callable[[Any], bytes]) -> bytes:
    """The document with ``encode`` writing each item below ``depth`` (and each key), in one piece."""
    out = bytearray()
    _write_indented(doc, depth, encode, out.extend, 1 << 62)
    return bytes(out)


def _write_indented(
    doc: dict[str, Any],
    depth: int,
    encode: Callable[[Any], bytes],
    write: Callable[[memoryview], object],
    piece: int,
    encode_all: Callable[[list[Any], bool], list[bytes]] | None = None,
) -> None:
    """:func:`write_document` with ``encode`` writing each item below ``depth`` (and each key): handed to ``write``
    whenever ``piece`` bytes are held after an item of a list (the reports of a log), and at the end.
    ``encode_all``: the items of a dict that are all items (each ``encode``'s bytes) at once, if it is faster,
    and whether the dict is :class:`FloatsAlike`."""
    # One buffer, each item appended as it is written: no level copies the text of the levels below it, and
    # orjson's buffer of each item is freed at once (held as a list of 10,000 bytes objects to be joined, they
    # took 19 MB more of peak memory than the 7 MB document of the corpus x1).  The same buffer for every piece,
    # written over from its start (a BytesIO keeps its memory when sought back): a bytearray cleared after each
    # piece gave its memory back and grew again by 12.5% steps, in fresh pages (3,100 of the 6,450 page faults of
    # the corpus x4's document, and its copies: the document 89-103 -> 77-79 ms, measured in one process).
    out = io.BytesIO()
    put = out.write
    keys: dict[str, bytes] = {}  # each key as written (a document of a report-dense log writes ~10,000)

    def key(k: Any) -> bytes:
        got = keys.get(k) if type(k) is str else None
        if got is None:
            got = encode(k)
            if type(k) is str:
                keys[k] = got
        return got

    heads: dict[str, bytes] = {}  # each key of a dict of items as its line starts (at depth - 1: one indent)

    def head(k: Any) -> bytes:
        got = heads.get(k) if type(k) is str else None
        if got is None:
            got = b"\n" + b" " * depth + key(k) + b": "
            if type(k) is str:
                heads[k] = got
        return got

    def emit(obj: Any, level: int) -> None:
        pad = b"\n" + b" " * (level + 1)
        if level + 1 == depth and isinstance(obj, dict) and obj:
            # Every value is an item: written here, not by a call each (a finding's ~15 values), each after its
            # key's line start made once (~4,300 of the corpus x4's findings).
            values = (
                encode_all(list(obj.values()), type(obj) is FloatsAlike)
                if encode_all is not None
                else map(encode, obj.values())
            )
            put(b"{" + b",".join([head(k) + v for k, v in zip(obj, values, strict=True)]))
            put(b"\n" + b" " * level + b"}")
        elif level + 1 == depth and isinstance(obj, (list, ItemsAsWritten)) and len(obj):
            # Each item appended as it is written (the reports of a log: a list of them would be held at once).
            sep = b"[" + pad
            for v in obj:
                put(sep)
                put(encode(v))
                sep = b"," + pad
                if out.tell() >= piece:
                    flush()
            put(b"\n" + b" " * level + b"]")
        elif level < depth and isinstance(obj, dict) and obj:
            put(b"{")
            for n, (k, v) in enumerate(obj.items()):
                put((b"," if n else b"") + pad + key(k) + b": ")
                emit(v, level + 1)
            put(b"\n" + b" " * level + b"}")
        elif level < depth and isinstance(obj, (list, ItemsAsWritten)) and len(obj):
            put(b"[")
            for n, v in enumerate(obj):
                put((b"," if n else b"") + pad)
                emit(v, level + 1)
            put(b"\n" + b" " * level + b"]")
        else:
            put(encode(obj))

    def flush() -> None:
        with out.getbuffer() as held, held[: out.tell()] as view:
            write(view)
        out.seek(0)

    emit(doc, 0)
    put(b"\n")
    flush()


def _time(report: KernelReport) -> str:
    """A report's time: since boot, else on the wall clock (a log of dated wall-clock prefixes only), else "-"."""
    value = report.start_time
    if isinstance(value, float):
        return f"{value:.6f}"
    if report.start_wall is not None:
        from forensics.units import iso_local, iso_utc

        return iso_local(report.start_wall) if report.wall_zone_unknown else iso_utc(report.start_wall)
    return "-"


def _rows(results: list[SourceResult]) -> list[list[str]]:
    from forensics.types.dmesg import group_severity

    rows = []
    for r in results:
        for g in r.groups:
            first = g.first
            rows.append(
                [
                    r.name,
                    f"{first.start_line}-{first.end_line}",
                    _time(first),
                    group_severity(g).value,  # as the group's finding says (a panic makes it critical)
                    first.title + (" [corrupted]" if first.corrupted else ""),
                    str(g.count),
                ]
            )
    return rows


_HEADER = ["source", "lines", "time", "severity", "title", "count"]
#: Facts shown in the why section (the JSON holds them all).
_SHOWN_FACTS = 14


@dataclass(frozen=True)
class _WhyParts:
    """One report's reading as plain values, for both renderings: the cause, the fact rows, stacks, code."""

    cause: tuple[str, str, str] | None  # class, statement, lines
    rows: list[tuple[str, str, str]]  # fact, value, line
    stacks: list[str]
    code: list[str]


def _why_parts(group: ReportGroup, why: ReportWhy) -> _WhyParts:
    """The values a reading shows (the JSON holds them all), line numbers in the log's numbering."""
    first = group.first.start_line
    cause = None
    if why.cause is not None:
        cause = (why.cause.cls, why.cause.statement, ", ".join(str(first + at) for at in why.cause_at))
    elif why.no_cause:
        cause = ("cause", f"unknown ({why.no_cause})", "")
    facts = [f for f in why.facts if f.name != "root cause"][:_SHOWN_FACTS]
    rows = [(f.name, str(f.value), ", ".join(map(str, f.lines(first)))) for f in facts]
    rows += [(f"lock {k.role}" + (f" #{k.number}" if k.number is not None else ""),
              k.name + (f" taken in {k.site}" if k.site else ""), str(first + k.at))
             for k in why.locks[:8]]  # fmt: skip
    rows += [(f"stalled CPU {c.cpu}", c.detail, str(first + c.at)) for c in why.cpus[:8]]
    rows += [("task", f"{t.comm or '?'} (pid {t.pid}): {t.detail}", str(first + t.at)) for t in why.tasks[:8]]
    rows += [("memory user", f"{c.kind} {c.name}" + (f" (pid {c.pid})" if c.pid is not None else "")
              + f": {c.bytes / 2**20:.1f} MiB", str(first + c.at)) for c in why.consumers[:5]]  # fmt: skip
    rows += [(f"zone {z.zone}", f"free {z.free_kb} kB" + (f", min {z.min_kb} kB" if z.min_kb is not None else ""),
              str(first + z.at)) for z in why.zones[:6]]  # fmt: skip
    stacks = [
        f"{s.kind} (line {first + s.at}"
        + (f", CPU {s.cpu}" if s.cpu is not None else "")
        + "): "
        + (s.first_foreign.function if s.first_foreign else "no foreign frame")
        + (f" at {s.first_foreign.source}" if s.first_foreign and s.first_foreign.source else "")
        for s in why.stacks
    ]
    code = []
    if why.code is not None:
        code = [f"{'=>' if i.faulting else ' ?' if i.uncertain else '  '} {i.offset:+4d}: {i.text}"
                for i in why.code.instructions]  # fmt: skip
        if any(i.uncertain for i in why.code.instructions):
            code.append(" ?: uncertain: the Code: bytes start inside an instruction, and another start decodes them "
                        "otherwise")  # fmt: skip
    return _WhyParts(cause, rows, stacks, code)


def _why_blocks(group: ReportGroup, why: ReportWhy) -> tuple[Block, ...]:
    """One report's reading: the cause, the facts with their lines, the stacks' first foreign frames, the code."""
    from forensics.report.document import BulletList, Code, Paragraph, Table
    from forensics.report.markdown import md_escape

    parts = _why_parts(group, why)
    blocks: list[Block] = []
    if parts.cause is not None:
        cls, statement, lines = parts.cause
        blocks.append(
            Paragraph(f"**{md_escape(cls)}**: {md_escape(statement)}" + (f" (line {lines})" if lines else ""))
        )
    if parts.rows:
        blocks.append(Table(("fact", "value", "line"), tuple(parts.rows), escape="full"))
    if parts.stacks:
        blocks.append(BulletList(tuple(md_escape(s) for s in parts.stacks)))
    if parts.code:
        blocks.append(Code("\n".join(parts.code)))
    return tuple(blocks)


def _columns(rows: list[tuple[str, ...]], indent: str) -> list[str]:
    """Rows as left-aligned plain-text columns (the last column unpadded)."""
    widths = [max(len(row[i]) for row in rows) for i in range(len(rows[0]) - 1)]
    return [indent + "  ".join([*(c.ljust(w) for c, w in zip(row, widths, strict=False)), row[-1]]).rstrip()
            for row in rows]  # fmt: skip


def _one_line(text: str) -> str:
    return text.replace("\n", " ")


def why_text(results: list[SourceResult]) -> list[str]:
    """The "Why" section as plain terminal text: no markdown markup, values as the kernel printed them."""
    out: list[str] = []
    for r in results:
        for g in r.groups:
            why = r.whys.get(g.first.start_line)
            if why is None or (why.cls is None and why.cause is None and not why.facts):
                continue
            parts = _why_parts(g, why)
            out += ["", f"{g.first.title} ({r.name} line {g.first.start_line})"]
            if parts.cause is not None:
                cls, statement, lines = parts.cause
                out.append(f"  {cls}: {_one_line(statement)}" + (f" (line {lines})" if lines else ""))
            if parts.rows:
                rows = [("fact", "value", "line"), *((n, _one_line(v), at) for n, v, at in parts.rows)]
                out += _columns([(n, at, v) for n, v, at in rows], "  ")
            if parts.stacks:
                out += ["  stacks (first foreign frame):", *(f"    {_one_line(s)}" for s in parts.stacks)]
            if parts.code:
                out += ["  code:", *(f"    {c}" for c in parts.code)]
    return ["", "Why", *out] if out else []


def hypotheses_text(hypotheses: tuple[Hypothesis, ...]) -> list[str]:
    """The ranked hypotheses as plain terminal text."""
    if not hypotheses:
        return []
    out = ["", "Hypotheses"]
    for h in hypotheses:
        out.append(f"  {h.rank}. {_one_line(h.statement)} (confidence {h.confidence:.2f})")
        out += [f"     first: {h.first}"] if h.first else []  # (what the step needs: the dump's debug info)
        out.append(f"     next: {h.next_command}")
    return out


def why_sections(results: list[SourceResult]) -> tuple[Section, ...]:
    """Why each group's first report happened, as far as its body says."""
    from forensics.report.document import Section

    out = []
    for r in results:
        for g in r.groups:
            why = r.whys.get(g.first.start_line)
            if why is None or (why.cls is None and why.cause is None and not why.facts):
                continue
            title = f"{g.first.title} ({r.name} line {g.first.start_line})"
            out.append(Section(title, _why_blocks(g, why)))
    return tuple(out)


def hypotheses_section(hypotheses: tuple[Hypothesis, ...]) -> Section:
    """The ranked hypotheses, as ``kforensic vmcore`` and ``report`` list them."""
    from forensics.report.document import BulletList, Paragraph, Section
    from forensics.report.markdown import md_escape, step_after_md

    if not hypotheses:
        return Section("Hypotheses", (Paragraph("No hypothesis: the reports do not point at a cause."),))
    items = tuple(
        f"{md_escape(h.statement)} (confidence {h.confidence:.2f}; next: {step_after_md(h.first, h.next_command)})"
        for h in hypotheses
    )
    return Section("Hypotheses", (BulletList(items, ordered=True),))


def dmesg_sections(results: list[SourceResult], hypotheses: tuple[Hypothesis, ...] = ()) -> tuple[Block, ...]:
    """The reports of every input as a document section (what ``report`` nests), then why they happened."""
    from forensics.report.document import Section, Table

    rows = tuple(tuple(r) for r in _rows(results))
    empty = ("(none)", *([""] * (len(_HEADER) - 1)))
    blocks: list[Block] = [Section("Kernel reports", (Table(tuple(_HEADER), rows, empty),))]
    whys = why_sections(results)
    if whys:
        blocks.append(Section("Why", whys))
    if hypotheses:
        blocks.append(hypotheses_section(hypotheses))
    return tuple(blocks)


def render_table(results: list[SourceResult], markdown: bool, hypotheses: tuple[Hypothesis, ...] = ()) -> str:
    """The reports of every input as a terminal or markdown table, then why and the hypotheses."""
    rows = _rows(results)
    if markdown:
        # Here: the text format builds no document (its module costs ~5 ms of start-up).
        from forensics.report.document import blocks_markdown

        return blocks_markdown(dmesg_sections(results, hypotheses), 2) + "\n\n"
    widths = [max(len(h), *(len(row[i]) for row in rows)) if rows else len(h) for i, h in enumerate(_HEADER)]
    lines = ["  ".join(h.ljust(w) for h, w in zip(_HEADER, widths, strict=True))]
    lines += ["  ".join(c.ljust(w) for c, w in zip(row, widths, strict=True)).rstrip() for row in rows]
    if not rows:
        lines.append("no kernel reports found")
    lines += why_text(results) + hypotheses_text(hypotheses)
    return "\n".join(lines) + "\n\n"


class DmesgRenderer:
    """``kforensic dmesg``: the table of reports, why and the hypotheses, then the incident; or kforensic.dmesg/1."""

    def text(self, result: DmesgResult, to: Destination) -> str:
        return render_table(list(result.sources), False, result.hypotheses) + IncidentRenderer().text(
            result.incident, to
        )

    def markdown(self, result: DmesgResult, to: Destination) -> str:
        # One document: the reports' table under the incident's title (it came before the "# " heading).
        from forensics.report.markdown import render_markdown

        return render_markdown(result.incident, render_table(list(result.sources), True, result.hypotheses))

    def json(self, result: DmesgResult, to: Destination) -> str:
        return self.json_bytes(result).decode()

    def json_bytes(self, result: DmesgResult) -> bytes:
        """The ``kforensic.dmesg/1`` document as UTF-8 (what ``kforensic dmesg --format json`` writes)."""
        out = bytearray()
        self.write_json(result, out.extend)
        return bytes(out)

    def write_json(self, result: DmesgResult, write: Callable[[memoryview], object]) -> None:
        """:meth:`json_bytes` handed to ``write`` in pieces as they are made (:func:`write_document`)."""
        from forensics.gcpause import gc_paused

        # The document of a report-dense log is ~100,000 dicts and lists, none in a cycle: collecting the young
        # ones while it is built and written walked them all for nothing (~0.02 s of a 16 MB document).
        with gc_paused():
            doc = to_document(
                list(result.sources), result.incident, result.hypotheses, moved_repeats=True, as_written=True
            )
            write_document(doc, write)

    def html(self, result: DmesgResult, to: Destination) -> str:
        from forensics.report.document import Document
        from forensics.report.html import document_page

        sections = dmesg_sections(list(result.sources), result.hypotheses)
        return document_page(Document("kforensic dmesg", sections), result.incident)
