"""The cheap part of the hostile-input battery (tests/hostile/battery.py) under pytest.

Each case is a real run of ``kforensic`` on a hostile input made here; it must be clean by the contract
of docs/cli.md (exit 0-3, one error line, no traceback, nothing clobbered, no half-written output).
The whole battery (some 520 runs, about 15 minutes): ``.venv/bin/python -m tests.hostile.battery``.
"""

from __future__ import annotations

import os
import shutil
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.hostile import battery

# one or two per command and kind of hostility, and every case that once failed (named with its fix)
SELECTED = [
    "dmesg:garbage",
    "dmesg:trunc.xz",
    "dmesg:/dev/zero",  # read for ever (collectors/inputs.py now refuses endless devices)
    "profile:/dev/zero",
    "report-trace:/dev/zero",
    "dmesg:fifo",
    "report-trace:fifo",  # hung: the size estimate peeked at the FIFO (collectors/trace_columns.text_size)
    "dmesg:loop",
    "dmesg:newline-name",
    "dmesg:leading-dash-bare",
    "dmesg:same-log-twice",  # every report listed twice (forensics/commands/common.distinct_inputs)
    "trace:corrupt.gz",
    "trace:unreadable.log",  # was exit 4: numba found no cache directory for user nobody (forensics/jit.py)
    "trace:locked-dir-file",  # was exit 4: Path.is_dir raised PermissionError (forensics/pipelines/trace.py)
    "dmesg:locked-dir-file",
    "slab-import:locked-dir-file",  # these three were exit 4 too (now the PermissionError boundary in cli.py)
    "leaks:locked-dir-file",
    "slab-export:locked-dir-file",
    "vmcore:unreadable.log",  # was exit 2: typer's readable=True refused it as usage (forensics/cli.py)
    "report-dmesg:unreadable.log",
    "kdump-check:unreadable.log",
    "trace:ctf-no-metadata",
    "profile:mixed-formats",
    "profile:folded-bad",
    "profile:folded-zero",  # was exit 4: every share 0/0 (forensics/pipelines/profile.py)
    "profile:empty-selection:comm",  # was exit 3, as if the input were bad (forensics/pipelines/profile.py)
    "profile:empty-selection:window",  # was exit 3 too (collectors/perf_script._checked)
    "profile:empty-selection:diff-base",
    "profile-diff:folded-zero",
    "profile-diff:dir",
    "slab-import:snaps-cut",
    "slab-import:store-is-null",
    "slab-import:into-corrupt",
    "leaks:store-corrupt",
    "leaks:prometheus-unreachable",
    "slab-export:store-trunc",
    "leaks:store-text-wall",  # was exit 4: numpy met a text wall time (collectors/slabstore.py)
    "slab-export:store-negative-count",  # was exit 4: np.repeat met a negative count
    "report-from:json-deep",
    "report-from:json-nan",
    "vmcore:header-only",
    "vmcore:user-core",  # was exit 4: drgn took a process's core for a dump (forensics/vmcore/program.py)
    "vmcore:vmlinux-garbage",
    "kdump-check:hostile-root",
    "kdump-setup:hostile-root",
    "kdump-check:dir:--debug",
    "options:trace ftrace --latency-ms -0",  # was exit 4: a zero threshold divided by (detectors/sched/harm.py)
    "options:kdump",  # was the whole help in the error line (forensics/cli.py)
    "options:slab-watch --interval nan --store x.sqlite",
    "options:leaks --store store.sqlite --last -1h",
    "output:dmesg:dev-null",
    "output:dmesg:link-to-evidence",
    "output:report:evidence",
    "output:slab-export:foreign",
    "output:leaks:dev-full",
    "output:dmesg:dir-slash-missing",  # wrote a file named after the directory (commands/common.py)
    "output:dmesg:dash",  # wrote a file named '-'
    "output:report-html-store:dev-stdout",  # made the directory /dev/stdout-plots (commands/report.py)
    "side-output:profile perf --folded perf",
    "side-output:report --dmesg log --html both --json both",  # the page was lost, exit 0 (commands/common.py)
    "side-output:profile perf --svg both --folded both",
    "leaks:store-unreadable",  # said "not a slab-watch store (unable to open database file)" (collectors/slabstore.py)
    "trace:clock-jump",
    "trace:trace-cr-only-events",  # one event analysed, the rest dropped in silence (forensics/pipelines/trace.py)
    "slab-import:year-10000",  # was exit 4: datetime met a wall time of year 10000 (forensics/units.py)
    "report:store-year-10000",  # was exit 4: matplotlib met it in the leak plots (forensics/leakplots.py)
    "trace:ctf-cut-metadata",
    "trace:ctf-negative-int-size",  # was exit 4: a negative shift (collectors/ctf/metadata.py)
    "trace:ctf-clock-0-hz",  # was exit 4: a division by the clock's 0 Hz
    "stdout:dmesg log:broken-pipe",
    "stdout:--help:broken-pipe",  # was exit 1, as if a finding reached --fail-on (forensics/cli.py)
    "stdout:--help:closed",  # was exit 4: click's help met the closed stdout (forensics/cli.py)
    "signal:SIGINT:dmesg",  # was exit 130 in silence (forensics/cli.py)
    "signal:SIGTERM:report",
    "stdin:report --dmesg - --trace -",  # the trace was said to be "an empty file" (forensics/commands/common.py)
    "long-name:leaks",  # was exit 4: Path.is_file() raised ENAMETOOLONG (forensics/cli.py)
    "stdin-zero:dmesg",  # read for ever (collectors/inputs.open_input)
    "stderr:dmesg missing:broken-pipe",  # was exit 1: the error line met EPIPE (forensics/cli.py)
    "dmesg:zstd-bomb",  # held 543 MB for 512 MB: decompressed whole chunks at once (collectors/inputs.py)
    "report-from:gz-bomb",  # held it whole (collectors/inputs.read_whole)
    "report-from:json-bigint",  # was exit 4: int() refuses 4300 digits (forensics/pipelines/report.py)
    "trace:spans-json-bigint",  # was exit 4 too (collectors/spans.py)
    "dmesg:log-bigint",  # was exit 4: int() refuses 4300 digits (detectors/dmesg/why.py, extract.py)
    "profile:perf-bigint",  # was exit 4: int() refuses 4300 digits (collectors/perf_script.py)
    "dmesg:log-bighex",  # was exit 4: the JSON writer refused a frame offset past 64 bits (detectors/dmesg/frames.py)
    "dmesg:long-run-before-a-header",  # was quadratic: 91 s of CPU for a 60 KB run (detectors/dmesg/events.py)
]


# One pytest-xdist group: the inputs (battery_cases: the bombs compressed, two slab-import runs, the CTF sessions
# unpacked; ~2 s of CPU) are made once, on one worker; spread over make test's three workers, each made them again.
# The group starts early (tests/conftest.py's LONG): its ~84 runs one after another are 25-30 s of CPU.
pytestmark = pytest.mark.xdist_group("hostile")


@pytest.fixture(scope="module")
def battery_cases() -> Iterator[tuple[dict[str, battery.Case], Path]]:
    # not under pytest's basetemp: it is 0700, and the cases run as nobody must reach what they are given
    base = Path(tempfile.mkdtemp(prefix="kf-hostile-"))
    base.chmod(0o755)
    inputs = battery.make_inputs(base / "in")
    scratch = base / "scratch"
    scratch.mkdir()
    scratch.chmod(0o777)
    yield {case.name: case for case in battery.cases(inputs, scratch)}, base
    shutil.rmtree(base)


def test_selected_cases_exist(battery_cases: tuple[dict[str, battery.Case], Path]) -> None:
    cases, _ = battery_cases
    assert set(SELECTED) <= cases.keys(), set(SELECTED) - cases.keys()


@pytest.mark.parametrize("name", SELECTED)
def test_hostile_input_is_handled_cleanly(name: str, battery_cases: tuple[dict[str, battery.Case], Path]) -> None:
    cases, base = battery_cases
    if name not in cases:
        pytest.fail(f"no case {name!r}")
    scratch = base / "scratch"
    for child in scratch.iterdir():
        shutil.rmtree(child) if child.is_dir() and not child.is_symlink() else child.unlink()
    outcome = battery.run_case(cases[name], [base / "in", scratch])
    assert outcome.clean, f"{outcome.why}\n{outcome.stderr[-2000:]}"


@pytest.mark.parametrize(
    ("stderr", "code", "debug", "wrong"),
    [
        ("kforensic: error: internal error: ZeroDivisionError: float division by zero\n", 4, False, "exit 4"),
        ("Traceback (most recent call last):\nkforensic: error: cannot read /x: denied here\n", 3, False, "traceback"),
        ("kforensic: error: Usage: kforensic kdump [OPTIONS]\n\n  Check, set up\n", 2, False, "more after"),
        ("kforensic: error: a\nkforensic: error: b\n", 3, False, "2 error lines"),
    ],
)
def test_the_judge_catches_what_is_not_clean(stderr: str, code: int, debug: bool, wrong: str) -> None:
    assert any(wrong in problem for problem in battery.judge_stderr(stderr, code, debug))


@pytest.mark.parametrize(
    ("stderr", "interrupted", "wrong"),
    [
        ("", False, "exit 130"),  # 130 only for a run that was sent SIGINT
        ("", True, "0 error lines"),  # and then said in one line, as 2 and 3 are
        ("Traceback (most recent call last):\nKeyboardInterrupt\n", True, "traceback"),
    ],
)
def test_the_judge_catches_an_unclean_interrupt(stderr: str, interrupted: bool, wrong: str) -> None:
    assert any(wrong in problem for problem in battery.judge_stderr(stderr, 130, False, interrupted=interrupted))


def test_the_judge_catches_a_traceback_under_debug_for_bad_input() -> None:
    stderr = "Traceback (most recent call last):\n  File x\nkforensic: error: cannot read /x/y.log: denied\n"
    assert any("traceback" in problem for problem in battery.judge_stderr(stderr, 3, debug=True))


def test_the_judge_lets_debug_tell_where_it_was_raised() -> None:
    stderr = (
        "kforensic: error: cannot read /x/y.log: denied\nkforensic: hint: check the path\n"
        "kforensic: debug: InputError raised at collectors/inputs.py:330 (open_input)\n"
    )
    assert battery.judge_stderr(stderr, 3, debug=True) == []
    assert any("more after" in problem for problem in battery.judge_stderr(stderr, 3, debug=False))


def test_the_state_sees_an_input_rewritten_with_the_same_size_after_its_digest_was_kept(
    tmp_path: Path,
) -> None:
    """The digests kept between cases (battery._digest) are not taken for a file rewritten since.

    The real rule, no clock mocked: the file is kept once it was last changed over a second ago.  (A mocked clock
    kept the digest of a file written just now, and on a kernel whose file times come from the coarse clock,
    before Linux 6.13's multigrain timestamps, the rewrite within the same tick kept both times: the test failed
    where the battery, which never keeps so young a file, is right.)  The rewrite puts the modification time back
    (as ``touch -r`` would), so that only the digest, hashed again for the new change time, can tell.
    """
    evidence = tmp_path / "evidence.log"
    evidence.write_bytes(b"one\n")
    written = evidence.stat()
    time.sleep(1.1)
    before = battery._state([tmp_path])
    assert any(key[0] == str(evidence) for key in battery._DIGESTS)  # its digest kept
    assert battery._state([tmp_path]) == before  # read from what was kept
    evidence.write_bytes(b"two\n")  # a run that rewrites its input: the same size ...
    os.utime(evidence, ns=(written.st_atime_ns, written.st_mtime_ns))  # ... and its modification time put back
    assert evidence.stat().st_ctime_ns != written.st_ctime_ns
    after = battery._state([tmp_path])
    assert battery.judge_files(battery.Case("x", []), before, after, 0) == [
        f"changed: {str(evidence)!r} {before[str(evidence)]!r} -> {after[str(evidence)]!r}"
    ]
