"""#23.4: compressed text inputs are read by their magic bytes (gzip, xz, zstd, bzip2), with a truncation note."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
from collections.abc import Callable
from pathlib import Path

import pytest
import zstandard

from collectors.inputs import decompress_chunks, open_input, sniff_compression
from forensics.errors import InputError
from tests.forensics.commands.test_slabwatch_cli import kforensic
from tests.vmcore_cases import console_logs

COMPRESSORS: dict[str, Callable[[bytes], bytes]] = {
    "bzip2": bz2.compress,
    "gzip": gzip.compress,
    "xz": lzma.compress,
    "zstd": lambda data: zstandard.ZstdCompressor().compress(data),
}


def _findings(doc: dict[str, object]) -> list[tuple[object, ...]]:
    incident = doc["incident"]
    assert isinstance(incident, dict)
    return [
        (f["title"], f["severity"], tuple((e["locator"]["start"], e["excerpt"]) for e in f["evidence"]))
        for f in incident["findings"]
    ]


def _logs() -> list[Path]:
    logs = list(console_logs())
    if not logs:
        pytest.skip("no fixture console logs")
    return logs


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_dmesg_on_compressed_console_logs_gives_the_same_findings(tmp_path: Path, kind: str) -> None:
    for log in _logs():
        plain = kforensic("dmesg", str(log), "--format", "json")
        packed = tmp_path / f"{log.parent.name}.log.{kind}"
        # Not named by its format: the magic bytes decide (journal exports and logrotate names vary).
        packed = packed.with_suffix(".1")
        packed.write_bytes(COMPRESSORS[kind](log.read_bytes()))
        squeezed = kforensic("dmesg", str(packed), "--format", "json")
        assert plain.returncode == squeezed.returncode == 0, squeezed.stderr
        a, b = json.loads(plain.stdout), json.loads(squeezed.stdout)
        assert _findings(a) == _findings(b) and _findings(a), log
        source = b["incident"]["sources"][0]
        assert source["path"] == str(packed) and source["size"] == packed.stat().st_size


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_truncated_stream_is_read_up_to_the_cut_and_said(tmp_path: Path, kind: str) -> None:
    text = b"".join(b"[%6d.000000] line %d\n" % (i, i) for i in range(20000))
    packed = tmp_path / "cut"
    whole = COMPRESSORS[kind](text)
    packed.write_bytes(whole[: len(whole) * 2 // 3])
    with open_input(str(packed)) as tracked:
        data = b"".join(tracked.read_chunks(4096))
        record = tracked.record()
    assert tracked.compression == kind
    assert text.startswith(data)
    assert record.error is not None and "truncated" in record.error


def test_concatenated_members_are_all_read(tmp_path: Path) -> None:
    packed = tmp_path / "two.gz"
    packed.write_bytes(gzip.compress(b"first\n") + gzip.compress(b"second\n"))
    with open_input(str(packed)) as tracked:
        assert b"".join(tracked.read_chunks()) == b"first\nsecond\n"
        assert tracked.record().error is None


def test_corrupt_stream_is_one_line_exit_3(tmp_path: Path) -> None:
    bad = tmp_path / "bad.xz"
    bad.write_bytes(lzma.compress(b"hello\n" * 1000)[:12] + b"\x00" * 200)
    with pytest.raises(InputError, match="corrupt xz data"), open_input(str(bad)) as tracked:
        b"".join(tracked.read_chunks())
    done = kforensic("dmesg", str(bad))
    assert done.returncode == 3 and done.stderr.startswith("kforensic: error: ")
    worse = tmp_path / "bad.bz2"
    worse.write_bytes(bz2.compress(b"hello\n" * 1000)[:12] + b"\x00" * 200)
    done = kforensic("dmesg", str(worse))
    assert done.returncode == 3 and "corrupt bzip2 data" in done.stderr


def test_sniffing_is_by_magic_not_name() -> None:
    assert sniff_compression(b"\x1f\x8b\x08") == "gzip"
    assert sniff_compression(b"\xfd7zXZ\x00\x00") == "xz"
    assert sniff_compression(b"\x28\xb5\x2f\xfd\x00") == "zstd"
    assert sniff_compression(b"BZh91AY&SY") == "bzip2"
    assert sniff_compression(b"BZh is text") is None  # bzip2's magic is "BZh" and a block size digit
    assert sniff_compression(b"[    0.000000] Linux") is None


def test_slab_import_reads_compressed_snapshots(tmp_path: Path) -> None:
    source = Path("vmcore_fixtures/cases/08-slab-leak/snapshots")
    packed = tmp_path / "snaps"
    packed.mkdir()
    for i, snap in enumerate(sorted(source.iterdir())):
        kind = sorted(COMPRESSORS)[i % len(COMPRESSORS)]
        (packed / f"{snap.name}.{kind}").write_bytes(COMPRESSORS[kind](snap.read_bytes()))
    a = kforensic("slab-import", str(source), "--store", str(tmp_path / "a.sqlite"), "-f", "json", "--no-analysis")
    b = kforensic("slab-import", str(packed), "--store", str(tmp_path / "b.sqlite"), "-f", "json", "--no-analysis")
    assert a.returncode == b.returncode == 0, b.stderr
    assert json.loads(a.stdout)["summary"] == json.loads(b.stdout)["summary"]


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
def test_each_piece_of_a_bomb_is_bounded(kind: str) -> None:
    # 64 MiB of one byte is well under 1 MB compressed: before, one chunk of it came out whole (gzip: 1 GB per
    # MB read; zstd: the whole frame), so a 2 GB bomb held 3.8 GB.  (Here that chunk would be one 64 MiB piece, 16
    # times DECOMPRESS_STEP: 256 MiB made and compressed four times the bytes for the same check, 2.3-2.8 s of CPU.)
    size = 64 << 20
    # xz at preset 0: the default preset's stream but for the dictionary size its header states (256 KiB, not
    # 8 MiB), made in a third of the CPU; the reader is bounded the same way.
    packed = lzma.compress(b"\n" * size, preset=0) if kind == "xz" else COMPRESSORS[kind](b"\n" * size)
    chunks = iter([packed[at : at + (1 << 20)] for at in range(0, len(packed), 1 << 20)])
    total = largest = 0
    for piece in decompress_chunks(kind, chunks, "bomb", []):
        total += len(piece)
        largest = max(largest, len(piece))
    assert total == size
    assert largest <= 8 << 20  # DECOMPRESS_STEP; zstd: 128 KB a block of at least 4 bytes, 256 bytes a step


@pytest.mark.parametrize("kind", sorted(COMPRESSORS))
@pytest.mark.parametrize("step", [1, 7, 4096])
def test_members_are_read_whatever_the_chunks_boundaries(kind: str, step: int) -> None:
    # A member, stream or frame that ends where a chunk ends: xz's ended decompressor was given the next chunk
    # (EOFError: "corrupt xz data") when no byte of the next stream was in the same chunk.
    parts = [b"first\n" * 300, b"", b"second\n" * 50]
    packed = b"".join(COMPRESSORS[kind](part) for part in parts)
    notes: list[str] = []
    chunks = iter([packed[at : at + step] for at in range(0, len(packed), step)])
    assert b"".join(decompress_chunks(kind, chunks, "x", notes)) == b"".join(parts)
    assert notes == []
    short = packed[:-3]
    cut = iter([short[at : at + step] for at in range(0, len(short), step)])
    list(decompress_chunks(kind, cut, "x", notes))
    assert notes and "ends early" in notes[0]


def test_a_whole_text_past_its_bound_is_one_line(tmp_path: Path) -> None:
    # report --from, --spans and slab-import hold their input whole: a bomb was held whole (14 GB for --spans)
    bomb = tmp_path / "findings.json"
    bomb.write_bytes(gzip.compress(b" " * (300 << 20), 1))
    done = kforensic("report", "--from", str(bomb))
    assert done.returncode == 3, done.stderr
    assert f"{bomb} (gunzipped): more than 256 MiB of text: too large for a findings file" in done.stderr
