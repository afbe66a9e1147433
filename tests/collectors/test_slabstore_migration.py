"""Stores of schema 1 (one row per sample and cache) read and migrated to the packed schema 2.

The fixture was written by the schema-1 code itself (tests/data/slabstore_v1/make.py at commit
23ef8c3), with the digests of the frames that code read from it.  The leak findings are compared
with those of the same samples written by today's code (the analysis itself changes over time).
"""

from __future__ import annotations

import gzip
import hashlib
import importlib.util
import json
import re
import sqlite3
import subprocess
import sys
from pathlib import Path

import pytest

from collectors.slabstore import SCHEMA, SCHEMA_VERSION, SlabStore
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


def _without_paths(findings: object) -> object:
    """The findings with the store's path (a temporary directory) replaced."""
    return json.loads(re.sub(r'"/[^"]*\.sqlite"', '"STORE"', json.dumps(findings, sort_keys=True)))


@pytest.fixture(scope="module")
def new_findings(tmp_path_factory: pytest.TempPathFactory) -> object:
    """The findings on the fixture's samples written by today's code (schema 2)."""
    spec = importlib.util.spec_from_file_location("slabstore_v1_make", FIXTURE / "make.py")
    assert spec is not None and spec.loader is not None
    make = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(make)
    path = tmp_path_factory.mktemp("new") / "new.sqlite"
    make.write(path)
    with SlabStore.open(path) as store:
        assert _digests(store)["slab_frame"] == json.loads((FIXTURE / "frames.json").read_text())["slab_frame"]
    return _leaks_json(path)


def _leaks_json(path: Path) -> object:
    """``kforensic leaks -f json`` run as a user does: the findings, the store's path replaced."""
    out = subprocess.run(
        [sys.executable, "-m", "forensics", "leaks", "--store", str(path), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert out.returncode in (0, 1), out.stderr
    findings = json.loads(out.stdout)["incident"]["findings"]
    assert findings  # the UDP leak at least
    for finding in findings:
        del finding["id"]  # some ids are digests that include the store's path
    return _without_paths(findings)


def test_an_old_store_read_only_is_read_as_before_and_left_unchanged(old_store: Path, new_findings: object) -> None:
    before = old_store.read_bytes()
    with SlabStore.open(old_store) as store:
        assert _digests(store) == json.loads((FIXTURE / "frames.json").read_text())
        assert store.cache_series("fuse_request")[0].sample_id == 21
    assert _leaks_json(old_store) == new_findings
    assert old_store.read_bytes() == before
    assert sorted(p.name for p in old_store.parent.iterdir()) == ["old.sqlite"]  # nothing made beside it


def test_an_old_store_opened_for_writing_is_migrated_in_place(old_store: Path, new_findings: object) -> None:
    with SlabStore.open_for_writing(old_store, "fixturehost") as store:
        tables = {r[0] for r in store.db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")}
        assert {"slab_packed", "counter_packed"} <= tables and not tables & {"slab", "counter_values"}
        assert store.db.execute("PRAGMA user_version").fetchone()[0] == SCHEMA_VERSION == 2
        assert store.meta("schema") == SCHEMA
        samples = len(store.samples())
    with SlabStore.open(old_store) as store:
        assert _digests(store) == json.loads((FIXTURE / "frames.json").read_text())
    assert _leaks_json(old_store) == new_findings
    with SlabStore.open_for_writing(old_store, "fixturehost") as store:  # a second opening finds schema 2
        run = store.begin_run(run_info())
        sid = store.append_sample(run, sample(1_790_000_000.0, BOOT_B, {"UDP": 7}))
        assert store.sample_line(sid, "UDP") is not None and len(store.samples()) == samples + 1
    assert sqlite3.connect(old_store).execute("PRAGMA integrity_check").fetchone()[0] == "ok"
