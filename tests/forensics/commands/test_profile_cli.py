"""``kforensic profile`` end to end: outputs, digest size, filters, diff, report merge, exit codes and bad input.

Real processes (``run``) for what a process is: standard input, each exit status's class (0, 1 for --fail-on, 2 a
usage error, 3 bad input), the report merged by another run, the imports of a small profile; the tests that read
what a run says of a recording run it in this process through the CLI's real entry (``kf``: tests.helpers.cli_run,
its error boundary, exit codes and stderr lines as a process has them)."""

from __future__ import annotations

import gzip
import json
import os
import random
import stat
import subprocess
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import pytest

from forensics.serialize import incident_from_dict
from tests.helpers import assert_evidence_resolves, cli_run

DATA = Path(__file__).resolve().parents[2] / "data" / "profile"
KFORENSIC = [sys.executable, "-m", "forensics"]


def run(*args: str, stdin: bytes | None = None) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*KFORENSIC, *args], input=stdin, capture_output=True, timeout=120, check=False)


@dataclass(frozen=True)
class Ran:
    """A run's exit status and output, as bytes (as :func:`run` has them)."""

    returncode: int
    stdout: bytes
    stderr: bytes


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Callable[..., Ran]:
    """``kforensic ARGS`` in this process, through the CLI's real entry (tests.helpers.cli_run), answered as
    :func:`run` answers: a process's start-up and imports are ~0.1 s of CPU a run, the analysis of these recordings
    0.01-0.05 s (issue #28)."""

    def invoke(*args: str) -> Ran:
        ran = cli_run(monkeypatch, capsys, *args)
        return Ran(ran.returncode, ran.stdout.encode(), ran.stderr.encode())

    return invoke


def _plain(tmp_path: Path, name: str) -> Path:
    out = tmp_path / f"{name}.perf.txt"
    out.write_bytes(gzip.decompress((DATA / f"{name}.perf.txt.gz").read_bytes()))
    return out


def test_json_digest_is_bounded_and_its_findings_resolve(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    src = _plain(tmp_path, "contend")
    proc = kf("profile", str(src), "--format", "json")
    assert proc.returncode == 0, proc.stderr
    assert len(proc.stdout) <= 8192
    doc = json.loads(proc.stdout)
    assert doc["schema"] == "kforensic.profile/1"
    assert doc["self"][0]["name"] == "critical" and doc["samples"] == 543
    assert {c["class"] for c in doc["classes"]} >= {"lock"}
    incident = incident_from_dict(doc, "profile.json")
    assert_evidence_resolves(incident.findings)
    small = kf("profile", str(src), "--format", "json", "--digest-bytes", "4000")
    assert len(small.stdout) <= 4000 and json.loads(small.stdout)["self"]


def test_svg_and_folded_files_are_private_and_folded_matches_the_stored_output(tmp_path: Path) -> None:
    svg, folded = tmp_path / "f.svg", tmp_path / "f.folded"
    proc = run("profile", str(DATA / "kernel.perf.txt.gz"), "--svg", str(svg), "--folded", str(folded), "-f", "md")
    assert proc.returncode == 0, proc.stderr
    assert b"## Hotspots (self)" in proc.stdout and b"copy_folio_from_iter_atomic" in proc.stdout
    for f in (svg, folded):
        assert stat.S_IMODE(os.stat(f).st_mode) == 0o600
    assert folded.read_bytes() == gzip.decompress((DATA / "kernel.folded.gz").read_bytes())
    assert svg.read_text().startswith("<?xml")


def test_stdin_and_filters(tmp_path: Path) -> None:
    text = gzip.decompress((DATA / "mixed.perf.txt.gz").read_bytes())
    proc = run("profile", "-", "--kernel-only", "--format", "json", stdin=text)
    assert proc.returncode == 0, proc.stderr
    doc = json.loads(proc.stdout)
    assert doc["source"] == "<stdin>" and all(r["space"] == "kernel" for r in doc["self"])
    proc = run("profile", "-", "--comm", "nosuch", stdin=text)
    assert proc.returncode == 2 and b"--comm 'nosuch' matches no sample of <stdin>" in proc.stderr


def test_diff_table_and_differential_svg(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    svg = tmp_path / "d.svg"
    proc = kf("profile", str(DATA / "kernel.perf.txt.gz"), "--diff", str(DATA / "mixed.perf.txt.gz"), "--svg", str(svg))
    assert proc.returncode == 0, proc.stderr
    assert b"Difference against the base" in proc.stdout
    assert "Differential flame graph" in svg.read_text()


def test_fail_on_and_report_merge(tmp_path: Path) -> None:
    src = _plain(tmp_path, "contend")
    assert run("profile", str(src), "--fail-on", "medium").returncode == 1
    assert run("profile", str(src), "--fail-on", "high").returncode == 0
    out = tmp_path / "p.json"
    assert run("profile", str(src), "--format", "json", "-o", str(out)).returncode == 0
    merged = run("report", "--from", str(out), "--format", "json")
    assert merged.returncode == 0, merged.stderr
    assert any("lock and futex" in f["title"] for f in json.loads(merged.stdout)["findings"])
    direct = run("report", "--profile", str(src))
    assert direct.returncode == 0, direct.stderr
    assert b"CPU profile" in direct.stdout and b"lock and futex contention" in direct.stdout


@pytest.mark.parametrize(
    ("args", "code", "words"),
    [
        (["--kernel-only", "--user-only"], 2, b"exclude each other"),
        (["--window", "abc"], 2, b"is not T0:T1"),
        (["--window", "9:1"], 2, b"ends before it starts"),
        (["--window", "1:2"], 2, b"--window 1:2 keeps no sample"),
        (["--event", "nosuch"], 2, b"no samples of event"),
    ],
)
def test_usage_errors_are_one_line(args: list[str], code: int, words: bytes) -> None:
    proc = run("profile", str(DATA / "mixed.perf.txt.gz"), *args)
    assert proc.returncode == code and words in proc.stderr
    assert b"Traceback" not in proc.stderr


# A filter that leaves no sample of a recording that has some: the selection is empty, the input is fine (exit 2,
# as --event nosuch and perf report --comm nosuch; these were exit 3, "no samples left after the filters"). The
# line names the option and what it was matched against; the recording's commands, ids or times, shortened.
EMPTY_SELECTIONS = [
    ("mixed", ["--comm", "nosuch"], "--comm 'nosuch' matches no sample of", "its commands: mixed"),
    ("mixed", ["--pid", "999999"], "--pid 999999 matches no sample of", "its pids: 12703"),
    ("mixed", ["--tid", "999999"], "--tid 999999 matches no sample of", "its tids: 12703"),
    ("mixed", ["--window", "1:2"], "--window 1:2 keeps no sample of", "span 357.960163 to 360.002878 s"),
    ("mixed", ["--window", "400:"], "--window 400:inf keeps no sample of", "span 357.960163 to 360.002878 s"),
    ("lost", ["--comm", "python", "--kernel-only"], "--kernel-only keeps no sample of", "only user frames"),
    ("lost", ["--comm", "ThreadPoolSingl", "--user-only"], "--user-only keeps no sample of", "only kernel frames"),
    ("lost", ["--comm", "python", "--pid", "22092"], "--comm 'python' --pid 22092 together keep no", "pytest 22092"),
    # The four samples of exited tasks are one command, ":-1" (they were four, each named with its time).
    ("lost", ["--comm", "nosuch"], "its commands: pytest, python, :-1 (exited task, comm unknown), ch", "and 7 more"),
]


@pytest.mark.parametrize(("workload", "args", "what", "against"), EMPTY_SELECTIONS)
@pytest.mark.parametrize("how", ["report", "folded-alone", "debug"])
def test_a_filter_that_keeps_no_sample_is_a_usage_error(
    workload: str, args: list[str], what: str, against: str, how: str, kf: Callable[..., Ran]
) -> None:
    extra = {"report": [], "folded-alone": ["--folded", "-"], "debug": ["--debug"]}[how]
    proc = kf("profile", str(DATA / f"{workload}.perf.txt.gz"), *args, *extra)
    err = proc.stderr.decode()
    assert proc.returncode == 2 and not proc.stdout, err
    lines = err.strip().splitlines()
    assert "Traceback" not in err  # not under --debug either (docs/cli.md)
    if how == "debug":  # --debug adds one line, where the error was raised; the code stays 2
        assert lines.pop().startswith("kforensic: debug: UsageError raised at "), lines
    assert len(lines) == 2 and lines[1].startswith("kforensic: hint:"), lines
    assert what in lines[0] and against in lines[0], lines[0]


def test_a_filter_that_empties_the_diff_base_names_the_base(kf: Callable[..., Ran]) -> None:
    base = DATA / "kernel.perf.txt.gz"
    proc = kf("profile", str(DATA / "mixed.perf.txt.gz"), "--diff", str(base), "--comm", "mixed")
    assert proc.returncode == 2 and not proc.stdout, proc.stderr
    assert f"--comm 'mixed' matches no sample of {base} (gunzipped); its commands: dd".encode() in proc.stderr


@pytest.mark.parametrize("args", [["--window", "1:2"], ["--comm", "nosuch"], ["--kernel-only"]])
def test_an_input_without_samples_stays_bad_input_whatever_the_filters(
    tmp_path: Path, args: list[str], kf: Callable[..., Ran]
) -> None:
    path = tmp_path / "in"
    path.write_bytes(b"random words\nthat are not samples\n")
    proc = kf("profile", str(path), *args)
    assert proc.returncode == 3 and b"no samples: not perf script text" in proc.stderr, proc.stderr


@pytest.mark.parametrize(
    ("content", "words"),
    [
        (b"", b"is empty"),
        (b"random words\nthat are not samples\n", b"no samples"),
        (b"PERFILE2" + bytes(64), b"perf"),
    ],
)
def test_bad_inputs_exit_3_with_one_line(tmp_path: Path, content: bytes, words: bytes) -> None:
    path = tmp_path / "in"
    path.write_bytes(content)
    proc = run("profile", str(path))
    assert proc.returncode == 3, proc.stderr
    assert words in proc.stderr and b"Traceback" not in proc.stderr
    assert proc.stderr.count(b"\n") <= 2  # the error and its hint


def _slab_store(path: Path) -> Path:
    """A slab-watch store as kforensic makes one (a SQLite file)."""
    from collectors.slabstore import SlabStore

    SlabStore.open_for_writing(path, "host").close()
    return path


@pytest.mark.parametrize(
    ("make", "words"),
    [
        (_slab_store, "not a profile: a SQLite database (a slab store?)"),
        (lambda p: (p.write_bytes(random.Random(1).randbytes(4096)), p)[1], "not a profile: binary, not text (5"),
    ],
    ids=["slab-store", "random-bytes"],
)
def test_a_binary_file_of_another_kind_is_named_in_one_line_not_quoted(
    tmp_path: Path, make: Callable[[Path], Path], words: str, kf: Callable[..., Ran]
) -> None:
    """One line saying what the file is (and for a store, which command reads it), never its bytes as a 'line'."""
    proc = kf("profile", str(make(tmp_path / "in")))
    err = proc.stderr.decode()
    assert proc.returncode == 3 and not proc.stdout, err
    error, hint = err.splitlines()
    assert words in error and "\\x" not in err and "line 1" not in err, err
    assert hint.startswith("kforensic: hint:"), err
    if "SQLite" in error:
        assert "kforensic leaks --store" in hint, hint


def test_no_callchains_and_mixed_events_are_notes(kf: Callable[..., Ran]) -> None:
    flat = kf("profile", str(DATA / "flat.perf.txt.gz"))
    assert flat.returncode == 0 and b"no call chain" in flat.stdout
    events = kf("profile", str(DATA / "events.perf.txt.gz"), "--event", "cpu-clock")
    assert events.returncode == 0 and b"left out page-faults" in events.stdout


def test_missing_output_directory_leaves_nothing(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    proc = kf("profile", str(DATA / "mixed.perf.txt.gz"), "--svg", str(tmp_path / "no" / "f.svg"))
    assert proc.returncode == 3 and b"cannot write" in proc.stderr


def test_a_small_profile_runs_without_numpy(tmp_path: Path) -> None:
    """Under 8 MiB and 4,096 stacks nothing of the compiled path runs: numpy (0.04-0.1 s to import) is never
    imported, the tables, flame graph and folded lines included (the closing reader imported it for a while)."""
    argv = ["kforensic", "profile", str(DATA / "mixed.perf.txt.gz"), "--svg", str(tmp_path / "s.svg")]
    argv += ["--folded", str(tmp_path / "f"), "-o", str(tmp_path / "t"), "--format", "json"]
    code = (
        "import sys\n"
        "from forensics.cli import main\n"
        f"sys.argv = {argv!r}\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('numpy' in sys.modules)\n"
    )
    got = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=120)
    assert got.stdout.strip().splitlines()[-1] == "False"
    assert (tmp_path / "s.svg").stat().st_size and (tmp_path / "f").stat().st_size


@pytest.mark.parametrize("workload", ["mixed", "contend", "kernel", "interp", "jit", "lost"])
def test_folded_to_stdout_alone_is_the_stored_stackcollapse_output(workload: str, kf: Callable[..., Ran]) -> None:
    """``--folded -`` alone writes the folded stacks to stdout and nothing else (no report, no analysis)."""
    proc = kf("profile", str(DATA / f"{workload}.perf.txt.gz"), "--folded", "-")
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout == gzip.decompress((DATA / f"{workload}.folded.gz").read_bytes())


@pytest.mark.parametrize("args", [["--kernel-only"], ["--user-only"], ["--comm", "mixed"], ["--window", "358:359"]])
def test_folded_to_stdout_is_what_folded_file_writes(tmp_path: Path, args: list[str], kf: Callable[..., Ran]) -> None:
    """With the filters too: the folded-only run gives the lines the analysed run writes to --folded FILE."""
    folded = tmp_path / "f.folded"
    full = kf("profile", str(DATA / "mixed.perf.txt.gz"), "--folded", str(folded), *args)
    alone = kf("profile", str(DATA / "mixed.perf.txt.gz"), "--folded", "-", *args)
    assert full.returncode == alone.returncode == 0, alone.stderr
    assert alone.stdout == folded.read_bytes() and b"Hotspots" in full.stdout


def test_folded_to_stdout_with_a_report_file_and_fail_on(tmp_path: Path, kf: Callable[..., Ran]) -> None:
    """``--folded -`` with ``-o FILE``: the report goes to the file; with ``--fail-on`` the analysis runs for the
    exit status, the report written nowhere (stdout holds the folded stacks)."""
    expected = gzip.decompress((DATA / "contend.folded.gz").read_bytes())
    report = tmp_path / "r.txt"
    both = kf("profile", str(DATA / "contend.perf.txt.gz"), "--folded", "-", "-o", str(report))
    assert both.returncode == 0 and both.stdout == expected and b"Hotspots (self)" in report.read_bytes()
    failed = kf("profile", str(DATA / "contend.perf.txt.gz"), "--folded", "-", "--fail-on", "medium")
    assert failed.returncode == 1 and failed.stdout == expected
    assert not (Path.cwd() / "-").exists()


def test_folded_to_stdout_with_a_report_format_and_no_file_is_a_usage_error(
    tmp_path: Path, kf: Callable[..., Ran]
) -> None:
    """The report's format asked for with stdout taken by the folded stacks: said, not dropped silently."""
    proc = kf("profile", str(DATA / "contend.perf.txt.gz"), "--folded", "-", "--format", "json")
    assert proc.returncode == 2 and not proc.stdout, proc.stdout[:200]
    lines = proc.stderr.decode().strip().splitlines()
    assert len(lines) <= 2 and "--format json" in lines[0] and "-o FILE" in proc.stderr.decode(), lines
    report = tmp_path / "r.json"
    both = kf("profile", str(DATA / "contend.perf.txt.gz"), "--folded", "-", "--format", "json", "-o", str(report))
    assert both.returncode == 0 and both.stdout == gzip.decompress((DATA / "contend.folded.gz").read_bytes())
    assert json.loads(report.read_text())["self"]


def test_samples_of_exited_tasks_are_told_as_such_and_pid_minus_one_selects_them(kf: Callable[..., Ran]) -> None:
    # perf prints comm ":-1", tid -1 for a task that exited before perf read its comm; the per-thread table showed
    # ":-1    -1 [001]  4456.121700:/1001001" (the time in the name, the period as the tid), four such rows, and
    # --pid's list the period as a pid.
    lost = str(DATA / "lost.perf.txt.gz")
    text = kf("profile", lost).stdout.decode()
    threads = text[text.index("Per thread") : text.index("Call paths")]
    assert "11.11%  4        :-1/-1 (exited task, comm unknown)\n" in threads, threads
    assert "1001001" not in threads and "4456." not in threads
    picked = json.loads(kf("profile", lost, "--pid", "-1", "--format", "json").stdout)
    assert picked["samples"] == 4
    assert picked["threads"] == [{"name": ":-1/-1 (exited task, comm unknown)", "pct": 100.0, "samples": 4}]
    told = kf("profile", lost, "--pid", "3")
    assert told.returncode == 2
    assert b"its pids: 22051, 22092, -1 (exited task, comm unknown), 22069" in told.stderr, told.stderr
    perl = gzip.decompress((DATA / "lost.folded.gz").read_bytes())
    assert kf("profile", lost, "--folded", "-").stdout == perl  # stackcollapse-perf.pl's, time in the name
