"""A dump's kernel log without the kernel's debug info, as makedumpfile reads it from the dump.

``makedumpfile --dump-dmesg DUMP FILE`` reads the printk buffer with the dump's VMCOREINFO alone (symbol
addresses and record layout), no vmlinux: 15 ms for a fixture dump.  It is what kdump-tools and kexec-tools
run at capture time to write ``dmesg.<stamp>`` or ``vmcore-dmesg.txt`` beside the dump, so a crash directory
usually holds the log already (:func:`forensics.vmcore.locate.locate_dump` finds it).  Whether a log found there
is this dump's is read here too: its last records are compared with this output's
(:mod:`forensics.vmcore.logcheck`), so the tool runs once for a dump read without debug info, with a log beside
it or without.  No drgn here.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
from pathlib import Path

#: Seconds makedumpfile may take: it reads a few pages of the dump (the log buffer), whatever the dump's size.
MAKEDUMPFILE_TIMEOUT = 60.0


class LogUnavailableError(Exception):
    """The dump's kernel log could not be had; ``reason`` says why, for the one error line.  ``ran``: makedumpfile
    ran on the dump and failed to read it (not: it is missing, could not be started or did not finish)."""

    def __init__(self, reason: str, ran: bool = False) -> None:
        super().__init__(reason)
        self.reason = reason
        self.ran = ran


@dataclass(frozen=True)
class ExtractedLog:
    """The kernel log makedumpfile extracted from a dump for this run (its temporary file is gone).

    ``command`` writes the same text again (``FILE`` standing for the file to write): the user's copy of the log
    that the findings cite by line.
    """

    command: tuple[str, ...]
    data: bytes


def _argument(path: Path) -> str:
    """A path as an argument that no program takes for an option (``-x`` -> ``./-x``)."""
    text = str(path)
    return f"./{text}" if text.startswith("-") else text


def extract_log(dump: Path) -> ExtractedLog:
    """The kernel log in ``dump``, as ``makedumpfile --dump-dmesg`` writes it; raises :class:`LogUnavailableError`.

    The tool writes into a private temporary directory (0700; makedumpfile creates its file 0600 and refuses
    one that exists), read back and deleted here; the dump is only read.  No shell: an argument list.
    """
    exe = shutil.which("makedumpfile")
    if exe is None:
        raise LogUnavailableError(
            "makedumpfile is not installed (not on PATH; Debian/Ubuntu package makedumpfile, RHEL/Fedora kexec-tools)"
        )
    with tempfile.TemporaryDirectory(prefix="kforensic-dmesg-") as private:
        out = Path(private) / "dmesg"
        try:
            done = subprocess.run(
                [exe, "--dump-dmesg", _argument(dump), str(out)],
                stdin=subprocess.DEVNULL,
                capture_output=True,
                timeout=MAKEDUMPFILE_TIMEOUT,
                check=False,
            )
        except subprocess.TimeoutExpired:
            raise LogUnavailableError(
                f"makedumpfile --dump-dmesg did not finish in {MAKEDUMPFILE_TIMEOUT:.0f} s"
            ) from None
        except OSError as exc:
            raise LogUnavailableError(f"makedumpfile could not be run: {exc.strerror or exc}") from None
        if done.returncode != 0 or not out.is_file():
            said = _what_it_said(done.stdout + b"\n" + done.stderr)
            raise LogUnavailableError(
                f"makedumpfile --dump-dmesg failed (exit {done.returncode}" + (f": {said})" if said else ")"), ran=True
            )
        try:
            os.chmod(out, 0o600)
            data = out.read_bytes()
        except OSError as exc:
            raise LogUnavailableError(f"cannot read makedumpfile's output: {exc.strerror or exc}") from None
    return ExtractedLog(("makedumpfile", "--dump-dmesg", _argument(dump), "FILE"), data)


def _what_it_said(output: bytes) -> str:
    """makedumpfile's reason for failing: its messages without the closing "makedumpfile Failed." (one line)."""
    lines = [line.strip() for line in output.decode("utf-8", errors="replace").splitlines()]
    said = [line for line in lines if line and line != "makedumpfile Failed."]
    return "; ".join(said[-2:])[:300]
