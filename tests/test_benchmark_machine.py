"""benchmarks/machine.py: the machine line every benchmark prints (what made this VM's figures vary)."""

from __future__ import annotations

from pathlib import Path

from benchmarks.machine import first_touch_us, free_page_reporting, loop_ms, machine_line


def _balloon(root: Path, features: str) -> Path:
    device = root / "virtio_balloon" / "virtio0"
    device.mkdir(parents=True)
    (device / "features").write_text(features + "\n")
    return root / "virtio_balloon"


def test_free_page_reporting_is_read_from_the_balloons_feature_bit(tmp_path: Path) -> None:
    reported = tmp_path / "reported_kib"
    reported.write_text("66428484\n")
    # bit 5, VIRTIO_BALLOON_F_REPORTING (what a Firecracker guest here showed: stats, deflate on OOM, reporting)
    on = _balloon(tmp_path / "on", "0110010100000000000000000000000010000000")
    assert free_page_reporting(on, reported) == "free pages reported to the host (63 GiB so far)"
    assert free_page_reporting(on, tmp_path / "absent") == "free pages reported to the host"
    off = _balloon(tmp_path / "off", "0110000100000000000000000000000010000000")
    assert free_page_reporting(off, reported) == "a virtio balloon without free page reporting"
    assert free_page_reporting(tmp_path / "none", reported) == "no virtio balloon"


def test_the_line_names_the_page_cost_measured_here() -> None:
    assert first_touch_us(samples=1) > 0 and loop_ms(samples=1) > 0  # measured, whatever the machine's speed
    line = machine_line()
    assert line.startswith("machine: ") and " CPUs, load " in line and " ms; first touch" in line
