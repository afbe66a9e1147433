"""Issues #19 and #23 as a hostile user tries them: exit codes, outputs that are inputs, evidence stores.

One test (or parametrised case) per numbered defect; each failed before its fix.
"""

from __future__ import annotations

import hashlib
import json
import os
import random
import shutil
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.collectors.test_procfs import FakeTree
from tests.forensics.commands.test_slabwatch_cli import fast_watch, kforensic, kforensic_process
from tests.forensics.test_cli import run
from tests.vmcore_cases import case_names, load_case

CONSOLE = Path("vmcore_fixtures/cases/02-bug-on/console.log")
SNAPSHOTS = Path("vmcore_fixtures/cases/08-slab-leak/snapshots")


def _digest(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _one_error_line(stderr: str, *needles: str) -> None:
    # slab-watch may warn about its sampling plan before the error (#27); the error is still one line
    lines = [line for line in stderr.splitlines() if not line.startswith("kforensic: warning: ")]
    assert lines and lines[0].startswith("kforensic: error: "), stderr
    assert len(lines) <= 2 and "Traceback" not in stderr, stderr
    for needle in needles:
        assert needle in lines[0], stderr


@pytest.fixture(scope="module")
def store_file(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real store: the slab-leak fixture's snapshots imported."""
    store = tmp_path_factory.mktemp("store") / "slab.sqlite"
    done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(store), "--no-analysis")
    assert done.returncode == 0, done.stderr
    return store


def _mount_tmpfs(where: Path, size: str) -> None:
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0 or shutil.which("mount") is None:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], check=False)
    if done.returncode != 0:
        pytest.skip("cannot mount a tmpfs here (no CAP_SYS_ADMIN)")


@pytest.fixture
def mount_point(tmp_path: Path) -> Iterator[Path]:
    where = tmp_path / "mnt"
    yield where
    subprocess.run(["umount", "-l", str(where)], check=False, capture_output=True)


# ---------------------------------------------------------------- #19.4 exit codes


def test_debug_keeps_the_documented_exit_code(tmp_path: Path) -> None:
    done = run("dmesg", tmp_path / "missing.log", "--debug")
    assert done.returncode == 3  # was 1 (the --fail-on code) with --debug
    assert "Traceback" not in done.stderr and "kforensic: error: cannot read" in done.stderr  # bad input: no traceback


@pytest.mark.parametrize(
    "args",
    [
        ("trace", str(CONSOLE), "--bucket-ms", "0"),
        ("trace", str(CONSOLE), "--hog-ms", "nan"),
        ("dmesg", str(CONSOLE), "--no-such-option"),
        ("leaks", "--store", "x", "--run", "one"),
    ],
)
def test_bad_option_values_use_the_error_format(args: tuple[str, ...]) -> None:
    done = kforensic_process(*args)
    assert done.returncode == 2
    _one_error_line(done.stderr)
    assert "Usage:" not in done.stderr


def test_path_with_a_non_utf8_byte(tmp_path: Path) -> None:
    bad = os.fsdecode(bytes(tmp_path) + b"/k\xffern.log")
    done = run("dmesg", bad)
    assert done.returncode == 3
    _one_error_line(done.stderr, "cannot read")
    shutil.copy(CONSOLE, bad)
    out = os.fsdecode(bytes(tmp_path) + b"/r\xfe.json")
    done = run("dmesg", bad, "--format", "json", "-o", out)
    assert done.returncode == 0, done.stderr
    assert b"\\udcff" in Path(out).read_bytes()  # the byte is shown escaped, the file is valid UTF-8
    Path(out).read_bytes().decode("utf-8")


def test_json_nested_100000_deep_is_exit_3(tmp_path: Path) -> None:
    deep = tmp_path / "deep.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    done = kforensic("report", "--from", str(deep))
    assert done.returncode == 3  # was RecursionError, exit 4
    _one_error_line(done.stderr, "nested too deeply")


def test_slab_export_of_an_unknown_run_is_exit_2(store_file: Path) -> None:
    done = kforensic("slab-export", "--store", str(store_file), "--run", "999")
    assert done.returncode == 2 and done.stdout == ""  # was a bare CSV header, exit 0
    _one_error_line(done.stderr, "no run 999")


def test_plots_pointing_at_a_file_is_exit_3(store_file: Path, tmp_path: Path) -> None:
    plots = tmp_path / "plots"
    plots.write_text("a file")
    done = kforensic("leaks", "--store", str(store_file), "--plots", str(plots))
    assert done.returncode == 3  # was FileExistsError, exit 4
    _one_error_line(done.stderr, "it is a file")


# ---------------------------------------------------------------- #23.1 an output that is an input


def _links(tmp_path: Path, source: Path) -> list[Path]:
    sym = tmp_path / "via-symlink"
    sym.symlink_to(source)
    hard = tmp_path / "via-hardlink"
    os.link(source, hard)
    return [source, sym, hard]


@pytest.mark.parametrize("command", ["dmesg", "trace --save-text", "trace -o", "report", "report --html"])
def test_output_that_is_the_log_or_trace_input_is_refused(tmp_path: Path, command: str) -> None:
    source = tmp_path / "input.txt"
    if command.startswith("trace"):
        source.write_bytes(Path("tests/data/traces/kf.ftrace.txt.gz").read_bytes())
    else:
        shutil.copy(CONSOLE, source)
    before = _digest(source)
    for target in _links(tmp_path, source):
        name, _, flag = command.partition(" ")
        if name == "report":
            args = ["report", "--dmesg", str(source), flag or "-o", str(target)]
        else:
            args = [name, str(source), flag or "-o", str(target)]
        done = kforensic(*args)
        assert done.returncode == 2, (target, done.stderr)
        _one_error_line(done.stderr, "is the input", str(source))
        assert _digest(source) == before


@pytest.mark.parametrize("flag", ["-o", "--html", "--json", "--digest"])
def test_report_output_in_a_missing_directory_is_refused_before_anything_is_made(tmp_path: Path, flag: str) -> None:
    """A typo'd ``report -o /ect/incident.md`` made /ect (and its -plots directory) and exited 0; the other commands'
    outputs, and report's own --html, refused such a path (exit 3).  Nothing is created now (review 7, K)."""
    missing = tmp_path / "no" / "such"
    target = missing / "incident.md"
    args = ["report", "--trace", "tests/data/traces/kf.ftrace.txt.gz", flag, str(target)]
    if flag != "-o":
        args += ["-o", str(tmp_path / "page.md")]
    done = kforensic(*args)
    assert done.returncode == 3, done.stderr
    _one_error_line(done.stderr, f"cannot write {target}: its directory {missing} does not exist")
    assert not (tmp_path / "no").exists()
    assert not (tmp_path / "page.md").exists() and not (tmp_path / "page-plots").exists()
    # A part of the path that is a file is said to be one (it was "does not exist": review 8, 21)
    (tmp_path / "file").write_text("x")
    args[args.index(str(target))] = str(tmp_path / "file" / "x.md")
    done = kforensic(*args)
    assert done.returncode == 3, done.stderr
    _one_error_line(done.stderr, f"its directory {tmp_path / 'file'} is not a directory")


@pytest.mark.parametrize("command", ["leaks", "slab-export", "report"])
def test_output_that_is_the_store_is_refused(tmp_path: Path, store_file: Path, command: str) -> None:
    store = tmp_path / "s.sqlite"
    shutil.copy(store_file, store)
    before = _digest(store)
    for target in _links(tmp_path, store):
        done = kforensic(command, "--store", str(store), "-o", str(target))
        assert done.returncode == 2, (target, done.stderr)
        _one_error_line(done.stderr, "is the input")
        assert _digest(store) == before
        # refused before the analysis: no figures left beside the refused output (report left them in TARGET-plots)
        assert sorted(p.name for p in tmp_path.iterdir()) == ["s.sqlite", "via-hardlink", "via-symlink"], target


# ---------------------------------------------------------------- #19.2 evidence stays as it is


def test_reading_a_store_creates_no_file_beside_it(tmp_path: Path, store_file: Path) -> None:
    store = tmp_path / "evidence.sqlite"
    shutil.copy(store_file, store)
    before = _digest(store)
    for args in (["leaks", "--store", str(store)], ["slab-export", "--store", str(store)]):
        done = kforensic(*args)
        assert done.returncode in (0, 1), done.stderr
    assert sorted(p.name for p in tmp_path.iterdir()) == ["evidence.sqlite"]  # no -wal, no -shm
    assert _digest(store) == before


def test_store_on_a_read_only_mount_is_analysed(mount_point: Path, store_file: Path) -> None:
    _mount_tmpfs(mount_point, "64m")
    shutil.copy(store_file, mount_point / "evidence.sqlite")
    subprocess.run(["mount", "-o", "remount,ro", str(mount_point)], check=True)
    done = kforensic("leaks", "--store", str(mount_point / "evidence.sqlite"))
    assert done.returncode in (0, 1), done.stderr  # was: not a slab-watch store (unable to open database file)
    assert "kforensic leaks" in done.stdout
    assert sorted(p.name for p in mount_point.iterdir()) == ["evidence.sqlite"]


def _damage(store: Path) -> None:
    data = bytearray(store.read_bytes())
    page = 4096
    middle = len(data) // page // 2 * page
    rng = random.Random(7)
    data[middle : middle + 3 * page] = bytes(rng.randrange(256) for _ in range(3 * page))
    store.write_bytes(bytes(data))


def test_a_damaged_store_is_exit_3_and_never_appended_to(tmp_path: Path, store_file: Path) -> None:
    store = tmp_path / "damaged.sqlite"
    shutil.copy(store_file, store)
    _damage(store)
    before = _digest(store)
    done = kforensic("leaks", "--store", str(store))
    assert done.returncode == 3, done.stderr  # was exit 4
    _one_error_line(done.stderr)
    done = kforensic("slab-import", str(SNAPSHOTS), "--store", str(store), "--force", "--no-analysis")
    assert done.returncode == 3, done.stderr  # was: appended into the damaged file
    _one_error_line(done.stderr, "damaged")
    assert ".recover" in done.stderr
    assert _digest(store) == before


def test_a_full_disk_during_slab_watch_is_exit_3_and_leaves_no_empty_store(mount_point: Path) -> None:
    _mount_tmpfs(mount_point, "64k")
    filler = mount_point / "filler"
    with filler.open("wb") as out, pytest.raises(OSError):
        out.write(b"\0" * (1 << 20))
        out.flush()
    tree = FakeTree(mount_point.parent / "root")
    done = fast_watch(tree, mount_point / "s.sqlite")
    assert done.returncode == 3, done.stderr  # was exit 4 and a 0-byte store
    _one_error_line(done.stderr)
    assert not (mount_point / "s.sqlite").exists()


# ---------------------------------------------------------------- #19.4 vmcore inputs


def _vmcore_case() -> object:
    names = case_names()
    if not names:
        pytest.skip("no vmcore fixtures committed")
    return load_case(names[0])


def test_bit_flipped_vmlinux_is_exit_3(tmp_path: Path) -> None:
    case = _vmcore_case()
    flipped = tmp_path / "vmlinux"
    data = bytearray(case.vmlinux.read_bytes())  # type: ignore[attr-defined]
    rng = random.Random(1)
    for _ in range(2000):
        i = rng.randrange(len(data))
        data[i] ^= 1 << rng.randrange(8)
    flipped.write_bytes(bytes(data))
    done = run("vmcore", case.vmcore, "--vmlinux", flipped)  # type: ignore[attr-defined]
    assert done.returncode == 3, done.stderr  # was BadDataError, exit 4
    _one_error_line(done.stderr, "damaged")


def test_module_debug_that_is_not_a_module_is_said(tmp_path: Path) -> None:
    case = _vmcore_case()
    text = tmp_path / "notes.ko"
    text.write_text("not a module\n")
    args = ["vmcore", case.vmcore, "--vmlinux", case.vmlinux]  # type: ignore[attr-defined]
    done = run(*args, "--module-debug", text)
    assert done.returncode == 3
    _one_error_line(done.stderr, "not an ELF file")
    elf = Path(shutil.which("sqlite3") or "/bin/ls").resolve()
    done = run(*args, "--module-debug", elf, "--format", "json")
    assert done.returncode == 0, done.stderr  # a module not in this dump is normal: said, not refused
    warnings = json.loads(done.stdout)["warnings"]
    assert any(f"--module-debug {elf} was not used: it matches no module of the dump" in w for w in warnings)


def test_directory_with_two_dumps_asks_which(tmp_path: Path) -> None:
    (tmp_path / "vmcore").write_bytes(b"KDUMP   ")
    (tmp_path / "dump.202611300712").write_bytes(b"KDUMP   ")
    done = run("vmcore", tmp_path)
    assert done.returncode == 2
    _one_error_line(done.stderr, "holds 2 dumps", "vmcore", "dump.202611300712")


# ---------------------------------------------------------------- #19.4 kdump config


def test_immutable_kdump_config_leaves_no_backup(tmp_path: Path) -> None:
    import datetime as dt

    from collectors.kdump.apply import apply_changes
    from forensics.errors import InputError

    if shutil.which("chattr") is None or os.geteuid() != 0:
        pytest.skip("chattr +i needs root and e2fsprogs")
    etc = tmp_path / "etc" / "default"
    etc.mkdir(parents=True)
    config = etc / "kdump-tools"
    config.write_text("USE_KDUMP=0\n")
    if subprocess.run(["chattr", "+i", str(config)], check=False, capture_output=True).returncode != 0:
        pytest.skip("this file system has no immutable attribute")

    class Change:
        path = "/etc/default/kdump-tools"
        old = "USE_KDUMP=0\n"
        new = "USE_KDUMP=1\n"

    try:
        with pytest.raises(InputError):
            apply_changes([Change()], tmp_path, dt.datetime.now(dt.UTC))
        assert sorted(p.name for p in etc.iterdir()) == ["kdump-tools"]  # was: a stray .bak
    finally:
        subprocess.run(["chattr", "-i", str(config)], check=False)


# ---------------------------------------------------------------- #23.3 numeric options are finite


@pytest.mark.parametrize(
    "args",
    [
        ("slab-watch", "--hours", "nan"),
        ("slab-watch", "--hours", "-1"),
        ("slab-watch", "--duration", "9" * 400),
        ("leaks", "--min-rate", "nan"),
        ("leaks", "--min-rate", "inf"),
        ("leaks", "--min-rate", "-5"),
        ("trace", str(CONSOLE), "--hog-ms", "nan"),
        ("trace", str(CONSOLE), "--latency-ms", "inf"),
        ("trace", str(CONSOLE), "--irq-ms", "-1"),
        ("trace", str(CONSOLE), "--bucket-ms", "0"),
        ("trace", str(CONSOLE), "--around", "nan:100"),
        ("trace", str(CONSOLE), "--window", "0:inf"),
    ],
    ids=" ".join,
)
def test_numeric_options_reject_nan_inf_and_negative(tmp_path: Path, args: tuple[str, ...]) -> None:
    extra = ["--store", str(tmp_path / "s.sqlite")] if args[0] in ("slab-watch", "leaks") else []
    done = kforensic(*args, *extra)
    assert done.returncode == 2, done.stderr  # slab-watch --hours nan was exit 4; leaks --min-rate nan exit 0
    _one_error_line(done.stderr)
    assert not (tmp_path / "s.sqlite").exists()


# ---------------------------------------------------------------- #23.5 a failed run keeps the previous output


def test_save_text_on_a_full_disk_keeps_the_previous_file(mount_point: Path) -> None:
    _mount_tmpfs(mount_point, "256k")
    saved = mount_point / "r.txt"
    saved.write_text("the previous saved text\n")
    with (mount_point / "filler").open("wb") as out, pytest.raises(OSError):
        out.write(b"\0" * (1 << 20))
        out.flush()
    done = kforensic("trace", "tests/data/traces/kf.ftrace.txt.gz", "--save-text", str(saved))
    assert done.returncode == 3, done.stderr  # was: r.txt overwritten with 4096 bytes of the new text
    _one_error_line(done.stderr, "No space left")
    assert saved.read_text() == "the previous saved text\n"
    assert sorted(p.name for p in mount_point.iterdir()) == ["filler", "r.txt"]
