"""A dump the installed crash cannot open (6.12, crash 8.0.2 exits 1 on it) is opened with drgn in the report.

f07eca41 gave every ``crash>`` step of such a dump in drgn or the shell, yet the follow-up still said to open the
dump with ``crash -s VMLINUX DUMP``, and the deliberate crash's ``crash> log`` (a hypothesis's own step, read from
no finding) stayed (ue10 #8).
"""

from __future__ import annotations

import pytest

from forensics.report.vmcore import render_vmcore_markdown
from tests.vmcore_cases import load_case

pytest.importorskip("drgn")


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
