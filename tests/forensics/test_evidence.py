"""Tests of the evidence check every detector's tests rely on."""

from __future__ import annotations

from pathlib import Path

import pytest

from forensics.evidence import check_evidence, check_findings
from forensics.model import Evidence, Locator, LocatorKind
from tests.forensics.factories import line_evidence, null_deref_finding, write_log
from tests.helpers import assert_evidence_resolves


def test_line_excerpt_resolves(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    assert check_evidence(line_evidence(log, 2, "BUG: kernel NULL pointer dereference")) is None


def test_wrong_line_is_caught(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    reason = check_evidence(line_evidence(log, 3, "BUG: kernel NULL pointer dereference"))
    assert reason is not None
    assert "not at line 3" in reason


def test_multi_line_excerpt_must_start_on_its_first_line(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    excerpt = "RIP: 0010:kf_null_member_read+0x1a/0x40 [kf_buggy]\n[   12.345712] Call Trace:"
    ok = Evidence(str(log), Locator(LocatorKind.LINE, 4, 5), excerpt)
    shifted = Evidence(str(log), Locator(LocatorKind.LINE, 3, 5), excerpt)
    assert check_evidence(ok) is None
    assert check_evidence(shifted) is not None


def test_line_past_end_of_file(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    reason = check_evidence(line_evidence(log, 99, "BUG"))
    assert reason is not None
    assert "outside the source" in reason


def test_crlf_and_invalid_utf8_lines(tmp_path: Path) -> None:
    log = tmp_path / "crlf.log"
    log.write_bytes(b"first\r\nWARNING: bad \xff byte\r\n")
    assert check_evidence(line_evidence(log, 2, "WARNING: bad \ufffd byte")) is None
    assert check_evidence(line_evidence(log, 1, "first")) is None


def test_byte_locator(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    offset = log.read_bytes().index(b"Call Trace")
    assert check_evidence(Evidence(str(log), Locator(LocatorKind.BYTE, offset), "Call Trace")) is None
    assert check_evidence(Evidence(str(log), Locator(LocatorKind.BYTE, offset + 1), "Call Trace")) is not None


def test_unreadable_source_and_unknown_kind_fail(tmp_path: Path) -> None:
    missing = line_evidence(tmp_path / "gone.log", 1, "x")
    reason = check_evidence(missing)
    assert reason is not None
    assert "cannot read source" in reason
    frame = Evidence("vmcore", Locator(LocatorKind.FRAME, 0), "kf_null_member_read")
    reason = check_evidence(frame)
    assert reason is not None
    assert "no resolver" in reason


def test_resolver_for_other_kinds(tmp_path: Path) -> None:
    frames = {0: "#0 kf_null_member_read+0x1a", 1: "#1 kf_trigger_write+0x55"}
    resolvers = {LocatorKind.FRAME: lambda ev: frames.get(ev.locator.start)}
    good = Evidence("vmcore", Locator(LocatorKind.FRAME, 0), "kf_null_member_read")
    bad = Evidence("vmcore", Locator(LocatorKind.FRAME, 7), "kf_null_member_read")
    assert check_evidence(good, resolvers=resolvers) is None
    assert check_evidence(bad, resolvers=resolvers) == "nothing at frame #7"


def test_source_paths_map_stdin_to_a_file(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    ev = Evidence("<stdin>", Locator(LocatorKind.LINE, 2), "NULL pointer")
    assert check_evidence(ev, source_paths={"<stdin>": log}) is None


def test_helper_passes_on_good_and_fails_on_bad_or_no_findings(tmp_path: Path) -> None:
    log = write_log(tmp_path)
    good = null_deref_finding((line_evidence(log, 2, "NULL pointer dereference"),))
    assert_evidence_resolves([good])
    bad = null_deref_finding((line_evidence(log, 1, "NULL pointer dereference"),))
    assert len(check_findings([good, bad])) == 1
    with pytest.raises(AssertionError, match="does not resolve"):
        assert_evidence_resolves([bad])
    with pytest.raises(AssertionError, match="no findings"):
        assert_evidence_resolves([])
