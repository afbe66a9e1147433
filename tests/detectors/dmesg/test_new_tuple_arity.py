"""Records made by ``tuple.__new__`` (``_new_tuple``) hold every field of their named tuple.

The dmesg modules make their hot records (``LogLine``, ``StackFrame``, ``WhyFact``, ``LockInfo``...) with
``tuple.__new__`` instead of the named tuple's Python constructor (~1 us a call from compiled code): no defaults, no
count of the fields.  A call that left one out would make a shorter tuple whose missing attribute fails only when
read; each call whose values are written out is checked here against its class's fields.
"""

from __future__ import annotations

import ast
import importlib
from pathlib import Path

import pytest

_DMESG = Path(__file__).resolve().parents[3] / "detectors" / "dmesg"
_MODULES = sorted(p.stem for p in _DMESG.glob("*.py") if "_new_tuple" in p.read_text())


def _literal_calls(source: str) -> list[tuple[int, str, int]]:
    """Each ``_new_tuple(Name, (v1, v2, ...))`` call of ``source``: its line, the class's name, its values' count."""
    calls = []
    for node in ast.walk(ast.parse(source)):
        if (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id == "_new_tuple"
            and len(node.args) == 2
            and isinstance(node.args[0], ast.Name)
            and isinstance(node.args[1], ast.Tuple)
            and not any(isinstance(e, ast.Starred) for e in node.args[1].elts)
        ):
            calls.append((node.lineno, node.args[0].id, len(node.args[1].elts)))
    return calls


def test_the_modules_that_make_records_so_are_found() -> None:
    assert {"why", "stacks", "code", "frames", "lines"} <= set(_MODULES)


@pytest.mark.parametrize("name", _MODULES)
def test_each_record_made_by_tuple_new_holds_every_field(name: str) -> None:
    module = importlib.import_module(f"detectors.dmesg.{name}")
    calls = _literal_calls((_DMESG / f"{name}.py").read_text())
    for line, cls_name, count in calls:
        fields = getattr(module, cls_name)._fields
        assert count == len(fields), f"{name}.py:{line}: {cls_name} made with {count} values, has {len(fields)} fields"


def test_the_literal_calls_are_read() -> None:
    """The check above reads the calls it is for (a parser that found none would pass every module)."""
    found = sum(len(_literal_calls((_DMESG / f"{m}.py").read_text())) for m in _MODULES)
    assert found >= 20
    assert _literal_calls("_new_tuple(X, (1, 2))\n_new_tuple(X, t)\n_new_tuple(X, (*t,))") == [(1, "X", 2)]


def test_the_fields_read_by_position_are_where_the_readers_take_them() -> None:
    """The scan reads some records' fields by position, behind a cast mypy cannot see through (c865e0f: the value
    kept as the object it is, not unboxed and boxed again): a line's number and text (extract._numbered_texts,
    frames.parse_trace), a frame's first six fields and its line (frames.parse_trace, memo._frames_apart).  A
    reordered record must fail here, not give other values."""
    from detectors.dmesg.lines import LogLine
    from forensics.types.dmesg import Frame

    assert LogLine._fields[:2] == ("number", "text")
    assert Frame._fields == ("function", "symbol", "offset", "size", "module", "reliable", "stack", "line")
