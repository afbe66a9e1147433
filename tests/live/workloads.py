"""The workloads live tests and recordings run beside slab-watch: a real leak, and file writes that are not one.

Each is a Python program run in a child process (``python -c PROGRAM ARGS``), so the child's
memory and files are its own and a kill ends it.  ``python -m tests.live.workloads leak|write ARGS``
runs one from a shell (tests/data/workloads/record.sh).

* :data:`LEAKER` maps 4 KiB anonymous regions at a fixed rate with alternating protections
  (PROT_READ, PROT_READ|PROT_WRITE) so neighbouring VMAs cannot merge: every mapping costs one
  ``vm_area_struct``, held until the child is killed.  Args: mappings per second, seconds, and optionally
  a number of mappings made at once before "ready" (``LEAKER 0 0 N``: N mappings, held).
* :data:`FILE_WRITER` writes new files at a fixed rate (1 MiB writes, 64 MiB per file) into a
  directory, growing the page cache and the objects that describe its pages (buffer heads, xarray
  nodes, per-folio state) as a copy or a log-heavy service does; nothing leaks.  Args: directory,
  MiB per second, seconds.  The caller removes the directory.
* :data:`UDP_LEAKER` opens UDP sockets at a fixed rate and never closes them (a real socket leak: one
  ``UDP``, ``sock_inode_cache``, ``dentry`` and ``filp`` each, held until the child ends).  Args: sockets
  per second, seconds.
* :data:`FILE_CREATOR` creates empty files at a fixed rate in a directory and keeps them: on an overlayfs over
  tmpfs (record.sh's overlay-files) each costs an ``ovl_inode`` (reclaimable: overlayfs drops unused ones
  under pressure, SLAB_RECLAIM_ACCOUNT) and a ``shmem_inode_cache`` (held as long as the tmpfs file).
  Args: directory, files per second, seconds.
* :data:`TCP_CLIENT` connects to its own loopback server at a fixed rate and closes first, as a
  web client or a health checker does: every connection leaves a ``tw_sock_TCP`` in TIME_WAIT for
  60 s, so the cache fills for a minute and levels off; nothing leaks.  Args: connections per second,
  seconds.
"""

from __future__ import annotations

import os
import sys

LEAKER = r"""
import ctypes, sys, time
libc = ctypes.CDLL(None, use_errno=True)
libc.mmap.restype = ctypes.c_void_p
libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
rate, seconds = float(sys.argv[1]), float(sys.argv[2])
first = int(sys.argv[3]) if len(sys.argv) > 3 else 0
PROT_READ, PROT_WRITE, MAP_PRIVATE, MAP_ANONYMOUS = 1, 2, 0x02, 0x20
failed = ctypes.c_void_p(-1).value

def map_one(n):
    prot = PROT_READ if n % 2 else PROT_READ | PROT_WRITE
    if libc.mmap(None, 4096, prot, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0) in (None, failed):
        sys.exit(f"mmap failed after {n} mappings: errno {ctypes.get_errno()}")

for n in range(first):
    map_one(n)
done = 0
start = time.monotonic()
print("ready", flush=True)
while (elapsed := time.monotonic() - start) < seconds:
    while done < int(rate * elapsed):
        map_one(first + done)
        done += 1
    time.sleep(0.002)
print("done", first + done, flush=True)
sys.stdin.read()  # hold the mappings until the test lets go
"""

FILE_WRITER = r"""
import os, sys, time
directory, rate, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
chunk = b"\xa5" * (1 << 20)
written = 0
start = time.monotonic()
print("ready", flush=True)
while (elapsed := time.monotonic() - start) < seconds:
    if written < rate * elapsed:
        with open(os.path.join(directory, f"file-{written // 64:04d}"), "ab") as out:
            out.write(chunk)
        written += 1
    else:
        time.sleep(0.005)
print("done", written, flush=True)
"""

TCP_CLIENT = r"""
import socket, sys, threading, time
rate, seconds = float(sys.argv[1]), float(sys.argv[2])
server = socket.create_server(("127.0.0.1", 0), backlog=1024)
port = server.getsockname()[1]

def serve():
    while True:
        conn, _ = server.accept()
        conn.sendall(b"HTTP/1.0 200 OK\r\n\r\nok")
        conn.recv(1)  # wait for the client's close, so that the client side closes first
        conn.close()

threading.Thread(target=serve, daemon=True).start()
done = 0
start = time.monotonic()
print("ready", flush=True)
while (elapsed := time.monotonic() - start) < seconds:
    if done < rate * elapsed:
        with socket.create_connection(("127.0.0.1", port)) as client:
            client.recv(64)
        done += 1
    else:
        time.sleep(0.002)
print("done", done, flush=True)
"""

UDP_LEAKER = r"""
import resource, socket, sys, time
rate, seconds = float(sys.argv[1]), float(sys.argv[2])
soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
resource.setrlimit(resource.RLIMIT_NOFILE, (max(soft, min(hard, int(rate * seconds) + 64)), hard))
held = []
start = time.monotonic()
print("ready", flush=True)
while (elapsed := time.monotonic() - start) < seconds:
    while len(held) < int(rate * elapsed):
        held.append(socket.socket(socket.AF_INET, socket.SOCK_DGRAM))  # never closed
    time.sleep(0.01)
print("done", len(held), flush=True)
"""

FILE_CREATOR = r"""
import os, sys, time
directory, rate, seconds = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
made = 0
start = time.monotonic()
print("ready", flush=True)
while (elapsed := time.monotonic() - start) < seconds:
    while made < int(rate * elapsed):
        open(os.path.join(directory, f"f{made}"), "w").close()
        made += 1
    time.sleep(0.01)
print("done", made, flush=True)
"""

PROGRAMS = {"leak": LEAKER, "write": FILE_WRITER, "tcp": TCP_CLIENT, "udp": UDP_LEAKER, "create": FILE_CREATOR}


def main(argv: list[str]) -> int:
    """Run one workload in the foreground: ``leak RATE SECS``, ``write DIR MIB_PER_S SECS``, ``tcp RATE SECS``,
    ``udp RATE SECS``, ``create DIR RATE SECS``."""
    if not argv or argv[0] not in PROGRAMS:
        print(f"usage: python -m tests.live.workloads {{{'|'.join(PROGRAMS)}}} ARGS...", file=sys.stderr)
        return 2
    # Replaced by the program, so that a kill of this process ends the workload.
    os.execv(sys.executable, [sys.executable, "-c", PROGRAMS[argv[0]], *argv[1:]])


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
