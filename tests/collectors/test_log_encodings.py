"""Logs saved as UTF-16 or with ANSI colour codes are read like the plain log (issue 19).

The data is the fixture kernel's real console log (vmcore_fixtures/cases/*/console.log),
re-encoded or coloured the way tools do it; the oops must get the plain log's title and
its evidence must resolve in the file as given.
"""

from __future__ import annotations

import codecs
import re
from collections.abc import Callable
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from detectors.dmesg.findings import group_finding, group_reports
from detectors.dmesg.scanner import scan_chunks
from forensics.pipelines.dmesg import triage_file
from forensics.textcodec import _ANSI, TextNormalizer, normalize_text, sniff_encoding
from forensics.types.dmesg import KernelReport
from tests.helpers import assert_evidence_resolves
from tests.vmcore_cases import console_logs

_STAMP = re.compile(rb"^(\[ *\d+\.\d+\])", re.M)


def _plain() -> Path:
    logs = console_logs()
    if not logs:
        pytest.skip("no fixture console logs: vmcore_fixtures/MANIFEST.json is absent")
    return logs[0]


def _coloured(data: bytes) -> bytes:
    """What ``dmesg --color=always`` does: green timestamps, bold red error text, plus a reset and an OSC title."""
    data = _STAMP.sub(lambda m: b"\x1b[32m" + m.group(1) + b"\x1b[0m", data)
    data = data.replace(b"BUG:", b"\x1b[1;31mBUG:").replace(b"RIP:", b"\x1b[7mRIP:\x1b[0m")
    return b"\x1b]0;serial console\x07" + data.replace(b"\n", b"\x1b[0m\n")


def _cr_only(data: bytes) -> bytes:
    return re.sub(rb"\r*\n", b"\r", data)


VARIANTS: dict[str, Callable[[bytes], bytes]] = {
    "utf-16-le-bom": lambda d: codecs.BOM_UTF16_LE + d.decode("utf-8", "replace").encode("utf-16-le"),
    "utf-16-be-bom": lambda d: codecs.BOM_UTF16_BE + d.decode("utf-8", "replace").encode("utf-16-be"),
    "utf-16-le": lambda d: d.decode("utf-8", "replace").encode("utf-16-le"),
    "utf-16-be": lambda d: d.decode("utf-8", "replace").encode("utf-16-be"),
    "ansi": _coloured,
    "ansi-utf-16-le-bom": lambda d: codecs.BOM_UTF16_LE + _coloured(d).decode("utf-8", "replace").encode("utf-16-le"),
    # lines ended by a lone carriage return (classic Mac, a serial capture that dropped the LF): was one line
    "cr-only": _cr_only,
    "cr-only-utf-16-le-bom": lambda d: codecs.BOM_UTF16_LE + _cr_only(d).decode("utf-8", "replace").encode("utf-16-le"),
}


def _reports(path: Path) -> list[KernelReport]:
    return [r for r in triage_file(str(path)).reports if not r.is_event]


@pytest.mark.parametrize("variant", sorted(VARIANTS))
def test_encoded_log_gives_the_plain_title_and_resolvable_evidence(tmp_path: Path, variant: str) -> None:
    plain = _plain()
    want = _reports(plain)
    assert want, "the plain fixture log has a report"
    log = tmp_path / f"console.{variant}.log"
    log.write_bytes(VARIANTS[variant](plain.read_bytes()))
    got = _reports(log)
    assert [r.title for r in got] == [r.title for r in want]
    assert [r.comm for r in got] == [r.comm for r in want]
    assert not any("corrupted" in r.title for r in got)
    assert_evidence_resolves([group_finding(str(log), g) for g in group_reports(got)])


def test_a_cr_only_log_is_cited_at_the_lines_of_the_plain_one(tmp_path: Path) -> None:
    """Each lone ``\\r`` ends a line: the report starts where it starts in the plain log, at its time.

    Before, the whole file was line 1: the BUG was cited at line 1, time 0, its title "[corrupted]".
    """
    plain = _plain()
    log = tmp_path / "console.cr.log"
    log.write_bytes(_cr_only(plain.read_bytes()))
    want, got = _reports(plain), _reports(log)
    assert [(r.start_line, r.start_time) for r in got] == [(r.start_line, r.start_time) for r in want]
    assert got[0].start_line > 1


def test_a_stray_cr_in_a_log_with_newlines_is_no_line_end() -> None:
    """Only a head with no newline and two or more ``\\r`` turns each ``\\r`` into a line end."""
    assert normalize_text(b"a\rb\rc\nd\r\n") == b"a\rb\rc\nd\r\n"
    assert normalize_text(b"[ 1.0] x\r[ 2.0] y\r") == b"[ 1.0] x\n[ 2.0] y\n"
    assert normalize_text(b"one\rline") == b"one\rline"


def test_raw_utf16_bytes_hide_the_oops_without_decoding(tmp_path: Path) -> None:
    """What the engine saw before: a UTF-16 log (NUL between every character) yields no report."""
    data = VARIANTS["utf-16-le"](_plain().read_bytes())
    assert not [r for r in scan_chunks([data]) if not r.is_event]


@pytest.mark.parametrize("size", [1, 7, 512, 4096])
def test_normalizer_streams_like_the_whole(size: int) -> None:
    """Chunk boundaries (inside a UTF-16 code unit, inside an escape sequence) change nothing."""
    data = VARIANTS["ansi-utf-16-le-bom"](_plain().read_bytes())
    norm = TextNormalizer()
    out = b"".join(norm.feed(data[i : i + size]) for i in range(0, len(data), size)) + norm.close()
    assert out == normalize_text(data)
    assert b"\x1b" not in out
    assert out.count(b"\n") == data.decode("utf-16").count("\n")
    assert norm.encoding == "utf-16-le" and norm.escapes > 0


def test_plain_utf8_passes_unchanged() -> None:
    data = _plain().read_bytes()
    assert normalize_text(data) == data
    assert sniff_encoding(data) == (None, 0)
    assert sniff_encoding(b"\x00a\x00b\x00c\x00d") == ("utf-16-be", 0)
    assert sniff_encoding(b"a\x00b\x00c\x00d\x00") == ("utf-16-le", 0)


_ESCAPE_PIECES = [b"\x1b", b"[", b"0", b"1;", b"m", b"?25l", b"]", b"title", b"\x07", b"\\", b"x", b"\x1b[32m", b" ok "]
_ESCAPE_PIECES += [b"\x1b7", b"A", b"~", b"/", b"\n", b"\x1b\x1b[", b"\x1b]2;t\x1b\\"]


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(_ESCAPE_PIECES), max_size=16))
def test_escapes_are_stripped_as_the_pattern_strips_them_everywhere(pieces: list[bytes]) -> None:
    # The pattern is tried only where an escape byte stands: the same text and count as its subn over every byte.
    data = b"".join(pieces)
    norm = TextNormalizer()
    got = norm._strip_all(data)
    assert (got, norm.escapes) == _ANSI.subn(b"", data)
    assert type(got) is bytes


def test_a_cr_only_utf16_log_whose_first_lines_are_long_is_read_by_its_lines(tmp_path: Path) -> None:
    """Its lines are told from its first 512 characters, not bytes: a UTF-16 console's first 512 bytes held one CR
    (256 characters, its first lines long), so the whole file was one line; a report in it was read only by chance,
    and an RTC line ("setting system clock to", read since ae04803c) made the scanner pass the rest over."""
    from forensics.textcodec import normalize_text

    text = "".join(f"[    0.{i:06d}] {'x' * 200} line {i}\r" for i in range(6))
    data = codecs.BOM_UTF16_LE + text.encode("utf-16-le")
    assert data[:512].count(b"\r") < 2  # the premise: a byte sniff sees too few
    assert normalize_text(data).decode().split("\n") == text.split("\r")
