"""A fact of a report's "why" cites the line that prints its value: a register's value the register dump's line
(not the Code: line), and a value computed from two lines (RAM bytes: "pages RAM" less "pages reserved") both.

On the fixture kernels' own logs (vmcore_fixtures/.../cases/*/dmesg.txt, what makedumpfile extracted).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from detectors.dmesg.findings import explain_reports
from detectors.dmesg.scanner import scan_chunks
from tests.vmcore_cases import case_names, kernel_ids, payload_dir

#: Facts whose value is a register's, ``name = 0x...``.
_REGISTER_FACTS = ("compared", "base register", "object pointer")


def _logs() -> list[Path]:
    return [
        path
        for kernel in kernel_ids()
        for name in case_names(kernel)
        if (path := payload_dir(kernel) / "cases" / name / "dmesg.txt").is_file()
    ]


def _reports(log: Path) -> list[tuple[int, list[str], object]]:
    lines = log.read_text(errors="replace").splitlines()
    whys = explain_reports(scan_chunks([log.read_bytes()]))
    return [(first, lines, why) for first, why in whys.items()]


@pytest.mark.parametrize("log", _logs(), ids=lambda p: f"{p.parents[2].name}/{p.parent.name}")
def test_a_register_value_is_cited_by_the_line_that_prints_it(log: Path) -> None:
    cited = 0
    for first, lines, why in _reports(log):
        for fact in why.facts:  # type: ignore[attr-defined]
            if fact.name not in _REGISTER_FACTS or " = 0x" not in str(fact.value):
                continue
            register, value = str(fact.value).split(" = 0x")
            line = lines[first + fact.at - 1]
            assert f"{register.upper()}: {int(value, 16):016x}" in line, (fact, line)
            cited += 1
    if log.parent.name == "12-double-free":
        assert cited >= 2  # the compare before the ud2: both registers


@pytest.mark.parametrize("log", [p for p in _logs() if p.parent.name == "09-oom"], ids=lambda p: p.parents[2].name)
def test_ram_bytes_cites_both_lines_it_is_computed_from(log: Path) -> None:
    [(first, lines, why)] = [r for r in _reports(log) if any(f.name == "RAM bytes" for f in r[2].facts)]  # type: ignore[attr-defined]
    fact = next(f for f in why.facts if f.name == "RAM bytes")  # type: ignore[attr-defined]
    ram_line, reserved_line = (lines[n - 1] for n in fact.lines(first))
    assert ram_line.endswith(" pages RAM") and reserved_line.endswith(" pages reserved")
    ram, reserved = (int(text.split("]")[-1].split()[0]) for text in (ram_line, reserved_line))
    assert fact.value == (ram - reserved) * 4096
