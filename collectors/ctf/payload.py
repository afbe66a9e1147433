"""The payload of one cited CTF event, read again from its stream file.

The compiled decoder keeps a few registers per row (a UST event's thread, message and ``id``); a slow
span's evidence cites what its events carried (lttng_ust_cyg_profile's ``addr`` and ``call_site``, a
provider event's own fields).  Those few events are decoded here by the general decoder, each alone:
the packets of its stream file are walked by their headers to the one that holds it (no event of the
packet before it is decoded), and only that packet's bytes are read from the file.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from collectors.ctf.general import DecodeError, GeneralDecoder
from collectors.ctf.metadata import Metadata

# A string field cited is cut here (a tracef message may be a few KB).
TEXT_MAX = 120
# Packet header and context of LTTng's layouts fit in this many bytes (read to learn a packet's size).
_HEAD = 256


class PayloadReader:
    """The fields of events given by stream file and byte offset, in one trace's metadata."""

    def __init__(self, meta: Metadata) -> None:
        self.decoder = GeneralDecoder(meta)
        self._packets: dict[Path, list[tuple[int, int]]] = {}  # file -> (offset, size) of each packet

    def _packet_of(self, path: Path, off: int) -> tuple[int, int] | None:
        packets = self._packets.get(path)
        if packets is None:
            packets = self._packets[path] = []
            size = path.stat().st_size
            pos = 0
            with path.open("rb") as f:
                while pos < size:
                    f.seek(pos)
                    head = f.read(_HEAD)
                    try:
                        pk, _cur = self.decoder._open(head, 0, None, salvage=True)
                    except DecodeError:
                        break
                    bits = pk.packet_bits
                    if bits <= 0:
                        break
                    packets.append((pos, bits // 8))
                    pos += bits // 8
        for start, size in packets:
            if start <= off < start + size:
                return start, size
        return None

    def fields(self, path: Path, off: int) -> dict[str, Any] | None:
        """The payload fields of the event whose header is at byte ``off`` of stream file ``path`` (None: no
        packet holds it, or it does not decode)."""
        got = self._packet_of(path, off)
        if got is None:
            return None
        start, size = got
        with path.open("rb") as f:
            f.seek(start)
            data = f.read(size)
        try:
            pk, cur = self.decoder._open(data, 0, None, salvage=True)
            cur.pos = (off - start) * 8
            ev = self.decoder._event(cur, pk.stream_id)
        except DecodeError:
            return None
        return None if ev is None else ev.fields


def render(fields: dict[str, Any], skip: tuple[str, ...] = ()) -> str:
    """``name=value`` of each field, as babeltrace2 shows them: integers named like addresses in hex, strings
    quoted (cut at :data:`TEXT_MAX`), the lengths LTTng adds to sequences and strings left out."""
    out = []
    for name, value in fields.items():
        if name in skip or (name.startswith("_") and name.endswith("_length")):
            continue
        out.append(f"{name}={_value(name, value)}")
    return " ".join(out)


def _value(name: str, value: Any) -> str:
    if isinstance(value, bool):
        return str(int(value))
    if isinstance(value, int):
        return f"0x{value & 0xFFFFFFFFFFFFFFFF:x}" if _is_address(name) else str(value)
    if isinstance(value, str):
        text = value if len(value) <= TEXT_MAX else value[:TEXT_MAX] + "..."
        return repr(text)
    if isinstance(value, dict):
        return "{" + render(value) + "}"
    if isinstance(value, list):
        shown = ", ".join(_value(name, v) for v in value[:8])
        return "[" + shown + (", ..." if len(value) > 8 else "") + "]"
    return str(value)


def _is_address(name: str) -> bool:
    """Fields that hold addresses (lttng_ust_cyg_profile's addr and call_site, ip, *_addr, *_ptr)."""
    return name in ("addr", "call_site", "ip", "ptr", "func", "caller") or name.endswith(("_addr", "_ptr", "_ip"))
