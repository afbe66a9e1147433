"""The findings' records made without their dataclass ``__init__`` (detectors/dmesg/findings.py) are the records the
constructors make: the same fields in the same order, equal, hashed, shown, pickled and written alike, and refused
where the constructors refuse them."""

from __future__ import annotations

import dataclasses
import hashlib
import inspect
import pickle
import re
import textwrap
from typing import Any

import orjson
import pytest
from hypothesis import given
from hypothesis import strategies as st

from detectors.dmesg import findings
from detectors.dmesg.scanner import scan_chunks
from forensics.model import Clock, Evidence, Fact, Finding, Locator, LocatorKind, Timestamp


def _alike(made: Any, built: Any) -> None:
    assert type(made) is type(built)
    assert list(vars(made)) == [f.name for f in dataclasses.fields(built)]  # every field, in the class's order
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
    assert pickle.loads(pickle.dumps(made)) == built
    assert orjson.dumps(made, default=str) == orjson.dumps(built, default=str)


def test_each_record_is_the_constructors() -> None:
    _alike(findings._line_at(3, 9, "report"), Locator(LocatorKind.LINE, 3, 9, name="report"))
    _alike(findings._line_at(0), Locator(LocatorKind.LINE, 0))
    _alike(findings._fact("cpu", "1"), Fact("cpu", "1"))
    stamp = Timestamp(12.5, Clock.MONOTONIC)
    where = Locator(LocatorKind.LINE, 3, name="guilty frame")
    _alike(findings._cited("a.log", where, "x+0x1/0x2", stamp, 1), Evidence("a.log", where, "x+0x1/0x2", stamp, 1))
    _alike(findings._cited("a.log", where, "line"), Evidence("a.log", where, "line"))
    (report,) = scan_chunks([b"[   12.500000] WARNING: CPU: 1 PID: 7 at a.c:1 f+0x1/0x2\n"])
    made = findings._when(report)
    assert made is not None
    _alike(made, stamp)


@given(st.integers(-3, 12), st.none() | st.integers(-3, 12), st.sampled_from(["", "x", "line text"]))
def test_what_the_constructors_refuse_is_refused(start: int, end: int | None, excerpt: str) -> None:
    """Values each constructor's checks refuse raise its error; the others give its record."""
    try:
        built: Locator | None = Locator(LocatorKind.LINE, start, end, name="n")
    except ValueError as error:
        with pytest.raises(ValueError, match=re.escape(str(error))):
            findings._line_at(start, end, "n")
        built = None
    if built is not None:
        _alike(findings._line_at(start, end, "n"), built)
        try:
            evidence: Evidence | None = Evidence("a.log", built, excerpt)
        except ValueError as error:
            with pytest.raises(ValueError, match=re.escape(str(error))):
                findings._cited("a.log", built, excerpt)
            evidence = None
        if evidence is not None:
            _alike(findings._cited("a.log", built, excerpt), evidence)


def test_a_finding_is_the_constructors() -> None:
    """A report group's finding is the record its constructor makes of the same fields; a kind given as its value is
    converted and an empty title or evidence refused, as the constructor does."""
    (report,) = scan_chunks([b"[   12.500000] WARNING: CPU: 1 PID: 7 at a.c:1 f+0x1/0x2\n"])
    (group,) = findings.group_reports([report])
    made = findings.group_finding("a.log", group)
    fields = {f.name: getattr(made, f.name) for f in dataclasses.fields(Finding)}
    _alike(made, Finding(**fields))
    given: dict[str, Any] = {name: fields[name] for name in ("id", "kind", "title", "severity", "confidence",
                                                             "summary", "evidence", "next_steps", "facts")}  # fmt: skip
    given |= {"reason": fields["confidence_reason"], "logged": fields["log_cause"], "baseline": fields["baseline"]}
    _alike(findings._finding(**given | {"kind": made.kind.value}), made)
    with pytest.raises(ValueError, match="has no title"):
        findings._finding(**given | {"title": ""})
    with pytest.raises(ValueError, match="has no evidence"):
        findings._finding(**given | {"evidence": ()})


def test_the_records_have_no_other_init_step() -> None:
    """Fact and Timestamp have no __post_init__ (nothing the records made here skip); Locator's and Evidence's are
    the checks the test above compares."""
    assert not hasattr(Fact, "__post_init__") and not hasattr(Timestamp, "__post_init__")
    for cls in (Locator, Evidence, Fact, Timestamp, Finding):
        assert all(f.init and f.default_factory is dataclasses.MISSING for f in dataclasses.fields(cls)), cls


#: The ``__post_init__`` checks detectors/dmesg/findings.py states again where it makes records without their
#: constructors (``_line_at``, ``_cited``, ``_finding``), by the sha256 of each one's source.
_CHECKED_POST_INITS = {"Locator": "0d8884b51848b59e", "Evidence": "bcbf85e13a134c6d", "Finding": "8093c7daf4f2ad31"}


def test_the_checks_stated_again_are_the_models_own() -> None:
    """A check added to (or changed in) one of these ``__post_init__`` in forensics/model.py must be stated again in
    findings.py's record makers, or the dmesg findings skip it: this fails until both are changed (and the hash)."""
    for cls in (Locator, Evidence, Finding):
        source = textwrap.dedent(inspect.getsource(cls.__post_init__))  # type: ignore[attr-defined]
        digest = hashlib.sha256(source.encode()).hexdigest()[:16]
        assert digest == _CHECKED_POST_INITS[cls.__name__], f"{cls.__name__}.__post_init__ changed: see findings.py"


HUNG_IN_READ = b"""\
[  500.100000] INFO: task kf-udev:77 blocked for more than 143 seconds.
[  500.100010]       Not tainted 6.12.0-kf #1
[  500.100020] "echo 0 > /proc/sys/kernel/hung_task_timeout_secs" disables this message.
[  500.100030] task:kf-udev         state:D stack:0     pid:77    tgid:77    ppid:1
[  500.100040] Call Trace:
[  500.100050]  __schedule+0x1b74/0x2d24
[  500.100060]  schedule+0xa4/0x140
[  500.100070]  io_schedule+0x1c/0xe0
[  500.100080]  folio_wait_bit_common+0x674/0x9ec
[  500.100090]  do_read_cache_folio+0x240/0x5b8
[  500.100100]  read_cache_folio+0x68/0x84
[  500.100110]  read_part_sector+0xcc/0x6e8
[  500.100120]  kf_partition_check+0x98/0x5ac
"""


def test_the_guilty_frame_is_cited_where_its_own_name_stands_not_inside_a_longer_one() -> None:
    """``read_cache_folio+0x`` stands inside ``do_read_cache_folio+0x240``, one line above the frame's own."""
    (report,) = scan_chunks([HUNG_IN_READ])
    assert report.frame == "read_cache_folio"
    (cited,) = [e for e in findings._evidence("a.log", report) if e.locator.name == "guilty frame"]
    assert cited.locator.start == 11 and "] read_cache_folio+0x68/0x84" in cited.excerpt.replace("  ", " ")
