#!/bin/bash
# Record calls.c with LTTng UST's function tracing (liblttng-ust-cyg-profile, LD_PRELOAD) and tracef, as root.
#   tests/data/lttng/cyg/record.sh OUTDIR [BINARY [MODEL_MS]]
# Writes OUTDIR/cyg.tar.gz (the session's ust/ tree) and OUTDIR/addrs.txt (the functions' addresses); BINARY: where
# the program is built and kept (its path is the one the statedump records), else in a directory removed after;
# MODEL_MS: how long load_model spins (30 ms, the committed recording's, by default).
# Runs with a session daemon of its own (../private-sessiond.sh); exit status 77: this machine cannot record (why on
# stderr).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../private-sessiond.sh"
if [ -z "${KF_LTTNG_PRIVATE:-}" ]; then  # what the recording needs besides the daemon, checked before it starts
    command -v gcc >/dev/null || kf_cannot_record "no gcc"
    echo '#include <lttng/tracef.h>' | gcc -E -x c - >/dev/null 2>&1 || kf_cannot_record "no lttng/tracef.h (lttng-ust's headers)"
    # (grep -q would end ldconfig by SIGPIPE: a failed pipeline under pipefail)
    ldconfig -p | grep 'liblttng-ust-cyg-profile\.so ' >/dev/null || kf_cannot_record "no liblttng-ust-cyg-profile.so to preload"
fi
kf_private_lttng "$0" "$@"
out=$(realpath "$1")
mkdir -p "$out"
work=$(mktemp -d)
bin=${2:-$work/calls}
gcc -O1 -no-pie -finstrument-functions -o "$bin" "$here/calls.c" -llttng-ust -ldl
session="kf_cyg_$$"
lttng create "$session" --output="$work/session" >/dev/null
lttng enable-channel -u -s "$session" channel0 >/dev/null
lttng enable-event -u -s "$session" -c channel0 'lttng_ust_cyg_profile:*,lttng_ust_tracef:*,lttng_ust_statedump:*' >/dev/null
lttng add-context -u -s "$session" -c channel0 -t vtid -t procname >/dev/null
lttng start "$session" >/dev/null
# The program waits for the daemon to tell it what to record however long that takes (by default it waits 3 s, then
# runs untraced until told: on a loaded machine its first calls would go unrecorded).
LTTNG_UST_REGISTER_TIMEOUT=-1 LD_PRELOAD=liblttng-ust-cyg-profile.so "$bin" "$out/addrs.txt" 20 "${3:-30}"
lttng stop "$session" >/dev/null
lttng destroy "$session" >/dev/null
tar -C "$work/session" --sort=name --owner=0 --group=0 --mtime=@0 -czf "$out/cyg.tar.gz" ust
rm -rf "$work"
ls -la "$out"
