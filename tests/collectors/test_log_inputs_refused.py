"""What is not a kernel log is refused (exit 3, one line) by every command that reads logs, not "No problem found".

A reviewer found `dmesg` and `report --dmesg` saying "No problem found" (exit 0, also with ``--fail-on low``) of
a bzip2, lz4 or zip crash log and of random bytes.  bzip2 is now read as gzip, xz and zstd are; the compressed
files and archives not read as they are, refused by their signature; bytes that are not text where no kernel
log line is, refused as no kernel log.  A text file without a report is still read, and says what was examined.
"""

from __future__ import annotations

import bz2
import gzip
import io
import random
import re
import shutil
import subprocess
import tarfile
import zipfile
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from collectors import kernel_log
from collectors.kernel_log import TEXT_SAMPLE, log_chunks, open_log
from forensics.errors import InputError
from tests.forensics.commands.test_slabwatch_cli import kforensic

ROOT = Path(__file__).resolve().parents[2]
LOG = ROOT / "vmcore_fixtures/cases/01-null-member/dmesg.txt"


def _random(size: int, seed: int = 7) -> bytes:
    return random.Random(seed).randbytes(size)


def _zip(data: bytes) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr("dmesg.txt", data)
    return out.getvalue()


def _tar(data: bytes) -> bytes:
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as t:
        info = tarfile.TarInfo("dmesg.txt")
        info.size = len(data)
        t.addfile(info, io.BytesIO(data))
    return out.getvalue()


def _lz4(data: bytes, tmp: Path) -> bytes:
    """The lz4 tool's frame when it is installed, else the frame's magic and header bytes before the text (a
    small file's lz4 frame holds its text as literals: the text alone would read as a log)."""
    if shutil.which("lz4") is not None:
        done = subprocess.run(["lz4", "-c"], input=data, capture_output=True, check=True)
        return done.stdout
    return b"\x04\x22\x4d\x18\x64\x40\xa7" + data


@pytest.fixture
def log_text() -> bytes:
    if not LOG.is_file():
        pytest.skip("no fixture dmesg")
    return LOG.read_bytes()


def test_a_bzip2_log_is_read_as_the_log(tmp_path: Path, log_text: bytes) -> None:
    packed = tmp_path / "d.1"
    packed.write_bytes(bz2.compress(log_text))
    plain, squeezed = (
        kforensic("dmesg", str(LOG), "--fail-on", "low"),
        kforensic("dmesg", str(packed), "--fail-on", "low"),
    )
    assert plain.returncode == squeezed.returncode == 1, squeezed.stderr
    assert "(decompressed bzip2)" in squeezed.stdout and "kf_null_member_read" in squeezed.stdout


@pytest.mark.parametrize(
    ("name", "what", "unpack"),
    [
        ("lz4", "lz4-compressed", "lz4 -d FILE"),
        ("zip", "a zip archive", "unzip FILE"),
        ("tar", "a tar archive", "tar -xf FILE"),
        ("7z", "a 7-Zip archive", "7z x FILE"),
        ("Z", "compress(1)-compressed", "uncompress FILE"),
    ],
)
def test_an_archive_not_read_as_it_is_is_refused_by_every_log_reader(
    tmp_path: Path, log_text: bytes, name: str, what: str, unpack: str
) -> None:
    made = {
        "lz4": lambda: _lz4(log_text, tmp_path),
        "zip": lambda: _zip(log_text),
        "tar": lambda: _tar(log_text),
        "7z": lambda: b"7z\xbc\xaf\x27\x1c\x00\x04" + _random(4096),  # the signature and a version: no writer here
        "Z": lambda: b"\x1f\x9d\x90" + _random(4096),
    }
    path = tmp_path / f"crash.{name}"
    path.write_bytes(made[name]())
    for command in (("dmesg",), ("dmesg", "--fail-on", "low"), ("report", "--dmesg")):
        done = kforensic(*command, str(path))
        assert done.returncode == 3, (command, done.stdout, done.stderr)
        assert f"{path}: not a kernel log as it is: {what}" in done.stderr
        assert f"unpack it first (`{unpack}`)" in done.stderr
        assert "No problem found" not in done.stdout
    # the same archive gzipped: judged on the decompressed bytes
    packed = tmp_path / f"crash.{name}.gz"
    packed.write_bytes(gzip.compress(path.read_bytes()))
    assert f"not a kernel log as it is: {what}" in kforensic("dmesg", str(packed)).stderr


@pytest.mark.parametrize("kind", ["random", "zeros", "bzip2 of random"])
def test_bytes_that_are_not_text_without_a_kernel_line_are_not_a_kernel_log(tmp_path: Path, kind: str) -> None:
    data = {"random": _random(100_000), "zeros": bytes(100_000), "bzip2 of random": bz2.compress(_random(100_000))}
    path = tmp_path / "crash.log"
    path.write_bytes(data[kind])
    for command in (("dmesg",), ("dmesg", "--fail-on", "low"), ("report", "--dmesg")):
        done = kforensic(*command, str(path))
        assert done.returncode == 3, (command, done.stdout, done.stderr)
        assert done.stderr.startswith(f"kforensic: error: {path}") and ": not a kernel log (" in done.stderr
        assert "no line of it is a kernel log line" in done.stderr
    # --signatures: one host's log unreadable, said so, the others read
    hosts = tmp_path / "hosts"
    hosts.mkdir()
    (hosts / "bad.log").write_bytes(data[kind])
    (hosts / "good.log").write_bytes(LOG.read_bytes())
    done = kforensic("dmesg", "--signatures", str(hosts), "--workers", "0")
    assert "bad.log: not a kernel log (" in done.stdout and "kf_null_member_read" in done.stdout, done.stdout


def test_nul_bytes_read_as_utf16_are_said_so(tmp_path: Path) -> None:
    """Three NULs and a newline are sniffed as UTF-16 BE: 4 bytes of the file are 2 characters.  It said "50% of its
    first 2 bytes", bytes the file does not have."""
    path = tmp_path / "nul.txt"
    path.write_bytes(b"\x00\x00\x00\n")
    done = kforensic("dmesg", str(path))
    assert done.returncode == 3, done.stderr
    assert "(50% of the first 2 bytes of its text, read as UTF-16-BE, are control bytes or not UTF-16-BE" in done.stderr


def test_a_log_after_binary_bytes_is_read(tmp_path: Path, log_text: bytes) -> None:
    """Bytes that are not text at the start (a serial console's noise, a cut capture) with a kernel log past the
    judged sample: the log's lines are found and its reports read."""
    path = tmp_path / "console.log"
    path.write_bytes(_random(2 * TEXT_SAMPLE) + b"\n" + log_text)
    done = kforensic("dmesg", str(path), "--fail-on", "low")
    assert done.returncode == 1 and "kf_null_member_read" in done.stdout, done.stderr


TRACES = ROOT / "tests/data/traces"


@pytest.mark.parametrize(
    ("name", "made", "said"),
    [
        ("ftrace", lambda: gzip.decompress((TRACES / "kf.ftrace.txt.gz").read_bytes()), "; it looks like ftrace text"),
        ("perf", lambda: gzip.decompress((TRACES / "kf.perf-script.txt.gz").read_bytes()), "looks like perf script"),
        ("notes", lambda: "a file of text, no kernel line, café\n".encode() * 50 + b"\x00\x01 control bytes\n", ""),
        ("empty", lambda: b"", "it is empty, so nothing in it could show a kernel problem"),
        ("blank", lambda: b"\n\n  \n", "not a kernel log: it holds only blank lines (3), so nothing"),
        # One line shaped as a kernel message ("Word: text") made these a console without time stamps: "No problem
        # found", exit 0.
        (
            "todo",
            lambda: b"Incident notes\n\nTodo: ask the DB team\nThe web servers were slow.\nNo kernel message.\n",
            "",
        ),
        ("mail", lambda: b"From: alice@example.com\nSubject: server down\n\nHi, the box rebooted at night.\n", ""),
        ("yaml", lambda: b"name: CI\non: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n", ""),
        # Flat "key: value" lines are shaped as kernel messages ("subsystem: text"): /proc/meminfo with one space
        # after its colons, a configuration dump, read as a console without time stamps, said "No problem found".
        (
            "meminfo",
            lambda: b"MemTotal: 16384000 kB\nMemFree: 1024000 kB\nMemAvailable: 2048000 kB\nBuffers: 100 kB\n",
            "; it looks like key: value lines (a /proc or tracefs file such as /proc/meminfo, or a configuration)",
        ),
        # tracefs's per_cpu/cpuN/stats: keys of several words ("oldest event ts"), read as a console (ue22 #12).
        (
            "trace-stats",
            lambda: (
                b"entries: 925\noverrun: 0\ncommit overrun: 0\nbytes: 33608\noldest event ts:   361.707048\n"
                b"now ts:   361.872606\ndropped events: 0\nread events: 0\n"
            ),
            "; it looks like key: value lines",
        ),
        (
            "config",
            lambda: (
                b"# kdump\nname: web01\nkernel: 6.1.0\ncrashkernel: 256M\nkdump_enabled: yes\npath: /var/crash\n"
                b"core_collector: makedumpfile -l --message-level 7\n"
            ),
            "; it looks like key: value lines",
        ),
        ("status", lambda: b"Name:\tbash\nUmask:\t0022\nState:\tS (sleeping)\nTgid:\t4242\nGroups:\n", "key: value"),
        (
            "app-log",
            lambda: (
                b"2026-12-07 14:30:05,456 ERROR worker crashed\nTraceback (most recent call last):\n"
                b'  File "w.py", line 3, in <module>\n    run()\nRuntimeError: out of memory\n'
            ),
            "",
        ),
    ],
)
def test_text_without_a_kernel_line_is_not_a_kernel_log(tmp_path: Path, name: str, made: object, said: str) -> None:
    """A text file of another kind given to ``dmesg`` or ``report --dmesg`` (an ftrace trace, ``perf script`` text,
    notes, an empty file) said "No problem found", exit 0 (also with ``--fail-on``), and ``report`` "found no known
    kernel problem": a verdict on a log no kernel wrote, where nothing could have been found.  Now refused, exit 3,
    one line saying how many lines it examined and what it looks like, with the command that reads it."""
    path = tmp_path / f"{name}.txt"
    path.write_bytes(made())  # type: ignore[operator]
    for command in (("dmesg",), ("dmesg", "--fail-on", "low"), ("report", "--dmesg")):
        done = kforensic(*command, str(path))
        assert done.returncode == 3, (command, done.stdout, done.stderr)
        assert done.stderr.startswith(f"kforensic: error: {path}: not a kernel log: "), done.stderr
        assert said in done.stderr and "No problem found" not in done.stdout
        assert "no known kernel problem" not in done.stdout
    if name in ("ftrace", "notes"):
        lines = made().count(b"\n")  # type: ignore[operator]
        assert f"none of its {lines:,} lines is a kernel log line" in kforensic("dmesg", str(path)).stderr
    if name in ("ftrace", "perf"):
        reader = "kforensic trace" if name == "ftrace" else "kforensic profile"
        assert f"read it with `{reader}`" in kforensic("dmesg", str(path)).stderr


def _report_bodies() -> list[str]:
    """The header lines of the fixtures' reports, without their printk time: what a crash notifier quotes."""
    bodies = []
    for case in ("01-null-member", "02-bug-on", "03-warn-on"):
        path = ROOT / "vmcore_fixtures/cases" / case / "dmesg.txt"
        if not path.is_file():
            pytest.skip("no fixture dmesg")
        bodies += [
            line.split("] ", 1)[1]
            for line in path.read_text().splitlines()
            if re.search(r"\] (?:BUG: |kernel BUG at |WARNING: |Oops: )", line)
        ]
    return bodies


def test_other_programs_syslog_lines_quoting_reports_are_not_a_kernel_log(tmp_path: Path) -> None:
    """Syslog lines of other programs (kdumpctl, abrt) quoting reports' titles were counted as kernel log lines by
    their words ("BUG: ", "WARNING: "): "No problem found", exit 0, and "the log has no syslog prefixes naming the
    host" where they all name one (ue23 #13), while 50 cron lines were refused.  Now refused, exit 3, saying what
    its lines are and what to give."""
    bodies = _report_bodies()
    assert len(bodies) >= 4
    path = tmp_path / "user.log"
    path.write_text("".join(f"Dec  7 10:00:0{i % 10} kfhost kdumpctl[812]: {b}\n" for i, b in enumerate(bodies)))
    for command in (("dmesg",), ("report", "--dmesg")):
        done = kforensic(*command, str(path))
        assert done.returncode == 3, (command, done.stdout, done.stderr)
        first = done.stderr.splitlines()[0]
        assert first.endswith(
            f"none of its {len(bodies)} lines is a kernel log line ({len(bodies)} are other programs' syslog lines, "
            "whose tag is not 'kernel:')"
        ), first
        assert "journalctl -k" in done.stderr
    # The same lines among the kernel's own, tagged "kernel:": the kernel's report is read, its host said.
    log = (ROOT / "vmcore_fixtures/cases/02-bug-on/dmesg.txt").read_text().splitlines()
    path.write_text(path.read_text() + "".join(f"Dec  7 10:00:10 kfhost kernel: {line}\n" for line in log))
    done = kforensic("dmesg", str(path))
    assert done.returncode == 0, done.stderr
    assert "kernel BUG in kf_buffer_put" in done.stdout and "host kfhost" in done.stdout


@pytest.mark.parametrize("form", ["printk", "iso", "dmesg -T", "dmesg -x", "bare", "captured"])
def test_a_kernel_log_without_reports_is_read_and_says_what_was_examined(
    tmp_path: Path, log_text: bytes, form: str
) -> None:
    """A log that could have shown a report and shows none is read: "No problem found", with what was examined.
    The fixture's boot lines without the banner, in each prefix form (no report word in them: the prefix alone
    makes them kernel log lines), and without any prefix, as syzkaller's consoles print them ("BIOS-e820: [mem
    ...] usable": kernel messages; two such logs of the syzkaller corpus were refused by a first version)."""
    lines = [line for line in log_text.decode().splitlines()[:120] if "Linux version" not in line]
    assert all(line.startswith("[") for line in lines[:5])

    def stamped(line: str) -> str:
        body = line.split("] ", 1)[1] if line.startswith("[") else line
        return {
            "printk": line,
            "iso": f"2026-12-03T15:15:11+0000 web01 kernel: {body}",
            "dmesg -T": f"[Thu Dec  3 15:15:11 2026] {body}",
            "dmesg -x": f"kern  :info  : {line}",
            "bare": body,
            "captured": f"[2026-12-03 15:15:11.123] {line}",  # minicom's stamp of the console line
        }[form]

    path = tmp_path / "boot.log"
    path.write_text("".join(stamped(line) + "\n" for line in lines))
    done = kforensic("dmesg", str(path), "--fail-on", "low", "--format", "md")
    assert done.returncode == 0, done.stderr
    assert "No problem found" in done.stdout
    assert f"kernel log {path}: {len(lines)} lines, 0 report(s) and 0 event(s) kept" in done.stdout


@pytest.mark.parametrize(
    "text",
    [
        b"\nINFO: NMI handler (perf_event_nmi_handler) took too long to run: 2.277 msecs\n",
        b"\n\nEXT4-fs: Warning: mounting with an experimental mount option 'dioread_nolock'\n"
        b"EXT4-fs (loop4): 1 truncate cleaned up\nEXT4-fs (loop4): mounted filesystem without journal.\n",
        # Each line "word: text" with a word of its own, as a key: value file's: their values are sentences.
        b"kf_buggy: loaded\nrandom: crng init done\nclocksource: Switched to clocksource tsc\n",
    ],
    ids=["one-line", "ext4", "subsystems"],
)
def test_a_cut_console_without_time_stamps_is_read(tmp_path: Path, text: bytes) -> None:
    """Logs cut from syzkaller's consoles, a few kernel messages without any prefix and no report: still read."""
    path = tmp_path / "console.log"
    path.write_bytes(text)
    done = kforensic("dmesg", str(path))
    assert done.returncode == 0, done.stderr
    assert "No problem found" in done.stdout


def test_the_reader_refuses_at_the_end_of_the_input(tmp_path: Path) -> None:
    """The check is the reader's (collectors/kernel_log.py): every command that reads logs goes through it."""
    path = tmp_path / "noise"
    path.write_bytes(_random(5000))
    with pytest.raises(InputError, match="not a kernel log") as raised, open_log(str(path)) as tracked:
        list(log_chunks(tracked))
    assert "decompress it first" in (raised.value.hint or "")
    # one kernel line anywhere is enough for the log to be read
    path.write_bytes(_random(5000) + b"\n[   12.345678] kf: hello\n" + _random(5000))
    with open_log(str(path)) as tracked:
        assert list(log_chunks(tracked))


def test_a_dumps_own_log_is_never_refused() -> None:
    """The kernel log makedumpfile extracts from a dump is the dump's whatever it holds (an empty one: the dump's
    log buffer was not in it): the vmcore analysis goes on with it, no refusal of a file the user did not give."""
    from forensics.pipelines.dmesg import analyse_log_bytes

    result = analyse_log_bytes("vmcore#log", b"")
    assert result.sources[0].lines == 0 and not result.sources[0].reports


# Each kind of kernel log line (each prefix, each word, the banner), near misses of them, and the bytes around: a text
# of near misses and bytes holds no kernel line unless the pieces make one; one line piece put in at the text's start,
# after a newline or within a line holds one or not by where it is.
_LINE_PIECES = [
    *(b"[ 12.345678]", b"<6>[ 0.000000]", b"<123>[1.5]", b"6,1234,5678,-;", b"12,3,4,abcdefgh;", b"<4>"),
    *(b"[Mon Nov 30 06:55:29 2026]", b"kern  :warn  : ", b"user1:info: ", b" kernel: ", b"Call Trace:", b"BUG: "),
    *(b"WARNING: ", b"Oops: ", b"Kernel panic - not syncing", b"Linux version 6"),
]
_NEAR_MISSES = [
    *(b"6,1,2,abcdefghi;", b"<x>", b"[Mon Nov 30 6:55:29 2026]", b"daemon :err :", b"kernel: ", b"BUG:", b"[1.]"),
    *(b"Kernel panic", b"Linux version x", b"kern  :warm  : ", b"[", b"]", b"<", b">", b"\n", b"\n", b"\r\n", b" "),
    *(b"A", b"z", b"0", b"7", b",", b";", b":", b".", b"\x00", b"\xff"),
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.sampled_from(_NEAR_MISSES), max_size=16),
    st.lists(st.tuples(st.integers(0, 16), st.sampled_from([b"", b"\n"]), st.sampled_from(_LINE_PIECES)), max_size=1),
)
def test_the_kernel_line_search_finds_what_the_one_pattern_finds(
    pieces: list[bytes], lines: list[tuple[int, bytes, bytes]]
) -> None:
    """collectors.kernel_log._kernel_line_in (prefixes after a newline, words by bytes' search: a text without a
    kernel line is searched to its end) says what one multi-line pattern of the same prefixes and words says."""
    at_line_start = rb"(?m)^(?:" + b"|".join(kernel_log._LINE_PREFIXES) + rb")"
    one = re.compile(b"|".join([at_line_start, *map(re.escape, kernel_log._LINE_WORDS), kernel_log._BANNER.pattern]))
    for at, newline, line in lines:
        pieces.insert(at, newline + line)
    text = b"".join(pieces)
    assert kernel_log._kernel_line_in(text) == (one.search(text) is not None), text


@pytest.mark.parametrize(
    "header",
    [
        b"",
        b"-- Logs begin at Mon 2026-12-07 08:00:00 UTC, end at Mon 2026-12-07 09:00:00 UTC. --\n",
        b"-- Journal begins at Mon 2026-12-07 08:00:00 UTC, ends at Mon 2026-12-07 09:00:00 UTC. --\n",
    ],
    ids=["v250+", "before-v246", "v246-v249"],
)
def test_journalctls_no_entries_is_said_as_such(tmp_path: Path, header: bytes) -> None:
    """``journalctl -k`` where the journal holds no kernel message prints ``-- No entries --``: refused, exit 3, as
    what it is, with where to look (the healthy-machine review of 2026-12-07, 13: "none of its 1 lines is a kernel
    log line" was true but did not say why).  systemd before v250 prints the journal's span first (review ue16 #4:
    "none of its 2 lines is a kernel log line")."""
    log = tmp_path / "journal.txt"
    log.write_bytes(header + b"-- No entries --\n")
    done = kforensic("dmesg", str(log))
    assert done.returncode == 3, done
    assert f"{log}: not a kernel log: it is journalctl's '-- No entries --'" in done.stderr
    assert "journalctl --list-boots" in done.stderr and len(done.stderr.splitlines()) == 2
