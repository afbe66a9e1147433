# Sourced by the project's LTTng recording scripts (bash, set -euo pipefail), first thing:
#   . "$here/private-sessiond.sh"; kf_private_lttng "$0" "$@"
# The rest of the script runs in a mount namespace of its own, with a session daemon of its own (ready before
# kf_private_lttng returns, ended when the script exits) and its own LTTNG_HOME.  Exit status 77, with the reason on
# stderr: this machine cannot record (kf_cannot_record); any other failure is a failure to record.
#
# Why: root's lttng commands and root's applications all meet the one root session daemon at /run/lttng, whatever
# LTTNG_HOME says, and "the current session" the commands act on is the one ~/.lttngrc names.  Two recordings at
# once (the two tests of a module on two pytest-xdist workers, each making the module's recording; two worktrees'
# test runs) shared both: one's `lttng create` made the other's `lttng start` start a session with no channel
# ("Error: No channel found in the session"), one killed the daemon the other was using, and each session recorded
# the other's program as well.  A private /run/lttng (and /dev/shm, where a daemon and applications also meet)
# keeps each recording's daemon, sessions and traced programs to itself.

kf_cannot_record() {
    echo "cannot record here: $*" >&2
    exit 77
}

kf_private_lttng() {
    local script=$1 why tool
    shift
    if [ -z "${KF_LTTNG_PRIVATE:-}" ]; then
        [ "$(id -u)" = 0 ] || kf_cannot_record "needs root (a session daemon of its own in a mount namespace)"
        for tool in lttng lttng-sessiond unshare mount; do
            command -v "$tool" >/dev/null || kf_cannot_record "no $tool (lttng-tools, util-linux)"
        done
        why=$(unshare --mount true 2>&1) || kf_cannot_record "no mount namespace of its own (unshare --mount: $why)"
        KF_LTTNG_PRIVATE=1 exec unshare --mount --propagation private bash "$script" "$@"
    fi
    mkdir -p /run/lttng
    mount -t tmpfs -o mode=0755,size=64m kf-lttng-run /run/lttng
    mount -t tmpfs -o mode=1777 kf-lttng-shm /dev/shm
    LTTNG_HOME=$(mktemp -d)
    export LTTNG_HOME
    # The daemon sends SIGUSR1 once it accepts commands and applications' registrations (--sig-parent); polling
    # `lttng list` for 5 s could give up on a loaded machine, and the next `lttng` command spawned another daemon.
    # No kernel tracer: these recordings are userspace (and the modules' probing took seconds).
    KF_SESSIOND_READY=0
    trap 'KF_SESSIOND_READY=1' USR1
    lttng-sessiond --no-kernel --sig-parent --quiet &
    KF_SESSIOND=$!
    trap kf_end_sessiond EXIT
    while [ "$KF_SESSIOND_READY" = 0 ]; do
        if ! kill -0 "$KF_SESSIOND" 2>/dev/null; then
            wait "$KF_SESSIOND" && why=0 || why=$?
            echo "lttng-sessiond exited (status $why) before it was ready" >&2
            exit 1
        fi
        sleep 0.05
    done
    trap - USR1
}

kf_end_sessiond() {
    kill "$KF_SESSIOND" 2>/dev/null || true
    wait "$KF_SESSIOND" || true
    rm -rf "$LTTNG_HOME"
}
