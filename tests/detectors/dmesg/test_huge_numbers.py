"""Numbers no kernel prints: a field of 5,000 digits is read as absent, never a traceback or a number past 64 bits.

A kernel prints numbers of at most 64 bits (printk's ``%d``/``%llu``/``%llx``); a longer run of digits is not the
field a reader looks for (:func:`forensics.units.log_dec`, :func:`forensics.units.log_hex`).  Each case is a
golden log with the numbers of one line blown to 5,000 digits (decimal, or hex), so that every reader meets each
numeric field of each report kind it reads; and each log with its lines' stamps blown.
"""

from __future__ import annotations

import json
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from detectors.dmesg.lines import parse_line
from forensics.pipelines.dmesg import analyse_logs
from forensics.report.dmesg import DmesgRenderer
from forensics.report.formats import OutputFormat, render
from forensics.units import S64_MIN, U64_MAX, log_dec, log_hex, past_64_bits

GOLDEN = Path(__file__).parent / "golden"
CASES = sorted(GOLDEN.glob("*.log"))
BIG = 5000
KFORENSIC = str(Path(sys.executable).with_name("kforensic"))

#: A decimal number standing alone (not a hex word's digits, nor a name's: ``x86_64``'s are blown too, harmlessly).
_DEC = re.compile(r"(?<![0-9A-Za-z])\d+(?![0-9A-Za-z])")
#: A hex number: ``0x`` and digits, or a bare word of 8 or more hex digits (addresses, register values).
_HEX = re.compile(r"0x[0-9a-fA-F]+|(?<![0-9A-Za-z])[0-9a-f]{8,}(?![0-9A-Za-z])")


def _dec_blown(text: str) -> str:
    return _DEC.sub(lambda m: "1" + "7" * (BIG - 1), text)


def _hex_blown(text: str) -> str:
    return _HEX.sub(lambda m: ("0x" if m.group(0).startswith("0x") else "") + "f" * BIG, text)


def _split(text: str) -> tuple[str, str]:
    """A line's prefixes (stamp, level, wrapper) and its body, as the line parser splits them."""
    body = parse_line(0, text).body
    return (text[: len(text) - len(body)], body) if body and text.endswith(body) else ("", text)


def variants(log: Path) -> Iterator[tuple[str, str]]:
    """(name, text) of each blown variant of a golden log: one line's body numbers, decimal then hex; the stamps."""
    lines = log.read_text(encoding="utf-8", errors="replace").splitlines(keepends=True)
    for i, line in enumerate(lines):
        prefix, body = _split(line)
        for kind, blow in (("dec", _dec_blown), ("hex", _hex_blown)):
            blown = blow(body)
            if blown != body:
                yield f"{kind}-line{i + 1}", "".join([*lines[:i], prefix + blown, *lines[i + 1 :]])
    stamps = []
    for line in lines:
        prefix, body = _split(line)
        stamps.append(_dec_blown(prefix) + body)
    yield "stamps", "".join(stamps)


def _ints(doc: object) -> Iterator[int]:
    if isinstance(doc, bool):
        return
    if isinstance(doc, int):
        yield doc
    elif isinstance(doc, dict):
        for value in doc.values():
            yield from _ints(value)
    elif isinstance(doc, list):
        for value in doc:
            yield from _ints(value)


def _check(path: Path) -> bytes:
    """The JSON document of the run (Python's json reads it, no int past 64 bits) after its text renders."""
    result = analyse_logs([str(path)], False)
    renderer = DmesgRenderer()
    render(renderer, result, OutputFormat.TEXT)
    data = renderer.json_bytes(result)
    bad = [n for n in _ints(json.loads(data)) if not S64_MIN <= n <= U64_MAX]
    assert not bad, f"{path.name}: numbers past 64 bits in the JSON: {[str(n)[:30] for n in bad]}"
    return data


def test_helpers_take_64_bits_only() -> None:
    assert log_dec("18446744073709551615") == U64_MAX
    assert log_dec("18446744073709551616") is None
    assert log_dec("0" * 30 + "42") == 42  # zero-padded: still the kernel's number
    assert log_dec("-9223372036854775808") == S64_MIN
    assert log_dec("9" * BIG) is None
    assert log_hex("ffffffffffffffff") == U64_MAX
    assert log_hex("0x" + "0" * 20 + "1f") == 0x1F
    assert log_hex("0x1" + "0" * 16) is None
    assert log_hex("f" * BIG) is None
    assert "5000 digits" in past_64_bits("9" * BIG)


@pytest.mark.parametrize("log", CASES, ids=[p.stem for p in CASES])
def test_blown_numbers(log: Path, tmp_path: Path) -> None:
    count = 0
    for name, text in variants(log):
        path = tmp_path / f"{log.stem}-{name}.log"
        path.write_text(text, encoding="utf-8")
        _check(path)
        path.unlink()
        count += 1
    assert count >= 3  # the golden log's numbers were blown: one line's at least, decimal and hex, and the stamps


@pytest.mark.parametrize(
    "log", ["hung_task_crlf_caller", "oom_kill", "null_deref_x86", "rcu_stall_into_warning_caller"]
)
def test_blown_field_is_unknown_with_why(log: str, tmp_path: Path) -> None:
    """A field of 5,000 digits a reader reads is not available, and says why (a fact, or the report's CPU or pid)."""
    said = 0
    for name, text in variants(GOLDEN / f"{log}.log"):
        path = tmp_path / f"{name}.log"
        path.write_text(text, encoding="utf-8")
        said += b"past the 64 bits a kernel prints" in _check(path)
    assert said


@pytest.mark.parametrize("kind", ["dec", "hex"])
def test_cli_exits_with_findings(kind: str, tmp_path: Path) -> None:
    """The command on every blown variant at once: exit 0 or 1, JSON on stdout, one document."""
    blown = [text for log in CASES for name, text in variants(log) if name.startswith(kind)][::7]
    path = tmp_path / "blown.log"
    path.write_text("".join(blown), encoding="utf-8")
    run = subprocess.run(
        [KFORENSIC, "dmesg", "--format", "json", str(path)], capture_output=True, timeout=300, check=False
    )
    assert run.returncode in (0, 1), run.stderr.decode()[-2000:]
    assert json.loads(run.stdout)["incident"]["findings"]
