#!/bin/bash
# Record lost.c with LTTng UST in a ring buffer too small for its bursts (2 sub-buffers of 4 KiB: events discarded), as
# root.   tests/data/lttng/lost/record.sh OUTDIR
# Writes OUTDIR/ust (the session's ust/ tree).  Runs with a session daemon of its own (../private-sessiond.sh); exit
# status 77: this machine cannot record (why on stderr).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../private-sessiond.sh"
if [ -z "${KF_LTTNG_PRIVATE:-}" ]; then  # what the recording needs besides the daemon, checked before it starts
    command -v gcc >/dev/null || kf_cannot_record "no gcc"
    echo '#include <lttng/tracef.h>' | gcc -E -x c - >/dev/null 2>&1 || kf_cannot_record "no lttng/tracef.h (lttng-ust's headers)"
fi
kf_private_lttng "$0" "$@"
out=$(realpath "$1")
mkdir -p "$out"
work=$(mktemp -d)
gcc -O1 -o "$work/lost" "$here/lost.c" "$here/../infer_tp.c" -I"$here/.." -llttng-ust -ldl -lpthread
session="kf_lost_$$"
lttng create "$session" --output="$work/session" >/dev/null
lttng enable-channel -u -s "$session" --subbuf-size=4096 --num-subbuf=2 channel0 >/dev/null
lttng enable-event -u -s "$session" -c channel0 'infer:*,lttng_ust_tracef:*' >/dev/null
lttng add-context -u -s "$session" -c channel0 -t vtid >/dev/null
lttng start "$session" >/dev/null
# (the program waits for the daemon to tell it what to record however long that takes: by default 3 s, then untraced)
LTTNG_UST_REGISTER_TIMEOUT=-1 taskset -c 0 "$work/lost"
lttng stop "$session" >/dev/null
lttng destroy "$session" >/dev/null
cp -r "$work/session/ust" "$out/ust"
rm -rf "$work"
