"""A dump the installed crash cannot open (6.12, crash 8.0.2 exits 1 on it) is opened with drgn in the report.

f07eca41 gave every ``crash>`` step of such a dump in drgn or the shell, yet the follow-up still said to open the
dump with ``crash -s VMLINUX DUMP``, and the deliberate crash's ``crash> log`` (a hypothesis's own step, read from
no finding) stayed (ue10 #8).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest

from forensics.report.vmcore import render_vmcore_markdown
from tests.vmcore_cases import load_case

pytest.importorskip("drgn")


def _run(argv: list[str]) -> str:
    return subprocess.run(argv, capture_output=True, text=True, check=False, timeout=60).stdout


def _analysed(name: str, kernel: str) -> object:
    from forensics.pipelines.vmcore import analyse_dump
    from forensics.vmcore.program import DebugInfoRequest

    case = load_case(name, kernel)
    return analyse_dump(case.directory, DebugInfoRequest(case.vmlinux, (), case.module_debug, ()))


def test_a_6_12_dump_is_opened_with_drgn_and_its_log_step_is_drgn_s() -> None:
    result = _analysed("08-slab-leak", "6.12")
    steps = [h.next_command for h in result.analysis.hypotheses]  # type: ignore[attr-defined]
    assert not any(s.startswith("crash> ") for s in steps), steps
    assert any(s.startswith(">>> %crash log  # who requested it") for s in steps), steps
    markdown = render_vmcore_markdown(result)  # type: ignore[arg-type]
    assert "crash -s " not in markdown and "crash> mod -s" not in markdown
    assert "crash: not for this dump" in markdown and "drgn -c " in markdown


def test_a_6_1_dump_is_still_opened_with_crash() -> None:
    result = _analysed("07-sysrq-c", "6.1")
    steps = [h.next_command for h in result.analysis.hypotheses]  # type: ignore[attr-defined]
    assert any(s.startswith("crash> log  # who requested it") for s in steps), steps
    markdown = render_vmcore_markdown(result)  # type: ignore[arg-type]
    assert "crash -s " in markdown and "crash: not for this dump" not in markdown


@pytest.mark.parametrize(
    ("crash", "release", "opens"),
    [
        ((8, 0, 2), "6.1.0-57-amd64", True),  # measured: the fixtures' 6.1 dumps, Debian's stock 6.1
        ((8, 0, 2), "5.10.0", True),
        ((8, 0, 2), "6.12.0", False),  # measured: "seek error: kernel virtual address ... page_offset_base"
        ((9, 0, 1), "6.1.0", True),  # a later release opens what 8.0.2 opens
        ((9, 0, 2), "7.0.0", False),  # crash-utility/crash issue #232
        ((8, 0, 5), "7.0.3", False),  # an earlier release does not open what 9.0.2 does not
        ((9, 0, 1), "6.12.0", "no record of whether crash 9.0.1 opens 6.12 dumps"),
        ((8, 0, 2), "6.6.0", "no record of whether crash 8.0.2 opens 6.6 dumps"),  # between: not assumed
    ],
)
def test_whether_crash_opens_a_dump_is_decided_from_its_version(
    crash: tuple[int, ...], release: str, opens: bool | str
) -> None:
    """From the installed crash's version and the table of what releases open (CRASH_REACH), not from the release
    alone (a newer crash opens 6.12: it was "crash 8.0.2 opens up to 6.1" whatever crash was installed)."""
    from forensics.model import NotAvailable
    from forensics.types.vmcore import crash_opens

    got = crash_opens(release, crash)
    if isinstance(opens, bool):
        assert got is opens
    else:
        assert isinstance(got, NotAvailable) and got.reason.startswith(opens), got
    unknown = crash_opens("6.1.0", NotAvailable("crash not installed"))
    assert isinstance(unknown, NotAvailable) and unknown.reason == "crash not installed"
    unread = crash_opens(NotAvailable("no utsname"), crash)
    assert isinstance(unread, NotAvailable) and "kernel release is unknown (no utsname)" in unread.reason


def test_the_installed_crash_version_is_read_from_crash_itself(tmp_path: Path) -> None:
    """``crash --version`` of the crash on PATH; none there: "crash not installed"; a crash that says no version:
    not read, with what it printed (a real executable of that name, found on PATH as crash is)."""
    from forensics.model import NotAvailable
    from forensics.vmcore.followup import installed_crash

    found = shutil.which("crash")
    if found is not None:
        first = next(line for line in _run([found, "--version"]).splitlines() if line.startswith("crash "))
        numbers = tuple(int(n) for n in re.findall(r"\d+", first.split()[1])[:3])
        assert installed_crash() == numbers, first
    empty = tmp_path / "empty"
    empty.mkdir()
    absent = installed_crash(str(empty))
    assert isinstance(absent, NotAvailable) and absent.reason == "crash not installed"
    odd = tmp_path / "odd"
    odd.mkdir()
    (odd / "crash").write_text("#!/bin/sh\necho 'usage: crash [OPTION]... NAMELIST MEMORY-IMAGE'\n")
    (odd / "crash").chmod(0o755)
    unread = installed_crash(str(odd))
    assert isinstance(unread, NotAvailable) and "usage: crash" in unread.reason, unread


def test_without_crash_the_follow_up_says_unknown_not_that_crash_opens_it() -> None:
    """No crash installed: whether crash opens the dump is unknown, and said so (it said "The `crash>` commands run
    in crash" from the release alone); the JSON says it too.  With the installed crash, its version is named."""
    import json
    from dataclasses import replace
    from typing import cast

    from forensics.model import NotAvailable
    from forensics.report.vmcore import to_document
    from forensics.types.results import VmcoreResult
    from forensics.types.vmcore import FollowUp

    result = cast(VmcoreResult, _analysed("07-sysrq-c", "6.1"))
    follow_up = result.snapshot.follow_up
    assert isinstance(follow_up, FollowUp)
    if not isinstance(follow_up.crash_version, NotAvailable):  # crash is installed here: named where it opens
        version = ".".join(map(str, follow_up.crash_version))
        assert f"The `crash>` commands run in crash {version}, opened" in render_vmcore_markdown(result)
    absent = replace(follow_up, crash_version=NotAvailable("crash not installed"))
    without = replace(result, snapshot=replace(result.snapshot, follow_up=absent))
    markdown = render_vmcore_markdown(without)
    assert "Whether crash opens this dump: unknown: crash not installed." in markdown, markdown
    assert "commands run in crash" not in markdown and "crash -s " in markdown  # the session, to try
    doc = json.loads(json.dumps(to_document(without)))
    assert doc["follow_up"]["crash_opens"] == {"not_available": "crash not installed"}
    assert doc["follow_up"]["crash_version"] == {"not_available": "crash not installed"}


def test_without_crash_a_6_12_dump_s_steps_are_drgn_s_and_a_6_1_dump_s_crash_s() -> None:
    """No crash installed: the steps are crash's for a kernel some crash release is recorded to open (6.1), drgn's
    for one none is (6.12) -- crash 8.0.2 exits 1 on the fixtures' 6.12 dumps, so without the installed crash's
    version a ``crash>`` step there sent the reader to a session no recorded crash opens (113ced48 gave every
    unknown case crash's steps)."""
    from dataclasses import replace
    from typing import cast

    from detectors.vmcore.steps import crash_opens as steps_in_crash
    from forensics.model import NotAvailable
    from forensics.types.results import VmcoreResult
    from forensics.types.vmcore import FollowUp, opened_by_some_crash

    assert opened_by_some_crash("6.1.0-57-amd64") is True and opened_by_some_crash("6.12.118") is False
    for name, kernel, crash_steps in (("08-slab-leak", "6.12", False), ("07-sysrq-c", "6.1", True)):
        result = cast(VmcoreResult, _analysed(name, kernel))
        follow_up = result.snapshot.follow_up
        assert isinstance(follow_up, FollowUp)
        absent = replace(follow_up, crash_version=NotAvailable("crash not installed"))
        snap = replace(result.snapshot, follow_up=absent)
        assert steps_in_crash(snap) is crash_steps, (name, kernel)
        markdown = render_vmcore_markdown(replace(result, snapshot=snap))
        assert "Whether crash opens this dump: unknown: crash not installed" in markdown, markdown
        assert ("so the steps run in drgn" in markdown) is not crash_steps, markdown
