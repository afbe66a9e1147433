"""The sha256 of an input's source record, also when most of it is hashed in a background thread (#28)."""

from __future__ import annotations

import hashlib
import os
import threading
from pathlib import Path

import pytest

from collectors import inputs
from collectors.inputs import open_input


def _hashing_threads() -> list[threading.Thread]:
    return [t for t in threading.enumerate() if t.name == "kforensic-sha256"]


@pytest.mark.parametrize("inline", [0, 100_000, 1 << 30])  # a thread from the first chunk, part way, never
def test_record_digest_is_the_files_whole_or_read_so_far(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inline: int
) -> None:
    monkeypatch.setattr(inputs, "HASH_INLINE_BYTES", inline)
    data = os.urandom(1_000_003)
    path = tmp_path / "in.bin"
    path.write_bytes(data)
    with open_input(str(path)) as tracked:
        chunks = tracked.raw_chunks(65_536)
        read = b"".join(next(chunks) for _ in range(5))
        # Asked part way: the digest of what was read, while the reading goes on.
        assert tracked.record().sha256 == hashlib.sha256(read).hexdigest()
        read += b"".join(chunks)
        record = tracked.record()
    assert read == data
    assert record.sha256 == hashlib.sha256(data).hexdigest()
    assert record.size == len(data)
    assert not _hashing_threads()  # ended with the reading


def test_abandoned_reading_ends_its_hashing_thread(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(inputs, "HASH_INLINE_BYTES", 0)
    path = tmp_path / "in.bin"
    path.write_bytes(b"x" * 300_000)
    with open_input(str(path)) as tracked:
        chunks = tracked.raw_chunks(65_536)
        first = next(chunks)
        assert _hashing_threads()
        chunks.close()  # the consumer stopped early (a window ended)
        assert tracked.record().sha256 == hashlib.sha256(first).hexdigest()
    assert not _hashing_threads()


@pytest.mark.parametrize("inline", [0, 1 << 30])
def test_an_input_read_unhashed_says_so_and_reads_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, inline: int
) -> None:
    """``hashed=False`` (``kforensic profile --folded -``: its output cites no input): the same bytes and size,
    no digest and no hashing thread; the record says the digest was not computed."""
    from forensics.model import NotAvailable

    monkeypatch.setattr(inputs, "HASH_INLINE_BYTES", inline)
    data = os.urandom(300_001)
    path = tmp_path / "in.bin"
    path.write_bytes(data)
    with open_input(str(path), hashed=False) as tracked:
        read = b"".join(tracked.raw_chunks(65_536))
        assert not _hashing_threads()
        record = tracked.record()
    assert read == data and record.size == len(data)
    assert record.sha256 == NotAvailable(inputs.UNHASHED)
