"""The key of a compiled group's build (forensics/native.py ``group_dir``), remembered by its files' ``stat`` fields.

The key is the SHA-256 of the group's sources; a run reads and hashes them only when their paths and ``stat``
fields are not those remembered for a build that exists (``<group>.keys`` beside the builds).  Here on a group of
two modules made in a temporary package: the key is the sources' whatever is remembered; a source written over
(its size and modification time set back) gets its own key; nothing is remembered without a build, nor while a
file's times are within git's "racy" window or have no sub-second part; a damaged file of keys is no key.
"""

from __future__ import annotations

import importlib
import os
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest

from forensics import native


@pytest.fixture
def group(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[native.Group]:
    package = tmp_path / "src" / "kfkeys"
    package.mkdir(parents=True)
    (package / "__init__.py").write_text("")
    (package / "a.py").write_text("A = 1\n")
    (package / "b.py").write_text("B = 2\n")
    monkeypatch.syspath_prepend(str(tmp_path / "src"))
    importlib.import_module("kfkeys")  # the package whose modules _source finds

    monkeypatch.setattr(native, "_read_source", lambda m: package / f"{m.rpartition('.')[2]}.py")
    yield native.Group("kforensic_kfkeys", ("kfkeys.a",), 1.0, "a test group", reads=("kfkeys.b",))
    sys.modules.pop("kfkeys", None)


@pytest.fixture
def later(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run as if made a minute after the files were written: their fields can be trusted (forensics/native.py
    ``_trusted``)."""
    monkeypatch.setattr(native, "_RACY_NS", -60 * 10**9)


def _env(tmp_path: Path) -> dict[str, str]:
    return {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}


def _content_key(group: native.Group) -> str:
    sources = [native._source(m) for m in group.modules] + [native._read_source(m) for m in group.reads]
    return native._content_key(sources, group)


def test_the_key_is_the_sources_whether_remembered_or_not(
    group: native.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, later: None
) -> None:
    env = _env(tmp_path)
    where = native.group_dir(group, env)
    assert where.name == f"kforensic_kfkeys-{_content_key(group)}"
    keys = where.parent / "kforensic_kfkeys.keys"
    assert not keys.exists()  # no build: nothing remembered (a run without one writes nothing)
    where.mkdir(parents=True)
    assert native.group_dir(group, env) == where
    assert keys.read_text().count("\n") == 1
    assert keys.stat().st_mode & 0o777 == 0o600
    hashed: list[object] = []
    content = native._content_key

    def counted(sources: list[Path], group: native.Group) -> str:
        hashed.append(sources)
        return content(sources, group)

    monkeypatch.setattr(native, "_content_key", counted)
    assert native.group_dir(group, env) == where
    assert hashed == []  # remembered: the sources are not read


def test_a_source_written_over_gets_its_own_key(group: native.Group, tmp_path: Path, later: None) -> None:
    env = _env(tmp_path)
    where = native.group_dir(group, env)
    where.mkdir(parents=True)
    assert native.group_dir(group, env) == where
    source = native._read_source("kfkeys.b")
    st = source.stat()
    source.write_text("B = 3\n")  # the same size; its times set back as they were: only the change time moved
    os.utime(source, ns=(st.st_atime_ns, st.st_mtime_ns))
    assert source.stat().st_size == st.st_size and source.stat().st_mtime_ns == st.st_mtime_ns
    changed = native.group_dir(group, env)
    assert changed != where and changed.name == f"kforensic_kfkeys-{_content_key(group)}"


def test_a_damaged_file_of_keys_is_no_key(group: native.Group, tmp_path: Path, later: None) -> None:
    env = _env(tmp_path)
    where = native.group_dir(group, env)
    where.mkdir(parents=True)
    native.group_dir(group, env)
    keys = where.parent / "kforensic_kfkeys.keys"
    for text in ("", "x", "\0\0\n", keys.read_text().replace(where.name[-20:], "../../etc/passwd0000")):
        keys.write_text(text)
        assert native.group_dir(group, env) == where
    keys.unlink()
    keys.mkdir()  # not a file at all
    assert native.group_dir(group, env) == where


def test_fields_seen_within_the_racy_window_are_not_remembered(group: native.Group, tmp_path: Path) -> None:
    """Sources just written: their fields stand for nothing yet (on a filesystem of 1-second times a same-size
    rewrite in the same second keeps every field, and the build of the sources before it was loaded)."""
    env = _env(tmp_path)
    where = native.group_dir(group, env)
    where.mkdir(parents=True)
    assert native.group_dir(group, env) == where
    keys = where.parent / "kforensic_kfkeys.keys"
    assert not keys.exists()
    source = native._read_source("kfkeys.b")
    source.write_text("B = 4\n")  # the same size, at once
    assert native.group_dir(group, env).name == f"kforensic_kfkeys-{_content_key(group)}" != where.name


def _stat(mtime_ns: int, ctime_ns: int) -> os.stat_result:
    return SimpleNamespace(st_mtime_ns=mtime_ns, st_ctime_ns=ctime_ns)  # type: ignore[return-value]


def test_fields_are_trusted_only_when_old_and_finer_than_a_second() -> None:
    now = time.time_ns()
    old = now - native._RACY_NS - 10**9 + 123
    assert native._trusted([_stat(old, old), _stat(old - 5, old + 7)], now)
    assert not native._trusted([_stat(old, old), _stat(old, now - 10**6)], now)  # changed a moment ago
    assert not native._trusted([_stat(now + 10**9, old)], now)  # modified "in the future" (another clock)
    whole = old - old % 10**9
    assert not native._trusted([_stat(old, whole)], now)  # 1-second times (or squashfs): never trusted
