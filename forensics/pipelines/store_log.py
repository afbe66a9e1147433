"""``kforensic report --store``: the kernel log records a slab-watch store holds, read as a kernel log.

slab-watch stores each record /dev/kmsg hands it (table ``kmsg``: boot id, sequence number, level, time since boot,
message), keyed by boot.  Unread, a store of a boot that logged "sched: RT throttling activated" was reported "no
problem in the inputs from vm", and a ``--dmesg`` log beside it (every printk time 3.5 s off the store's) was dated
with the store's boot time and placed "On vm" unchecked (ue24 F13).  So the report reads them:

* the records of the stored boot (the boot of the store's last timed sample, whose boot time the report gives), as
  ``/dev/kmsg`` prints them (``LEVEL,SEQ,USEC,FLAGS;MESSAGE``, one line per record in sequence order: the line a
  finding cites is the line ``sqlite3`` prints with :func:`export_command`, and shows the record's sequence
  number), through the ``kforensic dmesg`` pipeline, cited as ``STORE#kmsg``;
* they are the stored boot's own lines, the reference a ``--dmesg`` log is checked against
  (forensics/pipelines/boot_identity.py, detectors/incident/boot_identity.py): a log that prints them at the same
  times is of that boot, and the records are not read twice; another is unconfirmed or set apart;
* the records of the store's other boots are not read (their boot time is not the one the report gives): said
  under "could not judge", with the command that prints them.

The store is opened read-only, as every reader of it (collectors/slabstore.py).
"""

from __future__ import annotations

import shlex
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from collectors.log_boots import COMMAND_LINE, PANIC, boot_clock
from detectors.incident.boot_identity import Reference
from forensics.types.boots import LoggedBoot, LoggedLine

if TYPE_CHECKING:
    from collectors.slabstore import KmsgRow
    from forensics.types.dmesg_result import DmesgResult


@dataclass(frozen=True)
class StoredLog:
    """The kernel log records of the stored boot, and how many of the store's other boots were left unread.

    ``boot_id`` is the boot of the store's last timed sample (its boot time is :func:`store_boot_time`'s);
    ``rows`` its records in sequence order; ``others``: (boot id, records) of each other boot the store holds.
    """

    store: Path
    boot_id: str
    rows: tuple[KmsgRow, ...]
    others: tuple[tuple[str, int], ...]

    @property
    def name(self) -> str:
        """How the findings cite the records: the store's file and table (the line is the record's, in order)."""
        return f"{self.store}#kmsg"


def read_stored_log(store_path: Path) -> StoredLog | None:
    """The stored boot's kernel log records (maybe none) and the other boots' counts (None: no sample names a boot)."""
    from collectors.slabstore import SlabStore

    with SlabStore.open(store_path, readonly=True) as store:
        timed = [s for s in store.samples() if isinstance(s.uptime, float) and s.boot_id]
        if not timed or timed[-1].boot_id is None:
            return None
        boot = timed[-1].boot_id
        rows = tuple(sorted(store.kmsg(boot), key=lambda r: r.seq))
        counts = store.db.execute("SELECT boot_id, count(*) FROM kmsg WHERE boot_id != ? GROUP BY boot_id", (boot,))
        others = tuple((str(b), int(n)) for b, n in counts)
    return StoredLog(store_path, boot, rows, others)


def _line(row: KmsgRow) -> str:
    # (the message is stored kernel-escaped, one line; a raw newline would shift every later line's number)
    message = row.message.replace("\n", "\\x0a")
    return f"{row.facility * 8 + row.level},{row.seq},{row.usec},{row.flags};{message}"


def record_text(log: StoredLog) -> bytes:
    """The records as /dev/kmsg prints them, one line each, in sequence order (:func:`export_command`'s output)."""
    return "".join(_line(r) + "\n" for r in log.rows).encode("utf-8", "surrogateescape")


def export_command(store: Path, boot_id: str) -> str:
    """The ``sqlite3`` command that prints the records of ``boot_id`` as :func:`record_text` (read-only)."""
    query = (
        "SELECT (facility * 8 + level) || ',' || seq || ',' || usec || ',' || flags || ';' || message FROM kmsg "
        f"WHERE boot_id = '{boot_id}' ORDER BY seq"
    )
    # In double quotes when nothing in it is special there (a boot id is a UUID): readable, the SQL's own quotes kept.
    quoted = f'"{query}"' if not set(query) & set('"$`\\!') else shlex.quote(query)
    return f"sqlite3 -readonly {shlex.quote(str(store))} {quoted}"


def reference(log: StoredLog) -> Reference:
    """How the boot checks name the stored boot."""
    boot = f"the stored boot {log.boot_id}"
    return Reference(
        "the stored boot's", f"{log.name} (the store's kernel log records)", boot, f"the kernel of {boot}",
        f"the store's kernel log records {log.name}",
    )  # fmt: skip


def stored_boot(log: StoredLog) -> LoggedBoot:
    """The records as the boot checks read a boot: each line cited by its line of :func:`record_text`.

    /dev/kmsg escapes a tab as ``\\x09``, which ``dmesg`` prints as it is: read back.  A time at which a record has
    another byte escaped (a newline, each byte of a non-ASCII character, which ``dmesg`` prints as it is or escaped
    by its locale) is left out whole: the log's line and the record need not be the same text of one record, and a
    record left out alone would leave its neighbour at the same microsecond "the record at that time" (the real
    store's "rcu: \\x09Max phase no-delay instances is 1000." beside "Freeing SMP alternatives memory: 52K", both
    at 0.257538 s, made this machine's own log "another boot").
    """
    rows = [(n, r, r.message.replace("\\x09", "\t")) for n, r in enumerate(log.rows, 1)]
    unsure = {r.usec for _, r, message in rows if "\\x" in message}
    lines = tuple(
        LoggedLine(n, r.usec / 1e6, _line(r), message.strip()) for n, r, message in rows if r.usec not in unsure
    )
    command = next((x for x in lines if x.body.startswith(COMMAND_LINE)), None)
    panic = next((x for x in reversed(lines) if x.body.startswith(PANIC)), None)
    clock, began = next(((x, b) for x in lines if (b := boot_clock(x)) is not None), (None, None))
    # Every record from the first stored to the last, when their sequence numbers follow on without a gap: the store
    # holds any line of the boot printed in between (the ``same message`` check of detectors/incident/boot_identity.py).
    seqs = [r.seq for r in log.rows]
    complete = (
        (log.rows[0].usec / 1e6, log.rows[-1].usec / 1e6) if seqs and seqs[-1] - seqs[0] + 1 == len(seqs) else None
    )
    last = log.rows[-1].usec / 1e6 if log.rows else None
    return LoggedBoot(log.name, 1, None, command, lines, panic, last, clock, began, complete)


def analyse_stored_log(log: StoredLog) -> DmesgResult:
    """``kforensic dmesg`` on the records (:func:`record_text`), its findings citing ``STORE#kmsg``."""
    from forensics.pipelines.dmesg import analyse_log_bytes

    return analyse_log_bytes(log.name, record_text(log))
