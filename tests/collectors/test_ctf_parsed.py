"""The per-user cache of parsed CTF metadata (collectors/ctf/parsed.py) gives what parsing gives, and fails safe."""

from __future__ import annotations

import dataclasses
import pickle
import stat
from pathlib import Path

import numpy as np
import pytest

from collectors.ctf import parsed
from collectors.ctf.layouts import Layouts, compile_layouts
from collectors.ctf.metadata import parse_metadata
from tests.collectors.ctf_check import extract_session


@pytest.fixture(scope="module")
def session(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return extract_session(tmp_path_factory.mktemp("lttng"))


@pytest.fixture
def kernel(session: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The session's kernel metadata (350 KB of TSDL), with an empty cache of its own."""
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(tmp_path / "cache"))
    return session / "kernel" / "metadata"


def _same_layouts(a: Layouts, b: Layouts) -> None:
    for f in dataclasses.fields(Layouts):
        x, y = getattr(a, f.name), getattr(b, f.name)
        if isinstance(x, np.ndarray):
            assert np.array_equal(x, y), f.name
        else:
            assert x == y, f.name


def test_a_cached_parse_equals_a_fresh_one_at_the_path_asked(kernel: Path, tmp_path: Path) -> None:
    meta, layouts = parsed.load(kernel)  # parsed, and kept
    entry = parsed.entry_path(kernel)
    assert entry is not None and entry.is_file()
    assert stat.S_IMODE(entry.stat().st_mode) == 0o600  # it names the host and its kernel
    copy = tmp_path / "copy" / "metadata"
    copy.parent.mkdir()
    copy.write_bytes(kernel.read_bytes())
    cached_meta, cached_layouts = parsed.load(copy)  # the same text elsewhere: read from the entry
    fresh = parse_metadata(copy)
    assert cached_meta == fresh and cached_meta.path == copy
    assert len(fresh.events) > 600  # the comparison covered LTTng's syscall declarations
    _same_layouts(cached_layouts, compile_layouts(fresh))
    assert meta.path == kernel
    _same_layouts(layouts, cached_layouts)


def test_a_cached_parse_unpickles_its_events_when_first_read(kernel: Path) -> None:
    parsed.load(kernel)
    meta, _layouts = parsed.load(kernel)  # from the entry
    assert "events" not in vars(meta)  # one bytes object until read
    again = pickle.loads(pickle.dumps(meta))  # pickled again unread, then read
    assert meta.events == parse_metadata(kernel).events and "events" in vars(meta)
    assert again.events == meta.events
    with pytest.raises(AttributeError):
        _ = meta.no_such_attribute


def test_a_damaged_entry_is_parsed_again_and_replaced(kernel: Path) -> None:
    parsed.load(kernel)
    entry = parsed.entry_path(kernel)
    assert entry is not None
    entry.write_bytes(b"\x80\x05not a pickle")
    meta, _layouts = parsed.load(kernel)
    assert meta == parse_metadata(kernel)
    assert entry.read_bytes()[:1] == b"\x80" and len(entry.read_bytes()) > 1000  # written whole again


def test_an_unwritable_cache_only_costs_the_parse(
    kernel: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    blocker = tmp_path / "not-a-dir"
    blocker.write_text("")
    monkeypatch.setenv("NUMBA_CACHE_DIR", str(blocker))  # the entry's directory cannot be made
    meta, _layouts = parsed.load(kernel)
    assert meta == parse_metadata(kernel)
    assert not list(tmp_path.rglob("*.pickle"))
