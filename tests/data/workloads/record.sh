#!/bin/sh
# Record slab-watch beside ordinary workloads (and one real leak), kept as slab-import snapshots (the
# store's schema changes between versions; the snapshot text is read whatever the schema).  Run from
# anywhere, as root (/proc/slabinfo is mode 0400), with the project's venv made (make .venv/.installed-dev).
# The workloads are tests/live/workloads.py's.
#
#   ./record.sh file-writes         40 s of `kforensic slab-watch --interval 1s` while a child writes new
#                                   files at 40 MiB/s (FILE_WRITER): the page cache grows ~1.5 GiB, and
#                                   with it buffer_head, radix_tree_node and, on ext4, kmalloc-512.
#                                   Nothing leaks.
#   ./record.sh leak-beside-writes  the same, while a second child leaks 1,500 vm_area_structs a second
#                                   (LEAKER).
#   ./record.sh tcp-time-wait       40 s while a child makes 300 loopback TCP connections a second and
#                                   closes them first (TCP_CLIENT): tw_sock_TCP fills for the 60 s of
#                                   TIME_WAIT.  Nothing leaks.
#   ./record.sh tcp-time-wait-4min  the same for 4 minutes at a 2 s interval: the fill, then the level.
#   ./record.sh udp-socket-leak     2 minutes at a 1 s interval while a child opens 40 UDP sockets a second
#                                   and never closes them (UDP_LEAKER): a real socket leak.  This kernel
#                                   marks sock_inode_cache, dentry and proc_inode_cache reclaim_account 1
#                                   (/sys/kernel/slab): the snapshot text does not keep it, so the flags
#                                   slab-watch read are kept beside it (udp-socket-leak.reclaim_account.txt).
#   ./record.sh overlay-files       3 minutes at a 1 s interval while a child creates 150 empty files a second
#                                   in an overlayfs over tmpfs (FILE_CREATOR): ovl_inode (reclaim_account 1,
#                                   unused ones dropped under pressure) and shmem_inode_cache (held by the
#                                   files) grow; the flags are kept beside it (overlay-files.reclaim_account.txt).
#
#   udp-socket-leak-busy            not made by this script: the same leak (40 UDP sockets a second for 130 s, held,
#                                   closed at the end; the program of UDP_LEAKER under nice -n 10) beside
#                                   `kforensic slab-watch --interval 1s --duration 2m`, 2026-12-06 18:18 UTC while
#                                   other engineers' builds and tests ran (load 5-7), the store written as snapshots
#                                   by tests/data/healthy/slabwatch/to_snapshots.py: shared caches' slabs hold others'
#                                   free objects, which the leak fills before new slabs come (filp's num_objs flat
#                                   for 30 s, then a jump).
#
# Recorded 2026-12-04 on the project's 2-core, 24 GB VM (Linux 6.18.44, ext4 root, load 1-5);
# tests/detectors/leaks/test_ordinary_workloads.py says what `kforensic leaks` must say on each.
set -eu
name=${1:?usage: record.sh file-writes|leak-beside-writes|tcp-time-wait|tcp-time-wait-4min|udp-socket-leak|overlay-files}
here=$(cd "$(dirname "$0")" && pwd)
repo=$(cd "$here/../../.." && pwd)
tmp=$(mktemp -d)
children=""
stop() {
    for p in $children; do kill "$p" 2>/dev/null || true; done
    wait || true
    if [ -d "$tmp/fs" ]; then umount "$tmp/fs/merged" "$tmp/fs" 2>/dev/null || true; fi  # overlay-files' mounts
    rm -rf "$tmp"
}
trap stop EXIT INT TERM
cd "$repo"
workload() {  # run one of tests/live/workloads.py's programs in the background
    .venv/bin/python -m tests.live.workloads "$@" < /dev/null > /dev/null &
    children="$children $!"
}
interval=1s duration=40s
case "$name" in
file-writes | leak-beside-writes)
    mkdir "$tmp/files"
    sync && echo 1 > /proc/sys/vm/drop_caches  # start from a small page cache, as after a reboot
    workload write "$tmp/files" 40 45
    [ "$name" = file-writes ] || workload leak 1500 45
    ;;
tcp-time-wait) workload tcp 300 45 ;;
tcp-time-wait-4min) workload tcp 300 250; interval=2s duration=4m ;;
udp-socket-leak) workload udp 40 130; duration=2m ;;
overlay-files)
    mkdir "$tmp/fs" && mount -t tmpfs tmpfs "$tmp/fs" && mkdir "$tmp/fs/lower" "$tmp/fs/upper" "$tmp/fs/work" "$tmp/fs/merged"
    mount -t overlay overlay -o "lowerdir=$tmp/fs/lower,upperdir=$tmp/fs/upper,workdir=$tmp/fs/work" "$tmp/fs/merged"
    workload create "$tmp/fs/merged" 150 200; duration=3m ;;
*) echo "record.sh: unknown workload $name" >&2; exit 2 ;;
esac
sleep 2
.venv/bin/kforensic slab-watch --interval $interval --duration $duration --store "$tmp/store" --no-analysis \
    -o "$tmp/summary.txt"
.venv/bin/python tests/data/healthy/slabwatch/to_snapshots.py "$tmp/store" | xz -9 -T1 > "$tmp/snapshots.txt.xz"
mv "$tmp/snapshots.txt.xz" "$here/$name.txt.xz"
if [ "$name" = udp-socket-leak ] || [ "$name" = overlay-files ]; then  # what slab-watch read of /sys/kernel/slab: "cache reclaim_account" lines
    .venv/bin/python -c 'import sys; from pathlib import Path; from collectors.slabstore import SlabStore
with SlabStore.open(Path(sys.argv[1]), readonly=True) as s:
    [print(n, int(v)) for run in s.runs() for n, v in sorted(s.reclaimable(run.id).items())]' \
        "$tmp/store" > "$here/$name.reclaim_account.txt"
fi
