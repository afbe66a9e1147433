#!/bin/bash
# Record calls.c with LTTng UST's function tracing (liblttng-ust-cyg-profile, LD_PRELOAD) and tracef, as root.
#   tests/data/lttng/cyg/record.sh OUTDIR [BINARY]
# Writes OUTDIR/cyg.tar.gz (the session's ust/ tree) and OUTDIR/addrs.txt (the functions' addresses); BINARY: where
# the program is built and kept (its path is the one the statedump records), else in a directory removed after.
set -euo pipefail
out=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
work=$(mktemp -d)
bin=${2:-$work/calls}
gcc -O1 -no-pie -finstrument-functions -o "$bin" "$here/calls.c" -llttng-ust -ldl
sessiond=""
if ! lttng list >/dev/null 2>&1; then  # no session daemon answers: run one of our own, ended by its pid below
    lttng-sessiond --quiet & sessiond=$!
    for _ in $(seq 50); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
fi
lttng create "kf_cyg_$$" --output="$work/session" >/dev/null
lttng enable-event -u 'lttng_ust_cyg_profile:*,lttng_ust_tracef:*,lttng_ust_statedump:*' >/dev/null
lttng add-context -u -t vtid -t procname >/dev/null
lttng start >/dev/null
LD_PRELOAD=liblttng-ust-cyg-profile.so "$bin" "$out/addrs.txt" 20
lttng stop >/dev/null
lttng destroy >/dev/null
if [ -n "$sessiond" ]; then kill "$sessiond"; wait "$sessiond" || true; fi
tar -C "$work/session" --sort=name --owner=0 --group=0 --mtime=@0 -czf "$out/cyg.tar.gz" ust
rm -rf "$work"
ls -la "$out"
