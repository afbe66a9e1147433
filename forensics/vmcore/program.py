"""Opening a dump with drgn and loading its debug info, with one-line errors.

This module and its siblings are the only code in kforensic that imports drgn.
"""

from __future__ import annotations

import contextlib
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import drgn

from forensics.errors import DebugInfoMismatchError, InputError, NoDebugInfoError
from forensics.vmcore.debuginfo import elf_build_id
from forensics.vmcore.dumpfile import CUT_HINT, DumpFormat, DumpHeader
from forensics.vmcore.modplace import place_modules
from forensics.vmcore.request import DebugInfoRequest


@dataclass
class OpenedDump:
    """A drgn program on a dump, and what loading its debug info said."""

    prog: drgn.Program
    header: DumpHeader
    vmlinux: str | None
    warnings: list[str]
    module_symbols: tuple[drgn.Symbol, ...] = ()  # of loaded modules, from the dump's kallsyms
    vmlinux_via: str = "--vmlinux"  # how the kernel's debug info was found
    module_files: tuple[tuple[str, str], ...] = field(default=())  # (module, its debug file) drgn loaded


def debug_package_hint(release: str, build_id: str | None = None, debuginfod: bool = False) -> str:
    """Where a user gets the kernel's debug info, by distribution naming."""
    ask = (
        ""
        if debuginfod
        else ", or let kforensic ask a debuginfod server: --debuginfod URL or DEBUGINFOD_URLS "
        "(https://debuginfod.debian.net, https://debuginfod.ubuntu.com, https://debuginfod.fedoraproject.org)"
    )
    return (
        f"install the kernel's debug info: Debian `linux-image-{release}-dbg`, Ubuntu "
        f"`linux-image-unsigned-{release}-dbgsym` (ddebs), RHEL/Fedora `kernel-debuginfo-{release}` "
        f"(dnf debuginfo-install kernel), `debuginfod-find debuginfo {build_id or '<build-id>'}`{ask}; "
        "or pass --vmlinux FILE or --debug-dir DIR"
    )


def _require_elf(path: Path, option: str) -> None:
    """Refuse (exit 3) a file that cannot be debug info at all, instead of ignoring it."""
    try:
        with path.open("rb") as stream:
            magic = stream.read(4)
    except OSError as exc:
        raise InputError(f"{option} {path}: cannot read it: {exc.strerror or exc}", hint="check the path") from None
    if magic != b"\x7fELF":
        raise InputError(f"{option} {path}: not an ELF file", hint="give the module's .ko (or .ko.debug) with DWARF")


def _require_directory(path: Path, option: str, hint: str) -> None:
    """Refuse (exit 3) a source tree that is no directory, as a bad --module-debug is: silently searching
    nothing would report every BUG/WARN source as missing, the option's mistake unsaid."""
    if not path.is_dir():
        why = "no such directory" if not path.exists() else "not a directory"
        raise InputError(f"{option} {path}: {why}", hint=hint)


def _unused_module_files(prog: drgn.Program, files: tuple[Path, ...]) -> list[str]:
    """A warning for each --module-debug file that matches no module of the dump (it was silently ignored).

    A module that is simply not loaded in this dump is a normal case (one .ko given for several dumps), so
    this is said in the report rather than refused.
    """
    if not files:
        return []
    used = set()
    loaded = []
    for module in prog.modules():
        loaded.append(module.name)
        for attr in ("debug_file_path", "loaded_file_path"):
            found = getattr(module, attr, None)
            if found:
                used.add(os.path.realpath(found))
    out = []
    for file in files:
        if os.path.realpath(file) not in used:
            have = elf_build_id(file)
            modules = ", ".join(n for n in loaded if n != "kernel")[:200] or "none"
            out.append(
                f"--module-debug {file} was not used: it matches no module of the dump"
                + (f" (build ID {have})" if have else "")
                + f"; the dump's modules: {modules}"
            )
    return out


def _load_kernel(prog: drgn.Program, path: Path | str, main: drgn.Module | None) -> bool:
    """Try ``path`` as the kernel's debug info; True once the kernel has it."""
    try:
        with contextlib.suppress(drgn.MissingDebugInfoError):
            prog.load_debug_info([str(path)], main=True)
    except drgn.BadDataError as exc:
        raise InputError(
            f"{path}: damaged debug info ({exc})", hint="the file is corrupt: copy or unpack the vmlinux again"
        ) from None
    return main is not None and not main.wants_debug_file()


def _find_kernel_debug_info(
    prog: drgn.Program,
    path: Path,
    request: DebugInfoRequest,
    main: drgn.Module | None,
    release: str,
    build_id: str | None,
    progress: Callable[[str], None] | None,
    notice: Callable[[str], None] | None,
) -> str:
    """Load the kernel's debug info without --vmlinux; returns how it was found. Raises InputError when nowhere."""
    from forensics.vmcore import debuginfo, debuginfod

    looked: list[debuginfo.Looked] = []
    candidates = debuginfo.kernel_candidates(
        None if release == "<release>" else release, build_id, request.debug_dirs, path, request.root, looked
    )
    for found in candidates:
        if _load_kernel(prog, found.path, main):
            return f"{found.via}: {found.path}"
        looked[-1] = debuginfo.Looked(str(found.path), "no DWARF in it (a stripped vmlinux)")
    # drgn's own standard finder: the same places by its rules (and --debug-dir trees, set above).
    with contextlib.suppress(drgn.MissingDebugInfoError):
        prog.load_debug_info([], main=True)
    if main is not None and not main.wants_debug_file():
        return "drgn's standard places"
    urls = debuginfod.servers(request.debuginfod)
    where = debuginfo.summarize(looked)
    what = f"the kernel {release}"
    if urls and build_id:
        try:
            fetched = debuginfod.fetch(build_id, what, urls, _verifier(build_id), progress, notice)
        except debuginfod.DebuginfodError as exc:
            raise NoDebugInfoError(
                str(path),
                f"no debug info for {what} (build ID {build_id}): {debuginfod.describe(build_id, exc.attempts)}; "
                f"{where}",
                debug_package_hint(release, build_id, debuginfod=True),
            ) from None
        if _load_kernel(prog, fetched, main):
            return f"debuginfod ({' '.join(urls)}), cached"
        raise InputError(f"{fetched}: the file debuginfod gave has no DWARF", hint="remove it from the cache")
    note = "" if urls else "; debuginfod not asked (set DEBUGINFOD_URLS or pass --debuginfod URL)"
    if urls and not build_id:
        note = "; debuginfod not asked: the dump records no build ID"
    raise NoDebugInfoError(
        str(path),
        f"no debug info for the kernel {release}"
        + (f" (build ID {build_id})" if build_id else "")
        + f": {where}{note}",
        debug_package_hint(release, build_id, debuginfod=bool(urls)),
    )


def _verifier(build_id: str) -> Callable[[Path], str | None]:
    """Why a downloaded file is not the debug file of ``build_id`` (None when it is)."""
    from forensics.vmcore.debuginfo import file_build_id

    def verify(path: Path) -> str | None:
        have, problem = file_build_id(path)
        if problem is not None:
            return f"the server sent something else: {problem}"
        return None if have == build_id else f"the server sent a file with build ID {have}"

    return verify


def _modules_from_debuginfod(
    prog: drgn.Program,
    request: DebugInfoRequest,
    progress: Callable[[str], None] | None,
    notice: Callable[[str], None] | None,
) -> list[str]:
    """Fetch the debug info of loaded modules still without it, by build ID; warnings for those not found."""
    from forensics.vmcore import debuginfod

    urls = debuginfod.servers(request.debuginfod)
    warnings = []
    for module in prog.modules():
        if not isinstance(module, drgn.RelocatableModule) or not module.wants_debug_file() or not module.build_id:
            continue
        build_id = module.build_id.hex()
        have = debuginfod.cached(build_id)
        if have is None and not urls:
            continue
        try:
            path = have or debuginfod.fetch(
                build_id, f"module {module.name}", urls, _verifier(build_id), progress, notice
            )
        except debuginfod.DebuginfodError as exc:
            warnings.append(f"module {module.name}: {exc.message.removeprefix('no debug info for ')}")
            continue
        with contextlib.suppress(drgn.MissingDebugInfoError, drgn.BadDataError):
            module.try_file(str(path))
    return warnings


def _guard_cut(prog: drgn.Program, path: Path, header: DumpHeader) -> None:
    """A dump cut short: drgn's readers are replaced before the first read (libkdumpfile would read the missing
    pages as zeros, or fault the process); refused where the replacement cannot walk the page tables."""
    if header.cut is None:
        return
    from forensics.vmcore.cutpages import guard

    if guard(prog, path, header.cut, header.machine) is None:
        raise InputError(
            f"{header.cut.truncated(path)}; a cut dump is analysed on x86-64 only "
            f"(its page tables are walked to keep reads off the missing pages), this one is {header.machine}",
            hint=CUT_HINT,
        )


def open_dump(
    path: Path,
    header: DumpHeader,
    request: DebugInfoRequest,
    progress: Callable[[str], None] | None = None,
    notice: Callable[[str], None] | None = None,
) -> OpenedDump:
    """Open ``path`` with drgn and load debug info for the kernel and its modules.

    Raises :class:`InputError` for a file drgn cannot read, a vmlinux whose build ID differs from
    the dump's or without DWARF, and :class:`NoDebugInfoError` when the kernel's debug info is found
    nowhere (without ``--vmlinux``: the places and servers looked in).  Missing module debug info is
    only a warning.
    ``progress`` receives transient status (download percentages), ``notice`` what the user should
    see even without a terminal (a download or decompression starts or ends).
    """
    from forensics.vmcore import debuginfo

    # drgn loads its plugins on the first program; the two it ships only add commands to
    # its own CLI and cost about 0.1 s of imports. Other plugins (a distribution's debug
    # info finder, say) still load, and a user's own setting wins.
    os.environ.setdefault("DRGN_DISABLE_PLUGINS", "builtin_commands,crash_commands")
    prog = drgn.Program()
    try:
        prog.set_core_dump(str(path))
    except Exception as exc:
        hint = "give the vmcore that kdump wrote"
        if header.format is DumpFormat.FLATTENED:
            hint = f"convert it first: makedumpfile -R {path.name}.kdump < {path.name}"
        raise InputError(f"{path}: drgn cannot open this dump: {exc}", hint=hint) from None
    if not prog.flags & drgn.ProgramFlags.IS_LINUX_KERNEL:
        # An ELF core without the kernel's VMCOREINFO note: a process's core (gcore, systemd-coredump, a
        # crashed program's `core`). drgn took it for one: exit 4 "core file is missing NT_AUXV", or a hunt
        # for the debug info of a kernel "<release>" under the program's build ID.
        raise InputError(
            f"{path}: an ELF core of a user process, not a kernel crash dump (no VMCOREINFO note)",
            hint="give the vmcore kdump wrote (/var/crash/...); a program's core is for gdb or coredumpctl",
        )
    _guard_cut(prog, path, header)
    # Downloads go through kforensic's client only (progress, cache, one-line errors):
    # drgn's libdebuginfod finder, which drgn keeps on for Fedora kernels, is turned off.
    with contextlib.suppress(AttributeError, ValueError):
        prog.set_enabled_debug_info_finders([f for f in prog.enabled_debug_info_finders() if f != "debuginfod"])
    warnings: list[str] = []
    if request.debug_dirs:
        opts = prog.debug_info_options
        opts.directories = tuple(str(d) for d in request.debug_dirs) + tuple(opts.directories)
        opts.kernel_directories = tuple(str(d) for d in request.debug_dirs) + tuple(opts.kernel_directories)
    # Before the kernel's debug info is loaded drgn knows only the main module (from
    # VMCOREINFO); the loaded modules are found once vmlinux is there.
    with contextlib.suppress(LookupError, ValueError, drgn.FaultError):
        prog.create_loaded_modules()
    try:
        main = prog.main_module()
    except LookupError:
        main = None
    release = header.release or "<release>"
    build_id = main.build_id.hex() if main is not None and main.build_id else None
    if request.vmlinux is not None and not request.vmlinux.is_file():
        raise InputError(f"{request.vmlinux}: no such file", hint="give the path of the vmlinux with debug info")
    for module_file in request.module_debug:
        _require_elf(module_file, "--module-debug")
    for tree in request.source_dirs:
        _require_directory(tree, "--source-dir", "give the kernel or module source tree")
    for tree in request.debug_dirs:  # (searched for nothing, a mistyped one left "no debug info found" unexplained)
        _require_directory(tree, "--debug-dir", "give a directory holding vmlinux or .debug files")
    if request.vmlinux is not None:
        # A compressed vmlinux (vmlinux.xz) is unpacked once into the cache: drgn would
        # decompress it on every run, crash cannot read it at all.
        vmlinux, why_not = debuginfo.decompressed(request.vmlinux, notice)
        if why_not is not None:
            warnings.append(f"{request.vmlinux} is compressed and was read as it is ({why_not})")
        _load_kernel(prog, vmlinux, main)
        via = "--vmlinux" if vmlinux == request.vmlinux else f"--vmlinux {request.vmlinux}, decompressed"
        if main is not None and main.wants_debug_file():
            # drgn takes a file only when its build ID is the dump's: say which one it has.
            have = elf_build_id(vmlinux)
            if build_id and have and build_id != have:
                raise DebugInfoMismatchError(
                    f"{request.vmlinux}: build ID {have} does not match the dump's kernel ({build_id}, {release})",
                    hint="use the vmlinux of the kernel that crashed; " + debug_package_hint(release, build_id),
                )
            raise InputError(
                f"{path}: no debug info for the kernel {release}"
                + (f" (build ID {build_id})" if build_id else "")
                + f": {request.vmlinux} has none (a stripped vmlinux?)",
                hint=debug_package_hint(release, build_id),
            )
    else:
        via = _find_kernel_debug_info(prog, path, request, main, release, build_id, progress, notice)
    if main is None or main.wants_debug_file():
        raise NoDebugInfoError(
            str(path),
            f"no debug info for the kernel {release}" + (f" (build ID {build_id})" if build_id else ""),
            debug_package_hint(release, build_id),
        )
    try:
        prog.load_debug_info([str(p) for p in request.module_debug], default=True)
    except drgn.MissingDebugInfoError:
        pass  # said below, naming the modules still without it
    except drgn.BadDataError as exc:
        raise InputError(f"damaged module debug info ({exc})", hint="copy the --module-debug files again") from None
    warnings += _modules_from_debuginfod(prog, request, progress, notice)
    # Modules without debug info still have their symbol tables in the dump
    # (CONFIG_KALLSYMS): frames and addresses in them get names from there.
    try:
        from drgn.helpers.linux.kallsyms import load_module_kallsyms

        module_symbols = load_module_kallsyms(prog)
        prog.register_symbol_finder("module_kallsyms", module_symbols, enable_index=-1)
        symbols = tuple(module_symbols(prog, None, None, False))
    except (LookupError, ValueError, drgn.FaultError, NotImplementedError) as exc:
        warnings.append(f"module symbols from kallsyms not available: {exc}")
        symbols = ()
    warnings += place_modules(prog, request.module_debug, symbols)
    warnings += _unused_module_files(prog, request.module_debug)
    lacking = sorted(m.name for m in prog.modules() if isinstance(m, drgn.RelocatableModule) and m.wants_debug_file())
    if lacking:
        warnings.append(
            f"modules without debug info: {', '.join(lacking[:20])}{' and more' if len(lacking) > 20 else ''} "
            "(their frames are named from the dump's kallsyms, without types or source lines; give "
            "--module-debug FILE.ko or the distribution's debug package)"
        )
    vmlinux_path = main.debug_file_path
    module_files = tuple(
        (m.name, m.debug_file_path)
        for m in prog.modules()
        if isinstance(m, drgn.RelocatableModule) and m.debug_file_path
    )
    return OpenedDump(prog, header, vmlinux_path, warnings, symbols, via, module_files)


def not_in_dump(exc: Any) -> str:
    """The reason text for a read that hit a page the dump does not hold."""
    address = getattr(exc, "address", None)
    if isinstance(address, int) and (address >> 47) not in (0, 0x1FFFF):
        # x86-64/arm64 48-bit virtual addresses: no memory can be there, captured or not.
        return f"no memory at {address:#x}: not a canonical address (the pointer is bogus)"
    where = f" at {address:#x}" if isinstance(address, int) else ""
    return f"not in dump: memory{where} was not captured (filtered by makedumpfile or not present)"
