#!/usr/bin/env bash
# Record the kforensic LTTng kernel + user-space session from Debian packages alone.
#
#   lttng_fixtures/build.sh [deps] [modules] [initramfs] [record] [payload] | all
#
# A stock Debian bookworm kernel (linux-image-6.1.0-57-amd64, 6.1.192-3) boots in QEMU (TCG: no
# KVM here) from an initramfs that holds lttng-modules 2.13.9 (Debian's lttng-modules-dkms source,
# built on the host against Debian's headers after the two fixes in patches/), lttng-tools 2.13.9,
# lttng-ust 2.13.5 and the request-loop workload (workload.c).  The guest records the session the
# way the LTTng documentation tells users to (guest/init: `--syscall -a`, sched/irq/softirq/
# x86_irq_vectors/process events, the statedump, contexts tid/pid/procname/prio; the workload's
# tracef start/end), then sends the session out on the serial console as base64 (no guest
# driver needed).  Scratch output goes to lttng_fixtures/work/ (git-ignored); the committed
# payload is tests/data/lttng/kernel-session.tar.xz plus its MANIFEST line (sha256).
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
REPO="$(cd "$HERE/.." && pwd)"
WORK="$HERE/work"
ROOT="$WORK/root" # the unpacked .debs
KREL="6.1.0-57-amd64"
KPKG_VERSION="6.1.192-3"
LTTNG_MODULES_VERSION="2.13.9"
PAYLOAD="$REPO/tests/data/lttng/kernel-session.tar.xz"
JOBS="${KF_JOBS:-$(nproc)}"
GUEST_MEM="${KF_GUEST_MEM:-1024}"
GUEST_CPUS="${KF_GUEST_CPUS:-2}"
TIMEOUT="${KF_TIMEOUT:-1500}"
MODSRC="$WORK/lttng-modules-$LTTNG_MODULES_VERSION"
MODOUT="$WORK/modules/lib/modules/$KREL"

log() { printf '[lttng-build %(%H:%M:%S)T] %s\n' -1 "$*" >&2; }

stage_deps() {
	log "downloading the kernel, its headers and lttng-modules-dkms (apt-get download; nothing installed)"
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		build-essential libelf-dev cpio xz-utils busybox-static qemu-system-x86 kmod \
		lttng-tools liblttng-ust-dev babeltrace2 patch
	mkdir -p "$WORK/debs"
	(cd "$WORK/debs" && apt-get download "linux-image-$KREL=$KPKG_VERSION" "linux-headers-$KREL=$KPKG_VERSION" \
		"linux-headers-${KREL%-amd64}-common=$KPKG_VERSION" "linux-kbuild-6.1=$KPKG_VERSION" \
		"lttng-modules-dkms=$LTTNG_MODULES_VERSION-1+deb12u1")
	rm -rf "$ROOT"
	mkdir -p "$ROOT"
	local deb
	for deb in "$WORK"/debs/*.deb; do dpkg-deb -x "$deb" "$ROOT"; done
	# The headers' Makefile includes the common tree by its installed path: point it at the unpacked one.
	printf 'include %s/usr/src/linux-headers-%s-common/Makefile\n' "$ROOT" "${KREL%-amd64}" \
		>"$ROOT/usr/src/linux-headers-$KREL/Makefile"
}

stage_modules() {
	log "building lttng-modules $LTTNG_MODULES_VERSION against $KREL (patched: ${HERE}/patches)"
	rm -rf "$MODSRC"
	cp -a "$ROOT/usr/src/lttng-modules-$LTTNG_MODULES_VERSION" "$MODSRC"
	local p
	for p in "$HERE"/patches/*.patch; do patch -d "$MODSRC" -p1 <"$p" >&2; done
	local t0=$SECONDS
	nice -n 10 make -C "$ROOT/usr/src/linux-headers-$KREL" M="$MODSRC" -j"$JOBS" modules \
		CONFIG_LTTNG=m >"$WORK/modules-build.log" 2>&1 || {
		tail -30 "$WORK/modules-build.log" >&2
		exit 1
	}
	rm -rf "$WORK/modules"
	mkdir -p "$MODOUT/extra"
	(cd "$MODSRC" && find . -name '*.ko' -exec install -D -m 0644 {} "$MODOUT/extra/{}" \;)
	find "$MODOUT/extra" -name '*.ko' -exec strip --strip-debug {} +
	# Modules of the stock kernel the guest needs, with their dependencies (modules.dep).
	cp "$ROOT/lib/modules/$KREL/modules.order" "$ROOT/lib/modules/$KREL/modules.builtin"* "$MODOUT/"
	log "lttng-modules built in $((SECONDS - t0)) s: $(find "$MODOUT/extra" -name '*.ko' | wc -l) modules"
	depmod -b "$WORK/modules" "$KREL"
}

copy_with_libs() { # copy_with_libs ROOT BINARY...
	local root="$1" bin lib
	shift
	for bin in "$@"; do
		install -D -m 0755 "$bin" "$root$bin"
		for lib in $(ldd "$bin" | grep -o '/[^ ]*'); do
			[[ -e $root$lib ]] || install -D -m 0755 "$lib" "$root$lib"
		done
	done
}

stage_initramfs() {
	local root="$WORK/initramfs" applet lib
	log "building the initramfs (busybox, kmod, lttng-tools, lttng-ust, workload)"
	rm -rf "$root"
	mkdir -p "$root"/{bin,sbin,usr/bin,usr/sbin,proc,sys,dev,tmp,run,var/run,root,lib/modules,lib64,etc}
	cp /bin/busybox "$root/bin/busybox"
	for applet in $(/bin/busybox --list); do
		[[ -e $root/bin/$applet ]] || ln -s busybox "$root/bin/$applet"
	done
	copy_with_libs "$root" /usr/bin/lttng /usr/bin/lttng-sessiond /usr/bin/kmod
	for lib in /usr/lib/x86_64-linux-gnu/lttng/libexec/lttng-consumerd; do copy_with_libs "$root" "$lib"; done
	for applet in modprobe insmod lsmod depmod modinfo rmmod; do ln -sf /usr/bin/kmod "$root/sbin/$applet"; done
	cp -a "$WORK/modules/lib/modules/$KREL" "$root/lib/modules/"
	# The workload (its own tracepoint provider is lttng_ust_tracef: liblttng-ust alone).
	gcc -O2 -Wall -pthread -o "$root/bin/kf_requests" "$HERE/guest/workload.c" -llttng-ust -ldl
	copy_with_libs "$root" "$root/bin/kf_requests" >/dev/null 2>&1 || true
	for lib in $(ldd "$root/bin/kf_requests" | grep -o '/[^ ]*'); do
		[[ -e $root$lib ]] || install -D -m 0755 "$lib" "$root$lib"
	done
	# liblttng-ust loads these by name at run time (dlopen).
	for lib in /usr/lib/x86_64-linux-gnu/liblttng-ust*.so.*; do
		[[ -e $root$lib ]] || install -D -m 0755 "$lib" "$root$lib"
	done
	# lttng-sessiond validates session configurations against this schema when it starts.
	mkdir -p "$root/usr/share/xml"
	cp -a /usr/share/xml/lttng "$root/usr/share/xml/"
	printf 'root:x:0:0:root:/root:/bin/sh\n' >"$root/etc/passwd"
	printf 'root:x:0:\ntracing:x:999:\n' >"$root/etc/group"
	install -m 0755 "$HERE/guest/init" "$root/init"
	(cd "$root" && find . | LC_ALL=C sort | cpio -o -H newc --quiet | gzip -1 >"$WORK/initramfs.cpio.gz")
	ls -l "$WORK/initramfs.cpio.gz" >&2
}

stage_record() {
	local out="$WORK/run"
	rm -rf "$out"
	mkdir -p "$out"
	log "booting $KREL in QEMU (TCG, $GUEST_CPUS CPUs, ${GUEST_MEM} MB) to record the session"
	nice -n 10 timeout "$TIMEOUT" qemu-system-x86_64 -machine q35 -accel tcg,thread=multi -cpu max \
		-smp "$GUEST_CPUS" -m "$GUEST_MEM" -nographic -no-reboot \
		-kernel "$ROOT/boot/vmlinuz-$KREL" -initrd "$WORK/initramfs.cpio.gz" \
		-append "console=ttyS0 panic=5 quiet loglevel=4 tsc=reliable" \
		-serial "file:$out/console.log" -monitor none >"$out/qemu.log" 2>&1 || true
	python3 - "$out/console.log" "$out/session.tar" <<'PY'
import base64, sys
text = open(sys.argv[1], "rb").read().decode("ascii", "replace")
begin, end = "----KF-SESSION-BEGIN----", "----KF-SESSION-END----"
if begin not in text or end not in text:
    sys.exit(f"{sys.argv[1]}: the guest sent no session (see its end for why)")
body = text.split(begin, 1)[1].split(end, 1)[0]
data = base64.b64decode("".join(line.strip() for line in body.splitlines() if line.strip()))
open(sys.argv[2], "wb").write(data)
PY
	rm -rf "$out/session"
	mkdir -p "$out/session"
	tar -C "$out/session" -xf "$out/session.tar"
	babeltrace2 "$out/session" | wc -l >&2
}

stage_payload() {
	local out="$WORK/run"
	log "writing $PAYLOAD"
	tar -C "$out/session" --sort=name --owner=0 --group=0 --numeric-owner --mtime='2024-01-01 00:00Z' \
		-cf - . | xz -9e >"$PAYLOAD"
	ls -l "$PAYLOAD" >&2
	sha256sum "$PAYLOAD" >&2
}

STAGES=("$@")
if [[ ${#STAGES[@]} -eq 0 || ${STAGES[0]} == all ]]; then
	STAGES=(deps modules initramfs record payload)
fi
for stage in "${STAGES[@]}"; do
	"stage_$stage"
done
