"""crashkernel= parsing, range selection, the distro defaults and the estimate; makedumpfile options."""

from __future__ import annotations

import itertools

import pytest
from hypothesis import given
from hypothesis import strategies as st

from detectors.kdump.crashkernel import (
    GIB,
    MIB,
    RUNTIME_BYTES,
    distro_default,
    estimate_crashkernel,
    parse_crashkernel,
    parse_size,
)
from detectors.kdump.makedumpfile import Compression, compression_support, parse_collector
from forensics.model import NotAvailable
from forensics.types.kdump import format_size

UBUNTU = "2G-4G:320M,4G-32G:512M,32G-64G:1024M,64G-128G:2048M,128G-:4096M"


@pytest.mark.parametrize(
    ("ram_gib", "want_mib"),
    [(1, 0), (2, 320), (3, 320), (4, 512), (31, 512), (32, 1024), (64, 2048), (128, 4096), (1024, 4096)],
)
def test_ubuntu_ranges(ram_gib: int, want_mib: int) -> None:
    assert parse_crashkernel(UBUNTU).size_for(ram_gib * GIB) == want_mib * MIB


def test_fixed_offset_and_placement() -> None:
    fixed = parse_crashkernel("256M@16M")
    assert (fixed.fixed, fixed.offset) == (256 * MIB, "16M")
    high = parse_crashkernel("512M,high")
    assert (high.fixed, high.placement) == (512 * MIB, "high")
    assert parse_crashkernel("384M-:128M").size_for(300 * MIB) == 0


@pytest.mark.parametrize("bad", ["auto", "", "128Q", "1G-:", "4G-1G:128M", "1G:128M", "abc"])
def test_malformed_values_are_refused(bad: str) -> None:
    with pytest.raises(ValueError):
        parse_crashkernel(bad)


@given(
    st.lists(st.integers(min_value=1, max_value=64), min_size=1, max_size=5, unique=True),
    st.lists(st.integers(min_value=1, max_value=4096), min_size=5, max_size=5),
    st.integers(min_value=0, max_value=80 * 1024),
)
def test_ranges_round_trip_and_pick_the_matching_range(bounds: list[int], sizes: list[int], ram_mib: int) -> None:
    edges = sorted(bounds)
    parts = [f"{lo}G-{hi}G:{sizes[i]}M" for i, (lo, hi) in enumerate(itertools.pairwise(edges))]
    parts.append(f"{edges[-1]}G-:{sizes[len(parts)]}M")
    value = ",".join(parts)
    parsed = parse_crashkernel(value)
    ram = ram_mib * MIB
    want = 0
    for item in parsed.ranges:  # parse_crashkernel_mem, in order: a size not below the RAM rejects the whole value
        if item.size >= ram:
            break
        if item.start <= ram and (item.end is None or ram < item.end):
            want = item.size
            break
    assert parsed.size_for(ram) == want
    assert len(parsed.ranges) == len(parts)
    if ram >= edges[-1] * GIB and parsed.rejected(ram) is None:
        assert parsed.size_for(ram) == sizes[len(parts) - 1] * MIB


@given(st.integers(min_value=1, max_value=1 << 40))
def test_format_size_round_trips(size: int) -> None:
    assert parse_size(format_size(size)) == size


@pytest.mark.parametrize(
    ("distro", "arch", "floor_at_8g"),
    [("ubuntu", "x86_64", 512), ("debian", "x86_64", 128), ("rhel", "x86_64", 256), ("fedora", "x86_64", 256)],
)
def test_distro_defaults(distro: str, arch: str, floor_at_8g: int) -> None:
    row = distro_default(distro, arch)
    assert parse_crashkernel(row.crashkernel).size_for(8 * GIB) == floor_at_8g * MIB


def test_aarch64_and_unknown_arch_defaults() -> None:
    assert distro_default("rhel", "aarch64").crashkernel.startswith("1G-4G:256M")
    assert distro_default("arch", NotAvailable("no arch")).crashkernel == "1G-4G:192M,4G-64G:256M,64G-:512M"


def test_estimate_adds_parts_and_takes_the_floor() -> None:
    row = distro_default("rhel", "x86_64")
    big = estimate_crashkernel(8 * GIB, 60 * MIB, 200 * MIB, 40 * MIB, row)
    assert big.estimated == 60 * MIB + 200 * MIB + 40 * MIB + RUNTIME_BYTES
    assert big.recommended == 368 * MIB  # 364 MiB rounded up to 16 MiB
    small = estimate_crashkernel(8 * GIB, 10 * MIB, 10 * MIB, 1 * MIB, row)
    assert small.recommended == small.floor == 256 * MIB
    partial = estimate_crashkernel(8 * GIB, NotAvailable("no image"), 10 * MIB, 1 * MIB, row)
    assert not partial.complete


@pytest.mark.parametrize(
    ("command", "level", "compression"),
    [
        ("-c -d 31", 31, Compression.ZLIB),
        ("makedumpfile -l --message-level 7 -d 31", 31, Compression.LZO),
        ("/usr/sbin/makedumpfile -z -d31", 31, Compression.ZSTD),
        ("makedumpfile -p -d 17", 17, Compression.SNAPPY),
        ("makedumpfile -E -d 31", 31, Compression.NONE),
        ("-F -l", None, Compression.LZO),
    ],
)
def test_collector_options(command: str, level: int | None, compression: Compression) -> None:
    options = parse_collector(command)
    assert (options.dump_level, options.compression) == (level, compression)
    assert not options.problems


def test_collector_problems() -> None:
    assert parse_collector("makedumpfile -d 99").problems == ("dump level '99' is not 0..31",)
    assert parse_collector("makedumpfile --dump-dmesg").dmesg_only
    assert parse_collector("cp").program == "cp"
    assert parse_collector('-c "-d 31').problems


def test_only_recent_tools_read_zstd() -> None:
    assert compression_support(Compression.ZSTD).concern
    assert compression_support(Compression.LZO).concern is None
