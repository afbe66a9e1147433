"""Where a dump's kernel debug info is: the places crash and drgn look, the caches, then debuginfod.

Without ``--vmlinux`` the kernel's vmlinux is looked for, in this order, and taken only when
its GNU build ID is the dump's (VMCOREINFO ``BUILD-ID``; a kernel before 5.9 records none and
then a file named for the release is taken, as crash and drgn do):

1. each ``--debug-dir DIR``: ``DIR/.build-id/xx/yyyy.debug``, ``DIR/boot/vmlinux-<release>``,
   ``DIR/lib/modules/<release>/vmlinux``;
2. the standard places (:data:`KERNEL_PLACES`), below ``root`` (``/``; tests pass a tree);
3. ``vmlinux-<release>`` and ``vmlinux`` beside the dump;
4. the files debuginfod fetched before (kforensic's cache, the standard client cache);
5. drgn's own standard finder (the same places, by its rules);
6. debuginfod, when the user allows it (:mod:`forensics.vmcore.debuginfod`).

A compressed vmlinux (xz, gzip, zstd: ``vmlinux.xz`` as the fixtures ship it) is decompressed
once into ``~/.cache/kforensic/decompressed/`` (:func:`decompressed`): drgn can read xz itself
but pays for it on every run (18 s against 0.3 s for the fixture kernel), and crash cannot read
it at all, so the follow-up commands name the decompressed copy.
"""

from __future__ import annotations

import hashlib
import os
import tempfile
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

from forensics.errors import InputError
from forensics.userdirs import NoHomeError
from forensics.vmcore.debuginfod import kforensic_cache

#: The standard places of a kernel's vmlinux with DWARF, relative to the root, and who puts a file there.
#: ``{id2}``/``{id38}`` are the first two and the other hex digits of the build ID.
KERNEL_PLACES: tuple[tuple[str, str], ...] = (
    ("usr/lib/debug/.build-id/{id2}/{id38}.debug", "every distribution's debug package, by build ID"),
    ("usr/lib/debug/boot/vmlinux-{release}", "Debian linux-image-*-dbg, Ubuntu linux-image-*-dbgsym"),
    ("usr/lib/debug/lib/modules/{release}/vmlinux", "RHEL/Fedora/SUSE kernel-debuginfo"),
    ("usr/lib/debug/boot/vmlinux-{release}.debug", "split debug files (perf's list)"),
    ("boot/vmlinux-{release}", "a kernel installed by hand (make install)"),
    ("lib/modules/{release}/build/vmlinux", "the build tree of a self-built kernel"),
    ("lib/modules/{release}/vmlinux", "drgn's list"),
)


@dataclass(frozen=True)
class Looked:
    """One place looked at, and what was there."""

    path: str
    outcome: str  # "absent", "build ID ...: another kernel", "not an ELF file", ...


@dataclass(frozen=True)
class Candidate:
    """A file that may be the kernel's debug info, and the place it was found by."""

    path: Path
    via: str


def elf_build_id(path: Path) -> str | None:
    """The GNU build ID of an ELF file (vmlinux or .ko), hex, or None."""
    from elftools.common.exceptions import ELFError
    from elftools.elf.elffile import ELFFile
    from elftools.elf.sections import NoteSection

    try:
        with path.open("rb") as f:
            elf = ELFFile(f)
            for section in elf.iter_sections():
                if not isinstance(section, NoteSection):
                    continue
                for note in section.iter_notes():
                    # The owner matters: a distribution vmlinux also carries Xen's notes, whose type 3
                    # (XEN_ELFNOTE_VIRT_BASE) pyelftools names NT_GNU_BUILD_ID too (Debian 6.1.0-57).
                    if note["n_type"] == "NT_GNU_BUILD_ID" and note["n_name"] == "GNU":
                        return str(note["n_desc"])
    except (OSError, ELFError) as exc:
        raise InputError(f"{path}: not a readable ELF file ({exc})", hint="give the vmlinux with debug info") from None
    return None


def file_build_id(path: Path) -> tuple[str | None, str | None]:
    """(build ID, problem): the GNU build ID of an ELF file, or why the file cannot be one."""
    try:
        with path.open("rb") as f:
            magic = f.read(6)
    except OSError as exc:
        return None, f"unreadable ({exc.strerror or exc})"
    if not magic.startswith(b"\x7fELF"):
        from collectors.inputs import sniff_compression

        kind = sniff_compression(magic)
        return None, f"{kind}-compressed (give it with --vmlinux)" if kind else "not an ELF file"
    try:
        return elf_build_id(path), None
    except InputError as exc:
        return None, exc.message


def kernel_candidates(
    release: str | None,
    build_id: str | None,
    debug_dirs: tuple[Path, ...],
    dump: Path,
    root: Path,
    looked: list[Looked],
) -> Iterator[Candidate]:
    """The files that are the dump's kernel by build ID (or by release name when the dump records no ID).

    Every place examined is appended to ``looked`` with what was found there.
    """
    from forensics.vmcore.debuginfod import cached

    def fill(template: str) -> str | None:
        if ("{release}" in template and not release) or ("{id" in template and not build_id):
            return None
        bid = build_id or ""
        return template.format(release=release, id2=bid[:2], id38=bid[2:])

    places: list[tuple[Path, str]] = []
    for d in debug_dirs:
        for template in (KERNEL_PLACES[0][0], "boot/vmlinux-{release}", "lib/modules/{release}/vmlinux"):
            rel = fill(template.removeprefix("usr/lib/debug/"))
            if rel is not None:
                places.append((d / rel, f"--debug-dir {d}"))
    for template, who in KERNEL_PLACES:
        rel = fill(template)
        if rel is not None:
            places.append((root / rel, who))
    here = dump.resolve().parent
    for name in (f"vmlinux-{release}" if release else None, "vmlinux"):
        if name:
            places.append((here / name, "beside the dump"))
    if build_id:
        have = cached(build_id)
        if have is not None:
            places.append((have, "debuginfod cache"))
    seen: set[str] = set()
    for path, via in places:
        key = os.path.realpath(path)
        if key in seen:
            continue
        seen.add(key)
        if not path.is_file():
            looked.append(Looked(str(path), "absent"))
            continue
        have_id, problem = file_build_id(path)
        if problem is not None:
            looked.append(Looked(str(path), problem))
            continue
        if build_id and have_id != build_id:
            looked.append(Looked(str(path), f"build ID {have_id or 'none'}: another build"))
            continue
        looked.append(Looked(str(path), "taken" if build_id else "taken by its name (the dump records no build ID)"))
        yield Candidate(path, via)


def summarize(looked: list[Looked], limit: int = 4) -> str:
    """The local places looked at, in one clause: every file found there, then the absent ones."""
    present = [f"{x.path}: {x.outcome}" for x in looked if x.outcome != "absent"]
    absent = [x.path for x in looked if x.outcome == "absent"]
    parts = present[:limit]
    if absent:
        more = f" and {len(absent) - 2} more" if len(absent) > 2 else ""
        parts.append(f"absent: {', '.join(absent[:2])}{more}")
    if not looked:
        return "no local place to look (the dump records no release and no build ID)"
    return f"none of the {len(looked)} local places has it ({'; '.join(parts)})"


def _cache_key(path: Path) -> str:
    st = path.stat()
    ident = f"{os.path.realpath(path)}\0{st.st_dev}\0{st.st_ino}\0{st.st_size}\0{st.st_mtime_ns}"
    return hashlib.sha256(ident.encode()).hexdigest()[:20]


def decompressed(path: Path, notice: Callable[[str], None] | None = None) -> tuple[Path, str | None]:
    """(an uncompressed copy of ``path``, why none could be made): ``path`` itself when it is not compressed.

    The copy lives in ``~/.cache/kforensic/decompressed/<key>/`` (0600 in 0700 directories),
    keyed by the file's identity (path, inode, size, mtime), written once and renamed into place.
    """
    from collectors.inputs import decompress_chunks, sniff_compression

    try:
        with path.open("rb") as f:
            kind = sniff_compression(f.read(6))
        if kind is None:
            return path, None
        name = path.name
        for suffix in (".xz", ".gz", ".zst", ".zstd", ".bz2"):
            name = name.removesuffix(suffix)
        key = _cache_key(path)
    except OSError as exc:
        return path, f"cannot read {path}: {exc.strerror or exc}"
    try:
        target = kforensic_cache() / "decompressed" / key / name
    except NoHomeError as exc:
        return path, f"no cache directory to decompress {path} into ({exc}); set XDG_CACHE_HOME"
    if target.is_file():
        return target, None
    if notice is not None:
        notice(f"decompressing {path} into {target.parent} (once; crash cannot read {kind})")
    try:
        target.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        fd, tmp = tempfile.mkstemp(dir=target.parent, prefix=f".{name}.")
    except OSError as exc:
        return path, f"cannot write the cache {target.parent}: {exc.strerror or exc}"
    notes: list[str] = []
    try:
        with os.fdopen(fd, "wb") as out, path.open("rb") as src:
            chunks = iter(lambda: src.read(1 << 22), b"")
            for piece in decompress_chunks(kind, chunks, str(path), notes):
                out.write(piece)
            out.flush()
            os.fsync(out.fileno())
        if notes:
            raise InputError(f"{path}: {notes[0]}", hint="copy or download the file again")
        os.replace(tmp, target)
    except OSError as exc:
        Path(tmp).unlink(missing_ok=True)
        return path, f"cannot write the cache {target.parent}: {exc.strerror or exc}"
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return target, None
