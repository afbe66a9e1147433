"""Tests of the slab-watch, slab-import and slab-export commands, run as the real ``kforensic`` program."""

from __future__ import annotations

import contextlib
import csv
import io
import json
import re
import shlex
import shutil
import stat
import subprocess
import sys
import threading
from pathlib import Path
from typing import NamedTuple

import pytest

from collectors.slabstore import SlabStore
from forensics.cli import main
from forensics.errors import UsageError
from forensics.units import parse_duration
from tests.collectors.test_procfs import MEMINFO, FakeTree, cache, slabinfo_text
from tests.helpers import child, collector_kept

REPO = Path(__file__).resolve().parents[3]


class Result(NamedTuple):
    returncode: int
    stdout: str
    stderr: str


def kforensic(*args: str) -> Result:
    """Run the CLI in this process through its real entry point (error boundary and exit codes included)."""
    out, err = io.StringIO(), io.StringIO()
    code = 0
    argv = sys.argv
    sys.argv = ["kforensic", *args]
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err), collector_kept():
            main()
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) else 0
    finally:
        sys.argv = argv
    return Result(code, out.getvalue(), err.getvalue())


def kforensic_process(*args: str) -> subprocess.CompletedProcess[str]:
    """Run the real program in a child process."""
    return subprocess.run(
        [sys.executable, "-m", "forensics", *args], check=False, cwd=REPO, capture_output=True, text=True, timeout=60
    )


def fast_watch(tree: FakeTree, store: Path, *extra: str) -> Result:
    return kforensic(
        "slab-watch", "--root", str(tree.root), "--store", str(store), "--interval", "0.05",
        "--allow-fast-interval", "--duration", "0.2", "--no-analysis", *extra,
    )  # fmt: skip


def taken(store: Path, planned: int = 5) -> int:
    """How many samples the store's last run holds: all ``planned`` on an idle machine (fast_watch: 0.2 s at 0.05 s),
    fewer when the machine is so busy that a sample overran its slot (the schedule skips a missed slot,
    collectors.slabwatch; its own tests check the schedule).  What is checked against it must count every one."""
    with SlabStore.open(store) as reader:
        count = len(reader.samples(reader.runs()[-1].id))
    assert 1 <= count <= planned, count
    return count


@pytest.fixture
def recorded(tmp_path: Path) -> Path:
    """A store with one short run on a fake tree."""
    tree = FakeTree(tmp_path / "root")
    store = tmp_path / "store.sqlite"
    done = fast_watch(tree, store)
    assert done.returncode == 0, done.stderr
    return store


@pytest.mark.parametrize(("text", "seconds"), [("90", 90), ("90s", 90), ("30m", 1800), ("2d", 172800), ("1h30m", 5400)])
def test_durations(text: str, seconds: float) -> None:
    assert parse_duration(text, "--duration") == seconds


@pytest.mark.parametrize("text", ["", "abc", "10x", "1h 30m", "-5m"])
def test_bad_durations(text: str) -> None:
    with pytest.raises(UsageError, match="is not a duration"):
        parse_duration(text, "--duration")


def test_watch_json_embeds_an_incident_that_report_merges(tmp_path: Path) -> None:
    tree = FakeTree(tmp_path / "root")
    out = tmp_path / "watch.json"
    done = fast_watch(tree, tmp_path / "s.sqlite", "--format", "json", "-o", str(out))
    assert done.returncode == 0, done.stderr
    assert stat.S_IMODE(out.stat().st_mode) == 0o600
    doc = json.loads(out.read_text())
    assert doc["schema"] == "kforensic.slab-watch/1"
    assert doc["summary"]["samples"] == taken(tmp_path / "s.sqlite") and doc["summary"]["caches"] == 3
    assert doc["incident"]["schema"] == "kforensic.incident/1"
    assert doc["incident"]["host"] == "fakehost" and doc["incident"]["kernel_release"] == "6.1.0-fake"
    assert doc["incident"]["window"]["start"]["clock"] == "wall"
    merged = kforensic_process("report", "--from", str(out), "--format", "json")
    assert merged.returncode == 0, merged.stderr
    from forensics.serialize import incident_from_dict  # reads a bare or an embedded incident

    assert incident_from_dict(json.loads(merged.stdout), "merged").host == "fakehost"
    assert "slab-watch: run 1 sample 1/5" in done.stderr  # plain log lines when stderr is not a terminal


def test_watch_text_summary_names_top_growers(tmp_path: Path) -> None:
    tree = FakeTree(tmp_path / "root")
    store = tmp_path / "s.sqlite"
    assert fast_watch(tree, store).returncode == 0
    tree.grow("dentry", 4200)
    done = fast_watch(tree, store)
    assert done.returncode == 0, done.stderr
    assert f"samples: {taken(store)}" in done.stdout
    assert "no cache grew" in done.stdout  # the second run alone saw no growth
    whole = kforensic("slab-import", "--help")
    assert "Example:" in whole.stdout


def test_a_watch_that_read_no_cache_says_so_not_that_none_grew(tmp_path: Path) -> None:
    """A --root where /proc/slabinfo cannot be read: the summary said "none: no cache grew" and "leak analysis of the
    whole store: 0 finding(s)", an all-clear about caches it never read, while kforensic leaks on the same store says
    "no slab samples to analyse" (a reviewer, round 5 #12)."""
    tree = FakeTree(tmp_path / "root")
    (tree.root / "proc/slabinfo").unlink()
    store = tmp_path / "s.sqlite"
    done = kforensic(
        "slab-watch", "--root", str(tree.root), "--store", str(store), "--interval", "0.05",
        "--allow-fast-interval", "--duration", "0.2",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "caches: 0;" in done.stdout
    assert "no cache grew" not in done.stdout and "0 finding(s)" not in done.stdout
    assert "unknown: no sample read a slab cache (/proc/slabinfo was not read)" in done.stdout
    assert "leak analysis: not run: no slab samples to analyse" in done.stdout
    refused = kforensic("leaks", "--store", str(store))
    assert refused.returncode == 3 and "no slab samples to analyse" in refused.stderr


def test_the_summary_names_the_store_the_leaks_command_reads(tmp_path: Path) -> None:
    """ "details: kforensic leaks --store" ended without the path it was to be run on (round 5 #12)."""
    tree = FakeTree(tmp_path / "root dir")
    store = tmp_path / "my store.sqlite"
    for extra in ((), ("--no-analysis",)):
        done = kforensic(
            "slab-watch", "--root", str(tree.root), "--store", str(store), "--interval", "0.05",
            "--allow-fast-interval", "--duration", "0.2", *extra,
        )  # fmt: skip
        assert done.returncode == 0, done.stderr
        [command] = re.findall(r"kforensic leaks --store .*", done.stdout)
        assert shlex.split(command)[3:] == [str(store)], command
        assert kforensic(*shlex.split(command)[1:]).returncode in (0, 1)


def test_interval_bounds_and_conflicting_durations_are_usage_errors(tmp_path: Path) -> None:
    store = str(tmp_path / "s.sqlite")
    for args in (
        ["--interval", "0.5"],
        ["--interval", "2h"],
        ["--hours", "1", "--duration", "1h"],
        ["--duration", "0"],
    ):
        done = kforensic("slab-watch", "--store", store, *args)
        assert done.returncode == 2, (args, done.stderr)
        assert done.stderr.startswith("kforensic: error: ")


def test_require_slabinfo_and_the_one_line_notice(tmp_path: Path) -> None:
    tree = FakeTree(tmp_path / "root")
    (tree.root / "proc/slabinfo").unlink()
    store = tmp_path / "s.sqlite"
    done = fast_watch(tree, store, "--require-slabinfo")
    assert done.returncode == 3
    # A missing file is no permission matter ("run as root" was the hint to root too).
    assert "hint: it does not exist: a kernel without slabinfo" in done.stderr, done.stderr
    done = fast_watch(tree, store)
    assert done.returncode == 0, done.stderr
    notices = [line for line in done.stderr.splitlines() if "notice" in line]
    assert len(notices) == 1 and "(it does not exist: a kernel without slabinfo" in notices[0]
    assert "run as root" not in done.stderr


def test_another_hosts_store_needs_force(tmp_path: Path, recorded: Path) -> None:
    other = FakeTree(tmp_path / "other")
    other.write("proc/sys/kernel/hostname", "otherhost\n")
    refused = fast_watch(other, recorded)
    assert refused.returncode == 2
    assert "recorded on host 'fakehost', this is 'otherhost'" in refused.stderr
    assert fast_watch(other, recorded, "--force").returncode == 0


def test_systemd_unit(tmp_path: Path) -> None:
    done = kforensic("slab-watch", "--systemd-unit", "--hours", "24", "--store", f"{tmp_path}/state dir/")
    assert done.returncode == 0, done.stderr
    unit = done.stdout
    for line in ("Type=simple", "Nice=10", "IOSchedulingClass=idle", "ProtectSystem=strict", "KillSignal=SIGTERM"):
        assert line in unit.splitlines()
    assert f'ReadWritePaths="{tmp_path}/state dir"' in unit
    exec_line = next(line for line in unit.splitlines() if line.startswith("ExecStart="))
    assert "slab-watch" in exec_line and "--duration 24.0h" in exec_line
    assert f'--store "{tmp_path}/state dir/slab-watch.sqlite"' in exec_line
    assert not (tmp_path / "state dir").exists()  # printing a unit records nothing
    default = kforensic("slab-watch", "--systemd-unit", "--store", "/var/lib/kforensic/")
    assert "StateDirectory=kforensic" in default.stdout.splitlines()
    assert "--store /var/lib/kforensic/slab-watch.sqlite" in default.stdout
    assert "--duration" not in default.stdout  # until stopped


def test_export_csv_and_counters(recorded: Path) -> None:
    done = kforensic("slab-export", "--store", str(recorded), "--format", "csv")
    assert done.returncode == 0, done.stderr
    rows = list(csv.DictReader(io.StringIO(done.stdout)))
    assert len(rows) == taken(recorded) * 3
    assert {r["cache"] for r in rows} == {"kmalloc-64", "dentry", "task_struct"}
    assert rows[0]["boot_id"] == "11111111-2222-3333-4444-555555555555"
    counters = kforensic("slab-export", "--store", str(recorded), "--format", "csv", "--table", "counters")
    names = {r["name"] for r in csv.DictReader(io.StringIO(counters.stdout))}
    assert {"MemTotal", "nr_slab_unreclaimable", "nr_dentry"} <= names


def test_export_prometheus_uses_node_exporter_names(recorded: Path) -> None:
    done = kforensic("slab-export", "--store", str(recorded), "--format", "prometheus")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    assert 'node_slabinfo_active_objects{slab="kmalloc-64"} 6400' in lines
    assert 'node_slabinfo_object_size_bytes{slab="dentry"} 192' in lines
    assert "node_memory_MemTotal_bytes 8241188864" in lines
    assert "node_memory_Active_anon_bytes 102400000" in lines
    assert "node_memory_HugePages_Total 0" in lines
    assert "# TYPE node_slabinfo_objects gauge" in lines
    sample = re.compile(r'^[a-zA-Z_:][a-zA-Z0-9_:]*(\{slab="[^"]*"\})? -?\d+( \d+)?$')
    assert all(line.startswith("#") or sample.match(line) for line in lines)
    every = kforensic("slab-export", "--store", str(recorded), "--format", "prometheus", "--all-samples")
    timed = [
        line for line in every.stdout.splitlines() if line.startswith('node_slabinfo_active_objects{slab="dentry"}')
    ]
    assert len(timed) == taken(recorded) and all(len(line.split()) == 3 for line in timed)


def test_export_parquet_without_pyarrow_is_a_clear_error(recorded: Path, tmp_path: Path) -> None:
    pytest.importorskip("pandas")
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        done = kforensic("slab-export", "--store", str(recorded), "--format", "parquet", "-o", str(tmp_path / "x"))
        assert done.returncode == 3
        assert "needs pyarrow" in done.stderr and "pip install pyarrow" in done.stderr
        return
    out = tmp_path / "slab.parquet"
    done = kforensic("slab-export", "--store", str(recorded), "--format", "parquet", "-o", str(out))
    assert done.returncode == 0 and out.stat().st_size > 0


def test_export_of_a_missing_store_exits_3(tmp_path: Path) -> None:
    done = kforensic("slab-export", "--store", str(tmp_path / "nothing.sqlite"))
    assert done.returncode == 3 and "no such store" in done.stderr


def test_an_import_without_slabinfo_says_its_files_hold_none(tmp_path: Path) -> None:
    """meminfo snapshots only: the summary blamed /proc/slabinfo's root-only access, a reason of a sampling run (the
    review of 2026-12-07, 10d); an import's is that its files hold no slabinfo table."""
    log = tmp_path / "meminfo.log"
    log.write_text("".join(f"date={1700000000 + 60 * i}\n" + MEMINFO.format(slab=i, unreclaim=i) for i in range(3)))
    done = kforensic("slab-import", "--store", str(tmp_path / "mem.sqlite"), "--host", "db7", str(log))
    assert done.returncode == 0, done.stderr
    assert "no slab samples to analyse (the imported files hold no /proc/slabinfo table)" in done.stdout
    assert "root only" not in done.stdout


def test_import_command(tmp_path: Path) -> None:
    log = tmp_path / "slabinfo.log"
    log.write_text(
        "".join(
            f"date={1700000000 + 60 * i}\n"
            + slabinfo_text([cache("kf_leak", 100 + 50 * i, 512, 8)])
            + MEMINFO.format(slab=i, unreclaim=i)
            for i in range(4)
        )
    )
    store = tmp_path / "imported.sqlite"
    done = kforensic(
        "slab-import", "--store", str(store), "--host", "db7", str(log), "--format", "json", "--no-analysis"
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["schema"] == "kforensic.slab-import/1"
    assert doc["summary"]["samples"] == 4
    assert doc["summary"]["top_growers"][0] == {
        "cache": "kf_leak",
        "first_active_bytes": 100 * 512,
        "last_active_bytes": 250 * 512,
        "first_active_objs": 100,
        "last_active_objs": 250,
    }
    again = kforensic("slab-import", "--store", str(store), "--host", "db7", str(log), "--no-analysis")
    assert again.returncode == 2 and "already imported" in again.stderr
    with SlabStore.open(store) as reader:
        assert reader.meta("host") == "db7"
    bad = tmp_path / "bad.txt"
    bad.write_text("nothing here\n")
    assert kforensic("slab-import", "--store", str(store), str(bad), "--no-analysis").returncode == 3


def test_progress_bar_on_a_terminal(tmp_path: Path) -> None:
    """On a TTY the rich progress bar replaces the log lines (stderr on a pseudo-terminal)."""
    import os
    import pty

    tree = FakeTree(tmp_path / "root")
    leader, follower = pty.openpty()
    args = ["slab-watch", "--root", str(tree.root), "--store", str(tmp_path / "s.sqlite")]
    args += ["--interval", "0.05", "--allow-fast-interval", "--duration", "0.2", "--no-analysis"]
    chunks: list[bytes] = []

    def drain() -> None:  # read while the child writes, so a full terminal buffer never blocks it
        with contextlib.suppress(OSError):  # EIO once the child has closed the terminal
            while chunk := os.read(leader, 65536):
                chunks.append(chunk)

    # start_new_session (tests.helpers.child): the pseudo-terminal is not the child's controlling terminal;
    # what it writes to stderr is the same.
    with child([sys.executable, "-m", "forensics", *args], cwd=REPO, stdout=subprocess.PIPE, stderr=follower) as proc:
        os.close(follower)
        reader = threading.Thread(target=drain)
        reader.start()
        out, _ = proc.communicate(timeout=60)
    reader.join(timeout=10)
    os.close(leader)
    screen = b"".join(chunks)
    assert proc.returncode == 0
    assert b"slab-watch summary" in out
    text = screen.decode(errors="replace")
    assert f"sample {taken(tmp_path / 's.sqlite')}" in text and "slab-watch: run 1 sample" not in text


def test_a_run_ends_with_the_leak_analysis_of_the_store(tmp_path: Path) -> None:
    tree = FakeTree(tmp_path / "root")
    store = tmp_path / "s.sqlite"
    args = ["slab-watch", "--root", str(tree.root), "--store", str(store), "--interval", "0.05"]
    done = kforensic(*args, "--allow-fast-interval", "--duration", "0.1", "--format", "json")
    assert done.returncode == 0, done.stderr
    analysis = json.loads(done.stdout)["analysis"]
    # whatever state the leak detectors are in, the run ends with its summary and one line about them
    assert analysis.startswith(("leak analysis of the whole store:", "leak analysis: not", "leak analysis failed:"))
    assert json.loads(done.stdout)["summary"]["samples"] == taken(store, planned=3)
    skipped = kforensic(*args, "--allow-fast-interval", "--duration", "0.1", "--no-analysis")
    assert "leak analysis: skipped" in skipped.stdout


def _plug_in(monkeypatch: pytest.MonkeyPatch, hook: object) -> None:
    """Install ``hook`` as forensics.pipelines.leaks.findings_from_store for this test only."""
    from forensics.pipelines import leaks

    monkeypatch.setattr(leaks, "findings_from_store", hook)


def test_the_hook_passes_the_whole_store_and_its_findings_drive_fail_on(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from forensics.model import Evidence, Finding, Locator, LocatorKind, Severity, finding_id

    seen: list[tuple[str, int | None]] = []

    def findings_from_store(store: SlabStore, run_id: int | None) -> tuple[Finding, ...]:
        seen.append((str(store.path), run_id))
        sample = store.samples()[-1].id
        evidence = Evidence(str(store.path), Locator(LocatorKind.SAMPLE, sample, name="dentry"), "dentry")
        finding = Finding(
            finding_id("slab-leak", "dentry"), "slab-leak", "dentry grows", Severity.HIGH, 0.9, "test",
            "summary", (evidence,),
        )  # fmt: skip
        return (finding,)

    _plug_in(monkeypatch, findings_from_store)
    tree = FakeTree(tmp_path / "root")
    store = tmp_path / "s.sqlite"
    assert fast_watch(tree, store).returncode == 0  # a first run: the hook must see it too
    args = ["slab-watch", "--root", str(tree.root), "--store", str(store), "--interval", "0.05"]
    done = kforensic(*args, "--allow-fast-interval", "--duration", "0.1", "--format", "json", "--fail-on", "high")
    assert done.returncode == 1, done.stderr
    assert seen == [(str(store), None)]
    doc = json.loads(done.stdout)
    assert doc["analysis"].startswith("leak analysis of the whole store: 1 finding(s)")
    assert [f["title"] for f in doc["incident"]["findings"]] == ["dentry grows"]
    with SlabStore.open(store) as reader:
        from forensics.evidence import check_findings
        from forensics.serialize import incident_from_dict

        incident = incident_from_dict(doc, "watch.json")
        assert check_findings(incident.findings, resolvers={LocatorKind.SAMPLE: reader.resolve_evidence}) == []


def test_a_failing_analysis_keeps_the_summary(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    def findings_from_store(store: SlabStore, run_id: int | None) -> tuple[object, ...]:
        raise ValueError("boom")

    _plug_in(monkeypatch, findings_from_store)
    tree = FakeTree(tmp_path / "root")
    args = ["slab-watch", "--root", str(tree.root), "--store", str(tmp_path / "s.sqlite"), "--interval", "0.05"]
    done = kforensic(*args, "--allow-fast-interval", "--duration", "0.1")
    # A bug is not a clean run: exit 4 (it was 0, as if the store had been judged), said on stderr too, and the
    # summary written all the same.
    assert done.returncode == 4, done.stderr
    assert done.stderr.splitlines()[-1].startswith("kforensic: error: leak analysis failed: ValueError: boom"), (
        done.stderr
    )
    # (3 samples in 0.1 s at 0.05 s when the machine keeps up; a loaded one misses a slot: the count is not the point)
    assert re.search(r"samples: [1-3]\b", done.stdout), done.stdout
    assert "leak analysis failed: ValueError: boom (a bug in kforensic; the samples are safe" in done.stdout


def test_systemd_accepts_the_unit(tmp_path: Path) -> None:
    analyze = shutil.which("systemd-analyze")
    if analyze is None:
        pytest.skip("systemd-analyze is not installed")
    unit = tmp_path / "kforensic-slab-watch.service"
    unit.write_text(kforensic("slab-watch", "--systemd-unit", "--duration", "2d").stdout)
    done = subprocess.run([analyze, "verify", str(unit)], check=False, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    assert "kforensic-slab-watch.service" not in done.stderr  # no warning about our unit


def test_a_store_holding_rows_of_deleted_samples_is_refused_in_one_line_that_says_what_to_do(tmp_path: Path) -> None:
    """Samples deleted from the end of a store (by hand, to trim it) leave their slab and counter rows: the next
    sample takes their number.  slab-import --force said "UNIQUE constraint failed: slab_packed.sample_id" with
    the hint "free some space" (and left an empty run behind)."""
    import lzma
    import sqlite3

    recording = REPO / "tests" / "data" / "healthy" / "slabwatch" / "snapshots.txt.xz"
    text = lzma.decompress(recording.read_bytes()).decode()
    fourth = text.index("date=", text.index("date=", text.index("date=", text.index("date=") + 1) + 1) + 1)
    snapshots = tmp_path / "three.txt"
    snapshots.write_text(text[:fourth])
    (tmp_path / "it's mine").mkdir()
    store = tmp_path / "it's mine" / "s.sqlite"  # the hint's command quotes it for the shell
    assert kforensic("slab-import", "--store", str(store), "--host", "vm", str(snapshots), "--no-analysis")[0] == 0
    with contextlib.closing(sqlite3.connect(store)) as db, db:
        db.execute("DELETE FROM samples WHERE id = 3")
    again = kforensic("slab-import", "--store", str(store), "--host", "vm", str(snapshots), "--force")
    assert again.returncode == 3, again
    message, hint = again.stderr.splitlines()
    assert message == (
        f"kforensic: error: store {store} holds rows of samples it does not have (slab_packed from sample 3,"
        " counter_packed from sample 3; its last sample is 2): a new sample would take their number, so nothing"
        " was added"
    )
    delete = "DELETE FROM slab_packed WHERE sample_id > 2; DELETE FROM counter_packed WHERE sample_id > 2"
    said = "kforensic: hint: record into another --store, or delete them: "
    assert hint.startswith(said) and shlex.split(hint.removeprefix(said)) == ["sqlite3", str(store), delete]
    with contextlib.closing(sqlite3.connect(store)) as db:
        assert db.execute("SELECT count(*) FROM runs").fetchone() == (1,)  # nothing was added, no empty run
        with db:
            db.executescript(delete)  # what the hint says
    assert kforensic("slab-import", "--store", str(store), "--host", "vm", str(snapshots), "--force")[0] == 0


def test_a_statement_of_coverage_does_not_set_the_exit_status(tmp_path: Path) -> None:
    """One real snapshot (the first of the bundled healthy recording): slab-import's only finding is the leak
    analysis's coverage ("cannot judge yet: 1 sample"), a statement about the samples.  With --fail-on info it
    exited 1, and ``leaks`` on the same store (which states its coverage apart) 0."""
    import lzma

    text = lzma.decompress((REPO / "tests/data/healthy/slabwatch/snapshots.txt.xz").read_bytes()).decode()
    first = text[: text.index("\ndate=", 1) + 1]
    (tmp_path / "one.txt").write_text(first)
    store = str(tmp_path / "one.sqlite")
    done = kforensic("slab-import", str(tmp_path / "one.txt"), "--store", store, "-f", "json", "--fail-on", "info")
    assert done.returncode == 0, done.stderr
    findings = json.loads(done.stdout)["incident"]["findings"]
    assert [f["kind"] for f in findings] == ["leak-coverage"]  # still said
    # ue15 #13: it said "baseline": null; it names what a judgement needs (samples, growth) and where that is set
    assert findings[0]["baseline"]["value"].startswith(">= 24 samples") and "growth of >= 512 KB" in str(findings[0])
    assert findings[0]["baseline"]["source"].startswith("detectors/leaks/power.py")
    assert kforensic("leaks", "--store", store, "--fail-on", "info").returncode == 0


def test_the_summary_and_the_findings_name_the_measure_of_each_growth(tmp_path: Path) -> None:
    """One cache, two growth figures in one report: the summary's top growers count objects in use (active_objs x
    objsize: vm_area_struct +1.3 MiB on the healthy recording), the leak findings slab memory (num_objs x objsize:
    1,087 KB from window medians, beside its first sample's own value), and neither said which it was (a reviewer's
    +1.5 MiB vs 2,242 KB, 2026-12-06).  Each names its measure, as slabtop's columns do."""
    recording = REPO / "tests" / "data" / "healthy" / "slabwatch" / "snapshots.txt.xz"
    done = kforensic("slab-import", "--store", str(tmp_path / "s.sqlite"), "--host", "vm", str(recording))
    assert done.returncode == 0, done.stderr
    text = " ".join(done.stdout.split())
    assert (
        "top growers (objects in use: active_objs × objsize, slabtop's ACTIVE × OBJ SIZE, first to last sample of "
        "the last boot): "
    ) in text
    assert "vm_area_struct: 699.8 KiB -> 1.9 MiB (+1.3 MiB; objects in use 3732 -> 10590)" in text
    finding = text[text.index("Slab cache vm_area_struct grows") :]
    assert (
        "measured as: slab memory: num_objs × objsize (slabtop's OBJS × OBJ SIZE, objects in use or free); growth "
        "from window medians, samples as read"
    ) in finding
    assert "total growth: 1,087 KB over 11 min (first to last window median: 1,040 KB → 2,126 KB)" in finding


@pytest.mark.parametrize(
    ("args", "kind"),
    [
        (("--format", "csv"), "a kforensic slab-export CSV of the slab table"),
        (("--format", "csv", "--table", "counters"), "a kforensic slab-export CSV of the counters table"),
        (("--format", "prometheus", "--all-samples"), "a Prometheus text exposition"),
    ],
)
def test_an_export_given_to_slab_import_is_said_to_be_one(
    recorded: Path, tmp_path: Path, args: tuple[str, ...], kind: str
) -> None:
    """/tmp/ue9 9: an export given back to slab-import was 'no slabinfo or meminfo snapshot found', exit 3."""
    exported = tmp_path / "export.txt"
    assert kforensic("slab-export", "--store", str(recorded), *args, "-o", str(exported)).returncode == 0
    done = kforensic("slab-import", "--store", str(tmp_path / "again.sqlite"), str(exported))
    assert done.returncode == 3, done.stderr
    first = done.stderr.splitlines()[0]
    assert f"{exported} is {kind}" in first and "an export is for other tools" in first, done.stderr
    assert "kforensic leaks --store STORE" in done.stderr
    assert not (tmp_path / "again.sqlite").exists()


@pytest.mark.parametrize("command", ["slab-watch", "slab-import"])
def test_a_store_file_in_a_directory_that_does_not_exist_is_refused_and_nothing_is_made(
    tmp_path: Path, command: str
) -> None:
    """``--store /nonexist/dir/s.sqlite`` made /nonexist and /nonexist/dir as root and exited 0 (the healthy-machine
    review of 2026-12-07, 12): a store file's directory is not an output directory (docs/cli.md), so it is exit 3
    before anything is sampled or read; a directory named for the store (a final /) is still made with its parents."""
    tree = FakeTree(tmp_path / "root")
    log = tmp_path / "meminfo.log"
    log.write_text(f"date={1700000000}\n" + MEMINFO.format(slab=1, unreclaim=1))
    missing = tmp_path / "nonexist" / "dir"
    if command == "slab-watch":
        done = fast_watch(tree, missing / "s.sqlite")
    else:
        done = kforensic("slab-import", "--store", str(missing / "s.sqlite"), "--host", "db7", str(log))
    assert done.returncode == 3, done
    assert f"cannot write {missing / 's.sqlite'}: its directory {missing} does not exist" in done.stderr
    assert not (tmp_path / "nonexist").exists()
    named = tmp_path / "made" / "here"
    if command == "slab-watch":
        done = kforensic(
            "slab-watch", "--root", str(tree.root), "--store", f"{named}/", "--interval", "0.05",
            "--allow-fast-interval", "--duration", "0.1", "--no-analysis",
        )  # fmt: skip
    else:
        done = kforensic("slab-import", "--store", f"{named}/", "--host", "db7", "--no-analysis", str(log))
    assert done.returncode == 0, done.stderr
    assert (named / "slab-watch.sqlite").is_file()


@pytest.mark.parametrize(
    ("text", "kind", "reader"),
    [
        (b"[    0.000000] Linux version 6.1.0 (gcc)\n[    1.000000] usb 1-1: new device\n", "a kernel log", "dmesg"),
        (b"# tracer: nop\n          <idle>-0     [001] d..2.   12.000001: sched_switch: prev_comm=a\n", "ftrace text",
         "trace"),
    ],
)  # fmt: skip
def test_a_log_or_trace_given_as_a_store_or_findings_says_what_reads_it(
    tmp_path: Path, text: bytes, kind: str, reader: str
) -> None:
    """``leaks --store dmesg.txt`` said "not a slab-watch store (file is not a database)" and ``report --from
    dmesg.txt`` quoted the JSON parser ("Extra data: line 1 column 16"): neither said what the file is (the
    healthy-machine review of 2026-12-07, 13); ``dmesg perf.data`` already names the command that reads it."""
    given = tmp_path / "my file.txt"
    given.write_bytes(text)
    leaks = kforensic("leaks", "--store", str(given))
    assert leaks.returncode == 3, leaks
    assert f"hint: it looks like {kind}: read it with `kforensic {reader} '{given}'`" in leaks.stderr
    report = kforensic("report", "--from", str(given))
    assert report.returncode == 3, report
    assert f"{given}: not a JSON document: it looks like {kind}" in report.stderr
    assert f"kforensic report --{'dmesg' if reader == 'dmesg' else reader} '{given}'" in report.stderr
    assert "Extra data" not in report.stderr and len(report.stderr.splitlines()) == 2


@pytest.mark.parametrize("content", [b"", b"\n \n"], ids=["empty", "blank"])
def test_an_empty_findings_file_is_said_empty(tmp_path: Path, content: bytes) -> None:
    """``report --from`` an empty file quoted the JSON parser ("Expecting value: line 1 column 1 (char 0)"), the
    bad-input tries of 2026-12-07: it says the file is empty."""
    given = tmp_path / "findings.json"
    given.write_bytes(content)
    done = kforensic("report", "--from", str(given))
    assert done.returncode == 3, done
    assert f"{given}: it is empty: no findings in it" in done.stderr and "Expecting value" not in done.stderr
    assert len(done.stderr.splitlines()) == 2
