"""The key of a compiled group's build (forensics/native.py ``group_dir``), remembered by its files' ``stat`` fields.

The key is the SHA-256 of the group's sources; a run reads and hashes them only when their paths and ``stat``
fields are not those remembered for a build that exists (``<group>.keys`` beside the builds).  Here on a group of
two modules made in a temporary package: the key is the sources' whatever is remembered; a source written over
(its size and modification time set back) gets its own key; nothing is remembered without a build; a damaged
file of keys is no key.
"""

from __future__ import annotations

import importlib
import os
import sys
from collections.abc import Iterator
from pathlib import Path

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


def _env(tmp_path: Path) -> dict[str, str]:
    return {"NUMBA_CACHE_DIR": str(tmp_path / "cache")}


def _content_key(group: native.Group) -> str:
    sources = [native._source(m) for m in group.modules] + [native._read_source(m) for m in group.reads]
    return native._content_key(sources, group)


def test_the_key_is_the_sources_whether_remembered_or_not(
    group: native.Group, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    env = _env(tmp_path)
    where = native.group_dir(group, env)
    assert where.name == f"kforensic_kfkeys-{_content_key(group)}"
    keys = where.parent / "kforensic_kfkeys.keys"
    assert not keys.exists()  # no build: nothing remembered (a run without one writes nothing)
    where.mkdir(parents=True)
    assert native.group_dir(group, env) == where
    assert keys.read_text().count("\n") == 1
    hashed: list[object] = []
    content = native._content_key

    def counted(sources: list[Path], group: native.Group) -> str:
        hashed.append(sources)
        return content(sources, group)

    monkeypatch.setattr(native, "_content_key", counted)
    assert native.group_dir(group, env) == where
    assert hashed == []  # remembered: the sources are not read


def test_a_source_written_over_gets_its_own_key(group: native.Group, tmp_path: Path) -> None:
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


def test_a_damaged_file_of_keys_is_no_key(group: native.Group, tmp_path: Path) -> None:
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
