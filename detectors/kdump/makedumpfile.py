"""makedumpfile options: dump level, compression and output format, and who can read the result."""

from __future__ import annotations

import enum
import shlex
from dataclasses import dataclass


class Compression(enum.Enum):
    """Page compression of a kdump-compressed dump."""

    NONE = "none"
    ZLIB = "zlib"  # -c
    LZO = "lzo"  # -l
    SNAPPY = "snappy"  # -p
    ZSTD = "zstd"  # -z (makedumpfile >= 1.7.0)


#: Short option → compression, in makedumpfile's letters.
COMPRESSION_FLAGS = (
    ("c", Compression.ZLIB),
    ("l", Compression.LZO),
    ("p", Compression.SNAPPY),
    ("z", Compression.ZSTD),
)


@dataclass(frozen=True)
class CompressionSupport:
    """Which analysis tools read a compression, and whether that is a concern."""

    compression: Compression
    readers: str
    concern: str | None  # why an analysis host may not open it; None when every current tool does


#: Reader support per compression, first match wins.
COMPRESSION_SUPPORT = (
    CompressionSupport(Compression.ZLIB, "crash, drgn (libkdumpfile), makedumpfile -R", None),
    CompressionSupport(Compression.LZO, "crash, drgn (libkdumpfile), makedumpfile -R", None),
    CompressionSupport(Compression.NONE, "crash, drgn (libkdumpfile)", None),
    CompressionSupport(
        Compression.SNAPPY,
        "crash and libkdumpfile only when built with snappy",
        "distribution builds of crash and libkdumpfile often lack snappy",
    ),
    CompressionSupport(
        Compression.ZSTD,
        "crash >= 8.0.1, libkdumpfile >= 0.5.1 (drgn), makedumpfile >= 1.7.0",
        "older analysis hosts (crash < 8.0.1, libkdumpfile < 0.5.1, e.g. RHEL 8 or Ubuntu 20.04) cannot open it",
    ),
)

#: Page classes each dump-level bit leaves out (makedumpfile(8)).
DUMP_LEVEL_BITS = (
    (1, "zero pages"),
    (2, "page cache without private data"),
    (4, "page cache with private data"),
    (8, "user process pages"),
    (16, "free pages"),
)


@dataclass(frozen=True)
class CollectorOptions:
    """What a core collector command line does."""

    program: str  # makedumpfile, cp, scp, ...
    dump_level: int | None  # None when -d is not given (makedumpfile then dumps everything)
    compression: Compression
    elf: bool  # -E: ELF format instead of kdump-compressed
    flattened: bool  # -F: flattened stream, needs makedumpfile -R before analysis
    dmesg_only: bool  # --dump-dmesg: only the log buffer, no vmcore
    problems: tuple[str, ...]


def parse_collector(command: str) -> CollectorOptions:
    """Parse a makedumpfile command line (or bare options, as Debian's MAKEDUMP_ARGS)."""
    problems: list[str] = []
    try:
        words = shlex.split(command)
    except ValueError as exc:
        return CollectorOptions("makedumpfile", None, Compression.NONE, False, False, False, (f"cannot parse: {exc}",))
    program = "makedumpfile"
    if words and not words[0].startswith("-"):
        program = words.pop(0).rsplit("/", 1)[-1]
    level: int | None = None
    compression = Compression.NONE
    elf = flattened = dmesg = False
    index = 0
    while index < len(words):
        word = words[index]
        index += 1
        if word == "--dump-dmesg":
            dmesg = True
        elif word.startswith("--"):
            continue
        elif word.startswith("-d"):
            text = word[2:] or (words[index] if index < len(words) else "")
            index += 0 if word[2:] else 1
            if not text.isdigit() or int(text) > 31:
                problems.append(f"dump level {text!r} is not 0..31")
            else:
                level = int(text)
        elif word.startswith("-") and not word.startswith("--"):
            for letter in word[1:]:
                flag = dict(COMPRESSION_FLAGS).get(letter)
                if flag is not None:
                    compression = flag
                elif letter == "E":
                    elf = True
                elif letter == "F":
                    flattened = True
    return CollectorOptions(program, level, compression, elf, flattened, dmesg, tuple(problems))


def compression_support(compression: Compression) -> CompressionSupport:
    """The reader support row of a compression."""
    return next(row for row in COMPRESSION_SUPPORT if row.compression is compression)


def excluded_classes(level: int) -> tuple[str, ...]:
    """Names of the page classes a dump level leaves out."""
    return tuple(name for bit, name in DUMP_LEVEL_BITS if level & bit)


def compression_flag(compression: Compression) -> str:
    """The makedumpfile option of a compression ("" for none)."""
    for letter, value in COMPRESSION_FLAGS:
        if value is compression:
            return f"-{letter}"
    return ""
