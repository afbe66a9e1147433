"""The kernel release and host a kernel log states (boot banner, syslog prefixes), through ``kforensic dmesg``."""

from __future__ import annotations

import gzip
import json
import subprocess
import sys
from pathlib import Path

import pytest

from collectors.kernel_log import log_chunks, open_log
from collectors.log_identity import HEAD_BYTES, parse_identity, read_identity

BANNER = (
    "[    0.000000] Linux version 6.18.44-fc-v1252 (builder@sandboxing) (gcc (GCC) 15.3.0, GNU ld (GNU Binutils)"
    " 2.46) #1 SMP PREEMPT_DYNAMIC @0\n"
    "[    0.000000] Command line: console=ttyS0 quiet reboot=k\n"
)
SYSLOG = (
    "Dec  3 17:45:01 db7 kernel: [    0.000000] Linux version 6.1.0-28-amd64 (debian-kernel@lists.debian.org)"
    " (gcc-12 (Debian 12.2.0-14) 12.2.0) #1 SMP PREEMPT_DYNAMIC Debian 6.1.119-1\n"
    "Dec  3 17:45:02 db7 kernel: [    1.000000] ACPI: Core revision 20220331\n"
    "2026-12-03T17:45:03.123456+00:00 db7 kernel: [    2.000000] pci 0000:00:01.0: reg 0x10\n"
)


def _dmesg_json(path: Path) -> dict[str, object]:
    ran = subprocess.run(
        [sys.executable, "-m", "forensics", "dmesg", str(path), "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    doc: dict[str, object] = json.loads(ran.stdout)
    return doc


def test_the_banner_and_syslog_prefixes_name_release_and_host() -> None:
    assert parse_identity(BANNER.encode()).releases == ("6.18.44-fc-v1252",)
    assert parse_identity(BANNER.encode()).hosts == ()
    named = parse_identity(SYSLOG.encode())
    assert named.releases == ("6.1.0-28-amd64",) and named.hosts == ("db7",)
    assert parse_identity(b"[    1.0] Linux version is not a banner\n").releases == ()


def test_journalctl_short_full_prefixes_name_the_host(tmp_path: Path) -> None:
    """``journalctl -k -o short-full``: "Mon 2026-12-07 14:30:02 CET myhost kernel: ..." (its lines were taken apart,
    but the host was not read: ue6 10f)."""
    full = (
        SYSLOG.replace("Dec  3 17:45:01 ", "Thu 2026-12-03 17:45:01 CET ")
        .replace("Dec  3 17:45:02 ", "Thu 2026-12-03 17:45:02.123456 UTC+1 ")
        .replace("2026-12-03T17:45:03.123456+00:00 ", "Thu 2026-12-03 17:45:03 CET ")
    )
    assert full.count(" db7 kernel: ") == 3 and "17:45:02.123456 UTC+1 db7 kernel: " in full
    named = parse_identity(full.encode())
    assert (named.releases, named.hosts) == (("6.1.0-28-amd64",), ("db7",))
    log = tmp_path / "full.log"
    log.write_text(full.replace(" db7 kernel: ", " myhost kernel: "))
    incident = _dmesg_json(log)["incident"]
    assert isinstance(incident, dict)
    assert incident["host"] == "myhost"


@pytest.mark.parametrize(
    "stamp",
    ["2026-12-03 17:45:01", "2026-12-03 17:45:01.123456", "2026-12-03 17:45:01+01:00", "[   12.345678]"],
)
def test_iso_stamps_with_a_space_and_short_monotonic_name_the_host(stamp: str) -> None:
    """rsyslog's and journalctl's ISO stamps with a space, and ``journalctl -o short-monotonic``: lines the scanner
    takes apart (detectors.dmesg.lines), whose host was not read until 2026-12-07 (only an ISO stamp with a "T")."""
    line = f"{stamp} web01 kernel: [    0.000000] Linux version 6.1.0-28-amd64 (x@y) #1 SMP\n"
    assert parse_identity((line * 3).encode()).hosts == ("web01",)


@pytest.mark.parametrize("zone", ["+04", "-03", "+0530"])
def test_journalctl_short_full_with_a_numeric_zone_names_the_host(zone: str) -> None:
    """A zone without an abbreviation prints as its offset (review 10, 9: "no syslog prefixes naming the host")."""
    line = f"Mon 2026-12-07 14:30:02 {zone} myhost kernel: [    0.000000] Linux version 6.1.0 (x@y) #1 SMP\n"
    assert parse_identity(line.encode()).hosts == ("myhost",)


def test_a_plain_dmesg_message_saying_kernel_is_no_host() -> None:
    """``[    1.0] Booting kernel: ...`` in a plain dmesg has short-monotonic's shape: read as host "Booting" (review
    10, 3).  A short-monotonic log names its host on every line; one such message among plain lines names none."""
    plain = "[    0.000000] Linux version 6.1.0 (x@y) #1 SMP\n[    1.000000] Booting kernel: from bzImage\n"
    plain += "".join(f"[    2.{n:06d}] usb 1-1: new device\n" for n in range(10))
    assert parse_identity(plain.encode()).hosts == ()


def test_dmesg_reads_the_release_from_the_first_line_and_the_host_from_syslog(tmp_path: Path) -> None:
    plain = tmp_path / "dmesg.txt"
    plain.write_text(BANNER)
    doc = _dmesg_json(plain)
    incident = doc["incident"]
    assert isinstance(incident, dict)
    assert incident["kernel_release"] == "6.18.44-fc-v1252"
    assert "no syslog prefixes naming the host" in json.dumps(incident["host"])
    packed = tmp_path / "syslog.gz"
    packed.write_bytes(gzip.compress(SYSLOG.encode()))
    incident = _dmesg_json(packed)["incident"]
    assert isinstance(incident, dict)
    assert (incident["host"], incident["kernel_release"]) == ("db7", "6.1.0-28-amd64")


@pytest.mark.parametrize("at", [HEAD_BYTES - len(BANNER), HEAD_BYTES + 1])
def test_a_compressed_log_is_read_to_the_same_head_as_a_plain_one(tmp_path: Path, at: int) -> None:
    # The head is HEAD_BYTES of text, not 16 decompressed pieces (up to 8 MB each: a zstd bomb's head held 256 MB)
    text = (b"x" * 99 + b"\n") * (at // 100) + b"y" * (at % 100) + BANNER.encode()
    plain, packed = tmp_path / "dmesg.txt", tmp_path / "dmesg.txt.gz"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text, 1))
    want = ("6.18.44-fc-v1252",) if at + len(BANNER) <= HEAD_BYTES else ()
    assert read_identity(str(plain)).releases == read_identity(str(packed)).releases == want


@pytest.mark.parametrize("at", [HEAD_BYTES - len(BANNER), HEAD_BYTES + 1])
def test_the_head_kept_while_a_log_is_read_is_what_reading_it_again_gives(tmp_path: Path, at: int) -> None:
    """``kforensic dmesg`` parses the head its scan read (log_chunks' ``head``), not the file read again: the same
    bytes as read (decompressed, not normalized: a UTF-16 log's own), so the same identity."""
    text = (b"x" * 99 + b"\n") * (at // 100) + b"y" * (at % 100) + BANNER.encode()
    plain, packed, wide = tmp_path / "dmesg.txt", tmp_path / "dmesg.txt.gz", tmp_path / "utf16.txt"
    plain.write_bytes(text)
    packed.write_bytes(gzip.compress(text, 1))
    wide.write_bytes(BANNER.encode("utf-16"))
    for path, raw in ((plain, text), (packed, text), (wide, wide.read_bytes())):
        head = bytearray()
        with open_log(str(path)) as tracked:
            for _ in log_chunks(tracked, chunk_size=4096, head=head):
                pass
        assert bytes(head) == raw[:HEAD_BYTES]
        assert parse_identity(bytes(head)) == read_identity(str(path))


def test_the_preemption_model_of_each_boot() -> None:
    # A PREEMPT_DYNAMIC kernel prints its boot's choice (kernel/sched/core.c); otherwise the banner's build
    # flags say it: PREEMPT_RT, PREEMPT (full), or neither (PREEMPT_NONE or PREEMPT_VOLUNTARY, not told apart).
    dynamic = BANNER + "[    0.148429] Dynamic Preempt: none\n[    0.148500] rcu: Preemptible hierarchical RCU\n"
    assert parse_identity(dynamic.encode()).preemption == ("none",)
    assert parse_identity(BANNER.encode()).preemption == ()  # dynamic, its choice not in the log
    full = BANNER.replace("SMP PREEMPT_DYNAMIC @0", "SMP PREEMPT Wed Dec  3 12:00:00 UTC 2026")
    rt = BANNER.replace("SMP PREEMPT_DYNAMIC @0", "SMP PREEMPT_RT @0")
    plain = BANNER.replace("SMP PREEMPT_DYNAMIC @0", "SMP Debian 5.10.226-1 (2024-10-03)")
    assert [parse_identity(b.encode()).preemption for b in (full, rt, plain)] == [
        ("full",),
        ("rt",),
        ("none or voluntary",),
    ]


def test_the_preemption_model_a_kernels_uname_v_states() -> None:
    """An LTTng kernel trace keeps ``uname -v`` (env.kernel_version): its build flags say the model as a banner's
    do, except where they cannot: PREEMPT_DYNAMIC (chosen at boot), and PREEMPT on 5.12-5.17, which a
    PREEMPT_DYNAMIC build printed too (its own flag came in 5.18)."""
    from collectors.log_identity import uts_preemption

    assert uts_preemption("#6 SMP PREEMPT Wed Oct 1 17:07:11 CEST 2014", "3.10.31-ltsi").model == "full"
    assert uts_preemption("#1 SMP PREEMPT_RT Debian 6.1.192-3 (2026-11-26)", "6.1.0-57-rt-amd64").model == "rt"
    assert uts_preemption("#1 SMP Debian 5.10.226-1 (2024-10-03)", "5.10.0-32-amd64").model == "none or voluntary"
    assert uts_preemption("#1 SMP PREEMPT Tue Dec 18 08:57:15 CET 2012").model == "full"  # release unknown
    assert uts_preemption("#1 SMP PREEMPT Fri Mar 4 2022", "5.18.0").model == "full"
    for version, release in (
        ("#1 SMP PREEMPT_DYNAMIC Debian 6.1.192-3 (2026-11-26)", "6.1.0-57-amd64"),
        ("#1 SMP PREEMPT Fri Mar 4 2022", "5.15.0-1"),  # a 5.15 PREEMPT_DYNAMIC build says PREEMPT
        ("#1 SMP PREEMPT Fri Mar 4 2022", "5.12.0"),
        ("6.1.0 custom", "6.1.0"),  # not a uname -v
    ):
        built = uts_preemption(version, release)
        assert built.model == "" and built.why, (version, release)
    assert "chosen at boot" in uts_preemption("#1 SMP PREEMPT_DYNAMIC x", "6.1.0").why


def test_a_log_that_does_not_start_at_boot_says_when_it_starts() -> None:
    """The first time-stamped line, when it is not the banner: how long after boot the log begins."""
    wrapped = "[ 1936.940941] kforensic-kill-test-9\n[ 1937.000001] eth0: link up\n"
    assert parse_identity(wrapped.encode()).starts_after == 1936.940941
    assert parse_identity(("<6>" + wrapped).encode()).starts_after == 1936.940941  # dmesg -r
    assert parse_identity(("kern  :info  : " + wrapped).encode()).starts_after == 1936.940941  # dmesg -x
    assert parse_identity(SYSLOG.split("\n", 1)[1].encode()).starts_after is None  # 1.000000: within a second
    assert parse_identity(SYSLOG.split("\n", 2)[2].encode()).starts_after == 2.0  # a rotated kern.log
    for head in (BANNER, SYSLOG, "[    0.512000] microcode: updated early\n" + BANNER):
        assert parse_identity(head.encode()).starts_after is None  # at boot (a line before the banner: < 1 s)
    # dmesg -T: no seconds-since-boot stamp at all; a bracketed number in a message is not one.
    human = "[Fri Dec  4 09:27:25 2026] Linux version 6.18.44\n[Fri Dec  4 09:30:00 2026] x: [ 12.500000] y\n"
    assert parse_identity(human.encode()).starts_after is None


def _live_records() -> list[bytes]:
    from collectors.kernel_log import KmsgDumpReader, kmsg_available

    if not kmsg_available():
        pytest.skip("this machine does not let the tests read /dev/kmsg")
    return list(KmsgDumpReader().chunks())


@pytest.mark.live
def test_dmesg_live_names_the_running_kernel_and_host() -> None:
    """The ring buffer is the running kernel's: ``dmesg --live`` said "no report or boot banner names the release"
    and "no syslog prefixes naming the host" of this machine, with the banner in the buffer it read."""
    _live_records()
    ran = subprocess.run(
        [sys.executable, "-m", "forensics", "dmesg", "--live", "-f", "json"],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert ran.returncode == 0, ran.stderr
    incident = json.loads(ran.stdout)["incident"]
    release = Path("/proc/sys/kernel/osrelease").read_text().strip()
    host = Path("/proc/sys/kernel/hostname").read_text().strip()
    assert (incident["kernel_release"], incident["host"]) == (release, host)


@pytest.mark.live
def test_a_wrapped_kmsg_buffer_says_when_after_boot_it_starts() -> None:
    """Records of /dev/kmsg (``--live``, or a file saved from it) carry microseconds since boot, not ``[ s.us]``:
    a head without the banner was not seen to start late (its first reports might be gone)."""
    records = _live_records()
    if records[0].split(b";", 1)[1].startswith(b"Linux version "):
        assert parse_identity(b"".join(records)).starts_after is None  # the whole buffer: it starts at boot
    late = next((i for i, r in enumerate(records) if int(r.split(b",", 3)[2]) > 2_000_000), None)
    if late is None:
        pytest.skip("the ring buffer holds no record logged 2 s after boot")
    usec = int(records[late].split(b",", 3)[2])
    assert parse_identity(b"".join(records[late:])).starts_after == usec / 1e6
