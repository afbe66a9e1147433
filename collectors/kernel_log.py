"""Reading kernel logs: files, standard input and the live ``/dev/kmsg``, as byte chunks.

Everything here streams: files and stdin are read in chunks of
``CHUNK_SIZE`` bytes through :func:`collectors.inputs.open_input` (which
records size, digest and time for the report), and ``/dev/kmsg`` is read one
record per ``read()`` without blocking, so memory does not grow with the log.
File and stdin bytes pass through :class:`forensics.textcodec.TextNormalizer`
(UTF-16 logs become UTF-8, ANSI colour codes are removed; a plain UTF-8 log is
unchanged) on their way to the pure engine in :mod:`detectors.dmesg`; the
evidence check reads sources the same way, so cited lines resolve.
"""

from __future__ import annotations

import errno
import os
import re
import shlex
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING

from collectors.binary_formats import TEXT_SAMPLE, TextInput, not_text, refusal
from collectors.inputs import TrackedInput, open_input
from forensics.errors import CollectionError, EmptyLogError, InputError
from forensics.model import NotAvailable, SourceRecord
from forensics.textcodec import TextNormalizer
from forensics.types import log_prefix

if TYPE_CHECKING:
    from collectors.log_identity import LogIdentity

CHUNK_SIZE = 1 << 20
KMSG_PATH = "/dev/kmsg"
KMSG_NAME = "/dev/kmsg"
# A kmsg record is at most about 1 KiB of text plus dictionary lines; read() needs room for one.
_KMSG_RECORD_MAX = 16 * 1024


@contextmanager
def open_log(name: str) -> Iterator[TrackedInput]:
    """Open a log file (or ``-`` for standard input); raises InputError with one clear line."""
    with open_input(name) as tracked:
        yield tracked


def log_chunks(
    tracked: TrackedInput, chunk_size: int = CHUNK_SIZE, head: bytearray | None = None, check: TextCheck | None = None
) -> Iterator[bytes]:
    """The bytes of an opened log, in chunks, counted and hashed into ``tracked``'s source record.

    ``head``: filled with the log's first :data:`collectors.log_identity.HEAD_BYTES` bytes as read (decompressed,
    not normalized): what :func:`collectors.log_identity.read_identity` reads of a log file, without reading it
    again (``kforensic dmesg``; as :class:`KmsgDumpReader` keeps the ring buffer's).  ``check``: the input's
    :class:`TextCheck`, given by a reader that asks, once the log is scanned, whether any line of it was a kernel
    log's (:meth:`TextCheck.refuse_without_kernel_line`).
    """
    # SHA-256 runs at about 1 GB/s here: hashing on the reading thread costs less than handing
    # chunks to a helper thread would.  The record hashes the bytes as read; the engine gets them normalized.
    norm = TextNormalizer()
    text = check if check is not None else TextCheck(tracked.source)
    first = True
    keep = 0
    if head is not None:
        from collectors.log_identity import HEAD_BYTES

        keep = HEAD_BYTES
    for chunk in tracked.read_chunks(chunk_size):
        if first:
            if (refused := refusal(tracked.source, chunk, KERNEL_LOG)) is not None:
                raise refused
            if (refused := _json_refusal(tracked.source, chunk)) is not None:
                raise refused
            text.dmesg_json = _is_dmesg_json(chunk)
            first = False
        if head is not None and len(head) < keep:
            head += chunk[: keep - len(head)]
        if out := norm.feed(chunk):
            text.encoding = norm.encoding
            text.feed(out)
            yield out
    if out := norm.close():
        text.encoding = norm.encoding
        text.feed(out)
        yield out
    if norm.cut is not None:  # said with what was read (the record's error: "what the reading lost")
        tracked.notes.append(norm.cut)
        text.cut = norm.cut
    text.close()


def _is_dmesg_json(head: bytes) -> bool:
    """Whether ``head``, the first bytes read, start util-linux ``dmesg -J`` output."""
    from forensics import journal_text

    return journal_text.journal_kind(head.removeprefix(b"\xef\xbb\xbf")) == "dmesg-json"


def _json_refusal(source: str, head: bytes) -> InputError | None:
    """The one-line refusal of a JSON document that is no kernel log format read (forensics/journal_text.py):
    scanned as text, its words were taken for a log's ("WARNING in corrupted", message ``},``)."""
    from forensics import journal_text

    if not journal_text.other_json(head.removeprefix(b"\xef\xbb\xbf")):
        return None
    own = b'"schema": "kforensic.' in head or b'"schema":"kforensic.' in head
    field = None if own else journal_text.json_lines_message(head.removeprefix(b"\xef\xbb\xbf"))
    if field is not None:
        # rsyslog/Vector/Fluent Bit exports of syslog: called "a JSON document", with no way to read their kernel lines.
        return InputError(
            f"{source}: not a kernel log: JSON lines of another tool (a JSON object a line, not journalctl's fields)",
            hint=f"give the message text, e.g. `jq -r .{field or 'message'} FILE | kforensic dmesg -`"
            + ("" if field else " with the field that holds it"),
        )
    return InputError(
        f"{source}: not a kernel log: a JSON document that is neither util-linux `dmesg -J` output nor a "
        "`journalctl -o json` export" + (" (a kforensic result)" if own else ""),
        hint=("read it with `kforensic report --from FILE`; " if own else "")
        + "kforensic dmesg reads dmesg (also -J, -r, -x), journalctl -k (also -o json, -o export) or console text",
    )


#: A kernel log, as a refusal of another command's file names it (collectors/binary_formats.py).
KERNEL_LOG = TextInput("a kernel log", "the log", "kforensic dmesg reads dmesg/journalctl -k/console text")


#: A line only a kernel log has: printk's "[ sec.usec]" stamp (maybe after a "<level>" or a capture tool's stamp), a
#: /dev/kmsg record, ``dmesg
#: -T``'s "[Mon Nov 30 06:55:29 2026]", ``dmesg -x``'s "kern  :warn  :" at a line's start (:data:`_LINE_PREFIXES`);
#: syslog's and the journal's "host kernel:", or the words of a kernel report or boot banner anywhere
#: (:data:`_LINE_WORDS`, :data:`_BANNER`).  :func:`_kernel_line_in` searches a text for one.
_LINE_PREFIXES = (
    # maybe after a capture tool's stamp (log_prefix.CAPTURE: ts, minicom, grabserial)
    rb"(?:" + log_prefix.CAPTURE.encode() + rb")?(?:<\d{1,3}>)?\[ *\d+\.\d+\]",
    rb"\d{1,3},\d+,\d+,[^;\n]{0,8};",
    rb"<\d>",
    rb"\[[A-Z][a-z]{2} [A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d \d{4}\]",
    rb"[a-z]{3,8}\d? *:(?:emerg|alert|crit|err|warn|notice|info|debug) *: ",
)
_LINE_WORDS = (b" kernel: ", b"Call Trace:", b"BUG: ", b"WARNING: ", b"Oops: ", b"Kernel panic - not syncing")
_BANNER = re.compile(rb"Linux version \d")
# The prefixes where a line starts: at the text's start, or after a newline.  One pattern "(?m)^(?:prefixes)|words"
# said the same, but re tries each of its branches at every byte (it has no literal to skip to): 60-90 ms a MB of
# text without a kernel line, which is searched to its end (a 512 MB line: 40 s); led by the newline, re skips to
# the next one, and the words are found by bytes' own search: 3-5 ms a MB (tests/collectors/test_log_inputs_refused.py
# checks that both find the same).
_PREFIX_AT_START = re.compile(b"(?:" + b"|".join(_LINE_PREFIXES) + b")")
_PREFIX_AFTER_NEWLINE = re.compile(b"\n(?:" + b"|".join(_LINE_PREFIXES) + b")")


#: Another program's syslog line (``Dec  7 10:00:00 host kdumpctl[812]: kernel BUG at ...``): the words of a report
#: in it are that program quoting one, not the kernel's (a file of two such lines was read as a kernel log, "No
#: problem found", where 50 cron lines were refused: ue23 #13).
_FOREIGN_SYSLOG = re.compile(rb"(?:<\d{1,3}>)?" + log_prefix.FOREIGN_SYSLOG.encode())


def _kernel_line_in(text: bytes) -> bool:
    """Whether ``text`` holds a kernel log line: a prefix at its start or a line's, or the words anywhere but in
    another program's syslog line (:data:`_FOREIGN_SYSLOG`)."""
    return (
        _PREFIX_AT_START.match(text) is not None
        or _PREFIX_AFTER_NEWLINE.search(text) is not None
        or any(_word_in(text, word) for word in _LINE_WORDS)
        or _banner_in(text)
    )


def _word_in(text: bytes, word: bytes) -> bool:
    """Whether ``word`` is in ``text`` on a line that is not another program's syslog line: found by bytes' search,
    each line it is found on then looked at (a text without it is searched once, as before)."""
    at = text.find(word)
    while at >= 0:
        if not _foreign_line_at(text, at):
            return True
        end = text.find(b"\n", at)
        at = -1 if end < 0 else text.find(word, end)
    return False


def _banner_in(text: bytes) -> bool:
    """Whether the boot banner (:data:`_BANNER`) is in ``text`` on a line that is not another program's syslog's."""
    return any(not _foreign_line_at(text, m.start()) for m in _BANNER.finditer(text))


def _foreign_line_at(text: bytes, at: int) -> bool:
    """Whether the line of ``text`` holding offset ``at`` is another program's syslog line."""
    return _FOREIGN_SYSLOG.match(text, text.rfind(b"\n", 0, at) + 1) is not None


#: Text of the other kinds most often given to ``dmesg`` by mistake, by what their lines look like, with the command
#: that reads each: an ftrace or trace-cmd text trace ("bash-6051  [001] d.h1.  361.707048: event:"), a ``perf
#: script`` text ("pf  2620 61844.490379:  2004008 cpu-clock:ppp:", "perf 16820 [000] 823.664303: sched:sched_waking:").
_OTHER_TEXT = (
    (re.compile(rb"(?m)^# tracer: |^ *\S.*-\d+ +\[\d{3}\] .{0,12} \d+\.\d+: \w+:"), "ftrace text", "kforensic trace"),
    (re.compile(rb"(?m)^ *\S.*? +\d+(?:/\d+)? +(?:\[\d+\] +)?\d+\.\d+: +(?:\d+ +)?[\w:.-]+:"), "perf script text",
     "kforensic profile"),
)  # fmt: skip
#: journalctl's whole output when nothing matched: ``-- No entries --``, after, before systemd v250, a header line of
#: the journal's span (``-- Logs begin at ..., end at ... --``; v246-249 ``-- Journal begins at ..., ends at ... --``:
#: Debian 11, Ubuntu 20.04/22.04, RHEL 8).
_NO_ENTRIES = re.compile(rb"\s*(?:-- (?:Logs begin|Journal begins) at [^\n]*--[ \t\r]*\n\s*)?-- No entries --\s*")


def text_reader(head: bytes) -> tuple[str, str] | None:
    """What text a file's first bytes look like, and the command that reads it: ("ftrace text", "kforensic trace"),
    ("perf script text", "kforensic profile") or ("a kernel log", "kforensic dmesg"); None when none.  For the
    refusals of other inputs (a store, a findings file) given a log or a trace by mistake: "not a slab-watch store
    (file is not a database)" did not say what the file was."""
    kind = next(((what, reader) for pattern, what, reader in _OTHER_TEXT if pattern.search(head)), None)
    if kind is None and not_text(head) is None and _kernel_line_in(head):
        return "a kernel log", "kforensic dmesg"
    return kind


def read_with(kind: tuple[str, str], name: str) -> str:
    """The command line that reads the input ``name`` (``<stdin>``: ``-``), a :func:`text_reader` ``kind``: "read it
    with `kforensic dmesg 'my log.txt'`"."""
    return f"read it with `{kind[1]} {'-' if name == '<stdin>' else shlex.quote(name)}`"


_OTHER_TEXT_SAMPLE = 16 << 10  # the bytes of a log's start kept to tell what it is when it is no kernel log
#: A console line without any prefix shaped as a kernel message: a subsystem's or a device's name, then ": " (pr_fmt's
#: "kf_buggy: loaded", dev_printk's "usb 1-1: new device", "EXT4-fs (loop4): mounted", "INFO: NMI handler took too
#: long"); syzkaller's consoles and logs cut from them have no time stamps.  Prose, ftrace and perf script lines are
#: not (a word, a space, words; a line that starts with a space, a tab or "#"), nor an e-mail's header lines, which
#: have the same shape ("Subject: server down").
_KERNEL_MESSAGE = re.compile(
    rb"(?m)^(?:" + log_prefix.CAPTURE.encode() + rb")?"  # maybe after a capture tool's stamp (minicom's, ts's)
    rb"(?!(?:From|To|Cc|Bcc|Subject|Date|Reply-To|In-Reply-To|Message-I[Dd]|Received|Return-Path|MIME-Version"
    rb"|Content-[\w-]+|X-[\w-]+): )[A-Za-z][\w.-]*(?: \(?[\w.:-]+\)?)?: \S"
)
#: The share of a text's non-blank lines that must be shaped as kernel messages for it to be a console without time
#: stamps: a console's lines mostly are (70% of a boot's, all of syzkaller's cut logs), while one "Todo: ..." line in
#: notes, a YAML file's top-level keys or a traceback's "RuntimeError: ..." among an application's log lines are not.
_MESSAGE_SHARE = 0.5
#: A flat "key: value" line (/proc/meminfo's "MemTotal:       16384000 kB", /proc/PID/status's "Name:\tbash", a
#: configuration's "crashkernel: 256M", tracefs's per_cpu/cpuN/stats "oldest event ts:   361.707048"): a key of one
#: word or a few parted by single spaces before the colon, then the value, maybe none.  (Keys of one word only: the
#: stats file, two of its eight keys of one word, was read as a console and said "No problem found", ue22 #12.)
_KEY_VALUE = re.compile(rb"([A-Za-z_][\w.()/-]*(?: [A-Za-z_][\w.()/-]*)*):(?:[ \t]+(\S.*?))?[ \t]*")
#: A value such a file holds: a number with maybe its unit ("16384000 kB", "6.1.0", "0x1f"), or one word ("yes",
#: "/var/crash"); a kernel message's words after its subsystem are a sentence ("random: crng init done").
_FLAT_VALUE = re.compile(rb"[-+]?\d\S*(?: [A-Za-z]{1,4})?|\S+")
_KEY_VALUE_LINES = 2  # a file of one such line says too little to be told from a console line
_FLAT_SHARE = 0.75  # of the values: a configuration may hold a command or a sentence among its numbers and words
_KERNEL_LINE_TAIL = 256  # bytes kept from a chunk's end: a kernel line cut between two chunks is still found


class TextCheck:
    """Whether a log is text, or bytes where no kernel log line is (an archive of another format, random bytes).

    Such an input read as a log finds no report and said "No problem found": a verdict on nothing.  The first
    :data:`TEXT_SAMPLE` bytes judge the text; when they are not text, the rest is searched for a kernel log line
    (:func:`_kernel_line_in`), and without one :meth:`close` refuses the input (exit 3).  A text log without reports
    is still read, and says what was examined.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.not_text: str | None = None  # why the sample is no text, once judged
        self.encoding: str | None = None  # what the text was decoded from (the normalizer's), before it is fed
        self.cut: str | None = None  # how a dmesg -J document ended short (the normalizer's), at its end
        self.kernel_line = False  # whether a line of it, text or not, is a kernel log line (searched until one is)
        self._held: list[bytes] = []  # chunks until the sample is judged
        self._size = 0
        self._judged = False
        self._tail = b""
        self._start = b""  # the input's first bytes: what it looks like when no line is a kernel log's
        self.dmesg_json = False  # the input is util-linux dmesg -J, read as its records' lines (set by log_chunks)

    def feed(self, out: bytes) -> None:
        """One chunk of normalized text, in order."""
        if len(self._start) < _OTHER_TEXT_SAMPLE:
            self._start += out[: _OTHER_TEXT_SAMPLE - len(self._start)]
        if self._judged:
            if not self.kernel_line:
                self._search(out)
            return
        self._held.append(out)
        self._size += len(out)
        if self._size >= TEXT_SAMPLE:
            self._judge()

    def close(self) -> None:
        """At the input's end: raise InputError when it is not text and no line of it is a kernel log's."""
        if not self._judged:
            self._judge()
        if self.not_text is not None and not self.kernel_line:
            raise InputError(
                f"{self.source}: not a kernel log ({self.not_text}, and no line of it is a kernel log line)",
                hint="give dmesg, journalctl -k or console text; a compressed log: decompress it first (gzip, xz, "
                "zstd and bzip2 are read as they are)",
            )

    def _judge(self) -> None:
        self._judged = True
        held, self._held = self._held, []
        sample = b"".join(held)
        if not sample:
            return  # an empty log: refused by what reads it, once it knows no report was found
        self.not_text = not_text(sample, None if self.encoding in (None, "utf-8") else self.encoding.upper())
        for chunk in held:
            self._search(chunk)
            if self.kernel_line:
                return

    def refuse_without_kernel_line(self, lines: int) -> None:
        """Raise InputError when the input, of ``lines`` lines, held no kernel log line (after :meth:`close`).

        For a reader that scanned it and found no report nor event: text of another kind (an ftrace trace, ``perf
        script`` text, notes) or an empty file, read as a log, said "No problem found", exit 0, and ``report
        --dmesg`` "no known kernel problem": a verdict on a log no kernel wrote, where nothing could have been
        found.  A report the scanner found makes any input a kernel log, with or without prefixes; so does text, not
        an ftrace trace nor ``perf script`` text, whose start is mostly lines shaped as kernel messages
        (:data:`_KERNEL_MESSAGE`, :data:`_MESSAGE_SHARE`): a console without time stamps, which could have shown a
        report.  One such line among others is no console: "Todo: ..." in notes, "RuntimeError: ..." in an
        application's log.
        """
        if self.kernel_line:
            return
        # Blank lines only: said as such ("empty" was said of a file of 3 lines).  Known only when the whole input is
        # in the sample kept; a longer run of blank lines before text is judged as text below.
        blank = len(self._start) < _OTHER_TEXT_SAMPLE and not self._start.strip()
        if self.dmesg_json and not self._start and self.cut is not None:
            raise InputError(
                f"{self.source}: not a kernel log: it is a dmesg -J document cut before its first record (no "
                "closing ']'), so nothing in it could show a kernel problem",
                hint="give the whole dmesg -J output (run it again, or copy the file whole)",
            )
        if self.dmesg_json and not self._start:
            # {"dmesg": []}: 22 bytes of valid output were called "empty", a statement on the converted text.
            raise InputError(
                f"{self.source}: not a kernel log: it is a dmesg -J document with no record, so nothing in it could "
                "show a kernel problem",
                hint="run dmesg -J where the ring buffer holds the kernel's messages (as root, not after dmesg -C), or "
                "give journalctl -k or a serial console's log",
            )
        if not lines or not self._start or blank:
            said = f"it holds only blank lines ({lines:,})" if lines and self._start else "it is empty"
            raise EmptyLogError(
                f"{self.source}: not a kernel log: {said}, so nothing in it could show a kernel problem",
                hint="give the log that holds the kernel's messages (dmesg, journalctl -k, a serial console)",
            )
        if _NO_ENTRIES.fullmatch(self._start) is not None:
            # What journalctl prints when nothing matched (journalctl -k on a machine whose journal holds no kernel
            # messages): "none of its 1 lines is a kernel log line" was true but did not say why.  Not empty: piped in
            # without "-" it is said so too, not "standard input was empty".
            raise InputError(
                f"{self.source}: not a kernel log: it is journalctl's '-- No entries --': the journal held no message "
                "for that query",
                hint="see `journalctl --list-boots` (a journal kept in memory only is lost at reboot: "
                "Storage=persistent in journald.conf), or give dmesg output",
            )
        kind = next(((what, reader) for pattern, what, reader in _OTHER_TEXT if pattern.search(self._start)), None)
        flat = kind is None and _key_value_text(self._start)
        if kind is None and not flat and _console_text(self._start):
            return  # console text without time stamps (a syzkaller console): kernel messages, none a report
        looks = f"; it looks like {kind[0]}" if kind else ""
        if flat:
            # "MemFree: 1024000 kB" is shaped as a kernel message ("subsystem: text"), and a file of them was read as
            # a console without time stamps: "No problem found" of /proc/meminfo.
            looks = (
                "; it looks like key: value lines (a /proc or tracefs file such as /proc/meminfo, or a configuration)"
            )
        if foreign := _foreign_lines(self._start, lines):
            # Other programs' syslog lines (/var/log/messages, or lines of it quoting a report's title) were said to
            # lack a "syslog or journal 'kernel:' prefix": neither that they are syslog's, nor what to give instead.
            raise InputError(
                f"{self.source}: not a kernel log: none of its {lines:,} lines is a kernel log line ({foreign})",
                hint="give the kernel's own lines: `journalctl -k`, dmesg, or the syslog lines tagged 'HOST kernel:' "
                "(/var/log/kern.log, `grep ' kernel: ' /var/log/messages`)",
            )
        raise InputError(
            f"{self.source}: not a kernel log: none of its {lines:,} lines is a kernel log line (no printk time stamp, "
            f"/dev/kmsg record, syslog or journal 'kernel:' prefix, boot banner, kernel report or message){looks}",
            hint=(f"read it with `{kind[1]}`; " if kind else "")
            + "kforensic dmesg reads dmesg, journalctl -k or console text",
        )

    def _search(self, chunk: bytes) -> None:
        window = self._tail + chunk
        if _kernel_line_in(window):
            self.kernel_line = True
        self._tail = window[-_KERNEL_LINE_TAIL:]


def _foreign_lines(start: bytes, lines: int) -> str | None:
    """What share of a text's lines are other programs' syslog lines (:data:`_FOREIGN_SYSLOG`), said for its
    refusal: of its ``lines`` lines when ``start``, its first bytes, holds it whole, else of the lines of ``start``;
    None when none is."""
    whole = len(start) < _OTHER_TEXT_SAMPLE
    if not whole:
        start = start[: start.rfind(b"\n") + 1]  # the sample's last line may be cut: not counted
    seen = lines if whole else start.count(b"\n")
    count = sum(1 for line in start.splitlines() if _FOREIGN_SYSLOG.match(line) is not None)
    if not count:
        return None
    said = f"{count:,} {'is' if count == 1 else 'are'}" + ("" if whole else f" of its first {seen:,}")
    said += " other programs' syslog lines, whose tag is not 'kernel:'"
    if count < seen:
        said += "; the others have no printk time stamp, syslog 'kernel:' tag, boot banner or kernel message"
    return said


def _key_value_text(start: bytes) -> bool:
    """Whether the input's first bytes are flat "key: value" lines (:data:`_KEY_VALUE`), each key once, their values
    mostly numbers or single words (:data:`_FLAT_VALUE`): a /proc file or a configuration, no console.  A console's
    lines name a subsystem again and again, or say a sentence after it; "#" comments and blank lines are passed over.
    """
    if len(start) >= _OTHER_TEXT_SAMPLE and b"\n" in start:
        start = start[: start.rindex(b"\n")]  # the sample's last line may be cut: not judged
    keys: set[bytes] = set()
    flat = 0
    for line in start.split(b"\n"):
        if not line.strip() or line.startswith(b"#"):
            continue
        m = _KEY_VALUE.fullmatch(line.rstrip(b"\r"))
        if m is None or m.group(1) in keys:
            return False
        keys.add(m.group(1))
        flat += m.group(2) is None or _FLAT_VALUE.fullmatch(m.group(2)) is not None
    return len(keys) >= _KEY_VALUE_LINES and flat >= _FLAT_SHARE * len(keys)


def _console_text(start: bytes) -> bool:
    """Whether the input's first bytes are mostly console lines without prefixes (:data:`_MESSAGE_SHARE`)."""
    if len(start) >= _OTHER_TEXT_SAMPLE and b"\n" in start:
        start = start[: start.rindex(b"\n")]  # the sample's last line may be cut: not judged
    lines = sum(1 for line in start.split(b"\n") if line.strip())
    return lines > 0 and len(_KERNEL_MESSAGE.findall(start)) >= _MESSAGE_SHARE * lines


@dataclass
class KmsgDumpReader:
    """What was read from ``/dev/kmsg``: records seen, bytes, and time taken."""

    path: str = KMSG_PATH
    records: int = 0
    size: int = 0
    started: float = field(default_factory=time.monotonic)
    lost: int = 0  # records overwritten before they could be read (EPIPE)
    head: bytearray = field(default_factory=bytearray)  # the first records (HEAD_BYTES): the boot banner's

    def record(self) -> SourceRecord:
        """The source record of the live read (the ring buffer has no stable digest)."""
        return SourceRecord(
            path=KMSG_NAME,
            size=self.size,
            sha256=NotAvailable("the kernel ring buffer is live; it has no stable digest"),
            seconds=round(time.monotonic() - self.started, 6),
            error=f"{self.lost} records were overwritten while reading" if self.lost else None,
        )

    def identity(self) -> LogIdentity:
        """What the records read say of their kernel and host (after :meth:`chunks`).

        The ring buffer is the running kernel's: its release and host are this machine's (``/proc/sys/kernel``),
        whether or not the boot banner is still in the buffer; the head gives the preemption model and,
        when the buffer wrapped, how long after boot its first record was logged.
        """
        from collectors.log_identity import parse_identity  # imported by live runs only
        from collectors.procfs import HOSTNAME, OSRELEASE, read_file

        said = parse_identity(bytes(self.head))
        release, host = (read_file(Path("/"), f).data for f in (OSRELEASE, HOSTNAME))
        return replace(
            said,
            releases=(release.decode("utf-8", "replace").strip(),) if release else said.releases,
            hosts=(host.decode("utf-8", "replace").strip(),) if host else said.hosts,
        )

    def chunks(self) -> Iterator[bytes]:
        """Every record now in the ring buffer, one ``prio,seq,usec,flags;text`` line each.

        Continuation lines of a record (`` KEY=value``, the record's dictionary)
        are dropped: they describe the device, not the message.  Raises
        :class:`CollectionError` when the kernel does not let us read.
        """
        from collectors.log_identity import HEAD_BYTES

        try:
            fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        except OSError as exc:
            raise _kmsg_error(self.path, exc) from None
        try:
            while True:
                try:
                    data = os.read(fd, _KMSG_RECORD_MAX)
                except BlockingIOError:
                    return  # the end of what the ring buffer holds now
                except OSError as exc:
                    if exc.errno == errno.EPIPE:
                        self.lost += 1  # overwritten while we read: skip to the next record
                        continue
                    raise _kmsg_error(self.path, exc) from None
                if not data:
                    return
                text = data.split(b"\n", 1)[0]
                self.records += 1
                self.size += len(text) + 1
                if len(self.head) < HEAD_BYTES:
                    self.head += text + b"\n"
                yield text + b"\n"
        finally:
            os.close(fd)


def _kmsg_error(path: str, exc: OSError) -> CollectionError:
    reason = exc.strerror or str(exc)
    if isinstance(exc, PermissionError):
        return CollectionError(
            f"cannot read {path}: {reason}",
            hint="run as root, or allow it with: sysctl kernel.dmesg_restrict=0",
        )
    if isinstance(exc, FileNotFoundError):
        return CollectionError(f"cannot read {path}: {reason}", hint="this system has no /dev/kmsg; give a log file")
    return CollectionError(f"cannot read {path}: {reason}")


def kmsg_available(path: str = KMSG_PATH) -> bool:
    """Whether ``/dev/kmsg`` can be opened for reading here (for tests and --live checks)."""
    try:
        os.close(os.open(path, os.O_RDONLY | os.O_NONBLOCK))
    except OSError:
        return False
    return Path(path).exists()
