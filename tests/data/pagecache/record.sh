#!/bin/sh
# Record slab-watch beside file writes, with and without a real leak, as slab-import snapshots (the
# store's schema changes between versions; the snapshot text is read whatever the schema).  Run from
# anywhere, as root (/proc/slabinfo is mode 0400), with the project's venv made (make .venv/.installed-dev).
#
#   ./record.sh file-writes        40 s of `kforensic slab-watch --interval 1s` while a child writes new
#                                  files at 40 MiB/s (tests/live/workloads.py FILE_WRITER): the page
#                                  cache grows ~1.5 GiB, and with it buffer_head, radix_tree_node and,
#                                  on ext4, kmalloc-512.  Nothing leaks.
#   ./record.sh leak-beside-writes the same, while a second child leaks 1,500 vm_area_structs a second
#                                  (tests/live/workloads.py LEAKER).
#
# Recorded 2026-12-04 on the project's 2-core, 24 GB VM (Linux 6.18.44, ext4 root, load < 1);
# tests/detectors/leaks/test_page_cache.py says what `kforensic leaks` must say on each.
set -eu
name=${1:?usage: record.sh file-writes|leak-beside-writes}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
children=""
stop() {
    for p in $children; do kill "$p" 2>/dev/null || true; done
    wait || true
    rm -rf "$tmp"
}
trap stop EXIT INT TERM
cd "$repo"
mkdir "$tmp/files"
sync && echo 1 > /proc/sys/vm/drop_caches  # start from a small page cache, as after a reboot
.venv/bin/python -m tests.live.workloads write "$tmp/files" 40 45 > /dev/null & children="$children $!"
if [ "$name" = leak-beside-writes ]; then
    .venv/bin/python -m tests.live.workloads leak 1500 45 < /dev/null > /dev/null & children="$children $!"
fi
sleep 2
.venv/bin/kforensic slab-watch --interval 1s --duration 40s --store "$tmp/store" --no-analysis -o "$tmp/summary.txt"
.venv/bin/python tests/data/healthy/slabwatch/to_snapshots.py "$tmp/store" | xz -9 -T1 > "$tmp/snapshots.txt.xz"
mv "$tmp/snapshots.txt.xz" "$here/$name.txt.xz"
