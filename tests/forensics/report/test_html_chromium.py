"""The HTML incident report as a browser shows it: headless Chromium, a screenshot, no console errors."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from forensics.report.html import render_html
from tests.forensics.factories import incident_of, line_evidence, null_deref_finding, write_log

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
pytestmark = pytest.mark.skipif(CHROMIUM is None, reason="Debian package chromium is not installed")

_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--enable-logging=stderr",
    "--v=0",
    "--window-size=1200,900",
)


def _chromium(page: Path, tmp_path: Path, *args: str) -> subprocess.CompletedProcess[str]:
    assert CHROMIUM is not None
    profile = tmp_path / "profile"
    return subprocess.run(
        [CHROMIUM, *_FLAGS, f"--user-data-dir={profile}", *args, page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def _page(tmp_path: Path) -> Path:
    log = write_log(tmp_path)
    ev = line_evidence(log, 2, "BUG: kernel NULL pointer dereference, address: 0000000000000018", 12.345678)
    incident = incident_of((null_deref_finding((ev,)),))
    page = tmp_path / "incident.html"
    page.write_text(render_html(incident, [("Summary", "<p class='summary'>The kernel crashed.</p>")]))
    return page


def test_screenshot_is_not_blank(tmp_path: Path) -> None:
    import matplotlib.image

    shot = tmp_path / "shot.png"
    result = _chromium(_page(tmp_path), tmp_path, f"--screenshot={shot}")
    assert shot.is_file(), result.stderr[-2000:]
    pixels = matplotlib.image.imread(shot)
    assert pixels.shape[0] >= 800
    assert pixels.shape[1] >= 1100
    rgb = pixels[..., :3]
    non_white = (rgb < 0.95).any(axis=-1).mean()
    assert non_white > 0.01, f"only {non_white:.2%} of the screenshot is not white"
    assert rgb.std() > 0.05


def test_page_has_no_console_errors_and_shows_the_finding(tmp_path: Path) -> None:
    result = _chromium(_page(tmp_path), tmp_path, "--dump-dom")
    assert "kf_null_member_read" in result.stdout
    assert "BUG: kernel NULL pointer dereference" in result.stdout
    console = [line for line in result.stderr.splitlines() if "CONSOLE" in line]
    assert console == [], console
