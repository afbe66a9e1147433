"""The CTF decoders on one trace, compared event by event (used by the CTF tests; not a test module)."""

from __future__ import annotations

import gc
import json
import tarfile
from collections.abc import Sequence
from pathlib import Path

import numpy as np

from collectors.ctf import decode, plain
from collectors.ctf import layouts as d
from collectors.ctf.general import Event, decode_stream
from collectors.ctf.metadata import Metadata, parse_metadata, read_metadata_text

SESSION = Path(__file__).resolve().parents[1] / "data" / "lttng" / "kernel-session.tar.xz"


def extract_session(root: Path) -> Path:
    """The project's LTTng kernel + user-space session (lttng_fixtures/build.sh) unpacked in ``root``."""
    with tarfile.open(SESSION) as tar:
        tar.extractall(root, filter="data")
    return root


def with_env(session: Path, root: Path, clock_uuid: str = "", **env: str) -> Path:
    """A copy of the session's kernel trace (its streams linked) whose metadata names other ``env`` values (and
    another clock uuid: another boot's clock)."""
    kernel = root / "kernel"
    kernel.mkdir(parents=True)
    for stream in (session / "kernel").iterdir():
        if stream.name != "metadata":
            (kernel / stream.name).symlink_to(stream)
    text = read_metadata_text(session / "kernel" / "metadata")
    for key, value in env.items():
        start = text.index(f"\t{key} = ")
        text = text[:start] + f"\t{key} = {json.dumps(value)};" + text[text.index("\n", start) :]
    if clock_uuid:
        start = text.index("\tuuid = ", text.index("clock {"))
        text = text[:start] + f"\tuuid = {json.dumps(clock_uuid)};" + text[text.index("\n", start) :]
    (kernel / "metadata").write_text("/* CTF 1.8 */\n" + text)
    return root


def compiled_events(meta: Metadata, buf: bytes) -> tuple[np.ndarray, dict[tuple[int, int], list[str]], int, int]:
    """Every event of a stream by the compiled decoder (rows: id, time, offset and up to 8 values), the
    register paths of each event's values, the stop code and the event id it stopped at; the plain-Python
    decoder must give the same rows, packets, counts and state."""
    lay = d.compile_layouts(meta)
    n_streams, n_ids = lay.event_progs.shape[:2]
    want = np.ones((n_streams, n_ids), dtype=np.int64)
    emit = np.full((n_streams, n_ids, d.N_VALUES), -1, dtype=np.int64)
    paths: dict[tuple[int, int], list[str]] = {}
    for key, regs in lay.regs.items():
        chosen = [p for p in regs if regs[p] >= d.PAY_BASE and regs[p] >= 0][-d.N_VALUES :]
        paths[key] = chosen
        for k, p in enumerate(chosen):
            emit[key[0], key[1], k] = regs[p]
    arr = np.frombuffer(buf, dtype=np.uint8)
    reads = d.field_reads(lay, want, emit)
    outputs = []
    for kernels in (decode, plain):  # the compiled decoder and its plain-Python mirror: the same outputs
        rows = np.zeros((len(arr) // 4 + 16, d.N_ROWCOLS), dtype=np.int64)
        packets = np.zeros((len(arr) // 8 + 16, d.N_PKTCOLS), dtype=np.int64)
        counts = np.zeros((n_streams, n_ids), dtype=np.int64)
        st = np.zeros(d.N_STATE, dtype=np.int64)
        st[0] = len(rows)
        kernels.run(lay, arr, 0, want, emit, reads, counts, rows, packets, st)
        outputs.append((rows[: st[1]], packets[: st[2]], counts, st))
    (rows, packets, counts, st), plain_out = outputs
    assert st.tolist() == plain_out[3].tolist()
    assert np.array_equal(rows, plain_out[0])
    assert np.array_equal(packets, plain_out[1])
    assert np.array_equal(counts, plain_out[2])
    return rows, paths, int(st[3]), int(st[8])


def general_events(meta: Metadata, buf: bytes) -> list[Event]:
    """Every event of a stream by the general decoder."""
    return [ev for pk in decode_stream(meta, buf) for ev in pk.events]


#: The pytest-xdist group of the tests that read the session's kernel streams by the general decoder
#: (:func:`stream_events`): on one worker, which decodes each stream once.
GENERAL_DECODED = "ctf-session-general-decoded"

_DECODED: dict[tuple[bytes, bytes], tuple[Event, ...]] = {}


def stream_events(stream: Path) -> tuple[Event, ...]:
    """Every event of a session's stream file by the general decoder (the metadata beside it), read only.

    Decoded once per process for the same bytes of the two files: the pure-Python decoder takes 0.7-1.2 s of CPU
    for each of the kernel session's two streams, which five tests read whole (the last four streams decoded are
    kept, 40-80 MB each).  The decoding runs with the cyclic garbage collector paused: the events are hundreds of
    thousands of new objects, none of them garbage, and the collector's full collections walked them again and again
    while they were made (14 full collections in test_lttng_kernel_session's 9 tests; :func:`drop_decoded`)."""
    metadata = stream.parent / "metadata"
    key = (metadata.read_bytes(), stream.read_bytes())
    if key not in _DECODED:
        if len(_DECODED) >= 4:
            del _DECODED[next(iter(_DECODED))]
        enabled = gc.isenabled()
        gc.disable()
        try:
            _DECODED[key] = tuple(general_events(parse_metadata(metadata), key[1]))
        finally:
            if enabled:
                gc.enable()
    return _DECODED[key]


def drop_decoded() -> None:
    """Forget the streams :func:`stream_events` decoded: when the worker is done with the tests that share them
    (tests/collectors/conftest.py), so that they are not walked by every later full garbage collection of the worker
    (hundreds of thousands of objects, for the rest of the session)."""
    _DECODED.clear()


def compare(meta: Metadata, stream: Path | bytes) -> int:
    """Assert that both decoders read the same events (offsets, ids, times, values); the event count.

    A stream file read with the metadata beside it (``meta`` parsed from it) is read by the general decoder through
    :func:`stream_events`: decoded once per process, shared with the other tests of :data:`GENERAL_DECODED`."""
    buf = stream if isinstance(stream, bytes) else stream.read_bytes()
    rows, paths, code, _eid = compiled_events(meta, buf)
    if isinstance(stream, Path) and Path(meta.path) == stream.parent / "metadata":
        events: Sequence[Event] = stream_events(stream)
    else:
        events = general_events(meta, buf)
    assert code in (d.ST_END, d.ST_GENERAL), d.STOP_TEXT.get(code, code)
    if code == d.ST_GENERAL:  # the compiled decoder hands such packets over: nothing to compare there
        return len(events)
    assert len(rows) == len(events)
    for row, ev in zip(rows.tolist(), events, strict=True):
        assert (row[d.R_EID], row[d.R_OFF]) == (ev.id, ev.offset), ev.name
        assert row[d.R_TS] == ev.cycles, ev.name
        for k, p in enumerate(paths[(ev.stream_id, ev.id)]):
            if p in ev.flat:  # not: an element of an empty array, an option not chosen (the register is stale)
                assert row[d.R_V0 + k] == ev.flat[p], (ev.name, ev.offset, p)
    return len(events)
