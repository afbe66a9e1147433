#!/usr/bin/env bash
# Regenerate the kforensic vmcore fixtures from Debian apt packages alone.
#
#   vmcore_fixtures/build.sh [--kernel VERSION] [deps] [kernel] [module] [initramfs] [cases [NAME...]]
#                            [sysroots] [payload] [manifest] | all
#
# VERSION is a fixture kernel (KERNELS below; 6.1 by default, or $KF_KERNEL).  Without a stage
# (or with "all") every stage runs in order.  Scratch output (kernel tree, images, QEMU run
# directories) goes to vmcore_fixtures/work/<version>/, which is git-ignored; the committed payload
# is written to cases/, sysroots/, vmlinux.xz, kf_buggy.ko and MANIFEST.json of the kernel's
# payload directory (this directory for 6.1, kernels/<version>/ for the others).  See README.md.
set -euo pipefail

HERE="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"

# The fixture kernels: version | Debian package | exact package version | payload directory | cases.
# The package versions are pinned so that a rebuild unpacks the same sources; 6.1 and 6.12 come
# from bookworm(-security), 5.10 from bullseye (stage deps adds the suite, pinned so that nothing
# installs from it: only the source package is downloaded).
# Cases: "all", or the subset a kernel records.  A level-31 dump of these kernels costs 4.2-4.7 MB
# (2.9 MB of it the kernel image itself), so the payload limit of all kernels (200 MB) holds 14 cases
# on the first kernel and nine on each other: those whose reads differ between versions (slab flags,
# tracks and stack depot, mutex owners, list checkers, qspinlock word, vmalloc areas, RSS counters, the
# oops header, the slab cache walk).  Not recorded there: 01 (page-fault decoding: version-independent),
# 03 (the WARN path: 02 covers the bug table), 05 (14 makes the soft-lockup report), 06 (13 makes the
# list checker trap), 07 (08 ends in the same sysrq panic).
NEW_KERNEL_CASES="02-bug-on 04-hung-task 08-slab-leak 09-oom 10-use-after-free 11-abba-deadlock 12-double-free 13-list-overflow 14-spin-deadlock"
KERNELS=(
	"6.1|linux-source-6.1|6.1.192-3|.|all"
	"5.10|linux-source-5.10|5.10.223-1|kernels/5.10|$NEW_KERNEL_CASES"
	"6.12|linux-source-6.12|6.12.118-1~deb12u1|kernels/6.12|$NEW_KERNEL_CASES"
)
KVER="${KF_KERNEL:-6.1}"
if [[ ${1:-} == --kernel ]]; then
	KVER="$2"
	shift 2
fi
KPKG="" KPKG_VERSION="" KPAYLOAD="" KCASES=""
for entry in "${KERNELS[@]}"; do
	IFS='|' read -r v pkg pkgver payload kcases <<<"$entry"
	if [[ $v == "$KVER" ]]; then
		KPKG="$pkg" KPKG_VERSION="$pkgver" KPAYLOAD="$HERE/$payload" KCASES="$kcases"
	fi
done
[[ -n $KPKG ]] || {
	echo "unknown fixture kernel $KVER (known: ${KERNELS[*]%%|*})" >&2
	exit 2
}
WORK="$HERE/work"
KWORK="$WORK/$KVER"
KSRC="$KWORK/$KPKG"
JOBS="${KF_JOBS:-$(nproc)}"
GUEST_MEM="${KF_GUEST_MEM:-256}"
CRASHKERNEL="${KF_CRASHKERNEL:-96M}"
COMMON_CMDLINE="console=ttyS0 crashkernel=$CRASHKERNEL oops=panic panic=10"

# Reproducible kernel: no build time, user or host in the version string, and
# DWARF paths that name Debian's source layout instead of this checkout's
# scratch directory (the same tree on every machine, so rebuilding the same
# sources gives the same vmlinux).
export KBUILD_BUILD_TIMESTAMP="${KBUILD_BUILD_TIMESTAMP:-2024-01-01 00:00:00 UTC}"
export KBUILD_BUILD_USER="${KBUILD_BUILD_USER:-kforensic}"
export KBUILD_BUILD_HOST="${KBUILD_BUILD_HOST:-fixtures}"
export KBUILD_BUILD_VERSION="${KBUILD_BUILD_VERSION:-1}"
KERNEL_PREFIX_MAP="-fdebug-prefix-map=$KSRC=/usr/src/$KPKG"

# shellcheck source=vmcore_fixtures/qemu.sh
source "$HERE/qemu.sh"
FIXTURES="$HERE"
KIMAGE="$KSRC/arch/x86/boot/bzImage"

stage_deps() {
	log "installing build dependencies (apt)"
	# bullseye (for linux-source-5.10), pinned to priority 1: apt never installs or upgrades
	# anything from it unless asked by version; only the source package is downloaded.
	cat >/etc/apt/sources.list.d/kforensic-fixtures.sources <<'APT'
# kforensic vmcore fixtures (vmcore_fixtures/build.sh deps): other Debian releases,
# used only to download linux-source-<version> (pinned to 1: nothing installs from them).
Types: deb
URIs: http://deb.debian.org/debian
Suites: bullseye
Components: main
Signed-By: /usr/share/keyrings/debian-archive-keyring.gpg
APT
	printf 'Package: *\nPin: release n=bullseye\nPin-Priority: 1\n' >/etc/apt/preferences.d/kforensic-fixtures
	apt-get update
	DEBIAN_FRONTEND=noninteractive apt-get install -y --no-install-recommends \
		build-essential bc bison flex libelf-dev libssl-dev \
		dwarves dwz cpio xz-utils busybox-static kexec-tools makedumpfile \
		qemu-system-x86 gdb binutils kmod python3
	local entry v pkg pkgver payload kcases
	mkdir -p "$WORK/debs"
	for entry in "${KERNELS[@]}"; do
		IFS='|' read -r v pkg pkgver payload kcases <<<"$entry"
		log "downloading ${pkg}=$pkgver (not installed: stage kernel unpacks it)"
		(cd "$WORK/debs" && apt-get download "${pkg}=$pkgver")
	done
}

unpack_source() {
	local deb tarball
	deb="$(ls "$WORK/debs/${KPKG}_${KPKG_VERSION/:/%3a}_all.deb" 2>/dev/null || true)"
	[[ -n $deb ]] || {
		log "$WORK/debs has no ${KPKG}_${KPKG_VERSION}_all.deb: run build.sh deps"
		exit 1
	}
	mkdir -p "$KWORK/deb"
	dpkg-deb -x "$deb" "$KWORK/deb"
	tarball="$(ls "$KWORK/deb/usr/src/$KPKG".tar.*)"
	log "unpacking $tarball"
	tar -C "$KWORK" -xf "$tarball"
	rm -rf "$KWORK/deb"
}

stage_kernel() {
	mkdir -p "$KWORK"
	[[ -d $KSRC ]] || unpack_source
	local fragments=("$HERE/kernel.config")
	[[ -f $HERE/kernel-$KVER.config ]] && fragments+=("$HERE/kernel-$KVER.config")
	log "configuring $KVER: tinyconfig + ${fragments[*]##*/}"
	make -C "$KSRC" ARCH=x86_64 tinyconfig >/dev/null
	"$KSRC/scripts/kconfig/merge_config.sh" -m -O "$KSRC" "$KSRC/.config" "${fragments[@]}" >/dev/null
	make -C "$KSRC" ARCH=x86_64 olddefconfig >/dev/null
	local line missing=0
	# the last fragment's value of a symbol is the one that must hold
	while read -r line; do
		if ! grep -qx "$line" "$KSRC/.config"; then
			log "config fragment line not honoured: $line"
			missing=1
		fi
	done < <(cat "${fragments[@]}" | grep -E '^(CONFIG_|# CONFIG_.* is not set$)' |
		awk '{key = /^#/ ? $2 : substr($0, 1, index($0, "=") - 1)}
			{v[key]=$0; if (!(key in o)) {o[key]=n++; k[n-1]=key}} END {for (i=0;i<n;i++) print v[k[i]]}')
	((missing == 0)) || exit 1
	# modules: Module.symvers for the out-of-tree module (6.12 writes it only then; tinyconfig builds none)
	log "building $KVER bzImage + vmlinux with -j$JOBS"
	local t0=$SECONDS
	nice -n 10 make -C "$KSRC" ARCH=x86_64 KCFLAGS="$KERNEL_PREFIX_MAP" KAFLAGS="$KERNEL_PREFIX_MAP" -j"$JOBS" \
		bzImage vmlinux modules_prepare modules >"$KWORK/kernel-build.log" 2>&1
	log "kernel $KVER built in $((SECONDS - t0)) s"
}

stage_module() {
	log "building kf_buggy.ko (-g) against $KSRC"
	make -C "$KSRC" ARCH=x86_64 M="$HERE/kf_buggy" clean >/dev/null
	make -C "$KSRC" ARCH=x86_64 M="$HERE/kf_buggy" modules >"$KWORK/module-build.log" 2>&1
	cp "$HERE/kf_buggy/kf_buggy.ko" "$KWORK/kf_buggy.ko"
	make -C "$KSRC" ARCH=x86_64 M="$HERE/kf_buggy" clean >/dev/null
}

stage_initramfs() {
	make_initramfs "$KWORK/kf_buggy.ko"
}

stage_cases() {
	local want=("$@") entry name kfcase extra tmo dir dest
	if ((${#want[@]} == 0)) && [[ $KCASES != all ]]; then
		read -r -a want <<<"$KCASES"
	fi
	for entry in "${CASES[@]}"; do
		IFS='|' read -r name kfcase extra tmo <<<"$entry"
		if ((${#want[@]})) && [[ " ${want[*]} " != *" $name "* ]]; then
			continue
		fi
		dir="$KWORK/runs/$name"
		run_case "$entry" "$dir" "$COMMON_CMDLINE" || exit 1
		dest="$KPAYLOAD/cases/$name"
		rm -rf "$dest"
		mkdir -p "$dest"
		cp "$dir/out/vmcore" "$dest/vmcore"
		cp "$dir/out/dmesg.txt" "$dest/dmesg.txt"
		cp "$dir/console.log" "$dest/console.log"
		if [[ $kfcase == slab_leak ]]; then
			split_samples "$dir/samples.img" "$dest/snapshots"
		fi
		log "case $name: vmcore $(stat -c %s "$dest/vmcore") bytes"
	done
	python3 "$HERE/ground_truth.py" --work "$KWORK" --fixtures "$HERE" --kernel "$KVER"
}

stage_sysroots() {
	local kind dir cmdline
	for kind in crash-loaded no-crashkernel; do
		dir="$KWORK/runs/sysroot-$kind"
		if [[ $kind == crash-loaded ]]; then
			cmdline="$COMMON_CMDLINE kf_case=sysroot-$kind"
		else
			cmdline="console=ttyS0 oops=panic panic=10 kf_case=sysroot-$kind"
		fi
		log "sysroot $kind: booting"
		run_qemu "$dir" "$cmdline" 300
		[[ -s $dir/out/proc/cmdline ]] || {
			log "sysroot $kind: nothing captured"
			exit 1
		}
		rm -rf "$HERE/sysroots/$kind"
		mkdir -p "$HERE/sysroots/$kind"
		cp -r "$dir/out/." "$HERE/sysroots/$kind/"
		cp "$dir/console.log" "$HERE/sysroots/$kind/console.log"
	done
}

stage_payload() {
	log "copying kf_buggy.ko"
	mkdir -p "$KPAYLOAD"
	install -m 0644 "$KWORK/kf_buggy.ko" "$KPAYLOAD/kf_buggy.ko"
	if [[ -f $KPAYLOAD/vmlinux.xz && $KPAYLOAD/vmlinux.xz -nt $KSRC/vmlinux ]]; then
		log "vmlinux.xz is newer than vmlinux, not recompressing"
		return
	fi
	# The relocations of the debug sections (.rela.debug_*, which --emit-relocs keeps for the x86 boot-time
	# relocation tool) are dropped: drgn, gdb and crash do not apply relocations to an executable, and
	# they are ~60 MB of the vmlinux (6 MB of the xz).  dwz then shares the DWARF units that repeat (as
	# Fedora and RHEL ship their debuginfo): 6.12's xz 19.5 -> 13.8 MB, drgn reads it alike.  The build
	# ID and every other section stay.
	log "compressing vmlinux: no .rela.debug_*, dwz, xz -9 (a few minutes)"
	objcopy --remove-section='.rela.debug_*' "$KSRC/vmlinux" "$KWORK/vmlinux.payload"
	dwz -L none "$KWORK/vmlinux.payload"
	xz -9 -T"$JOBS" -c "$KWORK/vmlinux.payload" >"$KPAYLOAD/vmlinux.xz.tmp"
	mv "$KPAYLOAD/vmlinux.xz.tmp" "$KPAYLOAD/vmlinux.xz"
}

stage_manifest() {
	python3 "$HERE/ground_truth.py" --work "$KWORK" --fixtures "$HERE" --kernel "$KVER" --manifest
}

main() {
	local stages=("$@")
	((${#stages[@]})) || stages=(all)
	if [[ ${stages[0]} == all ]]; then
		local t0=$SECONDS
		stage_kernel
		stage_module
		stage_initramfs
		stage_cases
		# the sysroots (/proc and /sys of guests that did not crash) are recorded on the first kernel only
		[[ $KVER != 6.1 ]] || stage_sysroots
		stage_payload
		stage_manifest
		log "all stages done in $((SECONDS - t0)) s"
		return
	fi
	case "${stages[0]}" in
	deps) stage_deps ;;
	kernel) stage_kernel ;;
	module) stage_module ;;
	initramfs) stage_initramfs ;;
	cases) stage_cases "${stages[@]:1}" ;;
	sysroots) stage_sysroots ;;
	payload) stage_payload ;;
	manifest) stage_manifest ;;
	*)
		echo "unknown stage ${stages[0]}" >&2
		exit 2
		;;
	esac
}

main "$@"; exit  # on one line: bash reads a script as it runs, so edits to this file cannot reach a running build
