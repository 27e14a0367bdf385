# shellcheck shell=bash
# Common helpers for the pipeline stages. Sourced, never run.
#
# Inputs (environment): ARCH=x86_64|arm64, KERNEL=7.3|6.12, BASELINE=0|1,
# BH_LOCK=0|1, CFG=debug|perf|kasan|regress|nort. Outputs live under $BUILD (in the checkout,
# ignored by git); downloads and ccache under $CACHE (per user, outside it).

set -euo pipefail

TOP=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${BUILD_DIR:-$TOP/build}
CACHE=${SOFTIRQ_RT_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/softirq-rt}
STAGE=${STAGE:-$(basename "$0" .sh)}

VALID_ARCH="x86_64 arm64"
VALID_KERNEL="7.3 6.12"
VALID_BOOL="0 1"
VALID_CFG="debug perf kasan regress nort"
VALID_ACCEL="auto kvm tcg"
VALID_ICOUNT="auto 0 1 2 3 4 5 6 7 8 9 10"

die() {
	echo "[$STAGE] error: $*" >&2
	exit 1
}

log() {
	echo "[$STAGE${LOG_TAG:+ $LOG_TAG}] $*"
}

# check_value NAME VALUE "valid values": fail with the list of valid ones
check_value() {
	local v
	for v in $3; do
		[ "$2" = "$v" ] && return 0
	done
	die "unknown $1='$2' (valid: ${3// /, })"
}

host_arch() {
	case $(uname -m) in
	aarch64) echo arm64 ;;
	*) echo x86_64 ;;
	esac
}

as_root() {
	if [ "$(id -u)" -eq 0 ]; then
		"$@"
	else
		sudo "$@"
	fi
}

# Download Debian packages PKG... (name or name:arch) and unpack them into
# DEST, which is emptied first; apt-get's output goes to LOG. Nothing is
# installed on the host and no maintainer script runs.
unpack_debs() { # unpack_debs DEST LOG PKG...
	local dest=$1 logf=$2 dl p
	shift 2
	dl=$dest.debs
	rm -rf "$dl" "$dest"
	mkdir -p "$dl" "$dest"
	(cd "$dl" && apt-get -q -o APT::Sandbox::User=root download "$@") >"$logf" 2>&1 ||
		die "downloading packages into $dest failed, see $logf"
	for p in "$dl"/*.deb; do
		dpkg-deb -x "$p" "$dest"
	done
	rm -rf "$dl"
}

load_params() {
	ARCH=${ARCH:-$(host_arch)}
	KERNEL=${KERNEL:-7.3}
	check_value KERNEL "$KERNEL" "$VALID_KERNEL"
	# shellcheck source=scripts/kernels/7.3.conf
	. "$TOP/scripts/kernels/$KERNEL.conf"
	BASELINE=${BASELINE:-0}
	BH_LOCK=${BH_LOCK:-${BH_LOCK_BUILTIN:-0}}
	[ "$BH_LOCK" = 1 ] || [ "${BH_LOCK_BUILTIN:-0}" = 0 ] ||
		die "KERNEL=$KERNEL always has the BH lock on PREEMPT_RT: BH_LOCK=0 needs KERNEL=7.3"
	CFG=${CFG:-debug}
	ACCEL=${ACCEL:-auto}
	check_value ACCEL "$ACCEL" "$VALID_ACCEL"
	ICOUNT=${ICOUNT:-}
	[ -z "$ICOUNT" ] || check_value ICOUNT "$ICOUNT" "$VALID_ICOUNT"
	check_value ARCH "$ARCH" "$VALID_ARCH"
	check_value BASELINE "$BASELINE" "$VALID_BOOL"
	check_value BH_LOCK "$BH_LOCK" "$VALID_BOOL"
	check_value CFG "$CFG" "$VALID_CFG"
	[ "$CFG" != nort ] || [ "$BH_LOCK" = 0 ] ||
		die "the BH lock is a PREEMPT_RT option: CFG=nort needs BH_LOCK=0 (KERNEL=7.3)"
	# shellcheck source=scripts/arch/x86_64.conf
	. "$TOP/scripts/arch/$ARCH.conf"
	VARIANT=patched
	[ "$BASELINE" = 1 ] && VARIANT=baseline
	CONFIG_NAME=$(config_name "$VARIANT")
	return 0
}

# The configuration name of VARIANT (baseline|patched) under load_params'
# ARCH, CFG and BH_LOCK: the object directory's and the run's name.
config_name() {
	local n=$ARCH-$1-$CFG
	[ "$BH_LOCK" = 1 ] && n=$n-bhlock
	echo "$n"
}

# One accelerator decision per make invocation: the first guest decides
# (scripts/qemu.sh), every later guest of the same invocation reads it from
# $ACCEL_STATE. The top-level stages call this once.
accel_session() {
	if [ -z "${ACCEL_STATE:-}" ]; then
		mkdir -p "$BUILD/runs"
		ACCEL_STATE=$(mktemp "$BUILD/runs/.accel.XXXXXX")
		export ACCEL_STATE
	fi
}

# The exact upstream version of the cached source package (e.g. 7.3.4),
# recorded by kernel-src.
kernel_version() {
	local f=$CACHE/dl/$KSRC_PKG.version
	[ -s "$f" ] || die "no source for KERNEL=$KERNEL yet (run scripts/kernel-src.sh)"
	cat "$f"
}

kernel_tarball() {
	echo "$CACHE/dl/$KSRC_PKG.tar.xz"
}

# The kernel's gen_init_cpio, built once from whichever of KERNEL's trees
# is there: every initramfs archive of the project is written by it.
gen_init_cpio() {
	local gen=$BUILD/tools/gen_init_cpio src
	if [ ! -x "$gen" ]; then
		for src in "$(src_dir baseline)" "$(src_dir patched)" "$(src_dir linux)"; do
			[ -f "$src/usr/gen_init_cpio.c" ] || continue
			mkdir -p "$(dirname "$gen")"
			gcc -O2 -o "$gen" "$src/usr/gen_init_cpio.c" || die "building gen_init_cpio failed"
			break
		done
		[ -x "$gen" ] || die "no kernel tree to build gen_init_cpio from (run scripts/tree.sh baseline)"
	fi
	echo "$gen"
}

# cpio_list DIR AT: gen_init_cpio entries for the tree DIR, placed at AT
# in the archive (uid 0, modes kept, the stamp files of the scripts left
# out).
cpio_list() {
	python3 - "$1" "$2" <<'PY'
import os, stat, sys
root, at = sys.argv[1], sys.argv[2].rstrip("/")
print(f"dir {at} 0755 0 0")
for top, dirs, files in os.walk(root):
    dirs.sort()
    for name in sorted(dirs) + sorted(files):
        path = os.path.join(top, name)
        rel = at + "/" + os.path.relpath(path, root)
        st = os.lstat(path)
        mode = "%o" % stat.S_IMODE(st.st_mode)
        if stat.S_ISLNK(st.st_mode):
            print(f"slink {rel} {os.readlink(path)} 0777 0 0")
        elif stat.S_ISDIR(st.st_mode):
            print(f"dir {rel} {mode} 0 0")
        elif stat.S_ISREG(st.st_mode) and name != ".stamp":
            print(f"file {rel} {path} {mode} 0 0")
PY
}

# Source tree for a variant: 'linux' is the developer's edit tree,
# 'patched' the tree make check builds from patches/, 'baseline' pristine.
src_dir() {
	echo "$BUILD/$(kernel_version)/$1"
}

obj_dir() {
	echo "$BUILD/$(kernel_version)/obj/$CONFIG_NAME"
}

# A per-line output directory under $BUILD: NAME for 7.3, NAME-6.12 for
# 6.12 (CHECK_PREFIX of kernels/*.conf), so the lines' results stay apart.
line_dir() {
	echo "$BUILD/$1${CHECK_PREFIX:+-${CHECK_PREFIX%-}}"
}

# Fingerprint of the series as it is in the checkout.
series_hash() {
	local files
	mapfile -t files < <(series_patches)
	(cd "$TOP" && cat "$SERIES" "${files[@]}" 2>/dev/null) | sha256sum | cut -c1-16
}

# Patch files of $KERNEL's series in order (comments and blank lines
# skipped), relative to the checkout: patches/x.patch for 7.3,
# patches/6.12/x.patch for 6.12 (SERIES and PATCHES from kernels/*.conf).
series_patches() {
	[ -f "$TOP/$SERIES" ] || return 0
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/$SERIES" | awk -v d="$PATCHES" '{print d "/" $1}'
}

# ./postings without comments: "name prefix subject-prefix... version".
postings() {
	sed -e 's/#.*//' -e '/^[[:space:]]*$/d' "$TOP/postings"
}

# "name prefix" of the posting a patch SUBJECT belongs to: the first line
# of ./postings whose prefix it starts with ("*" takes any patch).
posting_of() { # subject
	local name prefix rest
	while read -r name prefix rest; do
		if [ "$prefix" = "*" ] || [ "${1#"$prefix" }" != "$1" ]; then
			echo "$name $prefix"
			return 0
		fi
	done < <(postings)
	return 1
}

# Environment of every kernel build: ccache with paths relative to $BUILD
# (so a fresh clone hits the cache), and reproducible build stamps.
kbuild_env() {
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache}
	export CCACHE_BASEDIR=$BUILD
	export CCACHE_NOHASHDIR=1
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
	export KBUILD_BUILD_TIMESTAMP=1970-01-01
	export KBUILD_BUILD_USER=softirq-rt
	export KBUILD_BUILD_HOST=qemu
}

# A test-only patch touches nothing but test code (TEST_FILES of the line's
# kernels/*.conf: where its tests live); the baseline kernel gets these so
# the same tests run against the unpatched softirq code. The interrupt
# simulator fix counts as one: the test module's stress mode fires a
# simulated interrupt from every CPU, which without it can oops, and it does
# not touch softirq processing.
is_test_patch() {
	! grep '^diff --git a/' "$1" | awk '{print substr($3, 3)}' |
		grep -qvE "^($TEST_FILES|tools/testing/selftests/|lib/Kconfig\.debug\$|MAINTAINERS\$|kernel/irq/irq_sim\.c\$)"
}

# checkpatch --strict on patch file $2, run from kernel tree $1 with
# Debian's python3 for spdxcheck.py (ply). Prints the findings. Status 0:
# clean; 2: findings which the patch justifies in a paragraph starting
# "checkpatch " (in the notes below '---', where tool talk belongs); 1:
# anything else.
run_checkpatch() {
	local out
	out=$(cd "$1" && PATH=/usr/bin:$PATH scripts/checkpatch.pl --strict -q --no-summary "$2" 2>&1) &&
		return 0
	echo "$out"
	if sed -n '/^---$/,/^diff --git /p' "$2" | grep -q '^checkpatch '; then
		return 2
	fi
	return 1
}

# For the stages which work on the patched tree and write a summary
# (lint, bisect-check): bring the tree up to date, set SRC, KVER, OUT
# (build/<name>) and an empty SUMMARY file.
# shellcheck disable=SC2034 # set for the sourcing stage
patched_tree_stage() {
	"$TOP/scripts/tree.sh" patched
	SRC=$(src_dir patched)
	KVER=$(kernel_version)
	OUT=$BUILD/$1
	mkdir -p "$OUT"
	SUMMARY=$OUT/summary
	: >"$SUMMARY"
}

# Build the unpatched and the patched kernel of the current ARCH/KERNEL/
# BH_LOCK/CFG, each with its initramfs: the pair make run and make cycle
# compare.
build_pair() {
	local v
	for v in baseline patched; do
		log "kernel: $v (CFG=$CFG)"
		"$TOP/scripts/tree.sh" "$v"
		BASELINE=$([ $v = baseline ] && echo 1 || echo 0) "$TOP/scripts/build.sh"
		BASELINE=$([ $v = baseline ] && echo 1 || echo 0) "$TOP/scripts/initramfs.sh"
	done
}

# The realistic raisers' devices (x86_64's pc machine) for make run and
# make holders, their files in $1: a disk for virtio-blk completions, a NIC
# on QEMU user networking through which the guest reads an endless TCP
# stream from netsource.py on the host, a usb-storage disk on an xHCI
# controller. Sets QEMU_DEVICES, adds NET_PORT to GUEST_ENV; an EXIT trap
# stops netsource.py. Other architectures get none (their raisers skip).
bench_devices() {
	QEMU_DEVICES=
	[ "$ARCH" = x86_64 ] || return 0
	truncate -s 256M "$1/disk.img"
	truncate -s 64M "$1/usb.img"
	rm -f "$1/netsource.port"
	python3 "$TOP/scripts/netsource.py" "$1/netsource.port" &
	BENCH_NETSOURCE=$!
	BENCH_FILES=$1
	trap 'kill $BENCH_NETSOURCE 2>/dev/null; rm -f "$BENCH_FILES/disk.img" "$BENCH_FILES/usb.img"' EXIT
	for _ in $(seq 50); do [ -s "$1/netsource.port" ] && break; sleep 0.1; done
	[ -s "$1/netsource.port" ] || die "netsource.py did not start"
	GUEST_ENV="$GUEST_ENV NET_PORT=$(cat "$1/netsource.port")"
	QEMU_DEVICES="-drive file=$1/disk.img,format=raw,if=none,id=d0,readonly=on"
	# INTx (vectors=0): blk-mq's MSI-X lines are managed, their affinity
	# cannot be moved to the victim's CPU
	QEMU_DEVICES+=" -device virtio-blk-pci,drive=d0,num-queues=1,vectors=0"
	QEMU_DEVICES+=" -netdev user,id=n0 -device virtio-net-pci,netdev=n0"
	QEMU_DEVICES+=" -drive file=$1/usb.img,format=raw,if=none,id=u0,readonly=on"
	QEMU_DEVICES+=" -device qemu-xhci,id=xhci -device usb-storage,bus=xhci.0,drive=u0"
}

# One boot of the pair make run, make holders and make cycle compare:
# boot_variant <baseline|patched> <tag> <job> <prefix> <timeout> [VAR=value...]
# boots that kernel with the job under TAG (the VARs go to qemu.sh:
# QEMU_DEVICES, ACCEL, ICOUNT) and leaves its serial log, without carriage
# returns, in <prefix>.log and QEMU's output in <prefix>.qemu.log. Fails as
# qemu.sh did, or if the guest left no serial log.
boot_variant() {
	local variant=$1 tag=$2 job=$3 prefix=$4 timeout=$5 rc=0
	shift 5
	env "$@" BASELINE="$([ "$variant" = baseline ] && echo 1 || echo 0)" TAG="$tag" \
		TIMEOUT="$timeout" "$TOP/scripts/qemu.sh" "$job" >"$prefix.qemu.log" 2>&1 || rc=$?
	tr -d '\r' <"$BUILD/runs/$tag/serial.log" >"$prefix.log" || return 1
	return $rc
}
