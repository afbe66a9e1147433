"""``kforensic trace`` names where a lttng_ust_cyg_profile call was made: its ``call_site`` (the return address in the
caller) as the calling function and the offset into it, ``main+0x86 (0x40152d)``, as perf and crash print a return
address; in hex, the cause said once with the functions' own, where it cannot be named.

Until 2026-12-06 a slow span's function was named ("serve (0x401461)") while its call site stayed the bare hex of the
cited payload (``call_site=0x40152d``).  The recording is test_trace_cyg_symbols.py's (tests/data/lttng/cyg/
record.sh: root, lttng-tools, lttng-ust, gcc); the functions' places are checked against binutils' ``nm``, which
reads the same symbol table independently of pyelftools.
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from collectors.ust_symbols import Binary, Resolver
from tests.forensics.commands.test_trace_cyg_symbols import _slow, recorded

__all__ = ["recorded"]  # the recording fixture, shared (pytest finds it in this module's names)


def _trace(session: Path, out: Path, *options: str) -> dict[str, object]:
    cmd = [sys.executable, "-m", "forensics", "trace", str(session), *options, "--format", "json", "-o", str(out)]
    proc = subprocess.run(cmd, capture_output=True, text=True, timeout=600, check=False)
    assert proc.returncode in (0, 1), proc.stderr
    doc: dict[str, object] = json.loads(out.read_text())
    return doc


@contextmanager
def _gone(path: Path) -> Iterator[None]:
    """``path`` not where the statedump says, for the time of the block."""
    away = path.with_name(path.name + ".gone")
    path.rename(away)
    try:
        yield
    finally:
        away.rename(path)


def _functions(binary: Path) -> dict[str, tuple[int, int]]:
    """Each sized function of ``binary`` (nm -S): its address and size."""
    if shutil.which("nm") is None:
        pytest.skip("binutils' nm is not installed")
    out = subprocess.run(["nm", "-S", str(binary)], capture_output=True, text=True, check=True).stdout
    return {f[3]: (int(f[0], 16), int(f[1], 16)) for f in (line.split() for line in out.splitlines()) if len(f) == 4}


def _place(functions: dict[str, tuple[int, int]], site: int) -> str:
    """``main+0x86 (0x40152d)``: the function nm says holds the byte before a return address, and its offset."""
    ((name, start),) = [(n, a) for n, (a, size) in functions.items() if a <= site - 1 < a + size]
    return f"{name}+0x{site - start:x} (0x{site:x})"


def _facts(finding: dict[str, object], name: str) -> list[str]:
    return [f["value"] for f in finding["facts"] if f["name"] == name]  # type: ignore[attr-defined, index]


def _call_site(excerpt: str) -> int:
    found = re.search(r" call_site=(0x[0-9a-f]+) ", excerpt)
    assert found is not None, excerpt
    return int(found.group(1), 16)


def test_the_slow_call_and_its_nested_call_say_where_they_were_called_from(
    recorded: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """serve(7), called by main; load_model, called by serve: each call site named as nm places it."""
    session, binary, addrs = recorded
    functions = _functions(binary)
    finding = _slow(_trace(session, tmp_path / "t.json"))
    (started,) = _facts(finding, "started by")
    assert started.startswith(f"lttng_ust_cyg_profile:func_entry addr={addrs['serve']} "), started
    site = _call_site(started)
    assert _facts(finding, "called from") == [_place(functions, site)]
    assert _place(functions, site).startswith("main+0x")
    (nested,) = [v for v in _facts(finding, "inside") if "nested" in v]
    called = _place(functions, _call_site(nested))
    assert called.startswith("serve+0x") and nested.endswith(f", called from {called}"), nested
    assert f"addr={addrs['load_model']} call_site=0x" in nested  # the cited payload stays as recorded


def test_a_call_site_not_named_stays_hex_and_its_cause_is_said_once(
    recorded: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """The binary moved away: the call site in hex as its field; the one cause, that of the functions' addresses
    too, said once."""
    session, binary, _addrs = recorded
    with _gone(binary):
        doc = _trace(session, tmp_path / "t.json")
    finding = _slow(doc)
    site = _call_site(_facts(finding, "started by")[0])
    assert _facts(finding, "called from") == [f"call_site=0x{site:x}"]
    notes = [n for n in doc["spans"]["notes"] if "not resolved" in n]  # type: ignore[index]
    assert notes == [f"lttng_ust_cyg_profile addresses not resolved to functions: {binary} not found"], notes


def test_a_call_site_in_a_library_is_named_by_its_symbols_or_says_why(
    recorded: tuple[Path, Path, dict[str, str]], tmp_path: Path
) -> None:
    """main's own call site lies in the C library (__libc_start_call_main): named where the library's symbol table
    holds that place, else in hex with its cause, said once, though no function address met it (Debian's and
    Ubuntu's libc.so.6 keep only .dynsym, where it is not)."""
    session, binary, _addrs = recorded
    doc = _trace(session, tmp_path / "main.json", "--slow-ms", "50")  # the longest call explained: main
    finding = _slow(doc)
    assert "addr=0x" not in str(_facts(finding, "population")), finding  # main's function named, from the program
    (called,) = _facts(finding, "called from")
    site = _call_site(_facts(finding, "started by")[0])
    notes = [n for n in doc["spans"]["notes"] if "not resolved" in n]  # type: ignore[index]
    if called == f"call_site=0x{site:x}":
        assert len(notes) == 1 and f": 0x{site:x} is in no " in notes[0], notes
    else:
        assert re.fullmatch(rf"\S+\+0x[0-9a-f]+ \(0x{site:x}\)", called) and not notes, (called, notes)
    (serve,) = [v for v in _facts(finding, "inside") if "nested lttng_ust_cyg_profile:func serve " in v]
    assert serve.endswith(f", called from {_place(_functions(binary), _call_site(serve))}"), serve


def test_a_return_address_right_past_a_function_is_named_in_it(recorded: tuple[Path, Path, dict[str, str]]) -> None:
    """A call that is its function's last instruction returns to the first byte past it, which may be the next
    function's first: the caller is the function holding the byte before (as gdb finds a caller's block)."""
    _session, binary, _addrs = recorded
    functions = _functions(binary)
    (before, after) = next(
        (b, a) for b, (start, size) in functions.items() for a, (at, _s) in functions.items() if start + size == at
    )
    at = functions[after][0]
    resolver = Resolver([Binary(0x400000, 1 << 20, str(binary), False)])  # record.sh builds it -no-pie
    assert resolver.name(at) == f"{after} (0x{at:x})"
    assert resolver.name_return(at) == f"{before}+0x{functions[before][1]:x} (0x{at:x})"
