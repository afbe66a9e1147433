"""The lines just above a report's header that belong to it (``KernelReport.preamble``).

``LogScanner._preamble`` first searches the 2 KB above a header for a few words (``_PREAMBLE_SEARCH``, one automaton
pass) and reads those lines only where one is: the words must find every line the preamble's own pattern
(``_PREAMBLE_MESSAGE``) takes, else such a line is lost whenever no other word stands near it.
"""

from __future__ import annotations

from dataclasses import replace

from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.dmesg import scanner
from detectors.dmesg.scanner import LogScanner


@settings(max_examples=300, deadline=None)
@given(st.from_regex(scanner._PREAMBLE_MESSAGE.pattern))
def test_the_prefilter_finds_every_line_the_preamble_takes(line: bytes) -> None:
    assert scanner._PREAMBLE_MESSAGE.search(line)
    assert scanner._PREAMBLE_SEARCH.find_matches_as_indexes(line), line


# A KASAN general protection fault (the header and body as syzbot's logs print them), with one kasan: message
# directly above it and no "cut here": older kernels printed "kasan: CONFIG_KASAN_INLINE enabled" there, with or
# without "kasan: GPF could be caused by NULL-ptr deref or user memory access" after it.
_BODY = (
    "Oops: general protection fault, probably for non-canonical address 0xdffffc0000000045: 0000 [#1] SMP KASAN",
    "KASAN: null-ptr-deref in range [0x0000000000000228-0x000000000000022f]",
    "CPU: 0 PID: 5332 Comm: syz-executor215 Not tainted 6.14.0-syzkaller #0",
    "RIP: 0010:relocate_file_extent_cluster+0xe7/0x1750 fs/btrfs/relocation.c:2971",
    "Call Trace:",
    " <TASK>",
    " relocate_block_group+0xa1e/0xd50 fs/btrfs/relocation.c:3657",
    " btrfs_relocate_block_group+0x777/0xd80 fs/btrfs/relocation.c:4011",
    " </TASK>",
    "Modules linked in:",
    "---[ end trace 0000000000000000 ]---",
)


def _log(above: tuple[str, ...]) -> bytes:
    lines = ("BTRFS info (device loop0): relocating block group 6881280 flags data|metadata", *above, *_BODY)
    return "".join(f"[   51.{100000 + i:06d}] {text}\n" for i, text in enumerate(lines)).encode()


def _preamble(data: bytes) -> tuple[str, ...]:
    reports = (s := LogScanner()).feed(data) + s.close()
    assert len(reports) == 1 and "general protection fault" in reports[0].title
    return tuple(text.split("] ", 1)[1] for _, text in reports[0].preamble)


def _preambles(data: bytes) -> list[tuple[int, tuple[tuple[int, str], ...]]]:
    s = LogScanner()
    return [(r.start_line, r.preamble) for r in [*s.feed(data), *s.close()]]


def test_a_remembered_preamble_is_the_one_read_anew_wherever_the_last_report_ends() -> None:
    """``LogScanner._remembered_preamble`` gives what ``_preamble_lines`` reads anew for the same bytes above a header:
    asked again (then remembered) for each context of the report and each place of the last report's end, below,
    among and above the lines it reads (it takes only lines past that end, and only its context's)."""
    inline = "kasan: CONFIG_KASAN_INLINE enabled"
    gpf = "kasan: GPF could be caused by NULL-ptr deref or user memory access"
    reports = (s := LogScanner()).feed(_log((inline, gpf))) + s.close()
    report = reports[0]
    assert len(reports) == 1 and len(report.preamble) == 2
    texts = (
        "BTRFS info (device loop0): relocating block group",
        "list_add corruption. next->prev should be x",
        inline,
        gpf,
    )
    seen = set()
    for callers, lines in (((("T100",) * 4), 4), (("T100", "T200", "T100", "T200"), 4), (("T100",) * 4, 2)):
        # (two lines alone: the first is dropped when the bytes above were cut, and may begin inside a line)
        above = "".join(
            [f"[   51.{100000 + i:06d}][ {c:>5}] {t}\n" for i, (c, t) in enumerate(zip(callers, texts, strict=True))][
                -lines:
            ]
        )
        scanner = LogScanner()
        for context in (None, "T100", "T200"):
            moved = replace(report, context=context)
            first = moved.start_line
            ends = list(range(first - 9, first + 2))
            for last_end in [*ends, *reversed(ends)]:
                for cut in (False, True):
                    scanner._last_end = last_end
                    anew = scanner._preamble_lines(above.encode(), cut, moved)
                    assert scanner._remembered_preamble(above.encode(), cut, moved) == anew
                    seen.add(anew)
    assert len(seen) >= 6


def test_a_kasan_message_directly_above_the_header_is_its_preamble_with_or_without_the_gpf_line() -> None:
    inline = "kasan: CONFIG_KASAN_INLINE enabled"
    gpf = "kasan: GPF could be caused by NULL-ptr deref or user memory access"
    assert _preamble(_log((inline, gpf))) == (inline, gpf)
    assert _preamble(_log((inline,))) == (inline,)
    assert _preamble(_log(())) == ()
    # The last line of a KASAN report's page dump is that report's, not a preamble of the header after it.
    assert (
        _preamble(_log(("raw: 00fff00000000000 0000000000000000", "page dumped because: kasan: bad access detected")))
        == ()
    )
