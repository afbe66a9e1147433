"""Compiled patterns kept between runs (forensics/regexcache.py): the same patterns, a file that may be lost."""

from __future__ import annotations

import hashlib
import re
import stat
from pathlib import Path
from typing import Any

import pytest

from detectors.dmesg.rules import RULES
from forensics import regexcache

PATTERNS = [
    (r"BUG: KASAN: ([a-z\-]+) in (?P<func>\w+)\+0x[0-9a-f]+", 0),
    (r"^\s*(?:RIP|pc)\s*:.*?(\w+)\+", re.MULTILINE),
    (rb"\[\s*(\d+)\.(\d+)\]", 0),
    (r"kasan|lockdep", re.IGNORECASE),
]
TEXTS = ["BUG: KASAN: use-after-free in foo_read+0x10/0x20", "x\n RIP: 0010:bar+0x3/0x9", "LOCKDEP kasan"]


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache directory and a table not yet loaded; the cache file's path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(regexcache, "_TABLE", regexcache._Table())
    return regexcache.cache_file()


def _same(a: re.Pattern[str] | re.Pattern[bytes], b: re.Pattern[str] | re.Pattern[bytes]) -> None:
    assert (a.pattern, a.flags, a.groups, a.groupindex) == (b.pattern, b.flags, b.groups, b.groupindex)
    for text in TEXTS:
        subject: str | bytes = text.encode() if isinstance(a.pattern, bytes) else text
        assert [m.span() for m in a.finditer(subject)] == [m.span() for m in b.finditer(subject)]  # type: ignore[arg-type]


def test_patterns_from_the_file_are_the_ones_re_compiles(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = [regexcache.compile(p, f) for p, f in PATTERNS]
    assert not fresh.exists()  # written at exit (or by save), not at each compile
    regexcache._TABLE.save()
    assert stat.S_IMODE(fresh.stat().st_mode) == 0o600
    monkeypatch.setattr(regexcache, "_TABLE", regexcache._Table())
    again = [regexcache.compile(p, f) for p, f in PATTERNS]
    assert regexcache._TABLE.added is False  # every one came from the file
    for (p, f), a, b in zip(PATTERNS, first, again, strict=True):
        _same(a, re.compile(p, f))
        _same(b, re.compile(p, f))


def test_the_rule_table_from_the_file_matches_its_examples(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    for rule in RULES:
        regexcache.compile(rule.header.pattern)
    regexcache._TABLE.save()
    monkeypatch.setattr(regexcache, "_TABLE", regexcache._Table())
    for rule in RULES:
        cached = regexcache.compile(rule.header.pattern)
        assert cached.search(rule.example) is not None, rule.name
        _same(cached, re.compile(rule.header.pattern))
    assert regexcache._TABLE.added is False


@pytest.mark.parametrize("damage", ["truncated", "flipped", "other format", "not marshal", "empty"])
def test_a_damaged_file_is_ignored_and_rewritten(fresh: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    regexcache.compile(PATTERNS[0][0])
    regexcache._TABLE.save()
    blob = fresh.read_bytes()
    damaged = {
        "truncated": blob[: len(blob) // 2],
        "flipped": blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:],
        "other format": b"kforensic-regex-0\n" + blob[18:],
        "not marshal": blob[:18] + hashlib.sha256(b"\xff\x00garbage").digest() + b"\xff\x00garbage",
        "empty": b"",
    }[damage]
    fresh.write_bytes(damaged)
    monkeypatch.setattr(regexcache, "_TABLE", regexcache._Table())
    _same(regexcache.compile(PATTERNS[0][0]), re.compile(PATTERNS[0][0]))
    assert regexcache._TABLE.added is True  # compiled again, to be written back
    regexcache._TABLE.save()
    assert fresh.read_bytes() == blob


def test_the_table_file_is_read_never_mapped(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A mapped file cut short by a `cp` over it while a run reads it ends the run with SIGBUS (forensics/runcache.py):
    # the table is read; with mmap refused (as on a file system that maps nothing), it comes from the file all the same.
    import mmap

    regexcache.compile(PATTERNS[0][0])
    regexcache._TABLE.save()

    def refused(*args: object, **kwargs: object) -> mmap.mmap:
        raise AssertionError("the table file was mapped")

    monkeypatch.setattr(mmap, "mmap", refused)
    monkeypatch.setattr(regexcache, "_TABLE", regexcache._Table())
    _same(regexcache.compile(PATTERNS[0][0]), re.compile(PATTERNS[0][0]))
    assert regexcache._TABLE.added is False  # from the file


def test_the_file_keeps_each_code_as_the_words_re_compiles(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # A pattern's code is kept as its words' bytes (one object to read back, not one per word), the words re's own
    # compiler makes, in their order; read back, the pattern is the one re compiles.
    from re import _compiler, _parser  # type: ignore[attr-defined]

    for pattern, flags in PATTERNS:
        regexcache.compile(pattern, flags)
    regexcache._TABLE.save()
    monkeypatch.setattr(regexcache, "_TABLE", regexcache._Table())
    for pattern, flags in PATTERNS:
        code = regexcache._TABLE.load()[(pattern, flags)][1]
        assert type(code) is bytes
        assert memoryview(code).cast("I").tolist() == list(_compiler._code(_parser.parse(pattern, flags), flags))
        _same(regexcache.compile(pattern, flags), re.compile(pattern, flags))
    assert regexcache._TABLE.added is False


def test_no_cache_directory_is_no_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a directory")
    monkeypatch.setenv("XDG_CACHE_HOME", str(blocker))
    monkeypatch.setattr(regexcache, "_TABLE", regexcache._Table())
    _same(regexcache.compile(PATTERNS[1][0], PATTERNS[1][1]), re.compile(PATTERNS[1][0], PATTERNS[1][1]))
    regexcache._TABLE.save()  # cannot write: says nothing
    assert list(tmp_path.iterdir()) == [blocker]


def test_patterns_compiled_at_a_module_top_level_come_from_the_command_table(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # regexcache.install: re's compiler, asked from a module's top level (platform's and json's patterns as orjson
    # imports them), takes the pattern from the command's own table; a pattern compiled in a function (which may be
    # built from input) and an invalid one go to re's own compiler, as before.
    from re import _compiler  # type: ignore[attr-defined]

    original = getattr(_compiler.compile, "_kforensic_own", _compiler.compile)  # re's own, under a main()'s
    monkeypatch.setattr(_compiler, "compile", original)  # what it was put back after the test
    regexcache.install("test-cmd")
    table = _compiler.compile._kforensic_table
    unique = hashlib.sha256(str(fresh).encode()).hexdigest()[:12]  # in no cache of this process yet
    top, inner = rf"(?P<word>k{unique}\w*)\s+(\d+)", rf"inner{unique}(\d)"
    module = f"import re\nTOP = re.compile({top!r}, re.IGNORECASE)\ndef later():\n    return re.compile({inner!r})\n"
    space: dict[str, Any] = {}
    exec(compile(module, "<a module>", "exec"), space)  # its code runs as a module's top level does
    made = space["TOP"]
    re.purge()
    _same(made, re.compile(top, re.IGNORECASE))
    assert made.search(f"x K{unique}abc 42").groups() == (f"K{unique}abc", "42")
    assert space["later"]().match(f"inner{unique}7") is not None
    key = (top, int(re.IGNORECASE))
    assert key in table.load() and not any(p == inner for p, _ in table.load())  # the function's is not kept
    with pytest.raises(re.error, match="missing"):
        exec("import re\nre.compile('(unclosed')\n", {})
    table.save()
    assert stat.S_IMODE(regexcache.cache_path("regex-test-cmd", regexcache._tag()).stat().st_mode) == 0o600
    # The next run's: taken from the file, nothing compiled.
    monkeypatch.setattr(_compiler, "compile", original)
    regexcache.install("test-cmd")
    again = _compiler.compile._kforensic_table
    stored = again.load()[key]
    re.purge()
    space = {}
    exec(compile(module, "<a module>", "exec"), space)
    _same(space["TOP"], made)
    assert again.load()[key] is stored
