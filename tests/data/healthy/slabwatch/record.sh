#!/bin/sh
# Record a healthy slab-watch run: >= 10 minutes of `kforensic slab-watch` at a 5 s interval on this
# machine as it is, kept as slab-import snapshots (the store's schema changes between versions; the
# snapshot text is read by `kforensic slab-import` whatever the schema).  Run from anywhere, as root
# (/proc/slabinfo is mode 0400), with the project's venv made (make .venv/.installed-dev).
#
# snapshots.txt.xz: recorded 2026-12-03 17:34-17:45 UTC on the project's 2-core, 24 GB VM (Linux
# 6.18.44), ten minutes after boot, while other sessions built virtual environments and ran test
# suites (load average 7-11): caches warming up and workloads starting and ending processes, no leak.
# snapshots-2.txt.xz: the same machine 17:51-18:02 UTC (load 11-14), the next 11 minutes.
# Run as ./record.sh NAME to write NAME.txt.xz (default snapshots).
# tests/detectors/leaks/test_healthy_recording.py checks that `kforensic leaks` on it finds nothing at
# medium or above and says what it examined.
set -eu
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../../.." && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT INT TERM
nice -n 10 "$repo/.venv/bin/kforensic" slab-watch --interval 5s --duration 11m --store "$tmp/store" \
    --no-analysis -o "$tmp/summary.txt"
cd "$repo"
.venv/bin/python "$here/to_snapshots.py" "$tmp/store" | xz -9 -T1 > "$tmp/snapshots.txt.xz"
mv "$tmp/snapshots.txt.xz" "$here/${1:-snapshots}.txt.xz"
