"""Generated code kept between runs (forensics/codecache.py): what compile makes, classes that behave alike."""

import collections
import dataclasses
import hashlib
import marshal
import os
import subprocess
import sys
import typing
from pathlib import Path
from typing import Any, NamedTuple

import pytest

from forensics import codecache

# Sources as dataclasses, named tuples and string annotations write them (3.11's shapes).
SOURCES = [
    (
        "def __create_fn__(_type_x, MISSING, _return_type):\n"
        " def __init__(self, x:_type_x=MISSING)->_return_type:\n  object.__setattr__(self,'x',x)\n return __init__",
        "exec",
    ),
    ("lambda _cls, a, b: _tuple_new(_cls, (a, b))", "eval"),
    ("int | None", "eval"),
]


@pytest.fixture
def fresh(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """An empty cache directory and a table not yet loaded; the cache file's path."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.setattr(codecache, "_TABLE", codecache.new_table())
    monkeypatch.setattr(codecache, "_asked", set())
    return codecache.cache_file()


def _reload(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(codecache, "_TABLE", codecache.new_table())


def test_code_from_the_file_is_what_compile_makes(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    first = [codecache.code(source, mode) for source, mode in SOURCES]
    assert first == [compile(source, "<string>", mode, dont_inherit=True) for source, mode in SOURCES]
    codecache._TABLE.save()
    assert fresh.stat().st_mode & 0o777 == 0o600
    _reload(monkeypatch)
    assert [codecache.code(source, mode) for source, mode in SOURCES] == first
    assert codecache._TABLE.added is False  # every one came from the file


def _made() -> tuple[Any, Any]:
    """A frozen dataclass (init, repr, eq, hash, setattr) and a named tuple, made now."""

    @dataclasses.dataclass(frozen=True)
    class Point:
        x: int
        y: "list[str]" = dataclasses.field(default_factory=list)
        z: float = 1.5

    class Pair(NamedTuple):
        a: int
        b: str = "b"

    return Point, Pair


def test_classes_made_through_it_are_made_alike(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    plain_point, plain_pair = _made()
    for module, name, value in ((dataclasses, "exec", codecache._exec), (collections, "eval", codecache._eval)):
        monkeypatch.setattr(module, name, value, raising=False)
    monkeypatch.setattr(typing, "compile", codecache._compile, raising=False)
    for _ in range(2):  # compiled, then from the table
        point, pair = _made()
        for made, plain in ((point, plain_point), (pair, plain_pair)):
            for method in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__new__"):
                got: Any = getattr(made, method, None)
                want: Any = getattr(plain, method, None)
                if hasattr(want, "__code__"):
                    # The same code (no __future__ flag of forensics/codecache.py: annotations stay objects).
                    assert got.__code__.co_code == want.__code__.co_code, method
                    assert got.__annotations__ == want.__annotations__, method
        assert repr(point(1, ["a"])) == repr(plain_point(1, ["a"])).replace(
            plain_point.__qualname__, point.__qualname__
        )
        assert point(1) == point(1) and point(1) != point(2)
        assert hash(point(1, ())) == hash(plain_point(1, ()))
        with pytest.raises(dataclasses.FrozenInstanceError):
            point(1).x = 2
        assert pair(1) == (1, "b") and pair._fields == ("a", "b")
        assert typing.get_type_hints(point)["y"] == list[str]
    assert codecache._TABLE.added is True and len(codecache._TABLE.load()) >= 3


@pytest.mark.parametrize("damage", ["truncated", "flipped", "other format", "not code"])
def test_a_damaged_file_is_ignored(fresh: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    codecache.code(*SOURCES[0])
    codecache._TABLE.save()
    blob = fresh.read_bytes()
    start = len(codecache._FORMAT)
    damaged = {
        "truncated": blob[: len(blob) // 2],
        "flipped": blob[:-10] + bytes([blob[-10] ^ 0xFF]) + blob[-9:],
        "other format": b"kforensic-code-0\n" + blob[start:],
        "not code": codecache._FORMAT
        + hashlib.sha256(marshal.dumps({SOURCES[0]: 1})).digest()
        + marshal.dumps({SOURCES[0]: 1}),
    }[damage]
    fresh.write_bytes(damaged)
    _reload(monkeypatch)
    assert codecache.code(*SOURCES[0]) == compile(SOURCES[0][0], "<string>", "exec", dont_inherit=True)
    assert codecache._TABLE.added is True  # compiled again, to be written back
    codecache._TABLE.save()
    written = fresh.read_bytes()  # the same table (marshal's bytes also depend on the objects' reference counts)
    assert written[:start] == blob[:start] and marshal.loads(written[start + 32 :]) == marshal.loads(blob[start + 32 :])


def test_a_full_table_keeps_what_the_run_asked_for(fresh: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Entries no run asks for any more (the code of earlier versions) go when a new one finds the table full."""
    monkeypatch.setattr(codecache, "MAX_ENTRIES", 8)
    monkeypatch.setattr(codecache._TABLE, "max_entries", 8)
    stale = [(f"x{i} + 1", "eval") for i in range(6)]
    for source, mode in [*stale, *SOURCES[:2]]:
        codecache.code(source, mode)
    codecache._TABLE.save()
    _reload(monkeypatch)
    monkeypatch.setattr(codecache._TABLE, "max_entries", 8)
    monkeypatch.setattr(codecache, "_asked", set())
    want = [compile(source, "<string>", mode, dont_inherit=True) for source, mode in SOURCES]
    assert [codecache.code(*s) for s in SOURCES[:2]] == want[:2]
    assert codecache._TABLE.added is False  # both from the file, which is full (8 entries)
    assert codecache.code(*SOURCES[2]) == want[2]  # not held: compiled, and the six stale entries make room for it
    codecache._TABLE.save()
    _reload(monkeypatch)
    assert set(codecache._TABLE.load()) == set(SOURCES)
    assert [codecache.code(*s) for s in SOURCES] == want
    assert codecache._TABLE.added is False


def test_a_table_written_back_holds_little_more_than_what_its_run_asked_for(
    fresh: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The code of earlier versions goes at the next write once it outweighs what a run asks for (KEEP times)."""
    for i in range(6):
        codecache.code(f"x{i} + 1", "eval")
    codecache._TABLE.save()
    _reload(monkeypatch)
    monkeypatch.setattr(codecache, "_asked", set())
    for source in SOURCES[:2]:  # compiled (not held): written back, 8 entries for 2 asked: those 2 alone
        codecache.code(*source)
    codecache._TABLE.save()
    _reload(monkeypatch)
    assert set(codecache._TABLE.load()) == set(SOURCES[:2])
    monkeypatch.setattr(codecache, "_asked", set())
    codecache.code(*SOURCES[0])  # another path: one held, one new; 3 entries for 2 asked: all kept
    codecache.code(*SOURCES[2])
    codecache._TABLE.save()
    _reload(monkeypatch)
    assert set(codecache._TABLE.load()) == set(SOURCES)


@pytest.mark.skipif(sys.version_info >= (3, 12), reason="from 3.12 dataclasses asks inspect of every class")
def test_dataclasses_imported_by_install_defer_inspect_to_its_first_use(tmp_path: Path) -> None:
    """A fresh process (``inspect`` not yet imported): install() leaves it out until a class without a docstring
    needs its signature, which is then the one the real module gives."""
    code = (
        "import sys\n"
        "from forensics import codecache\n"
        "codecache.install('test-deferred')\n"
        "import dataclasses\n"
        "print('inspect' in sys.modules, type(sys.modules.get('inspect')).__name__)\n"
        "@dataclasses.dataclass\n"
        "class Documented:\n"
        "    '''Said.'''\n"
        "    x: int\n"
        "print('inspect' in sys.modules)\n"
        "@dataclasses.dataclass\n"
        "class Bare:\n"
        "    x: int\n"
        "    y: str = 'a'\n"
        "import inspect\n"
        "print(type(inspect).__name__, Bare.__doc__, dataclasses.inspect.signature is inspect.signature)\n"
        # asked while it stands in sys.modules (as while dataclasses is imported): the real module's, no recursion
        "stand_in = codecache._DeferredInspect('inspect')\n"
        "sys.modules['inspect'] = stand_in\n"
        "print(stand_in.getdoc is sys.modules['inspect'].getdoc, sys.modules['inspect'] is not stand_in)\n"
    )
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path)}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, check=True)
    assert done.stdout.splitlines() == [
        "False NoneType",
        "False",
        "module Bare(x: int, y: str = 'a') True",
        "True True",
    ]
