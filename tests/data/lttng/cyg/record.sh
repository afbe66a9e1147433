#!/bin/bash
# Record calls.c with LTTng UST's function tracing (liblttng-ust-cyg-profile, LD_PRELOAD) and tracef, as root.
#   tests/data/lttng/cyg/record.sh OUTDIR
# Writes OUTDIR/cyg.tar.gz (the session's ust/ tree) and OUTDIR/addrs.txt (the functions' addresses).
set -euo pipefail
out=$(realpath "$1")
here=$(cd "$(dirname "$0")" && pwd)
mkdir -p "$out"
work=$(mktemp -d)
gcc -O1 -no-pie -finstrument-functions -o "$work/calls" "$here/calls.c" -llttng-ust -ldl
sessiond=""
if ! lttng list >/dev/null 2>&1; then  # no session daemon answers: run one of our own, ended by its pid below
    lttng-sessiond --quiet & sessiond=$!
    for _ in $(seq 50); do lttng list >/dev/null 2>&1 && break; sleep 0.1; done
fi
lttng create kf_cyg --output="$work/session" >/dev/null
lttng enable-event -u 'lttng_ust_cyg_profile:*,lttng_ust_tracef:*' >/dev/null
lttng add-context -u -t vtid -t procname >/dev/null
lttng start >/dev/null
LD_PRELOAD=liblttng-ust-cyg-profile.so "$work/calls" "$out/addrs.txt" 20
lttng stop >/dev/null
lttng destroy >/dev/null
if [ -n "$sessiond" ]; then kill "$sessiond"; wait "$sessiond" || true; fi
tar -C "$work/session" --sort=name --owner=0 --group=0 --mtime=@0 -czf "$out/cyg.tar.gz" ust
rm -rf "$work"
ls -la "$out"
