"""Audit of a command's JSON output against its inputs: is every claim checkable, and does it check out?

``audit(doc, inputs)`` reads the findings of a command's JSON document back (``incident_from_dict``: what
``report --from`` and any user reads) and, for every finding at every severity:

- it has evidence (a finding without evidence is a bug);
- each evidence resolves where it points (``forensics.evidence.check_evidence``): a line (or event) holds the
  quoted text, its first line at the cited line number; a frame, register or address of a dump is what a fresh
  drgn program reads there (``forensics.vmcore.resolve.dump_resolvers``, ``add_dump``); a sample is what the
  store holds (``add_store``) or the line ``perf script`` prints for a perf.data (``add_perf_data``); an event of
  an LTTng trace directory stands in its stream file, and babeltrace2 (when installed) prints that
  event at that time on that CPU;
- a timestamp it carries is one the cited lines print (printk ``[ s.us]``, ``/dev/kmsg``'s microseconds, a
  trace's or ``perf script``'s ``s.us:``), to their precision; a sample's is the store's time of that sample; on
  a dump's frames it lies within the span of the dump's log;
- a CPU it carries is named in the cited lines (``[001]``, ``CPU: 1``, ``on cpu 1``, ``CPU#1``, trace-cmd
  ``-l``'s ``1d..2.``) or in those of the report the line belongs to (the finding's ``report`` evidence); on a
  dump, it is one of the dump's CPUs;
- the facts that repeat a value read from the input (``FACT_CHECKS``: the fault address, the base register, the
  faulting instruction, memory words: a lock word, a list entry, an object's first words) repeat a value one of
  the finding's own evidence shows;
- a kernel log report's facts read from its lines (``REPORT_FACTS``: the guilty frame, the CPU, pid, comm, kernel,
  hardware) stand in the lines its report evidence cites (the guilty frame, named as syzkaller titles it, there
  or in the line cited as the guilty frame; the kernel also in the line cited as the boot banner);
- a leak's ``first``/``last``/``max sample`` figure is its cited sample's time and bytes;
- a trace finding's duration (``SPAN_FACTS``: the longest run, the worst wakeup latency, the longest D sleep, an
  IRQ handler's or a softirq's, a slow span's) is the time between two of its cited events;
- the timeline's and the hypotheses' citations (``report``, ``vmcore``) are evidence of the findings they name.

Text sources are found by their names: a path as given, ``PATH (gunzipped)`` (and the other decompressed
forms, whose lines count in the decompressed text) decompressed into ``workdir``, ``PATH (trace-cmd report)``
made by trace-cmd; other names (``<stdin>``, a dump's ``#log``, a store's ``#kmsg``) through ``Inputs.texts``.  The
audit returns the problems as lines; none is a pass.
tests/forensics/test_evidence_audit.py runs it over every command on the bundled inputs.
"""

from __future__ import annotations

import gzip
import lzma
import math
import re
import shutil
import subprocess
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from forensics.evidence import Resolver, check_evidence, iter_text_lines
from forensics.model import Clock, Evidence, Finding, LocatorKind, StreamEvent
from forensics.serialize import incident_from_dict
from forensics.textcodec import normalize_text

TEXT_KINDS = (LocatorKind.LINE, LocatorKind.EVENT)

#: How the lines of a kernel log, a trace and a profile print a time, in seconds.
_PRINTK = re.compile(r"\[\s*(\d+\.\d+)\]")
_KMSG = re.compile(r"^\s*\d+,\d+,(\d+),")
_TRACE = re.compile(r"(?:^|\s)(\d+\.\d{3,9}):(?:\s|$)")
#: How a line names a CPU.
_CPU = re.compile(
    r"\[(\d{3})\]|\bCPU:\s*(\d+)|\b[Cc][Pp][Uu]#(\d+)|\bon [Cc][Pp][Uu]\s*(\d+)|\b[Cc][Pp][Uu]\s?(\d+)\b"
    r"|(?:^|\s)(\d{1,4})[.a-zA-Z][\w.]{3,5}\s+\d+\.\d+:"  # trace-cmd report -l: the CPU fused with the flags
)


def _unzstd(data: bytes) -> bytes:
    import zstandard  # a runtime dependency of kforensic

    return zstandard.ZstdDecompressor().decompressobj().decompress(data)


def _trace_cmd_report(data: bytes) -> bytes:
    """``trace-cmd report -i FILE`` of a trace.dat, as collectors/trace_input.py reads it."""
    import tempfile

    with tempfile.NamedTemporaryFile(suffix=".dat") as dat:
        dat.write(data)
        dat.flush()
        return subprocess.run(["trace-cmd", "report", "-i", dat.name], capture_output=True, check=True).stdout


#: The suffixes of the sources whose text is made from the file named: decompressed, or a trace.dat's report.
_DECOMPRESSED = {
    " (gunzipped)": gzip.decompress,
    " (decompressed xz)": lzma.decompress,
    " (decompressed zstd)": _unzstd,
    " (trace-cmd report)": _trace_cmd_report,
}


def _shows_address(value: str, ev: Evidence) -> bool:
    m = re.search(r"(?:CR2: |address: |address )(?:0x)?([0-9a-f]+)", ev.excerpt)
    return m is not None and int(m.group(1), 16) == int(value, 16)


def _shows_instruction(value: str, ev: Evidence) -> bool:
    address, _, text = value.partition(": ")
    return ev.locator.kind is LocatorKind.ADDRESS and ev.locator.start == int(address, 16) and ev.excerpt == text


def _shows_words(value: str, ev: Evidence) -> bool:
    """Memory words (``0x101: locked, ...``; ``0xdead000000000100, 0xdead000000000122``) read at a cited address."""
    if ev.locator.kind is not LocatorKind.ADDRESS or not re.fullmatch(
        r"u(32|64)(x\d+)?( of .+)?", ev.locator.name or ""
    ):
        return False
    stated = [int(w, 16) for w in re.findall(r"0x[0-9a-f]+", value.split(":", maxsplit=1)[0])]
    return stated == [int(w, 16) for w in ev.excerpt.split()]


#: A fact that repeats a value read from the input, the kind of evidence a finding must cite for it to be checked
#: (None: always), and the test of one evidence that shows it.  A finding that states the fact must cite one
#: evidence that shows it.
FACT_CHECKS: dict[str, tuple[LocatorKind | None, Callable[[str, Evidence], bool]]] = {
    "fault address (CR2)": (None, _shows_address),
    "base register": (LocatorKind.REGISTER, lambda value, ev: ev.excerpt == value),
    # A kernel log's report decodes its Code: line: the dump's finding cites the instruction's address.
    "faulting instruction": (LocatorKind.ADDRESS, _shows_instruction),
    "lock word": (None, _shows_words),
    "entry words (next, prev)": (None, _shows_words),
    "first words": (None, lambda value, ev: value == "not in dump" or _shows_words(value, ev)),
}


def line_times(line: str) -> list[float]:
    """The times (seconds) a text line prints: printk's, /dev/kmsg's, a trace's or perf script's."""
    found = [float(m.group(1)) for m in _PRINTK.finditer(line)]
    kmsg = _KMSG.match(line)
    if kmsg:
        found.append(int(kmsg.group(1)) / 1e6)
    found += [float(m.group(1)) for m in _TRACE.finditer(line)]
    return found


def line_cpus(line: str) -> set[int]:
    """The CPU numbers a text line names."""
    return {int(next(g for g in m.groups() if g is not None)) for m in _CPU.finditer(line)}


@dataclass
class Inputs:
    """What the audit reads the evidence against."""

    workdir: Path  # decompressed copies go here
    texts: dict[str, Path] = field(default_factory=dict)  # source name -> a file with its text
    resolvers: dict[LocatorKind, Resolver] = field(default_factory=dict)  # a dump's frames, registers, addresses
    #: a non-text source -> the resolver of its locators (a store's or a perf.data's samples), before ``resolvers``
    source_resolvers: dict[str, Resolver] = field(default_factory=dict)
    cpus: dict[str, int] = field(default_factory=dict)  # non-text source -> how many CPUs it has
    spans: dict[str, tuple[float, float]] = field(default_factory=dict)  # non-text source -> its time span
    #: a store -> its samples' times by sample id: (wall, uptime) as the store holds them
    sample_times: dict[str, dict[int, tuple[float, float | None]]] = field(default_factory=dict)
    #: CTF traces: what babeltrace2 prints at the cited times (None: babeltrace2 is not installed)
    ctf_printed: dict[str, list[str]] | None = None
    _lines: dict[str, list[str] | None] = field(default_factory=dict)

    def text_path(self, source: str) -> Path | None:
        """The file holding the text of ``source``, decompressed if its name says so; None when none."""
        if source in self.texts:
            return self.texts[source]
        for suffix, decompress in _DECOMPRESSED.items():
            if source.endswith(suffix):
                original = Path(source.removesuffix(suffix))
                plain = self.workdir / f"{len(self.texts)}-{original.name}.txt"
                plain.write_bytes(decompress(original.read_bytes()))
                self.texts[source] = plain
                return plain
        path = Path(source)
        return path if path.is_file() else None

    def lines(self, source: str) -> list[str] | None:
        """The lines of a text source, read as the evidence check reads them."""
        if source not in self._lines:
            path = self.text_path(source)
            self._lines[source] = None if path is None else list(iter_text_lines(normalize_text(path.read_bytes())))
        return self._lines[source]


def findings_of(doc: Mapping[str, Any], origin: str = "output") -> list[Finding]:
    """The findings of a command's JSON document, read back as ``report --from`` reads them."""
    incident = doc.get("incident", doc)
    return list(incident_from_dict(incident, origin).findings)


def _cited_lines(ev: Evidence, inputs: Inputs) -> list[str] | None:
    lines = inputs.lines(ev.source)
    if lines is None:
        return None
    end = ev.locator.end if ev.locator.end is not None else ev.locator.start
    return lines[ev.locator.start - 1 : end]


def _time_problem(ev: Evidence, inputs: Inputs) -> str | None:
    ts = ev.timestamp
    if ts is None or (ts.clock is Clock.WALL and ev.locator.kind in TEXT_KINDS):
        return None
    if ev.locator.kind in TEXT_KINDS:
        cited = _cited_lines(ev, inputs) or []
        # The time of the cited event (its first line), or of a line of the cited report.
        printed = [t for line in cited for t in line_times(line)]
        if not any(abs(t - ts.seconds) < 1.0000001e-6 for t in printed):
            return f"timestamp {ts.seconds} is not printed in the cited lines (they print {printed[:4]})"
        return None
    times = inputs.sample_times.get(ev.source)
    if ev.locator.kind is LocatorKind.SAMPLE and times is not None:
        wall, uptime = times.get(ev.locator.start, (math.nan, None))
        held = wall if ts.clock is Clock.WALL else uptime
        if held is None or not abs(held - ts.seconds) < 1e-6:
            return f"timestamp {ts.seconds} is not sample {ev.locator.start}'s time ({held})"
        return None
    span = inputs.spans.get(ev.source)
    if span is None:
        return f"timestamp {ts.seconds}: the span of {ev.source} is not known to the audit"
    if not span[0] - 1e-6 <= ts.seconds <= span[1] + 1e-6:
        return f"timestamp {ts.seconds} is outside the input's span {span[0]}..{span[1]}"
    return None


#: How many lines before its header a report's reading may cite (its preamble: a ``list_del corruption`` line).
_PREAMBLE = 12


def _cpu_lines(ev: Evidence, finding: Finding, inputs: Inputs) -> list[str]:
    """The lines that may name the CPU of a line evidence: its own, and those of the report it is a line of.

    A report (``name`` "report", a repeat "one of N" / "last of N") names its CPU in its lines; a line its reading
    cites (its guilty frame, its cause, a line of its preamble) has the report's CPU.
    """
    lines = inputs.lines(ev.source) or []
    start = ev.locator.start
    end = ev.locator.end if ev.locator.end is not None else start
    spans = [(start, end)]
    for other in finding.evidence:
        if other.source == ev.source and other.locator.kind in TEXT_KINDS and other.locator.name == "report":
            o_end = other.locator.end if other.locator.end is not None else other.locator.start
            if other.locator.start - _PREAMBLE <= start and end <= o_end:
                spans.append((other.locator.start, o_end))
    return [line for a, b in spans for line in lines[a - 1 : b]]


def _cpu_problem(ev: Evidence, finding: Finding, inputs: Inputs) -> str | None:
    if ev.cpu is None:
        return None
    if ev.locator.kind in TEXT_KINDS:
        cited = _cpu_lines(ev, finding, inputs)
        named = set().union(*(line_cpus(line) for line in cited)) if cited else set()
        return None if ev.cpu in named else f"CPU {ev.cpu} is not named in the cited lines (they name {sorted(named)})"
    count = inputs.cpus.get(ev.source)
    if count is None:
        return f"CPU {ev.cpu}: how many CPUs {ev.source} has is not known to the audit"
    return None if 0 <= ev.cpu < count else f"CPU {ev.cpu} does not exist in the input ({count} CPUs)"


#: A trace finding's durations: the time between two of its cited events (a run's switch in and out, a wakeup and
#: the switch that ran the task, a D sleep's switch out and wakeup, a handler's entry and exit, a softirq's raise
#: and entry, a span's start and end), to the microsecond the events print.
SPAN_FACTS = (
    "longest run",
    "worst wakeup latency",
    "longest D sleep",
    "longest handler run",
    "worst raise-to-entry",
    "duration",
)


def _span_problems(finding: Finding) -> Iterable[str]:
    times = [ev.timestamp.seconds for ev in finding.evidence if ev.timestamp is not None]
    for fact in finding.shown_facts:
        m = re.fullmatch(r"(\d+\.\d+) ms", fact.value) if fact.name in SPAN_FACTS else None
        if m is None:
            continue
        stated = float(m.group(1)) / 1e3
        if not any(abs((b - a) - stated) <= 1.5e-6 for a in times for b in times if b > a):
            yield f"{finding.id}: fact {fact.name!r} = {fact.value!r} is the time between none of its cited events"


#: The facts a kernel log report's finding reads from its own lines (detectors/dmesg/findings.py group_finding):
#: each must stand in the lines its evidence cites (the CPU named there as the CPU check reads it).
REPORT_FACTS = ("guilty frame", "cpu", "pid", "comm", "kernel", "hardware")


#: The frames syzkaller's titles name for others a stack shows (pkg/report's hung-task anchors: a task hung in
#: synchronize_sched, _srcu or _net is titled "in synchronize_rcu").
_SYZKALLER_FRAMES = {"synchronize_rcu": ("synchronize_sched", "synchronize_srcu", "synchronize_net")}
#: A mangled Rust (v0 ``_R``, legacy ``_ZN``) or C++ symbol in a line: its title names it demangled.
_MANGLED = re.compile(r"\b_(?:R|ZN?)[A-Za-z0-9_$]+")


def shows_frame(frame: str, line: str) -> bool:
    """Whether a line shows a guilty frame as syzkaller titles it: within a longer symbol (memfd_secret in
    __se_sys_memfd_secret, smp_call_function in smp_call_function_single), one it stands for, or demangled."""
    if any(name in line for name in (frame, *_SYZKALLER_FRAMES.get(frame, ()))):
        return True
    import pydemumble  # a runtime dependency of kforensic (LLVM's demanglers)

    return any(frame in pydemumble.demangle(m.group(0)) for m in _MANGLED.finditer(line))


def _report_fact_problems(finding: Finding, inputs: Inputs) -> Iterable[str]:
    if not finding.kind.from_kernel_log:
        return
    cited = [
        line
        for ev in finding.evidence
        if ev.locator.kind in TEXT_KINDS and ev.locator.name == "report"
        for line in _cited_lines(ev, inputs) or []
    ]
    # The line a guilty frame was read from is cited as such when it is not one of the report's (a caller-
    # prefixed log: the report's CPU's lines after another report's header).
    frame_lines = [
        line
        for ev in finding.evidence
        if ev.locator.kind in TEXT_KINDS and ev.locator.name == "guilty frame"
        for line in _cited_lines(ev, inputs) or []
    ]
    # A report that prints no release is of the kernel its boot's banner names, cited as the "boot banner".
    banner_lines = [
        line
        for ev in finding.evidence
        if ev.locator.kind in TEXT_KINDS and ev.locator.name == "boot banner"
        for line in _cited_lines(ev, inputs) or []
    ]
    for fact in finding.shown_facts:
        if fact.name not in REPORT_FACTS or not cited or fact.value.startswith("unknown ("):
            continue  # "unknown (why)" reads no value from a line
        if fact.name == "cpu":
            shown = any(int(fact.value) in line_cpus(line) for line in cited)
        elif fact.name == "guilty frame":
            shown = any(shows_frame(fact.value, line) for line in (*cited, *frame_lines))
        else:
            lines = (*cited, *banner_lines) if fact.name == "kernel" else cited
            shown = any(re.search(rf"(?<![\w.-]){re.escape(fact.value)}(?![\w-])", line) for line in lines)
        if not shown:
            yield f"{finding.id}: fact {fact.name!r} = {fact.value!r} stands in none of the lines of its report"


_SAMPLE_FACT = re.compile(r"(\S+): ([\d,]+) KB \(sample (\d+)\)")
_SLABINFO = re.compile(r"\S+\s+\d+\s+(\d+)\s+(\d+)")  # name active_objs num_objs objsize
_COUNTER = re.compile(r"\S+: (\d+) kB")


def _sample_fact_problems(finding: Finding) -> Iterable[str]:
    """A leak's ``first sample`` / ``last sample`` (``TIME: N KB (sample ID)``) is its cited sample: that time, and
    N KB (a cache's bytes, ``num_objs x objsize`` as docs/leaks.md defines them, or a meminfo counter's value).

    The Unaccounted estimate (MemTotal minus the counted fields) cites MemFree, where the memory went from
    (docs/leaks.md): its time is checked, not its figure, which no one counter shows.
    """
    from forensics.units import iso_utc

    derived = finding.title.startswith("Unaccounted ")
    samples = {ev.locator.start: ev for ev in finding.evidence if ev.locator.kind is LocatorKind.SAMPLE}
    for fact in finding.shown_facts:
        m = _SAMPLE_FACT.fullmatch(fact.value) if fact.name in ("first sample", "last sample", "max sample") else None
        if m is None:
            continue
        when, kb, sample = m.group(1), int(m.group(2).replace(",", "")), int(m.group(3))
        ev = samples.get(sample)
        slab, counter = (_SLABINFO.match(ev.excerpt), _COUNTER.fullmatch(ev.excerpt)) if ev else (None, None)
        held = (
            round(int(slab.group(1)) * int(slab.group(2)) / 1024)
            if slab
            else int(counter.group(1))
            if counter
            else None
        )
        at = iso_utc(ev.timestamp.seconds) if ev is not None and ev.timestamp is not None else None
        if ev is None or at != when or (held != kb and not derived):
            yield f"{finding.id}: fact {fact.name!r} = {fact.value!r}: its sample's evidence shows {at}, {held} KB"


def _fact_problems(finding: Finding) -> Iterable[str]:
    for fact in finding.shown_facts:
        kind, test = FACT_CHECKS.get(fact.name, (None, None))
        if test is None or (kind is not None and all(ev.locator.kind is not kind for ev in finding.evidence)):
            continue
        if not any(test(fact.value, ev) for ev in finding.evidence):
            yield f"{finding.id}: fact {fact.name!r} = {fact.value!r} is shown by none of its evidence"


#: A CTF event's name, first in its excerpt (docs/trace.md, "Evidence"): ``NAME: fields`` or ``NAME 'message'``.
_CTF_NAME = re.compile(r"^(\S+?)(?:: | |$)")


def _seconds(se: StreamEvent) -> str:
    """A cited event's time as ``babeltrace2 --clock-seconds`` prints it."""
    return f"{se.ns // 1_000_000_000}.{se.ns % 1_000_000_000:09d}"


def _ctf_printed(doc: Mapping[str, Any], findings: list[Finding]) -> dict[str, list[str]]:
    """What babeltrace2 prints at each time a CTF evidence cites (``[SECONDS] ...`` lines, by SECONDS).

    babeltrace2 prints with ``--clock-seconds`` and no option of the clock's: the times the citations give are
    the ones it prints by default (the clock's offset applied); only the lines at the cited times are kept.
    """
    wanted = {_seconds(ev.locator.event) for f in findings for ev in f.evidence if ev.locator.event is not None}
    printed: dict[str, list[str]] = {}
    if not wanted or shutil.which("babeltrace2") is None:
        return printed
    for trace in (doc.get("input") or {}).get("traces") or ():
        argv = ["babeltrace2", "--clock-seconds", trace["path"]]
        with subprocess.Popen(argv, stdout=subprocess.PIPE, text=True, errors="replace") as proc:
            assert proc.stdout is not None
            for line in proc.stdout:
                at = line[1 : line.find("]")]
                if at in wanted:
                    printed.setdefault(at, []).append(line.rstrip("\n"))
    return printed


def _ctf_problem(ev: Evidence, printed: dict[str, list[str]] | None) -> str | None:
    """An event of a CTF trace directory: its stream file holds the offset, babeltrace2 prints the event then."""
    se = ev.locator.event
    m = _CTF_NAME.match(ev.excerpt)
    if se is None or m is None:
        return f"{ev.locator} is not a CTF event's locator (stream, number, packet, byte, time) of {ev.excerpt[:60]!r}"
    path = Path(ev.source) / se.stream
    if (
        not path.is_file()
        or not se.byte < path.stat().st_size
        or (ev.locator.start, ev.locator.name)
        != (
            se.number,
            se.stream,
        )
    ):
        return f"{se} is not an event of a stream file of {ev.source} (locator {ev.locator.start})"
    if printed is None:
        return None  # babeltrace2 is not installed: the stream and the offset were checked
    seconds = _seconds(se)
    lines = printed.get(seconds, [])
    event = m.group(1)
    cpu = "" if ev.cpu is None else f"cpu_id = {ev.cpu} "
    if not any(f" {event}: " in line and cpu in line for line in lines):
        return f"babeltrace2 prints no {event} on CPU {ev.cpu} at {seconds} (it prints {lines[:2]})"
    return None


def audit_findings(findings: Iterable[Finding], inputs: Inputs) -> list[str]:
    """The problems of these findings' evidence against the inputs, one line each."""
    problems: list[str] = []
    for finding in findings:
        if not finding.evidence:
            problems.append(f"{finding.id}: no evidence")
        for ev in finding.evidence:
            if ev.locator.kind is LocatorKind.EVENT and Path(ev.source).is_dir():
                reason = _ctf_problem(ev, inputs.ctf_printed)
                if reason is not None:
                    problems.append(f"{finding.id} ({finding.severity.value}): {ev.cite()}: {reason}")
                continue
            path = inputs.text_path(ev.source) if ev.locator.kind in (*TEXT_KINDS, LocatorKind.BYTE) else None
            own = inputs.source_resolvers.get(ev.source)
            resolvers = inputs.resolvers if own is None else {**inputs.resolvers, ev.locator.kind: own}
            reason = check_evidence(ev, {ev.source: path} if path else None, resolvers)
            reason = reason or _time_problem(ev, inputs) or _cpu_problem(ev, finding, inputs)
            if reason is not None:
                problems.append(f"{finding.id} ({finding.severity.value}): {ev.cite()}: {reason}")
        problems += _fact_problems(finding)
        problems += _span_problems(finding)
        problems += _report_fact_problems(finding, inputs)
        problems += _sample_fact_problems(finding)
    return problems


def _link_problems(doc: Mapping[str, Any], findings: list[Finding]) -> Iterable[str]:
    """The timeline's and the hypotheses' citations (``report``, ``vmcore``) that are no evidence of the finding.

    A timeline entry cites one evidence of its finding (``cite``, ``excerpt``; ``end_cite`` another); a
    hypothesis's ``supporting`` and ``against`` lines are ``<finding title> — <citation of its evidence>``.
    """
    by_id = {f.id: f for f in findings}
    for entry in doc.get("timeline") or ():
        finding = by_id.get(entry.get("finding"))
        if finding is None:
            yield f"timeline {entry.get('title')!r}: its finding {entry.get('finding')!r} is not in the incident"
            continue
        cites = {ev.cite(): ev for ev in finding.evidence}
        for key in ("cite", "end_cite"):
            if entry.get(key) is not None and entry[key] not in cites:
                yield f"timeline {entry['title']!r}: {key} {entry[key]!r} is no evidence of {finding.id}"
        cited = cites.get(entry.get("cite") or "")
        if cited is not None and entry.get("excerpt") not in (None, cited.excerpt):
            yield f"timeline {entry['title']!r}: excerpt {entry['excerpt']!r} is not that of {cited.cite()}"
    by_cite = {(f.title, ev.cite()) for f in findings for ev in f.evidence}
    for hypothesis in doc.get("hypotheses") or ():
        for line in (*hypothesis.get("supporting", ()), *hypothesis.get("against", ())):
            title, dash, cite = line.rpartition(" \u2014 ")
            if dash and (title, cite) not in by_cite:
                yield f"hypothesis {hypothesis.get('rank')}: {line!r} cites no evidence of a finding titled so"


def audit(doc: Mapping[str, Any], inputs: Inputs) -> list[str]:
    """The problems of a command's JSON document against its inputs; an empty list is a pass.

    A finding without evidence in the JSON itself is reported, not raised (``incident_from_dict`` refuses it).
    """
    incident = doc.get("incident", doc)
    bare = [f.get("id", "?") for f in incident.get("findings", []) if not f.get("evidence")]
    if bare:
        return [f"{i}: no evidence" for i in bare]
    findings = findings_of(doc)
    if inputs.ctf_printed is None and shutil.which("babeltrace2") is not None:
        inputs.ctf_printed = _ctf_printed(doc, findings)
    return audit_findings(findings, inputs) + list(_link_problems(doc, findings))


def add_dump(inputs: Inputs, vmcore: Path, vmlinux: Path, module_debug: Iterable[Path] = (), name: str = "") -> None:
    """Read a dump's evidence with a fresh drgn program (not the analysis's): its frames, registers and
    addresses, its log (``DUMP#log``), its CPUs and the span of its log's times; ``name`` is the dump's path as
    the findings cite it (``vmcore`` by default)."""
    import contextlib

    import drgn
    from drgn.helpers.linux.cpumask import for_each_online_cpu

    from detectors.vmcore.analysis import log_as_text
    from detectors.vmcore.findings import log_source
    from forensics.vmcore.resolve import dump_resolvers
    from forensics.vmcore.system import log_records

    prog = drgn.Program()
    prog.set_core_dump(str(vmcore))
    prog.load_debug_info([str(vmlinux)], main=True)
    with contextlib.suppress(drgn.MissingDebugInfoError):  # modules of the kernel without their .ko
        prog.load_debug_info([str(p) for p in module_debug], default=True)
    records = log_records(prog)
    log = inputs.workdir / f"{len(inputs.texts)}-{vmcore.parent.name}-log.txt"
    log.write_text(log_as_text(records))
    name = name or str(vmcore)
    inputs.texts[log_source(name)] = log
    inputs.resolvers.update(dump_resolvers(prog))
    inputs.cpus[name] = len(list(for_each_online_cpu(prog)))
    inputs.spans[name] = (records[0].seconds, records[-1].seconds)


def add_store(inputs: Inputs, store: Path, name: str | None = None) -> None:
    """Read a slab-watch store's samples (cited as ``name``, the path as given by default)."""
    from collectors.slabstore import SlabStore

    opened = SlabStore.open(store, readonly=True)
    source = name or str(store)
    inputs.source_resolvers[source] = opened.resolve_evidence
    inputs.sample_times[source] = {s.id: (s.wall, s.uptime) for s in opened.samples()}
    # Its kernel log records of the boot of its last timed sample, as /dev/kmsg prints them (``STORE#kmsg``: the
    # report reads them as a kernel log, forensics/pipelines/store_log.py), read with SQL of the audit's own.
    timed = [x for x in opened.samples() if x.uptime is not None and x.boot_id]
    if timed:
        rows = opened.db.execute(
            "SELECT facility, level, seq, usec, flags, message FROM kmsg WHERE boot_id = ? ORDER BY seq",
            (timed[-1].boot_id,),
        ).fetchall()
        text = inputs.workdir / f"{len(inputs.texts)}-{Path(source).name}-kmsg.txt"
        text.write_text("".join(f"{f * 8 + lv},{q},{us},{fl};{m}\n" for f, lv, q, us, fl, m in rows))
        inputs.texts[f"{source}#kmsg"] = text


def _perf_header_lines(perf_data: Path) -> list[str]:
    """The lines of ``perf report --header-only -i PERF_DATA``, read by perf itself."""
    import subprocess

    from collectors.perf_script import find_perf

    perf = find_perf()
    assert perf is not None
    out = subprocess.run([perf, "report", "--header-only", "-i", str(perf_data)], capture_output=True, check=True)
    return out.stdout.decode("utf-8", "replace").split("\n")


def add_trace_dat(inputs: Inputs, dat: Path) -> None:
    """Read a trace.dat's evidence: the lines of its ``trace-cmd report`` text, and those of ``trace-cmd dump
    --options`` where the locator says so (its UNAME option's, the kernel release's)."""
    import subprocess

    from collectors.trace_input import OPTIONS_LINE

    source = f"{dat} (trace-cmd report)"
    options = subprocess.run(["trace-cmd", "dump", "--options", "-i", str(dat)], capture_output=True, check=True)
    dumped = options.stdout.decode("utf-8", "replace").split("\n")

    def resolve(ev: Evidence) -> str | None:
        n = ev.locator.start
        lines = dumped if ev.locator.name == OPTIONS_LINE else inputs.lines(source) or []
        return lines[n - 1] if 0 < n <= len(lines) else None

    inputs.source_resolvers[source] = resolve


def add_perf_data(inputs: Inputs, perf_data: Path) -> None:
    """Read a perf.data's samples: the lines of its ``perf script`` text (the product's own reading of it)."""
    from collectors.perf_script import perf_script_lines
    from forensics.pipelines.profile import HEADER_LINE

    lines = perf_script_lines(perf_data)
    header: list[str] = []

    def resolve(ev: Evidence) -> str | None:
        n = ev.locator.start
        if ev.locator.name == HEADER_LINE:  # a line of `perf report --header-only` (the kernel release's)
            if not header:
                header.extend(_perf_header_lines(perf_data))
            return header[n - 1] if 0 < n <= len(header) else None
        return lines[n - 1] if 0 < n <= len(lines) else None

    inputs.source_resolvers[str(perf_data)] = resolve
    # The samples' times (perf's clock): a finding's evidence carries its sample's.
    times = [t for line in lines if line[:1] not in ("", " ", "\t") for t in line_times(line)]
    if times:
        inputs.spans[str(perf_data)] = (min(times), max(times))
