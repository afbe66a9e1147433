"""The words of a guilty-frame step's ``hint`` are in every line its anchor matches: a line without any is passed
over unsearched (``extract._follow``), so a missing word would lose a frame."""

from __future__ import annotations

from pathlib import Path

from detectors.dmesg.lines import parse_line
from detectors.dmesg.rules import RULES, Step

ROOT = Path(__file__).resolve().parents[3]

#: A line each alternative of each hinted anchor matches (the test logs hold few of some: s390, loongarch, mips).
EXAMPLES = (
    "RIP: 0010:foo+0x1/0x2",
    "EIP: [<c1234567>] foo+0x1/0x2",
    "IP: [<ffffffff81234567>] foo+0x1/0x2",
    "NIP: c000000000123456 foo+0x1/0x2",
    "NIP [c000000000123456] foo+0x1/0x2",
    "pc : foo+0x1/0x2",
    "epc   : ffffffff80123456 foo+0x1/0x2",
    "ERA: foo+0x10/0x20",
    "PC is at foo+0x1/0x2",
    "Krnl PSW : 0704c00180000000 000003ff80a0b1c2 (foo+0x1/0x2)",
    "LR is at foo+0x1/0x2",
    "lr : foo+0x1/0x2",
    "Call Trace:",
    "Call trace:",
    "Backtrace:",
    "  backtrace:",
    "  backtrace (crc 1234abcd):",
    "  kmemleak backtrace:",
    "--- interrupt: 900 at foo+0x1/0x2",
    " apic_timer_interrupt+0x8c/0xa0",
    " el1h_64_irq+0x64/0x68",
    " el1_interrupt+0x3c/0x60",
    " gic_handle_irq+0x4c/0xd0",
)


def _hinted_steps() -> list[Step]:
    steps = {id(s): s for rule in RULES if rule.stack for path in rule.stack.paths for s in path if s.hint}
    return list(steps.values())


def _bodies() -> set[str]:
    logs = [*(ROOT / "tests" / "detectors" / "dmesg").glob("*/**/*.log"), *(ROOT / "vmcore_fixtures").glob("**/*.log")]
    bodies = {parse_line(0, text).body for log in logs for text in log.read_text(errors="replace").splitlines()}
    return bodies | set(EXAMPLES)


def test_every_line_an_anchor_matches_holds_a_word_of_its_hint() -> None:
    steps = _hinted_steps()
    assert len(steps) >= 6  # RIP, CALL_TRACE, BACKTRACE, IRQ_ENTRY, INTERRUPT, LR
    matched = dict.fromkeys((s.anchor.pattern for s in steps if s.anchor is not None), 0)
    for body in _bodies():
        for step in steps:
            assert step.anchor is not None
            if step.anchor.search(body) is not None:
                matched[step.anchor.pattern] += 1
                assert any(word in body for word in step.hint), (step.hint, body)
    assert all(matched.values()), matched  # each anchor matched something: the test looked at its lines


def test_every_example_is_matched_by_a_hinted_anchor() -> None:
    steps = _hinted_steps()
    for example in EXAMPLES:
        assert any(s.anchor is not None and s.anchor.search(example) for s in steps), example
