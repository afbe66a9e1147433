"""A store whose pages were overwritten (SQLite's quick_check fails) is refused by every reader, never judged.

Review round 9, finding 1: five random pages in an imported store still decoded; the packed rows held absurd counts
and ``leaks`` called the store's HIGH UDP leak "no leak", exit 0 under ``--fail-on medium``, while slab-import
refused the same file as damaged.
"""

from __future__ import annotations

import hashlib
import random
import sqlite3
from pathlib import Path

import pytest

from tests.detectors.leaks.storebuild import udp_leak_store
from tests.helpers import cli_run

PAGE = 4096


def _overwrite_pages(store: Path, first: int, count: int, seed: int) -> None:
    """``dd if=/dev/urandom of=STORE bs=4096 seek=FIRST count=COUNT conv=notrunc``, repeatably."""
    data = bytearray(store.read_bytes())
    rng = random.Random(seed)
    data[first * PAGE : (first + count) * PAGE] = bytes(rng.randrange(256) for _ in range(count * PAGE))
    store.write_bytes(bytes(data))


def _quick_check(store: Path) -> str:
    db = sqlite3.connect(f"file:{store}?mode=ro&immutable=1", uri=True)
    try:
        return str(db.execute("PRAGMA quick_check").fetchone()[0])
    except sqlite3.DatabaseError as exc:
        return str(exc)
    finally:
        db.close()


@pytest.mark.parametrize("command", ["leaks", "report"])
def test_a_store_with_overwritten_pages_is_refused_in_one_line_and_left_as_it_was(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str], command: str
) -> None:
    store = tmp_path / "udp.sqlite"
    udp_leak_store(store)
    # Two pages in the middle of the packed rows: they still decode (the reader judged the store, exit 1 here).
    _overwrite_pages(store, first=10, count=2, seed=10)
    assert _quick_check(store) != "ok"
    before = hashlib.sha256(store.read_bytes()).hexdigest()
    ran = cli_run(monkeypatch, capsys, command, "--store", store, "--fail-on", "medium")
    assert ran.returncode == 3, ran.stdout[:600]  # was 1, the store judged as if intact
    lines = ran.stderr.splitlines()
    assert lines[0].startswith(f"kforensic: error: store {store} is damaged ("), ran.stderr
    assert lines[0].endswith("not reading it") and len(lines) == 2 and ".recover" in lines[1], ran.stderr
    assert ran.stdout == ""
    assert hashlib.sha256(store.read_bytes()).hexdigest() == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["udp.sqlite"]  # no -wal, -shm or -journal beside it


def test_an_intact_store_is_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "udp.sqlite"
    udp_leak_store(store)
    ran = cli_run(monkeypatch, capsys, "leaks", "--store", store, "--fail-on", "medium")
    assert ran.returncode == 1 and "UDP" in ran.stdout, ran.stderr
