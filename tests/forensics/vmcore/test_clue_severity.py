"""Clues to a crash are context, not harm counted again (ue17 finding 11).

On the 10-use-after-free dump, "out-of-tree/unsigned module kf_buggy (O) is in the crashing stack" and
"suspicious values: rax = 0x6b6b6b6b6b6b6b6b (slab-poison-free) ..." were medium, beside the critical crash and
the high use-after-free they point at: one crash's harm counted three times, and two more rows in the list of
problems an operator reads.  They are info now, with a baseline that says where the harm is counted.
"""

from __future__ import annotations

from detectors.vmcore.findings import CLUES
from forensics.model import PROBLEM, FindingKind, Severity
from forensics.pipelines.vmcore import analyse_dump
from forensics.vmcore.program import DebugInfoRequest
from tests.vmcore_cases import load_case


def test_a_tainting_module_and_poison_values_are_context_of_the_use_after_free() -> None:
    case = load_case("10-use-after-free")
    result = analyse_dump(case.directory, DebugInfoRequest(case.vmlinux, (), case.module_debug, ()))
    findings = result.incident.sorted_findings()
    by_kind = {f.kind: f for f in findings}
    module, values = by_kind[FindingKind.MODULE], by_kind[FindingKind.SUSPICIOUS_VALUES]
    assert module.title == "out-of-tree/unsigned module kf_buggy (O) is in the crashing stack"
    assert values.title.startswith("suspicious values: rax = 0x6b6b6b6b6b6b6b6b (slab-poison-free)")
    for clue in (module, values):
        assert clue.severity is Severity.INFO, clue.title  # was medium
        assert clue.baseline is not None and "counted once there" in clue.baseline.value
        assert (clue.severity, clue.baseline) == CLUES[clue.kind]
    # The harm is the crash's and its cause's, once each: nothing else of this dump is a problem.
    assert [f.kind for f in findings if f.severity >= PROBLEM] == [FindingKind.CRASH, FindingKind.USE_AFTER_FREE]
    # The clues still explain: the module's hypothesis (who can debug it) is still ranked.
    assert any(h.statement.startswith("a bug in an out-of-tree module") for h in result.analysis.hypotheses)
