"""``--timeout`` bounds a whole Prometheus request, not each socket read (review round 9, finding 6).

A server that sends its answer a byte at a time reset the per-read timeout at every byte: ``leaks --prometheus URL
--timeout 5`` never returned (killed after 100 s, no line at all).  A real local server trickles its answer here.
"""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator

import pytest

from collectors.prometheus import PromAuth, PromClient
from forensics.errors import InputError
from tests.forensics.commands.test_slabwatch_cli import kforensic_process


@pytest.fixture
def trickling_server() -> Iterator[str]:
    """Answers every request with a 200 header promising 100,000 bytes, then one byte every 0.2 s."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(8)
    stop = threading.Event()

    def answer(conn: socket.socket) -> None:
        with conn:
            try:
                conn.recv(65536)
                conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 100000\r\n\r\n")
                while not stop.wait(0.2):
                    conn.sendall(b" ")
            except OSError:  # the client gave up and closed
                pass

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = listener.accept()
            except OSError:
                return
            threading.Thread(target=answer, args=(conn,), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    try:
        yield f"http://127.0.0.1:{listener.getsockname()[1]}"
    finally:
        stop.set()
        listener.close()


def test_a_trickled_answer_is_cut_at_the_timeout(trickling_server: str) -> None:
    client = PromClient(trickling_server, PromAuth(timeout=1.0))
    outcome: list[BaseException] = []

    def ask() -> None:
        try:
            client.query("up", 0.0)
        except BaseException as exc:
            outcome.append(exc)

    asker = threading.Thread(target=ask, daemon=True)
    asker.start()
    asker.join(60)  # before: a read every 0.2 s never hit the 1-s socket timeout, 100,000 bytes took 5.5 h
    assert not asker.is_alive(), "the request outlived its 1 s timeout"
    assert len(outcome) == 1 and isinstance(outcome[0], InputError), outcome
    assert str(outcome[0]) == f"Prometheus at {trickling_server} did not answer within 1 s"


def test_leaks_against_a_trickling_server_is_one_line_and_exit_3(trickling_server: str) -> None:
    done = kforensic_process("leaks", "--prometheus", trickling_server, "--timeout", "1")  # (was: killed at 60 s)
    assert done.returncode == 3, done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"kforensic: error: Prometheus at {trickling_server} did not answer within 1 s", done.stderr
    assert len(lines) == 2 and "Traceback" not in done.stderr
