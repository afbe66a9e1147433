"""Stores of schema 1 (one row per sample and cache) read and migrated to the packed schema 2.

The fixture was written by the schema-1 code itself (tests/data/slabstore_v1/make.py at commit
23ef8c3), with the digests of the frames and the leak findings that code read from it.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re
import sqlite3
import sys
from pathlib import Path

import pytest

from collectors.slabstore import SCHEMA, SCHEMA_VERSION, SlabStore
from forensics.cli import main
from tests.collectors.test_slabstore import BOOT_B, run_info, sample

FIXTURE = Path(__file__).resolve().parent.parent / "data" / "slabstore_v1"


@pytest.fixture
def old_store(tmp_path: Path) -> Path:
    path = tmp_path / "old.sqlite"
    path.write_bytes(gzip.decompress((FIXTURE / "store.sqlite.gz").read_bytes()))
    return path


def _digests(store: SlabStore) -> dict[str, str]:
    tables = {
        "slab_frame": store.slab_frame().to_csv(index=False),
        "counter_frame": store.counter_frame().to_csv(index=False),
        "summary": repr(store.summary()),
    }
    return {k: hashlib.sha256(v.encode()).hexdigest() for k, v in tables.items()}


def _findings(path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> object:
    monkeypatch.setattr(sys, "argv", ["kforensic", "leaks", "--store", str(path), "-f", "json"])
    capsys.readouterr()
    with pytest.raises(SystemExit) as ended:
        main()
    assert ended.value.code in (0, None, 1)
    return _without_paths(json.loads(capsys.readouterr().out)["incident"]["findings"])


def _without_paths(findings: object) -> object:
    """The findings with the store's path (a temporary directory) replaced."""
    return json.loads(re.sub(r'"/[^"]*\.sqlite"', '"STORE"', json.dumps(findings, sort_keys=True)))


def _golden() -> object:
    return _without_paths(json.loads((FIXTURE / "findings.json").read_text()))


def test_an_old_store_read_only_is_read_as_before_and_left_unchanged(
    old_store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    before = old_store.read_bytes()
    with SlabStore.open(old_store) as store:
        assert _digests(store) == json.loads((FIXTURE / "frames.json").read_text())
        assert store.cache_series("fuse_request")[0].sample_id == 21
    assert _findings(old_store, monkeypatch, capsys) == _golden()
    assert old_store.read_bytes() == before
    assert sorted(p.name for p in old_store.parent.iterdir()) == ["old.sqlite"]  # nothing made beside it


def test_an_old_store_opened_for_writing_is_migrated_in_place(
    old_store: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with SlabStore.open_for_writing(old_store, "fixturehost") as store:
        tables = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"slab_packed", "counter_packed"} <= tables and not tables & {"slab", "counter_values"}
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        assert store.meta("schema") == SCHEMA
        samples = len(store.samples())
    with SlabStore.open(old_store) as store:
        assert _digests(store) == json.loads((FIXTURE / "frames.json").read_text())
    assert _findings(old_store, monkeypatch, capsys) == _golden()
    with SlabStore.open_for_writing(old_store, "fixturehost") as store:  # a second opening finds schema 2
        run = store.begin_run(run_info())
        sid = store.append_sample(run, sample(1_790_000_000.0, BOOT_B, {"UDP": 7}))
        assert store.sample_line(sid, "UDP") is not None and len(store.samples()) == samples + 1
    assert sqlite3.connect(old_store).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
