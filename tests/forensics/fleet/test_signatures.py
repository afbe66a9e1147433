"""``kforensic dmesg --signatures`` on a real dask.distributed LocalCluster = the serial run, host by host.

The hosts are the project's golden logs and the fixture kernel's console
logs, copied under host directories (several hosts per log, so groups span
hosts), plus logs that cannot be read.  One LocalCluster of two worker
processes (about 8 s to start), one run through ``--scheduler`` against a
real scheduler on loopback, and the serial run must give the same groups.
"""

from __future__ import annotations

import importlib.util
import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forensics.fleet.signatures import expand_inputs, run_dask, run_serial
from forensics.report.fleet_signatures import to_document
from tests.helpers import assert_evidence_resolves

# find_spec, not importorskip: collection in every pytest-xdist worker imported dask.distributed (0.65 s each);
# the tests that use it import it, on the one worker that runs them.
pytestmark = pytest.mark.skipif(
    importlib.util.find_spec("distributed") is None, reason="dask.distributed is not installed"
)

GOLDEN = Path(__file__).resolve().parents[2] / "detectors" / "dmesg" / "golden"
CASES = Path(__file__).resolve().parents[3] / "vmcore_fixtures" / "cases"
COPIES = 3


def _fleet(root: Path) -> Path:
    logs = sorted(GOLDEN.glob("*.log")) + sorted(CASES.glob("*/console.log"))
    assert len(logs) >= 12
    hosts = root / "hosts"
    for copy in range(COPIES):
        for n, log in enumerate(logs):
            host = hosts / f"host{copy:02d}{n:03d}"
            host.mkdir(parents=True)
            shutil.copy(log, host / "kern.log")
    (hosts / "gone").mkdir()
    (hosts / "gone" / "kern.log").symlink_to(root / "missing.log")  # unreadable: reported, the job goes on
    return hosts


def _comparable(doc: dict[str, object]) -> dict[str, object]:
    out = dict(doc)
    for key in ("engine", "seconds", "incident"):
        out.pop(key)
    return out


@pytest.mark.slow
def test_local_cluster_scheduler_and_serial_give_the_same_groups(tmp_path: Path) -> None:
    from dask.distributed import LocalCluster

    items = expand_inputs([str(_fleet(tmp_path))])
    serial = run_serial(items)
    local = run_dask(items, workers=2)
    assert local.engine.kind == "local" and local.engine.workers == 2
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, protocol="tcp", host="127.0.0.1", dashboard_address=None
    ) as cluster:
        remote = run_dask(items, scheduler=cluster.scheduler_address)
    assert remote.engine.kind.startswith("tcp://127.0.0.1:")

    expected = _comparable(to_document(serial))
    assert _comparable(to_document(local)) == expected
    assert _comparable(to_document(remote)) == expected

    doc = to_document(local)
    assert doc["hosts"] == len(items) and doc["hosts_read"] == len(items) - 1
    assert [f["host"] for f in doc["failed"]] == ["gone/kern.log"]
    assert "No such file" in doc["failed"][0]["error"]
    groups = doc["groups"]
    assert len(groups) >= 12
    for g in groups:
        assert g["hosts"] >= COPIES and g["count"] >= g["hosts"]
        assert g["first_seen"]["host"] in g["host_names"] and g["last_seen"]["host"] in g["host_names"]
    null = next(g for g in groups if g["title"].startswith("BUG: unable to handle kernel NULL pointer"))
    assert null["frame"] and null["kernels"]
    # The example of every group cites lines that are in its host's log.
    assert_evidence_resolves(f for r in local.hosts for g in r.groups for f in [g.finding])


def _cli(*args: str) -> subprocess.CompletedProcess[str]:
    command = [sys.executable, "-m", "forensics", "dmesg", *args]
    return subprocess.run(command, capture_output=True, text=True, timeout=120, check=False)


def test_cli_serial_json_and_bad_inputs(tmp_path: Path) -> None:
    hosts = tmp_path / "h"
    for n, log in enumerate(sorted(GOLDEN.glob("*.log"))[:4]):
        (hosts / f"n{n}").mkdir(parents=True)
        shutil.copy(log, hosts / f"n{n}" / "kern.log")
    out = _cli("--signatures", str(hosts / "*" / "kern.log"), "--workers", "0", "-f", "json")
    assert out.returncode == 0, out.stderr
    doc = json.loads(out.stdout)
    assert doc["schema"] == "kforensic.dmesg-signatures/1" and doc["hosts"] == 4
    assert {h for g in doc["groups"] for h in g["host_names"]} <= {f"n{n}/kern.log" for n in range(4)}
    assert _cli("--signatures", str(hosts), "--workers", "0", "--fail-on", "high").returncode == 1
    nothing = _cli("--signatures", str(tmp_path / "none*"), "--workers", "0")
    assert nothing.returncode == 2 and "no file matches" in nothing.stderr and "Traceback" not in nothing.stderr
    alone = _cli("--workers", "2", str(hosts))
    assert alone.returncode == 2 and "--signatures" in alone.stderr


def test_fsspec_urls_give_the_same_groups_as_paths(tmp_path: Path) -> None:
    pytest.importorskip("fsspec")
    hosts = tmp_path / "h"
    for n, log in enumerate(sorted(GOLDEN.glob("*.log"))[:5]):
        (hosts / f"n{n}").mkdir(parents=True)
        shutil.copy(log, hosts / f"n{n}" / "kern.log")
    by_path = run_serial(expand_inputs([str(hosts / "*" / "kern.log")]))
    url_items = expand_inputs([f"file://{hosts}/*/kern.log"])
    assert all(p.startswith("file://") for _, p in url_items)
    by_url = run_serial(url_items)
    assert [h.host for h in by_url.hosts] == [h.host for h in by_path.hosts]
    url_groups = to_document(by_url)["groups"]
    path_groups = to_document(by_path)["groups"]
    assert [{k: v for k, v in g.items() if k != "example"} for g in url_groups] == [
        {k: v for k, v in g.items() if k != "example"} for g in path_groups
    ]
    # The examples are the same findings, citing the log by its URL.
    for u, p in zip(url_groups, path_groups, strict=True):
        assert u["example"]["finding"]["title"] == p["example"]["finding"]["title"]
        assert all(e["source"].startswith("file://") for e in u["example"]["finding"]["evidence"])
    assert all(h.error is None for h in by_url.hosts)
    missing = run_serial([("gone", f"file://{tmp_path}/gone.log")])
    assert missing.hosts[0].error and "gone.log" in missing.hosts[0].error


def test_a_report_that_prints_no_release_is_of_the_kernel_its_log_names() -> None:
    """The 11-abba-deadlock guest's log: its first hung task prints no "CPU: ... 6.1.192" line, and its group
    said kernels "-" ("not named in the logs") though the log's other reports name 6.1.192."""
    from forensics.fleet.signatures import triage_host

    host = triage_host("abba", str(CASES / "11-abba-deadlock" / "console.log"))
    assert host.error is None and len(host.groups) >= 2
    assert {g.kernel for g in host.groups} == {"6.1.192"}


def test_a_report_that_prints_no_release_is_of_its_boots_kernel(tmp_path: Path) -> None:
    """A log of two boots of different kernels: the 6.12 guest's 02-bug-on console, then the 6.1 guest's 09-oom
    console up to its OOM report (cut before the panic, which names 6.1.192).  The OOM, which prints no release,
    was counted under 6.12.118 (the only release the log's reports print), and the log's kernel said 6.12.118
    though its second boot banner says 6.1.192."""
    from forensics.fleet.signatures import triage_host
    from forensics.pipelines.dmesg import build_incident, triage_file

    bug = (CASES.parent / "kernels" / "6.12" / "cases" / "02-bug-on" / "console.log").read_text()
    oom = (CASES / "09-oom" / "console.log").read_text().splitlines(keepends=True)
    cut = next(i for i, line in enumerate(oom) if "Kernel panic - not syncing" in line)
    assert "6.1.192" in oom[0] and not any("Kernel panic" in line for line in oom[:cut])
    log = tmp_path / "two-boots.log"
    log.write_text(bug + "".join(oom[:cut]))
    host = triage_host("vm", str(log))
    kernels = {g.title: g.kernel for g in host.groups}
    assert kernels == {
        "kernel BUG in kf_buffer_put": "6.12.118",
        "OOM killer invoked (invoked by kf_memhog)": "6.1.192",
    }, kernels
    result = triage_file(str(log))
    assert result.releases == {"6.12.118"}  # the reports alone name one kernel
    assert str(build_incident([result]).kernel_release) == (
        "not available: the log holds boots of 2 kernel releases (6.1.192, 6.12.118)"
    )


def test_report_refuses_a_fleet_document_of_several_hosts(tmp_path: Path) -> None:
    """Many hosts' findings are not one machine's story: ``report --from`` refuses such a document (exit 3).

    The signatures of the fixture guests' consoles, each its own host, were told as one machine's incident:
    'First: general protection fault in kf_conn_send. Then: kernel BUG in kf_buffer_put', each from another guest.
    A document of one host is that host's findings, and is read.
    """
    hosts = tmp_path / "h"
    for name in ("01-null-member", "02-bug-on"):
        (hosts / name).mkdir(parents=True)
        shutil.copy(CASES / name / "console.log", hosts / name / "kern.log")
    for pattern, count in ((str(hosts / "*" / "kern.log"), 2), (str(hosts / "02-bug-on" / "kern.log"), 1)):
        out = tmp_path / f"fleet{count}.json"
        made = _cli("--signatures", pattern, "--workers", "0", "-f", "json", "-o", str(out))
        assert made.returncode == 0 and json.loads(out.read_text())["hosts"] == count, made.stderr
        report = subprocess.run(
            [sys.executable, "-m", "forensics", "report", "--from", str(out), "-o", str(tmp_path / f"r{count}.md")],
            capture_output=True,
            text=True,
            timeout=120,
            check=False,
        )
        if count == 1:
            assert report.returncode == 0, report.stderr
            assert "kernel BUG in kf_buffer_put" in (tmp_path / "r1.md").read_text()
            continue
        assert report.returncode == 3 and not (tmp_path / "r2.md").exists()
        [error, hint] = report.stderr.splitlines()
        assert error == (
            f"kforensic: error: {out}: a fleet document (kforensic.dmesg-signatures/1) of 2 hosts: a report tells"
            " one machine's incident, and their findings are not one story"
        )
        assert "kforensic dmesg LOG --format json" in hint
