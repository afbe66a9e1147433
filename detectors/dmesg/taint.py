"""Decoding the kernel's taint letters (``Tainted: G    B   W  O``).

The letters and their meaning follow Documentation/admin-guide/tainted-kernels.rst;
a blank position means the flag is not set.  ``Not tainted`` decodes to nothing.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Final

from detectors.dmesg.repeat import origin
from forensics import regexcache as rc

if TYPE_CHECKING:
    from forensics.types.dmesg import KernelReport

#: Letter -> meaning, in the kernel's order of taint bits.
TAINT_FLAGS: tuple[tuple[str, str], ...] = (
    ("P", "proprietary module was loaded"),
    ("F", "module was force loaded"),
    ("S", "kernel running on an out of specification system"),
    ("R", "module was force unloaded"),
    ("M", "processor reported a Machine Check Exception"),
    ("B", "bad page referenced or unexpected page flags"),
    ("U", "taint requested by userspace application"),
    ("D", "kernel died recently (OOPS or BUG)"),
    ("A", "ACPI table overridden by user"),
    ("W", "kernel issued warning"),
    ("C", "staging driver was loaded"),
    ("I", "workaround for bug in platform firmware applied"),
    ("O", "externally-built (out-of-tree) module was loaded"),
    ("E", "unsigned module was loaded"),
    ("L", "soft lockup occurred"),
    ("K", "kernel has been live patched"),
    ("X", "auxiliary taint, defined for and used by distros"),
    ("T", "kernel was built with the struct randomization plugin"),
    ("N", "an in-kernel test has been run"),
)
_MEANING = dict(TAINT_FLAGS)
_TAINTED = rc.compile(r"\bTainted: ([A-Z ]+?)(?=\s+(?:\d|[a-z]|$|\())|\bNot tainted\b")


def taint_letters(text: str) -> str | None:
    """The set taint letters of a ``CPU: ... Tainted: ...`` line, "" when not tainted, None when absent."""
    # Every match holds "ainted" (``Tainted: `` from its second character, ``Not tainted`` from its sixth): the
    # search starts five characters before the first one (``\b`` still reads the character before the start).
    # The pattern, an alternation led by ``\b``, has no literal start the regex engine would skip to: tried at
    # every character of the line, ~4 us a CPU line.
    at = text.find("ainted")
    if at < 0:
        return None
    m = _TAINTED.search(text, max(0, at - 5))
    if m is None:
        return None
    if m.group(1) is None:
        return ""
    # "G" marks a kernel with only GPL modules: it is the absence of "P", not a taint.
    return "".join(c for c in m.group(1) if c not in " G")


def decode_taint(letters: str) -> tuple[str, ...]:
    """Meaning of each taint letter, in the order given; unknown letters are named as such."""
    return tuple(f"{c}: {_MEANING.get(c, 'unknown taint flag')}" for c in letters)


# An oops on a kernel an earlier oops left tainted D (detectors/dmesg/afteroops.py says what follows from it).
#: The die counter oops_end()'s __die() prints ("Oops: 0000 [#1] SMP", "general protection fault ...: 0000 [#2]").
_DIE_COUNTER: Final = rc.compile(r"\[#(\d+)\]")


def died_before(report: KernelReport) -> bool:
    """Whether the report's ``Tainted:`` line holds ``D``: an oops came before it on this kernel."""
    return any(flag.startswith("D:") for flag in report.taint_flags)


def die_line(report: KernelReport) -> tuple[int, str] | None:
    """The report's first line printing a die counter (``[#N]``), as (number, text): it is an oops."""
    if report.is_event:
        return None
    found = report.repeats()
    if found is not None:
        # A repeat of another report's bytes: that report's line, moved.  Its own lines are made when read, and a
        # repeat that has made them is no longer listed as one (forensics/report/dmesg_json.py ListedRepeat).
        old, delta = found
        line = die_line(old)
        return None if line is None else (line[0] + delta, line[1])
    return next(((n, t) for n, t in report.lines if "[#" in t and _DIE_COUNTER.search(t)), None)


def oops_before(report: KernelReport, oopses: Sequence[KernelReport]) -> KernelReport | None:
    """The last oops starting above ``report`` in ``oopses`` (reports with a die counter: :func:`oopses_of`), when
    ``report`` is tainted ``D``; else None.  The oopses are found once by the caller: :func:`die_line` of each
    candidate again for each report was O(K^2) over a log's reports."""
    if not died_before(report):
        return None
    above = [r for r in oopses if r.start_line < report.start_line]
    return max(above, key=lambda r: r.start_line, default=None)


def oopses_of(reports: Sequence[KernelReport]) -> list[KernelReport]:
    """The reports that are oopses (:func:`die_line`), in their order.  A report built from text another repeats
    (:func:`detectors.dmesg.repeat.origin`) is read once for all its repeats: a repeat has its text but for the
    printk times, which hold no die counter (a log's kept reports of a report-dense log are mostly repeats: the
    corpus x4's 1,387 are ~400 reports' texts; a repeat whose lines were made, ~400 of them, read its own)."""
    read: dict[int, bool] = {}
    out: list[KernelReport] = []
    for r in reports:
        if r.is_event:
            continue  # (no die line)
        source = origin(r)
        oops = read.get(id(source))
        if oops is None:
            oops = read[id(source)] = die_line(source) is not None
        if oops:
            out.append(r)
    return out
