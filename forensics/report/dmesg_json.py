"""The dmesg reports as JSON: the ``reports``, ``events`` and ``groups`` items of ``kforensic.dmesg/1``."""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, Final

from forensics.model import NotAvailable
from forensics.serialize import json_value
from forensics.types.causes import Cause
from forensics.types.dmesg import Frame, KernelReport, ReportGroup, ReportWhy, StackFrame, WhyFact


def _value(value: object) -> object:
    """:func:`~forensics.serialize.json_value` (a missing value as ``{"not_available": reason}``), compiled with this
    module: a call of the uncompiled function from the compiled items, ~10,000 of the corpus x4's document, cost
    ~4 times this one (tests/forensics/report/test_dmesg_document.py checks both give the same)."""
    return {"not_available": value.reason} if isinstance(value, NotAvailable) else value


def report_to_dict(report: KernelReport, why: ReportWhy | None = None, cause: Cause | None = None) -> dict[str, Any]:
    """One report as JSON (the ``reports`` items of ``kforensic.dmesg/1``); ``why``: its reading, ``cause``: the
    cause it shows with other reports (a lock cycle), in place of its own."""
    return _report_dict(report, _frame_dicts(report.trace), why, cause)


#: ``start_wall`` of a report whose lines have no dated wall-clock prefix (the time since boot is ``start_time``).
_NO_WALL_PRINTK: Final = {"not_available": "its lines have a printk time only (start_time)"}
_NO_WALL: Final = {"not_available": "its lines have no dated wall-clock time"}


def _report_dict(
    report: KernelReport, call_trace: list[dict[str, Any]], why: ReportWhy | None = None, cause: Cause | None = None
) -> dict[str, Any]:
    """:func:`report_to_dict` with its frames' dicts given (a template's, each line marked)."""
    out = {
        "title": report.title,
        "type": report.kind._value_,  # .value without its property (see forensics.serialize)
        "severity": report.severity._value_,
        "corrupted": report.corrupted,
        "corrupted_reason": report.corrupted_reason,
        "frame": _value(report.frame),
        "start_line": report.start_line,
        "end_line": report.end_line,
        "start_time": _value(report.start_time),
        "end_time": _value(report.end_time),
        "start_wall": _NO_WALL_PRINTK
        if report.start_wall is None and type(report.start_time) is float
        else _NO_WALL
        if report.start_wall is None
        else report.start_wall,
        # dmesg -T's local time (or an ISO stamp without an offset) read as if UTC: not an epoch time.
        "start_wall_zone_unknown": report.wall_zone_unknown,
        "cpu": _value(report.cpu),
        "pid": _value(report.pid),
        "comm": _value(report.comm),
        "taint": _value(report.taint),
        "taint_flags": list(report.taint_flags),
        "kernel_release": _value(report.kernel_release),
        "hardware": _value(report.hardware),
        "panicked": report.panicked,
        "context": report.context,
        "rule": report.rule,
        "signature": report.signature,
        "details": dict(report.details),
        "call_trace": call_trace,
        "excerpt": report.excerpt(),
    }
    if why is not None:
        out["why"] = why_to_dict(report, why, cause)
    return out


#: What stands where a listed repeat's line numbers go in the JSON of the report it repeats (:class:`RepeatItems`),
#: written by orjson as is (an ``orjson.Fragment`` of it): a NUL byte, which orjson writes nowhere else (in a string
#: it is ``\u0000``; the rest of JSON is printable), so that the format is made by one replace of a byte, where a
#: number no field held (twenty digits) was searched for, counted and replaced (~14 M instructions of the corpus x4's
#: ~400 templates, ~2 ms).
_LINE_MARK = b"\x00"


class Template:
    """A repeated report's JSON item without a reading as one ``%`` format (made by :func:`_template`, shared by
    every listed report written from it, held to the document's end).

    ``numbers``: its line numbers (the start and end line, each frame's line); ``form``: the item cut where they
    stand, a ``%d`` where each goes, each ``%`` of the pieces doubled (the pieces themselves are not held: ~2.9 MiB
    of the corpus x4's templates); ``times_alike``: whether orjson writes the report's times as the standard
    library does (:func:`alike`), which are those of each of its repeats (the same text).
    """

    __slots__ = ("form", "numbers", "times_alike")

    def __init__(self, numbers: tuple[int, ...], form: bytes, times_alike: bool) -> None:
        self.numbers, self.form, self.times_alike = numbers, form, times_alike


def alike(value: object) -> bool:
    """Whether orjson writes ``value``, of a field typed ``float`` (or :class:`NotAvailable`), as ``json`` does: any
    float but one under 1e-4 (``0.00001`` and ``1e-6`` for ``1e-05`` and ``1e-06``; checked against ``json`` on
    a million random floats and every power of ten)."""
    return type(value) is not float or not 0.0 < abs(value) < 1e-4


def _all_alike(value: object) -> bool:
    """:func:`alike` of every float in ``value`` (a field typed ``Any``: scalars, tuples, lists, dicts)."""
    if isinstance(value, (tuple, list)):
        return all(_all_alike(x) for x in value)
    if isinstance(value, dict):
        return all(_all_alike(x) for x in value.values())
    return alike(value)


class ReportItem:
    """A ``reports`` (or ``events``) item of :func:`~forensics.report.dmesg.write_document`: ``report_to_dict(report,
    why, cause)`` made when it is written, and what it knows of its floats without a search of its JSON.

    The fields :func:`report_to_dict` and :func:`why_to_dict` write are typed: the only floats are the report's
    start and end times and its cause's confidence and fields (``Any``), so :meth:`floats_alike` looks at those
    alone (tests/forensics/report/test_dmesg_document.py checks the records' annotations: a float field added
    fails until it is looked at here), where the JSON of each item was searched for the small-float hints (~70 M
    instructions of the ~540 M of the corpus x4's document; ~7 MB searched).
    """

    __slots__ = ("cause", "report", "why")

    def __init__(self, report: KernelReport, why: ReportWhy | None = None, cause: Cause | None = None) -> None:
        self.report, self.why, self.cause = report, why, cause

    def as_dict(self) -> dict[str, Any]:
        """The item as :func:`report_to_dict` makes it."""
        return report_to_dict(self.report, self.why, self.cause)

    def json_bytes(self) -> bytes:
        """The item as orjson writes :meth:`as_dict` (a TypeError where it cannot: an integer past 64 bits)."""
        import orjson

        return orjson.dumps(self.as_dict())

    def floats_alike(self) -> bool:
        """Whether orjson writes every float of the item as the standard library does (:func:`alike`)."""
        report = self.report
        return alike(report.start_time) and alike(report.end_time) and alike(report.start_wall) and self._cause_alike()

    def _cause_alike(self) -> bool:
        """:meth:`floats_alike` of the item's cause (its reading's, or the one it shows with other reports)."""
        cause = None if self.why is None else self.cause or self.why.cause
        return cause is None or (alike(cause.confidence) and _all_alike(cause.fields))


class ListedRepeat(ReportItem):
    """A listed report written from the template of a report that others repeat byte for byte
    (:meth:`KernelReport.repeats`): a repeat (its line numbers moved by ``delta``) or that report itself
    (``delta`` 0), with its own reading (``why``, ``cause``) or none.

    Its JSON item is the template's with the line numbers moved (the start and end line and each frame's line),
    and its reading's JSON as the last key when it has one: :meth:`json_bytes`, the item as orjson writes
    :func:`report_to_dict`'s dict of it.  A repeat's times are those of the report it repeats (the same text):
    :meth:`floats_alike` asks the template's (a repeat's end time is made when first read: ~2,000 of the corpus
    x4's, ~7 M instructions, were made for this question alone).
    """

    __slots__ = ("_delta", "_template")

    def __init__(
        self,
        report: KernelReport,
        template: Template,
        delta: int,
        why: ReportWhy | None = None,
        cause: Cause | None = None,
    ) -> None:
        super().__init__(report, why, cause)
        self._template = template
        self._delta = delta

    @property
    def form(self) -> bytes:
        """The repeated report's JSON without a reading as a ``%`` format (shared by all its listed reports): the
        item is its line numbers written into it, each where a ``%d`` stands, and each ``%%`` one ``%``."""
        return self._template.form

    def floats_alike(self) -> bool:
        return self._template.times_alike and self._cause_alike()

    def json_bytes(self) -> bytes:
        """The item as orjson writes :meth:`as_dict`: the repeated report's JSON, each line number moved, then the
        reading's (the last key of the dict); a TypeError where orjson cannot write the reading.

        One ``%`` formatting of the template's pieces (a ``%d`` between each two), where a ``b"%d"`` and two list
        items a number were ~10 ms of the ~900 listed repeats of the corpus x4 (~40 line numbers each).
        """
        delta = self._delta
        template = self._template
        item: bytes = template.form % tuple([number + delta for number in template.numbers])
        if self.why is None:
            return item
        import orjson

        why = orjson.dumps(why_to_dict(self.report, self.why, self.cause))
        return b"".join((memoryview(item)[:-1], b',"why":', why, b"}"))


class RepeatItems:
    """The ``reports`` and ``events`` items of one document, each a :class:`ReportItem`: a report that a later
    listed one repeats, and each listed repeat, is a :class:`ListedRepeat` of that report's JSON without a reading,
    written once for all of them as a template (~300 listed repeats a copy of the shared corpus: their dicts and
    JSON were ~0.03 s of each further copy); only the reading of each, where it has one, is made for it."""

    def __init__(self, reports: Iterable[KernelReport] = ()) -> None:
        # By the repeated report's id (the report is held in the value): its JSON cut at its line numbers, and
        # those numbers; None when orjson cannot write it.  Made at the first of its listed occurrences,
        # itself or a repeat: the item of a report repeated later was made twice (its dict with the reading, then
        # one without it for the template: ~12 ms of the corpus x4's document), and held until then.
        self._templates: dict[int, tuple[KernelReport, Template | None]] = {}
        self._repeated = {id(found[0]) for x in reports if (found := x.repeats()) is not None}

    def item(self, report: KernelReport, why: ReportWhy | None, cause: Cause | None = None) -> ReportItem:
        """The item of ``report_to_dict(report, why, cause)``: a :class:`ListedRepeat` where it can be one."""
        found = report.repeats()
        if found is None:
            if id(report) not in self._repeated:
                return ReportItem(report, why, cause)
            old, delta = report, 0
        else:
            old, delta = found
        held = self._templates.get(id(old))
        if held is None:
            held = self._templates[id(old)] = (old, _template(old))
        template = held[1]
        if template is None:
            return ReportItem(report, why, cause)
        return ListedRepeat(report, template, delta, why, cause)


def _template(report: KernelReport) -> Template | None:
    """The report's JSON item without a reading, cut where its line numbers stand: those numbers, the format and
    whether its times are alike (None where orjson cannot write the item, or a mark stands elsewhere in it)."""
    import orjson

    mark = orjson.Fragment(_LINE_MARK)
    trace = report.trace
    item = _report_dict(report, _frame_dicts(trace, mark))
    numbers = (report.start_line, report.end_line, *[f.line for f in trace])
    # The dict is this function's own: its line numbers are written over, not copied.
    item["start_line"] = item["end_line"] = mark
    try:
        data: bytes = orjson.dumps(item)
    except TypeError:  # orjson.JSONEncodeError: the document is written by the standard library
        return None
    # Each % doubled, then each mark a %d (what the pieces between the marks, split, each escaped and joined, gave):
    # two passes over the item, each for one byte (the first returns the item itself when it holds no %).
    escaped = data.replace(b"%", b"%%")
    form = escaped.replace(_LINE_MARK, b"%d")
    # One byte more for each mark replaced: a mark that stood elsewhere (orjson writes none) would be one more.
    if len(form) - len(escaped) != len(numbers):
        return None
    return Template(numbers, form, alike(report.start_time) and alike(report.end_time) and alike(report.start_wall))


def _frame_dicts(trace: tuple[Frame, ...], line_mark: object = None) -> list[dict[str, Any]]:
    """Each frame as a dict of its fields, in :class:`Frame`'s order (one dict display a frame: ~35% less than
    ``dict(zip(Frame._fields, frame))`` for the ~38,000 frames of the corpus x4's document; a field added to
    Frame fails the unpacking until it is added here); with ``line_mark``, that in place of each line (a
    template's, :func:`_template`: made marked, not written over in each made dict, an item set through the
    generic protocol)."""
    return [
        {
            "function": f, "symbol": s, "offset": o, "size": z, "module": m, "reliable": r, "stack": k,
            "line": n if line_mark is None else line_mark,
        }
        for f, s, o, z, m, r, k, n in trace
    ]  # fmt: skip


def group_to_dict(group: ReportGroup) -> dict[str, Any]:
    """One group of identical reports as JSON."""
    return {
        "signature": group.first.signature,
        "title": group.first.title,
        "count": group.count,
        "first_line": group.first.start_line,
        "last_line": group.last.start_line,
        "first_time": json_value(group.first.start_time),
        "last_time": json_value(group.last.start_time),
        # The occurrences listed in ``reports`` (first, an even sample, last); the others are only counted.
        "listed_lines": [r.start_line for r in group.kept],
    }


def _frame_dict(frame: StackFrame, first: int) -> dict[str, Any]:
    return _stack_frame_dicts((frame,), first)[0]


def _stack_frame_dicts(frames: tuple[StackFrame, ...], first: int) -> list[dict[str, Any]]:
    """Each frame of a stack section as a dict, lines absolute: one dict display a frame, its fields unpacked in
    :class:`StackFrame`'s order (a call and nine attribute reads a frame were ~3 ms of the ~14,000 frames of the
    corpus x4's document; a field added to StackFrame fails the unpacking until it is added here)."""
    return [
        {"function": f, "symbol": s, "offset": o, "size": z, "module": m, "source": c, "inline": i, "reliable": r,
         "line": first + a}
        for f, s, o, z, m, c, i, r, a in frames
    ]  # fmt: skip


def _why_fact(fact: WhyFact, first: int) -> dict[str, Any]:
    """A fact with its line; one computed from values on several lines (none holds it alone) names the others in
    ``also_lines``."""
    out: dict[str, Any] = {"name": fact.name, "value": _value(fact.value), "line": first + fact.at}
    if fact.also:
        out["also_lines"] = list(fact.lines(first)[1:])
    return out


def why_to_dict(report: KernelReport, why: ReportWhy, cause: Cause | None = None) -> dict[str, Any]:
    """A report's reading as JSON (the ``why`` of a ``reports`` item of ``kforensic.dmesg/1``), lines absolute."""
    first = report.start_line
    cause = cause or why.cause
    code = why.code
    # The text of each skipped frame line, as the log printed it (the lines by number made only where one is).
    texts = dict(report.lines) if any(s.skipped for s in why.stacks) else {}
    return {
        "class": why.cls,
        "facts": [_why_fact(f, first) for f in why.facts],
        "stacks": [
            {
                "kind": s.kind._value_,
                "heading": s.heading,
                "line": first + s.at,
                "task": s.task,
                "cpu": s.cpu,
                "first_foreign": _frame_dict(s.first_foreign, first) if s.first_foreign else None,
                "frames": _stack_frame_dicts(s.frames, first),
                # The frame lines the console cut short, skipped as the stack went on past them (fact "frame line cut").
                "skipped": [{"line": first + at, "text": texts.get(first + at, "").strip()} for at in s.skipped],
            }
            for s in why.stacks
        ],
        "locks": [
            {"role": k.role, "name": k.name, "number": k.number, "task": k.task, "site": k.site, "line": first + k.at}
            for k in why.locks
        ],
        "cpus": [{"cpu": c.cpu, "detail": c.detail, "line": first + c.at} for c in why.cpus],
        "tasks": [{"comm": t.comm, "pid": t.pid, "detail": t.detail, "line": first + t.at} for t in why.tasks],
        "memory_users": [
            {"kind": c.kind, "name": c.name, "pid": c.pid, "bytes": c.bytes, "line": first + c.at}
            for c in why.consumers
        ],
        "zones": [
            {
                "node": z.node,
                "zone": z.zone,
                "free_kb": z.free_kb,
                "min_kb": z.min_kb,
                "low_kb": z.low_kb,
                "high_kb": z.high_kb,
                "managed_kb": z.managed_kb,
                "line": first + z.at,
            }
            for z in why.zones
        ],
        "code": None
        if code is None
        else {
            "arch": code.arch,
            "line": first + code.at,
            "instructions": [
                {"offset": i.offset, "text": i.text, "faulting": i.faulting, "uncertain": i.uncertain}
                for i in code.instructions
            ],
            "faulting": code.faulting,
            "memory_operand": code.memory,
            "access": code.access,
            "base_register": code.base,
            "base_value": None if code.base_value is None else f"{code.base_value:#x}",
            "loaded_from": code.loaded_from,
            "object_register": code.loaded_base,
            "object_value": None if code.loaded_value is None else f"{code.loaded_value:#x}",
            "compared": [{"register": n, "value": None if v is None else f"{v:#x}"} for n, v in code.compared],
        },
        # (no cause stated: why not, as the schema's other missing values are written)
        "cause": {"not_available": why.no_cause or "the report's lines establish no cause"}
        if cause is None
        else {
            "class": cause.cls,
            "statement": cause.statement,
            "confidence": cause.confidence,
            "fields": {
                k: [dict(x) if isinstance(x, dict) else x for x in v] if isinstance(v, tuple) else v
                for k, v in cause.fields
            },
            "next_command": cause.next_command,
            "lines": [first + at for at in why.cause_at],
        },
    }
