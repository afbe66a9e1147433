"""Streaming over a kernel log: find report headers fast, parse deeply only around them.

The scanner takes the log as byte chunks of any size and keeps a bounded
buffer: the lines not yet looked at, plus a short look-back.  A single
compiled prefilter (:data:`detectors.dmesg.rules.PREFILTER`) skips ordinary
text at C speed; only the line it hits is decoded and tried against the rule
table, and only a real header makes the scanner cut a window of up to
:data:`MAX_REPORT_LINES` lines and build the report.  Memory does not grow
with the input: a line longer than :data:`MAX_LINE_BYTES` is cut (the rest of
it is dropped) and the window never holds more than :data:`MAX_WINDOW_BYTES`.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

from detectors.dmesg.events import KILLED, MEM_INFO, build_event, find_event_header
from detectors.dmesg.extract import build_report, match_header
from detectors.dmesg.lines import LogLine, parse_line
from detectors.dmesg.model import KernelReport
from detectors.dmesg.rules import PREFILTER

MAX_REPORT_LINES = 400
FIRST_WINDOW_LINES = 120  # most reports end within this; a longer one gets the full window
MAX_WINDOW_BYTES = 512 * 1024
MAX_LINE_BYTES = 64 * 1024
LOOKBACK_LINES = 64


def decode(raw: bytes) -> str:
    """Decode one line as every kforensic reader does (UTF-8, replacement, no trailing CR)."""
    return raw.decode("utf-8", errors="replace").removesuffix("\r")


class LogScanner:
    """Incremental report finder: :meth:`feed` chunks, then :meth:`close`; both return reports."""

    def __init__(self) -> None:
        self._buf = b""
        self._line0 = 1  # line number of the first line in _buf
        self._pos = 0  # where the prefilter search resumes in _buf
        self._cut_line = False  # inside an over-long line whose rest is dropped
        self._claimed: set[int] = set()  # lines taken by a report, not to be scanned again
        self._count_off = 0
        self._count_line = 1
        self.lines_seen = 0
        self.bytes_seen = 0

    def feed(self, chunk: bytes) -> list[KernelReport]:
        """Add the next piece of the log; return the reports completed so far."""
        self.bytes_seen += len(chunk)
        if self._cut_line:
            nl = chunk.find(b"\n")
            if nl < 0:
                return []
            chunk = chunk[nl:]
            self._cut_line = False
        buf = self._buf + chunk if self._buf else chunk
        tail = len(buf) - buf.rfind(b"\n") - 1
        if tail > MAX_LINE_BYTES:
            buf = buf[: len(buf) - tail + MAX_LINE_BYTES]
            self._cut_line = True
        self._buf = buf
        return list(self._scan(final=False))

    def close(self) -> list[KernelReport]:
        """End of input: return the reports still pending."""
        reports = list(self._scan(final=True))
        self.lines_seen = self._line_at(len(self._buf)) - (1 if self._buf.endswith(b"\n") or not self._buf else 0)
        return reports

    def _line_at(self, off: int) -> int:
        """Line number of the line holding byte ``off`` of the buffer (incremental newline count)."""
        if off >= self._count_off:
            line = self._count_line + self._buf.count(b"\n", self._count_off, off)
        else:
            line = self._count_line - self._buf.count(b"\n", off, self._count_off)
        self._count_off, self._count_line = off, line
        return line

    def _window(self, start: int, end: int, limit: int = MAX_REPORT_LINES) -> tuple[list[LogLine], list[int], bool]:
        """Up to ``limit`` lines from byte ``start``, their offsets, and whether the window is complete."""
        stop = min(end, start + MAX_WINDOW_BYTES)
        parts = self._buf[start:stop].split(b"\n", limit)
        complete = len(parts) > limit or stop < end
        parts = parts[:limit]
        if len(parts) > 1 and (not parts[-1] or stop < end):
            parts.pop()  # the empty rest after the last newline, or a line cut by the byte limit
        first = self._line_at(start)
        lines: list[LogLine] = []
        offsets: list[int] = []
        off = start
        for i, raw in enumerate(parts):
            lines.append(parse_line(first + i, decode(raw)))
            offsets.append(off)
            off += len(raw) + 1
        return lines, offsets, complete

    def _lookback(self, start: int) -> tuple[list[LogLine], list[int]]:
        """Up to LOOKBACK_LINES lines before byte ``start``."""
        begin = start
        for _ in range(LOOKBACK_LINES):
            if begin <= 0:
                break
            begin = self._buf.rfind(b"\n", 0, begin - 1) + 1
        lines, offsets, _ = self._window(begin, start)
        return lines, offsets

    def _scan(self, final: bool) -> Iterator[KernelReport]:
        buf = self._buf
        end = len(buf) if final else buf.rfind(b"\n") + 1
        while True:
            m = PREFILTER.search(buf, self._pos, end)
            if m is None:
                self._pos = end
                break
            start = buf.rfind(b"\n", 0, m.start()) + 1
            line_end = buf.find(b"\n", m.start(), end)
            line_end = end if line_end < 0 else line_end
            number = self._line_at(start)
            if number in self._claimed:
                self._pos = line_end + 1
                continue
            head = parse_line(number, decode(buf[start:line_end]))
            token = m.group()
            if token in (b"Mem-Info:", b"Killed process"):
                got = self._event(head, start, line_end, end, final, token)
                if got is None:
                    break  # wait for more input
                if isinstance(got, KernelReport):
                    yield got
                continue
            found = match_header(head.body)
            if found is None:
                self._pos = line_end + 1
                continue
            window, offsets, complete = self._window(start, end, FIRST_WINDOW_LINES)
            if not complete and not final:
                self._pos = start
                break
            report, resume = build_report(window, *found)
            if resume >= len(window) - 2 and len(window) == FIRST_WINDOW_LINES:
                # The report may go on past the first window: build it again from the full one.
                window, offsets, complete = self._window(start, end)
                if not complete and not final:
                    self._pos = start
                    break
                report, resume = build_report(window, *found)
            self._claim(report, window, resume)
            self._pos = offsets[resume] if resume < len(offsets) else offsets[-1] + len(window[-1].text) + 1
            self._pos = max(self._pos, line_end + 1) if resume <= 0 else self._pos
            yield report
        self._trim()

    def _event(
        self, head: LogLine, start: int, line_end: int, end: int, final: bool, token: bytes
    ) -> KernelReport | bool | None:
        """Handle a memory event trigger; None means wait for more input, False nothing found."""
        if token == b"Killed process" and KILLED.search(head.body) is None:
            self._pos = line_end + 1
            return False
        begin = start
        if token == b"Mem-Info:" and head.body.startswith(MEM_INFO):
            before, offsets = self._lookback(start)
            idx = find_event_header(before)
            if idx is None or before[idx].number in self._claimed:
                self._pos = line_end + 1
                return False
            begin = offsets[idx]
        elif token == b"Mem-Info:":
            self._pos = line_end + 1
            return False
        window, offsets, complete = self._window(begin, end)
        if not complete and not final:
            self._pos = begin
            return None
        got = build_event(window)
        if got is None:
            self._pos = line_end + 1
            return False
        report, _ = got
        self._claimed.update(number for number, _ in report.lines)
        self._pos = line_end + 1
        return report

    def _claim(self, report: KernelReport, window: list[LogLine], resume: int) -> None:
        # Lines the report took after the resume point must not start reports of their own.
        if resume < len(window):
            first = window[resume].number
            self._claimed.update(number for number, _ in report.lines if number >= first)

    def _trim(self) -> None:
        """Drop what is behind the scan position, keeping the look-back lines."""
        keep = self._pos
        for _ in range(LOOKBACK_LINES):
            if keep <= 0:
                break
            keep = self._buf.rfind(b"\n", 0, keep - 1) + 1
        if keep <= 0:
            return
        line = self._line_at(keep)
        self._buf = self._buf[keep:]
        self._pos -= keep
        self._line0 = line
        self._count_off, self._count_line = 0, line
        if self._claimed:
            self._claimed = {n for n in self._claimed if n >= line}


def scan_chunks(chunks: Iterable[bytes]) -> Iterator[KernelReport]:
    """Every report and event of a log given as byte chunks, in log order."""
    scanner = LogScanner()
    for chunk in chunks:
        yield from scanner.feed(chunk)
    yield from scanner.close()


def scan_text(text: str) -> list[KernelReport]:
    """Every report of a log held in a string (for tests and small inputs)."""
    return list(scan_chunks([text.encode()]))
