"""The kernel release and the host a kernel log states: its boot banner and its syslog prefixes.

A log saved with ``dmesg`` starts with the boot banner, ``Linux version 6.18.44-...
(builder@host) ...`` (init/version.c ``linux_banner``), which names the release even
when no report in the log does.  Lines saved by syslog or ``journalctl`` carry the
host in their prefix: ``Dec  3 17:45:01 db7 kernel: ...`` (RFC 3164 / journalctl short)
or ``2026-12-03T17:45:01.123456+00:00 db7 kernel: ...`` (RFC 5424 / short-iso).  Only
the head of the log is read (the banner is at a boot's start; a syslog file names its
host on every line).
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from collectors.inputs import open_input
from forensics import journal_text
from forensics import regexcache as rc  # the compiled patterns kept between runs
from forensics.types import log_prefix
from forensics.types.release import release_version

#: How much of the log is read: the banner and the host show in its first lines.
HEAD_BYTES = 1 << 20

_BANNER = rc.compile(rb"Linux version (\S+) \(")
#: The build line of the banner, after ``#N``: ``SMP PREEMPT_DYNAMIC ...``, ``SMP PREEMPT ...``, ``SMP PREEMPT_RT ...``.
_BUILD = rc.compile(rb"Linux version \S+ \(.*\) #\d+ ([^\n]*)")
#: kernel/sched/core.c prints the boot's choice of a PREEMPT_DYNAMIC kernel (preempt= on the command line).
_DYNAMIC = rc.compile(rb"Dynamic Preempt: (\w+)")
#: The first printk time prefix of the head, ``[ 3606.301759]`` (seconds since boot), and the rest of its line: the
#: line's first ``[`` (after a ``<6>``, ``kern  :info  :`` or syslog prefix), so that a ``dmesg -T`` line's
#: message text holding ``[1.5]`` is not taken for one.
#: Numbers of at most 20 digits, as detectors.dmesg.lines reads them (a kernel prints 64 bits): a longer run is no
#: stamp, and is never converted (Python refuses a string of more than 4,300 digits).
#: A capture tool's stamp before it (log_prefix.CAPTURE: ts, minicom) is passed over: its "[" was taken for the line's
#: first, and a capture started after boot was not said to be cut.
_STAMP = rc.compile(
    rb"^(?:" + log_prefix.CAPTURE.encode() + rb")?[^\[\n]*\[\s*(?P<time>\d{1,20}\.\d{1,20})\](?P<rest>[^\n]*)", re.M
)
#: A log whose first stamped line is later than this after boot and is not the boot banner does not hold its
#: boot's start: the kernel prints the banner first, at 0.000000 (init/main.c start_kernel).
CUT_AFTER_SECONDS = 1.0
#: A ``/dev/kmsg`` record at the head (``--live``, or a file saved from it): ``6,1204,9500120,-;text``, its time
#: since boot in microseconds and its text.
_KMSG_RECORD = rc.compile(rb"\d{1,20},\d{1,20},(\d{1,20}),[^;\n]*;([^\n]*)")
#: The host of a syslog or journalctl prefix: after a year-less time or short-full's (log_prefix.UNTIMED), an ISO one
#: (its date and time parted by a "T" or a space) or short-monotonic's: the prefixes detectors.dmesg.lines takes apart
#: (short-full's lines were taken apart, their host not read: ue6 10f; an ISO stamp with a space, short-monotonic's,
#: neither until 2026-12-07).
_SYSLOG_HOST = rc.compile(
    rb"^(?:<\d+>)?(?:" + f"{log_prefix.UNTIMED}|{log_prefix.ISO}".encode() + rb") (\S+) kernel: ", re.M
)
#: short-monotonic's ``[   12.345678] host kernel: ``: a plain dmesg line has the same shape when its message's first
#: word is followed by "kernel:" ("[    1.0] Booting kernel: ..."), so its host counts only where most of the log's
#: stamped lines name it (MONOTONIC_SHARE, MONOTONIC_MIN lines at least): journalctl writes it on every line.
_MONOTONIC_HOST = rc.compile(rb"^(?:<\d+>)?" + log_prefix.MONOTONIC.encode() + rb" (\S+) kernel: ", re.M)
MONOTONIC_SHARE = 0.5
MONOTONIC_MIN = 3


@dataclass(frozen=True)
class LogIdentity:
    """The releases and hosts the head of one log names, in first-seen order."""

    releases: tuple[str, ...]
    hosts: tuple[str, ...]
    preemption: tuple[str, ...] = ()  # the kernel's preemption model per boot (preemption_model)
    # Seconds after its boot of the log's first line, when that line is not the boot banner: the log was cut
    # or its ring buffer wrapped, so reports before it are not in it (None: starts at boot, or no time stamp).
    starts_after: float | None = None


def parse_identity(head: bytes) -> LogIdentity:
    """The releases (boot banners) and hosts (syslog prefixes) named in ``head``."""
    # A journal export's entries, as the log readers read them (its _HOSTNAME as a syslog prefix's host).
    head = journal_text.convert(head)
    # The banner's patterns (and the preemption model, read from banners) only for a head holding a banner's words:
    # found by one bytes.find (~0.05 ms a MB), where each pattern took ~0.3 ms for the 1 MB head of a console log.
    banner = head.find(b"Linux version ") >= 0
    releases = dict.fromkeys(m.group(1).decode("utf-8", "replace") for m in _BANNER.finditer(head)) if banner else {}
    hosts = dict.fromkeys(host.decode("utf-8", "replace") for host in _syslog_hosts(head))
    preemption = tuple(dict.fromkeys(preemption_model(head))) if banner else ()
    return LogIdentity(tuple(releases), tuple(hosts), preemption, _starts_after(head))


def _starts_after(head: bytes) -> float | None:
    """When after its boot the log's first stamped line was printed, if it is not the boot's start."""
    kmsg = _KMSG_RECORD.match(head)
    m = kmsg or _STAMP.search(head)
    if m is None or b"Linux version " in (m.group(2) if kmsg else m["rest"]):
        return None
    seconds = int(m.group(1)) / 1e6 if kmsg else float(m["time"])
    return seconds if seconds > CUT_AFTER_SECONDS else None


def preemption_model(head: bytes) -> Iterator[str]:
    """The preemption model of each boot ``head`` shows: ``Dynamic Preempt: none`` of a PREEMPT_DYNAMIC kernel,
    else the banner's build flags (``PREEMPT_RT``: rt; ``PREEMPT``: full; neither: none or voluntary)."""
    dynamic = [m.group(1).decode("ascii", "replace").lower() for m in _DYNAMIC.finditer(head)]
    for m in _BUILD.finditer(head):
        flags = m.group(1).split()
        if b"PREEMPT_DYNAMIC" in flags:
            if dynamic:
                yield dynamic.pop(0)
        else:
            yield _built_model(flags)


def _built_model(flags: list[bytes]) -> str:
    """The model a build without PREEMPT_DYNAMIC states in its UTS_VERSION flags (scripts/mkcompile_h)."""
    if b"PREEMPT_RT" in flags:
        return "rt"
    return "full" if b"PREEMPT" in flags else "none or voluntary"


#: The kernels whose UTS_VERSION says ``PREEMPT`` for a PREEMPT_DYNAMIC build too (whose model is chosen at boot):
#: PREEMPT_DYNAMIC came in 5.12, and its own flag in 5.18 (a0a7e453b502, "sched/preempt: Tell about
#: PREEMPT_DYNAMIC on kernel headers").
_DYNAMIC_SAID_PREEMPT = ((5, 12), (5, 18))


@dataclass(frozen=True)
class BuiltModel:
    """The preemption model a kernel's ``uname -v`` states, or why it does not settle it."""

    model: str  # rt, full, "none or voluntary"; "" not settled
    why: str = ""  # why not settled ("" when settled)


def uts_preemption(version: str, release: str = "") -> BuiltModel:
    """The preemption model the kernel's ``uname -v`` string (UTS_VERSION, ``#6 SMP PREEMPT Wed Oct 1 ...``: what
    an LTTng kernel trace's metadata keeps as ``env.kernel_version``) states, as a boot banner's build flags say it
    (:func:`preemption_model`).  ``release`` (``uname -r``) tells a 5.12-5.17 kernel, whose ``PREEMPT`` a
    PREEMPT_DYNAMIC build prints too.  Not settled: PREEMPT_DYNAMIC (the model is chosen at boot, ``preempt=``,
    which ``uname -v`` does not record), or a string that is not a ``uname -v`` (no ``#N`` first)."""
    words = version.encode("utf-8", "replace").split()
    if not words or not words[0].startswith(b"#"):
        return BuiltModel("", f"{version!r} is not a kernel's uname -v (#N SMP PREEMPT ...)")
    flags = words[1:]
    if b"PREEMPT_DYNAMIC" in flags:
        return BuiltModel("", "PREEMPT_DYNAMIC: the model is chosen at boot (preempt=), which uname -v does not say")
    model = _built_model(flags)
    at = release_version(release)
    if model == "full" and at is not None and _DYNAMIC_SAID_PREEMPT[0] <= at < _DYNAMIC_SAID_PREEMPT[1]:
        return BuiltModel(
            "", f"a {release} kernel says PREEMPT for a PREEMPT_DYNAMIC build too (its model chosen at boot)"
        )
    return BuiltModel(model)


def _syslog_hosts(head: bytes) -> Iterator[bytes]:
    """The host of each line with a syslog prefix, in order (what ``_SYSLOG_HOST.finditer`` gives).

    Only the lines that say `` kernel: `` are tried: the pattern, anchored at line starts, would otherwise
    be tried at every byte (~7 ms for the 1 MB head of a console log with no syslog prefix at all).
    """
    tried = -1
    monotonic: list[bytes] = []
    at = head.find(b" kernel: ")
    while at >= 0:
        start = head.rfind(b"\n", 0, at) + 1
        if start != tried:
            tried = start
            if (m := _SYSLOG_HOST.match(head, start)) is not None:
                yield m.group(1)
            elif (m := _MONOTONIC_HOST.match(head, start)) is not None:
                monotonic.append(m.group(1))
        at = head.find(b" kernel: ", at + 1)
    if monotonic:
        stamped = head.count(b"\n[") + head.startswith(b"[")
        for host in dict.fromkeys(monotonic):
            named = monotonic.count(host)
            if named >= MONOTONIC_MIN and named >= MONOTONIC_SHARE * stamped:
                yield host


def read_identity(name: str) -> LogIdentity:
    """What the first :data:`HEAD_BYTES` of the log ``name`` (compressed or not) say of its kernel and host."""
    return parse_identity(read_head(name))


def banner_line(head: bytes, number: int, release: str) -> str | None:
    """The text of line ``number`` of ``head`` when it is the boot banner of ``release`` (None: beyond the head, or
    another line: a journal export's entries are not its lines): what names the release of a log no report of which
    prints it."""
    lines = head.split(b"\n", number)
    if not 1 <= number < len(lines):  # (the head's last piece may be a line cut short: only whole lines)
        return None
    text = lines[number - 1].rstrip(b"\r").decode("utf-8", "replace")
    return text if f"Linux version {release} (" in text else None


def read_head(name: str) -> bytes:
    """The first :data:`HEAD_BYTES` of the log ``name``, decompressed."""
    parts: list[bytes] = []
    size = 0
    with open_input(name) as tracked:
        # Counted in bytes, not chunks: a compressed log's chunks are its decompressed pieces, of up to 8 MB each
        # (a one-line zstd bomb of 512 MB: 16 chunks held 256 MB, the head of a gzip log 16 MB instead of 1).
        for chunk in tracked.read_chunks(1 << 16):
            parts.append(chunk[: HEAD_BYTES - size])
            size += len(parts[-1])
            if size >= HEAD_BYTES:
                break
    return b"".join(parts)
