"""The time stamps syslog and ``journalctl`` put before a kernel line (``Dec  3 17:45:01 host kernel: ...``).

Pattern text, defined once for the three readers of these prefixes: :mod:`detectors.dmesg.lines` takes them apart,
:mod:`detectors.dmesg.memo` blanks in its keys the ones that give no wall-clock time, and
:mod:`collectors.log_identity` reads the host that follows them.  Each had its own copy, and they drifted apart: a
``journalctl -o short-full`` line was taken apart, but its host was not read, nor its time blanked (ue6 10f).

Also the stamps a tool capturing a serial console puts before each line (:data:`CAPTURE_FORMS`: ``ts``, minicom,
grabserial), and other programs' syslog lines (:data:`FOREIGN_SYSLOG`).
"""

from __future__ import annotations

from typing import Final, NamedTuple

#: syslog (RFC 3164) and ``journalctl -o short``: ``Dec  3 17:45:01``, no year: it gives no wall-clock time.
SHORT: Final = r"[A-Z][a-z]{2} [ \d]\d \d\d:\d\d:\d\d(?:\.\d+)?"
#: ``journalctl -o short-full``: ``Mon 2026-12-07 14:30:02 CET``.  Its zone is a name (CET, EST) that no offset is
#: read from, so it gives no wall-clock time either.
SHORT_FULL: Final = (
    # the zone: a name (CET, UTC+1) or, where the zone has no abbreviation, its offset ("+04", "-03": review 10, 9)
    r"[A-Z][a-z]{2} \d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:\.\d+)? (?:[A-Z][A-Za-z]{0,5}(?:[+-]\d{1,4})?|[+-]\d{2,4})"
)
#: The stamps that give no wall-clock time, either of them (one group, no capture).
UNTIMED: Final = f"(?:{SHORT}|{SHORT_FULL})"
#: journalctl short-iso and rsyslog's RFC 3339 stamps: ``2026-12-07T14:30:02+01:00``, ``2026-12-07 14:30:02.123``;
#: a date and a time parted by a "T" or a space, maybe fractions and an offset.  It gives a wall-clock time.
ISO: Final = r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?(?:Z|[+-]\d\d:?\d\d)?"
#: journalctl short-monotonic: ``[   12.345678]``, the time since boot.
MONOTONIC: Final = r"\[\s*\d+\.\d+\]"
#: A syslog line another program wrote: its stamp and host, then a tag that is not the kernel's (``Dec  7 10:00:00 host
#: abrt-notification[812]: ...``).  The kernel's messages reach syslog and the journal under the tag ``kernel`` alone,
#: so a report's title in such a line is a program quoting it (detectors.dmesg.extract), and such a line is no kernel
#: log line (collectors.kernel_log: a file of them quoting titles was read as a kernel log, ue23 #13).
FOREIGN_SYSLOG: Final = f"(?:{SHORT}|{ISO}|{SHORT_FULL})" r" \S+ (?!kernel:)[^\s:\[\]]+(?:\[\d+\])?: "


class CaptureForm(NamedTuple):
    """A stamp a tool capturing a serial console on another machine puts before each line it reads."""

    tools: str  # who writes it, and how
    pattern: str  # the stamp, without the space after it; a dated one's date and time in its one group
    before_printk: bool  # taken only before the kernel's printk time (else its shape is also another program's text)
    example: str  # one such stamp, as the tool writes it


#: Capture stamps, in order (the first that matches wins): ``ts`` (moreutils), minicom's timestamps, grabserial's.
#: A stamp before the printk time, ``[2026-12-07 10:00:01] [    2.212356] kernel BUG at ...``, hid the kernel's
#: prefix: every line was text without one, and the report was its header alone ("kernel BUG in corrupted", ue23
#: #14).  A dated stamp gives the capturing machine's wall-clock time, in a zone it does not name; a time of day
#: alone gives none.  The forms a syslog line (``Dec 07 10:00:01 host prog: ``) or an application's log
#: (``2026-12-07 14:30:05,456 ERROR``) also start with are taken before a printk time only.
CAPTURE_FORMS: Final = (
    CaptureForm(
        "minicom's time stamps, ts '[%Y-%m-%d %H:%M:%.S]'",
        r"\[(\d{4}-\d\d-\d\d[T ]\d\d:\d\d:\d\d(?:[.,]\d+)?)\]",
        False,
        "[2026-12-07 10:00:01.123]",
    ),
    CaptureForm("grabserial -T", r"\[\d\d:\d\d:\d\d\.\d+ +\d+\.\d+\]", False, "[10:00:01.123456 0.000023]"),
    CaptureForm("grabserial -t", r"\[ *\d+\.\d+ +\d+\.\d+\]", False, "[    4.560209 0.000023]"),
    CaptureForm("minicom's time of day, ts '%H:%M:%.S'", r"\d\d:\d\d:\d\d\.\d+", False, "10:00:01.123"),
    CaptureForm("ts -s, ts '%H:%M:%S'", r"\d\d:\d\d:\d\d", False, "00:00:01"),
    CaptureForm(
        "ts '%Y-%m-%d %H:%M:%.S'", r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d(?:[.,]\d+)?)", True, "2026-12-07 10:00:01.123456"
    ),
    CaptureForm("ts (its default, '%b %d %H:%M:%S')", SHORT, True, "Dec 07 10:00:01"),
)
#: The printk time a capture stamp of :data:`CAPTURE_FORMS` must be followed by when it asks for one, maybe after
#: a ``<N>`` level.
_PRINTK_NEXT: Final = r"(?=(?:<\d{1,3}>)?\[ *\d+\.\d+\])"
#: Any capture stamp and the space after it; a dated one's date and time is the match's last group.
CAPTURE: Final = (
    "(?:" + "|".join(f"{form.pattern} {_PRINTK_NEXT if form.before_printk else ''}" for form in CAPTURE_FORMS) + ")"
)
