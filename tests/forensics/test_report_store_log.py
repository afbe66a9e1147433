"""``report --store``: the kernel log records slab-watch stored are read, and a ``--dmesg`` log is checked against them.

The stores are made by the project's sampler (collectors/slabwatch.py SlabWatcher) over a scripted /proc and
/dev/kmsg (tests/collectors/test_procfs.py FakeTree): the rows of table ``kmsg`` are the ones slab-watch writes.
Before (ue24 F13): ``report --store`` alone said "found no problem" over a stored "sched: RT throttling activated"
that ``kforensic dmesg`` rates medium, and a log 3.5 s off the store's records was dated with the store's boot time.
"""

from __future__ import annotations

import re
import shlex
import shutil
import subprocess
from functools import partial
from pathlib import Path
from typing import Any

import pytest

from collectors.slabstore import SlabStore
from tests.collectors.test_procfs import FakeTree
from tests.collectors.test_slabwatch import watch
from tests.evidence_audit import findings_of
from tests.forensics.test_report_other_kernels import _report  # (a report's JSON document, read back)
from tests.helpers import assert_evidence_resolves, cli_run
from tests.vmcore_cases import load_case

BOOT = "11111111-2222-3333-4444-555555555555"
LATER = "99999999-2222-3333-4444-555555555555"
#: The fake boot's kernel log: (level, time since boot in µs, message); the throttling line is medium for dmesg.
RECORDS = (
    (5, 0, "Linux version 6.1.0-fake (builder@host) (gcc (GCC) 12.2.0) #1 SMP PREEMPT_DYNAMIC"),
    (6, 0, "Command line: console=ttyS0 quiet"),
    # /dev/kmsg escapes a tab ("\\x09": the store keeps it so) and each byte of a non-ASCII character; dmesg prints
    # both as they are (UTF-8 locale): the same records, each beside another of the same microsecond (before, the
    # real store's made this machine's own log "another boot").
    (6, 257_538, "rcu: \tMax phase no-delay instances is 1000."),
    (6, 257_538, "Freeing SMP alternatives memory: 52K"),
    (6, 300_001, "clocksource: watchdog skew 12 \u00b5s"),
    (6, 300_001, "x86/mm: Checked W+X mappings: passed, no W+X pages found."),
    (6, 1_234_567, "clocksource: Switched to clocksource tsc"),
    (6, 40_125_003, "EXT4-fs (vda): mounted filesystem with ordered data mode"),
    (4, 61_168_376, "sched: RT throttling activated"),
    (6, 70_981_083, "random: crng reseeded"),
)
THROTTLED = "sched: RT throttling activated"
SEQ = next(n for n, r in enumerate(RECORDS) if r[2] == THROTTLED)


def _escaped(text: str) -> str:
    """As /dev/kmsg gives it: a byte below space or above ``~`` as ``\\xHH``."""
    return "".join(chr(b) if 32 <= b < 127 else f"\\x{b:02x}" for b in text.encode())


def _kmsg(first: int = 0) -> list[str]:
    return [f"{lvl},{seq},{usec},-;{_escaped(text)}" for seq, (lvl, usec, text) in enumerate(RECORDS) if seq >= first]


def _console(path: Path, shift: float = 0.0) -> Path:
    """The same boot's log as ``dmesg`` prints it (every time ``shift`` s later: another boot's)."""
    lines = [f"[{usec / 1e6 + (shift if usec else 0):12.6f}] {text}" for _, usec, text in RECORDS]
    path.write_text("\n".join(lines) + "\n")
    return path


def _store(tmp: Path, first: int = 0, reboot: bool = False) -> Path:
    """A store slab-watch made of the fake boot, holding its records from ``first`` on (a watcher started later);
    ``reboot``: the machine rebooted after, a boot of one record sampled last."""
    tree = FakeTree(tmp / "root", BOOT)
    tree.log(*_kmsg(first))
    steps: list[object] = [lambda: tree.grow("kmalloc-64", 640)]
    if reboot:

        def rebooted() -> None:
            tree.reboot(LATER)
            tree.log("6,0,0,-;Linux version 6.1.0-fake (builder@host) (gcc (GCC) 12.2.0) #2 SMP PREEMPT_DYNAMIC")

        steps.append(rebooted)
    watch(tree, tmp / "s.sqlite", steps)
    return tmp / "s.sqlite"


@pytest.fixture
def kf(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> Any:
    """kforensic run in-process."""
    return partial(cli_run, monkeypatch, capsys)


def _throttled(doc: dict[str, Any]) -> dict[str, Any]:
    return next(f for f in doc["incident"]["findings"] if f["title"] == THROTTLED)


def test_store_alone_reads_its_kernel_log_records(kf: Any, tmp_path: Path) -> None:
    store = _store(tmp_path)
    doc = _report(kf, tmp_path, "--store", store)
    found = _throttled(doc)  # before: no such finding, "found no problem in the inputs from fakehost"
    assert found["severity"] == "medium"
    cited = next(e for e in found["evidence"] if THROTTLED in e["excerpt"])
    assert cited["source"] == f"{store}#kmsg"
    # The line cited is the line the sqlite3 command of the store's records prints: the record, its seq shown.
    assert cited["excerpt"].strip() == f"4,{SEQ},61168376,-;{THROTTLED}"
    examined = [e["what"] for e in doc["incident"]["examined"]]
    said = next(w for w in examined if w.startswith("kernel log records of the stored boot"))
    assert f"{BOOT}" in said and f"{len(RECORDS)} record(s)" in said and "read as a kernel log" in said
    command = next(c for c in doc["commands"] if c.startswith("sqlite3 "))
    if shutil.which("sqlite3") is None:
        pytest.skip("no sqlite3 command line tool")
    printed = subprocess.run(
        shlex.split(command.removesuffix(" | kforensic dmesg -")), capture_output=True, text=True, check=True
    ).stdout.splitlines()
    assert printed == _kmsg()
    assert printed[cited["locator"]["start"] - 1] == cited["excerpt"].strip()
    (tmp_path / "printed.log").write_text("\n".join(printed) + "\n")
    assert_evidence_resolves(findings_of(doc), {f"{store}#kmsg": tmp_path / "printed.log"})
    with SlabStore.open(store) as again:  # (read-only: the store is as it was)
        assert len(again.kmsg()) == len(RECORDS)


def test_a_log_of_the_stored_boot_is_confirmed_and_the_records_not_read_twice(kf: Any, tmp_path: Path) -> None:
    # The watcher started after the boot's first two records: the log holds more than the store.
    store = _store(tmp_path, first=2)
    log = _console(tmp_path / "kern.log")
    doc = _report(kf, tmp_path, "--dmesg", log, "--store", store)
    found = _throttled(doc)
    assert {e["source"] for e in found["evidence"]} == {str(log)}  # (before: the store's records not read at all)
    standing = next(e["standing"] for e in doc["incident"]["examined"] if e["what"].startswith(f"kernel log {log}"))
    assert standing.startswith(f"boot: the stored boot {BOOT}'s: 6 line(s) printed at the same times")
    examined = [e["what"] for e in doc["incident"]["examined"]]
    assert any(w.endswith("read there, not twice") and str(log) in w for w in examined)
    assert not any(w.startswith(f"kernel log {store}#kmsg") for w in examined)
    assert [lane["key"] for lane in doc["lanes"]] == ["boot"]


def test_a_log_off_the_stored_records_is_not_lent_the_stores_boot(kf: Any, tmp_path: Path) -> None:
    # The store holds the boot's records after the throttling only; the log prints every line 3.5 s later.
    store = _store(tmp_path, first=SEQ + 1)
    log = _console(tmp_path / "shifted.log", shift=3.5)
    doc = _report(kf, tmp_path, "--dmesg", log, "--store", store)
    standing = next(e["standing"] for e in doc["incident"]["examined"] if e["what"].startswith(f"kernel log {log}"))
    assert standing.startswith(f"boot: unconfirmed: no check separates it from the stored boot {BOOT}")
    found = _throttled(doc)
    # Before: on the store's boot's clock, dated with its boot time ("boot" lane); now on the log's own clock.
    lane = next(t["lane"] for t in doc["timeline"] if t["title"] == THROTTLED)
    assert lane == f"input {log}"
    assert {e["source"] for e in found["evidence"]} == {str(log)}
    # Nor its host: the log names none, the store's "fakehost" is not shown to be its machine (before: "On fakehost").
    assert doc["summary"].startswith("On the machine, real-time tasks ran")
    assert doc["incident"]["host"] == "fakehost"  # (the store's own)


def test_a_log_of_another_boot_is_set_apart_by_the_stored_records(kf: Any, tmp_path: Path) -> None:
    store = _store(tmp_path)
    other = tmp_path / "other.log"
    other.write_text(_console(tmp_path / "x.log").read_text().replace("random: crng reseeded", "virtio_net: link up"))
    doc = _report(kf, tmp_path, "--dmesg", other, "--store", store)
    apart = [f for f in doc["incident"]["findings"] if f["kind"] == "contradiction"]
    assert [f["title"] for f in apart] == [
        f"{other} is of another boot than the stored boot {BOOT}: it prints other lines than {store}#kmsg (the store's"
        " kernel log records) at the same times since boot"
    ]
    assert apart[0]["baseline"]["source"].startswith(
        f"the store's kernel log records {store}#kmsg, {store}#kmsg line {len(RECORDS)}"
    )


def test_a_log_whose_lines_the_store_holds_at_other_times_is_set_apart(kf: Any, tmp_path: Path) -> None:
    # The store holds every record of the boot (no sequence gap); the log prints each of them 3.5 s later.
    store = _store(tmp_path)
    log = _console(tmp_path / "shifted.log", shift=3.5)
    doc = _report(kf, tmp_path, "--dmesg", log, "--store", store)
    (apart,) = [f for f in doc["incident"]["findings"] if f["kind"] == "contradiction"]
    assert apart["title"] == (
        f"{log} is of another boot than the stored boot {BOOT}: it prints lines of {store}#kmsg (the store's kernel"
        " log records) at other times since boot"
    )
    why = next(f["value"] for f in apart["facts"] if f["name"] == "set apart because")
    # (before: "unconfirmed", the log's lines merely at no time of the records')
    assert why.startswith("it prints 'rcu: \\tMax phase no-delay instances is 1000.' at 3.757538 s since boot (line 3)")
    assert "holding every record from 0.000000 to 70.981083 s" in why


def test_records_of_the_stores_other_boots_are_said_not_analysed(kf: Any, tmp_path: Path) -> None:
    store = _store(tmp_path, reboot=True)
    doc = _report(kf, tmp_path, "--store", store)
    # The boot of the last sample (its boot time is the report's) is read; the earlier boot's records are not.
    examined = doc["incident"]["examined"]
    entry = next(e for e in examined if e["what"].startswith("kernel log records of the stored boot"))
    assert LATER in entry["what"] and "1 record(s)" in entry["what"]
    (said,) = entry["could_not"]
    assert said.startswith(
        f"the kernel log records of boot {BOOT} in the store ({len(RECORDS)} record(s)): not analysed"
    )
    assert not any(f["title"] == THROTTLED for f in doc["incident"]["findings"])
    if shutil.which("sqlite3") is None:
        pytest.skip("no sqlite3 command line tool")
    command = said.split("`")[1]
    out = tmp_path / command.rsplit("> ", 1)[1]
    subprocess.run(command, shell=True, cwd=tmp_path, check=True)
    assert out.read_text().splitlines() == _kmsg()
    again = _report(kf, tmp_path, "--dmesg", out)
    assert _throttled(again)["severity"] == "medium"


#: A fixture guest's printk line: its time and message.
_PRINTK = re.compile(r"\[\s*(\d+)\.(\d{6})\] (.*)")


def _guest_store(tmp: Path, guest: Path) -> Path:
    """A store slab-watch made on a machine of the fixture guests' kernel, holding ``guest``'s kernel log (its
    dmesg.txt) as its records."""
    tree = FakeTree(tmp / "root", BOOT)
    tree.write("proc/sys/kernel/osrelease", "6.1.192\n")
    tree.write("proc/sys/kernel/hostname", "(none)\n")
    found = [m for line in guest.read_text().splitlines() if (m := _PRINTK.match(line))]
    tree.log(*(f"6,{n},{int(m[1]) * 1_000_000 + int(m[2])},-;{_escaped(m[3])}" for n, m in enumerate(found)))
    watch(tree, tmp / "s.sqlite", [])
    return tmp / "s.sqlite"


@pytest.mark.parametrize(("guest", "standing"), [("01-null-member", "boot: the dumped boot's"), ("10-use-after-free",
                         "set apart: its boot's command line is not the dump's")])  # fmt: skip
def test_a_stores_records_beside_a_dump_are_checked_against_the_dumps_log(
    kf: Any, tmp_path: Path, guest: str, standing: str
) -> None:
    dump = load_case("01-null-member")
    store = _guest_store(tmp_path, load_case(guest).dmesg)
    doc = _report(kf, tmp_path, "--vmcore", dump.vmcore, "--vmlinux", dump.vmlinux, "--store", store)
    said = next(e["standing"] for e in doc["incident"]["examined"] if e["what"].startswith(f"kernel log {store}#kmsg"))
    # Before: "unconfirmed: the log could not be read again (cannot read ...#kmsg ...)": no file of that name.
    assert said.startswith(standing), said
